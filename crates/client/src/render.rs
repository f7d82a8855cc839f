//! The browser's costs, sans-I/O: one main thread in virtual time that parses
//! the HTML (a cost per kB, the tags of a chunk found once it is parsed), runs
//! parser-inserted scripts in document order, each after the stylesheets
//! before it and after its own bytes (a cost per kB; what it injects is found
//! only once it has run), runs injected scripts when they arrive, asks for
//! the images a stylesheet names once the stylesheet is complete and its
//! document parsed (elements styled), and spends a CPU cost on each request
//! before it goes out. The navigation's fixed cost (its commit: the
//! renderer takes the response) comes when the page's first bytes do, before
//! the parser starts.
//!
//! An imported page (`Renderer::replaying`) is parsed and run the same way,
//! but what each document, stylesheet and script names comes from its
//! recorded tree (`crate::replay`, which reads the served documents' tags),
//! not from its bytes: the model cannot run a real page's scripts. Its
//! POSTs are the served page's synchronous XMLHttpRequests
//! (`site::content`): each goes out when the parser reaches it, as a
//! parser-inserted script's turn comes, and holds the parser until its
//! response is complete.
//!
//! Fed what the page load sees (a response's type, its bytes, its end) with
//! the time since navigation start; polled for the resources to request now
//! and for when to wake next. Deterministic: the same inputs at the same
//! virtual times give the same requests at the same times (the unit tests
//! drive it so). [`BrowserCost::NONE`] is the pure network model, which the
//! page load runs without this module.
//!
//! Each found resource gets Blink's priority as the network stack has it
//! (`crate::priority::Priority`: the document and stylesheets HIGHEST, head
//! scripts MEDIUM, later scripts and the first five large images LOW, other
//! images and injected scripts LOWEST), whence its scheduling class and the
//! protocols' priority signals ([`Renderer::priority_of`]).

use crate::discover::{css_urls, script_injections, Found, HtmlScanner, Tag};
use crate::priority::Priority;
use crate::replay::ReplayTree;
use crate::schedule::Class;
use site::Kind;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// The browser's CPU costs, each a knob (`--browser-cost`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BrowserCost {
    /// The navigation's fixed cost, as the page's first bytes come (its
    /// commit), before the parser takes them: after TTFB, before all else.
    pub navigation: Duration,
    /// Parsing HTML, per kB (1000 bytes).
    pub parse_per_kb: Duration,
    /// Running a script, per kB of it.
    pub script_per_kb: Duration,
    /// Issuing one request.
    pub request: Duration,
    /// Blink's tight mode lasts at least this long after the page's first
    /// bytes reach the renderer: Chromium holds the images beyond the first
    /// two until about then, whenever its parser reaches the body or ends
    /// (docs/crosscheck.md, "The held images"). Zero: tight mode ends at the
    /// body alone.
    pub first_frame: Duration,
    /// The first frame with content is painted no sooner than this after the
    /// page's first bytes reach the renderer (the commit, style, layout and
    /// paint of Blink's first lifecycle update), then shown a [`FRAME`]
    /// later. Zero: as soon as the parser reaches the content.
    ///
    /// [`FRAME`]: crate::paint::FRAME
    pub first_paint: Duration,
    /// A browser's first page shows its first frame no sooner than this
    /// after navigation start, however early its bytes come (a browser
    /// navigated while it is still starting). A later load by the same
    /// client (the repeat view) is not held. Zero in the fitted costs since
    /// the Chromium probe navigates a settled browser (docs/chromium-flags.md):
    /// 194 ms was fitted on probes that did not wait, whose FCP at 20 ms RTT
    /// on the pages that paint from their HTML alone was 180–229 ms from the
    /// start whatever TTFB; a settled browser's there is 126–147 ms (icons at
    /// 20 ms / 20 Mbit/s). A knob (`present=`) for a cold browser.
    pub first_present: Duration,
    /// How long before the page's clock starts its navigation began: the
    /// clock starts at the document's request, as Chromium's does, and
    /// Chromium's connection to the page's host opens about this much
    /// earlier (its navigation's preconnect; `scripts/browser-timings.py`,
    /// "lead"). A first view opening its connections as Chromium does
    /// (`--pool chromium`) dials this much before its clock's zero; a repeat
    /// view, with the document perhaps in its cache, does not.
    pub lead: Duration,
    /// Blink's style and layout per element (a block of text, an image, a
    /// frame), spent before the first paint of the elements the parser
    /// reached in one stretch (`crate::paint`): a page whose head scripts
    /// all come after its HTML lays out its whole body before it paints.
    /// Zero: an element paints at the next frame once reached.
    pub layout: Duration,
    /// Whether scripts wait for the stylesheets before them and run in order,
    /// and a stylesheet's images wait for its document (false: the pure
    /// network model's discovery, as bytes arrive).
    pub ordered: bool,
}

impl BrowserCost {
    /// These costs on a CPU `factor` times slower (`--cpu-slowdown`, as
    /// Lighthouse's 4× for a phone): navigation, parsing, scripts and the
    /// per-request work and the first paint's take `factor` times as long.
    /// Blink's tight-mode minimum (`first_frame`) is a timer, not work, and a
    /// fresh browser's first presentation (`first_present`) waits for its
    /// other processes, which CPU throttling (DevTools', Lighthouse's) does
    /// not slow: they stay.
    pub fn slowed(self, factor: u32) -> BrowserCost {
        BrowserCost {
            navigation: self.navigation * factor,
            parse_per_kb: self.parse_per_kb * factor,
            script_per_kb: self.script_per_kb * factor,
            request: self.request * factor,
            first_paint: self.first_paint * factor,
            layout: self.layout * factor,
            ..self
        }
    }

    /// The pure network model: no cost, discovery as bytes arrive.
    pub const NONE: BrowserCost = BrowserCost {
        navigation: Duration::ZERO,
        parse_per_kb: Duration::ZERO,
        script_per_kb: Duration::ZERO,
        request: Duration::ZERO,
        first_frame: Duration::ZERO,
        first_paint: Duration::ZERO,
        first_present: Duration::ZERO,
        lead: Duration::ZERO,
        layout: Duration::ZERO,
        ordered: false,
    };

    /// The default: constants fitted on the lab machine (2 cores, quiet:
    /// load 0.1 at the start, 24 Nov 2026; the first fit, on a machine loaded
    /// by other builds, gave a navigation of 209 ms — Chromium's own start-up
    /// slows under load, the model's does not) against headless Chromium 156
    /// (renderer not backgrounded), by `scripts/fit-browser-cost.py`: weighted
    /// least squares of Chromium's minus the zero-cost ordered model's median
    /// PLT (weights 1/Chromium's, as MAPE; coefficients ≥ 0) on per-page work
    /// (1, requests, kB of script, kB of HTML) over youtube, twitter and icons
    /// at 20/150 ms × 1/8 Mbit × http/https/h2 (28 Trials: plain http on
    /// youtube and twitter is HTTPS in Chromium, HSTS preload); imgur and
    /// http-archive-2014 held out. The navigation's cost is PLT's fixed part;
    /// it was spent before the document's request until the crosscheck showed
    /// the model's TTFB 35–41 ms late on built-in pages, and 5 ms early to
    /// 1 ms late on imported ones, which have no renderer and so no such
    /// cost (29 Nov 2026): Chromium spends it after the first bytes (the
    /// commit), so it does here. The per-request cost is Chromium's work per
    /// resource (IPC, the loader, decoding). Script and parse per kB came
    /// out 0.
    /// docs/crosscheck.md has the runs and the table.
    pub const FITTED: BrowserCost = BrowserCost {
        navigation: Duration::from_millis(38),
        parse_per_kb: Duration::ZERO,
        script_per_kb: Duration::ZERO,
        request: Duration::from_micros(1180),
        first_frame: FIRST_FRAME,
        first_paint: FIRST_PAINT,
        first_present: Duration::ZERO,
        lead: LEAD,
        layout: LAYOUT,
        ordered: true,
    };

