//! `spdylab explain` and `compare --explain` (issue 34) on real testbeds:
//! cases whose mechanism is known by construction show it in the measured
//! components, the components of a difference add up to it, and a file or
//! directory without explanations is exit 2 naming it. No timing is asserted
//! but bounds the mechanism sets (an RTT saved is at least an RTT).

use crate::common::{fails, ok, probes, run_json, spdylab, TempDir};
use serde_json::Value;

/// `compare ARGS --out FILE` (3 repetitions), then `explain FILE`, whose
/// lines are printed (`--nocapture` shows them), and `explain FILE --json`:
/// its first group.
fn explained(dir: &TempDir, args: &[&str]) -> Value {
    let out = dir.0.join("compare.json");
    let out = out.to_str().unwrap();
    let mut all = vec![
        "compare", "--reps", "3", "--warmup", "0", "--json", "--out", out,
    ];
    all.extend_from_slice(args);
    let doc = run_json(&all);
    // The flows explained are the probe's own connections: its SYNs and
    // QUIC Initials, none of the last probe's (a QUIC close sent after its
    // window once passed for a connection of the next page).
    for p in probes(&doc) {
        let flows = p["explain"]["connections"].as_array().unwrap();
        assert_eq!(flows.len() as u64, p["syns"].as_u64().unwrap(), "{p}");
        let opened = |c: &&Value| c["opened_by"] == "syn" || c["opened_by"] == "initial";
        assert!(flows.iter().all(|c| opened(&c)), "{p}");
    }
    let text = spdylab(&["explain", out]);
    ok(&text);
    println!("{}", String::from_utf8_lossy(&text.stdout));
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
/// time on the critical path falls by at least one round trip, and it is
/// the largest component once window and request are taken together. Those
/// two split the same rounds after the handshakes by whether a response is
/// arriving or only asked for, which turns on the server's stream scheduling
/// (h3's responses arrive interleaved, h2's mostly one after another): h3
/// moves about 1.5 s from request to window at this point while the pair
/// nets +0.2 s (QUIC's slower window growth), so either alone can outweigh
/// setup (docs/explain.md, "Overlap").
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
    let diff = &g["differences"][0];
    largest(diff);
    let mut d = deltas(diff);
    let of = |d: &[(String, f64)], name: &str| d.iter().find(|(n, _)| n == name).unwrap().1;
    let setup = of(&d, "setup");
    assert!(setup <= -490.0, "setup {setup} ms: {g}");
    let rounds = of(&d, "window") + of(&d, "request");
    d.retain(|(n, _)| n != "window" && n != "request");
    d.push(("window + request".into(), rounds));
    let top = d
        .iter()
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .unwrap();
    assert_eq!(top.0, "setup", "{d:?}: {g}");
}

/// 3 % loss: every probe of both protocols spends time recovering lost
/// segments, each protocol at least a round trip on average, and the
/// components still add up. Which component is largest is not asserted: with
/// --seed fixed the drops still shift with timing, and h2's loss recovery
/// ranged 77–2 213 ms a probe, below its request time (streams held behind
/// the one connection's repair) in some runs.
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
            "--seed",
            "1",
        ],
    );
    let text = std::fs::read_to_string(dir.0.join("compare.json")).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    for p in probes(&doc) {
        let loss = p["explain"]["components"]["loss_recovery_ms"].as_f64();
        assert!(loss.unwrap() > 0.0, "{p}");
        // Dozens of drops on h2's one connection: bytes after a hole reach
        // the client and wait there for the retransmission.
        if p["protocol"] == "h2" {
            let why = &p["explain"]["why"];
            assert!(why["hol_blocked_bytes"].as_u64().unwrap() > 0, "{why}");
            assert!(why["hol_blocked_ms"].as_f64().unwrap() > 0.0, "{why}");
        }
    }
    for p in g["protocols"].as_array().unwrap() {
        assert!(component(p, "loss_recovery") >= 150.0, "{p}");
        let hol = p["mechanisms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "hol_blocked_ms")
            .unwrap_or_else(|| panic!("no hol_blocked_ms: {p}"));
        assert!(hol["mean"].as_f64().unwrap() > 0.0, "{p}");
    }
    largest(&g["differences"][0]);
}

