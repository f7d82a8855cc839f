//! The text of `spdylab crosscheck`'s run: each probe's progress line (the
//! tables of its rows are `verdict::text::crosscheck`'s).

use crate::trial::ClientKind;
use results::ProbeRecord;
use site::Site;

/// A finished probe, for the progress bar.
pub fn progress_line(p: &ProbeRecord, site: &Site, label: &str, client: ClientKind) -> String {
    match &p.error {
        None => format!(
            "{} {} {} {}: PLT {:.0} ms",
            site.name,
            label,
            client.name(),
            p.protocol,
            p.plt_ms
        ),
        Some(e) => format!(
            "{} {} {} {} failed: {e}",
            site.name,
            label,
            client.name(),
            p.protocol
        ),
    }
}