    pub fn is_none(&self) -> bool {
        *self == BrowserCost::NONE
    }
}

/// Blink's tight mode, measured in headless Chromium 156 on this machine
/// (docs/crosscheck.md, "The held images"): the images beyond the first two
/// left 49-136 ms (median 80) after the page's first byte in 18 loads
/// (`scripts/held-images.sh`), whether its parser had ended long before or
/// was blocked by a slow script until long after, at 20, 60 and 150 ms RTT,
/// just before first paint.
pub const FIRST_FRAME: Duration = Duration::from_millis(80);

/// From the page's first bytes to the paint of its first frame with content,
/// when nothing blocks it: a settled Chromium's FCP came 77 ms (median;
/// 69–87 quartiles, 165 loads) after TTFB on the pages that paint from their
/// HTML alone (icons and sitespeed.io's, every protocol, at 20, 50 and 150
/// ms; `scripts/browser-timings.py`, "first paint"), this plus one
/// [`crate::paint::FRAME`]. It was 42 ms, fitted with a fresh browser's
/// floor (`first_present`) on loads of a browser that had not settled
/// (docs/crosscheck.md, "The first frame of a fresh browser").
pub const FIRST_PAINT: Duration = Duration::from_millis(55);

/// Chromium's connection to the page's host began 3.5 ms (median; 2.4–4.4
/// quartiles, 60 loads) before its clock's zero, the document's request, over
/// plain http on the fidelity benchmark's references at 20, 50 and 150 ms, where
/// the model's began 0.7 ms after its own (`scripts/browser-timings.py`,
/// "lead"): at 20 ms the model's TTFB was 6 % late on every protocol.
pub const LEAD: Duration = Duration::from_millis(4);

/// Blink's style and layout per element of the page (a block of text, an
/// image, a frame; `BrowserCost::layout`): Chromium's traces of the
/// built-in pages (`scripts/chromium-trace.sh`: a settled headless
/// Chromium 156 on this machine, loopback) spent 0.069–0.10 ms per element
/// of the body in the style recalculation and layout before the first paint
/// that followed the head's last script — twitter 2.4 + 30.1 ms for 467
/// elements, imgur 6.2 + 35.3 for 411, youtube 16.3 + 56.8 for 790 (upper
/// bounds: tracing slows the renderer; 70 µs against 100 µs on the
/// benchmark's built-in pages: docs/crosscheck.md, "Style and layout
/// before the first paint"). In the crosscheck's loads the
/// first paint came 91–121 ms after youtube's last head script over https
/// (its body scripts in before it: the parser runs through the body) and
/// 25–42 ms after twitter's (its body script late: the parser stops after
/// the lede), where the model painted a frame (22 ms) after both.
pub const LAYOUT: Duration = Duration::from_micros(70);

impl Default for BrowserCost {
    fn default() -> BrowserCost {
        BrowserCost::FITTED
    }
}

fn us(d: Duration) -> String {
    link::units::format_duration(d)
}

/// `none`, `fitted`, the fitted costs with some changed
/// (`fitted,script=240us/kB`), or every cost
/// `navigation=300ms,parse=1ms/kB,script=2ms/kB,request=500us,frame=80ms,paint=42ms,present=194ms,lead=4ms,layout=70us`
/// (a key left out is 0; scripts in order; `layout` per element).
impl fmt::Display for BrowserCost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_none() {
            return f.write_str("none");
        }
        if *self == BrowserCost::FITTED {
            return f.write_str("fitted");
        }
        write!(
            f,
            "navigation={},parse={}/kB,script={}/kB,request={}",
            us(self.navigation),
            us(self.parse_per_kb),
            us(self.script_per_kb),
            us(self.request)
        )?;
        if !self.first_frame.is_zero() {
            write!(f, ",frame={}", us(self.first_frame))?;
        }
        if !self.first_paint.is_zero() {
            write!(f, ",paint={}", us(self.first_paint))?;
        }
        if !self.first_present.is_zero() {
            write!(f, ",present={}", us(self.first_present))?;
        }
        if !self.lead.is_zero() {
            write!(f, ",lead={}", us(self.lead))?;
        }
        if !self.layout.is_zero() {
            write!(f, ",layout={}", us(self.layout))?;
        }
        Ok(())
    }
}

impl FromStr for BrowserCost {
    type Err = String;
    fn from_str(s: &str) -> Result<BrowserCost, String> {
        let mut parts = s.split(',').map(str::trim).peekable();
        // A named base ("fitted,script=240us/kB": the fitted costs but
        // one) or, with none, every key left out 0.
        let base = match parts.peek().copied() {
            Some("none") => Some(BrowserCost::NONE),
            Some("fitted" | "default") => Some(BrowserCost::FITTED),
            _ => None,
        };
        let mut c = match base {
            Some(base) => {
                parts.next();
                base
            }
            None => BrowserCost {
                ordered: true,
                ..BrowserCost::NONE
            },
        };
        if c.is_none() && parts.peek().is_some() {
            return Err("none takes no costs: give key=value alone (navigation=38ms,...)".into());
        }
        for part in parts {
            let (key, value) = part.split_once('=').ok_or_else(|| {
                format!(
                    "'{part}': expected none, fitted, fitted,key=value... or key=value \
                     (navigation=300ms,parse=1ms/kB,script=2ms/kB,request=500us,frame=80ms,\
                     paint=42ms,present=194ms,lead=4ms,layout=70us)"
                )
            })?;
            let per_kb = |v: &str| -> Result<Duration, String> {
                let d = v.strip_suffix("/kB").ok_or_else(|| {
                    format!("{key}: '{v}' is not a duration per kB (e.g. 1ms/kB)")
                })?;
                link::units::parse_duration(d).map_err(|e| format!("{key}: {e}"))
            };
            let plain = |v: &str| link::units::parse_duration(v).map_err(|e| format!("{key}: {e}"));
            match key {
                "navigation" => c.navigation = plain(value)?,
                "parse" => c.parse_per_kb = per_kb(value)?,
                "script" => c.script_per_kb = per_kb(value)?,
                "request" => c.request = plain(value)?,
                "frame" => c.first_frame = plain(value)?,
                "paint" => c.first_paint = plain(value)?,
                "present" => c.first_present = plain(value)?,
                "lead" => c.lead = plain(value)?,
                "layout" => c.layout = plain(value)?,
                _ => {
                    return Err(format!(
                        "unknown cost '{key}'; expected navigation, parse, script, request, \
                         frame, paint, present, lead or layout"
                    ))
                }
            }
        }
        Ok(c)
    }
}

/// Blink's BoostImagePriority (`ResourceFetcher`, on by default): the first
/// `BOOSTED_IMAGES` images of a document's markup that are not small — no
/// `width` and `height` in the tag, or their product above
/// `SMALL_IMAGE_AREA` px² — are fetched at MEDIUM, not LOW: ahead of the
/// page's other images in Blink's scheduler and, on HTTP/1.1, in the socket
/// pool, and two of them beside tight mode's two (`TIGHT_MEDIUM_LIMIT`).
/// (Chromium's `kBoostImagePriority`: image_count 5, image_size 10 000.)
const BOOSTED_IMAGES: usize = 5;
const SMALL_IMAGE_AREA: u64 = 10_000;

/// The priority of a resource named by a URL alone (a tag that is neither
/// script nor stylesheet, a style sheet's url(), an injection): fonts are
/// HIGH (layout-blocking), anything else an image (LOW, delayable).
fn url_priority(f: &Found) -> Priority {
    let path = f.path.split(['?', '#']).next().unwrap_or("");
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    match ext.to_ascii_lowercase().as_str() {
        "woff" | "woff2" | "ttf" | "otf" | "eot" => Priority::FONT,
        "css" => Priority::STYLESHEET,
        "js" => Priority::LATE_SCRIPT,
        _ => Priority::IMAGE,
    }
}

