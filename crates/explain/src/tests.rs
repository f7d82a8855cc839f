//! Virtual-time tests: scripted endpoints exchange packets through a real
//! `link::Link`, whose packet log is explained; each case's answer is known
//! by construction. A proptest checks, for random logs, that the components
//! partition the PLT exactly and the reconstruction of the queue agrees with
//! the link's own counters.

use crate::packets::{self, Fate};
use crate::*;
use link::packet::{build_ipv4, build_tcp, PROTO_UDP, TCP_ACK, TCP_FIN, TCP_PSH, TCP_SYN};
use link::{
    Delivered, Direction, DirectionSpec, Link, LinkSpec, LogEntry, PacketLog, Service, Time,
};
use proptest::prelude::*;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};
use std::net::Ipv4Addr;
use std::time::Duration;

const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);
const SERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 1);
const MSS: usize = 1448;
/// A full segment's IP length.
const SEGMENT: usize = MSS + 40;

fn ms(t: Time) -> f64 {
    t.0 as f64 / 1e6
}

fn spec(rate: &str, one_way_ms: u64, queue: &str) -> LinkSpec {
    let d = DirectionSpec {
        service: Service::Rate(rate.parse().unwrap()),
        delay: Duration::from_millis(one_way_ms),
        queue: queue.parse().unwrap(),
        ..Default::default()
    };
    LinkSpec {
        up: d.clone(),
        down: d,
    }
}

/// What an endpoint script asks for.
enum Action {
    Push(Time, Direction, Vec<u8>),
    Timer(Time, u64),
}

/// The two endpoints' scripts, as one.
trait Script {
    fn on_deliver(&mut self, d: &Delivered) -> Vec<Action>;
    fn on_timer(&mut self, _now: Time, _id: u64) -> Vec<Action> {
        Vec::new()
    }
}

/// Runs a link with a script in virtual time until nothing is left to do;
/// returns the log.
fn run(spec: &LinkSpec, seed: u64, start: Vec<Action>, script: &mut dyn Script) -> Vec<LogEntry> {
    let mut link = Link::new(spec, seed);
    let log = PacketLog::new();
    link.add_observer(Box::new(log.clone()));
    // (time, order, action): pushes and timers in the order asked.
    let mut agenda: BinaryHeap<Reverse<(Time, u64, usize)>> = BinaryHeap::new();
    let mut actions: Vec<Option<Action>> = Vec::new();
    let mut order = 0u64;
    let mut schedule =
        |agenda: &mut BinaryHeap<_>, actions: &mut Vec<Option<Action>>, a: Action| {
            let at = match &a {
                Action::Push(t, ..) | Action::Timer(t, _) => *t,
            };
            actions.push(Some(a));
            order += 1;
            agenda.push(Reverse((at, order, actions.len() - 1)));
        };
    for a in start {
        schedule(&mut agenda, &mut actions, a);
    }
    loop {
        let next_action = agenda.peek().map(|Reverse((t, ..))| *t);
        let next_delivery = link.next_wakeup();
        let act = match (next_action, next_delivery) {
            (None, None) => break,
            (Some(a), Some(d)) => a <= d,
            (Some(_), None) => true,
            (None, Some(_)) => false,
        };
        match (act, next_delivery) {
            (true, _) => {
                let Reverse((_, _, i)) = agenda.pop().unwrap();
                let out = match actions[i].take().unwrap() {
                    Action::Push(t, dir, p) => {
                        link.push(t, dir, p);
                        Vec::new()
                    }
                    Action::Timer(t, id) => script.on_timer(t, id),
                };
                for a in out {
                    schedule(&mut agenda, &mut actions, a);
                }
            }
            (false, Some(d)) => {
                while let Some(delivered) = link.pop_ready(d) {
                    for a in script.on_deliver(&delivered) {
                        schedule(&mut agenda, &mut actions, a);
                    }
                }
            }
            (false, None) => unreachable!(),
        }
    }
    log.entries()
}

fn tcp_down(port: u16, flags: u8, seq: u32, ack: u32, payload: usize) -> Vec<u8> {
    build_tcp((SERVER, 443), (CLIENT, port), flags, seq, ack, payload)
}

fn tcp_up(port: u16, flags: u8, seq: u32, ack: u32, payload: usize) -> Vec<u8> {
    build_tcp((CLIENT, port), (SERVER, 443), flags, seq, ack, payload)
}

fn parse(p: &[u8]) -> (u16, link::packet::TcpInfo, usize) {
    let h = link::packet::parse(p).unwrap();
    let port = if h.src_port == 443 {
        h.dst_port
    } else {
        h.src_port
    };
    (port, h.tcp.unwrap(), h.payload as usize)
}

/// One TCP connection, client and server: handshake (TCP, then TLS 1.3's
/// one round: a ClientHello, the server's flight of two segments), one
/// request, a response of `segments` full segments paced at line rate, the
/// client ACKing each segment; fast retransmit on the third duplicate ACK,
/// or a retransmission timeout 300 ms after the last segment. `burst_at`:
/// segments k, k+1, k+2 are sent at once into a 2-packet queue, so k+2 is
/// dropped.
struct OneConnection {
    port: u16,
    segments: u32,
    burst_at: Option<u32>,
    pace: Duration,
    // Times the HAR needs.
    syn_at: Time,
    hello_at: Option<Time>,
    request_at: Option<Time>,
    first_byte: Option<Time>,
    last_byte: Option<Time>,
    // Client state.
    server_flight: u32,
    expected: u32,
    out_of_order: BTreeSet<u32>,
    // Server state.
    data_start: u32,
    last_ack: u32,
    dup_acks: u32,
    retransmitted: bool,
}

const CLIENT_ISN: u32 = 1000;
const SERVER_ISN: u32 = 5_000_000;

