//! The client side of a SPDY/3.1 session, sans-I/O (`ClientSession`): the
//! caller queues requests (its own tag, a priority, the header block and, for
//! a POST, a body: sent in DATA frames after a SYN_STREAM without FIN, within
//! the server's windows for the stream and the session),
//! starts what the server's MAX_CONCURRENT_STREAMS allows (highest priority
//! first, in order within one; a refused stream is queued again or reported,
//! as the caller chose), feeds the bytes that arrive and polls events out:
//! each request sent, its head, its body, its end or why it failed. Receive
//! windows (the one given to `new`, for the session and each stream; new in
//! 3.1 for the session) are kept open with WINDOW_UPDATEs; a server that
//! overruns them gets RST_STREAM or GOAWAY with FLOW_CONTROL_ERROR. The
//! session has no timers (timeouts are the caller's), so it takes no `now`.
//! One session for the browser model, the load users, `fetch_spdy3` and bench.
//!
//! Server push (SPDY/3 §3.3), for a caller that asks for it
//! (`accept_pushes`; otherwise a server's SYN_STREAM is ignored, as
//! before): a unidirectional SYN_STREAM on an even stream, associated to a
//! request's stream still open, naming `:scheme`, `:host` and `:path`, is
//! told as `PushEvent::Promised`; its `:status` (in the SYN_STREAM or a later
//! HEADERS frame), body and end follow as `PushEvent`s, under the receive
//! window of any stream. One without a valid associated stream is reset
//! (INVALID_STREAM, as Chromium), one without its URL or not unidirectional
//! too (PROTOCOL_ERROR); `cancel_push` resets one with CANCEL.

use super::{rst, settings, Decoder, Encoder, Error, Frame, Headers, Limits, INITIAL_WINDOW};
use crate::flow::{FlowError, RecvWindow, SendWindow};
use std::collections::{HashMap, VecDeque};

/// GOAWAY status PROTOCOL_ERROR (SPDY/3 §2.6.6).
const GOAWAY_PROTOCOL_ERROR: u32 = 1;

/// Largest DATA frame of a request body.
const CHUNK: usize = 16 * 1024;

/// What the session tells its caller. `T` is the caller's tag of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<T> {
    /// The request went out (its SYN_STREAM is in the output).
    Sent(T),
    /// The response's SYN_REPLY: its status code (0 if it has none) and headers.
    Head {
        req: T,
        status: u16,
        headers: Headers,
    },
    /// Body bytes (never empty).
    Data { req: T, data: Vec<u8> },
    /// The response is complete.
    Done(T),
    /// The server refused the stream (over its limit) and the session was made
    /// not to send it again.
    Refused(T),
    /// The request failed.
    Failed { req: T, error: StreamError },
    /// The server said GOAWAY (its requests above `last_good_stream_id` fail).
    GoAway {
        last_good_stream_id: u32,
        status: u32,
    },
}

/// What the session tells of a server's pushes (`accept_pushes`): each by
/// the server's stream id. `T` is the tag of the request it is associated to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushEvent<T> {
    /// A push on `assoc`'s stream: its SYN_STREAM's headers (`:scheme`,
    /// `:host`, `:path` among them).
    Promised {
        assoc: T,
        stream_id: u32,
        headers: Headers,
    },
    /// Its response's status (0 if none came before its body) and headers.
    Head {
        stream_id: u32,
        status: u16,
        headers: Headers,
    },
    /// Body bytes (never empty).
    Data { stream_id: u32, data: Vec<u8> },
    /// It is complete.
    Done(u32),
    /// The server reset it (with this status), or it overran its window
    /// (FLOW_CONTROL_ERROR, we reset it).
    Reset { stream_id: u32, status: u32 },
}

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamError {
    /// The server reset the stream (RST_STREAM with this status).
    Reset(u32),
    /// The server sent beyond the stream's window (we reset it).
    Window(FlowError),
    /// The server went away before processing it (GOAWAY, with its status if
    /// the request was in flight).
    GoneAway(Option<u32>),
    /// The session failed (we sent GOAWAY): every request on it fails.
    Session(SessionError),
    /// The server refused the stream this many times (REFUSED_STREAM), or
    /// allows no stream at all (MAX_CONCURRENT_STREAMS 0).
    Refused(u32),
}

/// The status code of a `:status` header (`200` or `200 OK`).
fn status_of(headers: &Headers) -> Option<u16> {
    headers
        .iter()
        .find(|(k, _)| k == ":status")
        .and_then(|(_, v)| v.split(' ').next().and_then(|c| c.parse().ok()))
}

/// Why a session failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionError {
    /// A frame that does not decode.
    Frame(Error),
    /// DATA beyond the session's window.
    Window(FlowError),
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamError::Reset(status) => {
                write!(f, "stream reset by the server (status {status})")
            }
            StreamError::Window(e) => write!(f, "stream window: {e}"),
            StreamError::Refused(0) => {
                f.write_str("the server allows no stream (SETTINGS MAX_CONCURRENT_STREAMS 0)")
            }
            StreamError::Refused(n) => write!(f, "the server refused the stream {n} times"),
            StreamError::GoneAway(Some(status)) => {
                write!(f, "the server went away (GOAWAY status {status})")
            }
            StreamError::GoneAway(None) => f.write_str("the server went away (GOAWAY)"),
            StreamError::Session(e) => e.fmt(f),
        }
    }
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::Frame(e) => write!(f, "SPDY: {e}"),
            SessionError::Window(e) => write!(f, "SPDY session window: {e}"),
        }
    }
}

impl std::error::Error for StreamError {}
impl std::error::Error for SessionError {}

