//! `loadtest`: a load test as in seed 000 (NeoLoad against Apache + mod_spdy).
//! Virtual users (`client::users`) are added linearly over a ramp, then held;
//! each loads the page, thinks, and loads it again over the same connections.
//! Every second, one record: active users, pages/s, requests/s, page response
//! time (HdrHistogram), errors by kind, bytes, the server's CPU and memory, its
//! busy workers, and the generator's own CPU.
//!
//! The generator's threads and the built-in server's each have a descriptor
//! table of their own (`netns::own_fd_table`): RLIMIT_NOFILE bounds each table,
//! so 3 000 HTTP/1.1 users × 6 connections (18 000 sockets a side) fit under a
//! hard limit of 20 000 that a container's root cannot raise.
//!
//! Where the CPU figures come from: a real server is its whole process tree (the
//! pid the testbed spawned and every descendant, from /proc/PID/stat, plus what
//! reaped children left in cutime/cstime); the built-in server runs in this
//! process on its own runtime, whose threads are named `load-srv` — its CPU is
//! theirs (/proc/self/task/*/schedstat), its memory this process's (RSS, PSS;
//! the generator's is inside). The generator's CPU is that of the `load-gen`
//! threads that run the users.

use crate::procstat;
use crate::trial::{Refusal, ServerKind, Trial, HTTPS_PORT, HTTP_PORT};
use client::users::{page_of, ErrorKind, PageOutcome, User, UserConfig};
use hdrhistogram::Histogram;
use netns::{Side, Testbed, TestbedSpec};
use proto::Protocol;
pub use results::loadtest::{derive, summary_csv, Derived, PageTimes, Second};
use serde::Serialize;
use server::Ca;
use site::Site;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A load test of one site over one or more protocols (one after another,
/// each on a fresh testbed and server).
#[derive(Clone)]
pub struct LoadSpec {
    pub site: Site,
    pub protocols: Vec<Protocol>,
    pub server: ServerKind,
    pub testbed: TestbedSpec,
    /// Users at the start and at the end of the ramp.
    pub users: (u32, u32),
    pub ramp: Duration,
    pub hold: Duration,
    pub think: Duration,
    pub conns_per_user: usize,
    pub sla: Duration,
    pub new_connections: bool,
    pub page_timeout: Duration,
    /// Each user its own client address (198.19.0.0/16) rather than the client's one.
    pub distinct_addresses: bool,
    /// Threads of the generator's runtime (each a core at most).
    pub generator_threads: usize,
    /// The real server's keep-alive timeout (None: the server's own; Apache 5 s,
    /// as Apache 2.2's httpd-default.conf).
    pub keepalive: Option<Duration>,
    /// The built-in server's knobs (a real server: what its capability table
    /// says of them; `refusal` refuses the rest).
    pub served: server::Knobs,
    /// Stop the built-in server this long after the start (a fault for tests:
    /// connections are closed, then refused).
    pub stop_server_after: Option<Duration>,
}

impl LoadSpec {
    /// Why the server cannot serve this load as asked, if it cannot.
    pub fn refusal(&self) -> Option<Refusal> {
        self.trial()
            .refusal_for(None, &self.protocols, self.site.resources.len())
    }

    /// The Trial of the load's server: its kind and knobs, the rest at their defaults.
    pub fn trial(&self) -> Trial {
        let mut trial = Trial {
            server: self.server,
            ..Trial::default()
        };
        trial.served = self.served;
        trial
    }

    pub fn duration(&self) -> Duration {
        self.ramp + self.hold
    }

    /// Users that should be active `t` after the start.
    pub fn users_at(&self, t: Duration) -> u32 {
        let (a, b) = self.users;
        if t >= self.ramp || self.ramp.is_zero() {
            return b;
        }
        let f = t.as_secs_f64() / self.ramp.as_secs_f64();
        a + ((b.saturating_sub(a)) as f64 * f).floor() as u32
    }
}

/// Totals of one protocol's load.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub protocol: String,
    pub seconds: u64,
    pub pages: u64,
    /// Pages where every resource arrived, each with its exact length.
    pub pages_complete: u64,
    pub errors: u64,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub requests: u64,
    pub bytes: u64,
    pub resources_per_page: usize,
    pub bytes_per_page: u64,
    pub max_users: u32,
    /// The first few error messages, for the reader.
    pub error_samples: Vec<String>,
    /// Users could use their own client addresses.
    pub distinct_addresses: bool,
    pub generator_cpu_max_pct_core: f64,
    pub interrupted: bool,
}

