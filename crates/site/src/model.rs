//! The Site model: a page as a tree of Resources (host, path, kind, size,
//! parent, and how the parent reveals it), its content, and sharding of its
//! hosts onto server addresses.

use crate::content;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt;

/// What a resource is; decides its format and Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Html,
    Css,
    Js,
    Png,
    Font,
    Flash,
    Other,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Html,
        Kind::Css,
        Kind::Js,
        Kind::Png,
        Kind::Font,
        Kind::Flash,
        Kind::Other,
    ];

    pub fn content_type(self) -> &'static str {
        match self {
            Kind::Html => "text/html; charset=utf-8",
            Kind::Css => "text/css",
            Kind::Js => "application/javascript",
            Kind::Png => "image/png",
            Kind::Font => "font/woff",
            Kind::Flash => "application/x-shockwave-flash",
            Kind::Other => "application/octet-stream",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Html => "html",
            Kind::Css => "css",
            Kind::Js => "js",
            Kind::Png => "png",
            Kind::Font => "font",
            Kind::Flash => "flash",
            Kind::Other => "other",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a parent reveals a resource to the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reveal {
    /// The page itself.
    Root,
    /// A tag in the HTML head (stylesheets, scripts).
    Head,
    /// A tag in the HTML body (images, scripts, embeds), found as the body streams in.
    Body,
    /// A `url()` in a stylesheet, known once the stylesheet is complete.
    Css,
    /// Injected by a script once the script has arrived and run.
    Script,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resource {
    pub host: String,
    pub path: String,
    pub kind: Kind,
    pub size: usize,
    /// Index of the parent in `Site::resources`; None for the root.
    pub parent: Option<usize>,
    pub reveal: Reveal,
}

impl Resource {
    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://{}{}", self.host, self.path)
    }
}

/// A page: resources in discovery order, the root (the HTML page) first.
#[derive(Debug, Clone, Serialize)]
pub struct Site {
    pub name: String,
    pub about: String,
    pub seed: u64,
    pub resources: Vec<Resource>,
    #[serde(skip)]
    index: HashMap<(String, String), usize>,
}

/// Why a Site is not valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteError(pub String);

impl fmt::Display for SiteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SiteError {}

impl Site {
    /// Checks the tree and builds the lookup index. Errors name the resource.
    pub fn new(
        name: &str,
        about: &str,
        seed: u64,
        resources: Vec<Resource>,
    ) -> Result<Site, SiteError> {
        let err = |i: usize, r: &Resource, msg: String| {
            SiteError(format!(
                "resource {} (//{}{}): {msg}",
                i + 1,
                r.host,
                r.path
            ))
        };
        if resources.is_empty() {
            return Err(SiteError("a site needs at least one resource".into()));
        }
        let mut index = HashMap::new();
        for (i, r) in resources.iter().enumerate() {
            if !valid_host(&r.host) {
                return Err(err(i, r, format!("'{}' is not a valid host name", r.host)));
            }
            if !r.path.starts_with('/') || r.path.contains(|c: char| c.is_whitespace() || c == '"')
            {
                return Err(err(
                    i,
                    r,
                    "a path starts with / and has no spaces or quotes".into(),
                ));
            }
            if index.insert((r.host.clone(), r.path.clone()), i).is_some() {
                return Err(err(i, r, "the same URL appears twice".into()));
            }
            match (i, r.parent, r.reveal) {
                (0, None, Reveal::Root) if r.kind == Kind::Html => {}
                (0, _, _) => {
                    return Err(err(
                        i,
                        r,
                        "the first resource is the page: kind html, no parent".into(),
                    ))
                }
                (_, None, _) | (_, _, Reveal::Root) => {
                    return Err(err(i, r, "only the first resource has no parent".into()))
                }
                (_, Some(p), reveal) => {
                    if p >= i {
                        return Err(err(i, r, "a parent must come before its children".into()));
                    }
                    let pk = resources[p].kind;
                    let ok = match reveal {
                        Reveal::Head | Reveal::Body => pk == Kind::Html,
                        Reveal::Css => pk == Kind::Css,
                        Reveal::Script => pk == Kind::Js,
                        Reveal::Root => false,
                    };
                    if !ok {
                        return Err(err(
                            i,
                            r,
                            format!("a {pk} parent cannot reveal it by '{reveal:?}'")
                                .to_lowercase(),
                        ));
                    }
                }
            }
        }
        let site = Site {
            name: name.to_string(),
            about: about.to_string(),
            seed,
            resources,
            index,
        };
        for (i, r) in site.resources.iter().enumerate() {
            let min = content::min_size(r, &site.children(i), &site.grandchildren(i));
            if r.size < min {
                return Err(err(
                    i,
                    r,
                    format!(
                        "size {} is too small for its content (at least {min} bytes)",
                        r.size
                    ),
                ));
            }
        }
        Ok(site)
    }

    pub fn root(&self) -> &Resource {
        &self.resources[0]
    }

    /// The resources `i` reveals, in order.
    pub fn children(&self, i: usize) -> Vec<&Resource> {
        self.resources
            .iter()
            .filter(|r| r.parent == Some(i))
            .collect()
    }

    /// For each resource `i` reveals, how many it reveals in turn.
    pub fn grandchildren(&self, i: usize) -> Vec<usize> {
        let kids: Vec<usize> = (0..self.resources.len())
            .filter(|&c| self.resources[c].parent == Some(i))
            .collect();
        kids.iter()
            .map(|&c| {
                self.resources
                    .iter()
                    .filter(|r| r.parent == Some(c))
                    .count()
            })
            .collect()
    }

    /// Index of the resource at `host` + `path` (path without query).
    pub fn find(&self, host: &str, path: &str) -> Option<usize> {
        let path = path.split('?').next().unwrap_or(path);
        self.index
            .get(&(host.to_ascii_lowercase(), path.to_string()))
            .copied()
    }

    /// The body of resource `i`, generated from the seed: the same bytes every time.
    pub fn body(&self, i: usize) -> Vec<u8> {
        content::generate(
            &self.resources[i],
            &self.children(i),
            &self.grandchildren(i),
            self.seed,
        )
    }

    /// Distinct hosts, in order of first appearance.
    pub fn hosts(&self) -> Vec<&str> {
        let mut seen = Vec::new();
        for r in &self.resources {
            if !seen.contains(&r.host.as_str()) {
                seen.push(r.host.as_str());
            }
        }
        seen
    }

    pub fn total_bytes(&self) -> usize {
        self.resources.iter().map(|r| r.size).sum()
    }

    /// Each host and the shard (1..=shards) that serves it: round-robin in order
    /// of first appearance; with one shard all hosts share one address.
    pub fn shard_map(&self, shards: usize) -> Vec<(String, usize)> {
        let shards = shards.max(1);
        self.hosts()
            .into_iter()
            .enumerate()
            .map(|(i, h)| (h.to_string(), i % shards + 1))
            .collect()
    }

    /// Depth of each resource in the tree (the root is 0).
    pub fn depth(&self, i: usize) -> usize {
        let mut d = 0;
        let mut at = i;
        while let Some(p) = self.resources[at].parent {
            d += 1;
            at = p;
        }
        d
    }
}

fn valid_host(h: &str) -> bool {
    !h.is_empty()
        && h.len() <= 253
        && h.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}
