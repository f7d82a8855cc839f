//! 103 Early Hints as Chromium acts on them, sans-I/O: the `Link` header
//! values of the page's 103 response read into preloads and preconnects.
//!
//! What Chromium does (content/browser/loader/navigation_early_hints_manager.cc
//! and docs/early-hints.md): only for the main frame's navigation, only the
//! first 103, only over HTTP/2 and HTTP/3 (a 103 over HTTP/1.1 is ignored);
//! `rel=preload` (and `modulepreload`) starts a request from the browser
//! process, so Blink's ResourceLoadScheduler never holds it (it takes no
//! tight-mode place), at a priority from its `as` (font and style HIGHEST,
//! script MEDIUM, image LOWEST, none IDLE: `CalculateRequestPriority`) and
//! incremental (`Priority::of_early_hint`: RFC 9218's `i`, so an h3 server
//! serves the page's own requests of its urgency first);
//! `rel=preconnect` opens a connection to the origin. The preload's response
//! goes to the HTTP cache, so when the page later names the same URL it is
//! not fetched again (the model matches by URL: `page`).

use crate::discover::Found;
use crate::priority::Priority;

/// What one `Link` of a 103 asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hint {
    /// Fetch this resource now, at this priority (from its `as`).
    Preload { found: Found, priority: Priority },
    /// Open a connection to this host.
    Preconnect { host: String },
}

/// The hints of a 103's `Link` header values (each may list several links,
/// comma-separated), resolved against the page's `host` (a root-relative
/// `</s.css>` is the page's own host). Links of other kinds, other schemes
/// and bad syntax are skipped; never panics.
pub fn parse(host: &str, values: &[String]) -> Vec<Hint> {
    let mut hints = Vec::new();
    for value in values {
        for link in split_links(value) {
            if let Some(h) = hint(host, link) {
                if !hints.contains(&h) {
                    hints.push(h);
                }
            }
        }
    }
    hints
}

/// The links of one header value: commas outside `<…>` and quotes split.
fn split_links(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut in_url, mut in_quote) = (0, false, false);
    for (i, c) in value.char_indices() {
        match c {
            '<' if !in_quote => in_url = true,
            '>' if !in_quote => in_url = false,
            '"' if !in_url => in_quote = !in_quote,
            ',' if !in_url && !in_quote => {
                out.push(&value[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&value[start..]);
    out
}

fn hint(host: &str, link: &str) -> Option<Hint> {
    let link = link.trim();
    let rest = link.strip_prefix('<')?;
    let end = rest.find('>')?;
    let url = rest[..end].trim();
    let mut rel = None;
    let mut as_ = None;
    for param in rest[end + 1..].split(';') {
        let Some((name, value)) = param.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"').to_ascii_lowercase();
        match name.trim().to_ascii_lowercase().as_str() {
            "rel" => rel = Some(value),
            "as" => as_ = Some(value),
            _ => {}
        }
    }
    let rel = rel?;
    // `rel` may list several relations.
    let rels: Vec<&str> = rel.split_ascii_whitespace().collect();
    let found = resolve(host, url)?;
    if rels.contains(&"preload") || rels.contains(&"modulepreload") {
        let priority = match as_.as_deref() {
            _ if rels.contains(&"modulepreload") => Priority::of_early_hint(Some("script")),
            a => Priority::of_early_hint(a),
        };
        Some(Hint::Preload { found, priority })
    } else if rels.contains(&"preconnect") {
        Some(Hint::Preconnect { host: found.host })
    } else {
        None
    }
}

/// An absolute (`https://h/p`, `//h/p`) or root-relative (`/p`) URL; its
/// query kept, its fragment dropped.
fn resolve(host: &str, url: &str) -> Option<Found> {
    let url = url.split('#').next()?;
    if url.starts_with('/') && !url.starts_with("//") {
        return Some(Found {
            host: host.to_ascii_lowercase(),
            path: url.to_string(),
        });
    }
    let (host, path) = site::content::split_url(url)?;
    Some(Found { host, path })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(host: &str, path: &str) -> Found {
        Found {
            host: host.into(),
            path: path.into(),
        }
    }

    #[test]
    fn preloads_get_chromiums_priority_from_their_as_each_incremental() {
        let values = vec![
            "</s.css>; rel=preload; as=style, <https://cdn.test/f.woff2>; rel=preload; as=font; crossorigin".to_string(),
            "<//a.test/x.js>; rel=\"preload\"; as=\"script\"".to_string(),
            "</i.png>; rel=preload; as=image".to_string(),
            "</data.json>; rel=preload".to_string(),
        ];
        let hints = parse("a.test", &values);
        // The browser process sets no incremental flag: the default, true.
        let inc = |p: Priority| Priority::new(p.level, true);
        assert_eq!(
            hints,
            vec![
                Hint::Preload {
                    found: found("a.test", "/s.css"),
                    priority: inc(Priority::STYLESHEET)
                },
                Hint::Preload {
                    found: found("cdn.test", "/f.woff2"),
                    priority: inc(Priority::FONT)
                },
                Hint::Preload {
                    found: found("a.test", "/x.js"),
                    priority: inc(Priority::SCRIPT)
                },
                Hint::Preload {
                    found: found("a.test", "/i.png"),
                    priority: inc(Priority::IMAGE)
                },
                Hint::Preload {
                    found: found("a.test", "/data.json"),
                    priority: Priority::new(crate::priority::RequestPriority::Idle, true)
                },
            ]
        );
    }

    #[test]
    fn preconnects_name_a_host_and_other_links_are_skipped() {
        let values = vec![
            "<https://img.test>; rel=preconnect, <https://x.test/>; rel=dns-prefetch".to_string(),
            "</next.html>; rel=prefetch, garbage, <>; rel=preload, <ftp://f.test/a>; rel=preload"
                .to_string(),
            "<https://img.test>; rel=preconnect".to_string(),
        ];
        assert_eq!(
            parse("a.test", &values),
            vec![Hint::Preconnect {
                host: "img.test".into()
            }]
        );
    }

    #[test]
    fn commas_inside_the_url_or_quotes_do_not_split() {
        let values = vec!["</a,b.css>; rel=preload; as=style; title=\"x, y\"".to_string()];
        assert_eq!(
            parse("a.test", &values),
            vec![Hint::Preload {
                found: found("a.test", "/a,b.css"),
                priority: Priority::of_early_hint(Some("style"))
            }]
        );
    }
}
