//! Statistics, one definition each: mean, median, the 95 % confidence interval
//! of a mean (Student's t), and the gain of X over a baseline B,
//! (B − X) / B × 100 %, with a bootstrap CI (seeded with [`BOOTSTRAP_SEED`],
//! so reproducible); the model-against-Chromium figures: absolute percentage
//! error and its mean (MAPE), and Spearman's rank correlation with ties;
//! percentiles by linear interpolation; two-sample and paired rank tests
//! (Mann-Whitney U, Wilcoxon signed-rank) with their Hodges–Lehmann shifts.
//! Nothing is made up for an empty sample: its mean and median are NaN, and
//! there is no gain of it, nor over it.

use serde::Serialize;

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Summary {
    pub mean: f64,
    pub median: f64,
    pub ci95: [f64; 2],
}

/// The seed of every bootstrap interval a report or a comparison prints.
pub const BOOTSTRAP_SEED: u64 = 2014;

/// The 97.5 % quantile of the standard normal distribution.
const Z975: f64 = 1.959_963_985;

/// 97.5 % quantiles of Student's t for 1..=30 degrees of freedom (tables).
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (a 95 %
/// two-sided interval): the table up to 30, then the Cornish-Fisher expansion
/// around the normal quantile, exact to 1e-4 from 30 on (40 → 2.021,
/// 60 → 2.000, 120 → 1.980, ∞ → 1.960). NaN for 0 degrees of freedom.
pub fn t975(df: usize) -> f64 {
    if df == 0 {
        return f64::NAN;
    }
    if let Some(t) = T975.get(df - 1) {
        return *t;
    }
    let (z, v) = (Z975, df as f64);
    let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
    z + (z3 + z) / (4.0 * v)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v.powi(3))
        + (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z) / (92160.0 * v.powi(4))
}

/// The mean; NaN for no values (not 0, nor -0: an empty `f64` sum is -0.0).
pub fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The median; NaN for no values.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The `q`-quantile (0 ≤ q ≤ 1) of the values that are numbers, by linear
/// interpolation between the closest ranks (Hyndman & Fan's type 7, numpy's
/// and R's default): with the n values sorted x₀ ≤ … ≤ xₙ₋₁ and h = (n − 1)q,
/// x⌊h⌋ + (h − ⌊h⌋)(x⌊h⌋₊₁ − x⌊h⌋); so q = 0.5 is the median. NaN for no
/// value that is a number, or a `q` outside [0, 1].
pub fn percentile(xs: &[f64], q: f64) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() || !(0.0..=1.0).contains(&q) {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let h = (v.len() - 1) as f64 * q;
    let (lo, frac) = (h.floor() as usize, h - h.floor());
    match v.get(lo + 1) {
        Some(next) if frac > 0.0 => v[lo] + frac * (next - v[lo]),
        _ => v[lo],
    }
}

/// Mean, median and the 95 % CI of the mean: all NaN for no values, the CI
/// NaN for fewer than two.
pub fn summarize(xs: &[f64]) -> Summary {
    let m = mean(xs);
    let n = xs.len();
    let half = if n < 2 {
        f64::NAN
    } else {
        let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
        t975(n - 1) * (var / n as f64).sqrt()
    };
    Summary {
        mean: m,
        median: median(xs),
        ci95: [m - half, m + half],
    }
}

/// Gain of `x` over `baseline`, in %: positive when `x` is faster.
pub fn gain(baseline: f64, x: f64) -> f64 {
    (baseline - x) / baseline * 100.0
}

/// The gain of mean(x) over mean(baseline) with a 95 % bootstrap interval
/// (NaN when either side has fewer than two values). None when either side
/// has no value, or the gain is not a number (a baseline mean of 0): nothing
/// measured has no gain, and nothing is faster than nothing.
pub fn gain_with_ci(baseline: &[f64], x: &[f64], seed: u64) -> Option<(f64, [f64; 2])> {
    let g = gain(mean(baseline), mean(x));
    if !g.is_finite() {
        return None;
    }
    if baseline.len() < 2 || x.len() < 2 {
        return Some((g, [f64::NAN, f64::NAN]));
    }
    let mut rng = link::rng::Rng::new(seed);
    let mut pick = |v: &[f64]| -> f64 {
        (0..v.len())
            .map(|_| v[(rng.next_u64() % v.len() as u64) as usize])
            .sum::<f64>()
            / v.len() as f64
    };
    let mut gains: Vec<f64> = (0..2000).map(|_| gain(pick(baseline), pick(x))).collect();
    gains.sort_by(f64::total_cmp);
    Some((g, [gains[49], gains[1949]]))
}

