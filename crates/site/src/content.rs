//! Deterministic content in real formats, exactly `size` bytes long: HTML whose
//! tags reference its children, CSS with `url()`, JavaScript that injects its
//! children when it runs, PNG images that decode, and WOFF/SWF headers.
//!
//! The pages paint like pages (issue 35; docs/visual.md, "What the built-in
//! pages look like"). What a body references, in which order and by which
//! tag, and every body's length, are the same as before they did: only what
//! fills the bytes around the references changed
//! (tests/content_unchanged.rs).
//!
//! **Images.** A PNG of `size` bytes is [`png_size`]`(size)` pixels:
//! - below 4 096 bytes, when a 32×32 image fits: an icon of 32×32, 16
//!   colours (4-bit palette) — the icons page's;
//! - from 4 096 bytes: about four pixels a byte (2-bit palette, stored
//!   deflate), the density of a JPEG of 2014 — 5 kB is 158×119, 40 kB
//!   486×324 — in 16:9, 3:2 or 4:3 as `size` picks;
//! - the smallest (under 200 bytes, or where nothing else fits): 8-bit grey.
//!
//! Each is a scene drawn from the seed (a gradient sky, a disc, hills, blocks,
//! grain) in a palette of its own, dithered; padded to `size` by a private
//! ancillary chunk (`spAd`, less than a row plus 12 bytes) that decoders skip.
//!
//! **The image contract.** Every `<img>` of a PNG in a generated HTML body
//! carries `width` and `height` attributes equal to that PNG's pixel size
//! (`png_size` of its byte size, what its IHDR says), always in the form
//! `<img src="URL" width="W" height="H" alt="">`, and the page's style
//! shows each at that size (no `max-width`), so a model can read the
//! attributes for the painted area. Other images (Flash, fonts, anything
//! not a PNG) and iframes carry none.
//!
//! **HTML.** Where the size allows it (otherwise the bare markup of before:
//! head tags, body tags, filler paragraphs), a page is, in document order:
//! its head children's tags; for a page with no stylesheet child an inline
//! `<style>` with the layout below (otherwise its stylesheets carry it);
//! `<header><h1>` a headline of about 60 characters; `<main>` a one-line
//! lede `<p class="lede">` and, right after it, the body children up to and
//! including the first PNG — the page's hero, in the first viewport; then the
//! other body children with text spread evenly between them (`<h2>` headings
//! and `<p>` paragraphs of 60–260 characters: one to four lines); `</main>`,
//! the stylesheets' `<div class="sHASH">` of `<i>` (below) and the end.
//!
//! **Layout** (the base style; the same rules in every stylesheet, so the
//! first to arrive lays the page out): body margin 0, text 15 px Arial on 22
//! px lines; the header a coloured band, 18 px padding above, 14 below, its
//! `h1` bold 36 px on 44 px lines; `header h1` and `main` 640 px wide,
//! centred (`main` padded 12 px 24 px 24 px, white on a grey page);
//! paragraphs 12 px apart, `h2` 20 px on 28 px, 20 px above and 8 below;
//! every `<img>` in `main` a block of its attribute size with 12 px above
//! and below; iframes borderless (their default 300×150).

use crate::model::{Kind, Resource, Reveal};
pub use crate::recorded::Upload;
use crate::recorded::REQUEST_FILLER;

/// The upload of child `k`, if it is one (`uploads` is aligned with the
/// children; a shorter slice, or none, means GETs).
fn upload_of(uploads: &[Option<Upload>], k: usize) -> Option<&Upload> {
    uploads.get(k).and_then(Option::as_ref)
}

/// The statement that sends `c` as `up`: a synchronous XMLHttpRequest (a
/// failure, such as a refused cross-origin answer, is the page's business).
fn send_call(c: &Resource, up: &Upload) -> String {
    let body = if up.body_len == 0 {
        "null".to_string()
    } else {
        format!(
            "Array({}).join(\"{}\")",
            up.body_len + 1,
            REQUEST_FILLER as char
        )
    };
    // A JS string of the URL (a path may hold a backslash, or `</script>`).
    let url = reference(c).replace('\\', "\\\\").replace('<', "\\x3c");
    format!(
        "(function(x){{x.open(\"{}\",\"{url}\",false);try{{x.send({body})}}catch(e){{}}}})(new XMLHttpRequest());\n",
        up.method
    )
}

/// The lab's own synchronous request (`send_call`'s statement) in an inline
/// script's text: its URL as written (`//host/path`), if the script is one.
/// A page's parser and main thread wait for its response (a synchronous
/// XMLHttpRequest blocks both), which the model's paint estimate reads from
/// the HTML as it reads a `<script src>` (`client::paint`).
pub fn sync_request_url(script: &str) -> Option<String> {
    let call = script.trim().strip_prefix("(function(x){x.open(\"")?;
    let (_method, rest) = call.split_once("\",\"")?;
    let end = rest.find("\",false);")?;
    // Undo `send_call`'s escapes, left to right: `\\` and `\x3c`.
    let (mut url, mut chars) = (String::new(), rest[..end].chars());
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some('\\')) => {
                chars.next();
                url.push('\\');
            }
            ('\\', Some('x')) if chars.as_str().starts_with("x3c") => {
                chars.nth(2);
                url.push('<');
            }
            _ => url.push(c),
        }
    }
    Some(url)
}

/// Deterministic filler text and pixels, from the workspace's one generator.
struct Filler(link::rng::Rng);