struct Queued<T> {
    req: T,
    priority: u8,
    /// The order the request was asked in: within one priority, the first
    /// asked goes first, a refused one too.
    seq: u64,
    /// Times the server refused it so far.
    refusals: u32,
    headers: Headers,
    /// The request body (None: the SYN_STREAM ends the request).
    body: Option<Vec<u8>>,
}

/// A pushed stream, once promised.
struct Pushed {
    window: RecvWindow,
    /// Its status was told.
    head: bool,
}

struct Stream<T> {
    req: T,
    priority: u8,
    seq: u64,
    refusals: u32,
    headers: Headers,
    window: RecvWindow,
    /// The request body (kept whole, to be sent again if the stream is
    /// refused), the bytes of it sent, and what the server lets us send.
    body: Option<Vec<u8>>,
    sent: usize,
    send: SendWindow,
}

/// One SPDY/3.1 session, client side.
pub struct ClientSession<T> {
    dec: Decoder,
    enc: Encoder,
    out: Vec<u8>,
    events: VecDeque<Event<T>>,
    window: u32,
    session_window: RecvWindow,
    /// What the server lets us send: on the session, and on a new stream
    /// (its SETTINGS_INITIAL_WINDOW_SIZE).
    session_send: SendWindow,
    initial_send: u32,
    /// The server's MAX_CONCURRENT_STREAMS (lowered when it refuses a stream
    /// without having announced one).
    limit: usize,
    /// The server announced its limit by SETTINGS: a refusal is then a race
    /// (the server still counting a stream we saw end, or its SETTINGS on the
    /// way while we sent), not news about the limit, and does not lower it.
    limit_announced: bool,
    /// The caller's own limit on streams open at once.
    cap: usize,
    retry_refused: bool,
    queue: VecDeque<Queued<T>>,
    open: HashMap<u32, Stream<T>>,
    next_id: u32,
    /// The next request's place in the order asked.
    next_seq: u64,
    going_away: bool,
    failed: Option<SessionError>,
    /// Pushes are accepted (`accept_pushes`).
    push: bool,
    pushed: HashMap<u32, Pushed>,
    push_events: VecDeque<PushEvent<T>>,
}

impl<T: Copy> ClientSession<T> {
    /// A session whose receive window, for itself and each stream, is `window`
    /// (at least SPDY's 64 KiB; a larger one is announced by SETTINGS and a
    /// session WINDOW_UPDATE, the first bytes out).
    pub fn new(window: u32) -> ClientSession<T> {
        let window = window.max(INITIAL_WINDOW);
        let mut enc = Encoder::default();
        let mut out = Vec::new();
        if window > INITIAL_WINDOW {
            enc.encode(
                &Frame::Settings {
                    clear: false,
                    entries: vec![(0, settings::INITIAL_WINDOW_SIZE, window)],
                },
                &mut out,
            );
            enc.encode(
                &Frame::WindowUpdate {
                    stream_id: 0,
                    delta: window - INITIAL_WINDOW,
                },
                &mut out,
            );
        }
        ClientSession {
            // A server may send a DATA frame as long as the window it has.
            dec: Decoder::new(Limits {
                max_frame: Limits::default().max_frame.max(window as usize),
                ..Limits::default()
            }),
            enc,
            out,
            events: VecDeque::new(),
            window,
            session_window: RecvWindow::new(window),
            session_send: SendWindow::new(INITIAL_WINDOW),
            initial_send: INITIAL_WINDOW,
            limit: usize::MAX,
            limit_announced: false,
            cap: usize::MAX,
            retry_refused: true,
            queue: VecDeque::new(),
            open: HashMap::new(),
            next_id: 1,
            next_seq: 0,
            going_away: false,
            failed: None,
            push: false,
            pushed: HashMap::new(),
            push_events: VecDeque::new(),
        }
    }

    /// A server's pushes are accepted and told (`poll_push_event`);
    /// without, its SYN_STREAMs are ignored.
    pub fn accept_pushes(mut self) -> Self {
        self.push = true;
        self
    }

    /// The next event of a push, if any.
    pub fn poll_push_event(&mut self) -> Option<PushEvent<T>> {
        self.push_events.pop_front()
    }

    /// Pushed streams open now.
    pub fn pushed_streams(&self) -> usize {
        self.pushed.len()
    }

    /// Cancels a push (RST_STREAM CANCEL), if it is still open.
    pub fn cancel_push(&mut self, stream_id: u32) {
        if self.failed.is_none() && self.pushed.remove(&stream_id).is_some() {
            self.enc.encode(
                &Frame::RstStream {
                    stream_id,
                    status: rst::CANCEL,
                },
                &mut self.out,
            );
        }
    }

    /// A server's SYN_STREAM (`accept_pushes`): a push, or reset.
    fn syn_stream(
        &mut self,
        stream_id: u32,
        associated_to: u32,
        fin: bool,
        unidirectional: bool,
        headers: Headers,
    ) {
        let reset = |session: &mut Self, status| {
            session
                .enc
                .encode(&Frame::RstStream { stream_id, status }, &mut session.out)
        };
        if stream_id == 0 || stream_id % 2 == 1 || self.pushed.contains_key(&stream_id) {
            return reset(self, rst::PROTOCOL_ERROR);
        }
        let Some(assoc) = self.open.get(&associated_to).map(|s| s.req) else {
            return reset(self, rst::INVALID_STREAM);
        };
        let has = |name: &str| headers.iter().any(|(k, v)| k == name && !v.is_empty());
        if !unidirectional || !has(":scheme") || !has(":host") || !has(":path") {
            return reset(self, rst::PROTOCOL_ERROR);
        }
        let status = status_of(&headers);
        self.pushed.insert(
            stream_id,
            Pushed {
                window: RecvWindow::new(self.window),
                head: status.is_some(),
            },
        );
        self.push_events.push_back(PushEvent::Promised {
            assoc,
            stream_id,
            headers: headers.clone(),
        });
        if let Some(status) = status {
            self.push_events.push_back(PushEvent::Head {
                stream_id,
                status,
                headers,
            });
        }
        if fin {
            self.push_done(stream_id);
        }
    }

