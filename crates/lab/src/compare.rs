//! `compare`: the interleaved plan — warm-ups, then repetitions with the
//! protocols interleaved (A B C A B C …) so that drift hits all alike — run as
//! probes on one testbed (`probe::run_plan`), and the summary per protocol.

use crate::probe::{run_plan, Probe, ProbeRecord, ProbeSpec};
use netns::TestbedSpec;
use proto::Protocol;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use verdict::judge::{Decision, Judgement, SettingsDiff};

pub use results::summary::{failure_note, or_na};
pub use results::{Metric, ProtocolSummary};

/// Runs the comparison: warm-ups, then `reps` repetitions with the protocols
/// interleaved. `on_probe` hears of every finished probe, warm-ups too; the
/// probes returned are the counted ones.
pub fn run(
    spec: &ProbeSpec,
    on_probe: &mut dyn FnMut(&Probe, usize, usize),
) -> io::Result<Vec<Probe>> {
    let mut plan = Vec::new();
    for rep in 0..spec.warmup + spec.reps {
        for p in &spec.protocols {
            plan.push((*p, rep.checked_sub(spec.warmup)));
        }
    }
    let mut results = run_plan(spec, plan, on_probe)?;
    results.retain(|p| !p.warmup);
    Ok(results)
}

/// What a comparison left: the probes that finished (warm-ups not counted),
/// whether a stop request cut it short, and the first HAR that could not be
/// written (the run goes on without it; the caller reports it after the table).
#[derive(Debug, Default)]
pub struct Outcome {
    pub probes: Vec<ProbeRecord>,
    pub interrupted: bool,
    pub har_error: Option<String>,
}

