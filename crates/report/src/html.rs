//! The HTML page around every report's body (campaign, load test, bench):
//! sections with a table of contents, figures counted for the render check,
//! paragraphs, and the page's style and script. `report.html#why` shows the
//! Why sections alone (for a screenshot or a print of them),
//! `report.html#filmstrip` the filmstrips alone.
//!
//! The page is up to 75rem wide and every plot is drawn at its width (at
//! most 1100 px), its text at 12 px or more (svg.rs). The script, once the
//! page has loaded, counts the plots drawn (`data-rendered`) and checks each
//! filmstrip view as laid out (`data-filmstrips`: views, rows, cells with a
//! frame, rows whose columns do not line up with the times; then
//! `data-frames-decoded`: distinct frames that decoded, of how many).

use crate::svg::esc;
use std::fmt::Write as _;
use std::path::Path;

/// A report's body as it is written, section by section.
#[derive(Default)]
pub(crate) struct Html {
    pub(crate) body: String,
    pub(crate) plots: usize,
    pub(crate) toc: Vec<(String, String)>,
}

impl Html {
    pub(crate) fn section(&mut self, id: &str, title: &str) {
        let _ = write!(self.body, r#"<h2 id="{id}">{}</h2>"#, esc(title));
        self.toc.push((id.to_string(), title.to_string()));
    }
    pub(crate) fn figure(&mut self, svg: String, caption: &str) {
        self.plots += 1;
        let _ = write!(
            self.body,
            "<figure>{svg}<figcaption>{}</figcaption></figure>",
            esc(caption)
        );
    }
    pub(crate) fn p(&mut self, text: &str) {
        let _ = write!(self.body, "<p>{}</p>", esc(text));
    }
}

/// The widest a report's body is, rem (16 px): 1 200 px, in a 1 400 px window
/// with room for its margins and a scrollbar.
pub(crate) const PAGE_REM: f64 = 75.0;
/// A view's grid (the page's style, `html::page`): its label column's
/// width and its frames' narrowest, rem (16 px), and the gap between
/// columns, px. `MAX_COLUMNS` of the narrowest fit in the page's body
/// (`PAGE_REM`): a view is never wider than a 1 400 px window (at 4 rem
/// its 16 columns were 1 216 px of a 1 200 px body, the last one cut off).
pub(crate) const LABEL_REM: f64 = 8.0;
pub(crate) const FRAME_MIN_REM: f64 = 2.75;
pub(crate) const GAP_PX: f64 = 4.0;

/// The HTML page around a report's body: style, contents, and the render check.
pub(crate) fn page(name: &str, description: &str, h: &Html, dir: &Path) -> String {
    let toc: String = h
        .toc
        .iter()
        .map(|(id, t)| format!(r##"<li><a href="#{id}">{}</a></li>"##, esc(t)))
        .collect();
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>spdylab — {name}</title>
<style>
body {{ font-family: sans-serif; max-width: {PAGE_REM}rem; margin: 1.5rem auto; padding: 0 1rem; color: #222; }}
h1 {{ font-size: 1.5rem; }} h2 {{ font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }}
h3 {{ font-size: 1rem; margin: 1.2rem 0 0.4rem; }}
figure {{ margin: 1rem 0; }} figcaption {{ font-size: 0.85rem; color: #555; max-width: 60rem; }}
svg {{ max-width: 100%; height: auto; }}
svg.plot {{ display: block; width: 100%; max-width: 1100px; }}
.fs {{ overflow-x: auto; margin: 0.5rem 0 1rem; }}
.fs-grid {{ display: grid; grid-template-columns: {label}rem repeat(var(--cols), minmax({frame}rem, 1fr)); gap: 6px {gap}px; align-items: start; }}
.fs-head, .fs-row {{ display: contents; }}
.fs-corner, .fs-time {{ font-size: 0.8rem; color: #444; align-self: end; }}
.fs-time {{ text-align: center; font-variant-numeric: tabular-nums; }}
.fs-label {{ font-size: 0.8rem; border-left: 5px solid; padding-left: 5px; line-height: 1.35; }}
.fs-label span {{ color: #666; }}
.fs-frame {{ aspect-ratio: 8 / 5; background: #fff center / contain no-repeat; border: 3px solid #d4d4d4; }}
.fs-frame.changed {{ border-color: #f2c200; }}
.fs-frame.fcp {{ border-color: #1b9e77; }} .fs-frame.lcp {{ border-color: #d95f02; }} .fs-frame.vc {{ border-color: #7570b3; }}
.fs-badge {{ display: inline-block; font-size: 0.75rem; font-weight: bold; color: #fff; padding: 0 4px; border-radius: 3px; margin: 2px 2px 0 0; }}
body:has(#filmstrip:target) > :not(section.filmstrip) {{ display: none; }}
table {{ border-collapse: collapse; font-size: 0.8rem; }} td, th {{ border: 1px solid #ddd; padding: 2px 6px; text-align: right; }}
td:first-child {{ text-align: left; }}
nav ul {{ columns: 2; font-size: 0.85rem; }}
body:has(#why:target) > :not(section.why) {{ display: none; }}
@media print {{ nav {{ display: none; }} figure, table {{ break-inside: avoid; }} body {{ max-width: none; }} }}
</style></head>
<body data-plots="{plots}">
<h1>spdylab: {name}</h1>
<p>{description}</p>
<nav><ul>{toc}</ul></nav>
{body}
<p><small>Written by spdylab {version} from {dir}.</small></p>
<script>
window.addEventListener("load", function () {{
  var plots = document.querySelectorAll("svg.plot"), drawn = 0;
  plots.forEach(function (s) {{
    var r = s.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && s.querySelector("path, rect, circle, line")) drawn++;
  }});
  document.body.setAttribute("data-rendered", String(drawn));
  var views = document.querySelectorAll(".fs"), rows = 0, framed = 0, off = 0, urls = {{}};
  views.forEach(function (v) {{
    var head = Array.prototype.map.call(v.querySelectorAll(".fs-time"), function (t) {{
      var r = t.getBoundingClientRect();
      return [t.getAttribute("data-ms"), r.left + r.width / 2];
    }});
    v.querySelectorAll(".fs-row").forEach(function (row) {{
      rows++;
      var cells = row.querySelectorAll(".fs-cell");
      var aligned = cells.length === head.length;
      cells.forEach(function (c, i) {{
        var r = c.getBoundingClientRect();
        if (!head[i] || c.getAttribute("data-ms") !== head[i][0] || Math.abs(r.left + r.width / 2 - head[i][1]) > 1) aligned = false;
        var f = c.querySelector(".fs-frame[data-frame]");
        if (!f) return;
        var bg = getComputedStyle(f).backgroundImage, fr = f.getBoundingClientRect();
        if (fr.width > 0 && fr.height > 0 && bg.indexOf("url(\"data:image/jpeg;base64,") === 0) {{ framed++; urls[bg.slice(5, -2)] = true; }}
      }});
      if (!aligned) off++;
    }});
  }});
  document.body.setAttribute("data-filmstrips", [views.length, rows, framed, off].join(" "));
  var all = Object.keys(urls), ok = 0;
  Promise.all(all.map(function (u) {{
    var img = new Image(); img.src = u;
    return img.decode().then(function () {{ if (img.naturalWidth > 0) ok++; }}, function () {{}});
  }})).then(function () {{ document.body.setAttribute("data-frames-decoded", ok + " " + all.length); }});
}});
</script>
</body></html>
"#,
        name = esc(name),
        description = esc(description),
        plots = h.plots,
        toc = toc,
        body = &h.body,
        version = env!("CARGO_PKG_VERSION"),
        dir = esc(&dir.display().to_string()),
        label = LABEL_REM,
        frame = FRAME_MIN_REM,
        gap = GAP_PX,
    )
}
