//! The report of a throughput matrix (`spdylab bench`, seed 003):
//! pipelining.csv and report.html, requests per second per file and every run.

use crate::csv::bench_csv;
use crate::html::{page, Html};
use crate::svg::{self, esc};
use results::{BenchRow, REPORT_FILE};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

/// Writes DIR/pipelining.csv and DIR/report.html for a throughput matrix.
pub fn write_bench(dir: &Path, title: &str, about: &str, rows: &[BenchRow]) -> io::Result<PathBuf> {
    std::fs::write(dir.join(results::BENCH_FILE), bench_csv(rows))?;
    let mut h = Html::default();
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
