//! `load`: a load test as in seed 000 (NeoLoad against Apache + mod_spdy).
//! Virtual users (`client::users`) are added linearly over a ramp, then held;
//! each loads the page, thinks, and loads it again over the same connections.
//! Every second, one record: active users, pages/s, requests/s, page response
//! time (HdrHistogram), errors by kind, bytes, the server's CPU and memory, its
//! busy workers, and the generator's own CPU.
//!
//! Where the CPU figures come from: a real server is its whole process tree (the
//! pid the testbed spawned and every descendant, from /proc/PID/stat, plus what
//! reaped children left in cutime/cstime); the built-in server runs in this
//! process on its own runtime, whose threads are named `load-srv` — its CPU is
//! theirs (/proc/self/task/*/schedstat), its memory this process's (RSS, PSS;
//! the generator's is inside). The generator's CPU is that of the `load-gen`
//! threads that run the users.

use crate::compare::{ServerKind, HTTPS_PORT, HTTP_PORT};
use client::users::{page_of, ErrorKind, PageOutcome, User, UserConfig};
use hdrhistogram::Histogram;
use netns::{Side, Testbed, TestbedSpec};
use proto::Protocol;
pub use results::loadtest::{derive, summary_csv, Derived, PageTimes, Second};
use serde::Serialize;
use server::Ca;
use site::Site;
use std::collections::BTreeMap;
use std::io;
use std::net::{IpAddr, Ipv4Addr};
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
    pub max_streams: u32,
    pub tls13_only: Option<bool>,
    /// Stop the built-in server this long after the start (a fault for tests:
    /// connections are closed, then refused).
    pub stop_server_after: Option<Duration>,
}

impl LoadSpec {
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

/// Runs `ip` with `args` inside a namespace.
fn ip_in(testbed: &Testbed, side: Side, args: &[&str]) -> io::Result<()> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let status = testbed.namespace(side).run(move || {
        std::process::Command::new("ip")
            .args(&args)
            .stderr(std::process::Stdio::null())
            .status()
    })?;
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!("ip failed: {status}")))
    }
}

/// 198.19.0.0/16 local at the client, routed back through the link at the server.
fn add_user_addresses(testbed: &Testbed) -> io::Result<()> {
    ip_in(
        testbed,
        Side::Client,
        &["route", "add", "local", "198.19.0.0/16", "dev", "lo"],
    )?;
    ip_in(
        testbed,
        Side::Server,
        &["route", "add", "198.19.0.0/16", "dev", "tun0"],
    )
}

fn raise_fd_limit() {
    // SAFETY: plain system calls on a local struct.
    unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) == 0 && r.rlim_cur < r.rlim_max {
            r.rlim_cur = r.rlim_max.min(1 << 20);
            libc::setrlimit(libc::RLIMIT_NOFILE, &r);
        }
    }
}

/// CPU time (ns) of this process's threads named `name`.
fn threads_cpu_ns(name: &str) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    let mut sum = 0;
    for e in dir.flatten() {
        let p = e.path();
        let comm = std::fs::read_to_string(p.join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        if let Some(ns) = std::fs::read_to_string(p.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        {
            sum += ns;
        }
    }
    sum
}

fn clock_ticks() -> f64 {
    // SAFETY: plain system call.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// (pid, ppid, utime+stime+cutime+cstime in ticks) of every process.
fn processes() -> Vec<(u32, u32, u64)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // After the command's closing parenthesis: state ppid ... (field 3 on).
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        // rest[0] is field 3 (state): ppid is field 4, utime 14 .. cstime 17.
        out.push((pid, num(1) as u32, num(11) + num(12) + num(13) + num(14)));
    }
    out
}

/// The pids of `root` and all its descendants.
fn tree(root: u32, procs: &[(u32, u32, u64)]) -> Vec<u32> {
    let mut pids = vec![root];
    let mut i = 0;
    while i < pids.len() {
        let p = pids[i];
        pids.extend(procs.iter().filter(|q| q.1 == p).map(|q| q.0));
        i += 1;
    }
    pids
}

/// RSS and PSS of `pid`, in kB (smaps_rollup).
fn memory_kb(pid: &str) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("Rss:"), field("Pss:"))
}

