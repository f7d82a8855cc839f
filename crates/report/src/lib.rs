//! Campaign reports: reads a campaign directory (experiment, probes.jsonl,
//! calibration.json, HARs) and writes `summary.csv` (one row per group of
//! Trials and protocol) and `report.html`, self-contained (inline SVG, no
//! network): gain against each swept axis with CI bands and the paper's
//! reference marks, PLT CDFs, heatmaps for two-axis sweeps, HAR phase bars, a
//! waterfall and the calibration table.

#![forbid(unsafe_code)]

pub mod loadtest;
pub mod loss;
mod svg;

use results::experiment::{self, Kind};
use results::stats::{mean, Summary};
use results::summary::{failure_note, or_na};
use results::{
    latest, point_key, read_calibration, read_probes, summarize_protocols, CalibrationEntry,
    Experiment, Point, ProbeRecord, EXPERIMENT_FILE,
};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use svg::{colour, esc, Bar, Mark, Series};

pub use results::{BenchRow, BENCH_FILE, REPORT_FILE, SUMMARY_FILE};

/// The columns of summary.csv, in order (documented in docs/experiments.md).
pub const SUMMARY_COLUMNS: &[&str] = &[
    "site",
    "point",
    "protocol",
    "n",
    "failed",
    "plt_mean_ms",
    "plt_median_ms",
    "plt_ci_lo_ms",
    "plt_ci_hi_ms",
    "tow_mean_ms",
    "tow_median_ms",
    "gain_pct",
    "gain_ci_lo",
    "gain_ci_hi",
    "tow_gain_pct",
    "connect_ms",
    "ssl_ms",
    "send_ms",
    "wait_ms",
    "receive_ms",
    "connections",
    "bytes_down",
    "metric",
    "plt_gain_pct",
    "tow_gain_ci_lo",
    "tow_gain_ci_hi",
];

/// The HAR phases drawn, with their colours (connect here excludes ssl).
const PHASES: &[(&str, &str)] = &[
    ("blocked", "#c7c7c7"),
    ("connect", "#ff9f40"),
    ("ssl", "#9467bd"),
    ("send", "#8c8c8c"),
    ("wait", "#2ca02c"),
    ("receive", "#1f77b4"),
];

pub struct Options {
    /// The Trial (its key, as in probes.jsonl) whose waterfall is drawn; by
    /// default the median probe of each protocol at the first point.
    pub waterfall: Option<String>,
}

/// One row of summary.csv.
#[derive(Debug, Clone)]
pub struct Row {
    pub point: Point,
    pub key: String,
    pub protocol: String,
    pub n: usize,
    pub failed: usize,
    pub plt: Summary,
    pub tow: Summary,
    /// Gain of the headline metric's mean (the experiment's `metric`: PLT or
    /// ToW) over the baseline's at the same point, with its 95 % bootstrap CI;
    /// None when this protocol or the baseline loaded nothing there.
    pub gain: Option<f64>,
    pub gain_ci: [f64; 2],
    pub tow_gain: Option<f64>,
    pub phases: BTreeMap<String, f64>,
    pub connections: Option<f64>,
    pub bytes_down: Option<f64>,
    /// Gain of mean PLT (whatever the headline), and ToW's CI.
    pub plt_gain: Option<f64>,
    pub tow_gain_ci: [f64; 2],
    /// The error of the group's first failed probe.
    pub first_error: Option<String>,
}

/// What `write` produced, for the command's closing lines.
pub struct Written {
    pub csv: PathBuf,
    pub html: PathBuf,
    pub rows: usize,
    pub probes: usize,
    pub failed: usize,
    pub missing: usize,
    pub headline: Vec<String>,
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// Reads DIR and writes DIR/summary.csv and DIR/report.html.
pub fn write(dir: &Path, opts: &Options) -> io::Result<Written> {
    let exp_path = dir.join(EXPERIMENT_FILE);
    let text = std::fs::read_to_string(&exp_path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "{}: {e} (is this a campaign directory?)",
                exp_path.display()
            ),
        )
    })?;
    let exp = experiment::parse(&exp_path.display().to_string(), &text)
        .map_err(|e| invalid(e.to_string()))?;
    let probes = latest(read_probes(dir, false)?);
    let calibration = read_calibration(dir)?;
    let rows = aggregate(&exp, &probes);

    let csv = dir.join(SUMMARY_FILE);
    std::fs::write(&csv, summary_csv(&exp, &rows))?;
    let headline = headline(&exp, &rows);
    let html = dir.join(REPORT_FILE);
    let expected = exp.trial_count();
    let failed = probes.iter().filter(|p| p.error.is_some()).count();
    let page = render(dir, &exp, &probes, &rows, &calibration, &headline, opts);
    std::fs::write(&html, page)?;
    Ok(Written {
        csv,
        html,
        rows: rows.len(),
        probes: probes.len(),
        failed,
        missing: expected.saturating_sub(probes.len()),
        headline,
    })
}

