//! The difference between two sets of probes (say h2's and https's at one
//! point): per component the mean difference a − b with a 95 % Welch interval
//! (Student's t with Welch–Satterthwaite degrees of freedom), the measured PLT
//! difference, and the residual PLT difference − Σ component differences,
//! zero up to rounding because each probe's components partition its PLT.

use crate::explanation::{Component, Explanation};
use serde::{Deserialize, Serialize};

/// A difference of means, a − b, ms (or a count for [`WhyDelta`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// None when either side has no probe.
    pub mean: Option<f64>,
    /// The 95 % interval; None with fewer than 2 probes on either side.
    pub ci95: Option<[f64; 2]>,
}

/// One component's difference.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ComponentDelta {
    pub component: Component,
    pub delta_ms: Delta,
}

/// The counts' differences (mean a − mean b) that explain the components.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WhyDelta {
    pub handshakes_on_critical_path: Option<f64>,
    pub handshake_rounds_on_critical_path: Option<f64>,
    pub retransmitted_segments: Option<f64>,
    pub drops: Option<f64>,
    pub rto_stalls: Option<f64>,
    pub request_rounds: Option<f64>,
    /// RTT inflation, percentage points (over the probes that have one).
    pub rtt_inflation_pct: Option<f64>,
    /// Head-of-line blocked time, ms, and bytes.
    #[serde(default)]
    pub hol_blocked_ms: Option<f64>,
    #[serde(default)]
    pub hol_blocked_bytes: Option<f64>,
    /// `window` time after the page's first drop, ms.
    #[serde(default)]
    pub window_after_loss_ms: Option<f64>,
}

/// Two sets of probes compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// The labels of the first probe of each set (`h2`, `https`).
    pub a_label: String,
    pub b_label: String,
    pub a_probes: usize,
    pub b_probes: usize,
    /// The measured PLT difference, a − b.
    pub plt_ms: Delta,
    /// Per component, in [`Component::ALL`]'s order.
    pub components: Vec<ComponentDelta>,
    pub why: WhyDelta,
    /// PLT difference − Σ component differences (0 up to rounding).
    pub residual_ms: Option<f64>,
}

impl Difference {
    /// A component's mean difference (None when either side is empty).
    pub fn component(&self, c: Component) -> Option<f64> {
        self.components
            .iter()
            .find(|d| d.component == c)
            .and_then(|d| d.delta_ms.mean)
    }
}

