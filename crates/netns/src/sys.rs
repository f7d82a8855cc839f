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

/// Asks the kernel to stamp each datagram `fd` receives (SO_TIMESTAMPNS: the
/// wall clock when the packet entered the receiving stack, which for our TUN
/// devices is when the emulator wrote it).
pub(crate) fn enable_rx_timestamps(fd: &impl AsRawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `on` is a live c_int and its size is passed.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// Receives one datagram into `buf` on a connected socket: its length and the
/// kernel's receive stamp (ns since the Unix epoch), if the kernel gave one.
pub(crate) fn recv_stamped(fd: &impl AsRawFd, buf: &mut [u8]) -> io::Result<(usize, Option<u128>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // Room for one control message holding a timespec, u64-aligned as cmsghdr needs.
    let mut control = [0u64; 8];
    // SAFETY: an all-zero msghdr is a valid empty one; its pointers are set below.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    let n = loop {
        // SAFETY: msg points at live buffers (iov -> buf, control) for the call.
        let n = unsafe { libc::recvmsg(fd.as_raw_fd(), &mut msg, 0) };
        if n >= 0 {
            break n as usize;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    };
    let mut stamp = None;
    // SAFETY: the CMSG macros walk the control buffer the kernel filled, within
    // msg_controllen; CMSG_DATA of an SCM_TIMESTAMPNS message holds a timespec
    // (read unaligned).
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                if ts.tv_sec > 0 {
                    stamp = Some(ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128);
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok((n, stamp))
}
