//! One probe explained: the PLT's partition by a sweep over the edges of the
//! intervals the packets and the HAR phases make (O(n log n) in packets and
//! resources), the per-connection figures, the bottleneck's queues and the
//! downlink's utilization.

use crate::explanation::{
    Bottleneck, Competing, Component, Components, Connection, DropShare, Explanation, QueueStats,
    Utilization, Why,
};
use crate::input::Input;
use crate::packets::{self, Fate, Packet, Packets};
use link::packet::{PROTO_TCP, PROTO_UDP, TCP_ACK, TCP_SYN};
use link::Direction;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

/// Shortest `request` stretch counted as a request round.
const REQUEST_ROUND_MIN_NS: i64 = 1_000_000;
/// What an RTO stall lasts beyond one base RTT at the least (Linux's minimum RTO).
const RTO_MIN_NS: i64 = 200_000_000;
/// Longest flight series kept per connection.
const FLIGHT_WINDOWS: usize = 64;

/// The interval kinds the sweep counts.
#[derive(Clone, Copy)]
enum Kind {
    /// The downlink serializing a page packet with new payload.
    Transfer = 0,
    /// The downlink serializing a page TCP segment with data sent before.
    Retransmit,
    /// The downlink serializing any page packet.
    Busy,
    /// A page flow has dropped data not yet delivered again.
    Loss,
    /// A resource in its connect phase.
    Setup,
    /// A page packet waiting in the uplink queue.
    UpQueue,
    /// A resource in its receive phase.
    Receive,
    /// A resource in its send or wait phase.
    Request,
    /// A resource asked for and not complete (connect start to last byte).
    Asked,
    /// From the page's first packet to its last delivery.
    Wire,
}
const KINDS: usize = 10;

struct Sweep {
    plt: i64,
    edges: Vec<(i64, usize, i32)>,
}

impl Sweep {
    fn add(&mut self, kind: Kind, from: i64, to: i64) {
        let (from, to) = (from.max(0), to.min(self.plt));
        if to > from {
            self.edges.push((from, kind as usize, 1));
            self.edges.push((to, kind as usize, -1));
        }
    }
}

fn state(c: &[i32; KINDS]) -> Component {
    let on = |k: Kind| c[k as usize] > 0;
    if !on(Kind::Wire) {
        Component::OffWire
    } else if on(Kind::Retransmit) {
        Component::Retransmission
    } else if on(Kind::Transfer) {
        Component::Transfer
    } else if on(Kind::Loss) {
        Component::LossRecovery
    } else if on(Kind::Setup) {
        Component::Setup
    } else if on(Kind::UpQueue) {
        Component::Queueing
    } else if on(Kind::Receive) {
        Component::Window
    } else if on(Kind::Request) {
        Component::Request
    } else {
        Component::Browser
    }
}

/// A run of one state: [start, end) ns from navigation start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Run {
    pub start: i64,
    pub end: i64,
    pub state: Component,
}

/// The partition and the utilization, in ns.
pub(crate) struct Partition {
    pub runs: Vec<Run>,
    /// Per component (in [`Component::ALL`]'s order), ns.
    pub ns: [i64; 9],
    pub busy: i64,
    pub idle_outstanding: i64,
    pub idle_unasked: i64,
}

fn ms_to_ns(ms: f64) -> i64 {
    (ms * 1e6).round() as i64
}

