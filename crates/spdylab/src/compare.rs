//! `spdylab compare`: one site, several protocols, the same emulated network.
//! SIGINT or SIGTERM (Ctrl-C) stops it early: the table (and `--json`,
//! `--out`) of the probes finished until then, exit status 130; a second one
//! ends it at once.

use crate::link_args::{describe, LinkArgs};
use crate::progress::CountProgress;
use crate::sites;
use crate::Failure;
use clap::{Args, ValueEnum};
use lab::compare::{or_na, summarize_probes, ProtocolSummary};
use lab::probe::ProbeSpec;
use link::units::parse_duration;
use proto::Protocol;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ServerArg {
    Builtin,
    Nginx,
    Apache,
    H2o,
    Caddy,
}

impl ServerArg {
    pub fn kind(self) -> lab::trial::ServerKind {
        use lab::trial::ServerKind;
        match self {
            ServerArg::Builtin => ServerKind::Builtin,
            ServerArg::Nginx => ServerKind::Peer(lab::trial::PeerKind::Nginx),
            ServerArg::Apache => ServerKind::Peer(lab::trial::PeerKind::Apache),
            ServerArg::H2o => ServerKind::Peer(lab::trial::PeerKind::H2o),
            ServerArg::Caddy => ServerKind::Peer(lab::trial::PeerKind::Caddy),
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ClientArg {
    Model,
    Chromium,
}

impl ClientArg {
    pub fn kind(self) -> lab::trial::ClientKind {
        match self {
            ClientArg::Model => lab::trial::ClientKind::Model,
            ClientArg::Chromium => lab::trial::ClientKind::Chromium,
        }
    }
}

/// A comma-separated list of protocols, the first being the baseline.
#[derive(Debug, Clone)]
pub struct ProtocolList(pub Vec<Protocol>);

pub fn parse_protocols(s: &str) -> Result<ProtocolList, String> {
    let list: Vec<Protocol> = s
        .split(',')
        .map(|p| p.trim().parse())
        .collect::<Result<_, _>>()?;
    let mut seen = Vec::new();
    for p in &list {
        if seen.contains(p) {
            return Err(format!("{p} is listed twice"));
        }
        seen.push(*p);
    }
    Ok(ProtocolList(list))
}

/// Load one site over several protocols on the same emulated network; PLT, time on wire, gain
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab compare --site youtube --protocols https,h2 --rtt 150ms --rate 1mbit --reps 10
  spdylab compare --site twitter --protocols https,h2,http --rtt 490ms --rate 1mbit --json
  spdylab compare --site icons --protocols http,http-pipelined --har-dir /tmp/har
  spdylab compare --site youtube --protocols https,h2 --rtt 150ms --rate 1mbit --server apache
  spdylab compare --site youtube --protocols https,h2 --rtt 150ms --rate 1mbit --tls 1.2 \
      --cert rsa2048 --tls-resume --warm-metrics --cookie-bytes 200

Repetitions interleave the protocols (A B C A B C ...). Gain is against the first
protocol: (B - X) / B x 100 %, positive when X is faster; its 95 % CI is a bootstrap.
Ctrl-C stops early: the table, --json and --out hold the probes finished by then
(\"interrupted\": true in the JSON), and the exit status is 130.")]
pub struct CompareArgs {
    /// A built-in site (see `spdylab sites`) or a site file (.toml)
    #[arg(long)]
    pub site: String,
    /// Protocols, the first being the baseline: http, https, http-pipelined, https-pipelined, spdy3, h2, h2c, h3
    #[arg(long, default_value = "https,spdy3,h2", value_parser = parse_protocols)]
    pub protocols: ProtocolList,
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
    #[arg(long, value_enum, default_value = "builtin")]
    pub server: ServerArg,
    /// Copy the real server's access and error logs to DIR at the end
    #[arg(long, value_name = "DIR", hide = true)]
    pub keep_server_log: Option<PathBuf>,
    /// The client: model (every protocol and knob) or chromium (headless, fresh
    /// profile per probe; http, https, h2)
    #[arg(long, value_enum, default_value = "model")]
    pub client: ClientArg,
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
    /// Also write the JSON document (as --json prints it) to FILE, at the end
    /// or on Ctrl-C
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The headline of the table's gain column: plt, or tow (time on wire,
    /// 004's metric); --json carries both
    #[arg(long, default_value = "plt", value_parser = parse_metric, value_name = "METRIC")]
    pub metric: lab::compare::Metric,
    #[command(flatten)]
    pub trial: crate::trial_args::TrialArgs,
}

fn parse_metric(s: &str) -> Result<lab::compare::Metric, String> {
    s.parse()
}

pub fn run(args: CompareArgs) -> Result<i32, Failure> {
    let mut trial = args.trial.trial().map_err(Failure::Usage)?;
    trial.server = args.server.kind();
    trial.client = args.client.kind();
    trial.timeout = args.timeout;
    let (site, addresses) = sites::laid_out(
        &args.site,
        args.site_seed,
        trial.layout,
        trial.shards as u16,
    )?;
    let mut testbed = args.link.testbed_spec(addresses)?;
    testbed.warm_metrics = trial.warm_metrics;
    if let Some(dir) = &args.har_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::Usage(format!("--har-dir {}: {e}", dir.display())))?;
    }
    let spec = ProbeSpec {
        site,
        protocols: args.protocols.0.clone(),
        testbed,
        reps: args.reps as usize,
        warmup: args.warmup as usize,
        trial,
        keep_server_log: args.keep_server_log.clone(),
    };
    if let Some(why) = spec.refusal() {
        return Err(Failure::Usage(why.to_string()));
    }
    if let Some(why) = spec
        .trial
        .site_refusal(&spec.site, &|k| format!("--{}", k.replace('_', "-")))
    {
        return Err(Failure::Usage(why));
    }
    let total = spec.protocols.len() * (spec.reps + spec.warmup);
    let spec = Arc::new(spec);
    let progress = CountProgress::new("compare", total);
    let outcome = {
        let progress = progress.clone();
        lab::compare::run_until_stopped(
            spec.clone(),
            args.har_dir.clone(),
            crate::signals::stop_flag(),
            move |p, done, total| {
                let line = match &p.error {
                    None => format!(
                        "{} PLT {:.0} ms, ToW {:.0} ms",
                        p.protocol, p.plt_ms, p.tow_ms
                    ),
                    Some(e) => format!("{} failed: {e}", p.protocol),
                };
                progress.item(done, total, &line);
            },
        )
    };
    progress.finish();
    let lab::compare::Outcome {
        probes,
        interrupted,
        har_error,
    } = outcome?;
    if interrupted {
        eprintln!(
            "compare: interrupted; {} of {} probes finished and kept",
            probes.len(),
            spec.protocols.len() * spec.reps
        );
    }
    let summary = summarize_probes(&spec.protocols, &probes);
    let doc = json!({
        "schema": 1,
        "site": spec.site.name,
        "link": describe(&spec.testbed),
        "testbed": spec.testbed,
        "reps": spec.reps,
        "interrupted": interrupted,
        "summary": summary,
        "probes": probes,
        "layout": spec.trial.layout.to_string(),
        "metric": args.metric.name(),
        "pool": spec.trial.pool.name(),
        "browser_cost": spec.trial.browser_cost.to_string(),
    });
    if let Some(out) = &args.out {
        lab::durable::write_whole(out, format!("{doc}\n").as_bytes())
            .map_err(|e| Failure::Usage(format!("--out {}: {e}", out.display())))?;
    }
    if args.json {
        println!("{doc}");
    } else {
        print_table(&spec, &summary, args.metric);
        if spec.site.is_recorded() {
            print_replay(&spec, &probes);
        }
        println!("{}", settings_line(&args, &spec));
    }
    // The table and --out come first: a HAR that could not be written loses
    // that file, never the run's figures.
    if interrupted {
        if let Some(e) = &har_error {
            eprintln!("compare: {e}");
        }
        return Err(Failure::Interrupted);
    }
    if let Some(e) = har_error {
        return Err(Failure::Usage(e));
    }
    Ok(if probes.iter().all(|p| p.error.is_none()) {
        0
    } else {
        1
    })
}