impl Filler {
    fn new(seed: u64) -> Filler {
        Filler(link::rng::Rng::new(seed))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `lo..lo + span`.
    fn range(&mut self, lo: usize, span: usize) -> usize {
        lo + (self.next() % span.max(1) as u64) as usize
    }

    /// `n` bytes of lower-case words separated by spaces.
    fn words(&mut self, n: usize) -> String {
        const WORDS: [&str; 16] = [
            "spdy", "stream", "frame", "page", "load", "time", "wire", "link", "queue", "window",
            "server", "client", "header", "byte", "round", "trip",
        ];
        let mut s = String::with_capacity(n + 8);
        while s.len() < n {
            s.push_str(WORDS[(self.next() % 16) as usize]);
            s.push(' ');
        }
        s.truncate(n);
        s
    }

    /// `n` bytes of sentences: capitalised, 5–14 words, ending in a full stop.
    fn sentences(&mut self, n: usize) -> String {
        const WORDS: [&str; 48] = [
            "the",
            "page",
            "loads",
            "over",
            "a",
            "slow",
            "link",
            "and",
            "every",
            "stream",
            "shares",
            "one",
            "connection",
            "while",
            "images",
            "arrive",
            "in",
            "order",
            "of",
            "their",
            "discovery",
            "server",
            "pushes",
            "frames",
            "as",
            "window",
            "opens",
            "round",
            "trip",
            "time",
            "decides",
            "how",
            "soon",
            "first",
            "paint",
            "comes",
            "users",
            "see",
            "text",
            "before",
            "pictures",
            "browser",
            "waits",
            "for",
            "styles",
            "script",
            "runs",
            "late",
        ];
        let mut s = String::with_capacity(n + 16);
        let mut left_in_sentence = 0;
        while s.len() < n {
            if left_in_sentence == 0 {
                if !s.is_empty() {
                    s.pop();
                    s.push_str(". ");
                }
                left_in_sentence = self.range(5, 10);
                let w = WORDS[(self.next() % 48) as usize];
                s.push(w.as_bytes()[0].to_ascii_uppercase() as char);
                s.push_str(&w[1..]);
            } else {
                s.push_str(WORDS[(self.next() % 48) as usize]);
            }
            s.push(' ');
            left_in_sentence -= 1;
        }
        s.truncate(n);
        // End on a whole word and a full stop: the cut word becomes one of
        // its length, its last byte the stop.
        // (A word is at most 10 bytes, 11 with its sentence's stop.)
        const BY_LENGTH: [&str; 12] = [
            "",
            "a",
            "in",
            "the",
            "page",
            "loads",
            "stream",
            "browser",
            "pictures",
            "discovery",
            "connection",
            "connections",
        ];
        if n > 1 {
            let start = s[..n - 1].rfind(' ').map_or(0, |i| i + 1);
            let tail = n - 1 - start;
            s.truncate(start);
            if tail == 0 {
                s.pop();
                s.push_str(if s.ends_with('.') { "  " } else { ". " });
            } else {
                s.push_str(BY_LENGTH[tail]);
                s.push('.');
            }
        }
        s
    }

    /// Exactly `n` bytes of page text: `<p>` paragraphs of 60–260
    /// characters, now and then an `<h2>`; spaces when too short for a `<p>`.
    fn text(&mut self, n: usize) -> String {
        let mut out = String::with_capacity(n);
        let mut left = n;
        let mut heading = false;
        loop {
            if left < 9 {
                out.push_str(&" ".repeat(left));
                return out;
            }
            // A heading now and then, never two in a row.
            heading = !heading && self.next().is_multiple_of(6) && left >= 10 + 40 + 80;
            if heading {
                let k = self.range(16, 24);
                let mut heading = self.sentences(k);
                if heading.ends_with('.') {
                    heading.pop();
                    heading.push(' ');
                }
                out.push_str("<h2>");
                out.push_str(&heading);
                out.push_str("</h2>\n");
                left -= k + 10;
                continue;
            }
            let mut k = self.range(60, 140);
            if left < k + 8 + 68 {
                k = left - 8;
            }
            out.push_str("<p>");
            out.push_str(&self.sentences(k));
            out.push_str("</p>\n");
            left -= k + 8;
        }
    }
}

/// The URL a parent uses to reference `r`: scheme-relative, so it works over http and https.
pub fn reference(r: &Resource) -> String {
    format!("//{}{}", r.host, r.path)
}

/// Splits a reference — `//host/path`, or `http(s)://host[:port]/path` — into
/// its lower-cased host and its path: the inverse of `reference`.
pub fn split_url(url: &str) -> Option<(String, String)> {
    let rest = url
        .strip_prefix("//")
        .or_else(|| url.strip_prefix("http://"))
        .or_else(|| url.strip_prefix("https://"))?;
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let host = host.split(':').next()?.to_ascii_lowercase();
    (!host.is_empty()).then(|| (host, path.to_string()))
}

/// The smallest size `r` can have, given its children (the tags must fit) and
/// how many children each of those has (`grandchildren`, aligned with `children`).
/// `uploads`: which children are sent as uploads (`Upload`), aligned with them.
pub fn min_size(
    r: &Resource,
    children: &[&Resource],
    grandchildren: &[usize],
    uploads: &[Option<Upload>],
) -> usize {
    match r.kind {
        Kind::Html => html(r, children, grandchildren, uploads, 0, 0).len(),
        Kind::Css => css(r, children, 0, 0).len(),
        Kind::Js => js(children, uploads, 0, 0).len(),
        Kind::Png => png_min_size(),
        Kind::Font => 44,
        Kind::Flash => 21,
        Kind::Other => 0,
    }
}

/// The body of `r`, exactly `r.size` bytes. `children` are the resources it
/// reveals; `grandchildren` how many each of them reveals in turn; `uploads`
/// which of them it sends as uploads (aligned with them; empty: none).
pub fn generate(
    r: &Resource,
    children: &[&Resource],
    grandchildren: &[usize],
    uploads: &[Option<Upload>],
    seed: u64,
) -> Vec<u8> {
    let seed = seed ^ fnv(r.host.as_bytes()) ^ fnv(r.path.as_bytes()).rotate_left(17);
    let out = match r.kind {
        Kind::Html => html(r, children, grandchildren, uploads, r.size, seed).into_bytes(),
        Kind::Css => css(r, children, r.size, seed).into_bytes(),
        Kind::Js => js(children, uploads, r.size, seed).into_bytes(),
        Kind::Png => png(r.size, seed),
        Kind::Font => woff(r.size),
        Kind::Flash => swf(r.size),
        Kind::Other => Filler::new(seed).words(r.size).into_bytes(),
    };
    debug_assert_eq!(out.len(), r.size, "{}{}", r.host, r.path);
    out
}

fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &c| {
        (h ^ c as u64).wrapping_mul(0x100_0000_01b3)
    })
}

