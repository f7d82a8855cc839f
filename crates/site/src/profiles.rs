//! The built-in sites. Each is generated from a profile: resource counts and
//! total bytes per kind, how each kind is revealed, and on which domains it
//! lives. Counts, average sizes and domain counts match the sources exactly;
//! the split of bytes between resources of a kind is drawn from the seed.
//!
//! Sources:
//! - `twitter`, `youtube`, `imgur`: "Can SPDY really make the web faster?"
//!   (seed 004), Table I — count, average size (kB = 1000 bytes), domains. The
//!   paper gives no type mix; ours is a plausible 2014 front page of each site
//!   (one HTML page, stylesheets and scripts on a static domain, images; imgur
//!   adds flash and many third-party tags). Documented per profile below.
//! - `icons`: the Apache + mod_spdy load test (seeds 000/001): one 9.5 kB HTML
//!   page and 50 PNG icons of 32×32 pixels. The icons' byte size is not stated;
//!   we use 1.2–1.8 kB, typical of a 32×32 PNG.
//! - `http-archive-2014`: an approximation of the HTTP Archive's average page of
//!   late 2014 (httparchive.org trends, runs of November–December 2014): about
//!   96 requests and 1.95 MB — images ≈1.2 MB in 55 requests, scripts ≈300 kB in
//!   20, stylesheets ≈60 kB in 7, HTML ≈56 kB in 4, fonts ≈90 kB in 3, other
//!   ≈224 kB in 7 — on 17 domains. These are the archive's *means* as we recall
//!   them, not figures copied from the archive; its medians are smaller. Check
//!   them against the archive before citing them.
//! - `objects-NxSIZE` (e.g. `objects-200x5kB`, `objects-1x10MB`): the
//!   synthetic pages of Kakhki et al., "Taking a Long Look at QUIC" (IMC
//!   2017, §5 and Table 2): a static HTML page on one host naming N images
//!   of SIZE each (kB and MB of 1000), nothing else — no stylesheet, no
//!   script. Their sizes: 5, 10, 100, 200, 500 kB, 1 and 10 MB; their
//!   counts at about 1 MB: 1×1MB, 2×500kB, 5×200kB, 10×100kB, 100×10kB,
//!   200×5kB.

use crate::model::{Kind, Resource, Reveal};
use crate::tree::Site;
use std::collections::HashMap;
use std::ops::Range;

/// Names of the built-in sites.
pub const BUILTIN: [&str; 5] = ["twitter", "youtube", "imgur", "icons", "http-archive-2014"];

/// Names of the built-in test pages: written by hand, not drawn from a
/// profile, so not among the studied pages that `BUILTIN` lists (presets and
/// checks of "every built-in site" mean those). `builtin` resolves them too.
/// - `priorities`: the HTTP/2 prioritization test (`crate::priorities`),
///   its image 100 kB (`crate::priorities::site` for another size).
pub const TESTS: [&str; 1] = [crate::priorities::NAME];

/// Every built-in name `builtin` resolves: the studied pages, then the tests.
pub fn builtin_names() -> impl Iterator<Item = &'static str> {
    BUILTIN.into_iter().chain(TESTS)
}

/// Default seed for content and size splits.
pub const DEFAULT_SEED: u64 = 2014;

/// The synthetic pages' names: `objects-` then the count, `x`, the size.
pub const OBJECTS_FORM: &str =
    "objects-NxSIZE (N ≤ 1000 images of SIZE, 1kB to 100MB, on one host: e.g. objects-200x5kB)";

/// The most images a synthetic page may have, and the bounds of each one's
/// size (a PNG of 1 kB or more: `content::png` pads it to the byte).
const OBJECTS_MAX: usize = 1000;
const OBJECT_BYTES: std::ops::RangeInclusive<usize> = 1_000..=100_000_000;

/// The count and size of a synthetic page's name (`objects-200x5kB`), or
/// None if `name` is not one.
pub fn objects_of(name: &str) -> Option<(usize, usize)> {
    let (n, size) = name.strip_prefix("objects-")?.split_once('x')?;
    let n: usize = n.parse().ok().filter(|n| (1..=OBJECTS_MAX).contains(n))?;
    let (digits, unit) = size.split_at(size.find(|c: char| !c.is_ascii_digit())?);
    let scale = match unit {
        "B" => 1,
        "kB" | "KB" => 1000,
        "MB" => 1_000_000,
        _ => return None,
    };
    let bytes = digits.parse::<usize>().ok()?.checked_mul(scale)?;
    OBJECT_BYTES.contains(&bytes).then_some((n, bytes))
}

