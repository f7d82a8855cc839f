//! The per-protocol summary of a group of probes — PLT and ToW (mean, median,
//! Student-t CI), bytes, connections, and the gain of mean PLT over a baseline
//! with its bootstrap CI, and of mean ToW likewise, and what the user saw (TTFB,
//! FCP, LCP: Chromium's, over the probes that have them) — computed here once for
//! `compare` and the report; `Metric` (an experiment's choice) picks the headline.
//! A protocol none of whose probes loaded has no figures and no gain, nor has
//! any protocol a gain over a baseline that never loaded; [`or_na`] and
//! [`failure_note`] say so alike in `compare`'s table and the report.

use crate::experiment::Metric;
use crate::probe::ProbeRecord;
use crate::stats::{gain_with_ci, mann_whitney_p, mean, summarize, Summary, BOOTSTRAP_SEED};
use proto::Protocol;
use serde::Serialize;
use std::borrow::Borrow;

/// A summary of nothing: what a metric no probe has shows (n/a).
const NO_SUMMARY: Summary = Summary {
    mean: f64::NAN,
    median: f64::NAN,
    ci95: [f64::NAN, f64::NAN],
};

/// What a headline metric picks out of a summary.
impl Metric {
    /// The summary of a paint metric (None for PLT and ToW, and where no
    /// probe has it).
    fn part(self, s: &ProtocolSummary) -> Option<&PartSummary> {
        match self {
            Metric::Plt | Metric::Tow => None,
            Metric::Ttfb => s.ttfb_ms.as_ref(),
            Metric::Fcp => s.fcp_ms.as_ref(),
            Metric::Lcp => s.lcp_ms.as_ref(),
            Metric::Si => s.speed_index_ms.as_ref(),
        }
    }

    /// The headline's (gain, CI) of a summary.
    pub fn gain(self, s: &ProtocolSummary) -> (Option<f64>, [f64; 2]) {
        match self {
            Metric::Plt => (s.gain_pct, s.gain_ci95),
            Metric::Tow => (s.tow_gain_pct, s.tow_gain_ci95),
            _ => self
                .part(s)
                .map_or((None, [f64::NAN; 2]), |p| (p.gain_pct, p.gain_ci95)),
        }
    }

    /// The loads of a summary that have the headline.
    pub fn n(self, s: &ProtocolSummary) -> usize {
        match self {
            Metric::Plt | Metric::Tow => s.n,
            _ => self.part(s).map_or(0, |p| p.n),
        }
    }

    /// The headline's Mann-Whitney p-value against the baseline.
    pub fn p_value(self, s: &ProtocolSummary) -> Option<f64> {
        match self {
            Metric::Plt => s.plt_p_value,
            Metric::Tow => s.tow_p_value,
            _ => self.part(s).and_then(|p| p.p_value),
        }
    }

    /// The headline's per-probe summary.
    pub fn summary(self, s: &ProtocolSummary) -> &Summary {
        match self {
            Metric::Plt => &s.plt_ms,
            Metric::Tow => &s.tow_ms,
            _ => self.part(s).map_or(&NO_SUMMARY, |p| &p.summary),
        }
    }
}

/// One protocol's probes in a group, summarized. With no finished probe
/// (`n` 0) there is nothing to summarize: the summaries are NaN, the means and
/// gains None (null in JSON, either way).
#[derive(Debug, Clone, Serialize)]
pub struct ProtocolSummary {
    pub protocol: Protocol,
    /// The view its probes measured (`--view both`: a row per protocol and
    /// view); left out of JSON for the first view.
    #[serde(skip_serializing_if = "crate::kinds::View::is_first")]
    pub view: crate::kinds::View,
    /// Probes that finished (the statistics are theirs).
    pub n: usize,
    pub failed: usize,
    pub plt_ms: Summary,
    pub tow_ms: Summary,
    pub bytes_down: Option<f64>,
    pub connections: Option<f64>,
    /// Gain of mean PLT over the baseline's, in %, with a 95 % bootstrap CI
    /// (the baseline's own: against a resample of itself); None when this
    /// protocol or the baseline has no finished probe; the CI NaN when either
    /// has fewer than two.
    pub gain_pct: Option<f64>,
    pub gain_ci95: [f64; 2],
    /// Gain of mean ToW over the baseline's, in %, with its 95 % bootstrap CI.
    pub tow_gain_pct: Option<f64>,
    pub tow_gain_ci95: [f64; 2],
    /// Mean bytes client → server (requests, handshakes, ACKs).
    pub bytes_up: Option<f64>,
    /// The error of the first failed probe (in the order given), if any failed.
    pub first_error: Option<String>,
    /// Whether this protocol's PLTs differ from the baseline's: the two-sided
    /// p-value of the Mann-Whitney U test (`stats::mann_whitney_p`). None for
    /// the baseline itself and when either has no finished probe.
    pub plt_p_value: Option<f64>,
    /// The same for time on wire.
    pub tow_p_value: Option<f64>,
    /// What the user saw (`ProbeRecord::paint`, Chromium's), over this
    /// protocol's finished probes that have the figure; None, and absent
    /// from JSON, when none has (the model's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttfb_ms: Option<PartSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fcp_ms: Option<PartSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lcp_ms: Option<PartSummary>,
    /// Speed Index and visually complete, likewise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_index_ms: Option<PartSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visually_complete_ms: Option<PartSummary>,
}

