//! Discovery for a replayed (imported) page: the model cannot run a real
//! page's scripts or resolve its relative URLs, so it reveals each resource
//! when the import says its parent did — head tags at the parent's first
//! bytes, body tags spread over the parent's bytes in order, `url()` and
//! script injections when the parent is complete, a redirect's target when
//! the redirect's response is complete. Built from the Site's tree once,
//! with each request's recorded method and body (`Upload`: an imported
//! page's POSTs are POSTs again, with a body of the recorded size).

use crate::discover::Found;
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
        t
    }

    /// The method and body of the request for (host, path), if it is not a GET.
    pub fn upload(&self, host: &str, path: &str) -> Option<&Upload> {
        self.uploads.get(&(host.to_string(), path.to_string()))
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
