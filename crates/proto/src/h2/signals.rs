//! What an HTTP/2 server's stream scheduler needs from the bytes on the
//! wire, sans-I/O, beside the `h2` crate (which parses priorities and throws
//! them away): `SignalTap` reads the client's frames for priority signals —
//! HEADERS' priority fields, PRIORITY frames (Chrome's exclusive chains and
//! its reprioritizations), RFC 9218's PRIORITY_UPDATE — and `DataCounter`
//! counts the DATA payload the server has written, so the scheduler knows
//! when a chunk it handed over has left for the socket. Both only look at
//! frame headers and at most a few bytes of payload; they keep no frame.

use super::frame::{HEADERS, PADDED, PREFACE, PRIORITY};
use crate::priority::{parse_priority_field, Signal};

/// PRIORITY (RFC 9113 §6.3).
pub const PRIORITY_FRAME: u8 = 0x2;
/// PRIORITY_UPDATE (RFC 9218 §7.1).
pub const PRIORITY_UPDATE: u8 = 0x10;
/// The longest Priority field value read from a PRIORITY_UPDATE; longer
/// ones are ignored (the defaults stand).
const MAX_FIELD: usize = 256;

/// Frame-header walking shared by both directions.
#[derive(Debug, Clone, Default)]
struct Framer {
    head: [u8; 9],
    have: usize,
    /// Payload bytes of the current frame still to come.
    left: usize,
    kind: u8,
    flags: u8,
    stream: u32,
}

impl Framer {
    /// Feeds `bytes`; calls `on(framer, Some((chunk, offset)))` for each
    /// piece of a frame's payload and `on(framer, None)` when a frame is
    /// complete.
    fn feed(&mut self, mut bytes: &[u8], mut on: impl FnMut(&Framer, Option<(&[u8], usize)>)) {
        while !bytes.is_empty() {
            if self.have < 9 {
                let n = (9 - self.have).min(bytes.len());
                self.head[self.have..self.have + n].copy_from_slice(&bytes[..n]);
                self.have += n;
                bytes = &bytes[n..];
                if self.have == 9 {
                    let h = self.head;
                    self.left =
                        usize::from(h[0]) << 16 | usize::from(h[1]) << 8 | usize::from(h[2]);
                    self.kind = h[3];
                    self.flags = h[4];
                    self.stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
                    if self.left == 0 {
                        on(self, None);
                        self.have = 0;
                    }
                }
                continue;
            }
            let total = usize::from(self.head[0]) << 16
                | usize::from(self.head[1]) << 8
                | usize::from(self.head[2]);
            let n = self.left.min(bytes.len());
            on(self, Some((&bytes[..n], total - self.left)));
            self.left -= n;
            bytes = &bytes[n..];
            if self.left == 0 {
                on(self, None);
                self.have = 0;
            }
        }
    }
}

/// Reads a client's byte stream (from its connection preface on) for
/// priority signals.
#[derive(Debug, Clone)]
pub struct SignalTap {
    preface_left: usize,
    framer: Framer,
    /// The first bytes of the current frame's payload, as far as needed.
    capture: Vec<u8>,
    signals: Vec<(u32, Signal)>,
    /// Streams the client reset (RST_STREAM): what the server handed the
    /// `h2` crate for them and it had not written is dropped, never written.
    resets: Vec<u32>,
}

impl Default for SignalTap {
    fn default() -> Self {
        SignalTap::new()
    }
}

impl SignalTap {
    /// A tap for a stream that starts with the client's connection preface.
    pub fn new() -> SignalTap {
        SignalTap {
            preface_left: PREFACE.len(),
            framer: Framer::default(),
            capture: Vec::new(),
            signals: Vec::new(),
            resets: Vec::new(),
        }
    }