fn ns_to_ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// Explains one probe.
pub fn analyze(input: &Input<'_>) -> Explanation {
    let spec = input.spec;
    let delay = [
        spec.up.delay.as_nanos() as i64,
        spec.down.delay.as_nanos() as i64,
    ];
    let rtt = spec.rtt();
    let rtt_ns = rtt.as_nanos() as i64;
    let plt = input.plt.as_nanos() as i64;
    let read = packets::read(input.log, input.navigation_start.0, delay);
    // The page's flows: those the log saw open from the probe's start to
    // the PLT window's end (Chromium may connect before its navigation is
    // timed; a flow of an earlier probe shows up with a later packet), or,
    // for a log that may begin mid-connection, those first seen in the window.
    let page: Vec<bool> = read
        .flows
        .iter()
        .map(|f| match input.window_start {
            Some(start) => {
                let from = (start.0 as i64 - input.navigation_start.0 as i64).min(0);
                f.opened && (from..=plt).contains(&f.first)
            }
            None => (0..=plt).contains(&f.first),
        })
        .collect();
    let of_page = |p: &Packet| p.flow.is_some_and(|f| page[f]);

    let recoveries = loss_recoveries(&read, &page, plt);
    let partition = partition(input, &read, &page, &recoveries, plt);

    let mut components = Components::default();
    for (i, &c) in Component::ALL.iter().enumerate() {
        *components.slot(c) = ns_to_ms(partition.ns[i]);
    }

    // Why: handshakes on the critical path, RTO stalls, request rounds.
    let setup_runs: Vec<(i64, i64)> = partition
        .runs
        .iter()
        .filter(|r| r.state == Component::Setup)
        .map(|r| (r.start, r.end))
        .collect();
    let mut why = Why::default();
    let mut opened: HashSet<&str> = HashSet::new();
    for r in input.resources {
        let spans = r.spans_ms();
        let (from, to) = (ms_to_ns(spans.connect.0), ms_to_ns(spans.connect.1));
        if to <= from || !opened.insert(r.connection.as_str()) {
            continue;
        }
        why.handshakes += 1;
        // The first setup run ending after `from`; does it start before `to`?
        let i = setup_runs.partition_point(|&(_, end)| end <= from);
        if setup_runs.get(i).is_some_and(|&(start, _)| start < to) {
            why.handshakes_on_critical_path += 1;
            why.handshake_rounds_on_critical_path += r.handshake_rounds(rtt);
        }
    }
    let mut stretch: Option<(i64, i64)> = None;
    let mut stretches = Vec::new();
    for (i, run) in partition.runs.iter().enumerate() {
        let recovering = matches!(
            run.state,
            Component::LossRecovery | Component::Retransmission
        );
        match (&mut stretch, recovering) {
            (Some(s), true) if s.1 == run.start => s.1 = run.end,
            (_, true) => {
                stretches.extend(stretch.take());
                stretch = Some((run.start, run.end));
            }
            (_, false) => stretches.extend(stretch.take()),
        }
        // A request round: a `request` stretch that a response's bytes
        // end (the downlink serializing again, or a response arriving
        // window-limited). Read off the wire, not the HAR's send times,
        // which a client that queues requests inside its connection (for a
        // stream slot) writes before the request leaves.
        let answered = partition.runs.get(i + 1).is_some_and(|next| {
            matches!(
                next.state,
                Component::Transfer | Component::Retransmission | Component::Window
            )
        });
        if run.state == Component::Request
            && run.end - run.start >= REQUEST_ROUND_MIN_NS
            && answered
        {
            why.request_rounds += 1;
        }
    }
    stretches.extend(stretch);
    why.rto_stalls = stretches
        .iter()
        .filter(|(s, e)| e - s > rtt_ns + RTO_MIN_NS)
        .count() as u32;
    let page_packets = || read.packets.iter().filter(|p| of_page(p));
    why.retransmitted_segments = page_packets().filter(|p| p.retransmission).count() as u64;
    why.drops = page_packets()
        .filter(|p| matches!(p.fate, Fate::Lost | Fate::Dropped { .. }))
        .count() as u64;
    // Window-limited time after the page's first drop: a congestion window
    // cut by loss, not only slow start (exact for one connection; with
    // several, a connection that lost nothing may be the one waiting).
    let first_drop = page_packets()
        .filter_map(|p| match p.fate {
            Fate::Lost => Some(p.arrive),
            Fate::Dropped { at, .. } => Some(at),
            _ => None,
        })
        .min();
    if let Some(first_drop) = first_drop {
        let after: i64 = partition
            .runs
            .iter()
            .filter(|r| r.state == Component::Window)
            .map(|r| (r.end - r.start.max(first_drop)).max(0))
            .sum();
        why.window_after_loss_ms = ns_to_ms(after);
    }

    let (connections, conn_index, hol) = connections(&read, &page, rtt_ns, plt);
    why.hol_blocked_bytes = connections.iter().map(|c| c.hol_blocked_bytes).sum();
    why.hol_blocked_ms = ns_to_ms(union_length(hol));
    let bottleneck = bottleneck(&read, &page, &conn_index, rtt);
    let utilization = Utilization {
        busy_ms: ns_to_ms(partition.busy),
        idle_outstanding_ms: ns_to_ms(partition.idle_outstanding),
        idle_unasked_ms: ns_to_ms(partition.idle_unasked),
        busy_pct: (plt > 0).then(|| partition.busy as f64 / plt as f64 * 100.0),
    };
    let competing = competing(&read, &page, plt);
    Explanation {
        label: input.label.to_string(),
        plt_ms: ns_to_ms(plt),
        base_rtt_ms: ns_to_ms(rtt_ns),
        components,
        why,
        connections,
        bottleneck,
        utilization,
        browser_cost_ms: input.browser_cost,
        unmatched_log_entries: read.unmatched,
        competing,
    }
}

