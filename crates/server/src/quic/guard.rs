//! A guard between quinn and h3 on the server's receive streams. h3 (0.0.8)
//! buffers a frame other than DATA whole before it looks at it: a HEADERS
//! frame, or a frame of a type it does not know, may declare any length (up
//! to 2^62 − 1 bytes), and while it arrives h3 keeps reading it into memory,
//! so quinn keeps extending flow control: one stream could make the server
//! hold gigabytes (its `max_field_section_size` is checked only once the
//! whole frame is in). The guard follows the frame boundaries of request
//! streams and of the peer's control stream (sans-I/O: [`FrameLimit`]) and
//! stops a stream whose frame, other than DATA, declares more than the limit:
//! a request stream with STOP_SENDING and RESET_STREAM `H3_EXCESSIVE_LOAD`,
//! the control stream by closing the connection with that code. DATA is
//! left to the request handler (which reads at most `MAX_REQUEST_BODY`), and
//! the QPACK and unknown unidirectional streams to h3, which never reads
//! them (quinn's stream window bounds them).

use bytes::{Buf, Bytes};
use h3::quic::{self, ConnectionErrorIncoming, StreamErrorIncoming, StreamId, WriteBuf};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

/// H3_EXCESSIVE_LOAD (RFC 9114 §8.1).
pub const H3_EXCESSIVE_LOAD: u64 = 0x107;

/// The frame types the guard must know (RFC 9114 §7.2; the WebTransport
/// draft's bidirectional stream signal, which has no length).
const DATA: u64 = 0x00;
const WEBTRANSPORT_BI: u64 = 0x41;
/// The unidirectional stream type of the control stream.
const CONTROL: u64 = 0x00;
/// PRIORITY_UPDATE for a request stream (RFC 9218 §7.2), on the control stream.
const PRIORITY_UPDATE: u64 = 0xF0700;
/// The longest PRIORITY_UPDATE read (an id and a short field value); longer
/// ones are skipped, the stream's priority unchanged.
const MAX_PRIORITY_UPDATE: u64 = 264;

/// A frame that declared more than the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Exceeded {
    pub kind: u64,
    pub len: u64,
}

/// What the next varint is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    StreamType,
    FrameType,
    FrameLen { kind: u64 },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a QUIC varint: its value so far, bytes read, bytes it has.
    Varint {
        value: u64,
        got: u8,
        len: u8,
        next: Next,
    },
    /// Inside a frame's payload: bytes left, the frame's type.
    Payload(u64, u64),
    /// Not framed (a unidirectional stream other than control, a
    /// WebTransport stream) or already refused: bytes pass unexamined.
    Pass,
}

impl State {
    fn varint(next: Next) -> State {
        State::Varint {
            value: 0,
            got: 0,
            len: 0,
            next,
        }
    }
}

/// Follows the HTTP/3 frames of one receive stream, fed its bytes in order.
#[derive(Debug, Clone)]
pub struct FrameLimit {
    limit: u64,
    state: State,
    /// The stream's type said control.
    control: bool,
    /// The PRIORITY_UPDATE frame being read (control stream only).
    capture: Vec<u8>,
    /// Priority updates read: (request stream id, field value's signal).
    updates: Vec<(u64, proto::priority::Signal)>,
}

impl FrameLimit {
    /// For a request stream (frames from the first byte).
    pub fn request(limit: u64) -> FrameLimit {
        FrameLimit {
            limit,
            state: State::varint(Next::FrameType),
            control: false,
            capture: Vec::new(),
            updates: Vec::new(),
        }
    }

    /// For a unidirectional stream (its type first; only the control stream
    /// is framed).
    pub fn unidirectional(limit: u64) -> FrameLimit {
        FrameLimit {
            limit,
            state: State::varint(Next::StreamType),
            control: false,
            capture: Vec::new(),
            updates: Vec::new(),
        }
    }

    /// The PRIORITY_UPDATEs read so far (control stream), in order.
    pub fn take_updates(&mut self) -> Vec<(u64, proto::priority::Signal)> {
        std::mem::take(&mut self.updates)
    }

