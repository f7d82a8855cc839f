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
    pub address: IpAddr,
    pub http_port: u16,
    pub https_port: u16,
    pub h2c_port: u16,
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

impl Nginx {
    pub fn start(o: &NginxOptions) -> io::Result<Nginx> {
        let binary = find_binary("nginx", "nginx")?;
        let scratch = Scratch::new("nginx")?;
        let dir = scratch.0.clone();
        std::fs::write(dir.join("cert.pem"), &o.cert_pem)?;
        std::fs::write(dir.join("key.pem"), &o.key_pem)?;
        let a = o.address;
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
  http2_max_concurrent_streams {streams};
  client_body_temp_path {dir}/tmp;
  server {{
    listen {a}:{http};
    listen {a}:{https} ssl http2;
    ssl_certificate {dir}/cert.pem;
    ssl_certificate_key {dir}/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3;
    root {root}/$host;
  }}
  server {{
    listen {a}:{h2c} http2;
    root {root}/$host;
  }}
}}
"#,
            workers = o.workers.max(1),
            dir = dir.display(),
            streams = o.max_streams,
            http = o.http_port,
            https = o.https_port,
            h2c = o.h2c_port,
            root = o.docroot.display(),
            access_log = if o.access_log {
                format!("{}/access.log spdylab", dir.display())
            } else {
                "off".into()
            },
        );
        std::fs::write(dir.join("nginx.conf"), conf)?;
        let mut cmd = Command::new(binary);
        cmd.arg("-c")
            .arg(dir.join("nginx.conf"))
            .arg("-p")
            .arg(&dir);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = spawn_tied(cmd)?;
        let addrs: Vec<SocketAddr> = [o.http_port, o.https_port, o.h2c_port]
            .iter()
            .map(|p| SocketAddr::new(a, *p))
            .collect();
        if let Err(e) = wait_listening(&mut child, &addrs, Duration::from_secs(10)) {
            let _ = child.kill();
            let mut stderr = String::new();
            if let Some(mut s) = child.stderr.take() {
                use std::io::Read;
                let _ = s.read_to_string(&mut stderr);
            }
            let _ = child.wait();
            let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
            return Err(io::Error::other(format!(
                "nginx did not start: {e}\n{stderr}{log}"
            )));
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