/// The built-in site `name` (a studied page of `BUILTIN` or a test of
/// `TESTS`) with content from `seed` (the tests' bytes are fixed).
pub fn builtin(name: &str, seed: u64) -> Option<Site> {
    let site = match name {
        "twitter" => twitter(seed),
        "youtube" => youtube(seed),
        "imgur" => imgur(seed),
        "icons" => icons(seed),
        "http-archive-2014" => http_archive_2014(seed),
        crate::priorities::NAME => crate::priorities::builtin(),
        _ => {
            let (n, size) = objects_of(name)?;
            objects(name, n, size, seed)
        }
    };
    Some(site)
}

struct Builder {
    domains: Vec<String>,
    resources: Vec<Resource>,
    rotation: HashMap<(usize, usize), usize>,
    rng: link::rng::Rng,
}

impl Builder {
    fn new(domains: Vec<String>, html_bytes: usize, seed: u64) -> Builder {
        let root = Resource {
            host: domains[0].clone(),
            path: "/".into(),
            kind: Kind::Html,
            size: html_bytes,
            parent: None,
            reveal: Reveal::Root,
        };
        Builder {
            domains,
            resources: vec![root],
            rotation: HashMap::new(),
            rng: link::rng::Rng::new(seed),
        }
    }

    fn next_unit(&mut self) -> f64 {
        self.rng.next_f64()
    }

    /// Adds `count` resources of `kind` with `bytes` in all, revealed by `reveal`
    /// (parents taken round-robin among the resources that can reveal them), on
    /// the domains `domains` (round-robin). `spread` is how far sizes vary from
    /// the mean (0.5: between half and one and a half times it).
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        kind: Kind,
        count: usize,
        bytes: usize,
        reveal: Reveal,
        domains: Range<usize>,
        spread: f64,
    ) -> &mut Self {
        let parents: Vec<usize> = (0..self.resources.len())
            .filter(|&i| {
                let k = self.resources[i].kind;
                match reveal {
                    Reveal::Head | Reveal::Body => i == 0,
                    Reveal::Css => k == Kind::Css,
                    Reveal::Script => k == Kind::Js && self.resources[i].reveal != Reveal::Script,
                    Reveal::Root => false,
                }
            })
            .collect();
        assert!(
            !parents.is_empty(),
            "no parent can reveal {kind:?} by {reveal:?}"
        );
        let weights: Vec<f64> = (0..count)
            .map(|_| 1.0 - spread + 2.0 * spread * self.next_unit())
            .collect();
        let sum: f64 = weights.iter().sum();
        let mut left = bytes;
        for (n, w) in weights.iter().enumerate() {
            let size = if n + 1 == count {
                left
            } else {
                ((bytes as f64 * w / sum) as usize).min(left)
            };
            left -= size;
            let key = (domains.start, domains.end);
            let turn = self.rotation.entry(key).or_insert(0);
            let host = self.domains[domains.start + *turn % domains.len()].clone();
            *turn += 1;
            let ext = match kind {
                Kind::Html => "html",
                Kind::Css => "css",
                Kind::Js => "js",
                Kind::Png => "png",
                Kind::Font => "woff",
                Kind::Flash => "swf",
                Kind::Other => "bin",
            };
            let path = format!(
                "/{}/{}{}.{ext}",
                kind.name(),
                kind.name(),
                self.resources.len()
            );
            self.resources.push(Resource {
                host,
                path,
                kind,
                size,
                parent: Some(parents[n % parents.len()]),
                reveal,
            });
        }
        self
    }

    fn build(&self, name: &str, about: &str, seed: u64) -> Site {
        Site::new(name, about, seed, self.resources.clone())
            .unwrap_or_else(|e| panic!("built-in site {name}: {e}"))
    }
}

fn names(fixed: &[&str], third_party: usize) -> Vec<String> {
    let mut v: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
    v.extend((1..=third_party).map(|k| format!("s{k}.thirdparty{k}.test")));
    v
}

/// Twitter (Table I): 7 resources, 46.40 kB on average (324 800 bytes), 3 domains.
/// The page, two stylesheets and two scripts on the static domain, two images.
fn twitter(seed: u64) -> Site {
    let mut b = Builder::new(
        names(&["twitter.com", "abs.twimg.com", "pbs.twimg.com"], 0),
        58_000,
        seed,
    );
    b.add(Kind::Css, 2, 95_000, Reveal::Head, 1..2, 0.3)
        .add(Kind::Js, 1, 90_000, Reveal::Head, 1..2, 0.0)
        .add(Kind::Js, 1, 50_000, Reveal::Body, 1..2, 0.0)
        .add(Kind::Png, 2, 31_800, Reveal::Body, 2..3, 0.5);
    b.build(
        "twitter",
        "Twitter front page, 2013 (004 Table I): 7 resources, avg 46.40 kB, 3 domains",
        seed,
    )
}

