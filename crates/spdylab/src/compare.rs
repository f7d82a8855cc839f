//! `spdylab compare`: one site, several protocols, the same emulated network.
//! SIGINT or SIGTERM (Ctrl-C) stops it early: the table (and `--json`,
//! `--out`) of the probes finished until then, exit status 130; a second one
//! ends it at once.

use crate::link_args::one_of;
use crate::link_args::LinkArgs;
use crate::progress::CountProgress;
use crate::signals::stop_flag;
use crate::Failure;
use clap::builder::TypedValueParser;
use clap::Args;
use lab::text::compare as text;
use lab::trial::{ClientKind, ServerKind};
use link::units::parse_duration;
use proto::Protocol;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// `--server`: builtin or a real server, by `results::ServerKind`'s names.
pub fn server() -> impl TypedValueParser<Value = ServerKind> {
    one_of(&ServerKind::NAMES, |name| name.parse().ok())
}

/// `--client`: model or chromium, by `results::ClientKind`'s names.
pub fn client() -> impl TypedValueParser<Value = ClientKind> {
    one_of(&ClientKind::NAMES, |name| name.parse().ok())
}

/// A comma-separated list of protocols, the first being the baseline
/// (`lab::compare::parse_protocols`); an alias, so that clap takes the list as
/// one value.
pub type Protocols = Vec<Protocol>;

/// Load one site over several protocols on the same emulated network; PLT, time on wire, gain
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab compare --site youtube --protocols https,h2 --rtt 150ms --rate 1mbit --reps 10
  spdylab compare --site twitter --protocols https,h2,http --rtt 490ms --rate 1mbit --json
  spdylab compare --site icons --protocols http,http-pipelined --har-dir /tmp/har
  spdylab compare --site youtube --protocols https,h2 --rtt 150ms --rate 1mbit --server apache
  spdylab compare --site youtube --protocols https,h2 --rtt 150ms --rate 1mbit --tls 1.2 \
      --cert rsa2048 --tls-resume --warm-metrics --cookie-bytes 200
  spdylab compare --site icons --protocols https,h2,h3 --rtt 50ms --rate 10mbit --check 3
  spdylab compare --site icons --protocols h2 --rtt 150ms --rate 8mbit --reps 1 --pcap /tmp/h2.pcap

