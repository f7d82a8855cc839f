//! Campaigns: an experiment's Trials run on N isolated testbeds in parallel,
//! each ProbeResult appended to `DIR/probes.jsonl` (and fsync'd, its HAR
//! first) the moment it ends, so that Ctrl-C or `kill -9` loses only the
//! probes in flight and a rerun skips every finished Trial. A failed write
//! (a full disk) cuts the file back to its last whole line and stops the
//! sweep. DIR also keeps a copy of the experiment (pinned: it means the same
//! wherever it lies), a fingerprint of each site (`sites.json`), a HAR per
//! probe and `calibration.json`. `merge` joins the directories of
//! slices run apart (`--shard i/n`). What is stored, and the file names, are
//! the `results` crate's: this module runs probes and writes through it.

use crate::probe::{run_plan, ProbeResult, ProbeSpec};
use crate::trial::{settings, Trial};
use proto::Protocol;
use results::experiment::{self, point_key, trial_key, Experiment, Point};
use results::experiment::{campaign_differences, pinned_text};
use results::{
    calibration_json, latest, read_calibration, read_probes, CalibrationEntry, Phases, ProbeRecord,
    CALIBRATION_FILE, HAR_DIR,
};
use site::Site;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

// The CLI names these as `lab::campaign::…`.
pub use results::{EXPERIMENT_FILE, PROBES_FILE};

/// The record of `probe` (of Trial `trial` at `point`) as probes.jsonl keeps it.
fn record(trial: String, point: &Point, probe: &ProbeResult, har: Option<String>) -> ProbeRecord {
    let t = &probe.phases;
    ProbeRecord {
        trial,
        point: point.clone(),
        schema: probe.schema,
        protocol: probe.protocol,
        rep: probe.rep,
        plt_ms: probe.plt_ms,
        tow_ms: probe.tow_ms,
        connections: probe.connections,
        syns: probe.syns,
        bytes_down: probe.bytes_down,
        bytes_up: probe.bytes_up,
        packets_down: probe.packets_down,
        packets_up: probe.packets_up,
        drops_queue: probe.drops_queue,
        drops_loss: probe.drops_loss,
        resources: probe.resources,
        body_bytes: probe.body_bytes,
        misses: probe.misses,
        phases: Phases {
            blocked: t.blocked,
            dns: t.dns,
            connect: t.connect,
            ssl: t.ssl,
            send: t.send,
            wait: t.wait,
            receive: t.receive,
        },
        error: probe.error.clone(),
        tls_resumed: probe.tls_resumed,
        started: probe
            .started
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0.0, |d| d.as_secs_f64()),
        har,
    }
}

/// How a sweep runs.
pub struct SweepOptions {
    /// Testbeds running at once; None: as many as the CPU budget allows
    /// (see [`AUTO_JOBS_PER_CORE`] and [`cpu_weight`]).
    pub jobs: Option<usize>,
    /// Run only slice `.0` (1-based) of `.1`.
    pub shard: (usize, usize),
    pub retry_failed: bool,
    pub calibrate: bool,
    pub har: bool,
}

/// What a sweep hears about as it goes.
pub enum Event<'a> {
    /// The sweep starts: Trials in the campaign (this slice), finished before, to run now.
    Start {
        total: usize,
        finished: usize,
        pending: usize,
    },
    Calibrated {
        link: &'a str,
    },
    Probe {
        /// The Trial's swept values, protocol and repetition (its key is longer).
        label: &'a str,
        probe: &'a ProbeResult,
        done: usize,
        pending: usize,
    },
}

/// Why a sweep could not start.
#[derive(Debug)]
pub enum SweepError {
    /// Bad input: a different experiment in DIR, a point that contradicts itself, …
    Usage(String),
    Io(io::Error),
}

impl From<io::Error> for SweepError {
    fn from(e: io::Error) -> Self {
        SweepError::Io(e)
    }
}

impl std::fmt::Display for SweepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SweepError::Usage(m) => f.write_str(m),
            SweepError::Io(e) => write!(f, "{e}"),
        }
    }
}

/// An open campaign directory, locked against a second writer.
pub struct CampaignDir {
    pub dir: PathBuf,
    pub experiment: Experiment,
    _lock: File,
}