/// The downlink's other traffic inside [0, plt]: flows not of the page (they
/// opened before it: cross traffic) with deliveries in the window, when they
/// carried at least 1 % of its bytes.
fn competing(read: &Packets, page: &[bool], plt: i64) -> Option<Competing> {
    let (mut page_bytes, mut other_bytes) = (0u64, 0u64);
    // Per other flow, in order of first sight: its bytes delivered down.
    let mut others: Vec<(usize, u64)> = Vec::new();
    let mut waits: Vec<i64> = Vec::new();
    let mut drops = 0u64;
    for p in &read.packets {
        let Some(f) = p.flow else { continue };
        if p.dir != Direction::Down || page[f] {
            if let (Direction::Down, Fate::Delivered { at, .. }) = (p.dir, p.fate) {
                if (0..=plt).contains(&at) {
                    page_bytes += p.size as u64;
                }
            }
            continue;
        }
        match p.fate {
            Fate::Delivered { at, start, .. } if (0..=plt).contains(&at) => {
                other_bytes += p.size as u64;
                waits.push(start - p.arrive);
                match others.iter_mut().find(|(g, _)| *g == f) {
                    Some((_, b)) => *b += p.size as u64,
                    None => others.push((f, p.size as u64)),
                }
            }
            Fate::Dropped { at, .. } if (0..=plt).contains(&at) => drops += 1,
            _ => {}
        }
    }
    // Under 1 % of the window's bytes is a straggler of the last probe (a
    // QUIC close), not competition.
    let total = page_bytes + other_bytes;
    if plt <= 0 || other_bytes == 0 || other_bytes * 100 < total {
        return None;
    }
    let kbps = |bytes: u64| bytes as f64 * 8.0 / ns_to_ms(plt);
    waits.sort_unstable();
    let n = waits.len();
    let rank = ((0.95 * n as f64).ceil() as usize).clamp(1, n);
    Some(Competing {
        flows: others.len(),
        bytes_down: other_bytes,
        goodput_kbps: kbps(other_bytes),
        page_share_pct: page_bytes as f64 / total as f64 * 100.0,
        flow_goodput_kbps: others.iter().map(|&(_, b)| kbps(b)).collect(),
        queue_wait_mean_ms: Some(waits.iter().map(|&w| w as f64).sum::<f64>() / n as f64 / 1e6),
        queue_wait_p95_ms: Some(ns_to_ms(waits[rank - 1])),
        queue_drops: drops,
    })
}