/// As `run`, on a thread of its own, so that `stop` (set by the CLI's one
/// signal path on Ctrl-C) ends the wait at once, keeping every probe that
/// finished before it. With `har_dir`, each probe's HAR is written there
/// whole (`durable::write_whole`) as it ends, named SITE-PROTOCOL-NNN.har,
/// with Chromium's filmstrip beside it (`har::write_filmstrip`).
/// `on_probe` hears of every finished probe (warm-ups too) unless stopped.
pub fn run_until_stopped(
    spec: Arc<ProbeSpec>,
    har_dir: Option<PathBuf>,
    stop: Arc<AtomicBool>,
    mut on_probe: impl FnMut(&ProbeRecord, usize, usize) + Send + 'static,
) -> io::Result<Outcome> {
    let finished: Arc<Mutex<Vec<ProbeRecord>>> = Arc::default();
    let har_error: Arc<Mutex<Option<String>>> = Arc::default();
    let worker = {
        let (finished, har_error, stop) = (finished.clone(), har_error.clone(), stop.clone());
        std::thread::spawn(move || {
            run(&spec, &mut |p, done, total| {
                if stop.load(Ordering::Relaxed) {
                    return; // perhaps cut short by the stop: not kept
                }
                on_probe(&p.record, done, total);
                if let (Some(dir), Some(load)) = (&har_dir, &p.load) {
                    let file = dir.join(format!(
                        "{}-{}-{:03}.har",
                        spec.site.name, p.record.protocol, done
                    ));
                    let mut doc = crate::har::har(load, p.started, &spec.site.name);
                    crate::har::add_view(&mut doc, &p.record);
                    if let Err(e) =
                        results::durable::write_whole(&file, format!("{doc:#}").as_bytes())
                            .and_then(|()| crate::har::write_filmstrip(&file, load))
                    {
                        let mut slot = har_error.lock().unwrap_or_else(|e| e.into_inner());
                        slot.get_or_insert(format!("--har-dir {}: {e}", file.display()));
                    }
                }
                if !p.warmup {
                    finished
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(p.record.clone());
                }
            })
        })
    };
    let interrupted = loop {
        if worker.is_finished() {
            worker
                .join()
                .map_err(|_| io::Error::other("compare: the probes' thread panicked"))??;
            break false;
        }
        if stop.load(Ordering::Relaxed) {
            break true;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let probes = std::mem::take(&mut *finished.lock().unwrap_or_else(|e| e.into_inner()));
    let har_error = har_error.lock().unwrap_or_else(|e| e.into_inner()).take();
    Ok(Outcome {
        probes,
        interrupted,
        har_error,
    })
}

/// Per protocol, in the order given; gains against the first protocol.
/// Probes of both views (`--view both`): a row per protocol and view, the
/// first view's beside the repeat's, each view's gains against the first
/// protocol's in the same view.
pub fn summarize_probes(protocols: &[Protocol], probes: &[ProbeRecord]) -> Vec<ProtocolSummary> {
    use results::View;
    let Some(&baseline) = protocols.first() else {
        return Vec::new();
    };
    let views: Vec<View> = [View::First, View::Repeat]
        .into_iter()
        .filter(|v| probes.iter().any(|p| p.reuse.view == *v))
        .collect();
    let per_view: Vec<Vec<ProtocolSummary>> = views
        .iter()
        .map(|&v| {
            let mine: Vec<&ProbeRecord> = probes.iter().filter(|p| p.reuse.view == v).collect();
            let mut rows = results::summarize_protocols(baseline, protocols, &mine);
            rows.iter_mut().for_each(|r| r.view = v);
            rows
        })
        .collect();
    match per_view.len() {
        0 => results::summarize_protocols(baseline, protocols, probes),
        _ => (0..protocols.len())
            .flat_map(|i| per_view.iter().map(move |rows| rows[i].clone()))
            .collect(),
    }
}

/// `--view both`: per protocol, the repeat view's mean PLT against its first
/// view's: (protocol, gain %, 95 % CI), as a gain over a baseline is.
pub fn repeat_gains(
    protocols: &[Protocol],
    probes: &[ProbeRecord],
) -> Vec<(Protocol, f64, [f64; 2])> {
    use results::View;
    let plts = |p: Protocol, v: View| -> Vec<f64> {
        probes
            .iter()
            .filter(|r| r.protocol == p && r.reuse.view == v && r.error.is_none())
            .map(|r| r.plt_ms)
            .collect()
    };
    protocols
        .iter()
        .filter_map(|&p| {
            let (first, repeat) = (plts(p, View::First), plts(p, View::Repeat));
            let (g, ci) =
                results::stats::gain_with_ci(&first, &repeat, results::stats::BOOTSTRAP_SEED)?;
            Some((p, g, ci))
        })
        .collect()
}

/// What `spdylab compare` asks for.
pub struct Request {
    /// A built-in site's name or a site's path (`sites::laid_out`).
    pub site: String,
    pub site_seed: u64,
    pub protocols: Vec<Protocol>,
    pub reps: usize,
    pub warmup: usize,
    pub trial: crate::trial::Trial,
    pub keep_server_log: Option<PathBuf>,
    /// Made here, so that a HAR directory that cannot be is refused first.
    pub har_dir: Option<PathBuf>,
    /// `--pcap`: created here, so that a file that cannot be is refused first.
    pub pcap: Option<PathBuf>,
}

/// The request's ProbeSpec: the site resolved and laid out, the testbed
/// made from the link flags (`link`, read after the site), `--har-dir`
/// created. Err: why not (bad input, or a refusal of the server or
/// client), naming the flag.
pub fn prepare(
    req: Request,
    link: impl FnOnce() -> Result<crate::trial::LinkChoice, crate::Error>,
) -> Result<ProbeSpec, crate::Error> {
    let usage = crate::Error::Usage;
    let flag = |k: &str| format!("--{}", k.replace('_', "-"));
    let (layout, shards) = (req.trial.layout, req.trial.shards as u16);
    let (site, addresses) =
        crate::sites::laid_out(&req.site, req.site_seed, layout, shards).map_err(usage)?;
    let site = req
        .trial
        .preload
        .apply(&site)
        .map_err(|e| usage(format!("--preload {}: {e}", req.trial.preload)))?;
    let mut testbed = link()?
        .testbed_spec(addresses, &flag)
        .map_err(|e| usage(e.to_string()))?;
    req.trial.shape_testbed(&mut testbed);
    if let Some(dir) = &req.har_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| usage(format!("--har-dir {}: {e}", dir.display())))?;
    }
    if let Some(file) = &req.pcap {
        std::fs::File::create(file)
            .map_err(|e| usage(format!("--pcap {}: {e}", file.display())))?;
    }
    let spec = ProbeSpec {
        site,
        protocols: req.protocols,
        testbed,
        reps: req.reps,
        warmup: req.warmup,
        trial: req.trial,
        keep_server_log: req.keep_server_log,
        pcap: req.pcap,
    };
    if let Some(why) = spec.refusal() {
        return Err(usage(why.to_string()));
    }
    if let Some(why) = spec.trial.site_refusal(&spec.site, &flag) {
        return Err(usage(why));
    }
    Ok(spec)
}

