//! The model against Chromium: the same Trials loaded by both, per-Trial PLT
//! ratio (model / Chromium) and absolute percentage error; over the Trials
//! (all, and per link, rate, RTT, protocol and site) the MAPE, the share
//! within 10 % and Spearman's ρ of the two clients' PLTs; and per Trial the
//! HAR phases of each client (connect, ssl, wait, receive, and discovery:
//! when resources were found), so that each departure is traceable; per
//! metric (PLT, TTFB, FCP, LCP, Speed Index) the error's percentiles and
//! buckets beside Chromium's own spread (`metrics`); and per pair of
//! protocols the error of the model's gain, its sign and its trend along
//! each swept axis (`gains`). docs/crosscheck.md defines each figure.

pub mod diagnosis;
pub mod gains;
pub mod metrics;
pub mod reference;

pub use gains::{Axes, Axis, GainAgreement, GainPoint};
pub use metrics::{Cell, Figure, MetricAgreement};
pub use reference::{LinkKey, Reference};

use proto::Protocol;
use results::stats::{median, spearman, summarize, Summary};
use results::ProbeRecord;
use serde::Serialize;

/// One Trial (site × link × protocol) loaded by both clients.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub site: String,
    /// The site's `Site::tree_fingerprint` (hex) as this run loaded it: a
    /// reference's Chromium loads are taken only for the same tree.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub site_fingerprint: String,
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
    /// The link's rate and RTT as labels (for the per-rate and per-RTT figures).
    pub rate: String,
    pub rtt: String,
    /// Per-load HAR phases, summed over the page's resources (median over
    /// the probes), each client, in ms.
    pub model_phases: Phases,
    pub chromium_phases: Phases,
    /// Where the link sits on the swept axes (`run` sets it from the link).
    pub axes: Axes,
    /// Per metric, in `Figure::ALL` order: each client's values, medians,
    /// APE and Chromium's spread.
    pub metrics: Vec<Cell>,
    /// Whether Chromium's loads came from a reference (`--reference`), not
    /// from this run.
    pub chromium_reference: bool,
    /// Each client's loads as recorded (`Loads::records`): what a later
    /// diagnosis of the model reads from a reference, without Chromium.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub model_loads: Vec<ProbeRecord>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chromium_loads: Vec<ProbeRecord>,
    /// The machine's load average as each client's loads ended (`Loads::machine_load`).
    pub model_machine_load: Option<f64>,
    pub chromium_machine_load: Option<f64>,
    /// How busy the machine's CPUs were during each client's loads, in %
    /// (`Loads::cpu_busy_pct`).
    pub model_cpu_busy_pct: Option<f64>,
    pub chromium_cpu_busy_pct: Option<f64>,
}

/// HAR phases of one load summed over its resources, in ms; `discovery` is
/// the sum of the times (from navigation start) at which each was found.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Phases {
    pub connect: f64,
    pub ssl: f64,
    pub wait: f64,
    pub receive: f64,
    pub discovery: f64,
}

impl Phases {
    pub const NAMES: [&'static str; 5] = ["connect", "ssl", "wait", "receive", "discovery"];

    pub fn values(&self) -> [f64; 5] {
        [
            self.connect,
            self.ssl,
            self.wait,
            self.receive,
            self.discovery,
        ]
    }

    /// A load's phases; `discovery`: the sum of the times its resources
    /// were found (NaN when its page load is not at hand).
    fn of(record: &ProbeRecord, discovery: f64) -> Phases {
        let phases = &record.phases;
        Phases {
            connect: phases.connect,
            ssl: phases.ssl,
            wait: phases.wait,
            receive: phases.receive,
            discovery,
        }
    }

    /// Each phase's median over `loads`.
    fn median(loads: &[Phases]) -> Phases {
        let m = |f: fn(&Phases) -> f64| median(&loads.iter().map(f).collect::<Vec<_>>());
        Phases {
            connect: m(|p| p.connect),
            ssl: m(|p| p.ssl),
            wait: m(|p| p.wait),
            receive: m(|p| p.receive),
            discovery: m(|p| p.discovery),
        }
    }
}

impl Row {
    /// The Trial's cell of `metric`.
    pub fn cell(&self, metric: Figure) -> Option<&Cell> {
        self.metrics.iter().find(|c| c.metric == metric)
    }

