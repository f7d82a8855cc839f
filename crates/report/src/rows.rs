//! The groups of a campaign: its probes grouped by point and protocol
//! (`aggregate`, one `Row` each, a line of summary.csv), and the headline
//! computed from them.

use crate::axes::{kind, sites};
use results::experiment::{self, point_key};
use results::stats::{mean, Summary};
use results::{summarize_protocols, Experiment, Point, ProbeRecord};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The HAR phases drawn, with their colours (connect here excludes ssl).
pub(crate) const PHASES: &[(&str, &str)] = &[
    ("blocked", "#c7c7c7"),
    ("connect", "#ff9f40"),
    ("ssl", "#9467bd"),
    ("send", "#8c8c8c"),
    ("wait", "#2ca02c"),
    ("receive", "#1f77b4"),
];

/// The time of HAR phase `name` from a lookup of the raw phases (negative:
/// none, 0): connect here excludes ssl.
pub(crate) fn phase_ms(name: &str, get: impl Fn(&str) -> f64) -> f64 {
    let get = |k: &str| get(k).max(0.0);
    if name == "connect" {
        (get("connect") - get("ssl")).max(0.0)
    } else {
        get(name)
    }
}

/// One row of summary.csv.
#[derive(Debug, Clone)]
pub struct Row {
    pub point: Point,
    pub key: String,
    pub protocol: String,
    pub n: usize,
    pub failed: usize,
    pub plt: Summary,
    pub tow: Summary,
    /// Gain of the headline metric's mean (the experiment's `metric`: PLT or
    /// ToW) over the baseline's at the same point, with its 95 % bootstrap CI;
    /// None when this protocol or the baseline loaded nothing there.
    pub gain: Option<f64>,
    pub gain_ci: [f64; 2],
    pub tow_gain: Option<f64>,
    pub phases: BTreeMap<String, f64>,
    pub connections: Option<f64>,
    pub bytes_down: Option<f64>,
    /// Gain of mean PLT (whatever the headline), and ToW's CI.
    pub plt_gain: Option<f64>,
    pub tow_gain_ci: [f64; 2],
    /// The error of the group's first failed probe.
    pub first_error: Option<String>,
    /// The headline metric's summary (PLT's, ToW's, or a paint metric's
    /// over the probes that have it).
    pub headline: Summary,
    /// Mean TTFB, FCP, LCP and Speed Index over the probes that have them
    /// (None where none has).
    pub paint_means: [Option<f64>; 4],
}

/// Groups the probes by point and protocol, in the experiment's order: each
/// group summarized by `results::summarize_protocols`, against the baseline.
pub fn aggregate(exp: &Experiment, probes: &[ProbeRecord]) -> Vec<Row> {
    let mut by_point: BTreeMap<String, Vec<&ProbeRecord>> = BTreeMap::new();
    for p in probes {
        by_point.entry(point_key(&p.point)).or_default().push(p);
    }
    let mut rows = Vec::new();
    for point in exp.points() {
        let key = point_key(&point);
        let Some(here) = by_point.get(&key) else {
            continue;
        };
        let summaries = summarize_protocols(exp.baseline, &exp.protocols, here);
        for s in &summaries {
            // The baseline's own gain is drawn and written as 0 (none when it
            // never loaded: then no protocol has a gain).
            let own = |g: Option<f64>, ci: [f64; 2]| -> (Option<f64>, [f64; 2]) {
                if s.protocol != exp.baseline {
                    (g, ci)
                } else if s.n > 0 {
                    (Some(0.0), [0.0, 0.0])
                } else {
                    (None, [f64::NAN, f64::NAN])
                }
            };
            let (gain, gain_ci) = own(exp.metric.gain(s).0, exp.metric.gain(s).1);
            let (plt_gain, _) = own(s.gain_pct, s.gain_ci95);
            let (tow_gain, tow_gain_ci) = own(s.tow_gain_pct, s.tow_gain_ci95);
            let good: Vec<&ProbeRecord> = here
                .iter()
                .copied()
                .filter(|p| p.protocol == s.protocol && p.error.is_none())
                .collect();
            let mut phases = BTreeMap::new();
            for (name, _) in PHASES {
                let v: Vec<f64> = good
                    .iter()
                    .map(|p| phase_ms(name, |k| p.phases.get(k)))
                    .collect();
                phases.insert(name.to_string(), mean(&v));
            }
            rows.push(Row {
                point: point.clone(),
                key: key.clone(),
                protocol: s.protocol.name().to_string(),
                n: s.n,
                failed: s.failed,
                plt: s.plt_ms,
                tow: s.tow_ms,
                gain,
                gain_ci,
                tow_gain,
                phases,
                connections: s.connections,
                bytes_down: s.bytes_down,
                plt_gain,
                tow_gain_ci,
                first_error: s.first_error.clone(),
                headline: *exp.metric.summary(s),
                paint_means: [&s.ttfb_ms, &s.fcp_ms, &s.lcp_ms, &s.speed_index_ms]
                    .map(|p| p.as_ref().map(|p| p.summary.mean)),
            });
        }
    }
    rows
}

