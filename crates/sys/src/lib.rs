//! spdylab's one system-call layer: thin, checked, safe wrappers over the
//! Linux calls the other crates need. Every `libc` function call and every
//! `unsafe` block of the workspace lives here (the one exception: the confined
//! child of `netns::process`, between fork and exec; see its module doc), each
//! with a `// SAFETY:` comment; callers use only the safe functions below.
//! Constants (`libc::SIGTERM`, `libc::CLONE_NEWNET`, ...) may be used anywhere.
//! `procstat` is the one reader of /proc for CPU and memory.

pub mod procstat;

use std::ffi::CStr;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::process::Command;
use std::time::Duration;

/// Turns a -1 return into the errno as an `io::Error`.
pub fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Opens `path` with `flags` (O_CLOEXEC added).
pub fn open(path: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    // SAFETY: path is a valid C string; the returned fd is owned by us.
    let fd = cvt(unsafe { libc::open(path.as_ptr(), flags | libc::O_CLOEXEC) })?;
    // SAFETY: the fd was just returned by the kernel and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Moves the calling thread into the namespace `fd` refers to.
pub fn setns(fd: &impl AsRawFd, nstype: libc::c_int) -> io::Result<()> {
    // SAFETY: plain system call on a valid fd.
    cvt(unsafe { libc::setns(fd.as_raw_fd(), nstype) }).map(drop)
}

/// Gives the calling thread (or process) new namespaces or tables (`CLONE_*`).
pub fn unshare(flags: libc::c_int) -> io::Result<()> {
    // SAFETY: plain system call.
    cvt(unsafe { libc::unshare(flags) }).map(drop)
}

/// Lets the calling thread's timers fire within 1 ns of their deadline.
pub fn set_min_timer_slack() {
    // SAFETY: plain system call; failure only costs precision.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

/// CPU time the calling thread has used, in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The `Instant` of a time read from CLOCK_MONOTONIC by another process (a
/// DevTools timestamp: Chromium's TimeTicks on Linux are CLOCK_MONOTONIC, as
/// std's `Instant` is), found by reading both clocks now; None for a time
/// after now or before the `Instant` clock can express.
pub fn instant_of_monotonic(t: std::time::Duration) -> Option<std::time::Instant> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    let now = std::time::Instant::now();
    let mono = std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
    now.checked_sub(mono.checked_sub(t)?)
}

/// A non-blocking, close-on-exec eventfd starting at 0.
pub fn eventfd() -> io::Result<OwnedFd> {
    // SAFETY: plain system call; the fd is owned by us.
    let fd = cvt(unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) })?;
    // SAFETY: the fd was just returned by the kernel and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Writes all of `buf` to `fd`, retrying on EINTR.
