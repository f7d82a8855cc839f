//! libFuzzer target: arbitrary bytes into the HTTP/1.1 response decoder, whole
//! and in pieces of the size the first byte says; never a panic, and the
//! responses decoded before any error are the same however the bytes arrive.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proto::h1::{Decoder, Response};

fn decode<'a>(pieces: impl Iterator<Item = &'a [u8]>) -> Vec<Response> {
    let mut d = Decoder::default();
    let mut out = Vec::new();
    for p in pieces {
        if d.decode(p, &mut |r| out.push(r)).is_err() {
            break;
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&size, bytes)) = data.split_first() else {
        return;
    };
    let whole = decode(std::iter::once(bytes));
    let cut = decode(bytes.chunks(size.max(1) as usize));
    let n = whole.len().min(cut.len());
    assert_eq!(whole[..n], cut[..n]);
});
