//! A lean HTTP/2 client connection for the throughput generator (`spdylab
//! bench`), sans-I/O: requests and bytes in, bytes and response events out.
//! GET requests only (no request bodies); responses counted (status, body
//! length), their bodies dropped as they are read.
//!
//! Hand-written on purpose, beside the `h2` crate the model client uses: a
//! generator is measured in requests per CPU-second against h2load (nghttp2,
//! C), and the `h2` crate's general machinery — a shared stream store behind a
//! lock, a waker and a response future per stream, a body stream per
//! response — cost the bench about as much CPU per request as h2load's whole
//! loop (scripts/bench-generators.sh: 1.01x h2load on h2, 0.90x on h2c). Here
//! a request is a precomputed header block copied into the output buffer, and
//! a response is a few bytes of frame header parsed in place; its header
//! block goes through our HPACK decoder (`hpack`, which says why it is ours).
//! Requests are encoded statelessly (static-table names, literals not
//! indexed), so the server's decoder never needs our table.

mod hpack;
pub mod signals;

pub use hpack::HpackError;

use std::collections::{HashMap, VecDeque};

pub use frame::*;

/// HTTP/2's wire constants (RFC 9113 §3.4, §6): the preface, frame types
/// and flags, for this connection and for tests that write frames by hand.
pub mod frame {
    /// The connection preface a client sends first.
    pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

    pub const DATA: u8 = 0x0;
    pub const HEADERS: u8 = 0x1;
    pub const RST_STREAM: u8 = 0x3;
    pub const SETTINGS: u8 = 0x4;
    pub const PUSH_PROMISE: u8 = 0x5;
    pub const PING: u8 = 0x6;
    pub const GOAWAY: u8 = 0x7;
    pub const WINDOW_UPDATE: u8 = 0x8;
    pub const CONTINUATION: u8 = 0x9;

    pub const END_STREAM: u8 = 0x1;
    pub const ACK: u8 = 0x1;
    pub const END_HEADERS: u8 = 0x4;
    pub const PADDED: u8 = 0x8;
    pub const PRIORITY: u8 = 0x20;
}

/// RST_STREAM's code for a stream the server never processed (over its limit).
pub const REFUSED_STREAM: u32 = 0x7;

const SETTINGS_ENABLE_PUSH: u16 = 0x2;
const SETTINGS_MAX_CONCURRENT_STREAMS: u16 = 0x3;
const SETTINGS_INITIAL_WINDOW_SIZE: u16 = 0x4;

/// The largest frame we accept (our SETTINGS_MAX_FRAME_SIZE is the default).
const MAX_FRAME: usize = 16_384;
/// The most header-block bytes (with CONTINUATIONs) one response may carry.
const MAX_HEADER_BLOCK: usize = 256 * 1024;
/// Receive windows: per stream (SETTINGS) and for the connection, as the
/// `h2`-based loop had them (large: the generator must never be the brake).
const STREAM_WINDOW: u32 = 16 * 1024 * 1024;
const CONNECTION_WINDOW: u32 = 64 * 1024 * 1024;
/// Streams opened before the server's SETTINGS say how many it allows (RFC
/// 9113 §6.5.2 asks servers for at least 100; h2 and nghttp2 assume as much).
const BEFORE_SETTINGS: usize = 100;
/// The default window every connection and stream starts with.
const DEFAULT_WINDOW: u32 = 65_535;

/// What the connection reports, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<T> {
    /// Request `req`'s response is complete: its status and body length.
    Done { req: T, status: u16, body: u64 },
    /// The server reset request `req`'s stream (`code`: its error code;
    /// REFUSED_STREAM = 7 means it never processed it).
    Reset { req: T, code: u32 },
    /// The server is going away; `code` 0 (NO_ERROR) is graceful. Requests
    /// on streams above `last_stream` are reported as `Lost`.
    GoAway { last_stream: u32, code: u32 },
    /// Request `req` will never be answered: its stream was above a GOAWAY's last.
    Lost(T),
}

/// The connection broke the protocol: the generator counts it as an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProtocolError(pub &'static str);

struct Stream<T> {
    req: T,
    status: u16,
    body: u64,
    /// Body bytes received and not yet given back by a WINDOW_UPDATE.
    unacked: u32,
}

