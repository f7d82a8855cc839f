//! The HTML page around every report's body (campaign, load test, bench):
//! sections with a table of contents, figures counted for the render check,
//! paragraphs, and the page's style and script. `report.html#why` shows the
//! Why sections alone (for a screenshot or a print of them).

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
body {{ font-family: sans-serif; max-width: 60rem; margin: 1.5rem auto; padding: 0 1rem; color: #222; }}
h1 {{ font-size: 1.5rem; }} h2 {{ font-size: 1.15rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }}
figure {{ margin: 1rem 0; }} figcaption {{ font-size: 0.85rem; color: #555; max-width: 40rem; }}
svg {{ max-width: 100%; height: auto; }}
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
    )
}
