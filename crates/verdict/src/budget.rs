//! Performance budgets (issue 38): a TOML file of limits a run must keep,
//! checked against stored probes, for `spdylab diff A B --budget FILE` (on B)
//! and `spdylab budget PATH --budget FILE`; exit status 1 when one fails, and
//! JUnit XML for CI. A limit is on the median of a metric over a protocol's
//! loaded probes at each point (the median, as sitespeed.io's budgets: one
//! slow repetition does not fail a build), either absolute
//!
//! ```toml
//! [[budget]]
//! metric = "plt"        # plt, tow, ttfb, fcp or lcp
//! protocol = "h2"
//! max = "2.5s"
//! ```
//!
//! or relative to another protocol at the same point
//!
//! ```toml
//! [[budget]]
//! metric = "plt"
//! protocol = "h3"
//! vs = "h2"
//! max_change = "+5%"    # h3's median at most 5 % above h2's
//! ```
//!
//! optionally only where a point's setting has a value (`site = "youtube"`,
//! `profile = "3g"`, any experiment key). A budget no point matches fails:
//! a limit that checks nothing is a mistake to hear about.

use crate::diff::{grouped, Metric};
use crate::Error;
use proto::Protocol;
use results::ProbeRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    budget: Vec<Raw>,
}

/// A `[[budget]]` as written; unknown keys land in `only` and are checked
/// against the experiment's settings there (serde's deny_unknown_fields does
/// not combine with flatten).
#[derive(Debug, Deserialize)]
struct Raw {
    metric: Spanned<String>,
    protocol: Spanned<String>,
    max: Option<Spanned<String>>,
    vs: Option<Spanned<String>>,
    max_change: Option<Spanned<String>>,
    /// Point settings the budget applies to (`site`, `profile`, `rtt`, …).
    #[serde(flatten)]
    only: BTreeMap<String, String>,
}

/// One limit, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Budget {
    pub metric: Metric,
    pub protocol: Protocol,
    pub limit: Limit,
    pub only: BTreeMap<String, String>,
    /// As written: `plt h2 <= 2.5s`, `plt h3 vs h2 <= +5%`.
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The median at most this, ms.
    MaxMs(f64),
    /// (median − the other protocol's median) / the other's × 100 at most this.
    MaxChangePct { vs: Protocol, pct: f64 },
}

/// A budget at one point.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub budget: String,
    /// The point's key; empty when no point matched.
    pub point: String,
    /// The median, ms, or the change, %; None when nothing was measured.
    pub measured: Option<f64>,
    pub pass: bool,
    pub message: String,
}