/// One HTTP/2 connection from the client's side.
pub struct ClientConnection<T> {
    out: Vec<u8>,
    /// Received bytes not yet a whole frame.
    input: Vec<u8>,
    decoder: hpack::Decoder,
    streams: HashMap<u32, Stream<T>>,
    next_stream: u32,
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS (100 until it says), and our own cap.
    peer_max: usize,
    cap: usize,
    /// A header block being received in CONTINUATIONs: (stream, end_stream, bytes).
    block: Option<(u32, bool, Vec<u8>)>,
    connection_unacked: u32,
    going_away: bool,
    events: VecDeque<Event<T>>,
}

impl<T> ClientConnection<T> {
    /// A connection that keeps at most `cap` requests in flight; its preface
    /// and SETTINGS are in [`ClientConnection::output`] at once.
    pub fn new(cap: usize) -> ClientConnection<T> {
        let mut c = ClientConnection {
            out: Vec::with_capacity(64 * 1024),
            input: Vec::with_capacity(64 * 1024),
            decoder: hpack::Decoder::default(),
            streams: HashMap::new(),
            next_stream: 1,
            peer_max: BEFORE_SETTINGS,
            cap: cap.max(1),
            block: None,
            connection_unacked: 0,
            going_away: false,
            events: VecDeque::new(),
        };
        c.out.extend_from_slice(PREFACE);
        let mut settings = Vec::with_capacity(18);
        for (id, value) in [
            (SETTINGS_ENABLE_PUSH, 0),
            (SETTINGS_INITIAL_WINDOW_SIZE, STREAM_WINDOW),
        ] {
            settings.extend_from_slice(&id.to_be_bytes());
            settings.extend_from_slice(&value.to_be_bytes());
        }
        c.frame(SETTINGS, 0, 0, &settings);
        c.window_update(0, CONNECTION_WINDOW - DEFAULT_WINDOW);
        c
    }

