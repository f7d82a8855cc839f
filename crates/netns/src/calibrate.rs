//! Calibration: measures a testbed against its spec with the same code that
//! probes use. RTT from UDP echoes on an idle link (timed as ping times its
//! echoes: from just before the send to the kernel's receive stamp, less the
//! time the echo server held the probe by its own kernel stamp and clock, so
//! that neither side's wake-up counts), goodput from a TCP bulk
//! transfer each way (after a warm-up that lets slow start finish) — or, with
//! `Transport::Udp`, from a paced UDP flow each way (full-size datagrams
//! offered at 110 % of the direction's rate, so the link, not the sender, sets
//! the pace; payload counted as it arrives at the receiver) — loss from
//! paced UDP datagrams each way. Each phase runs on a fresh testbed so that one
//! phase's standing queue cannot distort the next.
//!
//! Goodput counts the payload that *reached the receiver* in the window, as the
//! sender's TCP knows it (bytes cumulatively acknowledged plus segments SACKed),
//! not the bytes the receiving application read: after a loss the receiver
//! holds everything behind the hole and hands it over in one burst when the
//! retransmission arrives, so bytes that crossed the link before the window
//! would be read inside it (goodput above the link's rate).

use crate::testbed::{server_addr, Side, Testbed, TestbedSpec, CLIENT_ADDR};
use link::packet::{IPV4_HEADER, UDP_HEADER};
use link::{Direction, LinkSpec, Service};
use serde::Serialize;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How much to measure.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    pub echo_samples: usize,
    /// The measured window of each bulk transfer (after the warm-up).
    #[serde(serialize_with = "ser_secs")]
    pub bulk_time: Duration,
    /// Datagrams sent each way for the loss measurement.
    pub datagrams: usize,
    /// What carries the goodput measurement.
    pub transport: Transport,
}

/// The goodput flow's transport: a TCP bulk transfer, or a paced UDP flow (QUIC's path).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    #[default]
    Tcp,
    Udp,
}