/// Where `--check`'s Chromium loads write their packets beside `--pcap
/// FILE`: FILE's stem with `-check` (`run.pcap` → `run-check.pcap`).
fn check_pcap(file: &Path) -> PathBuf {
    let stem = file.file_stem().unwrap_or_default().to_string_lossy();
    let name = match file.extension() {
        Some(ext) => format!("{stem}-check.{}", ext.to_string_lossy()),
        None => format!("{stem}-check"),
    };
    file.with_file_name(name)
}

/// `--check N`: Chromium's loads beside the model's, and the protocols it
/// cannot load with why.
pub struct Check {
    /// Chromium's comparison: the model's spec with Chromium as the client
    /// (`Trial::for_chromium`), the protocols it speaks, N repetitions.
    pub spec: Arc<ProbeSpec>,
    pub skipped: Vec<(Protocol, String)>,
}

impl Check {
    /// Chromium's half of `compare --check loads` on the model's `spec`:
    /// refused (naming `--check`) when the model is not the client, when
    /// Chromium cannot load the baseline or any other protocol, or when it
    /// refuses the Trial; Chromium must be installed.
    pub fn of(spec: &ProbeSpec, loads: usize) -> Result<Check, crate::Error> {
        use crate::trial::ClientKind;
        let usage = |m: String| crate::Error::Usage(format!("--check: {m}"));
        if spec.trial.client != ClientKind::Model {
            return Err(usage(
                "it loads Chromium beside the model: with --client chromium there is no model to check".into(),
            ));
        }
        let (speaks, skipped): (Vec<Protocol>, Vec<Protocol>) = spec
            .protocols
            .iter()
            .partition(|p| browser::refuses(**p).is_none());
        let skipped: Vec<(Protocol, String)> = skipped
            .into_iter()
            .map(|p| (p, browser::refuses(p).unwrap_or_default().to_string()))
            .collect();
        if let Some((p, why)) = skipped
            .first()
            .filter(|(p, _)| Some(p) == spec.protocols.first())
        {
            return Err(usage(format!(
                "Chromium cannot load {p}, the baseline: {why}"
            )));
        }
        if speaks.len() < 2 {
            return Err(usage(
                "Chromium loads none of the protocols compared with the baseline: nothing to check"
                    .into(),
            ));
        }
        let chromium = ProbeSpec {
            site: spec.site.clone(),
            protocols: speaks,
            testbed: spec.testbed.clone(),
            reps: loads,
            warmup: spec.warmup,
            trial: spec.trial.for_chromium(),
            keep_server_log: None,
            pcap: spec.pcap.as_deref().map(check_pcap),
        };
        if let Some(why) = chromium.refusal() {
            return Err(usage(why.to_string()));
        }
        // No Chromium: the user asked for a client that is not installed
        // (bad input, as crosscheck has it).
        browser::find().map_err(|e| usage(e.to_string()))?;
        Ok(Check {
            spec: Arc::new(chromium),
            skipped,
        })
    }
}

impl Check {
    /// The check's figures from Chromium's `outcome`, beside the model's
    /// `summary`: the agreement per protocol on `metric`, and the JSON put
    /// under the comparison's `check` (Chromium's summary and probes too).
    pub fn judge(
        &self,
        outcome: &Outcome,
        model: &[ProtocolSummary],
        metric: Metric,
    ) -> (Vec<verdict::check::Agreement>, serde_json::Value) {
        let chromium = summarize_probes(&self.spec.protocols, &outcome.probes);
        let agreements = verdict::check::agreements(metric, model, &chromium);
        let skipped: Vec<serde_json::Value> = self
            .skipped
            .iter()
            .map(|(p, why)| serde_json::json!({ "protocol": p, "why": why }))
            .collect();
        let doc = serde_json::json!({
            "client": "chromium",
            "loads": self.spec.reps,
            "interrupted": outcome.interrupted,
            "agreement": agreements,
            "skipped": skipped,
            "summary": chromium,
            "probes": outcome.probes,
        });
        (agreements, doc)
    }
}

