//! The text of `spdylab load` (and `spdylab paper load`): its progress on
//! stderr — a head line per load, a line a second (rewritten in place on a
//! terminal, every tenth second otherwise), the generator warning, the
//! closing lines — and, on stdout, the summary of the derived figures, or the
//! one JSON object of `--json`.

use crate::loadtest::{LoadEvent, LoadRun, LoadSpec, Second, Watch};
use serde_json::{json, Value};
use std::path::Path;

/// How a load runs: `spdylab load --help`, under the examples.
pub const HOW: &str =
    "Users are added linearly from the first to the last count over --ramp, then held
for --hold; each has its own client address (198.19.0.0/16) and keeps its
connections between pages unless --new-connections. One record a second goes to
DIR/load.jsonl as it ends; the derived figures (max pages/s, response time at
--at users, users at the first error and where the mean page time (5 s) first
exceeds --sla, CPU idle and memory at --cpu-at users) are printed and written to
DIR/summary.csv. Ctrl-C stops early and keeps everything so far.";

/// A load's progress, as text to write to stderr as it is (each piece ends
/// its own lines). `tty`: stderr is a terminal; `progress`: the head line and
/// the line a second are wanted (the warning and the interruption are always
/// written).
#[derive(Debug, Default)]
pub struct LoadProgress {
    tty: bool,
    progress: bool,
    watch: Watch,
}

impl LoadProgress {
    pub fn new(progress: bool, tty: bool) -> LoadProgress {
        LoadProgress {
            tty,
            progress,
            watch: Watch::default(),
        }
    }

    /// The text of one event of `run_load` or `run_paper`; `stopped`: the
    /// run's stop flag (read when the load ends).
    pub fn event(&mut self, event: &LoadEvent, stopped: bool) -> String {
        match event {
            LoadEvent::Start(spec) => self.start(spec),
            LoadEvent::Second(spec, s) => self.second(spec, s),
            LoadEvent::End(_) => self.end(stopped),
        }
    }

    /// A load begins: the head line (the errors and warning start afresh).
    pub fn start(&mut self, spec: &LoadSpec) -> String {
        self.watch = Watch::default();
        if !self.progress {
            return String::new();
        }
        format!(
            "load: {} on {}, users {}:{} over {:?} (+{:?} held), think {:?} — {}\n",
            spec.site.name,
            spec.server.name(),
            spec.users.0,
            spec.users.1,
            spec.ramp,
            spec.hold,
            spec.think,
            spec.testbed
        )
    }

    /// One record: the generator warning (once), and the second's line.
    pub fn second(&mut self, spec: &LoadSpec, s: &Second) -> String {
        let tty = self.tty;
        let seen = self.watch.see(spec, s);
        let mut text = String::new();
        if seen.generator_bottleneck {
            text += &format!(
                "{}warning: the load generator used {:.0} % of its {} core(s) at {} users: it, not the server, may be the bottleneck (--generator-threads)\n",
                if tty { "\n" } else { "" },
                s.generator_cpu_pct_core,
                spec.generator_threads,
                s.users
            );
        }
        if self.progress && (tty || s.t.is_multiple_of(10)) {
            let line = format!(
                "{:>6} {:>5}s users {:>5}  pages/s {:>5}  req/s {:>6}  in page {:>5}  mean {:>6.0} ms  p95 {:>6.0} ms  errors {:>5}  srv conns {:>5}  srv cpu {:>5.1}%  gen cpu {:>5.1}%{}",
                s.protocol,
                s.t,
                s.users,
                s.pages,
                s.requests,
                s.pages_in_flight,
                s.page_ms.mean,
                s.page_ms.p95,
                seen.errors_so_far,
                s.server_connections,
                s.server_cpu_pct_machine,
                s.generator_cpu_pct_core,
                s.busy_workers
                    .map_or(String::new(), |b| format!("  busy {b}")),
            );
            text += &if tty {
                format!("\r{line}\x1b[K")
            } else {
                format!("{line}\n")
            };
        }
        text
    }

    /// The load ended: the line in place closed, and whether it was stopped.
    pub fn end(&self, stopped: bool) -> String {
        let mut text = String::new();
        if self.progress && self.tty {
            text.push('\n');
        }
        if stopped {
            text += "load: interrupted; what was measured is kept\n";
        }
        text
    }
}