/// Absolute percentage error of `model` against `reference`, in %:
/// |model − reference| / reference × 100; NaN when either is not a number
/// or the reference is not positive.
pub fn ape(model: f64, reference: f64) -> f64 {
    if model.is_finite() && reference.is_finite() && reference > 0.0 {
        (model - reference).abs() / reference * 100.0
    } else {
        f64::NAN
    }
}

/// Mean absolute percentage error over the pairs (model, reference) whose
/// error is a number (NaN when none is).
pub fn mape(pairs: &[(f64, f64)]) -> f64 {
    let apes: Vec<f64> = pairs
        .iter()
        .map(|&(m, r)| ape(m, r))
        .filter(|a| a.is_finite())
        .collect();
    if apes.is_empty() {
        f64::NAN
    } else {
        mean(&apes)
    }
}

/// Ranks 1..=n of `xs`, ties sharing the mean of the ranks they span
/// (`[10, 20, 20, 30]` → `[1, 2.5, 2.5, 4]`).
pub fn ranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let mut out = vec![0.0; xs.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && xs[order[j + 1]] == xs[order[i]] {
            j += 1;
        }
        // Positions i..=j (0-based) hold ranks i+1..=j+1: their mean.
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            out[k] = rank;
        }
        i = j + 1;
    }
    out
}