Repetitions interleave the protocols (A B C A B C ...). Gain is against the first
protocol: (B - X) / B x 100 %, positive when X is faster; its 95 % CI is a bootstrap.
Ctrl-C stops early: the table, --json and --out hold the probes finished by then
(\"interrupted\": true in the JSON), and the exit status is 130.

--check N: after the model's loads, Chromium loads each protocol it speaks N times
(a fresh browser each) on a fresh testbed of the same link; under the table, per
protocol, both gains and whether they agree: Chromium's gain within the model's
95 % CI, or the model's within Chromium's (\"check\" in the JSON).")]
pub struct CompareArgs {
    /// A built-in site (see `spdylab sites`) or a site file (.toml)
    #[arg(long)]
    pub site: String,
    /// Protocols, the first being the baseline: http, https, http-pipelined, https-pipelined, spdy3, h2, h2c, h3
    #[arg(long, default_value = "https,spdy3,h2", value_parser = lab::compare::parse_protocols)]
    pub protocols: Protocols,
    #[command(flatten)]
    pub link: LinkArgs,
    /// Repetitions per protocol
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub reps: u32,
    /// Probes per protocol run first and not counted
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// The server: builtin (every protocol and knob), or a real one — nginx (not
    /// spdy3, h2c), apache (not spdy3), h2o (not spdy3; 100 streams; no TLS 1.2
    /// only), caddy (not spdy3; 250 streams); see `spdylab peers`
    #[arg(long, default_value = "builtin", value_parser = server())]
    pub server: ServerKind,
    /// Copy the real server's access and error logs to DIR at the end
    #[arg(long, value_name = "DIR", hide = true)]
    pub keep_server_log: Option<PathBuf>,
    /// The client: model (every protocol and knob) or chromium (headless, fresh
    /// profile per probe; http, https, h2, h3)
    #[arg(long, default_value = "model", value_parser = client())]
    pub client: ClientKind,
    /// A probe that has not loaded the page by then fails
    #[arg(long, value_parser = parse_duration, default_value = "120s", value_name = "DURATION")]
    pub timeout: Duration,
    /// Seed of the site's content
    #[arg(long, default_value_t = lab::sites::DEFAULT_SEED)]
    pub site_seed: u64,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// Write one HAR 1.2 file per probe here
    #[arg(long, value_name = "DIR")]
    pub har_dir: Option<PathBuf>,
    /// Write the link's packets as the client sees them to FILE (pcap, read
    /// with tcpdump -r): every probe, warm-ups too, cross traffic included;
    /// with --check, Chromium's beside it in FILE's name with -check
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Also write the JSON document (as --json prints it) to FILE, at the end
    /// or on Ctrl-C
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The headline of the table's gain column and p-value: plt, tow (time
    /// on wire, 004's metric), ttfb, fcp, lcp or si (Speed Index: Chromium's
    /// measured, the model's estimated); --json carries every one
    #[arg(long, default_value = "plt", value_parser = str::parse::<lab::compare::Metric>, value_name = "METRIC")]
    pub metric: lab::compare::Metric,
    /// Under the table, each PLT difference taken apart as `spdylab explain` does
    #[arg(long)]
    pub explain: bool,
    /// Judge this run against an earlier one (`compare --out` or a campaign
    /// directory) as `spdylab diff` does
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Then load the page N times per protocol in Chromium too (after the
    /// model's loads, on a fresh testbed of the same link; no HARs) and say
    /// under the table whether Chromium's gain and the model's agree
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub check: Option<u32>,
    #[command(flatten)]
    pub decide: crate::diff::Decide,
    #[command(flatten)]
    pub trial: crate::trial_args::TrialArgs,
}

pub fn run(args: CompareArgs) -> Result<i32, Failure> {
    let mut against = lab::compare::Against::read(args.decide.decision(), args.baseline)?;
    let mut trial = args.trial.trial().map_err(Failure::Usage)?;
    trial.server = args.server;
    trial.client = args.client;
    trial.timeout = args.timeout;
    let req = lab::compare::Request {
        site: args.site,
        site_seed: args.site_seed,
        protocols: args.protocols,
        reps: args.reps as usize,
        warmup: args.warmup as usize,
        trial,
        keep_server_log: args.keep_server_log,
        har_dir: args.har_dir.clone(),
        pcap: args.pcap.clone(),
    };
    let spec = lab::compare::prepare(req, || args.link.flags().choice())?;
    against.check_settings(&spec, &args.trial.given)?;
    let check = args
        .check
        .map(|n| lab::compare::Check::of(&spec, n as usize))
        .transpose()?;
    // Records, not probes: a probe of `--view both` makes two.
    let records = |s: &lab::probe::ProbeSpec| {
        s.protocols.len() * (s.reps + s.warmup) * s.trial.view().measured().len()
    };
    let check_total = check.as_ref().map_or(0, |c| records(&c.spec));
    let total = records(&spec) + check_total;
    let spec = Arc::new(spec);
    let progress = CountProgress::new("compare", total);
    let stop = stop_flag();
    let run = |spec: Arc<lab::probe::ProbeSpec>, har_dir, before: usize| {
        let progress = progress.clone();
        lab::compare::run_until_stopped(spec, har_dir, stop.clone(), move |p, done, _| {
            progress.item(before + done, total, &text::progress_line(p))
        })
    };
    let outcome = run(spec.clone(), args.har_dir, 0)?;
    // Chromium's loads once the model's are done, unless stopped.
    let checked = match &check {
        Some(c) if !outcome.interrupted => Some(run(c.spec.clone(), None, total - check_total)?),
        _ => None,
    };
    progress.finish();
    let interrupted = outcome.interrupted || checked.as_ref().is_some_and(|o| o.interrupted);
    if interrupted {
        eprintln!("{}", text::interrupted_line(&spec, outcome.probes.len()));
    }
    let given = &args.trial.given;
    let mut compared = lab::compare::Compared::of(&spec, &outcome, args.metric, given, against)?;
    let check_lines = match (&check, &checked) {
        (Some(c), Some(o)) => {
            let (agreements, doc) = c.judge(o, &compared.summary, args.metric);
            compared.document["check"] = doc;
            verdict::text::check::lines(&agreements, c.spec.reps, &c.skipped)
        }
        _ => Vec::new(),
    };
    // No Chromium loaded: how far the fidelity benchmark lets one trust the model here.
    let trust = match (&check, spec.trial.client) {
        (None, ClientKind::Model) => lab::compare::trust(&spec, args.metric),
        _ => Vec::new(),
    };
    if !trust.is_empty() {
        compared.document["trust"] = serde_json::json!({
            "source": verdict::fidelity::source(),
            "gains": trust,
        });
    }
    let check_lines = match check_lines.is_empty() {
        true => verdict::text::check::trust_lines(&trust, args.metric),
        false => check_lines,
    };
    lab::compare::write_document(args.out.as_deref(), &compared.document)?;
    match args.json {
        true => println!("{}", compared.document),
        false => {
            for block in lab::text::compare::blocks(&compared, &spec, &outcome.probes, args.explain)
            {
                println!("{block}");
            }
            if !check_lines.is_empty() {
                println!("{}", check_lines.join("\n"));
            }
        }
    }
    // The table and --out come first: a HAR that could not be written loses
    // that file, never the run's figures; stopped, the status is the stop's.
    if let (true, Some(e)) = (outcome.interrupted, &outcome.har_error) {
        eprintln!("compare: {e}");
    }
    if checked.as_ref().is_some_and(|o| o.interrupted) {
        return Err(lab::Error::Interrupted.into());
    }
    let status = compared.status(&outcome)?;
    let check_failed = checked
        .iter()
        .any(|o| o.probes.iter().any(|p| p.error.is_some()));
    Ok(status.max(i32::from(check_failed)))
}
