//! The report whole: groups, summary.csv, the headline and the page, from
//! fixtures of probes.

use crate::csv::summary_csv;
use crate::rows::headline;
use crate::sections::render;
use crate::{aggregate, loss, Options};
use results::experiment::{self, point_key};
use results::{Experiment, ProbeRecord};
use std::path::Path;

/// The page of a campaign whose directory holds no HAR and no calibration.
fn page_without_hars(
    exp: &Experiment,
    probes: &[ProbeRecord],
    rows: &[crate::Row],
    headline: &[String],
) -> String {
    let opts = Options { waterfall: None };
    render(
        Path::new("/nonexistent"),
        exp,
        probes,
        rows,
        &[],
        headline,
        &opts,
    )
}

#[test]
fn a_loss_sweeps_report_has_the_loss_section() {
    let (exp, probes) = loss::tests::fixture();
    let rows = aggregate(&exp, &probes);
    let headline = headline(&exp, &rows);
    let page = page_without_hars(&exp, &probes, &rows, &headline);
    assert!(page.contains(r#"<h2 id="loss-youtube">youtube: protocols under loss</h2>"#));
    assert!(page.contains("h3 over h2: +19.9 %"), "the trend sentence");
    assert!(page.contains("<table class=\"loss\">"));
    // The section's plot counts among the page's plots, once.
    assert_eq!(page.matches("gain of mean PLT against loss").count(), 1);
    // The rest of the report is still there.
    assert!(page.contains(r#"id="table""#));
}

/// An RTT sweep of https and h2, two repetitions: at 20ms every h2 probe
/// failed, at 50ms every https probe (the baseline), at 150ms one h2 probe.
fn failures_fixture() -> (Experiment, Vec<ProbeRecord>) {
    let exp = experiment::parse(
        "fail.toml",
        "name = \"f\"\nsites = [\"youtube\"]\nprotocols = [\"https\", \"h2\"]\nreps = 2\n[link]\nrtt = [\"20ms\", \"50ms\", \"150ms\"]\nrate = \"1mbit\"\n",
    )
    .unwrap();
    let mut probes = Vec::new();
    for point in exp.points() {
        for rep in 0..2 {
            for proto in ["https", "h2"] {
                let error = match (point["rtt"].as_str(), proto, rep) {
                    ("20ms", "h2", _) => Some(format!("h2: stream {} refused", 2 * rep + 3)),
                    ("50ms", "https", _) => Some("connect: timed out".to_string()),
                    ("150ms", "h2", 1) => Some("h2: GOAWAY".to_string()),
                    _ => None,
                };
                let plt = if proto == "h2" {
                    800.0 + rep as f64 * 10.0
                } else {
                    1000.0
                };
                let line = serde_json::json!({
                    "trial": format!("{} protocol={proto} rep={rep}", point_key(&point)),
                    "point": point,
                    "protocol": proto,
                    "rep": rep,
                    "plt_ms": if error.is_some() { 0.0 } else { plt },
                    "tow_ms": if error.is_some() { 0.0 } else { plt - 100.0 },
                    "bytes_down": if error.is_some() { 0 } else { 250_000 },
                    "connections": if error.is_some() { 0 } else { 2 },
                    "error": error,
                });
                probes.push(serde_json::from_value(line).unwrap());
            }
        }
    }
    (exp, probes)
}

#[test]
fn a_group_that_loaded_nothing_has_no_figures_and_no_gain() {
    let (exp, probes) = failures_fixture();
    let rows = aggregate(&exp, &probes);
    let at = |rtt: &str, proto: &str| {
        rows.iter()
            .find(|r| r.point["rtt"] == rtt && r.protocol == proto)
            .unwrap()
    };
    // Every h2 probe failed: no gain (it was +100 %, over a mean of -0 ms).
    let h2 = at("20ms", "h2");
    assert_eq!(
        (h2.n, h2.failed, h2.gain, h2.plt_gain, h2.tow_gain),
        (0, 2, None, None, None)
    );
    assert_eq!((h2.bytes_down, h2.connections), (None, None));
    assert_eq!(h2.first_error.as_deref(), Some("h2: stream 3 refused"));
    // The baseline failed: it has no gain over itself, and h2 none over it.
    assert_eq!(at("50ms", "https").gain, None);
    assert_eq!(at("50ms", "h2").gain, None);
    assert_eq!(at("50ms", "h2").plt.mean, 805.0);
    // One h2 probe failed: the other's figures and gain stand.
    assert_eq!(at("150ms", "h2").gain, Some(20.0));
    assert_eq!(at("20ms", "https").gain, Some(0.0));

    let csv = summary_csv(&exp, &rows);
    assert!(
        !loss::tests::negative_zero(&csv) && !csv.contains("NaN"),
        "{csv}"
    );
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let cell = |rtt: &str, proto: &str, column: &str| -> String {
        let i = header.iter().position(|c| *c == column).unwrap();
        let line = csv
            .lines()
            .find(|l| {
                l.starts_with(&format!("youtube,{rtt},")) && l.contains(&format!(",{proto},"))
            })
            .unwrap();
        line.split(',').nth(i).unwrap().to_string()
    };
    for column in [
        "gain_pct",
        "tow_gain_pct",
        "plt_gain_pct",
        "plt_mean_ms",
        "bytes_down",
        "connect_ms",
    ] {
        assert_eq!(cell("20ms", "h2", column), "", "{column}\n{csv}");
    }
    assert_eq!(cell("50ms", "h2", "gain_pct"), "", "{csv}");
    assert_eq!(cell("50ms", "https", "gain_pct"), "", "{csv}");
    assert_eq!(cell("50ms", "h2", "plt_mean_ms"), "805.000", "{csv}");
    assert_eq!(cell("150ms", "h2", "gain_pct"), "20.000", "{csv}");

    let headline = headline(&exp, &rows);
    assert_eq!(
        headline[0],
        "youtube: h2 over https: mean PLT gain +20.0 % over 1 point(s) (from +20.0 to +20.0)"
    );
    let page = page_without_hars(&exp, &probes, &rows, &headline);
    let table = &page[page.find(r#"<h2 id="table">"#).unwrap()..];
    assert!(
        table.contains("<td>h2</td><td>0</td><td>all 2 failed: h2: stream 3 refused</td><td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td><td>n/a</td></tr>"),
        "{table}"
    );
    assert!(
        table.contains(
            "<td>https</td><td>0</td><td>all 2 failed: connect: timed out</td><td>n/a</td>"
        ),
        "{table}"
    );
    assert!(
        table.contains("<td>h2</td><td>1</td><td>1</td><td>800</td>"),
        "{table}"
    );
    assert!(
        table.contains("n/a gain: the protocol or the baseline loaded nothing"),
        "{table}"
    );
    assert!(
        !loss::tests::negative_zero(&page),
        "-0 in the page: {table}"
    );
    for bad in ["NaN", "+100"] {
        assert!(!page.contains(bad), "{bad} in the page: {table}");
    }
}

#[test]
fn a_protocol_that_never_loaded_is_said_so_in_the_headline() {
    let (exp, mut probes) = failures_fixture();
    for p in probes
        .iter_mut()
        .filter(|p| p.protocol == results::Protocol::H2)
    {
        p.error = Some("h2: refused".into());
    }
    let rows = aggregate(&exp, &probes);
    assert!(rows
        .iter()
        .all(|r| r.gain.is_none() || r.protocol == "https"));
    assert_eq!(
        headline(&exp, &rows),
        ["youtube: h2 over https: n/a (no point where both loaded)"]
    );
}

/// A sweep whose headline is LCP (docs/examples/profiles.toml's kind) draws
/// LCP against the axis and its CDF, with PLT beside each; with no
/// references, no caption speaks of diamonds or the paper's numbers.
#[test]
fn an_lcp_sweep_plots_lcp_and_plt_beside_it_and_says_only_what_is_drawn() {
    let exp = experiment::parse(
        "lcp.toml",
        "name = \"l\"\nmetric = \"lcp\"\nsites = [\"youtube\"]\nprotocols = [\"https\", \"h2\"]\nreps = 2\n[link]\nrtt = [\"20ms\", \"150ms\"]\nrate = \"1mbit\"\n",
    )
    .unwrap();
    let mut probes = Vec::new();
    for point in exp.points() {
        for rep in 0..2 {
            for (proto, plt, lcp) in [("https", 1000.0, 700.0), ("h2", 900.0, 600.0)] {
                let line = serde_json::json!({
                    "trial": format!("{} protocol={proto} rep={rep}", point_key(&point)),
                    "point": point,
                    "protocol": proto,
                    "rep": rep,
                    "plt_ms": plt + rep as f64,
                    "tow_ms": plt - 100.0,
                    "paint": {"fcp_ms": lcp - 200.0, "lcp_ms": lcp + rep as f64},
                });
                probes.push(serde_json::from_value(line).unwrap());
            }
        }
    }
    let rows = aggregate(&exp, &probes);
    let page = page_without_hars(&exp, &probes, &rows, &headline(&exp, &rows));
    for drawn in [
        "youtube: LCP against rtt",
        "youtube: PLT against rtt",
        "youtube: CDF of LCP",
        "youtube: CDF of PLT",
        "youtube: LCP and PLT distribution",
    ] {
        assert!(page.contains(drawn), "no {drawn:?}");
    }
    assert!(
        !page.contains("diamonds"),
        "a caption speaks of marks not drawn"
    );
    assert!(!page.contains("paper's numbers"));
    // 600 ms is h2's mean LCP (600 and 601): the LCP plot draws LCP.
    assert!(page.contains("mean LCP (ms)"));
}
