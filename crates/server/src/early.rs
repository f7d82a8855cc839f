//! TLS 1.3 early data (0-RTT) over TCP, for the repeat view
//! (`Knobs::early_data`, issue 38; docs/repeat-view.md): a request a
//! returning client sends in its first flight, beside its ClientHello, is
//! handed to h1, h2 or SPDY ahead of the 1-RTT bytes and answered at once,
//! after the server's Finished (0.5-RTT data), one round trip before a
//! resumed handshake without early data could answer it.
//!
//! **Why this is hand-written.** tokio-rustls 0.26 (0.26.6, the newest on
//! crates.io when this was written) never reads rustls's early data on the
//! server side: its `early-data` feature is the client's only, its
//! `TlsAcceptor` finishes the whole handshake before it hands out a stream,
//! and its server stream reads `ServerConnection::reader()` alone (the
//! maintainers' answer, rustls/tokio-rustls#70, is to read
//! `ServerConnection::early_data()` yourself; the PR that would add it,
//! #73, is not merged). So [`accept`] drives rustls's `ServerConnection`
//! itself until the ClientHello is read and the server's first flight
//! written. If rustls accepted early data, the connection becomes an
//! [`EarlyStream`]: reads give the early data first, then the 1-RTT bytes
//! once the client's Finished is in, and writes go out at once
//! (`ServerConfig::send_half_rtt_data`). Any other connection (no ticket,
//! early data rejected, TLS 1.2, a HelloRetryRequest) is handed,
//! mid-handshake, to tokio-rustls (`TlsAcceptor::accept_with`, its session
//! swapped for ours), which finishes it exactly as before: only connections
//! that really carry early data take the hand-written path.
//!
//! **Limits.** `max_early_data_size` is [`MAX_EARLY_DATA`], 16 KiB: a first
//! flight's requests (an h2 preface, SETTINGS and the document's HEADERS
//! with Chrome 2014's headers and a 4 KiB cookie are under 6 KiB; one
//! HTTP/1.1 request as much) with room to spare, and no more than one TLS
//! record of plaintext to hold per connection before the handshake is
//! verified. rustls accepts early data only with stateful resumption: the
//! TCP server keeps a session cache and no ticketer when early data is on
//! (TLS 1.3 tickets then name cache entries; TLS 1.2 resumes by session ID).
//!
//! **Replay** (RFC 8446 §8, RFC 8470). Early data is not protected against
//! replay by TLS itself. Here: (1) a stateful session is taken out of the
//! cache when it resumes (rustls `take`s it), so a replayed ClientHello
//! cannot resume the same session twice on this server — RFC 8446 §8.1's
//! single-use tickets; (2) a request read while the handshake is not yet
//! complete ([`Gate::unverified`]) whose method is not safe (anything but
//! GET, HEAD and OPTIONS: an imported page's recorded POSTs) is answered
//! `425 Too Early` (RFC 8470 §5.2) by every protocol, so the client retries
//! it after the handshake; a safe request is served at once (RFC 8470 §3:
//! the server decides what it risks; GET and HEAD change nothing here). A
//! request from early data read after the client's Finished came in is
//! served whatever its method: a completed handshake proves it was no
//! replay (RFC 8470 §3, deferring).
//!
//! Counted: [`Counters`] (the connections whose early data was accepted,
//! and the early bytes read), shared by the server's TCP listeners.

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Response, StatusCode};
use rustls::ServerConnection;
use std::io::{self, Read, Write};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// The most early data taken per connection (rustls's
/// `max_early_data_size`, which also goes into each ticket): see the
/// module doc.
pub const MAX_EARLY_DATA: u32 = 16 * 1024;

/// What the server counts of TLS early data over TCP.
#[derive(Debug, Default)]
pub struct Counters {
    /// Connections whose early data was accepted.
    pub accepted: AtomicUsize,
    /// Early data bytes read from them.
    pub bytes: AtomicU64,
    /// Requests answered 425 Too Early.
    pub too_early: AtomicUsize,
}

impl Counters {
    /// Connections whose early data was accepted so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::Relaxed)
    }
}

tokio::task_local! {
    /// The gate of the connection the current task serves (set around a
    /// protocol's whole connection future by the TLS listener; the
    /// protocols ask it in that task, where they read each request).
    static GATE: Gate;
}

/// Whether the connection a request came on is still in its early data:
/// its handshake not complete, so the request could be a replay.
#[derive(Debug, Clone, Default)]
pub struct Gate(Option<Arc<AtomicBool>>);

impl Gate {
    /// A connection with early data, its handshake not yet complete.
    fn early() -> Gate {
        Gate(Some(Arc::new(AtomicBool::new(false))))
    }

    /// The client's Finished came in: nothing after is early.
    fn verify(&self) {
        if let Some(done) = &self.0 {
            done.store(true, Ordering::Relaxed);
        }
    }

