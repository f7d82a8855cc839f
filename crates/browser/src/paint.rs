//! Sans-I/O: what the user saw of a page load — first contentful paint (FCP)
//! and largest contentful paint (LCP) with its element — from DevTools events
//! that need no script in the page (TTFB, the document's first response
//! byte, is the recorder's, from its `Network.responseReceived` timing).
//!
//! Domains: besides `Network` and `Page` (PLT's), `Browser::run` turns on
//! - `Page.setLifecycleEventsEnabled`: the `Page.lifecycleEvent` named
//!   `firstContentfulPaint` of the page's main frame and loader (not about:blank's
//!   before it), stamped on Chromium's monotonic clock like the Network events;
//! - `PerformanceTimeline.enable` with `eventTypes: ["largest-contentful-paint"]`:
//!   one `timelineEventAdded` per LCP candidate (its time, size in CSS px², the
//!   element's backend node id, its id attribute and image URL), stamped on the
//!   page's performance timeline, in wall-clock seconds since the epoch;
//! - after onload, `Network.setBlockedURLs` of everything (Chromium's favicon
//!   fetch would cross the link while we listen for paints, and lengthen the
//!   probe's time on wire by a round trip), and `DOM.describeNode` of the
//!   chosen candidate (its tag and a few words of its text; no `DOM.enable`
//!   needed) — after PLT is taken, so they cost the page nothing.
//!
//! Clocks: everything is ms after the document's request, PLT's start. FCP's
//! timestamp is on the Network events' clock: subtracted as is. LCP's is on
//! the wall clock: mapped onto the monotonic one by the document request's
//! own pair (`timestamp`, `wallTime`); the renderer's wall clock and the
//! browser's sampled pair agree to about a millisecond (the paint times are
//! coarsened besides), so an LCP in the very frame of FCP can read a
//! millisecond before it: LCP is never taken as earlier than FCP, as the
//! standard defines it (a largest contentful paint is a contentful paint).
//!
//! As of onload: the LCP is the last candidate painted by onload (later ones
//! are a page that went on painting after the PLT), so it may not be the one
//! Chromium would settle on at the user's first input. A page whose
//! render-blocking styles and scripts arrive last (the built-in `twitter`)
//! can paint its first frame only after onload: its FCP is then later than
//! its PLT, and its LCP is as of that first frame. Paints are reported when
//! their frame has been presented, a few ms after it: `Browser::settle_paints`
//! listens after onload until the first contentful paint has been reported
//! and 100 ms more (at most 1 s after onload), then flushes the renderer's
//! messages with a round trip. None of it moves PLT, taken at onload, nor
//! time on wire (the tab is off the network by then): docs/visual.md.

use serde_json::Value;

/// How far (s) an LCP candidate's time, on the wall clock, may read after
/// the FCP of its own frame, on the monotonic one: about a millisecond
/// measured, and less than a frame (16.7 ms), so the next frame's candidate
/// is never taken for this one's.
pub(crate) const CLOCKS_DIFFER: f64 = 0.005;

/// One LCP candidate as reported.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Candidate {
    /// When painted (or, for an image whose paint time is hidden, loaded):
    /// wall-clock seconds since the epoch.
    pub wall: f64,
    /// Its area in the viewport, CSS px².
    pub size: f64,
    /// Its backend DOM node, to describe it.
    pub node: Option<i64>,
    /// Its id attribute, if any.
    pub id: Option<String>,
    /// An image's URL.
    pub url: Option<String>,
}

/// The paint events of the page's main frame.
#[derive(Debug, Default, Clone)]
pub(crate) struct Paints {
    /// firstContentfulPaint, Chromium's monotonic seconds.
    pub fcp: Option<f64>,
    /// LCP candidates in the order reported (each larger than the last).
    pub lcp: Vec<Candidate>,
    /// The chosen candidate's element, described (`set_lcp_element`).
    pub element: Option<String>,
}

impl Paints {
    /// A `Page.lifecycleEvent` of the page's frame `frame` and loader
    /// `loader` (None: any loader of that frame).
    pub fn lifecycle(&mut self, p: &Value, frame: &str, loader: Option<&str>) {
        if p["frameId"].as_str() != Some(frame)
            || loader.is_some_and(|l| p["loaderId"].as_str() != Some(l))
        {
            return;
        }
        if p["name"].as_str() == Some("firstContentfulPaint") && self.fcp.is_none() {
            self.fcp = p["timestamp"].as_f64();
        }
    }

    /// A `PerformanceTimeline.timelineEventAdded` of frame `frame`.
    pub fn timeline(&mut self, p: &Value, frame: &str) {
        let e = &p["event"];
        if e["type"].as_str() != Some("largest-contentful-paint")
            || e["frameId"].as_str() != Some(frame)
        {
            return;
        }
        let d = &e["lcpDetails"];
        let positive = |k: &str| d[k].as_f64().filter(|t| *t > 0.0);
        // `time` is the entry's startTime: renderTime, or loadTime where the
        // render time is hidden (a cross-origin image without Timing-Allow-Origin).
        let Some(wall) = e["time"]
            .as_f64()
            .filter(|t| *t > 0.0)
            .or_else(|| positive("renderTime"))
            .or_else(|| positive("loadTime"))
        else {
            return;
        };
        let text = |k: &str| d[k].as_str().filter(|s| !s.is_empty()).map(String::from);
        self.lcp.push(Candidate {
            wall,
            size: d["size"].as_f64().unwrap_or(0.0),
            node: d["nodeId"].as_i64(),
            id: text("elementId"),
            url: text("url"),
        });
    }

