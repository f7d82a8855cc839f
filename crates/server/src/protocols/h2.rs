//! HTTP/2 (over TLS by ALPN `h2`, or cleartext h2c) on the `h2` crate, with
//! our own stream scheduler: the server's limit of concurrent streams in
//! SETTINGS, protocol errors ending in GOAWAY with the right code (the `h2`
//! crate's state machine), and responses sent in the order the client's
//! priorities ask (`proto::priority`; `--server-priorities off`: round robin).
//!
//! Why not hyper's HTTP/2 server, as before: it hands each response's body
//! to the `h2` crate whole, and the `h2` crate sends the streams with data
//! round robin, a frame each, whatever the client said (it parses priorities
//! and drops them). Here the connection's task hands the `h2` crate one
//! chunk ([`CHUNK`]) at a time, to the stream the scheduler names, and the
//! next only once the `h2` crate has written the last to the socket
//! (`proto::h2::signals::DataCounter` on the bytes written); the client's
//! signals come from its bytes as they are read (`SignalTap`). So the order
//! is decided when the socket takes more: with `--notsent-lowat`, when the
//! kernel's unsent bytes fall below it; without, the kernel's send buffer
//! (megabytes) takes what it is given, and priorities decide only what fills
//! it — the failure the prioritization test (`spdylab priorities`) shows.
//!
//! The page's document may be answered first with a `103 Early Hints`
//! (`--early-hints`: `Content::early_hints`) and be sent with pushed
//! responses (`--push`: `Content::pushes`), both as soon as its request is
//! read, before its think time (`--server-think`): a PUSH_PROMISE each (none
//! when the client's SETTINGS_ENABLE_PUSH is 0: the `h2` crate refuses),
//! and each pushed response through the same scheduler as the others, at
//! the priority RFC 7540 §5.3.5 gives a pushed stream (dependent on the
//! document's) with the weight and urgency Chrome gives a request of its
//! kind ([`pushed_priority`]).
//!
//! Each stream's `h2` send buffer is [`CHUNK`] (hyper's was 400 KiB), its
//! receive windows hyper's (1 MiB), and idle connections are pinged every
//! [`KEEPALIVE`] and closed when a ping goes unanswered for
//! [`KEEPALIVE_TIMEOUT`], as hyper did.

use super::{BoxIo, ServeFuture, ServeProtocol};
use crate::Ctx;
use bytes::Bytes;
use h2::server::{SendPushedResponse, SendResponse};
use h2::SendStream;
use http::{Request, Response};
use http_body_util::Full;
use proto::h2::signals::{DataCounter, SignalTap};
use proto::priority::{parse_priority_field, Scheduler, Signal};
use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};

pub struct H2;

/// The most DATA handed to the `h2` crate and not yet written: one frame of
/// the default SETTINGS_MAX_FRAME_SIZE.
pub const CHUNK: usize = 16 * 1024;

/// Idle connections are pinged this often, and closed if the ping goes
/// unanswered for [`KEEPALIVE_TIMEOUT`].
const KEEPALIVE: Duration = Duration::from_secs(30);
/// Long enough for a client that is slow only because the machine is
/// overloaded (a load test's users queue; they are not dead): 10 s could cut
/// live users' connections under a 10 000-user load.
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(60);
/// A client has this long for its preface and SETTINGS.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(75);
/// Receive windows, stream and connection (hyper's defaults).
const WINDOW: u32 = 1024 * 1024;
/// The largest request header list taken (hyper's default).
const MAX_HEADER_LIST: u32 = 16 << 10;
/// Streams the client reset that `h2` keeps counting (hyper's default).
const MAX_LOCAL_ERROR_RESETS: usize = 1024;

