//! Finding and starting the programs spdylab runs beside itself: a binary on
//! PATH (or the Debian package that has it), a child tied to our life in its
//! own process group, waiting until it listens, and free loopback ports.

use std::io;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Finds `binary` on PATH (or in /usr/sbin), or says which package has it.
pub fn find_binary(binary: &str, package: &str) -> io::Result<PathBuf> {
    find_binary_in(
        &std::env::var_os("PATH").unwrap_or_default(),
        binary,
        package,
    )
}

/// Finds `binary` in the directories of `path` (as PATH), or in /usr/sbin, or says which package has it.
pub fn find_binary_in(path: &std::ffi::OsStr, binary: &str, package: &str) -> io::Result<PathBuf> {
    std::env::split_paths(path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join(binary))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("{binary} not found: install the Debian package `{package}` (apt-get install {package})"),
            )
        })
}

/// Starts `cmd` so that it dies with us (PR_SET_PDEATHSIG) in its own process group.
pub fn spawn_tied(mut cmd: Command) -> io::Result<Child> {
    use std::os::unix::process::CommandExt;
    sys::die_with_parent_on_exec(&mut cmd);
    cmd.process_group(0).spawn()
}

/// Waits until every address accepts a TCP connection, or the child exits, or `limit` passes.
pub fn wait_listening(
    child: &mut Child,
    addrs: &[std::net::SocketAddr],
    limit: Duration,
) -> io::Result<()> {
    let until = Instant::now() + limit;
    for a in addrs {
        loop {
            if let Some(status) = child.try_wait()? {
                return Err(io::Error::other(format!(
                    "exited with {status} before listening on {a}"
                )));
            }
            if std::net::TcpStream::connect_timeout(a, Duration::from_millis(200)).is_ok() {
                break;
            }
            if Instant::now() > until {
                return Err(io::Error::other(format!(
                    "not listening on {a} after {limit:?}"
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Ok(())
}

/// A free TCP port on 127.0.0.1 (bound, then released).
pub fn free_port() -> io::Result<u16> {
    Ok(free_ports(1)?[0])
}

/// `n` distinct free TCP ports on 127.0.0.1: all bound at once, then released
/// for the server to take. They are taken below the kernel's ephemeral range
/// (`ip_local_port_range`), because a port from inside it can be handed to
/// any outgoing connection in the moment between our release and the
/// server's bind (CI saw slurmctld fail so: "Address already in use").
/// Processes start their search at different places (by pid), and a port
/// another holds is skipped.
pub fn free_ports(n: usize) -> io::Result<Vec<u16>> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(u32::MAX);
    let (low, high) = below_ephemeral();
    let span = u32::from(high - low);
    let _ = NEXT.compare_exchange(
        u32::MAX,
        std::process::id().wrapping_mul(2_654_435_761) % span,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    let mut held = Vec::with_capacity(n);
    for _ in 0..span {
        if held.len() == n {
            break;
        }
        let port = low + (NEXT.fetch_add(1, Ordering::Relaxed) % span) as u16;
        if let Ok(l) = std::net::TcpListener::bind(("127.0.0.1", port)) {
            held.push(l);
        }
    }
    if held.len() < n {
        // Every port below the ephemeral range is taken: let the kernel pick.
        while held.len() < n {
            held.push(std::net::TcpListener::bind("127.0.0.1:0")?);
        }
    }
    held.iter().map(|l| Ok(l.local_addr()?.port())).collect()
}

/// The ports from 10 000 up to the first the kernel hands out for outgoing
/// connections (32 768 by default).
fn below_ephemeral() -> (u16, u16) {
    let first_ephemeral = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32_768);
    if first_ephemeral > 11_000 {
        (10_000, first_ephemeral)
    } else {
        (1_024, 10_000)
    }
}