/// Groups the probes by point and protocol, in the experiment's order: each
/// group summarized by `results::summarize_protocols`, against the baseline.
pub fn aggregate(exp: &Experiment, probes: &[ProbeRecord]) -> Vec<Row> {
    let mut by_point: BTreeMap<String, Vec<&ProbeRecord>> = BTreeMap::new();
    for p in probes {
        by_point.entry(point_key(&p.point)).or_default().push(p);
    }
    let mut rows = Vec::new();
    for point in exp.points() {
        let key = point_key(&point);
        let Some(here) = by_point.get(&key) else {
            continue;
        };
        let summaries = summarize_protocols(exp.baseline, &exp.protocols, here);
        for s in &summaries {
            // The baseline's own gain is drawn and written as 0 (none when it
            // never loaded: then no protocol has a gain).
            let own = |g: Option<f64>, ci: [f64; 2]| -> (Option<f64>, [f64; 2]) {
                if s.protocol != exp.baseline {
                    (g, ci)
                } else if s.n > 0 {
                    (Some(0.0), [0.0, 0.0])
                } else {
                    (None, [f64::NAN, f64::NAN])
                }
            };
            let (gain, gain_ci) = own(exp.metric.gain(s).0, exp.metric.gain(s).1);
            let (plt_gain, _) = own(s.gain_pct, s.gain_ci95);
            let (tow_gain, tow_gain_ci) = own(s.tow_gain_pct, s.tow_gain_ci95);
            let good: Vec<&ProbeRecord> = here
                .iter()
                .copied()
                .filter(|p| p.protocol == s.protocol && p.error.is_none())
                .collect();
            let mut phases = BTreeMap::new();
            for (name, _) in PHASES {
                let v: Vec<f64> = good
                    .iter()
                    .map(|p| {
                        let get = |k: &str| p.phases.get(k).max(0.0);
                        if *name == "connect" {
                            (get("connect") - get("ssl")).max(0.0)
                        } else {
                            get(name)
                        }
                    })
                    .collect();
                phases.insert(name.to_string(), mean(&v));
            }
            rows.push(Row {
                point: point.clone(),
                key: key.clone(),
                protocol: s.protocol.name().to_string(),
                n: s.n,
                failed: s.failed,
                plt: s.plt_ms,
                tow: s.tow_ms,
                gain,
                gain_ci,
                tow_gain,
                phases,
                connections: s.connections,
                bytes_down: s.bytes_down,
                plt_gain,
                tow_gain_ci,
                first_error: s.first_error.clone(),
            });
        }
    }
    rows
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
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

/// A CSV number: empty when there is none (no finished probe, no interval).
fn num(v: impl Into<Option<f64>>) -> String {
    v.into()
        .filter(|v| v.is_finite())
        .map_or(String::new(), |v| format!("{:.3}", v + 0.0))
}

/// summary.csv: `site`, one column per swept axis, then SUMMARY_COLUMNS[1..].
fn summary_csv(exp: &Experiment, rows: &[Row]) -> String {
    let axes = swept_axes(exp);
    let mut header = vec![SUMMARY_COLUMNS[0].to_string()];
    header.extend(axes.iter().cloned());
    header.extend(SUMMARY_COLUMNS[1..].iter().map(|c| c.to_string()));
    let mut out = header.join(",");
    out.push('\n');
    for r in rows {
        let ph = |k: &str| num(r.phases.get(k).copied().unwrap_or(f64::NAN));
        let mut fields = vec![csv_field(r.point.get("site").map_or("", String::as_str))];
        fields.extend(
            axes.iter()
                .map(|a| csv_field(r.point.get(a).map_or("", String::as_str))),
        );
        fields.extend([
            csv_field(&r.key),
            r.protocol.clone(),
            r.n.to_string(),
            r.failed.to_string(),
            num(r.plt.mean),
            num(r.plt.median),
            num(r.plt.ci95[0]),
            num(r.plt.ci95[1]),
            num(r.tow.mean),
            num(r.tow.median),
            num(r.gain),
            num(r.gain_ci[0]),
            num(r.gain_ci[1]),
            num(r.tow_gain),
            ph("connect"),
            ph("ssl"),
            ph("send"),
            ph("wait"),
            ph("receive"),
            num(r.connections),
            num(r.bytes_down),
            exp.metric.name().to_string(),
            num(r.plt_gain),
            num(r.tow_gain_ci[0]),
            num(r.tow_gain_ci[1]),
        ]);
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

fn sites(exp: &Experiment) -> Vec<String> {
    exp.values("site").to_vec()
}

/// The swept axes other than the site.
fn swept_axes(exp: &Experiment) -> Vec<String> {
    exp.swept()
        .into_iter()
        .filter(|a| *a != "site")
        .map(String::from)
        .collect()
}

fn kind(axis: &str) -> Kind {
    experiment::field(axis).map_or(Kind::Site, |f| f.kind)
}

/// The x position of an axis value: its magnitude, or its index for categories.
fn x_of(exp: &Experiment, axis: &str, value: &str) -> f64 {
    experiment::magnitude(kind(axis), value).unwrap_or_else(|| {
        exp.values(axis)
            .iter()
            .position(|v| v == value)
            .unwrap_or(0) as f64
    })
}

fn axis_label(axis: &str) -> String {
    match kind(axis) {
        Kind::Duration => format!("{axis} (ms)"),
        Kind::Rate => format!("{axis} (bit/s)"),
        Kind::Loss => format!("{axis} (%)"),
        _ => axis.to_string(),
    }
}

fn log_axis(exp: &Experiment, axis: &str) -> bool {
    let xs: Vec<f64> = exp
        .values(axis)
        .iter()
        .filter_map(|v| experiment::magnitude(kind(axis), v))
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
    matches!(kind(axis), Kind::Rate) && lo > 0.0 && hi / lo >= 8.0
}

fn x_ticks(exp: &Experiment, axis: &str) -> Vec<(f64, String)> {
    let values = exp.values(axis);
    let step = values.len().div_ceil(13).max(1);
    values
        .iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0 || *i == values.len() - 1)
        .map(|(_, v)| (x_of(exp, axis, v), v.clone()))
        .collect()
}

/// The headline metric in words, the other named beside it.
fn metric_words(m: results::Metric) -> &'static str {
    match m {
        results::Metric::Plt => "PLT (page load time; ToW beside it in summary.csv)",
        results::Metric::Tow => {
            "ToW (time on wire: first request packet to last response packet, 004's metric; PLT beside it)"
        }
    }
}

/// Mean gain per site and protocol over the sweep, with the range of group gains.
fn headline(exp: &Experiment, rows: &[Row]) -> Vec<String> {
    let mut out = Vec::new();
    for site in sites(exp) {
        for proto in exp.protocols.iter().filter(|p| **p != exp.baseline) {
            let here: Vec<&Row> = rows
                .iter()
                .filter(|r| r.protocol == proto.name() && r.point.get("site") == Some(&site))
                .collect();
            let gains: Vec<f64> = here.iter().filter_map(|r| r.gain).collect();
            if gains.is_empty() {
                if !here.is_empty() {
                    out.push(format!(
                        "{site}: {proto} over {}: n/a (no point where both loaded)",
                        exp.baseline
                    ));
                }
                continue;
            }
            let (lo, hi) = gains
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), g| {
                    (a.min(*g), b.max(*g))
                });
            let mut line = format!(
                "{site}: {proto} over {}: mean {} gain {:+.1} % over {} point(s) (from {:+.1} to {:+.1})",
                exp.baseline,
                exp.metric.label(),
                mean(&gains),
                gains.len(),
                lo,
                hi
            );
            for r in exp.references.iter().filter(|r| {
                r.site.as_deref() == Some(site.as_str())
                    && r.axis.is_none()
                    && r.protocol.as_deref().is_none_or(|p| p == proto.name())
            }) {
                let _ = write!(line, "; {}: {:+.2} %", r.label, r.gain_pct);
            }
            out.push(line);
        }
    }
    // Points the paper named (e.g. 490 ms for YouTube), and averages over all sites.
    for r in &exp.references {
        let matching = |row: &Row| {
            r.site
                .as_deref()
                .is_none_or(|s| row.point.get("site").map(String::as_str) == Some(s))
                && r.protocol.as_deref().is_none_or(|p| p == row.protocol)
                && row.protocol != exp.baseline.name()
                && row.n > 0
                && match (&r.axis, &r.at) {
                    (Some(a), Some(at)) => {
                        let want = experiment::canonical(kind(a), at).unwrap_or_default();
                        row.point.get(a.as_str()) == Some(&want)
                    }
                    _ => true,
                }
        };
        if r.axis.is_none() && r.site.is_some() {
            continue; // in the per-site lines above
        }
        let gains: Vec<f64> = rows
            .iter()
            .filter(|row| matching(row))
            .filter_map(|row| row.gain)
            .collect();
        if gains.is_empty() {
            continue;
        }
        out.push(format!(
            "{}{}{}: ours {:+.1} % (mean of {} group(s)), {} {:+.2} %",
            r.site.as_deref().unwrap_or("all sites"),
            r.axis.as_ref().map_or(String::new(), |a| format!(
                " at {a}={}",
                r.at.as_deref().unwrap_or("")
            )),
            r.protocol
                .as_ref()
                .map_or(String::new(), |p| format!(" ({p})")),
            mean(&gains),
            gains.len(),
            r.label,
            r.gain_pct
        ));
    }
    out
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

