//! The text of `spdylab bench` and of `spdylab paper pipelining`: the start
//! line (stderr), the three lines of throughput, latency and CPU (stdout),
//! the generator note, the one JSON object of `--json`; and seed 003's
//! matrix: its progress items, its table, its report's title and note.

use crate::bench::{BenchOutcome, BenchRequest, BenchRow, Plan, Target};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// How bench measures: `spdylab bench --help`, under the examples.
pub const HOW: &str =
    "Closed loop by default: each connection keeps --depth requests (h1) or --streams
streams (h2, SPDY, h3) in flight. A pipeline (--depth over 1) is written again only
once all its answers are in, as wrk does; without TLS, its connection is read once
all of them can have come (SO_RCVLOWAT), so each answer is timed when the last one
is read (wrk too times a pipeline as one). h2, h2c and SPDY refill free streams a
quarter of --streams at a time (so 75-100 % of them are in flight), h3 one by one.
h3 runs over QUIC (UDP) with one UDP socket per connection. --server
caddy|nginx|apache|h2o runs that server in a testbed (unshaped unless LINK flags
are given); a protocol it does not serve is refused.
With --rate, open loop: requests are due at a constant rate and latency runs from
when each was due (coordinated-omission correction, as wrk2).
Every response is checked: status, and body length against --paths or the first
response of its path; a wrong one is an error, never a success.";

/// What is about to run, on stderr before the bench starts.
pub fn start_line(plan: &Plan, duration: Duration, rate: Option<f64>) -> String {
    format!(
        "bench: {} {} on {} — {} connections, {}, {} threads, {} {}",
        plan.protocol,
        plan.first_path,
        plan.addr,
        plan.connections,
        if plan.multiplexed {
            format!("{} streams each", plan.streams)
        } else {
            format!("depth {}", plan.depth)
        },
        plan.threads,
        link::units::format_duration(duration),
        rate.map_or("closed loop".to_string(), |r| format!(
            "open loop at {r} req/s"
        ))
    )
}

/// A latency quantile of the bench, ms.
fn pct(out: &BenchOutcome, q: f64) -> f64 {
    out.result.latency.value_at_quantile(q) as f64 / 1e3
}

