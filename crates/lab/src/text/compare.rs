//! The text of `spdylab compare`: each probe's progress line, the site line,
//! the table (a row per protocol, the first the baseline, with the notes its
//! n/a cells call for), an imported page's replay lines and the settings line.

use crate::compare::{or_na, Metric, ProtocolSummary};
use crate::probe::{ProbeRecord, ProbeSpec};
use results::PartSummary;

/// A finished probe, for the progress bar.
pub fn progress_line(p: &ProbeRecord) -> String {
    match &p.error {
        None => format!(
            "{} PLT {:.0} ms, ToW {:.0} ms",
            p.protocol, p.plt_ms, p.tow_ms
        ),
        Some(e) => format!("{} failed: {e}", p.protocol),
    }
}

/// Said when Ctrl-C stopped the comparison: how many probes were kept.
pub fn interrupted_line(spec: &ProbeSpec, kept: usize) -> String {
    format!(
        "compare: interrupted; {kept} of {} probes finished and kept",
        spec.protocols.len() * spec.reps
    )
}

/// Everything the comparison prints without `--json`: the site line, the
/// table, an imported page's replay lines and the settings line.
pub fn report(
    spec: &ProbeSpec,
    probes: &[ProbeRecord],
    rows: &[ProtocolSummary],
    metric: Metric,
) -> Vec<String> {
    let mut out = vec![site_line(spec)];
    out.extend(table(rows, metric));
    out.extend(repeat_lines(spec, probes));
    if spec.site.is_recorded() {
        out.extend(replay(spec, probes));
    }
    out.push(settings_line(spec, metric));
    out
}

/// Under a repeat view's table: per protocol, what its repeat view reused
/// (cache hits, 304s, resumed TLS, 0-RTT, handshake round trips saved, per
/// probe on average) and, with `--view both`, its repeat view's PLT gain
/// over its first view's.
pub fn repeat_lines(spec: &ProbeSpec, probes: &[ProbeRecord]) -> Vec<String> {
    if !spec.trial.view().loads_twice() {
        return Vec::new();
    }
    let gains = crate::compare::repeat_gains(&spec.protocols, probes);
    // A real server that takes no TLS 1.3 early data over TCP says so (its
    // tickets allow none, so the client sends none: the record's 0 is the
    // server's, not the client's).
    let no_early_data = match spec.trial.server {
        crate::trial::ServerKind::Peer(k) => {
            use ::peers::Program;
            k.capabilities()
                .early_data
                .map(|why| format!("; TLS early data: not supported by {k} ({why})"))
        }
        crate::trial::ServerKind::Builtin => None,
    };
    let mut out = Vec::new();
    for p in &spec.protocols {
        let mine: Vec<&ProbeRecord> = probes
            .iter()
            .filter(|r| r.protocol == *p && !r.reuse.view.is_first() && r.error.is_none())
            .collect();
        if mine.is_empty() {
            continue;
        }
        let n = mine.len() as f64;
        let avg =
            |f: &dyn Fn(&ProbeRecord) -> usize| mine.iter().map(|r| f(r)).sum::<usize>() as f64 / n;
        let gain = gains
            .iter()
            .find(|(q, ..)| q == p)
            .map_or(String::new(), |(_, g, ci)| {
                format!(
                    "; PLT {g:+.1}% [{}] vs its first view",
                    interval(*ci, |v| format!("{v:+.1}"), ", ")
                )
            });
        out.push(format!(
            "repeat {}: per load {:.1} cache hits, {:.1} 304s, {:.0} kB from the cache, {:.1} TLS resumed, 0-RTT {:.1} sent / {:.1} accepted, {:.1} handshake round trips saved{gain}",
            p.name(),
            avg(&|r| r.reuse.cache_hits),
            avg(&|r| r.reuse.not_modified),
            mine.iter().map(|r| r.reuse.cached_bytes).sum::<u64>() as f64 / n / 1e3,
            avg(&|r| r.tls_resumed),
            avg(&|r| r.reuse.zero_rtt_sent),
            avg(&|r| r.reuse.zero_rtt_accepted),
            avg(&|r| r.reuse.handshake_rtts_saved),
        ));
        if let (Some(note), true) = (&no_early_data, p.tls() && *p != proto::Protocol::H3) {
            if let Some(line) = out.last_mut() {
                line.push_str(note);
            }
        }
    }
    out
}

/// The line above the table: the site, its size and the link.
pub fn site_line(spec: &ProbeSpec) -> String {
    format!(
        "site {} ({} resources, {:.1} kB) — {}",
        spec.site.name,
        spec.site.resources.len(),
        spec.site.total_bytes() as f64 / 1e3,
        spec.testbed
    )
}

