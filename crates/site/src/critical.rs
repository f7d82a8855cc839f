//! Which resources of a page are critical, sans-I/O: the document's
//! render-blocking resources and its LCP image — what 103 Early Hints name,
//! what `--push critical` pushes and what `--preload critical` preloads
//! (issue 37). One definition for all three.
//!
//! - **The document** is the root, or, for an imported page that starts with
//!   a redirect, the end of its recorded redirect chain ([`document`]).
//! - **Render-blocking** ([`render_blocking`]): the document's `Reveal::Head`
//!   children that are stylesheets or scripts, the rule the model's paint
//!   estimate follows (`client::paint`: a `<link rel=stylesheet>` not for
//!   `media=print`, a `<script src>` neither `async`, `defer` nor a module).
//!   Generated pages write every head child that way (`content`); for an
//!   imported page whose document body was recorded, the tag that names the
//!   resource in that body is read, and one marked `async`, `defer`,
//!   `type=module` or `media=print` is not render-blocking.
//! - **The LCP image** ([`lcp_image`]): the model's paint module estimates
//!   the LCP element from the page's layout, but it lives in the client crate,
//!   which depends on this one; so here it is the largest image (a `Kind::Png`,
//!   which an import makes of every raster image) that the document's body
//!   reveals, by area: the `width` × `height` of its `<img>` tag in the
//!   document, else its PNG header's size, else `content::png_size` for a
//!   generated body, else four pixels a byte (the generated images' density);
//!   the first in document order on a tie. Text is never hinted, and the
//!   fold is not looked at: on the built-in pages the largest body image
//!   is usually the hero the paint model picks, but not always.
//!
//! [`critical`] is the render-blocking resources in document order, then the
//! LCP image. [`same_origin_subtree`] is what `--push all` pushes: every
//! resource under the document on the document's host.

use crate::content::{png_dimensions, png_size};
use crate::model::{Kind, Reveal};
use crate::tree::Site;

/// The `as` of a `<link rel=preload>` (and of a 103's `Link` header) for a
/// resource of `kind`; None for what is never preloaded (pages, Flash,
/// other).
pub fn preload_as(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Css => Some("style"),
        Kind::Js => Some("script"),
        Kind::Png => Some("image"),
        Kind::Font => Some("font"),
        Kind::Html | Kind::Flash | Kind::Other => None,
    }
}

/// The page's document: the root, or the end of an imported page's recorded
/// redirect chain (a HAR of `cnn.com` starts with its 301 to `www.cnn.com`).
pub fn document(site: &Site) -> usize {
    let mut d = 0;
    let mut hops = 0;
    while let Some(t) = site.recorded(d).and_then(|r| r.redirect_to) {
        if t >= site.resources.len() || hops > site.resources.len() {
            break;
        }
        d = t;
        hops += 1;
    }
    d
}

/// The tag in `html` that names `host` + `path` (scheme-relative or absolute
/// URL, or the bare path when `same_host`), lower-cased; None if none does.
fn tag_naming(html: &str, host: &str, path: &str, same_host: bool) -> Option<String> {
    let mut forms = vec![format!("//{host}{path}")];
    if same_host && path.len() > 1 {
        forms.push(format!("\"{path}\""));
        forms.push(format!("'{path}'"));
        forms.push(format!("={path}"));
    }
    let at = forms.iter().filter_map(|f| html.find(f.as_str())).min()?;
    let start = html[..at].rfind('<')?;
    let end = html[at..].find('>').map_or(html.len(), |e| at + e + 1);
    Some(html[start..end].to_ascii_lowercase())
}

/// Whether a lower-cased tag has attribute `name` (bare or with a value).
fn has_attr(tag: &str, name: &str) -> bool {
    tag.split(|c: char| c.is_whitespace() || c == '>' || c == '/')
        .any(|w| w == name || w.starts_with(&format!("{name}=")))
}

