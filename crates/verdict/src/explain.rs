//! `spdylab explain` and `compare --explain` (issue 34): the stored probes'
//! explanations (`results::ProbeRecord::explain`, made after each probe by
//! `explain::analyze`) grouped per point and protocol, and each protocol's
//! PLT difference from the baseline (the first protocol) taken apart into
//! components (`explain::difference`). Reads what `compare --out FILE` wrote
//! or a campaign directory; the lines are `text::explain`'s.

use crate::Error;
use explain::{Difference, Explanation, Mechanisms};
use proto::Protocol;
use results::{ProbeRecord, View};
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

/// One protocol's explained probes at a point, of one view.
#[derive(Debug, Clone, Serialize)]
pub struct ProtocolExplained {
    pub protocol: Protocol,
    /// First or repeat view (`--view both` gives both; left out when first).
    #[serde(skip_serializing_if = "is_first")]
    pub view: View,
    /// Probes that loaded and have an explanation.
    pub n: usize,
    /// The probes' mean components (`off_wire_ms`, …, as a probe's).
    pub mean: explain::Components,
    /// Each mean's 95 % Student-t interval, [low, high]; None under 2 probes.
    pub ci95: Option<[explain::Components; 2]>,
    pub mean_plt_ms: f64,
    pub plt_ci95_ms: Option<[f64; 2]>,
    /// The mechanism figures (`explain::Mechanisms`) over the probes, in
    /// [`MECHANISMS`]' order; a figure no probe defines is left out.
    pub mechanisms: Vec<MechanismStat>,
    #[serde(skip)]
    pub explanations: Vec<Explanation>,
}

/// One mechanism figure over a protocol's probes at a point.
#[derive(Debug, Clone, Serialize)]
pub struct MechanismStat {
    /// Its name, as the field of `explain::Mechanisms` (`gateway_loss_pct`).
    pub name: &'static str,
    /// Probes that define it.
    pub n: usize,
    pub mean: f64,
    /// 95 % Student-t interval; None under 2 probes.
    pub ci95: Option<[f64; 2]>,
}

/// A mechanism figure: its name, its column title, and how to read it off
/// one probe's `explain::Mechanisms`.
pub type MechanismField = (&'static str, &'static str, fn(&Mechanisms) -> Option<f64>);

/// The mechanism figures, in the order the text and the JSON give them.
pub const MECHANISMS: [MechanismField; 13] = [
    ("gateway_loss_pct", "gw-loss%", |m| m.gateway_loss_pct),
    ("rtt_inflation_pct", "rtt-infl%", |m| m.rtt_inflation_pct),
    ("goodput_kbps", "goodput", |m| m.goodput_kbps),
    ("setup_share_pct", "setup%", |m| m.setup_share_pct),
    ("request_share_pct", "request%", |m| m.request_share_pct),
    ("hol_blocked_kb", "hol-KB", |m| Some(m.hol_blocked_kb)),
    ("hol_blocked_ms", "hol-ms", |m| Some(m.hol_blocked_ms)),
    ("connections", "conns", |m| Some(m.connections as f64)),
    ("peak_flight_kb", "peak-KB", |m| m.peak_flight_kb),
    ("mean_peak_flight_kb", "conn-peak-KB", |m| {
        m.mean_peak_flight_kb
    }),
    ("page_share_pct", "page-share%", |m| m.page_share_pct),
    ("competing_kbps", "cross-kbps", |m| m.competing_kbps),
    ("competing_wait_p95_ms", "cross-p95ms", |m| {
        m.competing_wait_p95_ms
    }),
];

fn is_first(v: &View) -> bool {
    *v == View::First
}

impl ProtocolExplained {
    /// Its name in tables and differences: the protocol's, with the view
    /// when it is a repeat (`h2 repeat`).
    pub fn label(&self) -> String {
        match self.view {
            View::First => self.protocol.name().to_string(),
            v => format!("{} {}", self.protocol.name(), v.name()),
        }
    }
}

