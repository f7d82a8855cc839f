//! How much of an image a colour histogram sees: the share of its pixels
//! that are not white once drawn over a white page (`ink_share`), for the
//! paint model's Speed Index (`paint`). Sans-I/O: bytes in, a share out.
//!
//! Chromium's Speed Index here is WebPageTest's and speedline's visual
//! progress (`browser::visual`): per-channel histograms of each frame with
//! the white pixels (all three channels ≥ [`WHITE`]) left out. An image
//! painted on a white page moves those histograms only by its non-white
//! pixels: a chart on a white ground (h2o.examp1e.net's benchmark plots:
//! 15 and 33 % of their pixels) weighs a third or less of a photograph of
//! the same box. The model weighed every image by its area alone, so on such
//! pages its visual progress waited for the large image's bytes where
//! Chromium's did not (h2o.examp1e.net over h2 at 20 ms / 1 Mbit/s: Speed
//! Index 4 675 ms against Chromium's 3 317, with FCP and LCP within 2 %).
//!
//! PNG (the `png` crate) and baseline or progressive JPEG (`jpeg-decoder`,
//! the decoder the Chromium client's frames already use); other formats, and
//! images too large to keep, have no share (weighed by area, as before).

/// A pixel whose red, green and blue are all at least this is the page's
/// white background (speedline's `isWhitePixel`): one fact for the
/// Chromium client's histograms and the model's images.
pub const WHITE: u8 = 249;

/// Images larger than this are not decoded (weighed by area alone): at
/// most 64 MB of pixels held for one image.
pub const MAX_PIXELS: u64 = 16_000_000;

/// Whether `first` (an image's first bytes, at least 3) starts a format
/// `ink_share` decodes.
pub fn decodable(first: &[u8]) -> bool {
    first.starts_with(b"\x89PNG") || first.starts_with(&[0xff, 0xd8, 0xff])
}

/// The share (0–1) of the image's pixels that are not white over a white
/// page (alpha composited onto white), or None when it cannot be decoded.
pub fn ink_share(bytes: &[u8]) -> Option<f64> {
    if bytes.starts_with(b"\x89PNG") {
        png_share(bytes)
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        jpeg_share(bytes)
    } else {
        None
    }
}

/// Whether an opaque colour is the page's white: all three channels at
/// least [`WHITE`] (the Chromium client's histograms, the model's images
/// and canvas).
pub fn is_white(rgb: &[u8]) -> bool {
    rgb.iter().all(|&c| c >= WHITE)
}

/// Whether one pixel (its channels and alpha, 0–255) is white over white.
fn white(rgb: [u8; 3], alpha: u8) -> bool {
    // c·a + 255·(1 − a), rounded.
    let over = |c: u8| ((c as u32 * alpha as u32 + 255 * (255 - alpha as u32) + 127) / 255) as u8;
    is_white(&rgb.map(over))
}

/// The non-white share of `n` pixels given as an iterator of (rgb, alpha).
fn share(n: usize, pixels: impl Iterator<Item = ([u8; 3], u8)>) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let inked = pixels.filter(|&(rgb, a)| !white(rgb, a)).count();
    Some(inked as f64 / n as f64)
}

fn png_share(bytes: &[u8]) -> Option<f64> {
    let mut decoder = png::Decoder::new(bytes);
    // Palette and low bit depths to 8-bit, tRNS to alpha, 16-bit to 8.
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().ok()?;
    let info = reader.info();
    if info.width as u64 * info.height as u64 > MAX_PIXELS {
        return None;
    }
    let mut buf = vec![0; reader.output_buffer_size()];
    // The first frame (an APNG's default image).
    let frame = reader.next_frame(&mut buf).ok()?;
    let px = &buf[..frame.buffer_size()];
    let n = frame.width as usize * frame.height as usize;
    use png::ColorType::*;
    match frame.color_type {
        Rgba => share(n, px.chunks_exact(4).map(|p| ([p[0], p[1], p[2]], p[3]))),
        Rgb => share(n, px.chunks_exact(3).map(|p| ([p[0], p[1], p[2]], 255))),
        GrayscaleAlpha => share(n, px.chunks_exact(2).map(|p| ([p[0]; 3], p[1]))),
        Grayscale => share(n, px.iter().map(|&g| ([g; 3], 255))),
        Indexed => None,
    }
}