/// The intervals during which some page flow had dropped data not yet
/// delivered again, ns from navigation start. TCP: from the drop until a
/// later-sent delivered segment of that flow and direction covers the
/// dropped segment's first sequence number (a drop of data already
/// delivered opens none). Other transports (QUIC: its packet numbers are
/// encrypted): until the flow's next delivered packet in that direction.
/// A drop never recovered stays open to the end of the window.
pub(crate) fn loss_recoveries(read: &Packets, page: &[bool], plt: i64) -> Vec<(i64, i64)> {
    #[derive(Default)]
    struct State {
        /// Delivered sequence ranges, merged: start → end.
        delivered: BTreeMap<u64, u64>,
        /// Open drops: first sequence number → drop time (TCP).
        open: BTreeMap<u64, i64>,
        /// Open drop of another transport: the earliest drop time.
        open_other: Option<i64>,
    }
    let mut states: HashMap<(usize, usize), State> = HashMap::new();
    let mut out = Vec::new();
    for p in &read.packets {
        let Some(flow) = p.flow.filter(|&f| page[f]) else {
            continue;
        };
        let s = states.entry((flow, packets::index(p.dir))).or_default();
        let drop_at = match p.fate {
            Fate::Lost => Some(p.arrive),
            Fate::Dropped { at, .. } => Some(at),
            _ => None,
        };
        match (p.seq, p.fate, drop_at) {
            (Some((start, end)), Fate::Delivered { at, .. }, _) if end > start => {
                let closed: Vec<u64> = s.open.range(start..end).map(|(&k, _)| k).collect();
                for k in closed {
                    let from = s.open.remove(&k).expect("an open drop");
                    out.push((from, at.max(from)));
                }
                insert_range(&mut s.delivered, start, end);
            }
            // A drop of data already delivered (a spurious retransmission's) opens none.
            (Some((start, end)), _, Some(at))
                if end > start && !range_contains(&s.delivered, start) =>
            {
                s.open.entry(start).or_insert(at);
            }
            (None, Fate::Delivered { at, .. }, _) => {
                if let Some(from) = s.open_other.take() {
                    out.push((from, at.max(from)));
                }
            }
            (None, _, Some(at)) if p.carries_data() => {
                s.open_other.get_or_insert(at);
            }
            _ => {}
        }
    }
    for s in states.into_values() {
        out.extend(s.open.into_values().map(|from| (from, plt.max(from))));
        out.extend(s.open_other.map(|from| (from, plt.max(from))));
    }
    out
}

fn range_contains(set: &BTreeMap<u64, u64>, x: u64) -> bool {
    set.range(..=x).next_back().is_some_and(|(_, &e)| x < e)
}

fn insert_range(set: &mut BTreeMap<u64, u64>, mut start: u64, mut end: u64) {
    if let Some((&s, &e)) = set.range(..=start).next_back() {
        if e >= start {
            start = s;
            end = end.max(e);
            set.remove(&s);
        }
    }
    while let Some((&s, &e)) = set.range(start..=end).next() {
        end = end.max(e);
        set.remove(&s);
    }
    set.insert(start, end);
}

/// The sweep: every instant of [0, plt) in exactly one state.
pub(crate) fn partition(
    input: &Input<'_>,
    read: &Packets,
    page: &[bool],
    recoveries: &[(i64, i64)],
    plt: i64,
) -> Partition {
    let mut sweep = Sweep {
        plt,
        edges: Vec::new(),
    };
    let mut first: Option<i64> = None;
    let mut last: Option<i64> = None;
    for p in &read.packets {
        if !p.flow.is_some_and(|f| page[f]) {
            continue;
        }
        first = Some(first.map_or(p.arrive, |f| f.min(p.arrive)));
        let Fate::Delivered { start, end, at } = p.fate else {
            continue;
        };
        last = Some(last.map_or(at, |l| l.max(at)));
        match p.dir {
            Direction::Down => {
                sweep.add(Kind::Busy, start, end);
                if p.headers.is_some_and(|h| h.payload > 0) {
                    let kind = if p.retransmission {
                        Kind::Retransmit
                    } else {
                        Kind::Transfer
                    };
                    sweep.add(kind, start, end);
                }
            }
            Direction::Up => sweep.add(Kind::UpQueue, p.arrive, start),
        }
    }
    if let (Some(first), Some(last)) = (first, last) {
        sweep.add(Kind::Wire, first, last);
    }
    for &(from, to) in recoveries {
        sweep.add(Kind::Loss, from, to);
    }
    for r in input.resources {
        let s = r.spans_ms();
        let ns = |(a, b): (f64, f64)| (ms_to_ns(a), ms_to_ns(b));
        let (c0, c1) = ns(s.connect);
        let (q0, q1) = ns(s.request);
        let (r0, r1) = ns(s.receive);
        sweep.add(Kind::Setup, c0, c1);
        sweep.add(Kind::Request, q0, q1);
        sweep.add(Kind::Receive, r0, r1);
        sweep.add(Kind::Asked, c0, r1);
    }
    let mut edges = sweep.edges;
    edges.sort_unstable();
    let mut counts = [0i32; KINDS];
    let mut out = Partition {
        runs: Vec::new(),
        ns: [0; 9],
        busy: 0,
        idle_outstanding: 0,
        idle_unasked: 0,
    };
    let mut cursor = 0i64;
    let mut account = |to: i64, counts: &[i32; KINDS], out: &mut Partition| {
        if to <= cursor {
            return;
        }
        let len = to - cursor;
        let st = state(counts);
        let i = Component::ALL
            .iter()
            .position(|&c| c == st)
            .expect("a state");
        out.ns[i] += len;
        match out.runs.last_mut() {
            Some(run) if run.state == st && run.end == cursor => run.end = to,
            _ => out.runs.push(Run {
                start: cursor,
                end: to,
                state: st,
            }),
        }
        if counts[Kind::Busy as usize] > 0 {
            out.busy += len;
        } else if counts[Kind::Asked as usize] > 0 {
            out.idle_outstanding += len;
        } else {
            out.idle_unasked += len;
        }
        cursor = to;
    };
    for (t, kind, delta) in edges {
        account(t, &counts, &mut out);
        counts[kind] += delta;
    }
    account(plt, &counts, &mut out);
    out
}

