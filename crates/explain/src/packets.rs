//! From the packet log to packets with their fate: each arrival matched with
//! its drop or delivery (the link's queue is FIFO per direction, so fates
//! follow arrivals in order: a loss or a full queue's drop right after its
//! arrival, a CoDel drop at the head of the queue when the transmitter takes
//! the next packet), its time at the bottleneck (queue wait, then
//! serialization), its flow (5-tuple), and whether a TCP segment carries data
//! its flow already sent (a retransmission). A CoDel drop can be logged
//! before the deliveries of packets ahead of it (they are in the delay
//! line); it is placed by time: the packets ahead departed by the drop, the
//! ones behind depart after it. On a trace-driven link a packet behind a
//! drop may depart at the drop's very instant; such a tie is read as ahead.

use link::packet::{Headers, PROTO_UDP, TCP_ACK, TCP_FIN, TCP_SYN};
use link::{Direction, EventKind, LogEntry};
use std::collections::{HashMap, VecDeque};

/// What became of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Delivered: serialization started at `start`, ended at `end`
    /// (= delivery − one-way delay), delivered at `at`. Times in ns from
    /// navigation start.
    Delivered { start: i64, end: i64, at: i64 },
    /// Lost by the loss model on arrival.
    Lost,
    /// Dropped by the queue at `at`: on arrival when full, or later at
    /// dequeue by CoDel (`on_arrival` false).
    Dropped { at: i64, on_arrival: bool },
    /// Still inside the link when the log ends.
    Unknown,
}

/// One packet through the link.
#[derive(Debug, Clone)]
pub(crate) struct Packet {
    pub dir: Direction,
    pub size: u16,
    pub arrive: i64,
    pub fate: Fate,
    /// Index into [`Packets::flows`]; None for what is not IPv4.
    pub flow: Option<usize>,
    pub headers: Option<Headers>,
    /// Sequence space this packet covers, relative to its flow's first
    /// sequence number in that direction (TCP only; SYN and FIN count one).
    pub seq: Option<(u64, u64)>,
    /// A TCP segment whose sequence range starts below the highest sequence
    /// its flow had already sent in this direction.
    pub retransmission: bool,
}

impl Packet {
    /// Carries data: payload, or (TCP) a SYN or FIN, which take sequence space.
    pub fn carries_data(&self) -> bool {
        match self.seq {
            Some((s, e)) => e > s,
            None => self.headers.is_some_and(|h| h.payload > 0),
        }
    }
}

/// A flow by its 5-tuple, keyed from the client's side (the sender of
/// uplink packets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FlowKey {
    pub protocol: u8,
    pub client: (std::net::Ipv4Addr, u16),
    pub server: (std::net::Ipv4Addr, u16),
}

impl FlowKey {
    pub fn of(h: &Headers, dir: Direction) -> FlowKey {
        let (client, server) = match dir {
            Direction::Up => ((h.src, h.src_port), (h.dst, h.dst_port)),
            Direction::Down => ((h.dst, h.dst_port), (h.src, h.src_port)),
        };
        FlowKey {
            protocol: h.protocol,
            client,
            server,
        }
    }
}

/// A flow's state while reading the log.
#[derive(Debug, Clone)]
pub(crate) struct Flow {
    pub key: FlowKey,
    /// First arrival, ns from navigation start.
    pub first: i64,
    /// Whether the log saw it open: its first packet is the client's SYN or
    /// QUIC Initial (not a straggler of a connection opened before the log).
    pub opened: bool,
    /// Per direction (0 up, 1 down): the first sequence number seen and the
    /// highest relative sequence end sent so far.
    seq_base: [Option<u32>; 2],
    seq_high: [u64; 2],
    /// QUIC: the client has sent a short-header packet (its handshake is
    /// over; an Initial after it opens a new connection).
    quic_short_up: bool,
}

impl Flow {
    /// Whether `h`, arriving on this flow's 5-tuple, opens a new connection
    /// on it: the client's port was used again (gVisor's netstack picks
    /// ephemeral ports at random, so a page can reuse one of the last
    /// page's), seen as a SYN with another initial sequence number, or a
    /// QUIC Initial after the client's handshake ended. A retransmitted SYN
    /// or Initial is the same connection.
    fn reopened_by(&self, h: &Headers, dir: Direction) -> bool {
        if dir != Direction::Up {
            return false;
        }
        match h.tcp {
            Some(t) => {
                t.has(TCP_SYN)
                    && !t.has(TCP_ACK)
                    && self.seq_base[0].is_some_and(|isn| isn != t.seq)
            }
            None => h.quic_initial() && self.quic_short_up,
        }
    }
}

/// Whether `h`, going `dir`, opens a connection: the client's SYN or QUIC
/// Initial.
fn opens(h: &Headers, dir: Direction) -> bool {
    dir == Direction::Up
        && match h.tcp {
            Some(t) => t.has(TCP_SYN) && !t.has(TCP_ACK),
            None => h.quic_initial(),
        }
}

/// The log read into packets.
#[derive(Debug, Default)]
pub(crate) struct Packets {
    pub packets: Vec<Packet>,
    pub flows: Vec<Flow>,
    /// Log entries whose fate had no arrival to match (a log cut mid-way).
    pub unmatched: usize,
}

pub(crate) fn index(dir: Direction) -> usize {
    match dir {
        Direction::Up => 0,
        Direction::Down => 1,
    }
}

