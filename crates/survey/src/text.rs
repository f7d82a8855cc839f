//! The text of `spdylab probe`: a survey of what a server speaks as a
//! table — a row per check (where, offered, detail), then the certificate
//! and whether it verifies, the Server header and what was offered.

use crate::{Survey, Verdict};
use link::units::format_duration;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// The survey as a table, each line ending in a newline; `ca`: the `--ca`
/// file the chain was also checked against.
pub fn table(s: &Survey, ca: Option<&Path>) -> String {
    let mut out = format!(
        "probe {} ({}): TLS port {}, cleartext port {}, name {}, timeout {} per check\n",
        s.host,
        s.address,
        s.tls_port,
        s.http_port,
        s.server_name,
        format_duration(Duration::from_millis(s.timeout_ms))
    );
    let _ = writeln!(
        out,
        "{:<22} {:<10} {:<8} detail",
        "check", "where", "offered"
    );
    for c in &s.checks {
        let place = match c.port {
            Some(p) => format!("{}/{p}", c.transport),
            None => c.transport.to_string(),
        };
        let offered = match c.offered {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        };
        let detail = match c.offered {
            Some(false) => format!("no: {}", c.detail),
            _ => c.detail.clone(),
        };
        let _ = writeln!(
            out,
            "{:<22} {:<10} {:<8} {}",
            c.name, place, offered, detail
        );
    }
    match &s.certificate {
        Some(cert) => {
            let verdict = |v: &Verdict| {
                if v.verifies {
                    "verifies".to_string()
                } else {
                    format!("does not verify ({})", v.detail)
                }
            };
            let _ = write!(
                out,
                "certificate: {} (chain of {}); system roots: {}",
                if cert.names.is_empty() {
                    "no subject alternative names".into()
                } else {
                    cert.names.join(", ")
                },
                cert.chain,
                verdict(&cert.system_roots)
            );
            if let (Some(v), Some(path)) = (&cert.ca, ca) {
                let _ = write!(out, "; --ca {}: {}", path.display(), verdict(v));
            }
            out.push('\n');
        }
        None => out.push_str("certificate: none seen (no TLS handshake completed)\n"),
    }
    let _ = writeln!(
        out,
        "server: {}",
        s.server.as_deref().unwrap_or("(no Server header)")
    );
    let offered = s.offered().join(", ");
    let _ = writeln!(
        out,
        "offered: {}",
        if offered.is_empty() {
            "nothing"
        } else {
            &offered
        }
    );
    out
}

/// Said when no check got an answer: where they were made.
pub fn nothing_answered(s: &Survey) -> String {
    format!(
        "spdylab: nothing answered at {} (TCP {} and {}, UDP {})",
        s.address, s.tls_port, s.http_port, s.tls_port
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Check;

    #[test]
    fn a_server_that_offers_nothing_says_why_per_check() {
        let s = Survey {
            host: "example.test".into(),
            address: "192.0.2.1".parse().unwrap(),
            tls_port: 443,
            http_port: 80,
            server_name: "example.test".into(),
            timeout_ms: 5000,
            checks: vec![Check {
                key: "h2",
                name: "h2 (ALPN)",
                transport: "tcp",
                port: Some(443),
                offered: Some(false),
                answered: false,
                detail: "connection refused".into(),
                settings: None,
            }],
            certificate: None,
            server: None,
            alt_svc: None,
        };
        let out = table(&s, None);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "probe example.test (192.0.2.1): TLS port 443, cleartext port 80, name example.test, timeout 5s per check"
        );
        assert_eq!(
            lines[2],
            format!(
                "{:<22} {:<10} {:<8} no: connection refused",
                "h2 (ALPN)", "tcp/443", "no"
            )
        );
        assert_eq!(
            &lines[3..],
            [
                "certificate: none seen (no TLS handshake completed)",
                "server: (no Server header)",
                "offered: nothing"
            ]
        );
        assert!(out.ends_with('\n'));
        assert_eq!(
            nothing_answered(&s),
            "spdylab: nothing answered at 192.0.2.1 (TCP 443 and 80, UDP 443)"
        );
    }
}