/// Pearson's correlation coefficient; NaN with fewer than two pairs or when
/// either side does not vary.
pub fn pearson(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len().min(ys.len());
    if n < 2 {
        return f64::NAN;
    }
    let (mx, my) = (mean(&xs[..n]), mean(&ys[..n]));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs[..n].iter().zip(&ys[..n]) {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx).powi(2);
        syy += (y - my).powi(2);
    }
    if sxx == 0.0 || syy == 0.0 {
        f64::NAN
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

/// Spearman's rank correlation ρ of the pairs whose values are both numbers:
/// Pearson's coefficient of their ranks, ties given their mean rank (so exact
/// with ties, unlike 1 − 6Σd²/(n(n²−1))). NaN with fewer than two pairs or a
/// side that does not vary.
pub fn spearman(pairs: &[(f64, f64)]) -> f64 {
    let kept: Vec<(f64, f64)> = pairs
        .iter()
        .copied()
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .collect();
    let xs: Vec<f64> = kept.iter().map(|p| p.0).collect();
    let ys: Vec<f64> = kept.iter().map(|p| p.1).collect();
    pearson(&ranks(&xs), &ranks(&ys))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ape_and_mape_on_known_values() {
        assert!((ape(90.0, 100.0) - 10.0).abs() < 1e-12);
        assert!((ape(125.0, 100.0) - 25.0).abs() < 1e-12);
        assert!(ape(1.0, 0.0).is_nan());
        assert!(ape(f64::NAN, 1.0).is_nan());
        // (10 + 25 + 0) / 3; the pair without a reference is left out.
        let m = mape(&[(90.0, 100.0), (125.0, 100.0), (50.0, 50.0), (3.0, 0.0)]);
        assert!((m - 35.0 / 3.0).abs() < 1e-12, "{m}");
        assert!(mape(&[]).is_nan());
    }

    #[test]
    fn percentiles_interpolate_between_the_closest_ranks() {
        let xs = [15.0, 20.0, 35.0, 40.0, 50.0];
        // numpy.percentile(xs, [0, 40, 50, 90, 95, 100]).
        assert_eq!(percentile(&xs, 0.0), 15.0);
        assert!((percentile(&xs, 0.4) - 29.0).abs() < 1e-12);
        assert_eq!(percentile(&xs, 0.5), median(&xs));
        assert!((percentile(&xs, 0.9) - 46.0).abs() < 1e-12);
        assert!((percentile(&xs, 0.95) - 48.0).abs() < 1e-12);
        assert_eq!(percentile(&xs, 1.0), 50.0);
        // Order does not matter; NaNs are left out; one value is every quantile.
        assert_eq!(percentile(&[50.0, f64::NAN, 15.0], 0.5), 32.5);
        assert_eq!(percentile(&[7.0], 0.95), 7.0);
        assert!(percentile(&[], 0.5).is_nan());
        assert!(percentile(&[f64::NAN], 0.5).is_nan());
        assert!(percentile(&xs, 1.5).is_nan());
    }

    #[test]
    fn ranks_share_the_mean_rank_of_ties() {
        assert_eq!(ranks(&[10.0, 20.0, 20.0, 30.0]), [1.0, 2.5, 2.5, 4.0]);
        assert_eq!(ranks(&[3.0, 1.0, 2.0]), [3.0, 1.0, 2.0]);
        assert_eq!(ranks(&[5.0, 5.0, 5.0]), [2.0, 2.0, 2.0]);
        assert_eq!(ranks(&[2.0, 1.0, 2.0, 1.0, 3.0]), [3.5, 1.5, 3.5, 1.5, 5.0]);
    }

    #[test]
    fn spearman_on_known_values_with_and_without_ties() {
        let p = |xs: &[f64], ys: &[f64]| -> Vec<(f64, f64)> {
            xs.iter().copied().zip(ys.iter().copied()).collect()
        };
        // Any monotone relation: 1; reversed: -1.
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        assert!((spearman(&p(&x, &[1.0, 4.0, 9.0, 16.0, 25.0])) - 1.0).abs() < 1e-12);
        assert!((spearman(&p(&x, &[5.0, 4.0, 3.0, 2.0, 1.0])) + 1.0).abs() < 1e-12);
        // No ties: 1 - 6 Σd² / (n(n²-1)); ranks of y are 2,1,4,3,5: Σd² = 4, ρ = 0.8.
        let r = spearman(&p(&x, &[20.0, 10.0, 40.0, 30.0, 50.0]));
        assert!((r - 0.8).abs() < 1e-12, "{r}");
        // Ties: x ranks 1,2.5,2.5,4; y ranks 1,2,3,4. Pearson of the ranks:
        // mean 2.5 each; Σ(dx·dy) = 2.25+0+0+2.25 = 4.5; Σdx² = 4.5; Σdy² = 5;
        // ρ = 4.5 / sqrt(4.5·5) = 0.9486833 (the no-ties formula would say 0.95).
        let r = spearman(&p(&[1.0, 2.0, 2.0, 3.0], &[1.0, 2.0, 3.0, 4.0]));
        assert!((r - 4.5 / (22.5f64).sqrt()).abs() < 1e-12, "{r}");
        assert!((r - 0.948_683_3).abs() < 1e-6, "{r}");
        // Ties on both sides: ranks 1.5,1.5,3,4 and 1,2.5,2.5,4; Σ(dx·dy) = 3.75,
        // Σdx² = Σdy² = 4.5: ρ = 5/6 (as scipy.stats.spearmanr gives).
        let r = spearman(&p(&[1.0, 1.0, 2.0, 3.0], &[1.0, 2.0, 2.0, 3.0]));
        assert!((r - 5.0 / 6.0).abs() < 1e-12, "{r}");
        // Pairs with a NaN are left out; too few or constant: NaN.
        let r = spearman(&[(1.0, 1.0), (f64::NAN, 9.0), (2.0, 2.0), (3.0, 3.0)]);
        assert!((r - 1.0).abs() < 1e-12);
        assert!(spearman(&[(1.0, 2.0)]).is_nan());
        assert!(spearman(&p(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0])).is_nan());
    }

    #[test]
    fn summaries_and_gain() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.median, 2.5);
        assert!((s.ci95[1] - (2.5 + 3.182 * (1.6667f64 / 4.0).sqrt())).abs() < 1e-3);
        assert_eq!(gain(100.0, 80.0), 20.0);
        let (g, ci) = gain_with_ci(&[100.0, 110.0, 90.0], &[80.0, 85.0, 75.0], 1).unwrap();
        assert!((g - 20.0).abs() < 1e-9 && ci[0] < g && g < ci[1]);
    }

    #[test]
    fn an_empty_sample_has_no_mean_and_no_gain() {
        // Not -0.0 (an empty f64 sum), which printed as "-0" and made a +100 % gain.
        assert!(mean(&[]).is_nan());
        let s = summarize(&[]);
        assert!(s.mean.is_nan() && s.median.is_nan());
        assert!(s.ci95.iter().all(|v| v.is_nan()));
        assert_eq!(gain_with_ci(&[100.0, 110.0], &[], 1), None);
        assert_eq!(gain_with_ci(&[], &[80.0, 85.0], 1), None);
        assert_eq!(gain_with_ci(&[], &[], 1), None);
        // A baseline of 0 ms has no gain over it either.
        assert_eq!(gain_with_ci(&[0.0], &[5.0], 1), None);
        // One value each: a gain, no interval.
        let (g, ci) = gain_with_ci(&[100.0], &[80.0], 1).unwrap();
        assert_eq!(g, 20.0);
        assert!(ci.iter().all(|v| v.is_nan()));
    }

    #[test]
    fn student_t_is_right_past_30_degrees_of_freedom() {
        // Known values (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2), to 3 decimals.
        let known = [
            (1, 12.706),
            (2, 4.303),
            (10, 2.228),
            (30, 2.042),
            (31, 2.040),
            (40, 2.021),
            (50, 2.009),
            (60, 2.000),
            (80, 1.990),
            (100, 1.984),
            (120, 1.980),
            (1000, 1.962),
        ];
        for (df, t) in known {
            assert!(
                (t975(df) - t).abs() < 5e-4,
                "t(0.975, {df}) = {} should be {t}",
                t975(df)
            );
        }
        assert!((t975(usize::MAX) - 1.960).abs() < 5e-4);
        assert!(t975(0).is_nan());
        // Monotone: more data, a narrower interval.
        for df in 1..500 {
            assert!(t975(df + 1) < t975(df), "{df}");
        }
        // A sample of 41 uses 40 degrees of freedom.
        let xs: Vec<f64> = (0..41).map(f64::from).collect();
        let s = summarize(&xs);
        let sd = (xs.iter().map(|x| (x - 20.0).powi(2)).sum::<f64>() / 40.0).sqrt();
        assert!((s.ci95[1] - 20.0 - 2.021 * sd / 41f64.sqrt()).abs() < 1e-2);
    }
}

