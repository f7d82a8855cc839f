//! The text of `spdylab diff`: per point a table of protocol and metric,
//! A's and B's medians, the shift with its interval, p, its test (wilcoxon
//! or mann-whitney) and the verdict; then the budgets, each PASS or FAIL
//! with what was measured.

use crate::budget::Outcome;
use crate::diff::{Shift, Test};

/// The lines of a diff and, if given, of its budgets.
/// `with_baseline`: the shifts' note is printed (a run judged by budgets
/// alone has none).
pub fn lines(
    alpha: f64,
    shifts: &[Shift],
    budgets: Option<&[Outcome]>,
    with_baseline: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    let points = super::Points::of(shifts.iter().map(|s| s.point.as_str()));
    if let Some(common) = points.common() {
        out.push(common);
    }
    let mut point: Option<&str> = None;
    for s in shifts {
        if point != Some(s.point.as_str()) {
            point = Some(s.point.as_str());
            if !s.point.is_empty() {
                out.push(format!("point {}", points.shown(&s.point)));
            }
            out.push(format!(
                "{:<10} {:<6} {:>7} {:>10} {:>10} {:>10} {:>21} {:>7} {:>7}  {:<12}  verdict",
                "protocol",
                "metric",
                "n A/B",
                "A median",
                "B median",
                "shift",
                "shift 95% CI",
                "shift%",
                "p",
                "test"
            ));
        }
        let too_few = match s.test {
            Test::Wilcoxon => "n/a (< 6 pairs)",
            Test::MannWhitney => "n/a (< 4 a side)",
        };
        let ci = s.shift_ci95_ms.map_or(too_few.to_string(), |[lo, hi]| {
            format!("{lo:.0} – {hi:.0} ms")
        });
        out.push(format!(
            "{:<10} {:<6} {:>7} {:>7.0} ms {:>7.0} ms {:>+7.0} ms {:>21} {:>+6.1}% {:>7.3}  {:<12}  {}",
            s.protocol.name(),
            s.metric.label(),
            format!("{}/{}", s.a_n, s.b_n),
            s.a_median_ms,
            s.b_median_ms,
            s.shift_ms,
            ci,
            s.shift_pct,
            s.p_value,
            s.test.name(),
            s.verdict.words()
        ));
    }
    if with_baseline {
        out.push(format!(
            "B against A: shift = Hodges-Lehmann estimate of B - A (negative: B faster), p two-sided; a verdict when p < {alpha}."
        ));
        if shifts.iter().any(|s| s.test == Test::Wilcoxon) {
            out.push(
                "wilcoxon: paired by repetition (the same repetitions, one probe each): signed-rank test of the differences B - A, shift the median of their Walsh averages (--paired)."
                    .into(),
            );
        }
        if shifts.iter().any(|s| s.test == Test::MannWhitney) {
            out.push(
                "mann-whitney: independent samples: rank-sum test, shift the median pairwise difference."
                    .into(),
            );
        }
    }
    if let Some(outcomes) = budgets {
        let failed = outcomes.iter().filter(|o| !o.pass).count();
        for o in outcomes {
            let at = if o.point.is_empty() {
                String::new()
            } else {
                format!(" at {}", points.shown(&o.point))
            };
            out.push(format!(
                "{} {}{at}: {}",
                if o.pass { "PASS" } else { "FAIL" },
                o.budget,
                o.message
            ));
        }
        out.push(format!(
            "budgets: {} checked, {failed} failed",
            outcomes.len()
        ));
    }
    out
}

/// The lines above a diff's table: the settings in which A and B differ
/// (client, server, site, link, knobs, build), and those one did not record.
pub fn settings_lines(
    differences: &[crate::settings::Difference],
    unrecorded: &[String],
) -> Vec<String> {
    let mut out = Vec::new();
    match differences.is_empty() {
        true => out.push("A and B: the same client, server, site, link, knobs and build (where both recorded them).".into()),
        false => {
            out.push("A and B differ in:".into());
            let width = differences.iter().map(|d| d.name.len()).max().unwrap_or(0);
            for d in differences {
                out.push(format!("  {:<width$}  A {}  B {}", d.name, d.a, d.b));
            }
        }
    }
    let mut missing: Vec<&str> = unrecorded
        .iter()
        .map(|n| {
            if n.starts_with("knobs.") {
                "knobs"
            } else {
                n.as_str()
            }
        })
        .collect();
    missing.dedup();
    if !missing.is_empty() {
        out.push(format!(
            "Not recorded by A or B (written before runs kept their settings): {}.",
            missing.join(", ")
        ));
    }
    out
}
