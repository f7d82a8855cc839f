//! How far to trust the model's gain where no Chromium was loaded (issue
//! 49): the gain errors the fidelity benchmark measured — a crosscheck of
//! the model against Chromium's reference loads, per protocol pair, metric
//! and link point, over its sites (docs/results/crosscheck/fidelity.tsv,
//! written by `scripts/fidelity-gains.py --tsv`) — and the point of that
//! grid nearest a comparison's link, or why the link lies outside it. A
//! point beside competing flows (`--cross-traffic`) takes only rows run
//! beside the same flows.

use proto::Protocol;
use results::Metric;
use serde::Serialize;

/// The benchmark's table, built into the binary: the answer travels with
/// the model it measured.
const TABLE: &str = include_str!("../../../docs/results/crosscheck/fidelity.tsv");

/// How far an axis may lie beyond the grid's last value and still take
/// that value's figures: a factor of the RTT or rate, points of loss.
const BEYOND_FACTOR: f64 = 1.5;
const BEYOND_LOSS_PTS: f64 = 0.5;

/// A link as the benchmark's grid places it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    pub rtt_ms: f64,
    pub rate_mbit: f64,
    pub loss_pct: f64,
}

impl std::fmt::Display for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ms / {} Mbit / {} % loss",
            self.rtt_ms, self.rate_mbit, self.loss_pct
        )
    }
}

/// One row: the gain of `b` over `a` on `metric` at `point`, beside the
/// competing flows `cross` (as `--cross-traffic` writes them; "none"),
/// model − Chromium, over `sites` sites.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measured {
    pub a: Protocol,
    pub b: Protocol,
    pub metric: Metric,
    pub point: Point,
    pub cross: &'static str,
    pub sites: usize,
    pub mean_abs_err_pts: f64,
    pub mean_err_pts: f64,
    pub within_3: usize,
}

/// The table's first comment line: what was run, when.
pub fn source() -> &'static str {
    TABLE
        .lines()
        .next()
        .and_then(|l| l.split_once(": "))
        .map_or("", |(_, s)| s)
}

/// The rows of `table` (the TSV's format: 10 fields, or 11 with `cross`
/// last); Err names the line.
fn parse(table: &'static str) -> Result<Vec<Measured>, String> {
    let mut rows = Vec::new();
    for (i, line) in table.lines().enumerate() {
        if line.starts_with('#') || line.starts_with("a\t") || line.trim().is_empty() {
            continue;
        }
        let bad = |what: &str| format!("fidelity.tsv line {}: {what}: {line}", i + 1);
        let f: Vec<&str> = line.split('\t').collect();
        let (ten, cross) = match f.len() {
            11 => (&f[..10], f[10]),
            _ => (&f[..], "none"),
        };
        let [a, b, metric, rtt, rate, loss, sites, mae, me, within] = ten[..] else {
            return Err(bad("not 10 or 11 fields"));
        };
        let num = |s: &str| s.parse::<f64>().map_err(|_| bad("not a number"));
        rows.push(Measured {
            a: a.parse().map_err(|_| bad("protocol A"))?,
            b: b.parse().map_err(|_| bad("protocol B"))?,
            metric: metric.parse().map_err(|_| bad("metric"))?,
            point: Point {
                rtt_ms: num(rtt)?,
                rate_mbit: num(rate)?,
                loss_pct: num(loss)?,
            },
            cross,
            sites: sites.parse().map_err(|_| bad("sites"))?,
            mean_abs_err_pts: num(mae)?,
            mean_err_pts: num(me)?,
            within_3: within.parse().map_err(|_| bad("within_3"))?,
        });
    }
    Ok(rows)
}

/// What the benchmark says of one protocol's gain over the baseline.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "found", rename_all = "snake_case")]
pub enum Trust {
    /// The nearest point's figures, for the pair as measured; `reversed`:
    /// the benchmark measured the pair the other way round (B>A), its mean
    /// error turned round here.
    Nearest { measured: Measured, reversed: bool },
    /// Why the benchmark says nothing of `protocol`'s gain here.
    Outside { protocol: Protocol, why: String },
}

/// The grid's span on each axis, as "20–150 ms, 1–8 Mbit, 0 % loss".
fn span(rows: &[&Measured]) -> String {
    let shown = |f: fn(&Point) -> f64| match range(rows, f) {
        (lo, hi) if lo == hi => format!("{lo}"),
        (lo, hi) => format!("{lo}–{hi}"),
    };
    format!(
        "{} ms, {} Mbit, {} % loss",
        shown(|p| p.rtt_ms),
        shown(|p| p.rate_mbit),
        shown(|p| p.loss_pct)
    )
}

