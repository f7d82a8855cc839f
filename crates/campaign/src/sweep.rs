//! The sweep: every pending Trial of a campaign (this slice) run on the
//! testbeds the scheduler allows, each probe recorded (its HAR, then its line
//! in probes.jsonl) the moment it ends; a calibration per distinct link first.

use super::dir::{
    at, check_sites, har_name, write_atomically, write_calibration, Appender, CampaignDir,
};
use super::schedule::{
    chunks_of_reps, cpu_weight, expected_secs, in_shard, longest_first, max_testbeds, Scheduler,
    Work, CALIBRATION_WEIGHT,
};
use super::SweepError;
use lab::probe::{run_plan, Probe, ProbeSpec};
use lab::trial::{settings, Trial};
use proto::Protocol;
use results::experiment::{self, point_key, trial_key, Point};
use results::{latest, read_calibration, read_probes, CalibrationEntry, ProbeRecord, HAR_DIR};
use site::Site;
use std::collections::{HashMap, HashSet};
use std::io;
use std::path::Path;
use std::sync::{mpsc, Arc};
use std::time::{Duration, SystemTime};

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
        /// Its record as probes.jsonl keeps it (when it could be kept).
        probe: &'a ProbeRecord,
        done: usize,
        pending: usize,
    },
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
    results::probe::unix_secs(SystemTime::now())
}

/// What a testbed's thread hands back to the sweep, which records it.
enum Done {
    /// A link measured, for these campaigns.
    Calibrated(Option<CalibrationEntry>, String, Vec<usize>),
    Probe(Box<Probe>, Point, String),
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
    let one = [Campaign { dir: cd, site_base }];
    let failed = sweep_pooled(&one, opts, &mut |_, event| on_event(event))?;
    Ok(failed.first().copied().unwrap_or(0))
}

/// One campaign of a pooled run ([`sweep_pooled`]): its open directory and
/// where the site files its experiment names are found.
pub struct Campaign<'a> {
    pub dir: &'a CampaignDir,
    pub site_base: &'a Path,
}

/// A campaign's sites by the names its experiment gives them.
type SiteMap = HashMap<String, Arc<Site>>;

/// A work item with its expected seconds (the order) and its CPU weight.
type Queued = (f64, (Work, f64));

/// A campaign's part of a pooled run, once checked: its sites, its
/// calibrations and the counts its `Start` event gives.
struct Planned {
    calibration: Vec<CalibrationEntry>,
    total: usize,
    pending: usize,
    done: usize,
    failed: usize,
}

