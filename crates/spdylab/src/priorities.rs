//! `spdylab priorities`: the HTTP/2 prioritization test (Pat Meenan's
//! stand-alone page as the built-in site `priorities`) on every server ×
//! protocol × client × link, as a pass/fail matrix (`lab::priority_matrix`).

use crate::link_args::LinkArgs;
use crate::progress::CountProgress;
use crate::signals::stop_flag;
use crate::Failure;
use clap::Args;
use lab::priority_matrix::{row, Request, DEFAULT_LOWAT};
use lab::trial::{ClientKind, LinkChoice};
use link::units::parse_duration;
use std::path::PathBuf;
use std::time::Duration;

/// The matrix's bottleneck queue unless `--queue` is given.
fn default_queue() -> link::QueueSpec {
    link::QueueSpec::drop_tail(link::QueueLimit {
        packets: Some(50),
        bytes: None,
    })
}

/// The prioritization test on every server, protocol and client: a pass/fail matrix
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab priorities
  spdylab priorities --quick
  spdylab priorities --servers builtin,builtin+lowat,nginx --protocols h2 --clients model --reps 5
  spdylab priorities --profiles 3g-fast --image-size 200kB --out /tmp/prio --json
  spdylab priorities --rtt 100ms --rate 4mbit --servers caddy --protocols h2,h3