/// The one line under the table: which layout, pooling, TLS and metric the
/// comparison used (issue 16), so that a number is never read without them.
fn settings_line(args: &CompareArgs, spec: &ProbeSpec) -> String {
    let layout = match spec.trial.layout {
        lab::sites::Layout::Origin => format!(
            "origin ({} host names on {} address{})",
            spec.site.hosts().len(),
            spec.testbed.shards,
            if spec.testbed.shards == 1 { "" } else { "es" }
        ),
        lab::sites::Layout::Mirror => {
            "mirror (every resource on the page's host, one address)".into()
        }
        l => format!(
            "{l} ({} host names, each its own address)",
            spec.site.hosts().len()
        ),
    };
    let pool = format!(
        "{} (h2/spdy3 sessions; h1: {} per host), browser costs {}",
        spec.trial.pool.name(),
        spec.trial.conns_per_host,
        spec.trial.browser_cost
    );
    let tls = match spec.trial.tls13_only {
        None => "1.3 (1.2 offered)",
        Some(true) => "1.3 only",
        Some(false) => "1.2 only",
    };
    format!(
        "settings: layout {layout}; pooling {pool}; TLS {tls}; metric {} (gain), {} beside it",
        args.metric.label(),
        args.metric.other().label()
    )
}

fn print_table(spec: &ProbeSpec, rows: &[ProtocolSummary], metric: lab::compare::Metric) {
    println!(
        "site {} ({} resources, {:.1} kB) — {}",
        spec.site.name,
        spec.site.resources.len(),
        spec.site.total_bytes() as f64 / 1e3,
        describe(&spec.testbed)
    );
    for line in table(rows, metric) {
        println!("{line}");
    }
}