/// Joins `parts`, spreading filler evenly over the gaps between them (after
/// the only part if there is one) so that the result is exactly `size` bytes when
/// `size` is at least the parts' length. `wrap(filler, n)` makes exactly n bytes.
fn pad_between(
    parts: &[String],
    size: usize,
    seed: u64,
    wrap: impl Fn(&mut Filler, usize) -> String,
) -> String {
    let fixed: usize = parts.iter().map(String::len).sum();
    let mut filler = Filler::new(seed);
    let mut left = size.saturating_sub(fixed);
    let gaps = parts.len().saturating_sub(1).max(1);
    let mut out = String::with_capacity(size.max(fixed));
    for (i, part) in parts.iter().enumerate() {
        out.push_str(part);
        if i < gaps {
            let n = left / (gaps - i);
            out.push_str(&wrap(&mut filler, n));
            left -= n;
        }
    }
    out
}

/// The class a stylesheet styles: its rules select `.sHASH>i:nth-child(k)`, and
/// the page holds a `<div class="sHASH">` with one `<i>` per url() of the
/// sheet, so that a real browser fetches every background image and font (it
/// fetches only what styles an element in the page).
fn style_class(css: &Resource) -> String {
    format!("s{:08x}", fnv(reference(css).as_bytes()) as u32)
}

/// The page's layout (module docs), in the colour `theme` picks.
fn base_css(theme: u64) -> String {
    const COLOURS: [&str; 8] = [
        "#1d4e89", "#b3261e", "#2e7d32", "#6a1b9a", "#00796b", "#c75b12", "#37474f", "#0b72b9",
    ];
    let c = COLOURS[(theme % 8) as usize];
    format!(
        "html{{background:#eceff3}}body{{margin:0;color:#1f2328;font:15px/22px Arial,Helvetica,sans-serif}}\n\
header{{background:{c};color:#fff;padding:18px 0 14px}}\n\
header h1{{width:640px;margin:0 auto;font:bold 36px/44px Arial,Helvetica,sans-serif}}\n\
main{{display:block;width:640px;margin:0 auto;padding:12px 24px 24px;background:#fff}}\n\
p{{margin:0 0 12px}}.lede{{font-size:17px;color:#57606a}}\n\
h2{{font-size:20px;line-height:28px;margin:20px 0 8px;color:{c}}}\n\
main img{{display:block;margin:12px 0}}iframe{{border:0}}\n"
    )
}

/// The tag by which an HTML page references `c`: an inline script that
/// sends it if it is an upload.
fn html_tag(c: &Resource, upload: Option<&Upload>) -> String {
    if let Some(up) = upload {
        return format!("<script>{}</script>\n", send_call(c, up).trim_end());
    }
    match c.kind {
        Kind::Css => format!("<link rel=\"stylesheet\" href=\"{}\">\n", reference(c)),
        Kind::Js => format!("<script src=\"{}\"></script>\n", reference(c)),
        // Flash as an image: today's browsers fetch nothing for <embed> or
        // <object> without the plugin; an <img> makes them fetch the bytes.
        Kind::Flash => format!("<img src=\"{}\" alt=\"flash\">\n", reference(c)),
        Kind::Html => format!("<iframe src=\"{}\"></iframe>\n", reference(c)),
        Kind::Png => {
            let (w, h) = png_size(c.size);
            format!(
                "<img src=\"{}\" width=\"{w}\" height=\"{h}\" alt=\"\">\n",
                reference(c)
            )
        }
        _ => format!("<img src=\"{}\" alt=\"\">\n", reference(c)),
    }
}

fn html(
    r: &Resource,
    children: &[&Resource],
    grandchildren: &[usize],
    uploads: &[Option<Upload>],
    size: usize,
    seed: u64,
) -> String {
    let rich = rich_html(r, children, grandchildren, uploads, seed);
    let fixed: usize = rich.iter().map(String::len).sum();
    if size > 0 && fixed <= size {
        return pad_between(&rich, size, seed, |f, n| f.text(n));
    }
    // The bare page: the tags, and filler paragraphs between them.
    let mut head = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}{}</title>\n",
        r.host, r.path
    );
    for (k, c) in children.iter().enumerate() {
        if c.reveal == Reveal::Head {
            head += &html_tag(c, upload_of(uploads, k));
        }
    }
    head += "</head><body>\n";
    let mut parts = vec![head];
    for (k, c) in children.iter().enumerate() {
        if c.reveal == Reveal::Body {
            parts.push(html_tag(c, upload_of(uploads, k)));
        }
    }
    parts.extend(style_divs(children, grandchildren));
    parts.push("</body></html>\n".into());
    // Filler paragraphs: "<p>" + words + "</p>\n" (8 bytes of markup), or spaces if shorter.
    pad_between(&parts, size, seed, |f, n| {
        if n >= 9 {
            format!("<p>{}</p>\n", f.words(n - 8))
        } else {
            " ".repeat(n)
        }
    })
}