The test (https://github.com/pmeenan/http2priorities, stand-alone): the page loads
one image twice, one at a time (the reference), then 30 times at low priority, and
once two of those have finished, twice at high priority, one after the other. The
score is the slower high-priority image's time over the reference's; a server
passes when its median score is at most 2 (docs/priorities.md). Rows: builtin
(priorities on), builtin+lowat (and TCP_NOTSENT_LOWAT), builtin-off (round robin),
builtin-off+lowat, nginx, apache, h2o, caddy. A cell a server or client cannot
run says why (n/a). The bottleneck queue is 50 packets (dummynet's default, as
WebPageTest's shaper) unless --queue is given; other link flags, when given,
replace --profiles with one link.
With --out DIR: DIR/priorities.json, every probe's HAR under DIR/LINK/, and
DIR/priorities.html, the matrix with each cell linked to its median probe's waterfall.")]
pub struct PrioritiesArgs {
    /// A first look (and CI's): the built-in server's four rows, h2 and h3,
    /// the model, one network (cable), 3 repetitions, no warm-up — under 3
    /// minutes; a flag given beside it wins
    #[arg(long)]
    pub quick: bool,
    /// Servers (rows), comma-separated: builtin, builtin+lowat, builtin-off,
    /// builtin-off+lowat, nginx, apache, h2o, caddy [default: all of them;
    /// --quick: the four builtin rows]
    #[arg(long)]
    pub servers: Option<String>,
    /// Protocols (h2, h3, spdy3, h2c)
    #[arg(long, default_value = "h2,h3", value_parser = lab::compare::parse_protocols)]
    pub protocols: std::vec::Vec<proto::Protocol>,
    /// Clients: model, chromium [default: model,chromium; --quick: model]
    #[arg(long)]
    pub clients: Option<String>,
    /// Named networks, one matrix each (see `spdylab profiles`) [default:
    /// 3g-fast,cable; --quick: cable]
    #[arg(long)]
    pub profiles: Option<String>,
    #[command(flatten)]
    pub link: LinkArgs,
    /// The image's size, e.g. 100kB or 1.5mb (the test asks for about 100 kB)
    #[arg(long, default_value = "100kB", value_parser = link::units::parse_bytes, value_name = "SIZE")]
    pub image_size: usize,
    /// TCP_NOTSENT_LOWAT of the +lowat rows, in bytes
    #[arg(long, default_value_t = DEFAULT_LOWAT, value_parser = clap::value_parser!(u32).range(1..=(64 << 20)))]
    pub lowat: u32,
    /// Repetitions per cell [default: 5; --quick: 3]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub reps: Option<u32>,
    /// Probes per cell run first and not counted [default: 1; --quick: 0]
    #[arg(long)]
    pub warmup: Option<u32>,
    /// A probe that has not finished the test by then fails
    #[arg(long, value_parser = parse_duration, default_value = "120s", value_name = "DURATION")]
    pub timeout: Duration,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// Write priorities.json, priorities.html (the matrix, each cell linked to
    /// its median probe's waterfall) and every probe's HAR into DIR
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// The matrix's extent, full or `--quick`, where no flag says otherwise.
struct Extent {
    servers: &'static str,
    clients: &'static str,
    profiles: &'static str,
    reps: u32,
    warmup: u32,
}

const FULL: Extent = Extent {
    servers: "builtin,builtin+lowat,builtin-off,builtin-off+lowat,nginx,apache,h2o,caddy",
    clients: "model,chromium",
    profiles: "3g-fast,cable",
    reps: 5,
    warmup: 1,
};

/// Issue 37's first look: with and without priorities and the lowat, on
/// the built-in server, by the model; cable's 5 Mbit/s keeps each probe of
/// the 3.2 MB test near 6 s: its 24 probes took 2 min 24 s (issue 47).
const QUICK: Extent = Extent {
    servers: "builtin,builtin+lowat,builtin-off,builtin-off+lowat",
    clients: "model",
    profiles: "cable",
    reps: 3,
    warmup: 0,
};

fn parse_clients(s: &str) -> Result<Vec<ClientKind>, String> {
    s.split(',')
        .map(|c| match c.trim() {
            "model" => Ok(ClientKind::Model),
            "chromium" => Ok(ClientKind::Chromium),
            other => Err(format!(
                "--clients: '{other}' is not a client (model, chromium)"
            )),
        })
        .collect()
}

pub fn run(args: PrioritiesArgs) -> Result<i32, Failure> {
    let usage = Failure::Usage;
    let extent = match args.quick {
        true => QUICK,
        false => FULL,
    };
    let servers = args.servers.as_deref().unwrap_or(extent.servers);
    let profiles = args.profiles.as_deref().unwrap_or(extent.profiles);
    let rows = servers
        .split(',')
        .map(|n| row(n.trim(), args.lowat).map_err(|e| format!("--servers: {e}")))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    let clients =
        parse_clients(args.clients.as_deref().unwrap_or(extent.clients)).map_err(usage)?;
    // The bottleneck's queue: --queue, else dummynet's default of 50
    // packets (WebPageTest's shaper on its Windows agents, where the test's
    // published results were taken); the lab's usual 256 at 1.6 Mbit/s holds
    // 1.9 s, which alone keeps a perfect server from passing.
    let queue = Some(args.link.queue.unwrap_or_else(default_queue));
    let flags = args.link.flags();
    let links: Vec<(String, LinkChoice)> = if flags.given().any(|f| f != "queue") {
        let mut choice = args.link.choice()?;
        choice.queue = queue;
        vec![("custom".to_string(), choice)]
    } else {
        profiles
            .split(',')
            .map(|name| {
                let profile = link::profile(name.trim()).ok_or_else(|| {
                    usage(format!(
                        "--profiles: '{name}' is not a profile ({})",
                        link::PROFILE_NAMES.join(", ")
                    ))
                })?;
                Ok((
                    profile.name.to_string(),
                    LinkChoice {
                        profile: Some(profile),
                        queue,
                        ..LinkChoice::default()
                    },
                ))
            })
            .collect::<Result<_, Failure>>()?
    };
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| usage(format!("--out {}: {e}", dir.display())))?;
    }
    let req = Request {
        image_bytes: args.image_size,
        rows,
        protocols: args.protocols,
        clients,
        links,
        reps: args.reps.unwrap_or(extent.reps) as usize,
        warmup: args.warmup.unwrap_or(extent.warmup) as usize,
        timeout: args.timeout,
        har_dir: args.out.clone(),
    };
    let stop = stop_flag();
    let progress = CountProgress::new("priorities", req.probes());
    let cells = lab::priority_matrix::run(&req, &stop, &mut |line, done, total| {
        progress.item(done, total, line)
    });
    progress.finish();
    let cells = cells?;
    let interrupted = stop.load(std::sync::atomic::Ordering::Relaxed);
    let doc = lab::priority_matrix::document(&req, &cells, interrupted);
    if let Some(dir) = &args.out {
        lab::compare::write_document(Some(&dir.join(report::MATRIX_FILE)), &doc)?;
        report::write_priorities(dir)
            .map_err(|e| usage(format!("--out {}: {e}", dir.display())))?;
    }
    match args.json {
        true => println!("{doc}"),
        false => println!("{}", lab::text::priorities::report(&req, &cells).join("\n")),
    }
    if interrupted {
        return Err(Failure::Interrupted);
    }
    Ok(0)
}
