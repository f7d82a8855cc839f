//! `spdylab load`: virtual users against a server in the testbed, as in seed
//! 000's NeoLoad test — ramp, think time, SLA, the server's CPU, memory and busy
//! workers, one record a second.

use crate::compare::Protocols;
use crate::link_args::LinkArgs;
use crate::trial_args::ServedArgs;
use crate::Failure;
use clap::Args;
use lab::loadtest::{parse_users, LoadSpec};
use lab::text::loadtest::{self as text, LoadProgress};
use link::units::parse_duration;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Virtual users load a page, think and load it again; users vs response time, errors, server CPU/memory/workers
#[derive(Debug, Args)]
#[command(after_help = format!("Examples:
  spdylab load --site icons --protocols http,h2 --server apache --users 1:300 --ramp 3m --think 5s --delay-down 40ms --delay-up 45ms
  spdylab load --site icons --protocols https,spdy3 --users 1:1000 --ramp 20m --hold 5m --at 100,120,200,777 --out /tmp/load

{}", text::HOW))]
pub struct LoadArgs {
    /// A built-in site (see `spdylab sites`) or a site file (.toml)
    #[arg(long)]
    pub site: String,
    /// Protocols, run one after another (each on a fresh testbed and server)
    #[arg(long, default_value = "http,h2", value_parser = lab::compare::parse_protocols)]
    pub protocols: Protocols,
    /// The server (see `spdylab peers`); apache runs the worker MPM with seed 000's settings
    #[arg(long, default_value = "builtin", value_parser = crate::compare::server())]
    pub server: lab::trial::ServerKind,
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
    #[arg(long, default_value = "origin", value_parser = str::parse::<lab::sites::Layout>, value_name = "LAYOUT")]
    pub layout: lab::sites::Layout,
    /// The built-in server's knobs, their flags made from FIELDS as compare's
    /// (a real server refuses those it cannot honour).
    #[command(flatten)]
    pub knobs: ServedArgs,
}

pub fn run(args: LoadArgs) -> Result<i32, Failure> {
    let link = args.link.flags();
    link.refuse_cross_traffic("load")?;
    // Before the site is read: a flag's error comes first.
    lab::loadtest::check_keepalive(args.keepalive, args.server)?;
    let (site, addresses) =
        lab::sites::laid_out(&args.site, args.site_seed, args.layout, 1).map_err(Failure::Usage)?;
    let spec = LoadSpec {
        site,
        protocols: args.protocols.clone(),
        server: args.server,
        testbed: link.testbed_spec(addresses)?,
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
        served: args.knobs.trial().map_err(Failure::Usage)?.served,
        stop_server_after: args.stop_server_after,
    };
    spec.check()?;
    let out = args.out.clone().unwrap_or_else(|| spec.default_out());
    let stop = crate::signals::stop_flag();
    let mut progress = LoadProgress::new(!args.json, std::io::stderr().is_terminal());
    let run = lab::loadtest::run_load(&spec, &out, &args.at, args.cpu_at, &stop, &mut |e| {
        eprint!("{}", progress.event(&e, stop.load(Ordering::Relaxed)))
    })?;
    let summary = || text::summary(&spec, &run, &out);
    crate::print_json_or(args.json, || text::json(&spec, &run, &out), summary);
    Ok(0)
}

/// `spdylab paper load [--quick]`: the two loads of `lab::loadtest::run_paper`
/// into one directory, then DIR/summary.csv and DIR/report.html.
pub fn paper_load(quick: bool, out: &Path) -> Result<i32, Failure> {
    let stop = crate::signals::stop_flag();
    let mut progress = LoadProgress::new(true, std::io::stderr().is_terminal());
    let paper = lab::loadtest::run_paper(quick, out, &stop, &mut |e| {
        eprint!("{}", progress.event(&e, stop.load(Ordering::Relaxed)))
    })?;
    println!("{}", text::summary(&paper.base, &paper.run, out));
    let (html, _) = report::loadtest::write_load(out, paper.base.sla)?;
    eprintln!("report: {}", html.display());
    Ok(0)
}
