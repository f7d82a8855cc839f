//! The request headers the browser model sends (`--headers`): a 2014 Chrome's
//! set (`chrome2014`, the default: Chrome 37 on Windows 7 — user-agent, an
//! accept by resource type, accept-encoding, accept-language, the referer,
//! `cache-control: max-age=0` on the document as on a reload, and an optional
//! cookie of `--cookie-bytes` bytes), about 350–450 B per request on HTTP/1.1 without a cookie,
//! so that SPDY's and HTTP/2's header compression shows in the bytes up;
//! Chromium 156's (`chrome156`: headless on Linux, as the Chromium client
//! sends them, captured from its requests: the client hints `sec-ch-ua*`
//! and the `sec-fetch-*` metadata go only to a secure origin, so a request
//! is about 500–650 B over TLS and 350–450 B over plain http); or
//! `minimal`, the two or three short headers each connection sent before.
//! Sans-I/O: a request's host, path and referer in, a header list out (names
//! in lower case, without the host and pseudo-headers each protocol adds).

use proto::Protocol;

/// Chrome 37's user agent on Windows 7 (September 2014).
pub const CHROME_2014_USER_AGENT: &str = "Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/37.0.2062.120 Safari/537.36";

/// The largest `--cookie-bytes` (a browser's limit for one cookie).
pub const MAX_COOKIE_BYTES: usize = 4096;

/// Chromium 156's user agent, headless on Linux (the Chromium client's).
pub const CHROMIUM_156_USER_AGENT: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36";

/// Which header set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeaderSet {
    /// A 2014 Chrome's request headers.
    #[default]
    Chrome2014,
    /// Chromium 156's, as the Chromium client sends them.
    Chrome156,
    /// The few short headers of earlier spdylab versions.
    Minimal,
}

impl HeaderSet {
    pub const ALL: [HeaderSet; 3] = [
        HeaderSet::Chrome2014,
        HeaderSet::Chrome156,
        HeaderSet::Minimal,
    ];

    pub fn name(self) -> &'static str {
        match self {
            HeaderSet::Chrome2014 => "chrome2014",
            HeaderSet::Chrome156 => "chrome156",
            HeaderSet::Minimal => "minimal",
        }
    }
}

impl std::str::FromStr for HeaderSet {
    type Err = String;
    fn from_str(s: &str) -> Result<HeaderSet, String> {
        HeaderSet::ALL
            .into_iter()
            .find(|h| h.name() == s)
            .ok_or_else(|| format!("'{s}' is not a header set (chrome2014, chrome156, minimal)"))
    }
}

impl std::fmt::Display for HeaderSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The headers of every request of a load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RequestHeaders {
    pub set: HeaderSet,
    /// A `cookie` header of this many bytes on every request (0: none);
    /// chrome2014 only.
    pub cookie_bytes: usize,
}

/// A request's header list: (lower-case name, value), in the order sent.
pub type HeaderList = Vec<(String, String)>;

/// What a URL path says the resource is, as Chrome's accept header did.
fn accept_for(path: &str, document: bool) -> &'static str {
    if document {
        return "text/html,application/xhtml+xml,application/xml;q=0.9,image/webp,*/*;q=0.8";
    }
    let file = path.split(['?', '#']).next().unwrap_or("");
    let ext = file.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("css") => "text/css,*/*;q=0.1",
        Some("png" | "gif" | "jpg" | "jpeg" | "webp" | "ico" | "svg") => "image/webp,*/*;q=0.8",
        None | Some("html" | "htm") => {
            "text/html,application/xhtml+xml,application/xml;q=0.9,image/webp,*/*;q=0.8"
        }
        _ => "*/*",
    }
}