impl H2 {
    /// Serves an HTTP/2 connection on any I/O (also the upgraded h2c one).
    pub fn serve_io<I>(io: I, ctx: Arc<Ctx>) -> ServeFuture
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        Box::pin(async move {
            let wire = Arc::new(Mutex::new(Wire::default()));
            let io = Tapped {
                inner: io,
                wire: wire.clone(),
            };
            let mut builder = h2::server::Builder::new();
            builder
                .initial_window_size(WINDOW)
                .initial_connection_window_size(WINDOW)
                .max_header_list_size(MAX_HEADER_LIST)
                .max_local_error_reset_streams(Some(MAX_LOCAL_ERROR_RESETS))
                .max_send_buffer_size(CHUNK)
                .max_concurrent_streams(ctx.knobs.max_streams);
            let Ok(Ok(mut h2)) =
                tokio::time::timeout(HANDSHAKE_TIMEOUT, builder.handshake::<_, Bytes>(io)).await
            else {
                return;
            };
            let ping = h2.ping_pong();
            let mut conn = Connection {
                sched: Scheduler::new(ctx.knobs.priorities),
                ctx,
                wire,
                ping,
                h2,
                sending: HashMap::new(),
                waiting: JoinSet::new(),
                in_h2: HashMap::new(),
                in_h2_total: 0,
                idle: Box::pin(tokio::time::sleep(KEEPALIVE)),
                pinged: false,
            };
            std::future::poll_fn(|cx| conn.poll(cx)).await;
        })
    }
}

impl ServeProtocol for H2 {
    fn alpn(&self) -> &'static [u8] {
        b"h2"
    }

    fn serve(&self, io: BoxIo, ctx: Arc<Ctx>) -> ServeFuture {
        H2::serve_io(io, ctx)
    }
}

/// What the bytes on the wire told: the client's priority signals, and how
/// much DATA the server has written.
#[derive(Default)]
struct Wire {
    tap: SignalTap,
    written: DataCounter,
}

/// The connection's I/O, read and written through the [`Wire`].
struct Tapped<I> {
    inner: I,
    wire: Arc<Mutex<Wire>>,
}

impl<I> Tapped<I> {
    fn wire(&self) -> std::sync::MutexGuard<'_, Wire> {
        self.wire.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<I: AsyncRead + Unpin> AsyncRead for Tapped<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.wire().tap.feed(&buf.filled()[before..]);
        }
        r
    }
}

impl<I: AsyncWrite + Unpin> AsyncWrite for Tapped<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = r {
            self.wire().written.feed(&buf[..n]);
        }
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(mut n)) = r {
            let mut wire = self.wire();
            for b in bufs {
                let take = n.min(b.len());
                wire.written.feed(&b[..take]);
                n -= take;
                if n == 0 {
                    break;
                }
            }
        }
        r
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// A response being sent: what is left of its body.
struct Sending {
    send: SendStream<Bytes>,
    left: Bytes,
    /// No flow-control capacity now: waiting for a WINDOW_UPDATE.
    blocked: bool,
}

/// Where a response goes: the stream of a request, or one the server
/// promised (a push).
enum Responder {
    Asked(SendResponse<Bytes>),
    Pushed(SendPushedResponse<Bytes>),
}

impl Responder {
    fn send_response(
        &mut self,
        head: Response<()>,
        end: bool,
    ) -> Result<SendStream<Bytes>, h2::Error> {
        match self {
            Responder::Asked(r) => r.send_response(head, end),
            Responder::Pushed(r) => r.send_response(head, end),
        }
    }
}

/// A response made off the connection's task (content that has to wait:
/// a think time, a request body still coming).
type Made = (u32, Responder, Response<Full<Bytes>>);

/// The priority of a pushed stream of `kind` promised on stream `parent`:
/// RFC 7540 §5.3.5's place (dependent on the associated stream, not
/// exclusive) with the weight Chrome gives a request of that kind
/// (`Spdy3PriorityToHttp2Weight` of its SPDY priority, `super::push_priority`), and the
/// RFC 9218 urgency Chrome sends for it (the same number; images
/// incremental).
fn pushed_priority(parent: u32, kind: site::Kind) -> (Signal, Signal) {
    let spdy3 = super::push_priority(kind);
    let weight = ((255.9f32 / 7.0) * (7.0 - f32::from(spdy3))) as u16 + 1;
    (
        Signal::Tree {
            parent,
            weight,
            exclusive: false,
        },
        Signal::Urgency {
            urgency: spdy3,
            incremental: kind == site::Kind::Png,
        },
    )
}