    /// The client's next bytes.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        if self.preface_left > 0 {
            let n = self.preface_left.min(bytes.len());
            self.preface_left -= n;
            bytes = &bytes[n..];
        }
        let (capture, signals, resets) = (&mut self.capture, &mut self.signals, &mut self.resets);
        self.framer.feed(bytes, |f, piece| {
            let Some((chunk, _)) = piece else {
                if let Some(s) = signal_of(f, capture) {
                    signals.push(s);
                }
                if f.kind == super::frame::RST_STREAM && f.stream != 0 {
                    resets.push(f.stream);
                }
                capture.clear();
                return;
            };
            {
                let want = match f.kind {
                    HEADERS if f.flags & PRIORITY != 0 => 6,
                    PRIORITY_FRAME => 5,
                    PRIORITY_UPDATE if f.stream == 0 => 4 + MAX_FIELD + 1,
                    _ => 0,
                };
                let room = want.saturating_sub(capture.len());
                capture.extend_from_slice(&chunk[..room.min(chunk.len())]);
            }
        });
    }

    /// The signals read since the last call, in wire order.
    pub fn take(&mut self) -> Vec<(u32, Signal)> {
        std::mem::take(&mut self.signals)
    }

    /// The streams the client reset since the last call.
    pub fn take_resets(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.resets)
    }
}

fn tree_fields(b: &[u8]) -> Option<Signal> {
    let dep = u32::from_be_bytes([*b.first()?, *b.get(1)?, *b.get(2)?, *b.get(3)?]);
    Some(Signal::Tree {
        parent: dep & 0x7fff_ffff,
        weight: u16::from(*b.get(4)?) + 1,
        exclusive: dep & 0x8000_0000 != 0,
    })
}

fn signal_of(f: &Framer, payload: &[u8]) -> Option<(u32, Signal)> {
    match f.kind {
        HEADERS if f.flags & PRIORITY != 0 && f.stream != 0 => {
            let skip = usize::from(f.flags & PADDED != 0);
            Some((f.stream, tree_fields(payload.get(skip..)?)?))
        }
        PRIORITY_FRAME if f.stream != 0 => Some((f.stream, tree_fields(payload)?)),
        PRIORITY_UPDATE if f.stream == 0 && payload.len() <= 4 + MAX_FIELD => {
            let id = u32::from_be_bytes(payload.get(..4)?.try_into().ok()?) & 0x7fff_ffff;
            let value = std::str::from_utf8(&payload[4..]).ok()?;
            (id != 0).then(|| (id, parse_priority_field(value)))
        }
        _ => None,
    }
}

/// Counts the DATA payload bytes in a server's output (frames from the
/// start: a server writes no preface).
#[derive(Debug, Clone, Default)]
pub struct DataCounter {
    framer: Framer,
    data: u64,
    /// DATA payload written per stream since the last `take_streams`.
    streams: std::collections::HashMap<u32, u64>,
}

impl DataCounter {
    /// The server's next bytes, as the socket took them.
    pub fn feed(&mut self, bytes: &[u8]) {
        let (data, streams) = (&mut self.data, &mut self.streams);
        self.framer.feed(bytes, |f, piece| {
            if let Some((chunk, offset)) = piece {
                if f.kind == super::frame::DATA {
                    // Padding is not payload a response sent; the h2 crate
                    // never pads, so only its length byte is taken off.
                    let pad = usize::from(f.flags & PADDED != 0 && offset == 0);
                    let n = chunk.len().saturating_sub(pad) as u64;
                    *data += n;
                    *streams.entry(f.stream).or_default() += n;
                }
            }
        });
    }

    /// DATA payload written so far.
    pub fn data(&self) -> u64 {
        self.data
    }

    /// DATA payload written per stream since the last call.
    pub fn take_streams(&mut self) -> Vec<(u32, u64)> {
        self.streams.drain().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = payload.len();
        let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
        f.extend_from_slice(&stream.to_be_bytes());
        f.extend_from_slice(payload);
        f
    }

