//! The deterministic link model of spdylab (sans-I/O).
//!
//! A [`Link`] models one emulated path described by a [`LinkSpec`]: per direction
//! a rate or a Mahimahi delivery trace, a one-way delay, a loss model and a
//! queue (drop-tail or CoDel). The caller owns the clock and the packets' I/O: it calls
//! [`Link::push`] when a packet arrives, [`Link::pop_ready`] to collect what is
//! due, and sleeps until [`Link::next_wakeup`]. Observers (the [`PacketLog`], a
//! pcap writer) are told of every event. The `units` module is the one place
//! where `150ms`, `1mbit`, `1%`, `256p` and `codel:5ms,100ms` are parsed.

#![forbid(unsafe_code)]

pub mod cross;
mod link;
pub mod log;
mod loss;
pub mod packet;
pub mod profile;
mod queue;
pub mod rng;
mod spec;
mod time;
mod trace;
pub mod units;

pub use cross::{CrossFlow, CrossTraffic};
pub use link::{Delivered, DirectionStats, Link, LinkStats};
pub use log::{first_flights, Event, EventKind, LogEntry, Observer, PacketLog};
pub use loss::{LossModel, LossProcess};
pub use profile::{profile, Profile, PROFILES, PROFILE_NAMES};
pub use queue::{CoDel, Fifo, Queue, Queued};
pub use spec::{Direction, DirectionSpec, LinkSpec, Service};
pub use time::Time;
pub use trace::{Trace, TraceError, OPPORTUNITY_BYTES};
pub use units::{Bitrate, Discipline, Probability, QueueLimit, QueueSpec, UnitError};

#[cfg(test)]
mod tests;
