//! Statistics, one definition each: mean, median, the 95 % confidence interval
//! of a mean (Student's t), and the gain of X over a baseline B,
//! (B − X) / B × 100 %, with a bootstrap CI (seeded, so reproducible).

use serde::Serialize;

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Summary {
    pub mean: f64,
    pub median: f64,
    pub ci95: [f64; 2],
}

/// Two-sided 97.5 % quantiles of Student's t for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

pub fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len().max(1) as f64
}

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

pub fn summarize(xs: &[f64]) -> Summary {
    let m = mean(xs);
    let n = xs.len();
    let half = if n < 2 {
        f64::NAN
    } else {
        let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64;
        let t = T975.get(n - 2).copied().unwrap_or(1.96);
        t * (var / n as f64).sqrt()
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

/// The gain of mean(x) over mean(baseline) with a 95 % bootstrap interval.
pub fn gain_with_ci(baseline: &[f64], x: &[f64], seed: u64) -> (f64, [f64; 2]) {
    let g = gain(mean(baseline), mean(x));
    if baseline.len() < 2 || x.len() < 2 {
        return (g, [f64::NAN, f64::NAN]);
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
    (g, [gains[49], gains[1949]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_and_gain() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.median, 2.5);
        assert!((s.ci95[1] - (2.5 + 3.182 * (1.6667f64 / 4.0).sqrt())).abs() < 1e-3);
        assert_eq!(gain(100.0, 80.0), 20.0);
        let (g, ci) = gain_with_ci(&[100.0, 110.0, 90.0], &[80.0, 85.0, 75.0], 1);
        assert!((g - 20.0).abs() < 1e-9 && ci[0] < g && g < ci[1]);
    }
}