/// The summary on stdout, in lines: the site and link, each protocol's
/// derived figures, the errors by kind, where the files are.
pub fn summary(spec: &LoadSpec, run: &LoadRun, out: &Path) -> String {
    let (rows, totals) = (&run.derived, &run.totals);
    let mut lines = vec![format!(
        "site {} ({} resources, {:.1} kB) on {} — {}",
        spec.site.name,
        spec.site.resources.len(),
        spec.site.total_bytes() as f64 / 1e3,
        spec.server.name(),
        spec.testbed
    )];
    let opt = |v: Option<f64>, unit: &str| v.map_or("-".to_string(), |v| format!("{v:.1}{unit}"));
    let optu = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
    for r in rows {
        lines.push(format!("{}:", r.protocol));
        lines.push(format!("  max pages/s            {}", r.max_pages_per_s));
        for (n, v) in &r.rt_at {
            lines.push(format!(
                "  response time at {:>4}  {}",
                n,
                opt(v.map(|ms| ms / 1e3), " s")
            ));
        }
        lines.push(format!(
            "  first error at users   {}",
            optu(r.first_error_users)
        ));
        lines.push(format!(
            "  SLA {:.1} s broken at   {}",
            r.sla_ms / 1e3,
            optu(r.sla_broken_users)
        ));
        lines.push(format!(
            "  at {} users: server CPU idle {} (machine idle {}), memory {} RSS, {} PSS",
            r.cpu_at,
            opt(r.server_cpu_idle_pct, " %"),
            opt(r.machine_idle_pct, " %"),
            opt(r.server_rss_mb, " MB"),
            opt(r.server_pss_mb, " MB")
        ));
        if let Some(b) = r.max_busy_workers {
            lines.push(format!("  max busy workers       {b}"));
        }
        lines.push(format!(
            "  pages {} ok, {} errors; generator max {:.0} % of a core",
            r.pages, r.errors, r.generator_cpu_max_pct_core
        ));
    }
    for t in totals {
        if !t.errors_by_kind.is_empty() {
            let kinds: Vec<String> = t
                .errors_by_kind
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            lines.push(format!("{} errors: {}", t.protocol, kinds.join(", ")));
            for m in t.error_samples.iter().take(3) {
                lines.push(format!("    e.g. {m}"));
            }
        }
        if !t.distinct_addresses && spec.distinct_addresses {
            lines.push(format!(
                "{}: users could not get addresses of their own; they shared the client's",
                t.protocol
            ));
        }
    }
    lines.push(format!(
        "records: {}, summary: {}",
        out.join(crate::loadtest::RECORDS_FILE).display(),
        out.join(crate::loadtest::SUMMARY_FILE).display()
    ));
    lines.join("\n")
}

