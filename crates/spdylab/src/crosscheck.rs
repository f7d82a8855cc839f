//! `spdylab crosscheck`: the same Trials loaded by the browser model and by
//! headless Chromium; per Trial the PLT ratio and error and each client's HAR
//! phases; overall and per rate, RTT, protocol and site the MAPE, the share
//! of Trials within 10 %, the worst Trial and Spearman's ρ.

use crate::compare::{ProtocolList, ServerArg};
use crate::link_args::{describe, LinkArgs};
use crate::progress::CountProgress;
use crate::sites;
use crate::Failure;
use clap::Args;
use lab::crosscheck::{agreements, CrosscheckSpec, Phases};
use link::units::parse_duration;
use link::Bitrate;
use serde_json::json;
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
    let rtts: Vec<Option<Duration>> = if args.rtts.is_empty() {
        vec![args.link.rtt]
    } else {
        args.rtts.iter().map(|r| Some(*r)).collect()
    };
    let mut trial = args.trial.trial().map_err(Failure::Usage)?;
    trial.server = args.server.kind();
    trial.timeout = args.timeout;
    let mut sites = Vec::new();
    let mut addresses = trial.shards;
    for s in &args.sites {
        let (site, n) = sites::laid_out(
            s,
            lab::sites::DEFAULT_SEED,
            trial.layout,
            trial.shards as u16,
        )?;
        addresses = n;
        sites.push(site);
    }
    let rates: Vec<Option<Bitrate>> = if args.rates.is_empty() {
        vec![args.link.rate]
    } else {
        args.rates.iter().map(|r| Some(*r)).collect()
    };
    let mut links = Vec::new();
    for rate in &rates {
        for rtt in &rtts {
            let mut choice = args.link.choice()?;
            choice.rtt = *rtt;
            choice.rate = *rate;
            let mut testbed = crate::link_args::testbed_spec(&choice, addresses)?;
            testbed.warm_metrics = trial.warm_metrics;
            let rtt = link::units::format_duration(testbed.link.rtt());
            let rate = rate.map_or("unlimited".to_string(), |r| r.to_string());
            links.push(lab::crosscheck::Link {
                label: format!("{rtt} {rate}"),
                rate,
                rtt,
                testbed,
            });
        }
    }
    let spec = CrosscheckSpec {
        sites,
        protocols: args.protocols.0.clone(),
        links,
        reps: args.reps as usize,
        warmup: args.warmup as usize,
        trial,
    };
    let total = spec.total_probes();
    let progress = CountProgress::new("crosscheck", total);
    let mut done = 0;
    let rows = lab::crosscheck::run(&spec, &mut |p, site, label, client| {
        done += 1;
        let line = match &p.error {
            None => format!(
                "{} {} {} {}: PLT {:.0} ms",
                site.name,
                label,
                client.name(),
                p.protocol,
                p.plt_ms
            ),
            Some(e) => format!(
                "{} {} {} {} failed: {e}",
                site.name,
                label,
                client.name(),
                p.protocol
            ),
        };
        progress.item(done, total, &line);
    })?;
    progress.finish();
    let groups = agreements(&rows);
    if args.json {
        println!(
            "{}",
            json!({"schema": 1, "reps": args.reps, "rows": rows,
                   "mape_pct": groups[0].mape_pct, "agreement": groups,
                   "pool": spec.trial.pool.name(), "browser_cost": spec.trial.browser_cost.to_string(),
                   "testbeds": spec.links.iter().map(|l| &l.testbed).collect::<Vec<_>>(),
                   "links": spec.links.iter().map(|l| json!({"label": l.label, "link": describe(&l.testbed)})).collect::<Vec<_>>()})
        );
    } else {
        println!(
            "{:<17} {:<13} {:<5} {:>8} {:>8} {:>5} {:>6} {:>7} {:>7}  {:>7} {:>7} {:>7} {:>7} {:>8}",
            "site",
            "link",
            "proto",
            "model",
            "chrome",
            "ratio",
            "error",
            "res",
            "conns",
            "Δconn",
            "Δssl",
            "Δwait",
            "Δrecv",
            "Δdisc"
        );
        for r in &rows {
            let d = r.phase_diff();
            println!(
                "{:<17} {:<13} {:<5} {:>8} {:>8} {:>5} {:>6} {:>3.0}/{:<3.0} {:>3.0}/{:<3.0}  {:>7} {:>7} {:>7} {:>7} {:>8}",
                r.site,
                r.link,
                r.protocol.name(),
                or_na(r.model.median, |v| format!("{v:.0}")),
                or_na(r.chromium.median, |v| format!("{v:.0}")),
                or_na(r.ratio, |v| format!("{v:.2}")),
                or_na(r.ape_pct, |v| format!("{v:.1}%")),
                r.model_resources,
                r.chromium_resources,
                r.model_connections,
                r.chromium_connections,
                or_na(d.connect, |v| format!("{v:+.0}")),
                or_na(d.ssl, |v| format!("{v:+.0}")),
                or_na(d.wait, |v| format!("{v:+.0}")),
                or_na(d.receive, |v| format!("{v:+.0}")),
                or_na(d.discovery, |v| format!("{v:+.0}")),
            );
        }
        println!(
            "model and chrome: median PLT, ms; res, conns: model/Chromium; Δ: model - Chromium, ms ({}); model: --pool {} --browser-cost {}",
            Phases::NAMES.join(", "),
            spec.trial.pool,
            spec.trial.browser_cost
        );
        println!();
        println!(
            "{:<26} {:>6} {:>7} {:>9} {:>6}  worst",
            "Trials", "n", "MAPE", "within10", "rho"
        );
        for g in &groups {
            println!(
                "{:<26} {:>6} {:>7} {:>9} {:>6}  {}",
                g.group,
                format!("{}/{}", g.compared, g.trials),
                or_na(g.mape_pct, |v| format!("{v:.1}%")),
                or_na(g.within_10_pct, |v| format!("{v:.0}%")),
                or_na(g.spearman, |v| format!("{v:.3}")),
                or_na(g.worst_pct, |v| format!("{v:.1}% {}", g.worst)),
            );
        }
        println!(
            "goal: MAPE within 10% overall and per rate, rho >= 0.95, no Trial worse than 20%"
        );
        if rows.iter().any(|r| !r.ape_pct.is_finite()) {
            println!("n/a: a client loaded none of that Trial's pages: nothing to compare.");
        }
    }
    let failed = rows
        .iter()
        .any(|r| r.model_failed + r.chromium_failed > 0 || r.ape_pct.is_nan());
    Ok(if failed { 1 } else { 0 })
}

/// `v` formatted, or "n/a" when it is not a number (no successful load).
fn or_na(v: f64, fmt: impl Fn(f64) -> String) -> String {
    if v.is_finite() {
        fmt(v)
    } else {
        "n/a".into()
    }
}
