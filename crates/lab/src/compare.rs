//! `compare`: the interleaved plan — warm-ups, then repetitions with the
//! protocols interleaved (A B C A B C …) so that drift hits all alike — run as
//! probes on one testbed (`probe::run_plan`), and the summary per protocol.

use crate::probe::{run_plan, ProbeResult, ProbeSpec};
use proto::Protocol;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub use results::summary::{failure_note, or_na};
pub use results::{Metric, ProtocolSummary};

/// Runs the comparison: warm-ups, then `reps` repetitions with the protocols
/// interleaved. `on_probe` hears of every finished probe, warm-ups too.
pub fn run(
    spec: &ProbeSpec,
    on_probe: &mut dyn FnMut(&ProbeResult, usize, usize),
) -> io::Result<Vec<ProbeResult>> {
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
    pub probes: Vec<ProbeResult>,
    pub interrupted: bool,
    pub har_error: Option<String>,
}

/// As `run`, on a thread of its own, so that `stop` (set by the CLI's one
/// signal path on Ctrl-C) ends the wait at once, keeping every probe that
/// finished before it. With `har_dir`, each probe's HAR is written there
/// whole (`durable::write_whole`) as it ends, named SITE-PROTOCOL-NNN.har.
/// `on_probe` hears of every finished probe (warm-ups too) unless stopped.
pub fn run_until_stopped(
    spec: Arc<ProbeSpec>,
    har_dir: Option<PathBuf>,
    stop: Arc<AtomicBool>,
    mut on_probe: impl FnMut(&ProbeResult, usize, usize) + Send + 'static,
) -> io::Result<Outcome> {
    let finished: Arc<Mutex<Vec<ProbeResult>>> = Arc::default();
    let har_error: Arc<Mutex<Option<String>>> = Arc::default();
    let worker = {
        let (finished, har_error, stop) = (finished.clone(), har_error.clone(), stop.clone());
        std::thread::spawn(move || {
            run(&spec, &mut |p, done, total| {
                if stop.load(Ordering::Relaxed) {
                    return; // perhaps cut short by the stop: not kept
                }
                on_probe(p, done, total);
                if let (Some(dir), Some(load), Some(started)) = (&har_dir, &p.load, p.started) {
                    let file =
                        dir.join(format!("{}-{}-{:03}.har", spec.site.name, p.protocol, done));
                    let doc = crate::har::har(load, started, &spec.site.name);
                    if let Err(e) =
                        crate::durable::write_whole(&file, format!("{doc:#}").as_bytes())
                    {
                        let mut slot = har_error.lock().unwrap_or_else(|e| e.into_inner());
                        slot.get_or_insert(format!("--har-dir {}: {e}", file.display()));
                    }
                }
                if !p.warmup {
                    finished
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(p.clone());
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
pub fn summarize_probes(protocols: &[Protocol], probes: &[ProbeResult]) -> Vec<ProtocolSummary> {
    results::summarize_protocols(protocols[0], protocols, probes)
}

impl results::Measured for ProbeResult {
    fn protocol(&self) -> Protocol {
        self.protocol
    }
    fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }
    fn plt_ms(&self) -> f64 {
        self.plt_ms
    }
    fn tow_ms(&self) -> f64 {
        self.tow_ms
    }
    fn bytes_down(&self) -> u64 {
        self.bytes_down
    }
    fn connections(&self) -> usize {
        self.connections
    }
    fn bytes_up(&self) -> u64 {
        self.bytes_up
    }
}
