//! The client's connections, shared by the browser model (`page`), the load
//! users (`users`) and `fetch_spdy3`: dialing (TCP from an optional bind
//! address, TLS trusting only the lab's CA, the ALPN check), then HTTP/1.1
//! (`h1`), HTTP/2 (`h2`), SPDY/3.1 (`spdy3`) or HTTP/3 over QUIC (`h3`) until the connection ends. A
//! connection reports to its owner by `Event`s; what went wrong is an `Error`,
//! whose variant says what kind of failure it is (callers classify by variant,
//! never by message text). Requests on h2, SPDY and h3 carry Chrome's
//! priority signals for their `crate::priority::Priority` (`h2_priority`
//! writes HTTP/2's into the `h2` crate's HEADERS frames). A 103 Early Hints
//! before a response is told (`Event::EarlyHints`, h2 and h3); a server
//! push (h2, SPDY/3.1) is told as `Event::Promised` and its response as
//! `Push*` events, until the owner cancels it by its `PushHandle`.

pub mod h1;
pub mod h2;
pub mod h2_priority;
pub mod h3;
pub mod spdy3;

use crate::schedule::{ConnId, ReqId};
use bytes::Bytes;
use proto::Protocol;
use rustls::pki_types::{CertificateDer, ServerName};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;

/// A byte stream a connection runs over: TCP, or TLS over TCP.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for T {}

/// What went wrong on a connection, or with a request on it.
#[derive(Debug)]
pub enum Error {
    /// TCP connect (or socket set-up) failed.
    Connect { addr: SocketAddr, source: io::Error },
    /// Binding the socket to the user's own address failed.
    Bind {
        addr: SocketAddr,
        ip: IpAddr,
        source: io::Error,
    },
    /// The host name is not a valid TLS server name.
    ServerName { sni: String, reason: String },
    /// The TLS handshake failed.
    Tls { sni: String, source: io::Error },
    /// TLS did not choose spdy/3.1 by ALPN.
    Alpn { sni: String },
    /// A host not in the hosts map.
    Unresolved(String),
    /// The HTTP/2 handshake failed.
    H2Handshake(::h2::Error),
    /// An HTTP/2 request failed, at the named step (stream, send, response, body).
    H2 {
        step: &'static str,
        source: ::h2::Error,
    },
    /// The request could not be built.
    Request(String),
    /// Writing a request failed.
    Write(Option<io::Error>),
    /// The connection closed (or was reset) before the response began.
    Closed,
    /// The connection closed (or was reset) in the middle of a response.
    ClosedMidBody,
    /// A response that cannot be framed.
    BadResponse(proto::h1::DecodeError),
    /// The SPDY session's connection ended (None: closed by the server).
    SpdySession(Option<io::Error>),
    /// A SPDY stream or session failed.
    Spdy(proto::spdy3::client::StreamError),
    /// QUIC or HTTP/3 failed, at the named step.
    Quic { step: &'static str, reason: String },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Connect { addr, source } => write!(f, "connect {addr}: {source}"),
            Error::Bind { addr, ip, source } => write!(f, "connect {addr} from {ip}: {source}"),
            Error::ServerName { sni, reason } => write!(f, "TLS server name {sni}: {reason}"),
            Error::Tls { sni, source } => write!(f, "TLS with {sni}: {source}"),
            Error::Alpn { sni } => write!(f, "TLS: {sni} did not negotiate spdy/3.1 by ALPN"),
            Error::Unresolved(host) => write!(f, "{host} is not in the hosts map"),
            Error::H2Handshake(e) => write!(f, "HTTP/2 handshake: {e}"),
            Error::H2 { step, source } => write!(f, "{step}: {source}"),
            Error::Request(e) => f.write_str(e),
            Error::Write(None) => f.write_str("write failed"),
            Error::Write(Some(e)) => write!(f, "write: {e}"),
            Error::Closed => f.write_str("connection closed"),
            Error::ClosedMidBody => f.write_str("connection closed mid-body"),
            Error::BadResponse(e) => write!(f, "bad response: {e}"),
            Error::SpdySession(None) => f.write_str("SPDY session closed"),
            Error::SpdySession(Some(e)) => write!(f, "SPDY session {e}"),
            Error::Spdy(e) => e.fmt(f),
            Error::Quic { step, reason } => write!(f, "{step}: {reason}"),
        }
    }
}

