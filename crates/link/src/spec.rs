//! LinkSpec: what one emulated path is, per direction. Plain data, validated
//! where it is parsed (see `units`), recorded beside every result.

use crate::loss::LossModel;
use crate::trace::Trace;
use crate::units::{Bitrate, QueueSpec};
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// How fast a direction drains its queue.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Service {
    /// No rate limit: packets only take the delay.
    #[default]
    Unlimited,
    /// A constant rate: a packet of `n` bytes takes `8n / rate` to serialize.
    Rate(Bitrate),
    /// A delivery trace (Mahimahi format), looping.
    Trace(Arc<Trace>),
}

impl Service {
    /// The nominal rate in bit/s, if there is one.
    pub fn bits_per_sec(&self) -> Option<f64> {
        match self {
            Service::Unlimited => None,
            Service::Rate(r) => Some(r.0 as f64),
            Service::Trace(t) => Some(t.mean_bits_per_sec()),
        }
    }
}

/// One direction of a link: rate or trace, one-way delay, loss, queue (discipline and limit).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct DirectionSpec {
    pub service: Service,
    #[serde(serialize_with = "crate::spec::ser_duration")]
    pub delay: Duration,
    pub loss: LossModel,
    pub queue: QueueSpec,
}

/// Both directions of one emulated path. `up` is client → server, `down` server → client.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct LinkSpec {
    pub up: DirectionSpec,
    pub down: DirectionSpec,
}

impl LinkSpec {
    /// The round trip the delays add up to (without serialization).
    pub fn rtt(&self) -> Duration {
        self.up.delay + self.down.delay
    }

    /// The round trip of a `bytes`-byte IP packet sent each way over an idle
    /// link, as the model gives it: both one-way delays plus the packet's
    /// serialization at each direction's rate (`bytes` is the IP packet's
    /// length, headers included: see `packet::IPV4_HEADER`). A trace-driven
    /// direction adds no serialization here (its wait depends on where the
    /// trace stands when the packet comes), so for it this is a lower bound.
    pub fn round_trip(&self, bytes: usize) -> Duration {
        let serialization = |d: &DirectionSpec| match &d.service {
            Service::Rate(r) => r.transmit_time(bytes),
            Service::Unlimited | Service::Trace(_) => Duration::ZERO,
        };
        self.rtt() + serialization(&self.up) + serialization(&self.down)
    }

    pub fn direction(&self, dir: Direction) -> &DirectionSpec {
        match dir {
            Direction::Up => &self.up,
            Direction::Down => &self.down,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Client → server.
    Up,
    /// Server → client.
    Down,
}

impl Direction {
    pub const BOTH: [Direction; 2] = [Direction::Up, Direction::Down];
}

pub(crate) fn ser_duration<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::units::format_duration(*d))
}