/// Compares two sets of explained probes: a − b.
pub fn difference(a: &[Explanation], b: &[Explanation]) -> Difference {
    let of = |f: &dyn Fn(&Explanation) -> f64| -> Delta {
        let xs: Vec<f64> = a.iter().map(f).collect();
        let ys: Vec<f64> = b.iter().map(f).collect();
        welch(&xs, &ys)
    };
    let mean_diff = |f: &dyn Fn(&Explanation) -> Option<f64>| -> Option<f64> {
        let m = |s: &[Explanation]| {
            let v: Vec<f64> = s.iter().filter_map(f).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        Some(m(a)? - m(b)?)
    };
    let plt_ms = of(&|e| e.plt_ms);
    let components: Vec<ComponentDelta> = Component::ALL
        .iter()
        .map(|&c| ComponentDelta {
            component: c,
            delta_ms: of(&|e| e.components.get(c)),
        })
        .collect();
    let residual_ms = plt_ms.mean.and_then(|p| {
        let sum: Option<f64> = components.iter().map(|c| c.delta_ms.mean).sum();
        sum.map(|s| p - s)
    });
    let why = WhyDelta {
        handshakes_on_critical_path: mean_diff(&|e| Some(e.why.handshakes_on_critical_path as f64)),
        handshake_rounds_on_critical_path: mean_diff(&|e| {
            Some(e.why.handshake_rounds_on_critical_path as f64)
        }),
        retransmitted_segments: mean_diff(&|e| Some(e.why.retransmitted_segments as f64)),
        drops: mean_diff(&|e| Some(e.why.drops as f64)),
        rto_stalls: mean_diff(&|e| Some(e.why.rto_stalls as f64)),
        request_rounds: mean_diff(&|e| Some(e.why.request_rounds as f64)),
        rtt_inflation_pct: mean_diff(&|e| e.bottleneck.rtt_inflation_pct),
        hol_blocked_ms: mean_diff(&|e| Some(e.why.hol_blocked_ms)),
        hol_blocked_bytes: mean_diff(&|e| Some(e.why.hol_blocked_bytes as f64)),
        window_after_loss_ms: mean_diff(&|e| Some(e.why.window_after_loss_ms)),
    };
    let label = |s: &[Explanation]| s.first().map_or_else(String::new, |e| e.label.clone());
    Difference {
        a_label: label(a),
        b_label: label(b),
        a_probes: a.len(),
        b_probes: b.len(),
        plt_ms,
        components,
        why,
        residual_ms,
    }
}

/// Mean difference xs − ys with Welch's 95 % interval.
pub fn welch(xs: &[f64], ys: &[f64]) -> Delta {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    if xs.is_empty() || ys.is_empty() {
        return Delta {
            mean: None,
            ci95: None,
        };
    }
    let (mx, my) = (mean(xs), mean(ys));
    let d = mx - my;
    if xs.len() < 2 || ys.len() < 2 {
        return Delta {
            mean: Some(d),
            ci95: None,
        };
    }
    let var =
        |v: &[f64], m: f64| v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64;
    let (sx, sy) = (var(xs, mx) / xs.len() as f64, var(ys, my) / ys.len() as f64);
    let se2 = sx + sy;
    if se2 <= 0.0 || !se2.is_finite() {
        return Delta {
            mean: Some(d),
            ci95: Some([d, d]),
        };
    }
    let df = se2 * se2 / (sx * sx / (xs.len() - 1) as f64 + sy * sy / (ys.len() - 1) as f64);
    let half = t975(df) * se2.sqrt();
    Delta {
        mean: Some(d),
        ci95: Some([d - half, d + half]),
    }
}

/// The 97.5 % quantile of Student's t with `df` (real, > 0) degrees of
/// freedom, by bisection on the distribution function (the regularized
/// incomplete beta function); to 1e-9.
pub fn t975(df: f64) -> f64 {
    let upper_tail = |t: f64| 0.5 * incomplete_beta(df / 2.0, 0.5, df / (df + t * t));
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while upper_tail(hi) > 0.025 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if upper_tail(mid) > 0.025 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-12 {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The regularized incomplete beta function I_x(a, b) (Numerical Recipes'
/// continued fraction).
fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        sum += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles_match_the_tables() {
        for (df, t) in [
            (1.0, 12.706),
            (2.0, 4.303),
            (5.0, 2.571),
            (10.0, 2.228),
            (30.0, 2.042),
            (120.0, 1.980),
        ] {
            assert!((t975(df) - t).abs() < 1e-3, "df {df}: {}", t975(df));
        }
        // Between table rows for Welch's fractional degrees of freedom.
        let mid = t975(4.5);
        assert!(mid < 2.776 && mid > 2.571);
    }

    #[test]
    fn welch_interval_by_hand() {
        // Means 2 and 5, variances 1 and 1, n = 3 each: se = sqrt(2/3),
        // df = 4, t = 2.776: half-width 2.267.
        let d = welch(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert_eq!(d.mean, Some(-3.0));
        let [lo, hi] = d.ci95.unwrap();
        assert!((hi - lo - 2.0 * 2.776 * (2.0f64 / 3.0).sqrt()).abs() < 1e-3);
        assert_eq!(welch(&[1.0], &[2.0, 3.0]).ci95, None);
        assert_eq!(welch(&[], &[2.0]).mean, None);
        assert_eq!(welch(&[1.0, 1.0], &[2.0, 2.0]).ci95, Some([-1.0, -1.0]));
    }
}