    fn wire() -> Vec<u8> {
        let mut w = PREFACE.to_vec();
        w.extend(frame(0x4, 0, 0, &[0, 3, 0, 0, 0, 100]));
        // HEADERS on 1: exclusive on 0, weight 256; then a header block.
        w.extend(frame(
            HEADERS,
            0x4 | PRIORITY,
            1,
            &[0x80, 0, 0, 0, 255, 0x82, 0x84],
        ));
        // HEADERS on 3, padded: depends on 1, weight 183.
        w.extend(frame(
            HEADERS,
            0x4 | PRIORITY | PADDED,
            3,
            &[2, 0, 0, 0, 1, 182, 0x82, 0, 0],
        ));
        // HEADERS without priority fields: no signal.
        w.extend(frame(HEADERS, 0x4, 5, &[0x82]));
        // A PRIORITY frame raising 3.
        w.extend(frame(PRIORITY_FRAME, 0, 3, &[0x80, 0, 0, 0, 255]));
        // PRIORITY_UPDATE for 5.
        let mut pu = 5u32.to_be_bytes().to_vec();
        pu.extend_from_slice(b"u=0, i");
        w.extend(frame(PRIORITY_UPDATE, 0, 0, &pu));
        w
    }

    fn expected() -> Vec<(u32, Signal)> {
        let t = |parent, weight, exclusive| Signal::Tree {
            parent,
            weight,
            exclusive,
        };
        vec![
            (1, t(0, 256, true)),
            (3, t(1, 183, false)),
            (3, t(0, 256, true)),
            (
                5,
                Signal::Urgency {
                    urgency: 0,
                    incremental: true,
                },
            ),
        ]
    }

    #[test]
    fn signals_are_read_whole_or_byte_by_byte() {
        let mut whole = SignalTap::new();
        whole.feed(&wire());
        assert_eq!(whole.take(), expected());
        let mut bytewise = SignalTap::new();
        for b in wire() {
            bytewise.feed(&[b]);
        }
        assert_eq!(bytewise.take(), expected());
        let mut resets = SignalTap::new();
        let mut w = PREFACE.to_vec();
        w.extend(frame(0x3, 0, 7, &[0, 0, 0, 8]));
        w.extend(frame(0x3, 0, 0, &[0, 0, 0, 8]));
        resets.feed(&w);
        assert_eq!(resets.take_resets(), vec![7]);
    }

    #[test]
    fn short_or_odd_frames_give_no_signal_and_no_panic() {
        let mut t = SignalTap::new();
        let mut w = PREFACE.to_vec();
        w.extend(frame(PRIORITY_FRAME, 0, 3, &[0x80]));
        w.extend(frame(HEADERS, PRIORITY, 0, &[0, 0, 0, 0, 1]));
        w.extend(frame(PRIORITY_UPDATE, 0, 0, &[0; 3]));
        w.extend(frame(PRIORITY_UPDATE, 0, 0, &vec![b'u'; 600]));
        t.feed(&w);
        assert!(t.take().is_empty());
        let mut x: u32 = 7;
        for _ in 0..5000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            t.feed(&x.to_be_bytes());
        }
        t.take();
    }

    #[test]
    fn data_payload_is_counted_across_splits() {
        let mut out = frame(0x4, 0, 0, &[]);
        out.extend(frame(HEADERS, 0x4, 1, &[0x88]));
        out.extend(frame(0x0, 0, 1, &[1; 1000]));
        out.extend(frame(0x0, 0x1, 3, &[2; 300]));
        let mut c = DataCounter::default();
        for piece in out.chunks(7) {
            c.feed(piece);
        }
        assert_eq!(c.data(), 1300);
        let mut per: Vec<(u32, u64)> = c.take_streams();
        per.sort();
        assert_eq!(per, vec![(1, 1000), (3, 300)]);
        assert!(c.take_streams().is_empty());
    }
}
