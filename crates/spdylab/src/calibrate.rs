//! `spdylab calibrate`: measure the testbed against its spec.

use crate::link_args::{describe, LinkArgs};
use crate::progress::TimedProgress;
use crate::Failure;
use clap::Args;
use lab::calibrate::{
    CalibrateRequest, Calibration, Plan, RateResult, ECHO_WIRE_BYTES, RTT_TOLERANCE,
};
use link::units::parse_duration;
use serde_json::json;
use std::time::Duration;

/// Measure RTT, goodput each way and loss of an emulated link against its spec
#[derive(Debug, Args)]
#[command(after_help = after_help())]
pub struct CalibrateArgs {
    #[command(flatten)]
    pub link: LinkArgs,
    /// Print one JSON object instead of the table
    #[arg(long)]
    pub json: bool,
    /// Echo samples for the RTT
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub echo_samples: u32,
    /// Measured window of each bulk transfer (after its warm-up)
    #[arg(long, value_parser = parse_duration, default_value = "10s", value_name = "DURATION")]
    pub bulk_time: Duration,
    /// Goodput over tcp (a bulk transfer) or udp (a paced flow, QUIC's path)
    #[arg(long, value_enum, default_value = "tcp")]
    pub transport: TransportArg,
    /// UDP datagrams sent each way for the loss measurement
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..))]
    pub datagrams: u32,
}

/// The command's long help; the RTT paragraph takes its figures from where
/// calibrate keeps them (the probe's size on the link, the tolerance).
fn after_help() -> String {
    let rtt = format!(
        "RTT comes from UDP echoes on an idle link, timed as ping times its echoes:
from just before the send to the kernel's receive stamp, less the time the
echo server held the probe (expected = spec + the {}-byte IP packet's
serialization both ways: the link charges IP bytes, no Ethernet framing).
A warning on stderr (and in the JSON's warnings) says when the probes came
back more than {} ms over that on average, or spread more than that: the
machine was too busy to hold the spec.",
        ECHO_WIRE_BYTES,
        RTT_TOLERANCE.as_secs_f64() * 1e3
    );
    format!(
        "Examples:
  spdylab calibrate --rtt 150ms --rate 1mbit
  spdylab calibrate --rtt 490ms --down 8mbit --up 1mbit --loss 1% --json
  spdylab calibrate --rtt 150ms --rate 8mbit --transport udp

{rtt}

Goodput from one TCP bulk transfer each way, measured after a warm-up of
10 RTTs + 1 s, as the payload the sender's TCP knows reached the receiver
(acknowledged or SACKed), ± the segments that can sit on the window's edges
(TCP with timestamps carries at most 1448/1500 of the rate); loss from paced
UDP datagrams each way, set against the binomial 99 % interval. With --transport udp (the path QUIC and h3 take), goodput comes
from a paced UDP flow each way instead: 1500-byte datagrams offered at 110 % of
the direction's rate (100 Mbit/s unshaped) after a warm-up of 1 RTT + 250 ms,
counted as they arrive, ± one datagram at each edge of the window (1472/1500 of
the rate at most)."
    )
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum TransportArg {
    Tcp,
    Udp,
}

pub fn run(args: CalibrateArgs) -> Result<i32, Failure> {
    let spec = args.link.testbed_spec(1)?;
    let plan = Plan {
        echo_samples: args.echo_samples as usize,
        bulk_time: args.bulk_time,
        datagrams: args.datagrams as usize,
        transport: match args.transport {
            TransportArg::Tcp => lab::calibrate::Transport::Tcp,
            TransportArg::Udp => lab::calibrate::Transport::Udp,
        },
    };
    let request = CalibrateRequest::new(spec, plan)?;
    let (spec, plan) = (request.testbed(), request.plan());
    let mut progress = TimedProgress::new("calibrate", request.estimate());
    let result = lab::calibrate::run(&request, &mut |phase| progress.phase(phase))?;
    progress.finish();
    for w in &result.warnings {
        eprintln!("spdylab: warning: {w}");
    }
    if args.json {
        let doc = json!({
            "schema": 1,
            "link": describe(spec),
            "testbed": spec,
            "plan": plan,
            "rtt_ms": result.rtt_ms,
            "down_bps": result.down_bps,
            "up_bps": result.up_bps,
            "loss": result.loss,
            "warnings": result.warnings,
        });
        println!("{doc}");
    } else {
        print_table(&describe(spec), &result);
    }
    Ok(0)
}

fn rate_row(name: &str, r: &RateResult) {
    let mbit = |b: f64| format!("{:.4} Mbit/s", b / 1e6);
    let (ceiling, kind) = match (r.tcp_ceiling, r.udp_ceiling) {
        (Some(c), _) => (Some(c), "TCP"),
        (None, c) => (c, "UDP"),
    };
    match (r.spec, r.ratio, ceiling) {
        (Some(spec), Some(ratio), Some(ceiling)) => println!(
            "{name:<10} {:>16} {:>16} {:>8.2}%   ± {:.2}%; {kind} ceiling {:.2}%; on the wire {:.2}%; emulator {:.1}% of a core",
            mbit(spec),
            mbit(r.measured),
            ratio * 100.0,
            r.error_bps / spec * 100.0,
            ceiling / spec * 100.0,
            r.wire_bps / spec * 100.0,
            r.emulator_cpu_pct
        ),
        _ => println!(
            "{name:<10} {:>16} {:>16} {:>9}   ± {}; on the wire {}; emulator {:.1}% of a core",
            "unlimited",
            mbit(r.measured),
            "",
            mbit(r.error_bps),
            mbit(r.wire_bps),
            r.emulator_cpu_pct
        ),
    }
}

fn print_table(link: &str, c: &Calibration) {
    println!("link: {link}");
    println!(
        "{:<10} {:>16} {:>16} {:>9}",
        "", "spec", "measured", "ratio"
    );
    let r = &c.rtt_ms;
    println!(
        "{:<10} {:>13.3} ms {:>13.3} ms {:>9}   expected {:.3} ms (with probe serialization); min {:.3} max {:.3} mdev {:.3} ms, n={}{}; as the threads saw it {:.3} ms",
        "rtt",
        r.spec,
        r.measured,
        if r.spec > 0.0 { format!("{:.2}%", r.measured / r.spec * 100.0) } else { "-".into() },
        r.expected,
        r.min,
        r.max,
        r.mdev,
        r.samples,
        if r.lost > 0 { format!(", {} lost", r.lost) } else { String::new() },
        r.app_measured
    );
    rate_row("down", &c.down_bps);
    rate_row("up", &c.up_bps);
    let l = &c.loss;
    println!(
        "{:<10} {:>15.3}% {:>15.3}% {:>9}   up {:.3}% down {:.3}%, {} datagrams each way; 99% interval [{:.3}%, {:.3}%]: {}",
        "loss",
        l.spec * 100.0,
        l.measured * 100.0,
        "",
        l.up * 100.0,
        l.down * 100.0,
        l.sent_each_way,
        l.ci99[0] * 100.0,
        l.ci99[1] * 100.0,
        if l.inside_ci99 { "inside" } else { "OUTSIDE" }
    );
}
