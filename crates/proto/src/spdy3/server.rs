//! The server side of a SPDY/3.1 session, sans-I/O: bytes in, the requests
//! of the streams it accepted out (a POST's, or any request's other than a
//! GET or HEAD that has a body, once its last DATA arrived, with its body);
//! responses in, bytes out (`ServerSession`).
//! It advertises the concurrent-stream limit in SETTINGS and refuses streams
//! beyond it (RST_STREAM REFUSED_STREAM); sends responses by priority (0 first,
//! as mod_spdy did), round robin within a priority, in DATA frames of at most
//! 16 KiB, never beyond the stream's or the session's window; gives back the
//! windows of request bodies; answers hostile input with RST_STREAM or GOAWAY,
//! never a panic. Server push (`push`): a SYN_STREAM of the server's (even
//! id, unidirectional, associated with the client's stream, carrying the
//! pushed URL's `:scheme`, `:host` and `:path`), its response headers in a
//! HEADERS frame and its body scheduled as any response's, as SPDY/3 §3.3
//! says; the client cancels one with RST_STREAM. Pushed streams do not count
//! against the client's stream limit. It has no timers, so it takes no `now`. The built-in server
//! (`server::protocols::spdy3`) runs it over a connection.

use super::{rst, settings, Decoder, Encoder, Frame, Headers, INITIAL_WINDOW};
use crate::flow::{RecvWindow, SendWindow};
use bytes::Bytes;
use std::collections::{BTreeMap, HashMap};

/// Largest DATA frame we send.
const CHUNK: usize = 16 * 1024;

/// GOAWAY status codes (SPDY/3 §2.6.6).
const GOAWAY_PROTOCOL_ERROR: u32 = 1;

/// The largest request body kept; a larger one resets its stream (CANCEL).
pub const MAX_REQUEST_BODY: usize = 1 << 20;

/// A request the session accepted: the content of its SYN_STREAM, and its
/// body (empty for a GET or HEAD: their DATA, if any, is not kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub stream_id: u32,
    pub headers: Headers,
    pub body: Vec<u8>,
}

/// A response on its way out.
struct Outgoing {
    head: Option<Headers>,
    body: Bytes,
    sent: usize,
}

/// A stream the client opened and whose response has not ended.
struct Stream {
    priority: u8,
    send: SendWindow,
    recv: RecvWindow,
    out: Option<Outgoing>,
    /// A request held until its body has arrived: its headers and the body so far.
    upload: Option<(Headers, Vec<u8>)>,
    /// A stream the server opened (a push): its response headers go in a
    /// HEADERS frame, not a SYN_REPLY.
    pushed: bool,
}

impl Stream {
    /// Whether it has something to write now, given the session's window.
    fn can_write(&self, session: &SendWindow) -> bool {
        match &self.out {
            Some(o) if o.head.is_some() => true,
            Some(o) => {
                o.sent < o.body.len() && self.send.available() > 0 && session.available() > 0
            }
            None => false,
        }
    }
}

/// One SPDY/3.1 session, server side.
pub struct ServerSession {
    dec: Decoder,
    enc: Encoder,
    out: Vec<u8>,
    max_streams: u32,
    streams: HashMap<u32, Stream>,
    /// Streams with a response to write, by (priority, turn).
    queue: BTreeMap<(u8, u64), u32>,
    turn: u64,
    send: SendWindow,
    recv: RecvWindow,
    /// The client's SETTINGS_INITIAL_WINDOW_SIZE (for our sending).
    initial_send: u32,
    last_stream: u32,
    going_away: bool,
    failed: Option<String>,
    /// Every stream at one priority: round robin by arrival
    /// (`--server-priorities off`).
    ignore_priorities: bool,
    /// The id of the next pushed stream (even: the server's).
    next_push: u32,
}

impl ServerSession {
    /// A session that allows `max_streams` concurrent streams (its SETTINGS are
    /// the first bytes out).
    pub fn new(max_streams: u32) -> ServerSession {
        let mut s = ServerSession {
            dec: Decoder::default(),
            enc: Encoder::default(),
            out: Vec::with_capacity(64 * 1024),
            max_streams,
            streams: HashMap::new(),
            queue: BTreeMap::new(),
            turn: 0,
            send: SendWindow::new(INITIAL_WINDOW),
            recv: RecvWindow::new(INITIAL_WINDOW),
            initial_send: INITIAL_WINDOW,
            last_stream: 0,
            going_away: false,
            failed: None,
            ignore_priorities: false,
            next_push: 2,
        };
        s.enc.encode(
            &Frame::Settings {
                clear: false,
                entries: vec![(0, settings::MAX_CONCURRENT_STREAMS, max_streams)],
            },
            &mut s.out,
        );
        s
    }

