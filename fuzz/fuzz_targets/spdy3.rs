//! libFuzzer target: arbitrary bytes into the SPDY/3.1 frame decoder, fed in
//! pieces cut where the first two bytes say. Never a panic; every frame within
//! the limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::spdy3::{Decoder, Frame, Limits};

const LIMITS: Limits = Limits {
    max_frame: 4096,
    max_headers: 4096,
};

fuzz_target!(|data: &[u8]| {
    let (cut, bytes) = match data {
        [a, b, rest @ ..] => (u16::from_be_bytes([*a, *b]) as usize, rest),
        _ => return,
    };
    let cut = cut.min(bytes.len());
    let mut d = Decoder::new(LIMITS);
    for piece in [&bytes[..cut], &bytes[cut..]] {
        d.feed(piece);
        loop {
            match d.next_frame() {
                Ok(Some(Frame::Data { data, .. })) => assert!(data.len() <= LIMITS.max_frame),
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    assert_eq!(d.next_frame(), Err(e));
                    return;
                }
            }
        }
    }
});
