//! Real servers as peers of the built-in one: a docroot written from a Site,
//! a config generated from the knobs, the server started as a child that dies
//! with us, checked healthy, and stopped (its temporary directory removed)
//! when dropped. A server that fails to start shows its own error log; a
//! missing binary names the Debian package. nginx, Apache (worker MPM), h2o and
//! caddy share one set of options ([`PeerOptions`]), one [`Prepared`] and one
//! capability table ([`Program::capabilities`]). The OS plumbing under them
//! (scratch directories, finding binaries, tied children, free ports) is
//! `netns`'s.

mod apache;
mod caddy;
mod capabilities;
mod h2o;
mod nginx;
mod replay;

pub use apache::{apache_status, fetch_apache_status, wait_apache_settled};
pub use capabilities::{Capabilities, Knobs, StreamLimit};

use std::collections::BTreeMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use netns::{find_binary, spawn_tied, wait_listening, Scratch};

pub use results::PeerKind;

/// What spdylab knows of each real server's program: where it is, its
/// version, and (in `capabilities`) what it can serve.
pub trait Program {
    /// The program and the Debian package that has it.
    fn binary(self) -> (&'static str, &'static str);
    /// The installed binary and its version line, or why not (naming the package).
    fn version(self) -> io::Result<(PathBuf, String)>;
    /// This server's row of the capability table.
    fn capabilities(self) -> Capabilities;
    /// Why this server cannot serve `protocol` exactly as the knobs ask, if it cannot.
    fn refuses(self, protocol: proto::Protocol, knobs: &Knobs) -> Option<String>;
}

impl Program for PeerKind {
    fn binary(self) -> (&'static str, &'static str) {
        match self {
            PeerKind::Nginx => ("nginx", "nginx"),
            PeerKind::Apache => ("apache2", "apache2"),
            PeerKind::H2o => ("h2o", "h2o"),
            PeerKind::Caddy => ("caddy", "caddy"),
        }
    }

    fn version(self) -> io::Result<(PathBuf, String)> {
        let (binary, package) = self.binary();
        let path = find_binary(binary, package)?;
        let flag = match self {
            PeerKind::Nginx => "-v",
            PeerKind::Apache => "-v",
            PeerKind::H2o => "--version",
            PeerKind::Caddy => "version",
        };
        let out = Command::new(&path).arg(flag).output()?;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let line = text.lines().next().unwrap_or("").trim();
        let line = line
            .strip_prefix("Server version: ")
            .or_else(|| line.strip_prefix("nginx version: "))
            .unwrap_or(line);
        let line = if line.to_lowercase().contains(binary.trim_end_matches('2')) {
            line.to_string()
        } else {
            format!("{} {line}", self.name())
        };
        Ok((path, line))
    }

    fn capabilities(self) -> Capabilities {
        capabilities::row(self)
    }

    fn refuses(self, protocol: proto::Protocol, knobs: &Knobs) -> Option<String> {
        capabilities::refuses(self, protocol, knobs)
    }
}

/// How to configure any of the peers.
#[derive(Debug, Clone)]
pub struct PeerOptions {
    /// Every address it listens on (one per shard in a testbed).
    pub addresses: Vec<IpAddr>,
    /// HTTP/1.1 in clear; also h2c by prior knowledge for the servers that tell them apart (not nginx).
    pub http_port: u16,
    /// TLS: HTTP/1.1 and HTTP/2 by ALPN.
    pub https_port: u16,
    /// nginx only: h2c by prior knowledge on a port without HTTP/1.1 (nginx cannot tell them apart).
    pub h2c_port: Option<u16>,
    /// Some(true): TLS 1.3 only; Some(false): TLS 1.2 only; None: both.
    pub tls13_only: Option<bool>,
    /// PEM certificate chain and key for TLS.
    pub cert_pem: String,
    pub key_pem: String,
    /// Worker processes (nginx) or threads (h2o); Apache keeps seed 000's worker MPM, caddy Go's scheduler.
    pub workers: usize,
    /// Concurrent streams per HTTP/2 connection (where the server lets it be set).
    pub max_streams: u32,
    /// Idle time before a keep-alive connection is closed; None: each server's own
    /// (nginx as spdylab always ran it, 300 s; Apache 5 s; h2o 10 s; caddy 5 min).
    pub keepalive_timeout: Option<Duration>,
    /// Log every request (with its protocol and TLS version) to access.log; off for throughput runs.
    pub access_log: bool,
    /// Serve this directory (one subdirectory per host, chosen by Host/SNI).
    pub docroot: PathBuf,
    /// Accept TLS 1.3 early data over TCP where the server can
    /// (`Capabilities::early_data`: nginx's `ssl_early_data on`); the
    /// repeat view's (`server::Knobs::early_data`).
    pub early_data: bool,
}

