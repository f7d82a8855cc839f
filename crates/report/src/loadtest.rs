//! The report of a load test (`spdylab load`): DIR/load.jsonl to DIR/report.html
//! — users against page response time (with seed 000's points), pages/s,
//! errors, the server's CPU and memory, Apache's busy workers; protocols overlaid.

use crate::html::{page, Html};
use crate::svg::{self, colour, esc, Mark, Series};
use crate::REPORT_FILE;
use results::loadtest::{derive, read_seconds, Second};
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use results::LOAD_FILE;

/// Seed 000's response times (s) at 100/120/200/777 users: HTTP and SPDY.
const SEED_RT: [(&str, [(f64, f64); 4]); 2] = [
    (
        "http",
        [(100.0, 1.1), (120.0, 1.4), (200.0, 7.1), (777.0, 70.2)],
    ),
    (
        "spdy3",
        [(100.0, 1.1), (120.0, 1.1), (200.0, 1.1), (777.0, 2.7)],
    ),
];

/// Writes DIR/report.html for a load test; returns it and a headline per protocol.
pub fn write_load(dir: &Path, sla: Duration) -> io::Result<(PathBuf, Vec<String>)> {
    let records = read_seconds(dir)?;
    let mut keys: Vec<String> = Vec::new();
    for r in &records {
        let k = format!("{} {}", r.server, r.protocol);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let derived = derive(&records, &[100, 120, 200, 777], sla, 88);
    let mut h = Html::default();
    let max_users = records.iter().map(|r| r.users).max().unwrap_or(1).max(1) as f64;
    let step = nice_step(max_users / 8.0);
    let ticks: Vec<(f64, String)> = (0..=((max_users / step).ceil() as usize))
        .map(|i| {
            let x = i as f64 * step;
            (x, format!("{x:.0}"))
        })
        .collect();
    let series = |f: &dyn Fn(&Second) -> Option<f64>| -> Vec<Series> {
        keys.iter()
            .map(|k| {
                let proto = k.rsplit(' ').next().unwrap_or("");
                Series {
                    name: k.clone(),
                    colour: colour(proto).to_string(),
                    points: records
                        .iter()
                        .filter(|r| format!("{} {}", r.server, r.protocol) == *k)
                        .filter_map(|r| f(r).map(|y| (r.users as f64, y, y, y)))
                        .collect(),
                }
            })
            .collect()
    };
    let chart = |title: &str, y: &str, s: Vec<Series>, marks: &[Mark]| {
        svg::line_chart(title, "active users", y, &ticks, false, &s, marks, true)
    };
    let mut marks: Vec<Mark> = SEED_RT
        .iter()
        .flat_map(|(p, pts)| {
            pts.iter()
                .filter(|(u, _)| *u <= max_users * 1.05)
                .map(move |(u, s)| Mark {
                    label: format!("seed 000 {p}"),
                    x: Some(*u),
                    y: *s,
                    colour: colour(p).to_string(),
                })
        })
        .collect();
    marks.push(Mark {
        label: format!("SLA {:.1} s", sla.as_secs_f64()),
        x: None,
        y: sla.as_secs_f64(),
        colour: "#000".to_string(),
    });
    h.section("rt", "Page response time");
    h.figure(
        chart(
            "mean page response time",
            "seconds",
            series(&|r| (r.pages + r.errors > 0 && r.page_ms.mean > 0.0).then(|| r.page_ms.mean / 1e3)),
            &marks,
        ),
        "Mean response time of the pages that ended in each second (complete, or timed out at the time-out), against the users active then; points: seed 000's NeoLoad figures (Apache 2.2 worker MPM + mod_spdy).",
    );
    h.figure(
        chart(
            "p95 page response time",
            "seconds",
            series(&|r| (r.page_ms.p95 > 0.0).then(|| r.page_ms.p95 / 1e3)),
            &[],
        ),
        "95th percentile of the page response time (HdrHistogram) per second.",
    );
    h.section("throughput", "Pages per second");
    h.figure(
        chart(
            "pages per second",
            "pages/s",
            series(&|r| Some(r.pages as f64)),
            &[],
        ),
        "Complete pages per second.",
    );
    h.section("errors", "Errors");
    h.figure(
        chart(
            "errors per second",
            "pages failed/s",
            series(&|r| Some(r.errors as f64)),
            &[],
        ),
        "Pages that ended in an error (refused, timeout, reset, TLS, HTTP status, incomplete) per second.",
    );
    h.section("server", "Server CPU, memory and workers");
    h.figure(
        chart(
            "server CPU",
            "% of the machine",
            series(&|r| Some(r.server_cpu_pct_machine)),
            &[],
        ),
        "The server's CPU (its process tree; the built-in server's threads) in % of all the machine's cores.",
    );
    h.figure(
        chart(
            "server memory",
            "PSS, MB",
            series(&|r| Some(r.server_pss_mb)),
            &[],
        ),
        "Proportional set size of the server's processes (shared pages counted once; the built-in server: this whole process, generator included).",
    );
    if records.iter().any(|r| r.busy_workers.is_some()) {
        h.figure(
            chart(
                "busy workers",
                "workers",
                series(&|r| r.busy_workers.map(f64::from)),
                &[],
            ),
            "Apache's BusyWorkers from mod_status; a gap is a second mod_status did not answer (every worker busy).",
        );
    }
    h.figure(
        chart(
            "client connections",
            "connections",
            series(&|r| Some(r.client_connections as f64)),
            &[],
        ),
        "Connections the users hold (keep-alive between pages).",
    );
    h.section("table", "Derived figures");
    h.body.push_str("<table><tr><th>server</th><th>protocol</th><th>max pages/s</th><th>rt @100</th><th>rt @120</th><th>rt @200</th><th>rt @777</th><th>first error at users</th><th>SLA broken at users</th><th>server CPU idle @88</th><th>PSS MB @88</th><th>max busy workers</th><th>pages</th><th>errors</th></tr>");
    let opt = |v: Option<f64>, div: f64| v.map_or("–".to_string(), |v| format!("{:.1}", v / div));
    let optu = |v: Option<u32>| v.map_or("–".to_string(), |v| v.to_string());
    let mut headline = Vec::new();
    for d in &derived {
        let _ = write!(
            h.body,
            "<tr><td>{}</td><td>{}</td><td>{}</td>",
            esc(&d.server),
            esc(&d.protocol),
            d.max_pages_per_s
        );
        for (_, v) in &d.rt_at {
            let _ = write!(h.body, "<td>{}</td>", opt(*v, 1e3));
        }
        let _ = write!(
            h.body,
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            optu(d.first_error_users),
            optu(d.sla_broken_users),
            opt(d.server_cpu_idle_pct, 1.0),
            opt(d.server_pss_mb, 1.0),
            optu(d.max_busy_workers),
            d.pages,
            d.errors
        );
        headline.push(format!(
            "{} {}: max {} pages/s, first error at {} users, SLA {:.1} s broken at {} users",
            d.server,
            d.protocol,
            d.max_pages_per_s,
            optu(d.first_error_users),
            d.sla_ms / 1e3,
            optu(d.sla_broken_users)
        ));
    }
    h.body.push_str("</table>");
    h.p("Response times in seconds (mean of the seconds at that user count, +2 %). Seed 000 (Apache 2.2, worker MPM, MaxClients 600; 6 connections per user): HTTP 16.3 pages/s max, SPDY 98; response time at 100/120/200/777 users 1.1/1.4/7.1/70.2 s (HTTP), 1.1/1.1/1.1/2.7 s (SPDY); SLA 3 s broken at 133 (HTTP, HTTPS) and 794 (SPDY) users.");
    let html = page(
        "load test",
        "Virtual users load the page, think, and load it again (spdylab load).",
        &h,
        dir,
    );
    let path = dir.join(REPORT_FILE);
    std::fs::write(&path, html)?;
    Ok((path, headline))
}

fn nice_step(raw: f64) -> f64 {
    let raw = raw.max(1.0);
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if raw <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}
