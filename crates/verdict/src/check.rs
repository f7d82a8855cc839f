//! `compare --check N`: does Chromium give the model's answer on this very
//! point? Per protocol, the model's gain over the baseline and Chromium's
//! (compare's gain, `results::Metric::gain`: mean-based, 95 % bootstrap CI),
//! and whether they agree: Chromium's gain lies within the model's CI or the
//! model's within Chromium's. Two CIs that merely overlap do not agree: the
//! check asks whether either client's answer is a value the other allows.

use proto::Protocol;
use results::View;
use results::{Metric, ProtocolSummary};
use serde::Serialize;

/// One client's gain of a protocol over the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Gain {
    /// In %, positive when the protocol is faster; None when a side has no
    /// finished load with the metric.
    pub pct: Option<f64>,
    /// Its 95 % CI; NaN (null in JSON) with fewer than two loads a side.
    pub ci95: [f64; 2],
    /// The protocol's loads that have the metric.
    pub n: usize,
}

impl Gain {
    fn of(metric: Metric, s: &ProtocolSummary) -> Gain {
        let (pct, ci95) = metric.gain(s);
        Gain {
            pct,
            ci95,
            n: metric.n(s),
        }
    }

    /// Whether `v` lies within this gain's CI (None: no CI).
    fn allows(&self, v: f64) -> Option<bool> {
        let [lo, hi] = self.ci95;
        (lo.is_finite() && hi.is_finite()).then_some(lo <= v && v <= hi)
    }
}

/// The two answers side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Chromium's gain is within the model's CI, or the model's within
    /// Chromium's.
    Agrees,
    /// Neither gain lies within the other's CI.
    Disagrees,
    /// A side has no gain, or neither has a CI (one load a side).
    Unknown,
}

/// One protocol's check against the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Agreement {
    pub protocol: Protocol,
    pub baseline: Protocol,
    /// The load compared: the first view, or the repeat view (`--view`).
    pub view: View,
    pub metric: Metric,
    pub model: Gain,
    pub chromium: Gain,
    /// Model − Chromium, in points; None unless both have a gain.
    pub error_pts: Option<f64>,
    pub verdict: Verdict,
}

/// The verdict on two gains: see `Verdict`.
fn verdict(model: &Gain, chromium: &Gain) -> Verdict {
    let (Some(m), Some(c)) = (model.pct, chromium.pct) else {
        return Verdict::Unknown;
    };
    match (model.allows(c), chromium.allows(m)) {
        (None, None) => Verdict::Unknown,
        (Some(true), _) | (_, Some(true)) => Verdict::Agrees,
        _ => Verdict::Disagrees,
    }
}

/// Per view both clients loaded (the first, then the repeat view: `--view
/// both` has each), and per protocol but the baseline (rows of `compare`'s
/// summary; the model's order), its agreement on `metric`.
pub fn agreements(
    metric: Metric,
    model: &[ProtocolSummary],
    chromium: &[ProtocolSummary],
) -> Vec<Agreement> {
    let of_view = |rows: &[ProtocolSummary], view: View| -> Vec<ProtocolSummary> {
        rows.iter().filter(|r| r.view == view).cloned().collect()
    };
    let mut out = Vec::new();
    for view in [View::First, View::Repeat] {
        let (model, chromium) = (of_view(model, view), of_view(chromium, view));
        let (Some(base_m), Some(base_c)) = (model.first(), chromium.first()) else {
            continue;
        };
        if base_m.protocol != base_c.protocol {
            continue;
        }
        out.extend(model.iter().skip(1).filter_map(|m| {
            let c = chromium.iter().find(|c| c.protocol == m.protocol)?;
            let (model, chromium) = (Gain::of(metric, m), Gain::of(metric, c));
            Some(Agreement {
                protocol: m.protocol,
                baseline: base_m.protocol,
                view,
                metric,
                error_pts: model.pct.zip(chromium.pct).map(|(m, c)| m - c),
                verdict: verdict(&model, &chromium),
                model,
                chromium,
            })
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gain(pct: f64, lo: f64, hi: f64) -> Gain {
        Gain {
            pct: Some(pct),
            ci95: [lo, hi],
            n: 3,
        }
    }

    #[test]
    fn either_gain_inside_the_others_ci_agrees() {
        // Chromium's inside the model's.
        assert_eq!(
            verdict(&gain(21.3, 17.0, 25.0), &gain(18.9, 15.1, 22.6)),
            Verdict::Agrees
        );
        // The model's inside Chromium's wide CI, Chromium's outside the model's narrow one.
        assert_eq!(
            verdict(&gain(10.0, 9.5, 10.5), &gain(2.0, -8.0, 12.0)),
            Verdict::Agrees
        );
        // Overlapping CIs, neither gain inside the other's: no agreement.
        assert_eq!(
            verdict(&gain(10.0, 6.0, 14.0), &gain(2.0, -1.0, 7.0)),
            Verdict::Disagrees
        );
        // The opposite sign, far apart.
        assert_eq!(
            verdict(&gain(11.5, 2.0, 20.0), &gain(-45.9, -50.0, -40.0)),
            Verdict::Disagrees
        );
    }

    #[test]
    fn no_ci_or_no_gain_is_unknown_and_one_ci_is_enough() {
        let nan = f64::NAN;
        assert_eq!(
            verdict(&gain(10.0, nan, nan), &gain(12.0, nan, nan)),
            Verdict::Unknown
        );
        let none = Gain {
            pct: None,
            ci95: [nan, nan],
            n: 0,
        };
        assert_eq!(verdict(&gain(10.0, 5.0, 15.0), &none), Verdict::Unknown);
        assert_eq!(
            verdict(&gain(10.0, 5.0, 15.0), &gain(12.0, nan, nan)),
            Verdict::Agrees
        );
        assert_eq!(
            verdict(&gain(10.0, nan, nan), &gain(30.0, 25.0, 35.0)),
            Verdict::Disagrees
        );
    }
}
