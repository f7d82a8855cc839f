//! What [`crate::analyze`] returns: plain serde data with units in the field
//! names. Nothing is NaN: what is undefined (a mean of no packets, an
//! inflation over a zero RTT) is `None`, written as JSON `null`.

use serde::{Deserialize, Serialize};

/// One probe explained.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// What the probe loaded with (`h2`, `https`, …), as the input said.
    pub label: String,
    pub plt_ms: f64,
    /// The spec's round trip (both one-way delays, no serialization).
    pub base_rtt_ms: f64,
    /// The PLT as a partition: these sum to `plt_ms`.
    pub components: Components,
    pub why: Why,
    /// Per flow (5-tuple) that opened inside the PLT window, in order of
    /// their first packet.
    pub connections: Vec<Connection>,
    pub bottleneck: Bottleneck,
    pub utilization: Utilization,
    /// The browser's own costs, as given (not on the wire: in `browser` or
    /// `off_wire`).
    pub browser_cost_ms: Option<crate::input::BrowserCost>,
    /// Log entries (drops, deliveries) that matched no arrival: non-zero only
    /// for a log cut mid-way.
    pub unmatched_log_entries: usize,
    /// Other traffic on the downlink during the page (cross traffic: flows
    /// that opened before it); None when there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub competing: Option<Competing>,
}

/// What else the downlink carried inside the PLT window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Competing {
    /// Flows (5-tuples) not of the page with a delivery in the window.
    pub flows: usize,
    /// Their IP bytes delivered downlink in the window.
    pub bytes_down: u64,
    /// Those bytes × 8 / PLT, kbit/s.
    pub goodput_kbps: f64,
    /// The page's IP bytes delivered downlink in the window over all that
    /// was, %: its share of the bottleneck.
    pub page_share_pct: f64,
    /// Each competing flow's goodput in the window, kbit/s, in order of
    /// first sight (Pantheon's per-flow throughput).
    #[serde(default)]
    pub flow_goodput_kbps: Vec<f64>,
    /// Their packets' queue wait at the bottleneck (down), mean and 95th
    /// percentile, ms (Pantheon's per-flow delay, over all of them).
    #[serde(default)]
    pub queue_wait_mean_ms: Option<f64>,
    #[serde(default)]
    pub queue_wait_p95_ms: Option<f64>,
    /// Their packets the queue dropped in the window.
    #[serde(default)]
    pub queue_drops: u64,
}

/// The states one instant of the PLT can be in, highest priority first (see
/// the crate's doc for the rule).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    OffWire,
    Retransmission,
    Transfer,
    LossRecovery,
    Setup,
    Queueing,
    Window,
    Request,
    Browser,
}

impl Component {
    /// Every component, in the order of the partition's priority.
    pub const ALL: [Component; 9] = [
        Component::OffWire,
        Component::Retransmission,
        Component::Transfer,
        Component::LossRecovery,
        Component::Setup,
        Component::Queueing,
        Component::Window,
        Component::Request,
        Component::Browser,
    ];

    /// Its name in prose (`loss recovery`).
    pub fn name(self) -> &'static str {
        match self {
            Component::OffWire => "off wire",
            Component::Retransmission => "retransmission",
            Component::Transfer => "transfer",
            Component::LossRecovery => "loss recovery",
            Component::Setup => "setup",
            Component::Queueing => "queueing",
            Component::Window => "window",
            Component::Request => "request",
            Component::Browser => "browser",
        }
    }
}

/// The PLT's partition, ms.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Components {
    pub off_wire_ms: f64,
    pub retransmission_ms: f64,
    pub transfer_ms: f64,
    pub loss_recovery_ms: f64,
    pub setup_ms: f64,
    pub queueing_ms: f64,
    pub window_ms: f64,
    pub request_ms: f64,
    pub browser_ms: f64,
}

impl Components {
    pub fn get(&self, c: Component) -> f64 {
        match c {
            Component::OffWire => self.off_wire_ms,
            Component::Retransmission => self.retransmission_ms,
            Component::Transfer => self.transfer_ms,
            Component::LossRecovery => self.loss_recovery_ms,
            Component::Setup => self.setup_ms,
            Component::Queueing => self.queueing_ms,
            Component::Window => self.window_ms,
            Component::Request => self.request_ms,
            Component::Browser => self.browser_ms,
        }
    }

    pub(crate) fn slot(&mut self, c: Component) -> &mut f64 {
        match c {
            Component::OffWire => &mut self.off_wire_ms,
            Component::Retransmission => &mut self.retransmission_ms,
            Component::Transfer => &mut self.transfer_ms,
            Component::LossRecovery => &mut self.loss_recovery_ms,
            Component::Setup => &mut self.setup_ms,
            Component::Queueing => &mut self.queueing_ms,
            Component::Window => &mut self.window_ms,
            Component::Request => &mut self.request_ms,
            Component::Browser => &mut self.browser_ms,
        }
    }

    /// Their sum (the PLT, up to floating-point rounding).
    pub fn total_ms(&self) -> f64 {
        Component::ALL.iter().map(|&c| self.get(c)).sum()
    }
}

