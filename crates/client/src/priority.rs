//! Chromium's request priorities and the signals it derives from them on the
//! wire, sans-I/O. Each request of the model has a [`Priority`]: Chromium's
//! `net::RequestPriority` (Blink's ResourceLoadPriority as
//! `ConvertWebKitPriorityToNetPriority` maps it: VeryHigh → HIGHEST, High →
//! MEDIUM, Medium → LOW, Low → LOWEST, VeryLow → IDLE) and whether it loads
//! incrementally (RFC 9218's `i`). From it, as Chromium sends them:
//!
//! - SPDY/3.1: the SYN_STREAM's 3-bit priority, HIGHEST 0, MEDIUM 1, LOW 2,
//!   LOWEST 3, IDLE 4 (`ConvertRequestPriorityToSpdyPriority`).
//! - HTTP/2: the HEADERS frame's PRIORITY fields (`SpdySession::CreateHeaders`):
//!   an exclusive dependency chosen by [`Dependencies`]
//!   (`Http2PriorityDependencies`) and the weight of the SPDY priority
//!   ([`http2_weight`], `Spdy3PriorityToHttp2Weight`).
//! - HTTP/2 and HTTP/3: the RFC 9218 `priority` request header
//!   ([`Priority::header`], `CreateSpdyHeadersFromHttpRequest`): urgency
//!   `HIGHEST − priority` (`ConvertRequestPriorityToQuicPriority`: u=0 … u=4),
//!   `i` when incremental, each left out at its default (u=3, not
//!   incremental) as quiche's `SerializePriorityFieldValue` does; no header
//!   when both are defaults.
//!
//! Incremental, as Blink's `ShouldLoadIncremental`: images (and raw fetches,
//! media) yes; stylesheets, scripts and fonts no; a navigation (the page's
//! document) takes the network service's default,
//! `kDefaultPriorityIncremental` = true.
//!
//! A request's scheduling [`Class`] (Blink's ResourceLoadScheduler) follows
//! from its priority: HIGHEST and MEDIUM (Blink's VeryHigh, High) are
//! layout-blocking, LOW (Blink's Medium) normal, LOWEST and IDLE delayable.

use crate::schedule::Class;

/// Chromium's `net::RequestPriority`, most urgent last (THROTTLED, which a
/// page's requests never have, left out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RequestPriority {
    Idle,
    Lowest,
    Low,
    Medium,
    Highest,
}

impl RequestPriority {
    /// The SPDY/3 priority (0 most urgent): HIGHEST 0 … IDLE 4.
    pub fn spdy3(self) -> u8 {
        match self {
            RequestPriority::Highest => 0,
            RequestPriority::Medium => 1,
            RequestPriority::Low => 2,
            RequestPriority::Lowest => 3,
            RequestPriority::Idle => 4,
        }
    }

    /// The RFC 9218 urgency (0 most urgent): `HIGHEST − priority`, the same
    /// numbers as [`RequestPriority::spdy3`].
    pub fn urgency(self) -> u8 {
        self.spdy3()
    }

    /// Its class in Blink's and the socket pool's schedulers.
    pub fn class(self) -> Class {
        match self {
            RequestPriority::Highest | RequestPriority::Medium => Class::LayoutBlocking,
            RequestPriority::Low => Class::Normal,
            RequestPriority::Lowest | RequestPriority::Idle => Class::Delayable,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RequestPriority::Highest => "HIGHEST",
            RequestPriority::Medium => "MEDIUM",
            RequestPriority::Low => "LOW",
            RequestPriority::Lowest => "LOWEST",
            RequestPriority::Idle => "IDLE",
        }
    }
}

/// A request's priority as Chromium's network stack holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Priority {
    pub level: RequestPriority,
    /// RFC 9218's incremental flag.
    pub incremental: bool,
}

