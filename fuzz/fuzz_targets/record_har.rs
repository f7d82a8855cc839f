//! libFuzzer target: what `spdylab record` makes of what Chromium sends
//! (issue 36: a recorded page's events and bodies are outside bytes). The
//! input before the first 0xff byte is DevTools events, one JSON message
//! (`{"method": …, "params": …}`) per NUL-ended piece, given to a
//! `Recorder`; what follows is the response body Chromium hands back for
//! every request the HAR keeps (after a byte that says base64 when odd). The HAR
//! it writes (`Recorder::har`) is then read back as `spdylab import` reads
//! it. Never a panic; the HAR is JSON whose entries the summary counts, and
//! importing it fails with one line or makes a site.
#![no_main]

use browser::{Body, Recorder};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::collections::HashMap;

fuzz_target!(|data: &[u8]| {
    let (events, body) = match data.iter().position(|b| *b == 0xff) {
        Some(i) => (&data[..i], Some(&data[i + 1..])),
        None => (data, None),
    };
    let mut rec = Recorder::new();
    for msg in events.split(|b| *b == 0) {
        let Ok(v) = serde_json::from_slice::<Value>(msg) else {
            continue;
        };
        if let Some(method) = v.get("method").and_then(Value::as_str) {
            rec.on_event(method, v.get("params").unwrap_or(&Value::Null));
        }
    }
    let mut bodies = HashMap::new();
    if let Some(b) = body {
        let (base64, text) = match b.split_first() {
            Some((f, rest)) => (f % 2 == 1, rest),
            None => (false, b),
        };
        for id in rec.body_ids() {
            bodies.insert(
                id,
                Body {
                    text: String::from_utf8_lossy(text).into_owned(),
                    base64,
                },
            );
        }
    }
    let (har, summary) = rec.har(&bodies, "fuzz");
    let entries = har["log"]["entries"].as_array().map_or(0, Vec::len);
    assert_eq!(entries, summary.entries);
    let bytes = serde_json::to_vec(&har).unwrap();
    if let Err(e) = site::har::import("record", &bytes) {
        assert!(!e.0.is_empty() && !e.0.contains('\n'), "{:?}", e.0);
    }
});
