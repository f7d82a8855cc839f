//! Property tests with arbitrary inputs for what Chromium sends over DevTools
//! (the fuzzing of issue 19): arbitrary bytes on the pipe never panic
//! `cdp::Pipe` (bad JSON is an error); arbitrary and mutated `Network.*` and
//! `Page.*` events in any order never panic the `Recorder`, and the page load
//! it makes has no more entries than requests, no negative blocked, send,
//! wait, receive or time, and an error where onload did not fire; its paints
//! (`Page.lifecycleEvent`, `PerformanceTimeline.*`) never put LCP before FCP,
//! and any `DOM.describeNode` answer describes the LCP element without a
//! panic. docs/fuzzing.md has the long
//! runs and the coverage-guided target.

use browser::cdp::Pipe;
use browser::Recorder;
use proptest::prelude::*;
use proto::Protocol;
use serde_json::{json, Value};
use std::io::Write;
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

/// Reads every event `bytes` holds through a pipe, as Chromium's would arrive.
fn read_all(bytes: &[u8]) -> (Vec<(String, Value)>, Option<std::io::Error>) {
    let (from, mut to_us) = std::io::pipe().unwrap();
    let writer = {
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            let _ = to_us.write_all(&bytes);
        })
    };
    let sink = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();
    let mut pipe = Pipe::new(OwnedFd::from(sink), OwnedFd::from(from));
    let deadline = Instant::now() + Duration::from_secs(3600);
    let mut events = Vec::new();
    let err = loop {
        match pipe.next_event(deadline) {
            Ok(Some(e)) => events.push(e),
            Ok(None) => break None,
            Err(e) => break Some(e),
        }
    };
    writer.join().unwrap();
    (events, err)
}

fn check_load(rec: &mut Recorder, requests: usize) {
    // Any answer of DOM.describeNode (here: a node of the events) describes it.
    if rec.lcp_node().is_some() {
        rec.set_lcp_element(&json!({"localName": "p", "attributes": [1, "id"],
            "children": [{"nodeType": 3, "nodeValue": "a b"}, {"nodeType": 3}]}));
        rec.set_lcp_element(&Value::Null);
    }
    for p in Protocol::ALL {
        let load = rec.finish(p);
        if let Some(paint) = &load.paint {
            if let (Some(f), Some(l)) = (paint.fcp_ms, paint.lcp_ms) {
                assert!(l >= f || l.is_nan() || f.is_nan(), "{paint:?}");
            }
            assert_eq!(paint.lcp_ms.is_some(), paint.lcp_element.is_some());
        }
        assert!(load.entries.len() <= requests);
        assert!(load.connections <= load.entries.len());
        if !rec.loaded() {
            assert!(load.error.is_some());
        }
        for e in &load.entries {
            let t = &e.timings;
            for x in [t.blocked, t.send, t.wait, t.receive, e.time_ms] {
                assert!(x >= 0.0 || x.is_nan(), "{t:?}");
            }
        }
    }
}

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
        "https?://[a-z]{1,6}\\.test/[a-z]{0,6}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map("[a-zA-Z]{1,10}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const METHODS: [&str; 9] = [
    "Network.requestWillBeSent",
    "Network.responseReceived",
    "Network.dataReceived",
    "Network.loadingFinished",
    "Network.loadingFailed",
    "Page.loadEventFired",
    "Network.other",
    "Page.lifecycleEvent",
    "PerformanceTimeline.timelineEventAdded",
];

