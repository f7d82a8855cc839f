//! `spdylab calibrate`: measure the testbed against its spec. Parses, calls
//! `lab::calibrate`, prints `lab::text::calibrate`'s table or JSON.

use crate::link_args::{one_of, LinkArgs};
use crate::progress::TimedProgress;
use crate::Failure;
use clap::Args;
use lab::calibrate::{CalibrateRequest, Plan, Transport};
use lab::text::calibrate as text;
use link::units::parse_duration;
use std::time::Duration;

/// Measure RTT, goodput each way and loss of an emulated link against its spec
#[derive(Debug, Args)]
#[command(after_help = text::after_help())]
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
    #[arg(long, default_value = "tcp", value_parser = one_of(&["tcp", "udp"], lab::calibrate::transport))]
    pub transport: Transport,
    /// UDP datagrams sent each way for the loss measurement
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..))]
    pub datagrams: u32,
}

pub fn run(args: CalibrateArgs) -> Result<i32, Failure> {
    let link = args.link.flags();
    link.refuse_cross_traffic("calibrate")?;
    let plan = Plan {
        echo_samples: args.echo_samples as usize,
        bulk_time: args.bulk_time,
        datagrams: args.datagrams as usize,
        transport: args.transport,
    };
    let request = CalibrateRequest::new(link.testbed_spec(1)?, plan)?;
    let (spec, plan) = (request.testbed(), request.plan());
    let mut progress = TimedProgress::new("calibrate", request.estimate());
    let result = lab::calibrate::run(&request, &mut |phase| progress.phase(phase))?;
    progress.finish();
    for w in &result.warnings {
        eprintln!("spdylab: warning: {w}");
    }
    let table = || text::table(&spec.to_string(), &result);
    crate::print_json_or(args.json, || text::json(spec, plan, &result), table);
    Ok(0)
}