/// A figure only some probes have, summarized over those: how many, and
/// their mean, median and Student-t 95 % CI (`stats::summarize`); the gain
/// of its mean over the baseline's with its bootstrap CI, and the
/// Mann-Whitney p-value against the baseline, as PLT's.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PartSummary {
    pub n: usize,
    #[serde(flatten)]
    pub summary: Summary,
    /// None when the baseline has no such figure.
    pub gain_pct: Option<f64>,
    pub gain_ci95: [f64; 2],
    /// None for the baseline itself.
    pub p_value: Option<f64>,
}

impl PartSummary {
    /// The summary of the values `f` gives of `probes` (those it gives none
    /// for left out) against those of `base`; None when it gives none.
    fn of(
        probes: &[&ProbeRecord],
        base: &[&ProbeRecord],
        is_baseline: bool,
        f: impl Fn(&ProbeRecord) -> Option<f64>,
    ) -> Option<PartSummary> {
        let xs: Vec<f64> = probes.iter().filter_map(|p| f(p)).collect();
        let bs: Vec<f64> = base.iter().filter_map(|p| f(p)).collect();
        let gain = gain_with_ci(&bs, &xs, BOOTSTRAP_SEED);
        (!xs.is_empty()).then(|| PartSummary {
            n: xs.len(),
            summary: summarize(&xs),
            gain_pct: gain.map(|g| g.0),
            gain_ci95: gain.map_or([f64::NAN; 2], |g| g.1),
            p_value: (!is_baseline).then(|| mann_whitney_p(&bs, &xs)).flatten(),
        })
    }
}

impl ProtocolSummary {
    /// "k failed", "all k failed: <first error>", or None when none failed.
    pub fn failure_note(&self) -> Option<String> {
        failure_note(self.n, self.failed, self.first_error.as_deref())
    }
}

/// What a group's failed probes come to, beside its figures: "k failed" when
/// some loaded, "all k failed: <the first one's error>" when none did (the
/// figures are then n/a), None when none failed.
pub fn failure_note(n: usize, failed: usize, first_error: Option<&str>) -> Option<String> {
    match (n, failed) {
        (_, 0) => None,
        (0, k) => Some(match first_error {
            Some(e) => format!("all {k} failed: {e}"),
            None => format!("all {k} failed"),
        }),
        (_, k) => Some(format!("{k} failed")),
    }
}

/// `v` formatted by `fmt`, or "n/a" when there is none or it is not a number
/// (no finished probe, no interval): the one way a missing figure is shown.
/// A zero is formatted as +0, never as -0.
pub fn or_na(v: impl Into<Option<f64>>, fmt: impl Fn(f64) -> String) -> String {
    match v.into() {
        // Adding +0.0 turns -0.0 into +0.0 and leaves every other value.
        Some(v) if v.is_finite() => fmt(v + 0.0),
        _ => "n/a".into(),
    }
}

/// The mean of `f` over `probes`; None for no probe.
fn mean_of(probes: &[&ProbeRecord], f: impl Fn(&ProbeRecord) -> f64) -> Option<f64> {
    (!probes.is_empty()).then(|| mean(&probes.iter().map(|p| f(p)).collect::<Vec<_>>()))
}