impl std::error::Error for Error {}

/// What a connection tells its owner.
pub enum Event {
    /// The connection is up; `sender` takes its requests.
    Connected {
        conn: ConnId,
        at: Instant,
        /// The TLS handshake's time in ms (-1 without TLS).
        tls_ms: f64,
        sender: RequestSender,
        /// The TLS handshake resumed an earlier session.
        resumed: bool,
    },
    ConnFailed {
        conn: ConnId,
        error: Error,
    },
    Sent {
        req: ReqId,
        at: Instant,
    },
    Head {
        req: ReqId,
        at: Instant,
        status: u16,
        content_type: String,
        /// The headers an HTTP cache reads (the repeat view's, `cache`).
        cache: crate::cache::CacheHeaders,
    },
    Data {
        req: ReqId,
        data: Bytes,
    },
    Done {
        req: ReqId,
        at: Instant,
        conn: ConnId,
    },
    Failed {
        req: ReqId,
        error: Error,
    },
    /// The server announced (`Connection: close`) that it closes the
    /// connection after the response whose `Done` follows: a graceful close,
    /// no failure; no request is to go on it any more.
    Closed {
        conn: ConnId,
    },
    /// An h3 connection's requests went in QUIC 0-RTT (None), and then the
    /// server's answer at the handshake's end (Some: accepted or not); a
    /// TCP connection's TLS 1.3 early data is told once, at its
    /// handshake's end (Some).
    ZeroRtt {
        conn: ConnId,
        accepted: Option<bool>,
    },
    /// A handshake that could carry TLS 1.3 early data resumed (known only
    /// once it ends, after `Connected`).
    Resumed {
        conn: ConnId,
    },
    /// An informational 103 (Early Hints) before `req`'s response (h2, h3):
    /// its `Link` header values.
    EarlyHints {
        req: ReqId,
        at: Instant,
        links: Vec<String>,
    },
    /// The server promised a push (h2 PUSH_PROMISE, SPDY/3.1 SYN_STREAM with
    /// an associated stream) on `assoc`'s stream: the pushed request's host
    /// and path. Its response comes as `PushHead`, `PushData`, `PushDone` (or
    /// `PushFailed`) under `push`, until the owner cancels it by `handle`
    /// (dropping the handle cancels it too: RST_STREAM CANCEL).
    Promised {
        assoc: ReqId,
        push: PushId,
        host: String,
        path: String,
        at: Instant,
        handle: PushHandle,
    },
    PushHead {
        push: PushId,
        at: Instant,
        status: u16,
        content_type: String,
    },
    PushData {
        push: PushId,
        data: Bytes,
    },
    PushDone {
        push: PushId,
        at: Instant,
    },
    PushFailed {
        push: PushId,
        error: Error,
    },
}

/// A pushed stream: its connection and the server's (even) stream id.
pub type PushId = (ConnId, u32);

/// What cancels a pushed stream, or keeps it: `keep` lets it run; dropped
/// without `keep`, it is cancelled (h2: the task reading it aborted, which
/// drops the `h2` crate's stream and sends RST_STREAM CANCEL; SPDY/3.1: the
/// session told to send RST_STREAM CANCEL).
pub struct PushHandle {
    inner: Option<PushInner>,
}

enum PushInner {
    H2(tokio::task::JoinHandle<()>),
    Spdy3 {
        stream_id: u32,
        cancel: mpsc::UnboundedSender<u32>,
    },
}

impl PushHandle {
    pub(crate) fn h2(task: tokio::task::JoinHandle<()>) -> PushHandle {
        PushHandle {
            inner: Some(PushInner::H2(task)),
        }
    }

    pub(crate) fn spdy3(stream_id: u32, cancel: mpsc::UnboundedSender<u32>) -> PushHandle {
        PushHandle {
            inner: Some(PushInner::Spdy3 { stream_id, cancel }),
        }
    }