/// The counts a person needs to read the components.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Why {
    /// Connections whose handshake (HAR connect phase) overlapped `setup` time.
    pub handshakes_on_critical_path: u32,
    /// Their handshake rounds summed (TCP 1, TLS 1.2 2, TLS 1.3 1, QUIC 1).
    pub handshake_rounds_on_critical_path: u32,
    /// Connections opened at all (resources with a connect phase).
    pub handshakes: u32,
    /// TCP segments, either direction, whose data their flow had sent before.
    pub retransmitted_segments: u64,
    /// Packets dropped, either direction: loss model and queue.
    pub drops: u64,
    /// Stretches of `loss_recovery` (with `retransmission` inside them)
    /// longer than one base RTT + 200 ms: timeouts, not fast recovery.
    pub rto_stalls: u32,
    /// Stretches of `request` time of 1 ms or more that a response's bytes
    /// end: round trips the page waited on with the downlink idle.
    pub request_rounds: u32,
    /// Head-of-line blocking, summed over the page's TCP connections:
    /// payload bytes that reached the client above a hole (a dropped
    /// segment not yet delivered again) and so waited for the retransmission
    /// before the receiver could hand them on.
    #[serde(default)]
    pub hol_blocked_bytes: u64,
    /// Time during which some connection held such bytes (the union over
    /// connections, inside the PLT window), ms.
    #[serde(default)]
    pub hol_blocked_ms: f64,
    /// `window` time after the page's first drop, ms: a congestion window
    /// cut by loss rather than still growing in slow start (exact for one
    /// connection; with several, one that lost nothing may be the one
    /// waiting).
    #[serde(default)]
    pub window_after_loss_ms: f64,
}

/// One flow (5-tuple) through the link.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Connection {
    /// `tcp`, `udp` (QUIC when `opened_by` is `initial`), or the IP protocol number.
    pub transport: String,
    /// `address:port` of the client and of the server.
    pub client: String,
    pub server: String,
    /// `syn`, `initial`, or None when its first packet was neither.
    pub opened_by: Option<String>,
    /// Its first packet's arrival at the link, ms from navigation start.
    pub open_ms: f64,
    /// The transport's handshake done, ms from navigation start: TCP, the
    /// client's ACK of the SYN-ACK; QUIC, the client's first short-header
    /// packet (it has 1-RTT keys). TLS over TCP is not visible apart from data.
    pub handshake_end_ms: Option<f64>,
    /// IP bytes and packets that entered the link, per direction.
    pub bytes_down: u64,
    pub bytes_up: u64,
    pub packets_down: u64,
    pub packets_up: u64,
    /// Payload bytes delivered to the client.
    pub payload_bytes_delivered_down: u64,
    pub drops_loss: u64,
    pub drops_queue: u64,
    pub retransmitted_segments: u64,
    /// The first and the last delivery downlink with payload, ms from
    /// navigation start (None: no data came down).
    #[serde(default)]
    pub first_data_ms: Option<f64>,
    #[serde(default)]
    pub last_data_ms: Option<f64>,
    /// Head-of-line blocking on this connection (TCP only: QUIC's stream
    /// offsets are encrypted, and QUIC hands a stream's bytes on whatever
    /// another stream lost): payload bytes delivered downlink above a hole,
    /// held until the hole's retransmission arrived (or to the window's end).
    #[serde(default)]
    pub hol_blocked_bytes: u64,
    /// Time during which the connection held such bytes, ms.
    #[serde(default)]
    pub hol_blocked_ms: f64,
    /// Payload bytes delivered downlink per base-RTT-long window from the
    /// first delivered data: the window as seen on the wire (at most 64).
    pub flight_bytes_per_rtt: Vec<u64>,
}

/// The bottleneck's queues.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bottleneck {
    pub up: QueueStats,
    pub down: QueueStats,
    /// (mean queue wait up + mean queue wait down) / base RTT × 100.
    pub rtt_inflation_pct: Option<f64>,
}

/// One direction's queue, over the page's packets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueStats {
    /// Packets delivered (the sample of the waits).
    pub packets_delivered: u64,
    /// Queue wait per packet: delivery − arrival − one-way delay − serialization.
    pub wait_mean_ms: Option<f64>,
    pub wait_p95_ms: Option<f64>,
    pub wait_max_ms: Option<f64>,
    pub drops_loss: u64,
    pub drops_queue: u64,
    /// Queue drops attributed to the flows in the queue when they happened:
    /// each drop split over the occupants by their packet counts (the dropped
    /// packet itself counts for a CoDel drop, not for a full queue's). The
    /// shares sum to `drops_queue`.
    pub queue_drops_by_occupant: Vec<DropShare>,
}

/// A flow's share of a direction's queue drops.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DropShare {
    /// Index into [`Explanation::connections`].
    pub connection: usize,
    pub drops: f64,
}

/// The downlink over the PLT window: these three sum to the PLT.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Utilization {
    /// The downlink serializing a packet of the page.
    pub busy_ms: f64,
    /// Idle while some resource was asked for and not complete (its connect,
    /// send, wait or receive phase).
    pub idle_outstanding_ms: f64,
    /// Idle with nothing asked (the browser discovering, blocked or computing).
    pub idle_unasked_ms: f64,
    /// busy / PLT × 100; None for a zero PLT.
    pub busy_pct: Option<f64>,
}
