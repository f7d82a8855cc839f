//! The loss comparison of a report: for a sweep whose varied axis is loss
//! (004's Fig. 6, or h3 vs h2 vs https), per site a table — each loss ×
//! protocol: mean of the headline metric with its 95 % CI, its gain over the
//! baseline, and each protocol's gain over the one listed before it (h3 over
//! h2), with bootstrap CIs — and those gains against loss with CI bars, and a
//! sentence per pair saying whether its gain grows with loss. A protocol that
//! loaded nothing at a point has no mean and no gain there, and none has a
//! gain over it: n/a, never a number. Pure: an experiment and its probes in,
//! numbers and HTML out.

use crate::svg::{self, colour, esc, Series};
use results::experiment::{self, Kind};
use results::stats::{gain_with_ci, summarize, BOOTSTRAP_SEED};
use results::summary::or_na;
use results::{point_key, Experiment, Metric, Point, ProbeRecord};
use std::fmt::Write as _;

/// One protocol at one point.
#[derive(Debug, Clone)]
pub struct Cell {
    pub protocol: String,
    pub n: usize,
    pub failed: usize,
    /// Mean of the headline metric (ms) and its 95 % CI (Student's t).
    pub mean: f64,
    pub ci: [f64; 2],
    /// Gain over the baseline (%) with its 95 % bootstrap CI (0 for the
    /// baseline); None when this protocol or the baseline loaded nothing.
    pub gain: Option<f64>,
    pub gain_ci: [f64; 2],
}

/// The gain of `protocol` over `over` at one point (e.g. h3 over h2).
#[derive(Debug, Clone)]
pub struct PairGain {
    pub protocol: String,
    pub over: String,
    pub gain: Option<f64>,
    pub ci: [f64; 2],
}

/// One row of the table: a loss value (and the other swept axes' values).
#[derive(Debug, Clone)]
pub struct LossRow {
    pub loss: String,
    /// The other swept axes, "axis=value" (empty when loss alone is swept).
    pub rest: String,
    pub cells: Vec<Cell>,
    pub pairs: Vec<PairGain>,
}

/// The loss comparison of one site.
#[derive(Debug, Clone)]
pub struct LossTable {
    pub site: String,
    pub rows: Vec<LossRow>,
}

/// The swept loss axis, if the experiment varies one.
pub fn loss_axis(exp: &Experiment) -> Option<String> {
    exp.swept()
        .into_iter()
        .find(|a| experiment::field(a).is_some_and(|f| matches!(f.kind, Kind::Loss)))
        .map(String::from)
}

/// Each non-baseline protocol against the one listed before it (https, h2,
/// h3 with baseline https: h3 over h2); none when there is only one.
pub fn pairs(exp: &Experiment) -> Vec<(String, String)> {
    let others: Vec<&str> = exp
        .protocols
        .iter()
        .filter(|p| **p != exp.baseline)
        .map(|p| p.name())
        .collect();
    others
        .windows(2)
        .map(|w| (w[1].to_string(), w[0].to_string()))
        .collect()
}

/// The metric's value in a probe; None where the probe has none (a paint
/// not reported), which the samples leave out.
fn value(metric: Metric, p: &ProbeRecord) -> Option<f64> {
    metric.of(p)
}

