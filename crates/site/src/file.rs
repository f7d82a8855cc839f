//! Sites written by users in TOML. Errors name the file, the line and the field.
//!
//! ```toml
//! name = "shop"
//! seed = 7                       # optional: content and filler
//!
//! [[resource]]
//! url = "//www.shop.test/"       # the page comes first
//! kind = "html"
//! size = "30kb"
//!
//! [[resource]]
//! url = "//static.shop.test/app.css"
//! kind = "css"                   # html, css, js, png, font, flash, other
//! size = "12kb"
//! parent = "//www.shop.test/"
//! reveal = "head"                # head, body (HTML), css (url()), script (injected)
//! ```

use crate::model::{Kind, Resource, Reveal};
use crate::tree::Site;
use serde::Deserialize;
use toml::Spanned;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SiteFile {
    name: Spanned<String>,
    #[serde(default)]
    about: String,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    resource: Vec<ResourceFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResourceFile {
    url: Spanned<String>,
    kind: Spanned<Kind>,
    size: Spanned<String>,
    #[serde(default)]
    parent: Option<Spanned<String>>,
    #[serde(default)]
    reveal: Option<Spanned<Reveal>>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

use crate::content::split_url;

/// Parses and validates a Site; `file` names the source in errors.
pub fn parse(file: &str, text: &str) -> Result<Site, String> {
    let doc: SiteFile = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        match line {
            Some(l) => format!("{file}:{l}: {}", e.message()),
            None => format!("{file}: {}", e.message()),
        }
    })?;
    let at = |span: std::ops::Range<usize>, field: &str, msg: String| {
        format!("{file}:{}: {field}: {msg}", line_of(text, span.start))
    };
    let mut resources: Vec<Resource> = Vec::new();
    let mut urls: Vec<(String, String)> = Vec::new();
    for (i, r) in doc.resource.iter().enumerate() {
        let (host, path) = split_url(r.url.get_ref()).ok_or_else(|| {
            at(
                r.url.span(),
                "url",
                format!("'{}' is not //host/path", r.url.get_ref()),
            )
        })?;
        let size = link::units::parse_bytes(r.size.get_ref())
            .map_err(|e| at(r.size.span(), "size", e.to_string()))?;
        let parent = match &r.parent {
            None => None,
            Some(p) => {
                let key = split_url(p.get_ref()).ok_or_else(|| {
                    at(
                        p.span(),
                        "parent",
                        format!("'{}' is not //host/path", p.get_ref()),
                    )
                })?;
                Some(urls.iter().position(|u| *u == key).ok_or_else(|| {
                    at(
                        p.span(),
                        "parent",
                        format!("'{}' is not an earlier resource's url", p.get_ref()),
                    )
                })?)
            }
        };
        let reveal = match (&r.reveal, parent) {
            (Some(v), _) => *v.get_ref(),
            (None, None) => Reveal::Root,
            (None, Some(_)) => {
                return Err(at(
                    r.url.span(),
                    "reveal",
                    "missing: head, body, css or script".into(),
                ))
            }
        };
        urls.push((host.clone(), path.clone()));
        resources.push(Resource {
            host,
            path,
            kind: *r.kind.get_ref(),
            size,
            parent,
            reveal,
        });
        // Check each resource as it is added, so the error points at its line.
        if let Err(e) = Site::new("check", "", 0, resources.clone()) {
            let msg = e.to_string();
            let own = format!("(//{}{}): ", urls[i].0, urls[i].1);
            return Err(match msg.split_once(&own) {
                Some((_, m)) if m.contains("too small") => at(r.size.span(), "size", m.into()),
                Some((_, m)) => at(r.url.span(), "resource", m.into()),
                None => at(r.url.span(), "resource", msg),
            });
        }
    }
    if resources.is_empty() {
        return Err(format!(
            "{file}: no [[resource]]: a site needs at least its page"
        ));
    }
    let name = doc.name.get_ref().trim();
    if name.is_empty() {
        return Err(at(doc.name.span(), "name", "must not be empty".into()));
    }
    Site::new(
        name,
        &doc.about,
        doc.seed.unwrap_or(crate::profiles::DEFAULT_SEED),
        resources,
    )
    .map_err(|e| format!("{file}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"name = "shop"
[[resource]]
url = "//www.shop.test/"
kind = "html"
size = "5kb"

[[resource]]
url = "//static.shop.test/app.css"
kind = "css"
size = "2kb"
parent = "//www.shop.test/"
reveal = "head"

[[resource]]
url = "//static.shop.test/logo.png"
kind = "png"
size = "1500b"
parent = "//static.shop.test/app.css"
reveal = "css"
"#;

    #[test]
    fn a_good_file_parses() {
        let s = parse("shop.toml", GOOD).unwrap();
        assert_eq!(s.resources.len(), 3);
        assert_eq!(s.hosts(), vec!["www.shop.test", "static.shop.test"]);
        assert_eq!(s.body(2).len(), 1500);
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let bad = GOOD.replace("size = \"2kb\"", "size = \"2 kilobytes\"");
        let e = parse("shop.toml", &bad).unwrap_err();
        assert!(e.starts_with("shop.toml:10: size:"), "{e}");
        let bad = GOOD.replace(
            "parent = \"//static.shop.test/app.css\"",
            "parent = \"//nowhere.test/\"",
        );
        let e = parse("shop.toml", &bad).unwrap_err();
        assert!(e.starts_with("shop.toml:18: parent:"), "{e}");
        let bad = GOOD.replace("kind = \"png\"", "kind = \"gif\"");
        let e = parse("shop.toml", &bad).unwrap_err();
        assert!(e.starts_with("shop.toml:16:"), "{e}");
        let bad = GOOD.replace("reveal = \"css\"", "reveal = \"head\"");
        let e = parse("shop.toml", &bad).unwrap_err();
        assert!(
            e.starts_with("shop.toml:15: resource:") && e.contains("cannot reveal"),
            "{e}"
        );
        let bad = GOOD.replace("size = \"5kb\"", "size = \"100b\"");
        let e = parse("shop.toml", &bad).unwrap_err();
        assert!(e.contains("size") && e.contains("too small"), "{e}");
        let e = parse("x.toml", "name = \"x\"\ncolour = 3\n").unwrap_err();
        assert!(e.starts_with("x.toml:2:"), "{e}");
    }
}