impl Default for Plan {
    fn default() -> Self {
        Plan {
            echo_samples: 50,
            bulk_time: Duration::from_secs(10),
            datagrams: 10_000,
            transport: Transport::Tcp,
        }
    }
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// An echo probe's payload: its sequence number, then (on the way back) the
/// time the echo server held it, in ns.
pub const ECHO_PAYLOAD: usize = 16;
/// An echo probe's size on the link, each way: the IP packet, as the link
/// charges it (`link::packet::IPV4_HEADER`).
pub const ECHO_WIRE_BYTES: usize = IPV4_HEADER + UDP_HEADER + ECHO_PAYLOAD;
/// A loss datagram's payload: its sequence number.
const LOSS_PAYLOAD: usize = 8;
const LOSS_WIRE_BYTES: usize = IPV4_HEADER + UDP_HEADER + LOSS_PAYLOAD;
const ECHO_PORT: u16 = 7;
/// The echo client's port (each phase has a fresh testbed, so it is free).
const ECHO_CLIENT_PORT: u16 = 7007;
const DISCARD_PORT: u16 = 9;
const BULK_PORT: u16 = 5001;

#[derive(Debug, Clone, Serialize)]
pub struct RttResult {
    /// The configured RTT (sum of the one-way delays).
    pub spec: f64,
    /// The configured RTT plus the probe's serialization both ways
    /// ([`expected_rtt`]: `ECHO_WIRE_BYTES` each way).
    pub expected: f64,
    /// Mean of the samples: each from just before the send to the kernel's
    /// receive stamp, less the echo server's hold.
    pub measured: f64,
    pub min: f64,
    pub max: f64,
    /// Mean absolute deviation from the mean (ping's mdev is the standard deviation).
    pub mdev: f64,
    pub samples: usize,
    pub lost: usize,
    /// Mean time the echo server held a probe, from its kernel's receive stamp
    /// to just before its reply (taken out of each sample).
    pub echo_hold: f64,
    /// Mean round trip as the calibrating threads saw it: their own clock after
    /// the wake-up, the echo's hold included (what `measured` was before it
    /// was timed by the kernel's stamps).
    pub app_measured: f64,
    /// Samples timed by the kernel's stamps at both ends (the rest: by the
    /// clock after the read; a kernel that gives no stamp).
    pub kernel_stamped: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct RateResult {
    /// The configured rate (or a trace's mean rate); null when unshaped.
    pub spec: Option<f64>,
    /// TCP goodput over the measured window: payload that reached the receiver.
    pub measured: f64,
    /// The error of `measured` (±, bit/s): what can fall on either side of each
    /// edge of the window (a segment arriving, two awaiting a delayed ACK, and
    /// 2 ms of the emulator's or the sampler's scheduling delay).
    pub error_bps: f64,
    /// measured / spec.
    pub ratio: Option<f64>,
    /// The most TCP can carry at this MTU with timestamps: 1448/1500 of the
    /// rate (null for a UDP flow).
    pub tcp_ceiling: Option<f64>,
    /// A UDP flow: the most its full-size datagrams carry, 1472/1500 of the rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub udp_ceiling: Option<f64>,
    /// What the link itself delivered in this direction over the window (all
    /// packets, headers included): a check on `measured` that reordering after a
    /// loss cannot shift across the window's edges.
    pub wire_bps: f64,
    pub window_s: f64,
    pub warmup_s: f64,
    /// Emulator CPU during this transfer, in % of one core.
    pub emulator_cpu_pct: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct LossResult {
    /// The configured long-run loss fraction.
    pub spec: f64,
    /// Loss over both directions together.
    pub measured: f64,
    pub up: f64,
    pub down: f64,
    pub sent_each_way: usize,
    /// The binomial 99 % interval of the loss fraction for this many datagrams at the spec.
    pub ci99: [f64; 2],
    pub inside_ci99: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub rtt_ms: RttResult,
    pub down_bps: RateResult,
    pub up_bps: RateResult,
    pub loss: LossResult,
    /// What the figures say about the run itself: the machine too busy to
    /// hold the spec ([`rtt_strain`]).
    pub warnings: Vec<String>,
}

/// Tells the caller which phase runs, so it can show progress.
pub type Progress<'a> = &'a mut dyn FnMut(&str);

impl Plan {
    /// Roughly how long `run` takes for `spec` (for a progress bar's ETA).
    pub fn estimate(&self, spec: &TestbedSpec) -> Duration {
        let rtt = expected_rtt(&spec.link);
        let echo = (rtt + ECHO_GAP) * self.echo_samples as u32;
        let bulk = match self.transport {
            Transport::Tcp => (warmup(spec) + self.bulk_time) * 2,
            Transport::Udp => (udp_warmup(spec) + self.bulk_time) * 2,
        };
        let loss = datagram_interval(spec) * self.datagrams as u32 + rtt + LOSS_GRACE;
        echo + bulk + loss
    }
}

const ECHO_GAP: Duration = Duration::from_millis(10);
/// Long enough for a handshake over the slowest, longest link we expect.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const LOSS_GRACE: Duration = Duration::from_millis(500);

/// What an echo probe's round trip should be on an idle `link`: both delays
/// plus the probe's serialization each way, as the link model charges it
/// (`LinkSpec::round_trip` of `ECHO_WIRE_BYTES`, the whole IP packet).
pub fn expected_rtt(link: &LinkSpec) -> Duration {
    link.round_trip(ECHO_WIRE_BYTES)
}

/// How far the RTT probes' mean may sit above their expectation, or their
/// samples spread (mdev), before calibrate says the machine was too busy to
/// hold the spec: 500 µs, the most the emulator lets any packet stray from
/// its time (half its 1 ms quantum, on a busy fast link; RTT probes take the
/// exact path, late only as the host schedules the emulator thread). With
/// the probes timed by the kernel, what is left above the expectation is the
/// emulator thread waking late, to read a probe or to deliver it, in each
/// direction: on a quiet machine about +0.1 ms at the least and +0.25 ms on
/// average (docs/results/fidelity.md).
pub const RTT_TOLERANCE: Duration = Duration::from_micros(500);

/// A warning when the RTT figures show the host could not hold the spec: the
/// probes' mean over their expectation, or their mdev, beyond
/// [`RTT_TOLERANCE`]. None on a link with a trace-driven direction (its
/// expectation is only a lower bound). `load` (the 1-minute load average)
/// and `cores` only fill in the message: the figures decide.
pub fn rtt_strain(
    r: &RttResult,
    link: &LinkSpec,
    load: Option<f64>,
    cores: usize,
) -> Option<String> {
    let traced = [&link.up.service, &link.down.service]
        .iter()
        .any(|s| matches!(s, Service::Trace(_)));
    let tolerance = RTT_TOLERANCE.as_secs_f64() * 1e3;
    let excess = r.measured - r.expected;
    if traced || r.samples == 0 || (excess <= tolerance && r.mdev <= tolerance) {
        return None;
    }
    let load = load.map_or(String::new(), |l| {
        format!(
            " (load average {l:.2} on {cores} core{})",
            if cores == 1 { "" } else { "s" }
        )
    });
    Some(format!(
        "the machine was too busy to hold the spec{load}: RTT probes came back {excess:+.3} ms over their expectation on average, mdev {:.3} ms, beyond the emulator's own {tolerance:.1} ms; anything measured now carries such delays too (docs/results/fidelity.md)",
        r.mdev
    ))
}

/// The 1-minute load average (Linux), if it can be read.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// How busy the machine's CPUs were over a span (`CpuBusy::start`, then
/// `share_pct`): all CPUs' busy time over their total (`/proc/stat`: user,
/// nice, system, irq, softirq and steal over those and idle and iowait). The
/// load average cannot tell a busy machine: Chromium's own threads make it
/// 2–6 on 2 cores when nothing else runs. Nor can the lab subtract its own
/// CPU: Chromium's renderers are not reaped into this process's times. A
/// saturated CPU can: Chromium's loads of icons at 20 ms / 8 Mbit keep 2
/// cores 88 % busy alone and 98 % with one other busy process, which made
/// a reference's loads 100–250 ms slower (docs/crosscheck.md, "A busy
/// machine's reference").
#[derive(Debug, Clone, Copy)]
pub struct CpuBusy {
    busy: u64,
    total: u64,
}

impl CpuBusy {
    /// The counters now (None where /proc/stat cannot be read), through
    /// the one /proc reader (`sys::procstat::machine_jiffies`).
    pub fn start() -> Option<CpuBusy> {
        let (busy, total) = sys::procstat::machine_jiffies();
        (total > 0).then_some(CpuBusy { busy, total })
    }

    /// Since `self`: the share of the machine's CPU time (all of its cores)
    /// that was busy, in %. None if no time passed or /proc cannot be read.
    pub fn share_pct(&self) -> Option<f64> {
        let now = CpuBusy::start()?;
        let total = now.total.checked_sub(self.total).filter(|t| *t > 0)?;
        let busy = now.busy.saturating_sub(self.busy);
        Some(100.0 * busy as f64 / total as f64)
    }
}

/// Long enough for slow start to reach the link's rate: ten RTTs and a second.
fn warmup(spec: &TestbedSpec) -> Duration {
    spec.link.rtt() * 10 + Duration::from_secs(1)
}

/// Paces probes at 90 % of the slower direction's rate (and at most 20 000/s).
fn datagram_interval(spec: &TestbedSpec) -> Duration {
    let slowest = [&spec.link.up.service, &spec.link.down.service]
        .iter()
        .filter_map(|s| s.bits_per_sec())
        .fold(f64::INFINITY, f64::min);
    let at_rate = (LOSS_WIRE_BYTES * 8) as f64 / (0.9 * slowest);
    Duration::from_secs_f64(at_rate.max(50e-6))
}

/// Measures the testbed described by `spec`.
pub fn run(spec: &TestbedSpec, plan: &Plan, progress: Progress<'_>) -> io::Result<Calibration> {
    progress("rtt");
    let rtt_ms = measure_rtt(spec, plan)?;
    let goodput = match plan.transport {
        Transport::Tcp => measure_goodput,
        Transport::Udp => measure_udp_goodput,
    };
    progress("goodput down");
    let down_bps = goodput(spec, plan, Direction::Down)?;
    progress("goodput up");
    let up_bps = goodput(spec, plan, Direction::Up)?;
    progress("loss");
    let loss = measure_loss(spec, plan)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let warnings = rtt_strain(&rtt_ms, &spec.link, load_average(), cores)
        .into_iter()
        .collect();
    Ok(Calibration {
        rtt_ms,
        down_bps,
        up_bps,
        loss,
        warnings,
    })
}

fn udp_in(tb: &Testbed, side: Side, addr: SocketAddr) -> io::Result<UdpSocket> {
    tb.namespace(side).run(move || UdpSocket::bind(addr))
}

fn server_sock(port: u16) -> SocketAddr {
    SocketAddr::from((server_addr(1), port))
}

fn client_sock(port: u16) -> SocketAddr {
    SocketAddr::from((CLIENT_ADDR, port))
}

/// Now on the wall clock, in ns since the Unix epoch (the clock of the
/// kernel's receive stamps).
fn wall_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// One echo sample in ms: from `sent_ns` (just before the send) to the
/// kernel's receive stamp, less the server's `hold_ns`; or, without a usable
/// stamp, `app_ms` (the thread's own clock after its wake-up) less the hold.
/// A stamp is usable when it lies between the send and the wake-up.
fn echo_sample(sent_ns: u128, stamp: Option<u128>, app_ms: f64, hold_ns: u64) -> (f64, bool) {
    let hold_ms = hold_ns as f64 / 1e6;
    match stamp {
        Some(t) if t >= sent_ns && (t - sent_ns) as f64 / 1e6 <= app_ms + 1.0 => {
            ((t - sent_ns) as f64 / 1e6 - hold_ms, true)
        }
        _ => (app_ms - hold_ms, false),
    }
}

/// The echo server: answers each probe with its payload, the time it held it
/// (its kernel's receive stamp to just before the send) in bytes 8..16.
fn echo_server(echo: UdpSocket, stop: Arc<AtomicBool>) {
    let mut buf = [0u8; 64];
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, stamp)) = sys::recv_stamped(&echo, &mut buf) else {
            continue;
        };
        if n != ECHO_PAYLOAD {
            continue;
        }
        let hold = stamp.map_or(0, |t| wall_ns().saturating_sub(t));
        buf[8..16].copy_from_slice(&u64::try_from(hold).unwrap_or(u64::MAX).to_be_bytes());
        let _ = echo.send(&buf[..n]);
    }
}

