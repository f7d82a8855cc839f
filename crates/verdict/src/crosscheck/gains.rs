//! The crosscheck on the answer (issue 35): not only whether the model's
//! times are Chromium's, but whether its gains are. For every pair of
//! protocols (A before B in `--protocols`), every metric and every (site,
//! link) point, each client's gain of B over A — compare's gain,
//! `results::stats::gain_with_ci`: (mean A − mean B) / mean A × 100, positive
//! when B is faster, with its 95 % bootstrap CI — and the gain error in
//! points (model − Chromium). Per pair and metric: the share of points within
//! ±3 points, the share whose sign agrees among the points where Chromium's
//! CI excludes zero, and per swept axis (RTT, rate, loss) whether the gain
//! rises or falls along it in both clients.

use super::metrics::Figure;
use super::Row;
use proto::Protocol;
use results::stats::{gain_with_ci, mean, BOOTSTRAP_SEED};
use serde::Serialize;

/// A gain error within this many points (either way) counts as close.
pub const CLOSE_PTS: f64 = 3.0;

/// Where a link sits on the axes a crosscheck sweeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Axes {
    /// The link's round-trip time, ms.
    pub rtt_ms: f64,
    /// Its rate, Mbit/s; None: not limited (the last along the axis).
    pub rate_mbit: Option<f64>,
    /// Its long-run loss rate, % (0 without loss).
    pub loss_pct: f64,
}

/// A swept axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    Rtt,
    Rate,
    Loss,
}

impl Axis {
    pub const ALL: [Axis; 3] = [Axis::Rtt, Axis::Rate, Axis::Loss];

    pub fn name(self) -> &'static str {
        match self {
            Axis::Rtt => "rtt",
            Axis::Rate => "rate",
            Axis::Loss => "loss",
        }
    }

    /// The axis's value at `a`, ordered as along the axis (no rate limit is
    /// +∞: the fastest).
    pub fn value(self, a: &Axes) -> f64 {
        match self {
            Axis::Rtt => a.rtt_ms,
            Axis::Rate => a.rate_mbit.unwrap_or(f64::INFINITY),
            Axis::Loss => a.loss_pct,
        }
    }
}

/// One (pair, metric, site, link) point: both clients' gains of B over A.
#[derive(Debug, Clone, Serialize)]
pub struct GainPoint {
    pub a: Protocol,
    pub b: Protocol,
    pub metric: Figure,
    pub site: String,
    pub link: String,
    pub axes: Axes,
    /// The model's gain, % (None when a side has no value), and its CI.
    pub model_gain_pct: Option<f64>,
    pub model_ci95: [f64; 2],
    pub chromium_gain_pct: Option<f64>,
    pub chromium_ci95: [f64; 2],
    /// Model gain − Chromium gain, in points; None unless both have one.
    pub error_pts: Option<f64>,
    /// Chromium's CI lies wholly above or below zero: its sign is known.
    pub chromium_ci_excludes_zero: bool,
    /// Whether the two gains have the same sign (−, 0, +); None unless
    /// Chromium's CI excludes zero and the model has a gain.
    pub sign_agrees: Option<bool>,
}

/// The sign of `v`: −1, 0 or 1.
fn sign(v: f64) -> i8 {
    if v > 0.0 {
        1
    } else if v < 0.0 {
        -1
    } else {
        0
    }
}