/// The one line under the table: which layout, pooling, TLS and metric the
/// comparison used (issue 16), so that a number is never read without them.
pub fn settings_line(spec: &ProbeSpec, metric: Metric) -> String {
    let layout = match spec.trial.layout {
        crate::sites::Layout::Origin => format!(
            "origin ({} host names on {} address{})",
            spec.site.hosts().len(),
            spec.testbed.shards,
            if spec.testbed.shards == 1 { "" } else { "es" }
        ),
        crate::sites::Layout::Mirror => {
            "mirror (every resource on the page's host, one address)".into()
        }
        l => format!(
            "{l} ({} host names, each its own address)",
            spec.site.hosts().len()
        ),
    };
    let pool = format!(
        "{} (h2/spdy3 sessions; h1: {} per host), browser costs {}",
        spec.trial.model.pool.name(),
        spec.trial.model.conns_per_host,
        spec.trial.model.browser_cost
    );
    let tls = match spec.trial.tls13_only() {
        None => "1.3 (1.2 offered)",
        Some(true) => "1.3 only",
        Some(false) => "1.2 only",
    };
    format!(
        "settings: layout {layout}; pooling {pool}; TLS {tls}; metric {} (gain), {} beside it",
        metric.label(),
        metric.other().label()
    )
}

/// The table under the site line: a header, a row per protocol (the first
/// being the baseline) and the notes that its n/a cells call for. A protocol
/// that loaded nothing has n/a for every figure and its gain, and says "all k
/// failed" with the first error; over a baseline that loaded nothing, no
/// protocol has a gain. When some probe has what the user saw (Chromium's
/// measured, the model's estimated), FCP and LCP means follow ToW's, and
/// Speed Index's when some probe has it. The gain and p columns are the
/// headline metric's.
pub fn table(rows: &[ProtocolSummary], metric: Metric) -> Vec<String> {
    let painted = rows
        .iter()
        .any(|r| r.fcp_ms.is_some() || r.lcp_ms.is_some());
    let indexed = rows.iter().any(|r| r.speed_index_ms.is_some());
    let mut paint_header = if painted {
        format!(" {:>10} {:>10}", "FCP mean", "LCP mean")
    } else {
        String::new()
    };
    if indexed {
        paint_header.push_str(&format!(" {:>10}", "SI mean"));
    }
    let mut out = vec![format!(
        "{:<16} {:>3} {:>10} {:>10} {:>20} {:>10}{paint_header} {:>10} {:>8} {:>6} {:>26} {:>7}",
        "protocol",
        "n",
        "PLT med",
        "PLT mean",
        "PLT 95% CI",
        "ToW mean",
        "kB down",
        "kB up",
        "conns",
        format!("{} gain vs first (95% CI)", metric.label()),
        "p"
    )];
    let Some(baseline) = rows.first() else {
        return out;
    };
    let kb = |v: Option<f64>| or_na(v, |v| format!("{:.1}", v / 1e3));
    // Rows of another view than the first name it (`--view both`, repeat).
    let views = rows.iter().any(|r| !r.view.is_first());
    for r in rows {
        let (gain_pct, gain_ci95) = metric.gain(r);
        let gain = if r.protocol == baseline.protocol {
            "baseline".to_string()
        } else if gain_pct.is_none() {
            "n/a".to_string()
        } else {
            format!(
                "{}% [{}]",
                or_na(gain_pct, |v| format!("{v:+.1}")),
                interval(gain_ci95, |v| format!("{v:+.1}"), ", ")
            )
        };
        let mean =
            |s: Option<PartSummary>| or_na(s.map(|s| s.summary.mean), |v| format!("{v:.0} ms"));
        let mut paint = if painted {
            format!(" {:>10} {:>10}", mean(r.fcp_ms), mean(r.lcp_ms))
        } else {
            String::new()
        };
        if indexed {
            paint.push_str(&format!(" {:>10}", mean(r.speed_index_ms)));
        }
        let name = match views {
            true => format!("{} {}", r.protocol.name(), r.view),
            false => r.protocol.name().to_string(),
        };
        out.push(format!(
            "{:<16} {:>3} {:>7} ms {:>7} ms {:>20} {:>7} ms{paint} {:>10} {:>8} {:>6} {:>26} {:>7}{}",
            name,
            r.n,
            or_na(r.plt_ms.median, ms),
            or_na(r.plt_ms.mean, ms),
            if has_interval(r.plt_ms.ci95) {
                format!("{:>8.0} – {:>6.0} ms", r.plt_ms.ci95[0], r.plt_ms.ci95[1])
            } else {
                "n/a".into()
            },
            or_na(r.tow_ms.mean, ms),
            kb(r.bytes_down),
            kb(r.bytes_up),
            or_na(r.connections, |v| format!("{v:.1}")),
            gain,
            if r.protocol == baseline.protocol {
                "-".to_string()
            } else {
                p_value(metric.p_value(r))
            },
            r.failure_note()
                .map_or(String::new(), |note| format!("  ({note})"))
        ));
    }
    out.push("PLT: navigation to last byte; ToW: first request packet to last response packet (link log); mean ± Student-t 95% CI.".into());
    if painted {
        out.push("FCP, LCP: first and largest contentful paint (Chromium's as it reports them, LCP as of onload or of the first frame when that came later; the model's estimated from render-blocking resources, layout and arrivals), from the document's request; mean over the probes that painted (--json: n, CI; docs/visual.md).".into());
    }
    if indexed {
        out.push("SI: Speed Index, the mean time the screen was visually incomplete (Chromium: colour histograms of its frames, as WebPageTest; the model: painted area; --json: n, CI, and visually_complete_ms; docs/visual.md).".into());
    }
    out.push(format!(
        "p: Mann-Whitney U, two-sided, of {} against the first: below 0.05 the difference is unlikely to be chance (5 repetitions each can reach 0.008 at best).",
        metric.label()
    ));
    if rows.iter().any(|r| {
        let (gain, ci) = metric.gain(r);
        r.n > 0 && (!has_interval(r.plt_ms.ci95) || (gain.is_some() && !has_interval(ci)))
    }) {
        out.push("n/a: no interval from fewer than 2 successful loads of a protocol (one repetition has no spread to estimate one from).".into());
    }
    if baseline.n == 0 {
        out.push(format!(
            "n/a gain: the baseline, {}, loaded nothing: no protocol has a gain over it.",
            baseline.protocol.name()
        ));
    } else if rows.iter().any(|r| r.n == 0) {
        out.push("n/a: a protocol that loaded nothing (all failed) has no PLT and no gain.".into());
    }
    out
}

