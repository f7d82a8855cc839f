//! The text of `spdylab record`: what the HAR it wrote holds.

use crate::record::RecordSummary;
use std::path::Path;

/// How many blocked URLs the text names (the JSON has them all).
const BLOCKED_NAMED: usize = 10;

/// The file written, its entries, bytes and onload; its bodies,
/// initiators, redirects and failures; the protocols of its responses; and
/// the requests blocked (hosts not allowed), per host and by URL.
pub fn summary(path: &Path, s: &RecordSummary) -> Vec<String> {
    let protocols: Vec<String> = s
        .protocols
        .iter()
        .map(|(p, n)| format!("{p} x{n}"))
        .collect();
    let mut lines = vec![
        format!(
            "wrote {}: {} entries, {:.1} kB, onload {:.0} ms",
            path.display(),
            s.entries,
            s.bytes as f64 / 1000.0,
            s.onload_ms
        ),
        format!(
            "  bodies: {} recorded, {} missing; initiators with a URL: {}; redirects: {}; failed: {}",
            s.bodies_recorded, s.bodies_missing, s.initiators, s.redirects, s.failed
        ),
        format!("  protocols: {}", protocols.join(", ")),
    ];
    let hosts: Vec<String> = s
        .blocked_hosts
        .iter()
        .map(|(h, n)| format!("{h} x{n}"))
        .collect();
    lines.push(match s.blocked {
        0 => "  blocked: none (every request went to an allowed host)".into(),
        n => format!(
            "  blocked: {n} request(s) to hosts not allowed (--allow-host): {}",
            hosts.join(", ")
        ),
    });
    lines.extend(
        s.blocked_urls
            .iter()
            .take(BLOCKED_NAMED)
            .map(|u| format!("    {u}")),
    );
    if s.blocked_urls.len() > BLOCKED_NAMED {
        lines.push(format!(
            "    and {} more URL(s) (--json lists them all)",
            s.blocked_urls.len() - BLOCKED_NAMED
        ));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_the_file_and_each_protocol() {
        let s = RecordSummary {
            entries: 3,
            bytes: 12_345,
            protocols: vec![("h2".into(), 2), ("http/1.1".into(), 1)],
            onload_ms: 812.4,
            ..RecordSummary::default()
        };
        let out = summary(Path::new("rec/page.har"), &s);
        assert_eq!(
            out[0],
            "wrote rec/page.har: 3 entries, 12.3 kB, onload 812 ms"
        );
        assert_eq!(out[2], "  protocols: h2 x2, http/1.1 x1");
        assert_eq!(
            out[3],
            "  blocked: none (every request went to an allowed host)"
        );
    }

    #[test]
    fn blocked_requests_are_counted_and_named() {
        let s = RecordSummary {
            blocked: 3,
            blocked_hosts: vec![("127.0.0.1:6379".into(), 2), ("cdn.test:443".into(), 1)],
            blocked_urls: vec![
                "http://127.0.0.1:6379/a".into(),
                "https://cdn.test/x".into(),
            ],
            ..RecordSummary::default()
        };
        let out = summary(Path::new("p.har"), &s);
        assert_eq!(
            out[3..],
            [
                "  blocked: 3 request(s) to hosts not allowed (--allow-host): 127.0.0.1:6379 x2, cdn.test:443 x1",
                "    http://127.0.0.1:6379/a",
                "    https://cdn.test/x",
            ]
        );
    }
}