/// Parses a budget file; errors name the file, the line and the field.
pub fn parse(file: &str, text: &str) -> Result<Vec<Budget>, Error> {
    let line =
        |span: std::ops::Range<usize>| text[..span.start.min(text.len())].matches('\n').count() + 1;
    let bad = |span: std::ops::Range<usize>, field: &str, why: String| {
        Error(format!("{file}: line {}: {field}: {why}", line(span)))
    };
    let parsed: File = toml::from_str(text).map_err(|e| Error(format!("{file}: {e}")))?;
    if parsed.budget.is_empty() {
        return Err(Error(format!("{file}: no [[budget]]")));
    }
    let mut out = Vec::new();
    for (n, raw) in parsed.budget.into_iter().enumerate() {
        let metric: Metric = raw
            .metric
            .get_ref()
            .parse()
            .map_err(|e: String| bad(raw.metric.span(), "metric", e))?;
        let protocol: Protocol = raw.protocol.get_ref().parse().map_err(|_| {
            bad(
                raw.protocol.span(),
                "protocol",
                format!("'{}' is not a protocol", raw.protocol.get_ref()),
            )
        })?;
        let limit = match (&raw.max, &raw.vs, &raw.max_change) {
            (Some(max), None, None) => {
                let d = link::units::parse_duration(max.get_ref())
                    .map_err(|e| bad(max.span(), "max", e.to_string()))?;
                Limit::MaxMs(d.as_secs_f64() * 1e3)
            }
            (None, Some(vs), Some(change)) => {
                let vs_p: Protocol = vs.get_ref().parse().map_err(|_| {
                    bad(
                        vs.span(),
                        "vs",
                        format!("'{}' is not a protocol", vs.get_ref()),
                    )
                })?;
                if vs_p == protocol {
                    return Err(bad(vs.span(), "vs", "a protocol against itself".into()));
                }
                let pct = parse_change(change.get_ref()).ok_or_else(|| {
                    bad(
                        change.span(),
                        "max_change",
                        format!("'{}' is not a change such as +5% or -10%", change.get_ref()),
                    )
                })?;
                Limit::MaxChangePct { vs: vs_p, pct }
            }
            _ => {
                return Err(bad(
                    raw.metric.span(),
                    "budget",
                    "give either max (\"2.5s\") or vs and max_change (\"+5%\")".into(),
                ))
            }
        };
        for k in raw.only.keys() {
            if !results::experiment::FIELDS
                .iter()
                .any(|f| f.name == k.as_str())
                && k != "site"
            {
                // The line of the key (quoted, indented, before the metric…).
                let at = key_span(text, n, k).map_or(raw.metric.span().start, |s| s.start);
                return Err(bad(
                    at..at,
                    k,
                    "not a budget field (metric, protocol, max, vs, max_change) nor an experiment setting (docs/experiments.md)".into(),
                ));
            }
        }
        let only = raw.only;
        let text = match limit {
            Limit::MaxMs(_) => format!(
                "{metric} {protocol} <= {}",
                raw.max.as_ref().unwrap().get_ref()
            ),
            Limit::MaxChangePct { vs, .. } => format!(
                "{metric} {protocol} vs {vs} <= {}",
                raw.max_change.as_ref().unwrap().get_ref()
            ),
        };
        out.push(Budget {
            metric,
            protocol,
            limit,
            only,
            text,
        });
    }
    Ok(out)
}

/// Where the key `key` of the `n`th `[[budget]]` is written.
fn key_span(text: &str, n: usize, key: &str) -> Option<std::ops::Range<usize>> {
    #[derive(Deserialize)]
    struct Keys {
        budget: Vec<BTreeMap<Spanned<String>, toml::Value>>,
    }
    let keys: Keys = toml::from_str(text).ok()?;
    let span = keys
        .budget
        .get(n)?
        .keys()
        .find(|k| k.get_ref() == key)?
        .span();
    Some(span)
}

/// `+5%`, `-10%`, `5%`: a signed percentage.
fn parse_change(s: &str) -> Option<f64> {
    let v: f64 = s.trim().strip_suffix('%')?.trim().parse().ok()?;
    v.is_finite().then_some(v)
}

/// Reads and parses a budget file.
pub fn read(path: &Path) -> Result<Vec<Budget>, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error(format!("--budget {}: {e}", path.display())))?;
    parse(&path.display().to_string(), &text)
}