/// What Chromium 156 fetches a path as, by its extension: `sec-fetch-dest`,
/// `sec-fetch-mode` and `accept` (a font is a CORS request with an `origin`).
fn chromium_fetch(path: &str) -> (&'static str, &'static str, &'static str) {
    let ext = crate::priority::extension(path);
    const IMAGE: &str =
        "image/jxl,image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8";
    match ext.as_deref() {
        Some("css") => ("style", "no-cors", "text/css,*/*;q=0.1"),
        Some("js" | "mjs") => ("script", "no-cors", "*/*"),
        Some("png" | "gif" | "jpg" | "jpeg" | "webp" | "avif" | "ico" | "svg" | "bmp") => {
            ("image", "no-cors", IMAGE)
        }
        Some("woff" | "woff2" | "ttf" | "otf" | "eot") => ("font", "cors", "*/*"),
        _ => ("empty", "no-cors", "*/*"),
    }
}

/// The registrable part of a host, as near as two labels get (`i.ytimg.com`
/// → `ytimg.com`): two hosts of one site share it.
fn site_of(host: &str) -> &str {
    let host = host.split(':').next().unwrap_or(host);
    match host.rmatch_indices('.').nth(1) {
        Some((i, _)) => &host[i + 1..],
        None => host,
    }
}

/// The scheme and host of a URL (`https://a.test/x` → ("https", "a.test")).
fn origin_of(url: &str) -> (&str, &str) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    (scheme, rest.split(['/', '?', '#']).next().unwrap_or(""))
}

/// A deterministic cookie value of exactly `n` bytes (`n` ≥ 1): `id=` and
/// hex digits (or just the first `n` bytes of that when `n` < 4).
fn cookie(n: usize) -> String {
    let mut s = String::from("id=");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while s.len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push(char::from_digit((x % 16) as u32, 16).unwrap_or('0'));
    }
    s.truncate(n);
    s
}

impl RequestHeaders {
    /// The headers of a GET of `path` over `protocol`; `referer` is the URL of
    /// the document (or style sheet) that named it, None for the page itself.
    pub fn for_request(
        &self,
        protocol: Protocol,
        host: &str,
        path: &str,
        referer: Option<&str>,
    ) -> HeaderList {
        let list: Vec<(&str, String)> = match self.set {
            HeaderSet::Minimal => match protocol {
                Protocol::Spdy3 => vec![
                    ("user-agent", "spdylab/0.1".into()),
                    ("accept", "*/*".into()),
                    ("accept-encoding", "gzip,deflate,sdch".into()),
                ],
                p if p.multiplexed() => vec![("user-agent", "spdylab/0.1".into())],
                _ => vec![
                    ("user-agent", "spdylab/0.1".into()),
                    ("accept", "*/*".into()),
                ],
            },
            HeaderSet::Chrome2014 => {
                let document = referer.is_none();
                let mut l: Vec<(&str, String)> = Vec::with_capacity(9);
                if !protocol.multiplexed() {
                    l.push(("connection", "keep-alive".into()));
                }
                if document {
                    l.push(("cache-control", "max-age=0".into()));
                }
                l.push(("accept", accept_for(path, document).into()));
                l.push(("user-agent", CHROME_2014_USER_AGENT.into()));
                if let Some(r) = referer {
                    l.push(("referer", r.into()));
                }
                l.push(("accept-encoding", "gzip,deflate,sdch".into()));
                l.push(("accept-language", "en-US,en;q=0.8".into()));
                if self.cookie_bytes > 0 {
                    l.push(("cookie", cookie(self.cookie_bytes)));
                }
                l
            }
            HeaderSet::Chrome156 => chrome156(protocol, host, path, referer, self.cookie_bytes),
        };
        list.into_iter().map(|(n, v)| (n.to_string(), v)).collect()
    }
}