    /// True while a request may have come in unverified early data.
    pub fn unverified(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|done| !done.load(Ordering::Relaxed))
    }

    /// The gate of the connection this task serves (none, and so verified,
    /// outside a connection with early data).
    pub fn current() -> Gate {
        GATE.try_with(Gate::clone).unwrap_or_default()
    }

    /// Runs `serve` (a connection's whole future) with this gate as the
    /// task's.
    pub async fn scope<F: std::future::Future>(self, serve: F) -> F::Output {
        GATE.scope(self, serve).await
    }
}

/// A safe method (RFC 9110 §9.2.1) may be answered from early data.
pub fn safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// `425 Too Early` (RFC 8470 §5.2) for a request of `method` read on this
/// task's connection before its handshake completed, when the method is
/// not safe; None: serve it.
pub fn too_early(method: &Method, counters: &Counters) -> Option<Response<Full<Bytes>>> {
    if safe(method) || !Gate::current().unverified() {
        return None;
    }
    counters.too_early.fetch_add(1, Ordering::Relaxed);
    Some(crate::content::plain(
        StatusCode::from_u16(425).unwrap_or(StatusCode::BAD_REQUEST),
        "a request that is not safe is not served from TLS early data: retry after the handshake\n"
            .into(),
    ))
}

/// An accepted TLS connection: with early data (hand-written), or handed to
/// tokio-rustls.
pub enum Accepted {
    Early(EarlyStream),
    Plain(tokio_rustls::server::TlsStream<TcpStream>),
}

impl Accepted {
    /// The protocol ALPN chose.
    pub fn alpn(&self) -> Option<&[u8]> {
        match self {
            Accepted::Early(s) => s.conn.alpn_protocol(),
            Accepted::Plain(s) => s.get_ref().1.alpn_protocol(),
        }
    }

    /// rustls's connection (to set its buffer limit).
    pub fn connection_mut(&mut self) -> &mut ServerConnection {
        match self {
            Accepted::Early(s) => &mut s.conn,
            Accepted::Plain(s) => s.get_mut().1,
        }
    }

    /// The gate a protocol serving it asks ([`Gate::current`]).
    pub fn gate(&self) -> Gate {
        match self {
            Accepted::Early(s) => s.gate.clone(),
            Accepted::Plain(_) => Gate::default(),
        }
    }
}

/// Accepts a TLS connection on `sock` with `acceptor`'s configuration,
/// taking its early data when rustls accepts it (module doc).
pub async fn accept(
    acceptor: &tokio_rustls::TlsAcceptor,
    mut sock: TcpStream,
    counters: &Arc<Counters>,
) -> io::Result<Accepted> {
    let mut conn = ServerConnection::new(acceptor.config().clone()).map_err(io::Error::other)?;
    // Until the ClientHello is read (the version is chosen with it).
    while conn.protocol_version().is_none() {
        let n = std::future::poll_fn(|cx| poll_read_tls(&mut conn, &mut sock, cx)).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        if let Err(e) = conn.process_new_packets() {
            // The alert, best effort.
            let _ = std::future::poll_fn(|cx| poll_write_tls(&mut conn, &mut sock, cx)).await;
            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
        }
    }
    if conn.early_data().is_none() {
        // No early data taken: tokio-rustls finishes the handshake, as
        // without early data (what it has read stays in `conn`).
        let stream = acceptor.accept_with(sock, |fresh| *fresh = conn).await?;
        return Ok(Accepted::Plain(stream));
    }
    counters.accepted.fetch_add(1, Ordering::Relaxed);
    let stream = EarlyStream {
        io: sock,
        conn,
        gate: Gate::early(),
        eof: false,
        counters: counters.clone(),
    };
    // The server's flight (and its 0.5-RTT data, none yet) goes out now;
    // the early data is read by the protocol.
    let mut stream = stream;
    std::future::poll_fn(|cx| stream.poll_flush_tls(cx)).await?;
    Ok(Accepted::Early(stream))
}

/// A TLS connection whose early data was accepted: the early data is read
/// first, then the 1-RTT data; the handshake finishes as it is read.
pub struct EarlyStream {
    io: TcpStream,
    conn: ServerConnection,
    gate: Gate,
    /// The client closed its side (TCP).
    eof: bool,
    /// Where the early bytes read are counted.
    counters: Arc<Counters>,
}

impl EarlyStream {
    /// Writes what rustls has to send (handshake, alerts, records).
    fn poll_flush_tls(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.conn.wants_write() {
            ready!(poll_write_tls(&mut self.conn, &mut self.io, cx))?;
        }
        Poll::Ready(Ok(()))
    }
}