    /// Whether this is the peer's control stream (known once its type is in).
    pub fn is_control(&self) -> bool {
        self.control
    }

    /// Takes the next `bytes` of the stream; an error for the first frame
    /// other than DATA longer than the limit (after which all passes).
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), Exceeded> {
        while let Some(&b) = bytes.first() {
            match &mut self.state {
                State::Pass => return Ok(()),
                State::Payload(left, kind) => {
                    let n = (*left).min(bytes.len() as u64);
                    let (done, kind) = (*left == n, *kind);
                    *left -= n;
                    if self.control && kind == PRIORITY_UPDATE {
                        self.capture.extend_from_slice(&bytes[..n as usize]);
                    }
                    bytes = &bytes[n as usize..];
                    if done {
                        if self.control && kind == PRIORITY_UPDATE {
                            if let Some(update) = priority_update(&self.capture) {
                                self.updates.push(update);
                            }
                            self.capture.clear();
                        }
                        self.state = State::varint(Next::FrameType);
                    }
                }
                State::Varint {
                    value,
                    got,
                    len,
                    next,
                } => {
                    bytes = &bytes[1..];
                    if *got == 0 {
                        *len = 1 << (b >> 6);
                        *value = u64::from(b & 0x3f);
                    } else {
                        *value = (*value << 8) | u64::from(b);
                    }
                    *got += 1;
                    if *got < *len {
                        continue;
                    }
                    let (v, next) = (*value, *next);
                    self.state = match next {
                        Next::StreamType if v == CONTROL => {
                            self.control = true;
                            State::varint(Next::FrameType)
                        }
                        Next::StreamType => State::Pass,
                        Next::FrameType if v == WEBTRANSPORT_BI => State::Pass,
                        Next::FrameType => State::varint(Next::FrameLen { kind: v }),
                        Next::FrameLen { kind } if kind != DATA && v > self.limit => {
                            self.state = State::Pass;
                            return Err(Exceeded { kind, len: v });
                        }
                        Next::FrameLen { .. } if v == 0 => State::varint(Next::FrameType),
                        // A PRIORITY_UPDATE too long to be one is skipped.
                        Next::FrameLen { kind }
                            if kind == PRIORITY_UPDATE && v > MAX_PRIORITY_UPDATE =>
                        {
                            State::Payload(v, u64::MAX)
                        }
                        Next::FrameLen { kind } => State::Payload(v, kind),
                    };
                }
            }
        }
        Ok(())
    }
}

/// A PRIORITY_UPDATE's payload: the request stream's id (a varint) and its
/// Priority field value.
fn priority_update(payload: &[u8]) -> Option<(u64, proto::priority::Signal)> {
    let (id, len) = proto::varint::decode(payload)?;
    let value = std::str::from_utf8(&payload[len..]).ok()?;
    Some((id, proto::priority::parse_priority_field(value)))
}

/// The priorities of one connection's response streams (RFC 9218 on
/// quinn's stream priorities): a request's `priority` header when the
/// request is read ([`Priorities::signal`] from the handler), a
/// PRIORITY_UPDATE from the control stream whenever it comes — also after
/// the whole response was handed to quinn, which still schedules what it has
/// not sent: each stream stays here, shared with its send half, until quinn
/// has it all acknowledged. quinn sends the highest priority first and
/// shares one priority round robin; so urgency 0 maps highest, and at one
/// urgency non-incremental responses go one at a time in arrival order
/// (each its own level, the earlier higher) before the incremental ones,
/// which share — as `proto::priority` does for h2. `Policy::Ignore`: every
/// stream at quinn's default, round robin.
pub struct Priorities {
    policy: proto::priority::Policy,
    streams: Mutex<HashMap<u64, (Shared, u32)>>,
    seq: AtomicU32,
}

impl Priorities {
    pub fn new(policy: proto::priority::Policy) -> Priorities {
        Priorities {
            policy,
            streams: Mutex::new(HashMap::new()),
            seq: AtomicU32::new(0),
        }
    }

