//! HAR 1.2 output (one file per probe), as Chrome's DevTools and
//! chrome-har-capturer write it: one page, its entries with the seven phases;
//! and beside a Chromium probe's HAR its filmstrip (`write_filmstrip`).

use client::PageResult;
use serde_json::{json, Value};
use std::io;
use std::path::{Path, PathBuf};
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
            let mut entry = json!({
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
            });
            if e.pushed {
                entry["_was_pushed"] = json!(1);
            }
            entry
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

/// Adds a probe's view and what it reused (`ProbeRecord::reuse`, the
/// repeat view's: docs/repeat-view.md) to its HAR's page (`_view`,
/// `_tlsResumed`, `_cacheHits`, `_notModified`, `_zeroRttSent`,
/// `_zeroRttAccepted`, `_handshakeRttsSaved`), and marks entries the cache
/// answered: a 304's `bodySize` is 0 (its body came from the cache).
pub fn add_view(doc: &mut Value, record: &results::ProbeRecord) {
    let r = &record.reuse;
    if let Some(page) = doc
        .pointer_mut("/log/pages/0")
        .and_then(Value::as_object_mut)
    {
        page.insert("_view".into(), json!(r.view.name()));
        page.insert("_tlsResumed".into(), json!(record.tls_resumed));
        page.insert("_cacheHits".into(), json!(r.cache_hits));
        page.insert("_notModified".into(), json!(r.not_modified));
        page.insert("_zeroRttSent".into(), json!(r.zero_rtt_sent));
        page.insert("_zeroRttAccepted".into(), json!(r.zero_rtt_accepted));
        page.insert("_handshakeRttsSaved".into(), json!(r.handshake_rtts_saved));
    }
    if let Some(entries) = doc
        .pointer_mut("/log/entries")
        .and_then(Value::as_array_mut)
    {
        for e in entries {
            if e["response"]["status"] == 304 {
                e["response"]["bodySize"] = json!(0);
            }
        }
    }
}

/// Where the filmstrip of the HAR at `har` goes: beside it, the HAR's name
/// with `.filmstrip` for `.har` (`har/0123abcd.har` → `har/0123abcd.filmstrip`).
pub fn filmstrip_dir(har: &Path) -> PathBuf {
    har.with_extension("filmstrip")
}

/// Writes the frames of `result`'s filmstrip (Chromium's; docs/visual.md)
/// beside the HAR at `har`, each as `NNNNms.jpg` (ms after the document's
/// request) in `filmstrip_dir(har)`, which is replaced whole: written under
/// another name first, then renamed. With them `progress.json`, each frame's
/// visual progress (`browser::filmstrip_progress`), for the report's curves:
/// `{"frames": [{"file": "0083ms.jpg", "ms": 83.4, "progress": 40}, …]}`
/// (none if a frame does not decode). Nothing without frames (the model).
pub fn write_filmstrip(har: &Path, result: &PageResult) -> io::Result<()> {
    let Some(frames) = result.paint.as_ref().map(|p| &p.filmstrip) else {
        return Ok(());
    };
    if frames.is_empty() {
        return Ok(());
    }
    let dir = filmstrip_dir(har);
    let tmp = har.with_extension("filmstrip.tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)?;
    let mut names = Vec::new();
    for f in frames {
        let name = format!("{:04}ms.jpg", f.ms.max(0.0).round() as u64);
        std::fs::write(tmp.join(&name), &f.jpeg)?;
        names.push(name);
    }
    let jpegs: Vec<&[u8]> = frames.iter().map(|f| f.jpeg.as_slice()).collect();
    if let Some(progress) = browser::filmstrip_progress(&jpegs) {
        let rows: Vec<Value> = frames
            .iter()
            .zip(&names)
            .zip(progress)
            .map(|((f, name), p)| json!({"file": name, "ms": f.ms, "progress": p}))
            .collect();
        std::fs::write(
            tmp.join("progress.json"),
            serde_json::to_vec(&json!({ "frames": rows }))?,
        )?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&tmp, &dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use client::{FilmFrame, Paint};

    #[test]
    fn a_pushed_entry_says_so_as_chromes_hars_did_and_no_other_does() {
        let entry = |path: &str, pushed: bool| client::Entry {
            method: "GET".into(),
            host: "a.test".into(),
            path: path.into(),
            request_body_bytes: 0,
            started_ms: 0.0,
            time_ms: 10.0,
            status: 200,
            content_type: "text/css".into(),
            body_bytes: 100,
            connection: 0,
            timings: client::Timings {
                blocked: 0.0,
                dns: -1.0,
                connect: -1.0,
                ssl: -1.0,
                send: 0.0,
                wait: 5.0,
                receive: 5.0,
            },
            pushed,
        };
        let result = PageResult {
            protocol: proto::Protocol::H2,
            plt_ms: 10.0,
            connections: 1,
            entries: vec![entry("/", false), entry("/s.css", true)],
            error: None,
            tls_resumed: 0,
            navigation_start: None,
            paint: None,
        };
        let doc = har(&result, SystemTime::UNIX_EPOCH, "t");
        let entries = doc["log"]["entries"].as_array().unwrap();
        assert!(entries[0].get("_was_pushed").is_none());
        assert_eq!(entries[1]["_was_pushed"], 1);
    }

    #[test]
    fn a_filmstrip_beside_its_har_and_none_without_frames() {
        let dir = std::env::temp_dir().join(format!("har-filmstrip-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let har = dir.join("icons-h2-001.har");
        assert_eq!(filmstrip_dir(&har), dir.join("icons-h2-001.filmstrip"));
        let mut result = PageResult {
            protocol: proto::Protocol::H2,
            plt_ms: 500.0,
            connections: 1,
            entries: Vec::new(),
            error: None,
            tls_resumed: 0,
            navigation_start: None,
            paint: None,
        };
        write_filmstrip(&har, &result).unwrap();
        result.paint = Some(Paint::default());
        write_filmstrip(&har, &result).unwrap();
        assert!(!filmstrip_dir(&har).exists());
        let frame = |ms: f64, b: u8| FilmFrame { ms, jpeg: vec![b] };
        result.paint = Some(Paint {
            filmstrip: vec![frame(83.4, 1), frame(1234.6, 2)],
            ..Paint::default()
        });
        write_filmstrip(&har, &result).unwrap();
        // Again: the directory replaced, not added to.
        write_filmstrip(&har, &result).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(filmstrip_dir(&har))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["0083ms.jpg", "1235ms.jpg"]);
        assert_eq!(
            std::fs::read(filmstrip_dir(&har).join("1235ms.jpg")).unwrap(),
            [2]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
