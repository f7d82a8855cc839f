//! `spdylab bench`: requests per second and latency percentiles of a server,
//! every protocol measured the same way. Parses, calls `lab::bench`, prints.

use crate::Failure;
use clap::Args;
use lab::bench::{BenchRequest, Target};
use link::units::parse_duration;
use proto::Protocol;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

/// Throughput and latency of a server: pipelining, multiplexing, TLS; closed or open loop
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab bench http://127.0.0.1:8080/index.html --protocol http --connections 50 --duration 30s
  spdylab bench http://127.0.0.1:8080/ --protocol http-pipelined --depth 16 --connections 50
  spdylab bench https://127.0.0.1:8443/ --protocol h2 --streams 100 --connections 4 --insecure
  spdylab bench --site icons --protocol h2c --connections 8 --streams 50 --json
  spdylab bench http://127.0.0.1:8080/ --rate 20000 --connections 50 --hdr-out lat.hgrm
  spdylab bench --site youtube --protocol spdy3 --rtt 150ms --link-rate 8mbit -c 1 --streams 50
  spdylab bench --site icons --protocol h3 -c 4 --streams 50 -d 5s --warmup 1s
  spdylab bench --site icons --protocol h3 --server caddy --rtt 20ms

Closed loop by default: each connection keeps --depth requests (h1) or --streams
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
response of its path; a wrong one is an error, never a success.")]
#[command(mut_arg("rate", |a| a
    .long("link-rate")
    .help("With --site: rate of both directions of the link (e.g. 10mbit); --rate is requests/s here")))]
pub struct BenchArgs {
    /// http(s)://HOST:PORT/PATH to load (or --site)
    #[arg(required_unless_present = "site", conflicts_with = "site")]
    pub url: Option<String>,
    /// Serve this site with the built-in server on loopback and load it
    #[arg(long)]
    pub site: Option<String>,
    /// With --site: the server (builtin on loopback, or a real one in a testbed; see `spdylab peers`)
    #[arg(long, value_enum, default_value = "builtin")]
    pub server: crate::compare::ServerArg,
    /// http, https, http-pipelined, https-pipelined, spdy3, h2, h2c, h3
    #[arg(long, default_value = "http")]
    pub protocol: Protocol,
    /// Connections
    #[arg(long, short = 'c', default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub connections: u32,
    /// Requests in flight per HTTP/1.1 connection (pipelining; default 8 for *-pipelined, else 1)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub depth: Option<u32>,
    /// Streams in flight per HTTP/2, SPDY or HTTP/3 connection
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub streams: u32,
    /// Generator threads (default: the machine's cores)
    #[arg(long, short = 't', value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Measured time
    #[arg(long, short = 'd', value_parser = parse_duration, default_value = "10s", value_name = "DURATION")]
    pub duration: Duration,
    /// Time run first and not measured
    #[arg(long, value_parser = parse_duration, default_value = "2s", value_name = "DURATION")]
    pub warmup: Duration,
    /// Open loop at this many requests per second (all connections together)
    #[arg(long = "rate", id = "request_rate", value_name = "REQ/S")]
    pub rate: Option<f64>,
    /// Paths to request in turn, one per line: PATH [EXPECTED_BODY_BYTES]
    #[arg(long, value_name = "FILE")]
    pub paths: Option<PathBuf>,
    /// A request unanswered for this long is an error
    #[arg(long, value_parser = parse_duration, default_value = "10s", value_name = "DURATION")]
    pub timeout: Duration,
    /// The status every response must have
    #[arg(long, default_value_t = 200)]
    pub expect_status: u16,
    /// Host header and TLS server name (default: the URL's host)
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Trust any certificate (URL mode)
    #[arg(long)]
    pub insecure: bool,
    /// Trust this CA certificate (PEM; URL mode)
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Measure the CPU of this process and its descendants (the server under test)
    #[arg(long, value_name = "PID")]
    pub server_pid: Option<u32>,
    /// Write the latency distribution (HdrHistogram percentile format, ms) here
    #[arg(long, value_name = "FILE")]
    pub hdr_out: Option<PathBuf>,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// With --site: the emulated link between the generator and the server
    /// (any LINK flag puts the server and the generator in a testbed)
    #[command(flatten)]
    pub link: crate::link_args::LinkArgs,
    /// How the site's resources map to host names: origin, mirror (all on the
    /// page's host, 004 §V), shards:N (N host names, each its own address, 004 Fig. 8)
    #[arg(long, value_parser = crate::sites::parse_layout, value_name = "LAYOUT")]
    pub layout: Option<lab::sites::Layout>,
}

fn usage(msg: String) -> Failure {
    Failure::Usage(msg)
}

