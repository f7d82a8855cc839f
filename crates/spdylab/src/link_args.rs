//! The LINK flags shared by every command that takes a link, as clap
//! arguments; what they mean (traces read, contradictions refused naming
//! both flags, the testbed) is `lab::link_flags`'. No flag has a clap
//! default, so that "given" means given; the defaults are lab's.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use lab::link_flags::LinkFlags;
use lab::trial::CongestionControl;
use link::units::parse_duration;
use link::{Bitrate, LossModel, QueueSpec};
use std::path::PathBuf;
use std::time::Duration;

/// A flag taking one of `names` (listed in its help and errors), as `of` reads it.
pub fn one_of<T: Clone + Send + Sync + 'static>(
    names: &'static [&'static str],
    of: fn(&str) -> Option<T>,
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(names).try_map(move |v| of(&v).ok_or("no such value"))
}

/// The emulated link: delay, rate, loss, queue, TCP initial window and congestion control.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Link")]
pub struct LinkArgs {
    /// A named network (`spdylab profiles` lists each with its source):
    /// WebPageTest's fios 20/5 Mbit 4 ms, cable 5/1 Mbit 28 ms, lte 12 Mbit
    /// 70 ms, 4g 9 Mbit 170 ms, dsl 1.5 Mbit/384 kbit 50 ms, 3g-fast
    /// 1.6 Mbit/768 kbit 150 ms, 3g the same at 300 ms; the seeds'
    /// mobile-002 2/1 Mbit 150 ms and paper-004 1 Mbit 150 ms; the flags
    /// below override its rates and RTT. WebPageTest's own spellings
    /// (3GFast, Cable, LTE) name the same profiles
    #[arg(long, value_parser = lab::link_flags::profile, value_name = "NAME")]
    pub profile: Option<&'static link::Profile>,
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
    #[arg(long, value_parser = one_of(&["cubic", "bbr", "reno"], lab::trial::congestion_control))]
    pub cc: Option<CongestionControl>,
    /// Seed of the loss processes [default: 1]
    #[arg(long)]
    pub seed: Option<u64>,
    /// Competing flows on the bottleneck, started before each page: TCP bulk
    /// downloads (cubic:2, bbr:1) and UDP streams (udp:500kbit), comma-separated
    #[arg(long, value_name = "SPEC")]
    pub cross_traffic: Option<link::CrossTraffic>,
}

impl LinkArgs {
    /// The flags as lab takes them.
    pub fn flags(&self) -> LinkFlags {
        let a = self.clone();
        LinkFlags {
            profile: a.profile,
            rtt: a.rtt,
            delay_down: a.delay_down,
            delay_up: a.delay_up,
            rate: a.rate,
            down: a.down,
            up: a.up,
            trace_down: a.trace_down,
            trace_up: a.trace_up,
            loss: a.loss,
            queue: a.queue,
            iw: a.iw,
            cc: a.cc,
            seed: a.seed,
            cross: a.cross_traffic,
        }
    }
}