/// For an imported page: what each protocol fetched against the import, and
/// the replay misses (requests the server had nothing for: answered 404).
pub fn replay(spec: &ProbeSpec, probes: &[ProbeRecord]) -> Vec<String> {
    spec.protocols
        .iter()
        .map(|p| {
            let mine: Vec<_> = probes.iter().filter(|r| r.protocol == *p).collect();
            let misses: usize = mine.iter().map(|r| r.misses).sum();
            let fetched = mine.iter().map(|r| r.resources).max().unwrap_or(0);
            let bytes = mine.iter().map(|r| r.body_bytes).max().unwrap_or(0);
            format!(
                "replay {:<10} fetched {fetched} of {} resources, {:.1} of {:.1} kB, {misses} misses",
                p.name(),
                spec.site.resources.len(),
                bytes as f64 / 1e3,
                spec.site.total_bytes() as f64 / 1e3,
            )
        })
        .collect()
}

/// A p-value as the table prints it: three decimals, "<0.001" below, n/a
/// when there is none.
fn p_value(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 0.001 => "<0.001".into(),
        p => or_na(p, |p| format!("{p:.3}")),
    }
}

fn has_interval(ci: [f64; 2]) -> bool {
    ci.iter().all(|v| v.is_finite())
}

fn ms(v: f64) -> String {
    format!("{v:.0}")
}

/// "lo{sep}hi", or "n/a" when there is no interval.
fn interval(ci: [f64; 2], fmt: impl Fn(f64) -> String, sep: &str) -> String {
    if has_interval(ci) {
        format!("{}{sep}{}", fmt(ci[0]), fmt(ci[1]))
    } else {
        "n/a".into()
    }
}

