//! Plots as inline SVG, written by hand so that a report needs no library, no
//! script and no network: line charts with confidence bands and reference
//! marks, CDFs, heatmaps, stacked bars (one row each, or upright in groups
//! along an axis), a request waterfall and step curves (visual progress).
//!
//! Every plot is `WIDTH` units wide and drawn at the page's width (`svg.plot`
//! is 100 % wide, at most 1100 px: html.rs), so that its text, 12–13 units,
//! reads at 12 px and more wherever the page is 880 px wide or more.

use std::fmt::Write;

pub const WIDTH: f64 = 880.0;
pub const HEIGHT: f64 = 360.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 48.0;

/// A protocol's colour, the same in every plot.
pub fn colour(protocol: &str) -> &'static str {
    match protocol {
        "https" => "#1f77b4",
        "h2" => "#d62728",
        "spdy3" => "#2ca02c",
        "http" => "#7f7f7f",
        "h2c" => "#ff7f0e",
        "http-pipelined" => "#9467bd",
        "https-pipelined" => "#8c564b",
        "h3" => "#e377c2",
        _ => "#17becf",
    }
}

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// "Nice" tick values covering [lo, hi].
fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-9 {
        out.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    out
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 1e9 && (v / 1e9).fract() == 0.0 {
        format!("{}G", v / 1e9)
    } else if v.abs() >= 1e6 && (v / 1e6).fract() == 0.0 {
        format!("{}M", v / 1e6)
    } else if v.abs() >= 1e4 && (v / 1e3).fract() == 0.0 {
        format!("{}k", v / 1e3)
    } else if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        let s = format!("{v:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Maps data to the plot area.
struct Frame {
    x: (f64, f64),
    y: (f64, f64),
    log_x: bool,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        let (a, b, v) = if self.log_x {
            (self.x.0.ln(), self.x.1.ln(), x.max(1e-300).ln())
        } else {
            (self.x.0, self.x.1, x)
        };
        let span = if b > a { b - a } else { 1.0 };
        LEFT + (v - a) / span * (WIDTH - LEFT - RIGHT)
    }
    fn py(&self, y: f64) -> f64 {
        let span = if self.y.1 > self.y.0 {
            self.y.1 - self.y.0
        } else {
            1.0
        };
        HEIGHT - BOTTOM - (y - self.y.0) / span * (HEIGHT - TOP - BOTTOM)
    }

    /// Axes, grid, tick labels and titles.
    fn axes(&self, out: &mut String, x_label: &str, y_label: &str, x_ticks: &[(f64, String)]) {
        let (x0, x1) = (LEFT, WIDTH - RIGHT);
        let (y0, y1) = (HEIGHT - BOTTOM, TOP);
        for t in ticks(self.y.0, self.y.1, 5) {
            let y = self.py(t);
            let _ = write!(
                out,
                r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end" font-size="12">{}</text>"##,
                x0 - 4.0,
                y + 4.0,
                fmt_num(t)
            );
        }
        for (t, label) in x_ticks {
            let x = self.px(*t);
            let _ = write!(
                out,
                r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{:.1}" stroke="#888"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"##,
                y0 + 4.0,
                y0 + 16.0,
                esc(label)
            );
        }
        let _ = write!(
            out,
            r##"<rect x="{x0}" y="{y1}" width="{:.1}" height="{:.1}" fill="none" stroke="#888"/><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text><text transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle" font-size="13">{}</text>"##,
            x1 - x0,
            y0 - y1,
            (x0 + x1) / 2.0,
            HEIGHT - 8.0,
            esc(x_label),
            (y0 + y1) / 2.0,
            esc(y_label)
        );
        if self.y.0 < 0.0 && self.y.1 > 0.0 {
            let y = self.py(0.0);
            let _ = write!(
                out,
                r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#444" stroke-width="1"/>"##
            );
        }
    }
}

fn open(out: &mut String, title: &str) {
    let _ = write!(
        out,
        r##"<svg class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" font-family="sans-serif"><title>{}</title>"##,
        esc(title)
    );
}

/// How a legend entry is drawn.
#[derive(Clone, Copy, PartialEq)]
enum Key {
    Line,
    Dashed,
    Diamond,
    /// A filled square, for what fills an area (a bar's segment).
    Swatch,
}

fn legend(out: &mut String, entries: &[(String, String, Key)]) {
    for (i, (name, colour, key)) in entries.iter().enumerate() {
        let y = TOP + 10.0 + i as f64 * 18.0;
        let x = WIDTH - RIGHT + 10.0;
        let _ = match key {
            Key::Swatch => write!(
                out,
                r#"<rect x="{:.1}" y="{:.1}" width="12" height="10" fill="{colour}"/>"#,
                x + 3.0,
                y - 5.0
            ),
            Key::Diamond => write!(
                out,
                r#"<path d="M{:.1},{:.1} l5,5 l-5,5 l-5,-5 Z" fill="white" stroke="{colour}" stroke-width="1.5"/>"#,
                x + 9.0,
                y - 5.0
            ),
            Key::Line | Key::Dashed => write!(
                out,
                r#"<line x1="{x}" y1="{y}" x2="{:.1}" y2="{y}" stroke="{colour}" stroke-width="2"{}/>"#,
                x + 18.0,
                if *key == Key::Dashed {
                    r#" stroke-dasharray="4 3""#
                } else {
                    ""
                }
            ),
        };
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" font-size="12">{}</text>"#,
            x + 22.0,
            y + 4.0,
            esc(name)
        );
    }
}

