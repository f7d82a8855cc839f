//! `spdylab explain` and `compare --explain` (issue 34): the stored probes'
//! explanations (`results::ProbeRecord::explain`, made after each probe by
//! `explain::analyze`) grouped per point and protocol, and each protocol's
//! PLT difference from the baseline (the first protocol) taken apart into
//! components (`explain::difference`). Reads what `compare --out FILE` wrote
//! or a campaign directory; the lines are `text::explain`'s.

use crate::Error;
use explain::{Difference, Explanation};
use proto::Protocol;
use results::ProbeRecord;
use serde::Serialize;
use std::path::Path;

/// One point's probes: per protocol (the first the baseline) its
/// explanations, and each other protocol's difference from the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    /// The point's key (`results::experiment::point_key`); empty for a compare.
    pub point: String,
    pub protocols: Vec<ProtocolExplained>,
    /// Protocol − baseline, for every protocol but the baseline.
    pub differences: Vec<Difference>,
}

/// One protocol's explained probes at a point.
#[derive(Debug, Clone, Serialize)]
pub struct ProtocolExplained {
    pub protocol: Protocol,
    /// Probes that loaded and have an explanation.
    pub n: usize,
    /// The probes' mean components (`off_wire_ms`, …, as a probe's).
    pub mean: explain::Components,
    pub mean_plt_ms: f64,
    #[serde(skip)]
    pub explanations: Vec<Explanation>,
}

/// The groups of `probes` (warm-ups excluded by the caller), protocols in
/// the order first seen unless `order` gives it.
pub fn groups(probes: &[ProbeRecord], order: &[Protocol]) -> Vec<Group> {
    let mut points: Vec<String> = Vec::new();
    for p in probes {
        let key = results::experiment::point_key(&p.point);
        if !points.contains(&key) {
            points.push(key);
        }
    }
    points
        .into_iter()
        .map(|point| {
            let mine: Vec<&ProbeRecord> = probes
                .iter()
                .filter(|p| results::experiment::point_key(&p.point) == point)
                .collect();
            let mut protocols: Vec<Protocol> = order.to_vec();
            for p in &mine {
                if !protocols.contains(&p.protocol) {
                    protocols.push(p.protocol);
                }
            }
            protocols.retain(|proto| mine.iter().any(|p| p.protocol == *proto));
            let explained: Vec<ProtocolExplained> = protocols
                .iter()
                .map(|&protocol| {
                    let explanations: Vec<Explanation> = mine
                        .iter()
                        .filter(|p| p.protocol == protocol && p.error.is_none())
                        .filter_map(|p| p.explain.clone())
                        .collect();
                    let n = explanations.len();
                    let mean = |f: &dyn Fn(&Explanation) -> f64| {
                        explanations.iter().map(f).sum::<f64>() / n.max(1) as f64
                    };
                    ProtocolExplained {
                        protocol,
                        n,
                        mean: explain::Components {
                            off_wire_ms: mean(&|e| e.components.off_wire_ms),
                            retransmission_ms: mean(&|e| e.components.retransmission_ms),
                            transfer_ms: mean(&|e| e.components.transfer_ms),
                            loss_recovery_ms: mean(&|e| e.components.loss_recovery_ms),
                            setup_ms: mean(&|e| e.components.setup_ms),
                            queueing_ms: mean(&|e| e.components.queueing_ms),
                            window_ms: mean(&|e| e.components.window_ms),
                            request_ms: mean(&|e| e.components.request_ms),
                            browser_ms: mean(&|e| e.components.browser_ms),
                        },
                        mean_plt_ms: mean(&|e| e.plt_ms),
                        explanations,
                    }
                })
                .collect();
            let differences = match explained.split_first() {
                Some((base, rest)) => rest
                    .iter()
                    .map(|p| explain::difference(&p.explanations, &base.explanations))
                    .collect(),
                None => Vec::new(),
            };
            Group {
                point,
                protocols: explained,
                differences,
            }
        })
        .collect()
}

/// The probes stored at `path` (a `compare --out` document or a campaign
/// directory) and their protocols' order, grouped; an error names the path
/// and what is missing.
pub fn read(path: &Path) -> Result<Vec<Group>, Error> {
    let usage = |why: String| Error::Usage(format!("{}: {why}", path.display()));
    let (probes, order): (Vec<ProbeRecord>, Vec<Protocol>) = if path.is_dir() {
        let probes = results::read_probes(path, false).map_err(|e| usage(e.to_string()))?;
        if probes.is_empty() {
            return Err(usage(format!(
                "no {} here: not a campaign directory, or nothing ran yet",
                results::files::PROBES_FILE
            )));
        }
        (results::latest(probes), Vec::new())
    } else {
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
        (probes, order)
    };
    if !probes.iter().any(|p| p.explain.is_some()) {
        return Err(usage(
            "no probe here has an explanation: it was written before explain existed, or every probe failed; run it again"
                .into(),
        ));
    }
    Ok(groups(&probes, &order))
}

/// `spdylab explain --json`: schema 1, the groups.
pub fn document(groups: &[Group]) -> serde_json::Value {
    serde_json::json!({ "schema": 1, "groups": groups })
}
