//! Discovery for a replayed (imported) page: the model cannot run a real
//! page's scripts or resolve its relative URLs, so it reveals each resource
//! when the import says its parent did — head tags at the parent's first
//! bytes, body tags spread over the parent's bytes in order, `url()` and
//! script injections when the parent is complete, a redirect's target when
//! the redirect's response is complete. Built from the Site's tree once.

use crate::discover::Found;
use site::{Kind, Reveal, Site};
use std::collections::HashMap;

/// When a child is revealed, relative to its parent's response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Once this many body bytes of the parent have arrived (0: at its head).
    Bytes(u64),
    /// Once the parent is complete.
    Done,
}

/// For each resource (host, path with query), the children it reveals and when.
#[derive(Debug, Clone, Default)]
pub struct ReplayTree {
    children: HashMap<(String, String), Vec<(Found, When)>>,
}

impl ReplayTree {
    /// The tree of an imported site (any site works: generated sites give the
    /// same children the bytes would).
    pub fn of(site: &Site) -> ReplayTree {
        let mut t = ReplayTree::default();
        let redirected_from: HashMap<usize, usize> = (0..site.resources.len())
            .filter_map(|i| {
                site.recorded(i)
                    .and_then(|r| r.redirect_to)
                    .map(|to| (to, i))
            })
            .collect();
        let mut body_seen: HashMap<usize, u64> = HashMap::new();
        for (i, r) in site.resources.iter().enumerate() {
            let Some(tree_parent) = r.parent else {
                continue;
            };
            let (p, when) = if let Some(&from) = redirected_from.get(&i) {
                (from, When::Done)
            } else {
                let parent = &site.resources[tree_parent];
                let when = match r.reveal {
                    Reveal::Head | Reveal::Root => When::Bytes(0),
                    Reveal::Body if parent.kind == Kind::Html => {
                        let n = site
                            .resources
                            .iter()
                            .filter(|c| c.parent == Some(tree_parent) && c.reveal == Reveal::Body)
                            .count() as u64;
                        let k = body_seen.entry(tree_parent).or_insert(0);
                        *k += 1;
                        When::Bytes(parent.size as u64 * *k / (n + 1))
                    }
                    _ => When::Done,
                };
                (tree_parent, when)
            };
            let parent = &site.resources[p];
            t.children
                .entry((parent.host.clone(), parent.path.clone()))
                .or_default()
                .push((
                    Found {
                        host: r.host.clone(),
                        path: r.path.clone(),
                    },
                    when,
                ));
        }
        t
    }

    /// The children of (host, path) due once `bytes` of its body have
    /// arrived (`done`: the response is complete); the page drops repeats.
    pub fn due(&self, host: &str, path: &str, bytes: u64, done: bool) -> Vec<Found> {
        let Some(kids) = self.children.get(&(host.to_string(), path.to_string())) else {
            return Vec::new();
        };
        kids.iter()
            .filter(|(_, when)| match when {
                When::Bytes(b) => done || bytes >= *b,
                When::Done => done,
            })
            .map(|(f, _)| f.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_site_replays_the_children_its_bytes_reveal() {
        let site = site::builtin("http-archive-2014", site::DEFAULT_SEED).unwrap();
        let t = ReplayTree::of(&site);
        let mut found = 1;
        for r in &site.resources {
            found += t.due(&r.host, &r.path, u64::MAX, true).len();
        }
        assert_eq!(found, site.resources.len());
        let root = site.root();
        assert!(
            t.due(&root.host, &root.path, 0, false).len()
                < t.due(&root.host, &root.path, 0, true).len()
        );
    }
}
