//! nginx from a generated config: HTTP/1.1 (with pipelining, which nginx has
//! always served), HTTPS and HTTP/2 on one TLS port, h2c (prior knowledge) on
//! another; `http2_max_concurrent_streams` from the Trial's knob; workers as asked.

use crate::{PeerOptions, ACCESS_LOG, ERROR_LOG, MIME_TYPES};
use std::io;
use std::net::IpAddr;
use std::path::Path;
use std::process::Command;

/// Writes nginx.conf into `dir` and sets `command`'s arguments.
pub(crate) fn configure(o: &PeerOptions, dir: &Path, command: &mut Command) -> io::Result<()> {
    let listen = |port: u16, extra: &str| -> String {
        o.addresses
            .iter()
            .map(|a| match a {
                IpAddr::V6(v6) => format!("    listen [{v6}]:{port}{extra};\n"),
                IpAddr::V4(v4) => format!("    listen {v4}:{port}{extra};\n"),
            })
            .collect()
    };
    // An imported page: its recorded URLs (query strings included), types and statuses.
    let (replay_map, root) = match crate::replay::routes(&o.docroot)? {
        Some(routes) => crate::replay::nginx(&routes),
        None => (
            String::new(),
            format!("    root {}/$host;\n", o.docroot.display()),
        ),
    };
    let h2c = o.h2c_port.map_or(String::new(), |p| {
        format!("  server {{\n{}{root}  }}\n", listen(p, " http2"),)
    });
    let types: String = MIME_TYPES
        .iter()
        .map(|(ext, t)| format!("{t} {ext}; "))
        .collect();
    let conf = format!(
        r#"worker_processes {workers};
daemon off;
master_process on;
pid {dir}/nginx.pid;
error_log {dir}/{ERROR_LOG} warn;
events {{ worker_connections 65536; }}
http {{
  types {{ {types}}}
  default_type application/octet-stream;
  log_format spdylab '$remote_addr "$request" $status $body_bytes_sent $ssl_protocol $server_protocol';
  access_log {access_log};
  keepalive_requests 100000000;
  keepalive_timeout {keepalive}s;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  http2_max_concurrent_streams {streams};
  client_body_temp_path {dir}/tmp;
  add_header Access-Control-Allow-Origin * always;
{replay_map}  server {{
{listen_http}{listen_https}    ssl_certificate {dir}/cert.pem;
    ssl_certificate_key {dir}/key.pem;
    ssl_protocols {protocols};
{early_data}{root}  }}
{h2c}}}
"#,
        workers = o.workers.max(1),
        dir = dir.display(),
        streams = o.max_streams,
        keepalive = o.keepalive_timeout.map_or(300, |d| d.as_secs().max(1)),
        listen_http = listen(o.http_port, ""),
        listen_https = listen(o.https_port, " ssl http2"),
        protocols = match o.tls13_only {
            None => "TLSv1.2 TLSv1.3",
            Some(true) => "TLSv1.3",
            Some(false) => "TLSv1.2",
        },
        // TLS 1.3 early data (0-RTT) for a repeat view: nginx serves the
        // site's static GETs from it at once.
        early_data = if o.early_data {
            "    ssl_early_data on;\n"
        } else {
            ""
        },
        access_log = if o.access_log {
            format!("{}/{ACCESS_LOG} spdylab", dir.display())
        } else {
            "off".into()
        },
    );
    std::fs::write(dir.join("nginx.conf"), conf)?;
    command
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .arg("-p")
        .arg(dir);
    Ok(())
}