impl Priority {
    /// A preload's priority from its `as` (a 103's `Link` or a page's
    /// `<link rel=preload>`): style and font HIGHEST, script MEDIUM, image
    /// LOWEST, anything else IDLE (Chromium's `CalculateRequestPriority`).
    pub fn of_preload(as_: Option<&str>) -> Priority {
        match as_ {
            Some("style") => Priority::STYLESHEET,
            Some("font") => Priority::FONT,
            Some("script") => Priority::SCRIPT,
            Some("image") => Priority::IMAGE,
            _ => Priority::new(RequestPriority::Idle, false),
        }
    }
    /// A 103 Early Hints preload's priority: its `as`'s, as
    /// [`Priority::of_preload`], but incremental. The browser process makes
    /// the request (`NavigationEarlyHintsManager`) and sets no incremental
    /// flag, so it takes the network service's default,
    /// `kDefaultPriorityIncremental` = true, as a navigation does. Measured
    /// at our h3 server: Chromium's preloads of twitter's stylesheets came
    /// with `u=0, i`, its script `u=1, i`, its image `i`; the page's own
    /// script `u=1`.
    pub fn of_early_hint(as_: Option<&str>) -> Priority {
        Priority {
            incremental: true,
            ..Priority::of_preload(as_)
        }
    }
    /// The page's own document (a navigation): HIGHEST, incremental.
    pub const DOCUMENT: Priority = Priority::new(RequestPriority::Highest, true);
    /// A render-blocking stylesheet (Blink VeryHigh).
    pub const STYLESHEET: Priority = Priority::new(RequestPriority::Highest, false);
    /// A font (Blink VeryHigh).
    pub const FONT: Priority = Priority::new(RequestPriority::Highest, false);
    /// A parser-blocking script before the body's first image (Blink High).
    pub const SCRIPT: Priority = Priority::new(RequestPriority::Medium, false);
    /// A script after the body's first image (Blink Medium).
    pub const LATE_SCRIPT: Priority = Priority::new(RequestPriority::Low, false);
    /// An async or script-inserted script (Blink Low).
    pub const ASYNC_SCRIPT: Priority = Priority::new(RequestPriority::Lowest, false);
    /// An image (Blink Low: not in the viewport, or not laid out yet).
    pub const IMAGE: Priority = Priority::new(RequestPriority::Lowest, true);
    /// One of a document's first five images that are not small (Blink's
    /// BoostImagePriority: Medium).
    pub const BOOSTED_IMAGE: Priority = Priority::new(RequestPriority::Low, true);
    /// An image in the viewport once layout has placed it (Blink High).
    pub const VISIBLE_IMAGE: Priority = Priority::new(RequestPriority::Medium, true);
    /// Anything else named by a URL alone (Blink Medium).
    pub const OTHER: Priority = Priority::new(RequestPriority::Low, false);

    pub const fn new(level: RequestPriority, incremental: bool) -> Priority {
        Priority { level, incremental }
    }

    /// Its class in Blink's and the socket pool's schedulers.
    pub fn class(self) -> Class {
        self.level.class()
    }

    /// The SPDY/3.1 SYN_STREAM priority.
    pub fn spdy3(self) -> u8 {
        self.level.spdy3()
    }