#[derive(Default)]
struct Window {
    pages: u64,
    errors: u64,
    errors_by_kind: BTreeMap<String, u64>,
    requests: u64,
    bytes: u64,
    connections_opened: u64,
    retries: u64,
    hist: Option<Histogram<u64>>,
    // totals
    pages_complete: u64,
    samples: Vec<String>,
}

impl Window {
    fn add(&mut self, p: &PageOutcome) {
        self.requests += p.requests as u64;
        self.bytes += p.bytes;
        self.connections_opened += p.connections_opened as u64;
        self.retries += p.retries as u64;
        match p.error {
            None => {
                self.pages += 1;
                if p.complete {
                    self.pages_complete += 1;
                }
                let h = self
                    .hist
                    .get_or_insert_with(|| Histogram::new_with_bounds(1, 3_600_000, 3).unwrap());
                let _ = h.record((p.time.as_secs_f64() * 1e3).round().max(1.0) as u64);
            }
            Some(kind) => {
                if kind == ErrorKind::Timeout {
                    // A page that timed out took at least this long: the
                    // response time shows starvation, not only the errors.
                    self.hist
                        .get_or_insert_with(|| Histogram::new_with_bounds(1, 3_600_000, 3).unwrap())
                        .saturating_record((p.time.as_secs_f64() * 1e3).round().max(1.0) as u64);
                }
                self.errors += 1;
                *self.errors_by_kind.entry(kind.name()).or_default() += 1;
                if self.samples.len() < 10 {
                    if let Some(d) = &p.detail {
                        self.samples.push(format!("{}: {d}", kind.name()));
                    }
                }
            }
        }
    }
}

fn page_times(h: &Option<Histogram<u64>>) -> PageTimes {
    match h {
        Some(h) if !h.is_empty() => PageTimes {
            n: h.len(),
            mean: h.mean(),
            p50: h.value_at_quantile(0.5) as f64,
            p95: h.value_at_quantile(0.95) as f64,
            p99: h.value_at_quantile(0.99) as f64,
            max: h.max() as f64,
        },
        _ => PageTimes::default(),
    }
}

/// Where user `k` (from 0) binds its sockets: 198.19.x.y.
pub fn user_addr(k: usize) -> Ipv4Addr {
    let n = (k % 65_000) + 1;
    Ipv4Addr::new(198, 19, (n >> 8) as u8, (n & 0xff) as u8)
}

/// 198.19.0.0/16 local at the client, routed back through the link at the server.
fn add_user_addresses(testbed: &Testbed) -> io::Result<()> {
    testbed.ip(Side::Client, "route add local 198.19.0.0/16 dev lo\n")?;
    testbed.ip(Side::Server, "route add 198.19.0.0/16 dev tun0\n")
}

/// Users' and server's sockets share this process: 3 000 HTTP/1.1 users with 6
/// connections each hold 18 000 descriptors on each side. The generator and the
/// built-in server each have a descriptor table of their own, so each side may
/// use the whole limit; and the limit is raised as far as allowed: as root, the
/// hard limit too (to 1 Mi, or fs.nr_open if lower; a container may forbid it,
/// as one here with a hard 20 000 does); otherwise the soft limit goes up to the
/// hard one.
fn raise_fd_limit() {
    const WANT: libc::rlim_t = 1 << 20;
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse::<libc::rlim_t>().ok())
        .unwrap_or(WANT);
    let Ok((soft, hard)) = sys::nofile_limit() else {
        return;
    };
    let raised = sys::set_nofile_limit(WANT.min(nr_open).max(soft), WANT.min(nr_open).max(hard));
    if raised.is_err() && soft < hard {
        let _ = sys::set_nofile_limit(hard.min(WANT), hard);
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The server's CPU and memory, read once a second.
enum ServerProbe {
    /// Threads of this process (the built-in server).
    Threads,
    /// A process tree.
    Tree(u32),
}

impl ServerProbe {
    /// CPU so far (s), RSS and PSS (kB).
    fn read(&self) -> (f64, u64, u64) {
        match self {
            ServerProbe::Threads => {
                let (rss, pss) = procstat::own_memory_kb();
                (procstat::threads_cpu("load-srv"), rss, pss)
            }
            ServerProbe::Tree(root) => {
                let u = procstat::tree(*root).unwrap_or_default();
                (u.cpu_s + u.reaped_cpu_s, u.rss_kb, u.pss_kb)
            }
        }
    }
}

/// Runs the load for each protocol in turn. `on_second` hears of every second
/// as it ends; `stop` (e.g. set on SIGINT) ends the load early, keeping what was
/// measured.
pub fn run(
    spec: &LoadSpec,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&Second),
) -> io::Result<Vec<Totals>> {
    raise_fd_limit();
    if let ServerKind::Peer(kind) = spec.server {
        let (binary, package) = peers::Program::binary(kind);
        netns::find_binary(binary, package)?;
    }
    if let Some(why) = spec.refusal() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    }
    let mut all = Vec::new();
    for p in &spec.protocols {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        all.push(run_protocol(spec, *p, stop, on_second)?);
    }
    Ok(all)
}