struct Connection<I> {
    h2: h2::server::Connection<Tapped<I>, Bytes>,
    ctx: Arc<Ctx>,
    wire: Arc<Mutex<Wire>>,
    sched: Scheduler,
    sending: HashMap<u32, Sending>,
    waiting: JoinSet<Option<Made>>,
    /// DATA handed to the `h2` crate and not yet written, per stream: a
    /// stream the client resets loses what it had there (the `h2` crate
    /// drops it), so its share is forgotten, not waited for.
    in_h2: HashMap<u32, u64>,
    /// The sum of `in_h2`.
    in_h2_total: u64,
    ping: Option<h2::PingPong>,
    idle: Pin<Box<Sleep>>,
    pinged: bool,
}

impl<I: AsyncRead + AsyncWrite + Unpin> Connection<I> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            let mut again = false;
            match self.h2.poll_accept(cx) {
                Poll::Ready(Some(Ok((req, respond)))) => {
                    self.accept(req, respond);
                    again = true;
                }
                Poll::Ready(Some(Err(_))) | Poll::Ready(None) => return Poll::Ready(()),
                Poll::Pending => {}
            }
            self.take_signals();
            while let Poll::Ready(Some(made)) = self.waiting.poll_join_next(cx) {
                if let Ok(Some((id, respond, resp))) = made {
                    self.start(id, respond, resp);
                }
                again = true;
            }
            self.poll_streams(cx);
            if self.fill() {
                again = true;
            }
            if again {
                self.touch();
                continue;
            }
            return self.poll_keepalive(cx);
        }
    }

    fn wire(&self) -> std::sync::MutexGuard<'_, Wire> {
        self.wire.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The client's priority signals read so far, to the scheduler.
    fn take_signals(&mut self) {
        let signals = self.wire().tap.take();
        for (id, signal) in signals {
            self.sched.reprioritize(id, signal);
        }
    }

    /// A request: its priority goes to the scheduler; its response is made
    /// here when the content is at hand, else on a task of its own.
    fn accept(&mut self, req: Request<h2::RecvStream>, respond: SendResponse<Bytes>) {
        let id: u32 = respond.stream_id().into();
        // Tree fields came through the tap (read before `h2` parsed them).
        self.take_signals();
        let urgency = req
            .headers()
            .get("priority")
            .and_then(|v| v.to_str().ok())
            .map(parse_priority_field);
        self.sched.open(id, None, urgency);
        // Not safe, and from TLS early data not yet verified: 425
        // (`crate::early`; `accept` runs in the connection's task).
        if let Some(resp) = crate::early::too_early(req.method(), &self.ctx.early) {
            self.start(id, Responder::Asked(respond), resp);
            return;
        }
        let (parts, mut body) = req.into_parts();
        let head = Request::from_parts(parts, ());
        let mut respond = respond;
        if let Some(hints) = self.ctx.content.early_hints(&head) {
            let _ = respond.send_informational(hints);
        }
        for (pushed, kind) in self.ctx.content.pushes(&head) {
            if !self.push(id, &mut respond, pushed, kind) {
                break;
            }
        }
        let respond = Responder::Asked(respond);
        let (parts, ()) = head.into_parts();
        let ctx = self.ctx.clone();
        if body.is_end_stream() {
            self.respond_to(id, respond, Request::from_parts(parts, ()));
            return;
        }
        self.waiting.spawn(async move {
            let mut bytes = 0usize;
            while let Some(chunk) = body.data().await {
                let chunk = chunk.ok()?;
                bytes += chunk.len();
                let _ = body.flow_control().release_capacity(chunk.len());
                if bytes > crate::content::MAX_REQUEST_BODY {
                    let resp = crate::content::plain(
                        http::StatusCode::BAD_REQUEST,
                        "the request body is malformed or too large\n".into(),
                    );
                    return Some((id, respond, resp));
                }
            }
            let resp = ctx
                .content
                .respond_read(Request::from_parts(parts, ()), bytes)
                .await;
            Some((id, respond, resp))
        });
    }

    /// The response to a request without a body (read, or promised): made
    /// here when the content is at hand, else on a task of its own.
    fn respond_to(&mut self, id: u32, respond: Responder, req: Request<()>) {
        let ctx = self.ctx.clone();
        let mut made = Box::pin(async move { ctx.content.respond_read(req, 0).await });
        let waker = std::task::Waker::noop();
        match made
            .as_mut()
            .poll(&mut std::task::Context::from_waker(waker))
        {
            Poll::Ready(resp) => self.start(id, respond, resp),
            Poll::Pending => {
                self.waiting
                    .spawn(async move { Some((id, respond, made.await)) });
            }
        }
    }

    /// Promises `req` on stream `parent` (a PUSH_PROMISE) and makes its
    /// response, scheduled at [`pushed_priority`]. False when the client
    /// takes no push (SETTINGS_ENABLE_PUSH 0) or no more streams.
    fn push(
        &mut self,
        parent: u32,
        respond: &mut SendResponse<Bytes>,
        req: Request<()>,
        kind: site::Kind,
    ) -> bool {
        let Ok(promise) = Request::builder()
            .method(req.method().clone())
            .uri(req.uri().clone())
            .body(())
        else {
            return false;
        };
        let Ok(pushed) = respond.push_request(promise) else {
            return false;
        };
        let id: u32 = pushed.stream_id().into();
        let (tree, urgency) = pushed_priority(parent, kind);
        self.sched.open(id, Some(tree), Some(urgency));
        self.respond_to(id, Responder::Pushed(pushed), req);
        true
    }

    /// Sends the response's head; its body waits for the scheduler.
    fn start(&mut self, id: u32, mut respond: Responder, resp: Response<Full<Bytes>>) {
        let (mut head, body) = resp.into_parts();
        strip_connection_headers(&mut head.headers);
        let body = full_bytes(body);
        let Ok(mut send) = respond.send_response(Response::from_parts(head, ()), body.is_empty())
        else {
            self.sched.close(id);
            return;
        };
        if body.is_empty() {
            self.sched.close(id);
            return;
        }
        send.reserve_capacity(body.len().min(CHUNK));
        self.sending.insert(
            id,
            Sending {
                send,
                left: body,
                blocked: true,
            },
        );
    }

    /// Flow-control capacity: which blocked streams may send again. (A
    /// reset comes off the wire through the tap, see `unwritten`, or as an
    /// error here or from `send_data`: asking every stream `poll_reset` on
    /// each turn took the `h2` crate's lock once per stream and turn.)
    fn poll_streams(&mut self, cx: &mut Context<'_>) {
        let mut gone = Vec::new();
        for (&id, s) in self.sending.iter_mut() {
            if !s.blocked {
                continue;
            }
            let capacity = match s.send.poll_capacity(cx) {
                Poll::Ready(Some(Ok(n))) => n.max(s.send.capacity()),
                Poll::Ready(Some(Err(_))) | Poll::Ready(None) => {
                    gone.push(id);
                    continue;
                }
                Poll::Pending => s.send.capacity(),
            };
            if capacity > 0 {
                s.blocked = false;
                self.sched.ready(id, true);
            }
        }
        for id in gone {
            self.drop_stream(id);
        }
    }

    /// A stream that will send no more: reset, or refused by the `h2` crate.
    fn drop_stream(&mut self, id: u32) {
        self.sending.remove(&id);
        self.forget_in_h2(id);
        self.sched.close(id);
    }

    /// What `id` had in the `h2` crate is not waited for any more.
    fn forget_in_h2(&mut self, id: u32) {
        if let Some(n) = self.in_h2.remove(&id) {
            self.in_h2_total -= n;
        }
    }

    /// Hands chunks to the streams the scheduler names while less than a
    /// chunk is waiting in the `h2` crate. True if any was handed.
    fn fill(&mut self) -> bool {
        let mut any = false;
        loop {
            if self.unwritten() >= CHUNK as u64 {
                return any;
            }
            let Some(id) = self.sched.next() else {
                return any;
            };
            let Some(s) = self.sending.get_mut(&id) else {
                self.sched.close(id);
                continue;
            };
            let room = s.send.capacity();
            if room == 0 {
                s.blocked = true;
                s.send.reserve_capacity(s.left.len().min(CHUNK));
                self.sched.ready(id, false);
                continue;
            }
            let n = room.min(CHUNK).min(s.left.len());
            let chunk = s.left.split_to(n);
            let end = s.left.is_empty();
            if s.send.send_data(chunk, end).is_err() {
                self.drop_stream(id);
                continue;
            }
            any = true;
            *self.in_h2.entry(id).or_default() += n as u64;
            self.in_h2_total += n as u64;
            self.sched.sent(id, n);
            if end {
                self.sending.remove(&id);
                self.sched.close(id);
            } else {
                s.send.reserve_capacity(s.left.len().min(CHUNK));
            }
        }
    }

    /// DATA handed to the `h2` crate and not yet written, after what the
    /// wire says was written since and which streams the client reset (a
    /// reset stream sends no more).
    fn unwritten(&mut self) -> u64 {
        let (written, resets) = {
            let mut wire = self.wire();
            (wire.written.take_streams(), wire.tap.take_resets())
        };
        for (id, n) in written {
            if let Some(left) = self.in_h2.get_mut(&id) {
                let n = n.min(*left);
                *left -= n;
                self.in_h2_total -= n;
                if *left == 0 {
                    self.in_h2.remove(&id);
                }
            }
        }
        for id in resets {
            self.drop_stream(id);
        }
        self.in_h2_total
    }

    fn touch(&mut self) {
        self.pinged = false;
        let at = Instant::now() + KEEPALIVE;
        if self.idle.deadline() + Duration::from_secs(1) < at {
            self.idle.as_mut().reset(at);
        }
    }

    /// Idle: a ping every [`KEEPALIVE`]; no answer in [`KEEPALIVE_TIMEOUT`]
    /// closes the connection.
    fn poll_keepalive(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(ping) = self.ping.as_mut() else {
            return Poll::Pending;
        };
        if self.pinged {
            if let Poll::Ready(r) = ping.poll_pong(cx) {
                if r.is_err() {
                    return Poll::Ready(());
                }
                self.pinged = false;
                self.idle.as_mut().reset(Instant::now() + KEEPALIVE);
            }
        }
        if self.idle.as_mut().poll(cx).is_ready() {
            if self.pinged {
                return Poll::Ready(());
            }
            if ping.send_ping(h2::Ping::opaque()).is_err() {
                return Poll::Ready(());
            }
            self.pinged = true;
            self.idle.as_mut().reset(Instant::now() + KEEPALIVE_TIMEOUT);
            // Wake again to register the timer and poll the pong.
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }
}