/// One line of a line chart: points (x, y, CI low, CI high).
pub struct Series {
    pub name: String,
    pub colour: String,
    pub points: Vec<(f64, f64, f64, f64)>,
}

/// A mark from a paper: a point at x, or (x None) a dashed horizontal line.
pub struct Mark {
    pub label: String,
    pub x: Option<f64>,
    pub y: f64,
    pub colour: String,
}

fn finite_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let mut r: Option<(f64, f64)> = None;
    for v in values.filter(|v| v.is_finite()) {
        r = Some(match r {
            None => (v, v),
            Some((a, b)) => (a.min(v), b.max(v)),
        });
    }
    r
}

/// The range with a margin; with `include_zero`, a range that is never
/// negative starts at 0 (a loss, a PLT is not drawn below it).
fn pad((lo, hi): (f64, f64), include_zero: bool) -> (f64, f64) {
    let (lo, hi) = if include_zero {
        (lo.min(0.0), hi.max(0.0))
    } else {
        (lo, hi)
    };
    let span = if hi > lo { hi - lo } else { hi.abs().max(1.0) };
    let floor = if include_zero && lo >= 0.0 {
        0.0
    } else {
        lo - span * 0.06
    };
    (floor, hi + span * 0.06)
}

/// A line chart with CI bands; x ticks at the swept values.
#[allow(clippy::too_many_arguments)]
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    x_ticks: &[(f64, String)],
    log_x: bool,
    series: &[Series],
    marks: &[Mark],
    include_zero: bool,
) -> String {
    chart(
        title,
        x_label,
        y_label,
        x_ticks,
        log_x,
        series,
        marks,
        include_zero,
        false,
    )
}

/// A line chart with a CI bar (with caps) at each point instead of a band;
/// the series are nudged apart sideways so that their bars do not overlap.
pub fn error_bar_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    x_ticks: &[(f64, String)],
    series: &[Series],
) -> String {
    chart(
        title,
        x_label,
        y_label,
        x_ticks,
        false,
        series,
        &[],
        true,
        true,
    )
}

