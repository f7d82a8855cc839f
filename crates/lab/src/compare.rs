//! `compare`: the interleaved plan — warm-ups, then repetitions with the
//! protocols interleaved (A B C A B C …) so that drift hits all alike — run as
//! probes on one testbed (`probe::run_plan`), and the summary per protocol.

use crate::probe::{run_plan, ProbeResult, ProbeSpec};
use proto::Protocol;
use std::io;

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
