//! The crosscheck per metric (issue 35): PLT and what the user saw — TTFB,
//! FCP, LCP, Speed Index — each compared over the Trials where both clients
//! have the figure: MAPE, the 50th/90th/95th percentiles of the absolute
//! percentage error (APE), Spearman's ρ and Lantern's buckets (good < 20 %,
//! OK < 50 %, bad ≥ 50 %), beside Chromium's own run-to-run spread (the
//! relative median absolute deviation of its repetitions), so that the
//! model's error is read against the reference's noise. A client without a
//! figure (the model's paint is None until it estimates them) leaves the
//! metric with n = 0 and every figure NaN (null in JSON, n/a in text).

use results::stats::{ape, mean, median, percentile, spearman};
use results::ProbeRecord;
use serde::Serialize;

/// A figure of a page load both clients may report, each in ms from
/// navigation start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Figure {
    /// Page load time (onload).
    Plt,
    /// The document's first response byte (`Paint::ttfb_ms`).
    Ttfb,
    /// First contentful paint (`Paint::fcp_ms`).
    Fcp,
    /// Largest contentful paint (`Paint::lcp_ms`).
    Lcp,
    /// Speed Index (`Paint::speed_index_ms`).
    Si,
}

impl Figure {
    /// Every figure, in the order of the tables: PLT first, then in the
    /// order a load reaches them.
    pub const ALL: [Figure; 5] = [
        Figure::Plt,
        Figure::Ttfb,
        Figure::Fcp,
        Figure::Lcp,
        Figure::Si,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Figure::Plt => "plt",
            Figure::Ttfb => "ttfb",
            Figure::Fcp => "fcp",
            Figure::Lcp => "lcp",
            Figure::Si => "si",
        }
    }

    /// The figure of a probe that loaded its page; None when its client did
    /// not report it (or reported what is not a number).
    pub fn of(self, p: &ProbeRecord) -> Option<f64> {
        let v = match self {
            Figure::Plt => Some(p.plt_ms),
            Figure::Ttfb => p.paint.as_ref()?.ttfb_ms,
            Figure::Fcp => p.paint.as_ref()?.fcp_ms,
            Figure::Lcp => p.paint.as_ref()?.lcp_ms,
            Figure::Si => p.paint.as_ref()?.speed_index_ms,
        };
        v.filter(|v| v.is_finite())
    }
}

/// Lantern's buckets of the APE: good below 20 %, OK from 20 % to below
/// 50 %, bad from 50 %.
pub const GOOD_BELOW_PCT: f64 = 20.0;
pub const OK_BELOW_PCT: f64 = 50.0;

/// One metric of one Trial: each client's values over its counted probes
/// that loaded the page and reported the figure, their medians, the APE of
/// the model's median against Chromium's, and Chromium's spread.
#[derive(Debug, Clone, Serialize)]
pub struct Cell {
    pub metric: Figure,
    pub model: Vec<f64>,
    pub chromium: Vec<f64>,
    pub model_median: f64,
    pub chromium_median: f64,
    /// |model − Chromium| / Chromium of the medians, in %; NaN unless both
    /// clients have the figure.
    pub ape_pct: f64,
    /// Chromium's run-to-run spread: [`relative_mad_pct`] of its values.
    pub chromium_mad_pct: f64,
}

impl Cell {
    pub fn new(metric: Figure, model: Vec<f64>, chromium: Vec<f64>) -> Cell {
        let (m, c) = (median(&model), median(&chromium));
        Cell {
            metric,
            model_median: m,
            chromium_median: c,
            ape_pct: ape(m, c),
            chromium_mad_pct: relative_mad_pct(&chromium),
            model,
            chromium,
        }
    }
}

/// The relative median absolute deviation of repetitions, in %:
/// median over i of |xᵢ − m| / m × 100, m their median — how far a single
/// load typically lies from the Trial's median, the same measure as the APE
/// of the model's median. NaN for fewer than two values or a median that is
/// not positive.
pub fn relative_mad_pct(xs: &[f64]) -> f64 {
    let m = median(xs);
    if xs.len() < 2 || m.is_nan() || m <= 0.0 {
        return f64::NAN;
    }
    let dev: Vec<f64> = xs.iter().map(|x| (x - m).abs()).collect();
    median(&dev) / m * 100.0
}

/// Counts and shares (% of the compared Trials) of the APE's buckets.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Buckets {
    pub good: usize,
    pub ok: usize,
    pub bad: usize,
    pub good_pct: f64,
    pub ok_pct: f64,
    pub bad_pct: f64,
}

