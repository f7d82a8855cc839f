//! libFuzzer target: arbitrary bytes as the start of an image, read by the
//! paint estimate's header readers (`client::paint::image_size`: PNG, GIF,
//! JPEG segments to the first start-of-frame, WebP VP8/VP8L/VP8X; issue 36).
//! Never a panic; a size read is finite and not negative, and the same from
//! any longer prefix of the bytes (more bytes never change a size read).
#![no_main]

use client::paint::image_size;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some((w, h)) = image_size(data) {
        assert!(w.is_finite() && h.is_finite() && w >= 0.0 && h >= 0.0);
        let mut longer = data.to_vec();
        longer.extend_from_slice(&[0xff; 16]);
        assert_eq!(image_size(&longer), Some((w, h)));
    }
});