    /// Schedules every response at one priority, round robin by arrival, as
    /// a server that ignores SPDY's priorities (`--server-priorities off`).
    pub fn ignore_priorities(&mut self) {
        self.ignore_priorities = true;
    }

    /// Bytes to write to the client; the caller clears it once written.
    pub fn output(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// Streams open (accepted and not finished).
    pub fn open_streams(&self) -> usize {
        self.streams.len()
    }

    /// Why the session ended with an error (a GOAWAY is in the output).
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Whether the connection should close once the output is written.
    pub fn finished(&self) -> bool {
        self.failed.is_some() || (self.going_away && self.streams.is_empty())
    }

    fn session_error(&mut self, why: String) {
        if self.failed.is_none() {
            self.enc.encode(
                &Frame::GoAway {
                    last_good_stream_id: self.last_stream,
                    status: GOAWAY_PROTOCOL_ERROR,
                },
                &mut self.out,
            );
            self.failed = Some(why);
        }
    }

    fn reset(&mut self, stream_id: u32, status: u32) {
        self.enc
            .encode(&Frame::RstStream { stream_id, status }, &mut self.out);
        self.streams.remove(&stream_id);
        self.queue.retain(|_, id| *id != stream_id);
    }

    /// Bytes from the client: the requests of the streams accepted.
    pub fn receive(&mut self, bytes: &[u8]) -> Vec<Request> {
        let mut requests = Vec::new();
        if self.failed.is_some() {
            return requests;
        }
        self.dec.feed(bytes);
        loop {
            let frame = match self.dec.next_frame() {
                Ok(Some(f)) => f,
                Ok(None) => break,
                Err(e) => {
                    self.session_error(e.to_string());
                    break;
                }
            };
            self.frame(frame, &mut requests);
            if self.failed.is_some() {
                break;
            }
        }
        requests
    }

    fn frame(&mut self, frame: Frame, requests: &mut Vec<Request>) {
        match frame {
            Frame::SynStream {
                stream_id,
                priority,
                headers,
                fin,
                ..
            } => {
                if stream_id == 0 || stream_id <= self.last_stream {
                    return self.session_error(format!(
                        "SYN_STREAM {stream_id} after stream {}",
                        self.last_stream
                    ));
                }
                if stream_id % 2 == 0 {
                    // Even ids are the server's.
                    return self.reset(stream_id, rst::PROTOCOL_ERROR);
                }
                self.last_stream = stream_id;
                let asked = self.streams.keys().filter(|&&id| id & 1 == 1).count();
                if self.going_away || asked >= self.max_streams as usize {
                    return self.reset(stream_id, rst::REFUSED_STREAM);
                }
                // A request with a body (a POST) waits for its last DATA.
                let method = headers.iter().find(|(n, _)| n == ":method");
                let bodiless = method.is_some_and(|(_, m)| m == "GET" || m == "HEAD");
                let (upload, now) = if fin || bodiless {
                    (None, Some(headers))
                } else {
                    (Some((headers, Vec::new())), None)
                };
                self.streams.insert(
                    stream_id,
                    Stream {
                        priority,
                        send: SendWindow::new(self.initial_send),
                        recv: RecvWindow::new(INITIAL_WINDOW),
                        out: None,
                        upload,
                        pushed: false,
                    },
                );
                if let Some(headers) = now {
                    requests.push(Request {
                        stream_id,
                        headers,
                        body: Vec::new(),
                    });
                }
            }
            Frame::WindowUpdate {
                stream_id: 0,
                delta,
            } => {
                if self.send.grow(delta).is_err() {
                    self.session_error("the session window overflowed".into());
                }
            }
            Frame::WindowUpdate { stream_id, delta } => {
                // A stream already finished may still get updates: ignored.
                let overflow = self
                    .streams
                    .get_mut(&stream_id)
                    .is_some_and(|s| s.send.grow(delta).is_err());
                if overflow {
                    self.reset(stream_id, rst::FLOW_CONTROL_ERROR);
                }
            }
            Frame::Settings { entries, .. } => {
                for (_, id, value) in entries {
                    if id == settings::INITIAL_WINDOW_SIZE {
                        if value > crate::flow::MAX_WINDOW as u32 {
                            return self.session_error(format!(
                                "SETTINGS_INITIAL_WINDOW_SIZE {value} is over 2^31-1"
                            ));
                        }
                        let delta = value as i64 - self.initial_send as i64;
                        self.initial_send = value;
                        for s in self.streams.values_mut() {
                            s.send.adjust(delta);
                        }
                    }
                }
            }
            // Pings the client started (odd ids) come back; ours (even) we never sent.
            Frame::Ping { id } if id % 2 == 1 => {
                self.enc.encode(&Frame::Ping { id }, &mut self.out)
            }
            Frame::Ping { .. } => {}
            Frame::RstStream { stream_id, .. } => {
                self.streams.remove(&stream_id);
                self.queue.retain(|_, id| *id != stream_id);
            }
            Frame::GoAway { .. } => self.going_away = true,
            Frame::Data {
                stream_id,
                fin,
                data,
            } => {
                // Request bodies are kept for their request (GET's are
                // dropped); their windows are given back.
                match self.recv.received(data.len()) {
                    Ok(Some(delta)) => self.enc.encode(
                        &Frame::WindowUpdate {
                            stream_id: 0,
                            delta,
                        },
                        &mut self.out,
                    ),
                    Ok(None) => {}
                    Err(e) => return self.session_error(format!("session: {e}")),
                }
                let Some(s) = self.streams.get_mut(&stream_id) else {
                    return self.reset(stream_id, rst::INVALID_STREAM);
                };
                match s.recv.received(data.len()) {
                    Ok(Some(delta)) if !fin => self
                        .enc
                        .encode(&Frame::WindowUpdate { stream_id, delta }, &mut self.out),
                    Ok(_) => {}
                    Err(_) => return self.reset(stream_id, rst::FLOW_CONTROL_ERROR),
                }
                let Some(s) = self.streams.get_mut(&stream_id) else {
                    return;
                };
                let Some((_, body)) = s.upload.as_mut() else {
                    return;
                };
                if body.len() + data.len() > MAX_REQUEST_BODY {
                    return self.reset(stream_id, rst::CANCEL);
                }
                body.extend_from_slice(&data);
                if fin {
                    self.release(stream_id, requests);
                }
            }
            Frame::SynReply { stream_id, .. } => self.reset(stream_id, rst::PROTOCOL_ERROR),
            Frame::Headers { stream_id, fin, .. } => {
                // More request headers (trailers) on an open stream: not
                // needed, but they may end a request's body.
                if !self.streams.contains_key(&stream_id) {
                    self.reset(stream_id, rst::INVALID_STREAM);
                } else if fin {
                    self.release(stream_id, requests);
                }
            }
            Frame::Unknown { .. } => {}
        }
    }

    /// A request held for its body, complete now: out with its body.
    fn release(&mut self, stream_id: u32, requests: &mut Vec<Request>) {
        if let Some((headers, body)) = self
            .streams
            .get_mut(&stream_id)
            .and_then(|s| s.upload.take())
        {
            requests.push(Request {
                stream_id,
                headers,
                body,
            });
        }
    }

    /// The response of a stream: `head` are its headers after `:status` and
    /// `:version`. A stream reset meanwhile drops it.
    pub fn respond(&mut self, stream_id: u32, status: &str, headers: Headers, body: Bytes) {
        let Some(s) = self.streams.get_mut(&stream_id) else {
            return;
        };
        if s.out.is_some() {
            return;
        }
        let mut head: Headers = vec![
            (":status".into(), status.to_string()),
            (":version".into(), "HTTP/1.1".into()),
        ];
        head.extend(headers);
        s.out = Some(Outgoing {
            head: Some(head),
            body,
            sent: 0,
        });
        self.turn += 1;
        let priority = if self.ignore_priorities {
            0
        } else {
            s.priority
        };
        self.queue.insert((priority, self.turn), stream_id);
    }

    /// Promises a push on the client's stream `associated`, still open (its
    /// response not finished): a SYN_STREAM (even id, unidirectional,
    /// associated, `priority` 0..=7) carrying `url` — the pushed resource's
    /// `:scheme`, `:host` and `:path` — goes into the output now. Its
    /// response comes by `respond` with the id returned, its headers in a
    /// HEADERS frame. None when the associated stream is gone, the session
    /// is ending or out of ids.
    pub fn push(&mut self, associated: u32, priority: u8, url: Headers) -> Option<u32> {
        if self.failed.is_some()
            || self.going_away
            || associated & 1 == 0
            || !self.streams.contains_key(&associated)
            || self.next_push > 0x7fff_fffe
        {
            return None;
        }
        let id = self.next_push;
        self.next_push += 2;
        let priority = priority.min(7);
        self.enc.encode(
            &Frame::SynStream {
                stream_id: id,
                associated_to: associated,
                priority,
                fin: false,
                unidirectional: true,
                headers: url,
            },
            &mut self.out,
        );
        self.streams.insert(
            id,
            Stream {
                priority,
                send: SendWindow::new(self.initial_send),
                recv: RecvWindow::new(INITIAL_WINDOW),
                out: None,
                upload: None,
                pushed: true,
            },
        );
        Some(id)
    }

    /// Whether `write` would produce frames now.
    pub fn can_write(&self) -> bool {
        self.failed.is_none()
            && self
                .queue
                .values()
                .any(|id| self.streams[id].can_write(&self.send))
    }

    /// Moves response frames into the output, about `budget` bytes of DATA at
    /// most: the highest priority that can go first, round robin within one.
    pub fn write(&mut self, budget: usize) {
        let mut left = budget;
        while left > 0 && self.failed.is_none() {
            let Some((&key, &id)) = self
                .queue
                .iter()
                .find(|(_, id)| self.streams[id].can_write(&self.send))
            else {
                break;
            };
            self.queue.remove(&key);
            let s = self.streams.get_mut(&id).expect("queued streams are open");
            let o = s.out.as_mut().expect("queued streams have a response");
            let fin = if let Some(headers) = o.head.take() {
                let fin = o.body.is_empty();
                let frame = match s.pushed {
                    true => Frame::Headers {
                        stream_id: id,
                        fin,
                        headers,
                    },
                    false => Frame::SynReply {
                        stream_id: id,
                        fin,
                        headers,
                    },
                };
                self.enc.encode(&frame, &mut self.out);
                fin
            } else {
                let n = (o.body.len() - o.sent)
                    .min(CHUNK)
                    .min(s.send.available())
                    .min(self.send.available());
                let fin = o.sent + n == o.body.len();
                Encoder::data_head(id, fin, n, &mut self.out);
                self.out.extend_from_slice(&o.body[o.sent..o.sent + n]);
                o.sent += n;
                s.send.consume(n);
                self.send.consume(n);
                left -= n.min(left);
                fin
            };
            if fin {
                self.streams.remove(&id);
            } else {
                self.turn += 1;
                self.queue.insert((key.0, self.turn), id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! The session driven by a client made of our codec, in memory.
    use super::*;

    struct Client {
        enc: Encoder,
        dec: Decoder,
    }

    impl Client {
        fn new() -> Client {
            Client {
                enc: Encoder::default(),
                dec: Decoder::default(),
            }
        }

        fn send(&mut self, s: &mut ServerSession, frames: &[Frame]) -> Vec<Request> {
            let mut bytes = Vec::new();
            for f in frames {
                self.enc.encode(f, &mut bytes);
            }
            s.receive(&bytes)
        }

        /// What the server wrote since last time.
        fn frames(&mut self, s: &mut ServerSession) -> Vec<Frame> {
            let out = s.output();
            self.dec.feed(out);
            out.clear();
            let mut frames = Vec::new();
            while let Some(f) = self
                .dec
                .next_frame()
                .expect("the server writes valid frames")
            {
                frames.push(f);
            }
            frames
        }
    }

    fn get(stream_id: u32, priority: u8, path: &str) -> Frame {
        Frame::SynStream {
            stream_id,
            associated_to: 0,
            priority,
            fin: true,
            unidirectional: false,
            headers: vec![
                (":method".into(), "GET".into()),
                (":path".into(), path.into()),
                (":version".into(), "HTTP/1.1".into()),
                (":host".into(), "www.example.test".into()),
                (":scheme".into(), "https".into()),
            ],
        }
    }

    fn data_of(frames: &[Frame], id: u32) -> (usize, bool) {
        frames.iter().fold((0, false), |(n, fin), f| match f {
            Frame::Data {
                stream_id,
                fin: f,
                data,
            } if *stream_id == id => (n + data.len(), fin || *f),
            _ => (n, fin),
        })
    }

    fn post(stream_id: u32, path: &str) -> Frame {
        let Frame::SynStream { headers, .. } = get(stream_id, 0, path) else {
            unreachable!("get builds a SYN_STREAM")
        };
        Frame::SynStream {
            stream_id,
            associated_to: 0,
            priority: 0,
            fin: false,
            unidirectional: false,
            headers: headers
                .into_iter()
                .map(|(n, v)| match n.as_str() {
                    ":method" => (n, "POST".into()),
                    _ => (n, v),
                })
                .collect(),
        }
    }

    #[test]
    fn a_post_is_out_once_its_body_is_in_with_its_body() {
        let mut s = ServerSession::new(100);
        let mut c = Client::new();
        c.frames(&mut s);
        let data = |stream_id, fin, n: usize| Frame::Data {
            stream_id,
            fin,
            data: vec![b'p'; n],
        };
        assert!(c.send(&mut s, &[post(1, "/track")]).is_empty());
        // A GET without FIN is out at once, its DATA dropped.
        let mut open_get = get(3, 0, "/");
        if let Frame::SynStream { fin, .. } = &mut open_get {
            *fin = false;
        }
        let got = c.send(&mut s, &[data(1, false, 40_000), open_get]);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].stream_id, got[0].body.len()), (3, 0));
        // Half the window used: given back, so the client can go on.
        assert!(c.frames(&mut s).contains(&Frame::WindowUpdate {
            stream_id: 1,
            delta: 40_000
        }));
        let got = c.send(&mut s, &[data(3, true, 10), data(1, true, 2_000)]);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].stream_id, 1);
        assert_eq!(got[0].body, vec![b'p'; 42_000]);
        // Too large a body resets its stream.
        c.send(&mut s, &[post(5, "/big")]);
        for _ in 0..MAX_REQUEST_BODY / 32_768 {
            c.send(&mut s, &[data(5, false, 32_768)]);
            c.frames(&mut s);
        }
        assert!(c.send(&mut s, &[data(5, true, 1)]).is_empty());
        assert!(c.frames(&mut s).contains(&Frame::RstStream {
            stream_id: 5,
            status: rst::CANCEL
        }));
    }

