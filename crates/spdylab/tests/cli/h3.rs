//! h3 end to end on a real testbed: `spdylab compare` loads a site over
//! QUIC from the built-in server with the model, one QUIC connection per
//! server address (seen in the HAR and, from Initial packets, in the link's
//! log), every resource byte for byte, HAR 1.2 "HTTP/3" entries whose phases
//! add up, and page load times that respect the physical bounds of one
//! handshake round trip; h3 with TLS 1.2 is refused before any testbed.

use crate::common;

use crate::common::{connections_per_host, entries, fails, hars, probes, run_json, TempDir};
use std::collections::HashSet;

#[test]
fn h3_loads_every_resource_over_one_quic_connection_per_address() {
    let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let depth = (0..site.resources.len())
        .map(|i| site.depth(i))
        .max()
        .unwrap() as f64;
    let body_bits = site.total_bytes() as f64 * 8.0;
    let tmp = TempDir::new("h3har");
    let dir = tmp.join("har");
    let v = run_json(&[
        "compare",
        "--site",
        "youtube",
        "--protocols",
        "h2,h3",
        "--rtt",
        "100ms",
        "--rate",
        "8mbit",
        "--shards",
        "2",
        // One session per server address, as the assertions below count.
        "--pool",
        "per-address",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
        "--har-dir",
        dir.to_str().unwrap(),
    ]);
    let rtt = 100.0;
    for p in probes(&v) {
        assert!(p["error"].is_null(), "{p}");
        assert_eq!(
            p["resources"].as_u64().unwrap() as usize,
            site.resources.len()
        );
        let (plt, tow) = (p["plt_ms"].as_f64().unwrap(), p["tow_ms"].as_f64().unwrap());
        if p["protocol"] == "h3" {
            // QUIC's handshake is one round trip (TLS 1.3 inside it).
            let bytes_bound = 2.0 * rtt + body_bits / 8e6 * 1e3;
            let chain_bound = (1.0 + depth + 1.0) * rtt;
            assert!(plt >= bytes_bound, "h3: PLT {plt} < {bytes_bound}");
            assert!(plt >= chain_bound, "h3: PLT {plt} < {chain_bound}");
        }
        assert!(tow > 0.0 && tow <= plt, "ToW {tow}, PLT {plt}: {p}");
    }
    let files = hars(&dir);
    assert_eq!(files.len(), 2);
    for (name, har) in &files {
        assert_eq!(entries(har).len(), site.resources.len(), "{name}");
        let per_host = connections_per_host(har);
        let all: HashSet<&String> = per_host.values().flatten().collect();
        // Two server addresses: one multiplexed connection to each.
        assert_eq!(all.len(), 2, "{name}");
        let probe = probes(&v)
            .iter()
            .find(|p| name.contains(&format!("-{}-", p["protocol"].as_str().unwrap())))
            .unwrap();
        // SYNs for h2, QUIC Initials (distinct client ports) for h3.
        assert_eq!(probe["syns"].as_u64().unwrap(), 2, "{name}: {probe}");
        for e in entries(har) {
            let want = if name.contains("-h3-") {
                "HTTP/3"
            } else {
                "HTTP/2"
            };
            assert_eq!(e["response"]["httpVersion"], want, "{name}");
            assert_eq!(e["response"]["status"], 200, "{name}");
            let t = &e["timings"];
            let sum: f64 = ["blocked", "dns", "connect", "send", "wait", "receive"]
                .iter()
                .map(|k| t[k].as_f64().unwrap().max(0.0))
                .sum();
            assert!(
                (sum - e["time"].as_f64().unwrap()).abs() <= 1.0,
                "{name}: {e}"
            );
            // QUIC's handshake is TLS's: ssl is all of connect.
            if name.contains("-h3-") && t["connect"].as_f64().unwrap() >= 0.0 {
                let (ssl, connect) = (t["ssl"].as_f64().unwrap(), t["connect"].as_f64().unwrap());
                assert!((ssl - connect).abs() <= 1.0, "{name}: {e}");
                assert!(t["connect"].as_f64().unwrap() >= rtt, "{name}: {e}");
            }
        }
    }
}

#[test]
fn h3_with_tls_1_2_is_refused_with_the_reason() {
    fails(
        &[
            "compare",
            "--site",
            "youtube",
            "--protocols",
            "h2,h3",
            "--tls",
            "1.2",
        ],
        2,
        "h3 runs TLS 1.3 inside QUIC",
    );
    youtube_h3_refused(&["--server", "nginx"], "nginx has no HTTP/3");
}

/// aioquic, an independent HTTP/3 implementation, fetches every resource of
/// every built-in site from `spdylab serve`'s h3 (UDP on the TLS port), one
/// connection per host, trusting only the generated CA: byte for byte.
#[test]
fn aioquic_fetches_every_resource_byte_for_byte() {
    let tmp = TempDir::new("aioquic");
    let ca = tmp.join("ca.pem");
    for name in site::BUILTIN {
        let site = site::builtin(name, site::DEFAULT_SEED).unwrap();
        let server = common::serve(&[
            "--ca",
            ca.to_str().unwrap(),
            "--site",
            name,
            "--proto",
            "https,h2,h3",
        ]);
        let out = tmp.join(name);
        std::fs::create_dir_all(&out).unwrap();
        let plan: Vec<(usize, &str, &str)> = site
            .resources
            .iter()
            .enumerate()
            .map(|(i, r)| (i, r.host.as_str(), r.path.as_str()))
            .collect();
        let plan_file = tmp.join(format!("{name}.json"));
        std::fs::write(&plan_file, serde_json::to_vec(&plan).unwrap()).unwrap();
        let o = std::process::Command::new("/usr/bin/python3")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/aioquic_fetch.py"
            ))
            .arg(&ca)
            .arg(server.https_port().to_string())
            .arg(&out)
            .arg(&plan_file)
            .output()
            .expect("python3 runs (pip install aioquic)");
        assert!(
            o.status.success(),
            "aioquic: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got: Vec<(usize, String, String)> = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(got.len(), site.resources.len(), "{name}");
        for (i, status, alpn) in got {
            assert_eq!(
                (status.as_str(), alpn.as_str()),
                ("200", "h3"),
                "{name} #{i}"
            );
            let body = std::fs::read(out.join(i.to_string())).unwrap();
            assert!(
                body == site.body(i),
                "{name}: {} differs",
                site.resources[i].path
            );
        }
    }
}

