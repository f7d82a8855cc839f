//! Discovery for a replayed (imported) page: the model cannot run a real
//! page's scripts or resolve what a stylesheet's relative url()s name, so
//! it reveals each resource when the import says its parent did. A
//! document's child that its bytes as served name in a tag (relative
//! references resolved against the document; every child of a page
//! imported without its HTML, whose document the lab writes with a real
//! tag for each) comes
//! where that tag ends, with the tag's kind and image size, in document
//! order; other head tags at the parent's first bytes, other body tags
//! spread over the parent's bytes in order; `url()` and script injections
//! when the parent is complete, a redirect's target when the redirect's
//! response is complete. Built from the Site's tree once, with each
//! request's recorded method and body (`Upload`: an imported page's POSTs
//! are POSTs again, with a body of the recorded size). A document's
//! `<link rel=preload>` tags (its recorded HTML's, or those `--preload
//! critical` put in its head) come where their tags end, at their `as`'s
//! priority, before the tree reveals them again (the page drops repeats).
//!
//! With browser costs the renderer (`crate::render`) takes the tree's
//! children where it would have found tags in the bytes ([`ReplayTree::newly_due`]):
//! each with the tag its kind and place make it (a stylesheet or script the
//! document names, an image), so an imported page goes through the same main
//! thread, tight mode and priorities as a built-in one.

use crate::discover::{tags_of_document, Found, Tag};
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

/// A child a resource reveals, when, and the tag that names it.
type Child = (Found, When, Tag);

