//! libFuzzer target: the SPDY/3.1 header-block parser behind zlib. The input is
//! split at 0xff bytes into plain header blocks; each is deflated with the SPDY
//! dictionary on one stream (as a peer's compressor would) and sent in a
//! SYN_STREAM, SYN_REPLY or HEADERS frame, so the fuzzer steers the inflated
//! bytes the block parser sees. Never a panic; blocks within the limit.
#![no_main]

use flate2::Compression;
use libfuzzer_sys::fuzz_target;
use proto::spdy3::{Decoder, Frame, Limits};
use testkit::spdy::{deflate_blocks, header_frame};

const LIMITS: Limits = Limits {
    max_frame: 1 << 16,
    max_headers: 2048,
};

fuzz_target!(|data: &[u8]| {
    let plain: Vec<&[u8]> = data.split(|b| *b == 0xff).take(8).collect();
    let mut wire = Vec::new();
    for (i, block) in deflate_blocks(Compression::fast(), &plain).iter().enumerate() {
        wire.extend(header_frame([1, 2, 8][i % 3], 0, block));
    }
    let mut d = Decoder::new(LIMITS);
    d.feed(&wire);
    while let Ok(Some(f)) = d.next_frame() {
        if let Frame::SynStream { headers, .. }
        | Frame::SynReply { headers, .. }
        | Frame::Headers { headers, .. } = f
        {
            assert!(headers
                .iter()
                .all(|(n, _)| !n.is_empty() && !n.bytes().any(|b| b.is_ascii_uppercase())));
        }
    }
});
