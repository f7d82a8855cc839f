//! Deterministic content in real formats, exactly `size` bytes long: HTML whose
//! tags reference its children, CSS with `url()`, JavaScript that injects its
//! children when it runs, PNG images that decode, and WOFF/SWF headers.

use crate::model::{Kind, Resource, Reveal};

/// Deterministic filler text and pixels, from the workspace's one generator.
struct Filler(link::rng::Rng);

impl Filler {
    fn new(seed: u64) -> Filler {
        Filler(link::rng::Rng::new(seed))
    }

    fn next(&mut self) -> u64 {
        self.0.next_u64()
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
pub fn min_size(r: &Resource, children: &[&Resource], grandchildren: &[usize]) -> usize {
    match r.kind {
        Kind::Html => html(r, children, grandchildren, 0, 0).len(),
        Kind::Css => css(r, children, 0, 0).len(),
        Kind::Js => js(children, 0, 0).len(),
        Kind::Png => png_min_size(),
        Kind::Font => 44,
        Kind::Flash => 21,
        Kind::Other => 0,
    }
}

/// The body of `r`, exactly `r.size` bytes. `children` are the resources it
/// reveals; `grandchildren` how many each of them reveals in turn.
pub fn generate(
    r: &Resource,
    children: &[&Resource],
    grandchildren: &[usize],
    seed: u64,
) -> Vec<u8> {
    let seed = seed ^ fnv(r.host.as_bytes()) ^ fnv(r.path.as_bytes()).rotate_left(17);
    let out = match r.kind {
        Kind::Html => html(r, children, grandchildren, r.size, seed).into_bytes(),
        Kind::Css => css(r, children, r.size, seed).into_bytes(),
        Kind::Js => js(children, r.size, seed).into_bytes(),
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

fn html(
    r: &Resource,
    children: &[&Resource],
    grandchildren: &[usize],
    size: usize,
    seed: u64,
) -> String {
    let mut head = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{}{}</title>\n",
        r.host, r.path
    );
    let tag = |c: &Resource| match c.kind {
        Kind::Css => format!("<link rel=\"stylesheet\" href=\"{}\">\n", reference(c)),
        Kind::Js => format!("<script src=\"{}\"></script>\n", reference(c)),
        // Flash as an image: today's browsers fetch nothing for <embed> or
        // <object> without the plugin; an <img> makes them fetch the bytes.
        Kind::Flash => format!("<img src=\"{}\" alt=\"flash\">\n", reference(c)),
        Kind::Html => format!("<iframe src=\"{}\"></iframe>\n", reference(c)),
        _ => format!("<img src=\"{}\" alt=\"\">\n", reference(c)),
    };
    for c in children.iter().filter(|c| c.reveal == Reveal::Head) {
        head += &tag(c);
    }
    head += "</head><body>\n";
    let mut parts = vec![head];
    for c in children.iter().filter(|c| c.reveal == Reveal::Body) {
        parts.push(tag(c));
    }
    for (c, n) in children.iter().zip(grandchildren) {
        if c.kind == Kind::Css && *n > 0 {
            parts.push(format!(
                "<div class=\"{}\">{}</div>\n",
                style_class(c),
                "<i>x</i>".repeat(*n)
            ));
        }
    }
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

fn css(r: &Resource, children: &[&Resource], size: usize, seed: u64) -> String {
    let mut parts = vec!["/* spdylab stylesheet */\n".to_string()];
    let class = style_class(r);
    for (i, c) in children.iter().enumerate() {
        let rule = match c.kind {
            Kind::Font => format!(
                "@font-face{{font-family:{class}f{i};src:url({}) format(\"woff\")}}.{class}>i:nth-child({}){{font-family:{class}f{i}}}\n",
                reference(c),
                i + 1
            ),
            _ => format!(
                ".{class}>i:nth-child({}){{background-image:url({})}}\n",
                i + 1,
                reference(c)
            ),
        };
        parts.push(rule);
    }
    pad_between(&parts, size, seed, |f, n| {
        if n >= 5 {
            format!("/*{}*/\n", f.words(n - 5))
        } else {
            " ".repeat(n)
        }
    })
}

/// What a script runs to inject one child: the browser model looks for these calls.
pub const INJECT_CALL: &str = "__spdylab_inject(";

fn js(children: &[&Resource], size: usize, seed: u64) -> String {
    let mut parts = vec![
        "/* spdylab script */\nfunction __spdylab_inject(u,t){var e=document.createElement(t);e.src=u;(document.body||document.head).appendChild(e);}\n"
            .to_string(),
    ];
    for c in children {
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

fn crc32(parts: &[&[u8]]) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for part in parts {
        for &b in *part {
            crc ^= b as u32;
            for _ in 0..8 {
                crc = if crc & 1 != 0 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
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

/// zlib stream with stored (uncompressed) deflate blocks.
fn zlib_stored(raw: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
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
    for &x in raw {
        a = (a + x as u32) % 65_521;
        b = (b + a) % 65_521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

/// An 8-bit greyscale PNG of `side`×`side` pixels, unpadded.
fn png_image(side: u32, seed: u64) -> Vec<u8> {
    png_image_wh(side, side, seed)
}

/// An 8-bit greyscale PNG of `width`×`height` pixels, unpadded (stored
/// deflate: a pixel more is a byte more).
fn png_image_wh(width: u32, height: u32, seed: u64) -> Vec<u8> {
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend_from_slice(&width.to_be_bytes());
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[8, 0, 0, 0, 0]); // 8-bit greyscale, deflate, no filter, no interlace
    chunk(&mut out, b"IHDR", &ihdr);
    let mut f = Filler::new(seed);
    let mut raw = Vec::with_capacity(((width + 1) * height) as usize);
    for _ in 0..height {
        raw.push(0); // filter: none
        raw.extend((0..width).map(|_| (f.next() >> 56) as u8));
    }
    chunk(&mut out, b"IDAT", &zlib_stored(&raw));
    out
}

const PNG_IEND: usize = 12;
const PNG_PAD_CHUNK: usize = 12;

fn png_min_size() -> usize {
    png_image(1, 0).len() + PNG_IEND
}

/// Side of the square image for a PNG of `size` bytes: icons-sized files get
/// 32×32 (the icons page, seed 000), larger ones as large as fits.
fn png_side(size: usize) -> u32 {
    let fits = |side: u32| {
        let len = png_image(side, 0).len() + PNG_IEND;
        len == size || len + PNG_PAD_CHUNK <= size
    };
    let mut side = ((size as f64).sqrt() as u32).max(1);
    while side > 1 && !fits(side) {
        side -= 1;
    }
    if size < 4096 && fits(32) {
        32
    } else {
        side
    }
}

fn png(size: usize, seed: u64) -> Vec<u8> {
    let side = png_side(size);
    let mut out = png_image(side, seed);
    let mut pad = size.saturating_sub(out.len() + PNG_IEND);
    if side == 1 && (1..PNG_PAD_CHUNK).contains(&pad) {
        // Fewer bytes than a padding chunk takes: the 1×1 image made wider
        // by them instead.
        out = png_image_wh(1 + pad as u32, 1, seed);
        pad = 0;
    }
    if pad >= PNG_PAD_CHUNK {
        // A private, ancillary chunk that decoders skip.
        chunk(&mut out, b"spAd", &vec![0u8; pad - PNG_PAD_CHUNK]);
    }
    chunk(&mut out, b"IEND", &[]);
    out
}

fn woff(size: usize) -> Vec<u8> {
    let mut out = b"wOFF".to_vec();
    out.extend_from_slice(&0x0001_0000u32.to_be_bytes()); // flavor: TrueType
    out.extend_from_slice(&(size as u32).to_be_bytes()); // total length
    out.resize(size, 0);
    out
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
    use super::*;

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
}