/// Reads the log. `nav` is navigation start (ns on the link's clock);
/// `delay_ns` the one-way delay per direction (index 0 up, 1 down).
pub(crate) fn read(log: &[LogEntry], nav: u64, delay_ns: [i64; 2]) -> Packets {
    let rel = |t: link::Time| t.0 as i64 - nav as i64;
    let mut out = Packets::default();
    let mut by_key: HashMap<FlowKey, usize> = HashMap::new();
    // Per direction: packets arrived whose fate is not yet known, in order.
    let mut pending: [VecDeque<usize>; 2] = [VecDeque::new(), VecDeque::new()];
    // Per direction: when the transmitter last finished a packet.
    let mut last_departure: [i64; 2] = [i64::MIN, i64::MIN];
    // Per direction: the index of the packet whose arrival was the last entry
    // of that direction (a drop right after it is that packet's).
    let mut just_arrived: [Option<usize>; 2] = [None, None];
    // Per direction: dequeue (CoDel) drops not yet matched to a packet.
    let mut dequeue_drops: [VecDeque<i64>; 2] = [VecDeque::new(), VecDeque::new()];
    for e in log {
        let d = index(e.dir);
        let now = rel(e.time);
        match e.kind {
            EventKind::Arrive => {
                let flow = e.headers.map(|h| {
                    let key = FlowKey::of(&h, e.dir);
                    let known = by_key
                        .get(&key)
                        .copied()
                        .filter(|&f| !out.flows[f].reopened_by(&h, e.dir));
                    let f = known.unwrap_or_else(|| {
                        out.flows.push(Flow {
                            key,
                            first: now,
                            opened: opens(&h, e.dir),
                            seq_base: [None, None],
                            seq_high: [0, 0],
                            quic_short_up: false,
                        });
                        by_key.insert(key, out.flows.len() - 1);
                        out.flows.len() - 1
                    });
                    if e.dir == Direction::Up
                        && h.protocol == PROTO_UDP
                        && h.payload > 0
                        && h.quic_long.is_none()
                    {
                        out.flows[f].quic_short_up = true;
                    }
                    f
                });
                let mut seq = None;
                let mut retransmission = false;
                if let (Some(f), Some(h)) = (flow, e.headers) {
                    if let Some(tcp) = h.tcp {
                        let flow = &mut out.flows[f];
                        let base = *flow.seq_base[d].get_or_insert(tcp.seq);
                        let start = tcp.seq.wrapping_sub(base) as u64;
                        let len = h.payload as u64
                            + u64::from(tcp.has(TCP_SYN))
                            + u64::from(tcp.has(TCP_FIN));
                        let end = start + len;
                        if len > 0 {
                            retransmission = start < flow.seq_high[d];
                            flow.seq_high[d] = flow.seq_high[d].max(end);
                        }
                        seq = Some((start, end));
                    }
                }
                out.packets.push(Packet {
                    dir: e.dir,
                    size: e.size,
                    arrive: now,
                    fate: Fate::Unknown,
                    flow,
                    headers: e.headers,
                    seq,
                    retransmission,
                });
                let i = out.packets.len() - 1;
                pending[d].push_back(i);
                just_arrived[d] = Some(i);
                continue;
            }
            EventKind::DropLoss => {
                // Always the packet that has just arrived.
                match take_back(&mut pending[d], just_arrived[d]) {
                    Some(i) => out.packets[i].fate = Fate::Lost,
                    None => out.unmatched += 1,
                }
            }
            EventKind::DropQueue => {
                // On arrival (queue full): the packet that has just arrived;
                // at dequeue (CoDel): the head of the queue.
                let back = just_arrived[d].filter(|&i| {
                    let p = &out.packets[i];
                    p.arrive == now && p.size == e.size && p.headers == e.headers
                });
                match back.and_then(|_| take_back(&mut pending[d], back)) {
                    Some(i) => {
                        out.packets[i].fate = Fate::Dropped {
                            at: now,
                            on_arrival: true,
                        }
                    }
                    // A dequeue drop is told when the transmitter takes the
                    // next packet, possibly before the deliveries of packets
                    // ahead of it (still in the delay line): it is resolved
                    // by the deliveries that follow (see `Deliver`).
                    None => dequeue_drops[d].push_back(now),
                }
            }
            EventKind::Deliver => {
                // Packets ahead of a dequeue drop departed by its time; those
                // behind it depart after it (serialization takes time).
                let departed = now - delay_ns[d];
                while dequeue_drops[d].front().is_some_and(|&at| at < departed) {
                    let at = dequeue_drops[d].pop_front().expect("a drop");
                    drop_next_in_line(&mut out, &mut pending[d], at);
                }
                match pending[d].pop_front() {
                    Some(i) => {
                        let p = &mut out.packets[i];
                        let end = (now - delay_ns[d]).max(p.arrive);
                        let start = p.arrive.max(last_departure[d]).min(end);
                        last_departure[d] = end;
                        p.fate = Fate::Delivered {
                            start,
                            end,
                            at: now,
                        };
                    }
                    None => out.unmatched += 1,
                }
            }
        }
        just_arrived[d] = None;
    }
    // Dequeue drops after the last delivery: the next packets in line.
    for d in 0..2 {
        while let Some(at) = dequeue_drops[d].pop_front() {
            drop_next_in_line(&mut out, &mut pending[d], at);
        }
    }
    out
}

/// A dequeue (CoDel) drop at `at` is the fate of the packet first in line;
/// with none waiting, the log entry is unmatched.
fn drop_next_in_line(out: &mut Packets, pending: &mut VecDeque<usize>, at: i64) {
    match pending.pop_front() {
        Some(i) => {
            out.packets[i].fate = Fate::Dropped {
                at,
                on_arrival: false,
            }
        }
        None => out.unmatched += 1,
    }
}

/// Removes `which` from the back of `queue` if it is there.
fn take_back(queue: &mut VecDeque<usize>, which: Option<usize>) -> Option<usize> {
    match (queue.back(), which) {
        (Some(&b), Some(w)) if b == w => queue.pop_back(),
        _ => None,
    }
}
