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
/// or anything else (an embed, a frame).
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
            let lower = tag.to_ascii_lowercase();
            let rel = attr(&tag, "rel").map(|r| r.to_ascii_lowercase());
            let url = if lower.starts_with("<link") && rel.as_deref() == Some("preload") {
                let as_ = attr(&tag, "as").map(|a| a.to_ascii_lowercase());
                attr(&tag, "href").map(|u| {
                    let p = crate::priority::Priority::of_preload(as_.as_deref());
                    (Tag::Preload(p), u)
                })
            } else if lower.starts_with("<link") && lower.contains("stylesheet") {
                attr(&tag, "href").map(|u| (Tag::Stylesheet, u))
            } else if lower.starts_with("<script") {
                attr(&tag, "src").map(|u| (Tag::Script, u))
            } else if lower.starts_with("<img") {
                let side = |name| attr(&tag, name).and_then(|v| v.trim().parse::<u64>().ok());
                let area = side("width")
                    .zip(side("height"))
                    .map(|(w, h)| w.saturating_mul(h));
                attr(&tag, "src").map(|u| (Tag::Image { area }, u))
            } else if ["<embed", "<iframe"].iter().any(|t| lower.starts_with(t)) {
                attr(&tag, "src").map(|u| (Tag::Other, u))
            } else {
                None
            };
            if let Some((t, f)) = url.and_then(|(t, u)| Some((t, split(u)?))) {
                found.push((t, f));
            }
        }
        found
    }
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
                Tag::Other
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