/// Samples up to this many splits (C(n₁ + n₂, n₁)) get the exact
/// permutation p-value; larger ones the normal approximation.
const EXACT_SPLITS: f64 = 250_000.0;

/// The two-sided p-value of the Mann-Whitney U test (Wilcoxon rank-sum) that
/// `a` and `b` come from the same distribution — the test sitespeed.io
/// compares a run with its baseline by. Ranks are averaged over ties. Small
/// samples (as a compare's 5 to 20 repetitions) get the exact p-value: the
/// share of all ways to split the pooled ranks into groups of |a| and |b|
/// whose U is at least as far from its mean as the observed one (ties
/// handled exactly); larger ones the normal approximation with the tie
/// correction and a continuity correction. None when either sample is empty
/// or holds a NaN.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 || a.iter().chain(b).any(|v| v.is_nan()) {
        return None;
    }
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let r = ranks(&pooled);
    let r1: f64 = r[..n1].iter().sum();
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let mean_u = n1f * n2f / 2.0;
    let u = r1 - n1f * (n1f + 1.0) / 2.0;
    let observed = (u - mean_u).abs();
    if splits(n1 + n2, n1) <= EXACT_SPLITS {
        // Every choice of n1 of the pooled ranks, counted by how far its U lies.
        let (mut extreme, mut total) = (0u64, 0u64);
        let mut walk = |sum: f64| {
            total += 1;
            let u = sum - n1f * (n1f + 1.0) / 2.0;
            if (u - mean_u).abs() >= observed - 1e-9 {
                extreme += 1;
            }
        };
        choose(&r, n1, 0, 0.0, &mut walk);
        return Some(extreme as f64 / total as f64);
    }
    // Normal approximation: variance with the tie correction.
    let n = n1f + n2f;
    let mut sorted = pooled.clone();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let j = sorted[i..].iter().take_while(|v| **v == sorted[i]).count();
        let t = j as f64;
        ties += t * t * t - t;
        i += j;
    }
    let var = n1f * n2f / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)));
    if var <= 0.0 {
        return Some(1.0);
    }
    let z = ((observed - 0.5).max(0.0)) / var.sqrt();
    Some((2.0 * (1.0 - normal_cdf(z))).min(1.0))
}

/// C(n, k) as a float (only compared against [`EXACT_SPLITS`]).
fn splits(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |c, i| c * (n - i) as f64 / (i + 1) as f64)
}

/// Calls `visit` with the rank sum of every choice of `k` of `ranks[from..]`
/// added to `sum`.
fn choose(ranks: &[f64], k: usize, from: usize, sum: f64, visit: &mut dyn FnMut(f64)) {
    if k == 0 {
        visit(sum);
        return;
    }
    for i in from..=ranks.len() - k {
        choose(ranks, k - 1, i + 1, sum + ranks[i], visit);
    }
}

/// The standard normal distribution function (Abramowitz & Stegun 7.1.26
/// for erf: absolute error below 1.5e-7).
fn normal_cdf(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[cfg(test)]
mod mann_whitney_tests {
    use super::*;

    /// Exact p-values from the U distribution's tables (two-sided).
    #[test]
    fn exact_p_values_match_the_tables() {
        // Complete separation of 5 and 5: 2 of C(10,5) = 252 splits are as extreme.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        let p = mann_whitney_p(&a, &b).unwrap();
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        assert_eq!(mann_whitney_p(&b, &a), Some(p));
        // 3 vs 3 fully apart: 2 of 20.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!((p - 0.1).abs() < 1e-12, "{p}");
        // Interleaved: no evidence.
        assert_eq!(
            mann_whitney_p(&[1.0, 3.0, 5.0], &[2.0, 4.0, 6.0]).map(|p| p > 0.5),
            Some(true)
        );
        // All equal (ties everywhere): p = 1.
        assert_eq!(mann_whitney_p(&[5.0; 4], &[5.0; 4]), Some(1.0));
        // Nothing to test.
        assert_eq!(mann_whitney_p(&[], &[1.0]), None);
        assert_eq!(mann_whitney_p(&[f64::NAN], &[1.0]), None);
        // One of each: the smallest p possible is 1.
        assert_eq!(mann_whitney_p(&[1.0], &[2.0]), Some(1.0));
    }

    /// Large samples: the normal approximation, close to the exact value
    /// where both apply, and tiny for well-separated samples.
    #[test]
    fn the_normal_approximation_takes_over_for_large_samples() {
        let a: Vec<f64> = (0..40).map(|i| i as f64).collect();
        let b: Vec<f64> = (0..40).map(|i| i as f64 + 0.5).collect();
        let p = mann_whitney_p(&a, &b).unwrap();
        assert!(p > 0.8, "{p}");
        let c: Vec<f64> = (0..40).map(|i| i as f64 + 100.0).collect();
        assert!(mann_whitney_p(&a, &c).unwrap() < 1e-10);
        assert!((normal_cdf(1.959_963_985) - 0.975).abs() < 1e-6);
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-9);
    }
}

