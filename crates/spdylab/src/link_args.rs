//! The LINK flags shared by every command that takes a link, and their
//! translation into lab's typed `LinkChoice` (which knows whether any flag was
//! given: a shaped link). Values are parsed by `link::units`; flags that
//! contradict each other are refused by lab, naming both. No flag has a clap
//! default, so that "given" means given; the defaults are lab's.

use crate::Failure;
use clap::{Args, ValueEnum};
use lab::trial::{LinkChoice, TestbedSpec};
use link::units::parse_duration;
use link::{Bitrate, DirectionSpec, LossModel, QueueSpec, Service, Trace};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// `--tls 1.2|1.3`: only this TLS version (default: 1.3, falling back to 1.2).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TlsArg {
    #[value(name = "1.2")]
    V12,
    #[value(name = "1.3")]
    V13,
}

impl TlsArg {
    /// Some(true): TLS 1.3 only; Some(false): TLS 1.2 only; None: both.
    pub fn tls13_only(arg: Option<TlsArg>) -> Option<bool> {
        arg.map(|t| matches!(t, TlsArg::V13))
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CcArg {
    Cubic,
    Bbr,
    Reno,
}

/// The emulated link: delay, rate, loss, queue, TCP initial window and congestion control.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Link")]
pub struct LinkArgs {
    /// Round-trip time, split evenly between the directions (e.g. 150ms)
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub rtt: Option<Duration>,
    /// One-way delay server → client (with --rtt: the up delay is the rest)
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub delay_down: Option<Duration>,
    /// One-way delay client → server (with --rtt: the down delay is the rest)
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub delay_up: Option<Duration>,
    /// Rate of both directions (e.g. 1mbit, 64kbit); unlimited if not given
    #[arg(long, value_name = "RATE")]
    pub rate: Option<Bitrate>,
    /// Rate server → client
    #[arg(long, value_name = "RATE", conflicts_with = "trace_down")]
    pub down: Option<Bitrate>,
    /// Rate client → server
    #[arg(long, value_name = "RATE", conflicts_with = "trace_up")]
    pub up: Option<Bitrate>,
    /// Delivery trace server → client (Mahimahi format; replaces the down rate)
    #[arg(long, value_name = "FILE")]
    pub trace_down: Option<PathBuf>,
    /// Delivery trace client → server (Mahimahi format; replaces the up rate)
    #[arg(long, value_name = "FILE")]
    pub trace_up: Option<PathBuf>,
    /// Random loss in each direction: 1%, or Gilbert-Elliott ge:P,R[,LOSS_BAD[,LOSS_GOOD]] [default: 0%]
    #[arg(long, value_name = "LOSS")]
    pub loss: Option<LossModel>,
    /// Queue per direction: drop-tail of packets (256p), bytes (64kb) or both
    /// (256p,64kb), or CoDel codel:TARGET,INTERVAL[,LIMIT] (codel:5ms,100ms; limit 1000p) [default: 256p]
    #[arg(long, value_name = "QUEUE")]
    pub queue: Option<QueueSpec>,
    /// Server initial congestion window, in segments (kernel default: 10); for h3,
    /// SEGMENTS × 1448 B (quinn's default: 12 000 B)
    #[arg(long, value_name = "SEGMENTS", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub iw: Option<u32>,
    /// Congestion control inside the testbed, TCP's and h3's (quinn) [default: cubic]
    #[arg(long, value_enum)]
    pub cc: Option<CcArg>,
    /// Seed of the loss processes [default: 1]
    #[arg(long)]
    pub seed: Option<u64>,
}

impl LinkArgs {
    /// The link these flags choose (traces read), or an error naming the flag.
    pub fn choice(&self) -> Result<LinkChoice, Failure> {
        Ok(LinkChoice {
            rtt: self.rtt,
            delay_down: self.delay_down,
            delay_up: self.delay_up,
            rate: self.rate,
            down: self.down,
            up: self.up,
            trace_down: trace("--trace-down", &self.trace_down).map_err(Failure::Usage)?,
            trace_up: trace("--trace-up", &self.trace_up).map_err(Failure::Usage)?,
            loss: self.loss,
            queue: self.queue,
            iw: self.iw,
            cc: self
                .cc
                .and_then(|cc| lab::trial::congestion_control(cc.to_possible_value()?.get_name())),
            seed: self.seed,
        })
    }

    /// The testbed these flags describe, or a one-line error naming the flag(s).
    pub fn testbed_spec(&self, shards: usize) -> Result<TestbedSpec, Failure> {
        testbed_spec(&self.choice()?, shards)
    }
}

/// A choice's testbed, or a one-line error naming the flag(s).
pub fn testbed_spec(choice: &LinkChoice, shards: usize) -> Result<TestbedSpec, Failure> {
    choice
        .testbed_spec(shards, &flag)
        .map_err(|e| Failure::Usage(e.to_string()))
}

/// The flag of a LinkChoice field: `delay_down` → `--delay-down`.
pub fn flag(field: &str) -> String {
    format!("--{}", field.replace('_', "-"))
}

fn trace(flag: &str, path: &Option<PathBuf>) -> Result<Option<Arc<Trace>>, String> {
    let Some(path) = path else { return Ok(None) };
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("{flag} {}: {e}", path.display()))?;
    let trace =
        Trace::parse(&path.display().to_string(), &text).map_err(|e| format!("{flag} {e}"))?;
    Ok(Some(Arc::new(trace)))
}

/// One line describing a link, for progress lines and tables.
pub fn describe(spec: &TestbedSpec) -> String {
    let side = |d: &DirectionSpec| match &d.service {
        Service::Unlimited => "unlimited".to_string(),
        Service::Rate(r) => r.to_string(),
        Service::Trace(t) => format!("trace {}", t.name()),
    };
    let l = &spec.link;
    format!(
        "rtt {} (down {}, up {}), down {}, up {}, loss {}, queue {}, iw {}, cc {}",
        link::units::format_duration(l.rtt()),
        link::units::format_duration(l.down.delay),
        link::units::format_duration(l.up.delay),
        side(&l.down),
        side(&l.up),
        l.down.loss,
        l.down.queue,
        spec.iw.map_or("default".to_string(), |i| i.to_string()),
        spec.cc
    )
}

/// The LINK flags' mapping, flag by flag, without a testbed: each flag alone
/// and all thirteen together land where the testbed reads them (the
/// testbed's JSON, as the commands print it). tests/cli/link_flags.rs then
/// checks on real testbeds that every command passes its flags on.
#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use serde_json::{json, Value};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        link: LinkArgs,
    }

    /// The testbed of `flags`, as JSON; or the error.
    fn testbed(flags: &[&str]) -> Result<Value, String> {
        let cli = Cli::try_parse_from(std::iter::once("x").chain(flags.iter().copied()))
            .map_err(|e| e.to_string())?;
        let spec = cli.link.testbed_spec(1).map_err(|e| e.to_string())?;
        Ok(serde_json::to_value(spec).unwrap())
    }

    fn check(flags: &[&str], want: &[(&str, Value)]) {
        let t = testbed(flags).unwrap_or_else(|e| panic!("{flags:?}: {e}"));
        for (pointer, value) in want {
            let got = t.pointer(pointer);
            match value {
                Value::Bool(true) => assert!(got.is_some(), "{flags:?}: no {pointer} in {t}"),
                v => assert_eq!(got, Some(v), "{flags:?}: {pointer} in {t}"),
            }
        }
    }

    /// A Mahimahi trace: 10 packets every 10 ms (12 Mbit/s).
    fn trace_file() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("spdylab-link-args-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("12mbit.trace");
        let text: String = (1..=10).map(|ms| format!("{ms}\n")).collect();
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn each_flag_alone_lands_in_the_testbed() {
        let trace = trace_file();
        let t = trace.to_str().unwrap();
        check(
            &["--rtt", "40ms"],
            &[
                ("/link/down/delay", json!("20ms")),
                ("/link/up/delay", json!("20ms")),
            ],
        );
        check(
            &["--delay-down", "15ms"],
            &[("/link/down/delay", json!("15ms"))],
        );
        check(
            &["--delay-up", "12ms"],
            &[("/link/up/delay", json!("12ms"))],
        );
        check(
            &["--rate", "20mbit"],
            &[
                ("/link/down/service/rate", json!(20_000_000)),
                ("/link/up/service/rate", json!(20_000_000)),
            ],
        );
        check(
            &["--down", "30mbit"],
            &[("/link/down/service/rate", json!(30_000_000))],
        );
        check(
            &["--up", "10mbit"],
            &[("/link/up/service/rate", json!(10_000_000))],
        );
        check(
            &["--trace-down", t],
            &[("/link/down/service/trace", json!(true))],
        );
        check(
            &["--trace-up", t],
            &[("/link/up/service/trace", json!(true))],
        );
        check(
            &["--loss", "5%"],
            &[
                ("/link/down/loss/p", json!(0.05)),
                ("/link/up/loss/p", json!(0.05)),
            ],
        );
        check(&["--queue", "100p"], &[("/link/down/queue", json!("100p"))]);
        check(
            &["--queue", "codel:5ms,100ms"],
            &[("/link/down/queue", json!("codel:5ms,100ms"))],
        );
        check(&["--iw", "20"], &[("/iw", json!(20))]);
        check(&["--cc", "reno"], &[("/cc", json!("reno"))]);
        check(&["--seed", "7"], &[("/seed", json!(7))]);
    }

    #[test]
    fn all_flags_together_and_the_rtt_split() {
        let trace = trace_file();
        let t = trace.to_str().unwrap();
        check(
            &[
                "--rtt",
                "40ms",
                "--delay-down",
                "15ms",
                "--down",
                "30mbit",
                "--trace-up",
                t,
                "--loss",
                "1%",
                "--queue",
                "100p",
                "--iw",
                "20",
                "--cc",
                "reno",
                "--seed",
                "7",
            ],
            &[
                ("/link/down/delay", json!("15ms")),
                ("/link/up/delay", json!("25ms")),
                ("/link/down/service/rate", json!(30_000_000)),
                ("/link/up/service/trace", json!(true)),
                ("/link/down/loss/p", json!(0.01)),
                ("/link/down/queue", json!("100p")),
                ("/iw", json!(20)),
                ("/cc", json!("reno")),
                ("/seed", json!(7)),
            ],
        );
        check(
            &[
                "--delay-down",
                "10ms",
                "--delay-up",
                "12ms",
                "--up",
                "10mbit",
                "--trace-down",
                t,
            ],
            &[
                ("/link/down/delay", json!("10ms")),
                ("/link/up/delay", json!("12ms")),
                ("/link/up/service/rate", json!(10_000_000)),
                ("/link/down/service/trace", json!(true)),
            ],
        );
        // No flag: no delay, no rate, the defaults.
        check(
            &[],
            &[
                ("/link/down/delay", json!("0ms")),
                ("/cc", json!("cubic")),
                ("/seed", json!(1)),
            ],
        );
    }

    #[test]
    fn contradictions_and_bad_files_name_the_flags() {
        let e = testbed(&["--rtt", "10ms", "--delay-down", "20ms"]).unwrap_err();
        assert!(e.contains("--delay-down") && e.contains("--rtt"), "{e}");
        let e = testbed(&[
            "--rtt",
            "40ms",
            "--delay-down",
            "10ms",
            "--delay-up",
            "10ms",
        ])
        .unwrap_err();
        assert!(e.contains("--rtt") && e.contains("--delay-up"), "{e}");
        let e = testbed(&["--trace-down", "/nonexistent/x.trace"]).unwrap_err();
        assert!(e.contains("--trace-down"), "{e}");
        let e = testbed(&["--down", "1mbit", "--trace-down", "/x"]).unwrap_err();
        assert!(e.contains("--down") || e.contains("--trace-down"), "{e}");
        assert!(testbed(&["--iw", "0"]).is_err());
        assert!(testbed(&["--loss", "101%"]).is_err());
    }
}