/// The table under the site line: a header, a row per protocol (the first
/// being the baseline) and the notes that its n/a cells call for. A protocol
/// that loaded nothing has n/a for every figure and its gain, and says "all k
/// failed" with the first error; over a baseline that loaded nothing, no
/// protocol has a gain.
fn table(rows: &[ProtocolSummary], metric: lab::compare::Metric) -> Vec<String> {
    let mut out = vec![format!(
        "{:<16} {:>3} {:>10} {:>10} {:>20} {:>10} {:>10} {:>8} {:>6} {:>26}",
        "protocol",
        "n",
        "PLT med",
        "PLT mean",
        "PLT 95% CI",
        "ToW mean",
        "kB down",
        "kB up",
        "conns",
        format!("{} gain vs first (95% CI)", metric.label())
    )];
    let Some(baseline) = rows.first() else {
        return out;
    };
    let kb = |v: Option<f64>| or_na(v, |v| format!("{:.1}", v / 1e3));
    for r in rows {
        let (gain_pct, gain_ci95) = metric.gain(r);
        let gain = if r.protocol == baseline.protocol {
            "baseline".to_string()
        } else if gain_pct.is_none() {
            "n/a".to_string()
        } else {
            format!(
                "{}% [{}]",
                or_na(gain_pct, |v| format!("{v:+.1}")),
                interval(gain_ci95, |v| format!("{v:+.1}"), ", ")
            )
        };
        out.push(format!(
            "{:<16} {:>3} {:>7} ms {:>7} ms {:>20} {:>7} ms {:>10} {:>8} {:>6} {:>26}{}",
            r.protocol.name(),
            r.n,
            or_na(r.plt_ms.median, ms),
            or_na(r.plt_ms.mean, ms),
            if has_interval(r.plt_ms.ci95) {
                format!("{:>8.0} – {:>6.0} ms", r.plt_ms.ci95[0], r.plt_ms.ci95[1])
            } else {
                "n/a".into()
            },
            or_na(r.tow_ms.mean, ms),
            kb(r.bytes_down),
            kb(r.bytes_up),
            or_na(r.connections, |v| format!("{v:.1}")),
            gain,
            r.failure_note()
                .map_or(String::new(), |note| format!("  ({note})"))
        ));
    }
    out.push("PLT: navigation to last byte; ToW: first request packet to last response packet (link log); mean ± Student-t 95% CI.".into());
    if rows.iter().any(|r| {
        let (gain, ci) = metric.gain(r);
        r.n > 0 && (!has_interval(r.plt_ms.ci95) || (gain.is_some() && !has_interval(ci)))
    }) {
        out.push("n/a: no interval from fewer than 2 successful loads of a protocol (one repetition has no spread to estimate one from).".into());
    }
    if baseline.n == 0 {
        out.push(format!(
            "n/a gain: the baseline, {}, loaded nothing: no protocol has a gain over it.",
            baseline.protocol.name()
        ));
    } else if rows.iter().any(|r| r.n == 0) {
        out.push("n/a: a protocol that loaded nothing (all failed) has no PLT and no gain.".into());
    }
    out
}

