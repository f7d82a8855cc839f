//! `spdylab paper`: the studies' experiments (004, 002, and the QUIC-era
//! ones of issue 50) as ready-made campaigns, each followed by its report.

use crate::sweep::{run_campaigns, RunArgs};
use crate::Failure;
use campaign::presets;
use clap::Args;
use std::path::PathBuf;

/// Reproduce a figure of "Can SPDY really make the web faster?" (004): sweep, then report
#[derive(Debug, Args)]
#[command(after_help = help())]
pub struct PaperArgs {
    /// fig2, fig4, fig6, fig8, fig9, iw, mobile (seed 002), quic-long-look, quic-long-look-rates, tuned-tcp, production-quic, h3-priorities (the QUIC-era studies), all, pipelining (seed 003) or load (seed 000)
    pub figure: String,
    /// A reduced grid that runs in minutes
    #[arg(long)]
    pub quick: bool,
    /// The campaign directory (for `all`: one subdirectory per figure)
    #[arg(long, value_name = "DIR", required_unless_present = "print")]
    pub out: Option<PathBuf>,
    /// Print the experiment file instead of running it
    #[arg(long)]
    pub print: bool,
    /// The server (spdy3 only on builtin: elsewhere h2 stands in for SPDY)
    #[arg(long, default_value = "builtin", value_parser = crate::compare::server())]
    pub server: lab::trial::ServerKind,
    /// The client: model, or chromium (no spdy3: h2 stands in for SPDY)
    #[arg(long, default_value = "model", value_parser = crate::compare::client())]
    pub client: lab::trial::ClientKind,
    #[command(flatten)]
    pub run: RunArgs,
}

/// The examples, then every preset's settings table (`campaign::presets::help_tables`).
fn help() -> String {
    format!(
        "{}\n\nSettings of each preset (full grid, and --quick where it differs):\n\n{}",
        "Examples:
  spdylab paper fig2 --quick --out results/fig2-quick
  spdylab paper fig9 --out results/fig9 --jobs 2
  spdylab paper all --quick --out results/paper      # results/paper/fig2, .../fig4, ...
  spdylab paper fig2 --print > fig2.toml             # the experiment file, to edit
  spdylab paper load --quick --out results/load      # seed 000: users until the SLA breaks
  spdylab paper quic-long-look --quick --client chromium --out results/long-look
  spdylab paper production-quic --quick --out results/pq   # results/pq/production-quic-caddy, ...

Figures: fig2 (RTT), fig4 (bandwidth), fig6 (loss), fig8 (shards), fig9 (streams x RTT),
iw (initial window), on 004's testbed (one mirrored server, TLS 1.2, time on wire; fig8:
N shard host names); mobile: seed 002 (2/1 Mbit/s, 150 ms, http vs spdy3/h2, every
built-in site, PLT); quic-long-look (and its rates and delays, quic-long-look-rates),
tuned-tcp, production-quic and h3-priorities: the QUIC-era studies
(docs/reproduction-h3.md), h3 against h2, their numbers as marks of h3's gain;
production-quic is one campaign per server (builtin and caddy: h2 and h3; nginx,
h2o, Apache: h2), each in its own subdirectory; the others run on the built-in
server (the knobs they turn are its), and keep it under `all --server`; pipelining: seed 003's throughput matrix (built-in server and
nginx; h1, TLS, pipelining x8/x16, h2, h2c); load: seed 000's load test (Apache worker
MPM (600 workers, as 000's mod_spdy pool) for http/https and h2 as SPDY's stand-in, and
spdy3 on the built-in server; icons page, 40/45 ms, think 5 s, SLA 3 s; --quick: 1-400
users in 5 min).
The paper's numbers, where it gives them, are drawn as marks.
An interrupted figure campaign resumes when the same command is run again.
`all` runs every figure's Trials in one pool of testbeds, longest first across
figures (no figure's tail leaves testbeds idle), each figure's results and report
in its own subdirectory.",
        presets::help_tables()
    )
}

pub fn run(args: PaperArgs) -> Result<i32, Failure> {
    let (r, quick) = (&args.run, args.quick);
    let peers = presets::Peers {
        server: args.server,
        client: args.client,
    };
    if !presets::is_campaign(&args.figure) {
        let flags = presets::CampaignFlags {
            print: args.print || args.out.is_none(),
            server: peers.server,
            client: peers.client,
            shard: r.shard.is_some(),
            retry_failed: r.retry_failed,
            no_har: r.no_har,
            no_calibration: r.no_calibration,
            jobs: r.jobs.0.is_some(),
        };
        presets::refuse_campaign_flags(&args.figure, &flags).map_err(Failure::Usage)?;
        let out = args.out.unwrap_or_default(); // given: refused above without it
        return match args.figure.as_str() {
            "pipelining" => crate::bench::pipelining_matrix(quick, &out, 50),
            _ => crate::loadtest::paper_load(quick, &out),
        };
    }
    let chosen = presets::chosen(&args.figure).map_err(Failure::Usage)?;
    if args.figure != "all" {
        presets::refuse_server(&chosen, peers.server).map_err(Failure::Usage)?;
    } else if peers.server != lab::trial::ServerKind::Builtin {
        let kept = presets::keeping_their_server(&chosen, peers.server);
        eprintln!(
            "paper all: --server {} for the others; {} keep their own server",
            peers.server.name(),
            kept.join(", ")
        );
    }
    if args.print {
        print!("{}", presets::files(&chosen, quick, peers));
        return Ok(0);
    }
    let out = args.out.unwrap_or_default(); // clap asks for --out unless --print
    let all = presets::each_in_own_dir(&args.figure);
    let mut campaigns = Vec::new();
    for p in &chosen {
        campaigns.push(presets::campaign(p, quick, peers, &out, all).map_err(Failure::Usage)?);
        eprintln!("{}", campaign::text::paper_line(p, quick));
    }
    let dirs: Vec<PathBuf> = campaigns.iter().map(|(_, d)| d.clone()).collect();
    // One figure: its campaign. `all`: every figure's Trials in one pool,
    // longest first across figures, each figure's results in its own directory.
    let worst = run_campaigns(campaigns, &r.options(), false)?;
    for dir in &dirs {
        crate::report::write(dir, None)?;
    }
    Ok(worst)
}
