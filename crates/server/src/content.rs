//! What the server serves: every resource of the Site as a ready response body,
//! found by host (from SNI/Host/:authority) and path. One shared handler for
//! every protocol: the same bytes, headers and think time whatever the wire.
//! An imported page is matched Web Page Replay's way (`Site::find_request`)
//! and answered with its recorded status, headers and body. What was asked
//! (method, URL, request body length) can be kept in a `RequestLog`.
//!
//! Caching (the repeat view, docs/repeat-view.md): every response carries a
//! strong `ETag` (a hash of its body) and a `Last-Modified`; a built-in
//! site's HTML is `Cache-Control: no-cache` (revalidated on each visit, as a
//! page that may change), everything else `public, max-age=86400`. An
//! imported page's `Cache-Control`, `ETag`, `Expires` and `Last-Modified`
//! are the recorded ones, the dates moved by the time since the recording's
//! `Date` so that freshness is what it was. A GET whose `If-None-Match`
//! names the ETag (or, without one, whose `If-Modified-Since` is not before
//! Last-Modified) is answered `304 Not Modified` with no body.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::header::{
    HeaderValue, ACCESS_CONTROL_ALLOW_ORIGIN, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_TYPE, DATE,
    SERVER,
};
use hyper::{Method, Request, Response, StatusCode};
use site::Site;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The served site with its bodies, built once at start.
pub struct Content {
    site: Site,
    bodies: Vec<Bytes>,
    /// Each body's strong ETag.
    etags: Vec<HeaderValue>,
    hosts: HashMap<String, ()>,
    /// Think time before each response (`--server-delay`).
    pub delay: Duration,
    /// For an imported page: each response's think time is its recorded
    /// `timings.wait` instead (`--server-delay from-har`).
    pub delay_from_har: bool,
    /// The `Alt-Svc` header every response carries when h3 is served (on
    /// TCP and on h3 itself: Chromium's scheduler needs it, `quic.rs`): the
    /// UDP port h3 listens on (443 in a testbed; `spdylab serve`'s TLS port).
    pub alt_svc: Option<HeaderValue>,
    /// Where every request answered is noted, when kept (`Server::with_request_log`).
    pub log: Option<RequestLog>,
    /// Think time before the document's response only, after `delay`
    /// (`--server-think`).
    pub think: Duration,
    /// Whether the document's request is answered first with a 103
    /// (`--early-hints`; the protocols that can send one ask `early_hints`).
    pub early_hints: bool,
    /// What is pushed with the document (`--push`; the protocols that can
    /// push ask `pushes`).
    pub push: crate::Push,
    /// The page's document (`site::critical::document`).
    document: usize,
    /// Its critical resources (`site::critical::critical`).
    critical: Vec<usize>,
}

/// One request as the server read it, and the status it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub method: String,
    /// The host it named (lower case, no port).
    pub host: String,
    /// The path with its query.
    pub path: String,
    /// The length of the request body read.
    pub body_bytes: usize,
    pub status: u16,
}

/// The requests a server answered, in the order answered (kept only when
/// asked for: tests check what clients sent with it).
pub type RequestLog = Arc<Mutex<Vec<Seen>>>;

pub const SERVER_NAME: &str = "spdylab";
/// Request bodies larger than this are refused (the site has nothing to upload to).
pub(crate) const MAX_REQUEST_BODY: usize = 1 << 20;

impl Content {
    pub fn new(site: Site, delay: crate::ServerDelay) -> Content {
        let bodies: Vec<Bytes> = (0..site.resources.len())
            .map(|i| Bytes::from(site.body(i)))
            .collect();
        let hosts = site.hosts().iter().map(|h| (h.to_string(), ())).collect();
        let etags = bodies.iter().map(etag).collect();
        Content {
            bodies,
            etags,
            hosts,
            delay: match delay {
                crate::ServerDelay::Fixed(d) => d,
                crate::ServerDelay::None | crate::ServerDelay::FromHar => Duration::ZERO,
            },
            delay_from_har: delay == crate::ServerDelay::FromHar,
            alt_svc: None,
            log: None,
            think: Duration::ZERO,
            early_hints: false,
            push: crate::Push::None,
            document: site::critical::document(&site),
            critical: site::critical::critical(&site),
            site,
        }
    }

