//! Discovery, as a browser of 2014 did it: tags in the HTML as its bytes stream
//! in, `url()` in a stylesheet once it is complete, resources a script injects
//! once it has arrived (and run). Reads bytes only — never the Site model.

/// A reference found in a body: scheme-relative `//host/path`, split.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Found {
    pub host: String,
    pub path: String,
}

fn split(url: &str) -> Option<Found> {
    site::content::split_url(url).map(|(host, path)| Found { host, path })
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!("{name}=\"");
    let at = tag.find(&key)? + key.len();
    let end = tag[at..].find('"')? + at;
    Some(&tag[at..end])
}

/// Which tag named a reference: a stylesheet, a script, an image (with the
/// area its `width` and `height` attributes give, in CSS px², when both do),
/// a frame (`<iframe>`, `<embed>`: Blink's preload scanner fetches neither,
/// so each goes out when the parser inserts it), or anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    Stylesheet,
    Script,
    Image {
        area: Option<u64>,
    },
    /// `<link rel=preload href=… as=…>`: fetched at its `as`'s priority,
    /// blocking nothing (`Priority::of_preload`).
    Preload(crate::priority::Priority),
    Frame,
    Other,
}

/// Scans HTML incrementally: feed bytes as they arrive; complete tags are read.
#[derive(Debug, Default)]
pub struct HtmlScanner {
    buf: Vec<u8>,
    scanned: usize,
}

impl HtmlScanner {
    /// Adds bytes; returns the references in tags completed by them.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Found> {
        self.feed_tagged(bytes)
            .into_iter()
            .map(|(_, f)| f)
            .collect()
    }

    /// As `feed`, with the kind of tag each reference came from.
    pub fn feed_tagged(&mut self, bytes: &[u8]) -> Vec<(Tag, Found)> {
        self.buf.extend_from_slice(bytes);
        let mut found = Vec::new();
        loop {
            let rest = &self.buf[self.scanned..];
            let Some(lt) = rest.iter().position(|&b| b == b'<') else {
                self.scanned = self.buf.len();
                break;
            };
            let Some(gt) = rest[lt..].iter().position(|&b| b == b'>') else {
                self.scanned += lt; // wait for the rest of this tag
                break;
            };
            let tag = String::from_utf8_lossy(&rest[lt..lt + gt + 1]).to_string();
            self.scanned += lt + gt + 1;
            let url = classify(&tag);
            if let Some((t, f)) = url.and_then(|(t, u)| Some((t, split(u)?))) {
                found.push((t, f));
            }
        }
        found
    }
}

/// The kind of a tag that names a resource and its URL as written:
/// a preload, a stylesheet, a script, an image (with its attributes' area),
/// an embed or iframe; None for other tags.
fn classify(tag: &str) -> Option<(Tag, &str)> {
    let lower = tag.to_ascii_lowercase();
    let rel = attr(tag, "rel").map(|r| r.to_ascii_lowercase());
    if lower.starts_with("<link") && rel.as_deref() == Some("preload") {
        let as_ = attr(tag, "as").map(|a| a.to_ascii_lowercase());
        attr(tag, "href").map(|u| {
            let p = crate::priority::Priority::of_preload(as_.as_deref());
            (Tag::Preload(p), u)
        })
    } else if lower.starts_with("<link") && lower.contains("stylesheet") {
        attr(tag, "href").map(|u| (Tag::Stylesheet, u))
    } else if lower.starts_with("<script") {
        attr(tag, "src").map(|u| (Tag::Script, u))
    } else if lower.starts_with("<img") {
        let side = |name| attr(tag, name).and_then(|v| v.trim().parse::<u64>().ok());
        let area = side("width")
            .zip(side("height"))
            .map(|(w, h)| w.saturating_mul(h));
        attr(tag, "src").map(|u| (Tag::Image { area }, u))
    } else if ["<embed", "<iframe"].iter().any(|t| lower.starts_with(t)) {
        attr(tag, "src").map(|u| (Tag::Frame, u))
    } else {
        None
    }
}

/// The resources a whole document names in its tags, in document order,
/// each with the byte offset where its tag ends; relative references
/// resolved against the document at `host`/`path`, as a browser's preload
/// scanner does (an imported page's own markup: `crate::replay`).
pub fn tags_of_document(body: &[u8], host: &str, path: &str) -> Vec<(usize, Tag, Found)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(lt) = body[at..].iter().position(|&b| b == b'<') {
        let start = at + lt;
        let Some(gt) = body[start..].iter().position(|&b| b == b'>') else {
            break;
        };
        let end = start + gt + 1;
        let tag = String::from_utf8_lossy(&body[start..end]);
        if let Some((t, u)) = classify(&tag) {
            if let Some(f) = resolve(host, path, u) {
                out.push((end, t, f));
            }
        }
        at = end;
    }
    out
}