/// One `<div class="sHASH">` per stylesheet child that has children of its own.
fn style_divs(children: &[&Resource], grandchildren: &[usize]) -> Vec<String> {
    children
        .iter()
        .zip(grandchildren)
        .filter(|(c, n)| c.kind == Kind::Css && **n > 0)
        .map(|(c, n)| {
            format!(
                "<div class=\"{}\">{}</div>\n",
                style_class(c),
                "<i>x</i>".repeat(*n)
            )
        })
        .collect()
}

/// The parts of a page laid out as the module docs say; text goes between them.
fn rich_html(
    r: &Resource,
    children: &[&Resource],
    grandchildren: &[usize],
    uploads: &[Option<Upload>],
    seed: u64,
) -> Vec<String> {
    let mut words = Filler::new(seed ^ 0x4845_4144);
    let mut head = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}{}</title>\n\
<meta name=\"viewport\" content=\"width=device-width\">\n",
        r.host, r.path
    );
    if !children.iter().any(|c| c.kind == Kind::Css) {
        head += &format!("<style>\n{}</style>\n", base_css(fnv(r.host.as_bytes())));
    }
    for (k, c) in children.iter().enumerate() {
        if c.reveal == Reveal::Head {
            head += &html_tag(c, upload_of(uploads, k));
        }
    }
    let n = words.range(52, 12);
    let headline = words.sentences(n);
    let n = words.range(64, 16);
    let lede = words.sentences(n);
    head += &format!(
        "</head><body>\n<header><h1>{}</h1></header>\n<main>\n<p class=\"lede\">{lede}</p>\n",
        headline.trim_end_matches('.')
    );
    let body: Vec<(&Resource, Option<&Upload>)> = children
        .iter()
        .enumerate()
        .filter(|(_, c)| c.reveal == Reveal::Body)
        .map(|(k, c)| (*c, upload_of(uploads, k)))
        .collect();
    // The first screen: everything up to the hero, the first PNG, together.
    let hero = body
        .iter()
        .position(|(c, up)| c.kind == Kind::Png && up.is_none())
        .map_or(0, |i| i + 1);
    for (c, up) in &body[..hero] {
        head += &html_tag(c, *up);
    }
    let mut parts = vec![head];
    parts.extend(body[hero..].iter().map(|(c, up)| html_tag(c, *up)));
    let mut end = "</main>\n".to_string();
    for div in style_divs(children, grandchildren) {
        end += &div;
    }
    end += "</body></html>\n";
    parts.push(end);
    parts
}

fn css(r: &Resource, children: &[&Resource], size: usize, seed: u64) -> String {
    let class = style_class(r);
    let rules = |sized: bool| -> Vec<String> {
        let mut parts = vec!["/* spdylab stylesheet */\n".to_string()];
        if sized {
            parts[0] += &base_css(seed);
        }
        for (i, c) in children.iter().enumerate() {
            let rule = match c.kind {
                Kind::Font => format!(
                    "@font-face{{font-family:{class}f{i};src:url({}) format(\"woff\")}}.{class}>i:nth-child({}){{font-family:{class}f{i}}}\n",
                    reference(c),
                    i + 1
                ),
                // A sprite shown at its size.
                Kind::Png if sized => {
                    let (w, h) = png_size(c.size);
                    format!(
                        ".{class}>i:nth-child({}){{background-image:url({});display:inline-block;width:{w}px;height:{h}px}}\n",
                        i + 1,
                        reference(c)
                    )
                }
                _ => format!(
                    ".{class}>i:nth-child({}){{background-image:url({})}}\n",
                    i + 1,
                    reference(c)
                ),
            };
            parts.push(rule);
        }
        parts
    };
    let mut parts = rules(true);
    if size == 0 || parts.iter().map(String::len).sum::<usize>() > size {
        parts = rules(false);
    }
    pad_between(&parts, size, seed, |f, n| {
        if n >= 5 {
            format!("/*{}*/\n", f.words(n - 5))
        } else {
            " ".repeat(n)
        }
    })
}

/// The `<meta name>` by which a page declares that it is done only when it
/// sets a performance mark, named in its `content` (`performance.mark(NAME)`):
/// its load event comes before its scripts have fetched everything (the
/// prioritization test's chain of images, `crate::priorities`). Chromium's
/// probe then waits for the mark, not for onload alone (crates/browser).
pub const DONE_MARK_META: &str = "spdylab-done-mark";

/// What a script runs to inject one child: the browser model looks for these calls.
pub const INJECT_CALL: &str = "__spdylab_inject(";

fn js(children: &[&Resource], uploads: &[Option<Upload>], size: usize, seed: u64) -> String {
    let mut parts = vec![
        "/* spdylab script */\nfunction __spdylab_inject(u,t){var e=document.createElement(t);e.src=u;(document.body||document.head).appendChild(e);}\n"
            .to_string(),
    ];
    for (k, c) in children.iter().enumerate() {
        if let Some(up) = upload_of(uploads, k) {
            parts.push(send_call(c, up));
            continue;
        }
        let tag = if c.kind == Kind::Js { "script" } else { "img" };
        parts.push(format!("{INJECT_CALL}\"{}\",\"{tag}\");\n", reference(c)));
    }
    pad_between(&parts, size, seed, |f, n| {
        if n >= 5 {
            format!("/*{}*/\n", f.words(n - 5))
        } else {
            " ".repeat(n)
        }
    })
}

