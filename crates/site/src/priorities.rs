//! The HTTP/2 prioritization test (issue 37) as a built-in site: Pat
//! Meenan's stand-alone test page (github.com/pmeenan/http2priorities,
//! `stand-alone/http2priorities.html`), written anew for spdylab with fixed
//! query tags instead of random ones, and the one image it loads 35 times.
//!
//! The page's script loads, on the page's own host, the image
//! [`IMAGE_PATH`] with a query tag each time ([`Tag`]), so that every fetch
//! is distinct (never from a cache) and recognisable in a HAR:
//! 1. `?ref=1`, then when it is done `?ref=2` — one at a time: the
//!    connection is warm, and ref=2's duration is the reference time;
//! 2. `?low=1` … `?low=30` at once, into a div below a 4000 px spacer
//!    (off-screen: Chrome asks for them at LOW);
//! 3. when two lows have completed, `?high=1` into a div at the top (on
//!    screen: Chrome raises it to HIGH after layout), and when that one
//!    completes, `?high=2`.
//!
//! A server passes when the two highs complete about as fast as the
//! reference (scored in `lab::priorities`). The page marks the end of the
//! test with `performance.mark("test_complete")` once every image has loaded
//! or failed, and declares that mark in a `<meta name="spdylab-done-mark">`
//! ([`content::DONE_MARK_META`](crate::content::DONE_MARK_META)), so that
//! Chromium's probe waits for it rather than for onload; the document's title
//! becomes `done`, or `failed: TAGS` naming the images that failed. Its icon
//! is a `data:` URL, so Chromium asks for no favicon.
//!
//! The site's tree is the page and the image (revealed by the body, as far as
//! the tree can say: a script asks for it): what `spdylab sites`, HAR import
//! and export and a real server's docroot need. The model client cannot run
//! the script: it drives the same sequence itself. Every server answers
//! `IMAGE_PATH?anything` with the image: the built-in server looks a
//! generated site's resources up without their query, and real servers
//! serve static files whatever the query.

use crate::content::DONE_MARK_META;
use crate::model::{Kind, Resource, Reveal, SiteError};
use crate::tree::Site;
use std::fmt;

/// The built-in name of the test (with the default image size).
pub const NAME: &str = "priorities";
/// The page's host.
pub const HOST: &str = "priorities.spdylab.test";
/// The page's path.
pub const PAGE_PATH: &str = "/";
/// The one image's path; each fetch adds a [`Tag`] as its query.
pub const IMAGE_PATH: &str = "/priorities/image.png";
/// The image's size by default: about 100 kB, as the test recommends.
pub const DEFAULT_IMAGE_BYTES: usize = 100_000;
/// The smallest image accepted: below it a fetch is mostly headers.
pub const MIN_IMAGE_BYTES: usize = 1_000;
/// The largest image accepted (35 of them cross the link).
pub const MAX_IMAGE_BYTES: usize = 10_000_000;
/// Reference fetches, one at a time (the last is the reference time).
pub const REFS: u32 = 2;
/// Low-priority fetches, all at once.
pub const LOWS: u32 = 30;
/// Lows completed before the first high is asked for (the server's
/// buffers have filled by then).
pub const FILL: u32 = 2;
/// High-priority fetches, one after the other.
pub const HIGHS: u32 = 2;
/// The performance mark the page sets when every image has loaded or failed.
pub const DONE_MARK: &str = "test_complete";
/// The seed of the image's pixels.
const SEED: u64 = 2014;

/// Which fetch of the image a request is: its query tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tag {
    /// `ref=N`, N in 1..=REFS.
    Ref(u32),
    /// `low=N`, N in 1..=LOWS.
    Low(u32),
    /// `high=N`, N in 1..=HIGHS.
    High(u32),
}

impl Tag {
    /// The query, without `?`: `ref=1`, `low=30`, `high=2`.
    pub fn query(self) -> String {
        match self {
            Tag::Ref(n) => format!("ref={n}"),
            Tag::Low(n) => format!("low={n}"),
            Tag::High(n) => format!("high={n}"),
        }
    }

    /// The request path: `/priorities/image.png?low=3`.
    pub fn path(self) -> String {
        format!("{IMAGE_PATH}?{}", self.query())
    }

    /// The tag of a request path (`IMAGE_PATH?TAG`, exactly), if it is one
    /// of the test's 34 fetches of the image; None for anything else.
    pub fn of_path(path: &str) -> Option<Tag> {
        let query = path.strip_prefix(IMAGE_PATH)?.strip_prefix('?')?;
        let (name, n) = query.split_once('=')?;
        // Digits only (no sign, no spaces), no leading zero: one spelling per tag.
        if n.is_empty()
            || n.len() > 3
            || !n.bytes().all(|b| b.is_ascii_digit())
            || n.starts_with('0')
        {
            return None;
        }
        let n: u32 = n.parse().ok()?;
        let (tag, most) = match name {
            "ref" => (Tag::Ref(n), REFS),
            "low" => (Tag::Low(n), LOWS),
            "high" => (Tag::High(n), HIGHS),
            _ => return None,
        };
        (1..=most).contains(&n).then_some(tag)
    }