/// A downlink delivery: (time ns, payload bytes, relative sequence range).
type Delivery = (i64, u64, Option<(u64, u64)>);
/// [from, to) ns from navigation start.
type Interval = (i64, i64);

/// Per page flow: its figures; the map from flow index to its place in the
/// list; and every connection's head-of-line blocked intervals, ns.
fn connections(
    read: &Packets,
    page: &[bool],
    rtt_ns: i64,
    plt: i64,
) -> (Vec<Connection>, Vec<Option<usize>>, Vec<Interval>) {
    let mut index = vec![None; read.flows.len()];
    let mut out: Vec<Connection> = Vec::new();
    let mut synack_delivered = vec![false; read.flows.len()];
    let mut first_data: Vec<Option<i64>> = vec![None; read.flows.len()];
    let mut deliveries: Vec<Vec<Delivery>> = vec![Vec::new(); read.flows.len()];
    // Per flow, its downlink deliveries that take sequence space (SYN, FIN
    // and data), for head-of-line blocking.
    let mut in_sequence: Vec<Vec<Delivery>> = vec![Vec::new(); read.flows.len()];
    for p in &read.packets {
        let Some(f) = p.flow.filter(|&f| page[f]) else {
            continue;
        };
        let h = p.headers.expect("a flow's packet has headers");
        let i = *index[f].get_or_insert_with(|| {
            let key = read.flows[f].key;
            let opened_by = match (h.tcp, h.quic_initial()) {
                (Some(t), _) if t.has(TCP_SYN) && !t.has(TCP_ACK) => Some("syn"),
                (None, true) => Some("initial"),
                _ => None,
            };
            out.push(Connection {
                transport: match key.protocol {
                    PROTO_TCP => "tcp".into(),
                    PROTO_UDP => "udp".into(),
                    n => n.to_string(),
                },
                client: format!("{}:{}", key.client.0, key.client.1),
                server: format!("{}:{}", key.server.0, key.server.1),
                opened_by: opened_by.map(str::to_string),
                open_ms: ns_to_ms(p.arrive),
                ..Default::default()
            });
            out.len() - 1
        });
        let c = &mut out[i];
        match p.dir {
            Direction::Up => {
                c.bytes_up += p.size as u64;
                c.packets_up += 1;
            }
            Direction::Down => {
                c.bytes_down += p.size as u64;
                c.packets_down += 1;
            }
        }
        match p.fate {
            Fate::Lost => c.drops_loss += 1,
            Fate::Dropped { .. } => c.drops_queue += 1,
            _ => {}
        }
        c.retransmitted_segments += u64::from(p.retransmission);
        if c.handshake_end_ms.is_none() {
            match (c.opened_by.as_deref(), p.dir, h.tcp) {
                (Some("syn"), Direction::Down, Some(t))
                    if t.has(TCP_SYN)
                        && t.has(TCP_ACK)
                        && matches!(p.fate, Fate::Delivered { .. }) =>
                {
                    synack_delivered[f] = true
                }
                (Some("syn"), Direction::Up, Some(t)) if synack_delivered[f] && !t.has(TCP_SYN) => {
                    c.handshake_end_ms = Some(ns_to_ms(p.arrive))
                }
                (Some("initial"), Direction::Up, None) if h.quic_long.is_none() => {
                    c.handshake_end_ms = Some(ns_to_ms(p.arrive))
                }
                _ => {}
            }
        }
        if let (Direction::Down, Fate::Delivered { at, .. }) = (p.dir, p.fate) {
            if p.seq.is_some_and(|(start, end)| end > start) {
                in_sequence[f].push((at, h.payload as u64, p.seq));
            }
            if h.payload > 0 {
                c.payload_bytes_delivered_down += h.payload as u64;
                first_data[f].get_or_insert(at);
                deliveries[f].push((at, h.payload as u64, p.seq));
            }
        }
    }
    if rtt_ns > 0 {
        for (f, i) in index.iter().enumerate() {
            let (Some(i), Some(first)) = (i, first_data[f]) else {
                continue;
            };
            let series = &mut out[*i].flight_bytes_per_rtt;
            for &(at, bytes, _) in &deliveries[f] {
                let w = ((at - first) / rtt_ns) as usize;
                if w >= FLIGHT_WINDOWS {
                    break;
                }
                if series.len() <= w {
                    series.resize(w + 1, 0);
                }
                series[w] += bytes;
            }
        }
    }
    let mut all_blocked = Vec::new();
    for (f, i) in index.iter().enumerate() {
        let Some(i) = *i else { continue };
        let c = &mut out[i];
        let data = &deliveries[f];
        c.first_data_ms = data.first().map(|d| ns_to_ms(d.0));
        c.last_data_ms = data.last().map(|d| ns_to_ms(d.0));
        let (bytes, blocked) = head_of_line(&in_sequence[f], plt);
        c.hol_blocked_bytes = bytes;
        c.hol_blocked_ms = ns_to_ms(union_length(blocked.clone()));
        all_blocked.extend(blocked);
    }
    (out, index, all_blocked)
}

