//! SPDY/3.1 by hand, for the tests that need bytes proto's encoder never
//! writes: control frames of any type, flags and payload (or a head that
//! claims a length never sent), header blocks deflated as a peer's
//! compressor would, and the frames a server sends read back with proto's
//! decoder. Well-formed frames are proto's `Encoder`'s to write.

use flate2::{Compress, Compression, FlushCompress};
use proto::spdy3::{Decoder, Frame, DICTIONARY};
use std::io::Read;

/// The 8-byte head of a control frame of `kind` (version 3) whose payload
/// is `len` bytes (up to 2^24 − 1), with or without those bytes to follow.
pub fn control_head(kind: u16, flags: u8, len: usize) -> [u8; 8] {
    let [_, l1, l2, l3] = (len as u32).to_be_bytes();
    let [k1, k2] = kind.to_be_bytes();
    [0x80, 3, k1, k2, flags, l1, l2, l3]
}

/// A control frame of `kind` with `payload`, as on the wire.
pub fn control(kind: u16, flags: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = control_head(kind, flags, payload.len()).to_vec();
    out.extend_from_slice(payload);
    out
}

/// A SYN_STREAM (1), SYN_REPLY (2) or HEADERS (8) on stream 1 (no
/// associated stream, priority 0) carrying the deflated header `block`.
pub fn header_frame(kind: u16, flags: u8, block: &[u8]) -> Vec<u8> {
    let mut p = if kind == 1 {
        vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 0]
    } else {
        vec![0, 0, 0, 1]
    };
    p.extend_from_slice(block);
    control(kind, flags, &p)
}

/// `blocks` deflated at `level` in one zlib stream primed with the SPDY
/// dictionary, one sync flush per block: what a peer's compressor sends,
/// whatever the plain bytes.
pub fn deflate_blocks<B: AsRef<[u8]>>(level: Compression, blocks: &[B]) -> Vec<Vec<u8>> {
    let mut c = Compress::new(level, true);
    c.set_dictionary(DICTIONARY).unwrap();
    blocks
        .iter()
        .map(|plain| {
            let plain = plain.as_ref();
            let mut out = Vec::with_capacity(plain.len() * 2 + 128);
            let mut input = plain;
            loop {
                let before = c.total_in();
                c.compress_vec(input, &mut out, FlushCompress::Sync)
                    .unwrap();
                input = &input[(c.total_in() - before) as usize..];
                if input.is_empty() && out.len() < out.capacity() {
                    break;
                }
                out.reserve(out.capacity());
            }
            out
        })
        .collect()
}

/// The frames read from `r` with a decoder of its own until `last` says a
/// frame is the last wanted (it is included), the peer closes, a read
/// fails (a timeout the caller set included) or the bytes stop decoding.
pub fn read_until(r: &mut impl Read, mut last: impl FnMut(&Frame) -> bool) -> Vec<Frame> {
    let mut dec = Decoder::default();
    let mut frames = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match r.read(&mut buf) {
            Ok(0) | Err(_) => return frames,
            Ok(n) => dec.feed(&buf[..n]),
        }
        while let Ok(Some(f)) = dec.next_frame() {
            let done = last(&f);
            frames.push(f);
            if done {
                return frames;
            }
        }
    }
}

/// The frames read from `r` until the peer closes (see `read_until`).
pub fn read_until_close(r: &mut impl Read) -> Vec<Frame> {
    read_until(r, |_| false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::spdy3::Encoder;

    #[test]
    fn a_hand_made_header_frame_decodes_as_the_encoders_does() {
        let headers = vec![(":status".to_string(), "200".to_string())];
        let mut plain = 1u32.to_be_bytes().to_vec();
        for s in [":status", "200"] {
            plain.extend_from_slice(&(s.len() as u32).to_be_bytes());
            plain.extend_from_slice(s.as_bytes());
        }
        let block = &deflate_blocks(Compression::default(), &[plain])[0];
        let mut bytes = header_frame(2, 1, block);
        Encoder::default().encode(&Frame::Ping { id: 7 }, &mut bytes);
        let want = Frame::SynReply {
            stream_id: 1,
            fin: true,
            headers,
        };
        assert_eq!(
            read_until_close(&mut &bytes[..]),
            [want.clone(), Frame::Ping { id: 7 }]
        );
        assert_eq!(read_until(&mut &bytes[..], |f| *f == want), [want]);
        assert_eq!(
            control_head(7, 0, 0xff_ffff),
            [0x80, 3, 0, 7, 0, 0xff, 0xff, 0xff]
        );
    }
}
