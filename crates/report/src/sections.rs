//! report.html of a campaign: one function per section — the summary, the
//! loss tables, per site the gain and the headline metric (and PLT beside
//! it) against each swept axis, the heatmaps of a two-axis sweep, their
//! CDFs, the HAR phases, the filmstrips
//! and visual progress (`filmstrip`) and why (the PLT taken apart, `why`);
//! then the waterfall, the calibration, the failed probes and the table of
//! groups.

use crate::axes::{axis_label, kind, log_axis, sites, swept_axes, x_of, x_ticks};
use crate::filmstrip;
use crate::html::{page, Html};
use crate::loss;
use crate::rows::{Row, PHASES};
use crate::svg::{self, colour, esc, Mark, Series};
use crate::waterfall::waterfalls;
use crate::why;
use crate::Options;
use results::experiment::{self, Experiment};
use results::stats::mean;
use results::summary::{failure_note, or_na};
use results::{CalibrationEntry, ProbeRecord};
use std::fmt::Write as _;
use std::path::Path;

/// The page of a campaign: its sections in order, in the page's shell.
pub(crate) fn render(
    dir: &Path,
    exp: &Experiment,
    probes: &[ProbeRecord],
    rows: &[Row],
    calibration: &[CalibrationEntry],
    headline: &[String],
    opts: &Options,
) -> String {
    let mut h = Html::default();
    let c = Campaign::new(exp, probes, rows);
    c.summary(&mut h, headline);
    c.loss(&mut h);
    let (mut film_anchor, mut budget) = (true, filmstrip::Budget::default());
    for (i, site) in sites(exp).iter().enumerate() {
        c.gain(&mut h, site);
        c.heatmaps(&mut h, site);
        c.cdf(&mut h, site);
        c.phases(&mut h, site);
        filmstrip::section(
            &mut h,
            dir,
            exp,
            probes,
            site,
            &mut film_anchor,
            &mut budget,
        );
        why::section(&mut h, exp, probes, site, i == 0, opts.waterfall.as_deref());
    }
    h.section("waterfall", "Waterfall");
    waterfalls(&mut h, dir, exp, probes, rows, opts);
    calibration_section(&mut h, calibration);
    c.failures(&mut h);
    c.groups(&mut h);
    page(&exp.name, &exp.description, &h, dir)
}

/// What the sections of a campaign's page read.
struct Campaign<'a> {
    exp: &'a Experiment,
    probes: &'a [ProbeRecord],
    rows: &'a [Row],
    /// Every protocol's name, and those of the protocols other than the baseline.
    all: Vec<String>,
    others: Vec<String>,
    /// The swept axes other than the site.
    axes: Vec<String>,
}

impl<'a> Campaign<'a> {
    fn new(exp: &'a Experiment, probes: &'a [ProbeRecord], rows: &'a [Row]) -> Self {
        Campaign {
            exp,
            probes,
            rows,
            all: exp.protocols.iter().map(|p| p.name().to_string()).collect(),
            others: exp
                .protocols
                .iter()
                .filter(|p| **p != exp.baseline)
                .map(|p| p.name().to_string())
                .collect(),
            axes: swept_axes(exp),
        }
    }

    /// What the campaign holds, how gains are computed, and the headline.
    fn summary(&self, h: &mut Html, headline: &[String]) {
        let (exp, probes, all) = (self.exp, self.probes, &self.all);
        let failed = probes.iter().filter(|p| p.error.is_some()).count();
        h.section("summary", "Summary");
        let _ = write!(
        h.body,
        "<p>{} Trials in the experiment; {} probes recorded ({} failed, {} not run yet). Protocols: {}; baseline {}. Swept: {}. {} repetitions per point; gain = (baseline − X) / baseline × 100 % of mean {}, positive when X is faster; CIs are 95 % (Student's t for means, bootstrap for gains).</p><ul>",
        exp.trial_count(),
        probes.len(),
        failed,
        exp.trial_count().saturating_sub(probes.len()),
        esc(&all.join(", ")),
        exp.baseline,
        esc(&if exp.swept().is_empty() { "nothing".to_string() } else { exp.swept().join(", ") }),
        exp.reps,
        metric_words(exp.metric)
    );
        for line in headline {
            let _ = write!(h.body, "<li>{}</li>", esc(line));
        }
        h.body.push_str("</ul>");
    }

