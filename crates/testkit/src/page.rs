//! A whole page load through the browser model in virtual time, and the
//! checks of what the model reads and estimates: the driver loop the
//! property tests (client/tests/fuzz_page.rs) and the coverage-guided
//! target (fuzz/fuzz_targets/page.rs) share.

use client::discover::{Found, HtmlScanner};
use client::paint::{image_size, Paint, PaintModel};
use client::render::{BrowserCost, Renderer};
use std::collections::VecDeque;
use std::time::Duration;

/// The Content-Type a server would give `path` (by its extension), else by the body.
pub fn content_type(path: &str, body: &[u8]) -> &'static str {
    let path = path.split('?').next().unwrap_or(path);
    match path.rsplit('.').next().unwrap_or("") {
        "css" => "text/css",
        "js" => "application/javascript",
        "png" | "gif" | "jpg" | "webp" => "image/png",
        "html" | "htm" => "text/html",
        _ if image_size(body).is_some() => "image/gif",
        _ if body.starts_with(b"<") => "text/html",
        _ => "application/octet-stream",
    }
}

/// Checks that the HTML scanner finds the same references in `document`
/// whole and cut in pieces of `piece` bytes.
pub fn check_scanner_cuts(document: &[u8], piece: usize) {
    let mut whole = HtmlScanner::default();
    let all = whole.feed_tagged(document);
    let mut cut = HtmlScanner::default();
    let mut pieces = Vec::new();
    for c in document.chunks(piece.max(1)) {
        pieces.extend(cut.feed_tagged(c));
    }
    assert_eq!(
        all, pieces,
        "the references depend on where the bytes are cut"
    );
}

/// Loads `document` (the root, `a.test/`) in virtual time through the main
/// thread (`Renderer`) and the paint estimate (`PaintModel`) at `cost`:
/// each request answered 1 ms later with the next of `bodies` (then empty
/// ones), in pieces of `piece` bytes 1 ms apart. Checks that the load ends
/// (under 100,000 steps), that no wake-up is in the past and that the root
/// was asked for, and returns the estimate at the end.
pub fn load<'a>(
    document: &'a [u8],
    bodies: impl IntoIterator<Item = &'a [u8]>,
    piece: usize,
    cost: BrowserCost,
) -> Paint {
    let piece = piece.max(1);
    let root = Found {
        host: "a.test".into(),
        path: "/".into(),
    };
    let mut r = Renderer::new(cost, root);
    let mut p = PaintModel::new("a.test", "/", cost);
    let mut next = std::iter::once(document).chain(bodies);
    let mut now = Duration::ZERO;
    let mut pending: VecDeque<Found> = VecDeque::new();
    let mut served = 0usize;
    for step in 0.. {
        assert!(step < 100_000, "the load does not end");
        r.advance(now);
        while let Some(f) = r.poll() {
            pending.push_back(f);
        }
        if let Some(f) = pending.pop_front() {
            served += 1;
            let body = next.next().unwrap_or(b"");
            let ct = if served == 1 {
                "text/html"
            } else {
                content_type(&f.path, body)
            };
            now += Duration::from_millis(1);
            r.head(&f.host, &f.path, ct);
            p.head(now, &f.host, &f.path, ct);
            for c in body.chunks(piece) {
                now += Duration::from_millis(1);
                r.data(now, &f.host, &f.path, c);
                p.data(now, &f.host, &f.path, c);
            }
            r.done(now, &f.host, &f.path);
            p.done(now, &f.host, &f.path);
            continue;
        }
        match r.next_wakeup() {
            Some(t) => {
                assert!(t > now, "a wake-up at {t:?}, not after {now:?}");
                now = t;
            }
            None => break,
        }
    }
    assert!(served >= 1);
    p.estimate(now)
}

/// Checks an estimate's figures: finite and not negative (a probe's JSON
/// has no room for NaN), LCP not before FCP.
pub fn check_paint(e: &Paint) {
    for v in [
        e.ttfb_ms,
        e.fcp_ms,
        e.lcp_ms,
        e.lcp_size,
        e.speed_index_ms,
        e.visually_complete_ms,
    ]
    .into_iter()
    .flatten()
    {
        assert!(v.is_finite() && v >= -1e-6, "{e:?}");
    }
    if let (Some(f), Some(l)) = (e.fcp_ms, e.lcp_ms) {
        assert!(l >= f - 1e-6, "LCP before FCP: {e:?}");
    }
}