    fn register(&self, id: u64, stream: Arc<Mutex<quinn::SendStream>>) {
        let seq = self.seq.fetch_add(1, Ordering::Relaxed);
        let mut streams = lock(&self.streams);
        // Streams quinn has finished with (all acknowledged, or reset) go.
        streams.retain(|_, (s, _)| lock(s).priority().is_ok());
        streams.insert(id, (stream, seq));
        drop(streams);
        self.signal(id, proto::priority::DEFAULT_URGENCY);
    }

    /// What the client said of request stream `id`'s priority.
    pub fn signal(&self, id: u64, signal: proto::priority::Signal) {
        if self.policy == proto::priority::Policy::Ignore {
            return;
        }
        let streams = lock(&self.streams);
        if let Some((stream, seq)) = streams.get(&id) {
            let _ = lock(stream).set_priority(quinn_priority(signal, *seq));
        }
    }
}

/// A request stream's send half, shared by h3's writer and [`Priorities`].
type Shared = Arc<Mutex<quinn::SendStream>>;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// quinn's priority (higher first) for an RFC 9218 signal of the `seq`-th
/// stream: urgency in the top bits; non-incremental above incremental at one
/// urgency, the earlier stream higher.
pub fn quinn_priority(signal: proto::priority::Signal, seq: u32) -> i32 {
    let proto::priority::Signal::Urgency {
        urgency,
        incremental,
    } = signal
    else {
        return 0;
    };
    let level = (7 - i32::from(urgency.min(7))) << 24;
    match incremental {
        true => level,
        false => level + (1 << 23) + (0x7f_ffff - (seq & 0x7f_ffff) as i32),
    }
}

/// h3's view of a QUIC connection, with every request stream and the
/// peer's control stream under a [`FrameLimit`], and the request streams'
/// priorities kept in [`Priorities`].
pub struct Guarded {
    inner: h3_quinn::Connection,
    conn: quinn::Connection,
    limit: u64,
    priorities: Arc<Priorities>,
    accepting: Option<Accepting>,
}

type Accepting = Pin<
    Box<
        dyn Future<Output = Result<(quinn::SendStream, quinn::RecvStream), quinn::ConnectionError>>
            + Send
            + Sync,
    >,
>;

impl Guarded {
    /// `limit`: the longest frame (other than DATA) taken, in bytes.
    pub fn new(conn: quinn::Connection, limit: u64, priorities: Arc<Priorities>) -> Guarded {
        Guarded {
            inner: h3_quinn::Connection::new(conn.clone()),
            conn,
            limit,
            priorities,
            accepting: None,
        }
    }
}

/// A request stream under a limit, on quinn's streams (not h3-quinn's,
/// whose send half hides quinn's, so its priority could not be set).
pub struct Bidi<B: Buf> {
    send: SendHalf<B>,
    recv: RecvBidi,
    limit: FrameLimit,
}

/// The send half of a request stream: quinn's, shared with [`Priorities`].
pub struct SendHalf<B: Buf> {
    stream: Arc<Mutex<quinn::SendStream>>,
    writing: Option<WriteBuf<B>>,
    id: StreamId,
}

/// The receive half of a request stream.
pub struct RecvBidi {
    stream: quinn::RecvStream,
    buf: Vec<u8>,
    id: StreamId,
}

/// A receive stream under a limit; on the control stream, exceeding it
/// closes the connection, and its PRIORITY_UPDATEs go to [`Priorities`].
pub struct Recv {
    inner: RecvInner,
    limit: FrameLimit,
    conn: Option<quinn::Connection>,
    priorities: Option<Arc<Priorities>>,
}

enum RecvInner {
    Uni(h3_quinn::RecvStream),
    Bidi(RecvBidi),
}

fn connection_error(e: quinn::ConnectionError) -> ConnectionErrorIncoming {
    match e {
        quinn::ConnectionError::ApplicationClosed(c) => ConnectionErrorIncoming::ApplicationClose {
            error_code: c.error_code.into(),
        },
        quinn::ConnectionError::TimedOut => ConnectionErrorIncoming::Timeout,
        e => ConnectionErrorIncoming::Undefined(Arc::new(e)),
    }
}