    #[test]
    fn settings_first_then_excess_streams_refused() {
        let mut s = ServerSession::new(2);
        let mut c = Client::new();
        assert_eq!(
            c.frames(&mut s),
            vec![Frame::Settings {
                clear: false,
                entries: vec![(0, settings::MAX_CONCURRENT_STREAMS, 2)]
            }]
        );
        let reqs = c.send(&mut s, &[get(1, 0, "/"), get(3, 1, "/a"), get(5, 1, "/b")]);
        assert_eq!(reqs.iter().map(|r| r.stream_id).collect::<Vec<_>>(), [1, 3]);
        assert_eq!(
            c.frames(&mut s),
            vec![Frame::RstStream {
                stream_id: 5,
                status: rst::REFUSED_STREAM
            }]
        );
        // Once a response ends, a new stream is accepted.
        s.respond(1, "200 OK", vec![], b"hi".to_vec().into());
        s.write(usize::MAX);
        assert_eq!(s.open_streams(), 1);
        let reqs = c.send(&mut s, &[get(7, 1, "/b")]);
        assert_eq!(reqs.len(), 1);
        assert_eq!(s.open_streams(), 2);
    }

    #[test]
    fn a_response_beyond_the_window_waits_for_window_updates() {
        let mut s = ServerSession::new(100);
        let mut c = Client::new();
        c.frames(&mut s);
        c.send(&mut s, &[get(1, 0, "/"), get(3, 0, "/b")]);
        // An update that arrives before the response is ready still counts.
        c.send(
            &mut s,
            &[Frame::WindowUpdate {
                stream_id: 3,
                delta: 10_000,
            }],
        );
        s.respond(1, "200 OK", vec![], Bytes::from(vec![1u8; 200_000]));
        s.respond(3, "200 OK", vec![], Bytes::from(vec![3u8; 100_000]));
        s.write(usize::MAX);
        let f = c.frames(&mut s);
        // The session's 64 KiB window is all that went.
        assert_eq!(data_of(&f, 1).0 + data_of(&f, 3).0, 65_536);
        assert!(!s.can_write());
        // More session window: stream 1 is stuck at its own 64 KiB, stream 3 has 74 KiB.
        c.send(
            &mut s,
            &[Frame::WindowUpdate {
                stream_id: 0,
                delta: 1_000_000,
            }],
        );
        s.write(usize::MAX);
        let g = c.frames(&mut s);
        let total = |id| data_of(&f, id).0 + data_of(&g, id).0;
        assert_eq!(total(1), 65_536);
        assert_eq!(total(3), 75_536);
        c.send(
            &mut s,
            &[
                Frame::WindowUpdate {
                    stream_id: 1,
                    delta: 200_000,
                },
                Frame::WindowUpdate {
                    stream_id: 3,
                    delta: 30_000,
                },
            ],
        );
        s.write(usize::MAX);
        let h = c.frames(&mut s);
        assert_eq!(data_of(&h, 1), (200_000 - 65_536, true));
        assert_eq!(data_of(&h, 3), (100_000 - 75_536, true));
        assert_eq!(s.open_streams(), 0);
    }

