//! Property tests with arbitrary inputs for the browser model's readers of
//! page bytes (issue 36: the bodies of an imported HAR are outside bytes,
//! and the model reads them): the HTML scanner (`discover::HtmlScanner`), a
//! stylesheet's `url()`s and a script's injections, image headers
//! (`paint::image_size`), and a whole page load in virtual time through the
//! main thread (`render::Renderer`) and the paint estimate
//! (`paint::PaintModel`, with its CSS reader and layout). Arbitrary bytes
//! and pages written from nasty parts (unclosed tags and comments, `<style>`
//! and `<script>` cut anywhere, CSS lengths of `NaN`, `1e400`, negative,
//! huge `width`/`height` attributes, image headers of any size) never panic;
//! the load ends; the HTML scanner finds the same references however the
//! bytes are cut; a size read from an image header is finite and stays the
//! same when more bytes follow; the estimate's figures are finite and not
//! negative (a probe's JSON has no NaN), LCP not before FCP. The
//! coverage-guided targets are `page` and `image_size` (docs/fuzzing.md).

use client::discover::{css_urls, script_injections};
use client::paint::{image_size, Paint};
use client::render::BrowserCost;
use proptest::prelude::*;
use testkit::page::{check_paint, check_scanner_cuts};

/// Loads the page `document` in virtual time (`testkit::page::load`), each
/// request answered 1 ms later with the next of `bodies` (then empty ones),
/// in pieces of `piece` bytes 1 ms apart; checks the scanners and the
/// estimate, and returns it.
fn load(document: &[u8], bodies: &[Vec<u8>], piece: usize, cost: BrowserCost) -> Paint {
    check_scanner_cuts(document, piece);
    for b in std::iter::once(document).chain(bodies.iter().map(Vec::as_slice)) {
        let _ = css_urls(b);
        let _ = script_injections(b);
        check_image(b);
    }
    let e = testkit::page::load(document, bodies.iter().map(Vec::as_slice), piece, cost);
    check_paint(&e);
    e
}

fn check_image(b: &[u8]) {
    if let Some((w, h)) = image_size(b) {
        assert!(w.is_finite() && h.is_finite() && w >= 0.0 && h >= 0.0);
        let mut longer = b.to_vec();
        longer.extend_from_slice(&[0xff; 16]);
        assert_eq!(image_size(&longer), Some((w, h)));
    }
}

/// A CSS length, right or wrong.
fn length() -> impl Strategy<Value = String> {
    prop_oneof![
        "-?[0-9]{1,4}(\\.[0-9]{1,2})?px",
        Just("0".to_string()),
        Just("auto".to_string()),
        "(NaN|inf|-inf|infinity|1e400|-1e400|1e308|-0|\\+5)px",
        "[0-9]{1,3}(em|%|vw|rem)",
        "\\PC{0,6}",
    ]
}

/// A stylesheet from rules of the properties the estimate reads.
fn css() -> impl Strategy<Value = String> {
    let prop = prop_oneof![
        Just("font-size"),
        Just("line-height"),
        Just("width"),
        Just("max-width"),
        Just("margin"),
        Just("padding"),
        Just("font"),
        Just("display"),
        Just("background"),
    ];
    let decl = (prop, proptest::collection::vec(length(), 1..5)).prop_map(|(p, v)| {
        let v = v.join(" ");
        match p {
            "font" => format!("font:bold {v}/{v} Arial"),
            "display" => format!(
                "display:{}",
                if v.len() % 2 == 0 { "block" } else { "flex" }
            ),
            "background" => format!("background:url(//a.test/{})", v.len()),
            _ => format!("{p}:{v}"),
        }
    });
    let selector = "(body|p|h1|h2|img|main|header|main img|header h1|\\.x|#y|@media \\(max-width: 1px\\) \\{ p|p, div|\\PC{0,4})";
    proptest::collection::vec(
        (
            selector,
            proptest::collection::vec(decl, 0..4),
            any::<bool>(),
        ),
        0..6,
    )
    .prop_map(|rules| {
        rules
            .into_iter()
            .map(|(s, d, closed)| format!("{s}{{{}{}", d.join(";"), if closed { "}" } else { "" }))
            .collect::<Vec<_>>()
            .join("\n/* c */")
    })
}

