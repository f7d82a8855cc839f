//! `spdylab crosscheck`: the same Trials loaded by the browser model and by
//! headless Chromium; per Trial the PLT ratio and error and each client's HAR
//! phases; overall and per rate, RTT, protocol and site the MAPE, the share
//! of Trials within 10 %, the worst Trial and Spearman's ρ; per metric (PLT,
//! TTFB, FCP, LCP, Speed Index) the error's percentiles and buckets beside
//! Chromium's own spread; per pair of protocols the model's gain error, its
//! sign and its trend along each swept axis (docs/crosscheck.md).

use crate::compare::Protocols;
use crate::link_args::LinkArgs;
use crate::progress::CountProgress;
use crate::Failure;
use clap::Args;
use link::units::parse_duration;
use link::{Bitrate, LossModel};
use std::time::Duration;
use verdict::text::crosscheck as text;

/// Is the model right? The same Trials with the model and with Chromium: PLT ratio, MAPE, Spearman's rho, phases, per metric, and the gains between protocols
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab crosscheck --sites youtube,twitter --protocols https,h2 --rtts 20ms,150ms --rate 8mbit
  spdylab crosscheck --sites youtube,twitter,imgur,icons,http-archive-2014 --protocols http,https,h2 \\
      --rtts 20ms,150ms --rates 1mbit,8mbit --pool per-host
  spdylab crosscheck --sites icons --protocols http,h2 --rtt 50ms --rate 1mbit --reps 5 --json
  spdylab crosscheck --sites icons --protocols https,h2 --rtt 50ms --rate 8mbit --losses 0%,1%,3%
  spdylab crosscheck --sites youtube,icons --protocols https,h2 --rtts 20ms,150ms --rate 8mbit \\
      --reps 2 --browser-cost navigation=50ms,request=1ms --reference before.json

--reference takes Chromium's loads from earlier --json outputs, so a change of the
model (its costs, its code) is measured against the same reference loads in the
model's time only; Trials the files lack are loaded in Chromium as usual.

Each (site, link) runs twice on its own testbed: the model's probes, then Chromium's
(a fresh browser and profile per probe). Ratio = model median PLT / Chromium median
PLT; error = |model - Chromium| / Chromium; MAPE is its mean over the Trials; within
10% is the share of Trials whose error is at most 10%; rho is Spearman's rank
correlation of the two clients' median PLTs over the Trials (ties share their mean
rank). Phases (ms, summed over the page's resources, median over the probes):
connect (includes ssl), ssl, wait, receive, and discovery (the sum of the times at
which each resource was found); the table shows model - Chromium. --pool and
--browser-cost set the model's; Chromium pools and computes as it does.

Per metric (plt, ttfb, fcp, lcp, si), over the Trials where both clients have it:
MAPE and the 50th/90th/95th percentiles of the error, rho, and the buckets good
(< 20%), ok (< 50%), bad; beside them Chromium's noise, the relative MAD of its
loads of a Trial (median |load - median| / median), and the Trials whose error
is within it. A metric no client pair has reads n = 0. Gains: for each pair A>B
of --protocols, each metric and (site, link), each client's gain of B over A as
compare computes it ((mean A - mean B) / mean A, 95% bootstrap CI), the error
model - Chromium in points, the share within 3 points, the share of the same
sign where Chromium's CI excludes 0, and per swept axis (--rtts, --rates,
--losses) whether the gain moves the same way in both clients from each value
to the next.")]
pub struct CrosscheckArgs {
    /// Sites, comma-separated (built-in names or site files)
    #[arg(long, default_value = "youtube,twitter", value_delimiter = ',')]
    pub sites: Vec<String>,
    /// Protocols Chromium speaks: http, https, h2, h3
    #[arg(long, default_value = "https,h2", value_parser = lab::compare::parse_protocols)]
    pub protocols: Protocols,
    #[command(flatten)]
    pub link: LinkArgs,
    /// Round-trip times to run, comma-separated (each replaces --rtt)
    #[arg(long, value_delimiter = ',', value_parser = parse_duration, value_name = "LIST")]
    pub rtts: Vec<Duration>,
    /// Rates to run, comma-separated (each replaces --rate)
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub rates: Vec<Bitrate>,
    /// Independent losses to run, comma-separated (each replaces --loss; a
    /// Gilbert-Elliott model goes in --loss)
    #[arg(long, value_delimiter = ',', value_parser = lab::crosscheck::parse_independent_loss, value_name = "LIST")]
    pub losses: Vec<LossModel>,
    /// Repetitions per protocol and client
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub reps: u32,
    /// Probes per protocol and client run first and not counted
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// The server both clients load from
    #[arg(long, default_value = "builtin", value_parser = crate::compare::server())]
    pub server: lab::trial::ServerKind,
    /// A probe that has not loaded the page by then fails
    #[arg(long, value_parser = parse_duration, default_value = "120s", value_name = "DURATION")]
    pub timeout: Duration,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// Earlier `crosscheck --json` outputs, comma-separated: their Chromium
    /// loads are used again for the Trials they have (same site, link,
    /// protocol, repetitions and server); only the model runs there
    #[arg(long, value_delimiter = ',', value_name = "FILE")]
    pub reference: Vec<std::path::PathBuf>,
    #[command(flatten)]
    pub trial: crate::trial_args::TrialArgs,
}

pub fn run(args: CrosscheckArgs) -> Result<i32, Failure> {
    let mut trial = args.trial.trial().map_err(Failure::Usage)?;
    trial.server = args.server;
    trial.timeout = args.timeout;
    let req = lab::crosscheck::Request {
        sites: args.sites,
        protocols: args.protocols,
        rtts: args.rtts,
        rates: args.rates,
        losses: args.losses,
        reps: args.reps as usize,
        warmup: args.warmup as usize,
        trial,
        reference: args.reference,
    };
    let link = || args.link.flags().choice().map_err(|e| e.to_string());
    let spec = lab::crosscheck::spec(req, link).map_err(Failure::Usage)?;
    let total = spec.total_probes();
    if let Some(line) = lab::text::crosscheck::reference_line(&spec) {
        eprintln!("{line}");
    }
    let progress = CountProgress::new("crosscheck", total);
    let mut done = 0;
    let rows = lab::crosscheck::run(&spec, &mut |p, site, label, client| {
        done += 1;
        progress.item(
            done,
            total,
            &lab::text::crosscheck::progress_line(p, site, label, client),
        );
    })?;
    progress.finish();
    let figures = lab::crosscheck::Figures::of(&rows);
    let (model, doc) = (&spec.trial.model, || {
        lab::crosscheck::document(&spec, &rows, &figures)
    });
    let report = || text::report(&rows, &figures, &model.pool, &model.browser_cost).join("\n");
    crate::print_json_or(args.json, doc, report);
    Ok(lab::crosscheck::exit_code(&rows))
}
