//! HAR 1.2 import: a recorded page (Chromium, Firefox, WebPageTest,
//! browsertime, SPDY-era captures) becomes a Site with its recorded side —
//! bodies (`content.text`, base64 or not; generated in the right format and
//! size where the HAR lacks them), queries, methods with their request bodies
//! (`postData`, or `bodySize` bytes), statuses, the headers that
//! matter, think time (`timings.wait`) and redirect chains. Parents come from
//! Chrome's `_initiator` (object or flattened string form, async stacks
//! followed), else from references found in earlier bodies, else the document.
//! Entries that cannot be replayed are listed with their reason. Also the
//! imported directory's `site.json`. No I/O: bytes in, Site out.

use crate::content;
use crate::model::{Kind, Resource, Reveal};
use crate::recorded::Recorded;
use crate::tree::Site;
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
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

/// Milliseconds since the epoch of an ISO 8601 date and time with a zone
/// (`Z` or `±hh:mm`); None if it is not one.
fn iso8601_ms(s: &str) -> Option<f64> {
    let (date, time) = s.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    // Years within a million of ours: the day count below stays an i64.
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || !(-1_000_000..=1_000_000).contains(&y)
    {
        return None;
    }
    let (clock, zone_ms) = match time.find(['Z', 'z', '+', '-']) {
        Some(at) => {
            let (c, z) = time.split_at(at);
            let zone = match z {
                "Z" | "z" => 0.0,
                _ => {
                    let sign = if z.starts_with('-') { -1.0 } else { 1.0 };
                    let (h, mi) = z[1..].split_once(':').unwrap_or((&z[1..], "0"));
                    sign * (h.parse::<f64>().ok()? * 60.0 + mi.parse::<f64>().ok()?) * 60_000.0
                }
            };
            (c, zone)
        }
        None => return None,
    };
    let mut c = clock.splitn(3, ':');
    let (h, mi, sec) = (c.next()?, c.next()?, c.next()?);
    let (h, mi, sec) = (
        h.parse::<f64>().ok()?,
        mi.parse::<f64>().ok()?,
        sec.parse::<f64>().ok()?,
    );
    if !(sec.is_finite() && (0.0..24.0).contains(&h) && (0.0..60.0).contains(&mi)) {
        return None;
    }
    // Days from 1970-01-01 (H. Hinnant's algorithm, `iso8601`'s inverse).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days as f64 * 86_400_000.0 + ((h * 60.0 + mi) * 60.0 + sec) * 1000.0 - zone_ms)
}

/// HAR files larger than this are refused before they are read.
pub const MAX_HAR_BYTES: u64 = 128 << 20;

/// The largest response or request body an entry may record (a site file's
/// limit too); an entry recording more is skipped, saying so.
pub const MAX_RESOURCE_BYTES: u64 = 1_000_000_000_000;

/// The longest think time (`timings.wait`) an entry may record, ms; an entry
/// recording more is skipped, saying so (replay waits it).
pub const MAX_WAIT_MS: f64 = 3_600_000.0;

/// How a resource got its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ParentSource {
    Document,
    Timing,
    Initiator,
    Discovery,
    Redirect,
}

/// An entry that is not replayed, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub url: String,
    pub reason: String,
}

/// What an import did, for the user.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportReport {
    /// Entries in the HAR (all pages).
    pub entries: usize,
    /// Pages in the HAR; the first is imported.
    pub pages: usize,
    pub resources: usize,
    pub bytes: usize,
    pub bodies_recorded: usize,
    pub bodies_generated: usize,
    /// Generated bodies made larger than recorded, to hold their children's references.
    pub bodies_enlarged: usize,
    pub parents_initiator: usize,
    pub parents_discovery: usize,
    pub parents_document: usize,
    pub parents_redirect: usize,
    /// Requests no body names, hung under the script that had just been
    /// received when they started (a beacon, what a script builds).
    #[serde(default)]
    pub parents_timing: usize,
    pub hosts: usize,
    /// The `httpVersion` values seen, with their counts.
    pub http_versions: Vec<(String, usize)>,
    pub skipped: Vec<Skipped>,
}

/// Why a HAR did not import: one line (the caller prefixes the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HarError(pub String);

impl std::fmt::Display for HarError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HarError {}

#[derive(Deserialize)]
struct Har {
    log: Log,
}

#[derive(Deserialize)]
struct Log {
    #[serde(default)]
    pages: Option<Vec<Page>>,
    entries: Vec<Entry>,
}

#[derive(Deserialize)]
struct Page {
    #[serde(default)]
    id: String,
    #[serde(default)]
    title: String,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(default)]
    pageref: Option<String>,
    request: Request,
    response: Response,
    #[serde(default)]
    timings: Option<Timings>,
    #[serde(default, rename = "_initiator")]
    initiator: Option<Value>,
    #[serde(default, rename = "_initiator_detail")]
    initiator_detail: Option<Value>,
    #[serde(default, rename = "_resourceType")]
    resource_type: Option<String>,
    /// When the request started (ISO 8601) and how long it took in all (ms):
    /// what places a request no body names after the script that made it.
    #[serde(default, rename = "startedDateTime")]
    started: Option<String>,
    #[serde(default)]
    time: Option<Value>,
}

#[derive(Deserialize)]
struct Request {
    /// None (null or absent): a GET, as `method_of` says.
    #[serde(default)]
    method: Option<String>,
    url: String,
    #[serde(default, rename = "postData")]
    post_data: Option<Value>,
    #[serde(default, rename = "bodySize")]
    body_size: Value,
}

/// A request's method, upper case. WebPageTest's HTTP/2 captures of 2018
/// write `"method": null` for every request its h2 parser read (their
/// `httpVersion` is ": /": the pseudo-headers were lost): such an entry is
/// one of the page's own loads, a GET. (It did not import at all.)
fn method_of(r: &Request) -> String {
    r.method
        .as_deref()
        .map_or_else(|| "GET".to_string(), str::to_ascii_uppercase)
}

/// The methods replayed: their requests and answers have the framing of a
/// GET or a POST. HEAD is not (its answer announces a body it lacks), and
/// OPTIONS is a browser's CORS preflight, which the browser replaying the
/// page sends on its own if it needs one.
const REPLAYED_METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/// A request's body as recorded: `postData.text` (base64-decoded if the
/// exporter says so; bytes that are not UTF-8 keep only their size), else
/// its `params` joined as `name=value&…` (a form), else `bodySize`
/// bytes; (text, size), (None, 0) when it had none.
fn request_body(r: &Request) -> Result<(Option<String>, usize), String> {
    let post = r.post_data.as_ref();
    let text = post.and_then(|p| p.get("text")).and_then(Value::as_str);
    if let Some(t) = text.filter(|t| !t.is_empty()) {
        let base64 = post.and_then(|p| p.get("encoding")).and_then(Value::as_str) == Some("base64");
        if !base64 {
            return Ok((Some(t.to_string()), t.len()));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(t.trim())
            .map_err(|_| "postData.text is not valid base64".to_string())?;
        let n = bytes.len();
        return Ok((String::from_utf8(bytes).ok(), n));
    }
    let params: Vec<String> = post
        .and_then(|p| p.get("params"))
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .filter_map(|p| {
                    let name = p.get("name")?.as_str()?;
                    let value = p.get("value").and_then(Value::as_str).unwrap_or("");
                    Some(format!("{name}={value}"))
                })
                .collect()
        })
        .unwrap_or_default();
    if !params.is_empty() {
        let form = params.join("&");
        let n = form.len();
        return Ok((Some(form), n));
    }
    let size = number(&r.body_size).filter(|n| *n > 0.0).unwrap_or(0.0);
    if size > MAX_RESOURCE_BYTES as f64 {
        return Err(format!(
            "request bodySize {size:e} beyond the {MAX_RESOURCE_BYTES} bytes a body may have"
        ));
    }
    Ok((None, size as usize))
}

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    status: Value,
    #[serde(default, rename = "httpVersion")]
    http_version: Value,
    #[serde(default)]
    headers: Vec<Header>,
    #[serde(default)]
    content: Option<Content>,
    #[serde(default, rename = "redirectURL")]
    redirect_url: Option<String>,
    #[serde(default, rename = "_error")]
    error: Option<Value>,
    #[serde(default, rename = "bodySize")]
    body_size: Option<f64>,
}

#[derive(Deserialize)]
struct Header {
    name: String,
    value: String,
}

