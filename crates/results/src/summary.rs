//! The per-protocol summary of a group of probes — PLT and ToW (mean, median,
//! Student-t CI), bytes, connections, and the gain of mean PLT over a baseline
//! with its bootstrap CI, and of mean ToW likewise — computed here once for
//! `compare` and the report; `Metric` (an experiment's choice) picks the headline.

use crate::experiment::Metric;
use crate::probe::Measured;
use crate::stats::{gain_with_ci, mean, summarize, Summary, BOOTSTRAP_SEED};
use proto::Protocol;
use serde::Serialize;

/// What a headline metric picks out of a summary.
impl Metric {
    /// The headline's (gain, CI) of a summary.
    pub fn gain(self, s: &ProtocolSummary) -> (f64, [f64; 2]) {
        match self {
            Metric::Plt => (s.gain_pct, s.gain_ci95),
            Metric::Tow => (s.tow_gain_pct, s.tow_gain_ci95),
        }
    }

    /// The headline's per-probe summary.
    pub fn summary(self, s: &ProtocolSummary) -> &Summary {
        match self {
            Metric::Plt => &s.plt_ms,
            Metric::Tow => &s.tow_ms,
        }
    }
}

/// One protocol's probes in a group, summarized.
#[derive(Debug, Clone, Serialize)]
pub struct ProtocolSummary {
    pub protocol: Protocol,
    /// Probes that finished (the statistics are theirs).
    pub n: usize,
    pub failed: usize,
    pub plt_ms: Summary,
    pub tow_ms: Summary,
    pub bytes_down: f64,
    pub connections: f64,
    /// Gain of mean PLT over the baseline's, in %, with a 95 % bootstrap CI
    /// (the baseline's own: against a resample of itself).
    pub gain_pct: f64,
    pub gain_ci95: [f64; 2],
    /// Gain of mean ToW over the baseline's, in %, with its 95 % bootstrap CI.
    pub tow_gain_pct: f64,
    pub tow_gain_ci95: [f64; 2],
    /// Mean bytes client → server (requests, handshakes, ACKs).
    pub bytes_up: f64,
}

/// Per protocol of `protocols`, in that order: the summary of its finished
/// `probes` (failed ones are counted), gains against `baseline`'s.
pub fn summarize_protocols<P: Measured>(
    baseline: Protocol,
    protocols: &[Protocol],
    probes: &[P],
) -> Vec<ProtocolSummary> {
    let ok = |p: Protocol| -> Vec<&P> {
        probes
            .iter()
            .filter(|r| r.protocol() == p && !r.failed())
            .collect()
    };
    let base: Vec<f64> = ok(baseline).iter().map(|r| r.plt_ms()).collect();
    let base_tow: Vec<f64> = ok(baseline).iter().map(|r| r.tow_ms()).collect();
    protocols
        .iter()
        .map(|&p| {
            let good = ok(p);
            let plt: Vec<f64> = good.iter().map(|r| r.plt_ms()).collect();
            let tow: Vec<f64> = good.iter().map(|r| r.tow_ms()).collect();
            let (gain_pct, gain_ci95) = gain_with_ci(&base, &plt, BOOTSTRAP_SEED);
            let (tow_gain_pct, tow_gain_ci95) = gain_with_ci(&base_tow, &tow, BOOTSTRAP_SEED);
            ProtocolSummary {
                protocol: p,
                n: good.len(),
                failed: probes
                    .iter()
                    .filter(|r| r.protocol() == p && r.failed())
                    .count(),
                plt_ms: summarize(&plt),
                tow_ms: summarize(&tow),
                bytes_down: mean(
                    &good
                        .iter()
                        .map(|r| r.bytes_down() as f64)
                        .collect::<Vec<_>>(),
                ),
                connections: mean(
                    &good
                        .iter()
                        .map(|r| r.connections() as f64)
                        .collect::<Vec<_>>(),
                ),
                gain_pct,
                gain_ci95,
                tow_gain_pct,
                tow_gain_ci95,
                bytes_up: mean(&good.iter().map(|r| r.bytes_up() as f64).collect::<Vec<_>>()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::ProbeRecord;

    fn probe(protocol: Protocol, plt_ms: f64, error: bool) -> ProbeRecord {
        ProbeRecord {
            trial: String::new(),
            point: Default::default(),
            schema: 1,
            protocol,
            rep: 0,
            plt_ms,
            tow_ms: plt_ms - 10.0,
            connections: 2,
            syns: 2,
            bytes_down: 1000,
            bytes_up: 0,
            packets_down: 0,
            packets_up: 0,
            drops_queue: 0,
            drops_loss: 0,
            resources: 1,
            body_bytes: 0,
            misses: 0,
            tls_resumed: 0,
            phases: Default::default(),
            error: error.then(|| "x".to_string()),
            started: 0.0,
            har: None,
        }
    }

    #[test]
    fn gains_against_the_baseline_and_failures_counted() {
        let probes = [
            probe(Protocol::Https, 100.0, false),
            probe(Protocol::Https, 110.0, false),
            probe(Protocol::Https, 90.0, false),
            probe(Protocol::H2, 80.0, false),
            probe(Protocol::H2, 85.0, false),
            probe(Protocol::H2, 75.0, false),
            probe(Protocol::H2, 1.0, true),
        ];
        let s = summarize_protocols(Protocol::Https, &[Protocol::Https, Protocol::H2], &probes);
        assert_eq!((s[0].n, s[0].failed, s[1].n, s[1].failed), (3, 0, 3, 1));
        assert_eq!(s[0].gain_pct, 0.0);
        assert!((s[1].gain_pct - 20.0).abs() < 1e-9);
        assert_eq!(
            (s[1].gain_pct, s[1].gain_ci95),
            gain_with_ci(&[100.0, 110.0, 90.0], &[80.0, 85.0, 75.0], BOOTSTRAP_SEED)
        );
        assert_eq!(s[1].tow_ms.mean, 70.0);
        // ToW: 100, 90, 80 against 70, 75, 65.
        assert!((s[1].tow_gain_pct - 100.0 * (90.0 - 70.0) / 90.0).abs() < 1e-9);
        assert_eq!(Metric::Tow.gain(&s[1]).0, s[1].tow_gain_pct);
        assert_eq!(Metric::Plt.gain(&s[1]).0, s[1].gain_pct);
        assert_eq!("tow".parse::<Metric>(), Ok(Metric::Tow));
        assert!("wire".parse::<Metric>().unwrap_err().contains("plt or tow"));
        assert_eq!(s[1].bytes_down, 1000.0);
        // Borrowed records summarize alike.
        let refs: Vec<&ProbeRecord> = probes.iter().collect();
        let t = summarize_protocols(Protocol::H2, &[Protocol::H2], &refs);
        assert_eq!(t[0].gain_pct, 0.0);
    }
}
