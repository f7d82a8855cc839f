//! The text of `spdylab crosscheck`'s run: the line saying which Trials'
//! Chromium loads come from `--reference`, each probe's progress line (the
//! tables of its rows are `verdict::text::crosscheck`'s).

use crate::crosscheck::CrosscheckSpec;
use crate::trial::ClientKind;
use results::ProbeRecord;
use site::Site;

/// Before the run, when `--reference` is given: how many Trials' Chromium
/// loads come from which files (and are not loaded again).
pub fn reference_line(spec: &CrosscheckSpec) -> Option<String> {
    if spec.reference.is_empty() {
        return None;
    }
    let files: Vec<String> = spec
        .reference
        .files()
        .iter()
        .map(|f| f.display().to_string())
        .collect();
    Some(format!(
        "crosscheck: Chromium's loads of {} of {} Trials from {} (not loaded again)",
        spec.referenced_trials(),
        spec.sites.len() * spec.links.len() * spec.protocols.len(),
        files.join(", ")
    ))
}

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