    fn push_done(&mut self, stream_id: u32) {
        if let Some(p) = self.pushed.remove(&stream_id) {
            if !p.head {
                self.push_events.push_back(PushEvent::Head {
                    stream_id,
                    status: 0,
                    headers: Vec::new(),
                });
            }
            self.push_events.push_back(PushEvent::Done(stream_id));
        }
    }

    /// A pushed stream's DATA (the session's window already counted).
    fn push_data(&mut self, stream_id: u32, fin: bool, data: Vec<u8>) {
        let Some(p) = self.pushed.get_mut(&stream_id) else {
            return;
        };
        match p.window.received(data.len()) {
            Ok(Some(delta)) if !fin => self
                .enc
                .encode(&Frame::WindowUpdate { stream_id, delta }, &mut self.out),
            Ok(_) => {}
            Err(_) => {
                self.pushed.remove(&stream_id);
                self.enc.encode(
                    &Frame::RstStream {
                        stream_id,
                        status: rst::FLOW_CONTROL_ERROR,
                    },
                    &mut self.out,
                );
                self.push_events.push_back(PushEvent::Reset {
                    stream_id,
                    status: rst::FLOW_CONTROL_ERROR,
                });
                return;
            }
        }
        if !p.head {
            p.head = true;
            self.push_events.push_back(PushEvent::Head {
                stream_id,
                status: 0,
                headers: Vec::new(),
            });
        }
        if !data.is_empty() {
            self.push_events
                .push_back(PushEvent::Data { stream_id, data });
        }
        if fin {
            self.push_done(stream_id);
        }
    }

    /// At most `cap` streams open at once, whatever the server allows.
    pub fn with_max_streams(mut self, cap: usize) -> Self {
        self.cap = cap.max(1);
        self
    }

    /// A refused stream is reported (`Event::Refused`) instead of sent again.
    pub fn report_refused(mut self) -> Self {
        self.retry_refused = false;
        self
    }

    /// Bytes to write to the server; the caller clears it once written.
    pub fn output(&mut self) -> &mut Vec<u8> {
        &mut self.out
    }

    /// The next event, if any.
    pub fn poll_event(&mut self) -> Option<Event<T>> {
        self.events.pop_front()
    }

    /// Streams open now.
    pub fn open_streams(&self) -> usize {
        self.open.len()
    }

    /// Requests queued or open.
    pub fn in_flight(&self) -> usize {
        self.open.len() + self.queue.len()
    }

    /// Streams that may be open at once now (the server's limit, and ours).
    pub fn max_open(&self) -> usize {
        self.limit.min(self.cap)
    }

    /// Nothing queued and nothing open.
    pub fn is_idle(&self) -> bool {
        self.open.is_empty() && self.queue.is_empty()
    }

    /// The server said GOAWAY.
    pub fn going_away(&self) -> bool {
        self.going_away
    }

    /// Why the session failed, if it did (a GOAWAY is in the output; the
    /// connection is to be closed once it is written).
    pub fn failure(&self) -> Option<&SessionError> {
        self.failed.as_ref()
    }

    /// Queues a request; `start` sends it when the limits allow. After a
    /// GOAWAY, it fails at once.
    pub fn request(&mut self, req: T, priority: u8, headers: Headers) {
        self.queue_request(req, priority, headers, None);
    }

    /// Queues a request with a body (a POST's): its SYN_STREAM goes without
    /// FIN, then the body in DATA frames, the last with FIN, as the server's
    /// windows allow. An empty body ends the request at its SYN_STREAM.
    pub fn request_with_body(&mut self, req: T, priority: u8, headers: Headers, body: Vec<u8>) {
        let body = (!body.is_empty()).then_some(body);
        self.queue_request(req, priority, headers, body);
    }

    fn queue_request(&mut self, req: T, priority: u8, headers: Headers, body: Option<Vec<u8>>) {
        if self.going_away {
            self.fail(req, StreamError::GoneAway(None));
        } else if let Some(e) = &self.failed {
            let error = StreamError::Session(e.clone());
            self.fail(req, error);
        } else if self.limit_announced && self.limit == 0 {
            self.fail(req, StreamError::Refused(0));
        } else {
            let seq = self.next_seq;
            self.next_seq += 1;
            self.queue.push_back(Queued {
                req,
                priority,
                seq,
                refusals: 0,
                headers,
                body,
            });
        }
    }

    /// Sends queued requests while the limits allow, highest priority first,
    /// and what the windows allow of request bodies.
    pub fn start(&mut self) {
        while self.failed.is_none() && self.open.len() < self.max_open() {
            let Some(i) =
                (0..self.queue.len()).min_by_key(|&i| (self.queue[i].priority, self.queue[i].seq))
            else {
                break;
            };
            let q = self.queue.remove(i).expect("the index is in range");
            let stream_id = self.next_id;
            self.next_id += 2;
            let frame = Frame::SynStream {
                stream_id,
                associated_to: 0,
                priority: q.priority,
                fin: q.body.is_none(),
                unidirectional: false,
                headers: q.headers,
            };
            self.enc.encode(&frame, &mut self.out);
            let Frame::SynStream { headers, .. } = frame else {
                unreachable!("built above")
            };
            self.open.insert(
                stream_id,
                Stream {
                    req: q.req,
                    priority: q.priority,
                    seq: q.seq,
                    refusals: q.refusals,
                    headers,
                    window: RecvWindow::new(self.window),
                    body: q.body,
                    sent: 0,
                    send: SendWindow::new(self.initial_send),
                },
            );
            self.events.push_back(Event::Sent(q.req));
        }
        self.upload();
    }

