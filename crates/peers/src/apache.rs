//! Apache httpd 2.4 (Debian's `apache2`) from a self-contained config: the
//! worker MPM with seed 000's settings, keep-alive, HTTP/1.1 (pipelining
//! included) and h2c by prior knowledge on the cleartext port, HTTPS and HTTP/2
//! (mod_http2, `H2MaxSessionStreams` from the knob) on the TLS port, one
//! docroot per host (mod_vhost_alias), and mod_status at `/server-status`.

use crate::{host_port, PeerOptions, ACCESS_LOG, ERROR_LOG, MIME_TYPES};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Seed 000's worker MPM: StartServers x ThreadsPerChild threads at start.
const START_SERVERS: u32 = 5;
const THREADS_PER_CHILD: u32 = 50;
const MAX_SPARE_THREADS: u32 = 150;

const MODULES: &str = "/usr/lib/apache2/modules";

/// Writes apache.conf into `dir` and sets `command`'s arguments.
pub(crate) fn configure(o: &PeerOptions, dir: &Path, command: &mut Command) -> io::Result<()> {
    let modules: String = [
        ("mpm_worker", "mod_mpm_worker"),
        ("authz_core", "mod_authz_core"),
        ("mime", "mod_mime"),
        ("dir", "mod_dir"),
        ("vhost_alias", "mod_vhost_alias"),
        ("socache_shmcb", "mod_socache_shmcb"),
        ("ssl", "mod_ssl"),
        ("http2", "mod_http2"),
        ("status", "mod_status"),
        ("headers", "mod_headers"),
        ("rewrite", "mod_rewrite"),
        ("asis", "mod_asis"),
    ]
    .iter()
    .map(|(name, file)| format!("LoadModule {name}_module {MODULES}/{file}.so\n"))
    .collect();
    let listen = |port: u16| -> String {
        o.addresses
            .iter()
            .map(|a| format!("Listen {}\n", host_port(a, port)))
            .collect()
    };
    let vhost = |port: u16| -> String {
        o.addresses
            .iter()
            .map(|a| host_port(a, port))
            .collect::<Vec<_>>()
            .join(" ")
    };
    // An imported page: one rewrite rule per recorded URL (query string included).
    let (replay_http, replay_https) = match crate::replay::routes(&o.docroot)? {
        Some(routes) => (
            crate::replay::apache(&routes, "http", dir)?,
            crate::replay::apache(&routes, "https", dir)?,
        ),
        None => (String::new(), String::new()),
    };
    let types: String = MIME_TYPES
        .iter()
        .map(|(ext, t)| format!("AddType {t} .{ext}\n"))
        .collect();
    let d = dir.display();
    let conf = format!(
        r#"# spdylab: Apache with the worker MPM (seed 000's settings)
ServerRoot {d}
ServerName spdylab.test
{modules}User www-data
Group www-data
PidFile {d}/apache.pid
Mutex file:{d} default
ErrorLog {d}/{ERROR_LOG}
LogLevel warn
StartServers {START_SERVERS}
ServerLimit 12
MaxRequestWorkers 600
ThreadsPerChild {THREADS_PER_CHILD}
MinSpareThreads 50
MaxSpareThreads {MAX_SPARE_THREADS}
KeepAlive On
MaxKeepAliveRequests 0
KeepAliveTimeout {keepalive}
TypesConfig {d}/mime.types
{types}DirectoryIndex index.html
LogFormat "%a \"%r\" %>s %B %{{SSL_PROTOCOL}}x %H" spdylab
{access_log}ExtendedStatus On
SSLSessionCache shmcb:{d}/ssl_scache(512000)
H2MaxSessionStreams {streams}
{listen_http}{listen_https}<Directory />
  Options None
  AllowOverride None
  Require all granted
</Directory>
UseCanonicalName Off
Header always set Access-Control-Allow-Origin "*"
VirtualDocumentRoot {root}/%0
<Location /server-status>
  SetHandler server-status
</Location>
<VirtualHost {vhost_http}>
  Protocols h2c http/1.1
{replay_http}</VirtualHost>
<VirtualHost {vhost_https}>
  Protocols h2 http/1.1
  SSLEngine on
  SSLCertificateFile {d}/cert.pem
  SSLCertificateKeyFile {d}/key.pem
  SSLProtocol {protocols}
{replay_https}</VirtualHost>
"#,
        keepalive = o.keepalive_timeout.map_or(5, |t| t.as_secs().max(1)),
        streams = o.max_streams,
        listen_http = listen(o.http_port),
        listen_https = listen(o.https_port),
        vhost_http = vhost(o.http_port),
        vhost_https = vhost(o.https_port),
        root = o.docroot.display(),
        protocols = match o.tls13_only {
            None => "-all +TLSv1.2 +TLSv1.3",
            Some(true) => "-all +TLSv1.3",
            Some(false) => "-all +TLSv1.2",
        },
        access_log = if o.access_log {
            // Not the polls of /server-status: only the page's requests.
            format!("CustomLog {d}/{ACCESS_LOG} spdylab \"expr=%{{REQUEST_URI}} !~ m#^/server-status#\"\n")
        } else {
            String::new()
        },
    );
    // Only the AddType lines: nothing read from /etc.
    std::fs::write(dir.join("mime.types"), "")?;
    std::fs::write(dir.join("apache.conf"), conf)?;
    command
        .arg("-f")
        .arg(dir.join("apache.conf"))
        .arg("-DFOREGROUND");
    Ok(())
}

