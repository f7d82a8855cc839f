//! The HTTP/2 prioritization test — Pat Meenan's stand-alone page
//! (github.com/pmeenan/http2priorities, `stand-alone/`) — driven by the
//! model, so that it runs on every server and protocol the lab has and its
//! result is a page load like any other (`PageResult` with HAR entries:
//! the HAR, the report's waterfall and the scoring read it as they read a
//! page's).
//!
//! The sequence, on the connections to the page's host (one session over
//! h2, SPDY and h3; Chrome's six per host over HTTP/1.1, by the page
//! loader's pool rules), after the document:
//!
//! 1. the image [`IMAGE_PATH`] `?ref=1`, and once it is complete `?ref=2`:
//!    one at a time, the reference (`ref=2`'s duration is the reference
//!    time; `ref=1` warms the connection up);
//! 2. then 30 at once, `?low=1` … `?low=30`;
//! 3. once two of those are complete, `?high=1`, and once it is complete
//!    `?high=2`.
//!
//! The page is done when every one is. The references and the lows are
//! off-screen images: Blink's Low, the network stack's LOWEST (SPDY 3, HTTP/2
//! weight 147, `priority: i`). The highs are visible images: Chromium starts
//! them at LOWEST and raises them to Blink's High (MEDIUM: SPDY 1, weight
//! 220, `u=1, i`) once layout has placed them in the viewport (a PRIORITY
//! frame on HTTP/2, a PRIORITY_UPDATE on HTTP/3); the model sends MEDIUM at
//! once. (Chromium's BoostImagePriority may also raise the first five images
//! a document fetches to Blink's Medium; the model gives the test's images
//! the priorities the test means them to have.)
//!
//! The URL scheme is the site's (`site::priorities::Tag`), one place for the
//! test page Chromium runs, this sequence and the lab's scoring. [`Sequence`], the
//! sequencing rule, is sans-I/O; [`run`] drives it through the page loader
//! (`page::load_scripted_keeping_connections`), so the connections,
//! scheduling and timings are the page loader's own.

use crate::discover::Found;
use crate::page::{self, OpenConnections, PageConfig, PageResult, Script};
use crate::priority::Priority;
use std::collections::VecDeque;

/// The test's URLs and counts are the site's (`site::priorities`: the page
/// Chromium runs asks for the same fetches).
pub use site::priorities::{Tag, FILL, HIGHS, IMAGE_PATH, LOWS, REFS};

/// The references' and the lows' priority: off-screen images.
pub const LOW_PRIORITY: Priority = Priority::IMAGE;
/// The highs' priority: images in the viewport.
pub const HIGH_PRIORITY: Priority = Priority::VISIBLE_IMAGE;

/// The priority the test gives a fetch.
pub fn priority(tag: Tag) -> Priority {
    match tag {
        Tag::High(_) => HIGH_PRIORITY,
        Tag::Ref(_) | Tag::Low(_) => LOW_PRIORITY,
    }
}

/// The sequencing rule, sans-I/O: told each completion, it releases the
/// next requests (see the module doc). Completions of other hosts, of paths
/// not the test's, and repeated ones change nothing.
#[derive(Debug, Clone)]
pub struct Sequence {
    host: String,
    document: String,
    /// Released and not yet taken by `next`.
    queue: VecDeque<Tag>,
    /// Fetches released so far.
    released: Vec<Tag>,
    /// Fetches completed so far.
    completed: Vec<Tag>,
    document_done: bool,
}

impl Sequence {
    /// The test on `host`, after its document `document` (a path).
    pub fn new(host: &str, document: &str) -> Sequence {
        Sequence {
            host: host.to_string(),
            document: document.to_string(),
            queue: VecDeque::new(),
            released: Vec::new(),
            completed: Vec::new(),
            document_done: false,
        }
    }

    fn release(&mut self, role: Tag) {
        if !self.released.contains(&role) {
            self.released.push(role);
            self.queue.push_back(role);
        }
    }