    /// Cancels the push now.
    pub fn cancel(mut self) {
        self.cancel_now();
    }

    /// Lets the push run on; the task reading it (h2), to be closed with
    /// the page's connections.
    pub fn keep(mut self) -> Option<tokio::task::JoinHandle<()>> {
        match self.inner.take() {
            Some(PushInner::H2(task)) => Some(task),
            _ => None,
        }
    }

    fn cancel_now(&mut self) {
        match self.inner.take() {
            Some(PushInner::H2(task)) => task.abort(),
            Some(PushInner::Spdy3 { stream_id, cancel }) => {
                let _ = cancel.send(stream_id);
            }
            None => {}
        }
    }
}

impl Drop for PushHandle {
    fn drop(&mut self) {
        self.cancel_now();
    }
}

impl Event {
    /// The head of `req`'s response (h2 and h3 alike: an `http::Response`),
    /// now.
    pub(crate) fn head<T>(req: ReqId, response: &http::Response<T>) -> Event {
        Event::Head {
            req,
            at: Instant::now(),
            status: response.status().as_u16(),
            content_type: response
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string(),
            cache: crate::cache::CacheHeaders::of(response.headers()),
        }
    }
}

/// What an owner holds to send requests on an open connection.
pub enum RequestSender {
    H1(mpsc::UnboundedSender<h1::Job>),
    H2(h2::Sender),
    Spdy3(mpsc::UnboundedSender<spdy3::Job>),
    H3(h3::SendRequest),
}

/// The client TLS configuration for `protocol`: only `ca` trusted, ALPN for
/// the protocol, no resumption (every load starts cold).
pub fn client_tls(
    protocol: Protocol,
    ca: CertificateDer<'static>,
    tls13_only: Option<bool>,
) -> Arc<rustls::ClientConfig> {
    client_tls_resuming(protocol, ca, tls13_only, None)
}

/// The repeat view's configuration: as `client_tls_resuming` with
/// `sessions`, and early data on where a ticket allows it: QUIC 0-RTT on
/// h3, and, when `tcp_early_data`, TLS 1.3 early data on TCP (`dial`: the
/// first flight's requests go with the ClientHello). The lab turns
/// `tcp_early_data` off for a page with a request that is not safe (an
/// imported POST): the model cannot hold such a request back until the
/// handshake is verified (RFC 8470 §4.1).
pub fn client_tls_repeat(
    protocol: Protocol,
    ca: CertificateDer<'static>,
    tls13_only: Option<bool>,
    sessions: Arc<dyn rustls::client::ClientSessionStore>,
    tcp_early_data: bool,
) -> Arc<rustls::ClientConfig> {
    let mut c = (*client_tls_resuming(protocol, ca, tls13_only, Some(sessions))).clone();
    c.enable_early_data = protocol == Protocol::H3 || (tcp_early_data && protocol.tls());
    Arc::new(c)
}

/// As `client_tls`, resuming sessions (tickets or session IDs, TLS 1.2 and
/// 1.3) kept in `sessions` when given: `--tls-resume` shares one store
/// across the probes of a Trial.
pub fn client_tls_resuming(
    protocol: Protocol,
    ca: CertificateDer<'static>,
    tls13_only: Option<bool>,
    sessions: Option<Arc<dyn rustls::client::ClientSessionStore>>,
) -> Arc<rustls::ClientConfig> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    let _ = roots.add(ca);
    let versions: &[&rustls::SupportedProtocolVersion] = match tls13_only {
        // QUIC carries TLS 1.3 only (RFC 9001).
        _ if protocol == Protocol::H3 => &[&rustls::version::TLS13],
        None => &[&rustls::version::TLS13, &rustls::version::TLS12],
        Some(true) => &[&rustls::version::TLS13],
        Some(false) => &[&rustls::version::TLS12],
    };
    // Chromium's key exchange groups, X25519MLKEM768 first, and its GREASE
    // ECH where TLS 1.3 is offered: its ClientHello's size (`crate::pq`,
    // `crate::grease`).
    let builder =
        rustls::ClientConfig::builder_with_provider(Arc::new(crate::pq::chromium_like_provider()));
    let builder = match versions.contains(&&rustls::version::TLS13) && protocol != Protocol::Spdy3 {
        true => builder.with_ech(crate::grease::ech_mode()),
        false => builder.with_protocol_versions(versions),
    };
    let mut c = builder
        .expect("ring's provider has TLS 1.2 and 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    c.alpn_protocols = vec![protocol.alpn().to_vec()];
    c.resumption = match sessions {
        None => rustls::client::Resumption::disabled(),
        Some(store) => rustls::client::Resumption::store(store),
    };
    Arc::new(c)
}

