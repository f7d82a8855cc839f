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
use std::task::{Context, Poll};

/// H3_EXCESSIVE_LOAD (RFC 9114 §8.1).
pub const H3_EXCESSIVE_LOAD: u64 = 0x107;

/// The frame types the guard must know (RFC 9114 §7.2; the WebTransport
/// draft's bidirectional stream signal, which has no length).
const DATA: u64 = 0x00;
const WEBTRANSPORT_BI: u64 = 0x41;
/// The unidirectional stream type of the control stream.
const CONTROL: u64 = 0x00;

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
    /// Inside a frame's payload: bytes left.
    Payload(u64),
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
}

impl FrameLimit {
    /// For a request stream (frames from the first byte).
    pub fn request(limit: u64) -> FrameLimit {
        FrameLimit {
            limit,
            state: State::varint(Next::FrameType),
            control: false,
        }
    }

    /// For a unidirectional stream (its type first; only the control stream
    /// is framed).
    pub fn unidirectional(limit: u64) -> FrameLimit {
        FrameLimit {
            limit,
            state: State::varint(Next::StreamType),
            control: false,
        }
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
                State::Payload(left) => {
                    let n = (*left).min(bytes.len() as u64);
                    *left -= n;
                    bytes = &bytes[n as usize..];
                    if *left == 0 {
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
                        Next::FrameLen { .. } => State::Payload(v),
                    };
                }
            }
        }
        Ok(())
    }
}

/// h3's view of a QUIC connection, with every request stream and the
/// peer's control stream under a [`FrameLimit`].
pub struct Guarded {
    inner: h3_quinn::Connection,
    conn: quinn::Connection,
    limit: u64,
}

impl Guarded {
    /// `limit`: the longest frame (other than DATA) taken, in bytes.
    pub fn new(conn: quinn::Connection, limit: u64) -> Guarded {
        Guarded {
            inner: h3_quinn::Connection::new(conn.clone()),
            conn,
            limit,
        }
    }
}

/// A request stream (or one the server opened) under a limit.
pub struct Bidi<B: Buf> {
    inner: h3_quinn::BidiStream<B>,
    limit: FrameLimit,
}

/// A receive stream under a limit; on the control stream, exceeding it
/// closes the connection.
pub struct Recv {
    inner: h3_quinn::RecvStream,
    limit: FrameLimit,
    conn: Option<quinn::Connection>,
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
        match checked(self.inner.poll_data(cx), &mut self.limit) {
            Ok(p) => p,
            Err(_) => {
                self.inner.stop_sending(H3_EXCESSIVE_LOAD);
                quic::SendStream::<B>::reset(&mut self.inner, H3_EXCESSIVE_LOAD);
                Poll::Ready(Err(refused()))
            }
        }
    }

    fn stop_sending(&mut self, error_code: u64) {
        self.inner.stop_sending(error_code)
    }

    fn recv_id(&self) -> StreamId {
        self.inner.recv_id()
    }
}

impl<B: Buf> quic::SendStream<B> for Bidi<B> {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        self.inner.poll_ready(cx)
    }

    fn send_data<T: Into<WriteBuf<B>>>(&mut self, data: T) -> Result<(), StreamErrorIncoming> {
        self.inner.send_data(data)
    }

    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        self.inner.poll_finish(cx)
    }

    fn reset(&mut self, reset_code: u64) {
        self.inner.reset(reset_code)
    }

    fn send_id(&self) -> StreamId {
        self.inner.send_id()
    }
}

impl<B: Buf> quic::BidiStream<B> for Bidi<B> {
    type SendStream = h3_quinn::SendStream<B>;
    type RecvStream = Recv;

    fn split(self) -> (Self::SendStream, Self::RecvStream) {
        let (send, recv) = self.inner.split();
        (
            send,
            Recv {
                inner: recv,
                limit: self.limit,
                conn: None,
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
        match checked(self.inner.poll_data(cx), &mut self.limit) {
            Ok(p) => p,
            Err(_) => {
                self.inner.stop_sending(H3_EXCESSIVE_LOAD);
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
        self.inner.stop_sending(error_code)
    }

    fn recv_id(&self) -> StreamId {
        self.inner.recv_id()
    }
}

impl<B: Buf> quic::OpenStreams<B> for Guarded {
    type BidiStream = Bidi<B>;
    type SendStream = h3_quinn::SendStream<B>;

    fn poll_open_bidi(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Bidi<B>, StreamErrorIncoming>> {
        let limit = self.limit;
        quic::OpenStreams::<B>::poll_open_bidi(&mut self.inner, cx).map_ok(|inner| Bidi {
            inner,
            limit: FrameLimit::request(limit),
        })
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

/// The opener h3 keeps (for streams it opens itself), under the same limit.
pub struct Opener {
    inner: h3_quinn::OpenStreams,
    limit: u64,
}

impl<B: Buf> quic::OpenStreams<B> for Opener {
    type BidiStream = Bidi<B>;
    type SendStream = h3_quinn::SendStream<B>;

    fn poll_open_bidi(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Bidi<B>, StreamErrorIncoming>> {
        let limit = self.limit;
        quic::OpenStreams::<B>::poll_open_bidi(&mut self.inner, cx).map_ok(|inner| Bidi {
            inner,
            limit: FrameLimit::request(limit),
        })
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
        quic::Connection::<B>::poll_accept_recv(&mut self.inner, cx).map_ok(|inner| Recv {
            inner,
            limit: FrameLimit::unidirectional(limit),
            conn: Some(conn),
        })
    }

    fn poll_accept_bidi(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Bidi<B>, ConnectionErrorIncoming>> {
        let limit = self.limit;
        quic::Connection::<B>::poll_accept_bidi(&mut self.inner, cx).map_ok(|inner| Bidi {
            inner,
            limit: FrameLimit::request(limit),
        })
    }

    fn opener(&self) -> Opener {
        Opener {
            inner: quic::Connection::<B>::opener(&self.inner),
            limit: self.limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(out: &mut Vec<u8>, v: u64) {
        match v {
            0..=63 => out.push(v as u8),
            64..=16_383 => out.extend_from_slice(&(v as u16 | 0x4000).to_be_bytes()),
            16_384..=1_073_741_823 => {
                out.extend_from_slice(&(v as u32 | 0x8000_0000).to_be_bytes())
            }
            _ => out.extend_from_slice(&(v | 0xc000_0000_0000_0000).to_be_bytes()),
        }
    }

    fn frame_head(kind: u64, len: u64) -> Vec<u8> {
        let mut out = Vec::new();
        varint(&mut out, kind);
        varint(&mut out, len);
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
}