impl Buckets {
    /// The buckets of `apes` (all numbers); shares NaN for none.
    pub fn of(apes: &[f64]) -> Buckets {
        let good = apes.iter().filter(|a| **a < GOOD_BELOW_PCT).count();
        let ok = apes
            .iter()
            .filter(|a| (GOOD_BELOW_PCT..OK_BELOW_PCT).contains(*a))
            .count();
        let bad = apes.iter().filter(|a| **a >= OK_BELOW_PCT).count();
        let share = |k: usize| match apes.len() {
            0 => f64::NAN,
            n => k as f64 / n as f64 * 100.0,
        };
        Buckets {
            good,
            ok,
            bad,
            good_pct: share(good),
            ok_pct: share(ok),
            bad_pct: share(bad),
        }
    }
}

/// Chromium's run-to-run spread over the compared Trials that have it (two
/// repetitions or more), and how many of them the model is within.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Noise {
    /// Compared Trials with Chromium's spread.
    pub trials: usize,
    /// Mean, median and 90th percentile of the per-Trial relative MAD, %.
    pub mad_mean_pct: f64,
    pub mad_p50_pct: f64,
    pub mad_p90_pct: f64,
    /// Of those Trials, the ones whose APE is at most Chromium's own relative
    /// MAD: the model is as close to Chromium's median as a typical Chromium
    /// load is.
    pub within_noise: usize,
    pub within_noise_pct: f64,
}

/// The figures of one metric over a set of Trials.
#[derive(Debug, Clone, Serialize)]
pub struct MetricAgreement {
    /// What the set is, as `Agreement::group`.
    pub group: String,
    pub metric: Figure,
    pub trials: usize,
    /// Trials where both clients have the figure.
    pub compared: usize,
    pub mape_pct: f64,
    pub ape_p50_pct: f64,
    pub ape_p90_pct: f64,
    pub ape_p95_pct: f64,
    /// Spearman's ρ of the two clients' medians over the compared Trials.
    pub spearman: f64,
    pub buckets: Buckets,
    pub chromium_noise: Noise,
}