impl OneConnection {
    fn new(port: u16, segments: u32, burst_at: Option<u32>, spec: &LinkSpec) -> OneConnection {
        let pace = match spec.down.service {
            Service::Rate(r) => r.transmit_time(SEGMENT),
            _ => unreachable!(),
        };
        OneConnection {
            port,
            segments,
            burst_at,
            pace,
            syn_at: Time::ZERO,
            hello_at: None,
            request_at: None,
            first_byte: None,
            last_byte: None,
            server_flight: 0,
            expected: 0,
            out_of_order: BTreeSet::new(),
            data_start: 0,
            last_ack: 0,
            dup_acks: 0,
            retransmitted: false,
        }
    }

    fn start(&mut self, at: Time) -> Vec<Action> {
        self.syn_at = at;
        vec![Action::Push(
            at,
            Direction::Up,
            tcp_up(self.port, TCP_SYN, CLIENT_ISN, 0, 0),
        )]
    }

    fn segment(&self, i: u32) -> Vec<u8> {
        let seq = self.data_start + i * MSS as u32;
        tcp_down(self.port, TCP_ACK | TCP_PSH, seq, CLIENT_ISN + 800, MSS)
    }

    fn resource(&self, nav: Time) -> Resource {
        let d = |a: Time, b: Time| (b.0 - a.0) as f64 / 1e6;
        let request_at = self.request_at.unwrap();
        let first = self.first_byte.unwrap();
        Resource {
            connection: self.port.to_string(),
            started_ms: d(nav, self.syn_at),
            phases: Phases {
                blocked_ms: 0.0,
                dns_ms: -1.0,
                connect_ms: d(self.syn_at, request_at),
                ssl_ms: d(self.hello_at.unwrap(), request_at),
                send_ms: 0.0,
                wait_ms: d(request_at, first),
                receive_ms: d(first, self.last_byte.unwrap()),
            },
            handshake_rounds: None,
        }
    }
}

impl Script for OneConnection {
    fn on_deliver(&mut self, d: &Delivered) -> Vec<Action> {
        let (port, tcp, payload) = parse(&d.packet);
        assert_eq!(port, self.port);
        let now = d.at;
        let mut out = Vec::new();
        match d.dir {
            // At the server.
            Direction::Up => {
                if tcp.has(TCP_SYN) {
                    let p = tcp_down(self.port, TCP_SYN | TCP_ACK, SERVER_ISN, CLIENT_ISN + 1, 0);
                    out.push(Action::Push(now, Direction::Down, p));
                } else if payload == 300 {
                    // ClientHello: the server's flight (ServerHello … Finished).
                    for i in 0..2u32 {
                        let seq = SERVER_ISN + 1 + i * MSS as u32;
                        let p = tcp_down(self.port, TCP_ACK | TCP_PSH, seq, CLIENT_ISN + 301, MSS);
                        out.push(Action::Push(now, Direction::Down, p));
                    }
                } else if payload == 499 {
                    // Finished + request: the response, paced at line rate.
                    self.data_start = SERVER_ISN + 1 + 2 * MSS as u32;
                    self.last_ack = self.data_start;
                    let mut at = now;
                    let mut i = 0;
                    while i < self.segments {
                        if Some(i) == self.burst_at {
                            for j in i..(i + 3).min(self.segments) {
                                out.push(Action::Push(at, Direction::Down, self.segment(j)));
                            }
                            at = at + self.pace * 2;
                            i += 3;
                            continue;
                        }
                        out.push(Action::Push(at, Direction::Down, self.segment(i)));
                        at = at + self.pace;
                        i += 1;
                    }
                    // The retransmission timer, 300 ms after the last segment.
                    out.push(Action::Timer(at + Duration::from_millis(300), 0));
                } else if payload == 0 && self.data_start != 0 {
                    // An ACK of the response.
                    if tcp.ack == self.last_ack {
                        self.dup_acks += 1;
                        if self.dup_acks == 3 && !self.retransmitted {
                            self.retransmitted = true;
                            let i = (tcp.ack - self.data_start) / MSS as u32;
                            out.push(Action::Push(now, Direction::Down, self.segment(i)));
                        }
                    } else if tcp.ack > self.last_ack {
                        self.last_ack = tcp.ack;
                        self.dup_acks = 0;
                    }
                }
            }
            // At the client.
            Direction::Down => {
                if tcp.has(TCP_SYN) {
                    let ack = tcp_up(self.port, TCP_ACK, CLIENT_ISN + 1, SERVER_ISN + 1, 0);
                    let hello = tcp_up(
                        self.port,
                        TCP_ACK | TCP_PSH,
                        CLIENT_ISN + 1,
                        SERVER_ISN + 1,
                        300,
                    );
                    out.push(Action::Push(now, Direction::Up, ack));
                    out.push(Action::Push(now, Direction::Up, hello));
                    self.hello_at = Some(now);
                } else if self.request_at.is_none() {
                    self.server_flight += 1;
                    if self.server_flight == 2 {
                        let ack = SERVER_ISN + 1 + 2 * MSS as u32;
                        let req = tcp_up(self.port, TCP_ACK | TCP_PSH, CLIENT_ISN + 301, ack, 499);
                        out.push(Action::Push(now, Direction::Up, req));
                        self.request_at = Some(now);
                        self.expected = ack;
                    }
                } else {
                    self.first_byte.get_or_insert(now);
                    if tcp.seq == self.expected {
                        self.expected += MSS as u32;
                        while self.out_of_order.remove(&self.expected) {
                            self.expected += MSS as u32;
                        }
                    } else if tcp.seq > self.expected {
                        self.out_of_order.insert(tcp.seq);
                    }
                    let end = self.data_start_guess() + self.segments * MSS as u32;
                    if self.expected == end {
                        self.last_byte.get_or_insert(now);
                    }
                    let ack = tcp_up(self.port, TCP_ACK, CLIENT_ISN + 800, self.expected, 0);
                    out.push(Action::Push(now, Direction::Up, ack));
                }
            }
        }
        out
    }

    fn on_timer(&mut self, now: Time, _id: u64) -> Vec<Action> {
        let end = self.data_start + self.segments * MSS as u32;
        if self.last_ack < end && !self.retransmitted {
            self.retransmitted = true;
            let i = (self.last_ack - self.data_start) / MSS as u32;
            return vec![Action::Push(now, Direction::Down, self.segment(i))];
        }
        Vec::new()
    }
}

