//! The model's HTTP cache for the repeat view (`--view repeat`, issue 38;
//! docs/repeat-view.md), sans-I/O: every decision takes the time as an
//! argument (`SystemTime`, the clock the server's `Date` is written in), so
//! unit tests run it in virtual time.
//!
//! A private (browser) cache as RFC 9111 has it, for GETs:
//! - **stored**: a 200, 203, 204, 300, 301, 308, 404, 405, 410, 414 or 501
//!   response without `no-store`, that has an explicit freshness (`max-age`,
//!   `Expires`), a heuristic one (`Last-Modified`, §4.2.2) or a validator
//!   (`ETag`, `Last-Modified`) to revalidate it with;
//! - **fresh** while its freshness lifetime (§4.2.1: `max-age`, else
//!   `Expires` − `Date`, else 10 % of `Date` − `Last-Modified`, as Chromium)
//!   exceeds its current age (§4.2.3: apparent age, `Age`, the response
//!   delay and the time resident); `no-cache` in the response, or
//!   `max-age=0` in the request (the 2014 Chrome header set sends it on the
//!   document, as a reload does), makes it stale;
//! - **stale** with a validator: the request carries `If-None-Match` (the
//!   ETag) and/or `If-Modified-Since` (Last-Modified); a 304 refreshes the
//!   stored headers (§4.3.4) and the stored body is used;
//! - stale without one: fetched again as if never seen.
//!
//! Not modelled: `Vary` (the model sends the same headers on every load),
//! `s-maxage` and other shared-cache directives, `stale-while-revalidate`,
//! invalidation by unsafe methods, size limits.

use bytes::Bytes;
use std::collections::HashMap;
use std::time::{Duration, SystemTime};

/// The response headers a cache reads (names in lower case), as received.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheHeaders {
    pub cache_control: Option<String>,
    pub expires: Option<String>,
    pub date: Option<String>,
    pub last_modified: Option<String>,
    pub etag: Option<String>,
    pub age: Option<String>,
}

impl CacheHeaders {
    /// The cache's headers among `pairs` (name, value); names compared
    /// without regard to case, the first of each kept.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> CacheHeaders {
        let mut h = CacheHeaders::default();
        for (name, value) in pairs {
            let slot = match name.to_ascii_lowercase().as_str() {
                "cache-control" => &mut h.cache_control,
                "expires" => &mut h.expires,
                "date" => &mut h.date,
                "last-modified" => &mut h.last_modified,
                "etag" => &mut h.etag,
                "age" => &mut h.age,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(value.trim().to_string());
            }
        }
        h
    }

    /// The headers of an `http` response head.
    pub fn of(headers: &http::HeaderMap) -> CacheHeaders {
        CacheHeaders::from_pairs(
            headers
                .iter()
                .filter_map(|(n, v)| Some((n.as_str(), v.to_str().ok()?))),
        )
    }

    /// A directive of Cache-Control (`max-age`, `no-cache`, …): Some(value)
    /// when present (an empty value for one without `=`).
    fn directive(&self, name: &str) -> Option<String> {
        self.cache_control.as_deref()?.split(',').find_map(|d| {
            let d = d.trim();
            let (k, v) = d.split_once('=').unwrap_or((d, ""));
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().trim_matches('"').to_string())
        })
    }

    fn seconds(&self, name: &str) -> Option<u64> {
        self.directive(name)?.parse().ok()
    }

    fn time(v: &Option<String>) -> Option<SystemTime> {
        httpdate::parse_http_date(v.as_deref()?).ok()
    }

    /// Updates these headers with those a 304 carried (RFC 9111 §4.3.4).
    fn refresh(&mut self, from: &CacheHeaders) {
        let pairs = [
            (&mut self.cache_control, &from.cache_control),
            (&mut self.expires, &from.expires),
            (&mut self.date, &from.date),
            (&mut self.last_modified, &from.last_modified),
            (&mut self.etag, &from.etag),
            (&mut self.age, &from.age),
        ];
        for (mine, theirs) in pairs {
            if theirs.is_some() {
                mine.clone_from(theirs);
            }
        }
    }
}

