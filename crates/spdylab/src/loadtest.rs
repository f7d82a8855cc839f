//! `spdylab load`: virtual users against a server in the testbed, as in seed
//! 000's NeoLoad test — ramp, think time, SLA, the server's CPU, memory and busy
//! workers, one record a second.

use crate::compare::{parse_protocols, ProtocolList, ServerArg};
use crate::link_args::{describe, LinkArgs, TlsArg};
use crate::sites;
use crate::trial_args::{default_of, knob};
use crate::Failure;
use clap::Args;
use lab::loadtest::{derive, Derived, LoadSpec, PaperEvent, Second, Totals, Watch};
use link::units::parse_duration;
use serde_json::json;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Virtual users load a page, think and load it again; users vs response time, errors, server CPU/memory/workers
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab load --site icons --protocols http,h2 --server apache --users 1:300 --ramp 3m --think 5s --delay-down 40ms --delay-up 45ms
  spdylab load --site icons --protocols https,spdy3 --users 1:1000 --ramp 20m --hold 5m --at 100,120,200,777 --out /tmp/load

Users are added linearly from the first to the last count over --ramp, then held
for --hold; each has its own client address (198.19.0.0/16) and keeps its
connections between pages unless --new-connections. One record a second goes to
DIR/load.jsonl as it ends; the derived figures (max pages/s, response time at
--at users, users at the first error and where the mean page time (5 s) first
exceeds --sla, CPU idle and memory at --cpu-at users) are printed and written to
DIR/summary.csv. Ctrl-C stops early and keeps everything so far.")]
pub struct LoadArgs {
    /// A built-in site (see `spdylab sites`) or a site file (.toml)
    #[arg(long)]
    pub site: String,
    /// Protocols, run one after another (each on a fresh testbed and server)
    #[arg(long, default_value = "http,h2", value_parser = parse_protocols)]
    pub protocols: ProtocolList,
    /// The server (see `spdylab peers`); apache runs the worker MPM with seed 000's settings
    #[arg(long, value_enum, default_value = "builtin")]
    pub server: ServerArg,
    /// Users at the start and at the end of the ramp: FROM:TO (or N)
    #[arg(long, default_value = "1:100", value_parser = parse_users)]
    pub users: (u32, u32),
    /// Time to go from the first to the last user count
    #[arg(long, value_parser = parse_duration, default_value = "60s", value_name = "DURATION")]
    pub ramp: Duration,
    /// Time at the last user count after the ramp
    #[arg(long, value_parser = parse_duration, default_value = "0s", value_name = "DURATION")]
    pub hold: Duration,
    /// A user's think time between pages
    #[arg(long, value_parser = parse_duration, default_value = "5s", value_name = "DURATION")]
    pub think: Duration,
    /// HTTP/1.1 connections per user and host (multiplexed protocols: one)
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub conns_per_user: u32,
    /// The response-time objective of a page
    #[arg(long, value_parser = parse_duration, default_value = "3s", value_name = "DURATION")]
    pub sla: Duration,
    /// Reconnect for every page (else kept alive between pages)
    #[arg(long)]
    pub new_connections: bool,
    /// User counts to report the response time at (comma-separated)
    #[arg(long, value_delimiter = ',', default_value = "100,120,200,777")]
    pub at: Vec<u32>,
    /// User count to report the server's CPU idle and memory at
    #[arg(long, default_value_t = 88)]
    pub cpu_at: u32,
    /// A page not loaded by then counts as a timeout error
    #[arg(long, value_parser = parse_duration, default_value = "120s", value_name = "DURATION")]
    pub timeout: Duration,
    /// The real server's keep-alive timeout (default: its own; Apache 5 s)
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub keepalive: Option<Duration>,
    /// Threads (cores) of the load generator
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub generator_threads: u32,
    /// All users share the client's one address (default: one address per user)
    #[arg(long)]
    pub one_address: bool,
    /// The server's concurrent-stream limit per HTTP/2 connection
    #[arg(long, default_value = default_of("max_streams"), value_name = "N",
          value_parser = knob("max_streams", |t| t.max_streams))]
    pub max_streams: u32,
    /// Only this TLS version (default: 1.3, falling back to 1.2)
    #[arg(long)]
    pub tls: Option<TlsArg>,
    #[command(flatten)]
    pub link: LinkArgs,
    /// Seed of the site's content
    #[arg(long, default_value_t = lab::sites::DEFAULT_SEED)]
    pub site_seed: u64,
    /// Where load.jsonl and summary.csv go (default: load-SITE)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Stop the built-in server this long after the start (a fault, for tests)
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", hide = true)]
    pub stop_server_after: Option<Duration>,
    /// Print one JSON object at the end (derived figures and totals)
    #[arg(long)]
    pub json: bool,
    /// How the site's resources map to host names: origin, mirror (all on the
    /// page's host, 004 §V), shards:N (N host names, each its own address, 004 Fig. 8)
    #[arg(long, default_value = "origin", value_parser = crate::sites::parse_layout, value_name = "LAYOUT")]
    pub layout: lab::sites::Layout,
}