/// TCP to `addr` (from `bind` when given: a user's own address), then TLS if
/// `protocol` wants it, with spdy3 only where ALPN chose spdy/3.1. The stream,
/// the TLS handshake's time in ms (-1 without TLS) and whether it resumed.
pub async fn dial(
    addr: SocketAddr,
    bind: Option<IpAddr>,
    protocol: Protocol,
    sni: &str,
    tls: Arc<rustls::ClientConfig>,
) -> Result<(Box<dyn Io>, f64, bool), Error> {
    let d = dial_early(
        addr,
        Dial {
            bind,
            fast_open: false,
            backup: None,
        },
        protocol,
        sni,
        tls,
    )
    .await?;
    Ok((d.io, d.tls_ms, d.resumed))
}

/// A dialed connection.
pub struct Dialed {
    pub io: Box<dyn Io>,
    /// The TLS handshake's time in ms (-1 without TLS); with early data,
    /// the time to the ClientHello (about 0, as Chromium's `ssl` is when it
    /// sends early data): the handshake's round trip is in the first
    /// request's wait.
    pub tls_ms: f64,
    /// The handshake resumed an earlier session (false until told, with
    /// early data).
    pub resumed: bool,
    /// With TLS 1.3 early data on: what the handshake gave, once it ends.
    pub early: Option<tokio::sync::oneshot::Receiver<Handshook>>,
    /// A backup connect job's other socket (`Backup`), to run beside the
    /// connection: it connects, shakes hands and waits, never ending.
    pub idle: Option<Idle>,
}

/// A pool's idle socket, held while it runs (it never ends).
pub type Idle = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// How a TLS handshake that could carry early data ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handshook {
    /// Bytes were written as early data.
    pub sent: bool,
    /// The server accepted them (else tokio-rustls wrote them again after
    /// the handshake: nothing is lost).
    pub accepted: bool,
    /// The session was resumed.
    pub resumed: bool,
}

/// How a TCP connection is dialed: from which local address (None: any),
/// with TCP Fast Open (`Knobs::tcp_fastopen`), and with Chromium's backup
/// connect job (None: without).
#[derive(Debug, Clone, Default)]
pub struct Dial {
    pub bind: Option<IpAddr>,
    pub fast_open: bool,
    pub backup: Option<Backup>,
}

/// Chromium's backup connect job (`TransportClientSocketPool`'s
/// `OnBackupJobTimerFired`, `ClientSocketPool::kMaxConnectRetryIntervalMs`):
/// when a socket's TCP handshake has not ended 250 ms after its connect job
/// started, and its group (the host) has a socket slot free (6 per group),
/// a second connect job starts to the same address. The first of the two to
/// connect serves the request; the other goes on, through its TLS
/// handshake, and waits idle in the pool: here, until the connection ends.
#[derive(Debug, Clone)]
pub struct Backup {
    /// Sockets of the group so far, this one counted (the page's own count,
    /// which a backup adds to).
    pub group: Arc<std::sync::atomic::AtomicUsize>,
}

impl Backup {
    /// When the backup job starts: `kMaxConnectRetryIntervalMs`.
    pub const AFTER: std::time::Duration = std::time::Duration::from_millis(250);
    /// Chromium's sockets per group (`max_sockets_per_group`, normal pool).
    pub const GROUP_LIMIT: usize = 6;

    /// Takes a socket slot of the group if one is free.
    fn take_slot(&self) -> bool {
        use std::sync::atomic::Ordering;
        self.group
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < Self::GROUP_LIMIT).then_some(n + 1)
            })
            .is_ok()
    }
}