/// Busy and idle workers from mod_status's `/server-status?auto` text
/// (`BusyWorkers: N`, `IdleWorkers: N`); None if either is missing.
pub fn apache_status(text: &str) -> Option<(u32, u32)> {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name).then(|| v.trim().parse::<u32>().ok())?
        })
    };
    Some((field("BusyWorkers")?, field("IdleWorkers")?))
}

/// GET /server-status?auto from `addr` (HTTP/1.0, connection closed after).
pub fn fetch_apache_status(addr: SocketAddr) -> io::Result<String> {
    let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(2)))?;
    s.write_all(b"GET /server-status?auto HTTP/1.0\r\nHost: localhost\r\n\r\n")?;
    let mut text = String::new();
    s.read_to_string(&mut text)?;
    Ok(text)
}

/// Waits until Apache's worker MPM has settled after start-up: seed 000's
/// StartServers (5 x 50 threads) is above its MaxSpareThreads (150), so Apache
/// stops children in its first seconds — and a stopping child closes its idle
/// keep-alive connections under a client's feet. Settled: at most
/// MaxSpareThreads threads, unchanged for 2 s. `status` fetches
/// `/server-status?auto` (see [`fetch_apache_status`]).
pub fn wait_apache_settled(
    status: &mut dyn FnMut() -> io::Result<String>,
    within: Duration,
) -> io::Result<()> {
    const { assert!(START_SERVERS * THREADS_PER_CHILD > MAX_SPARE_THREADS) };
    let deadline = Instant::now() + within;
    let mut last: Option<(u32, Instant)> = None;
    loop {
        let threads = status()
            .ok()
            .and_then(|t| apache_status(&t))
            .map(|(busy, idle)| busy + idle);
        let now = Instant::now();
        match (threads, last) {
            (Some(t), Some((l, since))) if t == l => {
                if t <= MAX_SPARE_THREADS && now - since >= Duration::from_secs(2) {
                    return Ok(());
                }
            }
            (Some(t), _) => last = Some((t, now)),
            (None, _) => last = None,
        }
        if now > deadline {
            return Err(io::Error::other(format!(
                "Apache's workers did not settle within {within:?} (threads: {threads:?})"
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[cfg(test)]
mod tests {
    use super::apache_status;

    #[test]
    fn status_auto_is_parsed() {
        let text = "ServerVersion: Apache/2.4.71 (Debian)\nServerMPM: worker\nTotal Accesses: 3\nBusyWorkers: 1\nIdleWorkers: 149\nScoreboard: _W___\n";
        assert_eq!(apache_status(text), Some((1, 149)));
        assert_eq!(apache_status("BusyWorkers: 1\n"), None);
        assert_eq!(apache_status("BusyWorkers: x\nIdleWorkers: 2\n"), None);
        assert_eq!(apache_status(""), None);
    }
}