/// Mean gain per site and protocol over the sweep, with the range of group gains.
pub(crate) fn headline(exp: &Experiment, rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    for site in sites(exp) {
        for proto in exp.protocols.iter().filter(|p| **p != exp.baseline) {
            let here: Vec<&Row> = rows
                .iter()
                .filter(|r| r.protocol == proto.name() && r.point.get("site") == Some(&site))
                .collect();
            let gains: Vec<f64> = here.iter().filter_map(|r| r.gain).collect();
            if gains.is_empty() {
                if !here.is_empty() {
                    out.push(format!(
                        "{site}: {proto} over {}: n/a (no point where both loaded)",
                        exp.baseline
                    ));
                }
                continue;
            }
            let (lo, hi) = gains
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), g| {
                    (a.min(*g), b.max(*g))
                });
            let mut line = format!(
                "{site}: {proto} over {}: mean {} gain {:+.1} % over {} point(s) (from {:+.1} to {:+.1})",
                exp.baseline,
                exp.metric.label(),
                mean(&gains),
                gains.len(),
                lo,
                hi
            );
            for r in exp.references.iter().filter(|r| {
                r.site.as_deref() == Some(site.as_str())
                    && r.axis.is_none()
                    && r.protocol.as_deref().is_none_or(|p| p == proto.name())
            }) {
                let _ = write!(line, "; {}: {:+.2} %", r.label, r.gain_pct);
            }
            out.push(line);
        }
    }
    // Points the paper named (e.g. 490 ms for YouTube), and averages over all sites.
    for r in &exp.references {
        let matching = |row: &Row| {
            r.site
                .as_deref()
                .is_none_or(|s| row.point.get("site").map(String::as_str) == Some(s))
                && r.protocol.as_deref().is_none_or(|p| p == row.protocol)
                && row.protocol != exp.baseline.name()
                && row.n > 0
                && match (&r.axis, &r.at) {
                    (Some(a), Some(at)) => {
                        let want = experiment::canonical(kind(a), at).unwrap_or_default();
                        row.point.get(a.as_str()) == Some(&want)
                    }
                    _ => true,
                }
        };
        if r.axis.is_none() && r.site.is_some() {
            continue; // in the per-site lines above
        }
        let gains: Vec<f64> = rows
            .iter()
            .filter(|row| matching(row))
            .filter_map(|row| row.gain)
            .collect();
        if gains.is_empty() {
            continue;
        }
        out.push(format!(
            "{}{}{}: ours {:+.1} % (mean of {} group(s)), {} {:+.2} %",
            r.site.as_deref().unwrap_or("all sites"),
            r.axis.as_ref().map_or(String::new(), |a| format!(
                " at {a}={}",
                r.at.as_deref().unwrap_or("")
            )),
            r.protocol
                .as_ref()
                .map_or(String::new(), |p| format!(" ({p})")),
            mean(&gains),
            gains.len(),
            r.label,
            r.gain_pct
        ));
    }
    out
}