/// The least and the greatest of one axis (`f`) over `rows`.
fn range(rows: &[&Measured], f: fn(&Point) -> f64) -> (f64, f64) {
    rows.iter()
        .map(|r| f(&r.point))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        })
}

/// How far the benchmark lets one trust `b`'s gain over `a` on `metric` at
/// `point` beside the competing flows `cross` ("none" for none): the
/// figures of the nearest point it measured beside the same flows (log
/// distance in RTT and rate, points of loss), or why it cannot say.
pub fn trust(a: Protocol, b: Protocol, metric: Metric, point: &Point, cross: &str) -> Trust {
    // Parsed once per process (a compare asks once per protocol); its own
    // test shows the built-in table parses.
    static ROWS: std::sync::OnceLock<Vec<Measured>> = std::sync::OnceLock::new();
    let rows = ROWS.get_or_init(|| parse(TABLE).unwrap_or_default());
    trust_in(rows, a, b, metric, point, cross)
}

fn trust_in(
    rows: &[Measured],
    a: Protocol,
    b: Protocol,
    metric: Metric,
    point: &Point,
    cross: &str,
) -> Trust {
    let outside = |why: String| Trust::Outside { protocol: b, why };
    let pair: Vec<(&Measured, bool)> = rows
        .iter()
        .filter(|r| r.metric == metric)
        .filter_map(|r| match (r.a == a && r.b == b, r.a == b && r.b == a) {
            (true, _) => Some((r, false)),
            (_, true) => Some((r, true)),
            _ => None,
        })
        .collect();
    if pair.is_empty() {
        // What it does hold, from its rows: its protocols and metrics.
        let mut protocols: Vec<Protocol> = Vec::new();
        let mut metrics: Vec<&str> = Vec::new();
        for r in rows {
            for p in [r.a, r.b] {
                if !protocols.contains(&p) {
                    protocols.push(p);
                }
            }
            if !metrics.contains(&r.metric.label()) {
                metrics.push(r.metric.label());
            }
        }
        let protocols: Vec<String> = protocols.iter().map(|p| p.to_string()).collect();
        return outside(format!(
            "the benchmark has no {b} vs {a} {} gains (it loaded {}; {})",
            metric.label(),
            protocols.join(", "),
            metrics.join(", ")
        ));
    }
    let ran: Vec<&str> = pair.iter().fold(Vec::new(), |mut ran, (r, _)| {
        if !ran.contains(&r.cross) {
            ran.push(r.cross);
        }
        ran
    });
    if !ran.contains(&cross) {
        let what = |c: &str| match c {
            "none" => "no competing flow".to_string(),
            c => format!("competing flows {c}"),
        };
        let ran: Vec<String> = ran.iter().map(|c| what(c)).collect();
        return outside(format!(
            "the benchmark ran {b} vs {a} with {} only; this link has {}",
            ran.join(" and "),
            what(cross)
        ));
    }
    let pair: Vec<(&Measured, bool)> = pair.into_iter().filter(|(r, _)| r.cross == cross).collect();
    let all: Vec<&Measured> = pair.iter().map(|(r, _)| *r).collect();
    let beyond = |v: f64, f: fn(&Point) -> f64| {
        let (lo, hi) = range(&all, f);
        v < lo / BEYOND_FACTOR || v > hi * BEYOND_FACTOR
    };
    let max_loss = range(&all, |p| p.loss_pct).1;
    if beyond(point.rtt_ms, |p| p.rtt_ms)
        || beyond(point.rate_mbit, |p| p.rate_mbit)
        || point.loss_pct > max_loss + BEYOND_LOSS_PTS
    {
        return outside(format!(
            "{point} lies outside what the benchmark checked ({})",
            span(&all)
        ));
    }
    let distance = |p: &Point| {
        (point.rtt_ms / p.rtt_ms).ln().abs()
            + (point.rate_mbit / p.rate_mbit).ln().abs()
            + (point.loss_pct - p.loss_pct).abs()
    };
    let (nearest, reversed) = pair
        .iter()
        .min_by(|x, y| distance(&x.0.point).total_cmp(&distance(&y.0.point)))
        .map(|(r, rev)| ((*r).clone(), *rev))
        .expect("the pair has rows");
    let measured = Measured {
        a,
        b,
        mean_err_pts: if reversed {
            -nearest.mean_err_pts
        } else {
            nearest.mean_err_pts
        },
        ..nearest
    };
    Trust::Nearest { measured, reversed }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_table_parses_and_names_its_source() {
        let rows = parse(TABLE).unwrap();
        assert!(rows.len() >= 40, "{}", rows.len());
        assert!(!source().is_empty());
        assert!(rows.iter().all(|r| r.sites > 0 && r.within_3 <= r.sites));
    }

    const SMALL: &str = "# x: test\nhttps\th2\tplt\t20\t1\t0\t8\t4.0\t+1.0\t5
https\th2\tplt\t150\t8\t0\t8\t2.0\t-1.5\t6
h2\th3\tplt\t20\t8\t0\t8\t9.0\t-6.0\t1
h2\th3\tplt\t50\t8\t0\t3\t12.0\t-12.0\t0\tcubic:1
";

    fn rows() -> Vec<Measured> {
        parse(SMALL).unwrap()
    }

    fn at(rtt_ms: f64, rate_mbit: f64, loss_pct: f64) -> Point {
        Point {
            rtt_ms,
            rate_mbit,
            loss_pct,
        }
    }

    #[test]
    fn the_nearest_point_in_log_rtt_and_rate_gives_its_figures() {
        let (https, h2) = (Protocol::Https, Protocol::H2);
        let Trust::Nearest { measured, reversed } = trust_in(
            &rows(),
            https,
            h2,
            Metric::Plt,
            &at(100.0, 10.0, 0.0),
            "none",
        ) else {
            panic!("inside the grid")
        };
        assert_eq!((measured.point, reversed), (at(150.0, 8.0, 0.0), false));
        assert_eq!(measured.mean_err_pts, -1.5);
        // The pair the other way round: the mean error turned round.
        let Trust::Nearest { measured, reversed } = trust_in(
            &rows(),
            Protocol::H3,
            Protocol::H2,
            Metric::Plt,
            &at(20.0, 8.0, 0.0),
            "none",
        ) else {
            panic!("inside the grid")
        };
        assert!(reversed);
        assert_eq!(
            (measured.a, measured.b, measured.mean_err_pts),
            (Protocol::H3, h2, 6.0)
        );
    }

    #[test]
    fn beyond_the_grid_or_another_pair_or_metric_says_why() {
        let far = trust_in(
            &rows(),
            Protocol::Https,
            Protocol::H2,
            Metric::Plt,
            &at(490.0, 1.0, 0.0),
            "none",
        );
        let Trust::Outside { why, .. } = far else {
            panic!("{far:?}")
        };
        assert!(
            why.contains("outside what the benchmark checked (20–150 ms, 1–8 Mbit, 0 % loss)"),
            "{why}"
        );
        let lossy = trust_in(
            &rows(),
            Protocol::Https,
            Protocol::H2,
            Metric::Plt,
            &at(20.0, 1.0, 2.0),
            "none",
        );
        assert!(matches!(lossy, Trust::Outside { .. }), "{lossy:?}");
        let spdy = trust_in(
            &rows(),
            Protocol::Https,
            Protocol::Spdy3,
            Metric::Plt,
            &at(20.0, 1.0, 0.0),
            "none",
        );
        let Trust::Outside { why, .. } = spdy else {
            panic!("{spdy:?}")
        };
        assert!(why.contains("no spdy3 vs https PLT gains"), "{why}");
        let tow = trust_in(
            &rows(),
            Protocol::Https,
            Protocol::H2,
            Metric::Tow,
            &at(20.0, 1.0, 0.0),
            "none",
        );
        assert!(matches!(tow, Trust::Outside { .. }), "{tow:?}");
    }

    #[test]
    fn beside_competing_flows_only_rows_beside_the_same_flows_count() {
        let (h2, h3) = (Protocol::H2, Protocol::H3);
        let Trust::Nearest { measured, .. } =
            trust_in(&rows(), h2, h3, Metric::Plt, &at(50.0, 8.0, 0.0), "cubic:1")
        else {
            panic!("the benchmark ran cubic:1")
        };
        assert_eq!((measured.cross, measured.mean_err_pts), ("cubic:1", -12.0));
        // Without competing flows the nearest row is a quiet one.
        let Trust::Nearest { measured, .. } =
            trust_in(&rows(), h2, h3, Metric::Plt, &at(25.0, 8.0, 0.0), "none")
        else {
            panic!("inside the grid")
        };
        assert_eq!((measured.cross, measured.point.rtt_ms), ("none", 20.0));
        let other = trust_in(&rows(), h2, h3, Metric::Plt, &at(50.0, 8.0, 0.0), "cubic:4");
        let Trust::Outside { why, .. } = other else {
            panic!("{other:?}")
        };
        assert!(
            why.contains("with no competing flow and competing flows cubic:1 only; this link has competing flows cubic:4"),
            "{why}"
        );
    }

    #[test]
    fn a_bad_line_is_named() {
        let err = parse("https\th2\tplt\t20\n").unwrap_err();
        assert!(err.contains("line 1: not 10 or 11 fields"), "{err}");
        let err = parse("https\tspdy9\tplt\t20\t1\t0\t8\t4\t1\t5\n").unwrap_err();
        assert!(err.contains("protocol B"), "{err}");
    }
}