    /// The RFC 9218 `priority` header's value as Chromium sends it on HTTP/2
    /// and HTTP/3; None where it sends none (u=3, not incremental).
    pub fn header(self) -> Option<String> {
        let mut parts = Vec::new();
        let u = self.level.urgency();
        if u != 3 {
            parts.push(format!("u={u}"));
        }
        if self.incremental {
            parts.push("i".to_string());
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    /// The priority a resource's URL suggests, for requests no renderer
    /// classified (the pure network model, imported pages, load-test users):
    /// a document (no extension, `.html`) as the page's document; stylesheets
    /// and fonts HIGHEST; scripts MEDIUM; images LOWEST, incremental;
    /// anything else LOW.
    pub fn from_path(path: &str) -> Priority {
        match extension(path).as_deref() {
            None | Some("html" | "htm") => Priority::DOCUMENT,
            Some("css") => Priority::STYLESHEET,
            Some("woff" | "woff2" | "ttf" | "otf" | "eot") => Priority::FONT,
            Some("js" | "mjs") => Priority::SCRIPT,
            Some("png" | "jpg" | "jpeg" | "gif" | "webp" | "svg" | "ico" | "avif") => {
                Priority::IMAGE
            }
            Some(_) => Priority::OTHER,
        }
    }
}

/// A URL path's file extension, lower case (`/a/b.PNG?x` → `png`; none for
/// `/a.d/b`): what the path says a resource is.
pub(crate) fn extension(path: &str) -> Option<String> {
    let name = path.split(['?', '#']).next().unwrap_or("");
    name.rsplit('/')
        .next()
        .and_then(|f| f.rsplit_once('.'))
        .map(|(_, e)| e.to_ascii_lowercase())
}

/// Chromium's `Spdy3PriorityToHttp2Weight`: SPDY priority 0 → 256 … 7 → 1,
/// computed in `float` as Chromium does (0 256, 1 220, 2 183, 3 147, 4 110,
/// 5 74, 6 37, 7 1); above 7 clamped to 7.
pub fn http2_weight(spdy3: u8) -> u16 {
    let p = f32::from(spdy3.min(7));
    let steps = 255.9f32 / 7.0;
    // Truncation toward zero, as C++'s static_cast<int>.
    (steps * (7.0 - p)) as u16 + 1
}

/// The PRIORITY fields of a HEADERS frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dependency {
    /// The stream it depends on (0: the root).
    pub parent: u32,
    pub exclusive: bool,
    /// 1 ..= 256 (sent as weight − 1).
    pub weight: u16,
}

/// Chromium's `Http2PriorityDependencies`: the streams of one HTTP/2
/// connection still open, in creation order per SPDY priority. A new stream
/// depends, exclusively, on the last-created stream of the lowest priority
/// band at or above its own (scanning from its priority up to 0); on the root
/// if there is none. So the open streams form one chain, most urgent first,
/// each band in creation order. Closed streams leave it. Its memory is one
/// entry per open stream.
#[derive(Debug, Default, Clone)]
pub struct Dependencies {
    bands: [Vec<u32>; 8],
}

impl Dependencies {
    /// Stream `id` is created at SPDY priority `spdy3` (`OnStreamCreation`).
    /// A stream already open is not added again (its dependency is computed
    /// as if new).
    pub fn created(&mut self, id: u32, spdy3: u8) -> Dependency {
        let p = usize::from(spdy3.min(7));
        let parent = self.bands[..=p]
            .iter()
            .rev()
            .find_map(|band| band.last().copied())
            .unwrap_or(0);
        if !self.bands.iter().any(|b| b.contains(&id)) {
            self.bands[p].push(id);
        }
        Dependency {
            parent,
            exclusive: true,
            weight: http2_weight(spdy3),
        }
    }

    /// Stream `id` closed (`OnStreamDestruction`); unknown ids are ignored.
    pub fn closed(&mut self, id: u32) {
        for band in &mut self.bands {
            band.retain(|s| *s != id);
        }
    }