/// File extensions of a Site's docroot and the types each server sends for
/// them (the model client reads HTML, CSS and scripts by their Content-Type).
pub const MIME_TYPES: [(&str, &str); 7] = [
    ("html", "text/html"),
    ("css", "text/css"),
    ("js", "application/javascript"),
    ("png", "image/png"),
    ("swf", "application/x-shockwave-flash"),
    ("woff", "font/woff"),
    ("bin", "application/octet-stream"),
];

/// A server ready to start: its directory (config, certificate, logs) and its command.
pub struct Prepared {
    pub kind: PeerKind,
    pub scratch: Scratch,
    pub command: Command,
}

/// Where each server writes its error log and its own stderr, inside its scratch directory.
const ERROR_LOG: &str = "error.log";
const STDERR_LOG: &str = "stderr.log";
const ACCESS_LOG: &str = "access.log";

impl Prepared {
    /// The server's error log and what it printed so far (why it did not start).
    pub fn error_log(&self) -> String {
        error_log(&self.scratch.0)
    }

    /// The access log so far (the protocol and TLS version of each request is in it).
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.scratch.0.join(ACCESS_LOG)).unwrap_or_default()
    }

    /// Requests in the access log so far, counted by protocol and TLS version (see [`served`]).
    pub fn served(&self) -> BTreeMap<String, u64> {
        served(self.kind, &self.access_log())
    }
}

/// The error log and the output of the server whose scratch directory is `dir`.
pub fn error_log(dir: &Path) -> String {
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap_or_default();
    let (log, stderr) = (read(ERROR_LOG), read(STDERR_LOG));
    match (log.trim().is_empty(), stderr.trim().is_empty()) {
        (false, false) => format!("{log}{stderr}"),
        (true, _) => stderr,
        (false, true) => log,
    }
}

/// Counts the requests of an access log written by a peer of `kind` by
/// "PROTOCOL TLS" — e.g. "HTTP/2 TLSv1.3", "HTTP/1.1 cleartext" — whatever
/// each server calls them ("HTTP/2.0" is "HTTP/2", TLS 1.3 is "TLSv1.3").
pub fn served(kind: PeerKind, log: &str) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for line in log.lines().filter(|l| !l.trim().is_empty()) {
        let (proto, tls) = match kind {
            PeerKind::Caddy => caddy::proto_and_tls(line),
            // nginx, Apache and h2o log "... TLS-VERSION PROTOCOL" ("-" in clear).
            _ => {
                let mut t = line.split_whitespace().rev();
                let proto = t.next().unwrap_or("?").to_string();
                (proto, t.next().unwrap_or("?").to_string())
            }
        };
        let proto = if proto == "HTTP/2.0" {
            "HTTP/2".into()
        } else {
            proto
        };
        let tls = if tls == "-" || tls.is_empty() {
            "cleartext".into()
        } else {
            tls
        };
        *out.entry(format!("{proto} {tls}")).or_insert(0) += 1;
    }
    out
}

/// Why a `kind` server cannot run here, if it cannot: without root spdylab runs
/// in a user namespace where only the caller's uid exists (as root), and nginx
/// and h2o, started as root, insist on switching their workers to another user
/// (nobody, www-data) and its groups, which fails there. Apache (whose worker
/// MPM keeps going) and Caddy (which never switches) run.
pub fn refuses_rootless(kind: PeerKind) -> Option<String> {
    if !matches!(kind, PeerKind::Nginx | PeerKind::H2o) || !netns::userns::inside() {
        return None;
    }
    Some(format!(
        "{} cannot run rootless: it switches its workers to another user, and spdylab's \
         user namespace maps only yours (setgid/initgroups fail); run spdylab as root, \
         or use --server builtin, apache or caddy",
        kind.name()
    ))
}

/// Writes a secret (a private key) readable by its owner alone: created 0600,
/// never first world-readable.
fn write_private(path: &std::path::Path, text: &str) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?
        .write_all(text.as_bytes())
}

