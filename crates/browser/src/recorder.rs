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
//! What the user saw (TTFB, FCP, LCP) comes from the same navigation start:
//! see `paint`; Speed Index, visually complete and the filmstrip from the
//! screencast's frames: see `visual`.

use crate::paint::{describe_element, Paints};
use crate::visual::{filmstrip, page_frames, visual, Histogram, FILMSTRIP_MAX};
use client::{Entry, PageResult, Paint, Timings};
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
    // What a recorded HAR holds besides the phases (`har`).
    /// When this hop of a redirect chain was issued (`issued` is the chain's first).
    hop_issued: f64,
    /// Chrome's wall clock (s since the epoch) at `hop_issued`.
    wall: Option<f64>,
    method: String,
    request_headers: Vec<(String, String)>,
    post_data: Option<String>,
    initiator: Option<Value>,
    resource_type: String,
    status_text: String,
    response_headers: Vec<(String, String)>,
    remote_ip: Option<String>,
    /// Bytes on the wire for this response (headers and body), from `loadingFinished`.
    encoded_bytes: Option<u64>,
    /// Body bytes on the wire (before content decoding), from `dataReceived`.
    encoded_body: u64,
    /// Served from Chromium's HTTP cache without a request on the network
    /// (`requestServedFromCache`: the memory cache; `response.fromDiskCache`,
    /// `fromPrefetchCache`).
    from_cache: bool,
}

/// What a load took from Chromium's HTTP cache (a repeat view's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheUse {
    /// Responses served from the cache with no request sent.
    pub from_cache: usize,
    /// Responses revalidated: a conditional request answered 304 Not Modified.
    pub not_modified: usize,
    /// The body bytes those two gave from the cache (not on the wire).
    pub cached_bytes: u64,
}

/// A response body as `Network.getResponseBody` gives it.
#[derive(Debug, Clone)]
pub struct Body {
    pub text: String,
    pub base64: bool,
}

/// What a recorded HAR holds, for the user.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RecordSummary {
    /// Entries of the HAR (redirect hops and failed requests included).
    pub entries: usize,
    /// Response body bytes (decoded) of the entries.
    pub bytes: u64,
    pub bodies_recorded: usize,
    /// Responses whose body Chromium did not give (`getResponseBody` failed, or
    /// an image it could not decode): the HAR keeps their size, not their bytes.
    pub bodies_missing: usize,
    /// Entries whose `_initiator` names a URL (a parser's, or a script's stack).
    pub initiators: usize,
    pub redirects: usize,
    pub failed: usize,
    /// The protocols the responses came over, with their counts (`response.protocol`).
    pub protocols: Vec<(String, usize)>,
    /// Onload, ms after the document's request.
    pub onload_ms: f64,
    /// Requests (and WebSockets) to a host:port Chromium was not allowed to
    /// reach (`allow`): they failed before any packet.
    pub blocked: usize,
    /// Those per host:port, with their counts, in the order first seen.
    pub blocked_hosts: Vec<(String, usize)>,
    /// Their URLs, each once.
    pub blocked_urls: Vec<String>,
}

/// Collects one navigation's events; `finish` turns them into a load.
#[derive(Debug, Default)]
pub struct Recorder {
    requests: HashMap<String, Request>,
    order: Vec<String>,
    document: Option<String>,
    onload: Option<f64>,
    dom_content: Option<f64>,
    /// Redirect hops (request id, the hop with its redirect response), in order.
    hops: Vec<(String, Request)>,
    /// The document's frame and loader (DevTools ids): its paints are the page's.
    frame: Option<String>,
    loader: Option<String>,
    paints: Paints,
    /// The screencast's frames: wall-clock swap time (s) and base64 JPEG.
    frames: Vec<(f64, String)>,
    /// The screencast frames to acknowledge (`take_acks`).
    acks: Vec<i64>,
    /// Whether the last of `frames` is blank, as of how many frames
    /// (`screen_blank`).
    blank_as_of: Option<(usize, bool)>,
    /// The URLs of the page's WebSockets (`Network.webSocketCreated`).
    sockets: Vec<String>,
    /// When the page said it was done (`page_done`): how many requests it
    /// had issued by then. None: the page is done at onload.
    done_at: Option<usize>,
    /// The status each request's response had on the wire
    /// (`responseReceivedExtraInfo`): 304 for a revalidation, which the
    /// page (and `responseReceived`) sees as the cached 200.
    wire_status: HashMap<String, u16>,
}