/// Statuses a cache may store, and use heuristic freshness for (RFC 9110
/// §15.1 "heuristically cacheable").
const CACHEABLE: [u16; 11] = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501];

/// Heuristic freshness: this fraction of `Date` − `Last-Modified` (RFC 9111
/// §4.2.2's "10 %", as Chromium's HttpResponseHeaders::GetFreshnessLifetimes).
const HEURISTIC_FRACTION: f64 = 0.1;

/// One stored response.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    pub status: u16,
    pub content_type: String,
    pub headers: CacheHeaders,
    pub body: Bytes,
    /// When the request that got it went out, and when its head came.
    pub request_time: SystemTime,
    pub response_time: SystemTime,
}

impl Stored {
    /// The freshness lifetime (RFC 9111 §4.2.1); zero under `no-cache`.
    pub fn freshness_lifetime(&self) -> Duration {
        let h = &self.headers;
        if h.directive("no-cache").is_some() || h.directive("no-store").is_some() {
            return Duration::ZERO;
        }
        if let Some(s) = h.seconds("max-age") {
            return Duration::from_secs(s);
        }
        let date = CacheHeaders::time(&h.date).unwrap_or(self.response_time);
        if h.expires.is_some() {
            // An Expires that cannot be read is in the past (§5.3).
            return CacheHeaders::time(&h.expires)
                .and_then(|e| e.duration_since(date).ok())
                .unwrap_or(Duration::ZERO);
        }
        match CacheHeaders::time(&h.last_modified) {
            Some(lm) if CACHEABLE.contains(&self.status) => date
                .duration_since(lm)
                .map(|d| d.mul_f64(HEURISTIC_FRACTION))
                .unwrap_or(Duration::ZERO),
            _ => Duration::ZERO,
        }
    }

    /// Its current age at `now` (RFC 9111 §4.2.3).
    pub fn current_age(&self, now: SystemTime) -> Duration {
        let h = &self.headers;
        let date = CacheHeaders::time(&h.date).unwrap_or(self.response_time);
        let apparent = self
            .response_time
            .duration_since(date)
            .unwrap_or(Duration::ZERO);
        let delay = self
            .response_time
            .duration_since(self.request_time)
            .unwrap_or(Duration::ZERO);
        let age = Duration::from_secs(h.age.as_deref().and_then(|a| a.parse().ok()).unwrap_or(0));
        let initial = apparent.max(age + delay);
        let resident = now
            .duration_since(self.response_time)
            .unwrap_or(Duration::ZERO);
        initial + resident
    }

    /// Whether it may be used without asking the server at `now`.
    pub fn is_fresh(&self, now: SystemTime) -> bool {
        self.freshness_lifetime() > self.current_age(now)
    }

    /// The conditional request's headers: If-None-Match with its ETag,
    /// If-Modified-Since with its Last-Modified (empty: nothing to ask with).
    pub fn validators(&self) -> Vec<(String, String)> {
        let mut v = Vec::new();
        if let Some(etag) = &self.headers.etag {
            v.push(("if-none-match".to_string(), etag.clone()));
        }
        if let Some(lm) = &self.headers.last_modified {
            v.push(("if-modified-since".to_string(), lm.clone()));
        }
        v
    }
}

/// What the cache says of a request about to be made.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Not stored, or stale with nothing to revalidate with: a plain request.
    Fetch,
    /// Fresh: used as stored, no request.
    Use(Box<Stored>),
    /// Stale (or the request asks to revalidate): a conditional request
    /// with these headers; a 304 means the stored response is used.
    Revalidate(Vec<(String, String)>),
}

/// How a page's resource was got, as its HAR entry says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheUse {
    /// Over the network, in full.
    #[default]
    Network,
    /// From the cache, fresh: no request.
    Hit,
    /// A conditional request answered 304: the body from the cache.
    Revalidated,
}

/// A browser's HTTP cache, by URL (scheme, host and path).
#[derive(Debug, Default, Clone)]
pub struct HttpCache {
    entries: HashMap<String, Stored>,
}

