//! `spdylab bench`'s engine: a throughput generator that measures every
//! protocol the same way. Closed loop by default (as wrk and h2load); with a
//! rate, open loop with coordinated-omission correction (as wrk2: latency is
//! measured from when a request *should* have been sent). HTTP/1.1 with a
//! pipelining depth, HTTP/2 and SPDY with concurrent streams, either over
//! TLS, and HTTP/3 over QUIC (quinn + h3, module `quic`) with concurrent streams. Every
//! response is checked (status, and body length against the expected one; the
//! i-th pipelined response is matched to the i-th request), so that a broken
//! server cannot look fast. A close the server announces (HTTP/1.1
//! `Connection: close`, an HTTP/2 or SPDY GOAWAY without error) is a
//! reconnect, not an error, as wrk takes it; requests it leaves unanswered
//! (pipelined behind the close, or streams above the GOAWAY's last one) are
//! errors. The framing and the sessions are proto's (`h1`, `spdy3`, and `h2`:
//! a lean HTTP/2 client connection, hand-written for CPU per request). In
//! closed loop, HTTP/1.1 on plain TCP wakes once per pipeline (or whole
//! answer) through the socket's receive low-water mark (`ReadLowWater`), and
//! a multiplexed session refills its free streams a quarter at a time
//! (`refill_due`).

mod quic;

use proto::h1;
use proto::Protocol;

use hdrhistogram::Histogram;
use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

/// One path to request, and the body length a correct server sends for it
/// (None: the first response's length, which every later one must match).
#[derive(Debug, Clone)]
pub struct PathSpec {
    pub path: String,
    pub expect_len: Option<u64>,
}

#[derive(Clone)]
pub struct BenchSpec {
    pub addr: SocketAddr,
    /// Host header / :authority, and the TLS server name.
    pub host: String,
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// HTTP/1.1 (with or without TLS, pipelined by `depth`), h2, h2c or spdy3.
    pub protocol: Protocol,
    pub connections: usize,
    /// HTTP/1.1 requests in flight per connection (1 = no pipelining).
    pub depth: usize,
    /// HTTP/2 streams in flight per connection.
    pub streams: usize,
    pub threads: usize,
    pub duration: Duration,
    pub warmup: Duration,
    /// Requests per second over all connections: open loop. None: closed loop.
    pub rate: Option<f64>,
    pub paths: Vec<PathSpec>,
    pub expect_status: u16,
    /// A request without an answer for this long is an error (and its connection is reopened).
    pub timeout: Duration,
}

/// A second of the measured run.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Second {
    pub t: u64,
    pub requests: u64,
    pub bytes: u64,
    pub errors: u64,
}

pub struct BenchResult {
    pub requests: u64,
    pub bytes: u64,
    pub errors: BTreeMap<String, u64>,
    /// Latency in microseconds of every counted request.
    pub latency: Histogram<u64>,
    pub per_second: Vec<Second>,
    /// The measured window (after the warm-up).
    pub elapsed: Duration,
    /// CPU seconds of this process (user + system) over the whole run.
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
    pub reconnects: u64,
}

