//! `spdylab diff A B` (issue 38): did B move against A? Per point, protocol
//! and metric, the shift of B from A (Hodges–Lehmann: the median pairwise
//! difference, with its distribution-free 95 % interval), the two-sided
//! Mann-Whitney U p-value, and a verdict at α: faster, slower, or no
//! difference. A and B are what `compare --out FILE` wrote or campaign
//! directories; their probes are matched by point (the Trial's settings but
//! its protocol and repetition) and protocol, so two runs of one experiment
//! compare point by point and two compares compare as wholes. Budgets
//! (`budget`) and the judgement of a run by both (`judge`) build on this.

use crate::Error;
use proto::Protocol;
use results::stats;
use results::ProbeRecord;
use serde::Serialize;

/// What B did against A at one point, for one protocol and metric.
#[derive(Debug, Clone, Serialize)]
pub struct Shift {
    /// The point's key (`results::experiment::point_key`); empty for compares.
    pub point: String,
    pub protocol: Protocol,
    pub metric: Metric,
    /// Probes that loaded, each side.
    pub a_n: usize,
    pub b_n: usize,
    pub a_median_ms: f64,
    pub b_median_ms: f64,
    /// B − A, ms: the Hodges–Lehmann estimate.
    pub shift_ms: f64,
    /// Its 95 % interval; None when the samples are too small to reach 95 %
    /// (fewer than 4 a side).
    pub shift_ci95_ms: Option<[f64; 2]>,
    /// shift / A's median × 100.
    pub shift_pct: f64,
    /// Two-sided Mann-Whitney U.
    pub p_value: f64,
    pub verdict: Verdict,
}

/// B against A at α.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Faster,
    Slower,
    NoDifference,
}

impl Verdict {
    pub fn words(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoDifference => "no difference",
        }
    }
}

/// What `diff` and budgets judge: the page's load (PLT, time on wire) and
/// what the user sees (TTFB, FCP, LCP, Speed Index); one type with the
/// headline of `compare`.
pub use results::Metric;

/// The loaded probes of `probes` by (point key, protocol), in first-seen order.
pub fn grouped(probes: &[ProbeRecord]) -> Vec<((String, Protocol), Vec<&ProbeRecord>)> {
    let mut out: Vec<((String, Protocol), Vec<&ProbeRecord>)> = Vec::new();
    for p in probes.iter().filter(|p| p.error.is_none()) {
        let key = (results::experiment::point_key(&p.point), p.protocol);
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(p),
            None => out.push((key, vec![p])),
        }
    }
    out
}

/// B against A for every point and protocol both have, per metric. An
/// error when they share none (different experiments, or sites).
pub fn diff(a: &[ProbeRecord], b: &[ProbeRecord], alpha: f64) -> Result<Vec<Shift>, String> {
    let (ga, gb) = (grouped(a), grouped(b));
    let mut out = Vec::new();
    for ((point, protocol), bs) in &gb {
        let Some((_, as_)) = ga.iter().find(|(k, _)| k.0 == *point && k.1 == *protocol) else {
            continue;
        };
        for metric in Metric::ALL {
            let xs: Vec<f64> = as_.iter().filter_map(|p| metric.of(p)).collect();
            let ys: Vec<f64> = bs.iter().filter_map(|p| metric.of(p)).collect();
            let (Some((shift, ci)), Some(p)) = (
                stats::hodges_lehmann(&xs, &ys),
                stats::mann_whitney_p(&xs, &ys),
            ) else {
                continue;
            };
            let a_median = stats::median(&xs);
            let verdict = match (p < alpha, shift) {
                (true, s) if s < 0.0 => Verdict::Faster,
                (true, s) if s > 0.0 => Verdict::Slower,
                _ => Verdict::NoDifference,
            };
            out.push(Shift {
                point: point.clone(),
                protocol: *protocol,
                metric,
                a_n: xs.len(),
                b_n: ys.len(),
                a_median_ms: a_median,
                b_median_ms: stats::median(&ys),
                shift_ms: shift,
                shift_ci95_ms: ci,
                shift_pct: if a_median > 0.0 {
                    shift / a_median * 100.0
                } else {
                    0.0
                },
                p_value: p,
                verdict,
            });
        }
    }
    // By point as first seen in B, then protocol as first seen, then metric.
    let order = |s: &Shift| {
        let point = gb.iter().position(|((p, _), _)| *p == s.point);
        let protocol = gb.iter().position(|((_, p), _)| *p == s.protocol);
        (point, protocol)
    };
    out.sort_by_key(order);
    if out.is_empty() {
        return Err("A and B share no point and protocol with loaded probes: \
             they ran different experiments, sites or protocols"
            .into());
    }
    Ok(out)
}

/// A significance level must lie strictly between 0 and 1.
pub fn check_alpha(alpha: f64) -> Result<(), Error> {
    if alpha > 0.0 && alpha < 1.0 {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "--alpha {alpha}: a level between 0 and 1, such as 0.05"
        )))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A loaded probe of `protocol` at the point `site=…` with this PLT.
    pub(crate) fn probe(site: &str, protocol: &str, plt: f64) -> ProbeRecord {
        serde_json::from_value(serde_json::json!({
            "trial": "", "point": {"site": site}, "protocol": protocol, "rep": 0,
            "plt_ms": plt, "tow_ms": plt - 100.0, "connections": 1, "syns": 1,
            "bytes_down": 0, "bytes_up": 0, "packets_down": 0, "packets_up": 0,
            "drops_queue": 0, "drops_loss": 0, "resources": 1, "phases": {},
            "error": null, "started": 0.0
        }))
        .unwrap()
    }

    #[test]
    fn verdicts_by_shift_and_p() {
        let a: Vec<ProbeRecord> = [1000.0, 1010.0, 1020.0, 1030.0, 1040.0]
            .iter()
            .map(|&t| probe("youtube", "h2", t))
            .collect();
        let slower: Vec<ProbeRecord> = a
            .iter()
            .map(|p| probe("youtube", "h2", p.plt_ms + 200.0))
            .collect();
        let same: Vec<ProbeRecord> = [1005.0, 1015.0, 1025.0, 1035.0, 1045.0]
            .iter()
            .map(|&t| probe("youtube", "h2", t))
            .collect();
        let d = diff(&a, &slower, 0.05).unwrap();
        assert_eq!(d.len(), 2); // plt and tow
        assert_eq!(d[0].verdict, Verdict::Slower);
        assert_eq!(d[0].shift_ms, 200.0);
        assert_eq!(d[0].shift_ci95_ms, Some([170.0, 230.0]));
        assert!((d[0].p_value - 2.0 / 252.0).abs() < 1e-12);
        assert_eq!(diff(&slower, &a, 0.05).unwrap()[0].verdict, Verdict::Faster);
        assert_eq!(
            diff(&a, &same, 0.05).unwrap()[0].verdict,
            Verdict::NoDifference
        );
        // Nothing in common: an error, not an empty table.
        let other = vec![probe("twitter", "h2", 1.0)];
        assert!(diff(&a, &other, 0.05)
            .unwrap_err()
            .contains("share no point"));
    }
}