/// Our model client fetches a whole site from a real h3 server: caddy (Debian's
/// 2.6.2, h3 on UDP 443 from the generated Caddyfile), one QUIC connection.
#[test]
fn the_model_loads_a_site_from_caddy_over_h3() {
    let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let v = run_json(&[
        "compare",
        "--server",
        "caddy",
        "--site",
        "youtube",
        "--protocols",
        "h3",
        "--rtt",
        "20ms",
        "--pool",
        "per-address",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    let p = &probes(&v)[0];
    assert!(p["error"].is_null(), "{p}");
    assert_eq!(
        p["resources"].as_u64().unwrap() as usize,
        site.resources.len()
    );
    assert_eq!(p["syns"].as_u64().unwrap(), 1, "{p}");
}

/// `--quic-ack-frequency N`: the built-in server's ACK_FREQUENCY reaches
/// the model's quinn client, which then acknowledges every Nth of the
/// page's packets (counted at the link) instead of its own pattern,
/// Chromium's (every 2nd for the first 100, then every 10th or a quarter
/// of the minimum RTT); the knob is refused where it would do nothing
/// (Chromium, caddy) before any testbed.
#[test]
fn the_server_asks_the_model_to_acknowledge_less_often() {
    let up = |every: &str| {
        let v = run_json(&testkit::cli::one_quick_rep(
            &["compare", "--site", "youtube", "--protocols", "h3"],
            &["--quic-ack-frequency", every, "--json"],
        ));
        let p = &probes(&v)[0];
        assert!(p["error"].is_null(), "{p}");
        (
            p["packets_down"].as_u64().unwrap(),
            p["packets_up"].as_u64().unwrap(),
        )
    };
    let (down_2, up_2) = up("2");
    let (down_10, up_10) = up("10");
    let (down_own, up_own) = up("default");
    // Every 2nd packet against every 10th: the page's ~300 packets down
    // take less than half as many up. The client's own pattern is every
    // 2nd for the first 100 packets of a connection, then every 10th.
    assert!(
        [down_2, down_10, down_own].iter().all(|&d| d > 100),
        "{down_2} {down_10} {down_own}"
    );
    assert!(
        up_10 * 2 < up_2,
        "up {up_10} (every 10th) vs {up_2} (every 2nd)"
    );
    assert!(
        up_10 < up_own && up_own < up_2,
        "up {up_own} (its own) not between {up_10} (every 10th) and {up_2} (every 2nd)"
    );
    for (flag, value, why) in [
        (
            "--client",
            "chromium",
            "Chromium does not take ACK_FREQUENCY",
        ),
        (
            "--server",
            "caddy",
            "quic-go's, which does not send ACK_FREQUENCY",
        ),
    ] {
        youtube_h3_refused(&[flag, value, "--quic-ack-frequency", "10"], why);
    }
}

/// `--quic-hystart on`: the built-in server's Cubic leaves its first slow
/// start when the round trip grows, before the queue overflows. A 2 MB
/// object at 50 ms / 10 Mbit/s behind 256 packets: quinn's Cubic as
/// published doubles its window until the queue drops ~430 packets; with
/// HyStart++ 50–65 were dropped (docs/knobs.md). Refused with caddy, and
/// with a QUIC congestion control other than Cubic.
#[test]
fn hystart_leaves_slow_start_before_the_queue_overflows() {
    let drops = |hystart: &str| {
        let v = run_json(&[
            "compare",
            "--site",
            "objects-1x2MB",
            "--protocols",
            "h3",
            "--rtt",
            "50ms",
            "--rate",
            "10mbit",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--quic-hystart",
            hystart,
            "--json",
        ]);
        let p = &probes(&v)[0];
        assert!(p["error"].is_null(), "{p}");
        p["drops_queue"].as_u64().unwrap()
    };
    let (off, on) = (drops("off"), drops("on"));
    // Slow start's overshoot is most of a window: hundreds of packets.
    assert!(off > 200, "{off}");
    assert!(on * 2 < off, "{on} drops with HyStart++, {off} without");
    youtube_h3_refused(&["--server", "caddy", "--quic-hystart", "on"], "quic-go's");
    youtube_h3_refused(
        &["--quic-cc", "bbr", "--quic-hystart", "on"],
        "--quic-hystart on: HyStart++ is in quinn's Cubic here",
    );
}

/// `compare --site youtube --protocols h3 EXTRA` is exit 2 saying `why`.
fn youtube_h3_refused(extra: &[&str], why: &str) {
    let head = ["compare", "--site", "youtube", "--protocols", "h3"];
    fails(&[&head[..], extra].concat(), 2, why);
}
