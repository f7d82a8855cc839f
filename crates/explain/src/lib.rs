//! Why one protocol wins (issue 34), sans-I/O: a probe's page load time taken
//! apart into mechanisms, from the link's packet log and the HAR's phases,
//! and the difference of two sets of probes as the sum of their components'
//! differences. Pure functions of their input: no clock, no I/O.
//!
//! # The partition
//!
//! [`analyze`] puts every instant of [navigation start, navigation start +
//! PLT] into exactly one state, the first of these that holds:
//!
//! 1. `off_wire` — before the page's first packet arrives at the link or
//!    after its last packet is delivered (navigation, onload work);
//! 2. `retransmission` — the downlink is serializing a TCP segment of the
//!    page whose sequence range starts below what its flow had already sent;
//! 3. `transfer` — the downlink is serializing a page packet with payload
//!    (new data);
//! 4. `loss_recovery` — some page flow, either direction, has a dropped
//!    packet carrying data (or a SYN/FIN) not yet delivered again: TCP until
//!    a later-sent delivered segment covers the dropped sequence number;
//!    QUIC and other UDP (packet numbers are encrypted) until that flow's
//!    next delivered packet in that direction;
//! 5. `setup` — some resource is in its HAR connect phase (TCP, TLS, QUIC
//!    handshakes);
//! 6. `queueing` — a page packet waits in the uplink queue (requests and
//!    ACKs held at the bottleneck: RTT inflation);
//! 7. `window` — some response is arriving (HAR receive phase) but the
//!    downlink is idle: the sender is window-limited;
//! 8. `request` — requests are outstanding (HAR send or wait phase): request
//!    rounds and server think time;
//! 9. `browser` — nothing of the above: the browser discovering, blocked,
//!    parsing, computing.
//!
//! "Page packets" are those of flows whose first packet came inside the PLT
//! window. The downlink serializes a packet from max(its arrival, the
//! previous departure) to its delivery − the one-way delay; a queue wait is
//! the time before that. The components are integer nanoseconds summed
//! along one sweep, so they add up to the PLT exactly; two probes'
//! components subtract to their PLT difference with no hidden residual.
//! docs/explain.md says what each cannot see.

#![forbid(unsafe_code)]

mod analyze;
pub mod difference;
mod explanation;
mod input;
mod mechanisms;
mod packets;
pub mod text;

pub use analyze::analyze;
pub use difference::{difference, ComponentDelta, Delta, Difference, WhyDelta};
pub use explanation::{
    Bottleneck, Competing, Component, Components, Connection, DropShare, Explanation, QueueStats,
    Utilization, Why,
};
pub use input::{BrowserCost, Input, Phases, Resource};
pub use mechanisms::Mechanisms;

#[cfg(test)]
mod tests;