use std::future::Future;

/// The body of a `Full`: ready at once.
fn full_bytes(body: Full<Bytes>) -> Bytes {
    use http_body::Body;
    let mut body = std::pin::pin!(body);
    let waker = std::task::Waker::noop();
    match body
        .as_mut()
        .poll_frame(&mut std::task::Context::from_waker(waker))
    {
        Poll::Ready(Some(Ok(frame))) => frame.into_data().unwrap_or_default(),
        _ => Bytes::new(),
    }
}

/// Headers HTTP/2 forbids in a response (RFC 9113 §8.2.2), which a recorded
/// HTTP/1.1 response may carry: the `h2` crate refuses them, hyper dropped
/// them.
fn strip_connection_headers(headers: &mut http::HeaderMap) {
    for name in [
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "upgrade",
        "te",
    ] {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_specific_headers_are_dropped() {
        let mut h = http::HeaderMap::new();
        h.insert("connection", "keep-alive".parse().unwrap());
        h.insert("transfer-encoding", "chunked".parse().unwrap());
        h.insert("content-type", "text/html".parse().unwrap());
        strip_connection_headers(&mut h);
        assert_eq!(h.len(), 1);
    }

    #[test]
    fn a_full_body_is_read_at_once() {
        assert_eq!(full_bytes(Full::new(Bytes::from_static(b"abc"))), "abc");
    }
}