#[derive(Deserialize, Default)]
struct Content {
    #[serde(default)]
    size: Option<f64>,
    #[serde(default, rename = "mimeType")]
    mime: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    encoding: Option<String>,
}

#[derive(Deserialize)]
struct Timings {
    #[serde(default)]
    wait: Option<f64>,
}

/// A URL split for replay: scheme, lower-cased host (no port), path with query.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Url {
    scheme: String,
    host: String,
    path: String,
}

fn parse_url(url: &str) -> Result<Url, String> {
    let (scheme, rest) = url.split_once("://").ok_or("not an absolute URL")?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(format!("{scheme}: URL"));
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    if authority.starts_with('[') {
        return Err("an IPv6 literal host".into());
    }
    let host = authority
        .split(':')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut path = rest[end..].split('#').next().unwrap_or("").to_string();
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    let path = path
        .replace(' ', "%20")
        .replace('"', "%22")
        .replace(|c: char| c.is_whitespace(), "");
    if host.is_empty()
        || !host.split('.').all(|l| {
            !l.is_empty()
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
    {
        return Err(format!("host '{host}' cannot be served"));
    }
    Ok(Url { scheme, host, path })
}

/// `location` resolved against `base` (absolute, scheme-relative, absolute path or relative).
fn resolve(base: &Url, location: &str) -> Option<Url> {
    if location.contains("://") {
        return parse_url(location).ok();
    }
    if let Some(r) = location.strip_prefix("//") {
        return parse_url(&format!("{}://{r}", base.scheme)).ok();
    }
    let path = if location.starts_with('/') {
        location.to_string()
    } else if location.starts_with('?') {
        format!("{}{location}", base.path.split('?').next().unwrap_or("/"))
    } else {
        let dir = base.path.split('?').next().unwrap_or("/");
        let dir = &dir[..dir.rfind('/').map_or(0, |i| i + 1)];
        format!("{dir}{location}")
    };
    parse_url(&format!("{}://{}{path}", base.scheme, base.host)).ok()
}

fn kind_of(mime: &str, path: &str) -> Kind {
    let m = mime.to_ascii_lowercase();
    let ext = path
        .split('?')
        .next()
        .unwrap_or("")
        .rsplit('.')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    if m.contains("html") {
        Kind::Html
    } else if m.contains("css") {
        Kind::Css
    } else if m.contains("javascript") || m.contains("ecmascript") {
        Kind::Js
    } else if m.starts_with("image/") && !m.contains("svg") {
        Kind::Png
    } else if m.starts_with("font/") || m.contains("woff") || m.contains("opentype") {
        Kind::Font
    } else if m.contains("flash") {
        Kind::Flash
    } else if m.is_empty() {
        match ext.as_str() {
            "css" => Kind::Css,
            "js" => Kind::Js,
            "png" | "jpg" | "jpeg" | "gif" | "webp" => Kind::Png,
            "woff" | "woff2" | "ttf" | "otf" => Kind::Font,
            "html" | "htm" => Kind::Html,
            _ => Kind::Other,
        }
    } else {
        Kind::Other
    }
}

fn number(v: &Value) -> Option<f64> {
    v.as_f64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

/// The initiator's URL: Chrome's DevTools object (`parser`'s url; `script`'s
/// first frame with a URL, following async parents), its JSON-string form
/// (`_initiator_detail`), or the flattened string (browsertime, WebPageTest).
fn initiator_url(e: &Entry) -> Option<String> {
    fn from_object(o: &Value) -> Option<String> {
        if let Some(u) = o
            .get("url")
            .and_then(Value::as_str)
            .filter(|u| !u.is_empty())
        {
            return Some(u.to_string());
        }
        let mut stack = o.get("stack");
        while let Some(s) = stack {
            if let Some(frames) = s.get("callFrames").and_then(Value::as_array) {
                if let Some(u) = frames
                    .iter()
                    .filter_map(|f| f.get("url").and_then(Value::as_str))
                    .find(|u| !u.is_empty())
                {
                    return Some(u.to_string());
                }
            }
            stack = s.get("parent");
        }
        None
    }
    for v in [&e.initiator_detail, &e.initiator].into_iter().flatten() {
        let found = match v {
            Value::Object(_) => from_object(v),
            Value::String(s) if s.trim_start().starts_with('{') => serde_json::from_str(s)
                .ok()
                .and_then(|o: Value| from_object(&o)),
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// One kept entry, before the tree is built.
struct Kept {
    url: Url,
    kind: Kind,
    rec: Recorded,
    size: usize,
    location: Option<Url>,
    initiator: Option<String>,
    /// Its start and end on the recording's clock (ms since the epoch).
    span: Option<(f64, f64)>,
}

/// An entry's start and end in ms since the epoch, from `startedDateTime`
/// (ISO 8601 with a zone: `2016-01-24T14:41:46.288Z`, `…+01:00`) and
/// `time`; None when either is missing or unreadable.
fn span_of(e: &Entry) -> Option<(f64, f64)> {
    let start = iso8601_ms(e.started.as_deref()?)?;
    let time = e
        .time
        .as_ref()?
        .as_f64()
        .filter(|t| t.is_finite() && *t >= 0.0)?;
    Some((start, start + time))
}

fn reveal_for(parent: Kind, child: Kind) -> Option<Reveal> {
    match parent {
        Kind::Html if matches!(child, Kind::Css | Kind::Js) => Some(Reveal::Head),
        Kind::Html => Some(Reveal::Body),
        Kind::Css => Some(Reveal::Css),
        Kind::Js => Some(Reveal::Script),
        _ => None,
    }
}

/// Whether `body` references `u`: absolute, scheme-relative, or (from the
/// same host) by its absolute path in an attribute, string or url().
fn references(body: &str, u: &Url, same_host: bool) -> bool {
    reference_at(body, u, same_host).is_some()
}

/// Whether a `content.text` was cut short by the exporter: haralyzer's
/// "... [truncated to save space (N more bytes)]" at its end. Such a body is
/// absent (generated in the recorded size): replaying its first kilobyte as the
/// page would hide every reference after it from a real browser.
fn is_truncated(text: &str) -> bool {
    let t = text.trim_end();
    t.ends_with(" more bytes)]") && t.contains("... [truncated to save space (")
}

/// Where `body` first references `u` (as `references` finds it).
fn reference_at(body: &str, u: &Url, same_host: bool) -> Option<usize> {
    let rel = format!("//{}{}", u.host, u.path);
    let mut forms = vec![rel.clone(), rel.replace('&', "&amp;")];
    if same_host && u.path.len() > 1 {
        let amp = u.path.replace('&', "&amp;");
        for p in [&u.path, &amp] {
            for q in ['"', '\'', '('] {
                forms.push(format!("{q}{p}"));
            }
        }
    }
    forms.iter().filter_map(|f| body.find(f.as_str())).min()
}

/// How an HTML page whose recorded body is `html` reveals a stylesheet or
/// script: by its tag's place, in the head or in the body (`<body` before it).
fn html_reveal(html: &str, u: &Url, same_host: bool) -> Reveal {
    let at = reference_at(html, u, same_host);
    let body = html.find("<body").or_else(|| html.find("<BODY"));
    match (at, body) {
        (Some(a), Some(b)) if a > b => Reveal::Body,
        _ => Reveal::Head,
    }
}

/// Imports the first page of a HAR. `name` names the site (and errors' context is the caller's).
pub fn import(name: &str, bytes: &[u8]) -> Result<(Site, ImportReport), HarError> {
    let log = parse_har(bytes)?.log;
    let mut report = ImportReport {
        entries: log.entries.len(),
        pages: log.pages.as_ref().map_or(0, Vec::len),
        ..ImportReport::default()
    };
    if log.entries.is_empty() {
        return Err(HarError("the HAR has no entries: nothing to replay".into()));
    }
    // The first page (or, without pages, every entry: the first is the document).
    let page = log.pages.as_ref().and_then(|p| p.first());
    let title = page.map(|p| p.title.clone()).unwrap_or_default();
    let (mut kept, by_url) = keep_entries(&log.entries, page, &mut report)?;
    link_redirects(&mut kept, &by_url);
    let mut resources = Placing::new(&kept, &by_url).place(&mut report);
    enlarge_generated_bodies(&kept, &mut resources, &mut report);
    count_imported(&kept, &resources, &mut report);
    let about = about_of(&title, &report);
    let recorded = kept.into_iter().map(|k| k.rec).collect();
    let site = Site::with_recording(name, &about, crate::DEFAULT_SEED, resources, recorded)
        .map_err(|e| HarError(format!("the imported page is not a valid site: {e}")))?;
    Ok((site, report))
}

/// The HAR in `bytes` (a leading UTF-8 BOM ignored), or why it is not one:
/// truncated JSON, not JSON, no `log.entries`, or not a valid HAR.
fn parse_har(bytes: &[u8]) -> Result<Har, HarError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    match serde_json::from_slice::<Value>(bytes) {
        Err(e) if e.is_eof() => Err(HarError(format!(
            "truncated: the JSON ends early (line {}, column {})",
            e.line(),
            e.column()
        ))),
        Err(e) => Err(HarError(format!("not JSON: {e}"))),
        Ok(v) => {
            if v.get("log").and_then(|l| l.get("entries")).is_none() {
                return Err(HarError(
                    "not a HAR: no log.entries (a HAR 1.2 file is {\"log\": {\"entries\": [...]}})"
                        .into(),
                ));
            }
            serde_json::from_value(v).map_err(|e| {
                // from_value's error has no position: the bytes' parse has.
                let e = serde_json::from_slice::<Har>(bytes).err().unwrap_or(e);
                HarError(format!("not a valid HAR: {e}"))
            })
        }
    }
}

/// Each kept entry's index by its URL's host and path.
type UrlIndex = HashMap<(String, String), usize>;

/// Why an entry is not kept: skipped (the reason goes to the report), or a
/// fault that fails the whole import.
enum NotKept {
    Skipped(String),
    Fatal(HarError),
}

impl From<String> for NotKept {
    fn from(reason: String) -> Self {
        NotKept::Skipped(reason)
    }
}

/// The entries of `page` (every entry without pages) that replay can serve,
/// in the HAR's order, and their index by URL; each other entry is in
/// `report.skipped` with its reason, and the HTTP versions seen are counted.
fn keep_entries(
    entries: &[Entry],
    page: Option<&Page>,
    report: &mut ImportReport,
) -> Result<(Vec<Kept>, UrlIndex), HarError> {
    let mut versions: Vec<(String, usize)> = Vec::new();
    let mut kept: Vec<Kept> = Vec::new();
    let mut by_url: UrlIndex = HashMap::new();
    for e in entries {
        let raw = &e.request.url;
        let mut skip = |reason: String| {
            report.skipped.push(Skipped {
                url: raw.chars().take(200).collect(),
                reason,
            })
        };
        if let (Some(p), Some(r)) = (page, &e.pageref) {
            if *r != p.id {
                skip(format!("another page ({r})"));
                continue;
            }
        }
        count_version(&mut versions, e);
        match keep_entry(e, &kept, &by_url) {
            Ok(k) => {
                by_url.insert((k.url.host.clone(), k.url.path.clone()), kept.len());
                kept.push(k);
            }
            Err(NotKept::Skipped(reason)) => skip(reason),
            Err(NotKept::Fatal(e)) => return Err(e),
        }
    }
    report.http_versions = versions;
    if kept.is_empty() {
        return Err(HarError(format!(
            "no entry of the HAR can be replayed ({} skipped: {})",
            report.skipped.len(),
            report
                .skipped
                .first()
                .map_or(String::new(), |s| s.reason.clone())
        )));
    }
    Ok((kept, by_url))
}

/// Counts `e`'s response `httpVersion` in `versions` (in order of first sight).
fn count_version(versions: &mut Vec<(String, usize)>, e: &Entry) {
    let v = match &e.response.http_version {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    match versions.iter_mut().find(|(n, _)| *n == v) {
        Some((_, c)) => *c += 1,
        None => versions.push((v, 1)),
    }
}

/// Entry `e` as replay keeps it, given the entries kept before it; or why not.
fn keep_entry(e: &Entry, kept: &[Kept], by_url: &UrlIndex) -> Result<Kept, NotKept> {
    let raw = &e.request.url;
    let (status, method) = replayable_request(e, kept.is_empty())?;
    // A GET's body (if an exporter recorded one) is not replayed.
    let (request_body, request_body_size) = if method == "GET" {
        (None, 0)
    } else {
        request_body(&e.request)?
    };
    let url = parse_url(raw).map_err(|why| format!("unservable URL: {why}"))?;
    let c = e.response.content.as_ref();
    let mime = c.and_then(|c| c.mime.clone()).unwrap_or_default();
    let (mut headers, location) = kept_headers(e, &mime);
    let redirect = (300..400).contains(&status) && status != 304;
    let target = redirect_target(e, &url, redirect, location, &mut headers)?;
    let body = recorded_body(c, status, redirect)?;
    let recorded_size = recorded_size(e)?;
    let wait = recorded_wait(e)?;
    let size = body.as_ref().map_or(recorded_size, Vec::len);
    if let Some(&j) = by_url.get(&(url.host.clone(), url.path.clone())) {
        return Err(duplicate(raw, &kept[j], body.as_deref(), size, &method));
    }
    let mut kind = kind_of(&mime, &url.path);
    if kept.is_empty() {
        kind = Kind::Html; // the document
    }
    Ok(Kept {
        rec: Recorded {
            method,
            request_body,
            request_body_size,
            scheme: url.scheme.clone(),
            status: if status == 304 { 200 } else { status as u16 },
            headers,
            body,
            wait_ms: wait,
            redirect_to: None,
        },
        url,
        kind,
        size,
        location: target,
        initiator: initiator_url(e),
        span: span_of(e),
    })
}

/// `e`'s response status and request method, or why replay does not serve
/// it: a data: URL, a websocket, a beacon, a failed request, a method not
/// replayed, or (`first`, nothing kept yet) an upload before the document.
fn replayable_request(e: &Entry, first: bool) -> Result<(i64, String), String> {
    let raw = &e.request.url;
    if raw.starts_with("data:") {
        return Err("data: URL".into());
    }
    let rt = e
        .resource_type
        .as_deref()
        .unwrap_or("")
        .to_ascii_lowercase();
    if raw.starts_with("ws:") || raw.starts_with("wss:") || rt == "websocket" {
        return Err("websocket".into());
    }
    if rt == "ping" || rt == "beacon" || rt == "csp_violation_report" {
        return Err("beacon".into());
    }
    let status = number(&e.response.status).unwrap_or(0.0) as i64;
    if status <= 0 || e.response.error.as_ref().is_some_and(|v| !v.is_null()) {
        return Err("failed (no response)".into());
    }
    let method = method_of(&e.request);
    if !REPLAYED_METHODS.contains(&method.as_str()) {
        return Err(match method.as_str() {
            "HEAD" => "method HEAD (its answer has no body to replay)".into(),
            "OPTIONS" => "method OPTIONS (a CORS preflight: the browser's own)".into(),
            _ => format!("method {method}"),
        });
    }
    // The page is navigated to, a GET: an upload before it is the
    // browser's own (WebPageTest records Chrome's OCSP POSTs of the
    // page's certificate first), not the document.
    if first && method != "GET" {
        return Err(format!(
            "method {method} before the page's document (the browser's own, as an OCSP check)"
        ));
    }
    Ok((status, method))
}

/// The response headers replay serves (lower-cased, the first of each; a
/// content-type from the content's `mimeType` when none), and the Location.
fn kept_headers(e: &Entry, mime: &str) -> (Vec<(String, String)>, Option<String>) {
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut location = None;
    for h in &e.response.headers {
        let n = h.name.to_ascii_lowercase();
        match n.as_str() {
            "content-type" | "content-encoding" | "cache-control" | "etag" | "last-modified"
            | "expires" | "date"
                if !headers.iter().any(|(k, _)| *k == n) =>
            {
                headers.push((n, h.value.clone()));
            }
            "location" => location = Some(h.value.clone()),
            _ => {}
        }
    }
    if !headers.iter().any(|(k, _)| k == "content-type") && !mime.is_empty() {
        headers.push(("content-type".into(), mime.to_string()));
    }
    (headers, location)
}

/// Where a `redirect` at `url` leads (its Location, else the HAR's
/// `redirectURL`), pushing the location header replay serves; None when not
/// a redirect; or why a redirect cannot be replayed.
fn redirect_target(
    e: &Entry,
    url: &Url,
    redirect: bool,
    location: Option<String>,
    headers: &mut Vec<(String, String)>,
) -> Result<Option<Url>, String> {
    if !redirect {
        return Ok(None);
    }
    let location = location.or_else(|| e.response.redirect_url.clone().filter(|s| !s.is_empty()));
    let target = location
        .as_deref()
        .and_then(|l| resolve(url, l))
        .ok_or("redirect without a usable Location")?;
    if target.host == url.host && target.path == url.path {
        return Err("redirect to the same URL on another scheme (replay serves one scheme)".into());
    }
    headers.push((
        "location".into(),
        format!("//{}{}", target.host, target.path),
    ));
    Ok(Some(target))
}

/// The response body as recorded: None when absent (or cut short by the
/// exporter) and generated; empty for a redirect or 204 without one.
fn recorded_body(
    c: Option<&Content>,
    status: i64,
    redirect: bool,
) -> Result<Option<Vec<u8>>, String> {
    Ok(match c.and_then(|c| c.text.as_ref()) {
        Some(t) if c.and_then(|c| c.encoding.as_deref()) == Some("base64") => {
            match base64::engine::general_purpose::STANDARD.decode(t.trim()) {
                Ok(b) => Some(b),
                Err(_) => return Err("content.text is not valid base64".into()),
            }
        }
        // haralyzer's fixtures cut bodies short with a note: not the body.
        Some(t) if is_truncated(t) && !redirect => None,
        Some(t) if !t.is_empty() || status == 204 || redirect => Some(t.as_bytes().to_vec()),
        _ if redirect || status == 204 => Some(Vec::new()),
        _ => None,
    })
}

/// The response's recorded size (content size, else body size; 0 when
/// neither), or why it is beyond what a body may have.
fn recorded_size(e: &Entry) -> Result<usize, String> {
    let recorded_size = e
        .response
        .content
        .as_ref()
        .and_then(|c| c.size)
        .filter(|s| *s > 0.0)
        .or(e.response.body_size.filter(|s| *s > 0.0))
        .unwrap_or(0.0);
    if recorded_size > MAX_RESOURCE_BYTES as f64 {
        return Err(format!(
            "response size {recorded_size:e} beyond the {MAX_RESOURCE_BYTES} bytes a body may have"
        ));
    }
    Ok(recorded_size as usize)
}

/// The server's recorded wait (`timings.wait`, 0 when absent), or why it is
/// beyond what replay may wait.
fn recorded_wait(e: &Entry) -> Result<f64, String> {
    let wait = e
        .timings
        .as_ref()
        .and_then(|t| t.wait)
        .filter(|w| *w > 0.0)
        .unwrap_or(0.0);
    if wait > MAX_WAIT_MS {
        return Err(format!(
            "timings.wait {wait:e} ms beyond the {MAX_WAIT_MS} ms (an hour) replay may wait"
        ));
    }
    Ok(wait)
}

/// An entry at the URL (`raw`) of an `earlier` kept one: skipped when the
/// bodies agree (or one is absent), else the import's error.
fn duplicate(raw: &str, earlier: &Kept, body: Option<&[u8]>, size: usize, method: &str) -> NotKept {
    let same = match (&earlier.rec.body, body) {
        (Some(a), Some(b)) => a.as_slice() == b,
        _ => true,
    };
    if !same {
        return NotKept::Fatal(HarError(format!(
            "the URL {raw} appears twice with different bodies ({} and {size} bytes): \
             replay could serve only one; keep one of the entries",
            earlier.size
        )));
    }
    NotKept::Skipped(format!(
        "duplicate of an earlier entry{}",
        if earlier.rec.method == method {
            ""
        } else {
            " with another method"
        }
    ))
}

/// Sets each redirect's `redirect_to`: its target's index, when the target
/// was kept after it.
fn link_redirects(kept: &mut [Kept], by_url: &UrlIndex) {
    for (i, k) in kept.iter_mut().enumerate() {
        if let Some(t) = &k.location {
            k.rec.redirect_to = by_url
                .get(&(t.host.clone(), t.path.clone()))
                .copied()
                .filter(|&j| j > i);
        }
    }
}

/// A kept entry's place in the tree: its parent, how the parent reveals it,
/// and how the parent was found (None for the root).
type Place = (Option<usize>, Reveal, Option<ParentSource>);

/// What placing the kept entries in the tree reads.
struct Placing<'a> {
    kept: &'a [Kept],
    by_url: &'a UrlIndex,
    /// Each redirect's index by its target's.
    redirected: HashMap<usize, usize>,
    /// Each entry's recorded body as text, for a page, stylesheet or script.
    texts: Vec<Option<String>>,
    /// The document: the end of the first entry's redirect chain.
    document: usize,
}

impl<'a> Placing<'a> {
    fn new(kept: &'a [Kept], by_url: &'a UrlIndex) -> Self {
        let redirected: HashMap<usize, usize> = kept
            .iter()
            .enumerate()
            .filter_map(|(i, k)| k.rec.redirect_to.map(|t| (t, i)))
            .collect();
        let texts: Vec<Option<String>> = kept
            .iter()
            .map(|k| match (&k.rec.body, k.kind) {
                (Some(b), Kind::Html | Kind::Css | Kind::Js) => {
                    Some(String::from_utf8_lossy(b).into_owned())
                }
                _ => None,
            })
            .collect();
        // The document: the end of the first entry's redirect chain (a page
        // recorded from `cnn.com` starts with its 301 to `www.cnn.com`; what the
        // HAR cannot place hangs under the page that was finally parsed, not
        // under the redirect's empty body).
        let document = {
            let mut d = 0;
            while let Some(t) = kept[d].rec.redirect_to {
                d = t;
            }
            d
        };
        Placing {
            kept,
            by_url,
            redirected,
            texts,
            document,
        }
    }

    /// The tree's resources, one a kept entry, each with its parent; how
    /// each parent was found is counted in `report`.
    fn place(&self, report: &mut ImportReport) -> Vec<Resource> {
        let mut resources: Vec<Resource> = Vec::with_capacity(self.kept.len());
        for (i, k) in self.kept.iter().enumerate() {
            let (parent, reveal, source) = self.place_of(i, &resources);
            match source {
                Some(ParentSource::Initiator) => report.parents_initiator += 1,
                Some(ParentSource::Discovery) => report.parents_discovery += 1,
                Some(ParentSource::Document) => report.parents_document += 1,
                Some(ParentSource::Redirect) => report.parents_redirect += 1,
                Some(ParentSource::Timing) => report.parents_timing += 1,
                None => {}
            }
            resources.push(Resource {
                host: k.url.host.clone(),
                path: k.url.path.clone(),
                kind: k.kind,
                size: k.size,
                parent,
                reveal,
            });
        }
        resources
    }

    /// Entry `i`'s place, given the `resources` placed before it.
    fn place_of(&self, i: usize, resources: &[Resource]) -> Place {
        let kept = self.kept;
        if i == 0 {
            (None, Reveal::Root, None)
        } else if let Some(&from) = self.redirected.get(&i) {
            // A redirect's target: revealed by the redirect (the chain kept);
            // in the tree, under the redirect if it is a page, else beside it.
            match reveal_for(kept[from].kind, kept[i].kind) {
                Some(rv) => (Some(from), rv, Some(ParentSource::Redirect)),
                None => (
                    resources[from].parent,
                    resources[from].reveal,
                    Some(ParentSource::Redirect),
                ),
            }
        } else {
            match self.by_record(i).or_else(|| {
                self.by_timing(i)
                    .map(|(j, rv)| (j, rv, ParentSource::Timing))
            }) {
                Some((j, rv, source)) => (Some(j), self.reveal(j, i, rv), Some(source)),
                None => {
                    // The page the chain led to, if it is one (a chain may end on
                    // anything): else the first entry, the document by kind.
                    let doc = if self.document < i && kept[self.document].kind == Kind::Html {
                        self.document
                    } else {
                        0
                    };
                    (
                        Some(doc),
                        self.reveal(
                            doc,
                            i,
                            reveal_for(Kind::Html, kept[i].kind).unwrap_or(Reveal::Body),
                        ),
                        Some(ParentSource::Document),
                    )
                }
            }
        }
    }

    /// The reveal of entry `i` from parent `j`: where an HTML parent's
    /// recorded body holds a stylesheet's or script's tag (head or body).
    fn reveal(&self, j: usize, i: usize, rv: Reveal) -> Reveal {
        let (kept, k) = (self.kept, &self.kept[i]);
        match (&self.texts[j], kept[j].kind, rv) {
            (Some(t), Kind::Html, Reveal::Head) => {
                html_reveal(t, &k.url, kept[j].url.host == k.url.host)
            }
            _ => rv,
        }
    }

    /// How `j` can reveal entry `i`: an upload's answer is never parsed (an
    /// XMLHttpRequest's), so it reveals nothing; and an upload is sent from a
    /// page or a script, never a stylesheet.
    fn reveal_from(&self, j: usize, i: usize) -> Option<Reveal> {
        let (kept, k) = (self.kept, &self.kept[i]);
        if kept[j].rec.is_upload() || (k.rec.is_upload() && kept[j].kind == Kind::Css) {
            return None;
        }
        reveal_for(kept[j].kind, k.kind)
    }

    /// Whether entry `j`'s recorded body references entry `i`.
    fn references(&self, j: usize, t: &str, i: usize) -> bool {
        let (kept, k) = (self.kept, &self.kept[i]);
        references(t, &k.url, kept[j].url.host == k.url.host)
    }

    /// Entry `i`'s parent as the recording tells: its initiator, or the
    /// first earlier body that references it.
    fn by_record(&self, i: usize) -> Option<(usize, Reveal, ParentSource)> {
        let lookup = |u: &str| -> Option<usize> {
            let u = parse_url(u).ok()?;
            self.by_url.get(&(u.host, u.path)).copied()
        };
        let by_initiator = self.kept[i]
            .initiator
            .as_deref()
            .and_then(lookup)
            .filter(|&j| j < i)
            .and_then(|j| self.reveal_from(j, i).map(|rv| (j, rv)));
        let by_discovery = || {
            (0..i).find_map(|j| {
                let t = self.texts[j].as_ref()?;
                let rv = self.reveal_from(j, i)?;
                self.references(j, t, i).then_some((j, rv))
            })
        };
        // Chromium names the parser (the document, at the script's tag)
        // as the initiator of what a parser-blocking script creates while
        // the page parses: when the initiator's recorded body does not
        // hold the reference and another body does, that body is the parent.
        let initiator_lacks_it = |j: usize| {
            self.texts[j]
                .as_ref()
                .is_some_and(|t| !self.references(j, t, i))
        };
        match by_initiator {
            Some((j, rv)) if initiator_lacks_it(j) => match by_discovery() {
                Some((d, drv)) if d != j => Some((d, drv, ParentSource::Discovery)),
                _ => Some((j, rv, ParentSource::Initiator)),
            },
            Some((j, rv)) => Some((j, rv, ParentSource::Initiator)),
            None => by_discovery().map(|(j, rv)| (j, rv, ParentSource::Discovery)),
        }
    }

    /// What no body names, on a page whose body was recorded, and not the
    /// favicon (the browser's own, after the page): the script received last
    /// before it started made it (its recorded source computes the URL, as
    /// analytics beacons do).
    fn by_timing(&self, i: usize) -> Option<(usize, Reveal)> {
        let (kept, k) = (self.kept, &self.kept[i]);
        let start = k.span?.0;
        let favicon = k.url.path.split('?').next()?.ends_with(".ico");
        if self.texts[self.document].is_none() || favicon {
            return None;
        }
        (0..i)
            .filter(|&j| kept[j].kind == Kind::Js && !kept[j].rec.is_upload())
            .filter_map(|j| Some((j, kept[j].span?.1)))
            .filter(|&(_, end)| end <= start)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .and_then(|(j, _)| Some((j, reveal_for(Kind::Js, k.kind)?)))
    }
}

/// Generated bodies must hold their children's references: each is made at
/// least the size that takes (counted in `report.bodies_enlarged`).
fn enlarge_generated_bodies(kept: &[Kept], resources: &mut [Resource], report: &mut ImportReport) {
    for i in 0..resources.len() {
        if kept[i].rec.body.is_some() {
            continue;
        }
        let children: Vec<&Resource> = resources.iter().filter(|r| r.parent == Some(i)).collect();
        let grand: Vec<usize> = (0..resources.len())
            .filter(|&c| resources[c].parent == Some(i))
            .map(|c| resources.iter().filter(|r| r.parent == Some(c)).count())
            .collect();
        let uploads: Vec<Option<content::Upload>> = (0..resources.len())
            .filter(|&c| resources[c].parent == Some(i))
            .map(|c| kept[c].rec.upload())
            .collect();
        let min = content::min_size(&resources[i], &children, &grand, &uploads);
        if resources[i].size < min {
            report.bodies_enlarged += 1;
            resources[i].size = min;
        }
    }
}

/// Counts in `report` what the import made: resources, bytes, bodies
/// recorded and generated, hosts.
fn count_imported(kept: &[Kept], resources: &[Resource], report: &mut ImportReport) {
    report.resources = resources.len();
    report.bytes = resources.iter().map(|r| r.size).sum();
    report.bodies_recorded = kept.iter().filter(|k| k.rec.body.is_some()).count();
    report.bodies_generated = kept.len() - report.bodies_recorded;
    let mut hosts: Vec<&str> = resources.iter().map(|r| r.host.as_str()).collect();
    hosts.sort();
    hosts.dedup();
    report.hosts = hosts.len();
}

/// The imported site's `about`: the page's title, resources of entries.
fn about_of(title: &str, report: &ImportReport) -> String {
    format!(
        "imported from a HAR{}: {} of {} entries",
        if title.is_empty() {
            String::new()
        } else {
            format!(" ({})", title.chars().take(80).collect::<String>())
        },
        report.resources,
        report.entries
    )
}

/// The imported directory's `site.json`: the tree, the recorded side and
/// where each recorded body is (`bodies/N`, N the resource's index).
#[derive(Serialize, Deserialize)]
pub struct Stored {
    pub schema: u32,
    pub name: String,
    pub about: String,
    pub seed: u64,
    pub report: ImportReport,
    pub resources: Vec<StoredResource>,
}

#[derive(Serialize, Deserialize)]
pub struct StoredResource {
    pub host: String,
    pub path: String,
    pub kind: Kind,
    pub size: usize,
    pub parent: Option<usize>,
    pub reveal: Reveal,
    #[serde(flatten)]
    pub recorded: Recorded,
    /// The body's file, relative to the directory; None when generated.
    pub body: Option<String>,
}

/// The file name of resource `i`'s recorded body inside the directory.
pub fn body_file(i: usize) -> String {
    format!("bodies/{i:05}")
}

/// `site.json` for an imported site, and the bodies to write beside it.
pub fn store(site: &Site, report: &ImportReport) -> (String, Vec<(String, Vec<u8>)>) {
    let mut files = Vec::new();
    let resources = site
        .resources
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let rec = site.recorded(i).cloned().unwrap_or_else(|| Recorded {
                method: "GET".into(),
                request_body: None,
                request_body_size: 0,
                scheme: "https".into(),
                status: 200,
                headers: vec![("content-type".into(), r.kind.content_type().into())],
                body: None,
                wait_ms: 0.0,
                redirect_to: None,
            });
            let body = rec.body.as_ref().map(|b| {
                files.push((body_file(i), b.clone()));
                body_file(i)
            });
            StoredResource {
                host: r.host.clone(),
                path: r.path.clone(),
                kind: r.kind,
                size: r.size,
                parent: r.parent,
                reveal: r.reveal,
                recorded: rec,
                body,
            }
        })
        .collect();
    let stored = Stored {
        schema: 1,
        name: site.name.clone(),
        about: site.about.clone(),
        seed: site.seed,
        report: report.clone(),
        resources,
    };
    let json = serde_json::to_string_pretty(&stored).expect("a site serializes");
    (json, files)
}

/// Reads `site.json` back; `read(file)` gives a body's bytes.
pub fn load(
    text: &str,
    mut read: impl FnMut(&str) -> Result<Vec<u8>, String>,
) -> Result<(Site, ImportReport), String> {
    let stored: Stored = serde_json::from_str(text).map_err(|e| format!("site.json: {e}"))?;
    if stored.schema != 1 {
        return Err(format!(
            "site.json: schema {} (this spdylab reads 1)",
            stored.schema
        ));
    }
    let mut resources = Vec::new();
    let mut recorded = Vec::new();
    for r in stored.resources {
        let mut rec = r.recorded;
        if let Some(f) = &r.body {
            if f.contains("..") || f.starts_with('/') {
                return Err(format!(
                    "site.json: body file '{f}' is outside the directory"
                ));
            }
            rec.body = Some(read(f)?);
        }
        resources.push(Resource {
            host: r.host,
            path: r.path,
            kind: r.kind,
            size: r.size,
            parent: r.parent,
            reveal: r.reveal,
        });
        recorded.push(rec);
    }
    let site = Site::with_recording(
        &stored.name,
        &stored.about,
        stored.seed,
        resources,
        recorded,
    )
    .map_err(|e| format!("site.json: {e}"))?;
    Ok((site, stored.report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exporters_truncation_note_is_not_a_body() {
        assert!(is_truncated(
            "<html><head>... [truncated to save space (81234 more bytes)]\n"
        ));
        assert!(!is_truncated("<html>a whole page</html>"));
        assert!(!is_truncated("(81234 more bytes)]"));
    }

    fn entry(url: &str, mime: &str, text: Option<&str>, initiator: Value) -> Value {
        let mut content = serde_json::json!({"size": 100, "mimeType": mime});
        if let Some(t) = text {
            content["text"] = t.into();
        }
        serde_json::json!({
            "pageref": "page_1",
            "request": {"method": "GET", "url": url, "headers": []},
            "response": {"status": 200, "httpVersion": "h2", "headers": [{"name": "Content-Type", "value": mime}], "content": content},
            "timings": {"wait": 12.5},
            "_initiator": initiator,
        })
    }

    fn har(entries: Vec<Value>) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({"log": {"version": "1.2", "pages": [{"id": "page_1", "title": "t"}], "entries": entries}})).unwrap()
    }

    #[test]
    fn what_nothing_places_hangs_under_the_page_a_redirect_led_to() {
        // cnn.com/ 301 → www.cnn.com/ (its body not recorded): an image no
        // initiator or body places belongs to www.cnn.com/, whose generated
        // body then references it, not to the redirect's empty body.
        let mut first = entry("https://cnn.test/", "text/html", Some(""), Value::Null);
        first["response"]["status"] = 301.into();
        first["response"]["redirectURL"] = "https://www.cnn.test/".into();
        let h = har(vec![
            first,
            entry("https://www.cnn.test/", "text/html", None, Value::Null),
            entry("https://img.test/a.png", "image/png", None, Value::Null),
        ]);
        let (site, rep) = import("t", &h).unwrap();
        assert_eq!(site.resources[1].parent, Some(0));
        assert_eq!(site.resources[2].parent, Some(1));
        assert_eq!((rep.parents_redirect, rep.parents_document), (1, 1));
        let body = String::from_utf8(site.body(1)).unwrap();
        assert!(body.contains("//img.test/a.png"), "{body}");
    }

    #[test]
    fn parents_come_from_initiators_then_bodies_then_the_document() {
        let html = r#"<html><link rel="stylesheet" href="/a.css?v=1"><script src="https://cdn.test/app.js"></script></html>"#;
        let h = har(vec![
            entry("https://www.test/", "text/html", Some(html), Value::Null),
            entry(
                "https://www.test/a.css?v=1",
                "text/css",
                Some("body{background:url(/bg.png)}"),
                Value::Null,
            ),
            entry(
                "https://cdn.test/app.js",
                "application/javascript",
                None,
                Value::Null,
            ),
            entry("https://www.test/bg.png", "image/png", None, Value::Null),
            // An async script initiator (DevTools object form).
            entry(
                "https://img.test/x.png?a=1",
                "image/png",
                None,
                serde_json::json!({"type": "script", "stack": {"callFrames": [], "parent": {"callFrames": [{"url": "https://cdn.test/app.js"}]}}}),
            ),
            entry("https://img.test/y.png", "image/png", None, Value::Null),
            entry("data:image/png;base64,AAAA", "image/png", None, Value::Null),
        ]);
        let (site, rep) = import("t", &h).unwrap();
        let parent = |p: &str| {
            site.resources[site
                .find_request(
                    &p[..p.find('/').unwrap()],
                    "GET",
                    &p[p.find('/').unwrap()..],
                )
                .unwrap()]
            .parent
        };
        assert_eq!(parent("www.test/a.css?v=1"), Some(0));
        assert_eq!(parent("cdn.test/app.js"), Some(0));
        assert_eq!(parent("www.test/bg.png"), Some(1));
        assert_eq!(parent("img.test/x.png?a=1"), Some(2));
        assert_eq!(
            (
                rep.parents_initiator,
                rep.parents_discovery,
                rep.parents_document
            ),
            (1, 3, 1)
        );
        assert_eq!(rep.skipped.len(), 1);
        assert_eq!(rep.skipped[0].reason, "data: URL");
        assert_eq!((rep.bodies_recorded, rep.bodies_generated), (2, 4));
        assert_eq!(site.body(0), html.as_bytes());
        // The generated script holds its child's reference.
        assert!(String::from_utf8(site.body(2))
            .unwrap()
            .contains("//img.test/x.png?a=1"));
        assert_eq!(site.recorded(1).unwrap().wait_ms, 12.5);
        // Query matching: the closest query wins.
        assert_eq!(site.find_request("www.test", "GET", "/a.css?v=2"), Some(1));
        assert_eq!(site.find_request("www.test", "GET", "/nothing"), None);
        // site.json round trip.
        let (json, files) = store(&site, &rep);
        let files: HashMap<String, Vec<u8>> = files.into_iter().collect();
        let (back, rep2) = load(&json, |f| Ok(files[f].clone())).unwrap();
        assert_eq!(back.resources, site.resources);
        assert_eq!(rep2, rep);
        assert_eq!(
            (0..6).map(|i| back.body(i)).collect::<Vec<_>>(),
            (0..6).map(|i| site.body(i)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_request_whose_method_was_lost_is_a_get() {
        // WebPageTest's h2 captures of 2018 (sitespeed.io compare's
        // en.wikipedia.org chrome HAR): `"method": null`, httpVersion ": /".
        let mut img = entry("https://upload.test/a.png", "image/png", None, Value::Null);
        img["request"]["method"] = Value::Null;
        img["response"]["httpVersion"] = ": /".into();
        let mut icon = entry("https://upload.test/b.png", "image/png", None, Value::Null);
        icon["request"].as_object_mut().unwrap().remove("method");
        let h = har(vec![
            entry("https://www.test/", "text/html", None, Value::Null),
            img,
            icon,
        ]);
        let (site, rep) = import("t", &h).unwrap();
        assert_eq!(rep.resources, 3, "{:?}", rep.skipped);
        assert!(site.find_request("upload.test", "GET", "/a.png").is_some());
        assert!(site.find_request("upload.test", "GET", "/b.png").is_some());
    }

    #[test]
    fn an_upload_before_the_page_is_not_its_document() {
        // WebPageTest's h2 capture of www.filamentgroup.com (PerfCascade):
        // Chrome's two OCSP POSTs come first. The first became the document
        // (a POST of http://ocsp.comodoca.com/ as the page): a browser's
        // navigation GETs it, and replay answered 404 with nothing under it.
        let ocsp = || {
            let mut e = entry(
                "http://ocsp.ca.test/",
                "application/ocsp-response",
                None,
                Value::Null,
            );
            e["request"]["method"] = "POST".into();
            e["request"]["postData"] = serde_json::json!({"mimeType": "", "text": ""});
            e
        };
        let h = har(vec![
            ocsp(),
            ocsp(),
            entry("https://www.test/", "text/html", None, Value::Null),
            entry("https://www.test/a.png", "image/png", None, Value::Null),
        ]);
        let (site, rep) = import("t", &h).unwrap();
        assert_eq!(
            (site.root().host.as_str(), site.root().path.as_str()),
            ("www.test", "/")
        );
        assert_eq!(site.recorded(0).unwrap().method, "GET");
        assert_eq!(rep.resources, 2, "{:?}", rep.skipped);
        assert!(
            rep.skipped[0].reason.contains("before the page's document"),
            "{:?}",
            rep.skipped
        );
    }

    /// What a browser sends for child `url` of generated body `body`: the
    /// upload's XMLHttpRequest with `method`, else a tag's GET.
    fn sends(body: &str, method: &str, url: &str) -> bool {
        body.contains(&format!("x.open(\"{method}\",\"{url}\",false)"))
    }

    #[test]
    fn generated_bodies_send_uploads_with_their_method_not_a_tags_get() {
        // GitHub's home page of 2015 (PerfCascade's captures): no body
        // recorded; the page POSTs to an analytics host, its script POSTs
        // stats as JSON. A tag's GET of either was answered 404: a miss.
        let mut collect = entry("https://ga.test/r/collect", "image/gif", None, Value::Null);
        collect["request"]["method"] = "POST".into();
        collect["request"]["bodySize"] = 296.into();
        let mut stats = entry(
            "https://api.test/stats",
            "application/json",
            None,
            "https://cdn.test/app.js".into(),
        );
        stats["request"]["method"] = "POST".into();
        stats["request"]["postData"] = serde_json::json!({"mimeType": "", "text": "{}"});
        let h = har(vec![
            entry("https://www.test/", "text/html", None, Value::Null),
            entry(
                "https://cdn.test/app.js",
                "application/javascript",
                None,
                Value::Null,
            ),
            collect,
            stats,
        ]);
        let (site, _) = import("t", &h).unwrap();
        assert_eq!(
            site.resources.iter().map(|r| r.parent).collect::<Vec<_>>(),
            [None, Some(0), Some(0), Some(1)]
        );
        let page = String::from_utf8(site.body(0)).unwrap();
        let script = String::from_utf8(site.body(1)).unwrap();
        assert!(sends(&page, "POST", "//ga.test/r/collect"), "{page}");
        assert!(!page.contains("src=\"//ga.test/r/collect\""), "{page}");
        assert!(page.contains("Array(297).join(\"x\")"), "{page}");
        assert!(sends(&script, "POST", "//api.test/stats"), "{script}");
        assert!(!script.contains("inject(\"//api.test/stats\""), "{script}");
        for i in 0..2 {
            assert_eq!(site.body(i).len(), site.resources[i].size, "{i}");
        }
        // A PUT, with no body, under a page too small for its script: the
        // page grows to hold it.
        let mut put = entry("https://www.test/state", "text/plain", None, Value::Null);
        put["request"]["method"] = "PUT".into();
        let mut doc = entry("https://www.test/", "text/html", None, Value::Null);
        doc["response"]["content"]["size"] = 10.into();
        let (site, rep) = import("t", &har(vec![doc, put])).unwrap();
        let page = String::from_utf8(site.body(0)).unwrap();
        assert_eq!(rep.bodies_enlarged, 1);
        assert!(
            page.contains("x.open(\"PUT\",\"//www.test/state\",false);try{x.send(null)}"),
            "{page}"
        );
        assert_eq!(page.len(), site.resources[0].size);
    }

    #[test]
    fn an_upload_is_sent_by_a_page_or_script_and_reveals_nothing() {
        // A POST whose initiator is a stylesheet (a font's CSS whose script
        // reports it) hangs under the page: a stylesheet's url() is a GET. An
        // entry whose initiator is an upload (its answer is an
        // XMLHttpRequest's, never parsed) hangs under the page too.
        let mut post = entry(
            "https://www.test/api.js",
            "application/javascript",
            None,
            "https://www.test/s.css".into(),
        );
        post["request"]["method"] = "POST".into();
        let h = har(vec![
            entry("https://www.test/", "text/html", None, Value::Null),
            entry("https://www.test/s.css", "text/css", None, Value::Null),
            post,
            entry(
                "https://www.test/i.png",
                "image/png",
                None,
                "https://www.test/api.js".into(),
            ),
        ]);
        let (site, _) = import("t", &h).unwrap();
        assert_eq!(
            site.resources.iter().map(|r| r.parent).collect::<Vec<_>>(),
            [None, Some(0), Some(0), Some(0)]
        );
        let page = String::from_utf8(site.body(0)).unwrap();
        assert!(sends(&page, "POST", "//www.test/api.js"), "{page}");
        assert!(page.contains("src=\"//www.test/i.png\""), "{page}");
    }

    #[test]
    fn uploads_keep_their_method_and_body() {
        let post = |url: &str, method: &str, post_data: Value, body_size: Value| {
            let mut e = entry(url, "text/plain", Some("ok"), Value::Null);
            e["request"]["method"] = method.into();
            e["request"]["postData"] = post_data;
            e["request"]["bodySize"] = body_size;
            e
        };
        let h = har(vec![
            entry("https://www.test/", "text/html", Some("<p>"), Value::Null),
            // Firefox 2016: the text recorded.
            post(
                "https://www.test/mob/tracking",
                "POST",
                serde_json::json!({"mimeType": "application/json", "text": "{\"e\":1}"}),
                7.into(),
            ),
            // Only the size recorded.
            post(
                "https://www.test/lite/rum-track?a=1",
                "post",
                Value::Null,
                300.into(),
            ),
            // A form as params, a POST without a body, a PUT, base64.
            post(
                "https://www.test/form",
                "POST",
                serde_json::json!({"mimeType": "application/x-www-form-urlencoded",
                    "params": [{"name": "a", "value": "1"}, {"name": "b", "value": "xy"}]}),
                (-1).into(),
            ),
            post("https://www.test/ping", "POST", Value::Null, 0.into()),
            post(
                "https://www.test/put",
                "PUT",
                serde_json::json!({"text": "aGVsbG8=", "encoding": "base64"}),
                5.into(),
            ),
            post("https://www.test/head", "HEAD", Value::Null, 0.into()),
            post("https://www.test/pre", "OPTIONS", Value::Null, 0.into()),
        ]);
        let (site, rep) = import("t", &h).unwrap();
        assert_eq!(site.resources.len(), 6, "{:?}", rep.skipped);
        let reasons: Vec<&str> = rep.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "method HEAD (its answer has no body to replay)",
                "method OPTIONS (a CORS preflight: the browser's own)"
            ]
        );
        let rec = |path: &str| {
            let i = site
                .find_request("www.test", "POST", path)
                .or_else(|| site.find_request("www.test", "PUT", path));
            site.recorded(i.unwrap_or_else(|| panic!("{path}")))
                .unwrap()
        };
        let body = |path: &str| String::from_utf8(rec(path).request_body_bytes()).unwrap();
        assert_eq!(body("/mob/tracking"), "{\"e\":1}");
        assert_eq!(body("/lite/rum-track?a=1"), "x".repeat(300));
        assert_eq!(rec("/lite/rum-track?a=1").method, "POST");
        assert_eq!(body("/form"), "a=1&b=xy");
        assert_eq!(body("/ping"), "");
        assert_eq!(
            (rec("/put").method.as_str(), body("/put").as_str()),
            ("PUT", "hello")
        );
        assert!(rec("/ping").is_upload() && !site.recorded(0).unwrap().is_upload());
        // Matched with their method only: a GET of a POST's URL is a miss.
        assert_eq!(site.find_request("www.test", "GET", "/mob/tracking"), None);
        assert_eq!(
            site.find_request("www.test", "POST", "/lite/rum-track?a=2"),
            site.find_request("www.test", "POST", "/lite/rum-track?a=1")
        );
        // site.json keeps them.
        let (json, files) = store(&site, &rep);
        let files: HashMap<String, Vec<u8>> = files.into_iter().collect();
        let (back, _) = load(&json, |f| Ok(files[f].clone())).unwrap();
        for i in 0..site.resources.len() {
            assert_eq!(back.recorded(i), site.recorded(i));
        }
        // A method that is no token is refused when the site is built.
        let bad = json.replacen("\"method\": \"PUT\"", "\"method\": \"P T\"", 1);
        let e = load(&bad, |f| Ok(files[f].clone())).err().unwrap();
        assert!(e.contains("is not an HTTP method"), "{e}");
    }

    #[test]
    fn iso_dates() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_392_000_123);
        assert_eq!(iso8601(t), "2026-11-23T00:00:00.123Z");
        for ms in [0, 951_782_400_000, 1_453_646_506_288, 1_795_392_000_123] {
            let t = UNIX_EPOCH + Duration::from_millis(ms);
            assert_eq!(iso8601_ms(&iso8601(t)), Some(ms as f64), "{}", iso8601(t));
        }
        let z = iso8601_ms("2016-01-24T14:41:46.288Z").unwrap();
        assert_eq!(iso8601_ms("2016-01-24T15:41:46.288+01:00"), Some(z));
        assert_eq!(iso8601_ms("2016-01-24T09:11:46.288-05:30"), Some(z));
        for bad in [
            "",
            "2016-01-24",
            "2016-13-24T00:00:00Z",
            "2016-01-24T25:00:00Z",
            "2016-01-24T14:41:46.288",
            "x-y-zT1:2:3Z",
        ] {
            assert_eq!(iso8601_ms(bad), None, "{bad}");
        }
    }

    /// Issue 36, found reading the new date reader and confirmed on the `har`
    /// fuzz target (built with overflow checks: it crashed): a
    /// `startedDateTime` in the year 9223372036854775807 overflowed the day
    /// count (a wrong time in release); a year that far is not read.
    #[test]
    fn fuzz_regression_a_year_beyond_i64_days_is_not_read() {
        for bad in [
            "9223372036854775807-01-01T00:00:00Z",
            "-9223372036854775808-01-01T00:00:00Z",
            "1000001-06-01T00:00:00Z",
        ] {
            assert_eq!(iso8601_ms(bad), None, "{bad}");
        }
        assert!(iso8601_ms("999999-06-01T00:00:00Z").is_some());
    }

    #[test]
    fn what_no_body_names_hangs_under_the_script_received_last_before_it() {
        // A beacon the analytics script builds starts after the script came;
        // the favicon, which no body names either, stays under the page.
        let at = |mut e: Value, start: &str, time: f64| {
            e["startedDateTime"] = format!("2016-01-24T14:41:{start}Z").into();
            e["time"] = time.into();
            e
        };
        let page = r#"<html><script async src="https://ga.test/a.js"></script><script src="/b.js"></script><img src="/x.png"></html>"#;
        let h = har(vec![
            at(
                entry("https://p.test/", "text/html", Some(page), Value::Null),
                "45.818",
                456.0,
            ),
            at(
                entry(
                    "https://ga.test/a.js",
                    "text/javascript",
                    Some("var u='/collect';"),
                    Value::Null,
                ),
                "46.288",
                39.0,
            ),
            at(
                entry(
                    "https://p.test/b.js",
                    "text/javascript",
                    Some("1"),
                    Value::Null,
                ),
                "46.289",
                10.0,
            ),
            at(
                entry("https://p.test/x.png", "image/png", None, Value::Null),
                "46.290",
                100.0,
            ),
            at(
                entry(
                    "https://ga.test/collect?v=1&a=2",
                    "image/gif",
                    None,
                    Value::Null,
                ),
                "46.352",
                19.0,
            ),
            at(
                entry(
                    "https://p.test/favicon.ico",
                    "image/x-icon",
                    None,
                    Value::Null,
                ),
                "46.530",
                10.0,
            ),
            entry("https://p.test/late.png", "image/png", None, Value::Null),
        ]);
        let (site, rep) = import("t", &h).unwrap();
        let parents: Vec<_> = site.resources.iter().map(|r| r.parent).collect();
        assert_eq!(
            parents,
            [None, Some(0), Some(0), Some(0), Some(1), Some(0), Some(0)]
        );
        assert_eq!(site.resources[4].reveal, Reveal::Script);
        assert_eq!(
            (rep.parents_timing, rep.parents_document),
            (1, 2),
            "{rep:?}"
        );
        // Without the page's body nothing is known to be missing from it.
        let h = har(vec![
            at(
                entry("https://p.test/", "text/html", None, Value::Null),
                "45.818",
                456.0,
            ),
            at(
                entry("https://ga.test/a.js", "text/javascript", None, Value::Null),
                "46.288",
                39.0,
            ),
            at(
                entry("https://ga.test/collect", "image/gif", None, Value::Null),
                "46.352",
                19.0,
            ),
        ]);
        let (site, rep) = import("t", &h).unwrap();
        assert_eq!(site.resources[2].parent, Some(0));
        assert_eq!(rep.parents_timing, 0);
    }

    #[test]
    fn bad_input_is_one_line() {
        let e = import("t", b"{\"log\": {\"entries\": [").unwrap_err().0;
        assert!(e.starts_with("truncated"), "{e}");
        let e = import("t", b"{\"name\": 1}").unwrap_err().0;
        assert!(e.starts_with("not a HAR"), "{e}");
        let e = import("t", &har(vec![])).unwrap_err().0;
        assert!(e.contains("no entries"), "{e}");
        let h = har(vec![
            entry("https://www.test/", "text/html", Some("a"), Value::Null),
            entry("https://www.test/", "text/html", Some("b"), Value::Null),
        ]);
        let e = import("t", &h).unwrap_err().0;
        assert!(e.contains("appears twice with different bodies"), "{e}");
    }

    #[test]
    fn fuzz_regression_a_field_of_the_wrong_type_is_named_by_its_place() {
        // Found by tests/fuzz_har.rs: the error had no position.
        let mut e = entry("https://www.test/", "text/html", Some("<p>"), Value::Null);
        e["response"]["headers"] = Value::Null;
        let e = import("t", &har(vec![e])).unwrap_err().0;
        assert!(
            e.starts_with("not a valid HAR: invalid type: null") && e.contains("line 1 column"),
            "{e}"
        );
    }

    #[test]
    fn fuzz_regression_sizes_and_waits_beyond_the_limits_are_skipped() {
        // Found by tests/fuzz_har.rs: a size of 9.2e18 became a resource of
        // usize::MAX bytes (the report's total overflowed; replay would make
        // it), and a wait of 1e300 ms would panic replay's Duration.
        let mut big = entry("https://www.test/big.png", "image/png", None, Value::Null);
        big["response"]["content"]["size"] = 9.2e18.into();
        let mut slow = entry("https://www.test/slow.png", "image/png", None, Value::Null);
        slow["timings"]["wait"] = 1e300.into();
        let mut upload = entry("https://www.test/up", "text/plain", Some("ok"), Value::Null);
        upload["request"]["method"] = "POST".into();
        upload["request"]["bodySize"] = 1e20.into();
        let h = har(vec![
            entry("https://www.test/", "text/html", Some("<p>"), Value::Null),
            big,
            slow,
            upload,
        ]);
        let (site, rep) = import("t", &h).unwrap();
        assert_eq!(site.resources.len(), 1);
        let reasons: Vec<&str> = rep.skipped.iter().map(|s| s.reason.as_str()).collect();
        assert!(
            reasons[0].starts_with("response size 9.2e18 beyond"),
            "{reasons:?}"
        );
        assert!(reasons[1].starts_with("timings.wait 1e300 ms beyond"));
        assert!(reasons[2].starts_with("request bodySize 1e20 beyond"));
    }

    #[test]
    fn fuzz_regression_a_redirect_chain_ending_on_no_page_leaves_the_rest_under_the_first() {
        // Found by tests/fuzz_har.rs: the chain's end (a script) was taken
        // for the page, and a stylesheet under it made an invalid site.
        let mut first = entry("https://www.test/", "text/html", Some(""), Value::Null);
        first["response"]["status"] = 302.into();
        first["response"]["redirectURL"] = "https://www.test/app.js".into();
        let h = har(vec![
            first,
            entry(
                "https://www.test/app.js",
                "application/javascript",
                None,
                Value::Null,
            ),
            entry("https://www.test/a.css", "text/css", None, Value::Null),
        ]);
        let (site, rep) = import("t", &h).unwrap();
        assert_eq!(site.resources[2].parent, Some(0));
        assert_eq!((rep.parents_redirect, rep.parents_document), (1, 1));
    }

    #[test]
    fn redirects_are_kept_as_chains_and_scheme_upgrades_collapse() {
        let mut r = entry("http://www.test/", "text/html", None, Value::Null);
        r["response"]["status"] = 301.into();
        r["response"]["headers"] =
            serde_json::json!([{"name": "Location", "value": "https://www.test/"}]);
        let mut r2 = entry("https://www.test/", "text/html", None, Value::Null);
        r2["response"]["status"] = 302.into();
        r2["response"]["redirectURL"] = "/home?x=1".into();
        let h = har(vec![
            r,
            r2,
            entry(
                "https://www.test/home?x=1",
                "text/html",
                Some("<p>"),
                Value::Null,
            ),
        ]);
        let (site, rep) = import("t", &h).unwrap();
        assert_eq!(rep.skipped.len(), 1, "{:?}", rep.skipped);
        assert_eq!(site.resources.len(), 2);
        let rec = site.recorded(0).unwrap();
        assert_eq!((rec.status, rec.redirect_to), (302, Some(1)));
        assert_eq!(rec.header("location"), Some("//www.test/home?x=1"));
        assert_eq!(site.resources[1].parent, Some(0));
        assert_eq!(rep.parents_redirect, 1);
    }
}