pub use results::files::LOAD_FILE as RECORDS_FILE;
pub use results::files::SUMMARY_FILE;

/// Why a load test did not run (or stopped).
#[derive(Debug)]
pub enum LoadtestError {
    /// Bad input: the message names the flag.
    Usage(String),
    /// The server cannot serve the load as asked.
    Refused(Refusal),
    /// The output directory or its files.
    Output(PathBuf, io::Error),
    /// Setting up or running the testbed, server or generator.
    Setup(io::Error),
}

impl std::fmt::Display for LoadtestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadtestError::Usage(m) => f.write_str(m),
            LoadtestError::Refused(r) => write!(f, "{r}"),
            LoadtestError::Output(path, e) => write!(f, "{}: {e}", path.display()),
            LoadtestError::Setup(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for LoadtestError {}

impl From<io::Error> for LoadtestError {
    fn from(e: io::Error) -> Self {
        LoadtestError::Setup(e)
    }
}

/// Refuses a keep-alive timeout for the built-in server, which keeps
/// connections open (the CLI asks before it reads the site: a flag's error
/// comes first).
pub fn check_keepalive(
    keepalive: Option<Duration>,
    server: ServerKind,
) -> Result<(), LoadtestError> {
    if keepalive.is_some() && server == ServerKind::Builtin {
        return Err(LoadtestError::Usage(
            "--keepalive sets a real server's keep-alive timeout; the built-in server keeps connections open: use --server apache|nginx|h2o|caddy".into(),
        ));
    }
    Ok(())
}

/// `--users FROM:TO` (or N): users at the start and at the end of the ramp.
pub fn parse_users(s: &str) -> Result<(u32, u32), String> {
    let (a, b) = s.split_once(':').unwrap_or((s, s));
    let n = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("{s:?}: users are FROM:TO, e.g. 1:1000"))
    };
    let (a, b) = (n(a)?, n(b)?);
    if a > b || b == 0 || b > 60_000 {
        return Err(format!(
            "{s:?}: users are FROM:TO with FROM <= TO, TO in 1..=60000"
        ));
    }
    Ok((a, b))
}

impl LoadSpec {
    /// Where its records go when no directory is named: load-SITE.
    pub fn default_out(&self) -> PathBuf {
        PathBuf::from(format!("load-{}", self.site.name))
    }

    /// Refuses what this spec asks and cannot be given, naming the flag.
    pub fn check(&self) -> Result<(), LoadtestError> {
        check_keepalive(self.keepalive, self.server)?;
        if let Some(r) = self.refusal() {
            return Err(LoadtestError::Refused(r));
        }
        if self.stop_server_after.is_some() && self.server != ServerKind::Builtin {
            return Err(LoadtestError::Usage(
                "--stop-server-after needs --server builtin".into(),
            ));
        }
        Ok(())
    }
}

/// Runs the load and writes DIR/load.jsonl as it goes (after the records
/// already there with `append`); every record also goes to `on_second`.
/// `stop` (set on a signal) ends it early, keeping what was measured.
pub fn run_to_dir(
    spec: &LoadSpec,
    out: &Path,
    append: bool,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&Second),
) -> Result<(Vec<Second>, Vec<Totals>), LoadtestError> {
    std::fs::create_dir_all(out)
        .map_err(|e| LoadtestError::Usage(format!("--out {}: {e}", out.display())))?;
    let path = out.join(RECORDS_FILE);
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(append)
        .truncate(!append)
        .open(&path)
        .map_err(|e| LoadtestError::Output(path.clone(), e))?;
    let mut seconds = Vec::new();
    let mut write_error = None;
    let totals = run(spec, stop, &mut |s| {
        if let Ok(line) = serde_json::to_string(s) {
            if let Err(e) = writeln!(file, "{line}").and_then(|_| file.flush()) {
                write_error.get_or_insert(e);
            }
        }
        on_second(s);
        seconds.push(s.clone());
    })?;
    if let Some(e) = write_error {
        return Err(LoadtestError::Output(path, e));
    }
    Ok((seconds, totals))
}

