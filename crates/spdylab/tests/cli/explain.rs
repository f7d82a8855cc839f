//! `spdylab explain` and `compare --explain` (issue 34) on real testbeds:
//! cases whose mechanism is known by construction show it in the measured
//! components, the components of a difference add up to it, and a file or
//! directory without explanations is exit 2 naming it. No timing is asserted
//! but bounds the mechanism sets (an RTT saved is at least an RTT).

use crate::common::{fails, run_json, TempDir};
use serde_json::Value;

/// `compare ARGS --out FILE`, then `explain FILE --json`: the first group.
fn explained(dir: &TempDir, args: &[&str]) -> Value {
    let out = dir.0.join("compare.json");
    let out = out.to_str().unwrap();
    let mut all = vec![
        "compare", "--reps", "2", "--warmup", "0", "--json", "--out", out,
    ];
    all.extend_from_slice(args);
    run_json(&all);
    let doc = run_json(&["explain", out, "--json"]);
    assert_eq!(doc["schema"], 1, "{doc}");
    doc["groups"][0].clone()
}

/// The difference's components by name, ms.
fn deltas(diff: &Value) -> Vec<(String, f64)> {
    diff["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["component"].as_str().unwrap().to_string(),
                c["delta_ms"]["mean"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// The components add up to the measured difference (the residual is
/// rounding), and the component that moved most.
fn largest(diff: &Value) -> (String, f64) {
    let d = deltas(diff);
    let sum: f64 = d.iter().map(|(_, v)| v).sum();
    let plt = diff["plt_ms"]["mean"].as_f64().unwrap();
    assert!((sum - plt).abs() < 1.0, "Σ {sum} vs {plt}: {diff}");
    assert!(diff["residual_ms"].as_f64().unwrap().abs() < 1.0, "{diff}");
    d.into_iter()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .unwrap()
}

fn component(protocol: &Value, name: &str) -> f64 {
    protocol["mean"][format!("{name}_ms")]
        .as_f64()
        .unwrap_or_else(|| panic!("no {name}: {protocol}"))
}

/// h2 held to one stream by the server waits a round per request: the
/// request component is what it loses to https.
#[test]
fn one_stream_per_connection_costs_request_rounds() {
    let dir = TempDir::new("explain-streams");
    let g = explained(
        &dir,
        &[
            "--site",
            "youtube",
            "--protocols",
            "https,h2",
            "--rtt",
            "150ms",
            "--rate",
            "1mbit",
            "--max-streams",
            "1",
        ],
    );
    let (name, delta) = largest(&g["differences"][0]);
    assert_eq!((name.as_str(), delta > 0.0), ("request", true), "{g}");
}

/// h3's one handshake round against TCP + TLS 1.3's two, at 490 ms: setup
/// time on the critical path falls by at least one round trip.
#[test]
fn quic_saves_a_handshake_round() {
    let dir = TempDir::new("explain-quic");
    let g = explained(
        &dir,
        &[
            "--site",
            "youtube",
            "--protocols",
            "h2,h3",
            "--rtt",
            "490ms",
            "--rate",
            "100mbit",
        ],
    );
    let setup = deltas(&g["differences"][0])
        .into_iter()
        .find(|(n, _)| n == "setup")
        .unwrap()
        .1;
    assert!(setup <= -490.0, "setup {setup} ms: {g}");
    largest(&g["differences"][0]);
}

/// 3 % loss: both protocols spend time recovering lost segments, and the
/// components still add up.
#[test]
fn loss_shows_as_loss_recovery() {
    let dir = TempDir::new("explain-loss");
    let g = explained(
        &dir,
        &[
            "--site",
            "youtube",
            "--protocols",
            "https,h2",
            "--rtt",
            "150ms",
            "--rate",
            "1mbit",
            "--loss",
            "3%",
        ],
    );
    for p in g["protocols"].as_array().unwrap() {
        assert!(component(p, "loss_recovery") > 0.0, "{p}");
    }
    largest(&g["differences"][0]);
}

/// A campaign directory explains per point; paths without explanations are
/// exit 2 naming the path.
#[test]
fn campaigns_and_bad_paths() {
    let dir = TempDir::new("explain-paths");
    let exp = dir.0.join("exp.toml");
    std::fs::write(
        &exp,
        "name = \"x\"\nsites = [\"icons\"]\nprotocols = [\"https\", \"h2\"]\nreps = 2\n\n[link]\nrtt = [\"20ms\", \"80ms\"]\n",
    )
    .unwrap();
    let out = dir.0.join("out");
    run_json(&[
        "sweep",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    let doc = run_json(&["explain", out.to_str().unwrap(), "--json"]);
    let groups = doc["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{doc}");
    for g in groups {
        assert!(g["point"].as_str().unwrap().contains("rtt="), "{g}");
        largest(&g["differences"][0]);
    }
    let empty = dir.0.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    fails(&["explain", empty.to_str().unwrap()], 2, "empty");
    let old = dir.0.join("old.json");
    std::fs::write(&old, "{\"probes\": []}").unwrap();
    fails(
        &["explain", old.to_str().unwrap()],
        2,
        "no probe here has an explanation",
    );
    fails(
        &["explain", "/nonexistent/x.json"],
        2,
        "/nonexistent/x.json",
    );
}
