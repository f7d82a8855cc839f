//! What an imported (recorded) page adds to a Site: per resource, the method
//! and request body (an upload's text, or its size), the status, the response headers that matter and the recorded body (or none,
//! when the body is generated), the server's think time, and the redirect it
//! answers with. Built-in and TOML sites have none of it and stay byte-identical.
//! Also WPR-style request matching: exact URL first, then the same path with
//! the best query-parameter match.

use serde::{Deserialize, Serialize};

/// The recorded side of one resource.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    /// The request method: GET, or POST, PUT, PATCH, DELETE (replayed with
    /// the request body below).
    pub method: String,
    /// The request body as recorded (HAR `request.postData.text`), if the
    /// HAR held it; None: `request_body_size` bytes are sent instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_body: Option<String>,
    /// The request body's size when only that was recorded (HAR
    /// `request.bodySize`); 0 with `request_body` None: no body.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub request_body_size: usize,
    /// The scheme of the recorded URL (replay serves it on the probe's scheme).
    pub scheme: String,
    /// The recorded status (3xx for redirects).
    pub status: u16,
    /// Response headers that matter: content-type, content-encoding (as
    /// recorded: bodies are served decoded), cache-control, etag,
    /// last-modified, expires and date (the repeat view's cache), location
    /// (rewritten scheme-relative: `//host/path`).
    pub headers: Vec<(String, String)>,
    /// The recorded body; None when the HAR lacked it and it is generated.
    #[serde(skip)]
    pub body: Option<Vec<u8>>,
    /// The server's think time from the HAR's `timings.wait`, in ms.
    pub wait_ms: f64,
    /// For a redirect: the resource its Location names.
    pub redirect_to: Option<usize>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The filler byte of a request body whose size alone was recorded.
pub const REQUEST_FILLER: u8 = b'x';

/// A child that a generated body sends as an upload — an imported page's
/// POST, PUT, PATCH or DELETE — rather than asks for by a tag: a tag (an
/// `<img>`, an injected `<script>`) makes a browser send a GET, which replay,
/// matching by method, answers 404. The body sends it from a synchronous
/// `XMLHttpRequest` with `method` and a body of `body_len` filler bytes
/// (the recorded body's length), so that it is answered before onload, as a
/// tag's fetch would be. Built-in pages have none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    pub method: String,
    pub body_len: usize,
}

impl Recorded {
    /// The request body to replay: the recorded text, else
    /// `request_body_size` filler bytes (empty: none).
    pub fn request_body_bytes(&self) -> Vec<u8> {
        match &self.request_body {
            Some(t) => t.as_bytes().to_vec(),
            None => vec![REQUEST_FILLER; self.request_body_size],
        }
    }

    /// Whether the request is other than a GET: the client sends its method
    /// and body (`request_body_bytes`), and never pipelines it.
    pub fn is_upload(&self) -> bool {
        self.method != "GET"
    }

    /// What a generated parent body sends for it, if it is an upload: its
    /// method and the length of `request_body_bytes`.
    pub fn upload(&self) -> Option<Upload> {
        self.is_upload().then(|| Upload {
            method: self.method.clone(),
            body_len: self
                .request_body
                .as_ref()
                .map_or(self.request_body_size, String::len),
        })
    }

    /// A header's value (name in lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The query parameters of a path (`/a?x=1&y` → [("x","1"), ("y","")]).
fn query(path: &str) -> Vec<(&str, &str)> {
    path.split_once('?')
        .map(|(_, q)| {
            q.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| p.split_once('=').unwrap_or((p, "")))
                .collect()
        })
        .unwrap_or_default()
}

/// Of `candidates` (paths with the same host and path without query as the
/// request), the index of the one whose query shares the most parameters with
/// `wanted` (name and value), the first on ties; None if no candidates.
pub fn best_query_match<'a>(
    wanted: &str,
    candidates: impl Iterator<Item = (usize, &'a str)>,
) -> Option<usize> {
    let want = query(wanted);
    let mut best: Option<(usize, isize)> = None;
    for (i, path) in candidates {
        let have = query(path);
        let shared = have.iter().filter(|p| want.contains(p)).count() as isize;
        let names = have
            .iter()
            .filter(|(n, _)| want.iter().any(|(w, _)| w == n))
            .count() as isize;
        // Full pairs count most, then names, fewer extra parameters break ties.
        let score = shared * 1000 + names * 10 - (have.len() as isize - shared).abs();
        #[allow(clippy::unnecessary_map_or)] // is_none_or needs Rust 1.82; the MSRV is 1.80
        if best.map_or(true, |(_, s)| score > s) {
            best = Some((i, score));
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_query_match_shares_the_most_parameters() {
        let c = ["/a?x=1&y=2", "/a?x=1&y=3&z=4", "/a?x=9"];
        let pick = |w| best_query_match(w, c.iter().copied().enumerate());
        assert_eq!(pick("/a?x=1&y=3"), Some(1));
        assert_eq!(pick("/a?x=1&y=2&t=5"), Some(0));
        assert_eq!(pick("/a?x=9&cb=123"), Some(2));
        assert_eq!(pick("/a"), Some(2));
        assert_eq!(best_query_match("/a", std::iter::empty()), None);
    }
}