/// A campaign directory explains per point (means with their intervals);
/// compare --explain prints the same lines; paths without explanations are
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
        for p in g["protocols"].as_array().unwrap() {
            let [lo, hi] = [0, 1].map(|i| p["ci95"][i]["setup_ms"].as_f64().unwrap());
            let mean = component(p, "setup");
            assert!(lo <= mean && mean <= hi, "{p}");
        }
    }
    let text = spdylab(&["explain", out.to_str().unwrap()]);
    ok(&text);
    let text = String::from_utf8_lossy(&text.stdout);
    assert_eq!(text.matches("h2 vs https: ").count(), 2, "{text}");
    // Each point has its mechanism figures under the components.
    assert_eq!(text.matches("\nmechanisms ").count(), 2, "{text}");
    for col in [
        "gw-loss%",
        "rtt-infl%",
        "goodput",
        "hol-KB",
        "hol-ms",
        "peak-KB",
    ] {
        assert!(text.contains(col), "{col}: {text}");
    }
    // compare --explain prints the same lines under its table.
    let o = spdylab(&[
        "compare",
        "--site",
        "icons",
        "--protocols",
        "https,h2",
        "--rtt",
        "20ms",
        "--reps",
        "2",
        "--explain",
    ]);
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("h2 vs https: ") && text.contains("residual"),
        "{text}"
    );
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
    std::fs::write(&old, "not json").unwrap();
    fails(
        &["explain", old.to_str().unwrap()],
        2,
        "not a compare --out document",
    );
    fails(
        &["explain", "/nonexistent/x.json"],
        2,
        "/nonexistent/x.json",
    );
}

/// `--view both`: each protocol's first and repeat views are explained
/// apart, a repeat against its own first view (the cache and the saved
/// handshakes) and h3's repeat against h2's (0-RTT: fewer handshake rounds
/// on the critical path), and the components still add up.
#[test]
fn a_repeat_view_is_explained_against_its_first_view_and_h2s_repeat() {
    let dir = TempDir::new("explain-repeat");
    let out = dir.0.join("compare.json");
    let out = out.to_str().unwrap();
    run_json(&[
        "compare",
        "--site",
        "youtube",
        "--protocols",
        "h2,h3",
        "--rtt",
        "100ms",
        "--rate",
        "20mbit",
        "--view",
        "both",
        "--reps",
        "2",
        "--warmup",
        "0",
        "--json",
        "--out",
        out,
    ]);
    let doc = run_json(&["explain", out, "--json"]);
    let g = &doc["groups"][0];
    let rows: Vec<String> = g["protocols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{} {}",
                p["protocol"].as_str().unwrap(),
                p["view"].as_str().unwrap_or("first")
            )
        })
        .collect();
    assert_eq!(
        rows,
        ["h2 first", "h2 repeat", "h3 first", "h3 repeat"],
        "{g}"
    );
    let pairs: Vec<(String, String)> = g["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["a_label"].as_str().unwrap().into(),
                d["b_label"].as_str().unwrap().into(),
            )
        })
        .collect();
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        pairs,
        [
            pair("h2 repeat", "h2"),
            pair("h3", "h2"),
            pair("h3 repeat", "h3"),
            pair("h3 repeat", "h2 repeat")
        ],
        "{g}"
    );
    for d in g["differences"].as_array().unwrap() {
        largest(d);
    }
    // 0-RTT against a resumed TLS 1.3 handshake over TCP: h3's repeat has
    // fewer handshake rounds on its critical path than h2's.
    let zero_rtt = &g["differences"][3]["why"]["handshake_rounds_on_critical_path"];
    assert!(zero_rtt.as_f64().unwrap() < 0.0, "{g}");
    let text = spdylab(&["explain", out]);
    ok(&text);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("h3 repeat vs h2 repeat:"), "{text}");
}