/// YouTube (Table I): 50 resources, 10.63 kB on average (531 500 bytes), 4 domains.
/// Stylesheets and scripts on s.ytimg.com with CSS sprites, 28 thumbnails in the
/// body from i.ytimg.com, 9 channel avatars injected by script from yt3.ggpht.com.
fn youtube(seed: u64) -> Site {
    let domains = names(
        &[
            "www.youtube.com",
            "s.ytimg.com",
            "i.ytimg.com",
            "yt3.ggpht.com",
        ],
        0,
    );
    let mut b = Builder::new(domains, 92_000, seed);
    b.add(Kind::Css, 2, 72_000, Reveal::Head, 1..2, 0.3)
        .add(Kind::Js, 2, 100_000, Reveal::Head, 1..2, 0.3)
        .add(Kind::Js, 2, 60_000, Reveal::Body, 1..2, 0.3)
        .add(Kind::Png, 6, 30_000, Reveal::Css, 1..2, 0.5)
        .add(Kind::Png, 28, 130_000, Reveal::Body, 2..3, 0.4)
        .add(Kind::Png, 9, 47_500, Reveal::Script, 3..4, 0.4);
    b.build(
        "youtube",
        "YouTube front page, 2013 (004 Table I): 50 resources, avg 10.63 kB, 4 domains",
        seed,
    )
}

/// imgur (Table I): 133 resources, 11.78 kB on average (1 566 740 bytes), 58
/// domains: imgur's own three and 55 third parties (ads, trackers, social
/// widgets) that serve scripts, a flash object and injected images.
fn imgur(seed: u64) -> Site {
    let domains = names(&["imgur.com", "s.imgur.com", "i.imgur.com"], 55);
    let mut b = Builder::new(domains, 45_000, seed);
    b.add(Kind::Css, 4, 60_000, Reveal::Head, 1..2, 0.4)
        .add(Kind::Js, 4, 150_000, Reveal::Head, 1..2, 0.4)
        .add(Kind::Js, 6, 80_000, Reveal::Body, 3..58, 0.4)
        .add(Kind::Flash, 1, 40_000, Reveal::Body, 3..58, 0.0)
        .add(Kind::Png, 8, 24_000, Reveal::Css, 1..2, 0.4)
        .add(Kind::Png, 60, 900_000, Reveal::Body, 2..3, 0.5)
        .add(Kind::Png, 49, 267_740, Reveal::Script, 3..58, 0.5);
    b.build(
        "imgur",
        "imgur front page, 2013 (004 Table I): 133 resources, avg 11.78 kB, 58 domains",
        seed,
    )
}

/// The load-test page of seeds 000/001: one 9.5 kB page and 50 PNG icons of 32×32.
fn icons(seed: u64) -> Site {
    let mut b = Builder::new(vec!["icons.spdylab.test".into()], 9_500, seed);
    b.add(Kind::Png, 50, 75_000, Reveal::Body, 0..1, 0.2);
    b.build(
        "icons",
        "Apache + mod_spdy load test (000): 1 HTML of 9.5 kB + 50 PNG icons 32x32",
        seed,
    )
}

/// A synthetic page of Kakhki et al.: `n` images of `size` bytes in the body
/// of a small page, all on one host.
fn objects(name: &str, n: usize, size: usize, seed: u64) -> Site {
    // The page: its tags (about 80 bytes each, with their sizes) and a
    // little text.
    let html = 2_000 + 100 * n;
    let mut b = Builder::new(vec!["objects.spdylab.test".into()], html, seed);
    b.add(Kind::Png, n, n * size, Reveal::Body, 0..1, 0.0);
    b.build(
        name,
        &format!(
            "Kakhki et al. (IMC 2017) synthetic page: {n} image(s) of {size} bytes on one host"
        ),
        seed,
    )
}

