//! h2o 2.2 from a generated YAML config: HTTP/1.1 (pipelining included) and
//! h2c by prior knowledge on the cleartext port, HTTPS and HTTP/2 (ALPN) on the
//! TLS port, one `hosts:` entry per docroot host and port. h2o always
//! advertises SETTINGS_MAX_CONCURRENT_STREAMS 100
//! (`http2-max-concurrent-requests-per-connection` only queues requests behind
//! it) and can be limited to TLS 1.3 (`minimum-version`) but not to TLS 1.2:
//! see the capability table.

use crate::{docroot_hosts, PeerOptions, ACCESS_LOG, ERROR_LOG, MIME_TYPES};
use std::io;
use std::net::IpAddr;
use std::path::Path;
use std::process::Command;

/// YAML's double-quoted string.
fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// Writes h2o.conf into `dir` and sets `command`'s arguments.
pub(crate) fn configure(o: &PeerOptions, dir: &Path, command: &mut Command) -> io::Result<()> {
    let d = dir.display();
    let host = |a: &IpAddr| match a {
        IpAddr::V6(v6) => format!("\"{v6}\""),
        IpAddr::V4(v4) => v4.to_string(),
    };
    let minimum = match o.tls13_only {
        Some(true) => "TLSv1.3",
        // TLS 1.2 only is refused up front (h2o 2.2 has no maximum version).
        _ => "TLSv1.2",
    };
    let mut listen = String::new();
    for a in &o.addresses {
        listen.push_str(&format!(
            "listen:\n  host: {}\n  port: {}\n",
            host(a),
            o.http_port
        ));
        listen.push_str(&format!(
            "listen:\n  host: {}\n  port: {}\n  ssl:\n    certificate-file: {d}/cert.pem\n    key-file: {d}/key.pem\n    minimum-version: {minimum}\n    ocsp-update-interval: 0\n",
            host(a),
            o.https_port
        ));
    }
    // h2o picks a host by "name:port" (a request without a port matches the
    // scheme's default one); the first entry also takes unknown names.
    // An imported page: an mruby handler answers its recorded URLs (query
    // strings included) from the route table.
    let replay = match crate::replay::routes(&o.docroot)? {
        Some(routes) => {
            let file = dir.join("replay.rb");
            std::fs::write(&file, crate::replay::h2o_ruby(&routes))?;
            Some(file)
        }
        None => None,
    };
    let mut hosts = String::from("hosts:\n");
    for h in docroot_hosts(&o.docroot)? {
        for port in [o.http_port, o.https_port] {
            let handler = match &replay {
                Some(file) => format!(
                    "mruby.handler-file: {}",
                    quoted(&file.display().to_string())
                ),
                None => format!(
                    "file.dir: {}",
                    quoted(&o.docroot.join(&h).display().to_string())
                ),
            };
            hosts.push_str(&format!(
                "  {}:\n    paths:\n      \"/\":\n        {handler}\n        header.add: \"Access-Control-Allow-Origin: *\"\n",
                quoted(&format!("{h}:{port}")),
            ));
        }
    }
    let types: String = MIME_TYPES
        .iter()
        .map(|(ext, t)| format!("  {t}: .{ext}\n"))
        .collect();
    let access_log = if o.access_log {
        format!(
            "access-log:\n  path: {d}/{ACCESS_LOG}\n  format: '%h \"%r\" %s %b %{{ssl.protocol-version}}x %H'\n"
        )
    } else {
        String::new()
    };
    let idle = o.keepalive_timeout.map_or(10, |t| t.as_secs().max(1));
    let conf = format!(
        "# spdylab: h2o\nuser: www-data\nerror-log: {d}/{ERROR_LOG}\nnum-threads: {threads}\nhttp1-request-timeout: {idle}\nhttp2-idle-timeout: {idle}\nhttp2-max-concurrent-requests-per-connection: {streams}\nfile.mime.addtypes:\n{types}{access_log}{listen}{hosts}",
        threads = o.workers.max(1),
        streams = o.max_streams,
    );
    std::fs::write(dir.join("h2o.conf"), conf)?;
    command.arg("-c").arg(dir.join("h2o.conf"));
    Ok(())
}