/// The one JSON object of `spdylab load --json`: the load as asked, its
/// derived figures and totals, and where its files are.
pub fn json(spec: &LoadSpec, run: &LoadRun, out: &Path) -> Value {
    json!({
        "schema": 1,
        "site": spec.site.name,
        "server": spec.server.name(),
        "link": spec.testbed.to_string(),
        "testbed": spec.testbed,
        "users": [spec.users.0, spec.users.1],
        "ramp_s": spec.ramp.as_secs_f64(),
        "hold_s": spec.hold.as_secs_f64(),
        "think_s": spec.think.as_secs_f64(),
        "conns_per_user": spec.conns_per_user,
        "summary": run.derived,
        "totals": run.totals,
        "out": out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadtest::{Derived, Totals};
    use std::collections::BTreeMap;

    fn spec() -> LoadSpec {
        let [mut spec, _] = crate::loadtest::paper_specs(true).unwrap();
        spec.generator_threads = 1;
        spec
    }

    fn second(t: u64, errors: u64, gen_cpu: f64) -> Second {
        Second {
            protocol: "h2".into(),
            t,
            users: 12,
            pages: 3,
            errors,
            requests: 40,
            generator_cpu_pct_core: gen_cpu,
            busy_workers: Some(4),
            ..Default::default()
        }
    }

    #[test]
    fn progress_on_a_pipe_every_tenth_second_and_the_warning_once() {
        let spec = spec();
        let mut p = LoadProgress::new(true, false);
        let head = p.event(&LoadEvent::Start(&spec), false);
        assert!(head.starts_with("load: icons on apache, users 1:400 over 300s (+0ns held), think 5s — rtt 85ms (down 40ms, up 45ms)"), "{head}");
        assert!(head.ends_with('\n') && head.lines().count() == 1, "{head}");
        assert_eq!(p.second(&spec, &second(9, 1, 10.0)), "");
        let line = p.second(&spec, &second(10, 2, 95.0));
        let (warning, line) = line.split_once('\n').unwrap();
        assert_eq!(warning, "warning: the load generator used 95 % of its 1 core(s) at 12 users: it, not the server, may be the bottleneck (--generator-threads)");
        assert_eq!(line, "    h2    10s users    12  pages/s     3  req/s     40  in page     0  mean      0 ms  p95      0 ms  errors     3  srv conns     0  srv cpu   0.0%  gen cpu  95.0%  busy 4\n");
        // Warned once; a new load starts afresh.
        assert!(!p.second(&spec, &second(20, 0, 99.0)).contains("warning"));
        p.start(&spec);
        assert!(p.second(&spec, &second(30, 0, 99.0)).contains("warning"));
        assert_eq!(p.end(false), "");
        assert_eq!(
            p.end(true),
            "load: interrupted; what was measured is kept\n"
        );
    }

    #[test]
    fn progress_on_a_terminal_rewrites_its_line_and_json_only_warns() {
        let spec = spec();
        let mut tty = LoadProgress::new(true, true);
        let text = tty.second(&spec, &second(3, 0, 95.0));
        assert!(text.starts_with("\nwarning: "), "{text:?}");
        assert!(
            text.contains("\n\r    h2     3s users") && text.ends_with("\x1b[K"),
            "{text:?}"
        );
        assert_eq!(tty.end(false), "\n");
        let mut quiet = LoadProgress::new(false, true);
        assert_eq!(quiet.start(&spec), "");
        assert!(quiet
            .second(&spec, &second(3, 0, 95.0))
            .starts_with("\nwarning: "));
        assert_eq!(quiet.second(&spec, &second(4, 0, 95.0)), "");
        assert_eq!(quiet.end(false), "");
    }

    #[test]
    fn the_summary_lists_each_protocols_figures_and_errors() {
        let spec = spec();
        let derived = vec![Derived {
            protocol: "h2".into(),
            max_pages_per_s: 17,
            rt_at: vec![(100, Some(1234.0)), (777, None)],
            first_error_users: Some(300),
            sla_ms: 3000.0,
            cpu_at: 88,
            server_cpu_idle_pct: Some(91.25),
            max_busy_workers: Some(9),
            pages: 1000,
            errors: 2,
            generator_cpu_max_pct_core: 42.4,
            ..Default::default()
        }];
        let totals = vec![Totals {
            protocol: "h2".into(),
            errors_by_kind: BTreeMap::from([("reset".to_string(), 2)]),
            error_samples: vec!["reset: a".into(), "reset: b".into()],
            distinct_addresses: false,
            ..Default::default()
        }];
        let run = LoadRun {
            seconds: Vec::new(),
            totals,
            derived,
        };
        let text = summary(&spec, &run, Path::new("/tmp/l"));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("site icons ("), "{}", lines[0]);
        assert!(lines[0].contains(" on apache — rtt 85ms"), "{}", lines[0]);
        assert_eq!(
            lines[1..].to_vec(),
            [
                "h2:",
                "  max pages/s            17",
                "  response time at  100  1.2 s",
                "  response time at  777  -",
                "  first error at users   300",
                "  SLA 3.0 s broken at   -",
                "  at 88 users: server CPU idle 91.2 % (machine idle -), memory - RSS, - PSS",
                "  max busy workers       9",
                "  pages 1000 ok, 2 errors; generator max 42 % of a core",
                "h2 errors: reset 2",
                "    e.g. reset: a",
                "    e.g. reset: b",
                "h2: users could not get addresses of their own; they shared the client's",
                "records: /tmp/l/load.jsonl, summary: /tmp/l/summary.csv",
            ]
        );
    }

    #[test]
    fn the_json_names_the_load_and_its_files() {
        let spec = spec();
        let run = LoadRun {
            seconds: Vec::new(),
            totals: Vec::new(),
            derived: Vec::new(),
        };
        let v = json(&spec, &run, Path::new("/tmp/l"));
        assert_eq!(v["schema"], 1);
        assert_eq!(v["users"], json!([1, 400]));
        assert_eq!(v["out"], "/tmp/l");
        assert_eq!(v["link"], spec.testbed.to_string());
    }
}
