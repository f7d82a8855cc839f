//! The waterfall section: the requests of chosen probes drawn from their
//! HARs (by default each protocol's median probe at the first point).

use crate::html::Html;
use crate::rows::{phase_ms, Row, PHASES};
use crate::svg::{self, Bar};
use crate::Options;
use results::{point_key, Experiment, ProbeRecord};
use serde_json::Value;
use std::path::Path;

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

/// A HAR document's requests as waterfall bars, times from the page's start.
pub(crate) fn bars_of_har(doc: &Value) -> Vec<Bar> {
    let page_start = doc["log"]["pages"][0]["startedDateTime"]
        .as_str()
        .and_then(har_ms)
        .unwrap_or(0.0);
    doc["log"]["entries"]
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
                    let get = |k: &str| t[k].as_f64().unwrap_or(-1.0);
                    let phases = PHASES
                        .iter()
                        .map(|(name, _)| (name.to_string(), phase_ms(name, get)))
                        .collect();
                    Bar {
                        label: e["request"]["url"].as_str().unwrap_or("").to_string(),
                        start,
                        phases,
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn waterfalls(
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
        let bars = bars_of_har(&doc);
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
}
