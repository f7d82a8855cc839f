//! `compare`: the interleaved plan — warm-ups, then repetitions with the
//! protocols interleaved (A B C A B C …) so that drift hits all alike — run as
//! probes on one testbed (`probe::run_plan`), and the summary per protocol.

use crate::probe::{run_plan, ProbeResult, ProbeSpec};
use crate::stats::{gain_with_ci, summarize, Summary};
use proto::Protocol;
use serde::Serialize;
use std::io;

#[derive(Debug, Clone, Serialize)]
pub struct ProtocolSummary {
    pub protocol: Protocol,
    pub n: usize,
    pub failed: usize,
    pub plt_ms: Summary,
    pub tow_ms: Summary,
    pub bytes_down: f64,
    pub connections: f64,
    /// Gain of mean PLT over the first protocol's, in %, with a 95 % bootstrap CI.
    pub gain_pct: f64,
    pub gain_ci95: [f64; 2],
}

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
    let ok = |p: Protocol| -> Vec<&ProbeResult> {
        probes
            .iter()
            .filter(|r| r.protocol == p && r.error.is_none())
            .collect()
    };
    let plts = |p: Protocol| -> Vec<f64> { ok(p).iter().map(|r| r.plt_ms).collect() };
    let baseline = plts(protocols[0]);
    protocols
        .iter()
        .map(|&p| {
            let good = ok(p);
            let plt: Vec<f64> = good.iter().map(|r| r.plt_ms).collect();
            let tow: Vec<f64> = good.iter().map(|r| r.tow_ms).collect();
            let (gain_pct, gain_ci95) = gain_with_ci(&baseline, &plt, 2014);
            ProtocolSummary {
                protocol: p,
                n: good.len(),
                failed: probes
                    .iter()
                    .filter(|r| r.protocol == p && r.error.is_some())
                    .count(),
                plt_ms: summarize(&plt),
                tow_ms: summarize(&tow),
                bytes_down: crate::stats::mean(
                    &good.iter().map(|r| r.bytes_down as f64).collect::<Vec<_>>(),
                ),
                connections: crate::stats::mean(
                    &good
                        .iter()
                        .map(|r| r.connections as f64)
                        .collect::<Vec<_>>(),
                ),
                gain_pct,
                gain_ci95,
            }
        })
        .collect()
}