/// Writes DIR/summary.csv.
pub fn write_summary(out: &Path, rows: &[Derived]) -> Result<(), LoadtestError> {
    let path = out.join(SUMMARY_FILE);
    std::fs::write(&path, summary_csv(rows)).map_err(|e| LoadtestError::Output(path, e))
}

/// The preset `spdylab paper load [--quick]`: seed 000's experiment — the icons
/// page, 40 ms down / 45 ms up, think 5 s, 6 connections per user, SLA 3 s —
/// on Apache with the worker MPM of the seed (MaxRequestWorkers 600) for http,
/// https and h2 (mod_http2, mod_spdy's heir), then spdy3 on the built-in
/// server; 1 to 1000 users over 20 minutes (`quick`: to 400 users in 5 minutes).
/// The two loads, run one after the other into one directory.
pub fn paper_specs(quick: bool) -> Result<[LoadSpec; 2], LoadtestError> {
    let site = crate::sites::resolve("icons", site::DEFAULT_SEED)
        .map_err(|e| LoadtestError::Usage(e.to_string()))?;
    let link: crate::trial::LinkChoice = crate::trial::LinkChoice {
        delay_down: Some(Duration::from_millis(40)),
        delay_up: Some(Duration::from_millis(45)),
        ..Default::default()
    };
    let testbed = link
        .testbed_spec(1, &|k| format!("link.{k}"))
        .map_err(|e| LoadtestError::Usage(e.to_string()))?;
    let (users, ramp) = if quick {
        ((1, 400), Duration::from_secs(300))
    } else {
        ((1, 1000), Duration::from_secs(1200))
    };
    let base = LoadSpec {
        site,
        protocols: vec![Protocol::Http, Protocol::Https, Protocol::H2],
        server: ServerKind::Peer(peers::PeerKind::Apache),
        testbed,
        users,
        ramp,
        hold: Duration::ZERO,
        think: Duration::from_secs(5),
        conns_per_user: 6,
        sla: Duration::from_secs(3),
        new_connections: false,
        page_timeout: crate::trial::DEFAULT_TIMEOUT,
        distinct_addresses: true,
        generator_threads: 1,
        keepalive: None,
        served: server::Knobs::default(),
        stop_server_after: None,
    };
    let spdy = LoadSpec {
        protocols: vec![Protocol::Spdy3],
        server: ServerKind::Builtin,
        ..base.clone()
    };
    Ok([base, spdy])
}

/// The user counts `spdylab paper load` reports the response time at (seed 000's).
pub const PAPER_AT: [u32; 4] = [100, 120, 200, 777];
/// The user count `spdylab paper load` reports the server's CPU idle and memory at.
pub const PAPER_CPU_AT: u32 = 88;