#[allow(clippy::too_many_arguments)]
fn chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    x_ticks: &[(f64, String)],
    log_x: bool,
    series: &[Series],
    marks: &[Mark],
    include_zero: bool,
    bars: bool,
) -> String {
    let xs = finite_range(x_ticks.iter().map(|t| t.0)).unwrap_or((0.0, 1.0));
    let ys = finite_range(
        series
            .iter()
            .flat_map(|s| s.points.iter().flat_map(|p| [p.1, p.2, p.3]))
            .chain(marks.iter().map(|m| m.y)),
    )
    .unwrap_or((0.0, 1.0));
    let xs = if xs.1 > xs.0 {
        xs
    } else {
        (xs.0 - 1.0, xs.0 + 1.0)
    };
    let xs = if log_x {
        (xs.0 / 1.15, xs.1 * 1.15)
    } else {
        let s = (xs.1 - xs.0) * 0.04;
        (xs.0 - s, xs.1 + s)
    };
    let f = Frame {
        x: xs,
        y: pad(ys, include_zero),
        log_x,
    };
    let mut out = String::new();
    open(&mut out, title);
    f.axes(&mut out, x_label, y_label, x_ticks);
    for (si, s) in series.iter().enumerate() {
        let band: Vec<&(f64, f64, f64, f64)> = s
            .points
            .iter()
            .filter(|p| p.2.is_finite() && p.3.is_finite())
            .collect();
        // Bars: each series nudged sideways by a few pixels.
        let dx = if bars {
            (si as f64 - (series.len() as f64 - 1.0) / 2.0) * 5.0
        } else {
            0.0
        };
        if bars {
            for p in &band {
                let (x, lo, hi) = (f.px(p.0) + dx, f.py(p.2), f.py(p.3));
                let _ = write!(
                    out,
                    r#"<path d="M{x:.1},{lo:.1} L{x:.1},{hi:.1} M{:.1},{lo:.1} L{:.1},{lo:.1} M{:.1},{hi:.1} L{:.1},{hi:.1}" stroke="{}" stroke-width="1.2" fill="none"/>"#,
                    x - 3.0,
                    x + 3.0,
                    x - 3.0,
                    x + 3.0,
                    s.colour
                );
            }
        } else {
            // The band between the intervals' ends, filled and edged, and a
            // whisker with caps at each point: at 3 repetitions a wide band
            // of three overlapping protocols is still told apart by them
            // (nudged sideways by a few pixels per series).
            if band.len() > 1 {
                let (mut d, mut hi, mut lo) = (String::new(), String::new(), String::new());
                for (i, p) in band.iter().enumerate() {
                    let m = if i == 0 { "M" } else { "L" };
                    let _ = write!(d, "{m}{:.1},{:.1} ", f.px(p.0), f.py(p.3));
                    let _ = write!(hi, "{m}{:.1},{:.1} ", f.px(p.0), f.py(p.3));
                    let _ = write!(lo, "{m}{:.1},{:.1} ", f.px(p.0), f.py(p.2));
                }
                for p in band.iter().rev() {
                    let _ = write!(d, "L{:.1},{:.1} ", f.px(p.0), f.py(p.2));
                }
                let _ = write!(
                    out,
                    r#"<path d="{d}Z" fill="{c}" fill-opacity="0.22" stroke="none"/><path d="{hi}{lo}" fill="none" stroke="{c}" stroke-opacity="0.55" stroke-width="1" stroke-dasharray="3 2"/>"#,
                    c = s.colour
                );
            }
            let nudge = (si as f64 - (series.len() as f64 - 1.0) / 2.0) * 4.0;
            for p in &band {
                let (x, lo, hi) = (f.px(p.0) + nudge, f.py(p.2), f.py(p.3));
                let _ = write!(
                    out,
                    r#"<path d="M{x:.1},{lo:.1} L{x:.1},{hi:.1} M{:.1},{lo:.1} L{:.1},{lo:.1} M{:.1},{hi:.1} L{:.1},{hi:.1}" stroke="{}" stroke-width="1.6" fill="none"/>"#,
                    x - 4.0,
                    x + 4.0,
                    x - 4.0,
                    x + 4.0,
                    s.colour
                );
            }
        }
        let mut d = String::new();
        for (i, p) in s.points.iter().filter(|p| p.1.is_finite()).enumerate() {
            let _ = write!(
                d,
                "{}{:.1},{:.1} ",
                if i == 0 { "M" } else { "L" },
                f.px(p.0) + dx,
                f.py(p.1)
            );
        }
        let _ = write!(
            out,
            r#"<path d="{d}" fill="none" stroke="{}" stroke-width="2"/>"#,
            s.colour
        );
        for p in s.points.iter().filter(|p| p.1.is_finite()) {
            let _ = write!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{}"><title>{}: {} → {:.1} {}</title></circle>"#,
                f.px(p.0) + dx,
                f.py(p.1),
                s.colour,
                esc(&s.name),
                fmt_num(p.0),
                p.1,
                if p.2.is_finite() && p.3.is_finite() {
                    format!("[{:.1}, {:.1}]", p.2, p.3)
                } else {
                    "(no interval)".into()
                }
            );
        }
    }
    let mut entries: Vec<(String, String, Key)> = series
        .iter()
        .map(|s| (s.name.clone(), s.colour.clone(), Key::Line))
        .collect();
    for m in marks {
        match m.x {
            Some(x) => {
                let (cx, cy) = (f.px(x), f.py(m.y));
                let _ = write!(
                    out,
                    r#"<path d="M{:.1},{:.1} l5,5 l-5,5 l-5,-5 Z" fill="white" stroke="{}" stroke-width="1.5"><title>{}: {:.2}</title></path>"#,
                    cx,
                    cy - 5.0,
                    m.colour,
                    esc(&m.label),
                    m.y
                );
            }
            None => {
                let y = f.py(m.y);
                let _ = write!(
                    out,
                    r#"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{}" stroke-dasharray="4 3" stroke-width="1.5"><title>{}: {:.2}</title></line>"#,
                    WIDTH - RIGHT,
                    m.colour,
                    esc(&m.label),
                    m.y
                );
            }
        }
        if !entries.iter().any(|e| e.0 == m.label) {
            entries.push((
                m.label.clone(),
                m.colour.clone(),
                if m.x.is_some() {
                    Key::Diamond
                } else {
                    Key::Dashed
                },
            ));
        }
    }
    legend(&mut out, &entries);
    out.push_str("</svg>");
    out
}

/// Empirical CDFs, one per series (x values need not be sorted).
pub fn cdf_chart(title: &str, x_label: &str, series: &[(String, String, Vec<f64>)]) -> String {
    let xs = finite_range(series.iter().flat_map(|s| s.2.iter().copied())).unwrap_or((0.0, 1.0));
    let f = Frame {
        x: pad(xs, false),
        y: (0.0, 1.0),
        log_x: false,
    };
    let mut out = String::new();
    open(&mut out, title);
    let t: Vec<(f64, String)> = ticks(f.x.0, f.x.1, 6)
        .into_iter()
        .map(|v| (v, fmt_num(v)))
        .collect();
    f.axes(&mut out, x_label, "fraction of probes", &t);
    for (name, colour, values) in series {
        let mut v: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len() as f64;
        let mut d = String::new();
        for (i, x) in v.iter().enumerate() {
            let (px, y0, y1) = (f.px(*x), f.py(i as f64 / n), f.py((i + 1) as f64 / n));
            let _ = write!(
                d,
                "{}{px:.1},{y0:.1} L{px:.1},{y1:.1} ",
                if i == 0 { "M" } else { "L" }
            );
        }
        let _ = write!(
            out,
            r#"<path d="{d}" fill="none" stroke="{colour}" stroke-width="2"><title>{}</title></path>"#,
            esc(name)
        );
    }
    legend(
        &mut out,
        &series
            .iter()
            .map(|s| (format!("{} (n={})", s.0, s.2.len()), s.1.clone(), Key::Line))
            .collect::<Vec<_>>(),
    );
    out.push_str("</svg>");
    out
}

