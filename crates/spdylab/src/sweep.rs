//! `spdylab sweep` and `spdylab merge`: run a campaign from an experiment file,
//! resumably and in parallel; join the directories of slices run apart.

use crate::progress::CountProgress;
use crate::Failure;
use clap::Args;
use lab::campaign::{self, Event, SweepOptions};
use lab::sweep_request::{
    parse_jobs, parse_shard, Jobs, PreparedSweep, SweepRequest, DEFAULT_JOBS,
};
use lab::text::sweep as text;
use std::path::{Path, PathBuf};

/// Run a campaign: every Trial of an experiment file, resumably, on parallel testbeds
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab sweep docs/examples/rtt.toml --out results/rtt
  spdylab sweep fig9.toml --out results/fig9 --jobs 1
  spdylab sweep big.toml --out results/big-3 --shard 3/8     # one slice of eight
  spdylab merge results/big-* --out results/big && spdylab report results/big

Each probe is appended to DIR/probes.jsonl as it ends; rerunning the same command
skips finished Trials, so an interrupted campaign loses only the probes in flight.
The experiment format is in docs/experiments.md.")]
pub struct SweepArgs {
    /// The experiment file (TOML)
    pub experiment: PathBuf,
    /// The campaign directory (created; reused to resume)
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print one JSON object at the end
    #[arg(long)]
    pub json: bool,
    /// The server, for an experiment that does not set `server`
    #[arg(long, value_enum)]
    pub server: Option<crate::compare::ServerArg>,
    /// The client, for an experiment that does not set `client`
    #[arg(long, value_enum)]
    pub client: Option<crate::compare::ClientArg>,
}

/// How a campaign runs: shared by `sweep` and `paper`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Testbeds running at once (1..=64), or auto: as many as the cores can
    /// carry without the probes disturbing each other (by the links' rates, up to eight per core)
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
    let prepared = lab::sweep_request::prepare(&SweepRequest {
        experiment: args.experiment,
        server: args.server.map(|s| s.kind()),
        client: args.client.map(|c| c.kind()),
    })?;
    run_campaign(prepared, &args.out, &args.run.options(), args.json)
}

/// Runs a campaign with progress and a closing line; shared by `sweep` and `paper`.
pub fn run_campaign(
    sweep: PreparedSweep,
    out: &Path,
    opts: &SweepOptions,
    json: bool,
) -> Result<i32, Failure> {
    let name = sweep.experiment.name.clone();
    let mut progress: Option<CountProgress> = None;
    let ran = lab::sweep_request::run(sweep, out, opts, &mut |event| {
        let line = text::event_line(&name, &event, opts, out);
        match (event, &progress) {
            (Event::Probe { done, pending, .. }, Some(p)) => p.item(done, pending, &line),
            (Event::Probe { .. }, None) => {}
            (Event::Start { pending, .. }, _) => {
                eprintln!("{line}");
                progress = Some(CountProgress::new("sweep", pending));
            }
            (Event::Calibrated { .. }, _) => eprintln!("{line}"),
        }
    })?;
    if let Some(p) = progress {
        p.finish();
    }
    match json {
        true => println!("{}", ran.document(out)),
        false => eprintln!("{}", text::end_line(&name, &ran, out)),
    }
    Ok(ran.exit_code())
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