/// The tables of every site, or nothing when no loss axis is swept.
pub fn tables(exp: &Experiment, probes: &[ProbeRecord]) -> Vec<LossTable> {
    let Some(axis) = loss_axis(exp) else {
        return Vec::new();
    };
    let rest_axes: Vec<String> = exp
        .swept()
        .into_iter()
        .filter(|a| *a != "site" && *a != axis)
        .map(String::from)
        .collect();
    let samples = |point: &Point, proto: &str| -> (Vec<f64>, usize) {
        let key = point_key(point);
        let here: Vec<&ProbeRecord> = probes
            .iter()
            .filter(|p| p.protocol.name() == proto && point_key(&p.point) == key)
            .collect();
        let failed = here.iter().filter(|p| p.error.is_some()).count();
        (
            here.iter()
                .filter(|p| p.error.is_none())
                .filter_map(|p| value(exp.metric, p))
                .collect(),
            failed,
        )
    };
    let mut out: Vec<LossTable> = Vec::new();
    for point in exp.points() {
        let site = point.get("site").cloned().unwrap_or_default();
        let (base, _) = samples(&point, exp.baseline.name());
        let mut cells = Vec::new();
        for proto in &exp.protocols {
            let (v, failed) = samples(&point, proto.name());
            let s = summarize(&v);
            let (gain, gain_ci) = if *proto == exp.baseline && !v.is_empty() {
                (Some(0.0), [0.0, 0.0])
            } else {
                split(gain_with_ci(&base, &v, BOOTSTRAP_SEED))
            };
            cells.push(Cell {
                protocol: proto.name().to_string(),
                n: v.len(),
                failed,
                mean: s.mean,
                ci: s.ci95,
                gain,
                gain_ci,
            });
        }
        if cells.iter().all(|c| c.n == 0 && c.failed == 0) {
            continue;
        }
        let pairs = pairs(exp)
            .into_iter()
            .map(|(a, b)| {
                let (va, _) = samples(&point, &a);
                let (vb, _) = samples(&point, &b);
                let (gain, ci) = split(gain_with_ci(&vb, &va, BOOTSTRAP_SEED));
                PairGain {
                    protocol: a,
                    over: b,
                    gain,
                    ci,
                }
            })
            .collect();
        let row = LossRow {
            loss: point.get(&axis).cloned().unwrap_or_default(),
            rest: rest_axes
                .iter()
                .map(|a| format!("{a}={}", point.get(a).map_or("", String::as_str)))
                .collect::<Vec<_>>()
                .join(" "),
            cells,
            pairs,
        };
        match out.iter_mut().find(|t| t.site == site) {
            Some(t) => t.rows.push(row),
            None => out.push(LossTable {
                site,
                rows: vec![row],
            }),
        }
    }
    for t in &mut out {
        // By the other axes, then by loss (as a number).
        t.rows.sort_by(|a, b| {
            a.rest.cmp(&b.rest).then(
                loss_pct(&a.loss)
                    .unwrap_or(0.0)
                    .total_cmp(&loss_pct(&b.loss).unwrap_or(0.0)),
            )
        });
    }
    out
}

/// A gain and its CI apart: None and no interval when there is no gain.
fn split(g: Option<(f64, [f64; 2])>) -> (Option<f64>, [f64; 2]) {
    match g {
        Some((g, ci)) => (Some(g), ci),
        None => (None, [f64::NAN, f64::NAN]),
    }
}

fn loss_pct(v: &str) -> Option<f64> {
    experiment::magnitude(Kind::Loss, v)
}

fn fmt_ci(ci: [f64; 2], f: impl Fn(f64) -> String) -> String {
    if ci.iter().all(|v| v.is_finite()) {
        format!("[{}, {}]", f(ci[0]), f(ci[1]))
    } else {
        "[n/a]".into()
    }
}

fn pct(v: impl Into<Option<f64>>) -> String {
    or_na(v, |v| format!("{v:+.1}"))
}

fn ms(v: f64) -> String {
    or_na(v, |v| format!("{v:.0}"))
}

