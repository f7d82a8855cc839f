//! The request headers the browser model sends (`--headers`): a 2014 Chrome's
//! set (`chrome2014`, the default: Chrome 37 on Windows 7 — user-agent, an
//! accept by resource type, accept-encoding, accept-language, the referer,
//! `cache-control: max-age=0` on the document as on a reload, and an optional
//! cookie of `--cookie-bytes` bytes), about 350–450 B per request on HTTP/1.1 without a cookie,
//! so that SPDY's and HTTP/2's header compression shows in the bytes up; or
//! `minimal`, the two or three short headers each connection sent before.
//! Sans-I/O: a request's host, path and referer in, a header list out (names
//! in lower case, without the host and pseudo-headers each protocol adds).

use proto::Protocol;

/// Chrome 37's user agent on Windows 7 (September 2014).
pub const CHROME_2014_USER_AGENT: &str = "Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/37.0.2062.120 Safari/537.36";

/// The largest `--cookie-bytes` (a browser's limit for one cookie).
pub const MAX_COOKIE_BYTES: usize = 4096;

/// Which header set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeaderSet {
    /// A 2014 Chrome's request headers.
    #[default]
    Chrome2014,
    /// The few short headers of earlier spdylab versions.
    Minimal,
}

impl HeaderSet {
    pub const ALL: [HeaderSet; 2] = [HeaderSet::Chrome2014, HeaderSet::Minimal];

    pub fn name(self) -> &'static str {
        match self {
            HeaderSet::Chrome2014 => "chrome2014",
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
            .ok_or_else(|| format!("'{s}' is not a header set (chrome2014, minimal)"))
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
    pub fn for_request(&self, protocol: Protocol, path: &str, referer: Option<&str>) -> HeaderList {
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
        };
        list.into_iter().map(|(n, v)| (n.to_string(), v)).collect()
    }
}

/// The minimal headers of a request over `protocol` (load users, fetches).
pub fn minimal(protocol: Protocol) -> HeaderList {
    RequestHeaders {
        set: HeaderSet::Minimal,
        cookie_bytes: 0,
    }
    .for_request(protocol, "/", None)
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
        for (n, v) in h.for_request(Protocol::Https, path, referer) {
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
        let l = h.for_request(Protocol::H2, "/a/b.css", Some("https://x.test/"));
        let get = |n: &str| l.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        assert_eq!(get("cookie").map(|c| c.len()), Some(300));
        assert_eq!(get("accept").as_deref(), Some("text/css,*/*;q=0.1"));
        assert_eq!(get("referer").as_deref(), Some("https://x.test/"));
        assert_eq!(get("connection"), None, "no connection header on h2");
        assert_eq!(title_case("accept-encoding"), "Accept-Encoding");
        assert!("chrome2015".parse::<HeaderSet>().is_err());
    }
}
