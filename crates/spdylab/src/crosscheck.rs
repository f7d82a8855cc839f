//! `spdylab crosscheck`: the same Trials loaded by the browser model and by
//! headless Chromium; per Trial the PLT ratio and error and each client's HAR
//! phases; overall and per rate, RTT, protocol and site the MAPE, the share
//! of Trials within 10 %, the worst Trial and Spearman's ρ.

use crate::compare::{ProtocolList, ServerArg};
use crate::link_args::LinkArgs;
use crate::progress::CountProgress;
use crate::Failure;
use clap::Args;
use lab::text::crosscheck as text;
use link::units::parse_duration;
use link::Bitrate;
use std::time::Duration;

/// Is the model right? The same Trials with the model and with Chromium: PLT ratio, MAPE, Spearman's rho, phases
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab crosscheck --sites youtube,twitter --protocols https,h2 --rtts 20ms,150ms --rate 8mbit
  spdylab crosscheck --sites youtube,twitter,imgur,icons,http-archive-2014 --protocols http,https,h2 \\
      --rtts 20ms,150ms --rates 1mbit,8mbit --pool per-host
  spdylab crosscheck --sites icons --protocols http,h2 --rtt 50ms --rate 1mbit --reps 5 --json

Each (site, link) runs twice on its own testbed: the model's probes, then Chromium's
(a fresh browser and profile per probe). Ratio = model median PLT / Chromium median
PLT; error = |model - Chromium| / Chromium; MAPE is its mean over the Trials; within
10% is the share of Trials whose error is at most 10%; rho is Spearman's rank
correlation of the two clients' median PLTs over the Trials (ties share their mean
rank). Phases (ms, summed over the page's resources, median over the probes):
connect (includes ssl), ssl, wait, receive, and discovery (the sum of the times at
which each resource was found); the table shows model - Chromium. --pool and
--browser-cost set the model's; Chromium pools and computes as it does.")]
pub struct CrosscheckArgs {
    /// Sites, comma-separated (built-in names or site files)
    #[arg(long, default_value = "youtube,twitter", value_delimiter = ',')]
    pub sites: Vec<String>,
    /// Protocols Chromium speaks: http, https, h2
    #[arg(long, default_value = "https,h2", value_parser = crate::compare::parse_protocols)]
    pub protocols: ProtocolList,
    #[command(flatten)]
    pub link: LinkArgs,
    /// Round-trip times to run, comma-separated (each replaces --rtt)
    #[arg(long, value_delimiter = ',', value_parser = parse_duration, value_name = "LIST")]
    pub rtts: Vec<Duration>,
    /// Rates to run, comma-separated (each replaces --rate)
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub rates: Vec<Bitrate>,
    /// Repetitions per protocol and client
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub reps: u32,
    /// Probes per protocol and client run first and not counted
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// The server both clients load from
    #[arg(long, value_enum, default_value = "builtin")]
    pub server: ServerArg,
    /// A probe that has not loaded the page by then fails
    #[arg(long, value_parser = parse_duration, default_value = "120s", value_name = "DURATION")]
    pub timeout: Duration,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub trial: crate::trial_args::TrialArgs,
}

pub fn run(args: CrosscheckArgs) -> Result<i32, Failure> {
    let mut trial = args.trial.trial().map_err(Failure::Usage)?;
    trial.server = args.server.kind();
    trial.timeout = args.timeout;
    let req = lab::crosscheck::Request {
        sites: args.sites,
        protocols: args.protocols.0,
        rtts: args.rtts,
        rates: args.rates,
        reps: args.reps as usize,
        warmup: args.warmup as usize,
        trial,
    };
    let link = || args.link.choice().map_err(|e| e.to_string());
    let spec = lab::crosscheck::spec(req, link).map_err(Failure::Usage)?;
    let total = spec.total_probes();
    let progress = CountProgress::new("crosscheck", total);
    let mut done = 0;
    let rows = lab::crosscheck::run(&spec, &mut |p, site, label, client| {
        done += 1;
        progress.item(done, total, &text::progress_line(p, site, label, client));
    })?;
    progress.finish();
    let groups = lab::crosscheck::agreements(&rows);
    match args.json {
        true => println!("{}", lab::crosscheck::document(&spec, &rows, &groups)),
        false => println!("{}", text::report(&rows, &groups, &spec.trial).join("\n")),
    }
    Ok(lab::crosscheck::exit_code(&rows))
}