/// A TCP connect under way.
type Connecting =
    std::pin::Pin<Box<dyn std::future::Future<Output = io::Result<tokio::net::TcpStream>> + Send>>;

/// The TCP connection to `addr` from a socket `socket` makes, with
/// Chromium's backup job when `backup` is given (`Backup`): the stream, and
/// the other job's connect if two raced (the loser, still under way).
async fn connect_tcp(
    socket: impl Fn() -> Result<tokio::net::TcpSocket, Error>,
    addr: SocketAddr,
    backup: Option<&Backup>,
) -> Result<(tokio::net::TcpStream, Option<Connecting>), Error> {
    let connect = |source| Error::Connect { addr, source };
    let mut first: Connecting = Box::pin(socket()?.connect(addr));
    let Some(backup) = backup else {
        return Ok((first.await.map_err(connect)?, None));
    };
    tokio::select! {
        r = &mut first => return Ok((r.map_err(connect)?, None)),
        () = tokio::time::sleep(Backup::AFTER) => {}
    }
    if !backup.take_slot() {
        return Ok((first.await.map_err(connect)?, None));
    }
    let mut second: Connecting = Box::pin(socket()?.connect(addr));
    // The first to connect; if one fails, the other.
    tokio::select! {
        r = &mut first => match r {
            Ok(tcp) => Ok((tcp, Some(second))),
            Err(_) => Ok((second.await.map_err(connect)?, None)),
        },
        r = &mut second => match r {
            Ok(tcp) => Ok((tcp, Some(first))),
            Err(_) => Ok((first.await.map_err(connect)?, None)),
        },
    }
}

/// As `dial`; with early data enabled in `tls` (the repeat view's
/// `client_tls_repeat`) and a ticket that allows it, the stream is handed
/// out right after the TCP handshake: what is written before the server's
/// flight comes goes as TLS 1.3 early data with the ClientHello, and
/// `Dialed::early` tells how the handshake ended.
pub async fn dial_early(
    addr: SocketAddr,
    Dial {
        bind,
        fast_open,
        backup,
    }: Dial,
    protocol: Protocol,
    sni: &str,
    tls: Arc<rustls::ClientConfig>,
) -> Result<Dialed, Error> {
    let socket = || new_socket(addr, bind, fast_open);
    let (tcp, loser) = connect_tcp(socket, addr, backup.as_ref()).await?;
    let _ = tcp.set_nodelay(true);
    let name = match protocol.tls() {
        true => Some(
            ServerName::try_from(sni.to_string()).map_err(|e| Error::ServerName {
                sni: sni.to_string(),
                reason: e.to_string(),
            })?,
        ),
        false => None,
    };
    // The backup job that lost goes on as Chromium's does: connected, then
    // its TLS handshake, then idle until the connection it lost to ends.
    let idle = loser.map(|connecting| {
        let (tls, name) = (tls.clone(), name.clone());
        let idle: Idle = Box::pin(async move {
            let Ok(tcp) = connecting.await else {
                return std::future::pending().await;
            };
            let _held = match name {
                Some(name) => tokio_rustls::TlsConnector::from(tls)
                    .connect(name, tcp)
                    .await
                    .map(|s| Box::new(s) as Box<dyn Io>),
                None => Ok(Box::new(tcp) as Box<dyn Io>),
            };
            std::future::pending().await
        });
        idle
    });
    let Some(name) = name else {
        return Ok(Dialed {
            io: Box::new(tcp),
            tls_ms: -1.0,
            resumed: false,
            early: None,
            idle,
        });
    };
    let t0 = Instant::now();
    let early = tls.enable_early_data;
    let mut s = tokio_rustls::TlsConnector::from(tls)
        .early_data(early)
        .connect(name, tcp)
        .await
        .map_err(|source| Error::Tls {
            sni: sni.to_string(),
            source,
        })?;
    let tls_ms = t0.elapsed().as_secs_f64() * 1e3;
    if s.get_mut().1.early_data().is_some() {
        // In early data: nothing is known of the handshake yet (ALPN
        // included: rustls sends early data only on a ticket, and a ticket
        // of this store was made for this protocol's one ALPN; the server
        // rejects early data under another, RFC 8446 §4.2.10).
        let (tell, told) = tokio::sync::oneshot::channel();
        let io = EarlyTls {
            inner: s,
            wrote: false,
            switched: false,
            tell: Some(tell),
        };
        return Ok(Dialed {
            io: Box::new(io),
            tls_ms,
            resumed: false,
            early: Some(told),
            idle,
        });
    }
    if protocol == Protocol::Spdy3 && s.get_ref().1.alpn_protocol() != Some(proto::spdy3::ALPN) {
        return Err(Error::Alpn {
            sni: sni.to_string(),
        });
    }
    let resumed = s.get_ref().1.handshake_kind() == Some(rustls::HandshakeKind::Resumed);
    Ok(Dialed {
        io: Box::new(s),
        tls_ms,
        resumed,
        early: None,
        idle,
    })
}