    /// A loss sweep's table, trend sentences and plot per site (`loss`).
    fn loss(&self, h: &mut Html) {
        let (exp, probes) = (self.exp, self.probes);
        for t in loss::tables(exp, probes) {
            h.section(
                &format!("loss-{}", t.site),
                &format!("{}: protocols under loss", t.site),
            );
            h.p(&format!(
            "Each loss rate: mean {} with its 95 % CI (Student's t), the gain over {} and each protocol's gain over the one listed before it, with 95 % bootstrap CIs — 004's Fig. 6 question: does removing head-of-line blocking pay more as loss grows?",
            exp.metric.label(),
            exp.baseline
        ));
            for i in 0..loss::pairs(exp).len() {
                if let Some(s) = loss::trend(&t, i) {
                    h.p(&s);
                }
            }
            h.body.push_str(&loss::table_html(exp, &t));
            h.figure(
            loss::plot(exp, &t),
            &format!(
                "Gain of mean {} against loss with 95 % bootstrap CI bars: each protocol over {}, and each over the one listed before it (black).",
                exp.metric.label(),
                exp.baseline
            ),
        );
        }
    }

    /// Gain, and the headline metric (with PLT beside it), against each swept axis, at one site.
    fn gain(&self, h: &mut Html, site: &str) {
        let (exp, rows, axes) = (self.exp, self.rows, &self.axes);
        let (all, others) = (&self.all, &self.others);
        for axis in axes {
            let rest: Vec<&String> = axes.iter().filter(|a| *a != axis).collect();
            let averaged = if rest.is_empty() {
                String::new()
            } else {
                format!(
                    " Averaged over {} (band: mean of the groups' CIs).",
                    rest.iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let id = format!("gain-{site}-{axis}");
            h.section(&id, &format!("{site}: gain against {axis}"));
            let series = gain_series(
                exp,
                rows,
                site,
                axis,
                &|r| r.gain.map(|g| (g, r.gain_ci[0], r.gain_ci[1])),
                others,
            );
            let marks = reference_marks(exp, site, Some(axis));
            // Say only what is drawn: the references, where there are some.
            let references = match marks.is_empty() {
                true => "",
                false => " Diamonds and dashed lines are the experiment's references (the published numbers).",
            };
            h.figure(
                svg::line_chart(
                    &format!(
                        "{site}: gain of mean {} over {} against {axis}",
                        exp.metric.label(),
                        exp.baseline
                    ),
                    &axis_label(axis),
                    &format!("gain over {} (%)", exp.baseline),
                    &x_ticks(exp, axis),
                    log_axis(exp, axis),
                    &series,
                    &marks,
                    true,
                ),
                &format!(
                    "Gain of mean {} over {} with 95 % bootstrap bands.{references}{averaged}",
                    metric_words(exp.metric),
                    exp.baseline
                ),
            );
            for metric in drawn(exp.metric) {
                let summary = |r: &Row| match metric == exp.metric {
                    true => r.headline,
                    false => r.plt,
                };
                let series = gain_series(
                    exp,
                    rows,
                    site,
                    axis,
                    &|r| {
                        Some(summary(r))
                            .filter(|s| s.mean.is_finite())
                            .map(|s| (s.mean, s.ci95[0], s.ci95[1]))
                    },
                    all,
                );
                h.figure(
                    svg::line_chart(
                        &format!("{site}: {} against {axis}", metric.label()),
                        &axis_label(axis),
                        &format!("mean {} (ms)", metric.label()),
                        &x_ticks(exp, axis),
                        log_axis(exp, axis),
                        &series,
                        &[],
                        true,
                    ),
                    &format!(
                        "Mean {} per protocol with 95 % CI bands{}.{averaged}",
                        time_words(metric),
                        over_those_that_have_it(metric)
                    ),
                );
            }
        }
    }

    /// A two-axis sweep: one heatmap of gains per protocol, at one site.
    fn heatmaps(&self, h: &mut Html, site: &str) {
        let (exp, rows, axes, others) = (self.exp, self.rows, &self.axes, &self.others);
        if axes.len() == 2 {
            let (row_axis, col_axis) = (&axes[0], &axes[1]);
            for proto in others {
                h.section(
                    &format!("heat-{site}-{proto}"),
                    &format!("{site}: {proto} gain over {row_axis} × {col_axis}"),
                );
                let cols = exp.values(col_axis).to_vec();
                let rws = exp.values(row_axis).to_vec();
                let cell = |c: usize, r: usize| {
                    rows.iter()
                        .find(|x| {
                            x.protocol == *proto
                                && x.point.get("site").map(String::as_str) == Some(site)
                                && x.point.get(col_axis.as_str()) == Some(&cols[c])
                                && x.point.get(row_axis.as_str()) == Some(&rws[r])
                                && x.n > 0
                        })
                        .and_then(|x| x.gain)
                };
                h.figure(
                    svg::heatmap(&format!("{site}: gain of {proto} over {}", exp.baseline), col_axis, row_axis, &cols, &rws, &cell),
                    &format!("Gain of mean {} (%) of {proto} over {} at each point (blue: faster, red: slower), as in 004's Fig. 9.", exp.metric.label(), exp.baseline),
                );
            }
        }
    }

    /// The CDF of the headline metric per protocol (and of PLT beside it), at one site.
    fn cdf(&self, h: &mut Html, site: &str) {
        let (probes, all, axes) = (self.probes, &self.all, &self.axes);
        let labels: Vec<&str> = drawn(self.exp.metric).map(|m| m.label()).collect();
        h.section(
            &format!("cdf-{site}"),
            &format!("{site}: {} distribution", labels.join(" and ")),
        );
        for metric in drawn(self.exp.metric) {
            let series: Vec<(String, String, Vec<f64>)> = all
                .iter()
                .map(|p| {
                    let v: Vec<f64> = probes
                        .iter()
                        .filter(|x| {
                            x.protocol.name() == p
                                && x.error.is_none()
                                && x.point.get("site").map(String::as_str) == Some(site)
                        })
                        .filter_map(|x| metric.of(x))
                        .collect();
                    (p.clone(), colour(p).to_string(), v)
                })
                .collect();
            let pooled = match axes.is_empty() {
                true => "",
                false => ", pooled over every point of the sweep",
            };
            h.figure(
                svg::cdf_chart(
                    &format!("{site}: CDF of {}", metric.label()),
                    &format!("{} (ms)", metric.label()),
                    &series,
                ),
                &format!(
                    "CDF of {} per protocol{}{pooled}.",
                    time_words(metric),
                    over_those_that_have_it(metric)
                ),
            );
        }
    }

    /// The HAR phases summed over a page per protocol, and SSL's share, at one site.
    fn phases(&self, h: &mut Html, site: &str) {
        let (exp, rows, all, others) = (self.exp, self.rows, &self.all, &self.others);
        h.section(
            &format!("phases-{site}"),
            &format!("{site}: where the time goes"),
        );
        let phase_rows: Vec<(String, Vec<(String, f64)>)> = all
            .iter()
            .map(|p| {
                let here: Vec<&Row> = rows
                    .iter()
                    .filter(|r| {
                        r.protocol == *p
                            && r.point.get("site").map(String::as_str) == Some(site)
                            && r.n > 0
                    })
                    .collect();
                // Nothing loaded: an empty bar, not one of NaN.
                let names = if here.is_empty() { &[][..] } else { PHASES };
                let segs = names
                    .iter()
                    .map(|(name, _)| {
                        (
                            name.to_string(),
                            mean(&here.iter().map(|r| r.phases[*name]).collect::<Vec<_>>()),
                        )
                    })
                    .collect();
                (p.clone(), segs)
            })
            .collect();
        h.figure(
            svg::stacked_bars(&format!("{site}: HAR phases summed over the page's requests"), "ms per page (sum over requests)", &phase_rows, PHASES),
            "Mean over probes of each HAR phase summed over the page's requests (connect without ssl), as in 004's Fig. 3 and Fig. 5.",
        );
        let ssl = |p: &str| {
            phase_rows
                .iter()
                .find(|r| r.0 == p)
                .and_then(|r| r.1.iter().find(|s| s.0 == "ssl"))
                .map(|s| s.1)
        };
        if let Some(base_ssl) = ssl(exp.baseline.name()).filter(|v| *v > 0.0) {
            for p in others {
                if let Some(x) = ssl(p) {
                    h.p(&format!(
                    "{p} spends {:.0} % less time in SSL than {} ({x:.0} vs {base_ssl:.0} ms per page); 004 reports SPDY saving 66–94 %.",
                    (1.0 - x / base_ssl) * 100.0,
                    exp.baseline
                ));
                }
            }
        }
    }

    /// The first 50 failed probes with their errors, when any failed.
    fn failures(&self, h: &mut Html) {
        let probes = self.probes;
        if probes.iter().any(|p| p.error.is_some()) {
            h.section("failures", "Failed probes");
            h.body
                .push_str("<table><tr><th>Trial</th><th>error</th></tr>");
            for p in probes.iter().filter(|p| p.error.is_some()).take(50) {
                let _ = write!(
                    h.body,
                    "<tr><td>{}</td><td>{}</td></tr>",
                    esc(&p.trial),
                    esc(p.error.as_deref().unwrap_or(""))
                );
            }
            h.body.push_str("</table>");
        }
    }

    /// Every group: its figures, gains and CIs.
    fn groups(&self, h: &mut Html) {
        let (exp, rows) = (self.exp, self.rows);
        h.section("table", "All groups");
        let _ = write!(h.body, "<table><tr><th>point</th><th>protocol</th><th>n</th><th>failed</th><th>PLT mean (ms)</th><th>95 % CI</th><th>median</th><th>{} gain (%)</th><th>95 % CI</th><th>ToW mean (ms)</th><th>{} gain (%)</th></tr>", exp.metric.label(), exp.metric.other().label());
        for r in rows {
            let other = match exp.metric {
                results::Metric::Plt => r.tow_gain,
                _ => r.plt_gain,
            };
            let _ = write!(
            h.body,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&r.key),
            esc(&r.protocol),
            r.n,
            // Nothing loaded: say so, with the first error, as compare does.
            match failure_note(r.n, r.failed, r.first_error.as_deref()) {
                Some(note) if r.n == 0 => esc(&note),
                _ => r.failed.to_string(),
            },
            or_na(r.plt.mean, |v| format!("{v:.0}")),
            ci_text(r.plt.ci95, |v| format!("{v:.0}")),
            or_na(r.plt.median, |v| format!("{v:.0}")),
            if r.protocol == exp.baseline.name() { "baseline".into() } else { or_na(r.gain, |v| format!("{v:+.1}")) },
            if r.protocol == exp.baseline.name() { String::new() } else { ci_text(r.gain_ci, |v| format!("{v:+.1}")) },
            or_na(r.tow.mean, |v| format!("{v:.0}")),
            if r.protocol == exp.baseline.name() { "baseline".into() } else { or_na(other, |v| format!("{v:+.1}")) },
        );
        }
        h.body.push_str("</table>");
        if rows
            .iter()
            .any(|r| !r.plt.ci95.iter().chain(&r.gain_ci).all(|v| v.is_finite()))
        {
            h.p("n/a: no interval from fewer than 2 successful loads in a group (one repetition has no spread to estimate one from).");
        }
        if rows.iter().any(|r| r.gain.is_none()) {
            h.p("n/a gain: the protocol or the baseline loaded nothing in that group (every probe failed): no figures, nothing to compare.");
        }
    }
}

/// Each distinct link's calibration: spec against measured.
fn calibration_section(h: &mut Html, calibration: &[CalibrationEntry]) {
    h.section("calibration", "Calibration");
    if calibration.is_empty() {
        h.p("No calibration recorded (the sweep ran with --no-calibration).");
    } else {
        h.body.push_str("<table><tr><th>link</th><th>RTT spec</th><th>expected</th><th>measured</th><th>down spec</th><th>measured</th><th>up spec</th><th>measured</th><th>loss spec</th><th>measured</th><th>emulator CPU</th></tr>");
        let rate = |r: Option<f64>| {
            r.map_or("unlimited".to_string(), |v| {
                format!("{:.0} kbit/s", v / 1e3)
            })
        };
        for c in calibration {
            let _ = write!(
                h.body,
                "<tr><td>{}</td><td>{:.1} ms</td><td>{:.2} ms</td><td>{:.2} ms</td><td>{}</td><td>{:.0} kbit/s{}</td><td>{}</td><td>{:.0} kbit/s{}</td><td>{:.2} %</td><td>{:.2} %</td><td>{:.0} %</td></tr>",
                esc(&c.link),
                c.rtt_ms,
                c.rtt_expected_ms,
                c.rtt_measured_ms,
                rate(c.down_bps),
                c.down_measured_bps / 1e3,
                goodput_note(c.down_measured_bps, c.down_error_bps, c.down_bps),
                rate(c.up_bps),
                c.up_measured_bps / 1e3,
                goodput_note(c.up_measured_bps, c.up_error_bps, c.up_bps),
                c.loss * 100.0,
                c.loss_measured * 100.0,
                c.emulator_cpu_pct
            );
        }
        h.body.push_str("</table><p>Quick calibration of each distinct link: 10 UDP echoes, 2 s of TCP bulk each way after a warm-up, 1000 datagrams each way; goodput is the payload the sender's TCP knows reached the receiver in the window (acknowledged or SACKed), ± the segments that can sit on the window's edges; goodput of TCP over a rate is at most 1448/1500 = 96.5 % of it.</p>");
    }
}

/// After a measured goodput: " ± e kbit/s" when its error is known, and " (x % ± y %)" of the spec.
fn goodput_note(measured: f64, error: Option<f64>, spec: Option<f64>) -> String {
    let mut out = error.map_or(String::new(), |e| format!(" ± {:.0} kbit/s", e / 1e3));
    if let Some(s) = spec.filter(|s| *s > 0.0) {
        let _ = write!(out, " ({:.1} %", measured / s * 100.0);
        if let Some(e) = error {
            let _ = write!(out, " ± {:.1} %", e / s * 100.0);
        }
        out.push(')');
    }
    out
}

/// "lo – hi", or "n/a" when there is no interval (fewer than two values).
fn ci_text(ci: [f64; 2], fmt: impl Fn(f64) -> String) -> String {
    if ci.iter().all(|v| v.is_finite()) {
        format!("{} – {}", fmt(ci[0]), fmt(ci[1]))
    } else {
        "n/a".into()
    }
}

/// The metrics a report draws against time: the headline, and PLT beside
/// it when the headline is another.
fn drawn(headline: results::Metric) -> impl Iterator<Item = results::Metric> {
    std::iter::once(headline)
        .chain((headline != results::Metric::Plt).then_some(results::Metric::Plt))
}

/// A metric as a caption names it.
fn time_words(m: results::Metric) -> &'static str {
    match m {
        results::Metric::Plt => "page load time",
        results::Metric::Tow => "time on wire",
        results::Metric::Ttfb => "time to first byte",
        results::Metric::Fcp => "first contentful paint",
        results::Metric::Lcp => "largest contentful paint",
        results::Metric::Si => "Speed Index",
    }
}

