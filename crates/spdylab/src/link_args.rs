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