/// The point of protocols `a` then `b` for `metric` from the rows of one
/// (site, link): each client's values of A and of B.
pub fn gain_point(ra: &Row, rb: &Row, metric: Figure) -> GainPoint {
    let (ca, cb) = (ra.cell(metric), rb.cell(metric));
    let side = |f: fn(&super::metrics::Cell) -> &Vec<f64>| -> (Option<f64>, [f64; 2]) {
        let (a, b) = match (ca, cb) {
            (Some(a), Some(b)) => (f(a).as_slice(), f(b).as_slice()),
            _ => (&[][..], &[][..]),
        };
        match gain_with_ci(a, b, BOOTSTRAP_SEED) {
            Some((g, ci)) => (Some(g), ci),
            None => (None, [f64::NAN, f64::NAN]),
        }
    };
    let (model_gain_pct, model_ci95) = side(|c| &c.model);
    let (chromium_gain_pct, chromium_ci95) = side(|c| &c.chromium);
    let excludes = chromium_ci95[0] > 0.0 || chromium_ci95[1] < 0.0;
    GainPoint {
        a: ra.protocol,
        b: rb.protocol,
        metric,
        site: ra.site.clone(),
        link: ra.link.clone(),
        axes: ra.axes,
        error_pts: model_gain_pct.zip(chromium_gain_pct).map(|(m, c)| m - c),
        chromium_ci_excludes_zero: excludes,
        sign_agrees: match (model_gain_pct, chromium_gain_pct) {
            (Some(m), Some(c)) if excludes => Some(sign(m) == sign(c)),
            _ => None,
        },
        model_gain_pct,
        model_ci95,
        chromium_gain_pct,
        chromium_ci95,
    }
}

/// The protocols of `rows` in the order they first appear (the order of
/// `--protocols`).
pub(crate) fn protocols(rows: &[Row]) -> Vec<Protocol> {
    let mut out: Vec<Protocol> = Vec::new();
    for r in rows {
        if !out.contains(&r.protocol) {
            out.push(r.protocol);
        }
    }
    out
}

/// The row of `protocol` at (`site`, `link`), if any.
pub(crate) fn find_row<'a>(
    rows: &'a [Row],
    site: &str,
    link: &str,
    protocol: Protocol,
) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.site == site && r.link == link && r.protocol == protocol)
}

/// Every point: per pair (A before B), per metric, per (site, link) in the
/// rows' order.
pub fn gain_points(rows: &[Row]) -> Vec<GainPoint> {
    let protocols = protocols(rows);
    let mut places: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !places.contains(&(r.site.as_str(), r.link.as_str())) {
            places.push((&r.site, &r.link));
        }
    }
    let find = |site: &str, link: &str, p: Protocol| find_row(rows, site, link, p);
    let mut out = Vec::new();
    for (i, &a) in protocols.iter().enumerate() {
        for &b in &protocols[i + 1..] {
            for metric in Figure::ALL {
                for &(site, link) in &places {
                    if let (Some(ra), Some(rb)) = (find(site, link, a), find(site, link, b)) {
                        out.push(gain_point(ra, rb, metric));
                    }
                }
            }
        }
    }
    out
}

/// One step along an axis: from a value to the next, the other axes and
/// the site fixed; the sign of each client's change of gain.
#[derive(Debug, Clone, Serialize)]
pub struct Step {
    pub site: String,
    /// The link labels of the two points.
    pub from_link: String,
    pub to_link: String,
    pub from: f64,
    pub to: f64,
    /// Sign of (gain at `to` − gain at `from`): −1 falls, 0 flat, 1 rises.
    pub model_slope: i8,
    pub chromium_slope: i8,
    pub agree: bool,
    /// Chromium's CIs at the two ends are disjoint: its move is beyond its
    /// noise.
    pub chromium_sure: bool,
}

/// Whether the gain moves the same way along an axis in both clients.
#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    pub axis: Axis,
    /// Steps where both clients have the gain at both ends.
    pub steps: usize,
    pub agree: usize,
    pub disagree: usize,
    pub agree_pct: f64,
    /// "agree" (every step), "disagree" (none), "mixed"; None for no step.
    pub verdict: Option<&'static str>,
    /// The steps where Chromium is sure of its move, and of them the ones
    /// where the model moves the same way.
    pub sure_steps: usize,
    pub sure_agree: usize,
    pub detail: Vec<Step>,
}