fn per_kb(cost: Duration, bytes: usize) -> Duration {
    Duration::from_nanos((cost.as_nanos() as u64).saturating_mul(bytes as u64) / 1000)
}

type Key = (String, String);

fn key(f: &Found) -> Key {
    (f.host.clone(), f.path.clone())
}

#[derive(Debug, Default)]
struct Doc {
    scanner: HtmlScanner,
    /// Its body bytes so far (None: none yet), for a replayed page's tree.
    bytes: Option<u64>,
    /// Bytes handed to the parser whose parse has not finished.
    parsing: usize,
    /// All of its bytes arrived.
    arrived: bool,
    /// Its stylesheets and parser-inserted scripts, in document order.
    order: Vec<(Tag, Key)>,
    /// How many of `order`'s scripts have run.
    ran: usize,
    /// Its frames (`<iframe>`, `<embed>`) not yet requested, each with how
    /// many of `order`'s scripts come before it: Blink's preload scanner
    /// does not fetch them (`TokenPreloadScanner` takes img, input, link,
    /// script, source and video), the parser does when it inserts the
    /// element, once those scripts have run.
    frames: Vec<(usize, Found, Priority)>,
    /// An image was found in it: later scripts are MEDIUM, not HIGH
    /// (Blink's priority for scripts late in the body).
    image_seen: bool,
    /// Images of it raised to MEDIUM so far (`BOOSTED_IMAGES`).
    boosted: usize,
    /// How many of `order`'s scripts come before its first image: once they
    /// have run, the parser has reached the body (an approximation of
    /// `Document::WillInsertBody`, which loosens Blink's throttling).
    scripts_before_image: Option<usize>,
    complete: bool,
}

impl Doc {
    /// How many parser-inserted scripts it has named so far (what a tag
    /// found now comes after).
    fn scripts_so_far(&self) -> usize {
        self.order.iter().filter(|(t, _)| *t == Tag::Script).count()
    }
}

#[derive(Debug, Default)]
struct Res {
    /// Its priority (Blink's, as the network stack has it), whence its
    /// class in Chromium's schedulers.
    priority: Option<Priority>,
    /// The document that named it in a tag, if any.
    doc: Option<Key>,
    done: bool,
    script: bool,
    css: bool,
    /// A stylesheet's url()s, waiting for its document to be parsed.
    css_children: Vec<Found>,
    /// A script's bytes (to find what it injects once run).
    body: Vec<u8>,
    /// Parser-inserted (runs in order) rather than injected (runs when done).
    in_order: bool,
    running: bool,
    ran: bool,
    /// An imported page's POST, not requested yet: the served page sends it
    /// as a synchronous XMLHttpRequest from an inline script, so it goes
    /// out when the parser reaches it (its turn among the parser-inserted
    /// scripts, after the stylesheets before it), and the parser waits for
    /// its response as for a script's (`crate::paint` reads the same).
    sync_request: Option<Found>,
    /// A frame's document: a navigation, not a subresource.
    frame: bool,
}

#[derive(Debug)]
enum Work {
    Issue(Found),
    Parsed { doc: Key, found: Vec<(Tag, Found)> },
    Ran(Key),
}

/// The main thread and the page's documents, scripts and stylesheets.
#[derive(Debug)]
pub struct Renderer {
    cost: BrowserCost,
    /// An imported page's recorded tree: what each resource names (None:
    /// found in the bytes).
    tree: Option<Arc<ReplayTree>>,
    /// Work on the main thread, each ending at its time (in order: one thread).
    queue: VecDeque<(Duration, Work)>,
    busy_until: Duration,
    docs: HashMap<Key, Doc>,
    res: HashMap<Key, Res>,
    out: VecDeque<Found>,
    /// The page's own document.
    root: Key,
    /// When the page's first bytes arrived (the commit starts then).
    root_bytes_at: Option<Duration>,
    /// How far the main thread has been advanced.
    now: Duration,
}

impl Renderer {
    /// Navigation starts at time zero: the root is requested after one
    /// request's cost.
    pub fn new(cost: BrowserCost, root: Found) -> Renderer {
        let mut r = Renderer {
            cost,
            tree: None,
            queue: VecDeque::new(),
            busy_until: Duration::ZERO,
            docs: HashMap::new(),
            res: HashMap::new(),
            out: VecDeque::new(),
            root: key(&root),
            root_bytes_at: None,
            now: Duration::ZERO,
        };
        // The document's request is the browser process's, not the
        // renderer's: it costs the main thread nothing, and navigation
        // start is its start, as in Chromium's timings (HAR's and
        // Navigation Timing's). Its request cost put every time 1.18 ms
        // late (2.2 ms on the page loop's timer).
        r.res.insert(
            key(&root),
            Res {
                priority: Some(Priority::DOCUMENT),
                ..Default::default()
            },
        );
        r.queue.push_back((Duration::ZERO, Work::Issue(root)));
        r
    }

    /// An imported page: what its resources name comes from `tree`.
    pub fn replaying(cost: BrowserCost, root: Found, tree: Arc<ReplayTree>) -> Renderer {
        Renderer {
            tree: Some(tree),
            ..Renderer::new(cost, root)
        }
    }

    /// The priority of a resource no tag of a document names: by its
    /// recorded kind on an imported page, else by its name.
    fn priority_by_name(&self, f: &Found) -> Priority {
        let kind = self.tree.as_ref().and_then(|t| t.kind_of(f));
        match kind {
            Some(Kind::Font) => Priority::FONT,
            Some(Kind::Css) => Priority::STYLESHEET,
            Some(Kind::Js) => Priority::LATE_SCRIPT,
            Some(Kind::Png) => Priority::IMAGE,
            _ => url_priority(f),
        }
    }

    /// What the complete resource `k` names, outside a document's markup
    /// (a stylesheet's url()s, a script's injections, a redirect's target):
    /// from the tree, or from its bytes by `scan`.
    fn named_by(&self, k: &Key, body: &[u8], scan: fn(&[u8]) -> Vec<Found>) -> Vec<Found> {
        match &self.tree {
            Some(t) => t.due(&k.0, &k.1, u64::MAX, true),
            None => scan(body),
        }
    }

    /// Puts `work` on the main thread at `now`, costing `cost`.
    fn run(&mut self, now: Duration, cost: Duration, work: Option<Work>) {
        let end = self.busy_until.max(now) + cost;
        self.busy_until = end;
        if let Some(w) = work {
            self.queue.push_back((end, w));
        }
    }

    fn found(&mut self, now: Duration, f: Found, doc: Option<Key>, priority: Priority) {
        let k = key(&f);
        if self.res.contains_key(&k) {
            return;
        }
        self.res.insert(
            k,
            Res {
                priority: Some(priority),
                doc,
                ..Default::default()
            },
        );
        self.run(now, self.cost.request, Some(Work::Issue(f)));
    }

    /// `found` for a frame's document.
    fn found_frame(&mut self, now: Duration, f: Found, doc: Option<Key>, priority: Priority) {
        let k = key(&f);
        self.found(now, f, doc, priority);
        if let Some(r) = self.res.get_mut(&k) {
            r.frame = true;
        }
    }

    /// Whether `f` is a frame's document (a navigation: Chromium keeps a
    /// cross-site frame's connections apart from the page's).
    pub fn is_frame(&self, f: &Found) -> bool {
        self.res.get(&key(f)).is_some_and(|r| r.frame)
    }

    /// A response's head: its Content-Type.
    pub fn head(&mut self, host: &str, path: &str, content_type: &str) {
        let k = (host.to_string(), path.to_string());
        if content_type.starts_with("text/html") {
            self.docs.entry(k.clone()).or_default();
        }
        let r = self.res.entry(k).or_default();
        r.script = content_type.contains("javascript");
        r.css = content_type.starts_with("text/css");
    }

