//! `<link rel=preload>` as a site transform (`--preload critical`, issue 37):
//! the document's critical resources (`critical::critical`) named by
//! `<link rel="preload" href="//host/path" as="style|script|image|font">`
//! tags at the top of its head, so that a browser fetches them as soon as
//! the head's first bytes arrive. Like a layout, a pure transform of the
//! Site: a generated page becomes its generated body with the tags inserted
//! (`Site::with_page`, the root's size grown by the tags); an imported page's
//! recorded document body gets them in its recorded HTML's head (its
//! recorded size grown likewise). Nothing else changes, so a page with and
//! without preloads differ by those bytes alone. Apply it after the layout
//! (a page written by hand keeps its hosts only).

use crate::critical::{critical, document, preload_as};
use crate::model::SiteError;
use crate::tree::Site;
use std::fmt;
use std::str::FromStr;

/// Which resources a page preloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Preload {
    /// The page as it is.
    #[default]
    None,
    /// Its critical resources: render-blocking ones and the LCP image.
    Critical,
}

impl Preload {
    pub const NAMES: [&'static str; 2] = ["none", "critical"];

    /// `site` with this preload's tags (module doc).
    pub fn apply(self, site: &Site) -> Result<Site, SiteError> {
        if self == Preload::None {
            return Ok(site.clone());
        }
        let tags = preload_tags(site);
        if tags.is_empty() {
            return Ok(site.clone());
        }
        let doc = document(site);
        let body = insert_in_head(&site.body(doc), tags.as_bytes());
        let mut resources = site.resources.clone();
        resources[doc].size = body.len();
        let err = |e: SiteError| SiteError(format!("preload {self}: {e}"));
        if site.is_recorded() {
            let mut recorded: Vec<crate::Recorded> = (0..site.resources.len())
                .filter_map(|i| site.recorded(i).cloned())
                .collect();
            recorded[doc].body = Some(body);
            Site::with_recording(&site.name, &site.about, site.seed, resources, recorded)
                .map_err(err)
        } else {
            Site::with_page(&site.name, &site.about, site.seed, resources, body).map_err(err)
        }
    }
}

/// The tags `Preload::Critical` inserts, one a line, in `critical`'s order
/// (fonts with `crossorigin`, as a font preload needs to be used).
pub fn preload_tags(site: &Site) -> String {
    critical(site)
        .into_iter()
        .filter_map(|i| {
            let r = &site.resources[i];
            let kind = preload_as(r.kind)?;
            let cors = if kind == "font" { " crossorigin" } else { "" };
            Some(format!(
                "<link rel=\"preload\" href=\"{}\" as=\"{kind}\"{cors}>\n",
                crate::content::reference(r)
            ))
        })
        .collect()
}

/// `html` with `tags` right after its `<head>` tag; else after `<html>`;
/// else at its start.
fn insert_in_head(html: &[u8], tags: &[u8]) -> Vec<u8> {
    let lower = html.to_ascii_lowercase();
    let after = |name: &[u8]| {
        let at = lower
            .windows(name.len())
            .position(|w| w == name)
            .filter(|&at| {
                // `<head>` or `<head ...>`, not `<header>`.
                matches!(
                    lower.get(at + name.len()),
                    Some(b'>' | b' ' | b'\t' | b'\n' | b'\r')
                )
            })?;
        let gt = lower[at..].iter().position(|&b| b == b'>')?;
        Some(at + gt + 1)
    };
    let at = after(b"<head").or_else(|| after(b"<html")).unwrap_or(0);
    let mut out = Vec::with_capacity(html.len() + tags.len() + 1);
    out.extend_from_slice(&html[..at]);
    if at > 0 && html.get(at - 1) == Some(&b'>') && !tags.starts_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(tags);
    out.extend_from_slice(&html[at..]);
    out
}

impl fmt::Display for Preload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Preload::None => "none",
            Preload::Critical => "critical",
        })
    }
}

impl FromStr for Preload {
    type Err = String;

    fn from_str(s: &str) -> Result<Preload, String> {
        match s {
            "none" => Ok(Preload::None),
            "critical" => Ok(Preload::Critical),
            _ => Err(format!("'{s}' is not a preload: none or critical")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::{builtin, DEFAULT_SEED};

    #[test]
    fn a_generated_page_gets_its_critical_preloads_first_in_its_head() {
        let site = builtin("youtube", DEFAULT_SEED).unwrap();
        let with = Preload::Critical.apply(&site).unwrap();
        let tags = preload_tags(&site);
        assert_eq!(tags.lines().count(), critical(&site).len());
        let before = site.body(0);
        let after = with.body(0);
        assert_eq!(after.len(), before.len() + tags.len() + 1);
        assert_eq!(with.resources[0].size, after.len());
        let text = String::from_utf8(after).unwrap();
        let head = text.find("<head>").unwrap() + "<head>".len();
        assert!(
            text[head..].starts_with(&format!("\n{tags}")),
            "{}",
            &text[..400]
        );
        assert!(tags.contains("as=\"style\"") && tags.contains("as=\"image\""));
        // Everything else is as it was.
        for i in 1..site.resources.len() {
            assert_eq!(with.resources[i], site.resources[i]);
            assert_eq!(with.body(i), site.body(i));
        }
        assert_eq!(Preload::None.apply(&site).unwrap().body(0), before);
    }

    #[test]
    fn an_imported_pages_recorded_html_gets_them_in_its_head() {
        let bytes = include_bytes!("../../../tests/data/pagexray-http2-chrome.har");
        let (site, _) = crate::har::import("h2", bytes).unwrap();
        let with = Preload::Critical.apply(&site).unwrap();
        let doc = document(&site);
        let text = String::from_utf8_lossy(&with.body(doc)).into_owned();
        let first = text.find("<link rel=\"preload\"").unwrap();
        let head = text.to_ascii_lowercase().find("<head").unwrap();
        assert!(
            first > head && first < head + 100,
            "{}",
            &text[..first + 80]
        );
        assert_eq!(with.resources[doc].size, with.body(doc).len());
        assert!(with.is_recorded());
    }

    #[test]
    fn tags_go_after_head_not_header_else_at_the_start() {
        assert_eq!(
            insert_in_head(b"<html><header></header>", b"<x>"),
            b"<html>\n<x><header></header>"
        );
        assert_eq!(insert_in_head(b"<p>", b"<x>"), b"<x><p>");
        assert_eq!(
            insert_in_head(b"<HEAD lang=en><title>", b"<x>"),
            b"<HEAD lang=en>\n<x><title>"
        );
    }
}
