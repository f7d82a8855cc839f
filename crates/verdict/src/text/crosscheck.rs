//! The text of `spdylab crosscheck`: each probe's progress line, the table
//! of Trials (each client's median PLT, ratio, error, resources,
//! connections and the model's phases minus Chromium's) with its legend,
//! the agreement of each group of Trials against the goal, the table per
//! metric (error percentiles and buckets beside Chromium's spread), and the
//! gains: per point both clients' and the error, per pair and metric the
//! share within 3 points, the sign and the trend along each swept axis.

use crate::crosscheck::diagnosis::{PairDiagnosis, TrialDiagnosis};
use crate::crosscheck::{Figure, Figures, GainAgreement, GainPoint, MetricAgreement, Phases, Row};
use results::summary::or_na;
use std::fmt::Display;

/// The table of Trials and its legend, a blank line, then the agreement of
/// each group, the goal, and the note its n/a cells call for; then the
/// metrics and the gains. `pool`, `browser_cost`: the model's knobs, named
/// in the legend.
/// At or above this share of the machine's CPU busy during a Trial's
/// Chromium loads, they waited for the CPU: on this 2-core machine
/// Chromium's loads of icons at 20 ms / 8 Mbit keep it 88 % busy alone and
/// 98 % beside one other busy process (`netns::calibrate::CpuBusy`).
pub const BUSY_PCT: f64 = 95.0;

/// A warning naming the Trials whose Chromium loads ran on a saturated CPU
/// (`Row::chromium_cpu_busy_pct` ≥ [`BUSY_PCT`]), worst first.
fn busy_machine(rows: &[Row]) -> Option<String> {
    let mut busy: Vec<(&Row, f64)> = rows
        .iter()
        .filter_map(|r| Some((r, r.chromium_cpu_busy_pct?)))
        .filter(|(_, pct)| *pct >= BUSY_PCT)
        .collect();
    busy.sort_by(|a, b| b.1.total_cmp(&a.1));
    let (worst, pct) = busy.first()?;
    Some(format!(
        "busy machine: the CPU was {BUSY_PCT:.0}% busy or more during Chromium's loads of {} Trial(s) (worst: {} {} {}, {pct:.0}%): their times include waiting for it; load them again with nothing else running",
        busy.len(),
        worst.site,
        worst.link,
        worst.protocol.name()
    ))
}

pub fn report(
    rows: &[Row],
    figures: &Figures,
    pool: &dyn Display,
    browser_cost: &dyn Display,
) -> Vec<String> {
    let groups = &figures.groups;
    let mut out = vec![format!(
        "{:<17} {:<13} {:<5} {:>8} {:>8} {:>5} {:>6} {:>7} {:>7}  {:>7} {:>7} {:>7} {:>7} {:>8}",
        "site",
        "link",
        "proto",
        "model",
        "chrome",
        "ratio",
        "error",
        "res",
        "conns",
        "Δconn",
        "Δssl",
        "Δwait",
        "Δrecv",
        "Δdisc"
    )];
    for r in rows {
        let d = r.phase_diff();
        out.push(format!(
            "{:<17} {:<13} {:<5} {:>8} {:>8} {:>5} {:>6} {:>3}/{:<3} {:>3}/{:<3}  {:>7} {:>7} {:>7} {:>7} {:>8}",
            r.site,
            r.link,
            r.protocol.name(),
            or_na(r.model.median, |v| format!("{v:.0}")),
            or_na(r.chromium.median, |v| format!("{v:.0}")),
            or_na(r.ratio, |v| format!("{v:.2}")),
            or_na(r.ape_pct, |v| format!("{v:.1}%")),
            // A client that loaded nothing has no count: n/a, not NaN.
            or_na(r.model_resources, |v| format!("{v:.0}")),
            or_na(r.chromium_resources, |v| format!("{v:.0}")),
            or_na(r.model_connections, |v| format!("{v:.0}")),
            or_na(r.chromium_connections, |v| format!("{v:.0}")),
            or_na(d.connect, |v| format!("{v:+.0}")),
            or_na(d.ssl, |v| format!("{v:+.0}")),
            or_na(d.wait, |v| format!("{v:+.0}")),
            or_na(d.receive, |v| format!("{v:+.0}")),
            or_na(d.discovery, |v| format!("{v:+.0}")),
        ));
    }
    out.push(format!(
        "model and chrome: median PLT, ms; res, conns: model/Chromium; Δ: model - Chromium, ms ({}); model: --pool {} --browser-cost {}",
        Phases::NAMES.join(", "),
        pool,
        browser_cost
    ));
    out.push(String::new());
    out.push(format!(
        "{:<26} {:>6} {:>7} {:>9} {:>6}  worst",
        "Trials", "n", "MAPE", "within10", "rho"
    ));
    for g in groups {
        out.push(format!(
            "{:<26} {:>6} {:>7} {:>9} {:>6}  {}",
            g.group,
            format!("{}/{}", g.compared, g.trials),
            or_na(g.mape_pct, |v| format!("{v:.1}%")),
            or_na(g.within_10_pct, |v| format!("{v:.0}%")),
            or_na(g.spearman, |v| format!("{v:.3}")),
            or_na(g.worst_pct, |v| format!("{v:.1}% {}", g.worst)),
        ));
    }
    out.push(
        "goal: MAPE within 10% overall and per rate, rho >= 0.95, no Trial worse than 20%".into(),
    );
    if rows.iter().any(|r| !r.ape_pct.is_finite()) {
        out.push("n/a: a client loaded none of that Trial's pages: nothing to compare.".into());
    }
    out.extend(busy_machine(rows));
    out.push(String::new());
    out.extend(metrics(&figures.metrics));
    out.push(String::new());
    out.extend(gains(&figures.gains, &figures.gain_agreement));
    out.extend(diagnosis(&figures.trial_diagnoses, &figures.pair_diagnoses));
    out
}