    #[test]
    fn higher_priorities_go_first_and_frames_stay_small() {
        let mut s = ServerSession::new(100);
        let mut c = Client::new();
        c.frames(&mut s);
        c.send(
            &mut s,
            &[
                get(1, 7, "/img"),
                get(3, 0, "/"),
                Frame::WindowUpdate {
                    stream_id: 0,
                    delta: 100_000,
                },
            ],
        );
        s.respond(1, "200 OK", vec![], Bytes::from(vec![1u8; 40_000]));
        s.respond(3, "200 OK", vec![], Bytes::from(vec![3u8; 40_000]));
        s.write(usize::MAX);
        let f = c.frames(&mut s);
        let order: Vec<u32> = f
            .iter()
            .filter_map(|f| match f {
                Frame::Data {
                    stream_id, data, ..
                } => {
                    assert!(data.len() <= CHUNK);
                    Some(*stream_id)
                }
                _ => None,
            })
            .collect();
        assert_eq!(order, [3, 3, 3, 1, 1, 1]);
    }

    #[test]
    fn settings_change_stream_windows_and_pings_come_back() {
        let mut s = ServerSession::new(100);
        let mut c = Client::new();
        c.frames(&mut s);
        c.send(
            &mut s,
            &[
                Frame::Settings {
                    clear: false,
                    entries: vec![(0, settings::INITIAL_WINDOW_SIZE, 1000)],
                },
                get(1, 0, "/"),
                Frame::Ping { id: 1 },
                Frame::Ping { id: 2 },
            ],
        );
        s.respond(1, "200 OK", vec![], Bytes::from(vec![1u8; 5000]));
        s.write(usize::MAX);
        let f = c.frames(&mut s);
        assert!(f.contains(&Frame::Ping { id: 1 }));
        assert!(!f.contains(&Frame::Ping { id: 2 }));
        assert_eq!(data_of(&f, 1), (1000, false));
    }