pub fn parse_users(s: &str) -> Result<(u32, u32), String> {
    let (a, b) = s.split_once(':').unwrap_or((s, s));
    let n = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("{s:?}: users are FROM:TO, e.g. 1:1000"))
    };
    let (a, b) = (n(a)?, n(b)?);
    if a > b || b == 0 || b > 60_000 {
        return Err(format!(
            "{s:?}: users are FROM:TO with FROM <= TO, TO in 1..=60000"
        ));
    }
    Ok((a, b))
}

pub fn run(args: LoadArgs) -> Result<i32, Failure> {
    if args.keepalive.is_some() && matches!(args.server, crate::compare::ServerArg::Builtin) {
        // Before the site is read, as before: a flag error comes first.
        return Err(Failure::Usage(
            "--keepalive sets a real server's keep-alive timeout; the built-in server keeps connections open: use --server apache|nginx|h2o|caddy".into(),
        ));
    }
    let (site, addresses) = sites::laid_out(&args.site, args.site_seed, args.layout, 1)?;
    let testbed = args.link.testbed_spec(addresses)?;
    let spec = LoadSpec {
        site,
        protocols: args.protocols.0.clone(),
        server: args.server.kind(),
        testbed,
        users: args.users,
        ramp: args.ramp,
        hold: args.hold,
        think: args.think,
        conns_per_user: args.conns_per_user as usize,
        sla: args.sla,
        new_connections: args.new_connections,
        page_timeout: args.timeout,
        distinct_addresses: !args.one_address,
        generator_threads: args.generator_threads as usize,
        keepalive: args.keepalive,
        max_streams: args.max_streams,
        tls13_only: TlsArg::tls13_only(args.tls),
        stop_server_after: args.stop_server_after,
    };
    spec.check()?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("load-{}", spec.site.name)));
    let stop = crate::signals::stop_flag();
    let (seconds, totals) = run_load(&spec, &out, !args.json, false, &stop)?;
    let derived = derive(&seconds, &args.at, spec.sla, args.cpu_at);
    lab::loadtest::write_summary(&out, &derived)?;
    if args.json {
        println!(
            "{}",
            json!({
                "schema": 1,
                "site": spec.site.name,
                "server": spec.server.name(),
                "link": describe(&spec.testbed),
                "testbed": spec.testbed,
                "users": [spec.users.0, spec.users.1],
                "ramp_s": spec.ramp.as_secs_f64(),
                "hold_s": spec.hold.as_secs_f64(),
                "think_s": spec.think.as_secs_f64(),
                "conns_per_user": spec.conns_per_user,
                "summary": derived,
                "totals": totals,
                "out": out,
            })
        );
    } else {
        print_summary(&spec, &derived, &totals, &out);
    }
    Ok(0)
}

/// Runs the load (`lab::loadtest::run_to_dir`, which writes DIR/load.jsonl),
/// printing a line a second; the records and totals. `stop` ends it early.
pub fn run_load(
    spec: &LoadSpec,
    out: &std::path::Path,
    progress: bool,
    append: bool,
    stop: &AtomicBool,
) -> Result<(Vec<Second>, Vec<Totals>), Failure> {
    let mut printer = Printer::start(spec, progress);
    let (seconds, totals) =
        lab::loadtest::run_to_dir(spec, out, append, stop, &mut |s| printer.second(spec, s))?;
    printer.end(stop);
    Ok((seconds, totals))
}

/// A load's progress on stderr: a head line, a line a second (rewritten in
/// place on a terminal), the generator warning, the closing lines.
struct Printer {
    tty: bool,
    progress: bool,
    watch: Watch,
}