    /// Whether `req` asks for the page's document (a GET of it).
    pub fn is_document(&self, req: &Request<()>) -> bool {
        req.method() == Method::GET
            && self
                .site
                .find_request(&host_of(req), "GET", path_of(req))
                .is_some_and(|i| i == self.document)
    }

    /// The `103 Early Hints` to send before `req`'s response, when hints are
    /// on and `req` asks for the document: a `Link` header per critical
    /// resource (`rel=preload` with its `as`; a path on the document's host,
    /// else an absolute URL on the request's scheme and port), then one per
    /// other origin they are on (`rel=preconnect`).
    pub fn early_hints(&self, req: &Request<()>) -> Option<Response<()>> {
        if !self.early_hints || !self.is_document(req) {
            return None;
        }
        let (scheme, port) = scheme_and_port(req);
        let doc_host = &self.site.resources[self.document].host;
        let mut links = Vec::new();
        let mut origins: Vec<&str> = Vec::new();
        for &i in &self.critical {
            let r = &self.site.resources[i];
            let Some(kind) = site::critical::preload_as(r.kind) else {
                continue;
            };
            let url = if &r.host == doc_host {
                r.path.clone()
            } else {
                if !origins.contains(&r.host.as_str()) {
                    origins.push(&r.host);
                }
                format!("{scheme}://{}{port}{}", r.host, r.path)
            };
            let cors = if kind == "font" { "; crossorigin" } else { "" };
            links.push(format!("<{url}>; rel=preload; as={kind}{cors}"));
        }
        for o in origins {
            links.push(format!("<{scheme}://{o}{port}>; rel=preconnect"));
        }
        let mut resp = Response::new(());
        *resp.status_mut() = StatusCode::EARLY_HINTS;
        for l in links {
            if let Ok(v) = HeaderValue::from_str(&l) {
                resp.headers_mut().append(hyper::header::LINK, v);
            }
        }
        Some(resp)
    }

    /// What to push with `req`'s response, when push is on and `req` asks
    /// for the document: a GET of each resource `--push` names on the
    /// document's host (critical: `site::critical::critical`; all:
    /// `same_origin_subtree`), on the request's scheme and authority, with
    /// its kind (for its priority), in that order.
    pub fn pushes(&self, req: &Request<()>) -> Vec<(Request<()>, site::Kind)> {
        if self.push == crate::Push::None || !self.is_document(req) {
            return Vec::new();
        }
        let doc_host = &self.site.resources[self.document].host;
        let list = match self.push {
            crate::Push::None => Vec::new(),
            crate::Push::Critical => self
                .critical
                .iter()
                .copied()
                .filter(|&i| site::critical::fetchable(&self.site, i))
                .collect(),
            crate::Push::All => site::critical::same_origin_subtree(&self.site),
        };
        let (scheme, port) = scheme_and_port(req);
        list.into_iter()
            .filter(|&i| &self.site.resources[i].host == doc_host)
            .filter_map(|i| {
                let r = &self.site.resources[i];
                let uri = format!("{scheme}://{}{port}{}", r.host, r.path);
                let req = Request::builder()
                    .method(Method::GET)
                    .uri(uri)
                    .body(())
                    .ok()?;
                Some((req, r.kind))
            })
            .collect()
    }

    pub fn site(&self) -> &Site {
        &self.site
    }

