//! `spdylab crosscheck`'s run: every site on every link loaded by the model
//! and by Chromium from the same server (or Chromium's loads from a
//! reference), each Trial's loads made into a row. The rows and their
//! figures are `verdict::crosscheck`'s.

pub use verdict::crosscheck::*;

use crate::probe::{Probe, ProbeRecord, ProbeSpec};
use crate::trial::{ClientKind, Refusal, Trial};
use netns::TestbedSpec;
use proto::Protocol;
use results::probe::RequestRow;
use site::Site;
use std::io;

/// A crosscheck: every site on every link, each loaded by the model and by
/// Chromium from the same server.
pub struct CrosscheckSpec {
    pub sites: Vec<Site>,
    pub protocols: Vec<Protocol>,
    /// The links, each with a label for the rows, its rate and its RTT.
    pub links: Vec<Link>,
    pub reps: usize,
    pub warmup: usize,
    /// The knobs of every Trial (its `client` is set per run: the model's
    /// probes, then Chromium's; Chromium pools and computes as it does).
    pub trial: Trial,
    /// Chromium's loads of earlier crosschecks: a Trial there is not loaded
    /// in Chromium again.
    pub reference: Reference,
}

/// One link of a crosscheck: its label, rate and RTT (for grouping), testbed.
#[derive(Debug, Clone)]
pub struct Link {
    pub label: String,
    pub rate: String,
    pub rtt: String,
    /// Its place on the swept axes (the rows', for the gains' trends).
    pub axes: Axes,
    pub testbed: TestbedSpec,
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

    /// All probes to run: the model's everywhere, Chromium's where no
    /// reference has its loads.
    pub fn total_probes(&self) -> usize {
        let per_protocol = self.reps + self.warmup;
        let run = |site: &Site, link: &Link| {
            self.probes_per_run() + self.unreferenced(site, link).len() * per_protocol
        };
        let per_site = |site| self.links.iter().map(|l| run(site, l)).sum::<usize>();
        self.sites.iter().map(per_site).sum()
    }

    /// Chromium's loads of `protocol` on (site, link) from the reference.
    fn referenced(&self, site: &Site, link: &Link, protocol: Protocol) -> Option<&Loads> {
        let stored = serde_json::to_value(&link.testbed).unwrap_or_default();
        self.reference
            .get(&site.name, &LinkKey::of(&stored), protocol)
    }

    /// The protocols Chromium must load on (site, link): those the
    /// reference lacks.
    pub fn unreferenced(&self, site: &Site, link: &Link) -> Vec<Protocol> {
        let lacks = |p: &&Protocol| self.referenced(site, link, **p).is_none();
        self.protocols.iter().filter(lacks).copied().collect()
    }

    /// Trials whose Chromium loads come from the reference.
    pub fn referenced_trials(&self) -> usize {
        let on = |site| {
            let referenced = |l| self.protocols.len() - self.unreferenced(site, l).len();
            self.links.iter().map(referenced).sum::<usize>()
        };
        self.sites.iter().map(on).sum()
    }

    fn probe_spec(
        &self,
        site: &Site,
        testbed: &TestbedSpec,
        client: ClientKind,
        protocols: &[Protocol],
    ) -> ProbeSpec {
        let trial = match client {
            ClientKind::Chromium => self.trial.for_chromium(),
            ClientKind::Model => Trial {
                client,
                ..self.trial.clone()
            },
        };
        ProbeSpec {
            site: site.clone(),
            protocols: protocols.to_vec(),
            testbed: testbed.clone(),
            reps: self.reps,
            warmup: self.warmup,
            trial,
            keep_server_log: None,
            pcap: None,
        }
    }
}

