//! `spdylab sweep` and `spdylab merge`: run a campaign from an experiment file,
//! resumably and in parallel; join the directories of slices run apart.

use crate::progress::CountProgress;
use crate::Failure;
use clap::Args;
use lab::campaign::{self, CampaignDir, Event, SweepOptions};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Testbeds run at once by default: `auto`, as many as the cores' CPU budget
/// allows (eight per core at most; a point weighs 0.05 of a core plus half a
/// core per 100 Mbit/s of its link, an unlimited link or a calibration a whole core).
pub const DEFAULT_JOBS: &str = "auto";

/// `--jobs`: a number of testbeds, or None for `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Jobs(pub Option<usize>);

/// `--jobs`: a number of testbeds (1..=64), or `auto`.
pub fn parse_jobs(s: &str) -> Result<Jobs, String> {
    if s == "auto" {
        return Ok(Jobs(None));
    }
    match s.parse::<usize>() {
        Ok(n) if (1..=64).contains(&n) => Ok(Jobs(Some(n))),
        _ => Err(format!("'{s}' is not 1..=64 or auto")),
    }
}

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

pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("'{s}' is not I/N with 1 <= I <= N, e.g. 3/8");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

pub fn run(args: SweepArgs) -> Result<i32, Failure> {
    let prepared = lab::sweep_request::prepare(&lab::sweep_request::SweepRequest {
        experiment: args.experiment.clone(),
        server: args.server.map(|s| s.kind()),
        client: args.client.map(|c| c.kind()),
    })?;
    run_campaign(
        prepared.experiment,
        &prepared.text,
        &args.out,
        &args.run.options(),
        &prepared.site_base,
        args.json,
    )
}

/// Runs a campaign with progress and a closing line; shared by `sweep` and `paper`.
pub fn run_campaign(
    exp: lab::experiment::Experiment,
    text: &str,
    out: &Path,
    opts: &SweepOptions,
    site_base: &Path,
    json: bool,
) -> Result<i32, Failure> {
    let name = exp.name.clone();
    let cd = CampaignDir::open(out, exp, text)?;
    let started = std::time::Instant::now();
    let mut progress: Option<CountProgress> = None;
    let mut counts = (0, 0, 0);
    let failed = campaign::sweep(&cd, opts, site_base, &mut |event| match event {
        Event::Start {
            total,
            finished,
            pending,
        } => {
            counts = (total, finished, pending);
            eprintln!(
                "sweep {name}: {total} Trials{}, {finished} finished before, {pending} to run on {} testbed(s) → {}",
                if opts.shard.1 > 1 { format!(" in slice {}/{}", opts.shard.0, opts.shard.1) } else { String::new() },
                match opts.jobs {
                    Some(n) => n.to_string(),
                    None => format!("up to {} (auto)", campaign::max_testbeds(None)),
                },
                out.display()
            );
            progress = Some(CountProgress::new("sweep", pending));
        }
        Event::Calibrated { link } => eprintln!("sweep: calibrated {link}"),
        Event::Probe {
            label,
            probe,
            done,
            pending,
        } => {
            let line = match &probe.error {
                None => format!("{label}: PLT {:.0} ms", probe.plt_ms),
                Some(e) => format!("{label}: failed: {e}"),
            };
            if let Some(p) = &progress {
                p.item(done, pending, &line);
            }
        }
    })?;
    if let Some(p) = progress {
        p.finish();
    }
    let (total, before, ran) = counts;
    let elapsed = started.elapsed().as_secs_f64();
    if json {
        println!(
            "{}",
            json!({"schema": 1, "out": out, "trials": total, "finished_before": before,
                   "ran": ran, "failed": failed, "seconds": elapsed})
        );
    } else {
        eprintln!(
            "sweep {name}: ran {ran} probes in {:.0} s ({:.1} per minute), {failed} failed; results in {}; `spdylab report {}` draws them",
            elapsed,
            if elapsed > 0.0 { ran as f64 * 60.0 / elapsed } else { 0.0 },
            out.join(campaign::PROBES_FILE).display(),
            out.display()
        );
    }
    Ok(if failed == 0 { 0 } else { 1 })
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
    eprintln!(
        "merge: {written} records into {}, {skipped} duplicates or superseded records skipped",
        args.out.join(campaign::PROBES_FILE).display()
    );
    Ok(0)
}