fn read_error(e: quinn::ReadError) -> StreamErrorIncoming {
    match e {
        quinn::ReadError::Reset(code) => StreamErrorIncoming::StreamTerminated {
            error_code: code.into_inner(),
        },
        quinn::ReadError::ConnectionLost(e) => StreamErrorIncoming::ConnectionErrorIncoming {
            connection_error: connection_error(e),
        },
        e => StreamErrorIncoming::Unknown(Box::new(e)),
    }
}

fn write_error(e: quinn::WriteError) -> StreamErrorIncoming {
    match e {
        quinn::WriteError::Stopped(code) => StreamErrorIncoming::StreamTerminated {
            error_code: code.into_inner(),
        },
        quinn::WriteError::ConnectionLost(e) => StreamErrorIncoming::ConnectionErrorIncoming {
            connection_error: connection_error(e),
        },
        e => StreamErrorIncoming::Unknown(Box::new(e)),
    }
}

fn stream_id(id: quinn::StreamId) -> StreamId {
    StreamId::try_from(u64::from(id)).unwrap_or_else(|_| StreamId::try_from(0).expect("0 is an id"))
}

impl RecvBidi {
    fn poll_data(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Bytes>, StreamErrorIncoming>> {
        if self.buf.is_empty() {
            self.buf = vec![0; 16 * 1024];
        }
        let mut rb = tokio::io::ReadBuf::new(&mut self.buf);
        match self.stream.poll_read_buf(cx, &mut rb) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(e)) => Poll::Ready(Err(read_error(e))),
            Poll::Ready(Ok(())) if rb.filled().is_empty() => Poll::Ready(Ok(None)),
            Poll::Ready(Ok(())) => Poll::Ready(Ok(Some(Bytes::copy_from_slice(rb.filled())))),
        }
    }

    fn stop(&mut self, code: u64) {
        let _ = self
            .stream
            .stop(quinn::VarInt::from_u64(code).unwrap_or(quinn::VarInt::MAX));
    }
}

impl RecvInner {
    fn poll_data(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Bytes>, StreamErrorIncoming>> {
        match self {
            RecvInner::Uni(r) => quic::RecvStream::poll_data(r, cx),
            RecvInner::Bidi(r) => r.poll_data(cx),
        }
    }

    fn stop(&mut self, code: u64) {
        match self {
            RecvInner::Uni(r) => quic::RecvStream::stop_sending(r, code),
            RecvInner::Bidi(r) => r.stop(code),
        }
    }

    fn id(&self) -> StreamId {
        match self {
            RecvInner::Uni(r) => quic::RecvStream::recv_id(r),
            RecvInner::Bidi(r) => r.id,
        }
    }
}

/// Bytes from the inner stream, fed to the limit first.
fn checked(
    got: Poll<Result<Option<Bytes>, StreamErrorIncoming>>,
    limit: &mut FrameLimit,
) -> Result<Poll<Result<Option<Bytes>, StreamErrorIncoming>>, Exceeded> {
    if let Poll::Ready(Ok(Some(b))) = &got {
        limit.feed(b)?;
    }
    Ok(got)
}

fn refused() -> StreamErrorIncoming {
    StreamErrorIncoming::StreamTerminated {
        error_code: H3_EXCESSIVE_LOAD,
    }
}

impl<B: Buf> quic::RecvStream for Bidi<B> {
    type Buf = Bytes;