/// Where the fidelity benchmark's grid (`verdict::fidelity`) places a
/// comparison's link, or why it cannot: the benchmark ran the same constant
/// rate both ways, drop-tail queues of 256 packets, Cubic, the kernel's
/// initial window, independent loss and no competing flow.
pub fn fidelity_point(t: &TestbedSpec) -> Result<verdict::fidelity::Point, String> {
    use link::{LossModel, QueueSpec, Service};
    let (up, down) = (&t.link.up, &t.link.down);
    let differs = |what: &str| Err(format!("the benchmark ran {what}; this link does not"));
    let rate_mbit = match (&down.service, &up.service) {
        (Service::Rate(d), Service::Rate(u)) if d == u => d.bits_per_sec() as f64 / 1e6,
        _ => return differs("the same constant rate both ways"),
    };
    if up.queue != QueueSpec::default() || down.queue != QueueSpec::default() {
        return differs("drop-tail queues of 256 packets");
    }
    if t.cc != netns::CongestionControl::Cubic || t.iw.is_some() {
        return differs("Cubic with the kernel's initial window");
    }
    let loss_pct = match (&down.loss, &up.loss) {
        (LossModel::None, LossModel::None) => 0.0,
        (LossModel::Bernoulli { p }, _) => p * 100.0,
        _ => return differs("independent loss the same both ways"),
    };
    Ok(verdict::fidelity::Point {
        rtt_ms: t.link.rtt().as_secs_f64() * 1000.0,
        rate_mbit,
        loss_pct,
    })
}

/// How far to trust each protocol's gain over the baseline on `metric`
/// where no Chromium was loaded: the fidelity benchmark's figures at the
/// point nearest `spec`'s link (`verdict::fidelity::trust`), or why none.
pub fn trust(spec: &ProbeSpec, metric: Metric) -> Vec<verdict::fidelity::Trust> {
    use verdict::fidelity::Trust;
    let Some((&base, others)) = spec.protocols.split_first() else {
        return Vec::new();
    };
    let point = fidelity_point(&spec.testbed);
    let cross = spec.testbed.cross.to_string();
    others
        .iter()
        .map(|&p| match &point {
            Ok(point) => verdict::fidelity::trust(base, p, metric, point, &cross),
            Err(why) => Trust::Outside {
                protocol: p,
                why: why.clone(),
            },
        })
        .collect()
}

/// The comparison as one JSON object (`--json`, `--out`): the spec, the
/// summary per protocol and every probe kept.
pub fn document(
    spec: &ProbeSpec,
    outcome: &Outcome,
    summary: &[ProtocolSummary],
    metric: Metric,
    knobs: &[(&str, String)],
) -> serde_json::Value {
    serde_json::json!({
        "settings": settings(spec, knobs).to_json(),
        "schema": 1,
        "site": spec.site.name,
        "link": spec.testbed.to_string(),
        "testbed": spec.testbed,
        "reps": spec.reps,
        "interrupted": outcome.interrupted,
        "summary": summary,
        "probes": outcome.probes,
        "layout": spec.trial.layout.to_string(),
        "metric": metric.name(),
        "pool": spec.trial.model.pool.name(),
        "browser_cost": spec.trial.model.browser_cost.to_string(),
    })
}

/// What the run is made with (`diff` compares them): its client, server,
/// site, link, the knobs given (`knobs`, as the flags gave them) and build.
pub fn settings(spec: &ProbeSpec, knobs: &[(&str, String)]) -> verdict::settings::Settings {
    verdict::settings::Settings::of_compare(
        spec.trial.client.name(),
        spec.trial.server.name(),
        &spec.site.name,
        &spec.testbed.to_string(),
        knobs,
    )
}

/// Writes the document to `out` (`--out FILE`), whole or not at all.
pub fn write_document(
    out: Option<&std::path::Path>,
    doc: &serde_json::Value,
) -> Result<(), crate::Error> {
    let Some(out) = out else { return Ok(()) };
    results::durable::write_whole(out, format!("{doc}\n").as_bytes())
        .map_err(|e| crate::Error::Usage(format!("--out {}: {e}", out.display())))
}

/// How a comparison that ran ends, after its table: stopped by a signal
/// (`Error::Interrupted`), a HAR that could not be written (bad input:
/// `--har-dir`), else 0 when every probe loaded its page and 1 when one
/// failed.
pub fn verdict(outcome: &Outcome) -> Result<i32, crate::Error> {
    if outcome.interrupted {
        return Err(crate::Error::Interrupted);
    }
    if let Some(e) = &outcome.har_error {
        return Err(crate::Error::Usage(e.clone()));
    }
    Ok(i32::from(outcome.probes.iter().any(|p| p.error.is_some())))
}