/// The value of a lower-cased tag's attribute, quoted or not.
fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!("{name}=");
    let mut from = 0;
    while let Some(i) = tag[from..].find(&key) {
        let at = from + i;
        let before = tag[..at].chars().last();
        from = at + key.len();
        if !before.is_some_and(char::is_whitespace) {
            continue;
        }
        let rest = &tag[from..];
        let v = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => rest[1..].split(q).next().unwrap_or(""),
            _ => rest
                .split(|c: char| c.is_whitespace() || c == '>')
                .next()
                .unwrap_or(""),
        };
        return Some(v.to_string());
    }
    None
}

/// The document's HTML, when it was recorded (generated pages follow the
/// `content` contract and need no reading).
fn recorded_document(site: &Site, doc: usize) -> Option<String> {
    site.recorded(doc)
        .and_then(|r| r.body.as_deref())
        .map(|b| String::from_utf8_lossy(b).into_owned())
}

/// The document's render-blocking resources (module doc), in document order.
pub fn render_blocking(site: &Site) -> Vec<usize> {
    let doc = document(site);
    let html = recorded_document(site, doc);
    let doc_host = &site.resources[doc].host;
    (0..site.resources.len())
        .filter(|&i| {
            let r = &site.resources[i];
            if r.parent != Some(doc) || r.reveal != Reveal::Head {
                return false;
            }
            if !matches!(r.kind, Kind::Css | Kind::Js) {
                return false;
            }
            let Some(tag) = html
                .as_deref()
                .and_then(|h| tag_naming(h, &r.host, &r.path, &r.host == doc_host))
            else {
                return true;
            };
            match r.kind {
                Kind::Css => attr(&tag, "media").is_none_or(|m| m.trim() != "print"),
                _ => {
                    !has_attr(&tag, "async")
                        && !has_attr(&tag, "defer")
                        && attr(&tag, "type").is_none_or(|t| t != "module")
                }
            }
        })
        .collect()
}

/// An image's estimated painted area in px² (module doc).
fn image_area(site: &Site, doc_html: Option<&str>, i: usize) -> u64 {
    let r = &site.resources[i];
    let doc_host = &site.resources[document(site)].host;
    let from_tag = doc_html
        .and_then(|h| tag_naming(h, &r.host, &r.path, &r.host == doc_host))
        .and_then(|tag| {
            let side =
                |n| attr(&tag, n).and_then(|v| v.trim().trim_end_matches("px").parse::<u64>().ok());
            side("width").zip(side("height"))
        });
    if let Some((w, h)) = from_tag {
        return w.saturating_mul(h);
    }
    match site.recorded(i).map(|rec| rec.body.as_deref()) {
        Some(Some(body)) => png_dimensions(body)
            .map(|(w, h)| u64::from(w) * u64::from(h))
            .unwrap_or(r.size as u64 * 4),
        _ => {
            let (w, h) = png_size(r.size);
            u64::from(w) * u64::from(h)
        }
    }
}

/// The document's LCP image as estimated here (module doc), if its body
/// reveals any image.
pub fn lcp_image(site: &Site) -> Option<usize> {
    let doc = document(site);
    let html = match recorded_document(site, doc) {
        Some(h) => Some(h),
        None => Some(String::from_utf8_lossy(&site.body(doc)).into_owned()),
    };
    let mut best: Option<(usize, u64)> = None;
    for (i, r) in site.resources.iter().enumerate() {
        if r.parent != Some(doc) || r.reveal != Reveal::Body || r.kind != Kind::Png {
            continue;
        }
        let area = image_area(site, html.as_deref(), i);
        if best.is_none_or(|(_, a)| area > a) {
            best = Some((i, area));
        }
    }
    best.map(|(i, _)| i)
}

/// The critical resources: the render-blocking ones in document order, then
/// the LCP image.
pub fn critical(site: &Site) -> Vec<usize> {
    let mut out = render_blocking(site);
    out.extend(lcp_image(site));
    out
}

/// Whether resource `i` can be pushed or hinted as a plain GET of a 200:
/// generated resources always; an imported one if it was a GET answered 200.
pub fn fetchable(site: &Site, i: usize) -> bool {
    !site
        .recorded(i)
        .is_some_and(|rec| rec.method != "GET" || rec.status != 200)
}