/// How long (s) after onload, or after a later first contentful paint, a
/// screencast frame still counts: its swap comes a frame or two after the
/// paint (`visual`).
const FRAME_SLACK: f64 = 0.1;

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
            "Network.webSocketCreated" => {
                if let Some(url) = p["url"].as_str() {
                    self.sockets.push(url.to_string());
                }
            }
            "Network.requestWillBeSent" => {
                let url = p["request"]["url"].as_str().unwrap_or("").to_string();
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return;
                }
                if self.document.is_none() && p["type"].as_str() == Some("Document") {
                    self.document = Some(id.to_string());
                    self.frame = p["frameId"].as_str().map(String::from);
                    self.loader = p["loaderId"].as_str().map(String::from);
                }
                // A redirect re-sends the same id: the request began at its first hop.
                let issued = match self.requests.get(id) {
                    Some(r) if p.get("redirectResponse").is_some() => r.issued,
                    _ => num(p, "timestamp"),
                };
                if !self.requests.contains_key(id) {
                    self.order.push(id.to_string());
                }
                let now = num(p, "timestamp");
                if let (Some(prev), Some(rr)) = (self.requests.get(id), p.get("redirectResponse")) {
                    let mut hop = prev.clone();
                    fill_response(&mut hop, rr);
                    hop.finished = Some(now);
                    hop.encoded_bytes = rr["encodedDataLength"].as_u64();
                    self.hops.push((id.to_string(), hop));
                }
                let req = &p["request"];
                let mut post_data = req["postData"].as_str().map(String::from);
                if post_data.is_none() {
                    post_data = req["postDataEntries"].as_array().map(|parts| {
                        parts
                            .iter()
                            .filter_map(|e| e["bytes"].as_str())
                            .collect::<String>()
                    });
                }
                self.requests.insert(
                    id.to_string(),
                    Request {
                        url,
                        issued,
                        hop_issued: now,
                        wall: p["wallTime"].as_f64(),
                        method: req["method"].as_str().unwrap_or("GET").to_string(),
                        request_headers: header_list(&req["headers"]),
                        post_data,
                        initiator: p.get("initiator").cloned(),
                        resource_type: p["type"].as_str().unwrap_or("").to_string(),
                        ..Default::default()
                    },
                );
            }
            "Network.responseReceived" => {
                if let Some(r) = self.requests.get_mut(id) {
                    fill_response(r, &p["response"]);
                }
            }
            "Network.responseReceivedExtraInfo" => {
                if let Some(code) = p["statusCode"].as_u64() {
                    self.wire_status
                        .insert(id.to_string(), u16::try_from(code).unwrap_or(0));
                }
            }
            "Network.requestServedFromCache" => {
                if let Some(r) = self.requests.get_mut(id) {
                    r.from_cache = true;
                }
            }
            "Network.dataReceived" => {
                if let Some(r) = self.requests.get_mut(id) {
                    // Any numbers (DevTools' are u64): at most u64::MAX, not a wrap.
                    let (data, encoded) = (&p["dataLength"], &p["encodedDataLength"]);
                    r.body_bytes = r.body_bytes.saturating_add(data.as_u64().unwrap_or(0));
                    r.encoded_body = r.encoded_body.saturating_add(encoded.as_u64().unwrap_or(0));
                }
            }
            "Network.loadingFinished" => {
                if let Some(r) = self.requests.get_mut(id) {
                    r.finished = Some(num(p, "timestamp"));
                    r.encoded_bytes = p["encodedDataLength"].as_u64();
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
            "Page.domContentEventFired"
                if self.dom_content.is_none() && self.document.is_some() =>
            {
                self.dom_content = Some(num(p, "timestamp"));
            }
            "Page.lifecycleEvent" => {
                if let Some(frame) = self.frame.as_deref() {
                    self.paints.lifecycle(p, frame, self.loader.as_deref());
                }
            }
            "Page.screencastFrame" => {
                if let Some(ack) = p["sessionId"].as_i64() {
                    self.acks.push(ack);
                }
                if let (Some(t), Some(data)) =
                    (p["metadata"]["timestamp"].as_f64(), p["data"].as_str())
                {
                    self.frames.push((t, data.to_string()));
                }
            }
            "PerformanceTimeline.timelineEventAdded" => {
                if let Some(frame) = self.frame.as_deref() {
                    self.paints.timeline(p, frame);
                }
            }
            _ => {}
        }
    }

    /// The screencast frames received since the last call, to acknowledge
    /// (`Page.screencastFrameAck`): Chromium sends no more until it is.
    pub fn take_acks(&mut self) -> Vec<i64> {
        std::mem::take(&mut self.acks)
    }

    /// Whether the screencast's last frame so far is blank (`visual`'s
    /// module doc: not the page yet); false without a frame. Decodes that
    /// frame once, when asked (after onload: none of the load's CPU).
    pub fn screen_blank(&mut self) -> bool {
        use base64::Engine;
        let n = self.frames.len();
        if let Some((m, blank)) = self.blank_as_of {
            if m == n {
                return blank;
            }
        }
        let blank = self.frames.last().is_some_and(|(_, data)| {
            base64::engine::general_purpose::STANDARD
                .decode(data)
                .ok()
                .and_then(|jpeg| Histogram::of_jpeg(&jpeg))
                .is_some_and(|h| h.blank())
        });
        self.blank_as_of = Some((n, blank));
        blank
    }

    /// Whether onload has fired.
    pub fn loaded(&self) -> bool {
        self.onload.is_some()
    }

    /// Whether the page's DOMContentLoaded has fired.
    pub fn dom_content_loaded(&self) -> bool {
        self.dom_content.is_some()
    }

    /// The page said it is done (a page that declares a performance mark as
    /// its end, `site::content::DONE_MARK_META`, has set it): its load ends
    /// with the last of the requests it had issued by now to complete, or at
    /// onload if that is later — not at onload alone.
    pub fn page_done(&mut self) {
        self.done_at = Some(self.order.len());
    }

    /// When the page's load ended (monotonic s): onload, or for a page that
    /// said when it was done (`page_done`) the last completion of a request
    /// it had issued by then, if later.
    fn end(&self) -> Option<f64> {
        let onload = self.onload?;
        let Some(n) = self.done_at else {
            return Some(onload);
        };
        let last = self.order[..n.min(self.order.len())]
            .iter()
            .filter_map(|id| self.requests.get(id))
            .filter(|r| r.failed.is_none())
            .filter_map(|r| r.finished)
            .filter(|t| t.is_finite())
            .fold(onload, f64::max);
        Some(last)
    }

    /// Whether the page's first contentful paint has been reported.
    pub fn painted(&self) -> bool {
        self.paints.fcp.is_some()
    }

    /// Up to when (monotonic s) an LCP candidate counts: onload, or the first
    /// contentful paint if the page first painted after onload, and a few ms
    /// more for the two clocks (less than a frame).
    fn lcp_horizon(&self) -> Option<f64> {
        let l = self.onload?;
        Some(self.paints.fcp.map_or(l, |f| f.max(l)) + crate::paint::CLOCKS_DIFFER)
    }

    /// The page load as recorded: entries for the requests that ended by
    /// onload, PLT = onload − the document's request (for a page that said
    /// when it was done, `page_done`, its end instead of onload: `end`). An
    /// error when onload did not fire, a request failed, or a response came
    /// over another protocol than `asked` (never measured as something else).
    pub fn finish(&self, asked: Protocol) -> PageResult {
        let mut errors = Vec::new();
        let start = self
            .document
            .as_ref()
            .and_then(|d| self.requests.get(d))
            .map(|r| r.issued);
        let end = self.end();
        let plt_ms = match (start, end) {
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
            // Issued after onload (or the page's end): not the page's
            // (Chromium's favicon, which `Browser::settle_paints` blocks: a
            // failure that is none of its).
            if end.is_some_and(|l| r.issued > l) {
                continue;
            }
            if let Some(e) = &r.failed {
                // The page itself dropping an error response it got (a
                // <video> whose source answered 404 — a replay's miss, counted
                // by the server) is the page's choice, not a failed load.
                if !(r.status >= 400 && e == "net::ERR_ABORTED") {
                    errors.push(format!("{}: {e}", r.url));
                }
                continue;
            }
            let Some(done) = r.finished else { continue };
            if end.is_some_and(|l| done > l) {
                continue;
            }
            // Each redirect hop is a request and a response of its own (the
            // site's and the model's resources count it; Chromium re-sends it
            // under the same id).
            for (_, hop) in self.hops.iter().filter(|(h, _)| h == id) {
                if let Some(hop_done) = hop.finished {
                    entries.push(entry(hop, hop_done, 0, start, &mut connections));
                }
            }
            // Chromium's HSTS preload list (twitter.com, youtube.com, their
            // CDNs …) turns an http:// request into https:// by an internal
            // redirect: that load is HTTPS, never counted as plain HTTP.
            if !asked.tls() && r.url.starts_with("https://") {
                upgraded.push(r.url.as_str());
            }
            // A response from the cache came over no protocol in this load.
            if r.protocol != want && !r.from_cache {
                errors.push(format!(
                    "{} came over {:?}, not {want} as asked for {asked}",
                    r.url, r.protocol
                ));
            }
            entries.push(entry(r, done, r.body_bytes, start, &mut connections));
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
            // DevTools timestamps are CLOCK_MONOTONIC seconds. (One beyond
            // Duration's range is none: it would panic.)
            navigation_start: start
                .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
                .and_then(sys::instant_of_monotonic),
            paint: start.map(|s| self.paint(s)),
        }
    }

    /// What the page's requests (those `finish` counts: ended by the page's
    /// end, not failed) took from the HTTP cache.
    pub fn cache_use(&self) -> CacheUse {
        let end = self.end();
        let mut c = CacheUse::default();
        for (id, r) in self
            .order
            .iter()
            .filter_map(|id| Some((id, self.requests.get(id)?)))
        {
            let ended = r.finished.is_some_and(|d| end.is_none_or(|l| d <= l));
            if r.failed.is_some() || !ended || end.is_some_and(|l| r.issued > l) {
                continue;
            }
            let on_wire = self.wire_status.get(id).copied();
            let revalidated = (r.status == 304 || on_wire == Some(304)) && !r.from_cache;
            c.from_cache += usize::from(r.from_cache);
            c.not_modified += usize::from(revalidated);
            if r.from_cache || revalidated {
                c.cached_bytes = c.cached_bytes.saturating_add(r.body_bytes);
            }
        }
        c
    }

    /// The document's request as it went out last (after any redirect).
    fn document_request(&self) -> Option<&Request> {
        self.document.as_ref().and_then(|d| self.requests.get(d))
    }

    /// The document request's wall clock less its monotonic one (s), which
    /// maps a wall-clock paint time onto the Network events' clock.
    fn wall_minus_mono(&self) -> Option<f64> {
        let d = self.document_request()?;
        d.wall.map(|w| w - d.hop_issued)
    }

    /// The backend DOM node of the LCP element as of onload, to describe
    /// with `DOM.describeNode` (then `set_lcp_element`).
    pub fn lcp_node(&self) -> Option<i64> {
        let c = self
            .paints
            .as_of(self.lcp_horizon(), self.wall_minus_mono()?)?;
        c.node
    }

    /// The LCP element as `DOM.describeNode` gave it (Null: it could not).
    pub fn set_lcp_element(&mut self, node: &Value) {
        let Some(offset) = self.wall_minus_mono() else {
            return;
        };
        if let Some(c) = self.paints.as_of(self.lcp_horizon(), offset) {
            self.paints.element = Some(describe_element(node, c.id.as_deref(), c.url.as_deref()));
        }
    }

    /// TTFB, FCP and LCP in ms after `start` (the document's request).
    fn paint(&self, start: f64) -> Paint {
        let since = |t: f64| (t - start) * 1e3;
        // The first byte of the document's response: its headers' start
        // (Chromium ≥ 115), else their end.
        let ttfb_ms = self
            .document_request()
            .and_then(|d| d.timing.as_ref())
            .and_then(|t| {
                let base = t["requestTime"].as_f64()?;
                let first = [num(t, "receiveHeadersStart"), num(t, "receiveHeadersEnd")]
                    .into_iter()
                    .find(|v| *v >= 0.0)?;
                Some(since(base + first / 1e3))
            });
        let fcp_ms = self.paints.fcp.map(since);
        let lcp = self
            .wall_minus_mono()
            .and_then(|off| Some((off, self.paints.as_of(self.lcp_horizon(), off)?)));
        let lcp_ms = lcp.map(|(off, c)| {
            let t = since(c.wall - off);
            // A largest contentful paint is a contentful paint: never before FCP
            // (the two clocks differ by about a millisecond; see `paint`).
            fcp_ms.map_or(t, |f| t.max(f))
        });
        Paint {
            ttfb_ms,
            fcp_ms,
            lcp_ms,
            lcp_element: lcp.map(|(_, c)| {
                self.paints.element.clone().unwrap_or_else(|| {
                    describe_element(&Value::Null, c.id.as_deref(), c.url.as_deref())
                })
            }),
            lcp_size: lcp.map(|(_, c)| c.size),
            ..self.visual(start)
        }
    }

    /// Speed Index, visually complete and the filmstrip (`visual`) of the
    /// screencast's frames from `start` (the document's request) to the
    /// final one: the last frame by onload, or by the first contentful paint
    /// if that came later, and `FRAME_SLACK` more (a frame is swapped a few
    /// ms after its paint) — and if the frames by then end blank (the page's
    /// background before its content, `visual`'s module doc), the first
    /// frame after them that is not. Identical consecutive frames count
    /// once; blank frames after the page's last are left out of both.
    fn visual(&self, start: f64) -> Paint {
        use base64::Engine;
        let (Some(off), Some(onload)) = (self.wall_minus_mono(), self.onload) else {
            return Paint::default();
        };
        let horizon = self.paints.fcp.map_or(onload, |f| f.max(onload)) + FRAME_SLACK;
        let mut frames: Vec<(f64, Vec<u8>, Histogram)> = Vec::new();
        let mut last: Option<&str> = None;
        for (wall, data) in &self.frames {
            let mono = wall - off;
            if mono < start || last == Some(data.as_str()) {
                continue;
            }
            last = Some(data);
            let Ok(jpeg) = base64::engine::general_purpose::STANDARD.decode(data) else {
                continue;
            };
            if let Some(h) = Histogram::of_jpeg(&jpeg) {
                frames.push(((mono - start) * 1e3, jpeg, h));
            }
        }
        frames.sort_by(|a, b| a.0.total_cmp(&b.0));
        let by_horizon = frames.partition_point(|f| f.0 <= (horizon - start) * 1e3);
        let ends_blank = frames[..by_horizon].last().is_none_or(|f| f.2.blank());
        let keep = match frames[by_horizon..].iter().position(|f| !f.2.blank()) {
            Some(i) if ends_blank => by_horizon + i + 1,
            _ => by_horizon,
        };
        frames.truncate(keep);
        frames.truncate(page_frames(&frames, |f| &f.2));
        let timed: Vec<(f64, Histogram)> = frames.iter().map(|(t, _, h)| (*t, h.clone())).collect();
        let Some(v) = visual(&timed) else {
            return Paint::default();
        };
        let strip: Vec<(f64, &[u8], &Histogram)> = frames
            .iter()
            .map(|(t, j, h)| (*t, j.as_slice(), h))
            .collect();
        // Visually complete is never before the first contentful paint. The
        // reference frame being the page's (above) is not enough: the
        // screencast stamps a frame when the compositor made it, FCP when it
        // was presented, and on a loaded machine the page's one frame was
        // stamped 53–364 ms before its FCP (docs/visual.md); nor can a
        // screen be complete before any content is on it. (Speed Index is
        // not clamped: a background painted before FCP is progress.)
        let fcp_ms = self.paints.fcp.map(|f| (f - start) * 1e3);
        let visually_complete_ms =
            fcp_ms.map_or(v.visually_complete_ms, |f| v.visually_complete_ms.max(f));
        Paint {
            speed_index_ms: Some(v.speed_index_ms),
            visually_complete_ms: Some(visually_complete_ms),
            filmstrip: filmstrip(&strip, FILMSTRIP_MAX),
            ..Paint::default()
        }
    }
}

