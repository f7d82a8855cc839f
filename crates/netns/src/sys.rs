//! Thin, checked wrappers over the Linux system calls the testbed needs.

use std::ffi::CStr;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Turns a -1 return into the errno as an `io::Error`.
pub(crate) fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

pub(crate) fn open(path: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: path is a valid C string; the returned fd is owned by us.
    let fd = cvt(unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) })?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub(crate) fn setns(fd: &impl AsRawFd, nstype: libc::c_int) -> io::Result<()> {
    // SAFETY: plain system call on a valid fd.
    cvt(unsafe { libc::setns(fd.as_raw_fd(), nstype) }).map(drop)
}

pub(crate) fn unshare(flags: libc::c_int) -> io::Result<()> {
    // SAFETY: plain system call.
    cvt(unsafe { libc::unshare(flags) }).map(drop)
}

/// Lets the calling thread's timers fire within 1 ns of their deadline.
pub(crate) fn set_min_timer_slack() {
    // SAFETY: plain system call; failure only costs precision.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

/// CPU time the calling thread has used, in nanoseconds.
pub(crate) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

pub(crate) fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: plain system call; the fd is owned by us.
    let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub(crate) fn write_all(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: buf is valid for buf.len() bytes.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}