    /// The response of `host` `path` is complete.
    pub fn complete(&mut self, host: &str, path: &str) {
        if host != self.host {
            return;
        }
        if path == self.document {
            if !self.document_done {
                self.document_done = true;
                self.release(Tag::Ref(1));
            }
            return;
        }
        let Some(role) = Tag::of_path(path) else {
            return;
        };
        if self.completed.contains(&role) || !self.released.contains(&role) {
            return;
        }
        self.completed.push(role);
        match role {
            Tag::Ref(n) if n < REFS => self.release(Tag::Ref(n + 1)),
            Tag::Ref(_) => {
                for n in 1..=LOWS {
                    self.release(Tag::Low(n));
                }
            }
            Tag::Low(_) => {
                let lows = self
                    .completed
                    .iter()
                    .filter(|r| matches!(r, Tag::Low(_)))
                    .count();
                if lows as u32 >= FILL {
                    self.release(Tag::High(1));
                }
            }
            Tag::High(n) if n < HIGHS => self.release(Tag::High(n + 1)),
            Tag::High(_) => {}
        }
    }

    /// The next request released and not yet taken.
    pub fn next_role(&mut self) -> Option<Tag> {
        self.queue.pop_front()
    }

    /// Every request released and taken (the last high included).
    pub fn all_released(&self) -> bool {
        self.queue.is_empty() && self.released.contains(&Tag::High(HIGHS))
    }
}

impl Script for Sequence {
    fn completed(&mut self, host: &str, path: &str) {
        self.complete(host, path);
    }

    fn next(&mut self) -> Option<(Found, Priority)> {
        let role = self.next_role()?;
        Some((
            Found {
                host: self.host.clone(),
                path: role.path(),
            },
            priority(role),
        ))
    }

    fn finished(&self) -> bool {
        self.all_released()
    }
}

/// Runs the test on `cfg`'s page (`cfg.root`: the test page's host and
/// document) with the page loader's connections for `cfg.protocol`, then
/// closes them. Never panics on network trouble: errors are in the result.
pub async fn run(cfg: &PageConfig) -> PageResult {
    let (result, connections) = run_keeping_connections(cfg).await;
    connections.close().await;
    result
}