fn jpeg_share(bytes: &[u8]) -> Option<f64> {
    let mut d = jpeg_decoder::Decoder::new(bytes);
    d.read_info().ok()?;
    let info = d.info()?;
    if info.width as u64 * info.height as u64 > MAX_PIXELS {
        return None;
    }
    let px = d.decode().ok()?;
    let n = info.width as usize * info.height as usize;
    match info.pixel_format {
        jpeg_decoder::PixelFormat::RGB24 => {
            share(n, px.chunks_exact(3).map(|p| ([p[0], p[1], p[2]], 255)))
        }
        jpeg_decoder::PixelFormat::L8 => share(n, px.iter().map(|&g| ([g; 3], 255))),
        // Adobe CMYK, inverted as Chromium draws it: white where all four are 255.
        jpeg_decoder::PixelFormat::CMYK32 => share(
            n,
            px.chunks_exact(4).map(|p| {
                let k = p[3] as u32;
                let c = |x: u8| (x as u32 * k / 255) as u8;
                ([c(p[0]), c(p[1]), c(p[2])], 255)
            }),
        ),
        jpeg_decoder::PixelFormat::L16 => share(
            n,
            px.chunks_exact(2).map(|p| ([p[0]; 3], 255)), // big-endian: the high byte
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `w`×`h` RGBA PNG whose first `inked` pixels are black, the rest
    /// white, with alpha `a` throughout.
    fn png(w: u32, h: u32, inked: usize, a: u8) -> Vec<u8> {
        let mut out = Vec::new();
        let mut e = png::Encoder::new(&mut out, w, h);
        e.set_color(png::ColorType::Rgba);
        e.set_depth(png::BitDepth::Eight);
        let mut wr = e.write_header().unwrap();
        let data: Vec<u8> = (0..(w * h) as usize)
            .flat_map(|i| match i < inked {
                true => [0, 0, 0, a],
                false => [255, 255, 255, a],
            })
            .collect();
        wr.write_image_data(&data).unwrap();
        drop(wr);
        out
    }

    #[test]
    fn a_png_s_share_is_its_non_white_pixels() {
        assert_eq!(ink_share(&png(10, 10, 25, 255)), Some(0.25));
        assert_eq!(ink_share(&png(10, 10, 0, 255)), Some(0.0));
        assert_eq!(ink_share(&png(4, 4, 16, 255)), Some(1.0));
    }

    #[test]
    fn transparent_pixels_show_the_white_page() {
        // Black at alpha 0 is white over white; at alpha 8 still nearly.
        assert_eq!(ink_share(&png(10, 10, 100, 0)), Some(0.0));
        assert_eq!(ink_share(&png(10, 10, 100, 4)), Some(0.0));
        assert_eq!(ink_share(&png(10, 10, 100, 128)), Some(1.0));
    }

    #[test]
    fn what_cannot_be_decoded_has_no_share() {
        assert_eq!(ink_share(b"GIF89a\x01\x00\x01\x00"), None);
        assert_eq!(ink_share(b"\x89PNG\r\n\x1a\n truncated"), None);
        assert_eq!(ink_share(&[0xff, 0xd8, 0xff, 0xe0, 0, 0]), None);
        assert!(decodable(b"\x89PNG\r\n") && decodable(&[0xff, 0xd8, 0xff]));
        assert!(!decodable(b"GIF8") && !decodable(b"RIFF"));
    }

    #[test]
    fn the_built_in_sites_pngs_are_pictures() {
        // Their scenes (sky, disc, hills; icons of 16 colours) fill their box.
        let site = site::builtin("youtube", 2014).unwrap();
        let pngs: Vec<usize> = (0..site.resources.len())
            .filter(|&i| site.resources[i].kind == site::Kind::Png)
            .collect();
        assert!(pngs.len() > 10);
        for i in pngs {
            let s = ink_share(&site.body(i)).expect("a PNG that decodes");
            assert!(s > 0.9, "{}: {s}", site.resources[i].path);
        }
    }
}