    /// Streams open.
    pub fn len(&self) -> usize {
        self.bands.iter().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spdy_priorities_and_urgencies_are_chromiums() {
        use RequestPriority::*;
        let all = [Highest, Medium, Low, Lowest, Idle];
        let spdy: Vec<u8> = all.iter().map(|p| p.spdy3()).collect();
        assert_eq!(spdy, [0, 1, 2, 3, 4]);
        let u: Vec<u8> = all.iter().map(|p| p.urgency()).collect();
        assert_eq!(u, [0, 1, 2, 3, 4]);
        assert!(Highest > Medium && Lowest > Idle);
    }

    #[test]
    fn weights_are_chromiums_table() {
        let w: Vec<u16> = (0..=7).map(http2_weight).collect();
        assert_eq!(w, [256, 220, 183, 147, 110, 74, 37, 1]);
        assert_eq!(http2_weight(200), 1, "clamped to 7");
    }

    #[test]
    fn headers_leave_defaults_out_as_quiche_serializes() {
        assert_eq!(Priority::DOCUMENT.header().as_deref(), Some("u=0, i"));
        assert_eq!(Priority::STYLESHEET.header().as_deref(), Some("u=0"));
        assert_eq!(Priority::SCRIPT.header().as_deref(), Some("u=1"));
        assert_eq!(Priority::LATE_SCRIPT.header().as_deref(), Some("u=2"));
        assert_eq!(Priority::BOOSTED_IMAGE.header().as_deref(), Some("u=2, i"));
        assert_eq!(Priority::VISIBLE_IMAGE.header().as_deref(), Some("u=1, i"));
        assert_eq!(Priority::IMAGE.header().as_deref(), Some("i"));
        assert_eq!(Priority::ASYNC_SCRIPT.header(), None);
        let idle = Priority::new(RequestPriority::Idle, false);
        assert_eq!(idle.header().as_deref(), Some("u=4"));
    }

    #[test]
    fn classes_follow_from_priorities() {
        assert_eq!(Priority::DOCUMENT.class(), Class::LayoutBlocking);
        assert_eq!(Priority::SCRIPT.class(), Class::LayoutBlocking);
        assert_eq!(Priority::VISIBLE_IMAGE.class(), Class::LayoutBlocking);
        assert_eq!(Priority::LATE_SCRIPT.class(), Class::Normal);
        assert_eq!(Priority::BOOSTED_IMAGE.class(), Class::Normal);
        assert_eq!(Priority::IMAGE.class(), Class::Delayable);
        assert_eq!(Priority::ASYNC_SCRIPT.class(), Class::Delayable);
    }

    #[test]
    fn paths_suggest_priorities() {
        assert_eq!(Priority::from_path("/"), Priority::DOCUMENT);
        assert_eq!(Priority::from_path("/index.html"), Priority::DOCUMENT);
        assert_eq!(Priority::from_path("/s/site.css"), Priority::STYLESHEET);
        assert_eq!(Priority::from_path("/f/a.woff2"), Priority::FONT);
        assert_eq!(Priority::from_path("/js/app.js?v=2"), Priority::SCRIPT);
        assert_eq!(Priority::from_path("/img/a.PNG"), Priority::IMAGE);
        assert_eq!(Priority::from_path("/data.json"), Priority::OTHER);
        assert_eq!(Priority::from_path("/dir.d/x"), Priority::DOCUMENT);
    }

    /// `Http2PriorityDependencies`: a chain, most urgent first, each band in
    /// creation order; a closed stream leaves it.
    #[test]
    fn dependencies_chain_open_streams_as_chromium() {
        let mut d = Dependencies::default();
        let dep = |parent, weight| Dependency {
            parent,
            exclusive: true,
            weight,
        };
        // The document: nothing open, on the root.
        assert_eq!(d.created(1, 0), dep(0, 256));
        // A script (MEDIUM) under it; a stylesheet (HIGHEST) goes between.
        assert_eq!(d.created(3, 1), dep(1, 220));
        assert_eq!(d.created(5, 0), dep(1, 256));
        // An image (LOWEST) after the last of the band above it (the script).
        assert_eq!(d.created(7, 3), dep(3, 147));
        // A second image: after the first (same band, created last).
        assert_eq!(d.created(9, 3), dep(7, 147));
        // A LOW image goes after the MEDIUM script, before the LOWEST ones.
        assert_eq!(d.created(11, 2), dep(3, 183));
        // The script closes: a new MEDIUM one hangs under the last HIGHEST.
        d.closed(3);
        assert_eq!(d.created(13, 1), dep(5, 220));
        d.closed(1);
        d.closed(5);
        d.closed(13);
        d.closed(11);
        d.closed(7);
        d.closed(9);
        assert!(d.is_empty());
        assert_eq!(d.created(15, 3), dep(0, 147));
        d.closed(99);
        assert_eq!(d.len(), 1);
    }
}