/// At most this many Trials' model-vs-Chromium lines (the largest first);
/// `--json` has them all.
const DIAGNOSED_TRIALS_SHOWN: usize = 24;

/// Where the model's error lives: per pair, the PLT gain error by
/// component, worst first; per Trial (the largest differences first), the
/// model's PLT against Chromium's taken apart as `explain` does. Nothing
/// when no Trial has both clients' loads explained.
pub fn diagnosis(trials: &[TrialDiagnosis], pairs: &[PairDiagnosis]) -> Vec<String> {
    let mut out = Vec::new();
    if trials.is_empty() {
        return out;
    }
    out.push(String::new());
    if !pairs.is_empty() {
        out.push(
            "PLT gain error by component (model - Chromium, points, mean over the points; the largest mean |part| first):"
                .into(),
        );
        for p in pairs {
            let parts: Vec<String> = p
                .components
                .iter()
                .filter(|c| c.mean_abs_pts >= 0.05)
                .map(|c| {
                    format!(
                        "{} {:+.1} (|{:.1}|)",
                        c.component.name(),
                        c.mean_pts,
                        c.mean_abs_pts
                    )
                })
                .collect();
            out.push(format!(
                "  {}>{}: {:+.1} over {} point{} = {}",
                p.a,
                p.b,
                p.mean_error_pts,
                p.points,
                if p.points == 1 { "" } else { "s" },
                if parts.is_empty() {
                    "nothing".to_string()
                } else {
                    parts.join(", ")
                }
            ));
        }
    }
    let mut worst: Vec<&TrialDiagnosis> = trials.iter().collect();
    let size = |t: &TrialDiagnosis| t.difference.plt_ms.mean.map_or(0.0, f64::abs);
    worst.sort_by(|x, y| size(y).total_cmp(&size(x)));
    out.push(format!(
        "model vs Chromium per Trial (PLT taken apart as explain does{}):",
        if worst.len() > DIAGNOSED_TRIALS_SHOWN {
            format!(
                "; the {DIAGNOSED_TRIALS_SHOWN} largest of {}, --json has all",
                worst.len()
            )
        } else {
            String::new()
        }
    ));
    for t in worst.into_iter().take(DIAGNOSED_TRIALS_SHOWN) {
        out.push(format!(
            "  {} {} {}: {}",
            t.site,
            t.link,
            t.protocol,
            explain::text::difference(&t.difference)
        ));
    }
    out
}

/// A percentage or n/a.
fn pct(v: f64, decimals: usize) -> String {
    or_na(v, |v| format!("{v:.decimals$}%"))
}

/// The table per metric over all Trials (the "all" group of `metrics`).
pub fn metrics(metrics: &[MetricAgreement]) -> Vec<String> {
    let mut out = vec![format!(
        "{:<6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6}  {:<17}  {:>5} {:>6} {:>6} {:>6} {:>7}",
        "metric",
        "n",
        "MAPE",
        "p50",
        "p90",
        "p95",
        "rho",
        "good/ok/bad",
        "noise",
        "MAD",
        "p50",
        "p90",
        "within"
    )];
    for m in metrics.iter().filter(|m| m.group == "all") {
        let n = format!("{}/{}", m.compared, m.trials);
        if m.compared == 0 {
            out.push(format!(
                "{:<6} {:>7}  n = 0: no Trial where both clients have it",
                m.metric.name(),
                n
            ));
            continue;
        }
        let (b, z) = (&m.buckets, &m.chromium_noise);
        out.push(format!(
            "{:<6} {:>7} {:>7} {:>7} {:>7} {:>7} {:>6}  {:<17}  {:>5} {:>6} {:>6} {:>6} {:>7}",
            m.metric.name(),
            n,
            pct(m.mape_pct, 1),
            pct(m.ape_p50_pct, 1),
            pct(m.ape_p90_pct, 1),
            pct(m.ape_p95_pct, 1),
            or_na(m.spearman, |v| format!("{v:.3}")),
            format!("{}/{}/{} {:.0}%", b.good, b.ok, b.bad, b.good_pct),
            z.trials,
            pct(z.mad_mean_pct, 1),
            pct(z.mad_p50_pct, 1),
            pct(z.mad_p90_pct, 1),
            match z.trials {
                0 => "n/a".to_string(),
                _ => format!("{}/{}", z.within_noise, z.trials),
            },
        ));
    }
    out.push(
        "per metric over the Trials where both clients have it: APE of the medians (MAPE, its p50/p90/p95); \
         good < 20% <= ok < 50% <= bad (count/count/count, good's share); noise: Chromium's relative MAD \
         (median |load - median| / median) over the Trials with 2+ of its loads: mean, p50, p90; \
         within: Trials whose APE <= Chromium's own MAD"
            .into(),
    );
    out
}