/// An event that looks like Chromium's, with any of its fields replaced.
fn any_event() -> impl Strategy<Value = (String, Value)> {
    let num = prop_oneof![
        (0f64..1000.0).prop_map(Value::from),
        Just(json!(-1)),
        any::<f64>()
            .prop_filter("finite", |x| x.is_finite())
            .prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        Just(json!("7")),
    ];
    let timing = proptest::collection::vec(num.clone(), 10).prop_map(|v| {
        json!({"requestTime": v[0], "dnsStart": v[1], "dnsEnd": v[2],
               "connectStart": v[3], "connectEnd": v[4], "sslStart": v[5], "sslEnd": v[6],
               "sendStart": v[7], "sendEnd": v[8], "receiveHeadersEnd": v[9]})
    });
    (
        0usize..METHODS.len(),
        "[0-3]",
        num.clone(),
        prop_oneof![Just("Document"), Just("Image"), Just("Other")],
        "(https?|data|ws)://[a-c]\\.test/[a-z]{0,3}",
        (
            any::<u16>(),
            "(h2|spdy/3.1|http/1.1|)",
            any::<u64>(),
            timing,
        ),
        num,
        proptest::option::of(any_json()),
    )
        .prop_map(
            |(m, id, ts, kind, url, (status, protocol, conn, timing), len, replace)| {
                let mut p = json!({
                    "requestId": id, "timestamp": ts, "type": kind,
                    "frameId": "F", "loaderId": id, "wallTime": len,
                    "name": if conn % 2 == 0 { "firstContentfulPaint" } else { "firstPaint" },
                    "event": {"frameId": "F", "type": "largest-contentful-paint", "time": ts,
                              "lcpDetails": {"renderTime": ts, "loadTime": len, "size": len,
                                             "nodeId": conn, "url": url}},
                    "request": {"url": url},
                    "response": {"status": status, "mimeType": "text/html",
                                 "protocol": protocol, "connectionId": conn, "timing": timing},
                    "dataLength": len, "errorText": "net::ERR_FAILED",
                });
                if m == 0 && conn % 3 == 0 {
                    p["redirectResponse"] = json!({});
                }
                if let Some(v) = replace {
                    // One field (or the whole params) replaced by anything.
                    let keys = [
                        "requestId",
                        "timestamp",
                        "request",
                        "response",
                        "dataLength",
                    ];
                    match (conn % 6) as usize {
                        5 => p = v,
                        k => p[keys[k]] = v,
                    }
                }
                (METHODS[m].to_string(), p)
            },
        )
}

proptest! {
    #[test]
    fn fuzz_cdp_arbitrary_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..2000),
    ) {
        let (events, _) = read_all(&bytes);
        let mut rec = Recorder::new();
        for (m, p) in &events {
            rec.on_event(m, p);
        }
        check_load(&mut rec, events.len());
    }

    #[test]
    fn fuzz_cdp_messages_cut_and_damaged_never_panic(
        events in proptest::collection::vec(any_event(), 0..12),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
    ) {
        let mut bytes = Vec::new();
        for (m, p) in &events {
            bytes.extend(serde_json::to_vec(&json!({"method": m, "params": p})).unwrap());
            bytes.push(0);
        }
        let clean = flips.is_empty();
        for (i, x) in &flips {
            if !bytes.is_empty() {
                let n = i.index(bytes.len());
                bytes[n] ^= x;
            }
        }
        let (got, err) = read_all(&bytes);
        if clean {
            // Whole messages read back in order (as serde_json reads their
            // text: without float_roundtrip, a float may move by its last bit),
            // then the end of the pipe.
            let want: Vec<(String, Value)> = events
                .iter()
                .map(|(m, p)| (m.clone(), serde_json::from_slice(&serde_json::to_vec(p).unwrap()).unwrap()))
                .collect();
            prop_assert_eq!(&got, &want);
            prop_assert!(err.is_some_and(|e| e.kind() == std::io::ErrorKind::UnexpectedEof));
        }
    }

    #[test]
    fn fuzz_recorder_arbitrary_events_never_panic(
        events in proptest::collection::vec(any_event(), 0..24),
    ) {
        let mut rec = Recorder::new();
        for (m, p) in &events {
            rec.on_event(m, p);
        }
        check_load(&mut rec, events.len());
    }

    #[test]
    fn fuzz_recorder_any_json_never_panics(
        events in proptest::collection::vec((0usize..METHODS.len(), any_json()), 0..16),
    ) {
        let mut rec = Recorder::new();
        for (m, p) in &events {
            rec.on_event(METHODS[*m], p);
        }
        check_load(&mut rec, events.len());
    }
}
