//! Running programs inside a testbed's namespace so that nothing outlives us.
//!
//! Each program gets its own PID namespace: the forked child (still in our PID
//! namespace) waits for a tiny init (PID 1 of the new one), which runs the program
//! as PID 2 and exits with its status. Every link of the chain has
//! PR_SET_PDEATHSIG=SIGKILL, and when a PID namespace's init dies the kernel kills
//! everything inside. So `kill -9` of spdylab takes the whole tree with it, even
//! daemons the program forked. The program also gets its own mount namespace in
//! which the testbed's hosts file is bind-mounted over /etc/hosts.

use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;

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
            forward_signals_to(init);
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
            forward_signals_to(program);
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
            // Reap everything; leave with the program's status.
            loop {
                let code = wait_exit_code(-1);
                if code >= 0 && WAITED.load(std::sync::atomic::Ordering::Relaxed) == program {
                    libc::_exit(code);
                }
                if code == -2 {
                    libc::_exit(1);
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

static WAITED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);
static FORWARD_TO: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Passes on SIGINT, SIGTERM, SIGHUP and SIGQUIT sent with kill() (by spdylab),
/// down the chain to the program. Signals from the terminal reach every process
/// of the foreground group by themselves and are not passed on twice.
unsafe fn forward_signals_to(pid: libc::pid_t) {
    FORWARD_TO.store(pid, std::sync::atomic::Ordering::Relaxed);
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = forward as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

extern "C" fn forward(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: info is valid in a SA_SIGINFO handler; kill is async-signal-safe.
    unsafe {
        if (*info).si_code <= 0 {
            libc::kill(FORWARD_TO.load(std::sync::atomic::Ordering::Relaxed), sig);
        }
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
        WAITED.store(r, std::sync::atomic::Ordering::Relaxed);
        if libc::WIFEXITED(status) {
            return libc::WEXITSTATUS(status);
        }
        if libc::WIFSIGNALED(status) {
            return 128 + libc::WTERMSIG(status);
        }
    }
}