    /// Request bodies out, in DATA frames of at most 16 KiB, oldest stream
    /// first, within the windows; the last frame of each carries FIN.
    fn upload(&mut self) {
        if self.failed.is_some() {
            return;
        }
        let mut ids: Vec<u32> = self
            .open
            .iter()
            .filter(|(_, s)| s.body.as_ref().is_some_and(|b| s.sent < b.len()))
            .map(|(&id, _)| id)
            .collect();
        ids.sort_unstable();
        for id in ids {
            let Some(s) = self.open.get_mut(&id) else {
                continue;
            };
            let Some(body) = s.body.as_ref() else {
                continue;
            };
            while s.sent < body.len() {
                let n = (body.len() - s.sent)
                    .min(CHUNK)
                    .min(s.send.available())
                    .min(self.session_send.available());
                if n == 0 {
                    break;
                }
                let fin = s.sent + n == body.len();
                Encoder::data_head(id, fin, n, &mut self.out);
                self.out.extend_from_slice(&body[s.sent..s.sent + n]);
                s.sent += n;
                s.send.consume(n);
                self.session_send.consume(n);
            }
        }
    }

    /// Every request queued or open, which the caller fails when the
    /// connection ends under them; the session is left empty.
    pub fn abandon(&mut self) -> Vec<T> {
        self.pushed.clear();
        let mut reqs: Vec<T> = self.open.drain().map(|(_, s)| s.req).collect();
        reqs.extend(self.queue.drain(..).map(|q| q.req));
        reqs
    }

    fn fail(&mut self, req: T, error: StreamError) {
        self.events.push_back(Event::Failed { req, error });
    }

    fn session_error(&mut self, e: SessionError) {
        self.enc.encode(
            &Frame::GoAway {
                last_good_stream_id: 0,
                status: GOAWAY_PROTOCOL_ERROR,
            },
            &mut self.out,
        );
        for req in self.abandon() {
            self.fail(req, StreamError::Session(e.clone()));
        }
        self.failed = Some(e);
    }

    fn finish(&mut self, stream_id: u32) {
        if let Some(s) = self.open.remove(&stream_id) {
            self.events.push_back(Event::Done(s.req));
        }
    }

    /// Bytes from the server.
    pub fn receive(&mut self, bytes: &[u8]) {
        if self.failed.is_some() {
            return;
        }
        self.dec.feed(bytes);
        while self.failed.is_none() {
            match self.dec.next_frame() {
                Ok(Some(frame)) => self.frame(frame),
                Ok(None) => break,
                Err(e) => self.session_error(SessionError::Frame(e)),
            }
        }
    }

    fn frame(&mut self, frame: Frame) {
        match frame {
            Frame::SynReply {
                stream_id,
                fin,
                headers,
            } => self.syn_reply(stream_id, fin, headers),
            Frame::Data {
                stream_id,
                fin,
                data,
            } => self.data(stream_id, fin, data),
            Frame::SynStream {
                stream_id,
                associated_to,
                fin,
                unidirectional,
                headers,
                ..
            } if self.push => {
                self.syn_stream(stream_id, associated_to, fin, unidirectional, headers)
            }
            // A pushed stream's response headers (its status), or its end.
            Frame::Headers {
                stream_id,
                fin,
                headers,
            } if self.pushed.contains_key(&stream_id) => {
                self.pushed_headers(stream_id, fin, headers)
            }
            // Trailing headers that end the stream.
            Frame::Headers {
                stream_id,
                fin: true,
                ..
            } => self.finish(stream_id),
            Frame::RstStream { stream_id, status } if self.pushed.contains_key(&stream_id) => {
                self.pushed.remove(&stream_id);
                self.push_events
                    .push_back(PushEvent::Reset { stream_id, status });
            }
            Frame::RstStream { stream_id, status } => self.rst_stream(stream_id, status),
            Frame::Settings { entries, .. } => self.settings(entries),
            // More window for our request bodies (`start` sends them).
            Frame::WindowUpdate {
                stream_id: 0,
                delta,
            } => {
                if let Err(e) = self.session_send.grow(delta) {
                    self.session_error(SessionError::Window(e));
                }
            }
            Frame::WindowUpdate { stream_id, delta } => self.stream_window_update(stream_id, delta),
            // The server's pings (even ids) go back; ours we never sent.
            Frame::Ping { id } if id % 2 == 0 => {
                self.enc.encode(&Frame::Ping { id }, &mut self.out)
            }
            Frame::GoAway {
                last_good_stream_id,
                status,
            } => self.go_away(last_good_stream_id, status),
            _ => {}
        }
    }

    /// A SYN_REPLY: an open stream's response head.
    fn syn_reply(&mut self, stream_id: u32, fin: bool, headers: Headers) {
        let Some(s) = self.open.get(&stream_id) else {
            return;
        };
        let status = status_of(&headers).unwrap_or(0);
        self.events.push_back(Event::Head {
            req: s.req,
            status,
            headers,
        });
        if fin {
            self.finish(stream_id);
        }
    }