/// For each resource (host, path with query), the children it reveals and
/// when; and the requests that are not GETs.
#[derive(Debug, Clone, Default)]
pub struct ReplayTree {
    children: HashMap<(String, String), Vec<Child>>,
    /// Each resource's kind (whence the priority of one no tag names).
    kinds: HashMap<(String, String), Kind>,
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
            t.kinds.insert((r.host.clone(), r.path.clone()), r.kind);
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
            // What names it in its parent's markup: a document's stylesheet
            // or script tag, an image; what no tag names (a url(), an
            // injection, a redirect's target) is `Other`.
            let tag = match (parent.kind, r.kind) {
                _ if p != tree_parent => Tag::Other,
                (Kind::Html, Kind::Css) => Tag::Stylesheet,
                (Kind::Html, Kind::Js) => Tag::Script,
                (Kind::Html, Kind::Png) => Tag::Image { area: None },
                _ => Tag::Other,
            };
            t.children
                .entry((parent.host.clone(), parent.path.clone()))
                .or_default()
                .push((
                    Found {
                        host: r.host.clone(),
                        path: r.path.clone(),
                    },
                    when,
                    tag,
                ));
        }
        t.read_documents(site);
        t
    }

    /// Reads each HTML document as served: a child its bytes name in a tag
    /// is revealed where that tag ends, with the tag's kind and image area
    /// (as the renderer would find it in the bytes), the document's
    /// children kept in the order they come; its `<link rel=preload>` tags
    /// are children of their own, ahead of the tree's. Relative references
    /// (a recorded page's own markup) are resolved against the document,
    /// as the preload scanner does: without that, a recorded page's
    /// stylesheets and scripts came in the HAR's order, not the markup's
    /// (h2o.examp1e.net's scripts before its first stylesheet). A child
    /// the bytes do not name (an injection) keeps the tree's estimate.
    fn read_documents(&mut self, site: &Site) {
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
            let mut preloads = Vec::new();
            let mut named: HashMap<Found, (When, Tag)> = HashMap::new();
            for (end, tag, f) in tags_of_document(&body, &r.host, &r.path) {
                // A name the site does not have would be a miss, not a
                // resource the page uses.
                if !known.contains(&(f.host.as_str(), f.path.as_str())) {
                    continue;
                }
                let when = When::Bytes(end as u64);
                match tag {
                    Tag::Preload(priority) => {
                        self.preloads
                            .entry((f.host.clone(), f.path.clone()))
                            .or_insert(priority);
                        preloads.push((f, when, tag));
                    }
                    _ => {
                        named.entry(f).or_insert((when, tag));
                    }
                }
            }
            let kids = self
                .children
                .entry((r.host.clone(), r.path.clone()))
                .or_default();
            for (f, when, tag) in kids.iter_mut() {
                if let (When::Bytes(_), Some(&(w, t))) = (*when, named.get(f)) {
                    (*when, *tag) = (w, t);
                }
            }
            kids.splice(0..0, preloads);
            // Document order: by where each is revealed, the document's end last.
            kids.sort_by_key(|(_, when, _)| match when {
                When::Bytes(b) => (0, *b),
                When::Done => (1, 0),
            });
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
        self.newly_due(host, path, None, bytes, done)
            .into_iter()
            .map(|(_, f)| f)
            .collect()
    }

    /// The children of (host, path) that `bytes` (and `done`) make due and
    /// `before` bytes did not (None: none had arrived, nor its head), in
    /// the tree's order, each with the tag that names it.
    pub fn newly_due(
        &self,
        host: &str,
        path: &str,
        before: Option<u64>,
        bytes: u64,
        done: bool,
    ) -> Vec<(Tag, Found)> {
        let Some(kids) = self.children.get(&(host.to_string(), path.to_string())) else {
            return Vec::new();
        };
        let due_at = |when: &When, seen: Option<u64>, done: bool| match (when, seen) {
            (_, None) => false,
            (When::Bytes(b), Some(n)) => done || n >= *b,
            (When::Done, _) => done,
        };
        kids.iter()
            .filter(|(_, when, _)| due_at(when, Some(bytes), done) && !due_at(when, before, false))
            .map(|(f, _, tag)| (*tag, f.clone()))
            .collect()
    }

    /// The kind a resource was recorded as (None: not in the page).
    pub fn kind_of(&self, found: &Found) -> Option<Kind> {
        self.kinds
            .get(&(found.host.clone(), found.path.clone()))
            .copied()
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

    /// A page imported without its HTML is served with a real tag for
    /// each child: each comes where its tag ends, with its image's area, in
    /// document order, whatever the HAR's order of entries.
    #[test]
    fn a_documents_children_come_at_their_tags_in_document_order() {
        let har = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/pagexray-http1.1-chrome.har"
        ))
        .unwrap();
        let (site, _) = site::har::import("t", &har).unwrap();
        let t = ReplayTree::of(&site);
        let doc = site.root();
        let body = site.body(0);
        let kids = &t.children[&(doc.host.clone(), doc.path.clone())];
        // The HAR lists the analytics script after nine images; the page
        // names it in its head, first.
        let (ga, when, tag) = &kids[0];
        assert_eq!(ga.path, "/ga.js");
        assert_eq!(*tag, Tag::Script);
        let tag_end = |href: &str| {
            let at = body
                .windows(href.len())
                .position(|w| w == href.as_bytes())
                .unwrap();
            (at + body[at..].iter().position(|&b| b == b'>').unwrap() + 1) as u64
        };
        assert_eq!(
            *when,
            When::Bytes(tag_end("//ssl.google-analytics.com/ga.js"))
        );
        let mut last = 0;
        for (f, when, _) in kids {
            let When::Bytes(b) = *when else {
                panic!("{f:?} is named by the document")
            };
            assert!(b >= last, "{f:?} out of document order");
            last = b;
        }
        let area = |path: &str| {
            kids.iter()
                .find(|(f, _, _)| f.path == path)
                .map(|(_, _, tag)| *tag)
                .unwrap()
        };
        assert_eq!(
            area("/img/dashboard.png"),
            Tag::Image {
                area: Some(558 * 419)
            }
        );
        assert_eq!(
            area("/img/star3.png"),
            Tag::Image {
                area: Some(31 * 31)
            }
        );
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