    fn poll_data(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Bytes>, StreamErrorIncoming>> {
        match checked(self.recv.poll_data(cx), &mut self.limit) {
            Ok(p) => p,
            Err(_) => {
                self.recv.stop(H3_EXCESSIVE_LOAD);
                quic::SendStream::<B>::reset(&mut self.send, H3_EXCESSIVE_LOAD);
                Poll::Ready(Err(refused()))
            }
        }
    }

    fn stop_sending(&mut self, error_code: u64) {
        self.recv.stop(error_code)
    }

    fn recv_id(&self) -> StreamId {
        self.recv.id
    }
}

impl<B: Buf> quic::SendStream<B> for SendHalf<B> {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        if let Some(data) = self.writing.as_mut() {
            let mut stream = lock(&self.stream);
            while data.has_remaining() {
                match Pin::new(&mut *stream).poll_write(cx, data.chunk()) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(write_error(e))),
                    Poll::Ready(Ok(n)) => data.advance(n),
                }
            }
        }
        self.writing = None;
        Poll::Ready(Ok(()))
    }

    fn send_data<T: Into<WriteBuf<B>>>(&mut self, data: T) -> Result<(), StreamErrorIncoming> {
        if self.writing.is_some() {
            return Err(StreamErrorIncoming::ConnectionErrorIncoming {
                connection_error: ConnectionErrorIncoming::InternalError(
                    "send_data before the last was written".into(),
                ),
            });
        }
        self.writing = Some(data.into());
        Ok(())
    }

    fn poll_finish(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        Poll::Ready(
            lock(&self.stream)
                .finish()
                .map_err(|e| StreamErrorIncoming::Unknown(Box::new(e))),
        )
    }

    fn reset(&mut self, reset_code: u64) {
        let _ = lock(&self.stream)
            .reset(quinn::VarInt::from_u64(reset_code).unwrap_or(quinn::VarInt::MAX));
    }

    fn send_id(&self) -> StreamId {
        self.id
    }
}

impl<B: Buf> quic::SendStream<B> for Bidi<B> {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        self.send.poll_ready(cx)
    }

    fn send_data<T: Into<WriteBuf<B>>>(&mut self, data: T) -> Result<(), StreamErrorIncoming> {
        self.send.send_data(data)
    }

    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        self.send.poll_finish(cx)
    }

    fn reset(&mut self, reset_code: u64) {
        self.send.reset(reset_code)
    }

    fn send_id(&self) -> StreamId {
        self.send.id
    }
}

impl<B: Buf> quic::BidiStream<B> for Bidi<B> {
    type SendStream = SendHalf<B>;
    type RecvStream = Recv;

    fn split(self) -> (Self::SendStream, Self::RecvStream) {
        (
            self.send,
            Recv {
                inner: RecvInner::Bidi(self.recv),
                limit: self.limit,
                conn: None,
                priorities: None,
            },
        )
    }
}

impl quic::RecvStream for Recv {
    type Buf = Bytes;

    fn poll_data(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Bytes>, StreamErrorIncoming>> {
        let got = checked(self.inner.poll_data(cx), &mut self.limit);
        if let Some(p) = &self.priorities {
            for (id, signal) in self.limit.take_updates() {
                p.signal(id, signal);
            }
        }
        match got {
            Ok(p) => p,
            Err(_) => {
                self.inner.stop(H3_EXCESSIVE_LOAD);
                match self.conn.as_ref().filter(|_| self.limit.is_control()) {
                    Some(conn) => {
                        conn.close(
                            quinn::VarInt::from_u32(H3_EXCESSIVE_LOAD as u32),
                            b"frame over the limit",
                        );
                        Poll::Ready(Err(StreamErrorIncoming::ConnectionErrorIncoming {
                            connection_error: ConnectionErrorIncoming::ApplicationClose {
                                error_code: H3_EXCESSIVE_LOAD,
                            },
                        }))
                    }
                    None => Poll::Ready(Err(refused())),
                }
            }
        }
    }

    fn stop_sending(&mut self, error_code: u64) {
        self.inner.stop(error_code)
    }

    fn recv_id(&self) -> StreamId {
        self.inner.id()
    }
}

/// The server opens no request streams (RFC 9114 §6.1: only clients do).
fn no_bidi() -> StreamErrorIncoming {
    StreamErrorIncoming::Unknown(Box::new(std::io::Error::other(
        "an HTTP/3 server opens no bidirectional stream",
    )))
}

impl<B: Buf> quic::OpenStreams<B> for Guarded {
    type BidiStream = Bidi<B>;
    type SendStream = h3_quinn::SendStream<B>;