/// For an imported page: what each protocol fetched against the import, and
/// the replay misses (requests the server had nothing for: answered 404).
fn print_replay(spec: &ProbeSpec, probes: &[lab::probe::ProbeResult]) {
    for p in &spec.protocols {
        let mine: Vec<_> = probes.iter().filter(|r| r.protocol == *p).collect();
        let misses: usize = mine.iter().map(|r| r.misses).sum();
        let fetched = mine.iter().map(|r| r.resources).max().unwrap_or(0);
        let bytes = mine.iter().map(|r| r.body_bytes).max().unwrap_or(0);
        println!(
            "replay {:<10} fetched {fetched} of {} resources, {:.1} of {:.1} kB, {misses} misses",
            p.name(),
            spec.site.resources.len(),
            bytes as f64 / 1e3,
            spec.site.total_bytes() as f64 / 1e3,
        );
    }
}

fn has_interval(ci: [f64; 2]) -> bool {
    ci.iter().all(|v| v.is_finite())
}

fn ms(v: f64) -> String {
    format!("{v:.0}")
}

/// "lo{sep}hi", or "n/a" when there is no interval.
fn interval(ci: [f64; 2], fmt: impl Fn(f64) -> String, sep: &str) -> String {
    if has_interval(ci) {
        format!("{}{sep}{}", fmt(ci[0]), fmt(ci[1]))
    } else {
        "n/a".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_interval_prints_na_not_nan() {
        assert_eq!(interval([f64::NAN, f64::NAN], ms, " – "), "n/a");
        assert_eq!(interval([1.0, 2.4], ms, " – "), "1 – 2");
        assert_eq!(or_na(f64::NAN, ms), "n/a");
        assert_eq!(or_na(f64::INFINITY, ms), "n/a");
        assert_eq!(or_na(12.3, ms), "12");
    }

    /// A probe of `protocol`: loaded in `plt` ms, or failed with `error`.
    fn probe(protocol: Protocol, plt: f64, error: Option<&str>) -> lab::probe::ProbeResult {
        let mut p = lab::probe::ProbeResult::failed(protocol, 0, String::new());
        p.error = error.map(str::to_string);
        if error.is_none() {
            (p.plt_ms, p.tow_ms, p.bytes_down, p.bytes_up, p.connections) =
                (plt, plt - 10.0, 250_000, 20_000, 2);
        }
        p
    }

    fn lines(probes: &[lab::probe::ProbeResult]) -> Vec<String> {
        let protocols = [Protocol::Https, Protocol::H2];
        table(
            &summarize_probes(&protocols, probes),
            lab::compare::Metric::Plt,
        )
    }

    fn row<'a>(lines: &'a [String], protocol: &str) -> &'a str {
        lines
            .iter()
            .find(|l| l.starts_with(&format!("{protocol} ")))
            .unwrap()
    }

    /// The header is as wide as the rows (it was one column wider, and its
    /// last title overflowed its column).
    #[test]
    fn the_header_lines_up_with_the_rows() {
        let out = lines(&[
            probe(Protocol::Https, 1000.0, None),
            probe(Protocol::H2, 900.0, None),
            probe(Protocol::Https, 1100.0, None),
            probe(Protocol::H2, 950.0, None),
        ]);
        let width = |l: &str| l.chars().count();
        let header = &out[0];
        for name in ["https", "h2"] {
            assert_eq!(
                width(row(&out, name)),
                width(header),
                "{header}\n{}",
                row(&out, name)
            );
        }
    }

    #[test]
    fn a_protocol_whose_every_probe_failed_reads_na_and_all_failed() {
        let out = lines(&[
            probe(Protocol::Https, 1000.0, None),
            probe(
                Protocol::H2,
                0.0,
                Some("h2: stream 3 reset: REFUSED_STREAM"),
            ),
            probe(Protocol::Https, 1100.0, None),
            probe(
                Protocol::H2,
                0.0,
                Some("h2: stream 5 reset: REFUSED_STREAM"),
            ),
        ]);
        let h2 = row(&out, "h2");
        assert!(
            h2.ends_with("n/a  (all 2 failed: h2: stream 3 reset: REFUSED_STREAM)"),
            "{h2}"
        );
        // n/a for every figure: PLT median, mean, CI, ToW, kB down, up, conns, gain.
        assert_eq!(h2.matches("n/a").count(), 8, "{h2}");
        assert!(!h2.contains("+100") && !h2.contains('%'), "{h2}");
        let https = row(&out, "https");
        assert!(
            https.contains("1050 ms") && https.contains("baseline"),
            "{https}"
        );
        assert!(!https.contains("failed"), "{https}");
        assert!(out.iter().any(|l| l.contains("loaded nothing")), "{out:#?}");
        for l in &out {
            assert!(!l.contains("-0") && !l.contains("NaN"), "{l}");
        }
    }

    #[test]
    fn over_a_baseline_that_never_loaded_no_protocol_has_a_gain() {
        let out = lines(&[
            probe(Protocol::Https, 0.0, Some("connect: timed out")),
            probe(Protocol::H2, 900.0, None),
            probe(Protocol::Https, 0.0, Some("connect: refused")),
            probe(Protocol::H2, 950.0, None),
        ]);
        let https = row(&out, "https");
        assert!(
            https.ends_with("baseline  (all 2 failed: connect: timed out)"),
            "{https}"
        );
        let h2 = row(&out, "h2");
        // Its own figures stand; its gain is n/a, and nothing failed.
        assert!(h2.contains("925 ms") && h2.contains("250.0"), "{h2}");
        assert!(h2.trim_end().ends_with("n/a") && !h2.contains('%'), "{h2}");
        assert!(
            out.iter()
                .any(|l| l.contains("the baseline, https, loaded nothing")),
            "{out:#?}"
        );
        for l in &out {
            assert!(!l.contains("-0") && !l.contains("NaN"), "{l}");
        }
    }

    #[test]
    fn some_failed_probes_keep_the_figures_and_count_beside_them() {
        let out = lines(&[
            probe(Protocol::Https, 1000.0, None),
            probe(Protocol::H2, 800.0, None),
            probe(Protocol::Https, 1000.0, None),
            probe(Protocol::H2, 0.0, Some("h2: GOAWAY")),
            probe(Protocol::Https, 1000.0, None),
            probe(Protocol::H2, 800.0, None),
        ]);
        let h2 = row(&out, "h2");
        assert!(
            h2.contains("+20.0% [") && h2.ends_with("  (1 failed)"),
            "{h2}"
        );
        assert!(h2.contains("800 ms") && !h2.contains("all"), "{h2}");
    }
}