/// Every resource under the document (its descendants, in the site's order)
/// on the document's own host that is `fetchable`: what `--push all` pushes.
pub fn same_origin_subtree(site: &Site) -> Vec<usize> {
    let doc = document(site);
    let host = &site.resources[doc].host;
    let under = |mut i: usize| {
        let mut hops = 0;
        while let Some(p) = site.resources[i].parent {
            if p == doc {
                return true;
            }
            i = p;
            hops += 1;
            if hops > site.resources.len() {
                break;
            }
        }
        false
    };
    (0..site.resources.len())
        .filter(|&i| i != doc && &site.resources[i].host == host && under(i))
        .filter(|&i| fetchable(site, i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::{builtin, DEFAULT_SEED};

    fn urls(site: &Site, list: &[usize]) -> Vec<String> {
        list.iter()
            .map(|&i| format!("{}{}", site.resources[i].host, site.resources[i].path))
            .collect()
    }

    /// Every head stylesheet and script of a generated page is render-blocking,
    /// and the LCP image is the body's largest PNG by its `<img>` size.
    fn check_generated(name: &str, css: usize, js: usize) {
        let site = builtin(name, DEFAULT_SEED).unwrap();
        assert_eq!(document(&site), 0);
        let rb = render_blocking(&site);
        let kinds: Vec<Kind> = rb.iter().map(|&i| site.resources[i].kind).collect();
        assert_eq!(
            kinds.iter().filter(|k| **k == Kind::Css).count(),
            css,
            "{name}"
        );
        assert_eq!(
            kinds.iter().filter(|k| **k == Kind::Js).count(),
            js,
            "{name}"
        );
        for &i in &rb {
            assert_eq!(site.resources[i].reveal, Reveal::Head);
        }
        let lcp = lcp_image(&site).expect("an image in the body");
        let body_pngs: Vec<usize> = (0..site.resources.len())
            .filter(|&i| {
                site.resources[i].parent == Some(0)
                    && site.resources[i].reveal == Reveal::Body
                    && site.resources[i].kind == Kind::Png
            })
            .collect();
        let area = |i: usize| {
            let (w, h) = png_size(site.resources[i].size);
            u64::from(w) * u64::from(h)
        };
        let max = body_pngs.iter().map(|&i| area(i)).max().unwrap();
        assert_eq!(area(lcp), max, "{name}");
        assert_eq!(
            body_pngs.iter().find(|&&i| area(i) == max),
            Some(&lcp),
            "the first of the largest"
        );
        let all = critical(&site);
        assert_eq!(all.len(), rb.len() + 1);
        assert_eq!(all.last(), Some(&lcp));
    }

    #[test]
    fn youtubes_critical_resources_are_its_head_css_and_js_and_its_largest_image() {
        check_generated("youtube", 2, 2);
    }

    #[test]
    fn twitters_critical_resources_are_its_head_css_and_js_and_its_largest_image() {
        let site = builtin("twitter", DEFAULT_SEED).unwrap();
        let head = site
            .resources
            .iter()
            .filter(|r| r.parent == Some(0) && r.reveal == Reveal::Head)
            .count();
        assert_eq!(render_blocking(&site).len(), head);
        let css = site
            .resources
            .iter()
            .filter(|r| r.parent == Some(0) && r.reveal == Reveal::Head && r.kind == Kind::Css)
            .count();
        check_generated("twitter", css, head - css);
    }

    #[test]
    fn a_page_without_images_has_no_lcp_image() {
        let site = Site::new(
            "t",
            "",
            1,
            vec![crate::Resource {
                host: "a.test".into(),
                path: "/".into(),
                kind: Kind::Html,
                size: 2000,
                parent: None,
                reveal: Reveal::Root,
            }],
        )
        .unwrap();
        assert_eq!(lcp_image(&site), None);
        assert!(critical(&site).is_empty());
        assert!(same_origin_subtree(&site).is_empty());
    }

    /// An imported page: async scripts are not render-blocking; the LCP
    /// image is the largest by its tag's size; the document is the end of
    /// the redirect chain.
    #[test]
    fn an_imported_pages_critical_resources_come_from_its_recorded_html() {
        let html = r#"<html><head><link rel="stylesheet" href="/s.css"><link rel=stylesheet href="//a.test/p.css" media=print><script async src="https://a.test/a.js"></script><script src="//cdn.test/b.js"></script></head><body><img src="/small.png" width="10" height="10"><img src="//img.test/big.jpg" width="600" height="400"></body></html>"#;
        let body = serde_json::to_string(html).unwrap();
        let har = format!(
            r#"{{"log": {{"entries": [
            {{"request": {{"method": "GET", "url": "https://x.test/"}},
             "response": {{"status": 301, "headers": [{{"name": "Location", "value": "https://a.test/"}}], "content": {{"mimeType": "text/html", "text": ""}}}}}},
            {{"request": {{"method": "GET", "url": "https://a.test/"}},
             "response": {{"status": 200, "content": {{"mimeType": "text/html", "text": {body}}}}}}},
            {{"request": {{"method": "GET", "url": "https://a.test/s.css"}},
             "response": {{"status": 200, "content": {{"mimeType": "text/css", "text": "p{{}}"}}}}}},
            {{"request": {{"method": "GET", "url": "https://a.test/p.css"}},
             "response": {{"status": 200, "content": {{"mimeType": "text/css", "text": "p{{}}"}}}}}},
            {{"request": {{"method": "GET", "url": "https://a.test/a.js"}},
             "response": {{"status": 200, "content": {{"mimeType": "application/javascript", "text": "1"}}}}}},
            {{"request": {{"method": "GET", "url": "https://cdn.test/b.js"}},
             "response": {{"status": 200, "content": {{"mimeType": "application/javascript", "text": "1"}}}}}},
            {{"request": {{"method": "GET", "url": "https://a.test/small.png"}},
             "response": {{"status": 200, "content": {{"mimeType": "image/png", "size": 5000}}}}}},
            {{"request": {{"method": "GET", "url": "https://img.test/big.jpg"}},
             "response": {{"status": 200, "content": {{"mimeType": "image/jpeg", "size": 3000}}}}}}
        ]}}}}"#
        );
        let (site, _) = crate::har::import("t", har.as_bytes()).unwrap();
        let doc = document(&site);
        assert_eq!(urls(&site, &[doc]), ["a.test/"]);
        assert_eq!(
            urls(&site, &render_blocking(&site)),
            ["a.test/s.css", "cdn.test/b.js"]
        );
        assert_eq!(
            urls(&site, &lcp_image(&site).into_iter().collect::<Vec<_>>()),
            ["img.test/big.jpg"]
        );
        assert_eq!(
            urls(&site, &same_origin_subtree(&site)),
            [
                "a.test/s.css",
                "a.test/p.css",
                "a.test/a.js",
                "a.test/small.png"
            ]
        );
    }

    /// A HAR from tests/data: its critical resources are its document's
    /// head stylesheets and blocking scripts, and an image of its body.
    #[test]
    fn a_recorded_har_from_tests_data_has_critical_resources() {
        let bytes = include_bytes!("../../../tests/data/pagexray-http2-chrome.har");
        let (site, _) = crate::har::import("h2", bytes).unwrap();
        let doc = document(&site);
        let rb = render_blocking(&site);
        assert!(!rb.is_empty(), "{:?}", urls(&site, &rb));
        for &i in &rb {
            let r = &site.resources[i];
            assert_eq!((r.parent, r.reveal), (Some(doc), Reveal::Head));
            assert!(matches!(r.kind, Kind::Css | Kind::Js));
        }
        if let Some(i) = lcp_image(&site) {
            assert_eq!(site.resources[i].kind, Kind::Png);
            assert_eq!(site.resources[i].parent, Some(doc));
        }
        let crit = critical(&site);
        assert_eq!(&crit[..rb.len()], &rb[..]);
    }

    #[test]
    fn tags_are_read_for_their_attributes() {
        let t = tag_naming(
            r#"<p><script defer src="/x.js"></script>"#,
            "a.test",
            "/x.js",
            true,
        )
        .unwrap();
        assert!(has_attr(&t, "defer") && !has_attr(&t, "async"));
        assert_eq!(
            attr("<img src=a width=30 height='20'>", "height").as_deref(),
            Some("20")
        );
        assert_eq!(
            attr("<img data-width=3 width=\"4\">", "width").as_deref(),
            Some("4")
        );
    }
}