/// CRC-32 (PNG's), a byte at a time from a table.
fn crc32(parts: &[&[u8]]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut t = [0u32; 256];
        let mut n = 0;
        while n < 256 {
            let mut c = n as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0xedb8_8320
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[n] = c;
            n += 1;
        }
        t
    };
    let mut crc = 0xffff_ffffu32;
    for part in parts {
        for &b in *part {
            crc = TABLE[((crc ^ b as u32) & 0xff) as usize] ^ (crc >> 8);
        }
    }
    !crc
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    out.extend_from_slice(&crc32(&[kind, data]).to_be_bytes());
}

/// The number of stored deflate blocks for `raw` bytes.
fn stored_blocks(raw: usize) -> usize {
    raw.div_ceil(65_535).max(1)
}

/// zlib stream with stored (uncompressed) deflate blocks.
fn zlib_stored(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + 6 + 5 * stored_blocks(raw.len()));
    out.extend_from_slice(&[0x78, 0x01]);
    let blocks: Vec<&[u8]> = if raw.is_empty() {
        vec![&[]]
    } else {
        raw.chunks(65_535).collect()
    };
    for (i, b) in blocks.iter().enumerate() {
        out.push(u8::from(i + 1 == blocks.len()));
        out.extend_from_slice(&(b.len() as u16).to_le_bytes());
        out.extend_from_slice(&(!(b.len() as u16)).to_le_bytes());
        out.extend_from_slice(b);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for block in raw.chunks(5552) {
        for &x in block {
            a += x as u32;
            b += a;
        }
        a %= 65_521;
        b %= 65_521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

/// How a PNG's pixels are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// 8-bit greyscale.
    Grey,
    /// A palette of 2^bits colours, `bits` per pixel.
    Palette(u8),
}

impl Format {
    fn bits(self) -> u32 {
        match self {
            Format::Grey => 8,
            Format::Palette(b) => b as u32,
        }
    }

    /// The PLTE chunk's length, header and CRC included.
    fn palette_len(self) -> usize {
        match self {
            Format::Grey => 0,
            Format::Palette(b) => 12 + 3 * (1 << b),
        }
    }
}

/// The length of an unpadded PNG (IEND included) of `w`×`h` pixels.
fn png_len(w: u32, h: u32, f: Format) -> usize {
    let row = 1 + (w as usize * f.bits() as usize).div_ceil(8);
    let raw = row * h as usize;
    8 + 25 + f.palette_len() + 12 + 2 + 5 * stored_blocks(raw) + raw + 4 + PNG_IEND
}

const PNG_IEND: usize = 12;
const PNG_PAD_CHUNK: usize = 12;

fn png_min_size() -> usize {
    png_len(1, 1, Format::Grey)
}

/// Whether an image of `len` bytes can be padded to exactly `size`.
fn pads_to(len: usize, size: usize) -> bool {
    len == size || len + PNG_PAD_CHUNK <= size
}

/// The shape and format of the PNG of `size` bytes (module docs).
fn png_plan(size: usize) -> (u32, u32, Format) {
    if size < 4096 && pads_to(png_len(32, 32, Format::Palette(4)), size) {
        return (32, 32, Format::Palette(4));
    }
    if size >= 4096 {
        // Width : height, as the size picks.
        let (aw, ah) = [(16, 9), (3, 2), (4, 3)][size % 3];
        let f = Format::Palette(2);
        let pixels = (size as f64 - 120.0) * 8.0 / 2.0;
        let mut h = (pixels * ah as f64 / aw as f64).sqrt() as u32 + 1;
        while h > 1 {
            let w = (h * aw / ah).max(1);
            if pads_to(png_len(w, h, f), size) {
                return (w, h, f);
            }
            h -= 1;
        }
    }
    if size >= 200 {
        let f = Format::Palette(2);
        let mut side = ((size as f64 * 2.0).sqrt() as u32).max(1);
        while side > 8 && !pads_to(png_len(side, side, f), size) {
            side -= 1;
        }
        if side > 8 {
            return (side, side, f);
        }
    }
    // Grey squares, as large as fit; a 1×1 made wider by the bytes left
    // when they are fewer than a padding chunk takes.
    let mut side = ((size as f64).sqrt() as u32).max(1);
    while side > 1 && !pads_to(png_len(side, side, Format::Grey), size) {
        side -= 1;
    }
    if side == 1 {
        let pad = size.saturating_sub(png_len(1, 1, Format::Grey));
        if (1..PNG_PAD_CHUNK).contains(&pad) {
            return (1 + pad as u32, 1, Format::Grey);
        }
    }
    (side, side, Format::Grey)
}

/// The pixel size (width, height) of the PNG `generate` makes of `size` bytes:
/// what an HTML page's `<img width height>` says of it (the module docs'
/// image contract).
pub fn png_size(size: usize) -> (u32, u32) {
    let (w, h, _) = png_plan(size);
    (w, h)
}

/// A palette of `n` colours: a ramp from a dark colour to a light one of
/// hues drawn from the seed.
fn palette(n: usize, f: &mut Filler) -> Vec<u8> {
    let hue = |f: &mut Filler, lo: u64, span: u64| -> [i32; 3] {
        let mut c = [0i32; 3];
        for v in &mut c {
            *v = (lo + f.next() % span) as i32;
        }
        c
    };
    let dark = hue(f, 10, 90);
    let light = hue(f, 150, 106);
    let mut out = Vec::with_capacity(3 * n);
    for i in 0..n as i32 {
        let t = (n as i32 - 1).max(1);
        for k in 0..3 {
            out.push((dark[k] + (light[k] - dark[k]) * i / t) as u8);
        }
    }
    out
}

/// 4×4 ordered dithering thresholds, 0..16.
const BAYER: [[i32; 4]; 4] = [[0, 8, 2, 10], [12, 4, 14, 6], [3, 11, 1, 9], [15, 7, 13, 5]];

/// The scene of an image: each pixel's brightness, 0..=255, row by row.
struct Scene {
    w: i32,
    h: i32,
    sky: (i32, i32),
    sun: (i32, i32, i32, i32),
    hills: Vec<i32>,
    hill_level: i32,
    blocks: Vec<(i32, i32, i32, i32, i32)>,
    grain: u64,
}

impl Scene {
    fn new(w: u32, h: u32, f: &mut Filler) -> Scene {
        let (w, h) = (w as i32, h as i32);
        let mut r = |n: i32| (f.next() % n.max(1) as u64) as i32;
        let sky = (40 + r(90), 150 + r(100));
        let sun = (
            w / 5 + r(w * 3 / 5 + 1),
            h / 8 + r(h / 3 + 1),
            h / 10 + r(h / 6 + 1),
            200 + r(56),
        );
        let base = h / 2 + r(h / 4 + 1);
        let (a1, a2) = (h / 12 + r(h / 10 + 1), h / 20 + r(h / 16 + 1));
        let (p1, p2) = (r(1000) as f64, r(1000) as f64);
        let (k1, k2) = (1.0 + r(3) as f64, 3.0 + r(5) as f64);
        let hills = (0..w)
            .map(|x| {
                let t = x as f64 / w.max(1) as f64 * std::f64::consts::TAU;
                base - (a1 as f64 * (k1 * t + p1).sin() + a2 as f64 * (k2 * t + p2).sin()) as i32
            })
            .collect();
        let blocks = (0..r(4))
            .map(|_| {
                let bw = w / 8 + r(w / 4 + 1);
                let bh = h / 8 + r(h / 4 + 1);
                (r(w - bw + 1), r(h - bh + 1), bw, bh, 30 + r(200))
            })
            .collect();
        let grain = 8 + r(40) as u64;
        Scene {
            w,
            h,
            sky,
            sun,
            hills,
            hill_level: 20 + r(80),
            blocks,
            grain,
        }
    }

    /// The palette indices of row `y` into `out`; `scale[v]` is brightness
    /// `v` in sixteenths of a palette step.
    fn row(&self, y: i32, scale: &[i32; 256], levels: i32, f: &mut Filler, out: &mut Vec<u8>) {
        let sky = self.sky.0 + (self.sky.1 - self.sky.0) * y / self.h.max(1);
        let (sx, sy, sr, sv) = self.sun;
        let dy = y - sy;
        // The disc's span on this row.
        let half = if dy.abs() < sr {
            ((sr * sr - dy * dy) as f64).sqrt() as i32
        } else {
            -1
        };
        let (sun0, sun1) = (sx - half, sx + half);
        let blocks: Vec<_> = self
            .blocks
            .iter()
            .filter(|b| y >= b.1 && y < b.1 + b.3)
            .collect();
        let bayer = &BAYER[(y & 3) as usize];
        let grain = self.grain as i32;
        let slope = 60 * 65_536 / self.h.max(1);
        let mut noise = 0u64;
        for x in 0..self.w {
            let mut v = sky;
            if x >= sun0 && x < sun1 {
                v = sv;
            }
            let top = self.hills[x as usize];
            if y >= top {
                v = self.hill_level + (((y - top) * slope) >> 16);
            }
            for &&(bx, _, bw, _, bv) in &blocks {
                if x >= bx && x < bx + bw {
                    v = bv;
                }
            }
            if x & 7 == 0 {
                noise = f.next();
            }
            let g = ((((noise >> ((x & 7) * 8)) & 0xff) as i32 * grain) >> 8) - grain / 2;
            let t = scale[(v + g).clamp(0, 255) as usize] + bayer[(x & 3) as usize];
            out.push((t >> 4).min(levels - 1) as u8);
        }
    }
}

/// An unpadded PNG of `w`×`h` pixels in format `f`, without its IEND.
fn png_image(w: u32, h: u32, fmt: Format, seed: u64) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&w.to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    let colour_type = if fmt == Format::Grey { 0 } else { 3 };
    // Bit depth, colour type, deflate, no filter, no interlace.
    ihdr.extend_from_slice(&[fmt.bits() as u8, colour_type, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &ihdr);
    let mut f = Filler::new(seed);
    let bits = fmt.bits();
    let row_len = 1 + (w as usize * bits as usize).div_ceil(8);
    let mut raw = Vec::with_capacity(row_len * h as usize);
    if fmt == Format::Grey {
        for _ in 0..h {
            raw.push(0); // filter: none
            raw.extend((0..w).map(|_| (f.next() >> 56) as u8));
        }
    } else {
        let levels = 1i32 << bits;
        chunk(&mut out, b"PLTE", &palette(levels as usize, &mut f));
        let scene = Scene::new(w, h, &mut f);
        let mut scale = [0i32; 256];
        for (v, s) in scale.iter_mut().enumerate() {
            *s = v as i32 * (levels - 1) * 16 / 255;
        }
        let mut px = Vec::with_capacity(w as usize);
        let per_byte = 8 / bits;
        for y in 0..h as i32 {
            px.clear();
            scene.row(y, &scale, levels, &mut f, &mut px);
            raw.push(0); // filter: none
            for group in px.chunks(per_byte as usize) {
                let mut byte = 0u8;
                for (k, &p) in group.iter().enumerate() {
                    byte |= p << (8 - bits * (k as u32 + 1));
                }
                raw.push(byte);
            }
        }
    }
    debug_assert_eq!(raw.len(), row_len * h as usize);
    chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    out
}

fn png(size: usize, seed: u64) -> Vec<u8> {
    let (w, h, fmt) = png_plan(size);
    let mut out = png_image(w, h, fmt, seed);
    let pad = size.saturating_sub(out.len() + PNG_IEND);
    if pad >= PNG_PAD_CHUNK {
        // A private, ancillary chunk that decoders skip.
        chunk(&mut out, b"spAd", &vec![0u8; pad - PNG_PAD_CHUNK]);
    }
    chunk(&mut out, b"IEND", &[]);
    out
}

/// The smallest TrueType font a browser takes (a .notdef box and a space;
/// made by scripts/min-font.py).
const MIN_FONT: &[u8] = include_bytes!("min-font.ttf");

/// A web font of exactly `size` bytes: `MIN_FONT` as a WOFF 1.0 file, its
/// tables stored uncompressed, padded by a private data block (which WOFF
/// readers skip): a browser that uses the page's web fonts gets a font,
/// as from the real page (fontTools reads it, OTS passes it). Chromium
/// over h3 still cuts some of an imported page's fonts after their first
/// packet, valid or not (docs/crosscheck.md, "Synthetic web fonts").
/// Below the smallest such file, a WOFF header and zeros.
fn woff(size: usize) -> Vec<u8> {
    match woff_of(MIN_FONT, size) {
        Some(font) => font,
        None => {
            let mut out = b"wOFF".to_vec();
            out.extend_from_slice(&0x0001_0000u32.to_be_bytes()); // flavor: TrueType
            out.extend_from_slice(&(size as u32).to_be_bytes()); // total length
            out.resize(size, 0);
            out
        }
    }
}

/// `sfnt` (a TrueType font) as a WOFF 1.0 file of `size` bytes (W3C WOFF
/// File Format 1.0: a 44-byte header, a 20-byte directory entry per table,
/// the tables 4-byte aligned, then the private data block), or None if it
/// does not fit in `size` or `sfnt` is not a font.
fn woff_of(sfnt: &[u8], size: usize) -> Option<Vec<u8>> {
    const HEADER: usize = 44;
    const ENTRY: usize = 20;
    let be16 = |at: usize| Some(u16::from_be_bytes(sfnt.get(at..at + 2)?.try_into().ok()?));
    let be32 = |at: usize| Some(u32::from_be_bytes(sfnt.get(at..at + 4)?.try_into().ok()?));
    let flavor = be32(0)?;
    let tables = usize::from(be16(4)?);
    // (tag, checksum, offset, length) of each table, in the font's order
    // (sorted by tag, as WOFF's directory must be).
    let dir: Vec<(u32, u32, usize, usize)> = (0..tables)
        .map(|i| {
            let at = 12 + 16 * i;
            Some((
                be32(at)?,
                be32(at + 4)?,
                be32(at + 8)? as usize,
                be32(at + 12)? as usize,
            ))
        })
        .collect::<Option<_>>()?;
    let align = |n: usize| n.div_ceil(4) * 4;
    let tables_end = HEADER + ENTRY * tables + dir.iter().map(|t| align(t.3)).sum::<usize>();
    if size < tables_end || u32::try_from(size).is_err() {
        return None;
    }
    let sfnt_size = 12 + 16 * tables + dir.iter().map(|t| align(t.3)).sum::<usize>();
    let private = size - tables_end;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(b"wOFF");
    out.extend_from_slice(&flavor.to_be_bytes());
    out.extend_from_slice(&(size as u32).to_be_bytes());
    out.extend_from_slice(&(tables as u16).to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes()); // reserved
    out.extend_from_slice(&(sfnt_size as u32).to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes()); // major version
    out.extend_from_slice(&0u16.to_be_bytes()); // minor version
    out.extend_from_slice(&[0; 12]); // no metadata: offset, length, original length
    let (private_offset, private_length) = match private {
        0 => (0, 0),
        n => (tables_end as u32, n as u32),
    };
    out.extend_from_slice(&private_offset.to_be_bytes());
    out.extend_from_slice(&private_length.to_be_bytes());
    let mut offset = HEADER + ENTRY * tables;
    for &(tag, checksum, _, length) in &dir {
        out.extend_from_slice(&tag.to_be_bytes());
        out.extend_from_slice(&(offset as u32).to_be_bytes());
        // Stored as is: compressed length = original length.
        out.extend_from_slice(&(length as u32).to_be_bytes());
        out.extend_from_slice(&(length as u32).to_be_bytes());
        out.extend_from_slice(&checksum.to_be_bytes());
        offset += align(length);
    }
    for &(_, _, at, length) in &dir {
        out.extend_from_slice(sfnt.get(at..at + length)?);
        out.resize(align(out.len()), 0);
    }
    out.resize(size, 0);
    Some(out)
}

fn swf(size: usize) -> Vec<u8> {
    let mut out = b"FWS\x0a".to_vec();
    out.extend_from_slice(&(size as u32).to_le_bytes());
    out.resize(size, 0);
    out
}

/// Width and height of a PNG, read from its IHDR (for tests and checks).
pub fn png_dimensions(data: &[u8]) -> Option<(u32, u32)> {
    if data.len() < 24 || &data[..8] != b"\x89PNG\r\n\x1a\n" || &data[12..16] != b"IHDR" {
        return None;
    }
    let w = u32::from_be_bytes(data[16..20].try_into().ok()?);
    let h = u32::from_be_bytes(data[20..24].try_into().ok()?);
    Some((w, h))
}

#[cfg(test)]
mod tests {
    /// The statement `send_call` writes gives back its URL, escapes undone;
    /// other scripts give none.
    #[test]
    fn a_sync_request_statement_names_its_url() {
        let up = Upload {
            method: "POST".into(),
            body_len: 3,
        };
        for path in ["/", "/a\\b</script>?x=1", "/a\\x3c"] {
            let r = Resource {
                host: "ocsp.test".into(),
                path: path.into(),
                kind: Kind::Other,
                size: 471,
                parent: Some(0),
                reveal: Reveal::Body,
            };
            assert_eq!(
                sync_request_url(&send_call(&r, &up)),
                Some(reference(&r)),
                "{path}"
            );
        }
        assert_eq!(sync_request_url("var x = 1;"), None);
        assert_eq!(
            sync_request_url(&format!("{INJECT_CALL}\"//a.test/x.js\")")),
            None
        );
    }

    use super::*;

    /// A synthetic web font is a WOFF of the recorded size whose tables give
    /// back the TrueType font's bytes (its sanitizer's input), at every
    /// size from the smallest such file up; below that, a header and zeros.
    #[test]
    fn fonts_are_whole_woff_files_of_their_size() {
        let smallest = (0..2000).find(|&n| woff_of(MIN_FONT, n).is_some()).unwrap();
        assert!(smallest > 300 && smallest < 1000, "{smallest}");
        for size in [smallest, smallest + 1, smallest + 3, 23_300, 47_216] {
            let w = woff(size);
            assert_eq!(w.len(), size);
            assert_eq!(&w[..4], b"wOFF");
            let be32 = |at: usize| u32::from_be_bytes(w[at..at + 4].try_into().unwrap()) as usize;
            let be16 = |at: usize| u16::from_be_bytes(w[at..at + 2].try_into().unwrap()) as usize;
            assert_eq!(be32(8), size, "its length field");
            let tables = be16(12);
            assert_eq!(
                tables,
                usize::from(u16::from_be_bytes([MIN_FONT[4], MIN_FONT[5]]))
            );
            // Each table as the font has it.
            for i in 0..tables {
                let (e, f) = (44 + 20 * i, 12 + 16 * i);
                assert_eq!(w[e..e + 4], MIN_FONT[f..f + 4], "tag");
                let (at, len) = (be32(e + 4), be32(e + 12));
                assert_eq!(be32(e + 8), len, "stored uncompressed");
                let font_at =
                    u32::from_be_bytes(MIN_FONT[f + 8..f + 12].try_into().unwrap()) as usize;
                assert_eq!(w[at..at + len], MIN_FONT[font_at..font_at + len]);
                assert_eq!(at % 4, 0);
            }
            // The private block fills the rest, from a 4-byte boundary.
            let (private_at, private_len) = (be32(36), be32(40));
            match size - smallest {
                0 => assert_eq!((private_at, private_len), (0, 0)),
                n => assert_eq!((private_at, private_len), (smallest, n)),
            }
        }
        assert_eq!(woff(smallest - 1).len(), smallest - 1);
        assert_eq!(&woff(smallest - 1)[..4], b"wOFF");
    }

    #[test]
    fn fuzz_regression_png_sizes_just_above_the_smallest_are_exact() {
        // Found by the HAR import fuzz (tests/fuzz_har.rs): a 71-byte image
        // came out 70 bytes, too small for a padding chunk.
        for size in png_min_size()..png_min_size() + 2 * PNG_PAD_CHUNK {
            let p = png(size, 3);
            assert_eq!(p.len(), size);
            assert!(png_dimensions(&p).is_some());
        }
    }

    #[test]
    fn png_sizes_are_exact_and_icons_are_32_by_32() {
        for size in [png_min_size(), 200, 1200, 1500, 2000, 4000, 10_000, 150_000] {
            let p = png(size, 3);
            assert_eq!(p.len(), size);
            if (1200..4096).contains(&size) {
                assert_eq!(png_dimensions(&p), Some((32, 32)), "size {size}");
            }
        }
    }

    #[test]
    fn every_png_size_is_exact_and_its_header_says_png_size() {
        let sizes = (png_min_size()..1300)
            .chain((1300..5000).step_by(7))
            .chain((5000..300_000).step_by(9973));
        for size in sizes {
            let p = png(size, size as u64);
            assert_eq!(p.len(), size, "size {size}");
            assert_eq!(png_dimensions(&p), Some(png_size(size)), "size {size}");
        }
    }

    #[test]
    fn text_is_exactly_its_length_and_ends_on_a_word() {
        let mut f = Filler::new(5);
        for n in (0..400).chain((0..2000).map(|k| 150 + k % 40)) {
            let s = f.sentences(n);
            assert_eq!(s.len(), n, "{s:?}");
            assert!(n < 2 || s.trim_end().ends_with('.'), "{s:?}");
            assert_eq!(f.text(n).len(), n);
        }
    }

    #[test]
    fn images_are_about_four_pixels_a_byte() {
        for size in [4096, 5_000, 16_000, 40_000, 150_000] {
            let (w, h) = png_size(size);
            let per_byte = (w * h) as f64 / size as f64;
            assert!((3.5..=4.0).contains(&per_byte), "{size}: {w}x{h}");
            assert!(w > h && w <= 2 * h, "{size}: {w}x{h}");
        }
        for size in [4096, 5_000, 16_000, 40_000, 150_000] {
            eprintln!("{size} {:?}", png_size(size));
        }
        assert_eq!(png_size(5_000), (158, 119));
    }
}
