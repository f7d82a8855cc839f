//! `spdylab diff A B` (issue 38): did B move against A? Per point, protocol
//! and metric, the shift of B from A (Hodges–Lehmann, with its
//! distribution-free 95 % interval), a two-sided p-value, and a verdict at
//! α: faster, slower, or no difference. By default (independent samples,
//! [`Pairing::Unpaired`]) the test is Mann-Whitney U and the shift the
//! median pairwise difference; with [`Pairing::ByRepetition`] (`--paired`),
//! where A and B pair by repetition (the same repetition numbers, one loaded
//! probe each), Wilcoxon's signed-rank on the per-repetition differences
//! B − A and the median of their Walsh averages. A and B are what `compare --out FILE` wrote or campaign
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
    /// B − A, ms: the Hodges–Lehmann estimate (paired: the median of the
    /// Walsh averages of the per-repetition differences; unpaired: the
    /// median pairwise difference).
    pub shift_ms: f64,
    /// Its 95 % interval; None when the samples are too small to reach 95 %
    /// (fewer than 4 a side, or 6 pairs).
    pub shift_ci95_ms: Option<[f64; 2]>,
    /// shift / A's median × 100.
    pub shift_pct: f64,
    /// Two-sided, of `test`; 1 when every pair measured the same.
    pub p_value: f64,
    /// The test of `p_value` and the estimator of `shift_ms`.
    pub test: Test,
    pub verdict: Verdict,
}

/// How B was tested against A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Test {
    /// Paired by repetition: the Wilcoxon signed-rank test.
    Wilcoxon,
    /// Two independent samples: the Mann-Whitney U test.
    MannWhitney,
}

impl Test {
    pub fn name(self) -> &'static str {
        match self {
            Test::Wilcoxon => "wilcoxon",
            Test::MannWhitney => "mann-whitney",
        }
    }
}

/// Whether A and B may be paired by repetition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pairing {
    /// Paired where both sides have the same repetition numbers, one value
    /// each (per point, protocol and metric); unpaired elsewhere (`--paired`).
    ByRepetition,
    /// Never paired (the default): always Mann-Whitney.
    #[default]
    Unpaired,
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

/// B against A for every point and protocol both have, per metric, as
/// independent samples. An error when they share none (different
/// experiments, or sites).
pub fn diff(a: &[ProbeRecord], b: &[ProbeRecord], alpha: f64) -> Result<Vec<Shift>, String> {
    diff_with(a, b, alpha, Pairing::Unpaired)
}

/// The values of `metric` of `probes`, each with its repetition number.
fn values(probes: &[&ProbeRecord], metric: Metric) -> Vec<(usize, f64)> {
    probes
        .iter()
        .filter_map(|p| metric.of(p).map(|v| (p.rep, v)))
        .collect()
}

/// B − A per repetition when `xs` and `ys` pair by repetition: the same
/// non-empty set of repetition numbers, each once a side; in repetition
/// order.
fn paired_differences(xs: &[(usize, f64)], ys: &[(usize, f64)]) -> Option<Vec<f64>> {
    let sorted = |v: &[(usize, f64)]| {
        let mut v = v.to_vec();
        v.sort_by_key(|(rep, _)| *rep);
        v
    };
    let (xs, ys) = (sorted(xs), sorted(ys));
    let once = |v: &[(usize, f64)]| v.windows(2).all(|w| w[0].0 != w[1].0);
    let same_reps = xs.len() == ys.len() && xs.iter().zip(&ys).all(|(x, y)| x.0 == y.0);
    (!xs.is_empty() && same_reps && once(&xs) && once(&ys))
        .then(|| xs.iter().zip(&ys).map(|(x, y)| y.1 - x.1).collect())
}

