//! The filmstrip compare view (WebPageTest's) and the visual-progress curves
//! of a campaign whose Chromium probes kept their HARs (docs/visual.md): per
//! site and point, one row per protocol of one representative probe's frames
//! at the same times, and each protocol's visual progress over time.
//!
//! The frames are the JPEGs beside each probe's HAR
//! (`har/<hash>.filmstrip/NNNNms.jpg`, `lab::har::write_filmstrip`),
//! embedded as they are: base64 `data:` URIs, each distinct frame once (a
//! class of the view's `<style>`), so that the report stays one file with no
//! network; at most `MAX_FRAMES` frames and `MAX_BYTES` in a report (there
//! is no scaling them down without an encoder), the views past that say so.
//! `progress.json` beside the frames gives each one's visual progress, the
//! curves' steps; a filmstrip written before it has no curve. A point with
//! no filmstrip draws nothing, a site with none has no section.

use crate::axes::swept_axes;
use crate::html::Html;
use crate::svg::{self, colour, esc, Steps};
use results::experiment::point_key;
use results::{Experiment, ProbeRecord};
use serde_json::Value;
use std::fmt::Write as _;
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// Columns of a view at most.
pub(crate) const MAX_COLUMNS: usize = 20;
/// The columns' steps tried, ms, shortest first: the first that covers the
/// view in `MAX_COLUMNS` columns is taken.
const STEPS: [f64; 13] = [
    100.0, 200.0, 250.0, 500.0, 1e3, 2e3, 2.5e3, 5e3, 1e4, 2e4, 2.5e4, 5e4, 1e5,
];
/// Frames embedded in one report at most, and their bytes at most: the
/// views past either are not drawn (their curves are).
pub(crate) const MAX_FRAMES: usize = 400;
pub(crate) const MAX_BYTES: usize = 16 << 20;

/// The colours of the milestones' badges (none a protocol's).
const MILESTONES: [(&str, &str, &str); 3] = [
    ("fcp", "FCP", "#1b9e77"),
    ("lcp", "LCP", "#d95f02"),
    ("vc", "VC", "#7570b3"),
];

/// A milestone on a row: the column it falls in, its class, label, colour
/// and time.
type Milestone<'a> = (Option<usize>, &'a str, &'a str, &'a str, Option<f64>);

/// Standard base64 (RFC 4648, padded) of `bytes`: a `data:` URI's payload.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = u32::from(b[0]) << 16 | u32::from(b[1]) << 8 | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One frame of a filmstrip: when (ms after the document's request), its
/// file in the filmstrip's directory, and its visual progress when known.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Frame {
    pub ms: f64,
    pub file: String,
    pub progress: Option<u32>,
}

/// A probe's filmstrip: its directory and frames, ascending in time.
pub(crate) struct Strip {
    pub dir: PathBuf,
    pub frames: Vec<Frame>,
}

impl Strip {
    /// The filmstrip beside a HAR (`har`, relative to `dir`): its JPEGs
    /// (`NNNNms.jpg` that start as a JPEG does), with their exact times and
    /// progress from `progress.json` where it has them. None without a
    /// frame.
    pub(crate) fn read(dir: &Path, har: &str) -> Option<Strip> {
        let film = dir.join(har).with_extension("filmstrip");
        let mut frames: Vec<Frame> = std::fs::read_dir(&film)
            .ok()?
            .filter_map(|e| {
                let file = e.ok()?.file_name().into_string().ok()?;
                let ms: f64 = file.strip_suffix("ms.jpg")?.parse().ok()?;
                is_jpeg(&film.join(&file)).then_some(Frame {
                    ms,
                    file,
                    progress: None,
                })
            })
            .collect();
        let progress: Option<Value> = std::fs::read(film.join("progress.json"))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        for p in progress
            .as_ref()
            .and_then(|v| v["frames"].as_array())
            .into_iter()
            .flatten()
        {
            if let Some(f) = frames.iter_mut().find(|f| p["file"] == f.file.as_str()) {
                f.ms = p["ms"].as_f64().unwrap_or(f.ms);
                f.progress = p["progress"].as_u64().map(|v| v.min(100) as u32);
            }
        }
        frames.sort_by(|a, b| a.ms.total_cmp(&b.ms));
        (!frames.is_empty()).then_some(Strip { dir: film, frames })
    }