/// As [`run`], handing back the connections still open (as
/// `page::load_page_keeping_connections`, for a probe that ends its
/// measurement before they close).
pub async fn run_keeping_connections(cfg: &PageConfig) -> (PageResult, OpenConnections) {
    let (host, document) = &cfg.root;
    let script = Box::new(Sequence::new(host, document));
    page::load_scripted_keeping_connections(cfg, script).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(s: &mut Sequence) -> Vec<Tag> {
        std::iter::from_fn(|| s.next_role()).collect()
    }

    #[test]
    fn paths_and_roles_round_trip() {
        assert_eq!(Tag::Low(7).path(), "/priorities/image.png?low=7");
        assert_eq!(Tag::Ref(2).path(), "/priorities/image.png?ref=2");
        assert_eq!(Tag::High(1).path(), "/priorities/image.png?high=1");
        for role in (1..=REFS)
            .map(Tag::Ref)
            .chain((1..=LOWS).map(Tag::Low))
            .chain((1..=HIGHS).map(Tag::High))
        {
            assert_eq!(Tag::of_path(&role.path()), Some(role));
        }
        for bad in [
            "/priorities/image.png",
            "/priorities/image.png?low=0",
            "/priorities/image.png?low=31",
            "/priorities/image.png?high=3",
            "/priorities/image.png?low=+1",
            "/priorities/image.png?low=",
            "/priorities/image.png?mid=1",
            "/priorities/image.png?low=1&x=2",
            "/priorities/image.pngx?low=1",
            "/priorities/image.png?low=99999999999999999999",
        ] {
            assert_eq!(Tag::of_path(bad), None, "{bad}");
        }
        assert_eq!(priority(Tag::High(2)), Priority::VISIBLE_IMAGE);
        assert_eq!(priority(Tag::Low(2)), Priority::IMAGE);
    }

    /// Each release at its completion: the document, the references one at
    /// a time, the 30 lows at once, the first high after the second low, the
    /// second high after the first.
    #[test]
    fn requests_are_released_on_completions() {
        let mut s = Sequence::new("t.test", "/");
        assert!(drain(&mut s).is_empty());
        s.complete("other.test", "/");
        assert!(drain(&mut s).is_empty(), "another host's document");
        s.complete("t.test", "/");
        assert_eq!(drain(&mut s), [Tag::Ref(1)]);
        s.complete("t.test", "/");
        assert!(drain(&mut s).is_empty(), "the document once");
        s.complete("t.test", &Tag::Ref(2).path());
        assert!(drain(&mut s).is_empty(), "not released yet: ignored");
        s.complete("t.test", &Tag::Ref(1).path());
        assert_eq!(drain(&mut s), [Tag::Ref(2)]);
        s.complete("t.test", &Tag::Ref(2).path());
        let lows = drain(&mut s);
        assert_eq!(lows, (1..=30).map(Tag::Low).collect::<Vec<_>>());
        s.complete("t.test", &Tag::Low(17).path());
        s.complete("t.test", &Tag::Low(17).path());
        assert!(drain(&mut s).is_empty(), "one low, twice");
        s.complete("t.test", &Tag::Low(3).path());
        assert_eq!(drain(&mut s), [Tag::High(1)]);
        assert!(!s.all_released());
        s.complete("t.test", &Tag::Low(4).path());
        assert!(drain(&mut s).is_empty());
        s.complete("t.test", &Tag::High(1).path());
        assert_eq!(drain(&mut s), [Tag::High(2)]);
        assert!(s.all_released());
        s.complete("t.test", &Tag::High(2).path());
        s.complete("t.test", "/favicon.ico");
        assert!(drain(&mut s).is_empty());
    }

    /// What a server in virtual time would see: one image per tick on the
    /// link, shared by the responses in flight either in strict priority
    /// order (a server that honours the priorities) or first come first
    /// served (one that does not). Times are ticks of a simulated clock.
    fn simulate(strict: bool) -> Vec<(Tag, u32, u32)> {
        let mut s = Sequence::new("t.test", "/");
        s.complete("t.test", "/");
        // In flight: (role, released at, ticks of data left).
        let mut flight: Vec<(Tag, u32, u32)> = Vec::new();
        let mut done = Vec::new();
        let mut now = 0;
        loop {
            while let Some(role) = s.next_role() {
                flight.push((role, now, 4));
            }
            if flight.is_empty() {
                break;
            }
            // The response served this tick.
            let at = if strict {
                let best = flight
                    .iter()
                    .map(|(r, ..)| priority(*r).level)
                    .max()
                    .expect("in flight");
                flight
                    .iter()
                    .position(|(r, ..)| priority(*r).level == best)
                    .expect("one has it")
            } else {
                0
            };
            now += 1;
            flight[at].2 -= 1;
            if flight[at].2 == 0 {
                let (role, released, _) = flight.remove(at);
                done.push((role, released, now));
                s.complete("t.test", &role.path());
            }
        }
        done
    }

    #[test]
    fn in_virtual_time_a_prioritizing_server_finishes_the_highs_at_once() {
        for strict in [true, false] {
            let done = simulate(strict);
            assert_eq!(done.len(), 34);
            let of = |role: Tag| *done.iter().find(|d| d.0 == role).expect("done");
            let (_, r2_start, r2_end) = of(Tag::Ref(2));
            let reference = r2_end - r2_start;
            let (_, h1_start, h1_end) = of(Tag::High(1));
            let (_, h2_start, h2_end) = of(Tag::High(2));
            // Released in order: after two lows, then after the first high.
            let lows_done_by = |t: u32| {
                done.iter()
                    .filter(|d| matches!(d.0, Tag::Low(_)) && d.2 <= t)
                    .count()
            };
            assert_eq!(lows_done_by(h1_start), 2, "strict {strict}");
            assert_eq!(h2_start, h1_end);
            if strict {
                assert_eq!(h1_end - h1_start, reference);
                assert_eq!(h2_end - h2_start, reference);
            } else {
                // First come, first served: behind the 28 lows left.
                assert!(h1_end - h1_start > 20 * reference);
            }
        }
    }
}