/// What happens in `run_load` and `run_paper`, for their progress.
pub enum LoadEvent<'a> {
    /// A load starts.
    Start(&'a LoadSpec),
    /// One of its records.
    Second(&'a LoadSpec, &'a Second),
    /// It ended (or `stop` ended it).
    End(&'a LoadSpec),
}

/// The outcome of `run_paper`: the first load's spec (the site, link and SLA
/// of both), and both loads' records, totals and derived figures.
pub struct PaperLoad {
    pub base: LoadSpec,
    pub run: LoadRun,
}

/// `spdylab paper load [--quick]`: the two loads of `paper_specs` one after
/// the other into DIR/load.jsonl (the second not begun once `stop` is set),
/// the figures at `PAPER_AT` and `PAPER_CPU_AT` users written to DIR/summary.csv.
pub fn run_paper(
    quick: bool,
    out: &Path,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(LoadEvent),
) -> Result<PaperLoad, LoadtestError> {
    let [base, spdy] = paper_specs(quick)?;
    let (mut seconds, mut totals) = (Vec::new(), Vec::new());
    for (i, spec) in [&base, &spdy].into_iter().enumerate() {
        if i > 0 && stop.load(Ordering::Relaxed) {
            break;
        }
        on_event(LoadEvent::Start(spec));
        let (s, t) = run_to_dir(spec, out, i > 0, stop, &mut |s| {
            on_event(LoadEvent::Second(spec, s))
        })?;
        on_event(LoadEvent::End(spec));
        seconds.extend(s);
        totals.extend(t);
    }
    let derived = derive(&seconds, &PAPER_AT, base.sla, PAPER_CPU_AT);
    write_summary(out, &derived)?;
    let run = LoadRun {
        seconds,
        totals,
        derived,
    };
    Ok(PaperLoad { base, run })
}

/// A load run by `run_load`: its records, totals and derived figures.
pub struct LoadRun {
    pub seconds: Vec<Second>,
    pub totals: Vec<Totals>,
    pub derived: Vec<Derived>,
}

/// `spdylab load`: one load into DIR/load.jsonl (`run_to_dir`), with its
/// figures at `at` and `cpu_at` users written to DIR/summary.csv; `on_event`
/// hears its start, each second and its end. `stop` ends it early, keeping
/// what was measured.
pub fn run_load(
    spec: &LoadSpec,
    out: &Path,
    at: &[u32],
    cpu_at: u32,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(LoadEvent),
) -> Result<LoadRun, LoadtestError> {
    on_event(LoadEvent::Start(spec));
    let (seconds, totals) = run_to_dir(spec, out, false, stop, &mut |s| {
        on_event(LoadEvent::Second(spec, s))
    })?;
    on_event(LoadEvent::End(spec));
    let derived = derive(&seconds, at, spec.sla, cpu_at);
    write_summary(out, &derived)?;
    Ok(LoadRun {
        seconds,
        totals,
        derived,
    })
}

/// A generator thread busier than this (% of a core) may be the bottleneck
/// rather than the server.
pub const GENERATOR_BUSY_PCT: f64 = 90.0;

/// What a load's records say as they come, one load at a time: each
/// protocol's errors so far, and (once) that the generator, not the server,
/// may be the bottleneck.
#[derive(Debug, Default)]
pub struct Watch {
    errors: BTreeMap<String, u64>,
    warned: bool,
}

/// What `Watch::see` made of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// The record's protocol's errors up to and with this record.
    pub errors_so_far: u64,
    /// The first record in which the generator used over
    /// `GENERATOR_BUSY_PCT` of each of its threads' cores.
    pub generator_bottleneck: bool,
}

impl Watch {
    pub fn see(&mut self, spec: &LoadSpec, s: &Second) -> Seen {
        let busy = s.generator_cpu_pct_core > GENERATOR_BUSY_PCT * spec.generator_threads as f64;
        let generator_bottleneck = busy && !self.warned;
        self.warned |= busy;
        let errors = self.errors.entry(s.protocol.clone()).or_default();
        *errors += s.errors;
        Seen {
            errors_so_far: *errors,
            generator_bottleneck,
        }
    }
}

