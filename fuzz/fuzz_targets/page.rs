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

use client::discover::{css_urls, script_injections};
use client::paint::image_size;
use client::render::BrowserCost;
use libfuzzer_sys::fuzz_target;
use testkit::page::{check_paint, check_scanner_cuts, load};

fuzz_target!(|data: &[u8]| {
    let Some((&piece, data)) = data.split_first() else {
        return;
    };
    let piece = usize::from(piece).max(1);
    let mut bodies = data.split(|b| *b == 0).take(16);
    let document = bodies.next().unwrap_or(b"");

    // The scanners alone, and whole against cut.
    check_scanner_cuts(document, piece);
    let _ = css_urls(document);
    let _ = script_injections(document);
    if let Some((w, h)) = image_size(document) {
        assert!(w.is_finite() && h.is_finite() && w >= 0.0 && h >= 0.0);
    }

    // A page load in virtual time: each request answered 1 ms later, its
    // body in pieces 1 ms apart.
    for cost in [BrowserCost::FITTED, BrowserCost::NONE] {
        let bodies = data.split(|b| *b == 0).skip(1).take(15);
        check_paint(&load(document, bodies, piece, cost));
    }
});