/// The figures of `metric` over `cells` (one per Trial), named `group`.
pub fn metric_agreement(group: &str, metric: Figure, cells: &[&Cell]) -> MetricAgreement {
    let ok: Vec<&&Cell> = cells.iter().filter(|c| c.ape_pct.is_finite()).collect();
    let apes: Vec<f64> = ok.iter().map(|c| c.ape_pct).collect();
    let noisy: Vec<&&&Cell> = ok
        .iter()
        .filter(|c| c.chromium_mad_pct.is_finite())
        .collect();
    let mads: Vec<f64> = noisy.iter().map(|c| c.chromium_mad_pct).collect();
    let within = noisy
        .iter()
        .filter(|c| c.ape_pct <= c.chromium_mad_pct)
        .count();
    MetricAgreement {
        group: group.to_string(),
        metric,
        trials: cells.len(),
        compared: ok.len(),
        mape_pct: mean(&apes),
        ape_p50_pct: percentile(&apes, 0.50),
        ape_p90_pct: percentile(&apes, 0.90),
        ape_p95_pct: percentile(&apes, 0.95),
        spearman: spearman(
            &ok.iter()
                .map(|c| (c.model_median, c.chromium_median))
                .collect::<Vec<_>>(),
        ),
        buckets: Buckets::of(&apes),
        chromium_noise: Noise {
            trials: noisy.len(),
            mad_mean_pct: mean(&mads),
            mad_p50_pct: percentile(&mads, 0.50),
            mad_p90_pct: percentile(&mads, 0.90),
            within_noise: within,
            within_noise_pct: match noisy.len() {
                0 => f64::NAN,
                n => within as f64 / n as f64 * 100.0,
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::Protocol;
    use results::Paint;

    fn cell(model: &[f64], chromium: &[f64]) -> Cell {
        Cell::new(Figure::Fcp, model.to_vec(), chromium.to_vec())
    }

    #[test]
    fn figures_come_from_plt_and_paint_and_are_absent_without_them() {
        let mut p = ProbeRecord::failed(Protocol::H2, 0, String::new());
        p.plt_ms = 900.0;
        assert_eq!(Figure::Plt.of(&p), Some(900.0));
        assert_eq!(Figure::Fcp.of(&p), None, "no paint: no FCP");
        p.paint = Some(Paint {
            ttfb_ms: Some(100.0),
            fcp_ms: Some(300.0),
            lcp_ms: Some(f64::NAN),
            speed_index_ms: Some(400.0),
            ..Paint::default()
        });
        let got: Vec<_> = Figure::ALL.iter().map(|f| f.of(&p)).collect();
        assert_eq!(
            got,
            [Some(900.0), Some(100.0), Some(300.0), None, Some(400.0)]
        );
    }

    #[test]
    fn relative_mad_of_repetitions() {
        // Median 100; deviations 10, 0, 30: their median 10 → 10 %.
        assert!((relative_mad_pct(&[90.0, 100.0, 130.0]) - 10.0).abs() < 1e-12);
        // Two values: half their difference over their mean.
        assert!((relative_mad_pct(&[90.0, 110.0]) - 10.0).abs() < 1e-12);
        assert!(relative_mad_pct(&[100.0]).is_nan(), "one load: no spread");
        assert!(relative_mad_pct(&[]).is_nan());
        assert!(relative_mad_pct(&[0.0, 0.0]).is_nan());
    }

    #[test]
    fn buckets_split_at_20_and_50_percent() {
        let b = Buckets::of(&[0.0, 19.99, 20.0, 49.9, 50.0, 120.0, 5.0, 10.0]);
        assert_eq!((b.good, b.ok, b.bad), (4, 2, 2));
        assert_eq!((b.good_pct, b.ok_pct, b.bad_pct), (50.0, 25.0, 25.0));
        let none = Buckets::of(&[]);
        assert_eq!((none.good, none.ok, none.bad), (0, 0, 0));
        assert!(none.good_pct.is_nan());
    }

    /// Five Trials: APEs 10, 30, 60, 5, 0 % (medians), one without the
    /// model's figure, Chromium's spreads 20, 10, 10, —, 0 %.
    #[test]
    fn a_metric_over_trials_percentiles_buckets_rho_and_noise() {
        let cells = [
            cell(&[110.0], &[80.0, 100.0, 120.0]),  // APE 10, MAD 20
            cell(&[130.0], &[90.0, 100.0, 110.0]),  // APE 30, MAD 10
            cell(&[480.0], &[270.0, 300.0, 330.0]), // APE 60, MAD 10
            cell(&[420.0], &[400.0]),               // APE 5, one load: no MAD
            cell(&[500.0], &[500.0, 500.0]),        // APE 0, MAD 0
            cell(&[], &[700.0, 700.0]),             // the model has none
        ];
        let refs: Vec<&Cell> = cells.iter().collect();
        let a = metric_agreement("all", Figure::Fcp, &refs);
        assert_eq!((a.trials, a.compared), (6, 5));
        assert!((a.mape_pct - 21.0).abs() < 1e-9, "{a:?}");
        // Sorted APEs 0, 5, 10, 30, 60: p50 10; p90 at h = 3.6: 30 + 0.6·30;
        // p95 at h = 3.8: 30 + 0.8·30.
        assert!((a.ape_p50_pct - 10.0).abs() < 1e-9);
        assert!((a.ape_p90_pct - 48.0).abs() < 1e-9);
        assert!((a.ape_p95_pct - 54.0).abs() < 1e-9);
        assert_eq!((a.buckets.good, a.buckets.ok, a.buckets.bad), (3, 1, 1));
        assert!((a.buckets.good_pct - 60.0).abs() < 1e-9);
        // Medians 110 130 480 420 500 against 100 100 300 400 500: ranks
        // 1 2 4 3 5 and 1.5 1.5 3 4 5.
        let expected =
            results::stats::pearson(&[1.0, 2.0, 4.0, 3.0, 5.0], &[1.5, 1.5, 3.0, 4.0, 5.0]);
        assert!((a.spearman - expected).abs() < 1e-12, "{a:?}");
        let n = a.chromium_noise;
        assert_eq!(n.trials, 4, "the Trial of one Chromium load has no spread");
        assert!((n.mad_mean_pct - 10.0).abs() < 1e-9, "{n:?}");
        assert!((n.mad_p50_pct - 10.0).abs() < 1e-9, "{n:?}");
        // APE ≤ MAD: 10 ≤ 20 and 0 ≤ 0, not 30 > 10 nor 60 > 10.
        assert_eq!(n.within_noise, 2);
        assert!((n.within_noise_pct - 50.0).abs() < 1e-9);
    }

    #[test]
    fn a_metric_no_trial_has_is_n_0_and_null_not_nan() {
        let cells = [cell(&[], &[300.0, 310.0]), cell(&[], &[])];
        let refs: Vec<&Cell> = cells.iter().collect();
        let a = metric_agreement("all", Figure::Lcp, &refs);
        assert_eq!((a.trials, a.compared, a.chromium_noise.trials), (2, 0, 0));
        let json = serde_json::to_string(&a).unwrap();
        assert!(!json.contains("NaN"), "{json}");
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(v["mape_pct"].is_null() && v["ape_p95_pct"].is_null(), "{v}");
        assert!(v["buckets"]["good_pct"].is_null(), "{v}");
        assert_eq!(v["metric"], "lcp");
        assert_eq!(v["buckets"]["bad"], 0);
    }
}