/// The page result's entry of request `r` (or a redirect hop of it), done at
/// `done`; its connection numbered in order of first use in `connections`.
fn entry(
    r: &Request,
    done: f64,
    body_bytes: u64,
    start: Option<f64>,
    connections: &mut Vec<u64>,
) -> Entry {
    if let Some(c) = r.connection.filter(|_| !r.from_cache) {
        if !connections.contains(&c) {
            connections.push(c);
        }
    }
    let (host, path) =
        site::content::split_url(&r.url).unwrap_or_else(|| (String::new(), r.url.clone()));
    Entry {
        method: r.method.clone(),
        host,
        path,
        request_body_bytes: r.post_data.as_ref().map_or(0, |d| d.len() as u64),
        started_ms: start.map_or(0.0, |s| (r.issued - s) * 1e3),
        time_ms: ((done - r.issued) * 1e3).max(0.0),
        status: r.status,
        content_type: r.mime.clone(),
        body_bytes,
        connection: connections
            .iter()
            .position(|c| Some(*c) == r.connection && !r.from_cache)
            .unwrap_or(0),
        timings: phases(r, done),
        // Chromium has accepted no push since 2022.
        pushed: false,
    }
}

impl Recorder {
    /// The requests whose response bodies a HAR of this load holds (ask
    /// Chromium for each with `Network.getResponseBody` before the tab goes).
    pub fn body_ids(&self) -> Vec<String> {
        self.order
            .iter()
            .filter(|id| {
                let r = &self.requests[*id];
                self.in_page(r)
                    && r.failed.is_none()
                    && r.status != 204
                    && !(300..400).contains(&r.status)
            })
            .cloned()
            .collect()
    }