    /// Model minus Chromium, per phase (ms).
    pub fn phase_diff(&self) -> Phases {
        let (m, c) = (self.model_phases, self.chromium_phases);
        Phases {
            connect: m.connect - c.connect,
            ssl: m.ssl - c.ssl,
            wait: m.wait - c.wait,
            receive: m.receive - c.receive,
            discovery: m.discovery - c.discovery,
        }
    }
}

/// The figures of a set of Trials.
#[derive(Debug, Clone, Serialize)]
pub struct Agreement {
    /// What the set is: "all", or e.g. "rate 8mbit".
    pub group: String,
    pub trials: usize,
    /// Trials with both clients' numbers.
    pub compared: usize,
    pub mape_pct: f64,
    /// Share of the compared Trials within 10 %, in %.
    pub within_10_pct: f64,
    /// The largest error and its Trial.
    pub worst_pct: f64,
    pub worst: String,
    /// Spearman's ρ of the median PLTs (ties share their mean rank).
    pub spearman: f64,
    /// Mean model − Chromium phase difference per Trial, ms.
    pub phase_diff: Phases,
}

/// The figures of `rows`, named `group`.
pub fn agreement(group: &str, rows: &[&Row]) -> Agreement {
    let ok: Vec<&&Row> = rows.iter().filter(|r| r.ape_pct.is_finite()).collect();
    let n = ok.len();
    let worst = ok
        .iter()
        .max_by(|a, b| a.ape_pct.total_cmp(&b.ape_pct))
        .map(|r| {
            (
                r.ape_pct,
                format!("{} {} {}", r.site, r.link, r.protocol.name()),
            )
        })
        .unwrap_or((f64::NAN, String::new()));
    let mean_of = |f: fn(&Phases) -> f64| -> f64 {
        let v: Vec<f64> = ok
            .iter()
            .map(|r| f(&r.phase_diff()))
            .filter(|v| v.is_finite())
            .collect();
        results::stats::mean(&v)
    };
    Agreement {
        group: group.to_string(),
        trials: rows.len(),
        compared: n,
        mape_pct: mape_of(rows.iter().copied()),
        within_10_pct: if n == 0 {
            f64::NAN
        } else {
            ok.iter().filter(|r| r.ape_pct <= 10.0).count() as f64 / n as f64 * 100.0
        },
        worst_pct: worst.0,
        worst: worst.1,
        spearman: spearman(
            &rows
                .iter()
                .map(|r| (r.model.median, r.chromium.median))
                .collect::<Vec<_>>(),
        ),
        phase_diff: Phases {
            connect: mean_of(|p| p.connect),
            ssl: mean_of(|p| p.ssl),
            wait: mean_of(|p| p.wait),
            receive: mean_of(|p| p.receive),
            discovery: mean_of(|p| p.discovery),
        },
    }
}

/// The figures overall, then per link, rate, RTT, protocol and site (each
/// dimension only when it has more than one value).
pub fn agreements(rows: &[Row]) -> Vec<Agreement> {
    groups(rows)
        .iter()
        .map(|(name, set)| agreement(name, set))
        .collect()
}

/// Per group of `groups`, per metric: the metric's figures over the group.
pub fn metric_agreements(rows: &[Row]) -> Vec<MetricAgreement> {
    let mut out = Vec::new();
    for (name, set) in groups(rows) {
        for metric in Figure::ALL {
            let cells: Vec<&Cell> = set.iter().filter_map(|r| r.cell(metric)).collect();
            out.push(metrics::metric_agreement(&name, metric, &cells));
        }
    }
    out
}

/// The sets of Trials the figures are given for: "all", then per link,
/// rate, RTT, protocol and site (each dimension only when it has more than
/// one value; links only when a link holds more than one Trial).
pub fn groups(rows: &[Row]) -> Vec<(String, Vec<&Row>)> {
    let all: Vec<&Row> = rows.iter().collect();
    let mut out = vec![("all".to_string(), all)];
    type Key = fn(&Row) -> String;
    let dims: [(&str, Key); 5] = [
        ("link", |r| r.link.clone()),
        ("rate", |r| r.rate.clone()),
        ("rtt", |r| r.rtt.clone()),
        ("protocol", |r| r.protocol.name().to_string()),
        ("site", |r| r.site.clone()),
    ];
    for (name, key) in dims {
        let mut values: Vec<String> = Vec::new();
        for r in rows {
            let k = key(r);
            if !values.contains(&k) {
                values.push(k);
            }
        }
        if values.len() < 2 || (name == "link" && values.len() == rows.len()) {
            continue;
        }
        for v in values {
            let set: Vec<&Row> = rows.iter().filter(|r| key(r) == v).collect();
            out.push((format!("{name} {v}"), set));
        }
    }
    out
}

/// One client's loads of one Trial, as much of them as a row keeps: each
/// figure's values, the medians of resources, connections and phases, and
/// the failures. From probes (`of`), or from an earlier crosscheck's row
/// (`reference`).
#[derive(Debug, Clone, Default)]
pub struct Loads {
    /// Per figure, in `Figure::ALL` order, its values over the loads that
    /// loaded the page and reported it.
    pub values: Vec<(Figure, Vec<f64>)>,
    pub resources: f64,
    pub connections: f64,
    pub phases: Phases,
    pub failed: usize,
    /// Every load of the Trial as its probe recorded it (failed ones too):
    /// each taken apart (`explain`: components, mechanisms, connections and
    /// their packets, drops, the bottleneck), its HAR phases (blocked and
    /// send included), SYNs, drops, packets, paint and Trial — what a later
    /// diagnosis of model vs Chromium reads. None from a reference written
    /// before they were stored.
    pub records: Vec<ProbeRecord>,
    /// The machine's 1-minute load average when the client's loads of the
    /// Trial ended (`/proc/loadavg`): a loaded machine slows Chromium.
    pub machine_load: Option<f64>,
    /// The share of the machine's CPU time (all cores) that was busy while
    /// the client's loads of the Trial ran, in % (`netns::calibrate::CpuBusy`):
    /// near 100, the loads waited for the CPU.
    pub cpu_busy_pct: Option<f64>,
}

impl Loads {
    /// The finished loads' explanations.
    pub fn explained(records: &[ProbeRecord]) -> Vec<explain::Explanation> {
        records
            .iter()
            .filter(|r| r.error.is_none())
            .filter_map(|r| r.explain.clone())
            .collect()
    }
}

impl Loads {
    /// The loads of `protocol` among `probes`, each a record and the sum of
    /// the times its resources were found (failed ones counted, not used).
    pub fn of(probes: &[(&ProbeRecord, f64)], protocol: Protocol) -> Loads {
        let ok: Vec<&(&ProbeRecord, f64)> = probes
            .iter()
            .filter(|(r, _)| r.protocol == protocol && r.error.is_none())
            .collect();
        let med = |f: &dyn Fn(&ProbeRecord) -> f64| {
            median(&ok.iter().map(|(r, _)| f(r)).collect::<Vec<_>>())
        };
        let phases: Vec<Phases> = ok.iter().map(|(r, d)| Phases::of(r, *d)).collect();
        Loads {
            values: Figure::ALL
                .into_iter()
                .map(|f| (f, ok.iter().filter_map(|(r, _)| f.of(r)).collect()))
                .collect(),
            resources: med(&|p| p.resources as f64),
            connections: med(&|p| p.connections as f64),
            phases: Phases::median(&phases),
            records: probes
                .iter()
                .filter(|(r, _)| r.protocol == protocol)
                .map(|(r, _)| (*r).clone())
                .collect(),
            machine_load: None,
            cpu_busy_pct: None,
            failed: probes
                .iter()
                .filter(|(r, _)| r.protocol == protocol && r.error.is_some())
                .count(),
        }
    }