/// (busy, total) jiffies of the whole machine.
fn machine_jiffies() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = text.lines().next() else {
        return (0, 0);
    };
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
    (total - idle.min(total), total)
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
                let (rss, pss) = memory_kb("self");
                (threads_cpu_ns("load-srv") as f64 / 1e9, rss, pss)
            }
            ServerProbe::Tree(root) => {
                let procs = processes();
                let pids = tree(*root, &procs);
                let ticks: u64 = procs
                    .iter()
                    .filter(|p| pids.contains(&p.0))
                    .map(|p| p.2)
                    .sum();
                let (mut rss, mut pss) = (0, 0);
                for p in &pids {
                    let (r, s) = memory_kb(&p.to_string());
                    rss += r;
                    pss += s;
                }
                (ticks as f64 / clock_ticks(), rss, pss)
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
        let knobs = peers::Knobs {
            max_streams: spec.max_streams,
            tls13_only: spec.tls13_only,
            server_delay: false,
            resources: spec.site.resources.len(),
        };
        for p in &spec.protocols {
            if let Some(why) = crate::compare::server_refuses(spec.server, *p, &knobs) {
                return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
            }
        }
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
            max_streams: spec.max_streams,
            tls13_only: spec.tls13_only,
            server_delay: Duration::ZERO,
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
        tls13_only: spec.tls13_only,
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
    let client_fd = {
        use std::os::fd::AsRawFd;
        testbed.namespace(Side::Client).as_raw_fd()
    };
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
        let generator = std::thread::Builder::new()
            .name("load-gen".into())
            .spawn_scoped(s, move || -> io::Result<()> {
                enter_ns(client_fd)?;
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(spec_ref.generator_threads.max(1))
                    .thread_name("load-gen")
                    .on_thread_start(move || {
                        let _ = enter_ns(client_fd);
                    })
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
        let ncores = cores() as f64;
        let (mut last_srv, _, _) = probe.read();
        let mut last_gen = threads_cpu_ns("load-gen");
        let mut last_emu = testbed.emulator_cpu();
        let mut last_machine = machine_jiffies();
        let mut last_t = Instant::now();
        let mut sec = 0u64;
        loop {
            sec += 1;
            let due = start + Duration::from_secs(sec);
            while Instant::now() < due && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(20).min(due - Instant::now()));
            }
            let interrupted = stop.load(Ordering::Relaxed);
            let now = Instant::now();
            let dt = now.duration_since(last_t).as_secs_f64().max(1e-3);
            last_t = now;
            let win = std::mem::take(&mut *window.lock().unwrap());
            let (srv, rss, pss) = probe.read();
            let gen = threads_cpu_ns("load-gen");
            let emu = testbed.emulator_cpu();
            let machine = machine_jiffies();
            let (busy, idle) = match *status.lock().unwrap() {
                Some((b, i)) => (Some(b), Some(i)),
                None => (None, None),
            };
            let dm = (machine.1 - last_machine.1).max(1) as f64;
            let (server_connections, client_addresses) = established(
                &testbed
                    .namespace(Side::Server)
                    .read_proc("net/tcp")
                    .unwrap_or_default(),
            );
            let rec = Second {
                schema: 1,
                protocol: protocol.name().to_string(),
                server: spec.server.name().to_string(),
                t: sec,
                users: active.load(Ordering::Relaxed) as u32,
                pages: win.pages,
                errors: win.errors,
                errors_by_kind: win.errors_by_kind.clone(),
                requests: win.requests,
                bytes: win.bytes,
                page_ms: page_times(&win.hist),
                connections_opened: win.connections_opened,
                retries: win.retries,
                server_cpu_pct_core: (srv - last_srv) / dt * 100.0,
                server_cpu_pct_machine: (srv - last_srv) / dt * 100.0 / ncores,
                server_rss_mb: rss as f64 / 1024.0,
                server_pss_mb: pss as f64 / 1024.0,
                machine_idle_pct: 100.0 - (machine.0 - last_machine.0) as f64 / dm * 100.0,
                busy_workers: busy,
                idle_workers: idle,
                generator_cpu_pct_core: (gen - last_gen) as f64 / 1e9 / dt * 100.0,
                emulator_cpu_pct_core: (emu - last_emu).as_secs_f64() / dt * 100.0,
                client_connections: held.load(Ordering::Relaxed) as u64,
                pages_in_flight: in_page.load(Ordering::Relaxed) as u64,
                server_connections,
                client_addresses,
            };
            last_srv = srv;
            last_gen = gen;
            last_emu = emu;
            last_machine = machine;
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

fn enter_ns(fd: std::os::fd::RawFd) -> io::Result<()> {
    // SAFETY: setns on a descriptor the testbed keeps open while we run.
    if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } == -1 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_user_its_address() {
        assert_eq!(user_addr(0), Ipv4Addr::new(198, 19, 0, 1));
        assert_eq!(user_addr(255), Ipv4Addr::new(198, 19, 1, 0));
    }
}