    /// Bytes to write to the server (the caller clears what it wrote).
    pub fn output(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    pub fn poll_event(&mut self) -> Option<Event<T>> {
        self.events.pop_front()
    }

    /// Requests sent and not yet answered.
    pub fn in_flight(&self) -> usize {
        self.streams.len()
    }

    /// The most requests in flight: our cap, or the server's stream limit.
    pub fn max_open(&self) -> usize {
        self.cap.min(self.peer_max)
    }

    /// A GOAWAY came: no new requests on this connection.
    pub fn going_away(&self) -> bool {
        self.going_away
    }

    /// The request sent first of those in flight (the lowest stream id; a
    /// scan, for a caller's occasional timeout check).
    pub fn oldest(&self) -> Option<&T> {
        self.streams
            .iter()
            .min_by_key(|(id, _)| **id)
            .map(|(_, s)| &s.req)
    }

    /// Whether the stream ids are used up (a new connection is needed).
    pub fn exhausted(&self) -> bool {
        self.next_stream > 0x7fff_fff0
    }

    /// Sends a GET whose header block is `block` (from [`request_block`]).
    pub fn request(&mut self, req: T, block: &[u8]) {
        let id = self.next_stream;
        self.next_stream += 2;
        self.frame(HEADERS, END_STREAM | END_HEADERS, id, block);
        self.streams.insert(
            id,
            Stream {
                req,
                status: 0,
                body: 0,
                unacked: 0,
            },
        );
    }

    /// Feeds bytes read from the server; events and output follow.
    pub fn receive(&mut self, bytes: &[u8]) -> Result<(), ProtocolError> {
        self.input.extend_from_slice(bytes);
        let mut at = 0;
        while self.input.len() - at >= 9 {
            let h = &self.input[at..at + 9];
            let len = (h[0] as usize) << 16 | (h[1] as usize) << 8 | h[2] as usize;
            if len > MAX_FRAME {
                return Err(ProtocolError("h2-frame-too-large"));
            }
            if self.input.len() - at < 9 + len {
                break;
            }
            let (kind, flags) = (h[3], h[4]);
            let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
            let payload = std::mem::take(&mut self.input);
            let r = self.on_frame(kind, flags, stream, &payload[at + 9..at + 9 + len]);
            self.input = payload;
            r?;
            at += 9 + len;
        }
        self.input.drain(..at);
        // Give back what was read once half a window is used.
        if self.connection_unacked >= CONNECTION_WINDOW / 2 {
            let n = std::mem::take(&mut self.connection_unacked);
            self.window_update(0, n);
        }
        Ok(())
    }

    fn on_frame(
        &mut self,
        kind: u8,
        flags: u8,
        stream: u32,
        payload: &[u8],
    ) -> Result<(), ProtocolError> {
        if self.block.is_some() && kind != CONTINUATION {
            return Err(ProtocolError("h2-expected-continuation"));
        }
        match kind {
            DATA => {
                let n = payload.len() as u32;
                self.connection_unacked += n;
                let data = unpad(flags, payload)?;
                let mut give_back = None;
                if let Some(s) = self.streams.get_mut(&stream) {
                    s.body += data.len() as u64;
                    s.unacked += n;
                    if s.unacked >= STREAM_WINDOW / 2 && flags & END_STREAM == 0 {
                        give_back = Some(std::mem::take(&mut s.unacked));
                    }
                }
                if let Some(n) = give_back {
                    self.window_update(stream, n);
                }
                if flags & END_STREAM != 0 {
                    self.end(stream);
                }
            }
            HEADERS => {
                let mut block = unpad(flags, payload)?;
                if flags & PRIORITY != 0 {
                    block = block.get(5..).ok_or(ProtocolError("h2-bad-headers"))?;
                }
                let end_stream = flags & END_STREAM != 0;
                if flags & END_HEADERS != 0 {
                    self.on_headers(stream, end_stream, block)?;
                } else {
                    self.block = Some((stream, end_stream, block.to_vec()));
                }
            }
            CONTINUATION => {
                let Some((id, end_stream, mut block)) = self.block.take() else {
                    return Err(ProtocolError("h2-unexpected-continuation"));
                };
                if id != stream || block.len() + payload.len() > MAX_HEADER_BLOCK {
                    return Err(ProtocolError("h2-bad-continuation"));
                }
                block.extend_from_slice(payload);
                if flags & END_HEADERS != 0 {
                    self.on_headers(stream, end_stream, &block)?;
                } else {
                    self.block = Some((id, end_stream, block));
                }
            }
            RST_STREAM => {
                let code = u32_at(payload, 0)?;
                if let Some(s) = self.streams.remove(&stream) {
                    self.events.push_back(Event::Reset { req: s.req, code });
                }
            }
            SETTINGS if flags & ACK == 0 => {
                for s in payload.chunks_exact(6) {
                    let id = u16::from_be_bytes([s[0], s[1]]);
                    let value = u32::from_be_bytes([s[2], s[3], s[4], s[5]]);
                    if id == SETTINGS_MAX_CONCURRENT_STREAMS {
                        self.peer_max = value as usize;
                    }
                }
                self.frame(SETTINGS, ACK, 0, &[]);
            }
            PING if flags & ACK == 0 => {
                let data = payload.to_vec();
                self.frame(PING, ACK, 0, &data);
            }
            GOAWAY => {
                let last_stream = u32_at(payload, 0)? & 0x7fff_ffff;
                let code = u32_at(payload, 4)?;
                self.going_away = true;
                self.events.push_back(Event::GoAway { last_stream, code });
                let mut lost: Vec<u32> = self
                    .streams
                    .keys()
                    .copied()
                    .filter(|id| *id > last_stream)
                    .collect();
                lost.sort_unstable();
                for id in lost {
                    if let Some(s) = self.streams.remove(&id) {
                        self.events.push_back(Event::Lost(s.req));
                    }
                }
            }
            PUSH_PROMISE => return Err(ProtocolError("h2-push-refused")),
            // PRIORITY, WINDOW_UPDATE (we send no bodies), SETTINGS and PING
            // acknowledgements, unknown frame types: nothing to do.
            _ => {}
        }
        Ok(())
    }

    fn on_headers(
        &mut self,
        stream: u32,
        end_stream: bool,
        block: &[u8],
    ) -> Result<(), ProtocolError> {
        // Every block is decoded, trailers too: the decoder's table must follow the server's.
        let mut status: Option<u16> = None;
        self.decoder
            .decode(block, |name, value| {
                if name == b":status" {
                    status = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
                }
            })
            .map_err(|e| ProtocolError(e.0))?;
        if let (Some(s), Some(status)) = (self.streams.get_mut(&stream), status) {
            // An interim (1xx) response is followed by the real one.
            if !(100..200).contains(&status) {
                s.status = status;
            }
        }
        if end_stream {
            self.end(stream);
        }
        Ok(())
    }

    fn end(&mut self, stream: u32) {
        if let Some(s) = self.streams.remove(&stream) {
            self.events.push_back(Event::Done {
                req: s.req,
                status: s.status,
                body: s.body,
            });
        }
    }

    fn window_update(&mut self, stream: u32, n: u32) {
        self.frame(WINDOW_UPDATE, 0, stream, &n.to_be_bytes());
    }

    fn frame(&mut self, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
        let len = payload.len() as u32;
        self.out.extend_from_slice(&len.to_be_bytes()[1..]);
        self.out.push(kind);
        self.out.push(flags);
        self.out.extend_from_slice(&stream.to_be_bytes());
        self.out.extend_from_slice(payload);
    }
}

/// A GET's header block, encoded without touching any dynamic table:
/// `:method GET`, `:scheme` and `:path` by static index where they are in
/// the static table, else as literals with a static-table name, not indexed.
pub fn request_block(scheme: &str, authority: &str, path: &str) -> Vec<u8> {
    let mut b = vec![0x82]; // :method GET
    b.push(if scheme == "https" { 0x87 } else { 0x86 });
    match path {
        "/" => b.push(0x84),
        "/index.html" => b.push(0x85),
        _ => literal(&mut b, 4, path),
    }
    literal(&mut b, 1, authority);
    literal(&mut b, 58, "spdylab-bench"); // user-agent
    b
}

/// A literal header field without indexing, its name static-table entry `name`.
fn literal(b: &mut Vec<u8>, name: usize, value: &str) {
    hpack_int(b, 0x00, 4, name);
    hpack_int(b, 0x00, 7, value.len());
    b.extend_from_slice(value.as_bytes());
}

/// Appends an HPACK integer with a `prefix_bits`-bit prefix (RFC 7541
/// §5.1), the first byte's other bits from `first`.
pub fn hpack_int(out: &mut Vec<u8>, first: u8, prefix_bits: u8, mut value: usize) {
    let max = (1usize << prefix_bits) - 1;
    if value < max {
        out.push(first | value as u8);
        return;
    }
    out.push(first | max as u8);
    value -= max;
    while value >= 128 {
        out.push((value % 128) as u8 | 0x80);
        value /= 128;
    }
    out.push(value as u8);
}

fn unpad(flags: u8, payload: &[u8]) -> Result<&[u8], ProtocolError> {
    if flags & PADDED == 0 {
        return Ok(payload);
    }
    let pad = *payload.first().ok_or(ProtocolError("h2-bad-padding"))? as usize;
    payload
        .get(1..payload.len().saturating_sub(pad))
        .filter(|_| pad < payload.len())
        .ok_or(ProtocolError("h2-bad-padding"))
}

fn u32_at(payload: &[u8], at: usize) -> Result<u32, ProtocolError> {
    payload
        .get(at..at + 4)
        .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or(ProtocolError("h2-short-frame"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut c = ClientConnection::<()>::new(1);
        c.out.clear();
        c.frame(kind, flags, stream, payload);
        c.out
    }

    /// The request block decodes, with an HPACK decoder, to the GET it names.
    #[test]
    fn a_request_block_decodes_to_its_get() {
        let long = format!("/{}", "x".repeat(300));
        for path in ["/", "/index.html", long.as_str()] {
            let block = request_block("https", "a.test:8443", path);
            let mut got: Vec<(String, String)> = Vec::new();
            hpack::Decoder::default()
                .decode(&block, |n, v| {
                    got.push((
                        String::from_utf8(n.to_vec()).unwrap(),
                        String::from_utf8(v.to_vec()).unwrap(),
                    ))
                })
                .unwrap();
            let want = [
                (":method", "GET"),
                (":scheme", "https"),
                (":path", path),
                (":authority", "a.test:8443"),
                ("user-agent", "spdylab-bench"),
            ];
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect();
            assert_eq!(got, want);
        }
    }

    /// Preface and SETTINGS first; a response cut anywhere, with padding, a
    /// CONTINUATION and a server's dynamic-table entry reused, is counted
    /// whole; SETTINGS and PING are acknowledged; a GOAWAY loses the streams above its last.
    #[test]
    fn responses_cut_anywhere_are_counted_whole() {
        // The server's blocks: ":status" by its static name, "x-server"
        // as a new name, both indexed (literal with incremental indexing).
        let indexed_literal = |status: &str| {
            let mut b = vec![0x48, status.len() as u8];
            b.extend_from_slice(status.as_bytes());
            b.extend_from_slice(&[0x40, 8]);
            b.extend_from_slice(b"x-server");
            b.extend_from_slice(&[4]);
            b.extend_from_slice(b"test");
            b
        };
        let mut server = Vec::new();
        server.extend(frame(SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 2]));
        // Stream 1: HEADERS split by a CONTINUATION, then padded DATA.
        let h1 = indexed_literal("200");
        server.extend(frame(HEADERS, 0, 1, &h1[..2]));
        server.extend(frame(CONTINUATION, END_HEADERS, 1, &h1[2..]));
        let mut padded = vec![3];
        padded.extend_from_slice(&[7u8; 100]);
        padded.extend_from_slice(&[0; 3]);
        server.extend(frame(DATA, PADDED, 1, &padded));
        server.extend(frame(DATA, END_STREAM, 1, &[7u8; 12]));
        server.extend(frame(PING, 0, 0, b"12345678"));
        // Stream 3: the dynamic-table entry again, a 404, no body.
        // The second response: ":status 404" from the static table, x-server
        // from the dynamic one (62: the newest of stream 1's two entries).
        let h3 = vec![0x8d, 0x80 | 62];
        server.extend(frame(HEADERS, END_HEADERS | END_STREAM, 3, &h3));
        server.extend(frame(GOAWAY, 0, 0, &[0, 0, 0, 3, 0, 0, 0, 0]));
        for cut in [1, 7, 9, 10, 50, server.len()] {
            let mut c = ClientConnection::new(8);
            c.out.clear();
            for req in 0..3 {
                c.request(req, &request_block("http", "a.test", "/"));
            }
            c.out.clear();
            for piece in server.chunks(cut) {
                c.receive(piece).unwrap();
            }
            let events: Vec<Event<i32>> = std::iter::from_fn(|| c.poll_event()).collect();
            assert_eq!(
                events,
                vec![
                    Event::Done {
                        req: 0,
                        status: 200,
                        body: 112
                    },
                    Event::Done {
                        req: 1,
                        status: 404,
                        body: 0
                    },
                    Event::GoAway {
                        last_stream: 3,
                        code: 0
                    },
                    Event::Lost(2),
                ],
                "cut {cut}"
            );
            assert_eq!(c.max_open(), 2);
            assert!(c.going_away());
            let mut acks = frame(SETTINGS, ACK, 0, &[]);
            acks.extend(frame(PING, ACK, 0, b"12345678"));
            assert_eq!(c.out, acks, "cut {cut}");
        }
    }

    /// A server's malformed frames are errors, never panics.
    #[test]
    fn malformed_frames_are_errors() {
        let cases: Vec<Vec<u8>> = vec![
            frame(PUSH_PROMISE, END_HEADERS, 1, &[0, 0, 0, 2]),
            frame(RST_STREAM, 0, 1, &[0, 0]),
            frame(DATA, PADDED, 1, &[5, 1, 2]),
            frame(CONTINUATION, END_HEADERS, 1, &[0x88]),
            frame(HEADERS, END_HEADERS, 1, &[0xff, 0xff, 0xff, 0xff]),
            {
                let mut f = frame(DATA, 0, 1, &[]);
                f[..3].copy_from_slice(&[0x10, 0, 1]);
                f
            },
        ];
        for bytes in cases {
            let mut c = ClientConnection::new(8);
            c.request(0u8, &request_block("http", "a.test", "/"));
            assert!(c.receive(&bytes).is_err(), "{bytes:?}");
        }
    }
}
