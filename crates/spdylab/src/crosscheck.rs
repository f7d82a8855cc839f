//! `spdylab crosscheck`: the same Trials loaded by the browser model and by
//! headless Chromium; per Trial the PLT ratio and error, and the MAPE.

use crate::compare::{ProtocolList, ServerArg};
use crate::link_args::{describe, LinkArgs, TlsArg};
use crate::progress::CountProgress;
use crate::sites;
use crate::Failure;
use clap::Args;
use lab::crosscheck::{mape, CrosscheckError, CrosscheckSpec};
use link::units::parse_duration;
use serde_json::json;
use std::time::Duration;

/// Is the model right? The same Trials with the model and with Chromium: PLT ratio, MAPE
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab crosscheck --sites youtube,twitter --protocols https,h2 --rtts 20ms,150ms --rate 8mbit
  spdylab crosscheck --sites icons --protocols http,h2 --rtt 50ms --rate 1mbit --reps 5 --json

Each (site, RTT) runs twice on its own testbed: the model's probes, then Chromium's
(a fresh browser and profile per probe). Ratio = model median PLT / Chromium median
PLT; error = |model - Chromium| / Chromium; MAPE is its mean over the Trials.")]
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
    /// Repetitions per protocol and client
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub reps: u32,
    /// Probes per protocol and client run first and not counted
    #[arg(long, default_value_t = 1)]
    pub warmup: u32,
    /// Origin layout only: server addresses the site's hosts are spread over
    /// (Fig. 8's shards: --layout shards:N)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=254))]
    pub shards: u16,
    /// Only this TLS version (default: 1.3, falling back to 1.2)
    #[arg(long)]
    pub tls: Option<TlsArg>,
    /// The server both clients load from
    #[arg(long, value_enum, default_value = "builtin")]
    pub server: ServerArg,
    /// A probe that has not loaded the page by then fails
    #[arg(long, value_parser = parse_duration, default_value = "120s", value_name = "DURATION")]
    pub timeout: Duration,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// How the site's resources map to host names: origin, mirror (all on the
    /// page's host, 004 §V), shards:N (N host names, each its own address, 004 Fig. 8)
    #[arg(long, default_value = "origin", value_parser = crate::sites::parse_layout, value_name = "LAYOUT")]
    pub layout: lab::sites::Layout,
    #[command(flatten)]
    pub era: crate::era_args::EraArgs,
}

pub fn run(args: CrosscheckArgs) -> Result<i32, Failure> {
    let rtts: Vec<Option<Duration>> = if args.rtts.is_empty() {
        vec![args.link.rtt]
    } else {
        args.rtts.iter().map(|r| Some(*r)).collect()
    };
    let mut sites = Vec::new();
    let mut addresses = args.shards as usize;
    for s in &args.sites {
        let (site, n) = sites::laid_out(s, lab::sites::DEFAULT_SEED, args.layout, args.shards)?;
        addresses = n;
        sites.push(site);
    }
    let mut links = Vec::new();
    for rtt in &rtts {
        let mut choice = args.link.choice()?;
        choice.rtt = *rtt;
        let mut testbed = crate::link_args::testbed_spec(&choice, addresses)?;
        testbed.warm_metrics = args.era.warm_metrics;
        links.push((describe(&testbed), testbed));
    }
    let spec = CrosscheckSpec {
        sites,
        protocols: args.protocols.0.clone(),
        links,
        reps: args.reps as usize,
        warmup: args.warmup as usize,
        tls13_only: TlsArg::tls13_only(args.tls),
        server: args.server.kind(),
        timeout: args.timeout,
        cert: match args.era.cert {
            crate::era_args::CertArg::Rsa2048 => server::CertKind::Rsa2048,
            crate::era_args::CertArg::Ecdsa => server::CertKind::Ecdsa,
        },
        tls_resume: args.era.tls_resume,
        headers: args.era.request_headers(),
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
    })
    .map_err(|e| match e {
        CrosscheckError::NoBrowser(e) => Failure::Usage(e.to_string()),
        CrosscheckError::Refused(r) => Failure::Usage(r.to_string()),
        CrosscheckError::Setup(e) => Failure::Setup(Box::new(e)),
    })?;
    progress.finish();
    let m = mape(&rows);
    if args.json {
        println!(
            "{}",
            json!({"schema": 1, "reps": args.reps, "rows": rows, "mape_pct": m,
                   "testbeds": spec.links.iter().map(|l| &l.1).collect::<Vec<_>>()})
        );
    } else {
        println!(
            "{:<10} {:<34} {:<6} {:>10} {:>10} {:>6} {:>7} {:>9} {:>9}",
            "site",
            "link",
            "proto",
            "model ms",
            "chrome ms",
            "ratio",
            "error",
            "resources",
            "conns"
        );
        for r in &rows {
            println!(
                "{:<10} {:<34} {:<6} {:>10} {:>10} {:>6} {:>7} {:>4.0}/{:<4.0} {:>4.0}/{:<4.0}",
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
                r.chromium_connections
            );
        }
        println!(
            "MAPE {} over {} Trials (goal: within 10%)",
            or_na(m, |v| format!("{v:.1}%")),
            rows.len()
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
