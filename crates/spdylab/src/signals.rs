//! Signals while a child runs: Ctrl-C goes to the child (it is in our process
//! group), so we stay to clean up after it; SIGTERM and SIGHUP end the child.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

static LAST: AtomicI32 = AtomicI32::new(0);
static INTERRUPTS: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    if sig == libc::SIGINT || sig == libc::SIGQUIT {
        INTERRUPTS.fetch_add(1, Ordering::Relaxed);
    }
    LAST.store(sig, Ordering::Relaxed);
}

/// Catches SIGINT, SIGQUIT, SIGTERM and SIGHUP (a handler, not SIG_IGN, so
/// that children still get the default behaviour after exec).
pub fn catch() {
    for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only touches atomics.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The signal that should end the run now, if one came: SIGTERM, SIGHUP, or a
/// second Ctrl-C.
pub fn must_stop() -> Option<i32> {
    let last = LAST.load(Ordering::Relaxed);
    if last == libc::SIGTERM || last == libc::SIGHUP {
        return Some(last);
    }
    (INTERRUPTS.load(Ordering::Relaxed) >= 2).then_some(libc::SIGINT)
}
