//! nginx from a generated config: HTTP/1.1 (with pipelining, which nginx has
//! always served), HTTPS and HTTP/2 on one TLS port, h2c (prior knowledge) on
//! another; `http2_max_concurrent_streams` from the Trial's knob; workers as asked.

use crate::{find_binary, spawn_tied, wait_listening, Scratch};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct NginxOptions {
    /// Every address it listens on (one per shard in a testbed).
    pub addresses: Vec<IpAddr>,
    pub http_port: u16,
    pub https_port: u16,
    /// h2c by prior knowledge needs a port without HTTP/1.1 (nginx cannot tell them apart).
    pub h2c_port: Option<u16>,
    /// Some(true): TLS 1.3 only; Some(false): TLS 1.2 only; None: both.
    pub tls13_only: Option<bool>,
    /// PEM certificate chain and key for TLS.
    pub cert_pem: String,
    pub key_pem: String,
    pub workers: usize,
    pub max_streams: u32,
    /// Log every request (with its protocol) to access.log; off for throughput runs.
    pub access_log: bool,
    /// Serve this directory (one subdirectory per host, chosen by Host/SNI).
    pub docroot: PathBuf,
}

/// A running nginx; stopped and cleaned up on drop.
pub struct Nginx {
    child: Child,
    pub dir: PathBuf,
    pub pid: u32,
    _scratch: Scratch,
}

/// An nginx ready to start: its directory (config, certificate, logs) and its command.
pub struct Prepared {
    pub scratch: Scratch,
    pub command: Command,
}

impl Prepared {
    /// nginx's error log so far (why it did not start).
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.scratch.0.join("error.log")).unwrap_or_default()
    }

    /// nginx's access log so far (the protocol of each request is in it).
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.scratch.0.join("access.log")).unwrap_or_default()
    }
}

/// Writes nginx's config for `o` and returns the command that runs it in the
/// foreground, for the caller to start where it wants (loopback, or confined
/// in a testbed's server namespace).
pub fn prepare(o: &NginxOptions) -> io::Result<Prepared> {
    let binary = find_binary("nginx", "nginx")?;
    let scratch = Scratch::new("nginx")?;
    let dir = scratch.0.clone();
    std::fs::write(dir.join("cert.pem"), &o.cert_pem)?;
    std::fs::write(dir.join("key.pem"), &o.key_pem)?;
    let listen = |port: u16, extra: &str| -> String {
        o.addresses
            .iter()
            .map(|a| match a {
                IpAddr::V6(v6) => format!("    listen [{v6}]:{port}{extra};\n"),
                IpAddr::V4(v4) => format!("    listen {v4}:{port}{extra};\n"),
            })
            .collect()
    };
    let h2c = o.h2c_port.map_or(String::new(), |p| {
        format!(
            "  server {{\n{}    root {}/$host;\n  }}\n",
            listen(p, " http2"),
            o.docroot.display()
        )
    });
    let conf = format!(
        r#"worker_processes {workers};
daemon off;
master_process on;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 65536; }}
http {{
  types {{ text/html html; text/css css; application/javascript js; image/png png; application/x-shockwave-flash swf; font/woff woff; }}
  default_type application/octet-stream;
  log_format spdylab '$remote_addr "$request" $status $body_bytes_sent $server_protocol';
  access_log {access_log};
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  http2_max_concurrent_streams {streams};
  client_body_temp_path {dir}/tmp;
  server {{
{listen_http}{listen_https}    ssl_certificate {dir}/cert.pem;
    ssl_certificate_key {dir}/key.pem;
    ssl_protocols {protocols};
    root {root}/$host;
  }}
{h2c}}}
"#,
        workers = o.workers.max(1),
        dir = dir.display(),
        streams = o.max_streams,
        listen_http = listen(o.http_port, ""),
        listen_https = listen(o.https_port, " ssl http2"),
        protocols = match o.tls13_only {
            None => "TLSv1.2 TLSv1.3",
            Some(true) => "TLSv1.3",
            Some(false) => "TLSv1.2",
        },
        root = o.docroot.display(),
        access_log = if o.access_log {
            format!("{}/access.log spdylab", dir.display())
        } else {
            "off".into()
        },
    );
    std::fs::write(dir.join("nginx.conf"), conf)?;
    let mut command = Command::new(binary);
    command
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .arg("-p")
        .arg(&dir);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    Ok(Prepared { scratch, command })
}

impl Nginx {
    /// Starts nginx here (e.g. on loopback), tied to us, and waits until it listens.
    pub fn start(o: &NginxOptions) -> io::Result<Nginx> {
        let Prepared { scratch, command } = prepare(o)?;
        let dir = scratch.0.clone();
        let mut child = spawn_tied(command)?;
        let mut addrs: Vec<SocketAddr> = Vec::new();
        for a in &o.addresses {
            addrs.push(SocketAddr::new(*a, o.http_port));
            addrs.push(SocketAddr::new(*a, o.https_port));
            if let Some(p) = o.h2c_port {
                addrs.push(SocketAddr::new(*a, p));
            }
        }
        if let Err(e) = wait_listening(&mut child, &addrs, Duration::from_secs(10)) {
            let _ = child.kill();
            let _ = child.wait();
            let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
            return Err(io::Error::other(format!("nginx did not start: {e}\n{log}")));
        }
        let pid = child.id();
        Ok(Nginx {
            child,
            dir,
            pid,
            _scratch: scratch,
        })
    }

    /// nginx's access log so far (the protocol of each request is in it).
    pub fn access_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("access.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM to the whole group (master and workers), then reap.
        unsafe { libc::kill(-(self.pid as i32), libc::SIGTERM) };
        for _ in 0..100 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        unsafe { libc::kill(-(self.pid as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}
