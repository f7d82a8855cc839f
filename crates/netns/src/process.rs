//! Running programs inside a testbed's namespace so that nothing outlives us.
//!
//! Each program gets its own PID namespace: the forked child (still in our PID
//! namespace, the keeper) waits for a tiny init (PID 1 of the new one), which
//! runs the program as PID 2 and exits with its status. Every link of the chain
//! has PR_SET_PDEATHSIG=SIGKILL, and when a PID namespace's init dies the kernel
//! kills everything inside. So `kill -9` of spdylab takes the whole tree with
//! it, even daemons the program forked. The program also gets its own mount
//! namespace in which the testbed's hosts file is bind-mounted over /etc/hosts.
//!
//! Signals sent to the keeper with kill() go down the chain: SIGINT, SIGHUP and
//! SIGQUIT to the program alone; SIGTERM stops the whole namespace: init sends
//! it to every process in it (`kill(-1, SIGTERM)`: the program, what it forked,
//! whatever `sh -c` did not exec), waits for them all, and after
//! [`STOP_GRACE`] kills those left. [`stop_confined`] is how we end such a
//! program: its processes exit on their own (flushing what they buffered)
//! and the keeper's status comes back once nothing is left in the namespace.

use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// How long the processes of a confined program's PID namespace get, after a
/// SIGTERM, before init kills those left.
pub const STOP_GRACE: Duration = Duration::from_secs(STOP_GRACE_SECS as u64);
const STOP_GRACE_SECS: u32 = 2;

/// What the forked child needs, prepared before fork (no allocation after it).
pub(crate) struct Confinement {
    pub netns: RawFd,
    pub hosts: Vec<u8>,
}

impl Confinement {
    /// Arranges for `cmd` to run confined. The command is spawned as usual.
    pub(crate) fn apply(self, cmd: &mut Command) {
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: the closure only makes async-signal-safe system calls.
        unsafe {
            cmd.pre_exec(move || confine(parent, &self));
        }
    }
}

fn check(ret: libc::c_int) -> io::Result<()> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Runs in the forked child. Returns only in the process that should exec.
fn confine(parent: libc::pid_t, c: &Confinement) -> io::Result<()> {
    // SAFETY (whole function): raw system calls with valid arguments; after fork
    // in a multi-threaded program only such calls are allowed.
    unsafe {
        check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL))?;
        if libc::getppid() != parent {
            libc::_exit(137); // our parent died before the death signal was armed
        }
        check(libc::setns(c.netns, libc::CLONE_NEWNET))?;
        check(libc::unshare(libc::CLONE_NEWNS | libc::CLONE_NEWPID))?;
        check(libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ))?;
        // The hosts file: written to a tmpfs mounted for a moment on /tmp (in
        // our private mount namespace), bound over /etc/hosts, the tmpfs detached.
        check(libc::mount(
            c"spdylab".as_ptr(),
            c"/tmp".as_ptr(),
            c"tmpfs".as_ptr(),
            0,
            c"size=1m,mode=700".as_ptr().cast(),
        ))?;
        let fd = libc::open(
            c"/tmp/hosts".as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
            0o644,
        );
        check(fd)?;
        let written = libc::write(fd, c.hosts.as_ptr().cast(), c.hosts.len());
        libc::close(fd);
        if written != c.hosts.len() as isize {
            return Err(io::Error::other("cannot write the hosts file"));
        }
        check(libc::mount(
            c"/tmp/hosts".as_ptr(),
            c"/etc/hosts".as_ptr(),
            std::ptr::null(),
            libc::MS_BIND,
            std::ptr::null(),
        ))?;
        check(libc::umount2(c"/tmp".as_ptr(), libc::MNT_DETACH))?;
        let init = libc::fork();
        if init < 0 {
            return Err(io::Error::last_os_error());
        }
        if init > 0 {
            // The keeper: outside the new PID namespace, waits for its init.
            forward_signals_to(
                init,
                &[libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT],
            );
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
            libc::_exit(wait_exit_code(init));
        }
        // PID 1 of the new namespace. (Its parent is outside, so getppid() is 0
        // and cannot tell whether the keeper is still there.)
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        let program = libc::fork();
        if program < 0 {
            libc::_exit(126);
        }
        if program > 0 {
            forward_signals_to(program, &[libc::SIGINT, libc::SIGHUP, libc::SIGQUIT]);
            handle(libc::SIGTERM, stop_all);
            handle(libc::SIGALRM, kill_all);
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
            // Reap everything. Leave with the program's status when it ends,
            // or, once stopping, when nothing is left.
            let mut program_code = 1;
            loop {
                let code = wait_exit_code(-1);
                if code == -2 {
                    libc::_exit(program_code);
                }
                if WAITED.load(Ordering::Relaxed) == program {
                    if !STOPPING.load(Ordering::Relaxed) {
                        libc::_exit(code);
                    }
                    program_code = code;
                }
            }
        }
        // PID 2: the program. Signals reach it as usual.
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != 1 {
            libc::_exit(137);
        }
        Ok(())
    }
}

static WAITED: AtomicI32 = AtomicI32::new(0);
static FORWARD_TO: AtomicI32 = AtomicI32::new(0);
/// In init: a SIGTERM came; every process of the namespace was sent one.
static STOPPING: AtomicBool = AtomicBool::new(false);