/// The HTTP Archive's average page of late 2014 (approximate; see the module docs).
fn http_archive_2014(seed: u64) -> Site {
    let domains = names(
        &[
            "www.page.test",
            "static.page.test",
            "img.page.test",
            "fonts.cdn.test",
        ],
        13,
    );
    let mut b = Builder::new(domains, 35_000, seed);
    b.add(Kind::Css, 7, 60_000, Reveal::Head, 1..2, 0.5)
        .add(Kind::Js, 8, 150_000, Reveal::Head, 1..2, 0.5)
        .add(Kind::Js, 6, 90_000, Reveal::Body, 4..17, 0.5)
        .add(Kind::Html, 3, 21_000, Reveal::Body, 4..17, 0.3)
        .add(Kind::Font, 3, 90_000, Reveal::Css, 3..4, 0.3)
        .add(Kind::Png, 10, 40_000, Reveal::Css, 1..2, 0.5)
        .add(Kind::Png, 35, 900_000, Reveal::Body, 2..3, 0.6)
        .add(Kind::Js, 6, 60_000, Reveal::Script, 4..17, 0.5)
        .add(Kind::Png, 10, 280_000, Reveal::Script, 4..17, 0.5)
        .add(Kind::Other, 7, 224_000, Reveal::Script, 4..17, 0.5);
    b.build(
        "http-archive-2014",
        "HTTP Archive average page, late 2014 (approximate): 96 requests, 1.95 MB, 17 domains",
        seed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, count: usize, avg_bytes: f64, domains: usize) {
        let s = builtin(name, DEFAULT_SEED).unwrap();
        assert_eq!(s.resources.len(), count, "{name} count");
        assert_eq!(
            s.total_bytes() as f64 / count as f64,
            avg_bytes,
            "{name} average"
        );
        assert_eq!(s.hosts().len(), domains, "{name} domains");
        for i in 0..s.resources.len() {
            assert_eq!(s.body(i).len(), s.resources[i].size, "{name} resource {i}");
        }
    }

    #[test]
    fn profiles_match_their_sources_exactly() {
        check("twitter", 7, 46_400.0, 3);
        check("youtube", 50, 10_630.0, 4);
        check("imgur", 133, 11_780.0, 58);
        check("icons", 51, (9_500.0 + 75_000.0) / 51.0, 1);
        check("http-archive-2014", 96, 1_950_000.0 / 96.0, 17);
        let icons = builtin("icons", DEFAULT_SEED).unwrap();
        assert_eq!(icons.root().size, 9_500);
    }

    #[test]
    fn synthetic_pages_have_exactly_their_count_and_size() {
        for (name, n, size) in [
            ("objects-1000x1kB", 1000, 1_000),
            ("objects-200x5kB", 200, 5_000),
            ("objects-1x10MB", 1, 10_000_000),
            ("objects-10x100KB", 10, 100_000),
        ] {
            let s = builtin(name, DEFAULT_SEED).unwrap();
            assert_eq!(s.name, name);
            assert_eq!(s.resources.len(), n + 1);
            assert!(s.resources[1..]
                .iter()
                .all(|r| r.size == size && r.kind == Kind::Png && r.host == s.resources[0].host));
            let html = String::from_utf8(s.body(0)).unwrap();
            assert_eq!(html.matches("<img").count(), n, "{name}");
        }
        for bad in [
            "objects-0x5kB",
            "objects-1001x5kB",
            "objects-10x",
            "objects-10x5GB",
            "objects-x5kB",
            "objects-10x0kB",
            "objects-10x999B",
            "objects-10x200MB",
        ] {
            assert!(builtin(bad, DEFAULT_SEED).is_none(), "{bad}");
        }
    }

    #[test]
    fn icons_decode_as_32_by_32() {
        let s = builtin("icons", DEFAULT_SEED).unwrap();
        for i in 1..s.resources.len() {
            let png = s.body(i);
            assert_eq!(crate::content::png_dimensions(&png), Some((32, 32)));
        }
    }

    #[test]
    fn html_references_every_child_with_real_tags() {
        let s = builtin("youtube", DEFAULT_SEED).unwrap();
        let html = String::from_utf8(s.body(0)).unwrap();
        for c in s.children(0) {
            let url = crate::content::reference(c);
            let tag = match c.kind {
                Kind::Css => format!("<link rel=\"stylesheet\" href=\"{url}\">"),
                Kind::Js => format!("<script src=\"{url}\"></script>"),
                _ => format!("<img src=\"{url}\""),
            };
            assert!(html.contains(&tag), "{tag}");
        }
        let css_i = s
            .resources
            .iter()
            .position(|r| r.kind == Kind::Css)
            .unwrap();
        let css = String::from_utf8(s.body(css_i)).unwrap();
        for c in s.children(css_i) {
            assert!(css.contains(&format!("url({})", crate::content::reference(c))));
        }
    }

    #[test]
    fn content_is_deterministic_and_seeded() {
        let a = builtin("twitter", 1).unwrap();
        let b = builtin("twitter", 1).unwrap();
        let c = builtin("twitter", 2).unwrap();
        assert_eq!(a.body(0), b.body(0));
        assert_ne!(a.body(0), c.body(0));
    }

    #[test]
    fn shards_are_round_robin() {
        let s = builtin("youtube", DEFAULT_SEED).unwrap();
        let m = s.shard_map(3);
        let shards: Vec<usize> = m.iter().map(|(_, s)| *s).collect();
        assert_eq!(shards, vec![1, 2, 3, 1]);
        assert!(s.shard_map(1).iter().all(|(_, s)| *s == 1));
    }
}