fn measure_rtt(spec: &TestbedSpec, plan: &Plan) -> io::Result<RttResult> {
    let tb = Testbed::start(spec.clone())?;
    let echo = udp_in(&tb, Side::Server, server_sock(ECHO_PORT))?;
    echo.connect(client_sock(ECHO_CLIENT_PORT))?;
    sys::enable_rx_timestamps(&echo)?;
    echo.set_read_timeout(Some(Duration::from_millis(50)))?;
    let stop = Arc::new(AtomicBool::new(false));
    let echo_thread = {
        let stop = stop.clone();
        std::thread::spawn(move || echo_server(echo, stop))
    };
    let client = udp_in(&tb, Side::Client, client_sock(ECHO_CLIENT_PORT))?;
    client.connect(server_sock(ECHO_PORT))?;
    sys::enable_rx_timestamps(&client)?;
    let expected = expected_rtt(&spec.link);
    client.set_read_timeout(Some(expected * 2 + Duration::from_secs(1)))?;
    let mut samples = Vec::new();
    let (mut holds, mut app, mut stamped) = (0.0, 0.0, 0);
    let mut lost = 0;
    let mut seq = 0u64;
    while samples.len() < plan.echo_samples && lost < plan.echo_samples * 10 + 10 {
        seq += 1;
        let mut probe = [0u8; ECHO_PAYLOAD];
        probe[..8].copy_from_slice(&seq.to_be_bytes());
        let (sent, sent_ns) = (Instant::now(), wall_ns());
        client.send(&probe)?;
        let mut buf = [0u8; 64];
        loop {
            match sys::recv_stamped(&client, &mut buf) {
                Ok((ECHO_PAYLOAD, stamp)) if buf[..8] == seq.to_be_bytes() => {
                    let app_ms = sent.elapsed().as_secs_f64() * 1e3;
                    let mut hold = [0u8; 8];
                    hold.copy_from_slice(&buf[8..16]);
                    let hold_ns = u64::from_be_bytes(hold);
                    let (sample, by_kernel) = echo_sample(sent_ns, stamp, app_ms, hold_ns);
                    samples.push(sample);
                    holds += hold_ns as f64 / 1e6;
                    app += app_ms;
                    stamped += usize::from(by_kernel);
                    break;
                }
                Ok(_) => continue, // a late echo of an earlier probe
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    lost += 1;
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        std::thread::sleep(ECHO_GAP);
    }
    stop.store(true, Ordering::Relaxed);
    let _ = echo_thread.join();
    tb.shutdown()?;
    if samples.is_empty() {
        return Err(io::Error::other(
            "no echo came back: the link loses everything",
        ));
    }
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    Ok(RttResult {
        spec: spec.link.rtt().as_secs_f64() * 1e3,
        expected: expected.as_secs_f64() * 1e3,
        measured: mean,
        min: samples.iter().cloned().fold(f64::INFINITY, f64::min),
        max: samples.iter().cloned().fold(0.0, f64::max),
        mdev: samples.iter().map(|s| (s - mean).abs()).sum::<f64>() / n,
        samples: samples.len(),
        lost,
        echo_hold: holds / n,
        app_measured: app / n,
        kernel_stamped: stamped,
    })
}

/// Segments whose delivery can fall on either side of a window's edge as the
/// sender sees it: one on the wire, two awaiting the receiver's delayed ACK.
const EDGE_SEGMENTS: f64 = 3.0;
/// How late the emulator may forward, or the sampler read TCP_INFO, at an edge
/// (a busy machine's scheduling delay), in seconds.
const EDGE_JITTER: f64 = 0.002;

/// What the sender's TCP knows has reached the receiver, at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delivery {
    /// Seconds since any fixed origin.
    pub at_s: f64,
    /// How far `at_s` may be from the instant the counters were read: half
    /// the time between the clock readings around the read (0 for a sample
    /// of known time).
    pub within_s: f64,
    /// Payload cumulatively acknowledged (tcpi_bytes_acked).
    pub bytes_acked: u64,
    /// Segments SACKed above the first hole (tcpi_sacked): they arrived, held by the receiver.
    pub sacked: u32,
    /// The sender's MSS (tcpi_snd_mss).
    pub mss: u32,
}

impl Delivery {
    /// Payload bytes that have reached the receiver.
    pub fn bytes(&self) -> u64 {
        self.bytes_acked + u64::from(self.sacked) * u64::from(self.mss)
    }
}

/// Goodput between two samples and its error (±), both in bit/s.
pub fn goodput(start: &Delivery, end: &Delivery) -> (f64, f64) {
    let window = (end.at_s - start.at_s).max(1e-9);
    let bytes = end.bytes().saturating_sub(start.bytes());
    let mss = f64::from(start.mss.max(end.mss));
    let bps = bytes as f64 * 8.0 / window;
    let late = EDGE_JITTER + (start.within_s + end.within_s) / 2.0;
    (bps, 2.0 * (EDGE_SEGMENTS * mss * 8.0 + bps * late) / window)
}

/// The sending socket's counters at one instant, `start`'s clock: read
/// between two readings of the clock, again (up to 20 times) while those are
/// more than 1 ms apart, and the narrowest kept, its midpoint the instant. On
/// a busy machine the thread may lose the core between reading the clock and
/// reading the socket, which would count bytes that arrived after the
/// instant the sample names. (Not the only cause of a goodput over the rate
/// under load: an emulator that runs late and catches up at a window's edge
/// is another, bounded only by `EDGE_JITTER`; seen at a load of 10.)
fn delivery_now(sender: &TcpStream, start: Instant) -> io::Result<Delivery> {
    let mut narrowest: Option<Delivery> = None;
    for _ in 0..20 {
        let before = start.elapsed().as_secs_f64();
        let d = delivery(sender, before)?;
        let within_s = (start.elapsed().as_secs_f64() - before) / 2.0;
        let d = Delivery {
            at_s: before + within_s,
            within_s,
            ..d
        };
        if narrowest.is_none_or(|n| d.within_s < n.within_s) {
            narrowest = Some(d);
        }
        if within_s < 0.0005 {
            break;
        }
    }
    Ok(narrowest.expect("one read at least"))
}

/// Reads the sending socket's TCP_INFO (Linux ≥ 4.1 for tcpi_bytes_acked).
fn delivery(sender: &TcpStream, at_s: f64) -> io::Result<Delivery> {
    let mut info = [0u64; 32];
    let len = sys::tcp_info(sender, &mut info)?;
    let bytes: Vec<u8> = info.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let u32_at = |o: usize| u32::from_ne_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
    let u64_at = |o: usize| u64::from_ne_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
    // Offsets in struct tcp_info (linux/tcp.h).
    if len < 128 {
        return Err(io::Error::other(
            "TCP_INFO lacks tcpi_bytes_acked (Linux 4.1 or later is needed)",
        ));
    }
    Ok(Delivery {
        at_s,
        within_s: 0.0,
        mss: u32_at(16),
        sacked: u32_at(28),
        bytes_acked: u64_at(120),
    })
}

fn measure_goodput(spec: &TestbedSpec, plan: &Plan, dir: Direction) -> io::Result<RateResult> {
    let tb = Testbed::start(spec.clone())?;
    // The sending side listens; the receiving side connects and reads.
    let (send_side, recv_side, listen_addr) = match dir {
        Direction::Down => (Side::Server, Side::Client, server_sock(BULK_PORT)),
        Direction::Up => (Side::Client, Side::Server, client_sock(BULK_PORT)),
    };
    let listener = tb
        .namespace(send_side)
        .run(move || TcpListener::bind(listen_addr))?;
    let stop = Arc::new(AtomicBool::new(false));
    let (sock_tx, sock_rx) = std::sync::mpsc::channel();
    let sender = {
        let stop = stop.clone();
        std::thread::spawn(move || -> io::Result<()> {
            let (mut s, _) = listener.accept()?;
            let _ = sock_tx.send(s.try_clone());
            let chunk = vec![0x5au8; 64 * 1024];
            while !stop.load(Ordering::Relaxed) {
                if s.write_all(&chunk).is_err() {
                    break;
                }
            }
            Ok(())
        })
    };
    let mut conn = tb
        .namespace(recv_side)
        .run(move || TcpStream::connect_timeout(&listen_addr, CONNECT_TIMEOUT))?;
    conn.set_read_timeout(Some(Duration::from_millis(50)))?;
    let sending = sock_rx
        .recv_timeout(CONNECT_TIMEOUT)
        .map_err(|_| io::Error::other("the bulk sender accepted no connection"))??;
    let warm = warmup(spec);
    let start = Instant::now();
    let cpu_start = tb.emulator_cpu();
    let mut buf = vec![0u8; 256 * 1024];
    let mut window_start_cpu = None;
    let mut window_start: Option<Delivery> = None;
    let mut window_end: Option<Delivery> = None;
    let mut wire_start = 0u64;
    let wire_bytes = |tb: &Testbed| {
        let s = tb.stats();
        match dir {
            Direction::Down => s.down.bytes_out,
            Direction::Up => s.up.bytes_out,
        }
    };
    loop {
        let elapsed = start.elapsed();
        if elapsed >= warm + plan.bulk_time {
            window_end = Some(delivery_now(&sending, start)?);
            break;
        }
        if elapsed >= warm && window_start.is_none() {
            window_start_cpu = Some(tb.emulator_cpu());
            wire_start = wire_bytes(&tb);
            window_start = Some(delivery_now(&sending, start)?);
        }
        match conn.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(e),
        }
    }
    let wire = wire_bytes(&tb) - wire_start;
    let cpu = tb.emulator_cpu() - window_start_cpu.unwrap_or(cpu_start);
    stop.store(true, Ordering::Relaxed);
    drop(conn);
    drop(sending);
    let _ = sender.join();
    tb.shutdown()?;
    let (Some(first), Some(last)) = (window_start, window_end) else {
        return Err(io::Error::other(
            "the bulk transfer ended before its measured window",
        ));
    };
    let (measured, error_bps) = goodput(&first, &last);
    let window = (last.at_s - first.at_s).max(1e-9);
    let rate = spec.link.direction(dir).service.bits_per_sec();
    Ok(RateResult {
        spec: rate,
        measured,
        error_bps,
        ratio: rate.map(|r| measured / r),
        tcp_ceiling: rate.map(|r| r * 1448.0 / 1500.0),
        udp_ceiling: None,
        wire_bps: wire as f64 * 8.0 / window,
        window_s: window,
        warmup_s: warm.as_secs_f64(),
        emulator_cpu_pct: 100.0 * cpu.as_secs_f64() / window,
    })
}

