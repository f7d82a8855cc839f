//! The model against Chromium: the same Trials loaded by both, per-Trial PLT
//! ratio (model / Chromium) and absolute percentage error, and their mean (MAPE).

use crate::probe::{ProbeResult, ProbeSpec};
use crate::trial::{ClientKind, Refusal, ServerKind};
use netns::TestbedSpec;
use proto::Protocol;
use results::stats::{median, summarize, Summary};
use serde::Serialize;
use site::Site;
use std::io;
use std::time::Duration;

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

/// A crosscheck: every site on every link, each loaded by the model and by
/// Chromium from the same server.
pub struct CrosscheckSpec {
    pub sites: Vec<Site>,
    pub protocols: Vec<Protocol>,
    /// The links, with a label each for the rows.
    pub links: Vec<(String, TestbedSpec)>,
    pub reps: usize,
    pub warmup: usize,
    pub tls13_only: Option<bool>,
    pub server: ServerKind,
    pub timeout: Duration,
    /// The server's certificate (`--cert`).
    pub cert: server::CertKind,
    /// Resume TLS sessions between probes (refused: Chromium cannot).
    pub tls_resume: bool,
    /// The model's request headers (Chromium sends its own).
    pub headers: client::RequestHeaders,
}

/// Why a crosscheck did not run.
#[derive(Debug)]
pub enum CrosscheckError {
    /// No Chromium to compare with.
    NoBrowser(io::Error),
    /// A client or the server cannot run a Trial as asked.
    Refused(Refusal),
    Setup(io::Error),
}

impl std::fmt::Display for CrosscheckError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CrosscheckError::NoBrowser(e) | CrosscheckError::Setup(e) => write!(f, "{e}"),
            CrosscheckError::Refused(r) => write!(f, "{r}"),
        }
    }
}

impl std::error::Error for CrosscheckError {}

impl CrosscheckSpec {
    /// Probes of one (site, link) per client.
    pub fn probes_per_run(&self) -> usize {
        self.protocols.len() * (self.reps + self.warmup)
    }

    /// All probes, both clients.
    pub fn total_probes(&self) -> usize {
        self.sites.len() * self.links.len() * 2 * self.probes_per_run()
    }

    fn probe_spec(&self, site: &Site, testbed: &TestbedSpec, client: ClientKind) -> ProbeSpec {
        ProbeSpec {
            site: site.clone(),
            protocols: self.protocols.clone(),
            testbed: testbed.clone(),
            reps: self.reps,
            warmup: self.warmup,
            conns_per_host: 6,
            depth: 1,
            max_streams: 100,
            tls13_only: self.tls13_only,
            server_delay: Duration::ZERO,
            timeout: self.timeout,
            server: self.server,
            client,
            keep_server_log: None,
            cert: self.cert,
            tls_resume: self.tls_resume,
            headers: self.headers,
        }
    }
}

/// Runs the crosscheck: per (site, link), the model's probes then Chromium's
/// (a fresh browser and profile per probe). `on_probe` hears of each probe
/// with its site, link label and client.
pub fn run(
    spec: &CrosscheckSpec,
    on_probe: &mut dyn FnMut(&ProbeResult, &Site, &str, ClientKind),
) -> Result<Vec<Row>, CrosscheckError> {
    browser::find().map_err(CrosscheckError::NoBrowser)?;
    let mut rows = Vec::new();
    for site in &spec.sites {
        for (label, testbed) in &spec.links {
            for client in [ClientKind::Model, ClientKind::Chromium] {
                if let Some(r) = spec.probe_spec(site, testbed, client).refusal() {
                    return Err(CrosscheckError::Refused(r));
                }
            }
            let mut by_client = Vec::new();
            for client in [ClientKind::Model, ClientKind::Chromium] {
                let probes =
                    crate::compare::run(&spec.probe_spec(site, testbed, client), &mut |p, _, _| {
                        on_probe(p, site, label, client)
                    })
                    .map_err(CrosscheckError::Setup)?;
                by_client.push(probes);
            }
            for p in &spec.protocols {
                rows.push(row(&site.name, label, *p, &by_client[0], &by_client[1]));
            }
        }
    }
    Ok(rows)
}