fn at(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// The campaign's record of each site it loads: what a site value (a built-in
/// name or a file, relative to the experiment file) turned out to be.
pub const SITES_FILE: &str = "sites.json";

/// A site's fingerprint: FNV-1a 64 of its JSON (resources, sizes, seed).
fn fingerprint(site: &Site) -> String {
    let json = serde_json::to_string(site).unwrap_or_default();
    let mut h: u64 = 0xcbf29ce484222325;
    for b in json.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{h:016x}")
}

fn describe_site(v: &serde_json::Value) -> String {
    format!(
        "{} resources, {:.1} kB, fingerprint {}",
        v["resources"],
        v["bytes"].as_f64().unwrap_or(0.0) / 1e3,
        v["fingerprint"].as_str().unwrap_or("?")
    )
}

/// Checks the sites against those the campaign in `dir` ran before (a site
/// file moved, edited or resolved against another directory is another site),
/// and records the new ones.
fn check_sites(dir: &Path, sites: &HashMap<String, Arc<Site>>) -> Result<(), SweepError> {
    let path = dir.join(SITES_FILE);
    let mut known: serde_json::Map<String, serde_json::Value> = match std::fs::read_to_string(&path)
    {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            SweepError::Usage(format!(
                "{}:{}: {e}; delete the file to record the sites anew",
                path.display(),
                e.line()
            ))
        })?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Default::default(),
        Err(e) => return Err(at(&path, e).into()),
    };
    let mut names: Vec<&String> = sites.keys().collect();
    names.sort();
    let mut added = false;
    for name in names {
        let site = &sites[name];
        let now = serde_json::json!({
            "fingerprint": fingerprint(site),
            "resources": site.resources.len(),
            "bytes": site.total_bytes(),
        });
        match known.get(name) {
            Some(then) if then["fingerprint"] == now["fingerprint"] => {}
            Some(then) => {
                return Err(SweepError::Usage(format!(
                    "{}: site '{name}' is not the site this campaign ran (then: {}; now: {}; \
                     a site file is read relative to the experiment file): use another --out, \
                     or restore the site",
                    dir.display(),
                    describe_site(then),
                    describe_site(&now)
                )))
            }
            None => {
                known.insert(name.clone(), now);
                added = true;
            }
        }
    }
    if added {
        let text = serde_json::to_string_pretty(&known).unwrap_or_default() + "\n";
        write_atomically(&path, text.as_bytes())?;
    }
    Ok(())
}

/// Joins the inputs' sites.json into `out`'s; slices that ran different
/// sites under one name are refused.
fn merge_sites(inputs: &[PathBuf], out: &Path) -> Result<(), SweepError> {
    let mut all: serde_json::Map<String, serde_json::Value> = Default::default();
    let mut from: HashMap<String, PathBuf> = HashMap::new();
    for dir in std::iter::once(&out.to_path_buf()).chain(inputs) {
        let path = dir.join(SITES_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(at(&path, e).into()),
        };
        let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&text)
            .map_err(|e| SweepError::Usage(format!("{}:{}: {e}", path.display(), e.line())))?;
        for (name, v) in map {
            match all.get(&name) {
                Some(w) if w["fingerprint"] != v["fingerprint"] => {
                    return Err(SweepError::Usage(format!(
                        "site '{name}' differs between {} ({}) and {} ({})",
                        from[&name].display(),
                        describe_site(w),
                        path.display(),
                        describe_site(&v)
                    )))
                }
                Some(_) => {}
                None => {
                    from.insert(name.clone(), path.clone());
                    all.insert(name, v);
                }
            }
        }
    }
    if !all.is_empty() {
        let text = serde_json::to_string_pretty(&all).unwrap_or_default() + "\n";
        write_atomically(&out.join(SITES_FILE), text.as_bytes())?;
    }
    Ok(())
}

/// How long `open` waits for a campaign directory's lock before refusing.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_secs(15);