/// A TCP socket for `addr`, bound to `bind` when given, with TCP Fast Open
/// when asked.
fn new_socket(
    addr: SocketAddr,
    bind: Option<IpAddr>,
    fast_open: bool,
) -> Result<tokio::net::TcpSocket, Error> {
    let connect = |source| Error::Connect { addr, source };
    let sock = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }
    .map_err(connect)?;
    if let Some(ip) = bind {
        sock.bind(SocketAddr::new(ip, 0))
            .map_err(|source| Error::Bind { addr, ip, source })?;
    }
    if fast_open {
        sys::set_tcp_fastopen_connect(&sock).map_err(connect)?;
    }
    Ok(sock)
}

/// A TLS stream in early data (tokio-rustls's client, `early-data`): it
/// sends the early data it was given only when flushed, and its reads wait
/// until a write or flush has finished the handshake. HTTP/1.1 writes
/// without flushing, and a reader may wait first: so a write is flushed
/// here at once (the ClientHello and the request leave together), and a
/// read drives the handshake until it ends; then `tell` says how.
struct EarlyTls {
    inner: tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
    /// Bytes went in as early data.
    wrote: bool,
    /// tokio-rustls left its early data state (handshake over, and early
    /// data written again if rejected).
    switched: bool,
    tell: Option<tokio::sync::oneshot::Sender<Handshook>>,
}

impl EarlyTls {
    fn tell_if_done(&mut self) {
        let session = self.inner.get_ref().1;
        if self.tell.is_none() || session.is_handshaking() {
            return;
        }
        let h = Handshook {
            sent: self.wrote,
            accepted: self.wrote && session.is_early_data_accepted(),
            resumed: session.handshake_kind() == Some(rustls::HandshakeKind::Resumed),
        };
        if let Some(tell) = self.tell.take() {
            let _ = tell.send(h);
        }
    }
}

impl AsyncRead for EarlyTls {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.wrote && !this.switched {
            std::task::ready!(std::pin::Pin::new(&mut this.inner).poll_flush(cx))?;
            this.switched = true;
        }
        let r = std::pin::Pin::new(&mut this.inner).poll_read(cx, buf);
        this.tell_if_done();
        r
    }
}