/// A UDP flow's datagram: a 1500-byte IP packet (20 B IPv4 + 8 B UDP headers).
const UDP_PACKET: usize = 1500;
const UDP_PAYLOAD: usize = UDP_PACKET - IPV4_HEADER - UDP_HEADER;
/// What an unshaped direction is offered (the emulator's own limit shows as less).
const UNSHAPED_OFFER_BPS: f64 = 100e6;

/// A UDP flow needs no slow start: one round trip for the first datagrams to
/// arrive and a quarter second for the queue and the threads to settle.
fn udp_warmup(spec: &TestbedSpec) -> Duration {
    spec.link.rtt() + Duration::from_millis(250)
}

/// Goodput of a paced UDP flow in direction `dir`: full-size datagrams offered
/// at 110 % of the direction's rate (100 Mbit/s unshaped) for the warm-up and
/// the window; the receiver counts the payload that arrives inside the window,
/// by its own clock. Error (±): one datagram at each edge, and 2 ms of
/// scheduling delay at each.
fn measure_udp_goodput(spec: &TestbedSpec, plan: &Plan, dir: Direction) -> io::Result<RateResult> {
    let tb = Testbed::start(spec.clone())?;
    let (send_side, recv_side, send_addr, recv_addr) = match dir {
        Direction::Down => (
            Side::Server,
            Side::Client,
            server_sock(0),
            client_sock(BULK_PORT),
        ),
        Direction::Up => (
            Side::Client,
            Side::Server,
            client_sock(0),
            server_sock(BULK_PORT),
        ),
    };
    let rx = udp_in(&tb, recv_side, recv_addr)?;
    rx.set_read_timeout(Some(Duration::from_millis(20)))?;
    let tx = udp_in(&tb, send_side, send_addr)?;
    tx.connect(recv_addr)?;
    let rate = spec.link.direction(dir).service.bits_per_sec();
    let offered = rate.map_or(UNSHAPED_OFFER_BPS, |r| r * 1.1);
    let interval = Duration::from_secs_f64((UDP_PACKET * 8) as f64 / offered);
    let warm = udp_warmup(spec);
    let start = Instant::now();
    let (open, close) = (start + warm, start + warm + plan.bulk_time);
    let receiver = std::thread::spawn(move || {
        let mut buf = vec![0u8; 2048];
        let mut bytes = 0u64;
        while Instant::now() < close {
            if let Ok(n) = rx.recv(&mut buf) {
                let at = Instant::now();
                if at >= open && at < close {
                    bytes += n as u64;
                }
            }
        }
        bytes
    });
    let sender = std::thread::spawn(move || {
        let payload = vec![0x5au8; UDP_PAYLOAD];
        let mut due = start;
        let mut sent = 0u64;
        while due < close {
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
            // Every datagram now due (a late wake-up catches up, keeping the mean rate).
            while due <= Instant::now() && due < close {
                // A full socket buffer drops the datagram, as a full queue would.
                let _ = tx.send(&payload);
                sent += 1;
                due += interval;
            }
        }
        sent
    });
    let wire_bytes = |tb: &Testbed| {
        let s = tb.stats();
        match dir {
            Direction::Down => s.down.bytes_out,
            Direction::Up => s.up.bytes_out,
        }
    };
    std::thread::sleep(open.saturating_duration_since(Instant::now()));
    let (wire0, cpu0) = (wire_bytes(&tb), tb.emulator_cpu());
    std::thread::sleep(close.saturating_duration_since(Instant::now()));
    let (wire1, cpu1) = (wire_bytes(&tb), tb.emulator_cpu());
    let bytes = receiver
        .join()
        .map_err(|_| io::Error::other("the UDP receiver panicked"))?;
    let _sent = sender
        .join()
        .map_err(|_| io::Error::other("the UDP sender panicked"))?;
    tb.shutdown()?;
    let window = plan.bulk_time.as_secs_f64();
    let measured = bytes as f64 * 8.0 / window;
    Ok(RateResult {
        spec: rate,
        measured,
        error_bps: 2.0 * ((UDP_PAYLOAD * 8) as f64 + measured * EDGE_JITTER) / window,
        ratio: rate.map(|r| measured / r),
        tcp_ceiling: None,
        udp_ceiling: rate.map(|r| r * UDP_PAYLOAD as f64 / UDP_PACKET as f64),
        wire_bps: (wire1 - wire0) as f64 * 8.0 / window,
        window_s: window,
        warmup_s: warm.as_secs_f64(),
        emulator_cpu_pct: 100.0 * (cpu1 - cpu0).as_secs_f64() / window,
    })
}

