//! Sans-I/O: DevTools `Network.*` and `Page.loadEventFired` events in, one
//! page load out (`client::PageResult`, the same shape the model produces).
//!
//! The phases follow HAR 1.2 as chrome-har-capturer computes them, without its
//! known timing bugs: `blocked` starts when the request was issued
//! (`requestWillBeSent`), not at `timing.requestTime`, so queueing for a
//! connection counts, and takes the gaps between phases, so that the phases sum
//! to the entry's time; `connect` includes `ssl` (HAR's convention, and the
//! model's); phases Chrome reports as -1 stay -1; `receive` ends at
//! `loadingFinished`, not at the last `dataReceived`; and PLT is onload
//! measured from the navigation's own request, both on Chrome's monotonic clock.

use client::{Entry, PageResult, Timings};
use proto::Protocol;
use serde_json::Value;
use std::collections::HashMap;

#[derive(Debug, Default, Clone)]
struct Request {
    url: String,
    issued: f64,
    status: u16,
    mime: String,
    protocol: String,
    connection: Option<u64>,
    timing: Option<Value>,
    body_bytes: u64,
    finished: Option<f64>,
    failed: Option<String>,
}

/// Collects one navigation's events; `finish` turns them into a load.
#[derive(Debug, Default)]
pub struct Recorder {
    requests: HashMap<String, Request>,
    order: Vec<String>,
    document: Option<String>,
    onload: Option<f64>,
}

fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(-1.0)
}

/// The protocol string DevTools reports for `p` (`response.protocol`).
pub fn devtools_protocol(p: Protocol) -> &'static str {
    match p {
        Protocol::H2 | Protocol::H2c => "h2",
        Protocol::Spdy3 => "spdy/3.1",
        Protocol::H3 => "h3",
        _ => "http/1.1",
    }
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// Feeds one event (its `method` and `params`). Unknown events are ignored.
    pub fn on_event(&mut self, method: &str, p: &Value) {
        let id = p.get("requestId").and_then(Value::as_str).unwrap_or("");
        match method {
            "Network.requestWillBeSent" => {
                let url = p["request"]["url"].as_str().unwrap_or("").to_string();
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return;
                }
                if self.document.is_none() && p["type"].as_str() == Some("Document") {
                    self.document = Some(id.to_string());
                }
                // A redirect re-sends the same id: the request began at its first hop.
                let issued = match self.requests.get(id) {
                    Some(r) if p.get("redirectResponse").is_some() => r.issued,
                    _ => num(p, "timestamp"),
                };
                if !self.requests.contains_key(id) {
                    self.order.push(id.to_string());
                }
                self.requests.insert(
                    id.to_string(),
                    Request {
                        url,
                        issued,
                        ..Default::default()
                    },
                );
            }
            "Network.responseReceived" => {
                if let Some(r) = self.requests.get_mut(id) {
                    let resp = &p["response"];
                    r.status = resp["status"].as_u64().unwrap_or(0) as u16;
                    r.mime = resp["mimeType"].as_str().unwrap_or("").to_string();
                    r.protocol = resp["protocol"].as_str().unwrap_or("").to_string();
                    r.connection = resp["connectionId"].as_u64();
                    r.timing = resp.get("timing").cloned();
                }
            }
            "Network.dataReceived" => {
                if let Some(r) = self.requests.get_mut(id) {
                    r.body_bytes += p["dataLength"].as_u64().unwrap_or(0);
                }
            }
            "Network.loadingFinished" => {
                if let Some(r) = self.requests.get_mut(id) {
                    r.finished = Some(num(p, "timestamp"));
                }
            }
            "Network.loadingFailed" => {
                if let Some(r) = self.requests.get_mut(id) {
                    r.failed = Some(p["errorText"].as_str().unwrap_or("failed").to_string());
                    r.finished = Some(num(p, "timestamp"));
                }
            }
            // Only the page's own onload (not about:blank's, before it).
            "Page.loadEventFired" if self.onload.is_none() && self.document.is_some() => {
                self.onload = Some(num(p, "timestamp"));
            }
            _ => {}
        }
    }

    /// Whether onload has fired.
    pub fn loaded(&self) -> bool {
        self.onload.is_some()
    }

    /// The page load as recorded: entries for the requests that ended by
    /// onload, PLT = onload − the document's request. An error when onload
    /// did not fire, a request failed, or a response came over another
    /// protocol than `asked` (never measured as something else).
    pub fn finish(&self, asked: Protocol) -> PageResult {
        let mut errors = Vec::new();
        let start = self
            .document
            .as_ref()
            .and_then(|d| self.requests.get(d))
            .map(|r| r.issued);
        let plt_ms = match (start, self.onload) {
            (Some(s), Some(l)) => (l - s) * 1e3,
            _ => {
                errors.push("the page did not fire onload".to_string());
                0.0
            }
        };
        let want = devtools_protocol(asked);
        let mut connections: Vec<u64> = Vec::new();
        let mut entries = Vec::new();
        let mut upgraded: Vec<&str> = Vec::new();
        for id in &self.order {
            let r = &self.requests[id];
            if let Some(e) = &r.failed {
                errors.push(format!("{}: {e}", r.url));
                continue;
            }
            let Some(done) = r.finished else { continue };
            if self.onload.is_some_and(|l| done > l) {
                continue;
            }
            // Chromium's HSTS preload list (twitter.com, youtube.com, their
            // CDNs …) turns an http:// request into https:// by an internal
            // redirect: that load is HTTPS, never counted as plain HTTP.
            if !asked.tls() && r.url.starts_with("https://") {
                upgraded.push(r.url.as_str());
            }
            if r.protocol != want {
                errors.push(format!(
                    "{} came over {:?}, not {want} as asked for {asked}",
                    r.url, r.protocol
                ));
            }
            if let Some(c) = r.connection {
                if !connections.contains(&c) {
                    connections.push(c);
                }
            }
            let (host, path) =
                site::content::split_url(&r.url).unwrap_or_else(|| (String::new(), r.url.clone()));
            let timings = phases(r, done);
            entries.push(Entry {
                host,
                path,
                started_ms: start.map_or(0.0, |s| (r.issued - s) * 1e3),
                time_ms: ((done - r.issued) * 1e3).max(0.0),
                status: r.status,
                content_type: r.mime.clone(),
                body_bytes: r.body_bytes,
                connection: connections
                    .iter()
                    .position(|c| Some(*c) == r.connection)
                    .unwrap_or(0),
                timings,
            });
        }
        if let Some(first) = upgraded.first() {
            errors.push(format!(
                "{} request(s) fetched over TLS, not plain {asked} as asked, from {first} on \
                 (Chromium's HSTS preload list upgrades these hosts)",
                upgraded.len()
            ));
        }
        PageResult {
            protocol: asked,
            plt_ms,
            connections: connections.len(),
            entries,
            error: (!errors.is_empty()).then(|| errors.join("; ")),
            tls_resumed: 0,
        }
    }
}