/// One step function of a [`step_chart`]: points (x, y), each y held from
/// its x to the next, from (0, 0); the thick ones are named in the legend.
pub struct Steps {
    pub name: String,
    pub colour: String,
    pub points: Vec<(f64, f64)>,
    pub thick: bool,
}

/// Step functions of a per cent (0–100) against x from 0 to `x_end` (visual
/// progress over time): the thin ones first, the thick ones over them, each
/// held at its last value to the end.
pub fn step_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    x_end: f64,
    series: &[Steps],
) -> String {
    let x_end = if x_end.is_finite() && x_end > 0.0 {
        x_end
    } else {
        1.0
    };
    let f = Frame {
        x: (0.0, x_end),
        y: (0.0, 104.0),
        log_x: false,
    };
    let mut out = String::new();
    open(&mut out, title);
    let t: Vec<(f64, String)> = ticks(0.0, x_end, 8)
        .into_iter()
        .map(|v| (v, fmt_num(v)))
        .collect();
    f.axes(&mut out, x_label, y_label, &t);
    for thick in [false, true] {
        for s in series.iter().filter(|s| s.thick == thick) {
            let mut d = format!("M{:.1},{:.1}", f.px(0.0), f.py(0.0));
            for (x, y) in s
                .points
                .iter()
                .filter(|p| p.0.is_finite() && p.1.is_finite())
            {
                let _ = write!(
                    d,
                    " H{:.1} V{:.1}",
                    f.px(x.clamp(0.0, x_end)),
                    f.py(y.clamp(0.0, 100.0))
                );
            }
            let _ = write!(d, " H{:.1}", f.px(x_end));
            let _ = write!(
                out,
                r#"<path d="{d}" fill="none" stroke="{}" stroke-width="{}"{}><title>{}</title></path>"#,
                s.colour,
                if thick { 2.5 } else { 1.2 },
                if thick {
                    ""
                } else {
                    r#" stroke-opacity="0.45""#
                },
                esc(&s.name)
            );
        }
    }
    legend(
        &mut out,
        &series
            .iter()
            .filter(|s| s.thick)
            .map(|s| (s.name.clone(), s.colour.clone(), Key::Line))
            .collect::<Vec<_>>(),
    );
    out.push_str("</svg>");
    out
}

/// A heatmap of gains (red: slower than the baseline, blue: faster).
pub fn heatmap(
    title: &str,
    x_label: &str,
    y_label: &str,
    columns: &[String],
    rows: &[String],
    cell: &dyn Fn(usize, usize) -> Option<f64>,
) -> String {
    let mut out = String::new();
    open(&mut out, title);
    let (x0, y0) = (LEFT, TOP);
    let (w, h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let cw = w / columns.len().max(1) as f64;
    let ch = h / rows.len().max(1) as f64;
    let mut max = 1.0f64;
    for r in 0..rows.len() {
        for c in 0..columns.len() {
            if let Some(v) = cell(c, r) {
                max = max.max(v.abs());
            }
        }
    }
    for (r, row) in rows.iter().enumerate() {
        // Rows go up: the first row at the bottom.
        let y = y0 + h - (r + 1) as f64 * ch;
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="12">{}</text>"#,
            x0 - 4.0,
            y + ch / 2.0 + 4.0,
            esc(row)
        );
        for (c, column) in columns.iter().enumerate() {
            let x = x0 + c as f64 * cw;
            let (fill, text) = match cell(c, r) {
                None => ("#f4f4f4".to_string(), String::new()),
                Some(v) => (diverging(v / max), format!("{v:+.0}")),
            };
            let _ = write!(
                out,
                r##"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}" stroke="#fff"><title>{} {}, {} {}: {}%</title></rect>"##,
                cw,
                ch,
                esc(x_label),
                esc(column),
                esc(y_label),
                esc(row),
                text
            );
            if cw > 22.0 && ch > 12.0 && !text.is_empty() {
                let _ = write!(
                    out,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="{:.0}">{text}</text>"#,
                    x + cw / 2.0,
                    y + ch / 2.0 + 4.0,
                    (ch * 0.6).min(12.0)
                );
            }
        }
    }
    for (c, col) in columns.iter().enumerate() {
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"#,
            x0 + (c as f64 + 0.5) * cw,
            y0 + h + 16.0,
            esc(col)
        );
    }
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text><text transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle" font-size="13">{}</text>"#,
        x0 + w / 2.0,
        HEIGHT - 8.0,
        esc(x_label),
        y0 + h / 2.0,
        esc(y_label)
    );
    // Colour scale.
    for i in 0..=10 {
        let v = 1.0 - i as f64 / 5.0;
        let _ = write!(
            out,
            r##"<rect x="{:.1}" y="{:.1}" width="14" height="{:.1}" fill="{}"/>"##,
            WIDTH - RIGHT + 14.0,
            TOP + i as f64 * h / 11.0,
            h / 11.0,
            diverging(v)
        );
    }
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" font-size="12">+{max:.0}% faster</text><text x="{:.1}" y="{:.1}" font-size="12">−{max:.0}% slower</text>"#,
        WIDTH - RIGHT + 32.0,
        TOP + 10.0,
        WIDTH - RIGHT + 32.0,
        TOP + h
    );
    out.push_str("</svg>");
    out
}