impl Printer {
    fn start(spec: &LoadSpec, progress: bool) -> Printer {
        if progress {
            eprintln!(
                "load: {} on {}, users {}:{} over {:?} (+{:?} held), think {:?} — {}",
                spec.site.name,
                spec.server.name(),
                spec.users.0,
                spec.users.1,
                spec.ramp,
                spec.hold,
                spec.think,
                describe(&spec.testbed)
            );
        }
        Printer {
            tty: std::io::stderr().is_terminal(),
            progress,
            watch: Watch::default(),
        }
    }

    fn second(&mut self, spec: &LoadSpec, s: &Second) {
        let tty = self.tty;
        let seen = self.watch.see(spec, s);
        if seen.generator_bottleneck {
            eprintln!(
                "{}warning: the load generator used {:.0} % of its {} core(s) at {} users: it, not the server, may be the bottleneck (--generator-threads)",
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
            if tty {
                eprint!("\r{line}\x1b[K");
            } else {
                eprintln!("{line}");
            }
        }
    }

    fn end(&self, stop: &AtomicBool) {
        if self.progress && self.tty {
            eprintln!();
        }
        if stop.load(Ordering::Relaxed) {
            eprintln!("load: interrupted; what was measured is kept");
        }
    }
}

fn print_summary(spec: &LoadSpec, rows: &[Derived], totals: &[Totals], out: &std::path::Path) {
    println!(
        "site {} ({} resources, {:.1} kB) on {} — {}",
        spec.site.name,
        spec.site.resources.len(),
        spec.site.total_bytes() as f64 / 1e3,
        spec.server.name(),
        describe(&spec.testbed)
    );
    let opt = |v: Option<f64>, unit: &str| v.map_or("-".to_string(), |v| format!("{v:.1}{unit}"));
    let optu = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
    for r in rows {
        println!("{}:", r.protocol);
        println!("  max pages/s            {}", r.max_pages_per_s);
        for (n, v) in &r.rt_at {
            println!(
                "  response time at {:>4}  {}",
                n,
                opt(v.map(|ms| ms / 1e3), " s")
            );
        }
        println!("  first error at users   {}", optu(r.first_error_users));
        println!(
            "  SLA {:.1} s broken at   {}",
            r.sla_ms / 1e3,
            optu(r.sla_broken_users)
        );
        println!(
            "  at {} users: server CPU idle {} (machine idle {}), memory {} RSS, {} PSS",
            r.cpu_at,
            opt(r.server_cpu_idle_pct, " %"),
            opt(r.machine_idle_pct, " %"),
            opt(r.server_rss_mb, " MB"),
            opt(r.server_pss_mb, " MB")
        );
        if let Some(b) = r.max_busy_workers {
            println!("  max busy workers       {b}");
        }
        println!(
            "  pages {} ok, {} errors; generator max {:.0} % of a core",
            r.pages, r.errors, r.generator_cpu_max_pct_core
        );
    }
    for t in totals {
        if !t.errors_by_kind.is_empty() {
            let kinds: Vec<String> = t
                .errors_by_kind
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            println!("{} errors: {}", t.protocol, kinds.join(", "));
            for m in t.error_samples.iter().take(3) {
                println!("    e.g. {m}");
            }
        }
        if !t.distinct_addresses && spec.distinct_addresses {
            println!(
                "{}: users could not get addresses of their own; they shared the client's",
                t.protocol
            );
        }
    }
    println!(
        "records: {}, summary: {}",
        out.join(lab::loadtest::RECORDS_FILE).display(),
        out.join(lab::loadtest::SUMMARY_FILE).display()
    );
}

/// `spdylab paper load [--quick]`: the two loads of `lab::loadtest::run_paper`
/// into one directory, then DIR/summary.csv and DIR/report.html.
pub fn paper_load(quick: bool, out: &std::path::Path) -> Result<i32, Failure> {
    let stop = crate::signals::stop_flag();
    let mut printer: Option<Printer> = None;
    let paper = lab::loadtest::run_paper(quick, out, &stop, &mut |event| match event {
        PaperEvent::Start(spec) => printer = Some(Printer::start(spec, true)),
        PaperEvent::Second(spec, s) => {
            if let Some(p) = printer.as_mut() {
                p.second(spec, s)
            }
        }
        PaperEvent::End(_) => {
            if let Some(p) = printer.take() {
                p.end(&stop)
            }
        }
    })?;
    print_summary(&paper.base, &paper.derived, &paper.totals, out);
    let (html, _) = report::loadtest::write_load(out, paper.base.sla)?;
    eprintln!("report: {}", html.display());
    Ok(0)
}