impl CampaignDir {
    /// Opens (or creates) DIR for `experiment`, whose text is `text`. Refuses a
    /// DIR that holds a different experiment, or that another sweep is writing.
    /// The copy kept is `text` pinned (`experiment::pinned_text`); labels (name,
    /// description) may change between runs, and the copy follows them.
    pub fn open(dir: &Path, experiment: Experiment, text: &str) -> Result<CampaignDir, SweepError> {
        std::fs::create_dir_all(dir).map_err(|e| at(dir, e))?;
        let lock_path = dir.join(".lock");
        let lock = File::create(&lock_path).map_err(|e| at(&lock_path, e))?;
        // A sweep killed a moment ago (kill -9) may still hold the lock through
        // the processes it started, which die with it within moments
        // (PR_SET_PDEATHSIG): wait for them a little before refusing.
        let patience = std::time::Instant::now() + LOCK_PATIENCE;
        // SAFETY: flock on a descriptor we own.
        while unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            if std::time::Instant::now() >= patience {
                return Err(SweepError::Usage(format!(
                    "{} is in use by another spdylab sweep",
                    dir.display()
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let saved = dir.join(EXPERIMENT_FILE);
        match std::fs::read_to_string(&saved) {
            Ok(old_text) => {
                let old = experiment::parse(&saved.display().to_string(), &old_text)
                    .map_err(|e| SweepError::Usage(e.to_string()))?;
                let differ = campaign_differences(&old, &experiment);
                if !differ.is_empty() {
                    return Err(SweepError::Usage(format!(
                        "{} holds results of a different experiment ({} differs from {}); \
                         use another --out, or restore the experiment file{}",
                        dir.display(),
                        differ.join(", "),
                        saved.display(),
                        if differ.iter().any(|d| d == "server" || d == "client") {
                            " (and the --server/--client it ran with)"
                        } else {
                            ""
                        }
                    )));
                }
                if old != experiment {
                    // Only labels changed: the copy follows them.
                    write_atomically(&saved, pinned_text(&experiment, text).as_bytes())?;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                write_atomically(&saved, pinned_text(&experiment, text).as_bytes())?;
            }
            Err(e) => return Err(at(&saved, e).into()),
        }
        Ok(CampaignDir {
            dir: dir.to_path_buf(),
            experiment,
            _lock: lock,
        })
    }
}

/// Writes `path` whole or not at all (`durable::write_whole`); a failure names
/// the file and leaves no temporary.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    crate::durable::write_whole(path, bytes).map_err(|e| at(path, e))
}

/// fsyncs the directory holding `path`, so that a new name in it survives a crash.
fn sync_dir(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    crate::durable::sync_dir(dir).map_err(|e| at(dir, e))
}

/// Appends records to probes.jsonl, each line fsync'd (fdatasync) before the
/// next probe is counted. A write that fails (a full disk) is cut back off
/// the file, so it still ends in a whole line, and no line is appended after.
struct Appender {
    file: File,
    path: PathBuf,
    /// The file's length: every byte a whole line.
    len: u64,
    broken: bool,
}

impl Appender {
    fn open(dir: &Path) -> io::Result<Appender> {
        let path = dir.join(PROBES_FILE);
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| at(&path, e))?;
        let len = file.metadata().map_err(|e| at(&path, e))?.len();
        sync_dir(&path)?;
        Ok(Appender {
            file,
            path,
            len,
            broken: false,
        })
    }

    fn append(&mut self, line: &str) -> io::Result<()> {
        if self.broken {
            return Err(io::Error::other(format!(
                "{}: not appended after an earlier failed write",
                self.path.display()
            )));
        }
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        let result = self
            .file
            .write_all(&buf)
            .and_then(|()| self.file.sync_data());
        match result {
            Ok(()) => {
                self.len += buf.len() as u64;
                Ok(())
            }
            Err(e) => {
                self.broken = true;
                // A part of the line may be in: cut it off (were this to fail
                // too, the next run drops a cut-short last line).
                let _ = self.file.set_len(self.len);
                let _ = self.file.sync_data();
                Err(io::Error::new(
                    e.kind(),
                    format!(
                        "{}: {e}; the file ends at its last whole line: make room and run \
                         the same command again to resume",
                        self.path.display()
                    ),
                ))
            }
        }
    }
}

/// Which slice of the points a shard runs: every n-th, starting at i-1.
pub fn in_shard(index: usize, shard: (usize, usize)) -> bool {
    index % shard.1 == shard.0 - 1
}

/// A stable file name for a Trial's HAR.
fn har_name(trial: &str) -> String {
    // FNV-1a, 64 bits: stable across runs and machines.
    let mut h: u64 = 0xcbf29ce484222325;
    for b in trial.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    format!("{HAR_DIR}/{h:016x}.har")
}

/// The link part of a point, which calibration measures.
pub fn link_key(p: &Point) -> String {
    let link: Point = p
        .iter()
        .filter(|(k, _)| experiment::field(k).is_some_and(|f| f.section == "link"))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    point_key(&link)
}

fn write_calibration(dir: &Path, entries: &[CalibrationEntry]) -> io::Result<()> {
    write_atomically(
        &dir.join(CALIBRATION_FILE),
        calibration_json(entries).as_bytes(),
    )
}

/// The quick calibration a campaign records per distinct link.
pub fn quick_plan() -> netns::calibrate::Plan {
    netns::calibrate::Plan {
        echo_samples: 10,
        bulk_time: Duration::from_secs(2),
        datagrams: 1000,
        transport: netns::calibrate::Transport::Tcp,
    }
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The most testbeds `--jobs auto` runs at once, per core (the CPU budget,
/// [`cpu_weight`], decides how many of them run together).
pub const AUTO_JOBS_PER_CORE: usize = 8;

/// The most testbeds at once for `jobs` (None: auto, [`AUTO_JOBS_PER_CORE`] per core).
pub fn max_testbeds(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| {
        AUTO_JOBS_PER_CORE * std::thread::available_parallelism().map_or(1, |n| n.get())
    })
    .max(1)
}

/// The share of a core a testbed of this point is expected to use while it
/// probes: its emulator, server and client together. The emulator's and the
/// stacks' work grows with the packets per second, so with the link's rate:
/// measured on this project's 2-core machine, twelve testbeds probing at
/// 1 Mbit/s (fig2, fig4 and fig9 at once) used 0.1 of a core together, and at
/// 100 Mbit/s the emulator alone takes a quarter of a core and the stacks as
/// much again. So: a base of 0.05 (the TLS handshakes at a load's start), plus
/// half a core per 100 Mbit/s of the faster direction, at most a whole core;
/// an unlimited or trace-driven link is a whole core. A calibration runs bulk
/// transfers and measures timing: a whole core.
pub fn cpu_weight(point: &Point, seed: u64) -> f64 {
    const BASE: f64 = 0.05;
    const PER_BIT_PER_SEC: f64 = 0.5 / 100e6;
    let Ok(s) = settings(point, seed) else {
        return 1.0;
    };
    let link = &s.testbed.link;
    let rate = |svc: &link::Service| match svc {
        link::Service::Rate(r) => Some(r.0 as f64),
        _ => None,
    };
    match (rate(&link.down.service), rate(&link.up.service)) {
        (Some(d), Some(u)) => (BASE + d.max(u) * PER_BIT_PER_SEC).min(1.0),
        _ => 1.0,
    }
}

/// A point's expected duration (for longest-first order): its page's bytes
/// at the down rate plus a few round trips, per probe.
fn expected_secs(point: &Point, seed: u64, site: &Site, probes: usize) -> f64 {
    let Ok(s) = settings(point, seed) else {
        return 0.0;
    };
    let link = &s.testbed.link;
    let rtt = (link.down.delay + link.up.delay).as_secs_f64();
    let bits = site.total_bytes() as f64 * 8.0;
    let transfer = link
        .down
        .service
        .bits_per_sec()
        .map_or(0.0, |r| bits / r.max(1.0));
    probes as f64 * (transfer + 10.0 * rtt)
}

enum Work {
    Calibrate {
        link: String,
        point: Point,
    },
    Point {
        point: Point,
        pending: Vec<(Protocol, usize)>,
    },
}

enum Done {
    Calibrated(Option<CalibrationEntry>, String),
    Probe(Box<ProbeResult>, Point, String),
}

/// Runs the campaign in `cd`: every Trial of this slice not finished before.
/// Site files named in the experiment are found from `site_base` (the
/// experiment file's directory). Returns the number of probes that failed in
/// this run.
pub fn sweep(
    cd: &CampaignDir,
    opts: &SweepOptions,
    site_base: &Path,
    on_event: &mut dyn FnMut(Event<'_>),
) -> Result<usize, SweepError> {
    let exp = &cd.experiment;
    let points = exp.points();
    // Check every point before running anything: a sweep that stops at hour 3
    // because one point contradicts itself helps nobody.
    let mut sites: HashMap<String, Arc<Site>> = HashMap::new();
    for p in &points {
        let s = settings(p, exp.seed)
            .map_err(|e| SweepError::Usage(format!("{}: {e}", point_key(p))))?;
        let name = &p["site"];
        if !sites.contains_key(name) {
            let site = crate::sites::resolve_in(name, exp.site_seed, site_base)
                .map_err(|e| SweepError::Usage(e.named("sites")))?;
            sites.insert(name.clone(), Arc::new(site));
        }
        crate::sites::lay_out(&sites[name], s.trial.layout)
            .map_err(|e| SweepError::Usage(format!("{}: knobs.layout: {e}", point_key(p))))?;
        let trial = Trial {
            server: exp.server,
            client: exp.client,
            ..s.trial
        };
        let refused = trial.refusal(&exp.protocols, sites[name].resources.len());
        if let Some(r) = refused {
            let (key, value) = match r {
                crate::trial::Refusal::Server { .. } => ("server", exp.server.name()),
                crate::trial::Refusal::Client { .. } => ("client", exp.client.name()),
            };
            return Err(SweepError::Usage(format!(
                "{}: {key} = \"{value}\": {}",
                point_key(p),
                r.why()
            )));
        }
    }

    check_sites(&cd.dir, &sites)?;

    let finished: HashSet<String> = latest(read_probes(&cd.dir, true)?)
        .into_iter()
        .filter(|p| !(opts.retry_failed && p.error.is_some()))
        .map(|p| p.trial)
        .collect();
    let mut queue = VecDeque::new();
    let mut order: Vec<(f64, Work)> = Vec::new();
    let (mut total, mut pending_total) = (0, 0);
    for (i, p) in points.iter().enumerate() {
        if !in_shard(i, opts.shard) {
            continue;
        }
        let mut pending = Vec::new();
        for rep in 0..exp.reps {
            for &proto in &exp.protocols {
                total += 1;
                if !finished.contains(&trial_key(p, proto, rep)) {
                    pending.push((proto, rep));
                }
            }
        }
        pending_total += pending.len();
        if !pending.is_empty() {
            let probes = pending.len() + exp.warmup * exp.protocols.len();
            let secs = expected_secs(p, exp.seed, &sites[&p["site"]], probes);
            order.push((
                secs,
                Work::Point {
                    point: p.clone(),
                    pending,
                },
            ));
        }
    }
    // Longest first, so that no long point is left to run alone at the end
    // while the other testbeds idle.
    order.sort_by(|a, b| b.0.total_cmp(&a.0));
    queue.extend(order.into_iter().map(|(_, w)| w));
    on_event(Event::Start {
        total,
        finished: total - pending_total,
        pending: pending_total,
    });

    let mut calibration = read_calibration(&cd.dir)?;
    if opts.calibrate && pending_total > 0 {
        let known: HashSet<String> = calibration.iter().map(|c| c.link.clone()).collect();
        let mut links = Vec::new();
        for (i, p) in points.iter().enumerate() {
            let key = link_key(p);
            if in_shard(i, opts.shard) && !known.contains(&key) && !links.contains(&key) {
                links.push(key.clone());
                queue.push_front(Work::Calibrate {
                    link: key,
                    point: p.clone(),
                });
            }
        }
    }
    if opts.har {
        let har_dir = cd.dir.join(HAR_DIR);
        std::fs::create_dir_all(&har_dir).map_err(|e| at(&har_dir, e))?;
    }

    let queue = Scheduler {
        state: Mutex::new(Sched {
            queue,
            busy: 0.0,
            running: 0,
        }),
        freed: Condvar::new(),
        budget: match opts.jobs {
            // Asked for N testbeds: N, whatever they weigh.
            Some(_) => f64::INFINITY,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()) as f64,
        },
        seed: exp.seed,
    };
    let (tx, rx) = mpsc::channel::<Done>();
    let mut appender = Appender::open(&cd.dir)?;
    let mut failed = 0;
    let mut done = 0;
    let mut write_error: Option<io::Error> = None;
    std::thread::scope(|scope| {
        for _ in 0..max_testbeds(opts.jobs) {
            let tx = tx.clone();
            let queue = &queue;
            let sites = &sites;
            scope.spawn(move || {
                while let Some((work, weight)) = queue.take() {
                    run_work(exp, work, sites, &tx);
                    queue.done(weight);
                }
            });
        }
        drop(tx);
        for msg in rx {
            match msg {
                Done::Calibrated(entry, link) => {
                    if let Some(entry) = entry {
                        calibration.push(entry);
                        if let Err(e) = write_calibration(&cd.dir, &calibration) {
                            // Nothing can be kept: stop taking new work.
                            queue.clear();
                            write_error.get_or_insert(e);
                        }
                    }
                    on_event(Event::Calibrated { link: &link });
                }
                Done::Probe(probe, point, trial) => {
                    done += 1;
                    if probe.error.is_some() {
                        failed += 1;
                    }
                    let mut har = None;
                    let mut kept = write_error.is_none();
                    if let (true, true, Some(load), Some(started)) =
                        (kept, opts.har, &probe.load, probe.started)
                    {
                        let name = har_name(&trial);
                        let doc = crate::har::har(load, started, &point["site"]);
                        match write_atomically(&cd.dir.join(&name), doc.to_string().as_bytes()) {
                            Ok(()) => har = Some(name),
                            Err(e) => {
                                // The probe is not recorded: a rerun runs it again.
                                kept = false;
                                write_error.get_or_insert(e);
                            }
                        }
                    }
                    if kept {
                        let line = record(trial.clone(), &point, &probe, har).to_line();
                        if let Err(e) = appender.append(&line) {
                            write_error.get_or_insert(e);
                        }
                    }
                    if write_error.is_some() {
                        // Nothing more can be kept: stop taking new work.
                        queue.clear();
                    }
                    let swept = exp.swept();
                    let mut label: Vec<String> = swept
                        .iter()
                        .filter_map(|a| point.get(*a).map(|v| format!("{a}={v}")))
                        .collect();
                    label.push(format!("{} rep {}", probe.protocol, probe.rep));
                    on_event(Event::Probe {
                        label: &label.join(" "),
                        probe: &probe,
                        done,
                        pending: pending_total,
                    });
                }
            }
        }
    });
    if let Some(e) = write_error {
        // It names its file already.
        return Err(e.into());
    }
    Ok(failed)
}

/// Hands out the work to the testbeds' threads: the next item whose CPU
/// weight fits in what the running ones leave of the budget (the cores), or
/// any item when none runs.
struct Scheduler {
    state: Mutex<Sched>,
    freed: Condvar,
    budget: f64,
    seed: u64,
}

struct Sched {
    queue: VecDeque<Work>,
    busy: f64,
    running: usize,
}

impl Scheduler {
    fn weight(&self, work: &Work) -> f64 {
        match work {
            Work::Calibrate { .. } => 1.0,
            Work::Point { point, .. } => cpu_weight(point, self.seed),
        }
    }

    /// The next work to run and its weight; None when there is none left.
    fn take(&self) -> Option<(Work, f64)> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if st.queue.is_empty() {
                return None;
            }
            let weights: Vec<f64> = st.queue.iter().map(|w| self.weight(w)).collect();
            if let Some(i) = pick(&weights, st.busy, st.running, self.budget) {
                let work = st.queue.remove(i).expect("a queued item");
                let weight = self.weight(&work);
                st.busy += weight;
                st.running += 1;
                return Some((work, weight));
            }
            st = self.freed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn done(&self, weight: f64) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.busy -= weight;
        st.running -= 1;
        self.freed.notify_all();
    }

    /// Drops the work not started (nothing more can be kept).
    fn clear(&self) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .queue
            .clear();
        self.freed.notify_all();
    }
}

/// Which queued item (by its weight) starts next: the first that fits in what
/// the `running` items (weighing `busy`) leave of `budget`; any when none runs.
fn pick(weights: &[f64], busy: f64, running: usize, budget: f64) -> Option<usize> {
    weights
        .iter()
        .position(|w| running == 0 || busy + w <= budget + 1e-9)
}

fn run_work(
    exp: &Experiment,
    work: Work,
    sites: &HashMap<String, Arc<Site>>,
    tx: &mpsc::Sender<Done>,
) {
    match work {
        Work::Calibrate { link, point } => {
            let entry = settings(&point, exp.seed).ok().and_then(|s| {
                let plan = quick_plan();
                let c = netns::calibrate::run(&s.testbed, &plan, &mut |_| {}).ok()?;
                let spec = &s.testbed.link;
                Some(CalibrationEntry {
                    link: link.clone(),
                    rtt_ms: c.rtt_ms.spec,
                    rtt_measured_ms: c.rtt_ms.measured,
                    rtt_expected_ms: c.rtt_ms.expected,
                    down_bps: spec.down.service.bits_per_sec(),
                    down_measured_bps: c.down_bps.measured,
                    up_bps: spec.up.service.bits_per_sec(),
                    up_measured_bps: c.up_bps.measured,
                    down_error_bps: Some(c.down_bps.error_bps),
                    up_error_bps: Some(c.up_bps.error_bps),
                    loss: c.loss.spec,
                    loss_measured: c.loss.measured,
                    emulator_cpu_pct: c.down_bps.emulator_cpu_pct,
                    when: unix_now(),
                })
            });
            let _ = tx.send(Done::Calibrated(entry, link));
        }
        Work::Point { point, pending } => {
            let fail_all = |pending: &[(Protocol, usize)], error: String| {
                for &(protocol, rep) in pending {
                    let probe = ProbeResult::failed(protocol, rep, error.clone());
                    let trial = trial_key(&point, protocol, rep);
                    let _ = tx.send(Done::Probe(Box::new(probe), point.clone(), trial));
                }
            };
            let s = match settings(&point, exp.seed) {
                Ok(s) => s,
                Err(e) => return fail_all(&pending, e),
            };
            let site = match crate::sites::lay_out(&sites[&s.site], s.trial.layout) {
                Ok(site) => site,
                Err(e) => return fail_all(&pending, format!("knobs.layout: {e}")),
            };
            let spec = ProbeSpec {
                site,
                protocols: exp.protocols.clone(),
                testbed: s.testbed,
                reps: exp.reps,
                warmup: exp.warmup,
                trial: Trial {
                    server: exp.server,
                    client: exp.client,
                    timeout: exp.timeout,
                    ..s.trial
                },
                keep_server_log: None,
            };
            let mut plan: Vec<(Protocol, Option<usize>)> = Vec::new();
            for _ in 0..exp.warmup {
                plan.extend(exp.protocols.iter().map(|&p| (p, None)));
            }
            plan.extend(pending.iter().map(|&(p, rep)| (p, Some(rep))));
            let mut reported = HashSet::new();
            let result = run_plan(&spec, plan, &mut |probe, _, _| {
                if probe.warmup {
                    return;
                }
                reported.insert((probe.protocol, probe.rep));
                let trial = trial_key(&point, probe.protocol, probe.rep);
                let _ = tx.send(Done::Probe(Box::new(probe.clone()), point.clone(), trial));
            });
            if let Err(e) = result {
                // The testbed failed: every Trial it did not finish is recorded as failed.
                let left: Vec<_> = pending
                    .into_iter()
                    .filter(|k| !reported.contains(k))
                    .collect();
                fail_all(&left, format!("testbed: {e}"));
            }
        }
    }
}

/// Joins campaign directories (slices of one experiment) into `out`.
/// Returns (records written, duplicates skipped).
pub fn merge(inputs: &[PathBuf], out: &Path) -> Result<(usize, usize), SweepError> {
    let mut experiment: Option<(Experiment, String, PathBuf)> = None;
    for dir in inputs {
        let path = dir.join(EXPERIMENT_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| SweepError::Usage(format!("{}: {e}", path.display())))?;
        let exp = experiment::parse(&path.display().to_string(), &text)
            .map_err(|e| SweepError::Usage(e.to_string()))?;
        match &experiment {
            None => experiment = Some((exp, text, path)),
            Some((first, _, first_path)) if !campaign_differences(first, &exp).is_empty() => {
                return Err(SweepError::Usage(format!(
                    "{} and {} are different experiments ({} differ)",
                    first_path.display(),
                    path.display(),
                    campaign_differences(first, &exp).join(", ")
                )))
            }
            Some(_) => {}
        }
    }
    let Some((exp, text, _)) = experiment else {
        return Err(SweepError::Usage(
            "merge needs at least one directory".into(),
        ));
    };
    let cd = CampaignDir::open(out, exp, &text)?;
    let mut seen: HashSet<String> = latest(read_probes(&cd.dir, true)?)
        .into_iter()
        .map(|p| p.trial)
        .collect();
    let mut calibration = read_calibration(&cd.dir)?;
    let mut appender = Appender::open(&cd.dir)?;
    let (mut written, mut skipped) = (0, 0);
    for dir in inputs {
        if dir.canonicalize().ok() == cd.dir.canonicalize().ok() {
            continue;
        }
        // Copy raw lines, so that no field is lost in translation.
        let path = dir.join(PROBES_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(at(&path, e).into()),
        };
        let stored = latest(read_probes(dir, false)?);
        let keep: HashMap<&str, &ProbeRecord> =
            stored.iter().map(|p| (p.trial.as_str(), p)).collect();
        for line in text.lines() {
            let Ok(p) = serde_json::from_str::<ProbeRecord>(line) else {
                continue; // a line cut short by a kill
            };
            // Only the latest record of each Trial, once.
            let latest_here = keep
                .get(p.trial.as_str())
                .is_some_and(|k| k.started == p.started);
            if !latest_here || seen.contains(&p.trial) {
                skipped += 1;
                continue;
            }
            if let Some(har) = &p.har {
                let (from, to) = (dir.join(har), cd.dir.join(har));
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                if from.exists() {
                    let bytes = std::fs::read(&from).map_err(|e| at(&from, e))?;
                    write_atomically(&to, &bytes)?;
                }
            }
            appender.append(line)?;
            seen.insert(p.trial);
            written += 1;
        }
        for c in read_calibration(dir)? {
            if !calibration.iter().any(|k| k.link == c.link) {
                calibration.push(c);
            }
        }
    }
    write_calibration(&cd.dir, &calibration)?;
    merge_sites(inputs, &cd.dir)?;
    Ok((written, skipped))
}

#[cfg(test)]
mod scheduling_tests {
    use super::*;

    fn point(rate: Option<&str>) -> Point {
        let mut p = Point::new();
        p.insert("site".into(), "twitter".into());
        p.insert("rtt".into(), "150ms".into());
        if let Some(r) = rate {
            p.insert("rate".into(), r.into());
        }
        p
    }

    #[test]
    fn a_testbed_weighs_by_its_links_rate_and_unlimited_is_a_core() {
        let w = |r| cpu_weight(&point(r), 1);
        assert!(
            (w(Some("1mbit")) - 0.055).abs() < 1e-9,
            "{}",
            w(Some("1mbit"))
        );
        assert!((w(Some("10mbit")) - 0.1).abs() < 1e-9);
        assert!((w(Some("100mbit")) - 0.55).abs() < 1e-9);
        assert_eq!(w(Some("1gbit")), 1.0);
        assert_eq!(w(None), 1.0);
    }

    #[test]
    fn two_cores_carry_many_slow_testbeds_or_two_fast_ones() {
        // Thirty-six 1 Mbit points fit in two cores; the next waits.
        assert_eq!(pick(&[0.055], 35.0 * 0.055, 35, 2.0), Some(0));
        assert_eq!(pick(&[0.055], 2.0, 36, 2.0), None);
        // A whole-core point waits while more than a core is busy, but a slow
        // one later in the queue may start.
        assert_eq!(pick(&[1.0, 0.055], 1.5, 20, 2.0), Some(1));
        // Anything starts when nothing runs, even over the budget.
        assert_eq!(pick(&[4.0], 0.0, 0, 2.0), Some(0));
        // --jobs N: no budget, only the N threads.
        assert_eq!(pick(&[1.0], 7.0, 7, f64::INFINITY), Some(0));
    }

    #[test]
    fn auto_runs_at_most_eight_testbeds_per_core_and_n_means_n() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(max_testbeds(None), 8 * cores);
        assert_eq!(max_testbeds(Some(1)), 1);
        assert_eq!(max_testbeds(Some(5)), 5);
    }
}