/// One TCP flow's head-of-line blocking, from its downlink deliveries that
/// take sequence space, in time order (time, bytes, relative sequence range): a segment
/// that starts above the in-order edge (everything below it delivered) is
/// held until a delivery fills the hole below it, or to `plt`. Returns the
/// held payload bytes and the intervals each was held, ns. Without sequence
/// numbers (QUIC) nothing is seen as held.
fn head_of_line(data: &[Delivery], plt: i64) -> (u64, Vec<Interval>) {
    // The in-order edge starts at the first sequence number the link saw
    // downlink (relative 0: the SYN-ACK's, or a flow's first segment, even
    // one that was dropped).
    let mut edge = 0u64;
    // Held segments: start → (end, payload, delivery time).
    let mut held: BTreeMap<u64, (u64, u64, i64)> = BTreeMap::new();
    let (mut bytes, mut intervals) = (0u64, Vec::new());
    for &(at, payload, seq) in data {
        let Some((start, end)) = seq else { continue };
        if start > edge {
            held.entry(start).or_insert((end, payload, at));
            continue;
        }
        edge = edge.max(end);
        while let Some((&s, &(e, n, since))) = held.first_key_value() {
            if s > edge {
                break;
            }
            held.remove(&s);
            edge = edge.max(e);
            bytes += n;
            intervals.push((since, at));
        }
    }
    for (_, (_, n, since)) in held {
        bytes += n;
        intervals.push((since, plt.max(since)));
    }
    let window = |(from, to): (i64, i64)| (from.clamp(0, plt), to.clamp(0, plt));
    (bytes, intervals.into_iter().map(window).collect())
}

/// The length of the union of `intervals`, ns.
fn union_length(mut intervals: Vec<(i64, i64)>) -> i64 {
    intervals.sort_unstable();
    let (mut total, mut reach) = (0i64, i64::MIN);
    for (from, to) in intervals {
        let from = from.max(reach);
        if to > from {
            total += to - from;
            reach = to;
        }
    }
    total
}