impl HttpCache {
    pub fn new() -> HttpCache {
        HttpCache::default()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// What to do for a GET of `url` at `now`; `revalidate`: the request
    /// itself asks for it (`cache-control: max-age=0` or `no-cache`).
    pub fn decide(&self, url: &str, now: SystemTime, revalidate: bool) -> Decision {
        let Some(s) = self.entries.get(url) else {
            return Decision::Fetch;
        };
        if !revalidate && s.is_fresh(now) {
            return Decision::Use(Box::new(s.clone()));
        }
        match s.validators() {
            v if v.is_empty() => Decision::Fetch,
            v => Decision::Revalidate(v),
        }
    }

    /// Stores a complete response to a GET of `url`, if it may be stored
    /// (see the module's words); whether it was.
    pub fn store(&mut self, url: &str, stored: Stored) -> bool {
        let h = &stored.headers;
        let storable = CACHEABLE.contains(&stored.status)
            && h.directive("no-store").is_none()
            && (stored.freshness_lifetime() > Duration::ZERO || !stored.validators().is_empty());
        if storable {
            self.entries.insert(url.to_string(), stored);
        } else {
            self.entries.remove(url);
        }
        storable
    }

    /// A 304 to the conditional request for `url`: the stored response's
    /// headers refreshed with the 304's and its times with this exchange's;
    /// the response to use (None: nothing stored, a 304 to use as it is).
    pub fn not_modified(
        &mut self,
        url: &str,
        headers: &CacheHeaders,
        request_time: SystemTime,
        response_time: SystemTime,
    ) -> Option<Stored> {
        let s = self.entries.get_mut(url)?;
        s.headers.refresh(headers);
        s.request_time = request_time;
        s.response_time = response_time;
        Some(s.clone())
    }
}

/// Whether a request's own headers ask the cache to revalidate (RFC 9111
/// §5.2.1: `max-age=0` or `no-cache`).
pub fn request_revalidates(headers: &[(String, String)]) -> bool {
    headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("cache-control")
            && v.split(',').any(|d| {
                let d = d.trim().to_ascii_lowercase();
                d == "no-cache" || d == "max-age=0"
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Virtual time: seconds after a fixed instant.
    fn t(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_400_000_000 + secs)
    }

    fn date(secs: u64) -> String {
        httpdate::fmt_http_date(t(secs))
    }

    fn stored(pairs: &[(&str, String)], at: u64) -> Stored {
        Stored {
            status: 200,
            content_type: "text/css".into(),
            headers: CacheHeaders::from_pairs(pairs.iter().map(|(n, v)| (*n, v.as_str()))),
            body: Bytes::from_static(b"body{}"),
            request_time: t(at),
            response_time: t(at),
        }
    }

    #[test]
    fn max_age_is_fresh_until_it_is_not() {
        let s = stored(
            &[
                ("Cache-Control", "public, max-age=60".into()),
                ("Date", date(0)),
            ],
            0,
        );
        assert_eq!(s.freshness_lifetime(), Duration::from_secs(60));
        assert!(s.is_fresh(t(59)));
        assert!(!s.is_fresh(t(60)));
        let mut c = HttpCache::new();
        assert!(c.store("https://a/s.css", s.clone()));
        assert_eq!(
            c.decide("https://a/s.css", t(30), false),
            Decision::Use(Box::new(s))
        );
        // Stale with no validator: fetched again.
        assert_eq!(c.decide("https://a/s.css", t(61), false), Decision::Fetch);
        assert_eq!(c.decide("https://a/other", t(1), false), Decision::Fetch);
    }

    #[test]
    fn age_and_the_response_delay_count_against_freshness() {
        let mut s = stored(
            &[
                ("cache-control", "max-age=100".into()),
                ("age", "90".into()),
                ("date", date(0)),
            ],
            0,
        );
        s.request_time = t(0);
        s.response_time = t(5);
        // 90 s old at the origin's cache, 5 s on the way: 95 s at arrival.
        assert_eq!(s.current_age(t(5)), Duration::from_secs(95));
        assert!(s.is_fresh(t(9)));
        assert!(!s.is_fresh(t(10)));
    }

    #[test]
    fn expires_counts_from_date_and_a_bad_one_is_stale() {
        let s = stored(&[("expires", date(120)), ("date", date(0))], 0);
        assert_eq!(s.freshness_lifetime(), Duration::from_secs(120));
        let bad = stored(&[("expires", "0".into()), ("date", date(0))], 0);
        assert_eq!(bad.freshness_lifetime(), Duration::ZERO);
        // max-age wins over Expires.
        let both = stored(
            &[
                ("expires", date(120)),
                ("date", date(0)),
                ("cache-control", "max-age=5".into()),
            ],
            0,
        );
        assert_eq!(both.freshness_lifetime(), Duration::from_secs(5));
    }

    #[test]
    fn heuristic_freshness_is_a_tenth_of_the_time_since_last_modified() {
        // Modified 1000 s before the response: fresh for 100 s.
        let s = stored(&[("last-modified", date(0)), ("date", date(1000))], 1000);
        assert_eq!(s.freshness_lifetime(), Duration::from_secs(100));
        assert!(s.is_fresh(t(1099)) && !s.is_fresh(t(1100)));
        // Not for a status that is not heuristically cacheable.
        let mut redirect = s.clone();
        redirect.status = 302;
        assert_eq!(redirect.freshness_lifetime(), Duration::ZERO);
    }

    #[test]
    fn no_cache_revalidates_with_the_validators_and_no_store_is_not_kept() {
        let s = stored(
            &[
                ("cache-control", "no-cache".into()),
                ("etag", "\"v1\"".into()),
                ("last-modified", date(0)),
                ("date", date(10)),
            ],
            10,
        );
        let mut c = HttpCache::new();
        assert!(c.store("https://a/", s));
        let want = vec![
            ("if-none-match".to_string(), "\"v1\"".to_string()),
            ("if-modified-since".to_string(), date(0)),
        ];
        assert_eq!(
            c.decide("https://a/", t(11), false),
            Decision::Revalidate(want)
        );
        let none = stored(&[("cache-control", "no-store, max-age=60".into())], 0);
        assert!(!c.store("https://a/x", none));
        assert_eq!(c.decide("https://a/x", t(1), false), Decision::Fetch);
        // Neither freshness nor a validator: nothing to keep.
        assert!(!c.store("https://a/y", stored(&[("date", date(0))], 0)));
    }

    #[test]
    fn a_request_asking_to_revalidate_revalidates_a_fresh_response() {
        let s = stored(
            &[
                ("cache-control", "max-age=600".into()),
                ("etag", "W/\"x\"".into()),
            ],
            0,
        );
        let mut c = HttpCache::new();
        c.store("https://a/", s);
        let asks = [("cache-control".to_string(), "max-age=0".to_string())];
        assert!(request_revalidates(&asks));
        assert!(!request_revalidates(&[("accept".into(), "*/*".into())]));
        assert!(matches!(
            c.decide("https://a/", t(1), true),
            Decision::Revalidate(_)
        ));
        assert!(matches!(
            c.decide("https://a/", t(1), false),
            Decision::Use(_)
        ));
    }

    #[test]
    fn a_304_refreshes_the_stored_headers_and_times() {
        let s = stored(
            &[
                ("cache-control", "max-age=10".into()),
                ("etag", "\"v1\"".into()),
                ("date", date(0)),
            ],
            0,
        );
        let mut c = HttpCache::new();
        c.store("https://a/s.css", s);
        assert!(matches!(
            c.decide("https://a/s.css", t(20), false),
            Decision::Revalidate(_)
        ));
        let h304 = CacheHeaders::from_pairs([
            ("Date", date(20).as_str()),
            ("Cache-Control", "max-age=30"),
        ]);
        let used = c
            .not_modified("https://a/s.css", &h304, t(20), t(20))
            .unwrap();
        assert_eq!(used.body, Bytes::from_static(b"body{}"));
        assert_eq!(used.headers.etag.as_deref(), Some("\"v1\""), "kept");
        assert_eq!(used.headers.cache_control.as_deref(), Some("max-age=30"));
        assert!(matches!(
            c.decide("https://a/s.css", t(49), false),
            Decision::Use(_)
        ));
        assert!(c
            .not_modified("https://a/none", &h304, t(20), t(20))
            .is_none());
    }
}
