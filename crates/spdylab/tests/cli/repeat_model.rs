//! `compare --view both` with the model and the built-in server (issue 38):
//! each probe's repeat view (h2, h3 and SPDY/3.1), after its first view's
//! connections closed, takes the cache (fewer bytes down, 304 for the
//! no-cache document), resumes TLS and sends its request before the
//! handshake ends — in QUIC 0-RTT on h3, in TLS 1.3 early data on h2 and
//! SPDY with `--early-data on` (off by default, as in stock Chromium) —
//! which the server accepts (one handshake round trip saved, none in
//! the first view); the link sees its connection open. No timed
//! assertions: counts, bytes, and a time on wire no shorter than the
//! link's round trip.

use crate::common::{self, probes, run_json};

#[test]
fn repeat_view_caches_resumes_and_sends_0rtt_on_h3_and_early_data_on_h2() {
    if !common::is_root() {
        return common::cannot_run("the testbed's namespaces need root");
    }
    let v = run_json(&[
        "compare",
        "--site",
        "youtube",
        "--protocols",
        "h2,h3,spdy3",
        "--rtt",
        "40ms",
        "--rate",
        "8mbit",
        "--view",
        "both",
        "--early-data",
        "on",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    let all = probes(&v);
    let n = |p: &serde_json::Value, k: &str| p[k].as_u64().unwrap_or(0);
    let of = |proto: &str, view: &str| -> serde_json::Value {
        all.iter()
            .find(|p| p["protocol"] == proto && p["view"].as_str().unwrap_or("first") == view)
            .unwrap_or_else(|| panic!("no {proto} {view} probe: {v}"))
            .clone()
    };
    for proto in ["h2", "h3", "spdy3"] {
        let (first, repeat) = (of(proto, "first"), of(proto, "repeat"));
        assert!(
            first["error"].is_null() && repeat["error"].is_null(),
            "{first} {repeat}"
        );
        assert!(
            n(&repeat, "bytes_down") * 4 < n(&first, "bytes_down"),
            "{proto}: repeat {} vs first {} bytes down",
            n(&repeat, "bytes_down"),
            n(&first, "bytes_down")
        );
        assert!(n(&repeat, "tls_resumed") >= 1, "{repeat}");
        assert_eq!(n(&first, "tls_resumed"), 0, "{first}");
        assert!(n(&repeat, "cache_hits") > 0, "{repeat}");
        assert_eq!(n(&repeat, "not_modified"), 1, "the document: {repeat}");
        // The link saw the repeat view's one connection open (a resuming
        // QUIC client may clear its Initial's fixed bit, RFC 9287), and its
        // time on wire spans at least a round trip: nothing comes back sooner.
        assert_eq!(n(&repeat, "syns"), 1, "{repeat}");
        // Loaded from the cache before its first frame, it still has an LCP.
        assert!(repeat["paint"]["lcp_ms"].is_number(), "{repeat}");
        let tow = repeat["tow_ms"].as_f64().unwrap_or(0.0);
        assert!(
            tow >= 40.0,
            "{proto} repeat: time on wire {tow} ms < the RTT"
        );
    }
    for proto in ["h2", "h3", "spdy3"] {
        let (first, repeat) = (of(proto, "first"), of(proto, "repeat"));
        assert_eq!(n(&repeat, "zero_rtt_sent"), 1, "{repeat}");
        assert_eq!(n(&repeat, "zero_rtt_accepted"), 1, "{repeat}");
        assert!(n(&repeat, "handshake_rtts_saved") >= 1, "{repeat}");
        assert_eq!(n(&first, "zero_rtt_sent"), 0, "{first}");
        assert_eq!(n(&first, "handshake_rtts_saved"), 0, "{first}");
    }
    // `early_data`: of those sent, the ones over TCP (TLS 1.3 early data).
    assert_eq!(n(&of("h2", "repeat"), "early_data"), 1);
    assert_eq!(n(&of("h3", "repeat"), "early_data"), 0);
    assert_eq!(n(&of("spdy3", "repeat"), "early_data"), 1);
    // The summary: a row per protocol and view.
    let rows: Vec<String> = v["summary"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["protocol"].as_str().unwrap(),
                r["view"].as_str().unwrap_or("first")
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            "h2 first",
            "h2 repeat",
            "h3 first",
            "h3 repeat",
            "spdy3 first",
            "spdy3 repeat"
        ]
    );
}

/// Without `--early-data on` neither client sends TLS 1.3 early data over
/// TCP, as stock Chromium does not (its EnableTLS13EarlyData feature is off
/// by default): h2's repeat view resumes its TLS session and sends its
/// requests after the handshake; h3's repeat still sends 0-RTT.
#[test]
fn early_data_over_tcp_is_off_unless_asked_as_in_stock_chromium() {
    if !common::is_root() {
        return common::cannot_run("the testbed's namespaces need root");
    }
    let v = run_json(&[
        "compare",
        "--site",
        "youtube",
        "--protocols",
        "h2,h3",
        "--rtt",
        "40ms",
        "--rate",
        "8mbit",
        "--view",
        "repeat",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    let all = probes(&v);
    let n = |p: &serde_json::Value, k: &str| p[k].as_u64().unwrap_or(0);
    let of = |proto: &str| {
        all.iter()
            .find(|p| p["protocol"] == proto)
            .cloned()
            .unwrap()
    };
    let (h2, h3) = (of("h2"), of("h3"));
    assert!(n(&h2, "tls_resumed") >= 1, "{h2}");
    assert_eq!(n(&h2, "early_data"), 0, "{h2}");
    assert_eq!(n(&h2, "zero_rtt_sent"), 0, "{h2}");
    assert_eq!(n(&h3, "zero_rtt_sent"), 1, "{h3}");
    assert_eq!(n(&h3, "early_data"), 0, "{h3}");
}

/// A bad view is one line naming the flag, exit 2.
#[test]
fn a_bad_view_is_refused() {
    let o = common::spdylab(&["compare", "--site", "youtube", "--view", "second"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--view"), "{err}");
}

/// `--tcp-fastopen on`: the first view's connection fetches the server's
/// cookie, so the repeat view's connection carries its ClientHello in the
/// SYN (counted at the link) and its first byte comes a round trip sooner
/// than without: three round trips (SYN, TLS, request) become two. The knob
/// is refused where a peer would ignore it (Chromium, the real servers).
#[test]
fn tcp_fast_open_sends_the_repeat_views_client_hello_in_the_syn() {
    if !common::is_root() {
        return common::cannot_run("the testbed's namespaces need root");
    }
    let rtt = 200.0;
    let load = |fast_open: &str| {
        let v = run_json(&[
            "compare",
            "--site",
            "icons",
            "--protocols",
            "h2",
            "--rtt",
            "200ms",
            "--view",
            "both",
            "--tcp-fastopen",
            fast_open,
            "--browser-cost",
            "none",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--json",
        ]);
        let view = |name: &str| {
            probes(&v)
                .iter()
                .find(|p| p["view"].as_str().unwrap_or("first") == name)
                .unwrap_or_else(|| panic!("no {name} view: {v}"))
                .clone()
        };
        (view("first"), view("repeat"))
    };
    let with_data = |p: &serde_json::Value| p["syns_with_data"].as_u64().unwrap_or(0);
    let ttfb = |p: &serde_json::Value| p["paint"]["ttfb_ms"].as_f64().unwrap();
    let (first, repeat) = load("on");
    assert!(
        first["error"].is_null() && repeat["error"].is_null(),
        "{first} {repeat}"
    );
    assert_eq!(with_data(&first), 0, "no cookie yet: {first}");
    assert_eq!(
        with_data(&repeat),
        repeat["syns"].as_u64().unwrap(),
        "{repeat}"
    );
    assert!(with_data(&repeat) >= 1, "{repeat}");
    assert!(
        ttfb(&repeat) < 2.5 * rtt,
        "TTFB {} with Fast Open",
        ttfb(&repeat)
    );
    let (_, repeat) = load("off");
    assert_eq!(with_data(&repeat), 0, "{repeat}");
    assert!(ttfb(&repeat) >= 3.0 * rtt, "TTFB {} without", ttfb(&repeat));
    for (flag, value, why) in [
        (
            "--client",
            "chromium",
            "Chromium does not use TCP Fast Open",
        ),
        ("--server", "nginx", "do not turn TCP Fast Open on"),
    ] {
        common::fails(
            &[
                "compare",
                "--site",
                "icons",
                "--protocols",
                "h2",
                flag,
                value,
                "--tcp-fastopen",
                "on",
            ],
            2,
            why,
        );
    }
}