/// Every budget at every point it applies to.
pub fn check(budgets: &[Budget], probes: &[ProbeRecord]) -> Vec<Outcome> {
    let groups = grouped(probes);
    let median_of = |point: &str, protocol: Protocol, metric: Metric| {
        groups
            .iter()
            .find(|((k, p), _)| k == point && *p == protocol)
            .map(|(_, v)| v.iter().filter_map(|p| metric.of(p)).collect::<Vec<_>>())
            .filter(|xs| !xs.is_empty())
            .map(|xs| results::stats::median(&xs))
    };
    let mut out = Vec::new();
    for b in budgets {
        let mut matched = false;
        for ((point, protocol), probes) in &groups {
            if *protocol != b.protocol {
                continue;
            }
            let settings = &probes[0].point;
            if !b
                .only
                .iter()
                .all(|(k, v)| settings.get(k).is_some_and(|s| s == v))
            {
                continue;
            }
            matched = true;
            let Some(median) = median_of(point, b.protocol, b.metric) else {
                // A metric this client does not measure (the model's paints).
                out.push(Outcome {
                    budget: b.text.clone(),
                    point: point.clone(),
                    measured: None,
                    pass: false,
                    message: format!("no {} measured: its probes have none (the model measures no paints; Chromium does)", b.metric.label()),
                });
                continue;
            };
            let (measured, pass, message) = match b.limit {
                Limit::MaxMs(max) => (
                    Some(median),
                    median <= max,
                    format!(
                        "median {} {:.0} ms against at most {max:.0} ms",
                        b.metric.label(),
                        median
                    ),
                ),
                Limit::MaxChangePct { vs, pct } => match median_of(point, vs, b.metric) {
                    Some(base) if base > 0.0 => {
                        let change = (median - base) / base * 100.0;
                        (
                            Some(change),
                            change <= pct,
                            format!(
                                "median {} {:.0} ms against {vs}'s {:.0} ms: {change:+.1} % against at most {pct:+}%",
                                b.metric.label(), median, base
                            ),
                        )
                    }
                    _ => (
                        None,
                        false,
                        format!(
                            "no {} of {vs} at this point to compare with",
                            b.metric.label()
                        ),
                    ),
                },
            };
            out.push(Outcome {
                budget: b.text.clone(),
                point: point.clone(),
                measured,
                pass,
                message,
            });
        }
        if !matched {
            out.push(Outcome {
                budget: b.text.clone(),
                point: String::new(),
                measured: None,
                pass: false,
                message: format!(
                    "no loaded {} probes matched{}",
                    b.protocol,
                    only_words(&b.only)
                ),
            });
        }
    }
    out
}

fn only_words(only: &BTreeMap<String, String>) -> String {
    if only.is_empty() {
        return String::new();
    }
    let pairs: Vec<String> = only.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(" where {}", pairs.join(" "))
}

/// The outcomes as JUnit XML: one test case per budget and point.
pub fn junit(outcomes: &[Outcome]) -> String {
    let failures = outcomes.iter().filter(|o| !o.pass).count();
    let mut x = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"spdylab budgets\" tests=\"{}\" failures=\"{failures}\">\n",
        outcomes.len()
    );
    for o in outcomes {
        let name = if o.point.is_empty() {
            o.budget.clone()
        } else {
            format!("{} at {}", o.budget, o.point)
        };
        x.push_str(&format!(
            "  <testcase classname=\"spdylab.budget\" name=\"{}\"",
            escape(&name)
        ));
        if o.pass {
            x.push_str(&format!(
                "><system-out>{}</system-out></testcase>\n",
                escape(&o.message)
            ));
        } else {
            x.push_str(&format!(
                "><failure message=\"{}\"/></testcase>\n",
                escape(&o.message)
            ));
        }
    }
    x.push_str("</testsuite>\n");
    x
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::tests::probe;

    const FILE: &str = r#"
[[budget]]
metric = "plt"
protocol = "h2"
max = "2.5s"