/// Whether a pair's gain grows with loss: its value and CI at the lowest and
/// the highest loss, and "grows" / "shrinks" only when the two CIs do not
/// overlap ("no separable trend" otherwise).
pub fn trend(table: &LossTable, pair: usize) -> Option<String> {
    let groups: Vec<&LossRow> = table.rows.iter().filter(|r| r.pairs.len() > pair).collect();
    let rests: Vec<&str> = {
        let mut r: Vec<&str> = groups.iter().map(|r| r.rest.as_str()).collect();
        r.dedup();
        r
    };
    let mut lines = Vec::new();
    for rest in rests {
        let here: Vec<&&LossRow> = groups.iter().filter(|r| r.rest == rest).collect();
        let (Some(lo), Some(hi)) = (here.first(), here.last()) else {
            continue;
        };
        if here.len() < 2 {
            continue;
        }
        let (a, b) = (&lo.pairs[pair], &hi.pairs[pair]);
        let verdict = if !(a.ci.iter().chain(&b.ci).all(|v| v.is_finite())) {
            "no interval to judge by"
        } else if b.ci[0] > a.ci[1] {
            "grows with loss (the CIs separate)"
        } else if b.ci[1] < a.ci[0] {
            "shrinks with loss (the CIs separate)"
        } else {
            "no separable trend (the CIs overlap)"
        };
        // The values in between, so that a trend made by one end alone shows.
        let between: Vec<String> = here[1..here.len() - 1]
            .iter()
            .map(|r| {
                let g = &r.pairs[pair];
                format!("{} % {} at {}", pct(g.gain), fmt_ci(g.ci, pct), r.loss)
            })
            .collect();
        let verdict = if between.is_empty() {
            verdict.to_string()
        } else {
            format!("{verdict}; in between: {}", between.join(", "))
        };
        lines.push(format!(
            "{}{}: {} over {}: {} % {} at loss {}, {} % {} at loss {} — {verdict}.",
            table.site,
            if rest.is_empty() {
                String::new()
            } else {
                format!(" ({rest})")
            },
            a.protocol,
            a.over,
            pct(a.gain),
            fmt_ci(a.ci, pct),
            lo.loss,
            pct(b.gain),
            fmt_ci(b.ci, pct),
            hi.loss
        ));
    }
    if lines.is_empty() {
        None
    } else {
        Some(lines.join(" "))
    }
}

/// The table as HTML.
pub fn table_html(exp: &Experiment, t: &LossTable) -> String {
    let m = exp.metric.label();
    let mut h = String::from("<table class=\"loss\"><tr><th>loss</th>");
    let rest = t.rows.iter().any(|r| !r.rest.is_empty());
    if rest {
        h.push_str("<th>point</th>");
    }
    for p in &exp.protocols {
        if *p == exp.baseline {
            let _ = write!(h, "<th>{p} {m} (ms) [95 % CI]</th>");
        } else {
            let _ = write!(
                h,
                "<th>{p} {m} (ms) [95 % CI]</th><th>{p} gain over {} (%) [95 % CI]</th>",
                exp.baseline
            );
        }
    }
    for (a, b) in pairs(exp) {
        let _ = write!(h, "<th>{a} gain over {b} (%) [95 % CI]</th>");
    }
    h.push_str("<th>n (failed)</th></tr>");
    for r in &t.rows {
        let _ = write!(h, "<tr><td>{}</td>", esc(&r.loss));
        if rest {
            let _ = write!(h, "<td>{}</td>", esc(&r.rest));
        }
        for c in &r.cells {
            let _ = write!(h, "<td>{} {}</td>", ms(c.mean), fmt_ci(c.ci, ms));
            if c.protocol != exp.baseline.name() {
                let _ = write!(h, "<td>{} {}</td>", pct(c.gain), fmt_ci(c.gain_ci, pct));
            }
        }
        for p in &r.pairs {
            let _ = write!(h, "<td>{} {}</td>", pct(p.gain), fmt_ci(p.ci, pct));
        }
        let n: Vec<String> = r
            .cells
            .iter()
            .map(|c| {
                if c.failed > 0 {
                    format!("{} ({})", c.n, c.failed)
                } else {
                    c.n.to_string()
                }
            })
            .collect();
        let _ = write!(h, "<td>{}</td></tr>", n.join(" / "));
    }
    h.push_str("</table>");
    h
}