impl BenchResult {
    pub fn requests_per_sec(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    pub fn errors_total(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// Counters shared by every connection, sampled each second.
struct Shared {
    requests: AtomicU64,
    bytes: AtomicU64,
    errors: AtomicU64,
    reconnects: AtomicU64,
    error_kinds: Mutex<BTreeMap<String, u64>>,
    histograms: Mutex<Vec<Histogram<u64>>>,
    stop: AtomicBool,
    /// Per path: the body length a correct response has (UNKNOWN until the first one).
    expected: Vec<AtomicU64>,
}

const UNKNOWN: u64 = u64::MAX;

impl Shared {
    fn error(&self, kind: &str, measuring: bool) {
        if measuring {
            self.errors.fetch_add(1, Ordering::Relaxed);
            *self
                .error_kinds
                .lock()
                .unwrap()
                .entry(kind.to_string())
                .or_default() += 1;
        }
    }
}

/// The run's clock: when measuring starts and ends.
#[derive(Clone, Copy)]
struct Window {
    start: Instant,
    measure: Instant,
    end: Instant,
}

fn new_histogram() -> Histogram<u64> {
    // 1 µs to 1 hour, 3 significant digits.
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds")
}

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Runs the benchmark on its own runtime; blocks until it ends.
pub fn run(spec: BenchSpec) -> io::Result<BenchResult> {
    if spec.protocol == Protocol::H3 && spec.tls.is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "h3 needs a TLS configuration (QUIC carries TLS 1.3)",
        ));
    }
    if spec.paths.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no path to request",
        ));
    }
    let threads = spec.threads.max(1).min(spec.connections.max(1));
    // One current-thread runtime per generator thread, each driving its own
    // share of the connections (as wrk's threads do): no work stealing, no
    // cross-thread wake-ups, no task migrating between cores.
    let runtimes = (0..threads)
        .map(|_| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        })
        .collect::<io::Result<Vec<_>>>()?;
    let shared = Arc::new(Shared {
        requests: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        reconnects: AtomicU64::new(0),
        error_kinds: Mutex::new(BTreeMap::new()),
        histograms: Mutex::new(Vec::new()),
        stop: AtomicBool::new(false),
        expected: spec
            .paths
            .iter()
            .map(|p| AtomicU64::new(p.expect_len.unwrap_or(UNKNOWN)))
            .collect(),
    });
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let window = Window {
        start,
        measure: start + spec.warmup,
        end: start + spec.warmup + spec.duration,
    };
    let spec = Arc::new(spec);
    let per_second = std::thread::scope(|scope| {
        for (t, runtime) in runtimes.into_iter().enumerate() {
            let (spec, shared) = (spec.clone(), shared.clone());
            // Threads made here inherit this thread's network namespace.
            scope.spawn(move || {
                // The thread's connections are local tasks, so that they can
                // share its one latency histogram (about 190 KB: one per
                // connection was most of the memory at `-c 1000`).
                let local = tokio::task::LocalSet::new();
                local.block_on(&runtime, async {
                    let latency = Rc::new(RefCell::new(new_histogram()));
                    let tasks: Vec<_> = connections_of(t, threads, spec.connections)
                        .map(|c| {
                            let (spec, shared) = (spec.clone(), shared.clone());
                            let rec = Recorder::new(latency.clone());
                            tokio::task::spawn_local(connection(c, spec, shared, window, rec))
                        })
                        .collect();
                    for task in tasks {
                        let _ = task.await;
                    }
                    shared
                        .histograms
                        .lock()
                        .unwrap()
                        .push(latency.replace(new_histogram()));
                });
                runtime.shutdown_timeout(Duration::from_secs(1));
            });
        }
        // Sample the counters once a second of the measured window.
        let snap = |s: &Shared| {
            (
                s.requests.load(Ordering::Relaxed),
                s.bytes.load(Ordering::Relaxed),
                s.errors.load(Ordering::Relaxed),
            )
        };
        let sleep_until =
            |t: Instant| std::thread::sleep(t.saturating_duration_since(Instant::now()));
        let mut series = Vec::new();
        sleep_until(window.measure);
        let mut last = snap(&shared);
        let mut t = 0;
        while Instant::now() < window.end {
            let next = (window.measure + Duration::from_secs(t + 1)).min(window.end);
            sleep_until(next);
            let now = snap(&shared);
            t += 1;
            series.push(Second {
                t,
                requests: now.0 - last.0,
                bytes: now.1 - last.1,
                errors: now.2 - last.2,
            });
            last = now;
        }
        shared.stop.store(true, Ordering::Relaxed);
        series
    });
    let wall = start.elapsed();
    let mut latency = new_histogram();
    for h in shared.histograms.lock().unwrap().iter() {
        let _ = latency.add(h);
    }
    let errors = shared.error_kinds.lock().unwrap().clone();
    Ok(BenchResult {
        requests: shared.requests.load(Ordering::Relaxed),
        bytes: shared.bytes.load(Ordering::Relaxed),
        errors,
        latency,
        per_second,
        elapsed: window.end - window.measure,
        cpu_seconds: cpu_seconds() - cpu0,
        wall_seconds: wall.as_secs_f64(),
        reconnects: shared.reconnects.load(Ordering::Relaxed),
    })
}

/// The connections generator thread `t` of `threads` drives: every
/// `threads`-th one, so that each thread has its share (±1).
fn connections_of(t: usize, threads: usize, connections: usize) -> impl Iterator<Item = usize> {
    (t..connections).step_by(threads.max(1))
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// An open connection.
struct Opened {
    io: Box<dyn Io>,
    /// Its socket, when the bytes on it are the plain HTTP bytes (no TLS):
    /// for `ReadLowWater`.
    plain_fd: Option<RawFd>,
}

async fn open(spec: &BenchSpec) -> Result<Opened, &'static str> {
    let tcp = TcpStream::connect(spec.addr).await.map_err(|_| "connect")?;
    let _ = tcp.set_nodelay(true);
    match &spec.tls {
        None => {
            let plain_fd = Some(tcp.as_raw_fd());
            Ok(Opened {
                io: Box::new(tcp),
                plain_fd,
            })
        }
        Some(config) => {
            let name =
                rustls::pki_types::ServerName::try_from(spec.host.clone()).map_err(|_| "tls")?;
            let tls = tokio_rustls::TlsConnector::from(config.clone())
                .connect(name, tcp)
                .await
                .map_err(|_| "tls")?;
            Ok(Opened {
                io: Box::new(tls),
                plain_fd: None,
            })
        }
    }
}

/// The open-loop schedule of one connection: request k is due at
/// start + phase + k × interval, spread so that connections interleave.
struct Schedule {
    next: Instant,
    interval: Duration,
}

impl Schedule {
    fn new(spec: &BenchSpec, conn: usize, start: Instant) -> Option<Schedule> {
        let rate = spec.rate?;
        let per_conn = rate / spec.connections as f64;
        let interval = Duration::from_secs_f64(1.0 / per_conn);
        let phase = interval.mul_f64(conn as f64 / spec.connections as f64);
        Some(Schedule {
            next: start + phase,
            interval,
        })
    }
    fn take(&mut self) -> Instant {
        let t = self.next;
        self.next += self.interval;
        t
    }
}