    /// The response to `req` (any protocol). The request body is read first
    /// (and thrown away: only its length is kept, for the request log), so
    /// that a malformed body is the protocol's error (e.g. an HTTP/2 stream
    /// reset) before any response goes out.
    pub async fn respond<B>(&self, req: Request<B>) -> Response<Full<Bytes>>
    where
        B: hyper::body::Body,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let (parts, body) = req.into_parts();
        let body_bytes = match Limited::new(body, MAX_REQUEST_BODY).collect().await {
            Ok(b) => b.to_bytes().len(),
            Err(_) => {
                return plain(
                    StatusCode::BAD_REQUEST,
                    "the request body is malformed or too large\n".into(),
                )
            }
        };
        self.respond_read(Request::from_parts(parts, ()), body_bytes)
            .await
    }

    /// The response to `req`, whose body (read, and dropped, by the caller)
    /// was `body_bytes` long: h3 counts a request body instead of holding it.
    pub async fn respond_read(&self, req: Request<()>, body_bytes: usize) -> Response<Full<Bytes>> {
        let resp = self.answer(&req).await;
        if let Some(log) = &self.log {
            if let Ok(mut log) = log.lock() {
                log.push(Seen {
                    method: req.method().to_string(),
                    host: host_of(&req),
                    path: req
                        .uri()
                        .path_and_query()
                        .map_or(req.uri().path(), |p| p.as_str())
                        .to_string(),
                    body_bytes,
                    status: resp.status().as_u16(),
                });
            }
        }
        resp
    }

    /// The response to a request whose body has been read.
    async fn answer(&self, req: &Request<()>) -> Response<Full<Bytes>> {
        let host = host_of(req);
        let recorded = self.site.is_recorded();
        if !recorded && req.method() != Method::GET && req.method() != Method::HEAD {
            let mut r = plain(
                StatusCode::METHOD_NOT_ALLOWED,
                "only GET and HEAD are served\n".into(),
            );
            r.headers_mut()
                .insert(hyper::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return r;
        }
        if !self.hosts.contains_key(&host) {
            let mut known: Vec<&str> = self.site.hosts();
            known.truncate(8);
            return plain(
                StatusCode::NOT_FOUND,
                format!(
                    "unknown host '{host}': this server serves site '{}' on {}{}\n",
                    self.site.name,
                    known.join(", "),
                    if self.site.hosts().len() > 8 {
                        ", ..."
                    } else {
                        ""
                    }
                ),
            );
        }
        let path = req
            .uri()
            .path_and_query()
            .map_or(req.uri().path(), |p| p.as_str());
        let Some(i) = self.site.find_request(&host, req.method().as_str(), path) else {
            return plain(
                StatusCode::NOT_FOUND,
                format!("no resource {} {path} on {host}\n", req.method()),
            );
        };
        let think = match (self.delay_from_har, self.site.recorded(i)) {
            // A hand-edited site.json may hold any number: a negative or
            // NaN wait is none, a huge one an hour (the importer's limit).
            (true, Some(rec)) => {
                Duration::try_from_secs_f64((rec.wait_ms / 1e3).clamp(0.0, 3600.0))
                    .unwrap_or(Duration::ZERO)
            }
            _ => self.delay,
        };
        let think = match i == self.document {
            true => think + self.think,
            false => think,
        };
        if !think.is_zero() {
            tokio::time::sleep(think).await;
        }
        if let Some(rec) = self.site.recorded(i) {
            return self.recorded_response(req, i, rec, req.method() == Method::HEAD);
        }
        let r = &self.site.resources[i];
        let not_modified = self.not_modified(req, i, Some(BUILTIN_MODIFIED));
        let body = if req.method() == Method::HEAD || not_modified {
            Bytes::new()
        } else {
            self.bodies[i].clone()
        };
        let mut resp = Response::new(Full::new(body));
        if not_modified {
            *resp.status_mut() = StatusCode::NOT_MODIFIED;
        }
        let h = resp.headers_mut();
        h.insert(
            CONTENT_TYPE,
            HeaderValue::from_static(r.kind.content_type()),
        );
        if !not_modified {
            h.insert(CONTENT_LENGTH, HeaderValue::from(r.size));
        }
        h.insert(
            CACHE_CONTROL,
            HeaderValue::from_static(match r.kind {
                site::Kind::Html => "no-cache",
                _ => "public, max-age=86400",
            }),
        );
        h.insert(hyper::header::ETAG, self.etags[i].clone());
        if let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(BUILTIN_MODIFIED)) {
            h.insert(hyper::header::LAST_MODIFIED, v);
        }
        self.served_headers(h);
        resp
    }

    /// What every response of a site carries, built-in or recorded: CORS
    /// for any origin (sharded and imported sites serve fonts to pages of
    /// another origin, which browsers allow only with CORS, as real CDNs
    /// do), the Alt-Svc naming h3 when it is served (without it Chromium,
    /// sent to QUIC by --origin-to-force-quic-on, never learns the hosts
    /// speak QUIC and holds a page's images to 10 in flight over h3:
    /// docs/crosscheck.md, "An imported page's Alt-Svc"), and the common
    /// headers.
    fn served_headers(&self, h: &mut hyper::HeaderMap) {
        h.insert(ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        if let Some(alt_svc) = &self.alt_svc {
            h.insert(hyper::header::ALT_SVC, alt_svc.clone());
        }
        common_headers(h);
    }
}