/// -1 (red) … 0 (white) … +1 (blue).
fn diverging(t: f64) -> String {
    let t = t.clamp(-1.0, 1.0);
    let (r, g, b) = if t >= 0.0 {
        (255.0 - 222.0 * t, 255.0 - 153.0 * t, 255.0 - 83.0 * t)
    } else {
        let t = -t;
        (255.0 - 41.0 * t, 255.0 - 200.0 * t, 255.0 - 212.0 * t)
    };
    format!("#{:02x}{:02x}{:02x}", r as u8, g as u8, b as u8)
}

/// Horizontal stacked bars: rows of (label, segments of (name, value)).
pub fn stacked_bars(
    title: &str,
    x_label: &str,
    rows: &[(String, Vec<(String, f64)>)],
    palette: &[(&str, &str)],
) -> String {
    let max = rows
        .iter()
        .map(|r| r.1.iter().map(|s| s.1.max(0.0)).sum::<f64>())
        .fold(0.0, f64::max)
        .max(1e-9);
    let height = TOP + BOTTOM + 26.0 * rows.len() as f64;
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" font-family="sans-serif"><title>{}</title>"##,
        esc(title)
    );
    let left = 150.0;
    let w = WIDTH - left - RIGHT;
    for (i, (label, segs)) in rows.iter().enumerate() {
        let y = TOP + i as f64 * 26.0;
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="12">{}</text>"#,
            left - 6.0,
            y + 15.0,
            esc(label)
        );
        let mut x = left;
        for (name, v) in segs {
            let dx = v.max(0.0) / max * w;
            let colour = palette.iter().find(|p| p.0 == name).map_or("#999", |p| p.1);
            let _ = write!(
                out,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{dx:.1}" height="20" fill="{colour}"><title>{}: {}: {v:.0} ms</title></rect>"#,
                esc(label),
                esc(name)
            );
            x += dx;
        }
    }
    let y0 = TOP + 26.0 * rows.len() as f64;
    for t in ticks(0.0, max, 5) {
        let x = left + t / max * w;
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{y0:.1}" x2="{x:.1}" y2="{:.1}" stroke="#888"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"##,
            y0 + 4.0,
            y0 + 16.0,
            fmt_num(t)
        );
    }
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text>"#,
        left + w / 2.0,
        y0 + 34.0,
        esc(x_label)
    );
    legend(
        &mut out,
        &palette
            .iter()
            .map(|(n, c)| (n.to_string(), c.to_string(), Key::Line))
            .collect::<Vec<_>>(),
    );
    out.push_str("</svg>");
    out
}

/// One bar of [`grouped_stacked_bars`]: the label under it and its segments
/// (name, value), stacked from the axis up in order.
pub struct StackedBar {
    pub label: String,
    pub segments: Vec<(String, f64)>,
}

/// Height of the plot area of [`grouped_stacked_bars`], px.
pub const STACK_HEIGHT: f64 = 230.0;