    /// A DATA frame: counted against the session's window and the stream's
    /// (each updated as it runs low), then a pushed stream's or a response's body.
    fn data(&mut self, stream_id: u32, fin: bool, data: Vec<u8>) {
        match self.session_window.received(data.len()) {
            Ok(Some(delta)) => self.enc.encode(
                &Frame::WindowUpdate {
                    stream_id: 0,
                    delta,
                },
                &mut self.out,
            ),
            Ok(None) => {}
            Err(e) => return self.session_error(SessionError::Window(e)),
        }
        if self.pushed.contains_key(&stream_id) {
            return self.push_data(stream_id, fin, data);
        }
        let Some(s) = self.open.get_mut(&stream_id) else {
            return;
        };
        match s.window.received(data.len()) {
            Ok(Some(delta)) if !fin => self
                .enc
                .encode(&Frame::WindowUpdate { stream_id, delta }, &mut self.out),
            Ok(_) => {}
            Err(e) => {
                self.enc.encode(
                    &Frame::RstStream {
                        stream_id,
                        status: rst::FLOW_CONTROL_ERROR,
                    },
                    &mut self.out,
                );
                let s = self.open.remove(&stream_id).expect("it is open");
                return self.fail(s.req, StreamError::Window(e));
            }
        }
        if !data.is_empty() {
            let req = s.req;
            self.events.push_back(Event::Data { req, data });
        }
        if fin {
            self.finish(stream_id);
        }
    }

    /// A pushed stream's HEADERS: its response head (the first with a
    /// status), or its end.
    fn pushed_headers(&mut self, stream_id: u32, fin: bool, headers: Headers) {
        let status = status_of(&headers);
        if let (Some(p), Some(status)) = (self.pushed.get_mut(&stream_id), status) {
            if !p.head {
                p.head = true;
                self.push_events.push_back(PushEvent::Head {
                    stream_id,
                    status,
                    headers,
                });
            }
        }
        if fin {
            self.push_done(stream_id);
        }
    }

    /// A RST_STREAM of one of our streams: a refusal is asked again (or
    /// told), any other status fails the request.
    fn rst_stream(&mut self, stream_id: u32, status: u32) {
        let Some(s) = self.open.remove(&stream_id) else {
            return;
        };
        if status == rst::REFUSED_STREAM {
            if !self.limit_announced {
                // Over a limit the server never announced: keep
                // below it from now on.
                self.limit = self.limit.min(self.open.len().max(1));
            }
            if self.retry_refused && s.refusals >= crate::MAX_REFUSED_RETRIES {
                self.fail(s.req, StreamError::Refused(s.refusals + 1));
            } else if self.retry_refused {
                // Asked again when a stream ends, in its first place.
                self.queue.push_back(Queued {
                    req: s.req,
                    priority: s.priority,
                    seq: s.seq,
                    refusals: s.refusals + 1,
                    headers: s.headers,
                    body: s.body,
                });
            } else {
                self.events.push_back(Event::Refused(s.req));
            }
        } else {
            self.fail(s.req, StreamError::Reset(status));
        }
    }

    /// The server's SETTINGS: the initial window of our streams, and how many
    /// may be open (none: every queued request fails now).
    fn settings(&mut self, entries: Vec<(u8, u32, u32)>) {
        for (_, id, value) in entries {
            if id == settings::INITIAL_WINDOW_SIZE {
                let value = value.min(crate::flow::MAX_WINDOW as u32);
                let delta = value as i64 - self.initial_send as i64;
                self.initial_send = value;
                for s in self.open.values_mut() {
                    s.send.adjust(delta);
                }
            }
            if id == settings::MAX_CONCURRENT_STREAMS {
                self.limit = value as usize;
                self.limit_announced = true;
                if value == 0 {
                    // No stream will ever open: fail now, not at the
                    // page's timeout.
                    let queued: Vec<T> = self.queue.drain(..).map(|q| q.req).collect();
                    for req in queued {
                        self.fail(req, StreamError::Refused(0));
                    }
                }
            }
        }
    }

    /// A stream's WINDOW_UPDATE: more window for its request body; one past
    /// the maximum resets the stream and fails its request.
    fn stream_window_update(&mut self, stream_id: u32, delta: u32) {
        let overflow = self
            .open
            .get_mut(&stream_id)
            .is_some_and(|s| s.send.grow(delta).is_err());
        if let Some(s) = overflow.then(|| self.open.remove(&stream_id)).flatten() {
            self.enc.encode(
                &Frame::RstStream {
                    stream_id,
                    status: rst::FLOW_CONTROL_ERROR,
                },
                &mut self.out,
            );
            self.fail(s.req, StreamError::Window(FlowError::Overflow));
        }
    }

    /// A GOAWAY: told, and each stream above the last good one (in order)
    /// and each queued request failed.
    fn go_away(&mut self, last_good_stream_id: u32, status: u32) {
        self.going_away = true;
        self.events.push_back(Event::GoAway {
            last_good_stream_id,
            status,
        });
        // Streams above the last good one were not processed.
        let mut lost: Vec<u32> = self
            .open
            .keys()
            .copied()
            .filter(|&id| id > last_good_stream_id)
            .collect();
        lost.sort_unstable();
        for id in lost {
            let s = self.open.remove(&id).expect("it is open");
            self.fail(s.req, StreamError::GoneAway(Some(status)));
        }
        let queued: Vec<T> = self.queue.drain(..).map(|q| q.req).collect();
        for req in queued {
            self.fail(req, StreamError::GoneAway(Some(status)));
        }
    }
}

#[cfg(test)]
mod tests {
    //! The session against a server made of our codec, scripted by the test.
    use super::*;

    struct Server {
        enc: Encoder,
        dec: Decoder,
        /// Sum of the client's WINDOW_UPDATEs: (session, per stream).
        updates: (u64, HashMap<u32, u64>),
    }

    impl Server {
        fn new() -> Server {
            Server {
                enc: Encoder::default(),
                dec: Decoder::default(),
                updates: Default::default(),
            }
        }

        fn send(&mut self, c: &mut ClientSession<usize>, frames: &[Frame]) {
            let mut bytes = Vec::new();
            for f in frames {
                self.enc.encode(f, &mut bytes);
            }
            c.receive(&bytes);
        }