    /// Every frame's progress, or None if one lacks it.
    fn progress(&self) -> Option<Vec<(f64, f64)>> {
        self.frames
            .iter()
            .map(|f| Some((f.ms, f64::from(f.progress?))))
            .collect()
    }

    /// The last frame's time.
    fn end(&self) -> f64 {
        self.frames.last().map_or(0.0, |f| f.ms)
    }
}

/// Whether the file at `path` starts as a JPEG does (SOI, then a marker).
fn is_jpeg(path: &Path) -> bool {
    let mut head = [0u8; 3];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && head == [0xff, 0xd8, 0xff]
}

/// The columns' times (ms) of a view whose slowest row shows its last
/// change at `end_ms`: every `step` ms from `step` to the first multiple at
/// or after the end, `step` the shortest of `STEPS` that needs at most
/// `MAX_COLUMNS` columns (past the longest, as many of them as it takes).
pub(crate) fn column_times(end_ms: f64) -> Vec<f64> {
    let end = if end_ms.is_finite() {
        end_ms.max(0.0)
    } else {
        0.0
    };
    let columns = |step: f64| ((end / step).ceil() as usize).max(1);
    let step = STEPS
        .iter()
        .copied()
        .find(|s| columns(*s) <= MAX_COLUMNS)
        .unwrap_or_else(|| (end / MAX_COLUMNS as f64 / 1e5).ceil() * 1e5);
    (1..=columns(step)).map(|i| i as f64 * step).collect()
}

/// The frame on screen at `t`: the last at or before it (None: the white
/// screen before the first frame). `frames` ascending.
pub(crate) fn current(frames: &[Frame], t: f64) -> Option<usize> {
    frames.partition_point(|f| f.ms <= t).checked_sub(1)
}

/// The column at which a milestone at `ms` falls: the first at or after it.
fn column_of(times: &[f64], ms: f64) -> Option<usize> {
    times.iter().position(|t| *t >= ms)
}

/// Speed Index of a step function of progress (ms, per cent): ∫ (1 −
/// progress) dt from 0, each step held until the next.
fn speed_index(steps: &[(f64, f64)]) -> f64 {
    let (mut si, mut t0, mut p0) = (0.0, 0.0, 0.0);
    for (t, p) in steps {
        si += (t - t0).max(0.0) * (1.0 - p0 / 100.0);
        (t0, p0) = (*t, *p);
    }
    si
}

/// The probes of one protocol at one point that loaded and kept a filmstrip.
type Filmed<'a> = Vec<(&'a ProbeRecord, Strip)>;

/// The representative of a protocol's probes: the one whose Speed Index is
/// the median (the lower of the middle two), or PLT's when a probe has no
/// Speed Index; with what it was chosen by.
pub(crate) fn representative<'a, 'p, T>(
    probes: &'a [(&'p ProbeRecord, T)],
) -> Option<(&'a (&'p ProbeRecord, T), &'static str)> {
    let si = |p: &ProbeRecord| p.paint.as_ref().and_then(|x| x.speed_index_ms);
    let by_si = probes.iter().all(|(p, _)| si(p).is_some());
    let key = |p: &ProbeRecord| {
        if by_si {
            si(p).unwrap_or(f64::NAN)
        } else {
            p.plt_ms
        }
    };
    let mut sorted: Vec<&(&'p ProbeRecord, T)> = probes.iter().collect();
    sorted.sort_by(|a, b| key(a.0).total_cmp(&key(b.0)));
    let chosen = sorted.get(sorted.len().checked_sub(1)? / 2)?;
    Some((chosen, if by_si { "Speed Index" } else { "PLT" }))
}

/// The frames and bytes a report has embedded so far.
#[derive(Default)]
pub(crate) struct Budget {
    frames: usize,
    bytes: usize,
    /// Classes given to frames so far (unique in the page).
    next_class: usize,
}