/// Open loop: moves the requests that fell due by `now` from the schedule into
/// `due` (each keeps the instant it was due, from which its latency counts).
fn take_due(schedule: &Option<Arc<Mutex<Schedule>>>, now: Instant, due: &mut VecDeque<Instant>) {
    if let Some(s) = schedule {
        let mut s = s.lock().unwrap();
        while s.next <= now {
            due.push_back(s.take());
        }
    }
}

/// One connection for the whole run, reopened after an error (as wrk does).
async fn connection(
    conn: usize,
    spec: Arc<BenchSpec>,
    shared: Arc<Shared>,
    window: Window,
    mut rec: Recorder,
) {
    let schedule = Schedule::new(&spec, conn, window.start).map(|s| Arc::new(Mutex::new(s)));
    let mut counter = conn; // which path comes next
    let mut first = true;
    while !shared.stop.load(Ordering::Relaxed) && Instant::now() < window.end {
        if !first {
            shared.reconnects.fetch_add(1, Ordering::Relaxed);
        }
        first = false;
        let measuring = Instant::now() >= window.measure;
        if spec.protocol == Protocol::H3 {
            let result = match quic::open(&spec).await {
                Ok(c) => {
                    quic::run(c, &spec, &shared, window, &mut rec, &schedule, &mut counter).await
                }
                Err(kind) => {
                    shared.error(kind, measuring);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            };
            if let Err(kind) = result {
                let now = Instant::now();
                shared.error(kind, now >= window.measure && now < window.end);
            }
            continue;
        }
        let opened = match open(&spec).await {
            Ok(opened) => opened,
            Err(kind) => {
                shared.error(kind, measuring);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let result = match spec.protocol {
            Protocol::Http
            | Protocol::Https
            | Protocol::HttpPipelined
            | Protocol::HttpsPipelined => {
                h1_loop(
                    opened,
                    &spec,
                    &shared,
                    window,
                    &mut rec,
                    &schedule,
                    &mut counter,
                )
                .await
            }
            Protocol::Spdy3 => {
                spdy_loop(
                    opened.io,
                    &spec,
                    &shared,
                    window,
                    &mut rec,
                    &schedule,
                    &mut counter,
                )
                .await
            }
            Protocol::H3 => unreachable!("h3 runs over QUIC, above"),
            Protocol::H2 | Protocol::H2c => {
                h2_loop(
                    opened.io,
                    &spec,
                    &shared,
                    window,
                    &mut rec,
                    &schedule,
                    &mut counter,
                )
                .await
            }
        };
        if let Err(kind) = result {
            let now = Instant::now();
            shared.error(kind, now >= window.measure && now < window.end);
        }
    }
    rec.flush(&shared);
}

/// A task's own tally, flushed into the shared counters now and then so that
/// connections do not contend on every response, and its thread's latency
/// histogram.
struct Recorder {
    hist: Rc<RefCell<Histogram<u64>>>,
    requests: u64,
    bytes: u64,
}

impl Recorder {
    fn new(hist: Rc<RefCell<Histogram<u64>>>) -> Recorder {
        Recorder {
            hist,
            requests: 0,
            bytes: 0,
        }
    }

    /// Checks a response and counts it if it started inside the measured window.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &mut self,
        spec: &BenchSpec,
        shared: &Shared,
        window: Window,
        path: usize,
        since: Instant,
        now: Instant,
        status: u16,
        body: u64,
    ) -> Result<(), &'static str> {
        let counted = since >= window.measure && now <= window.end;
        if status != spec.expect_status {
            shared.error("status", counted);
            return Ok(());
        }
        // The first correct response of a path sets its length, unless the spec gave it.
        let slot = &shared.expected[path];
        let mut expected = slot.load(Ordering::Relaxed);
        if expected == UNKNOWN {
            expected =
                match slot.compare_exchange(UNKNOWN, body, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => body,
                    Err(known) => known,
                };
        }
        if expected != body {
            // A wrong length means this connection's framing cannot be trusted.
            shared.error("length", counted);
            return Err("length-reset");
        }
        if counted {
            self.requests += 1;
            self.bytes += body;
            let _ = self
                .hist
                .borrow_mut()
                .record((now - since).as_micros().max(1) as u64);
        }
        Ok(())
    }

    /// Flushes every 64 requests or 100 ms (`flushed`: when it last did),
    /// not on every read: the shared counters are read once a second.
    fn flush_now_and_then(&mut self, shared: &Shared, now: Instant, flushed: &mut Instant) {
        if self.requests >= 64 || now - *flushed >= Duration::from_millis(100) {
            self.flush(shared);
            *flushed = now;
        }
    }

    fn flush(&mut self, shared: &Shared) {
        if self.requests > 0 {
            shared.requests.fetch_add(self.requests, Ordering::Relaxed);
            shared.bytes.fetch_add(self.bytes, Ordering::Relaxed);
            self.requests = 0;
            self.bytes = 0;
        }
    }
}

/// Each path's request, written once.
fn requests(spec: &BenchSpec) -> Vec<Vec<u8>> {
    spec.paths
        .iter()
        .map(|p| {
            format!(
                "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: spdylab-bench\r\nAccept: */*\r\n\r\n",
                p.path, spec.host
            )
            .into_bytes()
        })
        .collect()
}

/// A closed-loop pipeline on plain TCP wakes its reader once per pipeline, not
/// once per answer (or part of one): the socket's receive low-water mark
/// (SO_RCVLOWAT) is set to the fewest bytes the answers still in flight can
/// take, from the smallest answer seen on the connection, so epoll reports
/// the socket readable when the pipeline can be complete. Without it, a
/// generator faster than the server woke for every answer or two the
/// server wrote (3.7 reads and 2.6
/// epoll waits per pipeline of 8 against nginx; wrk took 1.8 and 0.8). Each
/// answer is still stamped when it is read, so the first answers of a
/// pipeline are stamped when the last one is: wrk likewise records one
/// latency per pipeline. The mark is a lower bound, so it can only be too
/// high if an answer is smaller than every one before (an error page): then
/// after GUARD without progress it drops to one byte, and lowering it makes
/// the kernel wake the reader if the bytes are there. Not used under TLS (the
/// TLS layer buffers ciphertext the mark cannot account for) nor in open loop
/// (where each answer's latency counts from when its request was due).
/// A connection without pipelining takes it too: nginx writes a small
/// file's headers and body in two calls (writev, then sendfile), and a
/// reader that wakes for the first reads the answer in two halves. Against
/// nginx (h1, 32 connections, `perf stat` over 5 s, 25 Nov 2026): 1.23-1.27
/// reads and 1.21-1.24 epoll waits per answer before, 1.00 and 0.86-0.87
/// with the mark.
struct ReadLowWater {
    fd: RawFd,
    mark: u64,
    /// The kernel refused the option once: do not ask again.
    refused: bool,
}

impl ReadLowWater {
    const GUARD: Duration = Duration::from_millis(10);
    /// Far below any receive buffer: the mark never holds back a window.
    const CAP: u64 = 64 * 1024;

    fn new(fd: RawFd) -> ReadLowWater {
        // The kernel's default mark is one byte.
        ReadLowWater {
            fd,
            mark: 1,
            refused: false,
        }
    }

    /// Sets the mark to `bytes` (at least 1, at most CAP) if it is not that already.
    fn set(&mut self, bytes: u64) {
        let bytes = bytes.clamp(1, Self::CAP);
        if bytes == self.mark || self.refused {
            return;
        }
        let value = bytes as libc::c_int;
        // SAFETY: the fd is the connection's socket, open for as long as the
        // loop that owns this runs; the option value is a c_int we pass by pointer.
        let rc = unsafe {
            libc::setsockopt(
                self.fd,
                libc::SOL_SOCKET,
                libc::SO_RCVLOWAT,
                &value as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        // A kernel that refuses keeps its mark of one byte: wake per answer.
        if rc == 0 {
            self.mark = bytes;
        } else {
            self.refused = true;
        }
    }

    /// The reader waits for more than one byte.
    fn holding(&self) -> bool {
        self.mark > 1
    }
}

/// A connection's read buffer: 16 KiB at first, and four times bigger (up to
/// 256 KiB) each time a read fills it. Small answers never touch more than
/// the first: 32 connections' buffers of 256 KiB made from the start cost
/// the process 8 MiB of fresh (huge) pages to fault in and zero, about 70 ms
/// of CPU (1.8 % of a 4 s run, `perf record`, 25 Nov 2026).
struct ReadBuffer {
    buf: Vec<u8>,
}

impl ReadBuffer {
    const FIRST: usize = 16 * 1024;
    const MOST: usize = 256 * 1024;

    fn new() -> ReadBuffer {
        ReadBuffer {
            buf: vec![0; Self::FIRST],
        }
    }

    /// Where the next read puts its bytes.
    fn space(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    /// The `n` bytes the last read put in; the buffer grows if they filled it.
    fn filled(&mut self, n: usize) -> &[u8] {
        if n == self.buf.len() && n < Self::MOST {
            self.buf.resize((n * 4).min(Self::MOST), 0);
        }
        &self.buf[..n]
    }
}

/// HTTP/1.1: keep `depth` requests in flight, written in one batch as slots free.
async fn h1_loop(
    opened: Opened,
    spec: &BenchSpec,
    shared: &Shared,
    window: Window,
    rec: &mut Recorder,
    schedule: &Option<Arc<Mutex<Schedule>>>,
    counter: &mut usize,
) -> Result<(), &'static str> {
    // One task reads and writes in turn: no split (and no lock per call).
    let Opened { mut io, plain_fd } = opened;
    let requests = requests(spec);
    // (path, counted from, sent at)
    let mut in_flight: VecDeque<(usize, Instant, Instant)> = VecDeque::with_capacity(spec.depth);
    // Open loop: requests due but not sent yet (their latency runs from when they were due).
    let mut due: VecDeque<Instant> = VecDeque::new();
    let mut decoder = h1::Decoder::default();
    let mut buf = ReadBuffer::new();
    let mut out = Vec::with_capacity(4096);
    // Two timers for the connection's life, reset rather than made anew each
    // time. (One timer moved only when it had to fire earlier, looked at again
    // when it fired early, cost more CPU per request against nginx, not less:
    // 13.1-14.0 µs in six runs against 10.7-12.0 in five of six (one 13.4),
    // 25 Nov 2026; the cause was not found.)
    let wake_timer = tokio::time::sleep_until(window.end.into());
    let deadline_timer = tokio::time::sleep_until((window.end + spec.timeout).into());
    tokio::pin!(wake_timer, deadline_timer);
    let (mut wake_at, mut deadline_at) = (window.end, window.end + spec.timeout);
    let mut flushed = Instant::now();
    // Closed loop on plain TCP wakes once per pipeline, or per whole answer
    // without pipelining (see ReadLowWater).
    let mut low_water = match plain_fd {
        Some(fd) if schedule.is_none() => Some(ReadLowWater::new(fd)),
        _ => None,
    };
    let mut progress_at = Instant::now();
    loop {
        let now = Instant::now();
        if now >= window.end || shared.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        // Send what the loop allows.
        out.clear();
        take_due(schedule, now, &mut due);
        // Refill in batches, as wrk does (when the pipeline has drained): one
        // write per `depth` requests. Refilling at half drained cost 10 %
        // more CPU per request (bench-generators h1x8: 0.86x wrk, now 0.95-0.98x).
        let refill = schedule.is_some() || in_flight.is_empty();
        while refill && in_flight.len() < spec.depth {
            let since = match schedule {
                None => now,
                Some(_) => match due.pop_front() {
                    Some(t) => t,
                    None => break,
                },
            };
            let path = *counter % requests.len();
            *counter += 1;
            out.extend_from_slice(&requests[path]);
            in_flight.push_back((path, since, now));
        }
        if !out.is_empty() {
            // TLS holds what the socket did not take yet until flushed.
            io.write_all(&out).await.map_err(|_| "write")?;
            io.flush().await.map_err(|_| "write")?;
            progress_at = now;
        }
        // Wait for bytes, the next due request, the end, or the timeout.
        let mut wake = match schedule {
            Some(s) if in_flight.len() < spec.depth => s.lock().unwrap().next.min(window.end),
            _ => window.end,
        };
        if let Some(lw) = low_water.as_mut() {
            let least = decoder.smallest_response().map_or(1, |smallest| {
                (in_flight.len() as u64 * smallest).saturating_sub(decoder.partial_bytes())
            });
            let guard = progress_at + ReadLowWater::GUARD;
            lw.set(if now < guard { least } else { 1 });
            if lw.holding() {
                wake = wake.min(guard);
            }
        }
        let deadline = in_flight
            .front()
            .map_or(window.end + spec.timeout, |(_, _, sent)| {
                *sent + spec.timeout
            });
        if wake != wake_at {
            wake_at = wake;
            wake_timer.as_mut().reset(wake.into());
        }
        if deadline != deadline_at {
            deadline_at = deadline;
            deadline_timer.as_mut().reset(deadline.into());
        }
        let n = tokio::select! {
            biased;
            r = io.read(buf.space()) => match r {
                Ok(0) => return Err(if in_flight.is_empty() { "closed" } else { "closed-mid-request" }),
                Ok(n) => n,
                Err(_) => return Err("reset"),
            },
            _ = &mut wake_timer => continue,
            _ = &mut deadline_timer, if !in_flight.is_empty() => {
                return Err("timeout");
            }
        };
        // Every response in this read completed now.
        let now = Instant::now();
        progress_at = now;
        let buf = buf.filled(n);
        let mut result = Ok(());
        let mut close = false;
        let decoded = decoder.decode(buf, &mut |r| {
            if result.is_err() || close {
                return;
            }
            let Some((path, since, _)) = in_flight.pop_front() else {
                result = Err("unrequested-response");
                return;
            };
            close = r.close;
            result = rec.finish(spec, shared, window, path, since, now, r.status, r.body);
        });
        rec.flush_now_and_then(shared, now, &mut flushed);
        decoded.map_err(|_| "bad-response")?;
        result?;
        if close {
            // Announced: a reconnect, not an error; but what was pipelined
            // behind the closing response is lost, and each loss is an error.
            for (_, since, _) in in_flight.drain(..) {
                shared.error(
                    "server-closed",
                    since >= window.measure && now <= window.end,
                );
            }
            return Ok(());
        }
    }
}

/// Closed loop on a multiplexed session (h2, h2c, spdy3): free streams are
/// refilled a quarter of the limit at a time (at least one), not one by one,
/// as a pipeline is refilled when drained. A generator faster than the
/// server otherwise wakes for every write the server makes and answers each
/// with a write of the few requests that just finished, and the server
/// answers those in as small a write: one response or a few per system call
/// each way. Batches of a quarter keep at least three quarters of the
/// streams in flight, so the server never waits for us, and each of our
/// writes carries enough requests for its answers to come in bigger reads.
/// Against nginx (1 worker, h2c, 32 connections, 100 streams, 8 s runs,
/// 25 Nov 2026): 79 423-87 969 requests per generator CPU-second refilled
/// one by one, 96 881-99 107 a quarter at a time (93 207-93 562 by halves),
/// requests per second unchanged (43-45 k/s). Latency counts from each
/// request's own send, so a request held for its batch is not charged for
/// the wait. Open loop sends each request when it is due, as before.
fn refill_due(in_flight: usize, max_open: usize) -> bool {
    in_flight + (max_open / 4).max(1) <= max_open
}

/// HTTP/2 on proto's lean sans-I/O client connection (`proto::h2`, hand-written
/// for the generator's CPU per request: see its module doc): `streams`
/// requests in flight on one connection, read and written by this one task.
/// A stream the server resets is a connection error, as a refused one
/// (REFUSED_STREAM) is a counted error; requests lost to a graceful GOAWAY
/// are errors and the connection is reopened once the rest are in.
async fn h2_loop(
    io: Box<dyn Io>,
    spec: &BenchSpec,
    shared: &Shared,
    window: Window,
    rec: &mut Recorder,
    schedule: &Option<Arc<Mutex<Schedule>>>,
    counter: &mut usize,
) -> Result<(), &'static str> {
    use proto::h2::{request_block, ClientConnection, Event, REFUSED_STREAM};
    let mut io = io;
    // Each request: (path, counted from, sent at).
    let mut conn = ClientConnection::<(usize, Instant, Instant)>::new(spec.streams);
    let scheme = if spec.tls.is_some() { "https" } else { "http" };
    let blocks: Vec<Vec<u8>> = spec
        .paths
        .iter()
        .map(|p| request_block(scheme, &spec.host, &p.path))
        .collect();
    let mut due: VecDeque<Instant> = VecDeque::new();
    let mut buf = ReadBuffer::new();
    // Timers made once and moved only when their time changes.
    let wake_timer = tokio::time::sleep_until(window.end.into());
    // Checks the oldest request's age now and then (moved only when it fires).
    let timeout_timer = tokio::time::sleep_until((Instant::now() + spec.timeout).into());
    tokio::pin!(wake_timer, timeout_timer);
    let mut wake_at = window.end;
    let mut flushed = Instant::now();
    let result = loop {
        let now = Instant::now();
        if now >= window.end || shared.stop.load(Ordering::Relaxed) {
            break Ok(());
        }
        take_due(schedule, now, &mut due);
        let draining = conn.going_away() || conn.exhausted();
        // A graceful GOAWAY (or stream ids used up): reconnect once the last one is in.
        if draining && conn.in_flight() == 0 {
            break Ok(());
        }
        if conn.in_flight() == 0 {
            timeout_timer.as_mut().reset((now + spec.timeout).into());
        }
        let refill = schedule.is_some() || refill_due(conn.in_flight(), conn.max_open());
        while refill && !draining && conn.in_flight() < conn.max_open() {
            let since = match schedule {
                None => now,
                Some(_) => match due.pop_front() {
                    Some(t) => t,
                    None => break,
                },
            };
            let path = *counter % blocks.len();
            *counter += 1;
            conn.request((path, since, now), &blocks[path]);
        }
        let out = conn.output();
        if !out.is_empty() {
            io.write_all(out).await.map_err(|_| "write")?;
            io.flush().await.map_err(|_| "write")?;
            out.clear();
        }
        let wake = match schedule {
            Some(s) if !draining && conn.in_flight() < conn.max_open() => {
                s.lock().unwrap().next.min(window.end)
            }
            _ => window.end,
        };
        if wake != wake_at {
            wake_at = wake;
            wake_timer.as_mut().reset(wake.into());
        }
        let n = tokio::select! {
            biased;
            r = io.read(buf.space()) => match r {
                Ok(0) if conn.in_flight() == 0 => break Ok(()),
                Ok(0) => break Err("closed-mid-request"),
                Ok(n) => n,
                Err(_) => break Err("h2-reset"),
            },
            _ = &mut wake_timer => continue,
            _ = &mut timeout_timer, if conn.in_flight() > 0 => {
                // A request unanswered for the timeout is an error; else
                // look again when the oldest one would be.
                let at = conn.oldest().map_or(window.end, |r| r.2 + spec.timeout);
                if Instant::now() >= at {
                    break Err("timeout");
                }
                timeout_timer.as_mut().reset(at.into());
                continue;
            }
        };
        let now = Instant::now();
        if let Err(e) = conn.receive(buf.filled(n)) {
            break Err(e.0);
        }
        let counted = now >= window.measure && now <= window.end;
        while let Some(event) = conn.poll_event() {
            match event {
                Event::Done {
                    req: (path, since, _),
                    status,
                    body,
                } => rec.finish(spec, shared, window, path, since, now, status, body)?,
                // Over the server's limit: an error, and the connection goes on.
                Event::Reset { code, .. } if code == REFUSED_STREAM => {
                    shared.error("refused", counted)
                }
                Event::Reset { .. } => return Err("h2-reset"),
                Event::GoAway { code, .. } if code != 0 => return Err("goaway"),
                Event::GoAway { .. } => {}
                // Lost to a graceful GOAWAY: this request is an error.
                Event::Lost(_) => shared.error("goaway", counted),
            }
        }
        rec.flush_now_and_then(shared, now, &mut flushed);
    };
    rec.flush(shared);
    result
}

/// SPDY/3.1 on proto's sans-I/O session: `streams` requests in flight on one
/// session, Chrome's 10 MiB receive windows kept open. A stream the server
/// refuses is an error (and the session keeps below its limit from then on).
async fn spdy_loop(
    io: Box<dyn Io>,
    spec: &BenchSpec,
    shared: &Shared,
    window: Window,
    rec: &mut Recorder,
    schedule: &Option<Arc<Mutex<Schedule>>>,
    counter: &mut usize,
) -> Result<(), &'static str> {
    use proto::spdy3::client::{Event, StreamError};
    use proto::spdy3::{ClientSession, Headers};
    const RECEIVE_WINDOW: u32 = 10 * 1024 * 1024;
    // One task reads and writes in turn: no split (and no lock per call).
    let mut io = io;
    let mut session = ClientSession::<u64>::new(RECEIVE_WINDOW)
        .with_max_streams(spec.streams)
        .report_refused();
    let scheme = if spec.tls.is_some() { "https" } else { "http" };
    let headers: Vec<Headers> = spec
        .paths
        .iter()
        .map(|p| {
            [
                (":method", "GET"),
                (":path", p.path.as_str()),
                (":version", "HTTP/1.1"),
                (":host", spec.host.as_str()),
                (":scheme", scheme),
                ("user-agent", "spdylab-bench"),
            ]
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
        })
        .collect();
    // request → (path, counted from, status, body bytes)
    let mut open: std::collections::HashMap<u64, (usize, Instant, u16, u64)> =
        std::collections::HashMap::new();
    let mut next_req = 0u64;
    let mut due: VecDeque<Instant> = VecDeque::new();
    let mut buf = ReadBuffer::new();
    loop {
        let now = Instant::now();
        if now >= window.end || shared.stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        take_due(schedule, now, &mut due);
        // A graceful GOAWAY: no new streams; reconnect once the last one is in.
        if session.going_away() && open.is_empty() {
            return Ok(());
        }
        let refill = schedule.is_some() || refill_due(session.in_flight(), session.max_open());
        while refill && !session.going_away() && session.in_flight() < session.max_open() {
            let since = match schedule {
                None => now,
                Some(_) => match due.pop_front() {
                    Some(t) => t,
                    None => break,
                },
            };
            let path = *counter % headers.len();
            *counter += 1;
            if next_req >= 0x3fff_8000 {
                return Err("stream-ids-exhausted");
            }
            session.request(next_req, 0, headers[path].clone());
            open.insert(next_req, (path, since, 0, 0));
            next_req += 1;
        }
        session.start();
        let out = session.output();
        if !out.is_empty() {
            io.write_all(out).await.map_err(|_| "write")?;
            io.flush().await.map_err(|_| "write")?;
            out.clear();
        }
        let wake = match schedule {
            Some(s) if session.in_flight() < session.max_open() => {
                s.lock().unwrap().next.min(window.end)
            }
            _ => window.end,
        };
        let n = tokio::select! {
            biased;
            r = io.read(buf.space()) => match r {
                Ok(0) => return Err("closed"),
                Ok(n) => n,
                Err(_) => return Err("reset"),
            },
            _ = tokio::time::sleep_until(wake.into()) => continue,
            _ = tokio::time::sleep(spec.timeout), if !open.is_empty() => return Err("timeout"),
        };
        let now = Instant::now();
        let counted = now >= window.measure && now <= window.end;
        session.receive(buf.filled(n));
        while let Some(event) = session.poll_event() {
            match event {
                Event::Head { req, status, .. } => {
                    if let Some(s) = open.get_mut(&req) {
                        s.2 = status;
                    }
                }
                Event::Data { req, data } => {
                    if let Some(s) = open.get_mut(&req) {
                        s.3 += data.len() as u64;
                    }
                }
                Event::Done(req) => {
                    if let Some((path, since, status, body)) = open.remove(&req) {
                        rec.finish(spec, shared, window, path, since, now, status, body)?;
                    }
                }
                Event::Refused(req) => {
                    // Over the server's limit: an error, and the session keeps below it.
                    open.remove(&req);
                    shared.error("refused", counted);
                }
                Event::GoAway { status, .. } if status != 0 => return Err("goaway"),
                Event::Failed {
                    req,
                    error: StreamError::GoneAway(_),
                } => {
                    // Lost to a graceful GOAWAY: this request is an error.
                    open.remove(&req);
                    shared.error("goaway", counted);
                }
                Event::Failed {
                    error: StreamError::Session(_),
                    ..
                } => return Err("bad-response"),
                Event::Failed { .. } => return Err("stream-reset"),
                Event::Sent(_) | Event::GoAway { .. } => {}
            }
        }
        rec.flush(shared);
    }
}

/// The latency distribution in HdrHistogram's percentile format (values in ms),
/// which its plotter (hdrhistogram.github.io/HdrHistogram/plotFiles.html) reads.
pub fn percentile_distribution(h: &Histogram<u64>) -> String {
    use std::fmt::Write;
    let mut out = String::from("       Value     Percentile TotalCount 1/(1-Percentile)\n\n");
    let mut total = 0u64;
    for v in h.iter_quantiles(5) {
        total += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let inv = if q < 1.0 {
            format!("{:14.2}", 1.0 / (1.0 - q))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{:12.3} {:14.12} {:10} {}",
            v.value_iterated_to() as f64 / 1e3,
            q,
            total,
            inv
        );
    }
    let _ = writeln!(
        out,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]\n#[Max     = {:12.3}, Total count    = {:12}]\n#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.mean() / 1e3,
        h.stdev() / 1e3,
        h.max() as f64 / 1e3,
        h.len(),
        h.buckets(),
        h.distinct_values()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A server that answers pipelined requests one write per answer: the
    /// first `good` with 200 and a 600-byte body, the rest with a 503 of 2.
    fn shrinking_server(good: usize) -> SocketAddr {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let mut answered = 0;
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let mut pending = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = conn.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        let answer = if answered < good {
                            format!(
                                "HTTP/1.1 200 OK\r\nContent-Length: 600\r\n\r\n{}",
                                "x".repeat(600)
                            )
                        } else {
                            "HTTP/1.1 503 Busy\r\nContent-Length: 2\r\n\r\nno".to_string()
                        };
                        answered += 1;
                        if conn.write_all(answer.as_bytes()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        addr
    }

    #[test]
    fn a_pipeline_whose_answers_shrink_is_not_held_by_the_read_low_water_mark() {
        // After 16 answers of 640 bytes the mark asks for 8 x 640 bytes, and
        // every later pipeline of 503s brings 8 x 42: only the guard (10 ms
        // without progress) lets the reader see them before the 5 s timeout.
        // Without pipelining the mark asks for 640 bytes and a 503 brings 42.
        for (protocol, depth) in [(Protocol::HttpPipelined, 8), (Protocol::Http, 1)] {
            shrinking_answers_are_read(protocol, depth);
        }
    }

    fn shrinking_answers_are_read(protocol: Protocol, depth: usize) {
        let spec = BenchSpec {
            addr: shrinking_server(16),
            host: "localhost".into(),
            tls: None,
            protocol,
            connections: 1,
            depth,
            streams: 1,
            threads: 1,
            duration: Duration::from_secs(1),
            warmup: Duration::ZERO,
            rate: None,
            paths: vec![PathSpec {
                path: "/".into(),
                expect_len: None,
            }],
            expect_status: 200,
            timeout: Duration::from_secs(5),
        };
        let result = run(spec).unwrap();
        assert_eq!(result.requests, 16, "depth {depth}: {:?}", result.errors);
        assert!(
            !result.errors.contains_key("timeout"),
            "{:?}",
            result.errors
        );
        // At least two pipelines of 503s were read (hundreds in practice).
        assert!(
            result.errors.get("status").copied().unwrap_or(0) >= 16,
            "{:?}",
            result.errors
        );
    }

    #[test]
    fn a_read_buffer_grows_only_when_a_read_fills_it() {
        let mut buf = ReadBuffer::new();
        assert_eq!(buf.space().len(), ReadBuffer::FIRST);
        buf.space()[..3].copy_from_slice(b"abc");
        assert_eq!(buf.filled(3), b"abc");
        assert_eq!(buf.space().len(), ReadBuffer::FIRST);
        let mut len = ReadBuffer::FIRST;
        while len < ReadBuffer::MOST {
            let n = buf.space().len();
            buf.space()[n - 1] = 7;
            let got = buf.filled(n);
            assert_eq!((got.len(), got[n - 1]), (n, 7), "what was read stays");
            let grown = buf.space().len();
            assert_eq!(grown, (len * 4).min(ReadBuffer::MOST));
            len = grown;
        }
        let n = buf.space().len();
        buf.filled(n);
        assert_eq!(buf.space().len(), ReadBuffer::MOST, "and no further");
    }

    #[test]
    fn free_streams_are_refilled_a_quarter_at_a_time() {
        let first = |max: usize| (0..=max).rev().find(|&n| refill_due(n, max));
        // 100 streams: refilled once 25 are done, so 75-100 stay in flight.
        assert_eq!(first(100), Some(75));
        assert_eq!(first(8), Some(6));
        // Fewer than four: one by one, as before.
        assert_eq!(first(3), Some(2));
        assert_eq!(first(1), Some(0));
        // An empty session is always refilled; a full one never.
        for max in 1..=300 {
            assert!(refill_due(0, max) && !refill_due(max, max), "{max}");
        }
    }

    #[test]
    fn every_connection_has_exactly_one_thread() {
        for (threads, conns) in [(1, 32), (2, 32), (3, 32), (4, 3), (2, 1)] {
            let mut seen: Vec<usize> = (0..threads)
                .flat_map(|t| connections_of(t, threads, conns))
                .collect();
            let shares: Vec<usize> = (0..threads)
                .map(|t| connections_of(t, threads, conns).count())
                .collect();
            seen.sort();
            assert_eq!(seen, (0..conns).collect::<Vec<_>>());
            let (lo, hi) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
            assert!(
                hi - lo <= 1,
                "{threads} threads, {conns} connections: {shares:?}"
            );
        }
    }
}