/// Upright stacked bars in groups along a categorical x axis (004's Fig. 3
/// and Fig. 5 at every value of a sweep): each group (its label, its bars),
/// each segment coloured by `palette` (its legend, in order), each bar's
/// total written above it when there is room. Negative values draw as 0.
pub fn grouped_stacked_bars(
    title: &str,
    x_label: &str,
    y_label: &str,
    groups: &[(String, Vec<StackedBar>)],
    palette: &[(&str, &str)],
) -> String {
    let total = |b: &StackedBar| b.segments.iter().map(|s| s.1.max(0.0)).sum::<f64>();
    let max = groups
        .iter()
        .flat_map(|g| g.1.iter().map(total))
        .fold(0.0, f64::max);
    let top = if max > 0.0 { max * 1.08 } else { 1.0 };
    let (x0, x1) = (LEFT, WIDTH - RIGHT);
    let y0 = TOP + STACK_HEIGHT;
    let py = |v: f64| v / top * STACK_HEIGHT;
    let group_w = (x1 - x0) / groups.len().max(1) as f64;
    let most = groups.iter().map(|g| g.1.len()).max().unwrap_or(1).max(1);
    let bar_w = group_w * 0.84 / most as f64;
    // Bar labels: level when they fit under their bar, else upright.
    let font = 12.0;
    let widest = groups
        .iter()
        .flat_map(|g| g.1.iter().map(|b| text_width(&b.label, font)))
        .fold(0.0, f64::max);
    let upright = widest > bar_w + 2.0;
    let label_h = if upright {
        widest.min(90.0) + 4.0
    } else {
        12.0
    };
    let height = y0 + label_h + 44.0;
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height:.0}" width="{WIDTH}" height="{height:.0}" role="img" font-family="sans-serif"><title>{}</title>"##,
        esc(title)
    );
    for t in ticks(0.0, top, 5) {
        let y = y0 - py(t);
        let _ = write!(
            out,
            r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end" font-size="12">{}</text>"##,
            x0 - 4.0,
            y + 4.0,
            fmt_num(t)
        );
    }
    for (gi, (group, bars)) in groups.iter().enumerate() {
        let gx = x0 + gi as f64 * group_w;
        if gi > 0 {
            let _ = write!(
                out,
                r##"<line x1="{gx:.1}" y1="{TOP}" x2="{gx:.1}" y2="{:.1}" stroke="#ccc"/>"##,
                y0 + label_h + 4.0
            );
        }
        let left = gx + (group_w - bar_w * bars.len() as f64) / 2.0;
        for (bi, bar) in bars.iter().enumerate() {
            let x = left + bi as f64 * bar_w;
            let mut y = y0;
            for (name, v) in &bar.segments {
                let dy = py(v.max(0.0));
                y -= dy;
                let colour = palette.iter().find(|p| p.0 == name).map_or("#999", |p| p.1);
                let _ = write!(
                    out,
                    r#"<rect x="{x:.2}" y="{y:.2}" width="{:.2}" height="{dy:.2}" fill="{colour}"><title>{}, {}: {}: {v:.1}</title></rect>"#,
                    bar_w * 0.92,
                    esc(group),
                    esc(&bar.label),
                    esc(name)
                );
            }
            let cx = x + bar_w * 0.46;
            if bar_w >= 22.0 && !bar.segments.is_empty() {
                let _ = write!(
                    out,
                    r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="{font}">{:.0}</text>"#,
                    y - 3.0,
                    total(bar)
                );
            }
            let _ = if upright {
                write!(
                    out,
                    r#"<text transform="translate({:.1} {:.1}) rotate(-90)" text-anchor="end" font-size="{font}">{}</text>"#,
                    cx + 3.0,
                    y0 + 4.0,
                    esc(&shorten_middle(&bar.label, label_h - 4.0, font))
                )
            } else {
                write!(
                    out,
                    r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="{font}">{}</text>"#,
                    y0 + 12.0,
                    esc(&bar.label)
                )
            };
        }
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"#,
            gx + group_w / 2.0,
            y0 + label_h + 18.0,
            esc(group)
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="#888"/><line x1="{x0}" y1="{TOP}" x2="{x0}" y2="{y0}" stroke="#888"/><text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">{}</text><text transform="translate(14 {:.1}) rotate(-90)" text-anchor="middle" font-size="13">{}</text>"##,
        (x0 + x1) / 2.0,
        y0 + label_h + 36.0,
        esc(x_label),
        TOP + STACK_HEIGHT / 2.0,
        esc(y_label)
    );
    legend(
        &mut out,
        &palette
            .iter()
            .map(|(n, c)| (n.to_string(), c.to_string(), Key::Swatch))
            .collect::<Vec<_>>(),
    );
    out.push_str("</svg>");
    out
}

/// One request in a waterfall: start and the phases in order, in ms.
pub struct Bar {
    pub label: String,
    pub start: f64,
    pub phases: Vec<(String, f64)>,
}

/// Where a waterfall's bars start; labels end 4 px to the left of it.
const WATERFALL_LEFT: f64 = 300.0;
const WATERFALL_FONT: f64 = 12.0;
/// A waterfall's row, one request's bar and its gap to the next.
const WATERFALL_ROW: f64 = 18.0;
/// The room for a label: from a 4 px margin to 4 px before the bars.
const WATERFALL_LABEL_WIDTH: f64 = WATERFALL_LEFT - 8.0;

/// A generous estimate of `c`'s advance in a sans-serif font, in ems (no font
/// metrics at hand: wide enough for Helvetica, Arial and DejaVu Sans).
fn char_em(c: char) -> f64 {
    match c {
        'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.32,
        'f' | 't' | 'r' | 'I' | '/' | '-' | '(' | ')' | '[' | ']' | ' ' => 0.42,
        'm' | 'w' | 'M' | 'W' | '@' | '%' | '…' => 1.0,
        '=' | '+' | '~' | '#' | '&' | '<' | '>' | '^' | '*' => 0.84,
        c if c.is_ascii_uppercase() => 0.8,
        c if c.is_ascii() => 0.64,
        _ => 1.0,
    }
}

/// Estimated width of `text` at `font` px.
pub fn text_width(text: &str, font: f64) -> f64 {
    text.chars().map(char_em).sum::<f64>() * font
}