/// The gains against loss with CI bars: one line per non-baseline protocol
/// (over the baseline) and one per pair (dashed colours are not needed: a
/// pair's line is black), per value of the other swept axes.
pub fn plot(exp: &Experiment, t: &LossTable) -> String {
    let axis = loss_axis(exp).unwrap_or_else(|| "loss".into());
    let mut rests: Vec<&str> = t.rows.iter().map(|r| r.rest.as_str()).collect();
    rests.dedup();
    let mut series = Vec::new();
    let pair_colours = ["#000000", "#8c564b", "#bcbd22"];
    for rest in &rests {
        let rows: Vec<&LossRow> = t.rows.iter().filter(|r| r.rest == *rest).collect();
        let suffix = if rest.is_empty() {
            String::new()
        } else {
            format!(" ({rest})")
        };
        for p in exp.protocols.iter().filter(|p| **p != exp.baseline) {
            let points = rows
                .iter()
                .filter_map(|r| {
                    let c = r.cells.iter().find(|c| c.protocol == p.name())?;
                    Some((loss_pct(&r.loss)?, c.gain?, c.gain_ci[0], c.gain_ci[1]))
                })
                .collect();
            series.push(Series {
                name: format!("{p} over {}{suffix}", exp.baseline),
                colour: colour(p.name()).into(),
                points,
            });
        }
        for (i, (a, b)) in pairs(exp).into_iter().enumerate() {
            let points = rows
                .iter()
                .filter_map(|r| {
                    let g = r.pairs.get(i)?;
                    Some((loss_pct(&r.loss)?, g.gain?, g.ci[0], g.ci[1]))
                })
                .collect();
            series.push(Series {
                name: format!("{a} over {b}{suffix}"),
                colour: pair_colours[i % pair_colours.len()].into(),
                points,
            });
        }
    }
    let mut ticks: Vec<(f64, String)> = t
        .rows
        .iter()
        .filter_map(|r| Some((loss_pct(&r.loss)?, r.loss.clone())))
        .collect();
    ticks.sort_by(|a, b| a.0.total_cmp(&b.0));
    ticks.dedup_by(|a, b| a.0 == b.0);
    svg::error_bar_chart(
        &format!(
            "{}: gain of mean {} against {axis}",
            t.site,
            exp.metric.label()
        ),
        &format!("{axis} (%)"),
        "gain (%)",
        &ticks,
        &series,
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A synthetic probes.jsonl: h3 20 % faster than h2 at 0 % loss and 50 %
    /// faster at 2 %, with a little spread.
    pub(crate) fn fixture() -> (Experiment, Vec<ProbeRecord>) {
        let exp = experiment::parse(
            "loss.toml",
            "name = \"l\"\nsites = [\"youtube\"]\nprotocols = [\"https\", \"h2\", \"h3\"]\nreps = 4\n[link]\nrtt = \"150ms\"\nrate = \"8mbit\"\nloss = [\"0%\", \"1%\", \"2%\"]\n",
        )
        .unwrap();
        let mut lines = String::new();
        for point in exp.points() {
            let lossy = point["loss"] != "0%";
            for rep in 0..4 {
                let jitter = rep as f64 * 10.0;
                for (proto, plt) in [
                    ("https", if lossy { 4000.0 } else { 2000.0 }),
                    ("h2", if lossy { 4000.0 } else { 2000.0 }),
                    ("h3", if lossy { 2000.0 } else { 1600.0 }),
                ] {
                    let line = serde_json::json!({
                        "trial": format!("{} protocol={proto} rep={rep}", point_key(&point)),
                        "point": point,
                        "protocol": proto,
                        "rep": rep,
                        "plt_ms": plt + jitter,
                        "tow_ms": plt + jitter - 100.0,
                    });
                    lines.push_str(&line.to_string());
                    lines.push('\n');
                }
            }
        }
        let probes = lines
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (exp, probes)
    }

    #[test]
    fn a_loss_sweep_gets_a_table_a_plot_and_a_trend() {
        let (exp, probes) = fixture();
        assert_eq!(loss_axis(&exp).as_deref(), Some("loss"));
        assert_eq!(pairs(&exp), [("h3".to_string(), "h2".to_string())]);
        let t = tables(&exp, &probes);
        assert_eq!(t.len(), 1);
        let rows = &t[0].rows;
        assert_eq!(
            rows.iter().map(|r| r.loss.as_str()).collect::<Vec<_>>(),
            ["0%", "1%", "2%"]
        );
        let h3 = &rows[2].cells[2];
        assert_eq!((h3.protocol.as_str(), h3.n), ("h3", 4));
        assert!((h3.mean - 2015.0).abs() < 1e-9);
        assert!(h3.ci[0] < 2015.0 && 2015.0 < h3.ci[1]);
        // h3 over https at 2 %: (4015 - 2015) / 4015.
        assert!((h3.gain.unwrap() - 2000.0 / 4015.0 * 100.0).abs() < 1e-6);
        let pair = &rows[0].pairs[0];
        let g = pair.gain.unwrap();
        assert!((g - 400.0 / 2015.0 * 100.0).abs() < 1e-6);
        assert!(pair.ci[0] <= g && g <= pair.ci[1]);
        let sentence = trend(&t[0], 0).unwrap();
        assert!(sentence.contains("h3 over h2"), "{sentence}");
        assert!(sentence.contains("grows with loss"), "{sentence}");
        assert!(sentence.contains("; in between: +49.8 % ["), "{sentence}");
        assert!(sentence.contains("] at 1%."), "{sentence}");
        let html = table_html(&exp, &t[0]);
        assert!(
            html.contains("<th>h3 gain over h2 (%) [95 % CI]</th>"),
            "{html}"
        );
        assert!(html.contains("<td>2%</td>"), "{html}");
        let svg = plot(&exp, &t[0]);
        assert!(svg.contains("h3 over h2"));
        assert!(svg.contains("h2 over https"));
    }

    /// Whether `text` shows a negative zero ("-0", "-0.0", "-0.000"), as
    /// opposed to a small negative number ("-0.7").
    pub(crate) fn negative_zero(text: &str) -> bool {
        text.match_indices('-').any(|(i, _)| {
            let digits: String = text[i + 1..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            !digits.is_empty() && digits.chars().all(|c| c == '0' || c == '.')
        })
    }

    #[test]
    fn a_protocol_that_loaded_nothing_has_no_gain_in_the_loss_table() {
        assert!(negative_zero("x -0 ms") && negative_zero("[-0.0, 1]") && negative_zero("-0.000,"));
        assert!(!negative_zero("-0.7 ms, +0.0, 0, 2-1, -"));
        let (exp, mut probes) = fixture();
        // At 2 % every h3 probe failed; at 1 % every https probe (the baseline).
        for p in &mut probes {
            let loss = p.point["loss"].as_str();
            if (loss == "2%" && p.protocol.name() == "h3")
                || (loss == "1%" && p.protocol.name() == "https")
            {
                p.error = Some("timed out".into());
            }
        }
        let t = tables(&exp, &probes);
        let rows = &t[0].rows;
        let h3 = &rows[2].cells[2];
        assert_eq!((h3.n, h3.failed, h3.gain), (0, 4, None));
        assert!(h3.mean.is_nan());
        assert_eq!(rows[2].pairs[0].gain, None, "h3 over h2 with no h3");
        // No baseline: no gain over it, not even its own; h3 over h2 stands.
        assert_eq!((rows[1].cells[0].gain, rows[1].cells[2].gain), (None, None));
        assert!(rows[1].pairs[0].gain.is_some());
        let html = table_html(&exp, &t[0]);
        assert!(html.contains("<td>2%</td>"), "{html}");
        assert!(html.contains("<td>n/a [n/a]</td>"), "{html}");
        assert!(!negative_zero(&html) && !html.contains("NaN"), "{html}");
        let sentence = trend(&t[0], 0).unwrap();
        assert!(sentence.contains("n/a % [n/a] at loss 2%"), "{sentence}");
        assert!(!plot(&exp, &t[0]).contains("NaN"));
    }

    #[test]
    fn a_sweep_without_loss_has_no_loss_section() {
        let exp = experiment::parse(
            "rtt.toml",
            "name = \"r\"\nsites = [\"youtube\"]\nprotocols = [\"https\", \"h2\"]\n[link]\nrtt = [\"50ms\", \"150ms\"]\n",
        )
        .unwrap();
        assert_eq!(loss_axis(&exp), None);
        assert!(tables(&exp, &[]).is_empty());
        // Two protocols: no pair beside the gain over the baseline.
        assert!(pairs(&exp).is_empty());
    }
}