        /// The client's frames since last time, other than WINDOW_UPDATEs (tallied).
        fn frames(&mut self, c: &mut ClientSession<usize>) -> Vec<Frame> {
            let out = c.output();
            self.dec.feed(out);
            out.clear();
            let mut frames = Vec::new();
            while let Some(f) = self
                .dec
                .next_frame()
                .expect("the client writes valid frames")
            {
                match f {
                    Frame::WindowUpdate {
                        stream_id: 0,
                        delta,
                    } => self.updates.0 += delta as u64,
                    Frame::WindowUpdate { stream_id, delta } => {
                        *self.updates.1.entry(stream_id).or_default() += delta as u64
                    }
                    f => frames.push(f),
                }
            }
            frames
        }
    }

    fn get(path: &str) -> Headers {
        vec![(":path".into(), path.into())]
    }

    /// (stream id, priority, path) of each SYN_STREAM.
    fn syns(frames: &[Frame]) -> Vec<(u32, u8, String)> {
        frames
            .iter()
            .filter_map(|f| match f {
                Frame::SynStream {
                    stream_id,
                    priority,
                    headers,
                    ..
                } => Some((*stream_id, *priority, headers[0].1.clone())),
                _ => None,
            })
            .collect()
    }

    fn reply(stream_id: u32, fin: bool) -> Frame {
        Frame::SynReply {
            stream_id,
            fin,
            headers: vec![(":status".into(), "200 OK".into())],
        }
    }

    fn data(stream_id: u32, fin: bool, n: usize) -> Frame {
        Frame::Data {
            stream_id,
            fin,
            data: vec![7; n],
        }
    }

    fn events(c: &mut ClientSession<usize>) -> Vec<Event<usize>> {
        std::iter::from_fn(|| c.poll_event()).collect()
    }