fn measure_loss(spec: &TestbedSpec, plan: &Plan) -> io::Result<LossResult> {
    let tb = Testbed::start(spec.clone())?;
    let interval = datagram_interval(spec);
    let count = |side: Side,
                 addr: SocketAddr|
     -> io::Result<(Arc<AtomicU64>, std::thread::JoinHandle<()>, Arc<AtomicBool>)> {
        let sock = udp_in(&tb, side, addr)?;
        sock.set_read_timeout(Some(Duration::from_millis(50)))?;
        // Room for every datagram, should the counting thread be late to run.
        sys::set_receive_buffer(&sock, plan.datagrams * 1024)?;
        let got = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (g, s) = (got.clone(), stop.clone());
        let t = std::thread::spawn(move || {
            let mut buf = [0u8; 64];
            while !s.load(Ordering::Relaxed) {
                if let Ok(LOSS_PAYLOAD) = sock.recv(&mut buf) {
                    g.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
        Ok((got, t, stop))
    };
    let (got_up, t_up, stop_up) = count(Side::Server, server_sock(DISCARD_PORT))?;
    let (got_down, t_down, stop_down) = count(Side::Client, client_sock(DISCARD_PORT))?;
    let to_server = udp_in(&tb, Side::Client, client_sock(0))?;
    to_server.connect(server_sock(DISCARD_PORT))?;
    let to_client = udp_in(&tb, Side::Server, server_sock(0))?;
    to_client.connect(client_sock(DISCARD_PORT))?;
    // Paced from the last send, never catching up: the pace is 90 % of the
    // rate, so a sender that fell behind (a busy machine) and sent its
    // backlog at once would fill the queue, and its tail drops would count
    // as the link's loss.
    let mut due = Instant::now();
    for i in 0..plan.datagrams {
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        let seq = (i as u64).to_be_bytes();
        to_server.send(&seq)?;
        to_client.send(&seq)?;
        due = due.max(now) + interval;
    }
    std::thread::sleep(expected_rtt(&spec.link) + LOSS_GRACE);
    for s in [&stop_up, &stop_down] {
        s.store(true, Ordering::Relaxed);
    }
    let _ = (t_up.join(), t_down.join());
    tb.shutdown()?;
    let n = plan.datagrams as f64;
    let up = 1.0 - got_up.load(Ordering::Relaxed) as f64 / n;
    let down = 1.0 - got_down.load(Ordering::Relaxed) as f64 / n;
    let p = (spec.link.up.loss.mean_loss() + spec.link.down.loss.mean_loss()) / 2.0;
    let measured = (up + down) / 2.0;
    let ci99 = binomial_ci99(2.0 * n, p);
    Ok(LossResult {
        spec: p,
        measured,
        up,
        down,
        sent_each_way: plan.datagrams,
        inside_ci99: ci99[0] <= measured && measured <= ci99[1],
        ci99,
    })
}

/// The 99 % interval of a binomial proportion with `n` trials at probability `p`
/// (normal approximation, widened by one trial each side for small counts).
pub fn binomial_ci99(n: f64, p: f64) -> [f64; 2] {
    let sd = (n * p * (1.0 - p)).sqrt();
    let lo = ((n * p - 2.576 * sd - 1.0) / n).max(0.0);
    let hi = ((n * p + 2.576 * sd + 1.0) / n).min(1.0);
    [lo, hi]
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE: f64 = 8e6;
    const MSS: u32 = 1448;
    /// One full segment's time on the wire (1500 bytes with headers).
    const SLOT: f64 = 1500.0 * 8.0 / RATE;

    /// A bulk transfer over a link at RATE whose segment `lost` is dropped and
    /// retransmitted `late` slots later: which segment arrives in each slot.
    fn arrivals(slots: usize, lost: usize, late: usize) -> Vec<usize> {
        let mut order: Vec<usize> = (0..slots).filter(|&s| s != lost).collect();
        order.insert(lost + late, lost);
        order.truncate(slots);
        order
    }

    /// After the first `n` slots: (payload the receiver's application could have
    /// read in order, the sender's view of it).
    fn state(order: &[usize], n: usize) -> (u64, Delivery) {
        let mut got = vec![false; order.len() + 1];
        for &s in &order[..n] {
            got[s] = true;
        }
        let in_order = got.iter().position(|g| !g).unwrap_or(got.len());
        let sacked = got[in_order..].iter().filter(|g| **g).count() as u32;
        let bytes_acked = in_order as u64 * u64::from(MSS);
        (
            bytes_acked,
            Delivery {
                at_s: n as f64 * SLOT,
                within_s: 0.0,
                bytes_acked,
                sacked,
                mss: MSS,
            },
        )
    }

    #[test]
    fn a_hole_across_the_window_start_cannot_lift_goodput_above_the_ceiling() {
        // 8 Mbit/s, a 2 s window; a loss 100 slots (150 ms) before the window
        // starts, filled 200 slots later: the receiver reads those 200 segments
        // in one burst inside the window though they crossed the link before it.
        let window = (2.0 / SLOT) as usize;
        let (lost, start) = (1000, 1100);
        let order = arrivals(start + window + 10, lost, 200);
        let (read0, d0) = state(&order, start);
        let (read1, d1) = state(&order, start + window);
        let ceiling = RATE * f64::from(MSS) / 1500.0;
        let secs = d1.at_s - d0.at_s;
        let read_bps = (read1 - read0) as f64 * 8.0 / secs;
        assert!(
            read_bps > ceiling * 1.05,
            "what the application read: {read_bps} (the old arithmetic) over {ceiling}"
        );
        let (bps, err) = goodput(&d0, &d1);
        assert!(bps <= ceiling + err, "{bps} ± {err} over {ceiling}");
        assert!(bps >= ceiling - err, "{bps} ± {err} under {ceiling}");
        // The stated error of a quick calibration (2 s at 8 Mbit/s) is under 1 %.
        assert!(err < 0.01 * RATE, "{err}");
    }

    fn link(up: Service, down: Service) -> LinkSpec {
        let dir = |service| link::DirectionSpec {
            service,
            delay: Duration::from_millis(75),
            ..Default::default()
        };
        LinkSpec {
            up: dir(up),
            down: dir(down),
        }
    }

    fn rate(s: &str) -> Service {
        Service::Rate(s.parse().expect("a rate"))
    }

    /// The expectation counts the probe's whole IP packet (20 B IPv4 + 8 B UDP
    /// + 16 B payload = 44 B) at each direction's rate, as the link charges it.
    #[test]
    fn expected_rtt_is_the_delays_plus_the_probes_ip_packet_each_way() {
        assert_eq!(ECHO_WIRE_BYTES, 44);
        let ms = |l: &LinkSpec| expected_rtt(l).as_secs_f64() * 1e3;
        // 44 B = 352 bits: 5.5 ms at 64 kbit, 0.352 ms at 1 Mbit, 0.044 ms at 8 Mbit.
        for (r, want) in [("64kbit", 161.0), ("1mbit", 150.704), ("8mbit", 150.088)] {
            let l = link(rate(r), rate(r));
            assert!((ms(&l) - want).abs() < 1e-9, "{r}: {}", ms(&l));
        }
        let asymmetric = link(rate("1mbit"), rate("8mbit"));
        assert!((ms(&asymmetric) - 150.396).abs() < 1e-9);
        let unlimited = link(Service::Unlimited, Service::Unlimited);
        assert_eq!(expected_rtt(&unlimited), Duration::from_millis(150));
    }

    fn rtt(expected: f64, measured: f64, mdev: f64) -> RttResult {
        RttResult {
            spec: 150.0,
            expected,
            measured,
            min: measured - mdev,
            max: measured + mdev,
            mdev,
            samples: 50,
            lost: 0,
            echo_hold: 0.05,
            app_measured: measured + 0.2,
            kernel_stamped: 50,
        }
    }

    #[test]
    fn a_busy_machine_is_named_only_beyond_the_emulators_tolerance() {
        let l = link(rate("1mbit"), rate("1mbit"));
        // A quiet machine (+0.15 ms) and the edge itself: no warning.
        assert_eq!(
            rtt_strain(&rtt(150.704, 150.854, 0.05), &l, Some(0.1), 2),
            None
        );
        assert_eq!(rtt_strain(&rtt(150.704, 151.204, 0.5), &l, None, 2), None);
        // +0.63 ms (a build beside it), or a wide spread at a good mean: warned.
        let busy = rtt_strain(&rtt(150.704, 151.334, 0.3), &l, Some(2.31), 2).expect("busy");
        assert!(
            busy.contains("+0.630 ms") && busy.contains("load average 2.31 on 2 cores"),
            "{busy}"
        );
        assert!(rtt_strain(&rtt(150.704, 150.9, 0.8), &l, None, 1).is_some());
        // A trace's expectation is only a lower bound: never warned on.
        let trace = link::Trace::constant(1, 1);
        let traced = link(Service::Trace(std::sync::Arc::new(trace)), rate("1mbit"));
        assert_eq!(
            rtt_strain(&rtt(150.352, 155.0, 2.0), &traced, None, 2),
            None
        );
    }

    #[test]
    fn an_echo_sample_is_the_kernels_time_less_the_hold_or_the_threads_own() {
        let sent = 1_000_000_000_000u128;
        // Stamped 150.8 ms after the send, seen 151.0 ms after it, held 0.1 ms.
        let (ms, kernel) = echo_sample(sent, Some(sent + 150_800_000), 151.0, 100_000);
        assert!(kernel && (ms - 150.7).abs() < 1e-9, "{ms}");
        // No stamp, or one before the send (a clock step): the thread's clock.
        for stamp in [None, Some(sent - 1)] {
            let (ms, kernel) = echo_sample(sent, stamp, 151.0, 100_000);
            assert!(!kernel && (ms - 150.9).abs() < 1e-9, "{ms}");
        }
    }

    #[test]
    fn goodput_of_nothing_or_a_backwards_sample_is_zero_not_a_panic() {
        let d = Delivery {
            at_s: 1.0,
            within_s: 0.0,
            bytes_acked: 10_000,
            sacked: 3,
            mss: MSS,
        };
        let earlier = Delivery {
            bytes_acked: 20_000,
            ..d
        };
        assert_eq!(goodput(&d, &d).0, 0.0);
        assert_eq!(goodput(&earlier, &d).0, 0.0);
        assert!(goodput(&d, &d).1.is_finite());
        // A sample read late by up to 10 ms states a larger error.
        let end = Delivery {
            at_s: 3.0,
            bytes_acked: 2_000_000,
            ..d
        };
        let read_late = Delivery {
            within_s: 0.010,
            ..end
        };
        let (bps, sure) = goodput(&d, &end);
        let (same, unsure) = goodput(&d, &read_late);
        assert_eq!(bps, same);
        assert!(
            (unsure - sure - 2.0 * bps * 0.005 / 2.0).abs() < 1e-6,
            "{sure} {unsure}"
        );
    }
}