pub fn run(args: BenchArgs) -> Result<i32, Failure> {
    let choice = args.link.choice()?;
    let target = match (&args.url, &args.site) {
        (Some(url), _) => {
            if !matches!(args.server, crate::compare::ServerArg::Builtin) {
                return Err(usage(
                    "--server serves a --site; a URL names its own server".into(),
                ));
            }
            if let Some(l) = args.layout {
                return Err(usage(format!(
                    "--layout {l} lays out a --site; a URL is loaded as it is"
                )));
            }
            if let Some(given) = choice.given().next() {
                return Err(usage(format!(
                    "{}: LINK flags (--rtt, --link-rate, --loss, ...) need --site: a URL is loaded over loopback",
                    match given {
                        "rate" => "--link-rate".to_string(),
                        other => crate::link_args::flag(other),
                    }
                )));
            }
            Target::Url {
                url: url.clone(),
                insecure: args.insecure,
                cacert: args.cacert.clone(),
            }
        }
        (None, Some(name)) => {
            let (site, addresses) = crate::sites::laid_out(
                name,
                lab::sites::DEFAULT_SEED,
                args.layout.unwrap_or_default(),
                1,
            )?;
            Target::Site {
                site: Box::new(site),
                link: if choice.shaped() {
                    Some(crate::link_args::testbed_spec(&choice, addresses)?)
                } else {
                    None
                },
            }
        }
        (None, None) => unreachable!("clap requires a URL or --site"),
    };
    let request = BenchRequest {
        target,
        protocol: args.protocol,
        connections: args.connections as usize,
        depth: args.depth.map(|d| d as usize),
        streams: args.streams as usize,
        threads: args.threads.map(|t| t as usize),
        duration: args.duration,
        warmup: args.warmup,
        rate: args.rate,
        paths: args.paths.clone(),
        timeout: args.timeout,
        expect_status: args.expect_status,
        host: args.host.clone(),
        server_pid: args.server_pid,
        server: args.server.kind(),
    };
    let json = args.json;
    let out = lab::bench::run(&request, &mut |plan| {
        if !json {
            eprintln!(
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
                link::units::format_duration(args.duration),
                args.rate.map_or("closed loop".to_string(), |r| format!(
                    "open loop at {r} req/s"
                ))
            );
        }
    })?;
    let (result, generator_cpu, server_cpu) = (&out.result, out.generator_cpu_s, out.server_cpu_s);
    let depth = out.plan.depth;
    if let Some(path) = &args.hdr_out {
        std::fs::write(path, lab::bench::percentile_distribution(&result.latency))
            .map_err(|e| usage(format!("--hdr-out {}: {e}", path.display())))?;
    }
    let h = &result.latency;
    let pct = |q: f64| h.value_at_quantile(q) as f64 / 1e3;
    let rps = result.requests_per_sec();
    if args.json {
        println!(
            "{}",
            json!({
                "schema": 1,
                "protocol": out.plan.protocol.name(),
                "server": args.url.is_none().then(|| args.server.kind().name()),
                "target": out.plan.addr.to_string(),
                "connections": args.connections,
                "depth": depth,
                "streams": args.streams,
                "rate": args.rate,
                "seconds": result.elapsed.as_secs_f64(),
                "requests": result.requests,
                "requests_per_sec": rps,
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
                "server_cpu_seconds": server_cpu,
                "per_second": result.per_second,
                "testbed": out.testbed.as_ref().map(|t| &t.0),
                "link": out.testbed.as_ref().map(|t| &t.1),
            })
        );
    } else {
        println!(
            "{:.0} requests/s, {:.2} MB/s over {:.1} s ({} requests, {} errors{})",
            rps,
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
        );
        println!(
            "latency ms: p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  p99.99 {:.3}  max {:.3}{}",
            pct(0.5),
            pct(0.9),
            pct(0.99),
            pct(0.999),
            pct(0.9999),
            h.max() as f64 / 1e3,
            if args.rate.is_some() {
                "  (from when each request was due)"
            } else {
                ""
            }
        );
        println!(
            "generator CPU {:.2} s ({:.0} requests per CPU-second){}",
            generator_cpu,
            result.requests as f64 / generator_cpu.max(1e-9),
            server_cpu.map_or(String::new(), |c| format!(
                "; server CPU {c:.2} s ({:.0} % of a core)",
                c / result.wall_seconds * 100.0
            ))
        );
        if out.generator_may_be_bottleneck(args.rate.is_some()) {
            eprintln!("bench: note: the generator used more CPU than the server; on this machine it may be the bottleneck");
        }
    }
    Ok(if result.errors_total() == 0 { 0 } else { 1 })
}

/// `spdylab paper pipelining`: seed 003's matrix (`lab::bench::pipelining_matrix`),
/// printed, and written to DIR/pipelining.csv and its HTML report.
pub fn pipelining_matrix(
    quick: bool,
    out: &std::path::Path,
    connections: usize,
) -> Result<i32, Failure> {
    std::fs::create_dir_all(out).map_err(|e| usage(format!("--out {}: {e}", out.display())))?;
    let (duration, warmup) = lab::bench::matrix_times(quick);
    let progress = crate::progress::CountProgress::new("pipelining", 32);
    let matrix = lab::bench::pipelining_matrix(quick, connections, &mut |r, done, total| {
        if r.skipped.is_none() {
            progress.item(
                done,
                total,
                &format!(
                    "{} {} x{} {}: {:.0} req/s",
                    r.server, r.protocol, r.depth, r.file, r.requests_per_sec
                ),
            );
        }
    })?;
    progress.finish();
    let rows = matrix;
    println!(
        "{:<8} {:<12} {:<16} {:>5} {:>12} {:>9} {:>9} {:>7}",
        "server", "file", "protocol", "depth", "req/s", "p50 ms", "p99 ms", "errors"
    );
    for r in rows.iter().filter(|r| r.skipped.is_none()) {
        println!(
            "{:<8} {:<12} {:<16} {:>5} {:>12.0} {:>9.3} {:>9.3} {:>7}",
            r.server, r.file, r.protocol, r.depth, r.requests_per_sec, r.p50_ms, r.p99_ms, r.errors
        );
    }
    let html = report::write_bench(
        out,
        "pipelining and multiplexing (seed 003)",
        &format!("{connections} connections, one generator thread against one server thread (nginx: 1 worker; built-in: 1 runtime thread), closed loop, {}s measured after {}s.", duration.as_secs(), warmup.as_secs()),
        &rows,
    )?;
    eprintln!(
        "pipelining: {} and {}",
        out.join(report::BENCH_FILE).display(),
        html.display()
    );
    Ok(if rows.iter().all(|r| r.errors == 0) {
        0
    } else {
        1
    })
}