/// `text` if it fits in `width` px at `font` px, else its start and end around
/// an ellipsis (a URL's host and file name say the most).
pub fn shorten_middle(text: &str, width: f64, font: f64) -> String {
    if text_width(text, font) <= width {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let (mut head, mut tail) = (0, 0);
    let mut used = text_width("…", font);
    // Take characters alternately from the start and the end while they fit.
    loop {
        let take_head = head <= tail;
        let next = if take_head {
            chars.get(head)
        } else {
            chars.len().checked_sub(tail + 1).and_then(|i| chars.get(i))
        };
        match next {
            Some(&c) if head + tail < chars.len() && used + char_em(c) * font <= width => {
                used += char_em(c) * font;
                if take_head {
                    head += 1;
                } else {
                    tail += 1;
                }
            }
            _ => break,
        }
    }
    let mut out: String = chars[..head].iter().collect();
    out.push('…');
    out.extend(&chars[chars.len() - tail..]);
    out
}

/// A request waterfall (as DevTools draws it), phases coloured by `palette`.
pub fn waterfall(title: &str, bars: &[Bar], palette: &[(&str, &str)]) -> String {
    let end = bars
        .iter()
        .map(|b| b.start + b.phases.iter().map(|p| p.1.max(0.0)).sum::<f64>())
        .fold(0.0, f64::max)
        .max(1e-9);
    let row = WATERFALL_ROW;
    let height = TOP + BOTTOM + row * bars.len() as f64;
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg class="plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" font-family="sans-serif"><title>{}</title>"##,
        esc(title)
    );
    let left = WATERFALL_LEFT;
    let w = WIDTH - left - RIGHT;
    for (i, b) in bars.iter().enumerate() {
        let y = TOP + i as f64 * row;
        let label = shorten_middle(&b.label, WATERFALL_LABEL_WIDTH, WATERFALL_FONT);
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="{WATERFALL_FONT}"><title>{}</title>{}</text>"#,
            left - 4.0,
            y + row * 0.5 + WATERFALL_FONT * 0.35,
            esc(&b.label),
            esc(&label)
        );
        let mut x = left + b.start / end * w;
        for (name, v) in &b.phases {
            let dx = v.max(0.0) / end * w;
            let colour = palette.iter().find(|p| p.0 == name).map_or("#999", |p| p.1);
            let _ = write!(
                out,
                r#"<rect x="{x:.1}" y="{:.1}" width="{dx:.2}" height="{:.1}" fill="{colour}"><title>{}: {} {v:.1} ms</title></rect>"#,
                y + 2.0,
                row - 4.0,
                esc(&b.label),
                esc(name)
            );
            x += dx;
        }
    }
    let y0 = TOP + row * bars.len() as f64;
    for t in ticks(0.0, end, 6) {
        let x = left + t / end * w;
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle" font-size="12">{}</text>"##,
            y0 + 4.0,
            y0 + 16.0,
            fmt_num(t)
        );
    }
    let _ = write!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="13">ms since navigation start</text>"#,
        left + w / 2.0,
        y0 + 34.0
    );
    legend(
        &mut out,
        &palette
            .iter()
            .map(|(n, c)| (n.to_string(), c.to_string(), Key::Line))
            .collect::<Vec<_>>(),
    );
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waterfall_labels_fit_their_column_shortened_in_the_middle() {
        let long = "https://abs.twimg.com/css/c/very/long/path/to/the/style/sheet/css1.css";
        let short = shorten_middle(long, WATERFALL_LABEL_WIDTH, WATERFALL_FONT);
        assert!(short.starts_with("https://abs.twi"), "{short}");
        assert!(
            short.ends_with("css1.css") && short.contains('…'),
            "{short}"
        );
        assert!(text_width(&short, WATERFALL_FONT) <= WATERFALL_LABEL_WIDTH);
        assert_eq!(shorten_middle("https://a.b/c", 162.0, 9.0), "https://a.b/c");
        assert_eq!(shorten_middle("WWWWWWWW", 0.0, 9.0), "…");

        let bars: Vec<Bar> = [
            long,
            "s://abs.twimg.com/css/css1.css",
            "https://WWW.MMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMMM.com/",
            "https://例え.jp/パス/ファイル名はとても長いです.html",
            "",
        ]
        .iter()
        .map(|l| Bar {
            label: l.to_string(),
            start: 0.0,
            phases: vec![("receive".into(), 10.0)],
        })
        .collect();
        let svg = waterfall("t", &bars, &[("receive", "#00f")]);
        let mut labels = 0;
        for text in svg.split("<text ").skip(1) {
            let Some(rest) = text.strip_prefix("x=\"") else {
                continue;
            };
            if !text.contains("text-anchor=\"end\"") || !text.contains("<title>") {
                continue;
            }
            let x: f64 = rest.split('"').next().unwrap().parse().unwrap();
            let shown = text
                .split("</title>")
                .nth(1)
                .unwrap()
                .split("</text>")
                .next()
                .unwrap();
            let shown = shown
                .replace("&amp;", "&")
                .replace("&lt;", "<")
                .replace("&gt;", ">");
            assert!(
                x - text_width(&shown, WATERFALL_FONT) >= 0.0,
                "{shown} at {x}"
            );
            labels += 1;
        }
        assert_eq!(labels, bars.len());
        assert!(
            svg.contains(&format!("<title>{long}</title>")),
            "the full URL is a tooltip"
        );
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(ticks(0.0, 10.0, 5), [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = ticks(-3.2, 21.0, 5);
        assert!(t[0] >= -3.2 && *t.last().unwrap() <= 21.0, "{t:?}");
        assert_eq!(fmt_num(8_000_000.0), "8M");
        assert_eq!(fmt_num(64_000.0), "64k");
        assert_eq!(fmt_num(2.5), "2.5");
    }

    #[test]
    fn plots_are_well_formed_svg() {
        let s = line_chart(
            "t <&>",
            "rtt (ms)",
            "gain (%)",
            &[(10.0, "10".into()), (490.0, "490".into())],
            false,
            &[Series {
                name: "h2".into(),
                colour: colour("h2").into(),
                points: vec![(10.0, 1.0, 0.5, 1.5), (490.0, 12.0, 10.0, 14.0)],
            }],
            &[Mark {
                label: "004".into(),
                x: None,
                y: 13.81,
                colour: "#000".into(),
            }],
            true,
        );
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(s.contains("t &lt;&amp;&gt;"));
        assert!(!s.contains("NaN"));
        let h = heatmap(
            "h",
            "x",
            "y",
            &["1".into(), "2".into()],
            &["a".into()],
            &|c, _| (c == 0).then_some(5.0),
        );
        assert!(h.contains("+5") && !h.contains("NaN"));
    }

    #[test]
    fn steps_hold_each_value_until_the_next_and_to_the_end() {
        let s = step_chart(
            "t",
            "ms",
            "%",
            1000.0,
            &[
                Steps {
                    name: "h2, rep 1".into(),
                    colour: "#d62728".into(),
                    points: vec![(250.0, 40.0), (500.0, 100.0)],
                    thick: true,
                },
                Steps {
                    name: "h2, rep 0".into(),
                    colour: "#d62728".into(),
                    points: vec![],
                    thick: false,
                },
            ],
        );
        assert!(s.starts_with("<svg") && s.ends_with("</svg>") && !s.contains("NaN"));
        let f = Frame {
            x: (0.0, 1000.0),
            y: (0.0, 104.0),
            log_x: false,
        };
        let want = format!(
            "M{:.1},{:.1} H{:.1} V{:.1} H{:.1} V{:.1} H{:.1}",
            f.px(0.0),
            f.py(0.0),
            f.px(250.0),
            f.py(40.0),
            f.px(500.0),
            f.py(100.0),
            f.px(1000.0)
        );
        assert!(s.contains(&want), "{s}");
        // The thin one is drawn first (under), and only the thick one is in the legend.
        assert!(s.find("h2, rep 0").unwrap() < s.find("h2, rep 1").unwrap());
        assert_eq!(s.matches(">h2, rep 1</text>").count(), 1);
        assert!(!s.contains(">h2, rep 0</text>"));
    }

    #[test]
    fn line_charts_draw_a_ci_whisker_at_every_point() {
        let s = line_chart(
            "t",
            "x",
            "y",
            &[(1.0, "1".into())],
            false,
            &[Series {
                name: "h2".into(),
                colour: "#d62728".into(),
                points: vec![(1.0, 10.0, 5.0, 15.0)],
            }],
            &[],
            true,
        );
        // One point: no band, but a whisker with its two caps.
        assert_eq!(s.matches(r#"stroke-width="1.6""#).count(), 1, "{s}");
        assert!(!s.contains("fill-opacity"));
    }

    #[test]
    fn grouped_stacked_bars_stack_to_their_totals() {
        let bar = |label: &str, a: f64, b: f64| StackedBar {
            label: label.into(),
            segments: vec![("a".into(), a), ("b".into(), b)],
        };
        let palette = [("a", "#111111"), ("b", "#222222")];
        let s = grouped_stacked_bars(
            "t",
            "x",
            "ms",
            &[
                (
                    "1".into(),
                    vec![bar("p", 100.0, 300.0), bar("q", 50.0, 0.0)],
                ),
                (
                    "2".into(),
                    vec![
                        bar("p", 0.0, 0.0),
                        StackedBar {
                            label: "q".into(),
                            segments: vec![],
                        },
                    ],
                ),
            ],
            &palette,
        );
        assert!(s.starts_with("<svg") && s.ends_with("</svg>") && !s.contains("NaN"));
        // The tallest bar (400) fills 1 / 1.08 of the plot; its segments
        // stack from the axis up.
        let heights: Vec<f64> = s
            .split(r#"height=""#)
            .skip(2)
            .filter_map(|r| r.split('"').next()?.parse().ok())
            .collect();
        let px = |v: f64| v / (400.0 * 1.08) * STACK_HEIGHT;
        assert!((heights[0] - px(100.0)).abs() < 0.01, "{heights:?}");
        assert!(
            (heights[0] + heights[1] - px(400.0)).abs() < 0.01,
            "{heights:?}"
        );
        assert!(s.contains(">400</text>") && s.contains(">50</text>"));
        // Nothing to draw: an empty frame, not NaN.
        let empty = grouped_stacked_bars("t", "x", "ms", &[], &palette);
        assert!(!empty.contains("NaN") && !empty.contains("inf"));
    }
}