/// A reference in the document at `host`/`path`: absolute, scheme-relative,
/// root-relative or relative; None for other schemes and `data:`.
pub(crate) fn resolve(host: &str, path: &str, url: &str) -> Option<Found> {
    let url = url.trim().replace("&amp;", "&");
    let url = url.split('#').next()?;
    if url.is_empty() || url.starts_with("data:") {
        return None;
    }
    if let Some(f) = split(url) {
        return Some(f);
    }
    if url.contains("://") || url.starts_with("javascript:") || url.starts_with("mailto:") {
        return None;
    }
    if url.starts_with('/') {
        return Some(Found {
            host: host.to_string(),
            path: url.to_string(),
        });
    }
    let dir = match path.split('?').next().and_then(|p| p.rfind('/')) {
        Some(i) => &path[..=i],
        None => "/",
    };
    Some(Found {
        host: host.to_string(),
        path: format!("{dir}{url}"),
    })
}

/// The `url()` references of a complete stylesheet.
pub fn css_urls(css: &[u8]) -> Vec<Found> {
    let text = String::from_utf8_lossy(css);
    let mut out = Vec::new();
    let mut rest = &text[..];
    while let Some(i) = rest.find("url(") {
        rest = &rest[i + 4..];
        if let Some(end) = rest.find(')') {
            let u = rest[..end].trim().trim_matches(|c| c == '"' || c == '\'');
            if let Some(f) = split(u) {
                out.push(f);
            }
            rest = &rest[end..];
        }
    }
    out
}

/// What a complete script injects when it runs.
pub fn script_injections(js: &[u8]) -> Vec<Found> {
    let text = String::from_utf8_lossy(js);
    let call = site::content::INJECT_CALL;
    let mut out = Vec::new();
    let mut rest = &text[..];
    while let Some(i) = rest.find(call) {
        rest = &rest[i + call.len()..];
        if let Some(u) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
            if let Some(f) = split(u) {
                out.push(f);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document's tags in order, with where each ends, relative names
    /// resolved against it (h2o.examp1e.net's markup: its first stylesheet
    /// before its scripts).
    #[test]
    fn a_documents_tags_resolve_against_it_in_order() {
        let html = br#"<link rel="stylesheet" href="assets/a.css" /><script src="search/j.js"></script><img src="/i.png" width="2" height="3"><a href="javascript:x()">"#;
        let tags = tags_of_document(html, "h.test", "/dir/page.html");
        let f = |p: &str| Found {
            host: "h.test".into(),
            path: p.into(),
        };
        assert_eq!(
            tags,
            [
                (45, Tag::Stylesheet, f("/dir/assets/a.css")),
                (71, Tag::Script, f("/dir/search/j.js")),
                (119, Tag::Image { area: Some(6) }, f("/i.png")),
            ]
        );
    }

    #[test]
    fn html_tags_are_found_as_bytes_arrive_even_split_mid_tag() {
        let html = br#"<html><head><link rel="stylesheet" href="//a.test/s.css"><script src="//b.test/x.js"></script></head><body><p>hi</p><img src="//c.test/i.png" alt=""></body>"#;
        let mut s = HtmlScanner::default();
        let mut all = Vec::new();
        for chunk in html.chunks(7) {
            all.extend(s.feed(chunk));
        }
        let paths: Vec<_> = all
            .iter()
            .map(|f| format!("{}{}", f.host, f.path))
            .collect();
        assert_eq!(paths, ["a.test/s.css", "b.test/x.js", "c.test/i.png"]);
    }

    #[test]
    fn an_images_area_comes_from_its_width_and_height() {
        let html = br#"<img src="//c.test/a.png" width="313" height="235"><img src="//c.test/b.png" width="32"><iframe src="//d.test/f.html"></iframe>"#;
        let tags: Vec<Tag> = HtmlScanner::default()
            .feed_tagged(html)
            .into_iter()
            .map(|(t, _)| t)
            .collect();
        assert_eq!(
            tags,
            [
                Tag::Image { area: Some(73_555) },
                Tag::Image { area: None },
                Tag::Frame
            ]
        );
    }

    #[test]
    fn the_whole_of_a_built_in_site_is_discoverable_from_its_bytes() {
        let site = site::builtin("http-archive-2014", site::DEFAULT_SEED).unwrap();
        let mut found = 1;
        for (i, r) in site.resources.iter().enumerate() {
            let body = site.body(i);
            found += match r.kind {
                site::Kind::Html => HtmlScanner::default().feed(&body).len(),
                site::Kind::Css => css_urls(&body).len(),
                site::Kind::Js => script_injections(&body).len(),
                _ => 0,
            };
        }
        assert_eq!(found, site.resources.len());
    }

    #[test]
    fn preload_links_are_found_at_their_as_priority_and_block_nothing() {
        let html = br#"<head><link rel="preload" href="//a.test/s.css" as="style"><link rel="preload" href="//a.test/i.png" as="image"><link rel="preconnect" href="//b.test/"></head>"#;
        let found = HtmlScanner::default().feed_tagged(html);
        let tags: Vec<Tag> = found.iter().map(|(t, _)| *t).collect();
        assert_eq!(
            tags,
            [
                Tag::Preload(crate::priority::Priority::STYLESHEET),
                Tag::Preload(crate::priority::Priority::IMAGE)
            ]
        );
        assert_eq!(found[1].1.path, "/i.png");
    }
}