    #[test]
    fn hostile_input_ends_in_goaway_or_rst_never_a_panic() {
        // A zlib bomb in a header block.
        let mut s = ServerSession::new(100);
        let mut bomb = Vec::new();
        let big = "x".repeat(1 << 20);
        Encoder::default().encode(
            &Frame::SynStream {
                stream_id: 1,
                associated_to: 0,
                priority: 0,
                fin: true,
                unidirectional: false,
                headers: vec![("a".into(), big)],
            },
            &mut bomb,
        );
        assert!(bomb.len() < 16 * 1024);
        assert!(s.receive(&bomb).is_empty());
        assert!(s.finished());
        assert!(s.failure().unwrap().contains("inflates"));
        let mut c = Client::new();
        let f = c.frames(&mut s);
        assert_eq!(
            f.last(),
            Some(&Frame::GoAway {
                last_good_stream_id: 0,
                status: GOAWAY_PROTOCOL_ERROR
            })
        );
        // Streams out of order, DATA beyond the window, window overflow.
        let mut s = ServerSession::new(100);
        let mut c = Client::new();
        c.send(&mut s, &[get(5, 0, "/"), get(3, 0, "/")]);
        assert!(s.finished());
        let mut s = ServerSession::new(100);
        let mut c = Client::new();
        c.frames(&mut s);
        c.send(
            &mut s,
            &[
                get(1, 0, "/"),
                Frame::WindowUpdate {
                    stream_id: 1,
                    delta: 0x7fff_ffff,
                },
                Frame::Data {
                    stream_id: 9,
                    fin: false,
                    data: vec![0; 10],
                },
            ],
        );
        assert_eq!(
            c.frames(&mut s),
            vec![
                Frame::RstStream {
                    stream_id: 1,
                    status: rst::FLOW_CONTROL_ERROR
                },
                Frame::RstStream {
                    stream_id: 9,
                    status: rst::INVALID_STREAM
                }
            ]
        );
        assert!(!s.finished());
        c.send(
            &mut s,
            &[Frame::Data {
                stream_id: 9,
                fin: false,
                data: vec![0; 70_000],
            }],
        );
        assert!(s.finished(), "DATA beyond the session window");
    }

