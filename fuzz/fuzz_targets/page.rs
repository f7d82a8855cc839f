//! libFuzzer target: arbitrary response bodies through the browser model's
//! readers of page bytes (issue 36: an imported HAR's bodies are outside
//! bytes): the HTML scanner (`discover::HtmlScanner`), a stylesheet's
//! `url()`s, a script's injections, image headers (`paint::image_size`), and
//! a whole page load in virtual time through the main thread (`Renderer`)
//! and the paint estimate (`PaintModel`: its HTML scanner, its CSS reader
//! `style`, its layout). The input is split at NUL bytes: the first part is
//! the document, the others the bodies of what it asks for, in order; the
//! first byte is the size of the pieces the bodies arrive in. Never a panic;
//! the load ends; the HTML scanner finds the same references however the
//! bytes are cut; the estimate's figures are finite and not negative, LCP
//! not before FCP (a probe's JSON has no room for NaN).
#![no_main]

use client::discover::{css_urls, script_injections, Found, HtmlScanner};
use client::paint::{image_size, PaintModel};
use client::render::{BrowserCost, Renderer};
use libfuzzer_sys::fuzz_target;
use std::collections::VecDeque;
use std::time::Duration;

/// The Content-Type a server would give `path` (by its extension), else by the body.
fn content_type(path: &str, body: &[u8]) -> &'static str {
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

fuzz_target!(|data: &[u8]| {
    let Some((&piece, data)) = data.split_first() else {
        return;
    };
    let piece = usize::from(piece).max(1);
    let mut bodies = data.split(|b| *b == 0).take(16);
    let document = bodies.next().unwrap_or(b"");

    // The scanners alone, and whole against cut.
    let mut whole = HtmlScanner::default();
    let all = whole.feed_tagged(document);
    let mut cut = HtmlScanner::default();
    let mut pieces = Vec::new();
    for c in document.chunks(piece) {
        pieces.extend(cut.feed_tagged(c));
    }
    assert_eq!(all, pieces);
    let _ = css_urls(document);
    let _ = script_injections(document);
    if let Some((w, h)) = image_size(document) {
        assert!(w.is_finite() && h.is_finite() && w >= 0.0 && h >= 0.0);
    }

    // A page load in virtual time: each request answered 1 ms later, its
    // body in pieces 1 ms apart.
    for cost in [BrowserCost::FITTED, BrowserCost::NONE] {
        let root = Found {
            host: "a.test".into(),
            path: "/".into(),
        };
        let mut r = Renderer::new(cost, root.clone());
        let mut p = PaintModel::new("a.test", "/", cost);
        let mut bodies = std::iter::once(document).chain(data.split(|b| *b == 0).skip(1).take(15));
        let mut now = Duration::ZERO;
        let mut pending: VecDeque<Found> = VecDeque::new();
        let mut served = 0usize;
        let mut steps = 0usize;
        loop {
            steps += 1;
            assert!(steps < 100_000, "the load does not end");
            r.advance(now);
            while let Some(f) = r.poll() {
                pending.push_back(f);
            }
            if let Some(f) = pending.pop_front() {
                served += 1;
                let body = bodies.next().unwrap_or(b"");
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
        let e = p.estimate(now);
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
});
