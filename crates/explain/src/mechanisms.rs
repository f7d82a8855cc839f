//! The figures 004 argued its results with (§IV-B, §V-B, §V-C), read off one
//! probe's [`Explanation`]: gateway loss and RTT inflation at the
//! bottleneck, the page's goodput on the wire, the connect and wait shares of
//! the PLT (Fig. 5), head-of-line blocking, and how far each connection's
//! window grew. Pure arithmetic on the explanation, so stored probes give
//! them after the fact.

use crate::explanation::{Explanation, QueueStats};
use serde::{Deserialize, Serialize};

/// One probe's mechanism figures. Undefined ones (a ratio over nothing) are
/// None.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Mechanisms {
    /// Packets the bottleneck's queues dropped / packets that reached them,
    /// both directions, %: 004's "gateway PLR". Random loss is not in it.
    pub gateway_loss_pct: Option<f64>,
    /// Mean queue wait up + down over the base RTT, % (004's "+570 %").
    pub rtt_inflation_pct: Option<f64>,
    /// Payload delivered downlink × 8 / time on the wire (the page's first
    /// packet to its last delivery), kbit/s: the throughput the page got.
    pub goodput_kbps: Option<f64>,
    /// `setup` / PLT and `request` / PLT, %: Fig. 5's connect and wait
    /// phases, as time on the critical path rather than summed over
    /// resources.
    pub setup_share_pct: Option<f64>,
    pub request_share_pct: Option<f64>,
    /// Payload that reached the client above a hole and waited there for the
    /// retransmission (head-of-line blocking), KB.
    pub hol_blocked_kb: f64,
    /// Time some connection held such bytes, ms (the union over
    /// connections: many parallel connections each blocking only its own
    /// response add up to more of it than one multiplexed connection).
    pub hol_blocked_ms: f64,
    /// Connections that opened inside the PLT window.
    pub connections: usize,
    /// The most payload any one connection delivered in one base RTT, KB
    /// (1000 B): how far the largest window grew on the wire.
    pub peak_flight_kb: Option<f64>,
    /// Each data-carrying connection's own peak flight, averaged, KB.
    pub mean_peak_flight_kb: Option<f64>,
    /// With competing traffic (`Explanation::competing`): the page's share
    /// of the downlink's bytes in its window, %, and the others' goodput,
    /// kbit/s. None without.
    #[serde(default)]
    pub page_share_pct: Option<f64>,
    #[serde(default)]
    pub competing_kbps: Option<f64>,
    /// The competing flows' 95th-percentile queue wait, ms.
    #[serde(default)]
    pub competing_wait_p95_ms: Option<f64>,
}

impl Explanation {
    /// This probe's [`Mechanisms`].
    pub fn mechanisms(&self) -> Mechanisms {
        let queues = [&self.bottleneck.up, &self.bottleneck.down];
        let arrived: u64 = queues.iter().map(|q| arrivals(q)).sum();
        let dropped: u64 = queues.iter().map(|q| q.drops_queue).sum();
        let wire_ms = self.plt_ms - self.components.off_wire_ms;
        let payload: u64 = self
            .connections
            .iter()
            .map(|c| c.payload_bytes_delivered_down)
            .sum();
        let share = |ms: f64| (self.plt_ms > 0.0).then(|| ms / self.plt_ms * 100.0);
        let peaks: Vec<u64> = self
            .connections
            .iter()
            .filter_map(|c| c.flight_bytes_per_rtt.iter().copied().max())
            .filter(|&p| p > 0)
            .collect();
        Mechanisms {
            gateway_loss_pct: (arrived > 0).then(|| dropped as f64 / arrived as f64 * 100.0),
            rtt_inflation_pct: self.bottleneck.rtt_inflation_pct,
            goodput_kbps: (wire_ms > 0.0).then(|| payload as f64 * 8.0 / wire_ms),
            setup_share_pct: share(self.components.setup_ms),
            request_share_pct: share(self.components.request_ms),
            hol_blocked_kb: self.why.hol_blocked_bytes as f64 / 1e3,
            hol_blocked_ms: self.why.hol_blocked_ms,
            connections: self.connections.len(),
            peak_flight_kb: peaks.iter().max().map(|&p| p as f64 / 1e3),
            page_share_pct: self.competing.as_ref().map(|c| c.page_share_pct),
            competing_kbps: self.competing.as_ref().map(|c| c.goodput_kbps),
            competing_wait_p95_ms: self.competing.as_ref().and_then(|c| c.queue_wait_p95_ms),
            mean_peak_flight_kb: (!peaks.is_empty())
                .then(|| peaks.iter().sum::<u64>() as f64 / peaks.len() as f64 / 1e3),
        }
    }
}

/// Packets that reached a queue: delivered, dropped by it, or lost on the
/// way (the loss model sits before the queue, so a lost packet never
/// reached it and is not counted).
fn arrivals(q: &QueueStats) -> u64 {
    q.packets_delivered + q.drops_queue
}