/// Runs several campaigns as one pool: every pending Trial (and chunk) of
/// every campaign in one queue, longest expected first across all of them,
/// on the testbeds the scheduler allows, so that no campaign's tail leaves
/// testbeds idle while the next campaign waits. Each probe is recorded in
/// its own campaign's directory as it ends, exactly as [`sweep`] records it
/// (which is this with one campaign); a rerun skips what each finished.
/// Every campaign is checked before anything runs. A link calibrated for one
/// campaign is measured once and recorded in every campaign of the same seed
/// that lacks it. `on_event` hears each event with its campaign's index.
/// Returns each campaign's failed probes.
pub fn sweep_pooled(
    campaigns: &[Campaign<'_>],
    opts: &SweepOptions,
    on_event: &mut dyn FnMut(usize, Event<'_>),
) -> Result<Vec<usize>, SweepError> {
    let mut planned = Vec::with_capacity(campaigns.len());
    let mut sites = Vec::with_capacity(campaigns.len());
    let mut order: Vec<Queued> = Vec::new();
    for (c, campaign) in campaigns.iter().enumerate() {
        let (plan, its_sites, work) = plan_campaign(c, campaign, opts)?;
        planned.push(plan);
        sites.push(its_sites);
        order.extend(work);
    }
    let mut queue = longest_first(order);
    for (c, plan) in planned.iter().enumerate() {
        on_event(
            c,
            Event::Start {
                total: plan.total,
                finished: plan.total - plan.pending,
                pending: plan.pending,
            },
        );
    }

    if opts.calibrate {
        // (seed, link) → the campaigns that need it measured.
        let mut links: Vec<(u64, String, Point, Vec<usize>)> = Vec::new();
        for (c, campaign) in campaigns.iter().enumerate() {
            if planned[c].pending == 0 {
                continue;
            }
            let exp = &campaign.dir.experiment;
            let known: HashSet<String> = planned[c]
                .calibration
                .iter()
                .map(|e| e.link.clone())
                .collect();
            for (i, p) in exp.points().iter().enumerate() {
                let key = link_key(p);
                if !in_shard(i, opts.shard) || known.contains(&key) {
                    continue;
                }
                match links
                    .iter_mut()
                    .find(|(seed, link, ..)| *seed == exp.seed && *link == key)
                {
                    Some((.., to)) if to.contains(&c) => {}
                    Some((.., to)) => to.push(c),
                    None => links.push((exp.seed, key, p.clone(), vec![c])),
                }
            }
        }
        for (seed, link, point, to) in links.into_iter().rev() {
            let work = Work::Calibrate {
                link,
                point,
                seed,
                to,
            };
            queue.push_front((work, CALIBRATION_WEIGHT));
        }
    }
    for (c, campaign) in campaigns.iter().enumerate() {
        if opts.har && planned[c].pending > 0 {
            let har_dir = campaign.dir.dir.join(HAR_DIR);
            std::fs::create_dir_all(&har_dir).map_err(|e| at(&har_dir, e))?;
        }
    }

    let queue = Scheduler::new(queue, opts.jobs);
    let (tx, rx) = mpsc::channel::<(usize, Done)>();
    let mut appenders = Vec::with_capacity(campaigns.len());
    for (c, campaign) in campaigns.iter().enumerate() {
        appenders.push(match planned[c].pending {
            0 => None,
            _ => Some(Appender::open(&campaign.dir.dir)?),
        });
    }
    let mut write_error: Option<io::Error> = None;
    let sites = &sites;
    std::thread::scope(|scope| {
        for _ in 0..max_testbeds(opts.jobs) {
            let tx = tx.clone();
            let queue = &queue;
            scope.spawn(move || {
                while let Some((work, weight)) = queue.take() {
                    run_work(campaigns, sites, work, &tx);
                    queue.done(weight);
                }
            });
        }
        drop(tx);
        for (c, msg) in rx {
            match msg {
                Done::Calibrated(entry, link, to) => {
                    for &c in &to {
                        if let Some(entry) = &entry {
                            let cal = &mut planned[c].calibration;
                            cal.push(entry.clone());
                            if let Err(e) = write_calibration(&campaigns[c].dir.dir, cal) {
                                // Nothing can be kept: stop taking new work.
                                queue.clear();
                                write_error.get_or_insert(e);
                            }
                        }
                        on_event(c, Event::Calibrated { link: &link });
                    }
                }
                Done::Probe(probe, point, trial) => {
                    let (cd, plan) = (campaigns[c].dir, &mut planned[c]);
                    let exp = &cd.experiment;
                    plan.done += 1;
                    let Probe {
                        mut record,
                        load,
                        started,
                        ..
                    } = *probe;
                    if record.error.is_some() {
                        plan.failed += 1;
                    }
                    let mut kept = write_error.is_none();
                    if let (true, true, Some(load)) = (kept, opts.har, &load) {
                        let name = har_name(&trial);
                        let mut doc = lab::har::har(load, started, &point["site"]);
                        lab::har::add_view(&mut doc, &record);
                        let file = cd.dir.join(&name);
                        match write_atomically(&file, doc.to_string().as_bytes())
                            .and_then(|()| lab::har::write_filmstrip(&file, load))
                        {
                            Ok(()) => record.har = Some(name),
                            Err(e) => {
                                // The probe is not recorded: a rerun runs it again.
                                kept = false;
                                write_error.get_or_insert(e);
                            }
                        }
                    }
                    let swept = exp.swept();
                    let mut label: Vec<String> = swept
                        .iter()
                        .filter_map(|a| point.get(*a).map(|v| format!("{a}={v}")))
                        .collect();
                    label.push(format!("{} rep {}", record.protocol, record.rep));
                    (record.trial, record.point) = (trial, point);
                    if kept {
                        let appended = match &mut appenders[c] {
                            Some(a) => a.append(&record.to_line()),
                            None => Err(io::Error::other("no probes.jsonl open (a bug)")),
                        };
                        if let Err(e) = appended {
                            write_error.get_or_insert(e);
                        }
                    }
                    if write_error.is_some() {
                        // Nothing more can be kept: stop taking new work.
                        queue.clear();
                    }
                    on_event(
                        c,
                        Event::Probe {
                            label: &label.join(" "),
                            probe: &record,
                            done: plan.done,
                            pending: plan.pending,
                        },
                    );
                }
            }
        }
    });
    if let Some(e) = write_error {
        // It names its file already.
        return Err(e.into());
    }
    Ok(planned.iter().map(|p| p.failed).collect())
}

/// Checks campaign `c` (every point, every site, against what its directory
/// ran before) and lists its pending work, each with its expected seconds
/// (for the longest-first order) and its CPU weight.
fn plan_campaign(
    c: usize,
    campaign: &Campaign<'_>,
    opts: &SweepOptions,
) -> Result<(Planned, SiteMap, Vec<Queued>), SweepError> {
    let (cd, site_base) = (campaign.dir, campaign.site_base);
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
            let site = lab::sites::resolve_in(name, exp.site_seed, site_base)
                .map_err(|e| SweepError::Usage(e.named("sites")))?;
            sites.insert(name.clone(), Arc::new(site));
        }
        lab::sites::lay_out(&sites[name], s.trial.layout)
            .map_err(|e| SweepError::Usage(format!("{}: knobs.layout: {e}", point_key(p))))
            .and_then(|laid| {
                s.trial
                    .preload
                    .apply(&laid)
                    .map_err(|e| SweepError::Usage(format!("{}: knobs.preload: {e}", point_key(p))))
            })?;
        let trial = Trial {
            server: exp.server,
            client: exp.client,
            ..s.trial
        };
        if let Some(why) = trial.site_refusal(&sites[name], &|k| format!("knobs.{k} =")) {
            return Err(SweepError::Usage(format!("{}: {why}", point_key(p))));
        }
        let refused = lab::probe::refusal(
            &trial,
            &exp.protocols,
            sites[name].resources.len(),
            &s.testbed,
        );
        if let Some(r) = refused {
            let (key, value) = match r {
                lab::trial::Refusal::Server { .. } => ("server", exp.server.name()),
                lab::trial::Refusal::Client { .. } => ("client", exp.client.name()),
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
    let mut order = Vec::new();
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
        let site = &sites[&p["site"]];
        let rep_secs = expected_secs(p, exp.seed, site, exp.protocols.len());
        let weight = cpu_weight(p, exp.seed, exp.client);
        for chunk in chunks_of_reps(&pending, rep_secs) {
            let probes = chunk.len() + exp.warmup * exp.protocols.len();
            let secs = expected_secs(p, exp.seed, site, probes);
            let work = Work::Point {
                campaign: c,
                point: p.clone(),
                pending: chunk,
            };
            order.push((secs, (work, weight)));
        }
    }
    let calibration = read_calibration(&cd.dir)?;
    let plan = Planned {
        calibration,
        total,
        pending: pending_total,
        done: 0,
        failed: 0,
    };
    Ok((plan, sites, order))
}

fn run_work(
    campaigns: &[Campaign<'_>],
    sites: &[SiteMap],
    work: Work,
    tx: &mpsc::Sender<(usize, Done)>,
) {
    match work {
        Work::Calibrate {
            link,
            point,
            seed,
            to,
        } => {
            let entry = settings(&point, seed).ok().and_then(|s| {
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
            let first = to.first().copied().unwrap_or(0);
            let _ = tx.send((first, Done::Calibrated(entry, link, to)));
        }
        Work::Point {
            campaign,
            point,
            pending,
        } => {
            let (exp, sites) = (&campaigns[campaign].dir.experiment, &sites[campaign]);
            let tx = |done: Done| {
                let _ = tx.send((campaign, done));
            };
            let fail_all = |pending: &[(Protocol, usize)], error: String| {
                for &(protocol, rep) in pending {
                    let probe = Probe::failed(protocol, rep, error.clone());
                    let trial = trial_key(&point, protocol, rep);
                    tx(Done::Probe(Box::new(probe), point.clone(), trial));
                }
            };
            let s = match settings(&point, exp.seed) {
                Ok(s) => s,
                Err(e) => return fail_all(&pending, e),
            };
            let site = match lab::sites::lay_out(&sites[&s.site], s.trial.layout) {
                Ok(site) => site,
                Err(e) => return fail_all(&pending, format!("knobs.layout: {e}")),
            };
            let site = match s.trial.preload.apply(&site) {
                Ok(site) => site,
                Err(e) => return fail_all(&pending, format!("knobs.preload: {e}")),
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
                pcap: None,
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
                let (protocol, rep) = (probe.record.protocol, probe.record.rep);
                reported.insert((protocol, rep));
                let trial = trial_key(&point, protocol, rep);
                tx(Done::Probe(Box::new(probe.clone()), point.clone(), trial));
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
