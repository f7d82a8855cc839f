//! priorities.html: the prioritization matrix of `spdylab priorities --out
//! DIR` (its priorities.json), one table per link — servers down, protocol ×
//! client across, each cell its verdict, median score and CI — each cell a
//! link to the waterfall of its median probe (from the probe's HAR beside the
//! JSON), the lows, the reference and the two high-priority fetches in the
//! order they were asked for.

use crate::html::{page, Html};
use crate::svg::{self, esc};
use crate::waterfall::bars_of_har;
use serde_json::Value;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// The JSON `spdylab priorities --out DIR` writes, and the page made of it.
pub const MATRIX_FILE: &str = "priorities.json";
pub const MATRIX_PAGE: &str = "priorities.html";

fn cell_id(c: &Value) -> String {
    let part = |k: &str| {
        c[k].as_str()
            .unwrap_or("")
            .chars()
            .map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '-' })
            .collect::<String>()
    };
    format!(
        "cell-{}-{}-{}-{}",
        part("link"),
        part("row"),
        part("protocol"),
        part("client")
    )
}

/// A cell's text: `pass 1.4 [1.2–1.7]`, `FAIL 9.8`, `n/a`, `error`.
fn cell_text(c: &Value) -> (String, &'static str) {
    match c["status"].as_str() {
        Some("ran") => match c["summary"].as_object() {
            Some(s) => {
                let median = s["median"].as_f64().unwrap_or(f64::NAN);
                let ci = match (s["ci95"][0].as_f64(), s["ci95"][1].as_f64()) {
                    (Some(lo), Some(hi)) => format!(" [{lo:.1}–{hi:.1}]"),
                    _ => String::new(),
                };
                let verdict = s["verdict"].as_str().unwrap_or("");
                let class = if verdict == "pass" { "pass" } else { "fail" };
                let shown = match verdict {
                    "pass" => "pass".to_string(),
                    "epic_fail" => "EPIC FAIL".to_string(),
                    v => v.to_uppercase(),
                };
                (format!("{shown} {median:.1}{ci}"), class)
            }
            None => ("error".into(), "na"),
        },
        Some("refused") => ("n/a".into(), "na"),
        _ => ("error".into(), "na"),
    }
}

