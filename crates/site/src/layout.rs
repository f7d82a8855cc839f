//! Layouts: how a Site's resources map to host names (and so to server
//! addresses) — `origin` (each host as on the live site), `mirror` (every
//! resource on the page's own host, as 004's wget mirror, §V), `shards:N`
//! (resources spread round-robin over N host names, as 004's Fig. 8). A layout
//! is a pure transform of the tree: each resource keeps its kind, size, parent
//! and reveal; only its host (and, on a clash, its path) changes, and the
//! bodies follow because content is generated from the tree (a page written by
//! hand, `Site::with_page`, only where its URLs stay).

use crate::model::{Resource, SiteError};
use crate::tree::Site;
use std::collections::HashSet;
use std::fmt;
use std::str::FromStr;

/// The most shards a layout may ask for (a testbed's server addresses).
pub const MAX_SHARDS: usize = 254;

/// How a Site's resources map to host names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Layout {
    /// Each host as on the live site.
    #[default]
    Origin,
    /// Every resource on the page's own host (004 §V: "mirroring the three
    /// websites on a single server").
    Mirror,
    /// Resources spread round-robin over N host names in document order, the
    /// page on the first (004 Fig. 8); `Shards(1)` is `Mirror`.
    Shards(usize),
}

impl Layout {
    /// The forms a layout is written in, for help and errors.
    pub const FORMS: &'static str = "origin, mirror or shards:N (N in 1..=254)";

    /// How many server addresses the layout puts the site on: one per host
    /// name for `shards:N`, one for `mirror`; None for `origin`, whose hosts
    /// are spread over the addresses the caller chooses.
    pub fn addresses(self) -> Option<usize> {
        match self {
            Layout::Origin => None,
            Layout::Mirror => Some(1),
            Layout::Shards(n) => Some(n),
        }
    }

    /// The host name of shard `k` (0-based) of a page on `root`: the page's
    /// own host first, then `shard2.<root>`, `shard3.<root>`, …
    pub fn shard_host(root: &str, k: usize) -> String {
        if k == 0 {
            root.to_string()
        } else {
            format!("shard{}.{root}", k + 1)
        }
    }

    /// `site` with its resources moved to this layout's hosts. Kinds, sizes,
    /// parents and reveals are unchanged; a path that would clash with
    /// another on the same host is prefixed with its old host
    /// (`/old.host/path`, as wget's mirror directories). An error when a
    /// resource is too small for its longer references.
    pub fn apply(self, site: &Site) -> Result<Site, SiteError> {
        if self == Layout::Origin {
            // Each host as it is: the site itself (an imported page keeps its
            // recorded side).
            return Ok(site.clone());
        }
        if site.is_recorded() {
            // Recorded bodies and redirects name the page's own hosts; moving
            // resources to other hosts would need them rewritten.
            return Err(SiteError(format!(
                "layout {self}: an imported page replays on its own hosts only (layout origin)"
            )));
        }
        let root = site.root().host.clone();
        let host_of = |i: usize, r: &Resource| match self {
            Layout::Origin => r.host.clone(),
            Layout::Mirror => root.clone(),
            Layout::Shards(n) => Layout::shard_host(&root, i % n.max(1)),
        };
        let mut seen: HashSet<(String, String)> = HashSet::new();
        let mut resources = Vec::with_capacity(site.resources.len());
        for (i, r) in site.resources.iter().enumerate() {
            let host = host_of(i, r);
            let mut path = r.path.clone();
            if seen.contains(&(host.clone(), path.clone())) {
                path = format!("/{}{}", r.host, r.path);
            }
            seen.insert((host.clone(), path.clone()));
            resources.push(Resource {
                host,
                path,
                ..r.clone()
            });
        }
        Site::new(&site.name, &site.about, site.seed, resources)
            .and_then(|laid| site.carry_page(laid))
            .map_err(|e| SiteError(format!("layout {self}: {e}")))
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Layout::Origin => f.write_str("origin"),
            Layout::Mirror => f.write_str("mirror"),
            Layout::Shards(n) => write!(f, "shards:{n}"),
        }
    }
}

impl FromStr for Layout {
    type Err = String;

    fn from_str(s: &str) -> Result<Layout, String> {
        let bad = || format!("'{s}' is not a layout: {}", Layout::FORMS);
        match s {
            "origin" => Ok(Layout::Origin),
            "mirror" => Ok(Layout::Mirror),
            _ => {
                let n: usize = s
                    .strip_prefix("shards:")
                    .ok_or_else(bad)?
                    .parse()
                    .map_err(|_| bad())?;
                if (1..=MAX_SHARDS).contains(&n) {
                    Ok(Layout::Shards(n))
                } else {
                    Err(bad())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profiles::{builtin, BUILTIN};

    #[test]
    fn names_round_trip_and_bad_ones_are_refused() {
        for s in ["origin", "mirror", "shards:1", "shards:7", "shards:254"] {
            assert_eq!(s.parse::<Layout>().unwrap().to_string(), s);
        }
        for s in [
            "",
            "Mirror",
            "shards",
            "shards:",
            "shards:0",
            "shards:255",
            "shards:x",
        ] {
            let e = s.parse::<Layout>().unwrap_err();
            assert!(e.contains("origin, mirror or shards:N"), "{s}: {e}");
        }
    }

    #[test]
    fn mirror_puts_every_resource_on_the_page_host() {
        for name in BUILTIN {
            let s = builtin(name, 1).unwrap();
            let m = Layout::Mirror.apply(&s).unwrap();
            assert_eq!(m.hosts(), vec![s.root().host.as_str()], "{name}");
        }
    }

    #[test]
    fn shards_spread_resources_round_robin_over_n_names() {
        let s = builtin("youtube", 1).unwrap();
        let m = Layout::Shards(3).apply(&s).unwrap();
        assert_eq!(
            m.hosts(),
            vec![
                "www.youtube.com",
                "shard2.www.youtube.com",
                "shard3.www.youtube.com"
            ]
        );
        assert_eq!(m.resources[4].host, "shard2.www.youtube.com");
        // One shard is the mirror; more shards than resources leave some empty.
        let one = Layout::Shards(1).apply(&s).unwrap();
        assert_eq!(one.resources, Layout::Mirror.apply(&s).unwrap().resources);
        let t = builtin("twitter", 1).unwrap();
        assert_eq!(Layout::Shards(20).apply(&t).unwrap().hosts().len(), 7);
    }

    #[test]
    fn clashing_paths_are_prefixed_with_their_old_host() {
        let r = |host: &str, path: &str, parent: Option<usize>| Resource {
            host: host.into(),
            path: path.into(),
            kind: if parent.is_none() {
                crate::Kind::Html
            } else {
                crate::Kind::Png
            },
            size: if parent.is_none() { 2000 } else { 100 },
            parent,
            reveal: if parent.is_none() {
                crate::Reveal::Root
            } else {
                crate::Reveal::Body
            },
        };
        let s = Site::new(
            "x",
            "",
            1,
            vec![
                r("a.test", "/", None),
                r("a.test", "/i.png", Some(0)),
                r("b.test", "/i.png", Some(0)),
            ],
        )
        .unwrap();
        let m = Layout::Mirror.apply(&s).unwrap();
        assert_eq!(m.resources[1].path, "/i.png");
        assert_eq!(m.resources[2].path, "/b.test/i.png");
        let html = String::from_utf8(m.body(0)).unwrap();
        assert!(html.contains("//a.test/b.test/i.png"), "{html}");
    }
}