impl Content {
    /// An imported page's response: its status, the headers that matter
    /// (content-type, cache-control, location; bodies are served decoded, so
    /// no content-encoding) and its recorded (or generated) body.
    fn recorded_response(
        &self,
        req: &Request<()>,
        i: usize,
        rec: &site::Recorded,
        head: bool,
    ) -> Response<Full<Bytes>> {
        // The recording's dates, moved to now.
        let shift = |name: &str| -> Option<std::time::SystemTime> {
            let recorded = httpdate::parse_http_date(rec.header("date")?).ok()?;
            let t = httpdate::parse_http_date(rec.header(name)?).ok()?;
            let now = std::time::SystemTime::now();
            Some(match t.duration_since(recorded) {
                Ok(after) => now + after,
                Err(e) => now.checked_sub(e.duration()).unwrap_or(now),
            })
        };
        let modified = shift("last-modified");
        let ok = (200..300).contains(&rec.status);
        let not_modified = ok && rec.method == "GET" && self.not_modified(req, i, modified);
        let body = if head || not_modified {
            Bytes::new()
        } else {
            self.bodies[i].clone()
        };
        let len = self.bodies[i].len();
        let mut resp = Response::new(Full::new(body));
        *resp.status_mut() = match not_modified {
            true => StatusCode::NOT_MODIFIED,
            false => StatusCode::from_u16(rec.status).unwrap_or(StatusCode::OK),
        };
        let h = resp.headers_mut();
        if let Some(v) = rec
            .header("etag")
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            h.insert(hyper::header::ETAG, v);
        }
        for (name, t) in [
            (hyper::header::LAST_MODIFIED, modified),
            (hyper::header::EXPIRES, shift("expires")),
        ] {
            if let Some(v) = t.and_then(|t| HeaderValue::from_str(&httpdate::fmt_http_date(t)).ok())
            {
                h.insert(name, v);
            }
        }
        // An Expires that is no date (`0`, `-1`) means already expired.
        if let (None, Some(v)) = (shift("expires"), rec.header("expires")) {
            if let Ok(v) = HeaderValue::from_str(v) {
                h.insert(hyper::header::EXPIRES, v);
            }
        }
        let kind = self.site.resources[i].kind;
        let ct = rec.header("content-type").unwrap_or(kind.content_type());
        h.insert(
            CONTENT_TYPE,
            HeaderValue::from_str(ct)
                .unwrap_or_else(|_| HeaderValue::from_static(kind.content_type())),
        );
        if let Some(v) = rec
            .header("cache-control")
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            h.insert(CACHE_CONTROL, v);
        }
        if let Some(v) = rec
            .header("location")
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            h.insert(hyper::header::LOCATION, v);
        }
        if !(not_modified
            || rec.status == 204
            || rec.status == 304
            || (100..200).contains(&rec.status))
        {
            h.insert(CONTENT_LENGTH, HeaderValue::from(len));
        }
        self.served_headers(h);
        resp
    }
}

/// The built-in sites' Last-Modified: their content is made, never edited.
const BUILTIN_MODIFIED: std::time::SystemTime = std::time::UNIX_EPOCH;

/// A strong ETag of a body: its 64-bit FNV-1a hash.
fn etag(body: &Bytes) -> HeaderValue {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in body.iter() {
        h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
    }
    HeaderValue::from_str(&format!("\"{h:016x}\"")).unwrap_or(HeaderValue::from_static("\"0\""))
}

impl Content {
    /// Whether a GET or HEAD of resource `i` (modified at `modified`, if
    /// known) is conditional and the stored copy still good: If-None-Match
    /// naming its ETag (weak comparison, `*` too), or, without
    /// If-None-Match, If-Modified-Since not before `modified` (RFC 9110
    /// §13.1.1, §13.1.3).
    fn not_modified(
        &self,
        req: &Request<()>,
        i: usize,
        modified: Option<std::time::SystemTime>,
    ) -> bool {
        if req.method() != Method::GET && req.method() != Method::HEAD {
            return false;
        }
        let headers = req.headers();
        let recorded_tag = self
            .site
            .recorded(i)
            .map(|r| r.header("etag").map(str::to_string));
        let tag = match recorded_tag {
            Some(t) => t,
            None => self.etags[i].to_str().ok().map(str::to_string),
        };
        if let Some(inm) = headers.get(hyper::header::IF_NONE_MATCH) {
            let weak = |t: &str| t.trim().trim_start_matches("W/").to_string();
            let Some(tag) = tag else { return false };
            return inm
                .to_str()
                .map(|v| {
                    v.split(',')
                        .any(|t| t.trim() == "*" || weak(t) == weak(&tag))
                })
                .unwrap_or(false);
        }
        let since = headers
            .get(hyper::header::IF_MODIFIED_SINCE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| httpdate::parse_http_date(v).ok());
        match (since, modified) {
            // HTTP dates are whole seconds.
            (Some(since), Some(m)) => {
                let secs = |t: std::time::SystemTime| {
                    t.duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs())
                };
                secs(m) <= secs(since)
            }
            _ => false,
        }
    }
}

