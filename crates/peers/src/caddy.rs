//! caddy 2.6 from a generated Caddyfile: no admin endpoint, no automatic HTTPS,
//! the testbed's certificate given explicitly; HTTP/1.1 (pipelining included)
//! and h2c by prior knowledge on the cleartext port, HTTPS and HTTP/2 on the
//! TLS port, `root DOCROOT/{host}`, a JSON access log. HOME and XDG_* point
//! into the scratch directory so that it writes nothing elsewhere. Go's
//! HTTP/2 server advertises 250 concurrent streams and caddy 2.6 has no
//! setting for it: see the capability table.

use crate::{PeerOptions, ACCESS_LOG, ERROR_LOG, MIME_TYPES};
use std::io;
use std::path::Path;
use std::process::Command;

/// A Caddyfile token (quoted when it has spaces or quotes).
fn token(s: &str) -> String {
    if s.chars()
        .any(|c| c.is_whitespace() || c == '"' || c == '{' || c == '}')
    {
        format!("{s:?}")
    } else {
        s.to_string()
    }
}

/// Writes the Caddyfile into `dir`, sets `command`'s arguments and environment.
pub(crate) fn configure(o: &PeerOptions, dir: &Path, command: &mut Command) -> io::Result<()> {
    let d = dir.display().to_string();
    let bind: Vec<String> = o.addresses.iter().map(|a| a.to_string()).collect();
    let protocols = match o.tls13_only {
        None => "tls1.2 tls1.3",
        Some(true) => "tls1.3 tls1.3",
        Some(false) => "tls1.2 tls1.2",
    };
    // The model client reads HTML, CSS and scripts by their type: set it as the others do.
    let types: String = MIME_TYPES
        .iter()
        .map(|(ext, t)| format!("\t@{ext} path *.{ext}\n\theader @{ext} Content-Type {t}\n"))
        .collect();
    let log = if o.access_log {
        format!(
            "\tlog {{\n\t\toutput file {} {{\n\t\t\troll_disabled\n\t\t}}\n\t\tformat json\n\t}}\n",
            token(&format!("{d}/{ACCESS_LOG}"))
        )
    } else {
        String::new()
    };
    // An imported page: one matcher per recorded URL (query string included).
    let serve = match crate::replay::routes(&o.docroot)? {
        Some(routes) => crate::replay::caddy(&routes, &token),
        None => format!(
            "\troot * {}\n{types}\tfile_server\n",
            token(&format!("{}/{{host}}", o.docroot.display()))
        ),
    };
    let site = |scheme: &str, port: u16, tls: &str| {
        format!(
            "{scheme}://:{port} {{\n\tbind {bind}\n{tls}\theader Access-Control-Allow-Origin *\n{serve}{log}}}\n",
            bind = bind.join(" "),
        )
    };
    let idle = o.keepalive_timeout.map_or(String::new(), |t| {
        format!(
            "\t\ttimeouts {{\n\t\t\tidle {}s\n\t\t}}\n",
            t.as_secs().max(1)
        )
    });
    let conf = format!(
        "# spdylab: caddy\n{{\n\tadmin off\n\tauto_https off\n\tstorage file_system {storage}\n\tservers {{\n\t\tprotocols h1 h2 h2c h3\n{idle}\t}}\n\tlog {{\n\t\toutput file {error} {{\n\t\t\troll_disabled\n\t\t}}\n\t\tlevel WARN\n\t}}\n}}\n{http}{https}",
        storage = token(&format!("{d}/data")),
        error = token(&format!("{d}/{ERROR_LOG}")),
        http = site("http", o.http_port, ""),
        https = site(
            "https",
            o.https_port,
            &format!(
                "\ttls {} {} {{\n\t\tprotocols {protocols}\n\t}}\n",
                token(&format!("{d}/cert.pem")),
                token(&format!("{d}/key.pem"))
            )
        ),
    );
    std::fs::write(dir.join("Caddyfile"), conf)?;
    command
        .args(["run", "--adapter", "caddyfile", "--config"])
        .arg(dir.join("Caddyfile"))
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("XDG_CACHE_HOME", dir.join("cache"));
    Ok(())
}

/// The protocol ("HTTP/2.0") and TLS version ("TLSv1.3", or "-" in clear) of
/// one line of caddy's JSON access log.
pub(crate) fn proto_and_tls(line: &str) -> (String, String) {
    let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
    let request = &v["request"];
    let proto = request["proto"].as_str().unwrap_or("?").to_string();
    let tls = match request["tls"]["version"].as_u64() {
        None => "-".to_string(),
        Some(0x0301) => "TLSv1".into(),
        Some(0x0302) => "TLSv1.1".into(),
        Some(0x0303) => "TLSv1.2".into(),
        Some(0x0304) => "TLSv1.3".into(),
        Some(other) => format!("TLS-{other:#x}"),
    };
    (proto, tls)
}