/// A comparison judged as `--baseline` and the decision flags ask
/// (`verdict::judge`): the budgets and the baseline read before the run, so
/// that a bad file costs none, and a baseline of another client or site
/// refused before it too (`settings`).
pub struct Against {
    decision: Decision,
    baseline: Option<(PathBuf, Vec<ProbeRecord>)>,
    budgets: Option<Vec<verdict::budget::Budget>>,
    settings: Option<SettingsDiff>,
}

impl Against {
    /// The budgets (`--budget`, `--alpha` checked) and the baseline's probes read.
    pub fn read(decision: Decision, baseline: Option<PathBuf>) -> Result<Against, crate::Error> {
        let budgets = decision.budgets()?;
        let baseline = match baseline {
            Some(path) => {
                let (probes, _) = verdict::stored::read(&path)?;
                Some((path, probes))
            }
            None => None,
        };
        Ok(Against {
            decision,
            baseline,
            budgets,
            settings: None,
        })
    }

    /// The run's settings (`settings`) against the baseline's: refused when
    /// their client or site differ (unless `--force`), else kept for the report.
    pub fn check_settings(
        &mut self,
        spec: &ProbeSpec,
        knobs: &[(&str, String)],
    ) -> Result<(), crate::Error> {
        if let Some((path, _)) = &self.baseline {
            let base = verdict::stored::settings(path)?;
            self.settings = Some(self.decision.settings(&base, &settings(spec, knobs))?);
        }
        Ok(())
    }
}

/// A comparison that ran: its summary per protocol, its document (`--json`,
/// `--out`, with the `decision` when judged) and its judgement, if asked.
pub struct Compared {
    pub summary: Vec<ProtocolSummary>,
    pub document: serde_json::Value,
    pub judged: Option<Judgement>,
    /// Where the baseline's settings differ from this run's.
    pub settings: Option<SettingsDiff>,
    /// The headline of the table's gain column.
    pub metric: Metric,
}

impl Compared {
    /// The outcome summarized, put in its document and judged against the
    /// baseline and budgets (`against`), if any.
    pub fn of(
        spec: &ProbeSpec,
        outcome: &Outcome,
        metric: Metric,
        knobs: &[(&str, String)],
        against: Against,
    ) -> Result<Compared, crate::Error> {
        let summary = summarize_probes(&spec.protocols, &outcome.probes);
        let mut doc = document(spec, outcome, &summary, metric, knobs);
        let judged = (against.baseline.is_some() || against.budgets.is_some())
            .then(|| {
                let base = against.baseline.as_ref().map(|(_, p)| p.as_slice());
                let budgets = against.budgets.as_deref();
                against.decision.judge(base, &outcome.probes, budgets)
            })
            .transpose()?;
        if let Some(j) = &judged {
            doc["decision"] = j.document();
            if let Some(s) = &against.settings {
                doc["decision"]["settings"] = s.json.clone();
            }
        }
        Ok(Compared {
            summary,
            document: doc,
            judged,
            settings: against.settings,
            metric,
        })
    }

    /// The exit status: a failed probe's (or the stop's, or a HAR's error)
    /// first (`verdict`); then a failed budget's (1).
    pub fn status(&self, outcome: &Outcome) -> Result<i32, crate::Error> {
        let status = verdict(outcome)?;
        Ok(match (status, &self.judged) {
            (0, Some(j)) => j.status(),
            (status, _) => status,
        })
    }
}

/// `--protocols`: a comma-separated list, the first being the baseline,
/// none twice.
pub fn parse_protocols(s: &str) -> Result<Vec<Protocol>, String> {
    let list: Vec<Protocol> = s
        .split(',')
        .map(|p| p.trim().parse())
        .collect::<Result<_, _>>()?;
    for (i, p) in list.iter().enumerate() {
        if list[..i].contains(p) {
            return Err(format!("{p} is listed twice"));
        }
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::check_pcap;
    use std::path::Path;

    #[test]
    fn the_checks_pcap_is_named_beside_the_models() {
        assert_eq!(
            check_pcap(Path::new("/tmp/my run.pcap")),
            Path::new("/tmp/my run-check.pcap")
        );
        assert_eq!(check_pcap(Path::new("out")), Path::new("out-check"));
        assert_eq!(
            check_pcap(Path::new("d/run.v2.pcap")),
            Path::new("d/run.v2-check.pcap")
        );
    }
}
