//! Virtual-time tests of the whole link: exact serialization and delay, queue
//! limits and CoDel, loss rates, trace replay and first-flight analysis.

use crate::packet::{build_tcp, TCP_ACK, TCP_SYN};
use crate::*;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

fn direction(service: Service, delay_ms: u64) -> DirectionSpec {
    DirectionSpec {
        service,
        delay: Duration::from_millis(delay_ms),
        ..Default::default()
    }
}

fn rate(s: &str) -> Service {
    Service::Rate(s.parse().unwrap())
}

fn symmetric(d: DirectionSpec) -> LinkSpec {
    LinkSpec {
        up: d.clone(),
        down: d,
    }
}

/// Runs the link until nothing is left, returning deliveries in order.
fn drain(link: &mut Link) -> Vec<Delivered> {
    let mut out = Vec::new();
    while let Some(t) = link.next_wakeup() {
        while let Some(d) = link.pop_ready(t) {
            out.push(d);
        }
    }
    out
}

#[test]
fn serialization_is_exact_to_the_microsecond() {
    let mut link = Link::new(&symmetric(direction(rate("1mbit"), 0)), 0);
    for _ in 0..3 {
        link.push(Time::ZERO, Direction::Down, vec![0; 1500]);
    }
    let times: Vec<Time> = drain(&mut link).iter().map(|d| d.at).collect();
    assert_eq!(
        times,
        vec![
            Time::from_millis(12),
            Time::from_millis(24),
            Time::from_millis(36)
        ]
    );
    // 64 kbit: a 40-byte ACK takes exactly 5 ms.
    let mut link = Link::new(&symmetric(direction(rate("64kbit"), 0)), 0);
    link.push(Time::from_micros(3), Direction::Up, vec![0; 40]);
    assert_eq!(drain(&mut link)[0].at, Time::from_micros(5_003));
}

#[test]
fn delay_is_added_after_serialization_per_direction() {
    let spec = LinkSpec {
        up: direction(rate("8mbit"), 45),
        down: direction(Service::Unlimited, 40),
    };
    let mut link = Link::new(&spec, 0);
    link.push(Time::from_millis(1), Direction::Up, vec![0; 1000]);
    link.push(Time::from_millis(1), Direction::Down, vec![0; 1000]);
    let out = drain(&mut link);
    assert_eq!(out[0].dir, Direction::Down);
    assert_eq!(out[0].at, Time::from_millis(41));
    assert_eq!(out[1].dir, Direction::Up);
    assert_eq!(out[1].at, Time::from_millis(47)); // 1 + 1 (1000 B at 8 Mbit) + 45
    assert!(link.pop_ready(Time::from_millis(1000)).is_none());
    assert_eq!(link.next_wakeup(), None);
}

#[test]
fn an_idle_link_starts_serializing_on_arrival() {
    let mut link = Link::new(&symmetric(direction(rate("1mbit"), 10)), 0);
    link.push(Time::ZERO, Direction::Up, vec![0; 1500]);
    assert_eq!(drain(&mut link)[0].at, Time::from_millis(22));
    link.push(Time::from_millis(100), Direction::Up, vec![0; 1500]);
    assert_eq!(drain(&mut link)[0].at, Time::from_millis(122));
}

#[test]
fn drop_tail_never_holds_more_than_its_limit() {
    let mut d = direction(rate("1mbit"), 0);
    d.queue = "4p".parse().unwrap();
    let mut link = Link::new(&symmetric(d), 0);
    for _ in 0..10 {
        link.push(Time::ZERO, Direction::Down, vec![0; 1500]);
    }
    assert_eq!(link.queued_packets(Direction::Down), 4);
    let stats = link.stats().down;
    assert_eq!((stats.drops_queue, stats.max_queue_packets), (6, 4));
    // After one serialization time, a slot frees up.
    link.push(Time::from_millis(12), Direction::Down, vec![0; 1500]);
    assert_eq!(link.stats().down.drops_queue, 6);
    assert_eq!(drain(&mut link).len(), 5);
    let s = link.stats().down;
    // Packets 2..5 waited 12, 24, 36 ms; the late one waited 36 ms.
    assert_eq!(s.queueing_delay_max_ns, 36_000_000);
    assert_eq!(s.packets_out, 5);
}

#[test]
fn byte_limited_queue() {
    let mut d = direction(rate("1mbit"), 0);
    d.queue = "3kb".parse().unwrap();
    let mut link = Link::new(&symmetric(d), 0);
    for _ in 0..3 {
        link.push(Time::ZERO, Direction::Up, vec![0; 1500]);
    }
    assert_eq!(link.stats().up.drops_queue, 1);
    assert_eq!(link.stats().up.max_queue_bytes, 3000);
}

#[test]
fn codel_keeps_the_hard_limit_on_arrival() {
    let mut d = direction(rate("1mbit"), 0);
    d.queue = "codel:5ms,100ms,4p".parse().unwrap();
    let mut link = Link::new(&symmetric(d), 0);
    for _ in 0..10 {
        link.push(Time::ZERO, Direction::Down, vec![0; 1500]);
    }
    assert_eq!(link.queued_packets(Direction::Down), 4);
    let stats = link.stats().down;
    assert_eq!((stats.drops_queue, stats.max_queue_packets), (6, 4));
}