    /// Body bytes of a response, at `now`.
    pub fn data(&mut self, now: Duration, host: &str, path: &str, bytes: &[u8]) {
        self.advance(now);
        let k = (host.to_string(), path.to_string());
        self.page_bytes_came(&k, now);
        if let Some(doc) = self.docs.get_mut(&k) {
            let found = match &self.tree {
                Some(t) => {
                    let before = doc.bytes;
                    let now = before.unwrap_or(0) + bytes.len() as u64;
                    doc.bytes = Some(now);
                    t.newly_due(host, path, before, now, false)
                }
                None => doc.scanner.feed_tagged(bytes),
            };
            doc.parsing += 1;
            let cost = per_kb(self.cost.parse_per_kb, bytes.len());
            self.run(now, cost, Some(Work::Parsed { doc: k, found }));
        } else if let Some(r) = self.res.get_mut(&k) {
            if r.script || r.css {
                r.body.extend_from_slice(bytes);
            }
        }
    }

    /// A response is complete at `now`.
    pub fn done(&mut self, now: Duration, host: &str, path: &str) {
        self.advance(now);
        let k = (host.to_string(), path.to_string());
        // A page with an empty body: its end stands for its first bytes.
        self.page_bytes_came(&k, now);
        let mut at_end = Vec::new();
        if let Some(doc) = self.docs.get_mut(&k) {
            doc.arrived = true;
            // What the tree reveals at the document's end (a tag past the
            // bytes it came in), parsed after the rest.
            if let Some(t) = &self.tree {
                at_end = t.newly_due(host, path, doc.bytes, doc.bytes.unwrap_or(0), true);
                if !at_end.is_empty() {
                    doc.parsing += 1;
                }
            }
        }
        if !at_end.is_empty() {
            let found = at_end;
            self.run(
                now,
                Duration::ZERO,
                Some(Work::Parsed {
                    doc: k.clone(),
                    found,
                }),
            );
        }
        let (css, named) = match self.res.get_mut(&k) {
            Some(r) => {
                r.done = true;
                (r.css, !r.script && !self.docs.contains_key(&k))
            }
            None => (false, false),
        };
        if css {
            let body = self
                .res
                .get_mut(&k)
                .map(|r| std::mem::take(&mut r.body))
                .unwrap_or_default();
            let children = self.named_by(&k, &body, css_urls);
            let r = self.res.get_mut(&k).expect("known");
            r.css_children = children;
            if !self.cost.ordered || r.doc.is_none() {
                let children = std::mem::take(&mut r.css_children);
                for c in children {
                    let priority = self.priority_by_name(&c);
                    self.found(now, c, None, priority);
                }
            }
        } else if named {
            // An imported page's other resources (a redirect, an image)
            // reveal what the tree says at their end.
            let children = match &self.tree {
                Some(t) => t.due(host, path, u64::MAX, true),
                None => Vec::new(),
            };
            for c in children {
                let priority = self.priority_by_name(&c);
                self.found(now, c, None, priority);
            }
        }
        self.settle(now);
    }

    /// Whether Blink's tight mode is over: the page's parser has reached its
    /// body (the scripts before its first image have run, or the document is
    /// complete), and the first frame's time has passed (`first_frame`).
    pub fn tight_mode_over(&self) -> bool {
        let body = self
            .docs
            .get(&self.root)
            .is_some_and(|d| d.complete || d.scripts_before_image.is_some_and(|n| d.ran >= n));
        body && self.first_frame_at().is_some_and(|t| self.now >= t)
    }

    /// Notes when the page's own first bytes (or its end) came, once, and
    /// spends the navigation's commit on the main thread then: the renderer
    /// has them when it ends. The first frame counts from their arrival,
    /// not from the commit's end: Chromium's release of the held images
    /// was measured from the response's first byte (`responseStart`,
    /// docs/crosscheck.md, "The held images"), and the commit is part of
    /// those 80 ms.
    fn page_bytes_came(&mut self, k: &Key, now: Duration) {
        if *k == self.root && self.root_bytes_at.is_none() {
            self.run(now, self.cost.navigation, None);
            self.root_bytes_at = Some(now);
        }
    }

    /// When tight mode may end at the earliest, once the page's bytes came.
    fn first_frame_at(&self) -> Option<Duration> {
        self.root_bytes_at.map(|t| t + self.cost.first_frame)
    }

    /// A found resource's class in Chromium's ResourceScheduler.
    pub fn class_of(&self, f: &Found) -> Class {
        self.priority_of(f).class()
    }

    /// A found resource's priority (LOW, as Blink's Medium, if not found).
    pub fn priority_of(&self, f: &Found) -> Priority {
        self.res
            .get(&key(f))
            .and_then(|r| r.priority)
            .unwrap_or(Priority::OTHER)
    }

    /// What to request now (after `advance`).
    pub fn poll(&mut self) -> Option<Found> {
        self.out.pop_front()
    }

    /// When the main thread next finishes something (None: idle).
    pub fn next_wakeup(&self) -> Option<Duration> {
        let work = self.queue.front().map(|(t, _)| *t);
        // The first frame's time, while still ahead, ends tight mode.
        let frame = self.first_frame_at().filter(|t| *t > self.now);
        work.into_iter().chain(frame).min()
    }

    /// When the main thread is idle from, as far as known now.
    pub fn busy_until(&self) -> Duration {
        self.busy_until
    }

    /// Whether nothing runs or waits to run on the main thread (every script
    /// run, every document parsed).
    pub fn idle(&self) -> bool {
        self.queue.is_empty()
            && self.out.is_empty()
            && self.docs.values().all(|d| d.complete || !d.arrived)
            && self.res.values().all(|r| !(r.script && r.done && !r.ran))
    }

    /// Finishes the main thread's work due by `now`, in order.
    pub fn advance(&mut self, now: Duration) {
        self.now = self.now.max(now);
        while let Some((t, _)) = self.queue.front() {
            if *t > now {
                break;
            }
            let (t, work) = self.queue.pop_front().expect("front");
            match work {
                Work::Issue(f) => self.out.push_back(f),
                Work::Parsed { doc, found } => {
                    for (tag, f) in found {
                        let k = key(&f);
                        if self.cost.ordered
                            && !self.res.contains_key(&k)
                            && self
                                .tree
                                .as_ref()
                                .is_some_and(|t| t.upload(&f.host, &f.path).is_some())
                        {
                            if let Some(d) = self.docs.get_mut(&doc) {
                                d.order.push((Tag::Script, k.clone()));
                            }
                            self.res.insert(
                                k,
                                Res {
                                    priority: Some(Priority::SCRIPT),
                                    doc: Some(doc.clone()),
                                    in_order: true,
                                    sync_request: Some(f),
                                    ..Default::default()
                                },
                            );
                            continue;
                        }
                        if let Some(d) = self.docs.get_mut(&doc) {
                            if matches!(tag, Tag::Stylesheet | Tag::Script)
                                && !d.order.iter().any(|(_, o)| *o == k)
                            {
                                d.order.push((tag, k.clone()));
                            }
                        }
                        let known = self.res.contains_key(&k);
                        let late = self.docs.get(&doc).is_some_and(|d| d.image_seen);
                        let priority = match tag {
                            Tag::Stylesheet => Priority::STYLESHEET,
                            Tag::Script if late => Priority::LATE_SCRIPT,
                            Tag::Script => Priority::SCRIPT,
                            // An `<img>` is fetched as an image whatever its
                            // URL or bytes are (Blink's resource type comes
                            // from the tag: an imported page's fonts named by
                            // `<img>` go at an image's priority, not a font's).
                            Tag::Image { area } => match self.docs.get_mut(&doc) {
                                Some(d)
                                    if area.is_none_or(|a| a > SMALL_IMAGE_AREA)
                                        && d.boosted < BOOSTED_IMAGES =>
                                {
                                    d.boosted += 1;
                                    Priority::BOOSTED_IMAGE
                                }
                                _ => Priority::IMAGE,
                            },
                            // A frame's document is a navigation: the browser
                            // process requests it at HIGHEST, outside Blink's
                            // and the ResourceScheduler's limits
                            // (`CreateResourceRequestForNavigation(…,
                            // net::HIGHEST, …)` in
                            // content/browser/loader/navigation_url_loader_impl.cc).
                            // http-archive-2014 over https at 50 ms / 4 Mbit/s:
                            // Chromium sent its frames 230–330 ms after the
                            // parser reached them, the model (at an image's
                            // LOWEST, delayable) 3.1 s after.
                            Tag::Frame => Priority::DOCUMENT,
                            Tag::Other => self.priority_by_name(&f),
                            Tag::Preload(p) => p,
                        };
                        if priority.class() == Class::Delayable || matches!(tag, Tag::Image { .. })
                        {
                            if let Some(d) = self.docs.get_mut(&doc) {
                                if !d.image_seen {
                                    d.image_seen = true;
                                    d.scripts_before_image = Some(d.scripts_so_far());
                                }
                            }
                        }
                        // A frame waits for the parser: it goes out once the
                        // scripts before it have run.
                        if tag == Tag::Frame && self.cost.ordered && !known {
                            if let Some(d) = self.docs.get_mut(&doc) {
                                d.frames.push((d.scripts_so_far(), f, priority));
                                continue;
                            }
                        }
                        if tag == Tag::Frame {
                            self.found_frame(t, f, Some(doc.clone()), priority);
                            continue;
                        }
                        self.found(t, f, Some(doc.clone()), priority);
                        if !known && tag == Tag::Script {
                            if let Some(r) = self.res.get_mut(&k) {
                                r.in_order = self.cost.ordered;
                            }
                        }
                    }
                    if let Some(d) = self.docs.get_mut(&doc) {
                        d.parsing -= 1;
                    }
                }
                Work::Ran(k) => {
                    let body = match self.res.get_mut(&k) {
                        Some(r) => {
                            r.running = false;
                            r.ran = true;
                            std::mem::take(&mut r.body)
                        }
                        None => Vec::new(),
                    };
                    // Script-inserted scripts are async (LOW), as are images.
                    for f in self.named_by(&k, &body, script_injections) {
                        let priority = match self.priority_by_name(&f) {
                            p if p.class() == Class::LayoutBlocking => p,
                            Priority::LATE_SCRIPT => Priority::ASYNC_SCRIPT,
                            p => p,
                        };
                        self.found(t, f, None, priority);
                    }
                }
            }
            self.settle(t);
        }
    }

