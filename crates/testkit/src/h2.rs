//! HTTP/2 frames by hand (RFC 9113 §4.1), for the peers that tests write
//! themselves — a hostile client or a scripted server — where a real
//! implementation would never send what the test needs: any type, flags,
//! stream and payload, the length field true to the payload; and the frames
//! read back from a byte buffer or a socket. The wire constants are
//! `proto::h2::frame`'s.

use proto::h2::frame::{PREFACE, SETTINGS};
use std::io::Read;

/// One frame as on the wire; `stream` without its reserved bit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub kind: u8,
    pub flags: u8,
    pub stream: u32,
    pub payload: Vec<u8>,
}

/// Appends a frame to `out`: the 9-byte head (length of `payload`, type,
/// flags, stream) and the payload.
pub fn write(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// A frame's bytes (see `write`).
pub fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(9 + payload.len());
    write(&mut out, kind, flags, stream, payload);
    out
}

/// A client's first bytes: the connection preface and an empty SETTINGS.
pub fn client_hello() -> Vec<u8> {
    let mut out = PREFACE.to_vec();
    write(&mut out, SETTINGS, 0, 0, &[]);
    out
}

/// The whole frames at the start of `bytes`, and how many bytes they take
/// (a frame cut short at the end is left for more bytes).
pub fn split(bytes: &[u8]) -> (Vec<Frame>, usize) {
    let mut frames = Vec::new();
    let mut at = 0;
    while let Some(head) = bytes.get(at..at + 9) {
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let Some(payload) = bytes.get(at + 9..at + 9 + len) else {
            break;
        };
        frames.push(Frame {
            kind: head[3],
            flags: head[4],
            stream: u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff,
            payload: payload.to_vec(),
        });
        at += 9 + len;
    }
    (frames, at)
}

/// Reads one frame from `r`; None at EOF or on an error (a read timeout
/// the caller set included).
pub fn read(r: &mut impl Read) -> Option<Frame> {
    let mut head = [0u8; 9];
    r.read_exact(&mut head).ok()?;
    let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
    let mut payload = vec![0u8; len];
    r.read_exact(&mut payload).ok()?;
    let (mut frames, _) = split(&[&head[..], &payload].concat());
    frames.pop()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_written_splits_back_and_a_cut_one_waits() {
        let mut bytes = frame(1, 4, 0x8000_0003, b"abc");
        write(&mut bytes, 0, 1, 3, &[]);
        let whole = bytes.len();
        bytes.extend_from_slice(&frame(0, 0, 5, b"xyz")[..10]);
        let (frames, used) = split(&bytes);
        assert_eq!(used, whole);
        assert_eq!(
            frames,
            [
                Frame {
                    kind: 1,
                    flags: 4,
                    stream: 3,
                    payload: b"abc".to_vec()
                },
                Frame {
                    kind: 0,
                    flags: 1,
                    stream: 3,
                    payload: vec![]
                }
            ]
        );
        assert_eq!(read(&mut &bytes[..]), Some(frames[0].clone()));
        assert_eq!(read(&mut &bytes[whole..]), None);
    }

    #[test]
    fn a_client_hello_is_the_preface_and_an_empty_settings() {
        let hello = client_hello();
        let rest = hello.strip_prefix(PREFACE).unwrap();
        assert_eq!(rest, [0, 0, 0, SETTINGS, 0, 0, 0, 0, 0]);
    }
}