fn common_headers(h: &mut hyper::HeaderMap) {
    h.insert(SERVER, HeaderValue::from_static(SERVER_NAME));
    if let Ok(v) = HeaderValue::from_str(&httpdate::fmt_http_date(std::time::SystemTime::now())) {
        h.insert(DATE, v);
    }
}

/// The host a request names (its URI's, else its Host header's), in lower case.
fn host_of(req: &Request<()>) -> String {
    req.uri()
        .host()
        .map(str::to_string)
        .or_else(|| {
            req.headers()
                .get(hyper::header::HOST)
                .and_then(|h| h.to_str().ok())
                .map(|h| strip_port(h).to_string())
        })
        .unwrap_or_default()
        .to_ascii_lowercase()
}

/// A request's path with its query.
fn path_of(req: &Request<()>) -> &str {
    req.uri()
        .path_and_query()
        .map_or(req.uri().path(), |p| p.as_str())
}

/// The scheme a request came on (its URI's; else https) and the port its
/// authority names, as `:port` (empty when it names none).
fn scheme_and_port(req: &Request<()>) -> (String, String) {
    let scheme = req.uri().scheme_str().unwrap_or("https").to_string();
    let port = req
        .uri()
        .port_u16()
        .or_else(|| {
            let h = req.headers().get(hyper::header::HOST)?.to_str().ok()?;
            let (_, p) = h.rsplit_once(':')?;
            (!h.ends_with(']')).then(|| p.parse().ok()).flatten()
        })
        .map_or(String::new(), |p| format!(":{p}"));
    (scheme, port)
}

fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split(']').next().map_or(host, |h| &h[1..]);
    }
    host.rsplit_once(':').map_or(host, |(h, _)| h)
}