/// A gain and its CI, or n/a.
fn gain(g: Option<f64>, ci: [f64; 2]) -> String {
    match g {
        None => "n/a".into(),
        Some(g) if ci.iter().all(|c| c.is_finite()) => {
            format!("{g:+.1} [{:+.1}, {:+.1}]", ci[0], ci[1])
        }
        Some(g) => format!("{g:+.1}"),
    }
}

/// The pair of protocols as "A>B" (B's gain over A).
fn pair(a: proto::Protocol, b: proto::Protocol) -> String {
    format!("{}>{}", a.name(), b.name())
}

/// The gains per point (metrics none of whose points have both clients'
/// gains left out), then per pair and metric the agreement.
pub fn gains(points: &[GainPoint], agreement: &[GainAgreement]) -> Vec<String> {
    if points.is_empty() {
        return vec!["gains: one protocol, no pair to compare".into()];
    }
    let mut out = vec![format!(
        "{:<11} {:<6} {:<17} {:<13} {:>22} {:>22} {:>7}",
        "pair", "metric", "site", "link", "model gain", "chrome gain", "error"
    )];
    let shown = |m: Figure| agreement.iter().any(|a| a.metric == m && a.compared > 0);
    for p in points.iter().filter(|p| shown(p.metric)) {
        out.push(format!(
            "{:<11} {:<6} {:<17} {:<13} {:>22} {:>22} {:>7}",
            pair(p.a, p.b),
            p.metric.name(),
            p.site,
            p.link,
            gain(p.model_gain_pct, p.model_ci95),
            gain(p.chromium_gain_pct, p.chromium_ci95),
            or_na(p.error_pts, |v| format!("{v:+.1}")),
        ));
    }
    out.push(
        "gain: % by which B is faster than A (mean A - mean B) / mean A, 95% bootstrap CI, as compare; \
         error: model - Chromium, points"
            .into(),
    );
    out.push(String::new());
    out.push(format!(
        "{:<11} {:<6} {:>7} {:>7} {:>12} {:>12}  trend (steps agreeing)",
        "pair", "metric", "points", "|err|", "within 3pt", "sign"
    ));
    for a in agreement {
        if a.compared == 0 {
            out.push(format!(
                "{:<11} {:<6} {:>7}  n = 0: no point where both clients have a gain",
                pair(a.a, a.b),
                a.metric.name(),
                format!("0/{}", a.points)
            ));
            continue;
        }
        let trends: Vec<String> = a
            .trends
            .iter()
            .map(|t| match t.verdict {
                Some(v) => format!(
                    "{} {v} {}/{} (sure {}/{})",
                    t.axis.name(),
                    t.agree,
                    t.steps,
                    t.sure_agree,
                    t.sure_steps
                ),
                None => format!("{} n/a", t.axis.name()),
            })
            .collect();
        out.push(format!(
            "{:<11} {:<6} {:>7} {:>7} {:>12} {:>12}  {}",
            pair(a.a, a.b),
            a.metric.name(),
            format!("{}/{}", a.compared, a.points),
            or_na(a.mean_abs_error_pts, |v| format!("{v:.1}")),
            format!("{}/{} {}", a.within_3, a.compared, pct(a.within_3_pct, 0)),
            match a.sign_known {
                0 => "n/a".to_string(),
                n => format!("{}/{n} {}", a.sign_agree, pct(a.sign_agree_pct, 0)),
            },
            match trends.is_empty() {
                true => "no axis swept".to_string(),
                false => trends.join(", "),
            },
        ));
    }
    out.push(
        "|err|: mean |model - Chromium| gain, points; within 3pt: points whose error is within +-3; \
         sign: of the points where Chromium's CI excludes 0, those where both gains have its sign; \
         trend: per swept axis, steps between successive values (site and other axes fixed) where \
         both gains move the same way (rise, flat, fall); sure: of the steps where Chromium's two CIs \
         do not overlap"
            .into(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crosscheck::tests::row;
    use proto::Protocol;

    #[test]
    fn a_trial_no_client_loaded_reads_na_with_its_note() {
        let rows = [row(
            "icons",
            "50ms 1mbit",
            "1mbit",
            "50ms",
            Protocol::H2,
            &[],
            &[],
        )];
        let out = report(&rows, &Figures::of(&rows), &"chromium", &"fitted");
        assert!(
            out[0].starts_with("site ") && out[0].ends_with("Δdisc"),
            "{}",
            out[0]
        );
        assert!(
            out[1].starts_with("icons") && out[1].contains(" n/a "),
            "{}",
            out[1]
        );
        // Counts of a client that loaded nothing are n/a too, never NaN.
        assert!(out[1].contains("n/a/n/a"), "{}", out[1]);
        assert!(!out.iter().any(|l| l.contains("NaN")), "{out:#?}");
        assert!(
            out.contains(&String::new()),
            "a blank line before the agreement"
        );
        assert!(out.contains(
            &"n/a: a client loaded none of that Trial's pages: nothing to compare.".to_string()
        ));
        // No metric has a Trial both clients loaded: each says n = 0.
        for m in ["plt", "ttfb", "fcp", "lcp", "si"] {
            assert!(
                out.iter()
                    .any(|l| l.starts_with(m) && l.contains("n = 0: no Trial")),
                "{m}: {out:#?}"
            );
        }
        assert!(out.iter().any(|l| l.contains("one protocol, no pair")));
        assert!(!out.iter().any(|l| l.starts_with("busy machine")));
    }

    /// Trials whose Chromium loads ran on a saturated CPU: one line naming
    /// how many and the worst; one below the mark (or not measured) is not
    /// named.
    #[test]
    fn chromium_loads_on_a_busy_machine_are_named_worst_first() {
        let at = |site: &str, p: Protocol, busy: Option<f64>| Row {
            chromium_cpu_busy_pct: busy,
            ..row(site, "20ms 8mbit", "8mbit", "20ms", p, &[], &[])
        };
        let rows = [
            at("icons", Protocol::H2, Some(88.0)),
            at("icons", Protocol::H3, Some(98.5)),
            at("twitter", Protocol::H2, Some(95.0)),
            at("youtube", Protocol::H2, None),
        ];
        let out = report(&rows, &Figures::of(&rows), &"chromium", &"fitted");
        let busy: Vec<&String> = out
            .iter()
            .filter(|l| l.starts_with("busy machine"))
            .collect();
        assert_eq!(busy.len(), 1, "{out:#?}");
        assert!(
            busy[0].contains("of 2 Trial(s) (worst: icons 20ms 8mbit h3, 98%)"),
            "{}",
            busy[0]
        );
    }

    /// Two protocols loaded by both clients: per metric PLT has its figures
    /// and FCP (the model's paint is None) says n = 0; the gains of PLT are
    /// shown and FCP's are n = 0; no NaN anywhere.
    #[test]
    fn metrics_and_gains_read_without_nan_when_the_model_paints_nothing() {
        let probe = |p: Protocol, plt: f64, paint: bool| {
            let mut x = results::ProbeRecord::failed(p, 0, String::new());
            x.error = None;
            x.plt_ms = plt;
            x.paint = paint.then(|| results::Paint {
                fcp_ms: Some(plt / 2.0),
                ..results::Paint::default()
            });
            x
        };
        let model = [
            probe(Protocol::Https, 1000.0, false),
            probe(Protocol::H2, 800.0, false),
        ];
        let chromium = [
            probe(Protocol::Https, 1100.0, true),
            probe(Protocol::Https, 1200.0, true),
            probe(Protocol::H2, 900.0, true),
            probe(Protocol::H2, 950.0, true),
        ];
        let rows = [Protocol::Https, Protocol::H2]
            .map(|p| row("icons", "20ms 1mbit", "1mbit", "20ms", p, &model, &chromium));
        let out = report(&rows, &Figures::of(&rows), &"chromium", &"fitted");
        assert!(!out.iter().any(|l| l.contains("NaN")), "{out:#?}");
        let line = |start: &str| {
            out.iter()
                .find(|l| l.starts_with(start))
                .unwrap_or_else(|| panic!("{start}: {out:#?}"))
                .clone()
        };
        assert!(line("plt ").contains("2/2"), "{out:#?}");
        assert!(line("fcp ").contains("n = 0"), "{out:#?}");
        let gain = line("https>h2    plt    icons");
        assert!(gain.contains("+20.0"), "model (1000 - 800) / 1000: {gain}");
        assert!(line("https>h2    fcp ").contains("n = 0"), "{out:#?}");
    }
}