    fn poll_open_bidi(
        &mut self,
        _cx: &mut Context<'_>,
    ) -> Poll<Result<Bidi<B>, StreamErrorIncoming>> {
        Poll::Ready(Err(no_bidi()))
    }

    fn poll_open_send(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Self::SendStream, StreamErrorIncoming>> {
        quic::OpenStreams::<B>::poll_open_send(&mut self.inner, cx)
    }

    fn close(&mut self, code: h3::error::Code, reason: &[u8]) {
        quic::OpenStreams::<B>::close(&mut self.inner, code, reason)
    }
}

/// The opener h3 keeps (for the streams it opens itself: unidirectional).
pub struct Opener {
    inner: h3_quinn::OpenStreams,
}

impl<B: Buf> quic::OpenStreams<B> for Opener {
    type BidiStream = Bidi<B>;
    type SendStream = h3_quinn::SendStream<B>;

    fn poll_open_bidi(
        &mut self,
        _cx: &mut Context<'_>,
    ) -> Poll<Result<Bidi<B>, StreamErrorIncoming>> {
        Poll::Ready(Err(no_bidi()))
    }

    fn poll_open_send(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Self::SendStream, StreamErrorIncoming>> {
        quic::OpenStreams::<B>::poll_open_send(&mut self.inner, cx)
    }

    fn close(&mut self, code: h3::error::Code, reason: &[u8]) {
        quic::OpenStreams::<B>::close(&mut self.inner, code, reason)
    }
}

impl<B: Buf> quic::Connection<B> for Guarded {
    type RecvStream = Recv;
    type OpenStreams = Opener;

