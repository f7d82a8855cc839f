//! HAR 1.2 output (one file per probe), as Chrome's DevTools and
//! chrome-har-capturer write it: one page, its entries with the seven phases.

use client::PageResult;
use serde_json::{json, Value};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// ISO 8601 in UTC with milliseconds, from a system time.
pub fn iso8601(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

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
                    "method": "GET",
                    "url": format!("{scheme}://{}{}", e.host, e.path),
                    "httpVersion": version,
                    "cookies": [], "headers": [], "queryString": [],
                    "headersSize": -1, "bodySize": 0
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_392_000_123);
        assert_eq!(iso8601(t), "2026-11-23T00:00:00.123Z");
    }
}