fn run_protocol(
    spec: &LoadSpec,
    protocol: Protocol,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&Second),
) -> io::Result<Totals> {
    let crate::testbed_server::Placement {
        resolve,
        testbed: tb_spec,
        addresses,
    } = crate::testbed_server::place(&spec.site, &spec.testbed);
    let mut testbed = Testbed::start(tb_spec)?;
    let distinct = spec.distinct_addresses && add_user_addresses(&testbed).is_ok();
    let ca = Ca::new()?;
    let mut server = crate::testbed_server::start(
        &mut testbed,
        &ca,
        &addresses,
        &crate::testbed_server::ServerSetup {
            site: &spec.site,
            kind: spec.server,
            knobs: spec.served,
            keepalive: spec.keepalive,
            access_log: false,
            stop_after: spec.stop_server_after,
            thread_name: "load-srv",
        },
    )?;
    let apache_status_addr = server.apache_status;
    let probe = match server.pid {
        Some(pid) => ServerProbe::Tree(pid),
        None => ServerProbe::Threads,
    };

    let cfg = Arc::new(UserConfig {
        protocol,
        conns: spec.conns_per_user,
        page: page_of(&spec.site),
        resolve,
        ca: ca.der(),
        tls13_only: spec.served.tls.tls13_only(),
        http_port: HTTP_PORT,
        https_port: HTTPS_PORT,
        page_timeout: spec.page_timeout,
        new_connections: spec.new_connections,
    });
    let window = Arc::new(Mutex::new(Window::default()));
    let active = Arc::new(AtomicUsize::new(0));
    let held = Arc::new(AtomicUsize::new(0));
    let in_page = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicBool::new(false));
    let status: Arc<Mutex<Option<(u32, u32)>>> = Arc::new(Mutex::new(None));
    let mut totals = Totals {
        protocol: protocol.name().to_string(),
        resources_per_page: spec.site.resources.len(),
        bytes_per_page: spec.site.total_bytes() as u64,
        distinct_addresses: distinct,
        ..Default::default()
    };
    let client_ns = Arc::new(testbed.namespace(Side::Client).try_clone()?);
    let start = Instant::now();
    let result = std::thread::scope(|s| -> io::Result<()> {
        // The generator: a runtime whose threads are in the client namespace.
        let (w, a, h, f, c) = (
            window.clone(),
            (active.clone(), in_page.clone()),
            held.clone(),
            finished.clone(),
            cfg.clone(),
        );
        let spec_ref = spec;
        crate::testbed_server::init_tokio_globals();
        let generator = std::thread::Builder::new()
            .name("load-gen".into())
            .spawn_scoped(s, move || -> io::Result<()> {
                // Threads started from here inherit the namespace and the
                // descriptor table: the users' sockets count against
                // RLIMIT_NOFILE apart from the server's (`netns::own_fd_table`).
                client_ns.enter_current_thread()?;
                drop(client_ns);
                netns::own_fd_table()?;
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(spec_ref.generator_threads.max(1))
                    .thread_name("load-gen")
                    .enable_all()
                    .build()?;
                rt.block_on(generate(spec_ref, c, w, a, h, f, distinct, start));
                rt.shutdown_timeout(Duration::from_secs(1));
                Ok(())
            })?;
        // Apache's workers, polled apart (a starved Apache answers late).
        if let Some(addr) = apache_status_addr {
            let (st, f) = (status.clone(), finished.clone());
            let ns = testbed.namespace(Side::Server);
            s.spawn(move || {
                while !f.load(Ordering::Relaxed) {
                    let t0 = Instant::now();
                    let got = ns
                        .run(move || peers::fetch_apache_status(addr))
                        .ok()
                        .and_then(|t| peers::apache_status(&t));
                    *st.lock().unwrap() = got;
                    std::thread::sleep(Duration::from_secs(1).saturating_sub(t0.elapsed()));
                }
            });
        }
        // The sampler: here, once a second.
        let mut sampler = Sampler {
            spec,
            protocol,
            testbed: &testbed,
            probe: &probe,
            ncores: cores() as f64,
            status: &status,
            active: &active,
            held: &held,
            in_page: &in_page,
            last: Readings::of(&probe, &testbed),
        };
        let mut sec = 0u64;
        loop {
            sec += 1;
            let interrupted = wait_for_second(start + Duration::from_secs(sec), stop);
            let now = Instant::now();
            let win = std::mem::take(&mut *window.lock().unwrap());
            let rec = sampler.second(sec, &win, now);
            add_second(&mut totals, win, &rec);
            on_second(&rec);
            if interrupted {
                totals.interrupted = true;
                break;
            }
            if Duration::from_secs(sec) >= spec.duration() {
                break;
            }
        }
        // Pages still under way are not counted: the users stop recording first.
        finished.store(true, Ordering::Relaxed);
        generator
            .join()
            .map_err(|_| io::Error::other("the generator panicked"))??;
        Ok(())
    });
    server.stop();
    testbed.shutdown()?;
    drop(server);
    result?;
    Ok(totals)
}

/// Sleeps until `due` or until `stop` is set: whether it was.
fn wait_for_second(due: Instant, stop: &AtomicBool) -> bool {
    while Instant::now() < due && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20).min(due - Instant::now()));
    }
    stop.load(Ordering::Relaxed)
}

/// The CPU counters the sampler read last, each second's differences taken from them.
struct Readings {
    server_cpu: f64,
    generator_cpu: f64,
    emulator_cpu: Duration,
    machine: (u64, u64),
    at: Instant,
}

impl Readings {
    fn of(probe: &ServerProbe, testbed: &Testbed) -> Readings {
        let (server_cpu, _, _) = probe.read();
        Readings {
            server_cpu,
            generator_cpu: procstat::threads_cpu("load-gen"),
            emulator_cpu: testbed.emulator_cpu(),
            machine: procstat::machine_jiffies(),
            at: Instant::now(),
        }
    }
}

/// What a load's sampler reads each second: the server's, the generator's
/// and the emulator's CPU, the users' counters, Apache's workers.
struct Sampler<'a> {
    spec: &'a LoadSpec,
    protocol: Protocol,
    testbed: &'a Testbed,
    probe: &'a ServerProbe,
    ncores: f64,
    status: &'a Mutex<Option<(u32, u32)>>,
    active: &'a AtomicUsize,
    held: &'a AtomicUsize,
    in_page: &'a AtomicUsize,
    last: Readings,
}