/// Chromium 156's headers, in its order (captured from its HTTP/1.1
/// requests, 6 Dec 2026). The client hints, the fetch metadata and the
/// brotli and zstd encodings go only to a secure origin: over plain http
/// (to an origin not on the loopback) they are left out.
fn chrome156(
    protocol: Protocol,
    host: &str,
    path: &str,
    referer: Option<&str>,
    cookie_bytes: usize,
) -> Vec<(&'static str, String)> {
    const UA: &str = r#""Not:A-Brand";v="8", "Chromium";v="156""#;
    let secure = protocol.tls();
    let mut l: Vec<(&'static str, String)> = Vec::with_capacity(14);
    if !protocol.multiplexed() {
        l.push(("connection", "keep-alive".into()));
    }
    match referer {
        None => {
            if secure {
                l.push(("sec-ch-ua", UA.into()));
                l.push(("sec-ch-ua-mobile", "?0".into()));
                l.push(("sec-ch-ua-platform", "\"Linux\"".into()));
            }
            l.push(("upgrade-insecure-requests", "1".into()));
            l.push(("user-agent", CHROMIUM_156_USER_AGENT.into()));
            l.push(("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/jxl,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7".into()));
            if secure {
                l.push(("sec-fetch-site", "none".into()));
                l.push(("sec-fetch-mode", "navigate".into()));
                l.push(("sec-fetch-user", "?1".into()));
                l.push(("sec-fetch-dest", "document".into()));
            }
        }
        Some(r) => {
            let (dest, mode, accept) = chromium_fetch(path);
            let (scheme, from) = origin_of(r);
            if mode == "cors" {
                l.push(("origin", format!("{scheme}://{from}")));
            }
            if secure {
                l.push(("sec-ch-ua-platform", "\"Linux\"".into()));
            }
            l.push(("user-agent", CHROMIUM_156_USER_AGENT.into()));
            if secure {
                l.push(("sec-ch-ua", UA.into()));
                l.push(("sec-ch-ua-mobile", "?0".into()));
            }
            l.push(("accept", accept.into()));
            let same_origin = from.eq_ignore_ascii_case(host);
            if secure {
                let site = if same_origin {
                    "same-origin"
                } else if site_of(from).eq_ignore_ascii_case(site_of(host)) {
                    "same-site"
                } else {
                    "cross-site"
                };
                l.push(("sec-fetch-site", site.into()));
                l.push(("sec-fetch-mode", mode.into()));
                l.push(("sec-fetch-dest", dest.into()));
            }
            // strict-origin-when-cross-origin, Chromium's default policy:
            // another origin is told only the referring origin.
            l.push((
                "referer",
                match same_origin {
                    true => r.into(),
                    false => format!("{scheme}://{from}/"),
                },
            ));
        }
    }
    // Brotli and zstd are offered to a secure origin only.
    let encodings = match secure {
        true => "gzip, deflate, br, zstd",
        false => "gzip, deflate",
    };
    l.push(("accept-encoding", encodings.into()));
    l.push(("accept-language", "en-US,en;q=0.9".into()));
    if cookie_bytes > 0 {
        l.push(("cookie", cookie(cookie_bytes)));
    }
    l
}

/// The minimal headers of a request over `protocol` (load users, fetches).
pub fn minimal(protocol: Protocol) -> HeaderList {
    RequestHeaders {
        set: HeaderSet::Minimal,
        cookie_bytes: 0,
    }
    .for_request(protocol, "", "/", None)
}

/// `user-agent` → `User-Agent`, as HTTP/1.1 browsers wrote header names.
pub fn title_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut up = true;
    for c in name.chars() {
        out.push(if up { c.to_ascii_uppercase() } else { c });
        up = c == '-';
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h1_bytes(h: &RequestHeaders, path: &str, referer: Option<&str>) -> usize {
        let mut text = format!("GET {path} HTTP/1.1\r\nHost: www.youtube.com\r\n");
        for (n, v) in h.for_request(Protocol::Https, "www.youtube.com", path, referer) {
            text.push_str(&format!("{}: {v}\r\n", title_case(&n)));
        }
        text.push_str("\r\n");
        text.len()
    }

    #[test]
    fn a_chrome_2014_request_is_300_to_600_bytes_on_h1() {
        let h = RequestHeaders::default();
        let doc = h1_bytes(&h, "/", None);
        let img = h1_bytes(
            &h,
            "/yts/img/pixel-vfl3z5WfW.gif",
            Some("https://www.youtube.com/"),
        );
        assert!((300..=600).contains(&doc), "document request {doc} B");
        assert!((300..=600).contains(&img), "image request {img} B");
        let min = h1_bytes(
            &RequestHeaders {
                set: HeaderSet::Minimal,
                cookie_bytes: 0,
            },
            "/",
            None,
        );
        assert!(min < 100, "minimal request {min} B");
    }

    #[test]
    fn the_cookie_has_the_asked_size_and_accept_follows_the_type() {
        let h = RequestHeaders {
            set: HeaderSet::Chrome2014,
            cookie_bytes: 300,
        };
        let l = h.for_request(Protocol::H2, "x.test", "/a/b.css", Some("https://x.test/"));
        let get = |n: &str| l.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(get("cookie").map(|c| c.len()), Some(300));
        assert_eq!(get("accept").as_deref(), Some("text/css,*/*;q=0.1"));
        assert_eq!(get("referer").as_deref(), Some("https://x.test/"));
        assert_eq!(get("connection"), None, "no connection header on h2");
        assert_eq!(title_case("accept-encoding"), "Accept-Encoding");
        assert!("chrome2015".parse::<HeaderSet>().is_err());
    }

    /// Chromium 156's requests as captured (headless, Linux, 6 Dec 2026,
    /// HTTP/1.1 to a secure origin, `Host: 127.0.0.1:8765`; the request
    /// line and header lines as captured, each ended by CRLF, then CRLF):
    /// the document 644 B, an image 564 B; over plain http the hints and the
    /// fetch metadata are left out.
    #[test]
    fn chrome156_requests_are_chromiums_size() {
        let h = RequestHeaders {
            set: HeaderSet::Chrome156,
            cookie_bytes: 0,
        };
        let bytes = |p: Protocol, path: &str, referer: Option<&str>| {
            let mut text = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:8765\r\n");
            for (n, v) in h.for_request(p, "127.0.0.1:8765", path, referer) {
                text.push_str(&format!("{n}: {v}\r\n"));
            }
            text.len() + 2
        };
        let page = Some("http://127.0.0.1:8765/");
        assert_eq!(bytes(Protocol::Https, "/", None), 644);
        assert_eq!(bytes(Protocol::Https, "/c.png", page), 564);
        assert_eq!(bytes(Protocol::Https, "/a.css", page), 508);
        assert_eq!(bytes(Protocol::Https, "/b.js", page), 493);
        let plain = bytes(Protocol::Http, "/c.png", page);
        assert!((350..=450).contains(&plain), "{plain} B over plain http");
        // Over plain http, as Chromium 156 asked http://hdr.test:18080/i.png.
        let names: Vec<String> = h
            .for_request(
                Protocol::Http,
                "hdr.test:18080",
                "/i.png",
                Some("http://hdr.test:18080/"),
            )
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let want = [
            "connection",
            "user-agent",
            "accept",
            "referer",
            "accept-encoding",
            "accept-language",
        ];
        assert_eq!(names, want);
        let l = h.for_request(
            Protocol::H3,
            "i.ytimg.com",
            "/f.woff2",
            Some("https://www.youtube.com/"),
        );
        let get = |n: &str| l.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str());
        assert_eq!(get("sec-fetch-site"), Some("cross-site"));
        assert_eq!(get("sec-fetch-mode"), Some("cors"));
        assert_eq!(get("origin"), Some("https://www.youtube.com"));
        assert_eq!(get("connection"), None);
        assert_eq!(get("referer"), Some("https://www.youtube.com/"));
        let l = h.for_request(
            Protocol::H2,
            "s.ytimg.com",
            "/i.png",
            Some("https://i.ytimg.com/css/a.css"),
        );
        assert!(l.contains(&("sec-fetch-site".into(), "same-site".into())));
        assert!(l.contains(&("referer".into(), "https://i.ytimg.com/".into())));
    }
}