    /// Every tag in the order the page first asks for them: the refs, the
    /// lows, the highs.
    pub fn all() -> Vec<Tag> {
        (1..=REFS)
            .map(Tag::Ref)
            .chain((1..=LOWS).map(Tag::Low))
            .chain((1..=HIGHS).map(Tag::High))
            .collect()
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.query())
    }
}

/// The test's site with an image of `image_bytes` bytes (a PNG that
/// decodes, `content`'s images); Err outside
/// [`MIN_IMAGE_BYTES`]..=[`MAX_IMAGE_BYTES`].
pub fn site(image_bytes: usize) -> Result<Site, SiteError> {
    if !(MIN_IMAGE_BYTES..=MAX_IMAGE_BYTES).contains(&image_bytes) {
        return Err(SiteError(format!(
            "the prioritization test's image must be {MIN_IMAGE_BYTES} to {MAX_IMAGE_BYTES} bytes, not {image_bytes}"
        )));
    }
    let html = page(IMAGE_PATH);
    let resources = vec![
        Resource {
            host: HOST.into(),
            path: PAGE_PATH.into(),
            kind: Kind::Html,
            size: html.len(),
            parent: None,
            reveal: Reveal::Root,
        },
        Resource {
            host: HOST.into(),
            path: IMAGE_PATH.into(),
            kind: Kind::Png,
            size: image_bytes,
            parent: Some(0),
            reveal: Reveal::Body,
        },
    ];
    let about = format!(
        "HTTP/2 prioritization test (Pat Meenan's stand-alone page): one {image_bytes}-byte image \
         fetched {REFS} times in turn, {LOWS} times at low priority, then {HIGHS} times at high priority"
    );
    Site::with_page(NAME, &about, SEED, resources, html.into_bytes())
}

/// The built-in site: the test with the default image (100 kB).
pub(crate) fn builtin() -> Site {
    site(DEFAULT_IMAGE_BYTES).unwrap_or_else(|e| panic!("built-in site {NAME}: {e}"))
}

