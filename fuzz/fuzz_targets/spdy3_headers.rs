//! libFuzzer target: the SPDY/3.1 header-block parser behind zlib. The input is
//! split at 0xff bytes into plain header blocks; each is deflated with the SPDY
//! dictionary on one stream (as a peer's compressor would) and sent in a
//! SYN_STREAM, SYN_REPLY or HEADERS frame, so the fuzzer steers the inflated
//! bytes the block parser sees. Never a panic; blocks within the limit.
#![no_main]

use flate2::{Compress, Compression, FlushCompress};
use libfuzzer_sys::fuzz_target;
use proto::spdy3::{Decoder, Frame, Limits, DICTIONARY};

const LIMITS: Limits = Limits {
    max_frame: 1 << 16,
    max_headers: 2048,
};

fuzz_target!(|data: &[u8]| {
    let mut c = Compress::new(Compression::fast(), true);
    c.set_dictionary(DICTIONARY).unwrap();
    let mut wire = Vec::new();
    for (i, plain) in data.split(|b| *b == 0xff).take(8).enumerate() {
        let kind: u16 = [1, 2, 8][i % 3];
        let mut p = if kind == 1 {
            vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
        } else {
            vec![0, 0, 0, 1]
        };
        p.reserve(plain.len() * 2 + 64);
        let mut input = plain;
        loop {
            let before = c.total_in();
            c.compress_vec(input, &mut p, FlushCompress::Sync).unwrap();
            input = &input[(c.total_in() - before) as usize..];
            if input.is_empty() && p.len() < p.capacity() {
                break;
            }
            p.reserve(p.capacity());
        }
        wire.extend_from_slice(&[0x80, 3]);
        wire.extend_from_slice(&kind.to_be_bytes());
        wire.push(0);
        wire.extend_from_slice(&(p.len() as u32).to_be_bytes()[1..]);
        wire.extend_from_slice(&p);
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
