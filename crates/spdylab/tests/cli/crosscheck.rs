//! `crosscheck` per metric and on the answer (issue 35): the same Trials by
//! the model and Chromium give, besides the PLT agreement, each metric's
//! error percentiles, buckets and Chromium's own spread, and per pair of
//! protocols both clients' gains, the gain error and the trend along a
//! swept axis — in JSON (schema 2, null for what is not a number) and in
//! text; `--losses` takes independent losses only; `--reference` takes
//! Chromium's loads from an earlier run's output and loads the rest.

use crate::common::{fails, ok, run_json, spdylab, TempDir};

#[test]
fn crosscheck_gives_each_metric_and_the_gain_error_of_each_pair() {
    let v = run_json(&[
        "crosscheck",
        "--sites",
        "icons",
        "--protocols",
        "https,h2",
        "--rtts",
        "20ms,100ms",
        "--rate",
        "20mbit",
        "--reps",
        "2",
        "--warmup",
        "0",
        "--json",
    ]);
    assert_eq!(v["schema"], 2, "{v}");
    // Rows: their cells per metric, PLT first, and their place on the axes.
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for r in rows {
        let cells = r["metrics"].as_array().unwrap();
        let names: Vec<&str> = cells
            .iter()
            .map(|c| c["metric"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["plt", "ttfb", "fcp", "lcp", "si"], "{r}");
        assert_eq!(cells[0]["chromium"].as_array().unwrap().len(), 2, "{r}");
        assert_eq!(cells[0]["ape_pct"], r["ape_pct"], "{r}");
        assert_eq!(r["axes"]["rate_mbit"], 20.0, "{r}");
        // Each load keeps its resources' rows, both clients: every one of
        // icons' resources, found ≤ sent ≤ first byte ≤ last byte, and the
        // document first, at navigation start (the model's request leaves a
        // few ms after its first step).
        for client in ["model_loads", "chromium_loads"] {
            for load in r[client].as_array().unwrap() {
                let rows = load["requests"].as_array().unwrap();
                assert_eq!(rows.len(), 51, "{client}: {load}");
                assert_eq!(rows[0][1], "/", "{client}: {}", rows[0]);
                assert!(rows[0][4].as_f64().unwrap().abs() < 20.0, "{}", rows[0]);
                for row in rows {
                    let t: Vec<f64> = (4..8).map(|i| row[i].as_f64().unwrap()).collect();
                    assert!(t.windows(2).all(|w| w[0] <= w[1]), "{client}: {row}");
                    assert_eq!(row[9], 200, "{client}: {row}");
                }
            }
        }
    }
    let rtts: Vec<f64> = rows
        .iter()
        .map(|r| r["axes"]["rtt_ms"].as_f64().unwrap())
        .collect();
    assert_eq!(rtts, [20.0, 20.0, 100.0, 100.0]);
    // Per metric over all Trials: PLT compared in every Trial; Chromium
    // reports FCP, so its n is the model's (0 until it estimates it).
    let all: Vec<&serde_json::Value> = v["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["group"] == "all")
        .collect();
    assert_eq!(all.len(), 5, "{v}");
    let plt = all[0];
    assert_eq!(
        (plt["metric"].as_str(), plt["compared"].as_u64()),
        (Some("plt"), Some(4))
    );
    let b = &plt["buckets"];
    let counted: u64 = ["good", "ok", "bad"]
        .iter()
        .map(|k| b[k].as_u64().unwrap())
        .sum();
    assert_eq!(counted, 4, "{plt}");
    assert!(plt["ape_p50_pct"].as_f64().unwrap() <= plt["ape_p95_pct"].as_f64().unwrap());
    assert_eq!(
        plt["chromium_noise"]["trials"], 4,
        "two Chromium loads each: {plt}"
    );
    assert!(plt["chromium_noise"]["mad_p50_pct"].as_f64().unwrap() >= 0.0);
    for m in &all {
        match m["compared"].as_u64().unwrap() {
            0 => assert!(m["mape_pct"].is_null() && m["spearman"].is_null(), "{m}"),
            _ => assert!(m["mape_pct"].as_f64().unwrap() >= 0.0, "{m}"),
        }
    }
    // Gains: one pair (https>h2), 5 metrics, 2 links.
    let gains = v["gains"].as_array().unwrap();
    assert_eq!(gains.len(), 10, "{v}");
    for g in gains.iter().filter(|g| g["metric"] == "plt") {
        assert_eq!(
            (g["a"].as_str(), g["b"].as_str()),
            (Some("https"), Some("h2"))
        );
        let (m, c) = (
            g["model_gain_pct"].as_f64().unwrap(),
            g["chromium_gain_pct"].as_f64().unwrap(),
        );
        assert!(
            (g["error_pts"].as_f64().unwrap() - (m - c)).abs() < 1e-9,
            "{g}"
        );
        assert_eq!(g["chromium_ci95"].as_array().unwrap().len(), 2, "{g}");
    }
    let agreement = v["gain_agreement"].as_array().unwrap();
    let plt = agreement.iter().find(|a| a["metric"] == "plt").unwrap();
    assert_eq!(plt["compared"], 2, "{plt}");
    // RTT is swept (rate is not): one step, the same way in both or not.
    let trends = plt["trends"].as_array().unwrap();
    assert_eq!(trends.len(), 1, "{plt}");
    assert_eq!(
        (trends[0]["axis"].as_str(), trends[0]["steps"].as_u64()),
        (Some("rtt"), Some(1))
    );
    assert!(["agree", "disagree"].contains(&trends[0]["verdict"].as_str().unwrap()));
    reference_reuses_chromiums_loads_and_loads_the_rest(&v);
}

/// The output above as `--reference` of a crosscheck that adds plain http:
/// its https and h2 Trials keep Chromium's loads as they were (not loaded
/// again), http's are loaded; a reference of other repetitions is refused.
fn reference_reuses_chromiums_loads_and_loads_the_rest(before: &serde_json::Value) {
    let dir = TempDir::new("crosscheck-reference");
    std::fs::write(dir.join("before.json"), before.to_string()).unwrap();
    let reference = dir.arg("before.json");
    let args = |reps: &'static str| {
        vec![
            "crosscheck",
            "--sites",
            "icons",
            "--protocols",
            "http,https,h2",
            "--rtts",
            "20ms,100ms",
            "--rate",
            "20mbit",
            "--reps",
            reps,
            "--warmup",
            "0",
            "--reference",
            &reference,
            "--json",
        ]
    };
    let o = spdylab(&args("2"));
    ok(&o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("Chromium's loads of 4 of 6 Trials from"),
        "{err}"
    );
    let after: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(after["reference"][0].as_str(), Some(reference.as_str()));
    let key = |r: &serde_json::Value| format!("{} {}", r["link"], r["protocol"]);
    let old: std::collections::HashMap<String, &serde_json::Value> = before["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (key(r), r))
        .collect();
    let rows = after["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 6);
    for r in rows {
        let plt = &r["metrics"][0];
        match old.get(&key(r)) {
            Some(o) => {
                assert_eq!(r["chromium_reference"], true, "{r}");
                assert_eq!(plt["chromium"], o["metrics"][0]["chromium"], "{r}");
                assert_eq!(r["chromium_phases"], o["chromium_phases"], "{r}");
            }
            None => {
                assert_eq!(
                    (r["protocol"].as_str(), &r["chromium_reference"]),
                    (Some("http"), &serde_json::json!(false))
                );
                assert_eq!(plt["chromium"].as_array().unwrap().len(), 2, "loaded: {r}");
            }
        }
        assert_eq!(plt["model"].as_array().unwrap().len(), 2, "{r}");
    }
    fails(&args("3"), 2, "--reference");
    // Each row names the tree it loaded; a reference of another tree of
    // icons (its rows' fingerprint changed) is refused before any load.
    let fingerprint = rows[0]["site_fingerprint"].as_str().unwrap().to_string();
    assert_eq!(fingerprint.len(), 16, "{}", rows[0]);
    assert!(rows
        .iter()
        .all(|r| r["site_fingerprint"] == fingerprint.as_str()));
    let mut other = before.clone();
    for r in other["rows"].as_array_mut().unwrap() {
        r["site_fingerprint"] = serde_json::json!("0000000000000001");
    }
    std::fs::write(dir.join("before.json"), other.to_string()).unwrap();
    fails(&args("2"), 2, "another icons");
}

#[test]
fn crosscheck_text_has_the_metric_and_gain_tables_and_no_nan() {
    let o = spdylab(&testkit::cli::one_quick_rep(
        &["crosscheck", "--sites", "icons", "--protocols", "https,h2"],
        &[],
    ));
    ok(&o);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("NaN"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("metric ") && l.contains("good/ok/bad")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("plt ") && l.contains("2/2")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("https>h2    plt    icons")),
        "{out}"
    );
    assert!(out.contains("no axis swept"), "one link: {out}");
}

#[test]
fn losses_are_independent_losses_only() {
    let err = fails(
        &["crosscheck", "--sites", "icons", "--losses", "ge:1%,30%"],
        2,
        "--losses takes independent losses",
    );
    assert!(err.contains("--loss"), "{err}");
    fails(&["crosscheck", "--losses", "2x"], 2, "2x");
}
