//! The few CSS properties the paint estimate lays a page out by, read from
//! its stylesheets: font size and line height, width, margins, padding,
//! `display: block` and a background colour, per rule of a tag (`p`) or a
//! tag in a container (`main img`, `header h1`). Hand-written on purpose: a
//! CSS engine is far beyond what the estimate needs, and a page whose style
//! it cannot read keeps the browser's defaults (docs/visual.md, "The
//! model's estimates").
//! Classes, ids, attribute selectors, media queries, `!important` and the
//! cascade's specificity beyond "container tag beats tag" are ignored.

use std::collections::HashMap;

/// The box properties of one rule, each as given (None: not set).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rule {
    pub font_size: Option<f64>,
    /// A length, px, or `normal` (Some(None): as the `font` shorthand
    /// without a line height sets it). A length is inherited as it is.
    pub line_height: Option<Option<f64>>,
    pub width: Option<f64>,
    /// Top, right, bottom, left; None for `auto`.
    pub margin: Option<[Option<f64>; 4]>,
    pub padding: Option<[f64; 4]>,
    pub block: Option<bool>,
    /// `background-color`, or the colour of a `background` shorthand
    /// (#rgb, #rrggbb, rgb(), a few names; None: none, or not a colour).
    pub background: Option<[u8; 3]>,
}

impl Rule {
    /// `self` with what `later` sets laid over it.
    fn merged(self, later: Rule) -> Rule {
        Rule {
            font_size: later.font_size.or(self.font_size),
            line_height: later.line_height.or(self.line_height),
            width: later.width.or(self.width),
            margin: later.margin.or(self.margin),
            padding: later.padding.or(self.padding),
            block: later.block.or(self.block),
            background: later.background.or(self.background),
        }
    }
}

/// The page's rules by selector: `tag` or `container tag`.
#[derive(Debug, Clone, Default)]
pub struct Style {
    rules: HashMap<String, Rule>,
}

impl Style {
    /// Adds a stylesheet's rules (later ones win, as in the cascade).
    pub fn add(&mut self, css: &str) {
        let css = strip_comments(css);
        for block in css.split('}') {
            let Some((selectors, body)) = block.split_once('{') else {
                continue;
            };
            // An at-rule's block (`@media … {`) leaves its first rule's
            // selector behind "{": the last selector part is the rule's.
            let selectors = selectors.rsplit('{').next().unwrap_or(selectors);
            let rule = parse_declarations(body);
            if rule == Rule::default() {
                continue;
            }
            for sel in selectors.split(',') {
                let words: Vec<&str> = sel.split_whitespace().collect();
                let key = match words.as_slice() {
                    [tag] if is_tag(tag) => tag.to_ascii_lowercase(),
                    [outer, tag] if is_tag(outer) && is_tag(tag) => {
                        format!(
                            "{} {}",
                            outer.to_ascii_lowercase(),
                            tag.to_ascii_lowercase()
                        )
                    }
                    _ => continue,
                };
                let old = self.rules.get(&key).copied().unwrap_or_default();
                self.rules.insert(key, old.merged(rule));
            }
        }
    }

    /// What applies to `tag` inside `container` (None: at the body's level):
    /// the tag's rule, then the container's rule for it over it.
    pub fn of(&self, container: Option<&str>, tag: &str) -> Rule {
        let own = self.rules.get(tag).copied().unwrap_or_default();
        match container.and_then(|c| self.rules.get(&format!("{c} {tag}"))) {
            Some(r) => own.merged(*r),
            None => own,
        }
    }
}

fn is_tag(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric())
}