/// Reads TLS records from `io` into `conn`: the bytes read, 0 at EOF.
fn poll_read_tls(
    conn: &mut ServerConnection,
    io: &mut TcpStream,
    cx: &mut Context<'_>,
) -> Poll<io::Result<usize>> {
    let mut sync = SyncIo { io, cx };
    match conn.read_tls(&mut sync) {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Poll::Pending,
        r => Poll::Ready(r),
    }
}

/// Writes TLS records from `conn` to `io`: the bytes written.
fn poll_write_tls(
    conn: &mut ServerConnection,
    io: &mut TcpStream,
    cx: &mut Context<'_>,
) -> Poll<io::Result<usize>> {
    let mut sync = SyncIo { io, cx };
    match conn.write_tls(&mut sync) {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Poll::Pending,
        Ok(0) => Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
        r => Poll::Ready(r),
    }
}

/// A TCP stream as rustls's blocking `Read`/`Write`: Pending is WouldBlock
/// (the task's waker is registered).
struct SyncIo<'a, 'b> {
    io: &'a mut TcpStream,
    cx: &'a mut Context<'b>,
}

impl Read for SyncIo<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut rb = ReadBuf::new(buf);
        match Pin::new(&mut *self.io).poll_read(self.cx, &mut rb) {
            Poll::Ready(Ok(())) => Ok(rb.filled().len()),
            Poll::Ready(Err(e)) => Err(e),
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }
}

impl Write for SyncIo<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match Pin::new(&mut *self.io).poll_write(self.cx, buf) {
            Poll::Ready(r) => r,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match Pin::new(&mut *self.io).poll_write_vectored(self.cx, bufs) {
            Poll::Ready(r) => r,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl AsyncRead for EarlyStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // What the handshake left to send (tickets, alerts), best effort: a
        // full socket wakes this task when it drains.
        if let Poll::Ready(Err(e)) = this.poll_flush_tls(cx) {
            return Poll::Ready(Err(e));
        }
        loop {
            // Early data first: it came before every 1-RTT byte. rustls
            // keeps it after the handshake until it is read.
            if let Some(mut early) = this.conn.early_data() {
                let n = early.read(buf.initialize_unfilled())?;
                if n > 0 {
                    buf.advance(n);
                    this.counters.bytes.fetch_add(n as u64, Ordering::Relaxed);
                    return Poll::Ready(Ok(()));
                }
            }
            match this.conn.reader().read(buf.initialize_unfilled()) {
                Ok(n) => {
                    // 0: the client's close_notify.
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // TCP closed without close_notify: an end, as for a plain socket.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Poll::Ready(Ok(())),
                Err(e) => return Poll::Ready(Err(e)),
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let n = ready!(poll_read_tls(&mut this.conn, &mut this.io, cx))?;
            if n == 0 {
                this.eof = true;
            }
            if let Err(e) = this.conn.process_new_packets() {
                let _ = this.poll_flush_tls(cx);
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, e)));
            }
            if !this.conn.is_handshaking() {
                this.gate.verify();
            }
            if let Poll::Ready(Err(e)) = this.poll_flush_tls(cx) {
                return Poll::Ready(Err(e));
            }
        }
    }
}

impl AsyncWrite for EarlyStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        // The first try takes what rustls's buffer can; when it is full,
        // the socket takes its records first and the second try goes in.
        for _ in 0..2 {
            let n = this.conn.writer().write(buf)?;
            if n > 0 {
                if let Poll::Ready(Err(e)) = this.poll_flush_tls(cx) {
                    return Poll::Ready(Err(e));
                }
                return Poll::Ready(Ok(n));
            }
            ready!(this.poll_flush_tls(cx))?;
        }
        // Nothing buffered and nothing taken: rustls holds the plaintext
        // for a handshake not yet at its end, which send_half_rtt_data
        // rules out once early data is accepted.
        Poll::Ready(Err(io::Error::other(
            "TLS took no 0.5-RTT data (send_half_rtt_data is off?)",
        )))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_flush_tls(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.conn.send_close_notify();
        ready!(this.poll_flush_tls(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_an_unsafe_request_in_unverified_early_data_is_too_early() {
        let counters = Counters::default();
        // Outside a connection with early data: everything is served.
        assert!(too_early(&Method::POST, &counters).is_none());
        let gate = Gate::early();
        let (get, post) = gate
            .clone()
            .scope(async {
                (
                    too_early(&Method::GET, &counters).is_none(),
                    too_early(&Method::POST, &counters).map(|r| r.status().as_u16()),
                )
            })
            .await;
        assert!(get);
        assert_eq!(post, Some(425));
        gate.verify();
        let after = gate
            .scope(async { too_early(&Method::POST, &counters).is_none() })
            .await;
        assert!(after, "served once the handshake is complete");
        assert_eq!(counters.too_early.load(Ordering::Relaxed), 1);
    }
}