    /// The values of `figure` (none when not reported).
    pub fn values(&self, figure: Figure) -> Vec<f64> {
        self.values
            .iter()
            .find(|(f, _)| *f == figure)
            .map_or_else(Vec::new, |(_, v)| v.clone())
    }
}

/// The row of one Trial from each client's loads.
pub fn row_of(
    site: &str,
    link: &str,
    rate: &str,
    rtt: &str,
    protocol: Protocol,
    model: &Loads,
    chromium: &Loads,
) -> Row {
    let (m, c) = (model.values(Figure::Plt), chromium.values(Figure::Plt));
    let (ms, cs) = (summarize(&m), summarize(&c));
    let (ratio, ape_pct) = if m.is_empty() || c.is_empty() || cs.median <= 0.0 {
        (f64::NAN, f64::NAN)
    } else {
        (
            ms.median / cs.median,
            results::stats::ape(ms.median, cs.median),
        )
    };
    Row {
        axes: Axes::default(),
        metrics: Figure::ALL
            .into_iter()
            .map(|f| Cell::new(f, model.values(f), chromium.values(f)))
            .collect(),
        site: site.to_string(),
        site_fingerprint: String::new(),
        link: link.to_string(),
        protocol,
        model: ms,
        chromium: cs,
        ratio,
        ape_pct,
        model_resources: model.resources,
        chromium_resources: chromium.resources,
        model_connections: model.connections,
        chromium_connections: chromium.connections,
        model_failed: model.failed,
        chromium_failed: chromium.failed,
        rate: rate.to_string(),
        rtt: rtt.to_string(),
        model_phases: model.phases,
        chromium_phases: chromium.phases,
        chromium_reference: false,
        model_loads: model.records.clone(),
        chromium_loads: chromium.records.clone(),
        model_machine_load: model.machine_load,
        chromium_machine_load: chromium.machine_load,
        model_cpu_busy_pct: model.cpu_busy_pct,
        chromium_cpu_busy_pct: chromium.cpu_busy_pct,
    }
}

/// Mean absolute percentage error over the rows that have both clients' numbers.
pub fn mape(rows: &[Row]) -> f64 {
    mape_of(rows.iter())
}

fn mape_of<'a>(rows: impl Iterator<Item = &'a Row>) -> f64 {
    results::stats::mape(
        &rows
            .map(|r| (r.model.median, r.chromium.median))
            .collect::<Vec<_>>(),
    )
}