/// A sender that opens with a burst of `burst` packets, then sends one 1500-byte
/// packet per 12 ms (the rate of a 1 Mbit/s link) for 5 s: a standing queue of
/// `burst` packets that drop-tail keeps and CoDel drains. Returns the link's
/// counters and the packet log.
fn standing_queue(queue: &str, burst: usize) -> (DirectionStats, Vec<LogEntry>) {
    let mut d = direction(rate("1mbit"), 10);
    d.queue = queue.parse().unwrap();
    let mut link = Link::new(&symmetric(d), 0);
    let log = PacketLog::new();
    link.add_observer(Box::new(log.clone()));
    for _ in 0..burst {
        link.push(Time::ZERO, Direction::Down, vec![0; 1500]);
    }
    for i in 1..=5000 / 12 {
        let now = Time::from_millis(12 * i);
        while link.pop_ready(now).is_some() {}
        link.push(now, Direction::Down, vec![0; 1500]);
    }
    drain(&mut link);
    (link.stats().down, log.entries())
}

#[test]
fn codel_drains_a_standing_queue_that_drop_tail_keeps() {
    let (tail, tail_log) = standing_queue("1000p", 30);
    assert_eq!(tail.drops_queue, 0);
    assert!(tail_log.iter().all(|e| e.kind != EventKind::DropQueue));
    // 30 packets ahead at 12 ms each, for the whole run.
    assert!(
        tail.mean_queueing_delay() > Duration::from_millis(300),
        "{tail:?}"
    );

    let (codel, log) = standing_queue("codel:5ms,100ms", 30);
    assert!(codel.drops_queue > 0, "{codel:?}");
    // Every CoDel drop is a queue drop in the log, with its packet.
    let logged: Vec<&LogEntry> = log
        .iter()
        .filter(|e| e.kind == EventKind::DropQueue)
        .collect();
    assert_eq!(logged.len() as u64, codel.drops_queue);
    assert!(logged
        .iter()
        .all(|e| e.size == 1500 && e.dir == Direction::Down));
    assert_eq!(
        codel.packets_in,
        codel.packets_out + codel.drops_queue,
        "{codel:?}"
    );
    assert!(
        codel.mean_queueing_delay() < tail.mean_queueing_delay() / 4,
        "{codel:?} vs {tail:?}"
    );
}

#[test]
fn loss_rate_inside_binomial_99_percent_interval() {
    for (loss, seed) in [("1%", 42u64), ("3%", 43)] {
        let mut d = direction(Service::Unlimited, 5);
        d.loss = loss.parse().unwrap();
        let p = d.loss.mean_loss();
        let mut link = Link::new(&symmetric(d), seed);
        let n = 20_000u64;
        for i in 0..n {
            link.push(Time::from_micros(i), Direction::Up, vec![0; 100]);
        }
        let delivered = drain(&mut link).len() as f64;
        let lost = n as f64 - delivered;
        let sd = (n as f64 * p * (1.0 - p)).sqrt();
        let (lo, hi) = (n as f64 * p - 2.576 * sd, n as f64 * p + 2.576 * sd);
        assert!(
            lo <= lost && lost <= hi,
            "{loss}: {lost} not in [{lo}, {hi}]"
        );
        assert_eq!(link.stats().up.drops_loss as f64, lost);
    }
}

#[test]
fn trace_replay_follows_the_opportunities_and_loops() {
    // Opportunities at 1, 1, 5 and 10 ms, looping every 10 ms.
    let trace = Arc::new(Trace::parse("t", "1\n1\n5\n10\n").unwrap());
    let mut link = Link::new(&symmetric(direction(Service::Trace(trace), 0)), 0);
    for _ in 0..6 {
        link.push(Time::ZERO, Direction::Down, vec![0; 1500]);
    }
    let ms: Vec<u64> = drain(&mut link)
        .iter()
        .map(|d| d.at.0 / 1_000_000)
        .collect();
    assert_eq!(ms, vec![1, 1, 5, 10, 11, 11]);
}

#[test]
fn trace_packs_small_packets_into_one_opportunity_and_wastes_idle_ones() {
    let trace = Arc::new(Trace::constant(10, 5));
    let mut link = Link::new(&symmetric(direction(Service::Trace(trace), 0)), 0);
    // Three 500-byte packets share the opportunity at 10 ms; the fourth waits for 20 ms.
    for _ in 0..4 {
        link.push(Time::ZERO, Direction::Up, vec![0; 500]);
    }
    let ms: Vec<u64> = drain(&mut link)
        .iter()
        .map(|d| d.at.0 / 1_000_000)
        .collect();
    assert_eq!(ms, vec![10, 10, 10, 20]);
    // Opportunities at 30 and 40 ms pass unused; one arriving at 41 ms leaves at 50 ms.
    link.push(Time::from_millis(41), Direction::Up, vec![0; 1500]);
    assert_eq!(drain(&mut link)[0].at, Time::from_millis(50));
    // A 3000-byte packet needs two opportunities.
    link.push(Time::from_millis(51), Direction::Up, vec![0; 3000]);
    assert_eq!(drain(&mut link)[0].at, Time::from_millis(70));
}

