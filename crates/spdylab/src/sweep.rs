//! `spdylab sweep` and `spdylab merge`: run a campaign from an experiment file,
//! resumably and in parallel; join the directories of slices run apart.

use crate::progress::CountProgress;
use crate::Failure;
use campaign::sweep_request::{
    parse_jobs, parse_shard, prepare_each, Jobs, PreparedSweep, DEFAULT_JOBS,
};
use campaign::text;
use campaign::{self, Event, SweepOptions};
use clap::Args;
use std::path::PathBuf;

/// Run a campaign: every Trial of an experiment file, resumably, on parallel testbeds
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab sweep docs/examples/rtt.toml --out results/rtt
  spdylab sweep fig9.toml --out results/fig9 --jobs 1
  spdylab sweep big.toml --out results/big-3 --shard 3/8     # one slice of eight
  spdylab merge results/big-* --out results/big && spdylab report results/big
  spdylab sweep rtt.toml loss.toml --out results/both        # results/both/rtt, .../loss

Each probe is appended to DIR/probes.jsonl as it ends; rerunning the same command
skips finished Trials, so an interrupted campaign loses only the probes in flight.
Several experiment files run as one pool (longest work first across all of them),
each campaign in DIR/<file name without .toml>.
The experiment format is in docs/experiments.md.")]
pub struct SweepArgs {
    /// The experiment file (TOML); several: one pool, each in DIR/<file stem>
    #[arg(required = true)]
    pub experiment: Vec<PathBuf>,
    /// The campaign directory (created; reused to resume)
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object at the end
    #[arg(long)]
    pub json: bool,
    /// The server, for an experiment that does not set `server`
    #[arg(long, value_parser = crate::compare::server())]
    pub server: Option<lab::trial::ServerKind>,
    /// The client, for an experiment that does not set `client`
    #[arg(long, value_parser = crate::compare::client())]
    pub client: Option<lab::trial::ClientKind>,
}

/// How a campaign runs: shared by `sweep` and `paper`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Testbeds running at once (1..=64), or auto: as many as the cores can
    /// carry without the probes disturbing each other (by the links' rates, up to sixteen per core)
    #[arg(long, value_name = "N|auto", default_value = DEFAULT_JOBS, value_parser = parse_jobs)]
    pub jobs: Jobs,
    /// Run only slice I of N (1-based), e.g. one Kubernetes Indexed Job pod each
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,
    /// Run again the Trials whose probe failed
    #[arg(long)]
    pub retry_failed: bool,
    /// Skip the quick calibration of each distinct link
    #[arg(long)]
    pub no_calibration: bool,
    /// Do not keep a HAR per probe
    #[arg(long)]
    pub no_har: bool,
}

impl RunArgs {
    pub fn options(&self) -> SweepOptions {
        SweepOptions {
            jobs: self.jobs.0,
            shard: self.shard.unwrap_or((1, 1)),
            retry_failed: self.retry_failed,
            calibrate: !self.no_calibration,
            har: !self.no_har,
        }
    }
}

pub fn run(args: SweepArgs) -> Result<i32, Failure> {
    let campaigns = prepare_each(&args.experiment, &args.out, args.server, args.client)?;
    run_campaigns(campaigns, &args.run.options(), args.json)
}

/// Runs campaigns with one progress over all of them, each campaign's start
/// and calibration lines, and each one's closing line (or, `json`, its JSON
/// object); shared by `sweep` and `paper`. One campaign runs alone
/// (`campaign::sweep_request::run`), several as one pool (`run_pooled`), each
/// in its own directory, a probe's line then led by its campaign's name. The
/// exit status is the worst campaign's.
pub fn run_campaigns(
    mut campaigns: Vec<(PreparedSweep, PathBuf)>,
    opts: &SweepOptions,
    json: bool,
) -> Result<i32, Failure> {
    let names: Vec<String> = campaigns
        .iter()
        .map(|(s, _)| s.experiment.name.clone())
        .collect();
    let outs: Vec<PathBuf> = campaigns.iter().map(|(_, d)| d.clone()).collect();
    let (mut starts, mut pending, mut done) = (0, 0, 0);
    let mut progress: Option<CountProgress> = None;
    let mut on_event = |c: usize, event: Event| {
        let line = text::event_line(&names[c], &event, opts, &outs[c]);
        match event {
            Event::Start { pending: p, .. } => {
                eprintln!("{line}");
                (starts, pending) = (starts + 1, pending + p);
                if starts == names.len() {
                    progress = Some(CountProgress::new("sweep", pending));
                }
            }
            Event::Calibrated { .. } => eprintln!("{line}"),
            Event::Probe { .. } => {
                done += 1;
                let line = match names.len() {
                    1 => line,
                    _ => format!("{}: {line}", names[c]),
                };
                if let Some(p) = &progress {
                    p.item(done, pending, &line);
                }
            }
        }
    };
    let ran = match campaigns.len() {
        1 => {
            let (sweep, out) = campaigns.remove(0);
            let ran = campaign::sweep_request::run(sweep, &out, opts, &mut |e| on_event(0, e))?;
            vec![ran]
        }
        _ => campaign::sweep_request::run_pooled(campaigns, opts, &mut on_event)?,
    };
    if let Some(p) = progress {
        p.finish();
    }
    for ((name, out), ran) in names.iter().zip(&outs).zip(&ran) {
        match json {
            true => println!("{}", ran.document(out)),
            false => eprintln!("{}", text::end_line(name, ran, out)),
        }
    }
    Ok(ran.iter().map(|r| r.exit_code()).max().unwrap_or(0))
}

/// Join the directories of a campaign's slices into one
#[derive(Debug, Args)]
#[command(after_help = "Example:
  spdylab merge results/fig2-1 results/fig2-2 --out results/fig2

Every input must hold the same experiment. Each Trial's latest record is kept once;
HARs and calibrations come along. An existing --out of the same experiment is added to.")]
pub struct MergeArgs {
    /// Campaign directories to join
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

pub fn merge(args: MergeArgs) -> Result<i32, Failure> {
    let (written, skipped) = campaign::merge(&args.dirs, &args.out)?;
    eprintln!("{}", text::merge_line(written, skipped, &args.out));
    Ok(0)
}