/// The test page, asking for the image at `image` (a path on the page's
/// own host) with each tag in turn (module docs).
pub fn page(image: &str) -> String {
    format!(
        r#"<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>HTTP/2 prioritization test</title>
<meta name="viewport" content="width=device-width">
<meta name="{DONE_MARK_META}" content="{DONE_MARK}">
<link rel="icon" href="data:,">
<style>
body{{margin:0;font:15px/22px Arial,Helvetica,sans-serif}}
.spacer{{height:4000px}}
img{{width:200px;height:200px}}
</style>
</head><body>
<div id="visible"></div>
<div class="spacer"></div>
<div id="hidden"></div>
<script>
(function () {{
  // spdylab's prioritization test (after Pat Meenan's stand-alone page):
  // {REFS} references one at a time, {LOWS} off-screen lows at once, and after
  // {FILL} lows have completed {HIGHS} visible highs one after the other.
  var IMAGE = "{image}", REFS = {REFS}, LOWS = {LOWS}, FILL = {FILL}, HIGHS = {HIGHS};
  var lows = 0, highs = 0, lowsDone = false, highsDone = false, failed = [];
  function load(tag, visible, next) {{
    var img = document.createElement("img");
    img.alt = "";
    img.onload = next;
    img.onerror = function () {{ failed.push(tag); next(); }};
    img.src = IMAGE + "?" + tag;
    document.getElementById(visible ? "visible" : "hidden").appendChild(img);
  }}
  function finish() {{
    if (!lowsDone || !highsDone) return;
    document.title = failed.length ? "failed: " + failed.join(" ") : "done";
    performance.mark("{DONE_MARK}");
  }}
  function high() {{
    highs++;
    if (highs < HIGHS) {{
      load("high=" + (highs + 1), true, high);
    }} else {{
      highsDone = true;
      performance.mark("visible_complete");
      finish();
    }}
  }}
  function low() {{
    lows++;
    if (lows === FILL) {{
      performance.mark("visible_start");
      load("high=1", true, high);
    }}
    if (lows === LOWS) {{
      lowsDone = true;
      performance.mark("hidden_complete");
      finish();
    }}
  }}
  function reference(n) {{
    load("ref=" + n, false, function () {{
      if (n < REFS) {{
        reference(n + 1);
        return;
      }}
      performance.mark("test_start");
      for (var i = 1; i <= LOWS; i++) load("low=" + i, false, low);
    }});
  }}
  reference(1);
}})();
</script>
</body></html>
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::png_dimensions;

    #[test]
    fn the_site_is_the_page_and_an_image_of_the_size_asked() {
        for bytes in [MIN_IMAGE_BYTES, 4_096, DEFAULT_IMAGE_BYTES, 250_000] {
            let s = site(bytes).unwrap();
            assert_eq!(s.name, NAME);
            assert_eq!(s.resources.len(), 2);
            assert_eq!(s.hosts(), [HOST]);
            let image = s.body(1);
            assert_eq!(image.len(), bytes);
            assert!(png_dimensions(&image).is_some(), "{bytes}: a PNG");
            assert_eq!(s.resources[1].kind.content_type(), "image/png");
            let html = s.body(0);
            assert_eq!(html.len(), s.root().size);
            assert_eq!(html, page(IMAGE_PATH).into_bytes());
            assert_eq!(s.authored_page(), Some(html.as_slice()));
        }
    }

    #[test]
    fn the_built_in_name_gives_the_default_image() {
        let s = crate::builtin(NAME, crate::DEFAULT_SEED).unwrap();
        assert_eq!(s.resources[1].size, DEFAULT_IMAGE_BYTES);
        // Whatever the seed: the test's bytes are the test's.
        let other = crate::builtin(NAME, 7).unwrap();
        assert_eq!(s.body(0), other.body(0));
        assert_eq!(s.body(1), other.body(1));
    }

    #[test]
    fn sizes_out_of_range_are_errors() {
        for bytes in [0, 70, MIN_IMAGE_BYTES - 1, MAX_IMAGE_BYTES + 1, usize::MAX] {
            let e = site(bytes).unwrap_err();
            assert!(e.0.contains(&bytes.to_string()), "{e}");
        }
    }

    #[test]
    fn every_tagged_fetch_finds_the_image() {
        let s = site(DEFAULT_IMAGE_BYTES).unwrap();
        for tag in Tag::all() {
            let path = tag.path();
            assert_eq!(s.find(HOST, &path), Some(1), "{path}");
            assert_eq!(s.find_request(HOST, "GET", &path), Some(1), "{path}");
        }
        assert_eq!(s.find_request(HOST, "GET", "/?x=1"), Some(0));
        assert_eq!(s.find(HOST, "/priorities/other.png?low=1"), None);
    }

    #[test]
    fn tags_read_back_and_nothing_else_is_one() {
        let all = Tag::all();
        assert_eq!(all.len() as u32, REFS + LOWS + HIGHS);
        for tag in &all {
            assert_eq!(Tag::of_path(&tag.path()), Some(*tag));
        }
        assert_eq!(all[0], Tag::Ref(1));
        assert_eq!(all[2], Tag::Low(1));
        assert_eq!(*all.last().unwrap(), Tag::High(2));
        for bad in [
            "/priorities/image.png",
            "/priorities/image.png?",
            "/priorities/image.png?low=0",
            "/priorities/image.png?low=31",
            "/priorities/image.png?low=01",
            "/priorities/image.png?low=+1",
            "/priorities/image.png?low=",
            "/priorities/image.png?low=99999999999999999999",
            "/priorities/image.png?high=3",
            "/priorities/image.png?ref=3",
            "/priorities/image.png?mid=1",
            "/priorities/image.png?low=1&x=2",
            "/other.png?low=1",
            "/",
            "",
        ] {
            assert_eq!(Tag::of_path(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_page_does_the_sequence_and_declares_its_end() {
        let html = page(IMAGE_PATH);
        for needle in [
            "<meta name=\"spdylab-done-mark\" content=\"test_complete\">",
            "<link rel=\"icon\" href=\"data:,\">",
            ".spacer{height:4000px}",
            "var IMAGE = \"/priorities/image.png\", REFS = 2, LOWS = 30, FILL = 2, HIGHS = 2;",
            "performance.mark(\"test_complete\")",
            "img.onerror",
            "load(\"high=1\", true, high)",
            "load(\"low=\" + i, false, low)",
            "load(\"ref=\" + n, false,",
        ] {
            assert!(html.contains(needle), "{needle}");
        }
        // The visible div above the spacer, the hidden one below it.
        let at = |s: &str| html.find(s).unwrap();
        assert!(at("id=\"visible\"") < at("class=\"spacer\""));
        assert!(at("class=\"spacer\"") < at("id=\"hidden\""));
        // No image the browser would fetch by itself, nor a script file.
        assert!(!html.contains("<img") && !html.contains("src=\""));
    }

    #[test]
    fn a_written_page_must_be_its_resource_size() {
        let s = site(DEFAULT_IMAGE_BYTES).unwrap();
        let mut resources = s.resources.clone();
        resources[0].size += 1;
        let e = Site::with_page(NAME, "", SEED, resources, s.body(0)).unwrap_err();
        assert!(e.0.contains("but the page has"), "{e}");
        let e = Site::with_page(NAME, "", SEED, Vec::new(), Vec::new()).unwrap_err();
        assert!(e.0.contains("at least one resource"), "{e}");
    }

    #[test]
    fn layouts_keep_the_page_where_its_urls_stay() {
        let s = site(DEFAULT_IMAGE_BYTES).unwrap();
        for layout in [
            crate::Layout::Origin,
            crate::Layout::Mirror,
            crate::Layout::Shards(1),
        ] {
            let laid = layout.apply(&s).unwrap();
            assert_eq!(laid.body(0), s.body(0), "{layout}");
            assert_eq!(laid.body(1), s.body(1), "{layout}");
        }
        let e = crate::Layout::Shards(2).apply(&s).unwrap_err();
        assert!(e.0.contains("its own hosts"), "{e}");
    }
}