impl Sampler<'_> {
    /// Second `sec`'s record, of its window `win` of pages, read `now`.
    fn second(&mut self, sec: u64, win: &Window, now: Instant) -> Second {
        let dt = now.duration_since(self.last.at).as_secs_f64().max(1e-3);
        let (srv, rss, pss) = self.probe.read();
        let gen = procstat::threads_cpu("load-gen");
        let emu = self.testbed.emulator_cpu();
        let machine = procstat::machine_jiffies();
        let (busy, idle) = match *self.status.lock().unwrap() {
            Some((b, i)) => (Some(b), Some(i)),
            None => (None, None),
        };
        let last = &self.last;
        let dm = (machine.1 - last.machine.1).max(1) as f64;
        let (server_connections, client_addresses) = established(
            &self
                .testbed
                .namespace(Side::Server)
                .read_proc("net/tcp")
                .unwrap_or_default(),
        );
        let rec = Second {
            schema: 1,
            protocol: self.protocol.name().to_string(),
            server: self.spec.server.name().to_string(),
            t: sec,
            users: self.active.load(Ordering::Relaxed) as u32,
            pages: win.pages,
            errors: win.errors,
            errors_by_kind: win.errors_by_kind.clone(),
            requests: win.requests,
            bytes: win.bytes,
            page_ms: page_times(&win.hist),
            connections_opened: win.connections_opened,
            retries: win.retries,
            server_cpu_pct_core: (srv - last.server_cpu) / dt * 100.0,
            server_cpu_pct_machine: (srv - last.server_cpu) / dt * 100.0 / self.ncores,
            server_rss_mb: rss as f64 / 1024.0,
            server_pss_mb: pss as f64 / 1024.0,
            machine_idle_pct: 100.0 - (machine.0 - last.machine.0) as f64 / dm * 100.0,
            busy_workers: busy,
            idle_workers: idle,
            generator_cpu_pct_core: (gen - last.generator_cpu) / dt * 100.0,
            emulator_cpu_pct_core: (emu - last.emulator_cpu).as_secs_f64() / dt * 100.0,
            client_connections: self.held.load(Ordering::Relaxed) as u64,
            pages_in_flight: self.in_page.load(Ordering::Relaxed) as u64,
            server_connections,
            client_addresses,
        };
        self.last = Readings {
            server_cpu: srv,
            generator_cpu: gen,
            emulator_cpu: emu,
            machine,
            at: now,
        };
        rec
    }
}

/// Adds a second's window `win` (and its record `rec`) to the protocol's totals.
fn add_second(totals: &mut Totals, win: Window, rec: &Second) {
    totals.seconds += 1;
    totals.pages += win.pages;
    totals.pages_complete += win.pages_complete;
    totals.errors += win.errors;
    for (k, v) in &win.errors_by_kind {
        *totals.errors_by_kind.entry(k.clone()).or_default() += v;
    }
    totals.requests += win.requests;
    totals.bytes += win.bytes;
    totals.max_users = totals.max_users.max(rec.users);
    totals.generator_cpu_max_pct_core = totals
        .generator_cpu_max_pct_core
        .max(rec.generator_cpu_pct_core);
    for m in win.samples {
        if totals.error_samples.len() < 10 {
            totals.error_samples.push(m);
        }
    }
}

/// Established connections on local ports 80 and 443 in a /proc/net/tcp table,
/// and how many remote addresses they come from.
fn established(table: &str) -> (u64, u64) {
    let mut n = 0;
    let mut remotes = std::collections::HashSet::new();
    for l in table.lines().skip(1) {
        let c: Vec<&str> = l.split_whitespace().collect();
        if c.get(3) != Some(&"01") {
            continue;
        }
        let port = c
            .get(1)
            .and_then(|a| a.rsplit(':').next())
            .and_then(|p| u16::from_str_radix(p, 16).ok());
        if matches!(port, Some(HTTP_PORT | HTTPS_PORT)) {
            n += 1;
            if let Some(r) = c.get(2).and_then(|a| a.split(':').next()) {
                remotes.insert(r.to_string());
            }
        }
    }
    (n, remotes.len() as u64)
}

