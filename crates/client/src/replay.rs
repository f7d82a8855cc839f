//! Discovery for a replayed (imported) page: the model cannot run a real
//! page's scripts or resolve its relative URLs, so it reveals each resource
//! when the import says its parent did — head tags at the parent's first
//! bytes, body tags spread over the parent's bytes in order, `url()` and
//! script injections when the parent is complete, a redirect's target when
//! the redirect's response is complete. Built from the Site's tree once,
//! with each request's recorded method and body (`Upload`: an imported
//! page's POSTs are POSTs again, with a body of the recorded size).
//! A document's `<link rel=preload>` tags (its recorded HTML's, or those
//! `--preload critical` put in its head) are read from its bytes: each is
//! revealed where its tag ends, at its `as`'s priority, before the tree
//! reveals it again (the page drops repeats).

use crate::discover::{Found, HtmlScanner, Tag};
use crate::priority::Priority;
use bytes::Bytes;
use site::{Kind, Reveal, Site};
use std::collections::HashMap;

/// A request other than a GET: its method and body, sent as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    /// The method (an HTTP token: `Site` checks it).
    pub method: String,
    /// The body (may be empty: a POST without one).
    pub body: Bytes,
}

impl Upload {
    /// Whether the method is one whose requests carry a body by definition,
    /// so that an HTTP/1.1 request says `Content-Length: 0` when it has none.
    pub fn expects_body(&self) -> bool {
        matches!(self.method.as_str(), "POST" | "PUT" | "PATCH")
    }
}

/// When a child is revealed, relative to its parent's response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Once this many body bytes of the parent have arrived (0: at its head).
    Bytes(u64),
    /// Once the parent is complete.
    Done,
}

/// For each resource (host, path with query), the children it reveals and
/// when; and the requests that are not GETs.
#[derive(Debug, Clone, Default)]
pub struct ReplayTree {
    children: HashMap<(String, String), Vec<(Found, When)>>,
    uploads: HashMap<(String, String), Upload>,
    /// Resources a document preloads, at the priority its tag gives.
    preloads: HashMap<(String, String), Priority>,
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
            if let Some(rec) = site.recorded(i).filter(|rec| rec.is_upload()) {
                t.uploads.insert(
                    (r.host.clone(), r.path.clone()),
                    Upload {
                        method: rec.method.clone(),
                        body: Bytes::from(rec.request_body_bytes()),
                    },
                );
            }
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
        t.add_preloads(site);
        t
    }

    /// Each HTML document's `<link rel=preload>` tags, as children revealed
    /// where the tag ends, ahead of the tree's.
    fn add_preloads(&mut self, site: &Site) {
        let known: std::collections::HashSet<(&str, &str)> = site
            .resources
            .iter()
            .map(|r| (r.host.as_str(), r.path.as_str()))
            .collect();
        for (i, r) in site.resources.iter().enumerate() {
            if r.kind != Kind::Html {
                continue;
            }
            let body = site.body(i);
            if !body.windows(7).any(|w| w.eq_ignore_ascii_case(b"preload")) {
                continue;
            }
            let mut scanner = HtmlScanner::default();
            let mut found = Vec::new();
            for (tag, f) in scanner.feed_tagged(&body) {
                let Tag::Preload(priority) = tag else {
                    continue;
                };
                // A name the site does not have would be a miss, not a
                // preload of what the page uses.
                if !known.contains(&(f.host.as_str(), f.path.as_str())) {
                    continue;
                }
                let href = format!("//{}{}", f.host, f.path);
                let at = body
                    .windows(href.len())
                    .position(|w| w == href.as_bytes())
                    .map_or(0, |p| (p + href.len()) as u64);
                self.preloads
                    .entry((f.host.clone(), f.path.clone()))
                    .or_insert(priority);
                found.push((f, When::Bytes(at)));
            }
            let kids = self
                .children
                .entry((r.host.clone(), r.path.clone()))
                .or_default();
            kids.splice(0..0, found);
        }
    }

    /// The priority of a resource a document preloads (None: not preloaded).
    pub fn preload(&self, found: &Found) -> Option<Priority> {
        self.preloads
            .get(&(found.host.clone(), found.path.clone()))
            .copied()
    }

    /// The method and body of the request for (host, path), if it is not a GET.
    pub fn upload(&self, host: &str, path: &str) -> Option<&Upload> {
        self.uploads.get(&(host.to_string(), path.to_string()))
    }

    /// Whether a request of the page is not safe (RFC 9110 §9.2.1: a
    /// method other than GET, HEAD and OPTIONS): one that must not go in
    /// TLS early data (RFC 8470 §4.1; `conn::client_tls_repeat`).
    pub fn has_unsafe(&self) -> bool {
        self.uploads
            .values()
            .any(|u| !matches!(u.method.as_str(), "GET" | "HEAD" | "OPTIONS"))
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
    fn an_imported_post_is_a_post_again_with_its_body() {
        let e = |url: &str, method: &str, post: serde_json::Value| {
            serde_json::json!({"request": {"method": method, "url": url, "postData": post,
                "bodySize": 12},
                "response": {"status": 200, "headers": [],
                "content": {"size": 2, "mimeType": "text/plain", "text": "ok"}}})
        };
        let har = serde_json::json!({"log": {"entries": [
            e("https://a.test/", "GET", serde_json::Value::Null),
            e("https://a.test/mob/tracking", "POST", serde_json::json!({"text": "{\"e\":1}"})),
            e("https://a.test/lite/rum-track?x=1", "POST", serde_json::Value::Null),
        ]}});
        let (site, _) = site::har::import("t", har.to_string().as_bytes()).unwrap();
        let t = ReplayTree::of(&site);
        assert_eq!(t.upload("a.test", "/"), None);
        let u = t.upload("a.test", "/mob/tracking").unwrap();
        assert_eq!(
            (u.method.as_str(), &u.body[..]),
            ("POST", &b"{\"e\":1}"[..])
        );
        let u = t.upload("a.test", "/lite/rum-track?x=1").unwrap();
        assert_eq!((u.method.as_str(), u.body.len()), ("POST", 12));
    }

    #[test]
    fn a_documents_preloads_come_at_their_tags_before_the_tree_reveals_them() {
        let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
        let plain = ReplayTree::of(&site);
        assert!(
            plain.preloads.is_empty(),
            "the built-in page preloads nothing"
        );
        let with = site::Preload::Critical.apply(&site).unwrap();
        let t = ReplayTree::of(&with);
        let doc = with.root();
        let critical = site::critical::critical(&with);
        assert!(!critical.is_empty());
        // All of them within the head's first kilobyte or so, at a preload's
        // priority.
        let early = t.due(&doc.host, &doc.path, 2048, false);
        for &i in &critical {
            let r = &with.resources[i];
            let f = Found {
                host: r.host.clone(),
                path: r.path.clone(),
            };
            assert!(early.contains(&f), "{f:?} not revealed early");
            assert!(t.preload(&f).is_some(), "{f:?} has no preload priority");
        }
        // Everything else as before.
        let n = |t: &ReplayTree| -> usize {
            with.resources
                .iter()
                .map(|r| t.due(&r.host, &r.path, u64::MAX, true).len())
                .sum()
        };
        assert_eq!(n(&t), n(&plain) + critical.len());
    }

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