    /// Starts what may start at `now`: scripts whose turn it is, documents
    /// complete, stylesheets' images once their document is.
    fn settle(&mut self, now: Duration) {
        loop {
            let mut progress = false;
            // Injected (or unordered) scripts run once they arrive.
            let ready: Vec<Key> = self
                .res
                .iter()
                .filter(|(_, r)| r.script && r.done && !r.in_order && !r.running && !r.ran)
                .map(|(k, _)| k.clone())
                .collect();
            let mut ready = ready;
            ready.sort();
            for k in ready {
                self.start_script(now, k);
                progress = true;
            }
            // Parser-inserted scripts, in document order, after the stylesheets before them.
            let docs: Vec<Key> = self.docs.keys().cloned().collect();
            for dk in docs {
                let (next, css_before_done, all_ran) = {
                    let d = &self.docs[&dk];
                    let scripts: Vec<(usize, &Key)> = d
                        .order
                        .iter()
                        .enumerate()
                        .filter(|(_, (t, _))| *t == Tag::Script)
                        .map(|(i, (_, k))| (i, k))
                        .collect();
                    let next = scripts.get(d.ran).map(|(i, k)| (*i, (*k).clone()));
                    let css_done = next.as_ref().is_none_or(|(i, _)| {
                        d.order[..*i].iter().all(|(t, k)| {
                            *t != Tag::Stylesheet || self.res.get(k).is_some_and(|r| r.done)
                        })
                    });
                    (next, css_done, d.ran == scripts.len())
                };
                if let Some((_, k)) = next {
                    // A synchronous request's turn: it goes out now.
                    let sync = match css_before_done {
                        true => self.res.get_mut(&k).and_then(|r| r.sync_request.take()),
                        false => None,
                    };
                    if let Some(f) = sync {
                        self.run(now, self.cost.request, Some(Work::Issue(f)));
                        progress = true;
                    }
                    let state = self
                        .res
                        .get(&k)
                        .map(|r| (r.in_order, r.done, r.running, r.ran));
                    match state {
                        Some((true, true, false, false)) if css_before_done => {
                            self.start_script(now, k);
                            progress = true;
                        }
                        Some((_, _, _, true)) => {
                            if let Some(d) = self.docs.get_mut(&dk) {
                                d.ran += 1;
                            }
                            progress = true;
                        }
                        // Not in order (the pure model), or an injected script the
                        // parser also names: it runs on its own.
                        Some((false, _, _, _)) => {
                            if let Some(d) = self.docs.get_mut(&dk) {
                                d.ran += 1;
                            }
                            progress = true;
                        }
                        _ => {}
                    }
                }
                // Frames the parser has reached.
                let d = self.docs.get_mut(&dk).expect("doc");
                let ran = d.ran;
                let (reached, later): (Vec<_>, Vec<_>) = std::mem::take(&mut d.frames)
                    .into_iter()
                    .partition(|(scripts_before, _, _)| *scripts_before <= ran);
                d.frames = later;
                for (_, f, priority) in reached {
                    self.found_frame(now, f, Some(dk.clone()), priority);
                    progress = true;
                }
                let d = &self.docs[&dk];
                if !d.complete && d.arrived && d.parsing == 0 && all_ran {
                    self.docs.get_mut(&dk).expect("doc").complete = true;
                    progress = true;
                    // Its elements are styled: the images its stylesheets name.
                    let sheets: Vec<Key> = self
                        .res
                        .iter()
                        .filter(|(_, r)| r.doc.as_ref() == Some(&dk) && r.css && r.done)
                        .map(|(k, _)| k.clone())
                        .collect();
                    let mut sheets = sheets;
                    sheets.sort();
                    for s in sheets {
                        self.release_css(now, &s);
                    }
                }
            }
            // A stylesheet completing after its document.
            let late: Vec<Key> = self
                .res
                .iter()
                .filter(|(_, r)| r.css && r.done && !r.css_children.is_empty())
                .filter(|(_, r)| {
                    r.doc
                        .as_ref()
                        .is_some_and(|d| self.docs.get(d).is_some_and(|d| d.complete))
                })
                .map(|(k, _)| k.clone())
                .collect();
            let mut late = late;
            late.sort();
            for s in late {
                self.release_css(now, &s);
                progress = true;
            }
            if !progress {
                break;
            }
        }
    }

    fn release_css(&mut self, now: Duration, sheet: &Key) {
        let children = self
            .res
            .get_mut(sheet)
            .map(|r| std::mem::take(&mut r.css_children))
            .unwrap_or_default();
        for c in children {
            let priority = self.priority_by_name(&c);
            self.found(now, c, None, priority);
        }
    }