/// [`diff`], pairing as `pairing` says.
pub fn diff_with(
    a: &[ProbeRecord],
    b: &[ProbeRecord],
    alpha: f64,
    pairing: Pairing,
) -> Result<Vec<Shift>, String> {
    let (ga, gb) = (grouped(a), grouped(b));
    let mut out = Vec::new();
    for ((point, protocol), bs) in &gb {
        let Some((_, as_)) = ga.iter().find(|(k, _)| k.0 == *point && k.1 == *protocol) else {
            continue;
        };
        for metric in Metric::ALL {
            let (xr, yr) = (values(as_, metric), values(bs, metric));
            let xs: Vec<f64> = xr.iter().map(|(_, v)| *v).collect();
            let ys: Vec<f64> = yr.iter().map(|(_, v)| *v).collect();
            let paired = match pairing {
                Pairing::ByRepetition => paired_differences(&xr, &yr),
                Pairing::Unpaired => None,
            };
            let (test, estimate, p) = match &paired {
                Some(d) => (
                    Test::Wilcoxon,
                    stats::hodges_lehmann_paired(d),
                    // Every pair the same: no evidence of any shift.
                    stats::wilcoxon_signed_rank_p(d)
                        .or_else(|| d.iter().all(|v| *v == 0.0).then_some(1.0)),
                ),
                None => (
                    Test::MannWhitney,
                    stats::hodges_lehmann(&xs, &ys),
                    stats::mann_whitney_p(&xs, &ys),
                ),
            };
            let (Some((shift, ci)), Some(p)) = (estimate, p) else {
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
                test,
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
        Err(Error(format!(
            "--alpha {alpha}: a level between 0 and 1, such as 0.05"
        )))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A loaded probe of `protocol` at the point `site=…` with this PLT.
    pub(crate) fn probe(site: &str, protocol: &str, plt: f64) -> ProbeRecord {
        probe_rep(site, protocol, 0, plt)
    }

    /// [`probe`], repetition `rep`.
    fn probe_rep(site: &str, protocol: &str, rep: usize, plt: f64) -> ProbeRecord {
        serde_json::from_value(serde_json::json!({
            "trial": "", "point": {"site": site}, "protocol": protocol, "rep": rep,
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

    /// Repetitions 0.. of h2 at `youtube` with these PLTs.
    fn run(plts: &[f64]) -> Vec<ProbeRecord> {
        plts.iter()
            .enumerate()
            .map(|(rep, &t)| probe_rep("youtube", "h2", rep, t))
            .collect()
    }

    /// A's repetitions vary by hundreds of ms (each its own network draw);
    /// B is every one of them 3 to 7 ms slower.
    const A: [f64; 8] = [1000.0, 1300.0, 900.0, 1600.0, 1100.0, 1450.0, 1200.0, 950.0];
    const B_MINUS_A: [f64; 8] = [5.0, 3.0, 6.0, 4.0, 7.0, 5.5, 4.5, 6.5];

    /// `diff --paired`.
    fn paired(a: &[ProbeRecord], b: &[ProbeRecord], alpha: f64) -> Result<Vec<Shift>, String> {
        diff_with(a, b, alpha, Pairing::ByRepetition)
    }

    #[test]
    fn paired_by_repetition_a_small_consistent_shift_is_seen() {
        let a = run(&A);
        let b = run(&std::array::from_fn::<f64, 8, _>(|i| A[i] + B_MINUS_A[i]));
        let d = paired(&a, &b, 0.05).unwrap();
        assert_eq!(d.len(), 2); // plt and tow
        let s = &d[0];
        assert_eq!((s.metric, s.test), (Metric::Plt, Test::Wilcoxon));
        // All 8 differences positive: p = 2/2⁸.
        assert!((s.p_value - 2.0 / 256.0).abs() < 1e-12, "{}", s.p_value);
        assert_eq!(s.verdict, Verdict::Slower);
        // The median of the Walsh averages of the differences, and its
        // interval (8 pairs: c = 4, the 4th smallest and largest of 36).
        assert_eq!(s.shift_ms, 5.25);
        assert_eq!(s.shift_ci95_ms, Some([4.0, 6.5]));
        assert_eq!(serde_json::to_value(s).unwrap()["test"], "wilcoxon");
        // As independent samples (the default) the shift drowns in the spread.
        let u = diff(&a, &b, 0.05).unwrap();
        assert_eq!(u[0].test, Test::MannWhitney);
        assert!(u[0].p_value > 0.5, "{}", u[0].p_value);
        assert_eq!(u[0].verdict, Verdict::NoDifference);
        assert_eq!(serde_json::to_value(&u[0]).unwrap()["test"], "mann-whitney");
        // The text says which test, and why an interval is missing.
        let text = crate::text::diff::lines(0.05, &d, None, true).join("\n");
        assert!(text.contains("wilcoxon      slower"), "{text}");
        assert!(text.contains("signed-rank test"), "{text}");
        let few = paired(&run(&A[..4]), &run(&[1.0, 2.0, 3.0, 4.0]), 0.05).unwrap();
        let text = crate::text::diff::lines(0.05, &few, None, true).join("\n");
        assert!(text.contains("n/a (< 6 pairs)"), "{text}");
        let text = crate::text::diff::lines(0.05, &u, None, true).join("\n");
        assert!(text.contains("mann-whitney  no difference"), "{text}");
        assert!(!text.contains("signed-rank"), "{text}");
        // Against itself: every pair the same, p = 1.
        let same = paired(&a, &a, 0.05).unwrap();
        assert_eq!(same[0].test, Test::Wilcoxon);
        assert_eq!(
            (same[0].shift_ms, same[0].p_value, same[0].verdict),
            (0.0, 1.0, Verdict::NoDifference)
        );
    }

    #[test]
    fn different_repetitions_fall_back_to_mann_whitney() {
        let a = run(&A);
        let b: Vec<ProbeRecord> = A
            .iter()
            .enumerate()
            .map(|(rep, &t)| probe_rep("youtube", "h2", rep + 1, t + 5.0))
            .collect();
        assert!(paired(&a, &b, 0.05)
            .unwrap()
            .iter()
            .all(|s| s.test == Test::MannWhitney));
        // One repetition failed on B (left out as not loaded): the sets differ.
        let mut b = run(&A.map(|t| t + 5.0));
        b[3].error = Some("timeout".into());
        let d = paired(&a, &b, 0.05).unwrap();
        assert_eq!((d[0].test, d[0].a_n, d[0].b_n), (Test::MannWhitney, 8, 7));
        // A repetition twice on one side: not one pair per repetition.
        let mut a2 = run(&A);
        a2.push(probe_rep("youtube", "h2", 0, 990.0));
        let b = run(&A.map(|t| t + 5.0));
        assert_eq!(paired(&a2, &b, 0.05).unwrap()[0].test, Test::MannWhitney);
        // Pairing is per metric: the same probes pair for PLT and ToW alike.
        let d = paired(&a, &b, 0.05).unwrap();
        assert!(d.iter().all(|s| s.test == Test::Wilcoxon));
    }
}