pub fn write_all(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
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
pub fn enable_rx_timestamps(fd: &impl AsRawFd) -> io::Result<()> {
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
pub fn recv_stamped(fd: &impl AsRawFd, buf: &mut [u8]) -> io::Result<(usize, Option<u128>)> {
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

/// The effective user id of this process.
pub fn geteuid() -> u32 {
    // SAFETY: plain system call with no arguments; it cannot fail.
    unsafe { libc::geteuid() }
}

/// The effective group id of this process.
pub fn getegid() -> u32 {
    // SAFETY: plain system call with no arguments; it cannot fail.
    unsafe { libc::getegid() }
}

/// Takes an exclusive flock on `fd` without waiting: whether it was taken
/// (false when another open file holds it, or flock failed).
pub fn try_lock_exclusive(fd: &impl AsRawFd) -> bool {
    // SAFETY: plain system call on a descriptor the caller holds open.
    unsafe { libc::flock(fd.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

/// Sends `sig` to `pid` (a negative pid: to that process group; -1: to every
/// process we may signal but ourselves, which from PID 1 of a PID namespace is
/// every other process in it), as kill(2). Async-signal-safe: one system call,
/// no allocation (an error is its errno).
pub fn kill(pid: i32, sig: libc::c_int) -> io::Result<()> {
    // SAFETY: plain system call; it touches no memory of ours.
    cvt(unsafe { libc::kill(pid, sig) }).map(drop)
}

/// Schedules a SIGALRM to this process in `seconds` (0 cancels), replacing
/// any earlier alarm; the seconds that were left of it. Async-signal-safe.
pub fn alarm(seconds: u32) -> u32 {
    // SAFETY: plain system call; it touches no memory of ours.
    unsafe { libc::alarm(seconds) }
}

/// Restores SIGPIPE's default action (the process ends on a closed pipe).
/// Call it before other threads exist.
pub fn default_sigpipe() {
    // SAFETY: SIG_DFL is a valid disposition; no handler of ours is replaced
    // that another thread could be running.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

/// CPU time (user + system) this process has used so far, in seconds.
pub fn process_cpu_seconds() -> f64 {
    // SAFETY: rusage is plain C data (integers and timevals), for which all
    // zeros is a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we pass, which outlives the call.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// The soft and hard limits of RLIMIT_NOFILE.
pub fn nofile_limit() -> io::Result<(libc::rlim_t, libc::rlim_t)> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the live local struct we pass.
    cvt(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) })?;
    Ok((r.rlim_cur, r.rlim_max))
}

/// Sets the soft and hard limits of RLIMIT_NOFILE.
pub fn set_nofile_limit(soft: libc::rlim_t, hard: libc::rlim_t) -> io::Result<()> {
    let r = libc::rlimit {
        rlim_cur: soft,
        rlim_max: hard,
    };
    // SAFETY: setrlimit reads the live local struct we pass.
    cvt(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) }).map(drop)
}

/// TCP Fast Open on a listener, with `queue` pending Fast Open requests at
/// most (the namespace's `net.ipv4.tcp_fastopen` must have the server bit).
pub fn set_tcp_fastopen(fd: &impl AsRawFd, queue: libc::c_int) -> io::Result<()> {
    setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_FASTOPEN, queue)
}

/// TCP Fast Open on a socket about to connect (`TCP_FASTOPEN_CONNECT`):
/// `connect` returns at once and the first write goes in the SYN when a
/// cookie for the server is cached, else the SYN asks for one.
pub fn set_tcp_fastopen_connect(fd: &impl AsRawFd) -> io::Result<()> {
    setsockopt_int(fd, libc::IPPROTO_TCP, libc::TCP_FASTOPEN_CONNECT, 1)
}

fn setsockopt_int(
    fd: &impl AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: `value` is a live c_int and its size is passed.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })
    .map(drop)
}

