//! The knobs of the studies' era on `spdylab compare`, end to end on a real
//! testbed: a 2014 Chrome's request headers cost HTTPS far more bytes up than
//! SPDY and HTTP/2, which compress them; `--tls-resume` makes the later
//! probes' handshakes resumed (and Chromium refuses it); `--cert rsa2048`
//! makes every handshake's bytes down grow.

use crate::common::{fails, probes, run_json};
use serde_json::Value;

fn compare(args: &[&str]) -> Value {
    let mut all = vec!["compare", "--site", "icons", "--json", "--warmup", "0"];
    all.extend_from_slice(args);
    run_json(&all)
}

/// Mean of `key` over the probes of `protocol`.
fn mean(v: &Value, protocol: &str, key: &str) -> f64 {
    let xs: Vec<f64> = probes(v)
        .iter()
        .filter(|p| p["protocol"] == protocol)
        .map(|p| {
            assert!(p["error"].is_null(), "{p}");
            p[key].as_f64().unwrap_or(0.0)
        })
        .collect();
    assert!(!xs.is_empty(), "no {protocol} probe: {v}");
    xs.iter().sum::<f64>() / xs.len() as f64
}

#[test]
fn chrome_2014_headers_are_compressed_by_spdy_and_h2_only() {
    // One HTTP/1.1 connection: how many a probe opens depends on timing,
    // and each costs its handshake's bytes up, more than a header's.
    let args = [
        "--protocols",
        "https,h2,spdy3",
        "--reps",
        "1",
        "--conns-per-host",
        "1",
    ];
    let chrome = compare(&[&args[..], &["--headers", "chrome2014"]].concat());
    let minimal = compare(&[&args[..], &["--headers", "minimal"]].concat());
    let up = |v: &Value, p: &str| mean(v, p, "bytes_up");
    // 51 requests: HTTPS sends each header block whole.
    let https_more = up(&chrome, "https") - up(&minimal, "https");
    assert!(https_more > 51.0 * 150.0, "https: +{https_more} B up");
    for p in ["h2", "spdy3"] {
        assert!(
            up(&chrome, p) < 0.75 * up(&chrome, "https"),
            "{p}: {} B up, https {} B",
            up(&chrome, p),
            up(&chrome, "https")
        );
        let more = up(&chrome, p) - up(&minimal, p);
        assert!(
            more < https_more / 4.0,
            "{p}: +{more} B up for the headers, https +{https_more} B"
        );
    }
}

#[test]
fn tls_resume_resumes_the_later_probes_and_chromium_refuses_it() {
    let args = ["--protocols", "https,h2", "--reps", "2", "--tls", "1.2"];
    let resumed = compare(&[&args[..], &["--tls-resume"]].concat());
    let n = |p: &Value, k: &str| p[k].as_u64().unwrap_or(0);
    let of = |p: &str| -> Vec<Value> {
        probes(&resumed)
            .iter()
            .filter(|x| x["protocol"] == p)
            .cloned()
            .collect()
    };
    let (https, h2) = (of("https"), of("h2"));
    // The first probe's first handshake is full; every handshake of the
    // second resumes a session of the first.
    assert!(n(&https[0], "tls_resumed") < n(&https[0], "connections"));
    assert!(n(&https[1], "connections") > 0);
    // A connection opened for a request that a freed one then took (a
    // waiting request takes the connection idle last, as Chromium's pool)
    // may close at the page's end before its handshake: no byte down.
    let handshaken = |p: &Value| {
        p["explain"]["connections"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["payload_bytes_delivered_down"].as_u64().unwrap_or(0) > 0)
            .count() as u64
    };
    assert!(handshaken(&https[1]) > 0, "{}", https[1]);
    assert_eq!(
        n(&https[1], "tls_resumed"),
        handshaken(&https[1]),
        "{}",
        https[1]
    );
    assert_eq!(n(&h2[0], "tls_resumed"), 0, "{}", h2[0]);
    // Both of h2's handshakes resume: the session's, and the navigation's
    // preconnected second socket's, closed unused.
    assert_eq!(n(&h2[1], "tls_resumed"), 2, "{}", h2[1]);
    let cold = compare(&args);
    assert!(probes(&cold).iter().all(|p| n(p, "tls_resumed") == 0));
    let err = fails(
        &[
            "compare",
            "--site",
            "icons",
            "--protocols",
            "https",
            "--client",
            "chromium",
            "--tls-resume",
        ],
        2,
        "--tls-resume",
    );
    assert!(err.contains("--client chromium"), "{err}");
}

/// The server's handshake flight over a run's https probes: per probe, the
/// bytes its connections got in their first two round trips (a TLS 1.2 full
/// handshake's: the server's hello, certificates and key exchange, then its
/// Finished; no response can come before the third), the most over the
/// probes. Load only delays bytes into later round trips, never brings a
/// response's into these, so the most is the flight itself.
fn handshake_flight(v: &Value) -> f64 {
    probes(v)
        .iter()
        .filter(|p| p["protocol"] == "https")
        .map(|p| {
            let conns = p["explain"]["connections"]
                .as_array()
                .expect("explain's connections");
            conns
                .iter()
                .map(|c| {
                    let bins = c["flight_bytes_per_rtt"].as_array().expect("flights");
                    bins.iter().take(2).filter_map(Value::as_f64).sum::<f64>()
                })
                .sum::<f64>()
        })
        .fold(0.0, f64::max)
}

#[test]
fn an_rsa_chain_makes_every_handshake_longer() {
    // One connection per host: how many a page opens otherwise depends on
    // how long each handshake takes, which is what differs here.
    let args = [
        "--protocols",
        "https",
        "--reps",
        "3",
        "--tls",
        "1.2",
        "--conns-per-host",
        "1",
        // Round trips to count the handshake's flights in.
        "--rtt",
        "20ms",
    ];
    let rsa = compare(&[&args[..], &["--cert", "rsa2048"]].concat());
    let ec = compare(&[&args[..], &["--cert", "ecdsa"]].concat());
    let conns = mean(&rsa, "https", "connections");
    assert_eq!(conns, mean(&ec, "https", "connections"));
    // The chain's bytes (about 1.04 KB a handshake here: flights of 2 095
    // and 1 056 B; the server's own test checks the flight), in the
    // handshake's round trips. Not the whole payload the client got: how
    // many TLS records a response takes follows the server's timing (a
    // loaded CI machine once added 468 B to every ECDSA probe's least),
    // nor the IP bytes, which count the server's pure ACKs (+47 B and +568
    // B seen).
    let (rsa_down, ec_down) = (handshake_flight(&rsa), handshake_flight(&ec));
    assert!(
        rsa_down - ec_down > conns * 700.0,
        "RSA {rsa_down} B down, ECDSA {ec_down} B, over {conns} handshakes"
    );
}