/// The filmstrip views and curves of one site, at each point with a
/// filmstrip; nothing when none has one. The first site's carries the
/// `filmstrip` anchor (`report.html#filmstrip` shows these sections alone).
pub(crate) fn section(
    h: &mut Html,
    dir: &Path,
    exp: &Experiment,
    probes: &[ProbeRecord],
    site: &str,
    anchor: &mut bool,
    budget: &mut Budget,
) {
    let axes = swept_axes(exp);
    let mut views = Vec::new();
    for point in exp.points() {
        if point.get("site").map(String::as_str) != Some(site) {
            continue;
        }
        // By key, as the groups are: a field at its default need not be
        // spelled out in an older record's point.
        let key = point_key(&point);
        let rows: Vec<(String, Filmed)> = exp
            .protocols
            .iter()
            .map(|proto| {
                let filmed = probes
                    .iter()
                    .filter(|p| {
                        p.protocol == *proto && p.error.is_none() && point_key(&p.point) == key
                    })
                    .filter_map(|p| Some((p, Strip::read(dir, p.har.as_deref()?)?)))
                    .collect();
                (proto.name().to_string(), filmed)
            })
            .filter(|(_, f): &(String, Filmed)| !f.is_empty())
            .collect();
        if !rows.is_empty() {
            let at: Vec<String> = axes
                .iter()
                .filter_map(|a| Some(format!("{a}={}", point.get(a)?)))
                .collect();
            views.push((at.join(", "), rows));
        }
    }
    if views.is_empty() {
        return;
    }
    let first = std::mem::replace(anchor, false);
    // The site as it reads: a HAR's name, not the path it was read from.
    let name = crate::axes::site_name(site);
    let _ = write!(
        h.body,
        r#"<section class="filmstrip"{}>"#,
        if first { r#" id="filmstrip""# } else { "" }
    );
    h.section(
        &format!("filmstrip-{site}"),
        &format!("{name}: filmstrips and visual progress"),
    );
    if !first {
        h.p("As for the first site's: one probe per protocol, the median Speed Index of its probes; frames at the same times in every row.");
    } else {
        h.p("What the screen showed, protocol against protocol (WebPageTest's compare view): per point, one row per protocol — one probe, the one whose Speed Index is the median of its protocol's probes there (PLT's median where a probe has no Speed Index) — and one column per time, the same times in every row, each showing the frame on screen then (the last at or before it; blank: still the white screen). Yellow frames changed since the column before; the FCP, LCP and VC (visually complete) badges mark the column each falls in (the first at or after it). The frames are Chromium's screencast as recorded, 480×300 JPEGs, each embedded once.");
    }
    for (i, (at, rows)) in views.iter().enumerate() {
        let id = format!("filmstrip-{site}-{i}");
        let title = if at.is_empty() {
            name.clone()
        } else {
            format!("{name} at {at}")
        };
        let _ = write!(h.body, r#"<h3 id="{id}">{}</h3>"#, esc(&title));
        view(h, &title, rows, budget);
        curves(h, &title, rows);
    }
    h.body.push_str("</section>");
}

/// One point's compare view: a grid of a header of times and a row per
/// protocol, or a sentence if the report's caps are reached.
fn view(h: &mut Html, title: &str, rows: &[(String, Filmed)], budget: &mut Budget) {
    let chosen: Vec<(&str, &(&ProbeRecord, Strip), &str, usize)> = rows
        .iter()
        .filter_map(|(proto, filmed)| {
            let (pick, by) = representative(filmed)?;
            Some((proto.as_str(), pick, by, filmed.len()))
        })
        .collect();
    // Columns up to the slowest row's last change or visually complete.
    let end = chosen
        .iter()
        .map(|(_, (p, s), _, _)| {
            let vc = p.paint.as_ref().and_then(|x| x.visually_complete_ms);
            s.end().max(vc.unwrap_or(0.0))
        })
        .fold(0.0, f64::max);
    let times = column_times(end);
    // Each row's frame at each column; the distinct frames, read.
    let shown: Vec<Vec<Option<usize>>> = chosen
        .iter()
        .map(|(_, (_, s), _, _)| times.iter().map(|t| current(&s.frames, *t)).collect())
        .collect();
    let mut jpegs: Vec<(usize, usize, Vec<u8>)> = Vec::new();
    for (r, cols) in shown.iter().enumerate() {
        for i in cols.iter().flatten() {
            if jpegs.iter().any(|(rr, ii, _)| (*rr, *ii) == (r, *i)) {
                continue;
            }
            let strip = &chosen[r].1 .1;
            if let Ok(b) = std::fs::read(strip.dir.join(&strip.frames[*i].file)) {
                jpegs.push((r, *i, b));
            }
        }
    }
    let bytes: usize = jpegs.iter().map(|j| j.2.len() * 4 / 3).sum();
    if budget.frames + jpegs.len() > MAX_FRAMES || budget.bytes + bytes > MAX_BYTES {
        h.p(&format!(
            "Filmstrip of {title} not shown: the report embeds at most {MAX_FRAMES} frames and {} MB of them (no scaling down: they are the JPEGs as recorded), and {} are in already. Its frames: {}.",
            MAX_BYTES >> 20,
            budget.frames,
            chosen
                .iter()
                .map(|(proto, (_, s), _, _)| format!("{proto} {}", s.dir.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        return;
    }
    budget.frames += jpegs.len();
    budget.bytes += bytes;
    let class_of = |budget: &Budget, k: usize| format!("fsf-{}", budget.next_class + k);
    h.body.push_str("<style>");
    for (k, (_, _, b)) in jpegs.iter().enumerate() {
        let _ = write!(
            h.body,
            r#".{}{{background-image:url("data:image/jpeg;base64,{}")}}"#,
            class_of(budget, k),
            base64(b)
        );
    }
    h.body.push_str("</style>");
    let _ = write!(
        h.body,
        r#"<div class="fs" data-title="{}"><div class="fs-grid" style="--cols: {}"><div class="fs-head"><div class="fs-corner">ms after the request</div>"#,
        esc(title),
        times.len()
    );
    for t in &times {
        let _ = write!(
            h.body,
            r#"<div class="fs-time" data-ms="{t:.0}">{t:.0}</div>"#
        );
    }
    h.body.push_str("</div>");
    for (r, (proto, (p, strip), by, of)) in chosen.iter().enumerate() {
        let paint = p.paint.clone().unwrap_or_default();
        let figure = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.0} ms"));
        let _ = write!(
            h.body,
            r#"<div class="fs-row" data-protocol="{proto}"><div class="fs-label" style="border-color: {}"><b>{proto}</b> rep {}<br>SI {}<br>PLT {:.0} ms<br><span>median {by} of {of}</span></div>"#,
            colour(proto),
            p.rep,
            figure(paint.speed_index_ms),
            p.plt_ms,
        );
        let marks: Vec<Milestone> = MILESTONES
            .iter()
            .zip([paint.fcp_ms, paint.lcp_ms, paint.visually_complete_ms])
            .map(|((class, label, c), ms)| {
                (
                    ms.and_then(|m| column_of(&times, m)),
                    *class,
                    *label,
                    *c,
                    ms,
                )
            })
            .collect();
        for (c, t) in times.iter().enumerate() {
            let frame = shown[r][c];
            let changed = frame.is_some() && (c == 0 || shown[r][c - 1] != frame);
            let here: Vec<&Milestone> = marks.iter().filter(|m| m.0 == Some(c)).collect();
            let _ = write!(h.body, r#"<div class="fs-cell" data-ms="{t:.0}">"#);
            match frame {
                Some(i) => {
                    let k = jpegs
                        .iter()
                        .position(|(rr, ii, _)| (*rr, *ii) == (r, i))
                        .map_or(String::new(), |k| class_of(budget, k));
                    let f = &strip.frames[i];
                    let _ = write!(
                        h.body,
                        r#"<div class="fs-frame {k}{}{}" data-frame="{}" title="{proto} at {t:.0} ms: the frame of {:.0} ms{}"></div>"#,
                        if changed { " changed" } else { "" },
                        here.first().map_or(String::new(), |m| format!(" {}", m.1)),
                        esc(&f.file),
                        f.ms,
                        f.progress
                            .map_or(String::new(), |p| format!(", {p} % visually complete")),
                    );
                }
                None => {
                    let _ = write!(
                        h.body,
                        r#"<div class="fs-frame blank" title="{proto} at {t:.0} ms: still the white screen"></div>"#
                    );
                }
            }
            for m in &here {
                let _ = write!(
                    h.body,
                    r#"<span class="fs-badge" style="background: {}" title="{} {:.0} ms">{}</span>"#,
                    m.3,
                    m.2,
                    m.4.unwrap_or(f64::NAN),
                    m.2
                );
            }
            h.body.push_str("</div>");
        }
        h.body.push_str("</div>");
    }
    h.body.push_str("</div></div>");
    budget.next_class += jpegs.len();
}

/// One point's visual progress over time, per protocol: its representative
/// probe's (thick) and the other probes' (thin), as steps from the frames'
/// progress; a sentence instead when the filmstrips carry none.
fn curves(h: &mut Html, title: &str, rows: &[(String, Filmed)]) {
    let mut series = Vec::new();
    let mut notes = Vec::new();
    let mut missing = 0;
    for (proto, filmed) in rows {
        let Some(((pick, _), _)) = representative(filmed) else {
            continue;
        };
        for (p, strip) in filmed {
            let Some(points) = strip.progress() else {
                missing += 1;
                continue;
            };
            let thick = std::ptr::eq(*p, *pick);
            if thick {
                let recorded = p.paint.as_ref().and_then(|x| x.speed_index_ms);
                let drawn = speed_index(&points);
                if let Some(si) = recorded.filter(|si| (si - drawn).abs() > 1.0) {
                    notes.push(format!(
                        "{proto}'s curve gives a Speed Index of {drawn:.0} ms against the {si:.0} ms recorded from every frame (its filmstrip kept {} of them)",
                        strip.frames.len()
                    ));
                }
            }
            series.push(Steps {
                name: format!("{proto}, rep {}", p.rep),
                colour: colour(proto).to_string(),
                points,
                thick,
            });
        }
    }
    if series.is_empty() {
        h.p(&format!("No visual progress recorded with the filmstrips of {title} (written before progress.json was): no curve."));
        return;
    }
    let end = series
        .iter()
        .filter_map(|s| s.points.last().map(|p| p.0))
        .fold(0.0, f64::max);
    let mut caption = format!(
        "Visual progress of {title} over time (colour histograms against the final frame, as Speed Index; docs/visual.md): each protocol's representative probe thick, its other probes thin; each frame's progress held until the next."
    );
    if missing > 0 {
        let _ = write!(
            caption,
            " {missing} probes' filmstrips carry no progress and are left out."
        );
    }
    if !notes.is_empty() {
        let _ = write!(caption, " {}.", notes.join("; "));
    }
    h.figure(
        svg::step_chart(
            &format!("{title}: visual progress"),
            "ms after the document's request",
            "visual progress (%)",
            end * 1.05,
            &series,
        ),
        &caption,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::html::{FRAME_MIN_REM, GAP_PX, LABEL_REM};

    fn frames(ms: &[f64]) -> Vec<Frame> {
        ms.iter()
            .map(|m| Frame {
                ms: *m,
                file: format!("{:04}ms.jpg", m.round()),
                progress: None,
            })
            .collect()
    }

    #[test]
    fn columns_every_100_ms_while_20_of_them_cover_the_slowest_row() {
        assert_eq!(column_times(450.0), [100.0, 200.0, 300.0, 400.0, 500.0]);
        // A multiple of the step ends there.
        assert_eq!(column_times(1000.0).len(), 10);
        assert_eq!(*column_times(2000.0).last().unwrap(), 2000.0);
        // Past 2 s, 200 ms; then 250, 500 ms, 1 s …
        let c = column_times(2001.0);
        assert_eq!((c[0], c.len(), *c.last().unwrap()), (200.0, 11, 2200.0));
        assert_eq!(column_times(4500.0)[0], 250.0);
        assert_eq!(column_times(5001.0)[0], 500.0);
        assert_eq!(column_times(19_999.0)[0], 1000.0);
        for end in [1.0, 99.0, 777.0, 3456.0, 12_345.0, 99_999.0, 3e6] {
            let c = column_times(end);
            assert!(c.len() <= MAX_COLUMNS, "{end}: {c:?}");
            assert!(*c.last().unwrap() >= end, "{end}: {c:?}");
            // Evenly spaced from one step.
            let step = c[0];
            assert!(c
                .iter()
                .enumerate()
                .all(|(i, t)| *t == (i + 1) as f64 * step));
            // The last column is needed: the one before it falls short.
            assert!(c.len() == 1 || c[c.len() - 2] < end, "{end}: {c:?}");
        }
        // Nothing painted, or no time: one column.
        assert_eq!(column_times(0.0), [100.0]);
        assert_eq!(column_times(f64::NAN), [100.0]);
    }

    #[test]
    fn each_column_shows_the_last_frame_at_or_before_its_time() {
        let f = frames(&[169.0, 300.0, 417.0]);
        assert_eq!(current(&f, 100.0), None, "white before the first frame");
        assert_eq!(current(&f, 200.0), Some(0));
        assert_eq!(current(&f, 300.0), Some(1), "a frame at the column's time");
        assert_eq!(current(&f, 400.0), Some(1));
        assert_eq!(current(&f, 500.0), Some(2));
        assert_eq!(current(&[], 500.0), None);
        let t = column_times(417.0);
        assert_eq!(column_of(&t, 169.0), Some(1));
        assert_eq!(column_of(&t, 200.0), Some(1));
        assert_eq!(column_of(&t, 417.0), Some(4));
        assert_eq!(column_of(&t, 501.0), None);
    }

    #[test]
    fn base64_as_rfc_4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xff, 0xd8, 0xff, 0xe0]), "/9j/4A==");
    }

    #[test]
    fn the_curves_speed_index_is_the_recorded_one_from_the_same_frames() {
        // Twice browser::visual's hand-made example: 0 % until 200 ms, 50 %
        // until 300 ms, then 100 %.
        let steps = [(100.0, 0.0), (200.0, 50.0), (300.0, 100.0)];
        assert_eq!(speed_index(&steps), 250.0);
        assert_eq!(speed_index(&[(150.0, 100.0)]), 150.0);
    }

    fn probe(rep: usize, plt: f64, si: Option<f64>) -> ProbeRecord {
        let mut p = ProbeRecord::failed(results::Protocol::H2, rep, String::new());
        p.error = None;
        p.plt_ms = plt;
        p.paint = si.map(|s| results::Paint {
            speed_index_ms: Some(s),
            ..Default::default()
        });
        p
    }

    #[test]
    fn the_representative_is_the_median_speed_index_else_plt() {
        let ps = [
            probe(0, 900.0, Some(500.0)),
            probe(1, 800.0, Some(300.0)),
            probe(2, 700.0, Some(400.0)),
        ];
        let with: Vec<(&ProbeRecord, ())> = ps.iter().map(|p| (p, ())).collect();
        let (pick, by) = representative(&with).unwrap();
        assert_eq!((pick.0.rep, by), (2, "Speed Index"));
        // Four: the lower of the middle two.
        let more = [&ps[..], &[probe(3, 600.0, Some(350.0))]].concat();
        let with: Vec<(&ProbeRecord, ())> = more.iter().map(|p| (p, ())).collect();
        assert_eq!(representative(&with).unwrap().0 .0.rep, 3);
        // One without a Speed Index: by PLT.
        let plt = [ps[0].clone(), ps[1].clone(), probe(2, 100.0, None)];
        let with: Vec<(&ProbeRecord, ())> = plt.iter().map(|p| (p, ())).collect();
        let (pick, by) = representative(&with).unwrap();
        assert_eq!((pick.0.rep, by), (1, "PLT"));
        assert!(representative::<()>(&[]).is_none());
    }

    #[test]
    fn a_filmstrip_reads_its_jpegs_and_their_progress() {
        let dir = std::env::temp_dir().join(format!("report-filmstrip-{}", std::process::id()));
        let film = dir.join("har").join("abc.filmstrip");
        std::fs::create_dir_all(&film).unwrap();
        let jpeg = [0xff, 0xd8, 0xff, 0xe0, 0, 0];
        std::fs::write(film.join("0417ms.jpg"), jpeg).unwrap();
        std::fs::write(film.join("0083ms.jpg"), jpeg).unwrap();
        // Not a JPEG, not a frame's name: left out.
        std::fs::write(film.join("0100ms.jpg"), b"frame").unwrap();
        std::fs::write(film.join("notes.txt"), jpeg).unwrap();
        let s = Strip::read(&dir, "har/abc.har").unwrap();
        assert_eq!(s.frames, frames(&[83.0, 417.0]));
        assert_eq!(s.progress(), None);
        std::fs::write(
            film.join("progress.json"),
            r#"{"frames": [{"file": "0083ms.jpg", "ms": 83.4, "progress": 40}, {"file": "0417ms.jpg", "ms": 416.9, "progress": 100}]}"#,
        )
        .unwrap();
        let s = Strip::read(&dir, "har/abc.har").unwrap();
        assert_eq!(s.progress(), Some(vec![(83.4, 40.0), (416.9, 100.0)]));
        assert!(Strip::read(&dir, "har/none.har").is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A campaign of icons over https and h2, two repetitions each, whose
    /// probes' filmstrips (`frames` of each: ms, progress) are written in a
    /// fresh directory, beside HARs that are not.
    fn campaign(name: &str, frames: &[&[(f64, u32)]]) -> (PathBuf, Experiment, Vec<ProbeRecord>) {
        campaign_of("icons", name, frames)
    }

    /// As `campaign`, of `site`.
    fn campaign_of(
        site: &str,
        name: &str,
        frames: &[&[(f64, u32)]],
    ) -> (PathBuf, Experiment, Vec<ProbeRecord>) {
        let dir = std::env::temp_dir().join(format!("report-fs-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let exp = results::experiment::parse(
            "fs.toml",
            &format!("name = \"fs\"\nsites = [\"{site}\"]\nprotocols = [\"https\", \"h2\"]\nreps = 2\n[link]\nrtt = \"20ms\"\n"),
        )
        .unwrap();
        let point = exp.points().remove(0);
        let mut probes = Vec::new();
        for (i, film) in frames.iter().enumerate() {
            let proto = if i % 2 == 0 {
                results::Protocol::Https
            } else {
                results::Protocol::H2
            };
            let mut p = probe(i / 2, 1000.0 + i as f64, Some(400.0 + i as f64));
            p.protocol = proto;
            p.point = point.clone();
            // A field at its default that an older record did not spell out.
            assert_eq!(p.point.remove("layout").as_deref(), Some("origin"));
            p.har = Some(format!("har/p{i}.har"));
            if let Some(paint) = p.paint.as_mut() {
                paint.fcp_ms = film.first().map(|f| f.0);
                paint.visually_complete_ms = film.last().map(|f| f.0);
            }
            let d = dir.join(format!("har/p{i}.filmstrip"));
            std::fs::create_dir_all(&d).unwrap();
            let mut rows = Vec::new();
            for (ms, progress) in *film {
                let file = format!("{:04}ms.jpg", ms.round());
                std::fs::write(d.join(&file), [0xff, 0xd8, 0xff, *progress as u8]).unwrap();
                rows.push(serde_json::json!({"file": file, "ms": ms, "progress": progress}));
            }
            std::fs::write(
                d.join("progress.json"),
                serde_json::json!({ "frames": rows }).to_string(),
            )
            .unwrap();
            probes.push(p);
        }
        (dir, exp, probes)
    }

    /// Issue 47: the view's title printed the HAR's absolute path, and its
    /// 16 columns were wider than a 1 400 px window (the last cut off).
    #[test]
    fn a_har_sites_view_is_titled_by_its_name_and_fits_the_page() {
        let har = "/work/main/tests/data/pagexray-http2-chrome.har";
        let frames: &[(f64, u32)] = &[(420.0, 40), (1250.0, 100)];
        let (dir, exp, probes) = campaign_of(har, "har-title", &[frames, frames]);
        let mut h = Html::default();
        let (mut anchor, mut budget) = (true, Budget::default());
        section(&mut h, &dir, &exp, &probes, har, &mut anchor, &mut budget);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            h.body
                .contains("pagexray-http2-chrome: filmstrips and visual progress"),
            "{}",
            h.body
        );
        assert!(
            !h.body.contains(">/work/main/"),
            "a path in a title: {}",
            h.body
        );
        assert_eq!(crate::axes::site_name("icons"), "icons");
        // The grid at its most columns, each at its narrowest, in the body.
        let px = |rem: f64| rem * 16.0;
        let widest = px(LABEL_REM) + MAX_COLUMNS as f64 * (px(FRAME_MIN_REM) + GAP_PX);
        assert!(
            widest <= px(crate::html::PAGE_REM),
            "{MAX_COLUMNS} columns need {widest} px, the body has {}",
            px(crate::html::PAGE_REM)
        );
        assert!(px(crate::html::PAGE_REM) + px(2.0) <= 1400.0 - 20.0);
    }

    #[test]
    fn a_view_has_a_row_per_protocol_at_the_same_times_and_none_without_frames() {
        let slow: &[(f64, u32)] = &[(420.0, 40), (1250.0, 100)];
        let fast: &[(f64, u32)] = &[(230.0, 60), (310.0, 100)];
        let (dir, exp, probes) = campaign("view", &[slow, fast, slow, fast]);
        let mut h = Html::default();
        let (mut anchor, mut budget) = (true, Budget::default());
        section(
            &mut h,
            &dir,
            &exp,
            &probes,
            "icons",
            &mut anchor,
            &mut budget,
        );
        let page = &h.body;
        assert!(page.starts_with(r#"<section class="filmstrip" id="filmstrip">"#));
        assert!(!anchor, "the anchor is taken");
        let rows: Vec<&str> = page.split(r#"<div class="fs-row""#).collect();
        assert_eq!(rows.len(), 3, "a header and two rows");
        assert!(rows[1].starts_with(r#" data-protocol="https""#));
        assert!(rows[2].starts_with(r#" data-protocol="h2""#));
        // 100 ms columns up to the slowest row's visually complete, 1250 ms.
        let times = |s: &str| -> Vec<String> {
            s.split(r#"data-ms=""#)
                .skip(1)
                .map(|x| x.split('"').next().unwrap().to_string())
                .collect()
        };
        let want: Vec<String> = (1..=13).map(|i| (i * 100).to_string()).collect();
        assert_eq!(times(rows[0]), want);
        assert_eq!(times(rows[1]), want);
        assert_eq!(times(rows[2]), want);
        // https: white until 500 ms (its first frame at 420), then that
        // frame, its last from 1300 ms; h2's first at 300, its last from 400.
        let frames = |s: &str| -> Vec<String> {
            s.split(r#"<div class="fs-frame"#)
                .skip(1)
                .map(|x| {
                    x.split(r#"data-frame=""#)
                        .nth(1)
                        .filter(|_| !x.starts_with(" blank"))
                        .map_or("-".into(), |f| f.split('"').next().unwrap().to_string())
                })
                .collect()
        };
        let https = frames(rows[1]);
        assert_eq!(&https[..5], ["-", "-", "-", "-", "0420ms.jpg"]);
        assert_eq!(https[12], "1250ms.jpg");
        let h2 = frames(rows[2]);
        assert_eq!(&h2[..4], ["-", "-", "0230ms.jpg", "0310ms.jpg"]);
        // FCP and VC badges, each where its time falls; frames embedded once each.
        assert_eq!(rows[1].matches(">FCP</span>").count(), 1);
        assert_eq!(rows[2].matches(">VC</span>").count(), 1);
        assert_eq!(page.matches("data:image/jpeg;base64,").count(), 4);
        assert_eq!(h.plots, 1, "the curves");
        assert!(page.contains("visual progress (%)"));
        // The representative (rep 0 of 2, the lower median) is named.
        assert!(
            rows[1].contains("<b>https</b> rep 0") && rows[1].contains("median Speed Index of 2")
        );

        // No filmstrip at all: no section, no empty boxes.
        let bare: Vec<ProbeRecord> = probes
            .iter()
            .cloned()
            .map(|mut p| {
                p.har = None;
                p
            })
            .collect();
        let mut h = Html::default();
        section(
            &mut h,
            &dir,
            &exp,
            &bare,
            "icons",
            &mut true,
            &mut Budget::default(),
        );
        assert!(h.body.is_empty() && h.toc.is_empty() && h.plots == 0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