impl OneConnection {
    fn data_start_guess(&self) -> u32 {
        SERVER_ISN + 1 + 2 * MSS as u32
    }
}

struct Case {
    spec: LinkSpec,
    log: Vec<LogEntry>,
    nav: Time,
    plt: Duration,
    resources: Vec<Resource>,
}

impl Case {
    fn input(&self, label: &'static str) -> Input<'_> {
        Input {
            label,
            log: &self.log,
            spec: &self.spec,
            navigation_start: self.nav,
            window_start: None,
            plt: self.plt,
            resources: &self.resources,
            browser_cost: None,
        }
    }
}

/// Case (a)/(b): one TCP + TLS 1.3 connection at 1 Mbit/s, 50 ms each way,
/// one response of `segments` segments; navigation starts 10 ms in.
fn one_connection(segments: u32, burst_at: Option<u32>) -> Case {
    let spec = spec("1mbit", 50, "2p");
    let nav = Time::from_millis(10);
    let mut conn = OneConnection::new(40000, segments, burst_at, &spec);
    let start = conn.start(nav);
    let log = run(&spec, 1, start, &mut conn);
    let resources = vec![conn.resource(nav)];
    Case {
        plt: conn.last_byte.unwrap() - nav,
        spec,
        log,
        nav,
        resources,
    }
}

fn assert_partition(e: &Explanation) {
    let sum = e.components.total_ms();
    assert!((sum - e.plt_ms).abs() < 1e-6, "{sum} vs {}", e.plt_ms);
    for c in Component::ALL {
        assert!(e.components.get(c) >= 0.0, "{c:?}");
    }
    let u = &e.utilization;
    let usum = u.busy_ms + u.idle_outstanding_ms + u.idle_unasked_ms;
    assert!((usum - e.plt_ms).abs() < 1e-6);
}

#[test]
fn a_one_connection_at_line_rate_is_transfer_and_two_rounds_of_setup() {
    let case = one_connection(70, None);
    let e = analyze(&case.input("https"));
    eprintln!("{}", text::explanation(&e));
    assert_partition(&e);
    let c = &e.components;
    let seg_ms = 11.904; // 1488 B at 1 Mbit/s
                         // 70 segments at line rate, and the server's two-segment TLS flight.
    assert!(
        (c.transfer_ms - 72.0 * seg_ms).abs() < 0.01,
        "{}",
        c.transfer_ms
    );
    // Two rounds (SYN, ClientHello) of 100 ms and the small packets'
    // serialization, less the TLS flight's transfer.
    let setup = case.resources[0].phases.connect_ms - 2.0 * seg_ms;
    assert!(
        (c.setup_ms - setup).abs() < 0.01,
        "{} vs {setup}",
        c.setup_ms
    );
    assert!((225.0..230.0).contains(&case.resources[0].phases.connect_ms));
    // The request's way up (4 ms at 1 Mbit, 50 ms), the last segment's way down.
    assert!((c.request_ms - 54.0).abs() < 1.0, "{}", c.request_ms);
    assert!((c.window_ms - 50.0).abs() < 0.01, "{}", c.window_ms);
    assert_eq!(c.off_wire_ms, 0.0);
    assert_eq!(
        c.loss_recovery_ms + c.retransmission_ms + c.queueing_ms,
        0.0
    );
    assert_eq!(e.why.handshakes_on_critical_path, 1);
    assert_eq!(e.why.handshake_rounds_on_critical_path, 2); // TCP 1 + TLS 1.3 1
    assert_eq!(
        (e.why.retransmitted_segments, e.why.drops, e.why.rto_stalls),
        (0, 0, 0)
    );
    assert_eq!(e.why.request_rounds, 1);
    // One connection, opened by a SYN; its flight per RTT at line rate:
    // 100 ms of 11.904 ms segments, 8 or 9 a window.
    assert_eq!(e.connections.len(), 1);
    let conn = &e.connections[0];
    assert_eq!(conn.opened_by.as_deref(), Some("syn"));
    assert_eq!(conn.open_ms, 0.0);
    assert!((conn.handshake_end_ms.unwrap() - 100.0).abs() < 1.0);
    assert_eq!(conn.payload_bytes_delivered_down, 72 * MSS as u64);
    assert!(conn.flight_bytes_per_rtt[2..9]
        .iter()
        .all(|&b| b == 8 * MSS as u64 || b == 9 * MSS as u64));
    // No queue but the TLS flight's second segment behind its first.
    assert!((e.bottleneck.down.wait_max_ms.unwrap() - 11.904).abs() < 0.01);
    assert!(e.bottleneck.rtt_inflation_pct.unwrap() < 5.0);
    assert!(e.utilization.busy_pct.unwrap() > 70.0);
}

/// The last page's connection and this page's on one client port (gVisor
/// picks ephemeral ports at random): a SYN with another initial sequence
/// number is a new connection, the page's own, and explained as it would be
/// on a fresh port.
#[test]
fn a_client_port_used_again_by_the_next_page_is_a_new_connection() {
    let fresh = one_connection(20, None);
    let alone = analyze(&fresh.input("alone"));
    // The same exchange a second earlier, its client ISN moved: the last
    // page's, ended before this page's navigation.
    let earlier = Duration::from_secs(1);
    let mut log: Vec<LogEntry> = fresh
        .log
        .iter()
        .map(|e| {
            let mut e = *e;
            if let Some(t) = e.headers.as_mut().and_then(|h| h.tcp.as_mut()) {
                match e.dir {
                    Direction::Up => t.seq = t.seq.wrapping_add(777_777),
                    Direction::Down => t.ack = t.ack.wrapping_add(777_777),
                }
            }
            e
        })
        .collect();
    for e in &fresh.log {
        let mut e = *e;
        e.time = e.time + earlier;
        log.push(e);
    }
    let case = Case {
        log,
        nav: fresh.nav + earlier,
        spec: fresh.spec.clone(),
        plt: fresh.plt,
        resources: fresh.resources.clone(),
    };
    let e = analyze(&case.input("reused"));
    assert_eq!(e.connections.len(), 1, "{:?}", e.connections);
    assert_eq!(e.connections[0].opened_by.as_deref(), Some("syn"));
    assert_eq!(e.connections[0].open_ms, alone.connections[0].open_ms);
    assert_eq!(e.components, alone.components);
    // A retransmitted SYN (the same ISN) is the same connection.
    let syn = fresh.log[0];
    let mut again = syn;
    again.time = syn.time + Duration::from_millis(1);
    let mut log = vec![syn, again];
    log.extend(&fresh.log[1..]);
    let case = Case {
        log,
        nav: fresh.nav,
        ..case
    };
    let e = analyze(&case.input("syn twice"));
    assert_eq!(e.connections.len(), 1);
}

/// A connection of an earlier probe whose opening the log does not hold (a
/// server closing it when idle, seconds later: a FIN and an ACK inside this
/// page's window) is not the page's; a connection opened after the probe
/// began but before navigation was timed (Chromium's) is.
#[test]
fn a_straggler_of_an_earlier_probe_is_not_the_pages_and_an_early_opening_is() {
    struct WithStraggler(OneConnection);
    impl Script for WithStraggler {
        fn on_deliver(&mut self, d: &Delivered) -> Vec<Action> {
            match (parse(&d.packet).0, d.dir) {
                (39_999, Direction::Down) => vec![Action::Push(
                    d.at,
                    Direction::Up,
                    tcp_up(39_999, TCP_ACK, 8, 6, 0),
                )],
                (39_999, Direction::Up) => Vec::new(),
                _ => self.0.on_deliver(d),
            }
        }
        fn on_timer(&mut self, now: Time, id: u64) -> Vec<Action> {
            self.0.on_timer(now, id)
        }
    }
    let spec = spec("1mbit", 50, "64p");
    let (start, nav) = (Time::from_millis(10), Time::from_millis(30));
    let mut script = WithStraggler(OneConnection::new(40000, 20, None, &spec));
    let mut actions = script.0.start(start);
    actions.push(Action::Push(
        Time::from_millis(300),
        Direction::Down,
        tcp_down(39_999, TCP_FIN | TCP_ACK, 5, 7, 0),
    ));
    let log = run(&spec, 1, actions, &mut script);
    let case = Case {
        plt: script.0.last_byte.unwrap() - nav,
        resources: vec![script.0.resource(nav)],
        spec,
        log,
        nav,
    };
    let mut input = case.input("probe");
    input.window_start = Some(start);
    let e = analyze(&input);
    assert_eq!(e.connections.len(), 1, "{:?}", e.connections);
    assert_eq!(e.connections[0].client, format!("{CLIENT}:40000"));
    assert_eq!(e.connections[0].opened_by.as_deref(), Some("syn"));
    assert!(e.connections[0].open_ms < 0.0);
    assert!(e.competing.is_none());
    assert_partition(&e);
    // Read as a log that may begin mid-connection, the straggler is a flow
    // first seen in the window, and the early opening is not.
    let e = analyze(&case.input("cut log"));
    let clients: Vec<&str> = e.connections.iter().map(|c| c.client.as_str()).collect();
    assert_eq!(clients, [format!("{CLIENT}:39999")], "{clients:?}");
}

#[test]
fn b_a_drop_in_the_middle_is_loss_recovery_and_one_retransmission() {
    let clean = analyze(&one_connection(70, None).input("clean"));
    let case = one_connection(70, Some(58));
    let e = analyze(&case.input("lossy"));
    eprintln!("{}", text::explanation(&e));
    assert_partition(&e);
    assert_eq!(e.why.drops, 1);
    assert_eq!(e.bottleneck.down.drops_queue, 1);
    assert_eq!(e.why.retransmitted_segments, 1);
    assert_eq!(e.connections[0].retransmitted_segments, 1);
    // Fast retransmit: the third duplicate ACK reaches the server about
    // 3 segments + 1 RTT after the drop, after the last original segment
    // left: the downlink idles with the hole open, then the retransmission
    // takes one segment time and 50 ms to arrive.
    let c = &e.components;
    assert!((c.retransmission_ms - 11.904).abs() < 0.01);
    assert!(
        c.loss_recovery_ms > 50.0 && c.loss_recovery_ms < 100.0,
        "{}",
        c.loss_recovery_ms
    );
    assert_eq!(e.why.rto_stalls, 0);
    // Head-of-line blocking: the segments after the hole reached the client
    // and waited for the retransmission; the clean run held none.
    let conn = &e.connections[0];
    eprintln!(
        "hol {} B {} ms",
        conn.hol_blocked_bytes, conn.hol_blocked_ms
    );
    assert_eq!(
        (clean.why.hol_blocked_bytes, clean.why.hol_blocked_ms),
        (0, 0.0)
    );
    assert_eq!(clean.why.window_after_loss_ms, 0.0);
    assert!(e.why.window_after_loss_ms <= c.window_ms + 1e-9);
    assert_eq!(conn.hol_blocked_bytes, e.why.hol_blocked_bytes);
    assert_eq!(conn.hol_blocked_ms, e.why.hol_blocked_ms);
    assert_eq!(conn.hol_blocked_bytes % MSS as u64, 0);
    assert!(conn.hol_blocked_bytes >= MSS as u64);
    assert!(conn.hol_blocked_ms > 0.0);
    // Held from the first segment above the hole to the retransmission's
    // delivery: inside the stretch from the drop to that delivery, which
    // loss recovery and the retransmission's own serialization end.
    assert!(conn.hol_blocked_ms < c.loss_recovery_ms + c.retransmission_ms + 12.0 * 11.904);
    // The PLT grew by what recovery took; the difference says so.
    let d = difference(std::slice::from_ref(&e), std::slice::from_ref(&clean));
    assert!(d.residual_ms.unwrap().abs() < 1e-6);
    let line = text::difference(&d);
    eprintln!("{line}");
    assert!(line.starts_with("lossy vs clean: "));
    assert!(line
        .contains("loss recovery (1 more retransmitted segment, 13 kB more held behind a hole)"));
    assert!(line.ends_with("residual 0 ms"));
}

#[test]
fn b_a_tail_drop_is_an_rto_stall() {
    let case = one_connection(70, Some(67));
    let e = analyze(&case.input("tail"));
    eprintln!("{}", text::explanation(&e));
    assert_partition(&e);
    assert_eq!((e.why.drops, e.why.retransmitted_segments), (1, 1));
    // No duplicate ACKs: the 300 ms timer fires, the link idles meanwhile.
    assert_eq!(e.why.rto_stalls, 1);
    // Nothing came after the lost tail, so nothing waited above its hole:
    // the stall is the sender's, not head-of-line blocking.
    assert_eq!((e.why.hol_blocked_bytes, e.why.hol_blocked_ms), (0, 0.0));
    assert!(
        e.components.loss_recovery_ms > 300.0,
        "{}",
        e.components.loss_recovery_ms
    );
}

/// Six connections, already open, each asked for ten segments at once
/// (an initial window of 10): 60 packets into the downlink queue.
fn six_connections(queue: &str) -> (Case, u64) {
    struct Six {
        asked: Vec<Time>,
        first: Vec<Option<Time>>,
        last: Vec<Option<Time>>,
    }
    impl Script for Six {
        fn on_deliver(&mut self, d: &Delivered) -> Vec<Action> {
            let (port, _, _) = parse(&d.packet);
            let i = (port - 41000) as usize;
            match d.dir {
                Direction::Up => (0..10u32)
                    .map(|k| {
                        let p = tcp_down(port, TCP_ACK, SERVER_ISN + k * MSS as u32, 1, MSS);
                        Action::Push(d.at, Direction::Down, p)
                    })
                    .collect(),
                Direction::Down => {
                    self.first[i].get_or_insert(d.at);
                    self.last[i] = Some(d.at);
                    Vec::new()
                }
            }
        }
    }
    let spec = spec("1mbit", 50, queue);
    let nav = Time::ZERO;
    let mut six = Six {
        asked: vec![nav; 6],
        first: vec![None; 6],
        last: vec![None; 6],
    };
    let start = (0..6)
        .map(|i| {
            Action::Push(
                nav,
                Direction::Up,
                tcp_up(41000 + i, TCP_ACK | TCP_PSH, 1, SERVER_ISN, 460),
            )
        })
        .collect();
    let mut link_stats = 0;
    let log = run(&spec, 1, start, &mut six);
    for e in &log {
        if e.kind == link::EventKind::DropQueue {
            link_stats += 1;
        }
    }
    let resources: Vec<Resource> = (0..6)
        .filter(|&i| six.first[i].is_some())
        .map(|i| {
            let d = |a: Time, b: Time| (b.0 - a.0) as f64 / 1e6;
            let first = six.first[i].unwrap();
            Resource {
                connection: i.to_string(),
                started_ms: 0.0,
                phases: Phases {
                    wait_ms: d(six.asked[i], first),
                    receive_ms: d(first, six.last[i].unwrap()),
                    ..Default::default()
                },
                handshake_rounds: None,
            }
        })
        .collect();
    let plt = six.last.iter().flatten().max().unwrap().0 - nav.0;
    (
        Case {
            spec,
            log,
            nav,
            plt: Duration::from_nanos(plt),
            resources,
        },
        link_stats,
    )
}

#[test]
fn c_six_parallel_connections_fill_the_queue() {
    let (case, _) = six_connections("64p");
    let e = analyze(&case.input("https"));
    eprintln!("{}", text::explanation(&e));
    assert_partition(&e);
    let q = &e.bottleneck.down;
    assert_eq!((q.packets_delivered, q.drops_queue), (60, 0));
    // 60 segments of 11.904 ms queued nearly at once: the last waits about
    // 59 of them, less the requests' arrival 4 ms apart.
    let max = q.wait_max_ms.unwrap();
    assert!((max - (59.0 * 11.904 - 5.0 * 4.0)).abs() < 1.0, "{max}");
    let mean = q.wait_mean_ms.unwrap();
    assert!(mean > 300.0 && mean < 360.0, "{mean}");
    let inflation = e.bottleneck.rtt_inflation_pct.unwrap();
    assert!(
        (inflation - (mean + e.bottleneck.up.wait_mean_ms.unwrap()) / 100.0 * 100.0).abs() < 1e-9
    );
    assert!(inflation > 300.0, "{inflation}");
    assert!((e.components.transfer_ms - 60.0 * 11.904).abs() < 0.01);
    // The requests wait 0 to 20 ms behind each other in the uplink.
    assert!((e.components.queueing_ms - 20.0).abs() < 0.01);
    assert_eq!(e.why.request_rounds, 1);
    assert_eq!(e.connections.len(), 6);

    // With 32 packets of queue, drops, each split over who held the queue.
    let (case, link_drops) = six_connections("32p");
    let e = analyze(&case.input("https"));
    assert_partition(&e);
    let q = &e.bottleneck.down;
    assert_eq!(q.drops_queue, link_drops);
    assert!(link_drops > 20);
    let shared: f64 = q.queue_drops_by_occupant.iter().map(|s| s.drops).sum();
    assert!((shared - link_drops as f64).abs() < 1e-9);
    // The first connections' packets held the full queue: they share most
    // of the blame.
    let share = |c: usize| {
        q.queue_drops_by_occupant
            .iter()
            .find(|s| s.connection == c)
            .map_or(0.0, |s| s.drops)
    };
    assert!(q.queue_drops_by_occupant.len() >= 4);
    assert!(share(0) > share(5), "{:?}", q.queue_drops_by_occupant);
    // Drops that were never retransmitted hold loss recovery open.
    assert!(e.components.loss_recovery_ms >= 0.0);
    assert_eq!(e.why.drops, link_drops);

    // The mechanisms: 60 segments and 6 requests reached the queues, the
    // link dropped `link_drops` of the segments.
    let m = e.mechanisms();
    let arrived =
        e.bottleneck.down.packets_delivered + e.bottleneck.up.packets_delivered + link_drops;
    let loss = m.gateway_loss_pct.unwrap();
    assert!((loss - link_drops as f64 / arrived as f64 * 100.0).abs() < 1e-9);
    assert_eq!(m.rtt_inflation_pct, e.bottleneck.rtt_inflation_pct);
    assert_eq!(m.connections, 6);
    // Each connection delivered at most its ten segments in its first round.
    let peak = m.peak_flight_kb.unwrap();
    assert!(peak > 0.0 && peak <= 10.0 * MSS as f64 / 1e3, "{peak}");
    assert!(m.mean_peak_flight_kb.unwrap() <= peak);
    let wire = e.plt_ms - e.components.off_wire_ms;
    let payload = (60 - link_drops) as f64 * MSS as f64;
    assert!((m.goodput_kbps.unwrap() - payload * 8.0 / wire).abs() < 1e-6);
    assert_eq!(m.hol_blocked_ms, e.why.hol_blocked_ms);
}

#[test]
fn d_requests_one_after_another_are_request_rounds() {
    // One open connection; five requests, each sent when the last response
    // arrived; each response one 1000-byte segment.
    struct Serial {
        sent: Vec<Time>,
        done: Vec<Time>,
    }
    impl Script for Serial {
        fn on_deliver(&mut self, d: &Delivered) -> Vec<Action> {
            let (port, tcp, _) = parse(&d.packet);
            match d.dir {
                Direction::Up => vec![Action::Push(
                    d.at,
                    Direction::Down,
                    tcp_down(
                        port,
                        TCP_ACK | TCP_PSH,
                        SERVER_ISN + tcp.seq / 300 * 1000,
                        tcp.seq + 300,
                        1000,
                    ),
                )],
                Direction::Down => {
                    self.done.push(d.at);
                    if self.sent.len() == 5 {
                        return Vec::new();
                    }
                    self.sent.push(d.at);
                    let n = self.sent.len() as u32;
                    vec![Action::Push(
                        d.at,
                        Direction::Up,
                        tcp_up(port, TCP_ACK | TCP_PSH, n * 300, 0, 300),
                    )]
                }
            }
        }
    }
    let spec = spec("1mbit", 50, "256p");
    let nav = Time::ZERO;
    let mut s = Serial {
        sent: vec![nav],
        done: Vec::new(),
    };
    let start = vec![Action::Push(
        nav,
        Direction::Up,
        tcp_up(42000, TCP_ACK | TCP_PSH, 0, 0, 300),
    )];
    let log = run(&spec, 1, start, &mut s);
    let resources: Vec<Resource> = s
        .sent
        .iter()
        .zip(&s.done)
        .map(|(&a, &b)| Resource {
            connection: "0".into(),
            started_ms: ms(a),
            phases: Phases {
                wait_ms: ms(b) - ms(a),
                ..Default::default()
            },
            handshake_rounds: None,
        })
        .collect();
    let case = Case {
        plt: *s.done.last().unwrap() - nav,
        spec,
        log,
        nav,
        resources,
    };
    let e = analyze(&case.input("h1"));
    eprintln!("{}", text::explanation(&e));
    assert_partition(&e);
    let c = &e.components;
    // Each round: 2.72 ms up, 50 ms, 8.32 ms down (transfer), 50 ms.
    assert!(
        (c.transfer_ms - 5.0 * 8.32).abs() < 0.01,
        "{}",
        c.transfer_ms
    );
    assert!(
        (c.request_ms - 5.0 * 102.72).abs() < 0.01,
        "{}",
        c.request_ms
    );
    assert!(Component::ALL.iter().all(|&k| c.get(k) <= c.request_ms));
    assert_eq!(e.why.request_rounds, 5);
    assert_eq!(e.why.handshakes, 0);
    // The downlink idles with requests outstanding, never with nothing asked.
    assert!((e.utilization.idle_outstanding_ms - c.request_ms).abs() < 0.01);
    assert_eq!(e.utilization.idle_unasked_ms, 0.0);
}

#[test]
fn off_wire_time_and_browser_time_are_printed() {
    // The PLT runs 100 ms past the last byte (onload work), and the first
    // packet leaves 10 ms after navigation start.
    let mut case = one_connection(5, None);
    case.nav = Time::ZERO;
    case.resources[0].started_ms += 10.0;
    case.plt += Duration::from_millis(110);
    let e = analyze(&case.input("h2"));
    assert_partition(&e);
    // Off the wire: the 30 ms before the SYN, and after the last delivery
    // (the client's last ACK, 50.32 ms after the last byte) to the PLT's end.
    let last = case
        .log
        .iter()
        .filter(|e| e.kind == link::EventKind::Deliver)
        .map(|e| e.time)
        .max()
        .unwrap();
    let after = ms(case.nav + case.plt) - ms(last);
    assert!((after - (100.0 - 50.32)).abs() < 1e-6, "{after}");
    assert!((e.components.off_wire_ms - (10.0 + after)).abs() < 1e-6);
    // A flow that began before navigation start is not the page's.
    let mut late = one_connection(5, None);
    late.nav = Time(late.nav.0 + 1_000_000);
    let e = analyze(&late.input("h2"));
    assert!(e.connections.is_empty());
    assert_eq!(e.components.transfer_ms, 0.0);
}

#[test]
fn quic_loss_recovery_runs_to_the_next_delivered_packet() {
    // One UDP flow: an Initial up, then twenty 1200-byte packets down at
    // line rate, the fifth dropped (a 1-packet queue and two sent at once).
    fn udp(dir: Direction, long: Option<u8>, n: usize) -> Vec<u8> {
        let mut l4 = vec![0u8; 8 + n];
        let (src, dst) = match dir {
            Direction::Up => ((CLIENT, 50000u16), (SERVER, 443u16)),
            Direction::Down => ((SERVER, 443), (CLIENT, 50000)),
        };
        l4[0..2].copy_from_slice(&src.1.to_be_bytes());
        l4[2..4].copy_from_slice(&dst.1.to_be_bytes());
        l4[4..6].copy_from_slice(&((8 + n) as u16).to_be_bytes());
        l4[8] = match long {
            Some(t) => 0xc0 | (t << 4),
            None => 0x40,
        };
        if long.is_some() {
            l4[9..13].copy_from_slice(&[0, 0, 0, 1]);
        }
        build_ipv4(src.0, dst.0, PROTO_UDP, &l4)
    }
    struct Quic;
    impl Script for Quic {
        fn on_deliver(&mut self, d: &Delivered) -> Vec<Action> {
            if d.dir == Direction::Down {
                return Vec::new();
            }
            let pace = Duration::from_micros(9_824); // 1228 B at 1 Mbit/s
            let mut out = Vec::new();
            for i in 0..20u32 {
                let at = d.at + pace * i.min(3) + pace * i.saturating_sub(4);
                out.push(Action::Push(
                    at,
                    Direction::Down,
                    udp(Direction::Down, None, 1200),
                ));
            }
            out
        }
    }
    let spec = spec("1mbit", 50, "1p");
    let start = vec![Action::Push(
        Time::ZERO,
        Direction::Up,
        udp(Direction::Up, Some(0), 1200),
    )];
    let log = run(&spec, 1, start, &mut Quic);
    let last = log
        .iter()
        .rfind(|e| e.kind == link::EventKind::Deliver)
        .unwrap()
        .time;
    let resources = [];
    let e = analyze(&Input {
        label: "h3",
        log: &log,
        spec: &spec,
        navigation_start: Time::ZERO,
        window_start: Some(Time::ZERO),
        plt: Duration::from_nanos(last.0),
        resources: &resources,
        browser_cost: None,
    });
    assert_partition(&e);
    assert_eq!(e.connections[0].opened_by.as_deref(), Some("initial"));
    assert_eq!(e.why.drops, 1);
    // QUIC's retransmissions cannot be told from the wire.
    assert_eq!(e.why.retransmitted_segments, 0);
    // The hole closes when the next packet arrives, 50 ms later, while the
    // link keeps transferring: no idle time in recovery.
    assert_eq!(e.components.loss_recovery_ms, 0.0);
}

/// Equal as JSON, numbers to 1e-12 relative (serde_json's default float
/// parsing may miss the last bit).
fn same_json<T: serde::Serialize>(a: &T, b: &T) -> bool {
    use serde_json::Value;
    fn close(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                (x - y).abs() <= 1e-12 * x.abs().max(y.abs()).max(1.0)
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(x, y)| close(x, y))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| close(v, w)))
            }
            _ => a == b,
        }
    }
    close(
        &serde_json::to_value(a).unwrap(),
        &serde_json::to_value(b).unwrap(),
    )
}

