//! Real servers as peers of the built-in one: a docroot written from a Site,
//! a config generated from the knobs, the server started as a child that dies
//! with us, checked healthy, and stopped (its temporary directory removed)
//! when dropped. A server that fails to start shows its own error log; a
//! missing binary names the Debian package.

mod nginx;

pub use nginx::{prepare as prepare_nginx, Nginx, NginxOptions, Prepared};

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Writes each resource of `site` to DIR/<host>/<path> (a path ending in / gets
/// index.html), as a real server's docroot.
pub fn write_docroot(site: &site::Site, dir: &Path) -> io::Result<()> {
    for (i, r) in site.resources.iter().enumerate() {
        let mut rel = r.path.trim_start_matches('/').to_string();
        if rel.is_empty() || rel.ends_with('/') {
            rel.push_str("index.html");
        }
        let path = dir.join(&r.host).join(rel);
        std::fs::create_dir_all(path.parent().expect("a file has a parent"))
            .and_then(|_| std::fs::write(&path, site.body(i)))
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    }
    Ok(())
}

/// A private directory for a server's config, docroot and logs, removed on drop;
/// readable by the unprivileged workers servers drop to.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(what: &str) -> io::Result<Scratch> {
        static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("spdylab-{what}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Finds `binary` on PATH (or in /usr/sbin), or says which package has it.
pub fn find_binary(binary: &str, package: &str) -> io::Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
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
    // SAFETY: only async-signal-safe calls between fork and exec.
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

/// `n` distinct free TCP ports on 127.0.0.1: all bound at once (so that the
/// kernel cannot hand out one twice), then released for the server to take.
pub fn free_ports(n: usize) -> io::Result<Vec<u16>> {
    let held: Vec<std::net::TcpListener> = (0..n)
        .map(|_| std::net::TcpListener::bind("127.0.0.1:0"))
        .collect::<io::Result<_>>()?;
    held.iter().map(|l| Ok(l.local_addr()?.port())).collect()
}