    /// Every URL the page asked for: each request and each hop of a redirect
    /// chain, in order, then its WebSockets; failed ones too, and those after onload.
    pub fn requested_urls(&self) -> impl Iterator<Item = &str> {
        self.order
            .iter()
            .flat_map(|id| {
                self.hops
                    .iter()
                    .filter(move |(h, _)| h == id)
                    .map(|(_, r)| r.url.as_str())
                    .chain(self.requests.get(id).map(|r| r.url.as_str()))
            })
            .chain(self.sockets.iter().map(String::as_str))
    }

    /// Whether a request ended by onload, or the page's end (`end`), so
    /// belongs to the page load.
    fn in_page(&self, r: &Request) -> bool {
        let end = self.end();
        r.finished.is_some_and(|done| end.is_none_or(|l| done <= l))
    }

    /// The load as a HAR 1.2 document, as Chrome's DevTools exports it: one
    /// page (onContentLoad, onLoad), an entry per request and per redirect hop
    /// that ended by onload (failed ones with status 0 and `_error`), each with
    /// its headers, `httpVersion` from the response's protocol, the body
    /// (`bodies`, base64 where Chromium gave it so), sizes, the seven phases,
    /// `_initiator` in DevTools' form and `_resourceType`.
    pub fn har(&self, bodies: &HashMap<String, Body>, creator: &str) -> (Value, RecordSummary) {
        let mut summary = RecordSummary::default();
        let doc = self.document.as_ref().and_then(|d| self.requests.get(d));
        let start = doc.map_or(0.0, |d| d.issued);
        // Chrome's monotonic clock to the wall clock, from the document's request.
        let epoch_wall = doc.and_then(|d| d.wall.map(|w| w - d.hop_issued));
        let wall_of = |r: &Request| -> f64 {
            r.wall
                .or(epoch_wall.map(|e| e + r.hop_issued))
                .unwrap_or(0.0)
        };
        // A wall time the system clock cannot hold (DevTools sends any
        // number) is written as the epoch, not a panic.
        let date = |secs: f64| {
            let epoch = std::time::UNIX_EPOCH;
            site::har::iso8601(
                std::time::Duration::try_from_secs_f64(secs.max(0.0))
                    .ok()
                    .and_then(|d| epoch.checked_add(d))
                    .unwrap_or(epoch),
            )
        };
        let mut entries = Vec::new();
        for id in &self.order {
            let last = &self.requests[id];
            let hops: Vec<&Request> = self
                .hops
                .iter()
                .filter(|(h, _)| h == id)
                .map(|(_, r)| r)
                .chain(std::iter::once(last))
                .collect();
            for (k, r) in hops.iter().enumerate() {
                if !self.in_page(r) {
                    continue;
                }
                let redirect_to = hops.get(k + 1).map(|n| n.url.as_str());
                let mut body = (k + 1 == hops.len()).then(|| bodies.get(id)).flatten();
                // Chromium keeps nothing of an image it could not decode (a
                // .swf or .bin in an <img>): an empty body for bytes that came
                // is no body (the HAR keeps the size; the import generates one).
                if body.is_some_and(|b| b.text.is_empty()) && r.body_bytes > 0 {
                    body = None;
                    summary.bodies_missing += 1;
                }
                let e = self.entry(r, body, redirect_to, date(wall_of(r)));
                summary.entries += 1;
                let size = e["response"]["content"]["size"].as_u64().unwrap_or(0);
                summary.bytes = summary.bytes.saturating_add(size);
                summary.bodies_recorded += usize::from(body.is_some());
                summary.redirects += usize::from(redirect_to.is_some());
                summary.failed += usize::from(r.failed.is_some());
                summary.initiators += usize::from(initiator_names_url(&r.initiator));
                if r.failed.is_none() {
                    match summary.protocols.iter_mut().find(|(p, _)| *p == r.protocol) {
                        Some((_, n)) => *n += 1,
                        None => summary.protocols.push((r.protocol.clone(), 1)),
                    }
                }
                entries.push(e);
            }
        }
        summary.onload_ms = self.onload.map_or(-1.0, |l| (l - start) * 1e3);
        let on_content = self.dom_content.map_or(-1.0, |l| (l - start) * 1e3);
        let har = serde_json::json!({
            "log": {
                "version": "1.2",
                "creator": {"name": "spdylab", "version": creator},
                "pages": [{
                    "startedDateTime": date(doc.map_or(0.0, wall_of)),
                    "id": "page_1",
                    "title": doc.map_or("", |d| d.url.as_str()),
                    "pageTimings": {"onContentLoad": on_content, "onLoad": summary.onload_ms}
                }],
                "entries": entries
            }
        });
        (har, summary)
    }