    /// (stream id, bytes, fin) of each DATA frame.
    fn datas(frames: &[Frame]) -> Vec<(u32, usize, bool)> {
        frames
            .iter()
            .filter_map(|f| match f {
                Frame::Data {
                    stream_id,
                    fin,
                    data,
                } => Some((*stream_id, data.len(), *fin)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_body_follows_its_syn_stream_within_the_servers_windows() {
        let mut c = ClientSession::<usize>::new(INITIAL_WINDOW);
        let mut s = Server::new();
        // The server's streams may take 20 000 bytes each.
        s.send(
            &mut c,
            &[Frame::Settings {
                clear: false,
                entries: vec![(0, settings::INITIAL_WINDOW_SIZE, 20_000)],
            }],
        );
        c.request_with_body(0, 1, get("/post"), vec![b'p'; 50_000]);
        c.request_with_body(1, 1, get("/empty"), Vec::new());
        c.request(2, 1, get("/get"));
        c.start();
        let f = s.frames(&mut c);
        let fins: Vec<bool> = f
            .iter()
            .filter_map(|f| match f {
                Frame::SynStream { fin, .. } => Some(*fin),
                _ => None,
            })
            .collect();
        // The POST's SYN_STREAM leaves the stream open; an empty body and a
        // GET end at theirs.
        assert_eq!(fins, [false, true, true]);
        assert_eq!(datas(&f), [(1, 16_384, false), (1, 3_616, false)]);
        // Refused (the GET and the empty POST answered): sent again whole,
        // from its first byte, on a new stream.
        s.send(&mut c, &[reply(3, true), reply(5, true)]);
        s.send(
            &mut c,
            &[Frame::RstStream {
                stream_id: 1,
                status: rst::REFUSED_STREAM,
            }],
        );
        c.start();
        let f = s.frames(&mut c);
        assert_eq!(syns(&f), [(7, 1, "/post".into())]);
        assert_eq!(datas(&f), [(7, 16_384, false), (7, 3_616, false)]);
        // More window for the stream: what is left of the session's 64 KiB.
        s.send(
            &mut c,
            &[Frame::WindowUpdate {
                stream_id: 7,
                delta: 1_000_000,
            }],
        );
        c.start();
        let sent: usize = datas(&s.frames(&mut c)).iter().map(|d| d.1).sum();
        assert_eq!(sent, 65_536 - 40_000);
        // More for the session: the rest, the last frame with FIN.
        s.send(
            &mut c,
            &[Frame::WindowUpdate {
                stream_id: 0,
                delta: 100_000,
            }],
        );
        c.start();
        let f = s.frames(&mut c);
        assert_eq!(datas(&f), [(7, 50_000 - 20_000 - 25_536, true)]);
        c.start();
        assert!(s.frames(&mut c).is_empty(), "nothing sent twice");
    }

    #[test]
    fn the_stream_limit_priorities_refusals_and_windows_are_kept() {
        let mut c = ClientSession::<usize>::new(INITIAL_WINDOW);
        let mut s = Server::new();
        assert!(c.output().is_empty(), "64 KiB needs no SETTINGS");
        s.send(
            &mut c,
            &[Frame::Settings {
                clear: false,
                entries: vec![(0, settings::MAX_CONCURRENT_STREAMS, 1)],
            }],
        );
        for (req, (path, prio)) in [("/a.png", 3), ("/b.js", 1), ("/", 0), ("/c.css", 1)]
            .into_iter()
            .enumerate()
        {
            c.request(req, prio, get(path));
        }
        c.start();
        // The highest priority goes first; the rest wait for it.
        assert_eq!(syns(&s.frames(&mut c)), [(1, 0, "/".into())]);
        // 90 000 bytes through a 64 KiB window: given back at half, for the
        // stream and for the session.
        s.send(&mut c, &[reply(1, false)]);
        for _ in 0..4 {
            s.send(&mut c, &[data(1, false, 16_384)]);
        }
        assert!(s.frames(&mut c).is_empty());
        assert!(s.updates.0 >= 32_768 && s.updates.1[&1] >= 32_768);
        s.send(&mut c, &[data(1, true, 90_000 - 65_536)]);
        c.start();
        assert_eq!(syns(&s.frames(&mut c)), [(3, 1, "/b.js".into())]);
        // Refused: asked again.
        s.send(
            &mut c,
            &[Frame::RstStream {
                stream_id: 3,
                status: rst::REFUSED_STREAM,
            }],
        );
        c.start();
        assert_eq!(syns(&s.frames(&mut c)), [(5, 1, "/b.js".into())]);
        s.send(&mut c, &[reply(5, true)]);
        c.start();
        assert_eq!(syns(&s.frames(&mut c)), [(7, 1, "/c.css".into())]);
        s.send(&mut c, &[reply(7, false), data(7, true, 5)]);
        c.start();
        assert_eq!(syns(&s.frames(&mut c)), [(9, 3, "/a.png".into())]);
        s.send(&mut c, &[reply(9, false), data(9, true, 1)]);
        assert!(c.is_idle());
        let mut bytes = [0usize; 4];
        let mut done = [0; 4];
        for e in events(&mut c) {
            match e {
                Event::Data { req, data } => bytes[req] += data.len(),
                Event::Done(req) => done[req] += 1,
                Event::Failed { req, error } => panic!("{req}: {error}"),
                _ => {}
            }
        }
        assert_eq!(done, [1; 4]);
        assert_eq!(bytes, [1, 0, 90_000, 5]);
    }

    #[test]
    fn a_large_window_is_announced_and_refusals_can_be_reported() {
        let mut c = ClientSession::<usize>::new(10 << 20)
            .with_max_streams(2)
            .report_refused();
        let mut s = Server::new();
        assert_eq!(
            s.frames(&mut c),
            [Frame::Settings {
                clear: false,
                entries: vec![(0, settings::INITIAL_WINDOW_SIZE, 10 << 20)]
            }]
        );
        assert_eq!(s.updates.0, (10 << 20) - 65_536);
        for req in 0..3 {
            c.request(req, 0, get("/"));
        }
        c.start();
        assert_eq!(c.open_streams(), 2, "our own cap");
        s.send(
            &mut c,
            &[Frame::RstStream {
                stream_id: 3,
                status: rst::REFUSED_STREAM,
            }],
        );
        assert_eq!(c.max_open(), 1);
        let ev = events(&mut c);
        assert!(ev.contains(&Event::Refused(1)), "{ev:?}");
    }

    #[test]
    fn a_request_refused_for_ever_fails_after_the_retries() {
        let mut c = ClientSession::<usize>::new(INITIAL_WINDOW);
        let mut s = Server::new();
        c.request(0, 0, get("/"));
        let mut syns_seen = 0;
        for _ in 0..=crate::MAX_REFUSED_RETRIES + 2 {
            c.start();
            for (id, ..) in syns(&s.frames(&mut c)) {
                syns_seen += 1;
                s.send(
                    &mut c,
                    &[Frame::RstStream {
                        stream_id: id,
                        status: rst::REFUSED_STREAM,
                    }],
                );
            }
        }
        assert_eq!(syns_seen, crate::MAX_REFUSED_RETRIES + 1);
        let failed: Vec<_> = events(&mut c)
            .into_iter()
            .filter_map(|e| match e {
                Event::Failed { req, error } => Some((req, error)),
                _ => None,
            })
            .collect();
        assert_eq!(
            failed,
            [(0, StreamError::Refused(crate::MAX_REFUSED_RETRIES + 1))]
        );
        assert!(c.is_idle());
    }

    #[test]
    fn a_refusal_under_an_announced_limit_does_not_lower_it() {
        let mut c = ClientSession::<usize>::new(INITIAL_WINDOW);
        let mut s = Server::new();
        s.send(
            &mut c,
            &[Frame::Settings {
                clear: false,
                entries: vec![(0, settings::MAX_CONCURRENT_STREAMS, 6)],
            }],
        );
        for req in 0..8 {
            c.request(req, 0, get("/"));
        }
        c.start();
        assert_eq!(syns(&s.frames(&mut c)).len(), 6);
        // The server still counted a stream that had ended on our side.
        s.send(
            &mut c,
            &[Frame::RstStream {
                stream_id: 11,
                status: rst::REFUSED_STREAM,
            }],
        );
        assert_eq!(c.max_open(), 6, "the announced limit stands");
        c.start();
        let again = syns(&s.frames(&mut c));
        assert_eq!(again.len(), 1, "the refused request goes again: {again:?}");
        assert_eq!(c.open_streams(), 6);
    }

    #[test]
    fn overruns_and_goaways_fail_what_they_must() {
        let mut c = ClientSession::<usize>::new(INITIAL_WINDOW);
        let mut s = Server::new();
        c.request(0, 0, get("/"));
        c.request(1, 0, get("/x"));
        c.start();
        s.frames(&mut c);
        // The stream window overrun: that stream is reset, the session lives
        // (its window was given back by the other stream's DATA).
        s.send(&mut c, &[reply(1, false), data(1, false, 30_000)]);
        s.send(&mut c, &[reply(3, false), data(3, false, 3_000)]);
        s.send(&mut c, &[data(1, false, 35_537)]);
        assert!(c.failure().is_none());
        assert_eq!(
            s.frames(&mut c),
            [Frame::RstStream {
                stream_id: 1,
                status: rst::FLOW_CONTROL_ERROR
            }]
        );
        // GOAWAY above stream 1: stream 3 and later requests fail.
        s.send(
            &mut c,
            &[Frame::GoAway {
                last_good_stream_id: 1,
                status: 0,
            }],
        );
        c.request(2, 0, get("/y"));
        let failed: Vec<(usize, String)> = events(&mut c)
            .into_iter()
            .filter_map(|e| match e {
                Event::Failed { req, error } => Some((req, error.to_string())),
                _ => None,
            })
            .collect();
        assert_eq!(failed.len(), 3, "{failed:?}");
        assert!(failed[0].1.starts_with("stream window:"), "{failed:?}");
        assert_eq!(
            failed[1],
            (1, "the server went away (GOAWAY status 0)".into())
        );
        assert_eq!(failed[2], (2, "the server went away (GOAWAY)".into()));
        // The session window overrun ends the session.
        let mut c = ClientSession::<usize>::new(INITIAL_WINDOW);
        let mut s = Server::new();
        c.request(0, 0, get("/"));
        c.start();
        s.frames(&mut c);
        s.send(&mut c, &[reply(1, false), data(3, false, 70_000)]);
        assert!(matches!(c.failure(), Some(SessionError::Window(_))));
        assert!(matches!(
            s.frames(&mut c).last(),
            Some(Frame::GoAway { .. })
        ));
        assert!(events(&mut c).iter().any(|e| matches!(
            e,
            Event::Failed {
                req: 0,
                error: StreamError::Session(_)
            }
        )));
        // Garbage: GOAWAY, never a panic.
        let mut c = ClientSession::<usize>::new(INITIAL_WINDOW);
        c.receive(&[0x80, 9, 0, 1, 0, 0, 0, 0]);
        assert!(matches!(c.failure(), Some(SessionError::Frame(_))));
    }

    fn push_syn(stream_id: u32, assoc: u32, path: &str, unidirectional: bool) -> Frame {
        Frame::SynStream {
            stream_id,
            associated_to: assoc,
            priority: 0,
            fin: false,
            unidirectional,
            headers: vec![
                (":scheme".into(), "https".into()),
                (":host".into(), "a.test".into()),
                (":path".into(), path.into()),
            ],
        }
    }

    fn pushes(c: &mut ClientSession<usize>) -> Vec<PushEvent<usize>> {
        std::iter::from_fn(|| c.poll_push_event()).collect()
    }

    /// A push on an open request's stream: promised, its status from a
    /// HEADERS frame, its body within the stream window, its end; then one
    /// the client cancels gets RST_STREAM CANCEL and nothing more is told.
    #[test]
    fn a_push_is_told_from_its_syn_stream_to_its_end_and_can_be_cancelled() {
        let mut c = ClientSession::<usize>::new(INITIAL_WINDOW).accept_pushes();
        let mut s = Server::new();
        c.request(7, 0, get("/"));
        c.start();
        s.frames(&mut c);
        s.send(&mut c, &[reply(1, false), push_syn(2, 1, "/s.css", true)]);
        s.send(
            &mut c,
            &[
                Frame::Headers {
                    stream_id: 2,
                    fin: false,
                    headers: vec![(":status".into(), "200".into())],
                },
                data(2, false, 40_000),
                data(2, true, 100),
            ],
        );
        let p = pushes(&mut c);
        assert!(
            matches!(&p[0], PushEvent::Promised { assoc: 7, stream_id: 2, headers } if headers[2].1 == "/s.css"),
            "{p:?}"
        );
        assert!(matches!(
            p[1],
            PushEvent::Head {
                stream_id: 2,
                status: 200,
                ..
            }
        ));
        assert_eq!(p[4], PushEvent::Done(2));
        assert_eq!(c.pushed_streams(), 0);
        // The request's own stream is untouched.
        assert!(matches!(
            events(&mut c).last(),
            Some(Event::Head { req: 7, .. })
        ));
        s.send(&mut c, &[push_syn(4, 1, "/x.js", true)]);
        pushes(&mut c);
        c.cancel_push(4);
        assert_eq!(
            s.frames(&mut c),
            vec![Frame::RstStream {
                stream_id: 4,
                status: rst::CANCEL
            }]
        );
        s.send(&mut c, &[data(4, true, 10)]);
        assert!(pushes(&mut c).is_empty());
    }

    /// Bad pushes are reset: no open associated stream (INVALID_STREAM),
    /// not unidirectional or an odd id (PROTOCOL_ERROR); without
    /// `accept_pushes` a SYN_STREAM is ignored, as before.
    #[test]
    fn a_push_without_an_open_associated_stream_is_reset_and_off_it_is_ignored() {
        let mut c = ClientSession::<usize>::new(INITIAL_WINDOW).accept_pushes();
        let mut s = Server::new();
        c.request(1, 0, get("/"));
        c.start();
        s.frames(&mut c);
        s.send(
            &mut c,
            &[
                push_syn(2, 9, "/a", true),
                push_syn(4, 1, "/b", false),
                push_syn(5, 1, "/c", true),
            ],
        );
        assert!(pushes(&mut c).is_empty());
        let statuses: Vec<(u32, u32)> = s
            .frames(&mut c)
            .into_iter()
            .filter_map(|f| match f {
                Frame::RstStream { stream_id, status } => Some((stream_id, status)),
                _ => None,
            })
            .collect();
        assert_eq!(
            statuses,
            vec![
                (2, rst::INVALID_STREAM),
                (4, rst::PROTOCOL_ERROR),
                (5, rst::PROTOCOL_ERROR)
            ]
        );
        let mut off = ClientSession::<usize>::new(INITIAL_WINDOW);
        let mut s = Server::new();
        off.request(1, 0, get("/"));
        off.start();
        s.frames(&mut off);
        s.send(&mut off, &[push_syn(2, 1, "/a", true), data(2, true, 5)]);
        assert!(pushes(&mut off).is_empty());
        assert!(s.frames(&mut off).is_empty());
    }
}