fn strip_comments(css: &str) -> String {
    let mut out = String::with_capacity(css.len());
    let mut rest = css;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        match rest[i + 2..].find("*/") {
            Some(j) => rest = &rest[i + 2 + j + 2..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

/// A length in px: `12px`, `0`; None for anything else (em, %, auto).
fn px(v: &str) -> Option<f64> {
    let v = v.trim();
    if v == "0" {
        return Some(0.0);
    }
    v.strip_suffix("px")?.trim().parse().ok()
}

/// One to four lengths, as `margin` and `padding` take them; `auto` is None.
fn sides(v: &str) -> Option<[Option<f64>; 4]> {
    let parts: Vec<Option<f64>> = v
        .split_whitespace()
        .map(|p| {
            if p == "auto" {
                Some(None)
            } else {
                px(p).map(Some)
            }
        })
        .collect::<Option<Vec<_>>>()?;
    Some(match parts.as_slice() {
        [a] => [*a, *a, *a, *a],
        [a, b] => [*a, *b, *a, *b],
        [a, b, c] => [*a, *b, *c, *b],
        [a, b, c, d] => [*a, *b, *c, *d],
        _ => return None,
    })
}

/// An opaque colour: `#rgb`, `#rrggbb`, `rgb(r, g, b)` or one of the names
/// pages use for backgrounds; None for anything else (transparent, images,
/// gradients, variables).
fn colour(v: &str) -> Option<[u8; 3]> {
    let v = v.trim().to_ascii_lowercase();
    let hex = |s: &str| u8::from_str_radix(s, 16).ok();
    if let Some(h) = v.strip_prefix('#') {
        // ASCII only: a page's bytes must not split a character here.
        if !h.is_ascii() {
            return None;
        }
        return match h.len() {
            3 => {
                let d: Vec<u8> = h
                    .chars()
                    .map(|c| hex(&c.to_string()))
                    .collect::<Option<_>>()?;
                Some([d[0] * 17, d[1] * 17, d[2] * 17])
            }
            6 => Some([hex(&h[0..2])?, hex(&h[2..4])?, hex(&h[4..6])?]),
            _ => None,
        };
    }
    if let Some(args) = v.strip_prefix("rgb(").and_then(|a| a.strip_suffix(')')) {
        let c: Vec<u8> = args
            .split(',')
            .map(|x| x.trim().parse::<u8>().ok())
            .collect::<Option<_>>()?;
        return (c.len() == 3).then(|| [c[0], c[1], c[2]]);
    }
    match v.as_str() {
        "white" => Some([255; 3]),
        "black" => Some([0; 3]),
        "silver" => Some([192; 3]),
        "gray" | "grey" => Some([128; 3]),
        "whitesmoke" => Some([245; 3]),
        "gainsboro" => Some([220; 3]),
        "lightgray" | "lightgrey" => Some([211; 3]),
        _ => None,
    }
}

impl Style {
    /// The canvas's colour: the root's background, or the body's when the
    /// root has none (CSS 2.1 §14.2); None: the browser's white.
    pub fn page_background(&self) -> Option<[u8; 3]> {
        let of = |tag: &str| self.rules.get(tag).and_then(|r| r.background);
        of("html").or_else(|| of("body"))
    }

    /// The widths (content, padding and all) of the top-level blocks
    /// whose own background is `colour`, with a width given (`main` on a
    /// built-in page: 688 px of white over its grey canvas).
    pub fn boxes_of(&self, colour: impl Fn([u8; 3]) -> bool) -> Vec<f64> {
        self.rules
            .iter()
            .filter(|(key, _)| is_tag(key) && !matches!(key.as_str(), "html" | "body"))
            .filter_map(|(_, r)| {
                let p = r.padding.unwrap_or([0.0; 4]);
                (r.background.is_some_and(&colour)).then_some(r.width? + p[1] + p[3])
            })
            .collect()
    }
}

fn parse_declarations(body: &str) -> Rule {
    let mut r = Rule::default();
    for decl in body.split(';') {
        let Some((name, value)) = decl.split_once(':') else {
            continue;
        };
        let value = value.trim().trim_end_matches("!important").trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "font-size" => r.font_size = px(value).or(r.font_size),
            "line-height" => {
                r.line_height = match value {
                    "normal" => Some(None),
                    _ => px(value).map(Some).or(r.line_height),
                }
            }
            // `font: [style weight] SIZE[/LINE] family`.
            "font" => {
                for w in value.split_whitespace() {
                    let (size, line) = match w.split_once('/') {
                        Some((s, l)) => (s, Some(l)),
                        None => (w, None),
                    };
                    if let Some(s) = px(size) {
                        r.font_size = Some(s);
                        // The shorthand sets the line height: to `normal`
                        // when it names none.
                        r.line_height = Some(line.and_then(px));
                        break;
                    }
                }
            }
            "width" | "max-width" => r.width = px(value).or(r.width),
            "margin" => r.margin = sides(value).or(r.margin),
            "padding" => {
                r.padding = sides(value)
                    .map(|s| s.map(|v| v.unwrap_or(0.0)))
                    .or(r.padding)
            }
            "display" => r.block = Some(value == "block" || value == "flex" || value == "grid"),
            "background-color" => r.background = colour(value).or(r.background),
            // The shorthand's colour, wherever it stands among its layers.
            "background" => {
                r.background = value.split_whitespace().find_map(colour).or(r.background)
            }
            _ => {}
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSS: &str = "/* spdylab stylesheet */
html{background:#eceff3}body{margin:0;color:#1f2328;font:15px/22px Arial,Helvetica,sans-serif}
header{background:#6a1b9a;color:#fff;padding:18px 0 14px}
header h1{width:640px;margin:0 auto;font:bold 36px/44px Arial,Helvetica,sans-serif}
main{display:block;width:640px;margin:0 auto;padding:12px 24px 24px;background:#fff}
p{margin:0 0 12px}.lede{font-size:17px;color:#57606a}
h2{font-size:20px;line-height:28px;margin:20px 0 8px;color:#6a1b9a}
main img{display:block;margin:12px 0}iframe{border:0}
/* url(//a/b.png) */";

    #[test]
    fn backgrounds_are_read_and_the_canvas_is_the_root_s() {
        let mut s = Style::default();
        s.add(CSS);
        assert_eq!(s.page_background(), Some([0xec, 0xef, 0xf3]));
        assert_eq!(s.of(None, "header").background, Some([0x6a, 0x1b, 0x9a]));
        assert_eq!(s.boxes_of(|c| c == [255; 3]), vec![688.0]);
        let mut t = Style::default();
        t.add("body{background:#f2f2f2 url(x.png) no-repeat}p{background-color:rgb(1, 2, 3)}");
        assert_eq!(t.page_background(), Some([0xf2; 3]));
        assert_eq!(t.of(None, "p").background, Some([1, 2, 3]));
        let mut u = Style::default();
        u.add("body{background:url(x.png)}div{background:linear-gradient(red,blue)}");
        assert_eq!(u.page_background(), None);
        assert_eq!(colour("#FfF"), Some([255; 3]));
        // Six bytes, not six hex digits (and no character split).
        assert_eq!(colour("#aé123"), None);
        assert_eq!(colour("#éé"), None);
        assert_eq!(colour("transparent"), None);
    }

    #[test]
    fn the_built_in_pages_layout_is_read() {
        let mut s = Style::default();
        s.add(CSS);
        let body = s.of(None, "body");
        assert_eq!(
            (body.font_size, body.line_height),
            (Some(15.0), Some(Some(22.0)))
        );
        assert_eq!(body.margin, Some([Some(0.0); 4]));
        let h1 = s.of(Some("header"), "h1");
        assert_eq!(
            (h1.font_size, h1.line_height, h1.width),
            (Some(36.0), Some(Some(44.0)), Some(640.0))
        );
        assert_eq!(h1.margin, Some([Some(0.0), None, Some(0.0), None]));
        let main = s.of(None, "main");
        assert_eq!(main.padding, Some([12.0, 24.0, 24.0, 24.0]));
        assert_eq!(main.block, Some(true));
        let img = s.of(Some("main"), "img");
        assert_eq!(
            (img.block, img.margin),
            (
                Some(true),
                Some([Some(12.0), Some(0.0), Some(12.0), Some(0.0)])
            )
        );
        // Outside main, an image has no rule.
        assert_eq!(s.of(None, "img"), Rule::default());
        assert_eq!(s.of(None, "h2").line_height, Some(Some(28.0)));
    }

    #[test]
    fn the_font_shorthand_without_a_line_height_sets_it_normal() {
        let mut s = Style::default();
        s.add(
            "p{line-height:30px} p{font:bold 20px Arial} h2{line-height:normal} h3{font-size:9px}",
        );
        assert_eq!(s.of(None, "p").line_height, Some(None));
        assert_eq!(s.of(None, "h2").line_height, Some(None));
        assert_eq!(s.of(None, "h3").line_height, None);
    }

    #[test]
    fn what_it_cannot_read_it_leaves_unset() {
        let mut s = Style::default();
        s.add("@media (max-width: 600px) { p { font-size: 2em } } .x p{margin:3px} p{width:50%;");
        assert_eq!(s.of(None, "p"), Rule::default());
    }
}