/// The groups of `probes` (warm-ups excluded by the caller), protocols in
/// the order first seen unless `order` gives it, each protocol's first view
/// before its repeat view. A first view's difference is from the first
/// protocol's first view; a repeat view's from its own protocol's first
/// view (what the repeat saved) and from the first protocol's repeat view.
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
            // `order` may name a protocol once per view (a compare's rows).
            let mut protocols: Vec<Protocol> = Vec::new();
            for &p in order {
                if !protocols.contains(&p) {
                    protocols.push(p);
                }
            }
            for p in &mine {
                if !protocols.contains(&p.protocol) {
                    protocols.push(p.protocol);
                }
            }
            let keys: Vec<(Protocol, View)> = protocols
                .iter()
                .flat_map(|&proto| [(proto, View::First), (proto, View::Repeat)])
                .filter(|&(proto, view)| {
                    mine.iter()
                        .any(|p| p.protocol == proto && p.reuse.view == view)
                })
                .collect();
            let explained: Vec<ProtocolExplained> = keys
                .iter()
                .map(|&(protocol, view)| {
                    let explanations: Vec<Explanation> = mine
                        .iter()
                        .filter(|p| {
                            p.protocol == protocol && p.reuse.view == view && p.error.is_none()
                        })
                        .filter_map(|p| p.explain.clone())
                        .collect();
                    let n = explanations.len();
                    let of = |f: &dyn Fn(&Explanation) -> f64| {
                        mean_ci(&explanations.iter().map(f).collect::<Vec<_>>())
                    };
                    let components = |pick: &dyn Fn((f64, [f64; 2])) -> f64| {
                        let c = |field: fn(&explain::Components) -> f64| {
                            pick(of(&|e| field(&e.components)))
                        };
                        explain::Components {
                            off_wire_ms: c(|c| c.off_wire_ms),
                            retransmission_ms: c(|c| c.retransmission_ms),
                            transfer_ms: c(|c| c.transfer_ms),
                            loss_recovery_ms: c(|c| c.loss_recovery_ms),
                            setup_ms: c(|c| c.setup_ms),
                            queueing_ms: c(|c| c.queueing_ms),
                            window_ms: c(|c| c.window_ms),
                            request_ms: c(|c| c.request_ms),
                            browser_ms: c(|c| c.browser_ms),
                        }
                    };
                    let plt = of(&|e| e.plt_ms);
                    let per_probe: Vec<Mechanisms> =
                        explanations.iter().map(Explanation::mechanisms).collect();
                    let mechanisms = MECHANISMS
                        .iter()
                        .filter_map(|&(name, _, read)| {
                            let xs: Vec<f64> = per_probe.iter().filter_map(read).collect();
                            let (mean, ci) = (!xs.is_empty()).then(|| mean_ci(&xs))?;
                            Some(MechanismStat {
                                name,
                                n: xs.len(),
                                mean,
                                ci95: (xs.len() >= 2).then_some(ci),
                            })
                        })
                        .collect();
                    ProtocolExplained {
                        protocol,
                        view,
                        n,
                        mean: components(&|m| m.0),
                        ci95: (n >= 2).then(|| [components(&|m| m.1[0]), components(&|m| m.1[1])]),
                        mean_plt_ms: plt.0,
                        plt_ci95_ms: (n >= 2).then_some(plt.1),
                        mechanisms,
                        explanations,
                    }
                })
                .collect();
            // (view, baseline) pairs: a first view against the first
            // protocol's; a repeat view against its own first view (what it
            // saved) and against the first protocol's repeat view.
            let mut pairs: Vec<(usize, usize)> = Vec::new();
            for (i, &(proto, view)) in keys.iter().enumerate() {
                if view == View::Repeat {
                    if let Some(b) = keys.iter().position(|&k| k == (proto, View::First)) {
                        pairs.push((i, b));
                    }
                }
                if let Some(b) = keys
                    .iter()
                    .position(|&(_, v)| v == view)
                    .filter(|&b| b != i)
                {
                    pairs.push((i, b));
                }
            }
            let differences = pairs
                .into_iter()
                .map(|(i, b)| {
                    let (p, base) = (&explained[i], &explained[b]);
                    let mut d = explain::difference(&p.explanations, &base.explanations);
                    d.a_label = p.label();
                    d.b_label = base.label();
                    d
                })
                .collect();
            Group {
                point,
                protocols: explained,
                differences,
            }
        })
        .collect()
}

/// The mean of `xs` (0 when empty) and its 95 % Student-t interval (the
/// mean itself under two values): `results::stats::summarize`'s.
fn mean_ci(xs: &[f64]) -> (f64, [f64; 2]) {
    if xs.len() < 2 {
        let mean = xs.first().copied().unwrap_or(0.0);
        return (mean, [mean, mean]);
    }
    let s = results::stats::summarize(xs);
    (s.mean, s.ci95)
}

/// The probes stored at `path` (a `compare --out` document or a campaign
/// directory) and their protocols' order, grouped; an error names the path
/// and what is missing.
pub fn read(path: &Path) -> Result<Vec<Group>, Error> {
    let usage = |why: String| Error(format!("{}: {why}", path.display()));
    let (probes, order) = crate::stored::read(path)?;
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

#[cfg(test)]
mod tests {
    use super::mean_ci;

    #[test]
    fn a_mean_and_its_student_t_interval() {
        let (m, [lo, hi]) = mean_ci(&[1.0, 2.0, 3.0]);
        // t(0.975, 2) = 4.303 (results' table, 3 decimals), s = 1, n = 3.
        assert_eq!(m, 2.0);
        assert!((hi - m - 4.303 / 3f64.sqrt()).abs() < 1e-9, "{hi}");
        assert!((m - lo - (hi - m)).abs() < 1e-12);
        assert_eq!(mean_ci(&[5.0]), (5.0, [5.0, 5.0]));
        assert_eq!(mean_ci(&[]), (0.0, [0.0, 0.0]));
    }
}
