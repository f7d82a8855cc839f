//! How far to trust a compare's gains, under its table: with `--check N`,
//! per protocol whether Chromium's gain and the model's agree
//! (`verdict::check`), both with their CIs; without, the gain errors the
//! fidelity benchmark measured nearest the link (`verdict::fidelity`).

use crate::check::{Agreement, Gain, Verdict};
use crate::fidelity::Trust;
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
    let mut view = None;
    for a in agreements {
        if view != Some(a.view) {
            view = Some(a.view);
            let of_view = match a.view.is_first() {
                true => String::new(),
                false => format!(", {} view", a.view),
            };
            out.push(format!(
                "check: Chromium's {} gains over {}{of_view} ({loads} loads per protocol, after the model's, on a fresh testbed of the same link):",
                a.metric.label(),
                a.baseline
            ));
        }
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

/// Without `--check`: a heading, then per protocol the benchmark's gain
/// error at its nearest point, or why it says nothing there.
pub fn trust_lines(trust: &[Trust], metric: results::Metric) -> Vec<String> {
    if trust.is_empty() {
        return Vec::new();
    }
    let mut out = vec![format!(
        "trust: no Chromium loaded here (--check N loads it); the model's {} gain errors the fidelity benchmark measured (model − Chromium, points, over its sites):",
        metric.label()
    )];
    for t in trust {
        out.push(match t {
            Trust::Nearest { measured: m, .. } => format!(
                "  {}: at {}{} (nearest checked), mean |error| {:.1} (mean {:+.1}), within 3 points at {} of {} sites",
                m.b,
                m.point,
                match m.cross {
                    "none" => String::new(),
                    c => format!(" beside {c}"),
                },
                m.mean_abs_err_pts,
                m.mean_err_pts,
                m.within_3,
                m.sites
            ),
            Trust::Outside { protocol, why } => format!("  {protocol}: not known: {why}"),
        });
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
            view: results::View::First,
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

    /// `--view both`: a heading per view, the repeat view's named.
    #[test]
    fn each_view_checked_has_its_heading() {
        let first = agreement(g(21.3, 17.0, 25.2), g(18.9, 15.1, 22.6), Verdict::Agrees);
        let repeat = Agreement {
            view: results::View::Repeat,
            ..first.clone()
        };
        let out = lines(&[first, repeat], 5, &[]);
        let headings: Vec<&String> = out.iter().filter(|l| l.starts_with("check:")).collect();
        assert_eq!(headings.len(), 2, "{out:#?}");
        assert!(
            headings[0].contains("gains over h2 (5 loads"),
            "{}",
            headings[0]
        );
        assert!(
            headings[1].contains("gains over h2, repeat view (5 loads"),
            "{}",
            headings[1]
        );
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
    fn trust_reads_the_nearest_point_or_why_not() {
        use crate::fidelity::{Measured, Point};
        let measured = Measured {
            a: Protocol::Https,
            b: Protocol::H2,
            metric: Metric::Plt,
            point: Point {
                rtt_ms: 20.0,
                rate_mbit: 8.0,
                loss_pct: 0.0,
            },
            cross: "none",
            sites: 8,
            mean_abs_err_pts: 4.25,
            mean_err_pts: 1.0,
            within_3: 4,
        };
        let trust = [
            Trust::Nearest {
                measured,
                reversed: false,
            },
            Trust::Outside {
                protocol: Protocol::Spdy3,
                why: "the benchmark has no spdy3 vs https PLT gains".into(),
            },
        ];
        let out = trust_lines(&trust, Metric::Plt);
        assert_eq!(out.len(), 3);
        assert!(
            out[0].starts_with("trust: no Chromium loaded here (--check N loads it)"),
            "{}",
            out[0]
        );
        assert_eq!(
            out[1],
            "  h2: at 20 ms / 8 Mbit / 0 % loss (nearest checked), mean |error| 4.2 (mean +1.0), within 3 points at 4 of 8 sites"
        );
        assert_eq!(
            out[2],
            "  spdy3: not known: the benchmark has no spdy3 vs https PLT gains"
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
