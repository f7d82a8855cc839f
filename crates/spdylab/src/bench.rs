//! `spdylab bench`: requests per second and latency percentiles of a server,
//! every protocol measured the same way. Parses, calls `lab::bench`, prints
//! `lab::text::bench`'s lines.

use crate::Failure;
use clap::Args;
use lab::bench::{BenchRequest, Target};
use lab::text::bench as text;
use link::units::parse_duration;
use proto::Protocol;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Throughput and latency of a server: pipelining, multiplexing, TLS; closed or open loop
#[derive(Debug, Args)]
#[command(after_help = format!("Examples:
  spdylab bench http://127.0.0.1:8080/index.html --protocol http --connections 50 --duration 30s
  spdylab bench http://127.0.0.1:8080/ --protocol http-pipelined --depth 16 --connections 50
  spdylab bench https://127.0.0.1:8443/ --protocol h2 --streams 100 --connections 4 --insecure
  spdylab bench --site icons --protocol h2c --connections 8 --streams 50 --json
  spdylab bench http://127.0.0.1:8080/ --rate 20000 --connections 50 --hdr-out lat.hgrm
  spdylab bench --site youtube --protocol spdy3 --rtt 150ms --link-rate 8mbit -c 1 --streams 50
  spdylab bench --site icons --protocol h3 -c 4 --streams 50 -d 5s --warmup 1s
  spdylab bench --site icons --protocol h3 --server caddy --rtt 20ms

{}", text::HOW))]
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
    #[arg(long, default_value = "builtin", value_parser = crate::compare::server())]
    pub server: lab::trial::ServerKind,
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
    #[arg(long, value_parser = str::parse::<lab::sites::Layout>, value_name = "LAYOUT")]
    pub layout: Option<lab::sites::Layout>,
}

pub fn run(args: BenchArgs) -> Result<i32, Failure> {
    let link = args.link.flags();
    link.refuse_cross_traffic("bench")?;
    let choice = link.choice()?;
    let (server, cacert) = (args.server, args.cacert.clone());
    let target = match &args.url {
        Some(url) => Target::url(url, args.insecure, cacert, server, args.layout, &choice)?,
        None => {
            let name = args.site.as_deref().unwrap_or_default();
            let layout = args.layout.unwrap_or_default();
            let (site, n) = lab::sites::laid_out(name, lab::sites::DEFAULT_SEED, layout, 1)
                .map_err(Failure::Usage)?;
            Target::site(site, n, &choice)?
        }
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
        server,
    };
    let out = lab::bench::run(&request, &mut |plan| {
        if !args.json {
            eprintln!("{}", text::start_line(plan, args.duration, args.rate));
        }
    })?;
    lab::bench::write_hdr(args.hdr_out.as_deref(), &out.result.latency)?;
    if args.json {
        println!("{}", text::json(&request, &out));
    } else {
        println!("{}", text::summary(&out, args.rate));
        if let Some(note) = text::note(&out, args.rate) {
            eprintln!("{note}");
        }
    }
    Ok(i32::from(out.result.errors_total() != 0))
}

/// `spdylab paper pipelining`: seed 003's matrix (`lab::bench::pipelining_matrix`),
/// printed, and written to DIR/pipelining.csv and its HTML report.
pub fn pipelining_matrix(quick: bool, out: &Path, connections: usize) -> Result<i32, Failure> {
    let progress = crate::progress::CountProgress::new("pipelining", 32);
    let rows = lab::bench::pipelining_matrix(quick, out, connections, &mut |r, done, total| {
        if let Some(item) = text::matrix_item(r) {
            progress.item(done, total, &item);
        }
    })?;
    progress.finish();
    println!("{}", text::matrix_table(&rows));
    let note = text::matrix_note(quick, connections);
    let html = report::write_bench(out, text::MATRIX_TITLE, &note, &rows)?;
    let csv = out.join(report::BENCH_FILE);
    eprintln!("{}", text::matrix_written(&csv, &html));
    Ok(i32::from(rows.iter().any(|r| r.errors != 0)))
}