/// The Hodges–Lehmann estimate of the shift from `a` to `b`: the median of
/// every pairwise difference b_j − a_i (robust: one slow outlier moves it
/// little), and its distribution-free 95 % interval, the c-th smallest and
/// c-th largest differences, c the largest count with P(U < c) ≤ 2.5 % under
/// the null distribution of the Mann-Whitney U (exact up to 50 a side, the
/// normal approximation beyond). The interval is None when the samples are
/// too small for any c (3 against 3 cannot reach 95 %); the estimate is None
/// when either is empty or holds a NaN.
pub fn hodges_lehmann(a: &[f64], b: &[f64]) -> Option<(f64, Option<[f64; 2]>)> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|v| v.is_nan()) {
        return None;
    }
    let mut d: Vec<f64> = b
        .iter()
        .flat_map(|y| a.iter().map(move |x| y - x))
        .collect();
    d.sort_by(f64::total_cmp);
    let nm = d.len();
    let shift = median(&d);
    let c = u_lower_critical(a.len(), b.len(), 0.025);
    let ci = (c >= 1 && c <= nm / 2).then(|| [d[c - 1], d[nm - c]]);
    Some((shift, ci))
}

/// The largest c with P(U < c) ≤ `tail` for the Mann-Whitney U of samples of
/// `n` and `m` (no ties) under the null hypothesis; 0 when even U = 0 is more
/// likely than `tail`.
fn u_lower_critical(n: usize, m: usize, tail: f64) -> usize {
    let nm = n * m;
    if n > 50 || m > 50 {
        let (nf, mf) = (n as f64, m as f64);
        let sd = (nf * mf * (nf + mf + 1.0) / 12.0).sqrt();
        return (nf * mf / 2.0 - 1.959964 * sd).floor().max(0.0) as usize;
    }
    // counts[j][u]: the ways for samples of i and j to give U = u, built up
    // over i by f(i, j, u) = f(i − 1, j, u − j) + f(i, j − 1, u).
    let mut prev: Vec<Vec<f64>> = (0..=m).map(|_| vec![1.0]).collect();
    for i in 1..=n {
        let mut cur: Vec<Vec<f64>> = vec![vec![1.0]];
        for j in 1..=m {
            let mut f = vec![0.0; i * j + 1];
            for (u, &w) in prev[j].iter().enumerate() {
                f[u + j] += w;
            }
            for (u, &w) in cur[j - 1].iter().enumerate() {
                f[u] += w;
            }
            cur.push(f);
        }
        prev = cur;
    }
    let f = &prev[m];
    let total: f64 = f.iter().sum();
    let mut below = 0.0;
    let mut c = 0;
    while c <= nm && below + f[c] <= tail * total {
        below += f[c];
        c += 1;
    }
    c
}

#[cfg(test)]
mod hodges_lehmann_tests {
    use super::*;

    #[test]
    fn the_shift_is_the_median_pairwise_difference() {
        let a = [10.0, 11.0, 12.0, 13.0, 14.0];
        let b = [20.0, 21.0, 22.0, 23.0, 24.0];
        let (shift, ci) = hodges_lehmann(&a, &b).unwrap();
        assert_eq!(shift, 10.0);
        // 5 against 5: P(U ≤ 2) = 4/252 ≤ 2.5 % < P(U ≤ 3) = 7/252, so c = 3:
        // the 3rd smallest and largest of the 25 differences (6..=14).
        assert_eq!(u_lower_critical(5, 5, 0.025), 3);
        assert_eq!(ci, Some([7.0, 13.0]));
        // An outlier moves it little.
        let b2 = [20.0, 21.0, 22.0, 23.0, 240.0];
        assert_eq!(hodges_lehmann(&a, &b2).unwrap().0, 10.0);
        // 3 against 3 cannot reach 95 %: P(U = 0) = 1/20.
        assert_eq!(hodges_lehmann(&a[..3], &b[..3]).unwrap().1, None);
        assert!(hodges_lehmann(&[], &b).is_none());
        assert!(hodges_lehmann(&a, &[f64::NAN]).is_none());
    }