/// The trend along `axis` of `points` (one pair, one metric): the points are
/// put in lines — same site, same value of every other axis — sorted along
/// the axis, and each successive two whose gains both clients have is a step.
pub fn trend(axis: Axis, points: &[&GainPoint]) -> Trend {
    let others: Vec<Axis> = Axis::ALL.into_iter().filter(|a| *a != axis).collect();
    let same_line = |p: &GainPoint, q: &GainPoint| {
        p.site == q.site
            && others
                .iter()
                .all(|o| o.value(&p.axes).total_cmp(&o.value(&q.axes)).is_eq())
    };
    let mut lines: Vec<Vec<&GainPoint>> = Vec::new();
    for p in points {
        match lines.iter_mut().find(|l| same_line(l[0], p)) {
            Some(l) => l.push(p),
            None => lines.push(vec![p]),
        }
    }
    let mut detail = Vec::new();
    for mut line in lines {
        line.sort_by(|p, q| axis.value(&p.axes).total_cmp(&axis.value(&q.axes)));
        for w in line.windows(2) {
            let (p, q) = (w[0], w[1]);
            let slope = |f: fn(&GainPoint) -> Option<f64>| Some(sign(f(q)? - f(p)?));
            let (Some(m), Some(c)) = (slope(|g| g.model_gain_pct), slope(|g| g.chromium_gain_pct))
            else {
                continue;
            };
            detail.push(Step {
                site: p.site.clone(),
                from_link: p.link.clone(),
                to_link: q.link.clone(),
                from: axis.value(&p.axes),
                to: axis.value(&q.axes),
                model_slope: m,
                chromium_slope: c,
                agree: m == c,
                chromium_sure: disjoint(p.chromium_ci95, q.chromium_ci95),
            });
        }
    }
    let agree = detail.iter().filter(|s| s.agree).count();
    let steps = detail.len();
    let sure = || detail.iter().filter(|s| s.chromium_sure);
    Trend {
        sure_steps: sure().count(),
        sure_agree: sure().filter(|s| s.agree).count(),
        axis,
        steps,
        agree,
        disagree: steps - agree,
        agree_pct: share(agree, steps),
        verdict: match (agree, steps) {
            (_, 0) => None,
            (a, s) if a == s => Some("agree"),
            (0, _) => Some("disagree"),
            _ => Some("mixed"),
        },
        detail,
    }
}

/// Two intervals (both ends numbers) that do not overlap.
fn disjoint(a: [f64; 2], b: [f64; 2]) -> bool {
    a.iter().chain(&b).all(|v| v.is_finite()) && (a[1] < b[0] || b[1] < a[0])
}

/// `k` of `n` in %; NaN for none.
fn share(k: usize, n: usize) -> f64 {
    match n {
        0 => f64::NAN,
        n => k as f64 / n as f64 * 100.0,
    }
}

/// The gain error of one pair and one metric over its points.
#[derive(Debug, Clone, Serialize)]
pub struct GainAgreement {
    pub a: Protocol,
    pub b: Protocol,
    pub metric: Figure,
    pub points: usize,
    /// Points where both clients have a gain.
    pub compared: usize,
    /// Mean of |model − Chromium| over them, points.
    pub mean_abs_error_pts: f64,
    /// Of them, within ±[`CLOSE_PTS`] points.
    pub within_3: usize,
    pub within_3_pct: f64,
    /// Points where Chromium's CI excludes zero and the model has a gain.
    pub sign_known: usize,
    /// Of them, the gains of the same sign.
    pub sign_agree: usize,
    pub sign_agree_pct: f64,
    /// Per axis the points sweep (more than one value), in `Axis::ALL` order.
    pub trends: Vec<Trend>,
}

/// The agreement of each pair and metric of `points`, in their order.
pub fn gain_agreements(points: &[GainPoint]) -> Vec<GainAgreement> {
    let mut keys: Vec<(Protocol, Protocol, Figure)> = Vec::new();
    for p in points {
        if !keys.contains(&(p.a, p.b, p.metric)) {
            keys.push((p.a, p.b, p.metric));
        }
    }
    keys.into_iter()
        .map(|(a, b, metric)| {
            let set: Vec<&GainPoint> = points
                .iter()
                .filter(|p| (p.a, p.b, p.metric) == (a, b, metric))
                .collect();
            gain_agreement(a, b, metric, &set)
        })
        .collect()
}