    fn poll_accept_recv(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Recv, ConnectionErrorIncoming>> {
        let (limit, conn) = (self.limit, self.conn.clone());
        let priorities = self.priorities.clone();
        quic::Connection::<B>::poll_accept_recv(&mut self.inner, cx).map_ok(|inner| Recv {
            inner: RecvInner::Uni(inner),
            limit: FrameLimit::unidirectional(limit),
            conn: Some(conn),
            priorities: Some(priorities),
        })
    }

    fn poll_accept_bidi(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Bidi<B>, ConnectionErrorIncoming>> {
        let accepting = self.accepting.get_or_insert_with(|| {
            let conn = self.conn.clone();
            Box::pin(async move { conn.accept_bi().await })
        });
        let (send, recv) = match accepting.as_mut().poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(r) => {
                self.accepting = None;
                r.map_err(connection_error)?
            }
        };
        let id = send.id();
        let send = Arc::new(Mutex::new(send));
        self.priorities.register(id.into(), send.clone());
        Poll::Ready(Ok(Bidi {
            send: SendHalf {
                stream: send,
                writing: None,
                id: stream_id(id),
            },
            recv: RecvBidi {
                stream: recv,
                buf: Vec::new(),
                id: stream_id(id),
            },
            limit: FrameLimit::request(self.limit),
        }))
    }

    fn opener(&self) -> Opener {
        Opener {
            inner: quic::Connection::<B>::opener(&self.inner),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame_head(kind: u64, len: u64) -> Vec<u8> {
        let mut out = Vec::new();
        proto::varint::encode(&mut out, kind);
        proto::varint::encode(&mut out, len);
        out
    }

    /// Fed one byte at a time and all at once, the same answer.
    fn both(mut make: impl FnMut() -> FrameLimit, bytes: &[u8]) -> Result<(), Exceeded> {
        let whole = make().feed(bytes);
        let mut f = make();
        let bytewise = bytes
            .iter()
            .try_for_each(|b| f.feed(std::slice::from_ref(b)));
        assert_eq!(whole, bytewise);
        whole
    }

    #[test]
    fn frames_within_the_limit_pass_and_any_data_passes() {
        let mut s = frame_head(0x01, 100);
        s.extend_from_slice(&[7; 100]);
        s.extend(frame_head(0x00, 1 << 40)); // DATA of any length
        s.extend_from_slice(&[0; 1000]);
        assert_eq!(both(|| FrameLimit::request(100), &s), Ok(()));
    }

    #[test]
    fn a_headers_frame_over_the_limit_is_refused_from_its_header() {
        let mut s = frame_head(0x01, 10);
        s.extend_from_slice(&[7; 10]);
        s.extend(frame_head(0x01, 101));
        assert_eq!(
            both(|| FrameLimit::request(100), &s),
            Err(Exceeded {
                kind: 0x01,
                len: 101
            })
        );
        // Unknown and reserved types too, with 8-byte lengths.
        let s = frame_head(0x21, (1 << 62) - 1);
        assert_eq!(
            both(|| FrameLimit::request(100), &s),
            Err(Exceeded {
                kind: 0x21,
                len: (1 << 62) - 1
            })
        );
    }

    #[test]
    fn only_the_control_stream_is_framed() {
        let mut control = vec![0x00];
        control.extend(frame_head(0x04, 1 << 20));
        let mut f = FrameLimit::unidirectional(100);
        assert!(f.feed(&control).is_err());
        assert!(f.is_control());
        // QPACK encoder and decoder streams, and unknown ones, pass whole.
        for kind in [0x02u8, 0x03, 0x21] {
            let mut s = vec![kind];
            s.extend(frame_head(0x04, 1 << 20));
            let mut f = FrameLimit::unidirectional(100);
            assert_eq!(f.feed(&s), Ok(()), "{kind}");
            assert!(!f.is_control());
        }
    }

    #[test]
    fn any_bytes_never_panic() {
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..2000 {
            let mut bytes = Vec::new();
            for _ in 0..(x % 64) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                bytes.push(x as u8);
            }
            let _ = both(|| FrameLimit::request(16), &bytes);
            let _ = both(|| FrameLimit::unidirectional(16), &bytes);
        }
    }

    #[test]
    fn priority_updates_on_the_control_stream_are_read_in_pieces() {
        use proto::priority::Signal;
        let mut wire = Vec::new();
        proto::varint::encode(&mut wire, CONTROL);
        wire.extend(frame_head(0x4, 0)); // SETTINGS
        let mut payload = Vec::new();
        proto::varint::encode(&mut payload, 8);
        payload.extend_from_slice(b"u=1, i");
        wire.extend(frame_head(PRIORITY_UPDATE, payload.len() as u64));
        wire.extend(&payload);
        // One too long to be a priority update is skipped.
        wire.extend(frame_head(PRIORITY_UPDATE, 1000));
        wire.extend(vec![b'u'; 1000]);
        let mut whole = FrameLimit::unidirectional(1 << 16);
        whole.feed(&wire).unwrap();
        let mut bytewise = FrameLimit::unidirectional(1 << 16);
        for b in &wire {
            bytewise.feed(std::slice::from_ref(b)).unwrap();
        }
        let want = vec![(
            8,
            Signal::Urgency {
                urgency: 1,
                incremental: true,
            },
        )];
        assert_eq!(whole.take_updates(), want);
        assert_eq!(bytewise.take_updates(), want);
        // A request stream's frames are not priority updates.
        let mut request = FrameLimit::request(1 << 16);
        request.feed(&wire[1..]).unwrap();
        assert!(request.take_updates().is_empty());
    }

    #[test]
    fn quinn_priorities_order_urgency_then_non_incremental_by_arrival() {
        use proto::priority::Signal;
        let p = |urgency, incremental, seq| {
            quinn_priority(
                Signal::Urgency {
                    urgency,
                    incremental,
                },
                seq,
            )
        };
        assert!(p(0, true, 9) > p(1, false, 0));
        assert!(p(3, false, 1) > p(3, false, 2));
        assert!(p(3, false, 2) > p(3, true, 0));
        assert_eq!(p(3, true, 0), p(3, true, 7));
        assert!(p(7, false, u32::MAX) >= 0);
    }
}