/// Passes on `signals` sent with kill() (by spdylab, or by the keeper), down
/// the chain to `pid`. Signals from the terminal reach every process of the
/// foreground group by themselves and are not passed on twice.
unsafe fn forward_signals_to(pid: libc::pid_t, signals: &[libc::c_int]) {
    FORWARD_TO.store(pid, Ordering::Relaxed);
    for &sig in signals {
        handle(sig, forward);
    }
}

/// Installs `handler` (SA_SIGINFO, restarting interrupted calls) for `sig`.
unsafe fn handle(
    sig: libc::c_int,
    handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void),
) {
    let mut sa: libc::sigaction = std::mem::zeroed();
    sa.sa_sigaction = handler as *const () as usize;
    sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    libc::sigaction(sig, &sa, std::ptr::null_mut());
}

extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: info is valid in a SA_SIGINFO handler.
    if unsafe { (*info).si_code } <= 0 {
        let _ = sys::kill(FORWARD_TO.load(Ordering::Relaxed), sig);
    }
}

/// Init's SIGTERM: to every other process of the namespace, and the first
/// one sets the alarm after which they are killed.
extern "C" fn stop_all(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    if !STOPPING.swap(true, Ordering::Relaxed) {
        sys::alarm(STOP_GRACE_SECS);
    }
    let _ = sys::kill(-1, libc::SIGTERM);
}

/// Init's SIGALRM, once stopping: the grace is over; kills every other
/// process of the namespace (again each second, should one be forked meanwhile).
extern "C" fn kill_all(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {
    if STOPPING.load(Ordering::Relaxed) {
        let _ = sys::kill(-1, libc::SIGKILL);
        sys::alarm(1);
    }
}

/// Waits for `pid` (or any child for -1); returns its exit code (128+signal if
/// killed), or -2 when there is no child left.
unsafe fn wait_exit_code(pid: libc::pid_t) -> libc::c_int {
    let mut status = 0;
    loop {
        let r = libc::waitpid(pid, &mut status, 0);
        if r < 0 {
            if *libc::__errno_location() == libc::EINTR {
                continue;
            }
            return -2;
        }
        WAITED.store(r, Ordering::Relaxed);
        if libc::WIFEXITED(status) {
            return libc::WEXITSTATUS(status);
        }
        if libc::WIFSIGNALED(status) {
            return 128 + libc::WTERMSIG(status);
        }
    }
}

/// Stops a program started confined (see the module doc): SIGTERM to its
/// keeper, so that every process of its PID namespace gets one and
/// [`STOP_GRACE`] to exit before init kills it; waits for the keeper, which
/// ends when nothing is left in the namespace, and returns its status (the
/// program's). Should the keeper not end within the grace and a second, it
/// is killed, and with it the namespace. A program already ended is reaped.
pub fn stop_confined(child: &mut Child) -> io::Result<ExitStatus> {
    if let Some(status) = child.try_wait()? {
        return Ok(status);
    }
    // The keeper is our unreaped child: its pid cannot have been reused.
    sys::kill(child.id() as libc::pid_t, libc::SIGTERM)?;
    let deadline = Instant::now() + STOP_GRACE + Duration::from_secs(1);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait()? {
            return Ok(status);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill()?;
    child.wait()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Side, Testbed, TestbedSpec};
    use std::io::{BufRead, BufReader, Read};
    use std::process::Stdio;

    /// Starts `sh -c script` confined in a fresh testbed's server namespace,
    /// stdout piped; returns once it printed its first line, "ready".
    fn started(tb: &Testbed, script: &str) -> (Child, BufReader<std::process::ChildStdout>) {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped());
        tb.confine(Side::Server, &mut cmd);
        let mut child = cmd.spawn().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line, "ready\n");
        (child, out)
    }

    /// What is left to read: everything written, once the last writer is gone.
    fn rest(mut out: BufReader<std::process::ChildStdout>) -> String {
        let mut s = String::new();
        out.read_to_string(&mut s).unwrap();
        s
    }

    #[test]
    fn stop_reaches_every_process_of_the_namespace_and_waits_for_it() {
        let tb = Testbed::start(TestbedSpec::default()).unwrap();
        // The subshell is not the program (sh, PID 2) but below it; the
        // program does not pass signals on.
        let (mut child, out) = started(
            &tb,
            "(trap 'echo child-term; exit 0' TERM; echo ready; \
             while :; do sleep 0.05; done); echo not-reached",
        );
        let status = stop_confined(&mut child).unwrap();
        // The program died of the SIGTERM; its child's last words were kept.
        assert_eq!(status.code(), Some(128 + libc::SIGTERM));
        assert_eq!(rest(out), "child-term\n");
    }

    #[test]
    fn stop_kills_what_ignores_sigterm_after_the_grace() {
        let tb = Testbed::start(TestbedSpec::default()).unwrap();
        // sleep inherits the ignored SIGTERM.
        let (mut child, out) = started(
            &tb,
            "trap '' TERM; echo ready; sleep 1000 & sleep 1000; echo not-reached",
        );
        let status = stop_confined(&mut child).unwrap();
        assert_eq!(status.code(), Some(128 + libc::SIGKILL));
        assert_eq!(rest(out), "");
    }

    #[test]
    fn stop_of_a_program_that_ended_returns_its_status() {
        let tb = Testbed::start(TestbedSpec::default()).unwrap();
        let (mut child, out) = started(&tb, "echo ready; exit 5");
        assert_eq!(rest(out), "");
        while child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(stop_confined(&mut child).unwrap().code(), Some(5));
    }
}