/// What a caption adds for a metric a probe may lack.
fn over_those_that_have_it(m: results::Metric) -> &'static str {
    match m.is_paint() {
        true => " (over the probes that report it)",
        false => "",
    }
}

/// The headline metric in words, the other named beside it.
fn metric_words(m: results::Metric) -> &'static str {
    match m {
        results::Metric::Plt => "PLT (page load time; ToW beside it in summary.csv)",
        results::Metric::Tow => {
            "ToW (time on wire: first request packet to last response packet, 004's metric; PLT beside it)"
        }
        results::Metric::Ttfb => "TTFB (the document's first response byte; PLT beside it)",
        results::Metric::Fcp => "FCP (first contentful paint; PLT beside it)",
        results::Metric::Lcp => "LCP (largest contentful paint as of onload; PLT beside it)",
        results::Metric::Si => "Speed Index (the mean time the screen was incomplete; PLT beside it)",
    }
}

/// A value with its CI: (value, low, high).
type Band = (f64, f64, f64);

/// Gain against one swept axis for one site: one series per non-baseline protocol
/// (and per value of a categorical third axis would be too many: the other
/// swept axes are averaged over, and the caption says so).
fn gain_series(
    exp: &Experiment,
    rows: &[Row],
    site: &str,
    axis: &str,
    metric: &dyn Fn(&Row) -> Option<Band>,
    protocols: &[String],
) -> Vec<Series> {
    let mut out = Vec::new();
    for proto in protocols {
        let mut points = Vec::new();
        for v in exp.values(axis) {
            // Groups without the figure (nothing loaded, no gain) are not drawn.
            let m: Vec<Band> = rows
                .iter()
                .filter(|r| {
                    r.protocol == *proto
                        && r.point.get("site").map(String::as_str) == Some(site)
                        && r.point.get(axis) == Some(v)
                        && r.n > 0
                })
                .filter_map(metric)
                .collect();
            if m.is_empty() {
                continue;
            }
            let avg = |f: &dyn Fn(&Band) -> f64| {
                mean(
                    &m.iter()
                        .map(f)
                        .filter(|x| x.is_finite())
                        .collect::<Vec<_>>(),
                )
            };
            points.push((
                x_of(exp, axis, v),
                avg(&|t| t.0),
                avg(&|t| t.1),
                avg(&|t| t.2),
            ));
        }
        out.push(Series {
            name: proto.clone(),
            colour: colour(proto).into(),
            points,
        });
    }
    out
}