    #[test]
    fn the_exact_critical_values_match_the_tables() {
        // Two-sided 5 % critical values of U (Mann & Whitney's tables): the
        // largest U still significant, so c = that + 1.
        for (n, m, u) in [
            (4, 4, 0),
            (6, 6, 5),
            (8, 8, 13),
            (10, 10, 23),
            (20, 20, 127),
        ] {
            assert_eq!(u_lower_critical(n, m, 0.025), u + 1, "{n} x {m}");
        }
        // The approximation beyond 50 a side is close to the exact values.
        let exact = u_lower_critical(50, 50, 0.025) as f64;
        let (nf, mf) = (50.0f64, 50.0f64);
        let approx = nf * mf / 2.0 - 1.959964 * (nf * mf * (nf + mf + 1.0) / 12.0).sqrt();
        assert!((exact - approx).abs() < 2.0, "{exact} vs {approx}");
    }
}

/// Paired samples up to this many nonzero differences, none tied in
/// magnitude, get the exact signed-rank p-value; others the normal
/// approximation.
const EXACT_SIGNED_RANK_P: usize = 25;

/// Paired samples up to this many differences get the Hodges–Lehmann
/// interval from the exact signed-rank distribution; larger ones from its
/// normal approximation.
const EXACT_SIGNED_RANK_CI: usize = 50;

/// The two-sided p-value of the Wilcoxon signed-rank test that the paired
/// differences `diffs` (B − A, one per pair) are symmetric about 0 — the
/// test of two runs paired by repetition. Zero differences are dropped
/// first (Wilcoxon's zero handling, R's `wilcox.test` and scipy's default:
/// a pair that measured the same has no direction, and the p-values are
/// those two common tools give); the magnitudes of the rest are ranked,
/// ties averaged, and W⁺ is the sum of the ranks of the positive ones. Up to
/// 25 nonzero differences, with no zeros and no tied magnitudes: the exact
/// p-value, 2·min(P(W⁺ ≤ w), P(W⁺ ≥ w)) (at most 1), from the null
/// distribution of W⁺ enumerated by dynamic programming over the ranks.
/// Otherwise the normal approximation: mean n(n+1)/4, variance
/// n(n+1)(2n+1)/24 − Σ(t³ − t)/48 over tied groups of t, and a continuity
/// correction of ½ (R's default; scipy's `correction=True`). None for no
/// differences, a NaN, or only zeros.
pub fn wilcoxon_signed_rank_p(diffs: &[f64]) -> Option<f64> {
    if diffs.iter().any(|d| d.is_nan()) {
        return None;
    }
    let nonzero: Vec<f64> = diffs.iter().copied().filter(|d| *d != 0.0).collect();
    if nonzero.is_empty() {
        return None;
    }
    let n = nonzero.len();
    let magnitudes: Vec<f64> = nonzero.iter().map(|d| d.abs()).collect();
    let r = ranks(&magnitudes);
    let w_plus: f64 = r
        .iter()
        .zip(&nonzero)
        .filter(|(_, d)| **d > 0.0)
        .map(|(r, _)| r)
        .sum();
    let ties = tie_term(&magnitudes);
    let had_zeros = n < diffs.len();
    if n <= EXACT_SIGNED_RANK_P && ties == 0.0 && !had_zeros {
        let f = signed_rank_distribution(n);
        // Without ties every rank is a whole number, and so is W⁺.
        let w = w_plus.round() as usize;
        let below: f64 = f[..=w].iter().sum();
        let above: f64 = f[w..].iter().sum();
        return Some((2.0 * below.min(above)).min(1.0));
    }
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - ties / 48.0;
    if var <= 0.0 {
        return Some(1.0);
    }
    let z = ((w_plus - mean).abs() - 0.5).max(0.0) / var.sqrt();
    Some((2.0 * (1.0 - normal_cdf(z))).min(1.0))
}

/// Σ(t³ − t) over the groups of t equal values of `xs`: 0 without ties.
fn tie_term(xs: &[f64]) -> f64 {
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let t = sorted[i..].iter().take_while(|v| **v == sorted[i]).count();
        let tf = t as f64;
        ties += tf * tf * tf - tf;
        i += t;
    }
    ties
}

/// P(W⁺ = s) for s = 0..=n(n+1)/2 under the null hypothesis (each of the
/// ranks 1..=n positive with probability ½, independently): rank k added
/// to half of the ways, f_k(s) = (f_{k−1}(s) + f_{k−1}(s − k)) / 2.
/// Probabilities rather than counts, so no n overflows.
fn signed_rank_distribution(n: usize) -> Vec<f64> {
    let mut f = vec![1.0];
    for k in 1..=n {
        let mut g = vec![0.0; f.len() + k];
        for (s, &p) in f.iter().enumerate() {
            g[s] += p / 2.0;
            g[s + k] += p / 2.0;
        }
        f = g;
    }
    f
}

