//! `compare --check N` under the table: per protocol, whether Chromium's
//! gain and the model's agree (`verdict::check`), both with their CIs.

use crate::check::{Agreement, Gain, Verdict};
use results::summary::or_na;

/// "+18.9 % [+15.1, +22.6]", or "n/a".
fn gain(g: &Gain) -> String {
    let pct = or_na(g.pct, |v| format!("{v:+.1} %"));
    let [lo, hi] = g.ci95;
    if g.pct.is_none() || !lo.is_finite() || !hi.is_finite() {
        return pct;
    }
    format!("{pct} [{lo:+.1}, {hi:+.1}]")
}

/// One line per protocol checked, after a heading that says what was
/// loaded; then the protocols Chromium could not load (`skipped`: protocol
/// and why), each on a line.
pub fn lines(
    agreements: &[Agreement],
    loads: usize,
    skipped: &[(proto::Protocol, String)],
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(a) = agreements.first() {
        out.push(format!(
            "check: Chromium's {} gains over {} ({loads} loads per protocol, after the model's, on a fresh testbed of the same link):",
            a.metric.label(),
            a.baseline
        ));
    }
    for a in agreements {
        let both = format!(
            "{} {} vs model {}",
            a.protocol,
            gain(&a.chromium),
            gain(&a.model)
        );
        out.push(match a.verdict {
            Verdict::Agrees => format!("  Chromium agrees: {both}"),
            Verdict::Disagrees => format!(
                "  DISAGREES: Chromium {both}: the model is {} points {}",
                or_na(a.error_pts.map(f64::abs), |v| format!("{v:.1}")),
                if a.error_pts.unwrap_or(0.0) > 0.0 {
                    "above"
                } else {
                    "below"
                }
            ),
            Verdict::Unknown => format!(
                "  cannot tell: {both} (a side has no gain, or one load each: no CI; --check 3 or more)"
            ),
        });
    }
    for (p, why) in skipped {
        out.push(format!("  {p}: not checked: {why}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Agreement;
    use proto::Protocol;
    use results::Metric;

    fn agreement(model: Gain, chromium: Gain, verdict: Verdict) -> Agreement {
        Agreement {
            protocol: Protocol::H3,
            baseline: Protocol::H2,
            metric: Metric::Plt,
            error_pts: model.pct.zip(chromium.pct).map(|(m, c)| m - c),
            model,
            chromium,
            verdict,
        }
    }

    fn g(pct: f64, lo: f64, hi: f64) -> Gain {
        Gain {
            pct: Some(pct),
            ci95: [lo, hi],
            n: 3,
        }
    }

    #[test]
    fn agreeing_and_disagreeing_lines_read_as_the_issue_asks() {
        let agrees = agreement(g(21.3, 17.0, 25.2), g(18.9, 15.1, 22.6), Verdict::Agrees);
        let disagrees = agreement(
            g(11.5, 2.0, 20.0),
            g(-45.9, -50.0, -40.1),
            Verdict::Disagrees,
        );
        let skipped = [(Protocol::Spdy3, "Chromium dropped SPDY".to_string())];
        let out = lines(&[agrees, disagrees], 3, &skipped);
        assert_eq!(
            out,
            [
                "check: Chromium's PLT gains over h2 (3 loads per protocol, after the model's, on a fresh testbed of the same link):",
                "  Chromium agrees: h3 +18.9 % [+15.1, +22.6] vs model +21.3 % [+17.0, +25.2]",
                "  DISAGREES: Chromium h3 -45.9 % [-50.0, -40.1] vs model +11.5 % [+2.0, +20.0]: the model is 57.4 points above",
                "  spdy3: not checked: Chromium dropped SPDY",
            ]
        );
    }

    #[test]
    fn one_load_each_cannot_tell() {
        let nan = f64::NAN;
        let a = agreement(g(5.0, nan, nan), g(4.0, nan, nan), Verdict::Unknown);
        let out = lines(&[a], 1, &[]);
        assert_eq!(
            out[1],
            "  cannot tell: h3 +4.0 % vs model +5.0 % (a side has no gain, or one load each: no CI; --check 3 or more)"
        );
    }
}