/// The agreement of `points`, all of pair (a, b) and `metric`.
pub fn gain_agreement(
    a: Protocol,
    b: Protocol,
    metric: Figure,
    points: &[&GainPoint],
) -> GainAgreement {
    let errors: Vec<f64> = points.iter().filter_map(|p| p.error_pts).collect();
    let within = errors.iter().filter(|e| e.abs() <= CLOSE_PTS).count();
    let signs: Vec<bool> = points.iter().filter_map(|p| p.sign_agrees).collect();
    let sign_agree = signs.iter().filter(|s| **s).count();
    let swept = |axis: Axis| {
        let mut values: Vec<f64> = points.iter().map(|p| axis.value(&p.axes)).collect();
        values.sort_by(f64::total_cmp);
        values.dedup_by(|x, y| x.total_cmp(y).is_eq());
        values.len() > 1
    };
    GainAgreement {
        a,
        b,
        metric,
        points: points.len(),
        compared: errors.len(),
        mean_abs_error_pts: mean(&errors.iter().map(|e| e.abs()).collect::<Vec<_>>()),
        within_3: within,
        within_3_pct: share(within, errors.len()),
        sign_known: signs.len(),
        sign_agree,
        sign_agree_pct: share(sign_agree, signs.len()),
        trends: Axis::ALL
            .into_iter()
            .filter(|a| swept(*a))
            .map(|axis| trend(axis, points))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crosscheck::metrics::Cell;
    use crate::crosscheck::tests::row;

    /// A row whose PLT values are given per client (other metrics: none),
    /// at `rtt` ms and `rate` Mbit/s.
    fn at(site: &str, p: Protocol, rtt: f64, rate: f64, model: &[f64], chrome: &[f64]) -> Row {
        let link = format!("{rtt}ms {rate}mbit");
        let mut r = row(site, &link, "", "", p, &[], &[]);
        r.axes = Axes {
            rtt_ms: rtt,
            rate_mbit: Some(rate),
            loss_pct: 0.0,
        };
        r.metrics[0] = Cell::new(Figure::Plt, model.to_vec(), chrome.to_vec());
        r
    }

    fn plt_points(rows: &[Row]) -> Vec<GainPoint> {
        gain_points(rows)
            .into_iter()
            .filter(|g| g.metric == Figure::Plt)
            .collect()
    }

    #[test]
    fn gain_error_is_model_minus_chromium_with_compares_gain() {
        let rows = [
            at(
                "s",
                Protocol::Https,
                20.0,
                1.0,
                &[100.0, 110.0, 90.0],
                &[200.0, 210.0, 190.0],
            ),
            at(
                "s",
                Protocol::H2,
                20.0,
                1.0,
                &[80.0, 85.0, 75.0],
                &[170.0, 175.0, 165.0],
            ),
        ];
        let g = &plt_points(&rows)[0];
        assert_eq!((g.a, g.b), (Protocol::Https, Protocol::H2));
        // Model: (100 − 80) / 100 = 20 %; Chromium: (200 − 170) / 200 = 15 %.
        assert!((g.model_gain_pct.unwrap() - 20.0).abs() < 1e-9);
        assert!((g.chromium_gain_pct.unwrap() - 15.0).abs() < 1e-9);
        assert!((g.error_pts.unwrap() - 5.0).abs() < 1e-9);
        // The CI is compare's: the same bootstrap with the same seed.
        let (_, ci) = gain_with_ci(
            &[200.0, 210.0, 190.0],
            &[170.0, 175.0, 165.0],
            BOOTSTRAP_SEED,
        )
        .unwrap();
        assert_eq!(g.chromium_ci95, ci);
        assert!(g.chromium_ci_excludes_zero, "{g:?}");
        assert_eq!(g.sign_agrees, Some(true));
        // Every other metric has no values: no gains, no error, no sign.
        let fcp = gain_points(&rows)
            .into_iter()
            .find(|g| g.metric == Figure::Fcp)
            .unwrap();
        assert_eq!(
            (fcp.model_gain_pct, fcp.error_pts, fcp.sign_agrees),
            (None, None, None)
        );
        let json = serde_json::to_string(&fcp).unwrap();
        assert!(!json.contains("NaN"), "{json}");
    }

    #[test]
    fn pairs_follow_the_protocols_order() {
        let rows: Vec<Row> = [Protocol::Http, Protocol::Https, Protocol::H2]
            .into_iter()
            .map(|p| at("s", p, 20.0, 1.0, &[100.0], &[100.0]))
            .collect();
        let pairs: Vec<_> = plt_points(&rows).iter().map(|g| (g.a, g.b)).collect();
        assert_eq!(
            pairs,
            [
                (Protocol::Http, Protocol::Https),
                (Protocol::Http, Protocol::H2),
                (Protocol::Https, Protocol::H2)
            ]
        );
    }

    /// Four points: errors +1, −2, +10, and one the model has no gain at;
    /// Chromium's sign known at two (both agree? one does, one not).
    #[test]
    fn within_3_points_and_sign_agreement_where_chromium_is_sure() {
        let point = |model: Option<f64>, chrome: f64, ci: [f64; 2]| GainPoint {
            a: Protocol::Https,
            b: Protocol::H2,
            metric: Figure::Plt,
            site: "s".into(),
            link: "l".into(),
            axes: Axes::default(),
            model_gain_pct: model,
            model_ci95: [f64::NAN; 2],
            chromium_gain_pct: Some(chrome),
            chromium_ci95: ci,
            error_pts: model.map(|m| m - chrome),
            chromium_ci_excludes_zero: ci[0] > 0.0 || ci[1] < 0.0,
            sign_agrees: model
                .filter(|_| ci[0] > 0.0 || ci[1] < 0.0)
                .map(|m| sign(m) == sign(chrome)),
        };
        let points = [
            point(Some(11.0), 10.0, [5.0, 15.0]),  // +1, sure, agrees
            point(Some(-1.0), 1.0, [-4.0, 6.0]),   // −2, CI spans 0: not counted
            point(Some(2.0), -8.0, [-12.0, -3.0]), // +10, sure, disagrees
            point(None, 4.0, [1.0, 7.0]),          // no model gain
        ];
        let refs: Vec<&GainPoint> = points.iter().collect();
        let a = gain_agreement(Protocol::Https, Protocol::H2, Figure::Plt, &refs);
        assert_eq!((a.points, a.compared, a.within_3), (4, 3, 2));
        assert!((a.within_3_pct - 200.0 / 3.0).abs() < 1e-9);
        assert!((a.mean_abs_error_pts - 13.0 / 3.0).abs() < 1e-9);
        assert_eq!((a.sign_known, a.sign_agree), (2, 1));
        assert!((a.sign_agree_pct - 50.0).abs() < 1e-9);
        assert!(a.trends.is_empty(), "one link: no axis swept");
    }

    /// h2's gain over https along RTT (20, 50, 150 ms) at two rates, on two
    /// sites: Chromium's rises then falls at 1 Mbit; the model's rises twice.
    #[test]
    fn trend_per_axis_by_the_sign_of_successive_slopes() {
        let mut rows = Vec::new();
        // (rtt, rate, model h2 PLT, chromium h2 PLT); https is 100 in both.
        for (rtt, rate, m, c) in [
            (20.0, 1.0, 90.0, 90.0),  // gains 10, 10
            (50.0, 1.0, 80.0, 70.0),  // 20, 30: both rise
            (150.0, 1.0, 70.0, 80.0), // 30, 20: model rises, Chromium falls
            (20.0, 8.0, 95.0, 95.0),  // at 8 Mbit: 5, 5
            (150.0, 8.0, 85.0, 85.0), // 15, 15 (no 50 ms here): both rise
        ] {
            for site in ["a", "b"] {
                rows.push(at(site, Protocol::Https, rtt, rate, &[100.0], &[100.0]));
                rows.push(at(site, Protocol::H2, rtt, rate, &[m], &[c]));
            }
        }
        let points = plt_points(&rows);
        let refs: Vec<&GainPoint> = points.iter().collect();
        let t = trend(Axis::Rtt, &refs);
        // Per site: 2 steps at 1 Mbit, 1 at 8 Mbit.
        assert_eq!((t.steps, t.agree, t.disagree), (6, 4, 2), "{t:#?}");
        assert_eq!(t.verdict, Some("mixed"));
        let bad = t.detail.iter().find(|s| !s.agree).unwrap();
        assert_eq!((bad.from, bad.to), (50.0, 150.0));
        assert_eq!((bad.model_slope, bad.chromium_slope), (1, -1));
        // Along rate (20 and 150 ms have both rates): 1 → 8 Mbit gains fall
        // 10 → 5 (both), and at 150 ms 30 → 15 and 20 → 15 (both fall).
        let r = trend(Axis::Rate, &refs);
        assert_eq!(
            (r.steps, r.agree, r.verdict),
            (4, 4, Some("agree")),
            "{r:#?}"
        );
        // The agreement has a trend per swept axis: RTT and rate, no loss.
        let a = &gain_agreements(&points)[0];
        let axes: Vec<Axis> = a.trends.iter().map(|t| t.axis).collect();
        assert_eq!(axes, [Axis::Rtt, Axis::Rate]);
        assert_eq!(trend(Axis::Loss, &refs).verdict, None, "nothing swept");
        // One load each: no CI, so Chromium is sure of no step.
        assert_eq!((t.sure_steps, r.sure_steps), (0, 0));
    }

    /// Along loss: Chromium's gain rises 0 → 1 % beyond its noise (CIs
    /// apart) and falls 1 → 2 % within it; the model rises both times.
    #[test]
    fn a_step_chromium_is_sure_of_has_disjoint_intervals() {
        let point = |loss: f64, model: f64, chrome: f64, ci: [f64; 2]| GainPoint {
            a: Protocol::Https,
            b: Protocol::H2,
            metric: Figure::Plt,
            site: "s".into(),
            link: format!("{loss}%"),
            axes: Axes {
                loss_pct: loss,
                ..Axes::default()
            },
            model_gain_pct: Some(model),
            model_ci95: [f64::NAN; 2],
            chromium_gain_pct: Some(chrome),
            chromium_ci95: ci,
            error_pts: Some(model - chrome),
            chromium_ci_excludes_zero: false,
            sign_agrees: None,
        };
        let points = [
            point(2.0, 30.0, 18.0, [12.0, 24.0]),
            point(0.0, 10.0, 5.0, [2.0, 8.0]),
            point(1.0, 20.0, 20.0, [15.0, 25.0]),
        ];
        let refs: Vec<&GainPoint> = points.iter().collect();
        let t = trend(Axis::Loss, &refs);
        assert_eq!(
            (t.steps, t.agree, t.sure_steps, t.sure_agree),
            (2, 1, 1, 1),
            "{t:#?}"
        );
        assert_eq!(
            (t.detail[0].from, t.detail[0].to),
            (0.0, 1.0),
            "sorted along the axis"
        );
        assert!(t.detail[0].chromium_sure && !t.detail[1].chromium_sure);
        assert!(disjoint([0.0, 1.0], [2.0, 3.0]) && !disjoint([0.0, 2.0], [1.0, 3.0]));
        assert!(!disjoint([f64::NAN, 1.0], [2.0, 3.0]));
    }

    #[test]
    fn a_flat_gain_against_a_moving_one_disagrees_and_unlimited_is_fastest() {
        assert_eq!(Axis::Rate.value(&Axes::default()), f64::INFINITY);
        let mut rows = Vec::new();
        for (rtt, m, c) in [(20.0, 90.0, 90.0), (150.0, 90.0, 80.0)] {
            rows.push(at("s", Protocol::Https, rtt, 1.0, &[100.0], &[100.0]));
            rows.push(at("s", Protocol::H2, rtt, 1.0, &[m], &[c]));
        }
        let points = plt_points(&rows);
        let refs: Vec<&GainPoint> = points.iter().collect();
        let t = trend(Axis::Rtt, &refs);
        assert_eq!((t.steps, t.disagree, t.verdict), (1, 1, Some("disagree")));
        assert_eq!(
            (t.detail[0].model_slope, t.detail[0].chromium_slope),
            (0, 1)
        );
    }
}
