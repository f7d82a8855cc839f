//! The built-in sites' content paints like pages (issue 35) without changing
//! what the experiments measure: every resource keeps its URL, kind, size,
//! parent and reveal (a fingerprint of each tree, taken before the content
//! changed), every generated body is exactly its resource's size, and the
//! model client's discovery (`client::discover`: the HTML scanner, `url()` in
//! stylesheets, scripts' injections) finds in each body exactly the children
//! it found before — the resource's children, in order, by the same kind of
//! tag. Images carry `width`/`height` attributes equal to their pixel size.

use client::discover::{css_urls, script_injections, Found, HtmlScanner, Tag};
use site::{builtin, content, Kind, Reveal, Site, BUILTIN, DEFAULT_SEED};

/// The trees as they were before the content changed (seed 2014).
const TREES: [(&str, u64); 5] = [
    ("twitter", 16975162383938434937),
    ("youtube", 10045596882000722846),
    ("imgur", 4732529299745981943),
    ("icons", 15795298764514551369),
    ("http-archive-2014", 16559425586578400298),
];

#[test]
fn built_in_trees_are_unchanged() {
    for (name, want) in TREES {
        let s = builtin(name, DEFAULT_SEED).unwrap();
        assert_eq!(s.tree_fingerprint(), want, "{name}: the tree changed");
    }
    assert_eq!(TREES.map(|(n, _)| n), BUILTIN);
}

fn found(s: &Site, i: usize) -> Vec<(String, String)> {
    s.children(i)
        .iter()
        .map(|c| (c.host.clone(), c.path.clone()))
        .collect()
}

fn keys(f: &[Found]) -> Vec<(String, String)> {
    f.iter().map(|f| (f.host.clone(), f.path.clone())).collect()
}

/// Every body of `s` is its size, and discovery finds exactly its children.
fn check_site(name: &str, s: &Site) {
    for (i, r) in s.resources.iter().enumerate() {
        let body = s.body(i);
        let at = format!("{name} resource {i} //{}{}", r.host, r.path);
        assert_eq!(body.len(), r.size, "{at}: length");
        let kids = s.children(i);
        match r.kind {
            Kind::Html => {
                // Fed in small chunks, as the bytes stream in.
                let mut scanner = HtmlScanner::default();
                let mut tagged = Vec::new();
                for chunk in body.chunks(1000) {
                    tagged.extend(scanner.feed_tagged(chunk));
                }
                let got: Vec<_> = tagged.iter().map(|(_, f)| f.clone()).collect();
                assert_eq!(keys(&got), found(s, i), "{at}: references");
                for ((tag, _), c) in tagged.iter().zip(&kids) {
                    let right = match c.kind {
                        Kind::Css => *tag == Tag::Stylesheet,
                        Kind::Js => *tag == Tag::Script,
                        // An image's tag (with the area its attributes give:
                        // checked against its PNG below), or a frame's.
                        _ => matches!(tag, Tag::Image { .. } | Tag::Frame),
                    };
                    assert!(right, "{at}: tag {tag:?} of //{}{}", c.host, c.path);
                }
                // Head children before </head>, body children after <body>.
                let text = String::from_utf8(body).unwrap();
                let body_at = text.find("<body").expect("a body");
                // The image contract: a PNG's tag says its pixel size.
                for (k, c) in kids.iter().enumerate() {
                    if c.kind != Kind::Png || c.reveal != Reveal::Body {
                        continue;
                    }
                    let j = s
                        .resources
                        .iter()
                        .position(|x| std::ptr::eq(x, *c))
                        .unwrap();
                    let (w, h) = content::png_dimensions(&s.body(j)).unwrap();
                    assert_eq!(content::png_size(c.size), (w, h), "{at}: child {k}");
                    let tag = format!(
                        "<img src=\"{}\" width=\"{w}\" height=\"{h}\" alt=\"\">",
                        content::reference(c)
                    );
                    assert!(text.contains(&tag), "{at}: {tag}");
                }
                for c in &kids {
                    let pos = text
                        .find(&format!("\"{}\"", content::reference(c)))
                        .unwrap();
                    match c.reveal {
                        Reveal::Head => assert!(pos < body_at, "{at}: //{}{}", c.host, c.path),
                        _ => assert!(pos > body_at, "{at}: //{}{}", c.host, c.path),
                    }
                }
            }
            Kind::Css => assert_eq!(keys(&css_urls(&body)), found(s, i), "{at}: url()"),
            Kind::Js => {
                assert_eq!(
                    keys(&script_injections(&body)),
                    found(s, i),
                    "{at}: injections"
                );
                let text = String::from_utf8(body).unwrap();
                for c in &kids {
                    let tag = if c.kind == Kind::Js { "script" } else { "img" };
                    let call = format!(
                        "{}\"{}\",\"{tag}\"",
                        content::INJECT_CALL,
                        content::reference(c)
                    );
                    assert!(text.contains(&call), "{at}: {call}");
                }
            }
            _ => assert!(kids.is_empty(), "{at}: children"),
        }
    }
}

#[test]
fn built_in_bodies_keep_their_sizes_and_references() {
    for name in BUILTIN {
        for seed in [DEFAULT_SEED, 1, 7] {
            let s = builtin(name, seed).unwrap();
            check_site(name, &s);
        }
    }
}