struct Html {
    body: String,
    plots: usize,
    toc: Vec<(String, String)>,
}

impl Html {
    fn section(&mut self, id: &str, title: &str) {
        let _ = write!(self.body, r#"<h2 id="{id}">{}</h2>"#, esc(title));
        self.toc.push((id.to_string(), title.to_string()));
    }
    fn figure(&mut self, svg: String, caption: &str) {
        self.plots += 1;
        let _ = write!(
            self.body,
            "<figure>{svg}<figcaption>{}</figcaption></figure>",
            esc(caption)
        );
    }
    fn p(&mut self, text: &str) {
        let _ = write!(self.body, "<p>{}</p>", esc(text));
    }
}

#[allow(clippy::too_many_arguments)]
fn render(
    dir: &Path,
    exp: &Experiment,
    probes: &[ProbeRecord],
    rows: &[Row],
    calibration: &[CalibrationEntry],
    headline: &[String],
    opts: &Options,
) -> String {
    let mut h = Html {
        body: String::new(),
        plots: 0,
        toc: Vec::new(),
    };
    let others: Vec<String> = exp
        .protocols
        .iter()
        .filter(|p| **p != exp.baseline)
        .map(|p| p.name().to_string())
        .collect();
    let all: Vec<String> = exp.protocols.iter().map(|p| p.name().to_string()).collect();
    let axes = swept_axes(exp);
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

    for site in sites(exp) {
        for axis in &axes {
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
                &site,
                axis,
                &|r| r.gain.map(|g| (g, r.gain_ci[0], r.gain_ci[1])),
                &others,
            );
            let marks = reference_marks(exp, &site, Some(axis));
            h.figure(
                svg::line_chart(
                    &format!("{site}: gain of mean {} over {} against {axis}", exp.metric.label(), exp.baseline),
                    &axis_label(axis),
                    &format!("gain over {} (%)", exp.baseline),
                    &x_ticks(exp, axis),
                    log_axis(exp, axis),
                    &series,
                    &marks,
                    true,
                ),
                &format!("Gain of mean {} over {} with 95 % bootstrap bands; diamonds and dashed lines are the paper's numbers.{averaged}", metric_words(exp.metric), exp.baseline),
            );
            let series = gain_series(
                exp,
                rows,
                &site,
                axis,
                &|r| Some((r.plt.mean, r.plt.ci95[0], r.plt.ci95[1])),
                &all,
            );
            h.figure(
                svg::line_chart(
                    &format!("{site}: PLT against {axis}"),
                    &axis_label(axis),
                    "mean PLT (ms)",
                    &x_ticks(exp, axis),
                    log_axis(exp, axis),
                    &series,
                    &[],
                    true,
                ),
                &format!("Mean page load time per protocol with 95 % CI bands.{averaged}"),
            );
        }
        if axes.len() == 2 {
            let (row_axis, col_axis) = (&axes[0], &axes[1]);
            for proto in &others {
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
                                && x.point.get("site") == Some(&site)
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
        h.section(&format!("cdf-{site}"), &format!("{site}: PLT distribution"));
        let series: Vec<(String, String, Vec<f64>)> = all
            .iter()
            .map(|p| {
                let v: Vec<f64> = probes
                    .iter()
                    .filter(|x| {
                        x.protocol.name() == p
                            && x.error.is_none()
                            && x.point.get("site") == Some(&site)
                    })
                    .map(|x| x.plt_ms)
                    .collect();
                (p.clone(), colour(p).to_string(), v)
            })
            .collect();
        h.figure(
            svg::cdf_chart(&format!("{site}: CDF of PLT"), "PLT (ms)", &series),
            &if axes.is_empty() {
                "CDF of page load time per protocol.".to_string()
            } else {
                "CDF of page load time per protocol, pooled over every point of the sweep."
                    .to_string()
            },
        );
        h.section(
            &format!("phases-{site}"),
            &format!("{site}: where the time goes"),
        );
        let phase_rows: Vec<(String, Vec<(String, f64)>)> = all
            .iter()
            .map(|p| {
                let here: Vec<&Row> = rows
                    .iter()
                    .filter(|r| r.protocol == *p && r.point.get("site") == Some(&site) && r.n > 0)
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
            for p in &others {
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

    h.section("waterfall", "Waterfall");
    waterfalls(&mut h, dir, exp, probes, rows, opts);

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

    if failed > 0 {
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

    h.section("table", "All groups");
    let _ = write!(h.body, "<table><tr><th>point</th><th>protocol</th><th>n</th><th>failed</th><th>PLT mean (ms)</th><th>95 % CI</th><th>median</th><th>{} gain (%)</th><th>95 % CI</th><th>ToW mean (ms)</th><th>{} gain (%)</th></tr>", exp.metric.label(), exp.metric.other().label());
    for r in rows {
        let other = match exp.metric {
            results::Metric::Plt => r.tow_gain,
            results::Metric::Tow => r.plt_gain,
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

    page(&exp.name, &exp.description, &h, dir)
}

/// The HTML page around a report's body: style, contents, and the render check.
fn page(name: &str, description: &str, h: &Html, dir: &Path) -> String {
    let toc: String = h
        .toc
        .iter()
        .map(|(id, t)| format!(r##"<li><a href="#{id}">{}</a></li>"##, esc(t)))
        .collect();
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>spdylab — {name}</title>
<style>
body {{ font-family: sans-serif; max-width: 60rem; margin: 1.5rem auto; padding: 0 1rem; color: #222; }}
h1 {{ font-size: 1.5rem; }} h2 {{ font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }}
figure {{ margin: 1rem 0; }} figcaption {{ font-size: 0.85rem; color: #555; max-width: 40rem; }}
svg {{ max-width: 100%; height: auto; }}
table {{ border-collapse: collapse; font-size: 0.8rem; }} td, th {{ border: 1px solid #ddd; padding: 2px 6px; text-align: right; }}
td:first-child {{ text-align: left; }}
nav ul {{ columns: 2; font-size: 0.85rem; }}
@media print {{ nav {{ display: none; }} figure, table {{ break-inside: avoid; }} body {{ max-width: none; }} }}
</style></head>
<body data-plots="{plots}">
<h1>spdylab: {name}</h1>
<p>{description}</p>
<nav><ul>{toc}</ul></nav>
{body}
<p><small>Written by spdylab {version} from {dir}.</small></p>
<script>
window.addEventListener("load", function () {{
  var plots = document.querySelectorAll("svg.plot"), drawn = 0;
  plots.forEach(function (s) {{
    var r = s.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && s.querySelector("path, rect, circle, line")) drawn++;
  }});
  document.body.setAttribute("data-rendered", String(drawn));
}});
</script>
</body></html>
"#,
        name = esc(name),
        description = esc(description),
        plots = h.plots,
        toc = toc,
        body = &h.body,
        version = env!("CARGO_PKG_VERSION"),
        dir = esc(&dir.display().to_string()),
    )
}

/// Milliseconds since the epoch from a HAR date (`2026-11-23T10:11:12.345Z`).
fn har_ms(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if b.len() < 20 {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (n(0..4)?, n(5..7)?, n(8..10)?);
    let (hh, mm, ss) = (n(11..13)?, n(14..16)?, n(17..19)?);
    let frac: f64 = s
        .get(19..s.len() - 1)
        .and_then(|f| format!("0{f}").parse().ok())
        .unwrap_or(0.0);
    // Days from civil (H. Hinnant).
    let y = if mo <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if mo > 2 { mo - 3 } else { mo + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 86_400 + hh * 3600 + mm * 60 + ss) as f64 + frac) * 1e3)
}

fn waterfalls(
    h: &mut Html,
    dir: &Path,
    exp: &Experiment,
    probes: &[ProbeRecord],
    rows: &[Row],
    opts: &Options,
) {
    let chosen: Vec<&ProbeRecord> = match &opts.waterfall {
        Some(trial) => probes.iter().filter(|p| p.trial == *trial).collect(),
        None => {
            // The first point with results: each protocol's median probe.
            let Some(first) = rows.iter().find(|r| r.n > 0) else {
                h.p("No probe finished yet.");
                return;
            };
            exp.protocols
                .iter()
                .filter_map(|proto| {
                    let mut here: Vec<&ProbeRecord> = probes
                        .iter()
                        .filter(|p| {
                            p.protocol == *proto
                                && p.error.is_none()
                                && point_key(&p.point) == first.key
                        })
                        .collect();
                    here.sort_by(|a, b| a.plt_ms.total_cmp(&b.plt_ms));
                    here.get(here.len().saturating_sub(1) / 2).copied()
                })
                .collect()
        }
    };
    if chosen.is_empty() {
        h.p(&format!(
            "No probe matches {}.",
            opts.waterfall.as_deref().unwrap_or("")
        ));
        return;
    }
    for p in chosen {
        let Some(har) = &p.har else {
            h.p(&format!(
                "{}: no HAR kept (the sweep ran with --no-har).",
                p.trial
            ));
            continue;
        };
        let doc: Option<Value> = std::fs::read_to_string(dir.join(har))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let Some(doc) = doc else {
            h.p(&format!("{}: {har} is missing or unreadable.", p.trial));
            continue;
        };
        let page_start = doc["log"]["pages"][0]["startedDateTime"]
            .as_str()
            .and_then(har_ms)
            .unwrap_or(0.0);
        let bars: Vec<Bar> = doc["log"]["entries"]
            .as_array()
            .map(|entries| {
                entries
                    .iter()
                    .map(|e| {
                        let start = e["_startedMs"].as_f64().unwrap_or_else(|| {
                            e["startedDateTime"]
                                .as_str()
                                .and_then(har_ms)
                                .map_or(0.0, |t| t - page_start)
                        });
                        let t = &e["timings"];
                        let get = |k: &str| t[k].as_f64().unwrap_or(-1.0).max(0.0);
                        let phases = PHASES
                            .iter()
                            .map(|(name, _)| {
                                let v = if *name == "connect" {
                                    (get("connect") - get("ssl")).max(0.0)
                                } else {
                                    get(name)
                                };
                                (name.to_string(), v)
                            })
                            .collect();
                        Bar {
                            label: e["request"]["url"].as_str().unwrap_or("").to_string(),
                            start,
                            phases,
                        }
                    })
                    .collect()
            })
            .unwrap_or_default();
        h.figure(
            svg::waterfall(
                &format!("{} — PLT {:.0} ms", p.trial, p.plt_ms),
                &bars,
                PHASES,
            ),
            &format!(
                "Requests of {} ({}, PLT {:.0} ms), from its HAR ({har}).",
                point_key(&p.point),
                p.protocol,
                p.plt_ms
            ),
        );
    }
}

/// Writes DIR/pipelining.csv and DIR/report.html for a throughput matrix.
pub fn write_bench(dir: &Path, title: &str, about: &str, rows: &[BenchRow]) -> io::Result<PathBuf> {
    let mut csv = String::from("server,file,protocol,depth,requests_per_sec,p50_ms,p99_ms,p999_ms,errors,generator_cpu_s,server_cpu_s,skipped\n");
    for r in rows {
        let _ = writeln!(
            csv,
            "{},{},{},{},{:.0},{:.3},{:.3},{:.3},{},{:.2},{:.2},{}",
            r.server,
            csv_field(&r.file),
            r.protocol,
            r.depth,
            r.requests_per_sec,
            r.p50_ms,
            r.p99_ms,
            r.p999_ms,
            r.errors,
            r.generator_cpu_s,
            r.server_cpu_s,
            csv_field(r.skipped.as_deref().unwrap_or(""))
        );
    }
    std::fs::write(dir.join(results::BENCH_FILE), csv)?;
    let mut h = Html {
        body: String::new(),
        plots: 0,
        toc: Vec::new(),
    };
    let mut files: Vec<&str> = rows.iter().map(|r| r.file.as_str()).collect();
    files.dedup();
    for file in files {
        h.section(
            &format!("rps-{}", h.toc.len()),
            &format!("Requests per second: {file}"),
        );
        let bars: Vec<(String, Vec<(String, f64)>)> = rows
            .iter()
            .filter(|r| r.file == file && r.skipped.is_none())
            .map(|r| {
                let label = if r.depth > 1 {
                    format!("{} {} ×{}", r.server, r.protocol, r.depth)
                } else {
                    format!("{} {}", r.server, r.protocol)
                };
                (label, vec![(r.server.clone(), r.requests_per_sec)])
            })
            .collect();
        let palette = [("builtin", "#2ca02c"), ("nginx", "#1f77b4")];
        h.figure(
            svg::stacked_bars(
                &format!("requests/s, {file}"),
                "requests per second",
                &bars,
                &palette,
            ),
            "Closed loop; every response checked (status and length).",
        );
    }
    h.section("table", "All runs");
    h.body.push_str("<table><tr><th>server</th><th>file</th><th>protocol</th><th>depth/streams</th><th>req/s</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>errors</th><th>generator CPU s</th><th>server CPU s</th></tr>");
    for r in rows {
        match &r.skipped {
            Some(why) => {
                let _ = write!(h.body, "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td colspan=\"7\">not measured: {}</td></tr>", esc(&r.server), esc(&r.file), esc(&r.protocol), r.depth, esc(why));
            }
            None => {
                let _ = write!(
                    h.body,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td><td>{:.2}</td><td>{:.2}</td></tr>",
                    esc(&r.server), esc(&r.file), esc(&r.protocol), r.depth, r.requests_per_sec, r.p50_ms, r.p99_ms, r.p999_ms, r.errors, r.generator_cpu_s, r.server_cpu_s
                );
            }
        }
    }
    h.body.push_str("</table>");
    let page = page(title, about, &h, dir);
    let path = dir.join(REPORT_FILE);
    std::fs::write(&path, page)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn har_dates_parse() {
        assert_eq!(har_ms("1970-01-01T00:00:01.500Z"), Some(1500.0));
        assert_eq!(
            har_ms("2026-11-23T00:00:00.123Z"),
            Some(1_795_392_000_123.0)
        );
    }

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
    fn no_interval_is_na_in_html_and_empty_in_csv() {
        let nan = [f64::NAN, f64::NAN];
        assert_eq!(ci_text(nan, |v| format!("{v:.0}")), "n/a");
        assert_eq!(ci_text([1.0, 2.0], |v| format!("{v:+.1}")), "+1.0 – +2.0");
        assert_eq!(or_na(f64::NAN, |v| format!("{v:.0}")), "n/a");
        assert_eq!(num(f64::NAN), "");
    }

    #[test]
    fn a_loss_sweeps_report_has_the_loss_section() {
        let (exp, probes) = loss::tests::fixture();
        let rows = aggregate(&exp, &probes);
        let headline = headline(&exp, &rows);
        let opts = Options { waterfall: None };
        let page = render(
            Path::new("/nonexistent"),
            &exp,
            &probes,
            &rows,
            &[],
            &headline,
            &opts,
        );
        assert!(page.contains(r#"<h2 id="loss-youtube">youtube: protocols under loss</h2>"#));
        assert!(page.contains("h3 over h2: +19.9 %"), "the trend sentence");
        assert!(page.contains("<table class=\"loss\">"));
        // The section's plot counts among the page's plots, once.
        assert_eq!(page.matches("gain of mean PLT against loss").count(), 1);
        // The rest of the report is still there.
        assert!(page.contains(r#"id="table""#));
    }

    /// An RTT sweep of https and h2, two repetitions: at 20ms every h2 probe
    /// failed, at 50ms every https probe (the baseline), at 150ms one h2 probe.
    fn failures_fixture() -> (Experiment, Vec<ProbeRecord>) {
        let exp = experiment::parse(
            "fail.toml",
            "name = \"f\"\nsites = [\"youtube\"]\nprotocols = [\"https\", \"h2\"]\nreps = 2\n[link]\nrtt = [\"20ms\", \"50ms\", \"150ms\"]\nrate = \"1mbit\"\n",
        )
        .unwrap();
        let mut probes = Vec::new();
        for point in exp.points() {
            for rep in 0..2 {
                for proto in ["https", "h2"] {
                    let error = match (point["rtt"].as_str(), proto, rep) {
                        ("20ms", "h2", _) => Some(format!("h2: stream {} refused", 2 * rep + 3)),
                        ("50ms", "https", _) => Some("connect: timed out".to_string()),
                        ("150ms", "h2", 1) => Some("h2: GOAWAY".to_string()),
                        _ => None,
                    };
                    let plt = if proto == "h2" {
                        800.0 + rep as f64 * 10.0
                    } else {
                        1000.0
                    };
                    let line = serde_json::json!({
                        "trial": format!("{} protocol={proto} rep={rep}", point_key(&point)),
                        "point": point,
                        "protocol": proto,
                        "rep": rep,
                        "plt_ms": if error.is_some() { 0.0 } else { plt },
                        "tow_ms": if error.is_some() { 0.0 } else { plt - 100.0 },
                        "bytes_down": if error.is_some() { 0 } else { 250_000 },
                        "connections": if error.is_some() { 0 } else { 2 },
                        "error": error,
                    });
                    probes.push(serde_json::from_value(line).unwrap());
                }
            }
        }
        (exp, probes)
    }

    #[test]
    fn a_group_that_loaded_nothing_has_no_figures_and_no_gain() {
        let (exp, probes) = failures_fixture();
        let rows = aggregate(&exp, &probes);
        let at = |rtt: &str, proto: &str| {
            rows.iter()
                .find(|r| r.point["rtt"] == rtt && r.protocol == proto)
                .unwrap()
        };
        // Every h2 probe failed: no gain (it was +100 %, over a mean of -0 ms).
        let h2 = at("20ms", "h2");
        assert_eq!(
            (h2.n, h2.failed, h2.gain, h2.plt_gain, h2.tow_gain),
            (0, 2, None, None, None)
        );
        assert_eq!((h2.bytes_down, h2.connections), (None, None));
        assert_eq!(h2.first_error.as_deref(), Some("h2: stream 3 refused"));
        // The baseline failed: it has no gain over itself, and h2 none over it.
        assert_eq!(at("50ms", "https").gain, None);
        assert_eq!(at("50ms", "h2").gain, None);
        assert_eq!(at("50ms", "h2").plt.mean, 805.0);
        // One h2 probe failed: the other's figures and gain stand.
        assert_eq!(at("150ms", "h2").gain, Some(20.0));
        assert_eq!(at("20ms", "https").gain, Some(0.0));

        let csv = summary_csv(&exp, &rows);
        assert!(
            !loss::tests::negative_zero(&csv) && !csv.contains("NaN"),
            "{csv}"
        );
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let cell = |rtt: &str, proto: &str, column: &str| -> String {
            let i = header.iter().position(|c| *c == column).unwrap();
            let line = csv
                .lines()
                .find(|l| {
                    l.starts_with(&format!("youtube,{rtt},")) && l.contains(&format!(",{proto},"))
                })
                .unwrap();
            line.split(',').nth(i).unwrap().to_string()
        };
        for column in [
            "gain_pct",
            "tow_gain_pct",
            "plt_gain_pct",
            "plt_mean_ms",
            "bytes_down",
            "connect_ms",
        ] {
            assert_eq!(cell("20ms", "h2", column), "", "{column}\n{csv}");
        }
        assert_eq!(cell("50ms", "h2", "gain_pct"), "", "{csv}");
        assert_eq!(cell("50ms", "https", "gain_pct"), "", "{csv}");
        assert_eq!(cell("50ms", "h2", "plt_mean_ms"), "805.000", "{csv}");
        assert_eq!(cell("150ms", "h2", "gain_pct"), "20.000", "{csv}");

        let headline = headline(&exp, &rows);
        assert_eq!(
            headline[0],
            "youtube: h2 over https: mean PLT gain +20.0 % over 1 point(s) (from +20.0 to +20.0)"
        );
        let page = render(
            Path::new("/nonexistent"),
            &exp,
            &probes,
            &rows,
            &[],
            &headline,
            &Options { waterfall: None },
        );
        let table = &page[page.find(r#"<h2 id="table">"#).unwrap()..];
        assert!(
            table.contains("<td>h2</td><td>0</td><td>all 2 failed: h2: stream 3 refused</td><td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td></tr>"),
            "{table}"
        );
        assert!(
            table.contains(
                "<td>https</td><td>0</td><td>all 2 failed: connect: timed out</td><td>n/a</td>"
            ),
            "{table}"
        );
        assert!(
            table.contains("<td>h2</td><td>1</td><td>1</td><td>800</td>"),
            "{table}"
        );
        assert!(
            table.contains("n/a gain: the protocol or the baseline loaded nothing"),
            "{table}"
        );
        assert!(
            !loss::tests::negative_zero(&page),
            "-0 in the page: {table}"
        );
        for bad in ["NaN", "+100"] {
            assert!(!page.contains(bad), "{bad} in the page: {table}");
        }
    }

    #[test]
    fn a_protocol_that_never_loaded_is_said_so_in_the_headline() {
        let (exp, mut probes) = failures_fixture();
        for p in probes
            .iter_mut()
            .filter(|p| p.protocol == results::Protocol::H2)
        {
            p.error = Some("h2: refused".into());
        }
        let rows = aggregate(&exp, &probes);
        assert!(rows
            .iter()
            .all(|r| r.gain.is_none() || r.protocol == "https"));
        assert_eq!(
            headline(&exp, &rows),
            ["youtube: h2 over https: n/a (no point where both loaded)"]
        );
    }

    #[test]
    fn csv_fields_are_quoted() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("x\"y"), "\"x\"\"y\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