/// What compare prints for a person, each block one `println!`: the report,
/// each PLT difference taken apart (`--explain`), then where the baseline's
/// settings differ and the judgement.
pub fn blocks(
    compared: &crate::compare::Compared,
    spec: &ProbeSpec,
    probes: &[ProbeRecord],
    explain: bool,
) -> Vec<String> {
    let mut blocks = vec![report(spec, probes, &compared.summary, compared.metric).join("\n")];
    if explain {
        let groups = verdict::explain::groups(probes, &spec.protocols);
        blocks.push(verdict::text::explain::lines(&groups).join("\n"));
    }
    if let Some(j) = &compared.judged {
        if let Some(s) = &compared.settings {
            blocks.push(s.lines.join("\n"));
        }
        blocks.push(j.lines().join("\n"));
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::summarize_probes;
    use proto::Protocol;

    #[test]
    fn no_interval_prints_na_not_nan() {
        assert_eq!(interval([f64::NAN, f64::NAN], ms, " – "), "n/a");
        assert_eq!(interval([1.0, 2.4], ms, " – "), "1 – 2");
        assert_eq!(or_na(f64::NAN, ms), "n/a");
        assert_eq!(or_na(f64::INFINITY, ms), "n/a");
        assert_eq!(or_na(12.3, ms), "12");
    }

    /// A probe of `protocol`: loaded in `plt` ms, or failed with `error`.
    fn probe(protocol: Protocol, plt: f64, error: Option<&str>) -> ProbeRecord {
        let mut p = ProbeRecord::failed(protocol, 0, String::new());
        p.error = error.map(str::to_string);
        if error.is_none() {
            (p.plt_ms, p.tow_ms, p.bytes_down, p.bytes_up, p.connections) =
                (plt, plt - 10.0, 250_000, 20_000, 2);
        }
        p
    }

    fn lines(probes: &[ProbeRecord]) -> Vec<String> {
        let protocols = [Protocol::Https, Protocol::H2];
        table(&summarize_probes(&protocols, probes), Metric::Plt)
    }

    fn row<'a>(lines: &'a [String], protocol: &str) -> &'a str {
        lines
            .iter()
            .find(|l| l.starts_with(&format!("{protocol} ")))
            .unwrap()
    }

    /// The header is as wide as the rows (it was one column wider, and its
    /// last title overflowed its column).
    #[test]
    fn the_header_lines_up_with_the_rows() {
        let out = lines(&[
            probe(Protocol::Https, 1000.0, None),
            probe(Protocol::H2, 900.0, None),
            probe(Protocol::Https, 1100.0, None),
            probe(Protocol::H2, 950.0, None),
        ]);
        let width = |l: &str| l.chars().count();
        let header = &out[0];
        for name in ["https", "h2"] {
            assert_eq!(
                width(row(&out, name)),
                width(header),
                "{header}\n{}",
                row(&out, name)
            );
        }
    }

    #[test]
    fn a_protocol_whose_every_probe_failed_reads_na_and_all_failed() {
        let out = lines(&[
            probe(Protocol::Https, 1000.0, None),
            probe(
                Protocol::H2,
                0.0,
                Some("h2: stream 3 reset: REFUSED_STREAM"),
            ),
            probe(Protocol::Https, 1100.0, None),
            probe(
                Protocol::H2,
                0.0,
                Some("h2: stream 5 reset: REFUSED_STREAM"),
            ),
        ]);
        let h2 = row(&out, "h2");
        assert!(
            h2.ends_with("n/a  (all 2 failed: h2: stream 3 reset: REFUSED_STREAM)"),
            "{h2}"
        );
        // n/a for every figure: PLT median, mean, CI, ToW, kB down, up, conns, gain, p.
        assert_eq!(h2.matches("n/a").count(), 9, "{h2}");
        assert!(!h2.contains("+100") && !h2.contains('%'), "{h2}");
        let https = row(&out, "https");
        assert!(
            https.contains("1050 ms") && https.contains("baseline"),
            "{https}"
        );
        assert!(!https.contains("failed"), "{https}");
        assert!(out.iter().any(|l| l.contains("loaded nothing")), "{out:#?}");
        for l in &out {
            assert!(!l.contains("-0") && !l.contains("NaN"), "{l}");
        }
    }

    #[test]
    fn over_a_baseline_that_never_loaded_no_protocol_has_a_gain() {
        let out = lines(&[
            probe(Protocol::Https, 0.0, Some("connect: timed out")),
            probe(Protocol::H2, 900.0, None),
            probe(Protocol::Https, 0.0, Some("connect: refused")),
            probe(Protocol::H2, 950.0, None),
        ]);
        let https = row(&out, "https");
        assert!(
            https.ends_with("baseline       -  (all 2 failed: connect: timed out)"),
            "{https}"
        );
        let h2 = row(&out, "h2");
        // Its own figures stand; its gain is n/a, and nothing failed.
        assert!(h2.contains("925 ms") && h2.contains("250.0"), "{h2}");
        assert!(h2.trim_end().ends_with("n/a") && !h2.contains('%'), "{h2}");
        assert!(
            out.iter()
                .any(|l| l.contains("the baseline, https, loaded nothing")),
            "{out:#?}"
        );
        for l in &out {
            assert!(!l.contains("-0") && !l.contains("NaN"), "{l}");
        }
    }

    /// FCP and LCP columns only when some probe painted (Chromium's): the
    /// model's table is as it was; a protocol without paints reads n/a.
    #[test]
    fn paint_columns_only_when_some_probe_painted() {
        let plain = lines(&[
            probe(Protocol::Https, 1000.0, None),
            probe(Protocol::H2, 900.0, None),
        ]);
        assert!(!plain[0].contains("FCP") && !plain.iter().any(|l| l.contains("LCP")));
        let painted = |protocol, plt: f64, fcp: f64, lcp: Option<f64>| ProbeRecord {
            paint: Some(results::Paint {
                ttfb_ms: Some(50.0),
                fcp_ms: Some(fcp),
                lcp_ms: lcp,
                lcp_element: lcp.map(|_| "p \"a b\"".into()),
                lcp_size: lcp.map(|_| 1000.0),
                ..Default::default()
            }),
            ..probe(protocol, plt, None)
        };
        let probes = [
            painted(Protocol::Https, 1000.0, 400.0, Some(600.0)),
            painted(Protocol::Https, 1100.0, 420.0, Some(640.0)),
            painted(Protocol::H2, 900.0, 300.0, None),
        ];
        let out = lines(&probes);
        assert!(out[0].contains("  FCP mean   LCP mean "), "{}", out[0]);
        let https = row(&out, "https");
        assert!(https.contains("    410 ms     620 ms "), "{https}");
        let h2 = row(&out, "h2");
        assert!(h2.contains("     300 ms        n/a "), "{h2}");
        for name in ["https", "h2"] {
            assert_eq!(row(&out, name).chars().count(), out[0].chars().count());
        }
        assert!(out.iter().any(|l| l.starts_with("FCP, LCP: ")), "{out:#?}");
        assert!(!out.iter().any(|l| l.contains("SI")), "{out:#?}");
        // The rest of the row is as without paints.
        let unpainted = lines(&probes.map(|p| ProbeRecord { paint: None, ..p }));
        assert_eq!(
            row(&out, "h2").replace("     300 ms        n/a", ""),
            row(&unpainted, "h2")
        );
    }

    /// Speed Index's column after LCP's only when some probe had one.
    #[test]
    fn speed_index_column_only_when_some_probe_has_one() {
        let painted = |protocol, plt: f64, si: Option<f64>| ProbeRecord {
            paint: Some(results::Paint {
                fcp_ms: Some(300.0),
                lcp_ms: Some(310.0),
                speed_index_ms: si,
                visually_complete_ms: si.map(|s| s + 100.0),
                ..Default::default()
            }),
            ..probe(protocol, plt, None)
        };
        let out = lines(&[
            painted(Protocol::Https, 1000.0, Some(350.0)),
            painted(Protocol::Https, 1000.0, Some(370.0)),
            painted(Protocol::H2, 900.0, None),
        ]);
        assert!(
            out[0].contains("  FCP mean   LCP mean    SI mean "),
            "{}",
            out[0]
        );
        assert!(row(&out, "https").contains("  310 ms     360 ms "));
        assert!(row(&out, "h2").contains("  310 ms        n/a "));
        for name in ["https", "h2"] {
            assert_eq!(row(&out, name).chars().count(), out[0].chars().count());
        }
        assert!(
            out.iter().any(|l| l.starts_with("SI: Speed Index")),
            "{out:#?}"
        );
    }

    #[test]
    fn some_failed_probes_keep_the_figures_and_count_beside_them() {
        let out = lines(&[
            probe(Protocol::Https, 1000.0, None),
            probe(Protocol::H2, 800.0, None),
            probe(Protocol::Https, 1000.0, None),
            probe(Protocol::H2, 0.0, Some("h2: GOAWAY")),
            probe(Protocol::Https, 1000.0, None),
            probe(Protocol::H2, 800.0, None),
        ]);
        let h2 = row(&out, "h2");
        assert!(
            h2.contains("+20.0% [") && h2.ends_with("  (1 failed)"),
            "{h2}"
        );
        assert!(h2.contains("800 ms") && !h2.contains("all"), "{h2}");
        // 800, 800 against 1000 x 3, each group tied within (ranks 1.5 and
        // 4): of the C(5, 3) = 10 splits of those ranks only the observed
        // one is as far from the middle: p = 0.1, no evidence from so few.
        assert!(h2.contains(" 0.100  (1 failed)"), "{h2}");
    }
}