/// Writes DIR/priorities.html from DIR/priorities.json and the HARs.
pub fn write_priorities(dir: &Path) -> io::Result<PathBuf> {
    let path = dir.join(MATRIX_FILE);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{}: {e}", path.display()),
        )
    })?;
    let cells = doc["cells"].as_array().cloned().unwrap_or_default();
    let names = |k: &str| -> Vec<String> {
        doc[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|v| {
                        v.as_str()
                            .or_else(|| v["name"].as_str())
                            .unwrap_or("")
                            .to_string()
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (rows, protocols, clients) = (names("rows"), names("protocols"), names("clients"));
    let mut h = Html::default();
    h.p(&format!(
        "The prioritization test (Pat Meenan's stand-alone page): one image of {} bytes twice, one at a time (the reference), then 30 times at low priority and, once two of those have finished, twice at high priority. Score: the slower high-priority fetch's time over the reference's; pass: median ≤ {} over {} repetitions; EPIC FAIL: the first high-priority fetch ended after every low one. Each cell links to its median probe's waterfall.",
        doc["image_bytes"], doc["threshold"], doc["reps"]
    ));
    let links = doc["links"].as_array().cloned().unwrap_or_default();
    for link in &links {
        let name = link["name"].as_str().unwrap_or("");
        h.section(
            &format!("link-{name}"),
            &format!("{name}: {}", link["link"].as_str().unwrap_or("")),
        );
        let mut t = String::from("<table><tr><th>server</th>");
        for p in &protocols {
            for c in &clients {
                let _ = write!(t, "<th>{} {}</th>", esc(p), esc(c));
            }
        }
        t.push_str("</tr>");
        for r in &rows {
            let _ = write!(t, "<tr><td>{}</td>", esc(r));
            for p in &protocols {
                for c in &clients {
                    let cell = cells.iter().find(|x| {
                        x["link"] == name
                            && x["row"] == r.as_str()
                            && x["protocol"] == p.as_str()
                            && x["client"] == c.as_str()
                    });
                    let _ = match cell {
                        Some(x) => {
                            let (text, class) = cell_text(x);
                            let title = x["why"]
                                .as_str()
                                .or_else(|| x["error"].as_str())
                                .unwrap_or("");
                            if x["median_har"].is_string() {
                                write!(
                                    t,
                                    r##"<td class="{class}" title="{}"><a href="#{}">{}</a></td>"##,
                                    esc(title),
                                    cell_id(x),
                                    esc(&text)
                                )
                            } else {
                                write!(
                                    t,
                                    r#"<td class="{class}" title="{}">{}</td>"#,
                                    esc(title),
                                    esc(&text)
                                )
                            }
                        }
                        None => write!(t, "<td>—</td>"),
                    };
                }
            }
            t.push_str("</tr>");
        }
        t.push_str("</table>");
        h.body.push_str(&t);
    }
    h.section("waterfalls", "Each cell's median probe");
    for x in &cells {
        let Some(har) = x["median_har"].as_str() else {
            continue;
        };
        let label = format!(
            "{} — {} {} {}",
            x["link"].as_str().unwrap_or(""),
            x["row"].as_str().unwrap_or(""),
            x["protocol"].as_str().unwrap_or(""),
            x["client"].as_str().unwrap_or("")
        );
        let _ = write!(h.body, r#"<div id="{}"></div>"#, cell_id(x));
        let bars = std::fs::read_to_string(dir.join(har))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .map(|d| bars_of_har(&d));
        match bars {
            Some(bars) => h.figure(
                svg::waterfall(
                    &format!("{label}: {}", cell_text(x).0),
                    &bars,
                    crate::rows::PHASES,
                ),
                &format!("{label}, from {har}."),
            ),
            None => h.p(&format!("{label}: {har} is missing or unreadable.")),
        }
    }
    let out = dir.join(MATRIX_PAGE);
    std::fs::write(
        &out,
        page("prioritization matrix", "spdylab priorities", &h, dir),
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matrix_becomes_a_page_with_a_waterfall_per_cell_that_ran() {
        let dir = std::env::temp_dir().join(format!("spdylab-prio-report-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("3g-fast")).unwrap();
        let har = serde_json::json!({"log": {"pages": [{"startedDateTime": "2026-11-27T00:00:00.000Z"}],
            "entries": [{"_startedMs": 0.0, "request": {"url": "https://h/priorities/image.png?ref=1"},
                "timings": {"blocked": 0, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": 200, "receive": 400}}]}});
        std::fs::write(
            dir.join("3g-fast/builtin-h2-model-001.har"),
            har.to_string(),
        )
        .unwrap();
        let doc = serde_json::json!({
        "image_bytes": 100000, "threshold": 2.0, "reps": 1,
        "links": [{"name": "3g-fast", "link": "rtt 150ms"}],
        "rows": [{"name": "builtin"}, {"name": "nginx"}],
        "protocols": ["h2", "h3"], "clients": ["model"],
        "cells": [
            {"link": "3g-fast", "row": "builtin", "protocol": "h2", "client": "model", "status": "ran",
             "summary": {"median": 1.2, "ci95": [1.0, 1.4], "verdict": "pass"},
             "median_har": "3g-fast/builtin-h2-model-001.har"},
            {"link": "3g-fast", "row": "nginx", "protocol": "h3", "client": "model", "status": "refused", "why": "nginx 1.22 has no h3"}
        ]});
        std::fs::write(dir.join(MATRIX_FILE), doc.to_string()).unwrap();
        let out = write_priorities(&dir).unwrap();
        let html = std::fs::read_to_string(out).unwrap();
        assert!(html.contains("pass 1.2 [1.0–1.4]"), "{html}");
        assert!(html.contains(r##"href="#cell-3g-fast-builtin-h2-model""##));
        assert!(html.contains(r#"id="cell-3g-fast-builtin-h2-model""#));
        assert!(html.contains("nginx 1.22 has no h3"));
        assert!(html.contains("<svg"));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(write_priorities(&dir).is_err());
    }
}