/// Runs the crosscheck: per (site, link), the model's probes then Chromium's
/// (a fresh browser and profile per probe) of the protocols whose loads the
/// reference lacks. `on_probe` hears of each probe with its site,
/// link label and client.
pub fn run(
    spec: &CrosscheckSpec,
    on_probe: &mut dyn FnMut(&ProbeRecord, &Site, &str, ClientKind),
) -> Result<Vec<Row>, CrosscheckError> {
    let all = spec.sites.len() * spec.links.len() * spec.protocols.len();
    if spec.referenced_trials() < all {
        browser::find().map_err(CrosscheckError::NoBrowser)?;
    }
    let mut rows = Vec::new();
    for site in &spec.sites {
        for link in &spec.links {
            let unreferenced = spec.unreferenced(site, link);
            let runs = [
                (ClientKind::Model, spec.protocols.clone()),
                (ClientKind::Chromium, unreferenced),
            ];
            for (client, protocols) in &runs {
                let probe = spec.probe_spec(site, &link.testbed, *client, protocols);
                if let Some(r) = probe.refusal() {
                    return Err(CrosscheckError::Refused(r));
                }
            }
            // Each client's probes and the machine's load as they ended.
            let mut by_client = Vec::new();
            for (client, protocols) in &runs {
                if protocols.is_empty() {
                    by_client.push((Vec::new(), None, None));
                    continue;
                }
                let probe = spec.probe_spec(site, &link.testbed, *client, protocols);
                let cpu = netns::calibrate::CpuBusy::start();
                let probes = crate::compare::run(&probe, &mut |p, _, _| {
                    on_probe(&p.record, site, &link.label, *client)
                })
                .map_err(CrosscheckError::Setup)?;
                let load = netns::calibrate::load_average();
                by_client.push((probes, load, cpu.and_then(|c| c.share_pct())));
            }
            let loads = |client: usize, p: Protocol| {
                let (probes, machine_load, cpu_busy_pct) = &by_client[client];
                Loads {
                    machine_load: *machine_load,
                    cpu_busy_pct: *cpu_busy_pct,
                    ..loads_of(probes, p)
                }
            };
            for p in &spec.protocols {
                let referenced = spec.referenced(site, link, *p);
                let loaded = loads(1, *p);
                let row = row_of(
                    &site.name,
                    &link.label,
                    &link.rate,
                    &link.rtt,
                    *p,
                    &loads(0, *p),
                    referenced.unwrap_or(&loaded),
                );
                rows.push(Row {
                    axes: link.axes,
                    chromium_reference: referenced.is_some(),
                    site_fingerprint: fingerprint(site),
                    ..row
                });
            }
        }
    }
    Ok(rows)
}

/// A site's tree fingerprint as rows store it (hex).
fn fingerprint(site: &Site) -> String {
    format!("{:016x}", site.tree_fingerprint())
}

/// One client's loads of `protocol` among its probes (failed ones counted,
/// not used), each with the sum of the times its resources were found, and
/// its resources' rows kept in its record (`request_rows`).
fn loads_of(probes: &[Probe], protocol: Protocol) -> Loads {
    let discovery = |p: &Probe| {
        p.load
            .as_ref()
            .map_or(f64::NAN, |l| l.entries.iter().map(|e| e.started_ms).sum())
    };
    let kept: Vec<ProbeRecord> = probes
        .iter()
        .map(|p| ProbeRecord {
            requests: p.load.as_ref().map(request_rows).unwrap_or_default(),
            ..p.record.clone()
        })
        .collect();
    let records: Vec<(&ProbeRecord, f64)> = kept
        .iter()
        .zip(probes)
        .map(|(r, p)| (r, discovery(p)))
        .collect();
    Loads::of(&records, protocol)
}

/// A load's resources as rows (`RequestRow`), in the order the client
/// recorded them. A phase that did not apply (HAR −1) takes no time.
fn request_rows(load: &client::PageResult) -> Vec<RequestRow> {
    load.entries
        .iter()
        .map(|e| {
            let t = &e.timings;
            let ms = |v: f64| v.max(0.0);
            let sent = e.started_ms + ms(t.blocked) + ms(t.dns) + ms(t.connect);
            let first = sent + ms(t.send) + ms(t.wait);
            RequestRow(
                e.host.clone(),
                e.path.clone(),
                e.content_type.clone(),
                e.connection,
                e.started_ms,
                sent,
                first,
                e.started_ms + e.time_ms,
                e.body_bytes,
                e.status,
            )
        })
        .collect()
}

/// What `spdylab crosscheck` asks for.
pub struct Request {
    /// Built-in sites' names or sites' paths (`sites::laid_out_all`).
    pub sites: Vec<String>,
    pub protocols: Vec<Protocol>,
    /// Each replaces the link's RTT, and each of `rates` its rate (none:
    /// the link's own).
    pub rtts: Vec<std::time::Duration>,
    pub rates: Vec<link::Bitrate>,
    /// Each replaces the link's loss (none: the link's own).
    pub losses: Vec<link::LossModel>,
    pub reps: usize,
    pub warmup: usize,
    pub trial: Trial,
    /// Earlier crosschecks' `--json` documents whose Chromium loads to reuse.
    pub reference: Vec<std::path::PathBuf>,
}

/// One of `--losses`: a loss such as 1%; not a Gilbert-Elliott model, whose
/// own commas the list would split.
pub fn parse_independent_loss(s: &str) -> Result<link::LossModel, String> {
    if s.starts_with("ge:") {
        return Err(format!(
            "{s}: --losses takes independent losses such as 0%,1%,3%; give a Gilbert-Elliott model with --loss"
        ));
    }
    s.parse::<link::LossModel>().map_err(|e| e.to_string())
}