#[test]
fn explanations_round_trip_through_json_without_nan() {
    let e = analyze(&one_connection(10, Some(3)).input("h2"));
    let json = serde_json::to_string(&e).unwrap();
    assert!(!json.contains("NaN"));
    let back: Explanation = serde_json::from_str(&json).unwrap();
    assert!(same_json(&back, &e));
    let d = difference(std::slice::from_ref(&e), &[]);
    let json = serde_json::to_string(&d).unwrap();
    let back: Difference = serde_json::from_str(&json).unwrap();
    assert_eq!(back, d);
    assert_eq!(text::difference(&d), "h2 vs : no probes to compare");
}

#[test]
fn differences_over_repetitions_have_intervals_and_no_residual() {
    let a: Vec<Explanation> = [50, 55, 60]
        .iter()
        .map(|&n| analyze(&one_connection(n, Some(n - 10)).input("https")))
        .collect();
    let b: Vec<Explanation> = [50, 52, 58]
        .iter()
        .map(|&n| analyze(&one_connection(n, None).input("h2")))
        .collect();
    let d = difference(&a, &b);
    assert_eq!((d.a_probes, d.b_probes), (3, 3));
    let plt = d.plt_ms.mean.unwrap();
    let sum: f64 = d.components.iter().map(|c| c.delta_ms.mean.unwrap()).sum();
    assert!((plt - sum).abs() < 1e-6 && d.residual_ms.unwrap().abs() < 1e-6);
    let [lo, hi] = d.plt_ms.ci95.unwrap();
    assert!(lo < plt && plt < hi);
    assert_eq!(d.why.retransmitted_segments, Some(1.0));
    let line = text::difference(&d);
    eprintln!("{line}");
    assert!(line.starts_with("https vs h2: "));
}

