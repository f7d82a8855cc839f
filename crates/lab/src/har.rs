//! HAR 1.2 output (one file per probe), as Chrome's DevTools and
//! chrome-har-capturer write it: one page, its entries with the seven phases.

use client::PageResult;
use serde_json::{json, Value};
use std::time::{Duration, SystemTime};

/// ISO 8601 in UTC with milliseconds (the HAR's dates).
pub use site::har::iso8601;

/// The HAR document of one page load that began at `started`.
pub fn har(result: &PageResult, started: SystemTime, title: &str) -> Value {
    let scheme = if result.protocol.tls() {
        "https"
    } else {
        "http"
    };
    let version = result.protocol.http_version();
    let entries: Vec<Value> = result
        .entries
        .iter()
        .map(|e| {
            let t = &e.timings;
            json!({
                "pageref": "page_1",
                "startedDateTime": iso8601(started + Duration::from_secs_f64(e.started_ms / 1e3)),
                "time": e.time_ms,
                "request": {
                    "method": e.method,
                    "url": format!("{scheme}://{}{}", e.host, e.path),
                    "httpVersion": version,
                    "cookies": [], "headers": [], "queryString": [],
                    "headersSize": -1, "bodySize": e.request_body_bytes
                },
                "response": {
                    "status": e.status, "statusText": "", "httpVersion": version,
                    "cookies": [], "headers": [{"name": "content-type", "value": e.content_type}],
                    "content": {"size": e.body_bytes, "mimeType": e.content_type},
                    "redirectURL": "", "headersSize": -1, "bodySize": e.body_bytes
                },
                "cache": {},
                "timings": {
                    "blocked": t.blocked, "dns": t.dns, "connect": t.connect, "ssl": t.ssl,
                    "send": t.send, "wait": t.wait, "receive": t.receive
                },
                "connection": e.connection.to_string(),
                "_startedMs": e.started_ms,
                "_protocol": result.protocol.name()
            })
        })
        .collect();
    json!({
        "log": {
            "version": "1.2",
            "creator": {"name": "spdylab", "version": env!("CARGO_PKG_VERSION")},
            "pages": [{
                "startedDateTime": iso8601(started),
                "id": "page_1",
                "title": title,
                "pageTimings": {"onContentLoad": -1, "onLoad": result.plt_ms}
            }],
            "entries": entries
        }
    })
}