/// A piece of HTML, right or wrong.
fn html_part() -> impl Strategy<Value = String> {
    let src = "(//a\\.test/[a-z]{1,3}\\.(css|js|png|gif)|/[a-z]{1,3}\\.png|https://b\\.test/x\\.js|//|https://|\\PC{0,6})";
    prop_oneof![
        src.prop_map(|s| format!("<link rel=\"stylesheet\" href=\"{s}\">")),
        (src, "( async| defer| type=\"module\"|)")
            .prop_map(|(s, a)| format!("<script src=\"{s}\"{a}></script>")),
        (src, "-?[0-9]{1,6}|1e400|NaN|inf", "-?[0-9]{1,6}|1e300|")
            .prop_map(|(s, w, h)| format!("<img src=\"{s}\" width=\"{w}\" height=\"{h}px\">")),
        "(p|h1|h2|h3|li|div|td|pre|section|blockquote)".prop_map(|t| format!("<{t}>")),
        "(p|h1|div|main|header)".prop_map(|t| format!("</{t}>")),
        "(header|main|nav|footer|aside|article|body|html|br|span|b)".prop_map(|t| format!("<{t}>")),
        css().prop_map(|c| format!("<style>{c}</style>")),
        css().prop_map(|c| format!("<STYLE media=x>{c}")),
        Just("<script>var s='</scr' + 'ipt>';</script>".to_string()),
        Just("<title>t</title><noscript><img src=\"//a.test/n.png\"></noscript>".to_string()),
        Just("<!-- <img src=\"//a.test/c.png\"> ".to_string()),
        Just("-->".to_string()),
        Just("<".to_string()),
        Just(">".to_string()),
        "[a-zA-Z ]{0,40}",
        "\\PC{0,20}",
    ]
}

/// An image's first bytes: a real header's start with any size in it, or cut.
fn image() -> impl Strategy<Value = Vec<u8>> {
    let header = prop_oneof![
        Just(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec()),
        Just(b"GIF89a".to_vec()),
        Just(vec![0xff, 0xd8]),
        Just(b"RIFF\0\0\0\0WEBPVP8 ".to_vec()),
        Just(b"RIFF\0\0\0\0WEBPVP8L".to_vec()),
        Just(b"RIFF\0\0\0\0WEBPVP8X".to_vec()),
    ];
    let jpeg_segment = (
        any::<u8>(),
        any::<u16>(),
        proptest::collection::vec(any::<u8>(), 0..12),
    )
        .prop_map(|(m, len, rest)| {
            let mut s = vec![0xff, m];
            s.extend_from_slice(&len.to_be_bytes());
            s.extend(rest);
            s
        });
    (
        header,
        proptest::collection::vec(jpeg_segment, 0..4),
        proptest::collection::vec(any::<u8>(), 0..40),
        any::<bool>(),
    )
        .prop_map(|(mut h, segs, tail, jpeg)| {
            if jpeg && h.starts_with(&[0xff, 0xd8]) {
                for s in segs {
                    h.extend(s);
                }
            }
            h.extend(tail);
            h
        })
}

proptest! {
    #[test]
    fn fuzz_page_arbitrary_bytes_never_panic(
        document in proptest::collection::vec(any::<u8>(), 0..600),
        bodies in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..4),
        piece in 1usize..300,
        fitted in any::<bool>(),
    ) {
        let cost = if fitted { BrowserCost::FITTED } else { BrowserCost::NONE };
        let _ = load(&document, &bodies, piece, cost);
    }

    #[test]
    fn fuzz_page_pages_from_parts_never_panic_and_estimate_finite_figures(
        parts in proptest::collection::vec(html_part(), 0..30),
        sheets in proptest::collection::vec(css(), 0..3),
        images in proptest::collection::vec(image(), 0..3),
        piece in 1usize..2000,
        fitted in any::<bool>(),
    ) {
        let document = parts.concat().into_bytes();
        let mut bodies: Vec<Vec<u8>> = sheets.into_iter().map(String::into_bytes).collect();
        bodies.extend(images);
        let cost = if fitted { BrowserCost::FITTED } else { BrowserCost::NONE };
        let _ = load(&document, &bodies, piece, cost);
    }

    #[test]
    fn fuzz_page_image_headers_never_panic(b in image()) {
        check_image(&b);
    }
}

#[test]
fn a_page_with_a_stylesheet_and_images_paints() {
    let html = br#"<html><head><link rel="stylesheet" href="//a.test/s.css"></head><body><main><p>Hello there, a paragraph of text.</p><img src="//a.test/i.gif"></main></body></html>"#;
    let css = b"main{width:640px;margin:0 auto}p{font-size:20px}main img{display:block}".to_vec();
    let gif = b"GIF89a\x80\x02\xe0\x01\0\0\0\0".to_vec();
    let e = load(html, &[css, gif], 64, BrowserCost::FITTED);
    assert!(e.fcp_ms.is_some() && e.lcp_ms.is_some(), "{e:?}");
    assert_eq!(e.lcp_element.as_deref(), Some("img a.test/i.gif"));
}