/// Writes the config of a `kind` server for `o` and returns the command that
/// runs it in the foreground, for the caller to start where it wants (loopback,
/// or confined in a testbed's server namespace). Its stdout and stderr go to
/// the scratch directory (see [`Prepared::error_log`]).
pub fn prepare(kind: PeerKind, o: &PeerOptions) -> io::Result<Prepared> {
    let (binary, package) = kind.binary();
    let binary = find_binary(binary, package)?;
    if let Some(why) = refuses_rootless(kind) {
        return Err(io::Error::new(io::ErrorKind::Unsupported, why));
    }
    let scratch = Scratch::new(kind.name())?;
    let dir = scratch.0.clone();
    std::fs::write(dir.join("cert.pem"), &o.cert_pem)?;
    write_private(&dir.join("key.pem"), &o.key_pem)?;
    let mut command = Command::new(binary);
    match kind {
        PeerKind::Nginx => nginx::configure(o, &dir, &mut command)?,
        PeerKind::Apache => apache::configure(o, &dir, &mut command)?,
        PeerKind::H2o => h2o::configure(o, &dir, &mut command)?,
        PeerKind::Caddy => caddy::configure(o, &dir, &mut command)?,
    }
    let stderr = std::fs::File::create(dir.join(STDERR_LOG))?;
    command
        .stdin(Stdio::null())
        .stdout(stderr.try_clone()?)
        .stderr(stderr);
    Ok(Prepared {
        kind,
        scratch,
        command,
    })
}

/// The hosts of a docroot: its subdirectories' names (for servers that need them listed).
fn docroot_hosts(docroot: &Path) -> io::Result<Vec<String>> {
    let mut hosts: Vec<String> = std::fs::read_dir(docroot)
        .map_err(|e| io::Error::new(e.kind(), format!("docroot {}: {e}", docroot.display())))?
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|h| !h.starts_with('.'))
        .collect();
    hosts.sort();
    Ok(hosts)
}

/// `a:port`, with IPv6 addresses in brackets.
fn host_port(a: &IpAddr, port: u16) -> String {
    SocketAddr::new(*a, port).to_string()
}

/// A running peer; stopped (its whole process group) and cleaned up on drop.
pub struct Peer {
    pub kind: PeerKind,
    child: Child,
    pub dir: PathBuf,
    pub pid: u32,
    _scratch: Scratch,
}

impl Peer {
    /// Starts a `kind` server here (e.g. on loopback), tied to us, and waits until it listens.
    pub fn start(kind: PeerKind, o: &PeerOptions) -> io::Result<Peer> {
        let Prepared {
            scratch, command, ..
        } = prepare(kind, o)?;
        let dir = scratch.0.clone();
        let mut child = spawn_tied(command)?;
        let mut addrs: Vec<SocketAddr> = Vec::new();
        for a in &o.addresses {
            addrs.push(SocketAddr::new(*a, o.http_port));
            addrs.push(SocketAddr::new(*a, o.https_port));
            if let (PeerKind::Nginx, Some(p)) = (kind, o.h2c_port) {
                addrs.push(SocketAddr::new(*a, p));
            }
        }
        if let Err(e) = wait_listening(&mut child, &addrs, Duration::from_secs(10)) {
            kill_group(&mut child);
            return Err(io::Error::other(format!(
                "{kind} did not start: {e}\n{}",
                error_log(&dir)
            )));
        }
        if kind == PeerKind::Apache {
            let addr = addrs[0];
            if let Err(e) =
                wait_apache_settled(&mut || fetch_apache_status(addr), Duration::from_secs(15))
            {
                kill_group(&mut child);
                return Err(e);
            }
        }
        let pid = child.id();
        Ok(Peer {
            kind,
            child,
            dir,
            pid,
            _scratch: scratch,
        })
    }

    /// The access log so far.
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.join(ACCESS_LOG)).unwrap_or_default()
    }

    /// The error log and the server's own output so far.
    pub fn error_log(&self) -> String {
        error_log(&self.dir)
    }

    /// Requests in the access log so far by "PROTOCOL TLS" (see [`served`]).
    pub fn served(&self) -> BTreeMap<String, u64> {
        served(self.kind, &self.access_log())
    }
}

/// SIGTERM to the child's process group (master and workers), then SIGKILL
/// to the group if the master has not gone within 2 s; reaped.
fn kill_group(child: &mut Child) {
    let pid = child.id() as i32;
    // A process group we started (process_group(0)).
    let _ = sys::kill(-pid, libc::SIGTERM);
    for _ in 0..100 {
        if matches!(child.try_wait(), Ok(Some(_))) {
            // Masters (nginx, Apache) reap their workers before they exit.
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = sys::kill(-pid, libc::SIGKILL);
    let _ = child.wait();
}

impl Drop for Peer {
    fn drop(&mut self) {
        kill_group(&mut self.child);
    }
}

/// Writes each resource of `site` to DIR/<host>/<path> (a path ending in / gets
/// index.html), as a real server's docroot. An imported page is written for
/// replay instead (bodies and a route table in DIR/.replay: query strings,
/// content types, statuses and redirects kept; see `replay`), and the
/// servers' configs answer its recorded URLs exactly.
pub fn write_docroot(site: &site::Site, dir: &Path) -> io::Result<()> {
    if site.is_recorded() {
        return replay::write(site, dir);
    }
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