/// Starts the users on schedule; each loops page, think, page … until `finished`.
#[allow(clippy::too_many_arguments)]
async fn generate(
    spec: &LoadSpec,
    cfg: Arc<UserConfig>,
    window: Arc<Mutex<Window>>,
    (active, in_page): (Arc<AtomicUsize>, Arc<AtomicUsize>),
    held: Arc<AtomicUsize>,
    finished: Arc<AtomicBool>,
    distinct: bool,
    start: Instant,
) {
    let mut tasks = Vec::new();
    let mut k = 0usize;
    let think = spec.think;
    loop {
        if finished.load(Ordering::Relaxed) {
            break;
        }
        let want = spec.users_at(start.elapsed()) as usize;
        while k < want {
            let bind = distinct.then(|| IpAddr::V4(user_addr(k)));
            let (cfg, window, held, finished, in_page) = (
                cfg.clone(),
                window.clone(),
                held.clone(),
                finished.clone(),
                in_page.clone(),
            );
            active.fetch_add(1, Ordering::Relaxed);
            tasks.push(tokio::spawn(async move {
                let mut user = User::new(cfg, bind);
                let mut had = 0;
                while !finished.load(Ordering::Relaxed) {
                    in_page.fetch_add(1, Ordering::Relaxed);
                    let page = user.load_page().await;
                    in_page.fetch_sub(1, Ordering::Relaxed);
                    if finished.load(Ordering::Relaxed) {
                        break;
                    }
                    window.lock().unwrap().add(&page);
                    let now = user.connections();
                    if now > had {
                        held.fetch_add(now - had, Ordering::Relaxed);
                    } else {
                        held.fetch_sub(had - now, Ordering::Relaxed);
                    }
                    had = now;
                    tokio::time::sleep(think).await;
                }
                held.fetch_sub(had, Ordering::Relaxed);
            }));
            k += 1;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for t in &tasks {
        t.abort();
    }
}

/// Which of these errors are bad input, a refusal or a failure to run (`crate::Error`).
impl From<LoadtestError> for crate::Error {
    fn from(e: LoadtestError) -> crate::Error {
        match e {
            LoadtestError::Usage(m) => crate::Error::Usage(m),
            LoadtestError::Refused(r) => crate::Error::Refused(r),
            // An output directory or file that cannot be written: the user's to fix.
            LoadtestError::Output(..) => crate::Error::Usage(e.to_string()),
            LoadtestError::Setup(e) => crate::Error::Setup(Box::new(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_are_from_to_or_one_count() {
        assert_eq!(parse_users("1:300"), Ok((1, 300)));
        assert_eq!(parse_users(" 5 : 5 "), Ok((5, 5)));
        assert_eq!(parse_users("40"), Ok((40, 40)));
        for bad in ["", "a:3", "3:2", "0", "0:0", "1:60001", "1:2:3"] {
            let e = parse_users(bad).unwrap_err();
            assert!(e.starts_with(&format!("{bad:?}: users are FROM:TO")), "{e}");
        }
    }

    #[test]
    fn a_keepalive_is_a_real_servers() {
        let apache = ServerKind::Peer(peers::PeerKind::Apache);
        let five = Some(Duration::from_secs(5));
        assert!(check_keepalive(five, apache).is_ok());
        assert!(check_keepalive(None, ServerKind::Builtin).is_ok());
        let e = check_keepalive(five, ServerKind::Builtin).unwrap_err();
        assert!(e.to_string().starts_with("--keepalive sets"), "{e}");
    }

    #[test]
    fn the_watch_counts_errors_per_protocol_and_warns_once() {
        let [mut spec, _] = paper_specs(true).unwrap();
        spec.generator_threads = 2;
        let second = |protocol: &str, errors: u64, cpu: f64| Second {
            protocol: protocol.into(),
            errors,
            generator_cpu_pct_core: cpu,
            ..Default::default()
        };
        let mut w = Watch::default();
        let seen = |w: &mut Watch, s: Second| w.see(&spec, &s);
        // 2 threads: up to 180 % of a core is not yet the generator's limit.
        assert_eq!(
            seen(&mut w, second("http", 2, 180.0)),
            Seen {
                errors_so_far: 2,
                generator_bottleneck: false
            }
        );
        assert_eq!(
            seen(&mut w, second("http", 3, 181.0)),
            Seen {
                errors_so_far: 5,
                generator_bottleneck: true
            }
        );
        assert_eq!(
            seen(&mut w, second("h2", 1, 200.0)),
            Seen {
                errors_so_far: 1,
                generator_bottleneck: false
            }
        );
        assert_eq!(seen(&mut w, second("http", 0, 0.0)).errors_so_far, 5);
    }

    #[test]
    fn each_user_its_address() {
        assert_eq!(user_addr(0), Ipv4Addr::new(198, 19, 0, 1));
        assert_eq!(user_addr(255), Ipv4Addr::new(198, 19, 1, 0));
    }
}