impl AsyncWrite for EarlyTls {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = std::pin::Pin::new(&mut this.inner).poll_write(cx, buf);
        if !this.switched && matches!(r, std::task::Poll::Ready(Ok(n)) if n > 0) {
            this.wrote = true;
            // Out now (tokio-rustls sends early data on flush only); the
            // rest of the handshake is read as it comes.
            if let std::task::Poll::Ready(Ok(())) =
                std::pin::Pin::new(&mut this.inner).poll_flush(cx)
            {
                this.switched = true;
            }
        }
        this.tell_if_done();
        r
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = std::pin::Pin::new(&mut this.inner).poll_flush(cx);
        match r {
            std::task::Poll::Ready(Ok(())) => this.switched = true,
            // In early data, tokio-rustls's flush waits for the whole
            // handshake; the early data is flushed once its records are
            // in the socket (the rest of the handshake is read as it
            // comes), so a request counts as sent when it left (SPDY and
            // HTTP/1.1 note `Sent` after their flush).
            std::task::Poll::Pending
                if this.wrote && !this.switched && !this.inner.get_ref().1.wants_write() =>
            {
                this.tell_if_done();
                return std::task::Poll::Ready(Ok(()));
            }
            _ => {}
        }
        this.tell_if_done();
        r
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

/// A connection: dials, reports `Connected` with its request sender, then
/// runs HTTP/1.1, HTTP/2 or SPDY/3.1 until the connection ends (or the task
/// running it is aborted, which closes it).
pub async fn open(
    conn: ConnId,
    protocol: Protocol,
    addr: SocketAddr,
    dial: Dial,
    sni: String,
    tls: Arc<rustls::ClientConfig>,
    events: mpsc::UnboundedSender<Event>,
) {
    let fail = |error: Error| {
        let _ = events.send(Event::ConnFailed { conn, error });
    };
    if protocol == Protocol::H3 {
        match h3::dial(addr, dial.bind, &sni, tls).await {
            Ok((c, tls_ms, zero_rtt)) => {
                let _ = events.send(Event::Connected {
                    conn,
                    at: Instant::now(),
                    tls_ms,
                    // quinn does not tell whether its handshake resumed: an
                    // accepted 0-RTT says so (`Event::ZeroRtt`).
                    resumed: false,
                    sender: RequestSender::H3(c.send),
                });
                let _endpoint = c.endpoint;
                match zero_rtt {
                    None => h3::drive(c.driver).await,
                    Some(accepted) => {
                        let _ = events.send(Event::ZeroRtt {
                            conn,
                            accepted: None,
                        });
                        let told = async {
                            let accepted = accepted.await;
                            let _ = events.send(Event::ZeroRtt {
                                conn,
                                accepted: Some(accepted),
                            });
                        };
                        tokio::join!(h3::drive(c.driver), told);
                    }
                }
            }
            Err(e) => fail(e),
        }
        return;
    }
    let Dialed {
        io,
        tls_ms,
        resumed,
        early,
        idle,
    } = match dial_early(addr, dial, protocol, &sni, tls).await {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    // TLS 1.3 early data: how the handshake ended, told beside the
    // connection (an accepted early data as h3's accepted 0-RTT).
    let told = async {
        let Some(early) = early else { return };
        let Ok(h) = early.await else { return };
        if h.sent {
            let _ = events.send(Event::ZeroRtt {
                conn,
                accepted: Some(h.accepted),
            });
        }
        if h.resumed {
            let _ = events.send(Event::Resumed { conn });
        }
    };
    let run = run_tcp(conn, protocol, io, tls_ms, resumed, events.clone());
    let idle = async {
        match idle {
            Some(idle) => idle.await,
            None => std::future::pending().await,
        }
    };
    // The connection's end ends the task, and the idle socket with it.
    tokio::select! {
        _ = async { tokio::join!(run, told) } => {}
        () = idle => {}
    }
}

/// HTTP/1.1, HTTP/2 or SPDY/3.1 on a dialed TCP connection until it ends.
async fn run_tcp(
    conn: ConnId,
    protocol: Protocol,
    io: Box<dyn Io>,
    tls_ms: f64,
    resumed: bool,
    events: mpsc::UnboundedSender<Event>,
) {
    let fail = |error: Error| {
        let _ = events.send(Event::ConnFailed { conn, error });
    };
    let connected = |sender: RequestSender| Event::Connected {
        conn,
        at: Instant::now(),
        tls_ms,
        sender,
        resumed,
    };
    if protocol == Protocol::Spdy3 {
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let _ = events.send(connected(RequestSender::Spdy3(jobs_tx)));
        spdy3::connection(conn, io, jobs_rx, events, spdy3::CHROME_RECEIVE_WINDOW).await;
    } else if protocol.multiplexed() {
        match h2::handshake(io).await {
            Ok((send, connection)) => {
                let _ = events.send(connected(RequestSender::H2(send)));
                // Driven here: aborting this task closes the connection.
                let _ = connection.await;
            }
            Err(e) => fail(Error::H2Handshake(e)),
        }
    } else {
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let _ = events.send(connected(RequestSender::H1(jobs_tx)));
        h1::connection(conn, io, jobs_rx, events).await;
    }
}
