//! The model against Chromium: the same Trials loaded by both, per-Trial PLT
//! ratio (model / Chromium) and absolute percentage error, and their mean (MAPE).

use crate::compare::ProbeResult;
use proto::Protocol;
use results::stats::{median, summarize, Summary};
use serde::Serialize;

/// One Trial (site × link × protocol) loaded by both clients.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub site: String,
    pub link: String,
    pub protocol: Protocol,
    pub model: Summary,
    pub chromium: Summary,
    /// Median model PLT over median Chromium PLT.
    pub ratio: f64,
    /// |model − Chromium| / Chromium of the medians, in %.
    pub ape_pct: f64,
    /// Resources per load (median), each client: they should be equal.
    pub model_resources: f64,
    pub chromium_resources: f64,
    /// Connections per load (median), each client.
    pub model_connections: f64,
    pub chromium_connections: f64,
    /// Probes that failed, each client.
    pub model_failed: usize,
    pub chromium_failed: usize,
}

/// The row of one Trial from each client's probes (failed probes are counted, not used).
pub fn row(
    site: &str,
    link: &str,
    protocol: Protocol,
    model: &[ProbeResult],
    chromium: &[ProbeResult],
) -> Row {
    let ok = |ps: &[ProbeResult], f: &dyn Fn(&ProbeResult) -> f64| -> Vec<f64> {
        ps.iter()
            .filter(|p| p.protocol == protocol && p.error.is_none())
            .map(f)
            .collect()
    };
    let failed = |ps: &[ProbeResult]| {
        ps.iter()
            .filter(|p| p.protocol == protocol && p.error.is_some())
            .count()
    };
    let (m, c) = (ok(model, &|p| p.plt_ms), ok(chromium, &|p| p.plt_ms));
    let (ms, cs) = (summarize(&m), summarize(&c));
    let (ratio, ape_pct) = if m.is_empty() || c.is_empty() || cs.median <= 0.0 {
        (f64::NAN, f64::NAN)
    } else {
        (
            ms.median / cs.median,
            (ms.median - cs.median).abs() / cs.median * 100.0,
        )
    };
    Row {
        site: site.to_string(),
        link: link.to_string(),
        protocol,
        model: ms,
        chromium: cs,
        ratio,
        ape_pct,
        model_resources: median(&ok(model, &|p| p.resources as f64)),
        chromium_resources: median(&ok(chromium, &|p| p.resources as f64)),
        model_connections: median(&ok(model, &|p| p.connections as f64)),
        chromium_connections: median(&ok(chromium, &|p| p.connections as f64)),
        model_failed: failed(model),
        chromium_failed: failed(chromium),
    }
}

/// Mean absolute percentage error over the rows that have both clients' numbers.
pub fn mape(rows: &[Row]) -> f64 {
    let apes: Vec<f64> = rows
        .iter()
        .map(|r| r.ape_pct)
        .filter(|a| a.is_finite())
        .collect();
    if apes.is_empty() {
        f64::NAN
    } else {
        apes.iter().sum::<f64>() / apes.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(protocol: Protocol, plt: f64, error: Option<&str>) -> ProbeResult {
        let mut p = ProbeResult::failed(protocol, 0, String::new());
        p.error = error.map(str::to_string);
        p.plt_ms = plt;
        p.resources = 7;
        p
    }

    #[test]
    fn ratio_ape_and_mape_from_medians_ignoring_failures() {
        let model = [
            probe(Protocol::H2, 90.0, None),
            probe(Protocol::H2, 110.0, None),
            probe(Protocol::H2, 100.0, None),
        ];
        let chromium = [
            probe(Protocol::H2, 125.0, None),
            probe(Protocol::H2, 0.0, Some("timeout")),
        ];
        let r = row("s", "l", Protocol::H2, &model, &chromium);
        assert!((r.ratio - 0.8).abs() < 1e-9);
        assert!((r.ape_pct - 20.0).abs() < 1e-9);
        assert_eq!((r.model_failed, r.chromium_failed), (0, 1));
        let r2 = row("s", "l", Protocol::Https, &model, &chromium);
        assert!(r2.ape_pct.is_nan());
        assert!((mape(&[r, r2]) - 20.0).abs() < 1e-9);
    }
}