/// The largest c with P(W⁺ < c) ≤ `tail` for `n` pairs under the null
/// hypothesis (no ties); 0 when even W⁺ = 0 is more likely than `tail`
/// (fewer than 6 pairs at 2.5 %). Exact up to [`EXACT_SIGNED_RANK_CI`]
/// pairs, beyond that the normal approximation with a continuity correction,
/// ⌊n(n+1)/4 − z·√(n(n+1)(2n+1)/24) + ½⌋.
fn signed_rank_lower_critical(n: usize, tail: f64) -> usize {
    if n > EXACT_SIGNED_RANK_CI {
        let nf = n as f64;
        let sd = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        return (nf * (nf + 1.0) / 4.0 - Z975 * sd + 0.5).floor().max(0.0) as usize;
    }
    let f = signed_rank_distribution(n);
    let mut below = 0.0;
    let mut c = 0;
    while c < f.len() && below + f[c] <= tail {
        below += f[c];
        c += 1;
    }
    c
}

/// The Hodges–Lehmann estimate of the shift of paired samples from their
/// differences `diffs` (B − A, one per pair): the median of the Walsh
/// averages (dᵢ + dⱼ)/2, i ≤ j (R's `wilcox.test(…, paired = TRUE,
/// conf.int = TRUE)` "(pseudo)median"), and its distribution-free 95 %
/// interval, the c-th smallest and c-th largest Walsh averages, c the
/// largest count with P(W⁺ < c) ≤ 2.5 % under the null distribution of the
/// signed-rank statistic (exact up to 50 pairs, as R's interval without
/// ties or zeros; the normal approximation beyond). Every difference counts
/// here, zeros too: they are measurements of no shift. The interval is None
/// below 6 pairs (5 cannot reach 95 %: P(W⁺ = 0) = 1/32); the estimate None
/// for no differences or a NaN.
pub fn hodges_lehmann_paired(diffs: &[f64]) -> Option<(f64, Option<[f64; 2]>)> {
    if diffs.is_empty() || diffs.iter().any(|d| d.is_nan()) {
        return None;
    }
    let n = diffs.len();
    let mut walsh: Vec<f64> = (0..n)
        .flat_map(|i| (i..n).map(move |j| (i, j)))
        .map(|(i, j)| (diffs[i] + diffs[j]) / 2.0)
        .collect();
    walsh.sort_by(f64::total_cmp);
    let total = walsh.len();
    let estimate = median(&walsh);
    let c = signed_rank_lower_critical(n, 0.025);
    let ci = (c >= 1 && c <= total / 2).then(|| [walsh[c - 1], walsh[total - c]]);
    Some((estimate, ci))
}

#[cfg(test)]
mod wilcoxon_tests {
    use super::*;

    fn close(got: f64, want: f64, tol: f64) {
        assert!((got - want).abs() < tol, "{got} should be {want}");
    }