/// A short text response (errors).
pub fn plain(status: StatusCode, text: String) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(text)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    common_headers(r.headers_mut());
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(url: &str) -> Request<()> {
        Request::builder().uri(url).body(()).unwrap()
    }

    /// 103's links and pushes are for the document alone: its critical
    /// resources (`site::critical`), pushed only on its own host.
    #[test]
    fn hints_and_pushes_name_the_documents_critical_resources() {
        let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
        let critical = site::critical::critical(&site);
        let mut content = Content::new(site.clone(), crate::ServerDelay::None);
        let doc = get("https://www.youtube.com/");
        assert!(content.is_document(&doc));
        assert!(content.early_hints(&doc).is_none(), "off by default");
        assert!(content.pushes(&doc).is_empty(), "none by default");
        content.early_hints = true;
        let hints = content.early_hints(&doc).unwrap();
        assert_eq!(hints.status(), StatusCode::EARLY_HINTS);
        let links: Vec<&str> = hints
            .headers()
            .get_all(hyper::header::LINK)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect();
        let preloads = links.iter().filter(|l| l.contains("rel=preload")).count();
        assert_eq!(preloads, critical.len());
        assert!(
            links.contains(&"<https://s.ytimg.com>; rel=preconnect"),
            "{links:?}"
        );
        let css = &site.resources[critical[0]];
        let other = get(&format!("https://{}{}", css.host, css.path));
        assert!(content.early_hints(&other).is_none());
        // Pushes: youtube's critical resources are on its CDN, not its own
        // host; mirrored, all are its own.
        content.push = crate::Push::Critical;
        assert!(content.pushes(&doc).is_empty());
        let mirror = site::Layout::Mirror.apply(&site).unwrap();
        let mut content = Content::new(mirror.clone(), crate::ServerDelay::None);
        content.push = crate::Push::Critical;
        let pushed: Vec<String> = content
            .pushes(&get("http://www.youtube.com:8080/"))
            .iter()
            .map(|(r, _)| r.uri().to_string())
            .collect();
        let want: Vec<String> = site::critical::critical(&mirror)
            .iter()
            .map(|&i| format!("http://www.youtube.com:8080{}", mirror.resources[i].path))
            .collect();
        assert_eq!(pushed, want);
        content.push = crate::Push::All;
        assert_eq!(
            content.pushes(&get("https://www.youtube.com/")).len(),
            mirror.resources.len() - 1
        );
    }

    /// `think` delays the document alone, after `delay` (virtual time).
    #[tokio::test(start_paused = true)]
    async fn the_think_time_is_the_documents_alone() {
        let site = site::builtin("icons", site::DEFAULT_SEED).unwrap();
        let png = format!(
            "https://{}{}",
            site.resources[1].host, site.resources[1].path
        );
        let mut content = Content::new(site, crate::ServerDelay::Fixed(Duration::from_millis(10)));
        content.think = Duration::from_millis(300);
        for (url, wait) in [("https://icons.spdylab.test/", 310), (png.as_str(), 10)] {
            let start = tokio::time::Instant::now();
            let r = content.respond_read(get(url), 0).await;
            assert_eq!(r.status(), 200, "{url}");
            assert_eq!(start.elapsed(), Duration::from_millis(wait), "{url}");
        }
    }

    /// A recorded page's responses carry what a built-in site's do: CORS
    /// and, when h3 is served, its Alt-Svc.
    #[tokio::test]
    async fn recorded_and_built_in_responses_name_h3_alike() {
        let har = include_bytes!("../../../tests/data/pagexray-http2-chrome.har");
        let (recorded, _) = site::har::import("pagexray", &har[..]).unwrap();
        let built_in = site::builtin("icons", site::DEFAULT_SEED).unwrap();
        for site in [recorded, built_in] {
            let url = format!(
                "https://{}{}",
                site.resources[0].host, site.resources[0].path
            );
            let mut content = Content::new(site, crate::ServerDelay::None);
            let r = content.respond_read(get(&url), 0).await;
            assert!(r.headers().get(hyper::header::ALT_SVC).is_none(), "{url}");
            content.alt_svc = Some(HeaderValue::from_static("h3=\":443\"; ma=86400"));
            let r = content.respond_read(get(&url), 0).await;
            assert_eq!(r.status(), 200, "{url}");
            let h = r.headers();
            assert_eq!(h[hyper::header::ALT_SVC], "h3=\":443\"; ma=86400", "{url}");
            assert_eq!(h[ACCESS_CONTROL_ALLOW_ORIGIN], "*", "{url}");
        }
    }

    #[tokio::test]
    async fn a_recorded_post_is_answered_to_a_post_and_the_log_has_its_body() {
        let har = r#"{"log": {"entries": [
            {"request": {"method": "GET", "url": "https://a.test/"},
             "response": {"status": 200, "content": {"mimeType": "text/html", "text": "<p>"}}},
            {"request": {"method": "POST", "url": "https://a.test/track?x=1",
                         "postData": {"text": "{\"e\":1}"}},
             "response": {"status": 200, "content": {"mimeType": "text/plain", "text": "ok"}}}
        ]}}"#;
        let (site, _) = site::har::import("t", har.as_bytes()).unwrap();
        let mut content = Content::new(site, crate::ServerDelay::None);
        let log = RequestLog::default();
        content.log = Some(log.clone());
        let ask = |method: &str, body: &'static [u8]| {
            Request::builder()
                .method(method)
                .uri("https://a.test/track?x=1")
                .body(Full::new(Bytes::from_static(body)))
                .unwrap()
        };
        assert_eq!(content.respond(ask("GET", b"")).await.status(), 404);
        let r = content.respond(ask("POST", b"{\"e\":1}")).await;
        assert_eq!(r.status(), 200);
        let seen = log.lock().unwrap().clone();
        let brief: Vec<(&str, &str, usize, u16)> = seen
            .iter()
            .map(|s| (s.method.as_str(), s.path.as_str(), s.body_bytes, s.status))
            .collect();
        assert_eq!(
            brief,
            [
                ("GET", "/track?x=1", 0, 404),
                ("POST", "/track?x=1", 7, 200)
            ]
        );
        assert_eq!(seen[1].host, "a.test");
    }
}
