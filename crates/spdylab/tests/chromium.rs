//! `--client chromium`: headless Chromium in the testbed's client namespace
//! loads every resource of a site over http, https and h2 (the recorder fails a
//! probe whose responses came over another protocol than asked); what it cannot
//! speak is refused up front; `crosscheck` pairs it with the model; and no
//! Chromium process outlives the run.

use std::process::Command;

fn spdylab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_spdylab"))
        .args(args)
        .output()
        .unwrap()
}

fn chromium_processes() -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim() == "chromium")
        })
        .count()
}

#[test]
fn chromium_loads_every_resource_over_the_protocol_asked() {
    let before = chromium_processes();
    let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let out = spdylab(&[
        "compare",
        "--site",
        "youtube",
        "--client",
        "chromium",
        "--protocols",
        "http,https,h2",
        "--rtt",
        "20ms",
        "--rate",
        "20mbit",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let probes = v["probes"].as_array().unwrap();
    assert_eq!(probes.len(), 3);
    for p in probes {
        assert!(p["error"].is_null(), "{p}");
        assert_eq!(
            p["resources"].as_u64().unwrap() as usize,
            site.resources.len(),
            "{p}"
        );
        // Every byte of the page crossed the link (plus headers and TLS).
        assert!(
            p["bytes_down"].as_u64().unwrap() as usize > site.total_bytes(),
            "{p}"
        );
        let plt = p["plt_ms"].as_f64().unwrap();
        assert!(plt >= 20.0 && plt < 120_000.0, "{p}");
    }
    assert_eq!(
        chromium_processes(),
        before,
        "Chromium is gone with its probe"
    );
}

#[test]
fn what_chromium_cannot_speak_is_refused_and_crosscheck_pairs_both_clients() {
    for (protocol, why) in [
        ("spdy3", "SPDY"),
        ("h2c", "h2c"),
        ("http-pipelined", "pipelining"),
    ] {
        let out = spdylab(&[
            "compare",
            "--site",
            "twitter",
            "--client",
            "chromium",
            "--protocols",
            protocol,
        ]);
        assert_eq!(out.status.code(), Some(2), "{protocol}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--client chromium") && err.contains(why),
            "{err}"
        );
    }
    let out = spdylab(&[
        "crosscheck",
        "--sites",
        "twitter",
        "--protocols",
        "https",
        "--rtt",
        "20ms",
        "--rate",
        "20mbit",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["model_resources"], r["chromium_resources"], "{r}");
    assert!(r["ratio"].as_f64().unwrap() > 0.0, "{r}");
    assert!(v["mape_pct"].as_f64().unwrap().is_finite(), "{v}");
}
