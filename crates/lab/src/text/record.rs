//! The text of `spdylab record`: what the HAR it wrote holds.

use crate::record::RecordSummary;
use std::path::Path;

/// The file written, its entries, bytes and onload; its bodies,
/// initiators, redirects and failures; the protocols of its responses.
pub fn summary(path: &Path, s: &RecordSummary) -> Vec<String> {
    let protocols: Vec<String> = s
        .protocols
        .iter()
        .map(|(p, n)| format!("{p} x{n}"))
        .collect();
    vec![
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
    ]
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
    }
}