    fn entry(
        &self,
        r: &Request,
        body: Option<&Body>,
        redirect_to: Option<&str>,
        started: String,
    ) -> Value {
        use serde_json::json;
        let done = r.finished.unwrap_or(r.hop_issued);
        let hop = Request {
            issued: r.hop_issued,
            ..r.clone()
        };
        let t = if r.failed.is_some() && r.timing.is_none() {
            Timings {
                blocked: ((done - r.hop_issued) * 1e3).max(0.0),
                dns: -1.0,
                connect: -1.0,
                ssl: -1.0,
                send: 0.0,
                wait: 0.0,
                receive: 0.0,
            }
        } else {
            phases(&hop, done)
        };
        let pairs = |h: &[(String, String)]| -> Vec<Value> {
            h.iter()
                .map(|(n, v)| json!({"name": n, "value": v}))
                .collect()
        };
        let query: Vec<Value> = r
            .url
            .split_once('?')
            .map(|(_, q)| q.split('#').next().unwrap_or(""))
            .into_iter()
            .flat_map(|q| q.split('&'))
            .filter(|kv| !kv.is_empty())
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                json!({"name": k, "value": v})
            })
            .collect();
        let version = har_version(&r.protocol);
        // Without a body (Chromium keeps none of an image it cannot decode,
        // and may stop reading it early), an uncompressed response's declared
        // length is its size; what arrived may be only the first chunk.
        let header = |name: &str| {
            r.response_headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.trim())
        };
        let declared = header("content-length")
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|_| header("content-encoding").is_none_or(|e| e == "identity"));
        let size = match body {
            Some(_) => r.body_bytes,
            None => declared.unwrap_or(r.body_bytes).max(r.body_bytes),
        };
        let mut content = json!({"size": size, "mimeType": r.mime});
        if let Some(b) = body {
            let size = if b.base64 {
                use base64::Engine;
                base64::engine::general_purpose::STANDARD
                    .decode(b.text.as_bytes())
                    .map_or(r.body_bytes as usize, |d| d.len())
            } else {
                b.text.len()
            };
            content["size"] = json!(size);
            content["text"] = json!(b.text);
            if b.base64 {
                content["encoding"] = json!("base64");
            }
        }
        let mut request = json!({
            "method": r.method,
            "url": r.url,
            "httpVersion": version,
            "cookies": [],
            "headers": pairs(&r.request_headers),
            "queryString": query,
            "headersSize": -1,
            "bodySize": r.post_data.as_ref().map_or(0, String::len),
        });
        if let Some(p) = &r.post_data {
            let mime = r
                .request_headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
                .map_or("", |(_, v)| v.as_str());
            request["postData"] = json!({"mimeType": mime, "text": p});
        }
        let mut response = json!({
            "status": r.status,
            "statusText": r.status_text,
            "httpVersion": version,
            "cookies": [],
            "headers": pairs(&r.response_headers),
            "content": content,
            "redirectURL": redirect_to.unwrap_or(""),
            "headersSize": -1,
            "bodySize": if r.encoded_body > 0 { r.encoded_body } else { r.body_bytes },
            "_transferSize": r.encoded_bytes.unwrap_or(0),
        });
        if let Some(e) = &r.failed {
            response["status"] = json!(0);
            response["_error"] = json!(e);
        }
        let mut e = json!({
            "pageref": "page_1",
            "startedDateTime": started,
            "time": ((done - r.hop_issued) * 1e3).max(0.0),
            "request": request,
            "response": response,
            "cache": {},
            "timings": {
                "blocked": t.blocked, "dns": t.dns, "connect": t.connect, "ssl": t.ssl,
                "send": t.send, "wait": t.wait, "receive": t.receive
            },
            "_resourceType": r.resource_type.to_ascii_lowercase(),
        });
        if let Some(ip) = &r.remote_ip {
            e["serverIPAddress"] = json!(ip.trim_start_matches('[').trim_end_matches(']'));
        }
        if let Some(c) = r.connection {
            e["connection"] = json!(c.to_string());
        }
        if let Some(i) = &r.initiator {
            e["_initiator"] = i.clone();
        }
        e
    }
}

/// A HAR `httpVersion` from DevTools' `response.protocol`, as DevTools' own
/// export writes it (h2 as HTTP/2.0, the others upper-cased).
fn har_version(protocol: &str) -> String {
    match protocol {
        "h2" => "HTTP/2.0".into(),
        "" => String::new(),
        p => p.to_ascii_uppercase(),
    }
}

/// Whether a DevTools initiator names a URL (its own, or a stack frame's).
fn initiator_names_url(i: &Option<Value>) -> bool {
    let Some(i) = i else { return false };
    if i["url"].as_str().is_some_and(|u| !u.is_empty()) {
        return true;
    }
    let mut stack = i.get("stack");
    while let Some(s) = stack {
        if s["callFrames"].as_array().is_some_and(|f| {
            f.iter()
                .any(|f| f["url"].as_str().is_some_and(|u| !u.is_empty()))
        }) {
            return true;
        }
        stack = s.get("parent");
    }
    false
}