/// A change in who holds a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Occupancy {
    Join,
    Leave,
    /// Dropped on arrival: the queue was full.
    Refused,
    /// Dropped from inside the queue (CoDel).
    Dropped,
}

/// The bottleneck's queues per direction, and the RTT inflation.
fn bottleneck(read: &Packets, page: &[bool], conn: &[Option<usize>], rtt: Duration) -> Bottleneck {
    let direction = |dir: Direction| {
        let mut q = QueueStats::default();
        let mut waits = Vec::new();
        // Occupancy sweep: (time, class, packet index, step, event): leaves
        // first at a given time, then joins and drops in log order (a
        // packet's join before its own drop).
        let mut events: Vec<(i64, u8, usize, u8, Occupancy)> = Vec::new();
        for (i, p) in read.packets.iter().enumerate() {
            if p.dir != dir || !p.flow.is_some_and(|f| page[f]) {
                continue;
            }
            match p.fate {
                Fate::Delivered { start, end, .. } => {
                    waits.push(start - p.arrive);
                    if end > p.arrive {
                        events.push((p.arrive, 1, i, 0, Occupancy::Join));
                        events.push((end, 0, i, 1, Occupancy::Leave));
                    }
                }
                Fate::Dropped { at, on_arrival } => {
                    q.drops_queue += 1;
                    if on_arrival {
                        events.push((at, 1, i, 1, Occupancy::Refused));
                    } else {
                        events.push((p.arrive, 1, i, 0, Occupancy::Join));
                        events.push((at, 1, i, 1, Occupancy::Dropped));
                    }
                }
                Fate::Lost => q.drops_loss += 1,
                Fate::Unknown => {}
            }
        }
        q.packets_delivered = waits.len() as u64;
        if !waits.is_empty() {
            waits.sort_unstable();
            let n = waits.len();
            q.wait_mean_ms = Some(waits.iter().map(|&w| w as f64).sum::<f64>() / n as f64 / 1e6);
            let rank = ((0.95 * n as f64).ceil() as usize).clamp(1, n);
            q.wait_p95_ms = Some(ns_to_ms(waits[rank - 1]));
            q.wait_max_ms = Some(ns_to_ms(waits[n - 1]));
        }
        events.sort_unstable();
        let mut occupants: BTreeMap<usize, u32> = BTreeMap::new();
        let mut total = 0u32;
        let mut shares: BTreeMap<usize, f64> = BTreeMap::new();
        for (_, _, i, _, ev) in events {
            let Some(c) = read.packets[i].flow.and_then(|f| conn[f]) else {
                continue;
            };
            match ev {
                Occupancy::Join => {
                    *occupants.entry(c).or_default() += 1;
                    total += 1;
                }
                Occupancy::Leave => {
                    *occupants.entry(c).or_default() -= 1;
                    total -= 1;
                }
                Occupancy::Refused | Occupancy::Dropped => {
                    // A drop: split over the occupants (a CoDel drop's own
                    // packet among them); an empty queue's drop is its own.
                    if total == 0 {
                        *shares.entry(c).or_default() += 1.0;
                    } else {
                        for (&o, &n) in &occupants {
                            if n > 0 {
                                *shares.entry(o).or_default() += n as f64 / total as f64;
                            }
                        }
                    }
                    if ev == Occupancy::Dropped {
                        *occupants.entry(c).or_default() -= 1;
                        total -= 1;
                    }
                }
            }
        }
        q.queue_drops_by_occupant = shares
            .into_iter()
            .map(|(connection, drops)| DropShare { connection, drops })
            .collect();
        q
    };
    let up = direction(Direction::Up);
    let down = direction(Direction::Down);
    let rtt_ms = rtt.as_secs_f64() * 1e3;
    let rtt_inflation_pct = match (up.wait_mean_ms, down.wait_mean_ms) {
        (None, None) => None,
        _ if rtt_ms <= 0.0 => None,
        (u, d) => Some((u.unwrap_or(0.0) + d.unwrap_or(0.0)) / rtt_ms * 100.0),
    };
    Bottleneck {
        up,
        down,
        rtt_inflation_pct,
    }
}