    fn start_script(&mut self, now: Duration, k: Key) {
        let size = match self.res.get_mut(&k) {
            Some(r) => {
                r.running = true;
                r.body.len()
            }
            None => return,
        };
        let cost = per_kb(self.cost.script_per_kb, size);
        self.run(now, cost, Some(Work::Ran(k)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn f(host: &str, path: &str) -> Found {
        Found {
            host: host.into(),
            path: path.into(),
        }
    }

    fn drain(r: &mut Renderer) -> Vec<String> {
        std::iter::from_fn(|| r.poll())
            .map(|f| format!("{}{}", f.host, f.path))
            .collect()
    }

    const COST: BrowserCost = BrowserCost {
        navigation: Duration::from_millis(100),
        parse_per_kb: Duration::from_millis(1),
        script_per_kb: Duration::from_millis(10),
        request: Duration::from_millis(2),
        first_frame: Duration::ZERO,
        first_paint: Duration::ZERO,
        first_present: Duration::ZERO,
        lead: Duration::ZERO,
        layout: Duration::ZERO,
        ordered: true,
    };

    /// COST without the navigation's commit: the tests of what comes after
    /// the page's first bytes, on their own clock.
    const NO_COMMIT: BrowserCost = BrowserCost {
        navigation: Duration::ZERO,
        ..COST
    };

    /// `--cpu-slowdown N`: the work takes N times as long; tight mode's
    /// minimum (a timer) and the script order do not change.
    #[test]
    fn a_slower_cpu_scales_the_work_not_the_timer() {
        let cost = BrowserCost {
            first_frame: Duration::from_millis(50),
            first_paint: Duration::from_millis(40),
            first_present: Duration::from_millis(190),
            ..COST
        };
        let slow = cost.slowed(4);
        assert_eq!(slow.navigation, Duration::from_millis(400));
        assert_eq!(slow.parse_per_kb, Duration::from_millis(4));
        assert_eq!(slow.script_per_kb, Duration::from_millis(40));
        assert_eq!(slow.request, Duration::from_millis(8));
        assert_eq!(slow.first_frame, Duration::from_millis(50));
        assert_eq!(slow.first_paint, Duration::from_millis(160));
        assert_eq!(slow.first_present, Duration::from_millis(190));
        assert!(slow.ordered);
        assert_eq!(cost.slowed(1), cost);
        assert_eq!(BrowserCost::NONE.slowed(4), BrowserCost::NONE);
    }

    #[test]
    fn the_knob_parses_and_prints() {
        assert_eq!("none".parse::<BrowserCost>().unwrap(), BrowserCost::NONE);
        assert_eq!(
            "fitted".parse::<BrowserCost>().unwrap(),
            BrowserCost::FITTED
        );
        let c: BrowserCost = "navigation=100ms,parse=1ms/kB,script=10ms/kB,request=2ms"
            .parse()
            .unwrap();
        assert_eq!(c, COST);
        assert_eq!(c.to_string().parse::<BrowserCost>().unwrap(), c);
        let framed: BrowserCost = "request=2ms,frame=80ms".parse().unwrap();
        assert_eq!(framed.first_frame, ms(80));
        assert_eq!(framed.to_string().parse::<BrowserCost>().unwrap(), framed);
        let painted: BrowserCost = "request=2ms,paint=42ms,present=194ms".parse().unwrap();
        assert_eq!(
            (painted.first_paint, painted.first_present),
            (ms(42), ms(194))
        );
        assert_eq!(painted.to_string().parse::<BrowserCost>().unwrap(), painted);
        let led: BrowserCost = "navigation=38ms,lead=4ms".parse().unwrap();
        assert_eq!(led.lead, ms(4));
        assert!(led.to_string().ends_with(",lead=4ms"), "{led}");
        assert_eq!(led.to_string().parse::<BrowserCost>().unwrap(), led);
        assert!("parse=1ms"
            .parse::<BrowserCost>()
            .unwrap_err()
            .contains("per kB"));
        assert!("cpu=1ms"
            .parse::<BrowserCost>()
            .unwrap_err()
            .contains("unknown cost"));
        assert!("request=fast".parse::<BrowserCost>().is_err());
        // The fitted costs with one changed.
        let scripted: BrowserCost = "fitted,script=240us/kB".parse().unwrap();
        assert_eq!(
            scripted,
            BrowserCost {
                script_per_kb: Duration::from_micros(240),
                ..BrowserCost::FITTED
            }
        );
        assert_eq!(
            scripted.to_string().parse::<BrowserCost>().unwrap(),
            scripted
        );
        assert!("none,request=1ms".parse::<BrowserCost>().is_err());
    }

    #[test]
    fn tight_mode_lasts_until_the_first_frame_after_the_pages_first_bytes() {
        let cost = BrowserCost {
            first_frame: ms(95),
            ..NO_COMMIT
        };
        let mut r = Renderer::new(cost, f("a.test", "/"));
        r.advance(ms(102));
        assert_eq!(drain(&mut r), ["a.test/"]);
        r.head("a.test", "/", "text/html");
        r.data(
            ms(150),
            "a.test",
            "/",
            br#"<html><body><img src="//a.test/i.png"></body></html>"#,
        );
        r.done(ms(150), "a.test", "/");
        r.advance(ms(200));
        assert_eq!(drain(&mut r), ["a.test/i.png"]);
        // Parsed long ago, but the first frame comes 95 ms after the first bytes.
        assert!(!r.tight_mode_over());
        assert_eq!(r.next_wakeup(), Some(ms(245)));
        r.advance(ms(245));
        assert!(r.tight_mode_over());
        assert_eq!(r.next_wakeup(), None);
        // An empty page whose bytes come at 150 ms, seen at 200 ms.
        let empty_page = |cost: BrowserCost| {
            let mut r = Renderer::new(cost, f("a.test", "/"));
            r.advance(ms(102));
            drain(&mut r);
            r.head("a.test", "/", "text/html");
            r.data(ms(150), "a.test", "/", b"<html><body></body></html>");
            r.done(ms(150), "a.test", "/");
            r.advance(ms(200));
            r
        };
        // The commit does not push it back: the 95 ms count from the
        // bytes' arrival, the commit's 38 among them.
        let mut r = empty_page(BrowserCost {
            navigation: ms(38),
            ..cost
        });
        assert!(!r.tight_mode_over());
        assert_eq!(r.next_wakeup(), Some(ms(245)));
        r.advance(ms(245));
        assert!(r.tight_mode_over());
        // Without it, tight mode ends with the body.
        assert!(empty_page(NO_COMMIT).tight_mode_over());
    }

    /// A page: a stylesheet with one image, then a script injecting one image,
    /// then a body image, driven in virtual time.
    #[test]
    fn scripts_run_after_the_stylesheets_before_them_and_inject_then() {
        let mut r = Renderer::new(NO_COMMIT, f("a.test", "/"));
        // The document goes at once: its request is the browser's.
        assert_eq!(r.next_wakeup(), Some(ms(0)));
        r.advance(ms(0));
        assert_eq!(drain(&mut r), ["a.test/"]);
        r.head("a.test", "/", "text/html");
        let html = br#"<html><head><link rel="stylesheet" href="//a.test/s.css"><script src="//a.test/x.js"></script></head><body><img src="//a.test/i.png"></body></html>"#;
        // 2000 bytes of HTML: 2 ms to parse; then three requests of 2 ms each.
        let mut page = html.to_vec();
        page.resize(2000, b' ');
        r.data(ms(200), "a.test", "/", &page);
        r.done(ms(200), "a.test", "/");
        r.advance(ms(205));
        assert_eq!(drain(&mut r), ["a.test/s.css"]);
        r.advance(ms(206));
        assert_eq!(drain(&mut r), ["a.test/x.js"]);
        r.advance(ms(208));
        assert_eq!(drain(&mut r), ["a.test/i.png"]);
        // The script (1000 bytes: 10 ms) arrives before the stylesheet: it waits.
        r.head("a.test", "/x.js", "application/javascript");
        let mut js = br#"__spdylab_inject("//b.test/j.png","img");"#.to_vec();
        js.resize(1000, b' ');
        r.data(ms(300), "a.test", "/x.js", &js);
        r.done(ms(300), "a.test", "/x.js");
        assert_eq!(r.next_wakeup(), None, "the script waits for the stylesheet");
        assert!(!r.tight_mode_over(), "the head script has not run");
        r.head("a.test", "/s.css", "text/css");
        r.data(
            ms(400),
            "a.test",
            "/s.css",
            b".c>i:nth-child(1){background-image:url(//a.test/bg.png)}",
        );
        r.done(ms(400), "a.test", "/s.css");
        // The script runs 400..410, its injection is requested at 412; then the
        // document is complete and the stylesheet's image is requested (414).
        assert_eq!(r.next_wakeup(), Some(ms(410)));
        r.advance(ms(411));
        assert!(drain(&mut r).is_empty());
        assert!(
            r.tight_mode_over(),
            "the head script ran: the parser is in the body"
        );
        r.advance(ms(412));
        assert_eq!(drain(&mut r), ["b.test/j.png"]);
        r.advance(ms(414));
        assert_eq!(drain(&mut r), ["a.test/bg.png"]);
        assert!(r.idle());
        // Their classes in Chromium's ResourceScheduler: the document, the
        // stylesheet and the head script are layout-blocking; the body's
        // image, of no size given, is boosted to MEDIUM; the stylesheet's and
        // the injected ones are delayable.
        let class = |h: &str, p: &str| r.class_of(&f(h, p));
        assert_eq!(class("a.test", "/"), Class::LayoutBlocking);
        assert_eq!(class("a.test", "/s.css"), Class::LayoutBlocking);
        assert_eq!(class("a.test", "/x.js"), Class::LayoutBlocking);
        assert_eq!(class("a.test", "/i.png"), Class::Normal, "no size: boosted");
        assert_eq!(class("a.test", "/bg.png"), Class::Delayable);
        assert_eq!(class("b.test", "/j.png"), Class::Delayable);
        // Their priorities, which the protocols' signals come from.
        let priority = |h: &str, p: &str| r.priority_of(&f(h, p));
        assert_eq!(priority("a.test", "/"), Priority::DOCUMENT);
        assert_eq!(priority("a.test", "/s.css"), Priority::STYLESHEET);
        assert_eq!(priority("a.test", "/x.js"), Priority::SCRIPT);
        assert_eq!(priority("a.test", "/i.png"), Priority::BOOSTED_IMAGE);
        assert_eq!(priority("a.test", "/bg.png"), Priority::IMAGE);
        assert_eq!(priority("b.test", "/j.png"), Priority::IMAGE);
        assert_eq!(r.busy_until(), ms(414));
    }

    /// What the preload scanner does not take: a frame goes out when the
    /// parser reaches it (after the head's script has run), and a font
    /// named by `<img>` is fetched as an image (Blink's resource type comes
    /// from the tag), not at a font's HIGHEST.
    #[test]
    fn frames_wait_for_the_parser_and_an_img_is_an_image_whatever_its_url() {
        let mut r = Renderer::new(NO_COMMIT, f("a.test", "/"));
        r.advance(ms(2));
        assert_eq!(drain(&mut r), ["a.test/"]);
        r.head("a.test", "/", "text/html");
        let html = br#"<html><head><script src="//a.test/x.js"></script></head><body><img src="//a.test/f.woff2"><iframe src="//b.test/frame.html"></iframe></body></html>"#;
        r.data(ms(100), "a.test", "/", html);
        r.done(ms(100), "a.test", "/");
        r.advance(ms(150));
        // The script and the image; not the frame.
        assert_eq!(drain(&mut r), ["a.test/x.js", "a.test/f.woff2"]);
        assert_eq!(
            r.priority_of(&f("a.test", "/f.woff2")),
            Priority::BOOSTED_IMAGE
        );
        assert_ne!(r.class_of(&f("a.test", "/f.woff2")), Class::LayoutBlocking);
        r.head("a.test", "/x.js", "application/javascript");
        r.data(ms(300), "a.test", "/x.js", b"var a;");
        r.done(ms(300), "a.test", "/x.js");
        r.advance(ms(300));
        assert!(drain(&mut r).is_empty(), "the script is still running");
        // It runs (6 bytes: 0.06 ms), then the parser inserts the frame.
        r.advance(ms(310));
        assert_eq!(drain(&mut r), ["b.test/frame.html"]);
        // A navigation: HIGHEST, outside the request limits; a frame.
        let frame = f("b.test", "/frame.html");
        assert_eq!(r.priority_of(&frame), Priority::DOCUMENT);
        assert_eq!(r.class_of(&frame), Class::LayoutBlocking);
        assert!(r.is_frame(&frame) && !r.is_frame(&f("a.test", "/f.woff2")));
        // The pure network model finds it in the bytes, as 2014's browsers did.
        let mut r = Renderer::new(BrowserCost::NONE, f("a.test", "/"));
        r.advance(ms(0));
        drain(&mut r);
        r.head("a.test", "/", "text/html");
        r.data(ms(100), "a.test", "/", html);
        r.advance(ms(100));
        assert_eq!(
            drain(&mut r),
            ["a.test/x.js", "a.test/f.woff2", "b.test/frame.html"]
        );
    }

    /// Blink's BoostImagePriority: the first five images above 10 000 px² by
    /// their attributes (or without them) are MEDIUM; small ones and the
    /// sixth large one stay LOW.
    #[test]
    fn the_first_five_large_images_are_medium() {
        let mut r = Renderer::new(BrowserCost::NONE, f("a.test", "/"));
        r.advance(ms(0));
        drain(&mut r);
        r.head("a.test", "/", "text/html");
        let mut html = String::from(
            r#"<img src="//a.test/small.png" width="32" height="32"><img src="//a.test/edge.png" width="100" height="100">"#,
        );
        for i in 1..=6 {
            let size = if i == 3 {
                ""
            } else {
                r#" width="200" height="51""#
            };
            html.push_str(&format!(r#"<img src="//a.test/{i}.png"{size}>"#));
        }
        r.data(ms(10), "a.test", "/", html.as_bytes());
        r.done(ms(10), "a.test", "/");
        r.advance(ms(10));
        let class = |p: &str| r.class_of(&f("a.test", p));
        assert_eq!(class("/small.png"), Class::Delayable);
        assert_eq!(class("/edge.png"), Class::Delayable, "10 000 px² is small");
        for i in 1..=5 {
            assert_eq!(class(&format!("/{i}.png")), Class::Normal, "{i}");
        }
        assert_eq!(class("/6.png"), Class::Delayable);
    }

    /// The fitted defaults in virtual time: the root goes out at once (the
    /// browser's request, not the renderer's); its first bytes wait for
    /// the navigation's commit before the parser takes them; the images
    /// of one parsed chunk go out one request's cost apart (the main
    /// thread issues them in turn), so a page of many small resources pays
    /// its per-request cost in series.
    #[test]
    fn fitted_costs_commit_the_page_then_issue_requests_in_series() {
        let c = BrowserCost::FITTED;
        let mut r = Renderer::new(c, f("a.test", "/"));
        assert_eq!(r.next_wakeup(), Some(Duration::ZERO));
        r.advance(Duration::ZERO);
        assert_eq!(
            drain(&mut r),
            ["a.test/"],
            "the document at navigation start"
        );
        r.head("a.test", "/", "text/html");
        let t = ms(400);
        r.data(
            t,
            "a.test",
            "/",
            br#"<img src="//a.test/1.png"><img src="//a.test/2.png"><img src="//a.test/3.png">"#,
        );
        r.done(t, "a.test", "/");
        // HTML parse is free when fitted; after the commit, the three
        // requests go out at 1, 2 and 3 request costs.
        let parsed = t + c.navigation;
        for (i, want) in ["a.test/1.png", "a.test/2.png", "a.test/3.png"]
            .into_iter()
            .enumerate()
        {
            let at = parsed + c.request * (i as u32 + 1);
            r.advance(at - Duration::from_nanos(1));
            assert!(drain(&mut r).is_empty(), "{want} before {at:?}");
            r.advance(at);
            assert_eq!(drain(&mut r), [want]);
        }
        assert!(r.idle());
    }

    /// An imported page goes through the same main thread as a built-in
    /// one, its tree standing for its tags: committed, then its head's
    /// stylesheet and script found as the first bytes are parsed, the
    /// script run after the stylesheet, what it injects found once it has
    /// run, and the stylesheet's image once the document is complete.
    #[test]
    fn an_imported_page_is_parsed_and_run_from_its_tree() {
        let e = |url: &str, mime: &str, text: &str| {
            serde_json::json!({"request": {"method": "GET", "url": url},
                "response": {"status": 200, "headers": [],
                "content": {"size": text.len(), "mimeType": mime, "text": text}}})
        };
        let html = r#"<html><head><link rel=stylesheet href="/s.css"><script src="/x.js"></script></head><body><img src="/i.png"></body></html>"#;
        let har = serde_json::json!({"log": {"entries": [
            e("https://a.test/", "text/html", html),
            e("https://a.test/s.css", "text/css", "b{background:url(/bg.png)}"),
            e("https://a.test/x.js", "application/javascript", "load('/j.png')"),
            e("https://a.test/i.png", "image/png", "png"),
            e("https://a.test/bg.png", "image/png", "png"),
            e("https://a.test/j.png", "image/png", "png"),
        ]}});
        let (site, _) = site::har::import("t", har.to_string().as_bytes()).unwrap();
        let tree = Arc::new(ReplayTree::of(&site));
        let mut r = Renderer::replaying(COST, f("a.test", "/"), tree);
        r.advance(ms(0));
        r.advance(ms(2));
        assert_eq!(drain(&mut r), ["a.test/"]);
        r.head("a.test", "/", "text/html");
        // The first bytes at 100 ms: committed 100..200, parsed, the head's
        // tags issued one request's cost (2 ms) apart.
        r.data(ms(100), "a.test", "/", &html.as_bytes()[..50]);
        r.advance(ms(199));
        assert!(drain(&mut r).is_empty(), "the commit comes first");
        r.advance(ms(210));
        // The script's tag ends past the first 50 bytes: it comes with the rest.
        assert_eq!(drain(&mut r), ["a.test/s.css"]);
        r.data(ms(220), "a.test", "/", &html.as_bytes()[50..]);
        r.done(ms(220), "a.test", "/");
        r.advance(ms(230));
        assert_eq!(drain(&mut r), ["a.test/x.js", "a.test/i.png"]);
        // The script came first but waits for the stylesheet before it.
        r.head("a.test", "/x.js", "application/javascript");
        r.data(ms(240), "a.test", "/x.js", &[b' '; 1000]);
        r.done(ms(240), "a.test", "/x.js");
        r.advance(ms(260));
        assert!(drain(&mut r).is_empty());
        r.head("a.test", "/s.css", "text/css");
        r.data(ms(300), "a.test", "/s.css", b"b{}");
        r.done(ms(300), "a.test", "/s.css");
        // The script runs 300..310 (1 kB at 10 ms/kB); what it injects is
        // issued at 312, then the document is complete and the stylesheet's
        // image issued at 314.
        r.advance(ms(311));
        assert!(drain(&mut r).is_empty());
        r.advance(ms(314));
        assert_eq!(drain(&mut r), ["a.test/j.png", "a.test/bg.png"]);
        assert!(r.idle());
        let priority = |p: &str| r.priority_of(&f("a.test", p));
        assert_eq!(priority("/s.css"), Priority::STYLESHEET);
        assert_eq!(priority("/x.js"), Priority::SCRIPT);
        assert_eq!(priority("/i.png"), Priority::BOOSTED_IMAGE);
        assert_eq!(priority("/bg.png"), Priority::IMAGE);
        assert_eq!(priority("/j.png"), Priority::IMAGE);
    }

    /// An imported page's POST goes out when the parser reaches it (after
    /// the head's script ran), not as it is revealed, and the parser waits
    /// for its response: the document completes after it.
    #[test]
    fn an_imported_pages_post_waits_for_the_parser_and_holds_it() {
        let e = |url: &str, method: &str, mime: &str, text: &str| {
            serde_json::json!({"request": {"method": method, "url": url},
                "response": {"status": 200, "headers": [],
                "content": {"size": text.len(), "mimeType": mime, "text": text}}})
        };
        let html =
            r#"<html><head><script src="/x.js"></script></head><body><p>hi</p></body></html>"#;
        let har = serde_json::json!({"log": {"entries": [
            e("https://a.test/", "GET", "text/html", html),
            e("https://a.test/x.js", "GET", "application/javascript", "x"),
            e("https://ocsp.test/", "POST", "application/ocsp-response", "ok"),
        ]}});
        let (site, _) = site::har::import("t", har.to_string().as_bytes()).unwrap();
        let tree = Arc::new(ReplayTree::of(&site));
        assert!(tree.upload("ocsp.test", "/").is_some());
        let mut r = Renderer::replaying(COST, f("a.test", "/"), tree);
        r.advance(ms(0));
        r.advance(ms(2));
        assert_eq!(drain(&mut r), ["a.test/"]);
        r.head("a.test", "/", "text/html");
        r.data(ms(100), "a.test", "/", html.as_bytes());
        r.done(ms(100), "a.test", "/");
        r.advance(ms(400));
        assert_eq!(
            drain(&mut r),
            ["a.test/x.js"],
            "the POST waits for the parser"
        );
        r.head("a.test", "/x.js", "application/javascript");
        r.data(ms(500), "a.test", "/x.js", b"x");
        r.done(ms(500), "a.test", "/x.js");
        r.advance(ms(510));
        assert_eq!(
            drain(&mut r),
            ["ocsp.test/"],
            "the script ran: the POST goes"
        );
        assert!(!r.idle(), "the parser waits for the POST's answer");
        assert_eq!(r.priority_of(&f("ocsp.test", "/")), Priority::SCRIPT);
        r.head("ocsp.test", "/", "application/ocsp-response");
        r.data(ms(700), "ocsp.test", "/", b"ok");
        r.done(ms(700), "ocsp.test", "/");
        r.advance(ms(710));
        assert!(r.idle());
    }

    #[test]
    fn unordered_costs_discover_as_the_pure_model() {
        let cost = BrowserCost {
            ordered: false,
            ..BrowserCost::NONE
        };
        let mut r = Renderer::new(cost, f("a.test", "/"));
        r.advance(Duration::ZERO);
        assert_eq!(drain(&mut r), ["a.test/"]);
        r.head("a.test", "/", "text/html");
        r.data(
            ms(5),
            "a.test",
            "/",
            br#"<link rel="stylesheet" href="//a.test/s.css"><script src="//a.test/x.js"></script>"#,
        );
        r.advance(ms(5));
        assert_eq!(drain(&mut r), ["a.test/s.css", "a.test/x.js"]);
        // The script runs as soon as it is complete, before the stylesheet.
        r.head("a.test", "/x.js", "application/javascript");
        r.data(
            ms(6),
            "a.test",
            "/x.js",
            br#"__spdylab_inject("//b.test/j.png","img");"#,
        );
        r.done(ms(6), "a.test", "/x.js");
        r.advance(ms(6));
        assert_eq!(drain(&mut r), ["b.test/j.png"]);
    }

    #[test]
    fn the_same_inputs_give_the_same_requests_at_the_same_times() {
        let run = || {
            let mut r = Renderer::new(NO_COMMIT, f("a.test", "/"));
            let mut log = Vec::new();
            let html =
                br#"<script src="//a.test/1.js"></script><script src="//a.test/2.js"></script>"#;
            let mut t = ms(0);
            for step in 0..40u64 {
                t += ms(7);
                r.advance(t);
                while let Some(x) = r.poll() {
                    log.push((t, x.path));
                }
                match step {
                    16 => {
                        r.head("a.test", "/", "text/html");
                        r.data(t, "a.test", "/", html);
                        r.done(t, "a.test", "/");
                    }
                    20 | 23 => {
                        let p = if step == 20 { "/2.js" } else { "/1.js" };
                        r.head("a.test", p, "application/javascript");
                        r.data(
                            t,
                            "a.test",
                            p,
                            format!("__spdylab_inject(\"//a.test{p}.png\",\"img\");").as_bytes(),
                        );
                        r.done(t, "a.test", p);
                    }
                    _ => {}
                }
            }
            log
        };
        let a = run();
        assert_eq!(a, run());
        // 2.js arrived first but runs after 1.js: its image comes second.
        let paths: Vec<&str> = a.iter().map(|(_, p)| p.as_str()).collect();
        assert_eq!(paths, ["/", "/1.js", "/2.js", "/1.js.png", "/2.js.png"]);
    }
}