/// The result for a person: throughput with errors by kind, latency
/// percentiles (from when each request was due, in an open loop: `rate`),
/// the generator's and the server's CPU.
pub fn summary(out: &BenchOutcome, rate: Option<f64>) -> String {
    let (result, generator_cpu) = (&out.result, out.generator_cpu_s);
    let h = &result.latency;
    let pct = |q| pct(out, q);
    [
        format!(
            "{:.0} requests/s, {:.2} MB/s over {:.1} s ({} requests, {} errors{})",
            result.requests_per_sec(),
            result.bytes as f64 / result.elapsed.as_secs_f64() / 1e6,
            result.elapsed.as_secs_f64(),
            result.requests,
            result.errors_total(),
            if result.errors.is_empty() {
                String::new()
            } else {
                format!(
                    ": {}",
                    result
                        .errors
                        .iter()
                        .map(|(k, v)| format!("{k} {v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        ),
        format!(
            "latency ms: p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  p99.99 {:.3}  max {:.3}{}",
            pct(0.5),
            pct(0.9),
            pct(0.99),
            pct(0.999),
            pct(0.9999),
            h.max() as f64 / 1e3,
            if rate.is_some() {
                "  (from when each request was due)"
            } else {
                ""
            }
        ),
        format!(
            "generator CPU {:.2} s ({:.0} requests per CPU-second){}",
            generator_cpu,
            result.requests as f64 / generator_cpu.max(1e-9),
            out.server_cpu_s.map_or(String::new(), |c| format!(
                "; server CPU {c:.2} s ({:.0} % of a core)",
                c / result.wall_seconds * 100.0
            ))
        ),
    ]
    .join("\n")
}

/// The note on stderr under the summary when the generator, not the server,
/// may have been the bottleneck (never of an open loop: `rate`).
pub fn note(out: &BenchOutcome, rate: Option<f64>) -> Option<&'static str> {
    out.generator_may_be_bottleneck(rate.is_some()).then_some(
        "bench: note: the generator used more CPU than the server; on this machine it may be the bottleneck",
    )
}

/// The one JSON object of `spdylab bench --json`.
pub fn json(req: &BenchRequest, out: &BenchOutcome) -> Value {
    let (result, generator_cpu) = (&out.result, out.generator_cpu_s);
    let h = &result.latency;
    let pct = |q| pct(out, q);
    json!({
        "schema": 1,
        "protocol": out.plan.protocol.name(),
        "server": matches!(req.target, Target::Site { .. }).then(|| req.server.name()),
        "target": out.plan.addr.to_string(),
        "connections": req.connections,
        "depth": out.plan.depth,
        "streams": req.streams,
        "rate": req.rate,
        "seconds": result.elapsed.as_secs_f64(),
        "requests": result.requests,
        "requests_per_sec": result.requests_per_sec(),
        "bytes": result.bytes,
        "bytes_per_sec": result.bytes as f64 / result.elapsed.as_secs_f64(),
        "latency_ms": {
            "p50": pct(0.5), "p90": pct(0.9), "p99": pct(0.99), "p999": pct(0.999),
            "p9999": pct(0.9999), "max": h.max() as f64 / 1e3, "mean": h.mean() / 1e3,
        },
        "errors": result.errors,
        "reconnects": result.reconnects,
        "generator_cpu_seconds": generator_cpu,
        "requests_per_generator_cpu_second": result.requests as f64 / generator_cpu.max(1e-9),
        "server_cpu_seconds": out.server_cpu_s,
        "per_second": result.per_second,
        "testbed": out.testbed.as_ref().map(|t| &t.0),
        "link": out.testbed.as_ref().map(|t| &t.1),
    })
}

/// The matrix's progress item for a measured row (None: a skipped one).
pub fn matrix_item(r: &BenchRow) -> Option<String> {
    r.skipped.is_none().then(|| {
        format!(
            "{} {} x{} {}: {:.0} req/s",
            r.server, r.protocol, r.depth, r.file, r.requests_per_sec
        )
    })
}

/// The matrix as a table: a head line and one line per measured row.
pub fn matrix_table(rows: &[BenchRow]) -> String {
    let head = format!(
        "{:<8} {:<12} {:<16} {:>5} {:>12} {:>9} {:>9} {:>7}",
        "server", "file", "protocol", "depth", "req/s", "p50 ms", "p99 ms", "errors"
    );
    let rows = rows.iter().filter(|r| r.skipped.is_none()).map(|r| {
        format!(
            "{:<8} {:<12} {:<16} {:>5} {:>12.0} {:>9.3} {:>9.3} {:>7}",
            r.server, r.file, r.protocol, r.depth, r.requests_per_sec, r.p50_ms, r.p99_ms, r.errors
        )
    });
    std::iter::once(head)
        .chain(rows)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The title of the matrix's HTML report.
pub const MATRIX_TITLE: &str = "pipelining and multiplexing (seed 003)";

/// The note under the title of the matrix's report: how it was measured.
pub fn matrix_note(quick: bool, connections: usize) -> String {
    let (duration, warmup) = crate::bench::matrix_times(quick);
    format!("{connections} connections, one generator thread against one server thread (nginx: 1 worker; built-in: 1 runtime thread), closed loop, {}s measured after {}s.", duration.as_secs(), warmup.as_secs())
}

/// Where the matrix was written (stderr, at the end).
pub fn matrix_written(csv: &Path, html: &Path) -> String {
    format!("pipelining: {} and {}", csv.display(), html.display())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trial::ServerKind;
    use proto::Protocol;

    fn plan(multiplexed: bool) -> Plan {
        Plan {
            protocol: Protocol::H2c,
            addr: "127.0.0.1:8080".parse().unwrap(),
            first_path: "/".into(),
            connections: 4,
            multiplexed,
            streams: 50,
            depth: 1,
            threads: 2,
        }
    }

    fn outcome(errors: &[(&str, u64)], server_cpu_s: Option<f64>) -> BenchOutcome {
        let mut latency = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for us in [1000, 2000, 3000, 4000] {
            latency.record(us).unwrap();
        }
        BenchOutcome {
            plan: plan(true),
            result: bench::BenchResult {
                requests: 4000,
                bytes: 2_000_000,
                errors: errors.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
                latency,
                per_second: Vec::new(),
                elapsed: Duration::from_secs(2),
                cpu_seconds: 1.0,
                wall_seconds: 2.0,
                reconnects: 0,
            },
            generator_cpu_s: 2.0,
            server_cpu_s,
            testbed: None,
        }
    }

    #[test]
    fn the_start_line_says_streams_or_depth_and_the_loop() {
        let d = Duration::from_secs(10);
        assert_eq!(
            start_line(&plan(true), d, None),
            "bench: h2c / on 127.0.0.1:8080 — 4 connections, 50 streams each, 2 threads, 10s closed loop"
        );
        assert_eq!(
            start_line(&plan(false), d, Some(200.0)),
            "bench: h2c / on 127.0.0.1:8080 — 4 connections, depth 1, 2 threads, 10s open loop at 200 req/s"
        );
    }

    #[test]
    fn the_summary_has_throughput_latency_and_cpu() {
        let out = outcome(&[("reset", 2), ("status", 1)], Some(0.5));
        let text = summary(&out, None);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "2000 requests/s, 1.00 MB/s over 2.0 s (4000 requests, 3 errors: reset 2, status 1)"
        );
        assert!(
            lines[1].starts_with("latency ms: p50 2.000  p90 4.001"),
            "{}",
            lines[1]
        );
        assert!(!lines[1].contains("due"));
        assert!(summary(&out, Some(1.0)).contains("  (from when each request was due)\n"));
        assert_eq!(
            lines[2],
            "generator CPU 2.00 s (2000 requests per CPU-second); server CPU 0.50 s (25 % of a core)"
        );
        let clean = outcome(&[], None);
        let clean_text = summary(&clean, None);
        assert!(clean_text.contains("(4000 requests, 0 errors)\n"));
        assert!(clean_text.ends_with("per CPU-second)"));
        assert!(note(&clean, None).is_none());
    }

    #[test]
    fn the_json_has_the_server_of_a_site_only() {
        let out = outcome(&[], None);
        let mut req = BenchRequest {
            target: Target::Url {
                url: "http://127.0.0.1:8080/".into(),
                insecure: false,
                cacert: None,
            },
            protocol: Protocol::H2c,
            connections: 4,
            depth: None,
            streams: 50,
            threads: None,
            duration: Duration::from_secs(10),
            warmup: Duration::ZERO,
            rate: None,
            paths: None,
            timeout: Duration::from_secs(10),
            expect_status: 200,
            host: None,
            server_pid: None,
            server: ServerKind::Builtin,
        };
        let v = json(&req, &out);
        assert_eq!(v["server"], Value::Null);
        assert_eq!(v["requests_per_sec"], 2000.0);
        assert_eq!(v["connections"], 4);
        req.target = Target::Site {
            site: Box::new(crate::sites::resolve("icons", site::DEFAULT_SEED).unwrap()),
            link: None,
        };
        assert_eq!(json(&req, &out)["server"], "builtin");
    }

    #[test]
    fn the_matrix_table_leaves_out_skipped_rows() {
        let row = |skipped: Option<&str>| BenchRow {
            server: "nginx".into(),
            file: "612 B file".into(),
            protocol: "h2".into(),
            depth: 100,
            requests_per_sec: 12345.6,
            p50_ms: 0.5,
            p99_ms: 1.25,
            p999_ms: 2.0,
            errors: 0,
            generator_cpu_s: 1.0,
            server_cpu_s: 1.0,
            skipped: skipped.map(str::to_string),
        };
        let rows = [row(None), row(Some("no h3"))];
        assert_eq!(
            matrix_table(&rows).lines().collect::<Vec<_>>(),
            [
                "server   file         protocol         depth        req/s    p50 ms    p99 ms  errors",
                "nginx    612 B file   h2                 100        12346     0.500     1.250       0",
            ]
        );
        assert_eq!(
            matrix_item(&rows[0]).as_deref(),
            Some("nginx h2 x100 612 B file: 12346 req/s")
        );
        assert_eq!(matrix_item(&rows[1]), None);
        assert!(matrix_note(true, 50).ends_with("closed loop, 3s measured after 1s."));
    }
}