    /// The LCP as of `horizon` (monotonic s; None: all reported): the last
    /// candidate painted by then, its time mapped onto the monotonic clock
    /// by `wall_minus_mono`.
    pub fn as_of(&self, horizon: Option<f64>, wall_minus_mono: f64) -> Option<&Candidate> {
        self.lcp
            .iter()
            .rev()
            .find(|c| horizon.is_none_or(|l| c.wall - wall_minus_mono <= l))
    }
}

/// The short description of an LCP element, from `DOM.describeNode` (its
/// `node`, depth 1; Null when it could not be described) and the candidate:
/// its tag, `#id`, then an image's URL or the first words of its text —
/// `p "server load page…"`, `img#logo https://pbs.example/a.png`.
pub fn describe_element(node: &Value, id: Option<&str>, url: Option<&str>) -> String {
    let tag = node["localName"]
        .as_str()
        .filter(|t| !t.is_empty())
        .or_else(|| node["nodeName"].as_str().filter(|t| !t.is_empty()))
        .map(str::to_ascii_lowercase);
    let attr = |name: &str| -> Option<String> {
        let a = node["attributes"].as_array()?;
        a.chunks(2)
            .find(|kv| kv[0].as_str() == Some(name))
            .and_then(|kv| kv.get(1)?.as_str().map(String::from))
    };
    let id = id.map(String::from).or_else(|| attr("id"));
    let mut out = tag.unwrap_or_else(|| "?".into());
    if let Some(id) = id.filter(|i| !i.is_empty()) {
        out.push('#');
        out.push_str(&id);
    }
    if let Some(src) = url.map(String::from).or_else(|| attr("src")) {
        out.push(' ');
        out.push_str(&shorten(&src, 80));
        return out;
    }
    let text: String = node["children"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["nodeType"].as_i64() == Some(3))
        .filter_map(|c| c["nodeValue"].as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if !words.is_empty() {
        out.push_str(&format!(" \"{}\"", shorten(&words, 32)));
    }
    out
}

/// `s` cut to `max` characters, with an ellipsis if cut.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut cut: String = s.chars().take(max).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fcp_only_from_the_page_s_frame_and_loader() {
        let mut p = Paints::default();
        let ev = |frame: &str, loader: &str, name: &str, t: f64| json!({"frameId": frame, "loaderId": loader, "name": name, "timestamp": t});
        // about:blank's loader, another frame, another event: none is it.
        p.lifecycle(
            &ev("F", "blank", "firstContentfulPaint", 1.0),
            "F",
            Some("L"),
        );
        p.lifecycle(
            &ev("iframe", "L", "firstContentfulPaint", 2.0),
            "F",
            Some("L"),
        );
        p.lifecycle(&ev("F", "L", "firstPaint", 3.0), "F", Some("L"));
        assert_eq!(p.fcp, None);
        p.lifecycle(&ev("F", "L", "firstContentfulPaint", 4.0), "F", Some("L"));
        p.lifecycle(&ev("F", "L", "firstContentfulPaint", 5.0), "F", Some("L"));
        assert_eq!(p.fcp, Some(4.0));
    }

    fn lcp(frame: &str, time: f64, render: f64, load: f64, size: f64) -> Value {
        json!({"event": {"frameId": frame, "type": "largest-contentful-paint", "name": "",
            "time": time, "lcpDetails": {"renderTime": render, "loadTime": load,
            "size": size, "nodeId": 7, "elementId": "", "url": "https://a.test/i.png"}}})
    }

    #[test]
    fn lcp_candidates_as_of_onload() {
        let mut p = Paints::default();
        p.timeline(&lcp("F", 1000.10, 1000.10, 0.0, 500.0), "F");
        p.timeline(&lcp("other", 1000.20, 1000.20, 0.0, 9e9), "F");
        // A hidden render time: the load time stands for it.
        p.timeline(&lcp("F", 0.0, 0.0, 1000.30, 800.0), "F");
        p.timeline(&lcp("F", 1000.90, 1000.90, 0.0, 900.0), "F");
        assert_eq!(p.lcp.len(), 3);
        assert_eq!(p.lcp[1].wall, 1000.30);
        assert_eq!(p.lcp[0].id, None);
        assert_eq!(p.lcp[0].url.as_deref(), Some("https://a.test/i.png"));
        // Monotonic = wall - 990; onload at 10.5: the candidate at 10.3.
        let c = p.as_of(Some(10.5), 990.0).unwrap();
        assert_eq!((c.size, c.node), (800.0, Some(7)));
        assert_eq!(p.as_of(Some(10.0), 990.0), None);
        assert_eq!(p.as_of(None, 990.0).unwrap().size, 900.0);
    }

    #[test]
    fn elements_described_by_tag_id_src_or_text() {
        let p = json!({"nodeName": "P", "localName": "p", "attributes": [],
            "children": [{"nodeType": 3, "nodeValue": "  server load\n page trip wire header load server load client"},
                         {"nodeType": 1, "nodeName": "B"}]});
        assert_eq!(
            describe_element(&p, None, None),
            "p \"server load page trip wire heade…\""
        );
        let img = json!({"nodeName": "IMG", "localName": "img",
            "attributes": ["src", "/a.png", "id", "logo", "alt", ""]});
        assert_eq!(
            describe_element(&img, None, Some("https://a.test/a.png")),
            "img#logo https://a.test/a.png"
        );
        assert_eq!(
            describe_element(&img, Some("hero"), None),
            "img#hero /a.png"
        );
        // Not described (the node went away): what the event said.
        assert_eq!(
            describe_element(&Value::Null, None, Some("https://a.test/b.png")),
            "? https://a.test/b.png"
        );
        assert_eq!(describe_element(&Value::Null, None, None), "?");
    }
}