/// The request's crosscheck: its sites resolved and laid out, then a link
/// per rate, RTT and loss (rates outer, losses inner) from the link flags
/// (`link`, read after the sites), each labelled "RTT RATE", and "RTT RATE
/// LOSS" when losses are listed. Err: the message, naming the flag.
pub fn spec(
    req: Request,
    link: impl FnOnce() -> Result<crate::trial::LinkChoice, String>,
) -> Result<CrosscheckSpec, String> {
    let (layout, shards) = (req.trial.layout, req.trial.shards as u16);
    let (sites, addresses) =
        crate::sites::laid_out_all(&req.sites, site::DEFAULT_SEED, layout, shards)?;
    let sites = sites
        .iter()
        .map(|s| req.trial.preload.apply(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("--preload {}: {e}", req.trial.preload))?;
    let choice = link()?;
    let reference = Reference::load(&req.reference, req.reps, req.trial.server.name())?;
    for s in &sites {
        reference.check_site(&s.name, &fingerprint(s))?;
    }
    let flag = |k: &str| format!("--{}", k.replace('_', "-"));
    let rtts: Vec<_> = match req.rtts.is_empty() {
        true => vec![choice.rtt],
        false => req.rtts.iter().copied().map(Some).collect(),
    };
    let rates: Vec<_> = match req.rates.is_empty() {
        true => vec![choice.rate],
        false => req.rates.iter().copied().map(Some).collect(),
    };
    let losses: Vec<_> = match req.losses.is_empty() {
        true => vec![choice.loss],
        false => req.losses.iter().copied().map(Some).collect(),
    };
    let mut links = Vec::new();
    for rate in &rates {
        for rtt in &rtts {
            for loss in &losses {
                let choice: crate::trial::LinkChoice = crate::trial::LinkChoice {
                    rtt: *rtt,
                    rate: *rate,
                    loss: *loss,
                    ..choice.clone()
                };
                let mut testbed = choice
                    .testbed_spec(addresses, &flag)
                    .map_err(|e| e.to_string())?;
                req.trial.shape_testbed(&mut testbed);
                let axes = Axes {
                    rtt_ms: testbed.link.rtt().as_secs_f64() * 1000.0,
                    rate_mbit: rate.map(|r| r.bits_per_sec() as f64 / 1e6),
                    loss_pct: loss.map_or(0.0, |l| l.mean_loss() * 100.0),
                };
                let rtt = link::units::format_duration(testbed.link.rtt());
                let rate = rate.map_or("unlimited".to_string(), |r| r.to_string());
                let label = match (req.losses.is_empty(), loss) {
                    (false, Some(l)) => format!("{rtt} {rate} {l}"),
                    (false, None) => format!("{rtt} {rate} 0%"),
                    (true, _) => format!("{rtt} {rate}"),
                };
                links.push(Link {
                    label,
                    rate,
                    rtt,
                    axes,
                    testbed,
                });
            }
        }
    }
    Ok(CrosscheckSpec {
        sites,
        protocols: req.protocols,
        links,
        reps: req.reps,
        warmup: req.warmup,
        trial: req.trial,
        reference,
    })
}

/// The crosscheck as one JSON object (`--json`, schema 2; docs/crosscheck.md):
/// the rows, the agreement of each group of Trials, per metric, the gains
/// and their agreement, and the links. What is not a number is null.
pub fn document(spec: &CrosscheckSpec, rows: &[Row], figures: &Figures) -> serde_json::Value {
    use serde_json::json;
    let groups = &figures.groups;
    json!({"schema": 2, "reps": spec.reps, "rows": rows,
           "mape_pct": groups.first().map_or(f64::NAN, |g| g.mape_pct), "agreement": groups,
           "metrics": figures.metrics, "gains": figures.gains, "gain_agreement": figures.gain_agreement,
           "diagnosis": {"trials": figures.trial_diagnoses, "pairs": figures.pair_diagnoses},
           "pool": spec.trial.model.pool.name(), "browser_cost": spec.trial.model.browser_cost.to_string(),
           "server": spec.trial.server.name(), "build": verdict::settings::BUILD,
           "reference": spec.reference.files(),
           "testbeds": spec.links.iter().map(|l| &l.testbed).collect::<Vec<_>>(),
           "links": spec.links.iter().map(|l| json!({"label": l.label, "link": l.testbed.to_string(), "axes": l.axes})).collect::<Vec<_>>()})
}

/// Which of these errors are bad input, a refusal or a failure to run (`crate::Error`).
impl From<CrosscheckError> for crate::Error {
    fn from(e: CrosscheckError) -> crate::Error {
        match e {
            // No Chromium: the user asked for a client that is not installed.
            CrosscheckError::NoBrowser(e) => crate::Error::Usage(e.to_string()),
            CrosscheckError::Refused(r) => crate::Error::Refused(r),
            CrosscheckError::Setup(e) => crate::Error::Setup(Box::new(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losses_take_independent_losses_and_send_a_gilbert_elliott_model_to_loss() {
        assert!(parse_independent_loss("1%").is_ok());
        let e = parse_independent_loss("ge:1%,10%,50%,0%").unwrap_err();
        assert!(e.contains("--losses takes independent losses"), "{e}");
        assert!(parse_independent_loss("lots").is_err());
    }
}