/// DevTools headers (an object; several values of one name joined by newlines) as HAR pairs.
fn header_list(h: &Value) -> Vec<(String, String)> {
    let Some(o) = h.as_object() else {
        return Vec::new();
    };
    o.iter()
        .flat_map(|(n, v)| {
            v.as_str()
                .unwrap_or("")
                .split('\n')
                .map(|v| (n.clone(), v.to_string()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The response fields of a `Network.Response`.
fn fill_response(r: &mut Request, resp: &Value) {
    r.status = resp["status"].as_u64().unwrap_or(0) as u16;
    r.mime = resp["mimeType"].as_str().unwrap_or("").to_string();
    r.protocol = resp["protocol"].as_str().unwrap_or("").to_string();
    r.connection = resp["connectionId"].as_u64();
    r.timing = resp.get("timing").cloned();
    r.status_text = resp["statusText"].as_str().unwrap_or("").to_string();
    r.response_headers = header_list(&resp["headers"]);
    r.remote_ip = resp["remoteIPAddress"].as_str().map(String::from);
    r.from_cache |= resp["fromDiskCache"].as_bool() == Some(true)
        || resp["fromPrefetchCache"].as_bool() == Some(true);
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

    /// A repeat view: the document revalidated (a 304 on the wire), one image from the
    /// disk cache, one from the memory cache (no response protocol): the
    /// cache's answers are counted, never a protocol mismatch, and no
    /// connection of their own.
    #[test]
    fn a_repeat_view_counts_what_the_cache_answered() {
        let mut r = Recorder::new();
        let mut ev = |m: &str, p: serde_json::Value| r.on_event(m, &p);
        ev(
            "Network.requestWillBeSent",
            json!({"requestId": "1", "type": "Document",
            "timestamp": 100.0, "request": {"url": "https://a.test/"}}),
        );
        // Chromium shows the page the cached 200; the wire had a 304.
        ev(
            "Network.responseReceivedExtraInfo",
            json!({"requestId": "1", "statusCode": 304}),
        );
        ev(
            "Network.responseReceived",
            json!({"requestId": "1", "response": {"status": 200,
            "mimeType": "text/html", "protocol": "h2", "connectionId": 7}}),
        );
        ev(
            "Network.dataReceived",
            json!({"requestId": "1", "dataLength": 1000}),
        );
        ev(
            "Network.loadingFinished",
            json!({"requestId": "1", "timestamp": 100.2}),
        );
        ev(
            "Network.requestWillBeSent",
            json!({"requestId": "2", "type": "Image",
            "timestamp": 100.21, "request": {"url": "https://a.test/i.png"}}),
        );
        ev(
            "Network.responseReceived",
            json!({"requestId": "2", "response": {"status": 200,
            "mimeType": "image/png", "protocol": "h2", "connectionId": 0, "fromDiskCache": true}}),
        );
        ev(
            "Network.dataReceived",
            json!({"requestId": "2", "dataLength": 500}),
        );
        ev(
            "Network.loadingFinished",
            json!({"requestId": "2", "timestamp": 100.22}),
        );
        ev(
            "Network.requestWillBeSent",
            json!({"requestId": "3", "type": "Image",
            "timestamp": 100.23, "request": {"url": "https://a.test/j.png"}}),
        );
        ev("Network.requestServedFromCache", json!({"requestId": "3"}));
        ev(
            "Network.responseReceived",
            json!({"requestId": "3", "response": {"status": 200,
            "mimeType": "image/png", "protocol": "", "connectionId": 0}}),
        );
        ev(
            "Network.dataReceived",
            json!({"requestId": "3", "dataLength": 20}),
        );
        ev(
            "Network.loadingFinished",
            json!({"requestId": "3", "timestamp": 100.24}),
        );
        ev("Page.loadEventFired", json!({"timestamp": 100.3}));
        let load = r.finish(Protocol::H2);
        assert_eq!(load.error, None);
        assert_eq!(load.entries.len(), 3);
        assert_eq!(load.connections, 1);
        assert_eq!(
            r.cache_use(),
            CacheUse {
                from_cache: 2,
                not_modified: 1,
                cached_bytes: 1520
            }
        );
        // A cold load took nothing from the cache.
        assert_eq!(page("h2").cache_use(), CacheUse::default());
    }

    /// `page`, then a script's image issued after onload and done later.
    fn page_with_late_image() -> Recorder {
        let mut r = page("h2");
        r.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "4", "type": "Image", "timestamp": 100.76,
                    "request": {"url": "https://a.test/i.png?high=2"}}),
        );
        r.on_event(
            "Network.responseReceived",
            &json!({"requestId": "4", "response": {"status": 200, "mimeType": "image/png",
                "protocol": "h2", "connectionId": 7}}),
        );
        r.on_event(
            "Network.loadingFinished",
            &json!({"requestId": "4", "timestamp": 101.25}),
        );
        r
    }

    #[test]
    fn a_page_that_says_when_it_is_done_ends_there_not_at_onload() {
        // Not said: onload ends it, the late image is not the page's.
        let r = page_with_late_image();
        let load = r.finish(Protocol::H2);
        assert!((load.plt_ms - 750.0).abs() < 1e-6, "{}", load.plt_ms);
        assert_eq!(load.entries.len(), 2);
        // Said after the late image: the page ends with the last completion
        // of a request it had issued by then (the late image, 1250 ms after
        // the document's request; what it issues after is not the page's).
        let mut r = page_with_late_image();
        r.page_done();
        r.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "5", "type": "Other", "timestamp": 101.3,
                    "request": {"url": "https://a.test/after.png"}}),
        );
        r.on_event(
            "Network.loadingFinished",
            &json!({"requestId": "5", "timestamp": 101.4}),
        );
        let load = r.finish(Protocol::H2);
        assert!((load.plt_ms - 1250.0).abs() < 1e-6, "{}", load.plt_ms);
        let paths: Vec<&str> = load.entries.iter().map(|e| e.path.as_str()).collect();
        assert!(paths.contains(&"/i.png?high=2"), "{paths:?}");
        assert!(!paths.contains(&"/after.png"), "{paths:?}");
        let (har, summary) = r.har(&HashMap::new(), "test");
        assert_eq!(summary.entries, load.entries.len());
        assert_eq!(
            har["log"]["entries"].as_array().unwrap().len(),
            load.entries.len()
        );
        // No onload, no end, whatever the page said.
        let mut r = Recorder::new();
        r.page_done();
        assert!(r.end().is_none());
        assert!(r.finish(Protocol::H2).error.is_some());
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
    fn a_har_with_bodies_initiators_and_redirects_imports() {
        let mut r = page("h2");
        // A redirect hop of the image's request id 2, before its final hop.
        let mut r2 = Recorder::new();
        for (m, p) in [
            (
                "Network.requestWillBeSent",
                json!({"requestId": "1", "type": "Document", "timestamp": 100.0, "wallTime": 1_795_392_000.0,
                "request": {"url": "https://a.test/", "method": "GET", "headers": {"Accept": "*/*"}}}),
            ),
            (
                "Network.responseReceived",
                json!({"requestId": "1", "response": {"status": 200, "mimeType": "text/html", "protocol": "h2",
                "headers": {"content-type": "text/html", "set-cookie": "a=1\nb=2"}, "remoteIPAddress": "198.18.1.1"}}),
            ),
            (
                "Network.loadingFinished",
                json!({"requestId": "1", "timestamp": 100.1, "encodedDataLength": 400}),
            ),
            (
                "Network.requestWillBeSent",
                json!({"requestId": "2", "type": "Image", "timestamp": 100.2,
                "request": {"url": "https://a.test/old.png?x=1", "method": "GET", "headers": {}},
                "initiator": {"type": "parser", "url": "https://a.test/", "lineNumber": 3}}),
            ),
            (
                "Network.requestWillBeSent",
                json!({"requestId": "2", "type": "Image", "timestamp": 100.3,
                "request": {"url": "https://b.test/new.png", "method": "GET", "headers": {}},
                "redirectResponse": {"status": 301, "protocol": "h2", "mimeType": "", "headers": {"location": "https://b.test/new.png"}},
                "initiator": {"type": "parser", "url": "https://a.test/"}}),
            ),
            (
                "Network.responseReceived",
                json!({"requestId": "2", "response": {"status": 200, "mimeType": "image/png", "protocol": "h2", "headers": {}}}),
            ),
            (
                "Network.dataReceived",
                json!({"requestId": "2", "dataLength": 3, "encodedDataLength": 3}),
            ),
            (
                "Network.loadingFinished",
                json!({"requestId": "2", "timestamp": 100.4}),
            ),
            ("Page.domContentEventFired", json!({"timestamp": 100.15})),
            ("Page.loadEventFired", json!({"timestamp": 100.5})),
        ] {
            r2.on_event(m, &p);
        }
        assert_eq!(r2.body_ids(), vec!["1", "2"]);
        let html = "<html><body><img src=\"/old.png?x=1\"></body></html>";
        let bodies = HashMap::from([
            (
                "1".to_string(),
                Body {
                    text: html.into(),
                    base64: false,
                },
            ),
            (
                "2".to_string(),
                Body {
                    text: "AQID".into(),
                    base64: true,
                },
            ),
        ]);
        let (har, s) = r2.har(&bodies, "test");
        assert_eq!(
            (s.entries, s.bodies_recorded, s.redirects, s.initiators),
            (3, 2, 1, 2)
        );
        assert_eq!(s.protocols, vec![("h2".to_string(), 3)]);
        // Every URL asked for, the redirect's hops in order, then sockets.
        r2.on_event(
            "Network.webSocketCreated",
            &json!({"requestId": "9", "url": "wss://c.test/s"}),
        );
        let urls: Vec<&str> = r2.requested_urls().collect();
        assert_eq!(
            urls,
            [
                "https://a.test/",
                "https://a.test/old.png?x=1",
                "https://b.test/new.png",
                "wss://c.test/s"
            ]
        );
        assert!((s.onload_ms - 500.0).abs() < 1e-6);
        let log = &har["log"];
        assert!(
            (log["pages"][0]["pageTimings"]["onContentLoad"]
                .as_f64()
                .unwrap()
                - 150.0)
                .abs()
                < 1e-6
        );
        let e = &log["entries"];
        assert_eq!(e[0]["startedDateTime"], "2026-11-23T00:00:00.000Z");
        assert_eq!(e[0]["response"]["httpVersion"], "HTTP/2.0");
        assert_eq!(e[0]["serverIPAddress"], "198.18.1.1");
        assert_eq!(e[0]["response"]["headers"].as_array().unwrap().len(), 3);
        assert_eq!(e[1]["response"]["status"], 301);
        assert_eq!(e[1]["response"]["redirectURL"], "https://b.test/new.png");
        assert_eq!(e[1]["request"]["queryString"][0]["name"], "x");
        assert_eq!(e[2]["response"]["content"]["encoding"], "base64");
        assert_eq!(e[2]["response"]["content"]["size"], 3);
        assert_eq!(e[2]["_initiator"]["type"], "parser");
        // What spdylab import makes of it: the chain kept, parents from initiators.
        let (site, rep) = site::har::import("t", &serde_json::to_vec(&har).unwrap()).unwrap();
        assert_eq!(site.resources.len(), 3);
        assert_eq!(rep.bodies_recorded, 3);
        assert_eq!(site.body(2), vec![1, 2, 3]);
        assert_eq!((rep.parents_redirect, rep.parents_initiator), (1, 1));
        // The measurement of the same events is unchanged by what the HAR keeps.
        r.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "9", "timestamp": 101.0,
            "request": {"url": "https://a.test/late"}}),
        );
        assert_eq!(r.finish(Protocol::H2).entries.len(), 2);
    }

    #[test]
    fn an_undecodable_image_cut_short_keeps_its_declared_size() {
        let mut r = Recorder::new();
        for (m, p) in [
            (
                "Network.requestWillBeSent",
                json!({"requestId": "1", "type": "Document", "timestamp": 100.0,
                "request": {"url": "https://a.test/", "method": "GET", "headers": {}}}),
            ),
            (
                "Network.responseReceived",
                json!({"requestId": "1", "response": {"status": 200, "mimeType": "text/html", "protocol": "h2", "headers": {}}}),
            ),
            (
                "Network.loadingFinished",
                json!({"requestId": "1", "timestamp": 100.1}),
            ),
            (
                "Network.requestWillBeSent",
                json!({"requestId": "2", "type": "Image", "timestamp": 100.2,
                "request": {"url": "https://a.test/x.bin", "method": "GET", "headers": {}}}),
            ),
            (
                "Network.responseReceived",
                json!({"requestId": "2", "response": {"status": 200, "mimeType": "application/octet-stream",
                "protocol": "h2", "headers": {"content-length": "38456"}}}),
            ),
            (
                "Network.dataReceived",
                json!({"requestId": "2", "dataLength": 16384, "encodedDataLength": 16384}),
            ),
            (
                "Network.loadingFinished",
                json!({"requestId": "2", "timestamp": 100.4}),
            ),
            ("Page.loadEventFired", json!({"timestamp": 100.5})),
        ] {
            r.on_event(m, &p);
        }
        let bodies = HashMap::from([
            (
                "1".to_string(),
                Body {
                    text: "<html></html>".into(),
                    base64: false,
                },
            ),
            (
                "2".to_string(),
                Body {
                    text: String::new(),
                    base64: true,
                },
            ),
        ]);
        let (har, s) = r.har(&bodies, "test");
        assert_eq!((s.bodies_recorded, s.bodies_missing), (1, 1));
        let image = &har["log"]["entries"][1]["response"]["content"];
        assert_eq!(image["size"], 38456);
        assert!(image.get("text").is_none(), "{image}");
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

    /// A load of the pagexray page whose screencast sent the frames
    /// `frames` (ms after the document's request, the recorded JPEG under
    /// tests/data/screencast), its FCP at `fcp` ms and onload at `onload`.
    fn screencast(frames: &[(f64, &str)], fcp: f64, onload: f64) -> Paint {
        use base64::Engine;
        let mut r = Recorder::new();
        let ev = |name: &str, t: f64| json!({"frameId": "F", "loaderId": "L", "name": name, "timestamp": 100.0 + t / 1e3});
        r.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "L", "loaderId": "L", "frameId": "F", "type": "Document",
                "timestamp": 100.0, "wallTime": 1_000_000.0, "request": {"url": "https://a.test/"}}),
        );
        r.on_event(
            "Network.responseReceived",
            &json!({"requestId": "L", "response": {"status": 200, "mimeType": "text/html",
                "protocol": "h2", "connectionId": 1}}),
        );
        r.on_event(
            "Network.loadingFinished",
            &json!({"requestId": "L", "timestamp": 100.1}),
        );
        for (i, (ms, name)) in frames.iter().enumerate() {
            let path = format!(
                "{}/tests/data/screencast/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            let jpeg = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            r.on_event(
                "Page.screencastFrame",
                &json!({"sessionId": i, "metadata": {"timestamp": 1_000_000.0 + ms / 1e3},
                    "data": base64::engine::general_purpose::STANDARD.encode(jpeg)}),
            );
        }
        r.on_event("Page.lifecycleEvent", &ev("firstContentfulPaint", fcp));
        r.on_event(
            "Page.loadEventFired",
            &json!({"timestamp": 100.0 + onload / 1e3}),
        );
        r.finish(Protocol::H2).paint.unwrap()
    }

    /// Issue 47: the screencast's last frames grey (the page's background
    /// before its content, or again after it), visually complete on the
    /// grey frame before FCP. With Chromium's frames as recorded: the
    /// reference frame is the page's, visually complete is never before FCP,
    /// and Speed Index lies between the first paint and visually complete.
    #[test]
    fn a_recorded_screencast_ending_grey_is_complete_on_the_page_not_before_fcp() {
        let page = std::fs::read(format!(
            "{}/tests/data/screencast/page.jpg",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        // The cable h3 row: grey at 600 ms, FCP at 700 ms; the page's frame
        // stamped before FCP (as the compositor made it), grey after it.
        let p = screencast(
            &[
                (600.0, "grey-background.jpg"),
                (650.0, "page.jpg"),
                (760.0, "grey-background.jpg"),
            ],
            700.0,
            640.0,
        );
        let (fcp, vc, si) = (
            p.fcp_ms.unwrap(),
            p.visually_complete_ms.unwrap(),
            p.speed_index_ms.unwrap(),
        );
        assert!(vc >= fcp, "VC {vc} before FCP {fcp}");
        assert!((vc - 700.0).abs() < 1e-6, "{vc}");
        assert!(si > 600.0 && si <= vc, "SI {si}");
        let last = p.filmstrip.last().unwrap();
        assert_eq!(last.jpeg, page, "the filmstrip ends on the page");
        assert_eq!(p.filmstrip.len(), 2);

        // Only the background by FCP + FRAME_SLACK, the page's frame later
        // (the screencast behind on a loaded machine): the page's frame is
        // the final one, not the background.
        let p = screencast(
            &[
                (1069.0, "grey-background.jpg"),
                (2300.0, "page.jpg"),
                (2400.0, "grey-background.jpg"),
            ],
            2099.0,
            1493.0,
        );
        assert!(
            (p.visually_complete_ms.unwrap() - 2300.0).abs() < 1e-6,
            "{p:?}"
        );
        assert_eq!(p.filmstrip.last().unwrap().jpeg, page);

        // The background only, as that probe recorded it: no visual
        // figures rather than a visually complete 1 s before its FCP.
        let p = screencast(&[(1069.0, "grey-background.jpg")], 2099.0, 1493.0);
        assert_eq!((p.speed_index_ms, p.visually_complete_ms), (None, None));
        assert!(p.filmstrip.is_empty());
        assert!((p.fcp_ms.unwrap() - 2099.0).abs() < 1e-6);
    }

    /// TTFB from the document's timing, FCP from the page's lifecycle event
    /// (about:blank's before it and an iframe's are not the page's), LCP as
    /// of onload from the performance timeline's wall clock, mapped by the
    /// document request's own (timestamp, wallTime), never before FCP.
    #[test]
    fn ttfb_fcp_and_lcp_as_of_onload() {
        let mut r = Recorder::new();
        let ev = |name: &str, loader: &str, frame: &str, t: f64| json!({"frameId": frame, "loaderId": loader, "name": name, "timestamp": t});
        let lcp = |wall: f64, size: f64, node: i64| {
            json!({"event": {"frameId": "F", "type": "largest-contentful-paint", "name": "",
                "time": wall, "lcpDetails": {"renderTime": wall, "loadTime": 0, "size": size, "nodeId": node}}})
        };
        // about:blank paints first, under another loader of the same frame.
        r.on_event(
            "Page.lifecycleEvent",
            &ev("firstContentfulPaint", "blank", "F", 99.0),
        );
        for (m, p) in [
            (
                "Network.requestWillBeSent",
                json!({"requestId": "L", "loaderId": "L", "frameId": "F", "type": "Document",
                    "timestamp": 100.0, "wallTime": 1_000_000.0, "request": {"url": "https://a.test/"}}),
            ),
            (
                "Page.lifecycleEvent",
                ev("firstContentfulPaint", "blank", "F", 100.01),
            ),
            (
                "Network.responseReceived",
                json!({"requestId": "L", "response": {"status": 200, "mimeType": "text/html",
                    "protocol": "h2", "connectionId": 1,
                    "timing": {"requestTime": 100.002, "connectStart": 0.0, "connectEnd": 40.0,
                        "sendStart": 40.5, "sendEnd": 41.0, "receiveHeadersStart": 60.5,
                        "receiveHeadersEnd": 61.0}}}),
            ),
            (
                "Network.loadingFinished",
                json!({"requestId": "L", "timestamp": 100.1}),
            ),
            ("Page.lifecycleEvent", ev("firstPaint", "L", "F", 100.118)),
            (
                "Page.lifecycleEvent",
                ev("firstContentfulPaint", "L", "iframe", 100.119),
            ),
            (
                "Page.lifecycleEvent",
                ev("firstContentfulPaint", "L", "F", 100.12),
            ),
            // In FCP's frame, its wall clock a millisecond behind.
            (
                "PerformanceTimeline.timelineEventAdded",
                lcp(1_000_000.119, 5000.0, 3),
            ),
            (
                "PerformanceTimeline.timelineEventAdded",
                lcp(1_000_000.25, 90000.0, 8),
            ),
            ("Page.loadEventFired", json!({"timestamp": 100.3})),
            // Painted after onload: not the LCP as of onload.
            (
                "PerformanceTimeline.timelineEventAdded",
                lcp(1_000_000.4, 200000.0, 9),
            ),
        ] {
            r.on_event(m, &p);
        }
        let p = r.finish(Protocol::H2).paint.unwrap();
        assert!((p.ttfb_ms.unwrap() - 62.5).abs() < 1e-6, "{p:?}");
        assert!((p.fcp_ms.unwrap() - 120.0).abs() < 1e-6, "{p:?}");
        assert!((p.lcp_ms.unwrap() - 250.0).abs() < 1e-6, "{p:?}");
        assert_eq!(p.lcp_size, Some(90000.0));
        // Not described yet: what the event said (nothing).
        assert_eq!(p.lcp_element.as_deref(), Some("?"));
        assert_eq!(r.lcp_node(), Some(8));
        r.set_lcp_element(&json!({"nodeName": "IMG", "localName": "img",
            "attributes": ["src", "//b.test/i.png"]}));
        let p = r.finish(Protocol::H2).paint.unwrap();
        assert_eq!(p.lcp_element.as_deref(), Some("img //b.test/i.png"));
        // With only the candidate in FCP's frame: at FCP, not a millisecond before.
        let mut early = Recorder::new();
        for (m, p) in [
            (
                "Network.requestWillBeSent",
                json!({"requestId": "L", "loaderId": "L", "frameId": "F", "type": "Document",
                    "timestamp": 100.0, "wallTime": 1_000_000.0, "request": {"url": "https://a.test/"}}),
            ),
            (
                "Page.lifecycleEvent",
                ev("firstContentfulPaint", "L", "F", 100.12),
            ),
            (
                "PerformanceTimeline.timelineEventAdded",
                lcp(1_000_000.119, 5000.0, 3),
            ),
            ("Page.loadEventFired", json!({"timestamp": 100.3})),
        ] {
            early.on_event(m, &p);
        }
        let p = early.finish(Protocol::H2).paint.unwrap();
        assert_eq!(p.fcp_ms, p.lcp_ms);
        // No response timing, no wall clock: no TTFB, no LCP; FCP stands.
        assert_eq!((p.ttfb_ms, p.lcp_size), (None, Some(5000.0)));
        let mut no_wall = Recorder::new();
        no_wall.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "L", "loaderId": "L", "frameId": "F", "type": "Document",
                "timestamp": 100.0, "request": {"url": "https://a.test/"}}),
        );
        no_wall.on_event(
            "PerformanceTimeline.timelineEventAdded",
            &lcp(1_000_000.1, 1.0, 3),
        );
        no_wall.on_event("Page.loadEventFired", &json!({"timestamp": 100.3}));
        let p = no_wall.finish(Protocol::H2).paint.unwrap();
        assert_eq!(
            (p.lcp_ms, p.lcp_element, no_wall.lcp_node()),
            (None, None, None)
        );
        // Events with no document: no paint at all.
        assert_eq!(Recorder::new().finish(Protocol::H2).paint, None);
    }

    /// A page whose render-blocking resources come last paints its first
    /// frame after onload (the built-in sites): FCP after PLT, and LCP as
    /// of that first frame, not of a later one.
    #[test]
    fn a_first_paint_after_onload_is_the_lcp_s_horizon() {
        let mut r = Recorder::new();
        let lcp = |wall: f64, size: f64| {
            json!({"event": {"frameId": "F", "type": "largest-contentful-paint", "time": wall,
                "lcpDetails": {"renderTime": wall, "size": size, "nodeId": 3}}})
        };
        for (m, p) in [
            (
                "Network.requestWillBeSent",
                json!({"requestId": "L", "loaderId": "L", "frameId": "F", "type": "Document",
                    "timestamp": 10.0, "wallTime": 500.0, "request": {"url": "https://a.test/"}}),
            ),
            ("Page.loadEventFired", json!({"timestamp": 10.4})),
            (
                "Page.lifecycleEvent",
                json!({"frameId": "F", "loaderId": "L", "name": "firstContentfulPaint", "timestamp": 10.42}),
            ),
            (
                "PerformanceTimeline.timelineEventAdded",
                lcp(500.4206, 800.0),
            ),
            (
                "PerformanceTimeline.timelineEventAdded",
                lcp(500.45, 9000.0),
            ),
        ] {
            r.on_event(m, &p);
        }
        assert!(r.painted());
        let load = r.finish(Protocol::H2);
        let p = load.paint.unwrap();
        assert!((load.plt_ms - 400.0).abs() < 1e-6);
        assert!((p.fcp_ms.unwrap() - 420.0).abs() < 1e-6, "{p:?}");
        assert!((p.lcp_ms.unwrap() - 420.6).abs() < 1e-6, "{p:?}");
        assert_eq!(p.lcp_size, Some(800.0));
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