#[allow(clippy::too_many_arguments)]
/// A random well-formed log: random packets of a few TCP and UDP flows
/// through a link with a random spec (rate or trace, CoDel or drop-tail,
/// random loss), and random HAR phases.
fn random_case(
    seed: u64,
    rate_kbit: u64,
    delay_ms: u64,
    queue: &str,
    loss: &str,
    packets: &[(u16, bool, u8, u16, u8)],
    resources: &[(u16, u16, u16, u16, u16)],
    nav_ms: u64,
    plt_ms: u64,
) -> (Case, link::LinkStats) {
    let d = DirectionSpec {
        service: if rate_kbit == 0 {
            Service::Trace(std::sync::Arc::new(
                link::Trace::parse("t", "1\n3\n3\n7\n10").unwrap(),
            ))
        } else {
            Service::Rate(link::Bitrate(rate_kbit * 1000))
        },
        delay: Duration::from_millis(delay_ms),
        queue: queue.parse().unwrap(),
        loss: loss.parse().unwrap(),
    };
    let spec = LinkSpec {
        up: d.clone(),
        down: d,
    };
    let mut link = Link::new(&spec, seed);
    let log = PacketLog::new();
    link.add_observer(Box::new(log.clone()));
    let mut now = Time::ZERO;
    let mut seqs = [0u32; 8];
    for &(gap_us, down, flow, size, kind) in packets {
        now = now + Duration::from_micros(gap_us as u64);
        while let Some(w) = link.next_wakeup().filter(|&w| w <= now) {
            while link.pop_ready(w).is_some() {}
        }
        let dir = if down { Direction::Down } else { Direction::Up };
        let port = 40000 + (flow % 8) as u16;
        let (src, dst) = match dir {
            Direction::Up => ((CLIENT, port), (SERVER, 443)),
            Direction::Down => ((SERVER, 443), (CLIENT, port)),
        };
        let payload = (size % 1460) as usize;
        let p = if flow % 8 < 6 {
            let f = (flow % 8) as usize;
            // Sometimes go back: a retransmission.
            let seq = if kind % 5 == 0 {
                seqs[f].saturating_sub(2000)
            } else {
                seqs[f]
            };
            seqs[f] = seqs[f].max(seq + payload as u32);
            let flags = if kind % 17 == 1 { TCP_SYN } else { TCP_ACK };
            build_tcp(src, dst, flags, seq, 0, payload)
        } else {
            let mut l4 = vec![0u8; 8 + payload.max(5)];
            l4[0..2].copy_from_slice(&src.1.to_be_bytes());
            l4[2..4].copy_from_slice(&dst.1.to_be_bytes());
            if kind % 3 == 0 {
                l4[8..13].copy_from_slice(&[0xc0, 0, 0, 0, 1]);
            }
            build_ipv4(src.0, dst.0, PROTO_UDP, &l4)
        };
        link.push(now, dir, p);
    }
    // Leave some packets inside the link at times, as a cut log would.
    if !seed.is_multiple_of(3) {
        while let Some(w) = link.next_wakeup() {
            while link.pop_ready(w).is_some() {}
        }
    }
    let resources = resources
        .iter()
        .map(|&(start, connect, send, wait, receive)| Resource {
            connection: (start % 4).to_string(),
            started_ms: start as f64 / 10.0,
            phases: Phases {
                blocked_ms: (receive % 7) as f64,
                dns_ms: -1.0,
                connect_ms: connect as f64 / 10.0,
                ssl_ms: connect as f64 / 20.0,
                send_ms: send as f64 / 10.0,
                wait_ms: wait as f64 / 10.0,
                receive_ms: receive as f64 / 10.0,
            },
            handshake_rounds: None,
        })
        .collect();
    let stats = link.stats();
    (
        Case {
            spec,
            log: log.entries(),
            nav: Time::from_millis(nav_ms),
            plt: Duration::from_millis(plt_ms),
            resources,
        },
        stats,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn e_components_partition_the_plt_for_random_logs(
        seed in 0u64..1000,
        rate_kbit in prop_oneof![Just(0u64), 64u64..20_000],
        delay_ms in 0u64..100,
        queue in prop_oneof![Just("256p"), Just("4p"), Just("3kb"), Just("codel:5ms,20ms,64p")],
        loss in prop_oneof![Just("0%"), Just("5%"), Just("ge:5%,30%")],
        packets in proptest::collection::vec((0u16..20_000, any::<bool>(), any::<u8>(), any::<u16>(), any::<u8>()), 0..300),
        resources in proptest::collection::vec((0u16..5000, 0u16..3000, 0u16..100, 0u16..3000, 0u16..5000), 0..12),
        nav_ms in 0u64..200,
        plt_ms in 0u64..5000,
    ) {
        let (case, stats) = random_case(seed, rate_kbit, delay_ms, queue, loss, &packets, &resources, nav_ms, plt_ms);
        let input = case.input("any");
        let e = analyze(&input);
        // Exactly, in nanoseconds.
        let delay = [case.spec.up.delay.as_nanos() as i64, case.spec.down.delay.as_nanos() as i64];
        let read = packets::read(&case.log, case.nav.0, delay);
        prop_assert_eq!(read.unmatched, 0);
        let plt = case.plt.as_nanos() as i64;
        let page: Vec<bool> = read.flows.iter().map(|f| (0..=plt).contains(&f.first)).collect();
        let rec = crate::analyze::loss_recoveries(&read, &page, plt);
        let part = crate::analyze::partition(&input, &read, &page, &rec, plt);
        prop_assert_eq!(part.ns.iter().sum::<i64>(), plt);
        prop_assert!(part.ns.iter().all(|&n| n >= 0));
        prop_assert_eq!(part.busy + part.idle_outstanding + part.idle_unasked, plt);
        prop_assert_eq!(part.runs.iter().map(|r| r.end - r.start).sum::<i64>(), plt);
        for c in Component::ALL {
            prop_assert!(e.components.get(c) >= 0.0);
        }
        prop_assert!((e.components.total_ms() - e.plt_ms).abs() < 1e-6);
        // The reconstruction agrees with the link's own counters: every fate
        // matched, and the queue waits of what was served sum to its total.
        for (dir, s) in [(Direction::Up, stats.up), (Direction::Down, stats.down)] {
            let of = |f: fn(&Fate) -> bool| read.packets.iter().filter(|p| p.dir == dir && f(&p.fate)).count() as u64;
            prop_assert_eq!(of(|f| matches!(f, Fate::Lost)), s.drops_loss);
            prop_assert_eq!(of(|f| matches!(f, Fate::Dropped { .. })), s.drops_queue);
            prop_assert_eq!(of(|f| matches!(f, Fate::Delivered { .. })), s.packets_out);
            let waited: i64 = read.packets.iter().filter(|p| p.dir == dir).map(|p| match p.fate {
                Fate::Delivered { start, .. } => start - p.arrive,
                _ => 0,
            }).sum();
            if s.packets_out == s.packets_served {
                prop_assert_eq!(waited as u64, s.queueing_delay_total_ns);
            }
        }
        let json = serde_json::to_string(&e).unwrap();
        let back: Explanation = serde_json::from_str(&json).unwrap();
        prop_assert!(same_json(&back, &e));
    }
}