/// Everything a crosscheck computes from its rows: the PLT agreement of each
/// group, each metric's per group, and the gains (points and per pair and
/// metric).
pub struct Figures {
    pub groups: Vec<Agreement>,
    pub metrics: Vec<MetricAgreement>,
    pub gains: Vec<GainPoint>,
    pub gain_agreement: Vec<GainAgreement>,
    /// Model vs Chromium taken apart per Trial, and each pair's gain error.
    pub trial_diagnoses: Vec<diagnosis::TrialDiagnosis>,
    pub pair_diagnoses: Vec<diagnosis::PairDiagnosis>,
}

impl Figures {
    pub fn of(rows: &[Row]) -> Figures {
        let gains = gains::gain_points(rows);
        Figures {
            groups: agreements(rows),
            metrics: metric_agreements(rows),
            gain_agreement: gains::gain_agreements(&gains),
            gains,
            trial_diagnoses: diagnosis::trials(rows),
            pair_diagnoses: diagnosis::pairs(rows),
        }
    }
}

/// The exit status of a crosscheck that ran: 1 when a probe failed or a
/// Trial could not be compared, else 0.
pub fn exit_code(rows: &[Row]) -> i32 {
    let failed = rows
        .iter()
        .any(|r| r.model_failed + r.chromium_failed > 0 || r.ape_pct.is_nan());
    i32::from(failed)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn probe(protocol: Protocol, plt: f64, error: Option<&str>) -> ProbeRecord {
        let mut p = ProbeRecord::failed(protocol, 0, String::new());
        p.error = error.map(str::to_string);
        p.plt_ms = plt;
        p.resources = 7;
        p
    }

    /// The row of one Trial from each client's records (no page loads).
    pub(crate) fn row(
        site: &str,
        link: &str,
        rate: &str,
        rtt: &str,
        protocol: Protocol,
        model: &[ProbeRecord],
        chromium: &[ProbeRecord],
    ) -> Row {
        let loads = |records: &[ProbeRecord]| {
            let pairs: Vec<(&ProbeRecord, f64)> = records.iter().map(|r| (r, f64::NAN)).collect();
            Loads::of(&pairs, protocol)
        };
        row_of(
            site,
            link,
            rate,
            rtt,
            protocol,
            &loads(model),
            &loads(chromium),
        )
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
        let r = row("s", "l", "1mbit", "20ms", Protocol::H2, &model, &chromium);
        assert!((r.ratio - 0.8).abs() < 1e-9);
        assert!((r.ape_pct - 20.0).abs() < 1e-9);
        assert_eq!((r.model_failed, r.chromium_failed), (0, 1));
        let r2 = row(
            "s",
            "l",
            "1mbit",
            "20ms",
            Protocol::Https,
            &model,
            &chromium,
        );
        assert!(r2.ape_pct.is_nan());
        assert!((mape(&[r, r2]) - 20.0).abs() < 1e-9);
    }

    /// Four Trials: errors 5 %, 10 %, 30 % and one without Chromium's number.
    #[test]
    fn agreement_mape_share_worst_and_spearman() {
        let trial = |site: &str, rate: &str, m: f64, c: f64| {
            let model = [probe(Protocol::H2, m, None)];
            let chromium = [probe(
                Protocol::H2,
                c,
                if c > 0.0 { None } else { Some("x") },
            )];
            row(site, "l", rate, "20ms", Protocol::H2, &model, &chromium)
        };
        let rows = vec![
            trial("a", "1mbit", 105.0, 100.0),
            trial("b", "1mbit", 180.0, 200.0),
            trial("c", "8mbit", 390.0, 300.0),
            trial("d", "8mbit", 50.0, 0.0),
        ];
        let all = agreements(&rows);
        let a = &all[0];
        assert_eq!((a.group.as_str(), a.trials, a.compared), ("all", 4, 3));
        assert!((a.mape_pct - 15.0).abs() < 1e-9, "{a:?}");
        assert!((a.within_10_pct - 200.0 / 3.0).abs() < 1e-9, "{a:?}");
        assert!((a.worst_pct - 30.0).abs() < 1e-9);
        assert!(a.worst.starts_with("c "), "{a:?}");
        // Ranks agree: 105 < 180 < 390 and 100 < 200 < 300.
        assert!((a.spearman - 1.0).abs() < 1e-12, "{a:?}");
        let fast = all.iter().find(|g| g.group == "rate 8mbit").unwrap();
        assert!((fast.mape_pct - 30.0).abs() < 1e-9, "{fast:?}");
        assert!(all.iter().any(|g| g.group == "site a"));
        assert!(
            !all.iter().any(|g| g.group.starts_with("rtt")),
            "one RTT: no group"
        );
    }
}
