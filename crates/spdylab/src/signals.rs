//! The one signal path of the CLI, through `signal-hook`.
//!
//! While a child runs (`shell`): Ctrl-C at the terminal reaches the child by
//! itself (it is in our process group), so we stay to clean up after it; a second
//! Ctrl-C kills it. Signals sent to us with kill() (SIGINT, SIGTERM, SIGHUP,
//! SIGQUIT) are passed on to the child, which gets a few seconds to finish.
//!
//! While lab works (`load`): SIGINT or SIGTERM sets a stop flag that lab
//! polls, keeping what was measured; a second one ends us at once.

use std::process::Child;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

static TO_FORWARD: AtomicI32 = AtomicI32::new(0);
static TERMINAL_INTERRUPTS: AtomicU32 = AtomicU32::new(0);

/// How long a child gets after a forwarded signal before it is killed.
const GRACE: Duration = Duration::from_secs(5);

fn on_signal(info: &libc::siginfo_t) {
    let sig = info.si_signo;
    let from_kill = info.si_code <= 0;
    if from_kill {
        TO_FORWARD.store(sig, Ordering::Relaxed);
    } else if sig == libc::SIGINT || sig == libc::SIGQUIT {
        TERMINAL_INTERRUPTS.fetch_add(1, Ordering::Relaxed);
    }
}

/// Catches SIGINT, SIGQUIT, SIGTERM and SIGHUP (with a handler, not SIG_IGN, so
/// that children get the default behaviour back when they exec).
pub fn catch() {
    for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only touches atomics.
        let _ = unsafe { signal_hook_registry::register_sigaction(sig, on_signal) };
    }
}

/// A flag set by the first SIGINT or SIGTERM; the second one ends the
/// process as if nothing caught it.
pub fn stop_flag() -> Arc<AtomicBool> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // The order matters: the first registration resets to the default
        // action when the flag is already set, the second sets it.
        let _ = signal_hook::flag::register_conditional_default(sig, flag.clone());
        let _ = signal_hook::flag::register(sig, flag.clone());
    }
    flag
}

/// Waits for the child, passing signals on; its exit code (128 + signal if killed).
pub fn wait_forwarding(child: &mut Child) -> i32 {
    let mut kill_at: Option<Instant> = None;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.code().unwrap_or(1),
            Ok(None) => {}
            Err(_) => return 1,
        }
        let sig = TO_FORWARD.swap(0, Ordering::Relaxed);
        if sig != 0 {
            let _ = sys::kill(child.id() as libc::pid_t, sig);
            kill_at.get_or_insert(Instant::now() + GRACE);
        }
        let overdue = kill_at.is_some_and(|t| Instant::now() >= t);
        if overdue || TERMINAL_INTERRUPTS.load(Ordering::Relaxed) >= 2 {
            let _ = child.kill();
            let _ = child.wait();
            return 128 + libc::SIGKILL;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}