fn getsockopt_int(
    fd: &impl AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` is writable for `len` bytes and the kernel writes at most `len`.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&mut value as *mut libc::c_int).cast(),
            &mut len,
        )
    })?;
    Ok(value)
}

/// Turns a UDP socket's generic receive offload off (`UDP_GRO`, linux/udp.h:
/// not in the libc crate for glibc): each read is one datagram. A kernel
/// without the option (ENOPROTOOPT) never coalesces: that is no error.
pub fn disable_udp_gro(fd: &impl AsRawFd) -> io::Result<()> {
    const UDP_GRO: libc::c_int = 104;
    match setsockopt_int(fd, libc::SOL_UDP, UDP_GRO, 0) {
        Err(e) if e.raw_os_error() == Some(libc::ENOPROTOOPT) => Ok(()),
        other => other,
    }
}

/// Asks for `bytes` of receive buffer: SO_RCVBUFFORCE, past
/// `net.core.rmem_max` (needs CAP_NET_ADMIN), else SO_RCVBUF, capped there.
pub fn set_receive_buffer(fd: &impl AsRawFd, bytes: usize) -> io::Result<()> {
    let size = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, size)
        .or_else(|_| setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, size))
}

/// Sets a socket's SO_RCVLOWAT: reads wait for at least `bytes` bytes.
pub fn set_rcvlowat(fd: &impl AsRawFd, bytes: libc::c_int) -> io::Result<()> {
    setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVLOWAT, bytes)
}

/// A socket's SO_RCVLOWAT.
pub fn rcvlowat(fd: &impl AsRawFd) -> io::Result<libc::c_int> {
    getsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVLOWAT)
}

/// Sets TCP_CONGESTION on a socket (e.g. "cubic", "bbr").
pub fn set_tcp_congestion(fd: &impl AsRawFd, name: &str) -> io::Result<()> {
    // SAFETY: the option value is a valid buffer of the given length.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// Sets a socket's SO_MAX_PACING_RATE in bytes per second, as the 8-byte
/// value the kernel takes (`u64::MAX`: unlimited). Any other value turns
/// on TCP's internal pacing when no fq qdisc paces the socket (net/core/
/// sock.c: `sk_pacing_status` SK_PACING_NEEDED).
pub fn set_max_pacing_rate(fd: &impl AsRawFd, bytes_per_sec: u64) -> io::Result<()> {
    // SAFETY: the option value is a valid u64 of the given length.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            (&bytes_per_sec as *const u64).cast(),
            std::mem::size_of::<u64>() as libc::socklen_t,
        )
    })
    .map(drop)
}

/// Reads a TCP socket's TCP_INFO into `info` (struct tcp_info, as words):
/// how many bytes the kernel wrote.
pub fn tcp_info(fd: &impl AsRawFd, info: &mut [u64; 32]) -> io::Result<usize> {
    let mut len = std::mem::size_of_val(info) as libc::socklen_t;
    // SAFETY: `info` is writable for `len` bytes and the kernel writes at most `len`.
    cvt(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            info.as_mut_ptr().cast(),
            &mut len,
        )
    })?;
    Ok(len as usize)
}

/// listen(2) again on a listening socket (Linux updates its backlog).
pub fn listen(fd: &impl AsRawFd, backlog: libc::c_int) -> io::Result<()> {
    // SAFETY: plain system call on a descriptor the caller holds open.
    cvt(unsafe { libc::listen(fd.as_raw_fd(), backlog) }).map(drop)
}

/// A close-on-exec pipe: (read end, write end).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid array of two ints.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: both fds were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Waits up to `timeout_ms` for `fd` to become readable: whether it did
/// (Err on failure, EINTR included, as poll(2)).
pub fn poll_readable(fd: &impl AsRawFd, timeout_ms: libc::c_int) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, for the length 1 passed.
    let n = cvt(unsafe { libc::poll(&mut pfd, 1, timeout_ms) })?;
    Ok(n > 0)
}

/// ppoll(2) on `fds` with no signal mask change: how many have events
/// (Err on failure, EINTR included). `None` waits without a timeout.
pub fn ppoll(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> io::Result<usize> {
    let ts = timeout.map(|d| libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: fds is valid for its length; ts_ptr is null or points to a live timespec.
    let n = cvt(unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            ts_ptr,
            std::ptr::null(),
        )
    })?;
    Ok(n as usize)
}

/// Reads once from `fd` into the spare capacity of `buf` (cleared first),
/// setting its length to what was read.
pub fn read_into(fd: &impl AsRawFd, buf: &mut Vec<u8>) -> io::Result<usize> {
    buf.clear();
    let cap = buf.capacity();
    // SAFETY: the spare capacity is valid for `cap` bytes; only the bytes
    // the kernel wrote are exposed by set_len.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), cap) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the kernel initialised the first n <= cap bytes.
    unsafe { buf.set_len(n as usize) };
    Ok(n as usize)
}

/// Writes `buf` to `fd` once: how many bytes went.
pub fn write(fd: &impl AsRawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: buf is valid for buf.len() bytes.
    let n = unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// TUNSETIFF on an open /dev/net/tun: attaches it to device `name` (at most
/// IFNAMSIZ bytes) with `flags` (IFF_TUN, IFF_NO_PI, ...).
pub fn tun_set_iff(fd: &impl AsRawFd, name: &str, flags: libc::c_int) -> io::Result<()> {
    if name.len() > libc::IFNAMSIZ {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: flags as libc::c_short,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF takes a pointer to an ifreq, which IfReq lays out; req lives across the call.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) }).map(drop)
}

/// TUNSETOFFLOAD on a TUN device: the offloads (TUN_F_*) it accepts.
pub fn tun_set_offload(fd: &impl AsRawFd, offloads: libc::c_ulong) -> io::Result<()> {
    // SAFETY: TUNSETOFFLOAD takes its flags by value; no memory is passed.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD as _, offloads) }).map(drop)
}

/// mount(2); `None` for a null source, file system type or data.
pub fn mount(
    source: Option<&CStr>,
    target: &CStr,
    fstype: Option<&CStr>,
    flags: libc::c_ulong,
    data: Option<&CStr>,
) -> io::Result<()> {
    let ptr = |s: Option<&CStr>| s.map_or(std::ptr::null(), CStr::as_ptr);
    // SAFETY: every pointer is null or a valid C string that outlives the call.
    cvt(unsafe {
        libc::mount(
            ptr(source),
            target.as_ptr(),
            ptr(fstype),
            flags,
            ptr(data).cast(),
        )
    })
    .map(drop)
}

/// Makes the program `cmd` starts die with us (PR_SET_PDEATHSIG = SIGKILL),
/// failing the spawn if we are already gone.
pub fn die_with_parent_on_exec(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls (prctl, getppid) between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() == 1 {
                return Err(io::Error::other("parent already gone"));
            }
            Ok(())
        });
    }
}

/// Makes the program `cmd` starts enter the namespace `ns_fd` (setns with
/// `nstype`) before it execs. `ns_fd` must stay open until the spawn.
pub fn setns_on_exec(cmd: &mut Command, ns_fd: RawFd, nstype: libc::c_int) {
    use std::os::unix::process::CommandExt;
    // SAFETY: setns is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setns(ns_fd, nstype) == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Makes the program `cmd` starts find `fds[i]` at descriptor `3 + i` (as
/// Chromium's --remote-debugging-pipe wants its pipe on 3 and 4). The fds must
/// stay open until the spawn.
pub fn fds_from_3_on_exec<const N: usize>(cmd: &mut Command, fds: [RawFd; N]) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls (fcntl, dup2, close) after fork,
    // on a stack array: no allocation.
    unsafe {
        cmd.pre_exec(move || {
            // First above 10, so that no dup2 overwrites a source not yet moved.
            let mut high = [-1; N];
            for (h, fd) in high.iter_mut().zip(fds) {
                *h = libc::fcntl(fd, libc::F_DUPFD, 10);
                if *h < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            for (i, h) in high.iter().enumerate() {
                if libc::dup2(*h, 3 + i as RawFd) < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            for h in high {
                libc::close(h);
            }
            Ok(())
        });
    }
}

/// Makes the program `cmd` starts run as `uid`:`gid` with no supplementary
/// groups (setgroups, setgid, setuid), after every pre-exec step registered
/// before this one (entering namespaces needs root). The death signal that
/// a step before armed (PR_SET_PDEATHSIG) survives: the kernel clears it on
/// the change of user, so it is set again, and the spawn fails if the parent
/// died in between.
pub fn run_as_on_exec(cmd: &mut Command, uid: u32, gid: u32) {
    use std::os::unix::process::CommandExt;
    // SAFETY: only async-signal-safe calls (getppid, prctl, setgroups,
    // setgid, setuid) between fork and exec, on stack values.
    unsafe {
        cmd.pre_exec(move || {
            let parent = libc::getppid();
            let mut death: libc::c_int = 0;
            if libc::prctl(libc::PR_GET_PDEATHSIG, &mut death as *mut libc::c_int) != 0 {
                return Err(io::Error::last_os_error());
            }
            cvt(libc::setgroups(0, std::ptr::null()))?;
            cvt(libc::setgid(gid))?;
            cvt(libc::setuid(uid))?;
            if death != 0 {
                if libc::prctl(libc::PR_SET_PDEATHSIG, death as libc::c_ulong) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    return Err(io::Error::other("parent already gone"));
                }
            }
            Ok(())
        });
    }
}

/// Whether a process running as `user` (uid, gid; None: as we are) may make
/// the namespaces `flags` (`CLONE_NEWUSER | ...`): a child is forked, takes
/// that user and calls unshare(flags); its errno, if it failed.
pub fn try_unshare_as(user: Option<(u32, u32)>, flags: libc::c_int) -> io::Result<()> {
    // SAFETY: the child makes only async-signal-safe calls (setgroups,
    // setgid, setuid, unshare, _exit) and never returns; the parent reaps it.
    let pid = cvt(unsafe { libc::fork() })?;
    if pid == 0 {
        // SAFETY: as above: the forked child of a possibly multi-threaded process.
        unsafe {
            let errno = || *libc::__errno_location();
            if let Some((uid, gid)) = user {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    libc::_exit(errno().clamp(1, 255));
                }
            }
            if libc::unshare(flags) != 0 {
                libc::_exit(errno().clamp(1, 255));
            }
            libc::_exit(0);
        }
    }
    let mut status = 0;
    loop {
        // SAFETY: waits for the child just forked; status is a valid pointer.
        if unsafe { libc::waitpid(pid, &mut status, 0) } >= 0 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    match (libc::WIFEXITED(status), libc::WEXITSTATUS(status)) {
        (true, 0) => Ok(()),
        (true, errno) => Err(io::Error::from_raw_os_error(errno)),
        _ => Err(io::Error::other("the probe was killed")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn a_program_runs_as_the_user_given_and_namespaces_are_tried_in_a_child() {
        // Nothing to unshare always works; as root, so does taking another user.
        assert!(try_unshare_as(None, 0).is_ok());
        if geteuid() != 0 || rootless() {
            return;
        }
        assert!(try_unshare_as(Some((65534, 65534)), 0).is_ok());
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "id -u; id -g; id -G"]);
        die_with_parent_on_exec(&mut cmd);
        run_as_on_exec(&mut cmd, 65534, 65534);
        let out = cmd.output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "65534\n65534\n65534\n"
        );
    }

    /// Whether this process is in a user namespace that maps one uid alone.
    fn rootless() -> bool {
        std::fs::read_to_string("/proc/self/uid_map")
            .is_ok_and(|m| !m.split_whitespace().eq(["0", "0", "4294967295"]))
    }

    #[test]
    fn flock_is_exclusive_between_open_files() {
        let path = std::env::temp_dir().join(format!("sys-flock-{}", std::process::id()));
        let a = std::fs::File::create(&path).unwrap();
        let b = std::fs::File::open(&path).unwrap();
        assert!(try_lock_exclusive(&a));
        assert!(
            !try_lock_exclusive(&b),
            "a second open file must not get the lock"
        );
        drop(a);
        assert!(try_lock_exclusive(&b), "the lock dies with its file");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn cpu_seconds_are_non_negative_and_grow() {
        let before = process_cpu_seconds();
        assert!(before >= 0.0);
        let mut x = 0u64;
        let end = std::time::Instant::now() + Duration::from_millis(30);
        while std::time::Instant::now() < end {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(process_cpu_seconds() >= before);
    }

    #[test]
    fn rcvlowat_reads_back() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        assert_eq!(rcvlowat(&s).unwrap(), 1, "the kernel's default mark");
        set_rcvlowat(&s, 4096).unwrap();
        assert_eq!(rcvlowat(&s).unwrap(), 4096);
    }

    #[test]
    fn pipe_write_poll_read() {
        let (r, w) = pipe().unwrap();
        assert!(!poll_readable(&r, 0).unwrap());
        write_all(w.as_raw_fd(), b"hello").unwrap();
        assert!(poll_readable(&r, 1000).unwrap());
        let mut buf = Vec::with_capacity(16);
        assert_eq!(read_into(&r, &mut buf).unwrap(), 5);
        assert_eq!(buf, b"hello");
        assert_eq!(write(&w, b"!").unwrap(), 1);
        let mut fds = [libc::pollfd {
            fd: r.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        assert_eq!(ppoll(&mut fds, Some(Duration::from_secs(1))).unwrap(), 1);
    }

    #[test]
    fn ids_limits_and_signals() {
        assert_eq!(
            geteuid(),
            std::fs::metadata("/proc/self")
                .map(|m| {
                    use std::os::unix::fs::MetadataExt;
                    m.uid()
                })
                .unwrap()
        );
        let _ = getegid();
        let (soft, hard) = nofile_limit().unwrap();
        assert!(soft <= hard);
        set_nofile_limit(soft, hard).unwrap();
        // Signal 0 checks that the process exists.
        kill(std::process::id() as i32, 0).unwrap();
        // No alarm was pending; one set is one pending, and 0 cancels it.
        assert_eq!(alarm(0), 0);
        assert_eq!(alarm(1000), 0);
        assert!(alarm(0) > 0);
    }

    #[test]
    fn tcp_info_and_congestion_control() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let s = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let mut info = [0u64; 32];
        assert!(tcp_info(&s, &mut info).unwrap() > 0);
        set_tcp_congestion(&s, "reno").unwrap();
        listen(&l, 16).unwrap();
    }

    #[test]
    fn child_finds_fds_from_3() {
        let (r, w) = pipe().unwrap();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo hi >&4"]);
        fds_from_3_on_exec(&mut cmd, [r.as_raw_fd(), w.as_raw_fd()]);
        die_with_parent_on_exec(&mut cmd);
        let status = cmd.status().unwrap();
        assert!(status.success());
        drop(w);
        let mut out = String::new();
        use std::io::Read;
        std::fs::File::from(r).read_to_string(&mut out).unwrap();
        assert_eq!(out, "hi\n");
    }
}