[[budget]]
metric = "tow"
protocol = "h3"
vs = "h2"
max_change = "+5%"
site = "youtube"
"#;

    #[test]
    fn absolute_and_relative_limits_per_point() {
        let budgets = parse("b.toml", FILE).unwrap();
        assert_eq!(budgets[0].text, "plt h2 <= 2.5s");
        assert_eq!(budgets[1].text, "tow h3 vs h2 <= +5%");
        let probes = [
            probe("youtube", "h2", 2000.0),
            probe("youtube", "h2", 2400.0),
            probe("youtube", "h2", 3000.0),
            probe("youtube", "h3", 2600.0),
            probe("twitter", "h2", 2600.0),
            probe("twitter", "h3", 9000.0),
        ];
        let o = check(&budgets, &probes);
        let line = |o: &Outcome| format!("{} {} {}", o.pass, o.point, o.message);
        // youtube's h2 median 2400 passes; twitter's 2600 fails.
        assert!(o[0].pass && o[0].point == "site=youtube", "{}", line(&o[0]));
        assert!(
            !o[1].pass && o[1].point == "site=twitter",
            "{}",
            line(&o[1])
        );
        // h3 vs h2 at youtube only: tow 2500 against 2300, +8.7 % > +5 %.
        assert_eq!(o.len(), 3);
        let change = o[2].measured.unwrap();
        assert!((change - (2500.0 - 2300.0) / 2300.0 * 100.0).abs() < 1e-9);
        assert!(!o[2].pass, "{}", line(&o[2]));
        // A budget no probe matches fails.
        let none = check(&budgets[1..], &probes[4..]);
        assert_eq!(none.len(), 1);
        assert!(
            !none[0].pass
                && none[0]
                    .message
                    .contains("no loaded h3 probes matched where site=youtube")
        );
        // A paint budget on probes without paints (the model's) fails, saying why.
        let lcp = parse(
            "b.toml",
            "[[budget]]\nmetric = \"lcp\"\nprotocol = \"h2\"\nmax = \"2.5s\"\n",
        )
        .unwrap();
        let o2 = check(&lcp, &probes[..1]);
        assert!(
            !o2[0].pass && o2[0].message.starts_with("no LCP measured"),
            "{}",
            line(&o2[0])
        );
        // JUnit: one case each, failures counted, text escaped.
        let x = junit(&o);
        assert!(x.contains("tests=\"3\" failures=\"2\""), "{x}");
        assert!(x.contains("plt h2 &lt;= 2.5s at site=youtube"), "{x}");
        assert_eq!(x.matches("<failure ").count(), 2);
    }

    #[test]
    fn bad_files_name_the_line_and_the_field() {
        let err = |text: &str| match parse("b.toml", text) {
            Err(Error(m)) => m,
            other => panic!("{other:?}"),
        };
        let base = "[[budget]]\nmetric = \"plt\"\nprotocol = \"h2\"\n";
        assert_eq!(
            err(&format!("{base}max = \"2.5 parsecs\"\n")),
            "b.toml: line 4: max: '2.5 parsecs' is not a duration such as 150ms, 0.5ms, 20us or 2s"
        );
        assert!(err(&format!("{base}max = \"1s\"\nsiet = \"x\"\n"))
            .starts_with("b.toml: line 5: siet: not a budget field"));
        // Found by tests/fuzz_budget.rs: a quoted key (or one before the
        // metric, or indented) was said to be on the metric's line.
        for (text, line) in [
            ("[[budget]]\nmetric = \"plt\"\n\"x y\" = \"1\"\nprotocol = \"h2\"\nmax = \"1s\"\n", 3),
            ("[[budget]]\nsiet = \"x\"\nmetric = \"plt\"\nprotocol = \"h2\"\nmax = \"1s\"\n", 2),
            ("[[budget]]\r\nmetric = \"plt\"\r\nprotocol = \"h2\"\r\nmax = \"1s\"\r\n  s = \"é\"\r\n", 5),
        ] {
            let e = err(text);
            assert!(e.starts_with(&format!("b.toml: line {line}: ")), "{e}");
        }
        assert!(
            err("[[budget]]\nmetric = \"fcp2\"\nprotocol = \"h2\"\nmax = \"1s\"\n")
                .starts_with("b.toml: line 2: metric: ")
        );
        assert!(
            err("[[budget]]\nmetric = \"plt\"\nprotocol = \"h9\"\nmax = \"1s\"\n")
                .starts_with("b.toml: line 3: protocol: 'h9'")
        );
        assert!(err(&format!("{base}vs = \"h3\"\nmax_change = \"five\"\n"))
            .starts_with("b.toml: line 5: max_change: 'five'"));
        assert!(err(&format!("{base}vs = \"h2\"\nmax_change = \"5%\"\n"))
            .contains("vs: a protocol against itself"));
        assert!(err(base).contains("give either max"));
        assert!(err("").contains("missing field `budget`"), "{}", err(""));
        assert_eq!(err("budget = []\n"), "b.toml: no [[budget]]");
    }
}
