//! Probes stored by an earlier run, read back for `explain` and `diff`: what
//! `compare --out FILE` wrote (a JSON document with `probes` and `summary`)
//! or a campaign directory (its probes.jsonl, the latest record per Trial).
//! An error names the path and what is missing.

use crate::Error;
use proto::Protocol;
use results::ProbeRecord;
use std::path::Path;

/// The probes at `path` and the order of their protocols (compare's, first
/// the baseline; empty for a campaign, whose order is the probes').
pub fn read(path: &Path) -> Result<(Vec<ProbeRecord>, Vec<Protocol>), Error> {
    let usage = |why: String| Error(format!("{}: {why}", path.display()));
    if path.is_dir() {
        let probes = results::read_probes(path, false).map_err(|e| usage(e.to_string()))?;
        if probes.is_empty() {
            return Err(usage(format!(
                "no {} here: not a campaign directory, or nothing ran yet",
                results::files::PROBES_FILE
            )));
        }
        return Ok((results::latest(probes), Vec::new()));
    }
    let text = std::fs::read_to_string(path).map_err(|e| usage(e.to_string()))?;
    let doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| usage(format!("not a compare --out document: {e}")))?;
    let probes: Vec<ProbeRecord> = doc
        .get("probes")
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .map_err(|e| usage(format!("its probes do not read: {e}")))?
        .ok_or_else(|| usage("not a compare --out document: no \"probes\"".into()))?;
    let order = doc["summary"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter_map(|r| r["protocol"].as_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    Ok((probes, order))
}

/// What the run at `path` was made with (`settings`): a compare document's
/// `settings` (or what an older one has), a campaign's experiment and builds.
pub fn settings(path: &Path) -> Result<crate::settings::Settings, Error> {
    use crate::settings::{campaign_builds, Settings};
    let usage = |why: String| Error(format!("{}: {why}", path.display()));
    if path.is_dir() {
        let file = path.join(results::EXPERIMENT_FILE);
        let text = std::fs::read_to_string(&file)
            .map_err(|e| usage(format!("{}: {e}", results::EXPERIMENT_FILE)))?;
        let exp = results::experiment::parse(&file.display().to_string(), &text)
            .map_err(|e| usage(e.to_string()))?;
        return Ok(Settings::of_campaign(&exp, campaign_builds(path)));
    }
    let text = std::fs::read_to_string(path).map_err(|e| usage(e.to_string()))?;
    let doc: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| usage(format!("not a compare --out document: {e}")))?;
    Ok(Settings::of_document(&doc))
}
