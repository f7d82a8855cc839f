//! `spdylab priorities`: the HTTP/2 prioritization test (Pat Meenan's
//! stand-alone page as the built-in site `priorities`) on every server ×
//! protocol × client × link, as a pass/fail matrix (`lab::priority_matrix`).

use crate::link_args::LinkArgs;
use crate::progress::CountProgress;
use crate::signals::stop_flag;
use crate::Failure;
use clap::Args;
use lab::priority_matrix::{Choices, DEFAULT_LOWAT};
use link::units::parse_duration;
use std::path::PathBuf;
use std::time::Duration;

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
    pub protocols: crate::compare::Protocols,
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

pub fn run(args: PrioritiesArgs) -> Result<i32, Failure> {
    let req = lab::priority_matrix::request(Choices {
        quick: args.quick,
        servers: args.servers,
        clients: args.clients,
        profiles: args.profiles,
        link: args.link.flags(),
        lowat: args.lowat,
        reps: args.reps,
        warmup: args.warmup,
        image_bytes: args.image_size,
        protocols: args.protocols,
        timeout: args.timeout,
        out: args.out.clone(),
    })?;
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
            .map_err(|e| Failure::Usage(format!("--out {}: {e}", dir.display())))?;
    }
    let text = || lab::text::priorities::report(&req, &cells).join("\n");
    crate::print_json_or(args.json, || &doc, text);
    if interrupted {
        return Err(Failure::Interrupted);
    }
    Ok(0)
}