fn reference_marks(exp: &Experiment, site: &str, axis: Option<&str>) -> Vec<Mark> {
    exp.references
        .iter()
        .filter(|r| r.site.as_deref().is_none_or(|s| s == site))
        .filter(|r| {
            r.protocol
                .as_deref()
                .is_none_or(|p| exp.protocols.iter().any(|q| q.name() == p))
        })
        .filter_map(|r| {
            let x = match (&r.axis, &r.at, axis) {
                (Some(a), Some(at), Some(axis)) if a == axis => Some(Some(x_of(
                    exp,
                    a,
                    &experiment::canonical(kind(a), at).ok()?,
                ))),
                (None, _, _) => Some(None),
                _ => None,
            }?;
            Some(Mark {
                label: r.label.clone(),
                x,
                y: r.gain_pct,
                colour: if r.site.is_none() {
                    "#555".into()
                } else {
                    "#000".into()
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_goodput_states_its_error() {
        assert_eq!(
            goodput_note(7_700_000.0, Some(34_752.0), Some(8e6)),
            " ± 35 kbit/s (96.2 % ± 0.4 %)"
        );
        // Older campaigns recorded no error.
        assert_eq!(goodput_note(7_700_000.0, None, Some(8e6)), " (96.2 %)");
        assert_eq!(goodput_note(7_700_000.0, None, None), "");
    }

    #[test]
    fn no_interval_is_na_in_html() {
        let nan = [f64::NAN, f64::NAN];
        assert_eq!(ci_text(nan, |v| format!("{v:.0}")), "n/a");
        assert_eq!(ci_text([1.0, 2.0], |v| format!("{v:+.1}")), "+1.0 – +2.0");
        assert_eq!(or_na(f64::NAN, |v| format!("{v:.0}")), "n/a");
    }
}
