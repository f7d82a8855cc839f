//! Anonymous network namespaces, held only by a file descriptor: when the last
//! holder (our process, or a process inside) goes, the kernel removes the
//! namespace and every interface in it. Nothing is named, nothing is left behind.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};

#[derive(Debug)]
pub struct NetNs {
    fd: OwnedFd,
}

impl NetNs {
    /// Creates a new, empty network namespace (only `lo`, down).
    pub fn new() -> io::Result<NetNs> {
        std::thread::scope(|s| {
            s.spawn(|| {
                // A thread can change its own network namespace; it ends right after.
                sys::unshare(libc::CLONE_NEWNET).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("cannot create a network namespace (unshare: {e}); run as root, or where unprivileged user namespaces are allowed"),
                    )
                })?;
                let fd = sys::open(c"/proc/thread-self/ns/net", libc::O_RDONLY)?;
                Ok(NetNs { fd })
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("namespace thread panicked")))
        })
    }

    /// Runs `f` on a thread inside this namespace: sockets and TUN devices it
    /// opens belong to the namespace for their whole life.
    pub fn run<R: Send>(&self, f: impl FnOnce() -> io::Result<R> + Send) -> io::Result<R> {
        std::thread::scope(|s| {
            s.spawn(|| {
                sys::setns(&self.fd, libc::CLONE_NEWNET)?;
                f()
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("thread in namespace panicked")))
        })
    }

    /// Another handle on this namespace (for threads that outlive a borrow).
    pub fn try_clone(&self) -> io::Result<NetNs> {
        Ok(NetNs {
            fd: self.fd.try_clone()?,
        })
    }

    /// Enters this namespace for the rest of the calling thread's life.
    pub fn enter_current_thread(&self) -> io::Result<()> {
        sys::setns(&self.fd, libc::CLONE_NEWNET)
    }

    /// Writes a sysctl of this namespace, e.g. `net/ipv4/tcp_no_metrics_save`.
    pub fn write_sysctl(&self, key: &str, value: &str) -> io::Result<()> {
        let path = format!("/proc/sys/{key}");
        self.run(|| std::fs::write(&path, value))
            .map_err(|e| io::Error::new(e.kind(), format!("sysctl {key}={value}: {e}")))
    }

    pub fn read_proc(&self, path_under_thread_self: &str) -> io::Result<String> {
        let path = format!("/proc/thread-self/{path_under_thread_self}");
        self.run(|| std::fs::read_to_string(&path))
    }
}

impl AsFd for NetNs {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for NetNs {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.fd.as_raw_fd()
    }
}

/// Gives the calling thread a descriptor table of its own (`unshare(CLONE_FILES)`),
/// a copy of the process's: what was open stays open in both (each table
/// closes its copy on its own), what either opens next is its own; threads it
/// starts afterwards share it.
///
/// Why: RLIMIT_NOFILE bounds descriptor numbers per table, not per process, so
/// a load generator and a built-in server on threads of one process, each with
/// its own table, may each hold up to the hard limit (3 000 HTTP/1.1 users × 6
/// connections are 18 000 sockets on each side, 36 000 in one table, past a
/// container's 20 000 that root cannot raise).
///
/// Nothing is closed in the copy: process-wide descriptors opened lazily (such
/// as tokio's signal pipe, which every runtime with I/O dups) must exist before
/// the call, since a table opened later cannot see them. Hand a socket over by
/// its number and close the caller's copy once this returned.
pub fn own_fd_table() -> io::Result<()> {
    sys::unshare(libc::CLONE_FILES)
}