#[test]
fn trace_at_a_constant_rate_matches_the_rate() {
    // 1 opportunity per ms = 12 Mbit/s.
    let trace = Trace::constant(1, 1000);
    assert_eq!(trace.mean_bits_per_sec().round(), 12_000_000.0);
}

#[test]
fn packet_log_sees_every_event_and_finds_the_first_flight() {
    let mut d = direction(Service::Unlimited, 50);
    d.queue = "256p".parse().unwrap();
    let mut link = Link::new(&symmetric(d), 0);
    let log = PacketLog::new();
    link.add_observer(Box::new(log.clone()));
    let c = (Ipv4Addr::new(198, 18, 0, 2), 40000);
    let s = (Ipv4Addr::new(198, 18, 1, 1), 80);
    let mut t = Time::ZERO;
    let mut step = |link: &mut Link, dir, p| {
        link.push(t, dir, p);
        t = t + Duration::from_millis(1);
        drain(link);
    };
    step(
        &mut link,
        Direction::Up,
        build_tcp(c, s, TCP_SYN, 100, 0, 0),
    );
    step(
        &mut link,
        Direction::Down,
        build_tcp(s, c, TCP_SYN | TCP_ACK, 5000, 101, 0),
    );
    step(
        &mut link,
        Direction::Up,
        build_tcp(c, s, TCP_ACK, 101, 5001, 0),
    );
    step(
        &mut link,
        Direction::Up,
        build_tcp(c, s, TCP_ACK, 101, 5001, 300),
    );
    for i in 0..10u32 {
        step(
            &mut link,
            Direction::Down,
            build_tcp(s, c, TCP_ACK, 5001 + i * 1448, 401, 1448),
        );
    }
    // The client acknowledges data: the first flight ends. More data follows.
    step(
        &mut link,
        Direction::Up,
        build_tcp(c, s, TCP_ACK, 401, 5001 + 2896, 0),
    );
    step(
        &mut link,
        Direction::Down,
        build_tcp(s, c, TCP_ACK, 5001 + 14480, 401, 1448),
    );
    assert_eq!(first_flights(&log.entries()), vec![10]);
    let entries = log.entries();
    assert_eq!(
        entries
            .iter()
            .filter(|e| e.kind == EventKind::Arrive)
            .count(),
        entries
            .iter()
            .filter(|e| e.kind == EventKind::Deliver)
            .count()
    );
}

#[test]
fn same_seed_same_run() {
    let run = |seed| {
        let mut d = direction(rate("1mbit"), 20);
        d.loss = "ge:5%,20%".parse().unwrap();
        let mut link = Link::new(&symmetric(d), seed);
        for i in 0..500 {
            link.push(Time::from_millis(i), Direction::Down, vec![0; 200]);
        }
        drain(&mut link).iter().map(|d| d.at).collect::<Vec<_>>()
    };
    assert_eq!(run(9), run(9));
    assert_ne!(run(9), run(10));
}

/// `LinkSpec::round_trip` is the model's own answer: a packet sent up over an
/// idle link and answered at once comes back exactly then, at the paper's
/// rates, for calibrate's probes (36 and 44 bytes) and for ping's (84).
#[test]
fn round_trip_is_what_the_model_delivers_for_an_ip_packet_of_that_size() {
    use crate::packet::{ICMP_ECHO_HEADER, IPV4_HEADER, UDP_HEADER};
    for r in ["64kbit", "1mbit", "8mbit"] {
        let spec = symmetric(direction(rate(r), 75));
        for bytes in [
            IPV4_HEADER + UDP_HEADER + 8,
            IPV4_HEADER + UDP_HEADER + 16,
            IPV4_HEADER + ICMP_ECHO_HEADER + 56,
        ] {
            let mut link = Link::new(&spec, 0);
            link.push(Time::from_micros(7), Direction::Up, vec![0; bytes]);
            let there = drain(&mut link)[0].at;
            link.push(there, Direction::Down, vec![0; bytes]);
            let back = drain(&mut link)[0].at;
            assert_eq!(
                Duration::from_nanos(back.0 - 7_000),
                spec.round_trip(bytes),
                "{r}, {bytes} B"
            );
        }
    }
    // By hand: ping's 84 bytes at 64 kbit take 10.5 ms each way (not the
    // 12.25 ms of a 98-byte Ethernet frame); unlimited adds nothing.
    let slow = symmetric(direction(rate("64kbit"), 75));
    assert_eq!(slow.round_trip(84), Duration::from_millis(171));
    let fast = symmetric(direction(rate("8mbit"), 75));
    assert_eq!(fast.round_trip(84), Duration::from_micros(150_168));
    let unlimited = symmetric(direction(Service::Unlimited, 75));
    assert_eq!(unlimited.round_trip(84), Duration::from_millis(150));
}