/// HAR phases of one request from its issue time, Chrome's ResourceTiming and its end.
fn phases(r: &Request, done: f64) -> Timings {
    let Some(t) = &r.timing else {
        // No timing (e.g. served from memory): all of it counts as receive.
        return Timings {
            blocked: 0.0,
            dns: -1.0,
            connect: -1.0,
            ssl: -1.0,
            send: 0.0,
            wait: 0.0,
            receive: ((done - r.issued) * 1e3).max(0.0),
        };
    };
    // Offsets in ms from requestTime (s); -1 where a phase did not happen.
    let base = num(t, "requestTime") * 1e3;
    let at = |k: &str| num(t, k);
    let span = |a: &str, b: &str| {
        if at(a) >= 0.0 && at(b) >= 0.0 {
            at(b) - at(a)
        } else {
            -1.0
        }
    };
    let mut timings = Timings {
        blocked: 0.0,
        dns: span("dnsStart", "dnsEnd"),
        connect: span("connectStart", "connectEnd"),
        ssl: span("sslStart", "sslEnd"),
        send: span("sendStart", "sendEnd").max(0.0),
        wait: (at("receiveHeadersEnd") - at("sendEnd")).max(0.0),
        receive: (done * 1e3 - (base + at("receiveHeadersEnd"))).max(0.0),
    };
    // Blocked: everything else between the request's issue and its end (the
    // wait for a connection, and gaps between phases), so the phases sum to the time.
    let total = (done - r.issued) * 1e3;
    timings.blocked = (total
        - timings.dns.max(0.0)
        - timings.connect.max(0.0)
        - timings.send
        - timings.wait
        - timings.receive)
        .max(0.0);
    timings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn page(protocol: &str) -> Recorder {
        let mut r = Recorder::new();
        r.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "1", "type": "Document", "timestamp": 100.0,
                    "request": {"url": "https://a.test/"}}),
        );
        r.on_event(
            "Network.responseReceived",
            &json!({"requestId": "1", "response": {"status": 200, "mimeType": "text/html",
                "protocol": protocol, "connectionId": 7,
                "timing": {"requestTime": 100.010, "dnsStart": -1, "dnsEnd": -1,
                    "connectStart": 0.0, "connectEnd": 300.0, "sslStart": 150.0, "sslEnd": 300.0,
                    "sendStart": 300.5, "sendEnd": 301.0, "receiveHeadersEnd": 451.0}}}),
        );
        r.on_event(
            "Network.dataReceived",
            &json!({"requestId": "1", "dataLength": 1000}),
        );
        r.on_event(
            "Network.dataReceived",
            &json!({"requestId": "1", "dataLength": 234}),
        );
        r.on_event(
            "Network.loadingFinished",
            &json!({"requestId": "1", "timestamp": 100.5}),
        );
        r.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "2", "type": "Image", "timestamp": 100.47,
                    "request": {"url": "https://b.test/i.png"}}),
        );
        r.on_event(
            "Network.responseReceived",
            &json!({"requestId": "2", "response": {"status": 200, "mimeType": "image/png",
                "protocol": protocol, "connectionId": 7,
                "timing": {"requestTime": 100.48, "dnsStart": -1, "dnsEnd": -1,
                    "connectStart": -1, "connectEnd": -1, "sslStart": -1, "sslEnd": -1,
                    "sendStart": 1.0, "sendEnd": 1.5, "receiveHeadersEnd": 151.5}}}),
        );
        r.on_event(
            "Network.loadingFinished",
            &json!({"requestId": "2", "timestamp": 100.7}),
        );
        r.on_event("Page.loadEventFired", &json!({"timestamp": 100.75}));
        // After onload: not part of the page.
        r.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "3", "type": "Other", "timestamp": 100.8,
                    "request": {"url": "https://a.test/favicon.ico"}}),
        );
        r.on_event(
            "Network.loadingFinished",
            &json!({"requestId": "3", "timestamp": 100.9}),
        );
        r
    }

    #[test]
    fn phases_plt_and_connections_from_events() {
        let r = page("h2");
        assert!(r.loaded());
        let load = r.finish(Protocol::H2);
        assert_eq!(load.error, None);
        assert!((load.plt_ms - 750.0).abs() < 1e-6, "{}", load.plt_ms);
        assert_eq!(load.entries.len(), 2);
        assert_eq!(load.connections, 1);
        let doc = &load.entries[0];
        assert_eq!((doc.host.as_str(), doc.path.as_str()), ("a.test", "/"));
        assert_eq!(doc.body_bytes, 1234);
        let t = &doc.timings;
        assert!((t.blocked - 10.5).abs() < 1e-6, "{t:?}");
        assert_eq!(t.dns, -1.0);
        assert!((t.connect - 300.0).abs() < 1e-6);
        assert!((t.ssl - 150.0).abs() < 1e-6);
        assert!((t.send - 0.5).abs() < 1e-6);
        assert!((t.wait - 150.0).abs() < 1e-6);
        assert!((t.receive - 39.0).abs() < 1e-6, "{t:?}");
        assert!((doc.time_ms - 500.0).abs() < 1e-6, "{}", doc.time_ms);
        // The image waited 11 ms for its request to go out (queueing counts as blocked).
        let img = &load.entries[1];
        assert!((img.started_ms - 470.0).abs() < 1e-6);
        assert!(
            (img.timings.blocked - 11.0).abs() < 1e-6,
            "{:?}",
            img.timings
        );
        assert_eq!(img.timings.connect, -1.0);
        assert!(
            (img.timings.receive - 68.5).abs() < 1e-6,
            "{:?}",
            img.timings
        );
    }

    #[test]
    fn another_protocol_than_asked_is_an_error() {
        let load = page("http/1.1").finish(Protocol::H2);
        let e = load.error.unwrap();
        assert!(e.contains("not h2 as asked"), "{e}");
    }

    #[test]
    fn an_hsts_upgrade_of_plain_http_is_an_error() {
        let mut r = Recorder::new();
        r.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "1", "type": "Document", "timestamp": 1.0,
                    "request": {"url": "http://twitter.com/"}}),
        );
        // Chromium's internal redirect (307) to https://, the same request id.
        r.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "1", "type": "Document", "timestamp": 1.001,
                    "redirectResponse": {"status": 307},
                    "request": {"url": "https://twitter.com/"}}),
        );
        r.on_event(
            "Network.responseReceived",
            &json!({"requestId": "1", "response": {"status": 200, "mimeType": "text/html",
                "protocol": "http/1.1", "connectionId": 1}}),
        );
        r.on_event(
            "Network.loadingFinished",
            &json!({"requestId": "1", "timestamp": 1.2}),
        );
        r.on_event("Page.loadEventFired", &json!({"timestamp": 1.3}));
        let e = r.finish(Protocol::Http).error.unwrap();
        assert!(e.contains("HSTS"), "{e}");
        // The same load asked as https is fine.
        assert_eq!(r.finish(Protocol::Https).error, None);
    }

    #[test]
    fn an_onload_before_the_document_is_not_the_page_s() {
        let mut r = Recorder::new();
        r.on_event("Page.loadEventFired", &json!({"timestamp": 0.5}));
        assert!(!r.loaded());
        let r = page("h2");
        assert!((r.finish(Protocol::H2).plt_ms - 750.0).abs() < 1e-6);
    }

    #[test]
    fn no_onload_is_an_error() {
        let mut r = Recorder::new();
        r.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "1", "type": "Document", "timestamp": 1.0,
                    "request": {"url": "http://a.test/"}}),
        );
        assert!(!r.loaded());
        assert!(r.finish(Protocol::Http).error.unwrap().contains("onload"));
    }
}