    /// R's `?wilcox.test` example (Hollander & Wolfe, depression scale
    /// before and after): x − y.
    #[allow(clippy::approx_constant)] // 3.14 is a measurement, not π
    fn depression() -> Vec<f64> {
        let x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];
        let y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];
        x.iter().zip(&y).map(|(a, b)| a - b).collect()
    }

    /// Two-sided p-values from scipy 1.17.1,
    /// `scipy.stats.wilcoxon(d, zero_method='wilcox', correction=True,
    /// method=…)`.
    #[test]
    fn p_values_match_scipy() {
        // Exact, n = 9 (R prints 0.01953 one-sided, "greater").
        close(
            wilcoxon_signed_rank_p(&depression()).unwrap(),
            0.0390625,
            1e-12,
        );
        // Exact, n = 25, mixed signs, no ties.
        let d25 = [
            3.0, -1.0, 4.0, 1.5, -5.0, 9.0, 2.5, -6.0, 5.5, 3.5, 8.0, -9.5, 7.0, 10.5, 11.0, -12.0,
            13.0, 14.5, 15.0, 16.0, -17.5, 18.0, 19.0, 20.5, 21.5,
        ];
        close(
            wilcoxon_signed_rank_p(&d25).unwrap(),
            0.008822321891784668,
            1e-12,
        );
        // n = 30: the normal approximation (scipy 'approx'; exact 0.1706).
        let d30: Vec<f64> = (1..=30)
            .map(|i| {
                let f = i as f64;
                if i % 3 != 0 {
                    f + 0.5
                } else {
                    -f - 0.25
                }
            })
            .collect();
        close(
            wilcoxon_signed_rank_p(&d30).unwrap(),
            0.1681789797233525,
            1e-6,
        );
        // Ties and zeros, n = 11 (9 nonzero): the approximation with the
        // tie correction, zeros dropped.
        let d = [2.0, -1.0, 2.0, 0.0, 3.0, 3.0, -2.0, 4.0, 0.0, 5.0, 1.0];
        close(
            wilcoxon_signed_rank_p(&d).unwrap(),
            0.04940018799120368,
            1e-6,
        );
        // All of one sign: 2/2ⁿ, so 6 pairs reach 0.05 and 5 cannot.
        close(
            wilcoxon_signed_rank_p(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap(),
            0.03125,
            1e-12,
        );
        close(
            wilcoxon_signed_rank_p(&[-1.0, -2.0, -3.0, -4.0, -5.0]).unwrap(),
            0.0625,
            1e-12,
        );
    }

    #[test]
    fn degenerate_samples() {
        assert_eq!(wilcoxon_signed_rank_p(&[]), None);
        assert_eq!(wilcoxon_signed_rank_p(&[0.0, 0.0, 0.0]), None);
        assert_eq!(wilcoxon_signed_rank_p(&[1.0, f64::NAN]), None);
        // One pair: W⁺ is 0 or 1 with ½ each: p = 1.
        assert_eq!(wilcoxon_signed_rank_p(&[3.0]), Some(1.0));
        // W⁺ at its mean: p = 1, exactly; with ties, by the approximation.
        assert_eq!(wilcoxon_signed_rank_p(&[1.0, -2.0, -3.0, 4.0]), Some(1.0));
        close(
            wilcoxon_signed_rank_p(&[-2.0, -1.0, 1.0, 2.0, 3.0, -3.0]).unwrap(),
            1.0,
            1e-6,
        );
        assert!(hodges_lehmann_paired(&[]).is_none());
        assert!(hodges_lehmann_paired(&[1.0, f64::NAN]).is_none());
        assert_eq!(
            hodges_lehmann_paired(&[0.0; 8]),
            Some((0.0, Some([0.0; 2])))
        );
    }

    #[test]
    fn the_null_distribution_and_its_critical_values() {
        // n = 3: W⁺ ∈ 0..=6 with counts 1 1 1 2 1 1 1.
        let f = signed_rank_distribution(3);
        let counts: Vec<f64> = f.iter().map(|p| p * 8.0).collect();
        assert_eq!(counts, [1.0, 1.0, 1.0, 2.0, 1.0, 1.0, 1.0]);
        // Two-sided 5 % critical values of the signed-rank statistic (the
        // largest still significant; tables, e.g. Hollander & Wolfe A.4):
        // c is that + 1.
        for (n, t) in [(6, 0), (7, 2), (8, 3), (9, 5), (10, 8), (15, 25), (20, 52)] {
            assert_eq!(signed_rank_lower_critical(n, 0.025), t + 1, "n = {n}");
        }
        assert_eq!(signed_rank_lower_critical(5, 0.025), 0);
        // The approximation beyond 50 is within one of the exact value.
        let nf = 50.0f64;
        let approx =
            nf * (nf + 1.0) / 4.0 - Z975 * (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt() + 0.5;
        let exact = signed_rank_lower_critical(50, 0.025) as f64;
        assert!((exact - approx.floor()).abs() <= 1.0, "{exact} vs {approx}");
    }

    /// The estimate and interval R's `wilcox.test(x, y, paired = TRUE,
    /// conf.int = TRUE)` prints for its example: (pseudo)median 0.46, 95 %
    /// interval 0.010 to 0.786 (checked by enumerating the 2⁹ sign vectors
    /// in Python).
    #[test]
    fn hodges_lehmann_paired_matches_r() {
        let (est, ci) = hodges_lehmann_paired(&depression()).unwrap();
        close(est, 0.46, 1e-12);
        let [lo, hi] = ci.unwrap();
        close(lo, 0.01, 1e-12);
        close(hi, 0.786, 1e-12);
        // Fewer than 6 pairs: no 95 % interval.
        assert_eq!(
            hodges_lehmann_paired(&[1.0, 2.0, 3.0, 4.0, 5.0]),
            Some((3.0, None))
        );
        // 6 pairs: the extremes (P(W⁺ = 0) = 1/64 ≤ 2.5 % < 2/64).
        let (est, ci) = hodges_lehmann_paired(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        assert_eq!(est, 3.5);
        assert_eq!(ci, Some([1.0, 6.0]));
        // An outlier moves it little; zeros count as no shift.
        let (est, _) = hodges_lehmann_paired(&[10.0, 11.0, 12.0, 13.0, 400.0]).unwrap();
        assert!(est <= 13.0, "{est}");
        let (est, _) = hodges_lehmann_paired(&[0.0, 0.0, 0.0, 0.0, 10.0]).unwrap();
        assert_eq!(est, 0.0);
    }
}