/// Per protocol of `protocols`, in that order: the summary of its finished
/// `probes` (failed ones are counted), gains against `baseline`'s. The probes
/// may be records or references to them.
pub fn summarize_protocols<P: Borrow<ProbeRecord>>(
    baseline: Protocol,
    protocols: &[Protocol],
    probes: &[P],
) -> Vec<ProtocolSummary> {
    let of = |p: Protocol, failed: bool| -> Vec<&ProbeRecord> {
        probes
            .iter()
            .map(Borrow::borrow)
            .filter(|r: &&ProbeRecord| r.protocol == p && r.error.is_some() == failed)
            .collect()
    };
    let base_probes = of(baseline, false);
    let base: Vec<f64> = base_probes.iter().map(|r| r.plt_ms).collect();
    let base_tow: Vec<f64> = of(baseline, false).iter().map(|r| r.tow_ms).collect();
    protocols
        .iter()
        .map(|&p| {
            let good = of(p, false);
            let failed = of(p, true);
            let part = |m: Metric| PartSummary::of(&good, &base_probes, p == baseline, |r| m.of(r));
            let plt: Vec<f64> = good.iter().map(|r| r.plt_ms).collect();
            let tow: Vec<f64> = good.iter().map(|r| r.tow_ms).collect();
            let split = |g: Option<(f64, [f64; 2])>| match g {
                Some((g, ci)) => (Some(g), ci),
                None => (None, [f64::NAN, f64::NAN]),
            };
            let (gain_pct, gain_ci95) = split(gain_with_ci(&base, &plt, BOOTSTRAP_SEED));
            let (tow_gain_pct, tow_gain_ci95) =
                split(gain_with_ci(&base_tow, &tow, BOOTSTRAP_SEED));
            ProtocolSummary {
                view: crate::kinds::View::First,
                protocol: p,
                n: good.len(),
                failed: failed.len(),
                plt_ms: summarize(&plt),
                tow_ms: summarize(&tow),
                bytes_down: mean_of(&good, |r| r.bytes_down as f64),
                connections: mean_of(&good, |r| r.connections as f64),
                gain_pct,
                gain_ci95,
                tow_gain_pct,
                tow_gain_ci95,
                bytes_up: mean_of(&good, |r| r.bytes_up as f64),
                first_error: failed.first().and_then(|r| r.error.clone()),
                plt_p_value: (p != baseline)
                    .then(|| mann_whitney_p(&base, &plt))
                    .flatten(),
                tow_p_value: (p != baseline)
                    .then(|| mann_whitney_p(&base_tow, &tow))
                    .flatten(),
                ttfb_ms: part(Metric::Ttfb),
                fcp_ms: part(Metric::Fcp),
                lcp_ms: part(Metric::Lcp),
                speed_index_ms: part(Metric::Si),
                visually_complete_ms: PartSummary::of(&good, &base_probes, p == baseline, |r| {
                    r.paint.as_ref()?.visually_complete_ms
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(protocol: Protocol, plt_ms: f64, error: bool) -> ProbeRecord {
        failing(protocol, plt_ms, error.then_some("x"))
    }

    fn failing(protocol: Protocol, plt_ms: f64, error: Option<&str>) -> ProbeRecord {
        ProbeRecord {
            plt_ms,
            tow_ms: plt_ms - 10.0,
            connections: 2,
            syns: 2,
            bytes_down: 1000,
            resources: 1,
            error: error.map(String::from),
            ..ProbeRecord::failed(protocol, 0, String::new())
        }
    }

    /// A paint headline (FCP) has its gain over the baseline's mean, its CI
    /// and its p-value, over the probes that have it, as PLT's.
    #[test]
    fn paint_metrics_have_gains_and_p_values_as_plt() {
        let painted = |protocol, fcp: Option<f64>| ProbeRecord {
            paint: fcp.map(|f| crate::Paint {
                fcp_ms: Some(f),
                ..Default::default()
            }),
            ..probe(protocol, 1000.0, false)
        };
        let probes = [
            painted(Protocol::Https, Some(400.0)),
            painted(Protocol::Https, Some(440.0)),
            painted(Protocol::H2, Some(300.0)),
            painted(Protocol::H2, Some(340.0)),
            painted(Protocol::H2, None),
        ];
        let s = summarize_protocols(Protocol::Https, &[Protocol::Https, Protocol::H2], &probes);
        let fcp = s[1].fcp_ms.unwrap();
        assert_eq!(fcp.n, 2);
        assert_eq!(
            Some((fcp.gain_pct.unwrap(), fcp.gain_ci95)),
            gain_with_ci(&[400.0, 440.0], &[300.0, 340.0], BOOTSTRAP_SEED)
        );
        assert_eq!(Metric::Fcp.gain(&s[1]).0, fcp.gain_pct);
        assert_eq!(Metric::Fcp.summary(&s[1]).mean, 320.0);
        assert_eq!(
            Metric::Fcp.p_value(&s[1]),
            mann_whitney_p(&[400.0, 440.0], &[300.0, 340.0])
        );
        assert_eq!(s[0].fcp_ms.unwrap().p_value, None);
        assert_eq!(Metric::Fcp.of(&probes[4]), None);
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
        assert_eq!(s[0].gain_pct, Some(0.0));
        assert!((s[1].gain_pct.unwrap() - 20.0).abs() < 1e-9);
        assert_eq!(
            Some((s[1].gain_pct.unwrap(), s[1].gain_ci95)),
            gain_with_ci(&[100.0, 110.0, 90.0], &[80.0, 85.0, 75.0], BOOTSTRAP_SEED)
        );
        assert_eq!(s[1].tow_ms.mean, 70.0);
        // ToW: 100, 90, 80 against 70, 75, 65.
        assert!((s[1].tow_gain_pct.unwrap() - 100.0 * (90.0 - 70.0) / 90.0).abs() < 1e-9);
        assert_eq!(Metric::Tow.gain(&s[1]).0, s[1].tow_gain_pct);
        assert_eq!(Metric::Plt.gain(&s[1]).0, s[1].gain_pct);
        assert_eq!("tow".parse::<Metric>(), Ok(Metric::Tow));
        assert!("wire"
            .parse::<Metric>()
            .unwrap_err()
            .contains("fcp, lcp or si"));
        // No probe painted: a paint headline has no figures and no gain.
        assert_eq!(Metric::Fcp.gain(&s[1]).0, None);
        assert!(Metric::Lcp.summary(&s[1]).mean.is_nan());
        assert_eq!(Metric::Si.p_value(&s[1]), None);
        assert_eq!(s[1].bytes_down, Some(1000.0));
        // Some failed: the figures are the others', the failures counted beside them.
        assert_eq!(s[0].failure_note(), None);
        assert_eq!(s[1].failure_note().as_deref(), Some("1 failed"));
        assert_eq!(s[1].first_error.as_deref(), Some("x"));
        // Borrowed records summarize alike.
        let refs: Vec<&ProbeRecord> = probes.iter().collect();
        let t = summarize_protocols(Protocol::H2, &[Protocol::H2], &refs);
        assert_eq!(t[0].gain_pct, Some(0.0));
    }

    /// No figure of `s` is made up: each is None or NaN.
    fn nothing(s: &ProtocolSummary) {
        assert_eq!((s.gain_pct, s.tow_gain_pct), (None, None), "{s:?}");
        assert_eq!(
            (s.bytes_down, s.connections, s.bytes_up),
            (None, None, None)
        );
        for v in [s.plt_ms, s.tow_ms]
            .iter()
            .flat_map(|m| [m.mean, m.median, m.ci95[0], m.ci95[1]])
            .chain(s.gain_ci95)
            .chain(s.tow_gain_ci95)
        {
            assert!(v.is_nan(), "{s:?}");
        }
        let json = serde_json::to_value(s).unwrap();
        assert!(
            json["gain_pct"].is_null() && json["tow_gain_pct"].is_null(),
            "{json}"
        );
        assert!(
            json["plt_ms"]["mean"].is_null() && json["bytes_down"].is_null(),
            "{json}"
        );
        assert!(!json.to_string().contains("-0"), "{json}");
    }

    #[test]
    fn a_protocol_whose_every_probe_failed_has_no_figures_and_no_gain() {
        let probes = [
            probe(Protocol::Https, 100.0, false),
            probe(Protocol::Https, 110.0, false),
            failing(Protocol::H2, 0.0, Some("h2: stream 3 refused")),
            failing(Protocol::H2, 0.0, Some("h2: stream 5 refused")),
        ];
        let s = summarize_protocols(Protocol::Https, &[Protocol::Https, Protocol::H2], &probes);
        assert_eq!((s[1].n, s[1].failed), (0, 2));
        // Not +100 % (the gain over a mean of -0.0 ms).
        nothing(&s[1]);
        assert_eq!(
            s[1].failure_note().as_deref(),
            Some("all 2 failed: h2: stream 3 refused")
        );
        assert_eq!(Metric::Plt.gain(&s[1]).0, None);
        // The baseline keeps its figures and its gain over itself.
        assert_eq!((s[0].gain_pct, s[0].bytes_down), (Some(0.0), Some(1000.0)));
        assert_eq!(s[0].first_error, None);
    }

    #[test]
    fn no_protocol_has_a_gain_over_a_baseline_that_never_loaded() {
        let probes = [
            failing(Protocol::Https, 0.0, Some("connect: timed out")),
            failing(Protocol::Https, 0.0, Some("later")),
            probe(Protocol::H2, 80.0, false),
            probe(Protocol::H2, 90.0, false),
        ];
        let s = summarize_protocols(Protocol::Https, &[Protocol::Https, Protocol::H2], &probes);
        nothing(&s[0]);
        assert_eq!(
            s[0].failure_note().as_deref(),
            Some("all 2 failed: connect: timed out")
        );
        // h2 loaded: its own figures, but nothing to gain over.
        assert_eq!((s[1].n, s[1].failed), (2, 0));
        assert_eq!(s[1].plt_ms.mean, 85.0);
        assert_eq!(s[1].bytes_down, Some(1000.0));
        assert_eq!((s[1].gain_pct, s[1].tow_gain_pct), (None, None));
        assert!(s[1].gain_ci95.iter().all(|v| v.is_nan()));
        assert_eq!(s[1].failure_note(), None);
    }

    /// Paints are summarized over the probes that have them, with PLT's
    /// interval; the model's probes (none) leave them out of the JSON.
    #[test]
    fn paints_summarized_over_the_probes_that_have_them() {
        let painted = |plt: f64, fcp: f64, lcp: Option<f64>| ProbeRecord {
            paint: Some(crate::Paint {
                ttfb_ms: Some(40.0),
                fcp_ms: Some(fcp),
                lcp_ms: lcp,
                speed_index_ms: lcp.map(|l| l + 50.0),
                ..Default::default()
            }),
            ..probe(Protocol::H2, plt, false)
        };
        let probes = [
            painted(300.0, 100.0, Some(200.0)),
            painted(310.0, 110.0, Some(220.0)),
            painted(320.0, 120.0, None),
            probe(Protocol::H2, 330.0, false),
            probe(Protocol::Https, 400.0, false),
        ];
        let s = summarize_protocols(Protocol::Https, &[Protocol::Https, Protocol::H2], &probes);
        assert!(s[0].fcp_ms.is_none() && s[0].lcp_ms.is_none() && s[0].ttfb_ms.is_none());
        let json = serde_json::to_value(&s[0]).unwrap();
        assert!(
            json.get("fcp_ms").is_none() && json.get("ttfb_ms").is_none(),
            "{json}"
        );
        let fcp = s[1].fcp_ms.unwrap();
        assert_eq!(fcp.n, 3);
        let want = summarize(&[100.0, 110.0, 120.0]);
        assert_eq!((fcp.summary.mean, fcp.summary.ci95), (want.mean, want.ci95));
        let lcp = s[1].lcp_ms.unwrap();
        assert_eq!((lcp.n, lcp.summary.mean), (2, 210.0));
        assert_eq!(lcp.summary.ci95, summarize(&[200.0, 220.0]).ci95);
        let json = serde_json::to_value(&s[1]).unwrap();
        let si = s[1].speed_index_ms.unwrap();
        assert_eq!((si.n, si.summary.mean), (2, 260.0));
        assert!(s[1].visually_complete_ms.is_none());
        assert_eq!(json["speed_index_ms"]["n"], 2);
        assert!(json.get("visually_complete_ms").is_none(), "{json}");
        assert_eq!(json["fcp_ms"]["n"], 3);
        assert_eq!(json["fcp_ms"]["mean"], 110.0);
        assert_eq!(json["ttfb_ms"]["median"], 40.0);
        assert!(json["lcp_ms"]["ci95"].is_array(), "{json}");
    }

    #[test]
    fn missing_figures_read_na_and_zero_is_never_negative() {
        let pct = |v: f64| format!("{v:+.1}");
        assert_eq!(or_na(None, pct), "n/a");
        assert_eq!(or_na(f64::NAN, pct), "n/a");
        assert_eq!(or_na(Some(f64::INFINITY), pct), "n/a");
        assert_eq!(or_na(-0.0, pct), "+0.0");
        assert_eq!(or_na(-0.0, |v| format!("{v:.0}")), "0");
        assert_eq!(or_na(Some(-12.34), pct), "-12.3");
        assert_eq!(failure_note(3, 0, None), None);
        assert_eq!(failure_note(0, 2, None).as_deref(), Some("all 2 failed"));
    }
}