    /// A push: SYN_STREAM (even id, unidirectional, associated with the
    /// page's stream) before the page's reply, its headers in a HEADERS
    /// frame, its body by priority; the client may cancel it; pushes take no
    /// slot of the client's stream limit.
    #[test]
    fn a_pushed_stream_is_promised_then_answered_with_headers_and_cancellable() {
        let mut s = ServerSession::new(1);
        let mut c = Client::new();
        c.frames(&mut s);
        let reqs = c.send(&mut s, &[get(1, 0, "/")]);
        assert_eq!(reqs.len(), 1);
        let url = |p: &str| -> Headers {
            vec![
                (":scheme".into(), "https".into()),
                (":host".into(), "www.example.test".into()),
                (":path".into(), p.into()),
            ]
        };
        let a = s.push(1, 0, url("/a.css")).unwrap();
        let b = s.push(1, 3, url("/b.png")).unwrap();
        assert_eq!((a, b), (2, 4));
        assert_eq!(s.push(3, 0, url("/x")), None, "no such stream");
        assert_eq!(s.push(2, 0, url("/x")), None, "not on a pushed stream");
        s.respond(1, "200 OK", vec![], Bytes::from_static(b"page"));
        s.respond(a, "200 OK", vec![], Bytes::from_static(b"css"));
        s.respond(b, "200 OK", vec![], Bytes::from(vec![7u8; 100]));
        s.write(1 << 20);
        let frames = c.frames(&mut s);
        match &frames[0] {
            Frame::SynStream {
                stream_id: 2,
                associated_to: 1,
                unidirectional: true,
                fin: false,
                headers,
                ..
            } => assert!(headers.contains(&(":path".into(), "/a.css".into()))),
            f => panic!("{f:?}"),
        }
        assert!(matches!(
            frames[1],
            Frame::SynStream {
                stream_id: 4,
                priority: 3,
                ..
            }
        ));
        assert!(frames
            .iter()
            .any(|f| matches!(f, Frame::SynReply { stream_id: 1, .. })));
        assert!(frames
            .iter()
            .any(|f| matches!(f, Frame::Headers { stream_id: 2, .. })));
        assert!(!frames.iter().any(|f| matches!(
            f,
            Frame::SynReply {
                stream_id: 2 | 4,
                ..
            }
        )));
        assert_eq!(data_of(&frames, 2), (3, true));
        assert_eq!(data_of(&frames, 4), (100, true));

        // A cancelled push sends no more; the client's next stream is taken
        // though pushes are open (the limit is 1).
        let reqs = c.send(&mut s, &[get(3, 0, "/next")]);
        assert_eq!(reqs.len(), 1);
        let p = s.push(3, 3, url("/big.png")).unwrap();
        s.respond(p, "200 OK", vec![], Bytes::from(vec![1u8; 40_000]));
        s.write(16 * 1024);
        c.frames(&mut s);
        c.send(
            &mut s,
            &[Frame::RstStream {
                stream_id: p,
                status: rst::CANCEL,
            }],
        );
        s.write(1 << 20);
        assert_eq!(data_of(&c.frames(&mut s), p), (0, false));
    }
}
