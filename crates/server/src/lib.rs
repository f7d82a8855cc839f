//! spdylab's built-in origin server, on tokio: HTTP/1.1 (keep-alive,
//! pipelining), TLS 1.2/1.3 with ALPN, HTTP/2 over TLS, and h2c (prior
//! knowledge and `Upgrade: h2c`), serving one Site by virtual host (SNI and
//! Host), with a per-connection stream limit and an optional think time.
//!
//! Listeners come in bound (the testbed binds them inside its server
//! namespace); `Server::run` serves them until the shutdown future completes.

mod ca;
mod content;
pub mod early;
mod protocols;
pub mod quic;

pub use ca::{spki_of_pem, Ca, CertKind};
pub use content::{Content, RequestLog, Seen};

use proto::Protocol;
use protocols::{ServeProtocol, H2, H2_PREFACE};
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

/// The protocols a server offers, named by `proto::Protocol`. Pipelining is
/// the client's choice, so `http-pipelined` and `https-pipelined` are offered
/// with `http` and `https` and are not names of their own here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    /// One bit per protocol, by its place in the enum.
    bits: u8,
}

impl Offer {
    /// What a server can offer, in the order of `spdylab serve --proto`'s names.
    pub const OFFERABLE: [Protocol; 6] = [
        Protocol::Http,
        Protocol::Https,
        Protocol::H2,
        Protocol::H2c,
        Protocol::Spdy3,
        Protocol::H3,
    ];

    pub const ALL: Offer = Offer::of(&Offer::OFFERABLE);

    /// An offer of `protocols`.
    pub const fn of(protocols: &[Protocol]) -> Offer {
        let mut bits = 0;
        let mut i = 0;
        while i < protocols.len() {
            bits |= 1 << protocols[i] as u8;
            i += 1;
        }
        Offer { bits }
    }

    /// Parses `http,https,h2,h2c`; names the unknown one.
    pub fn parse(list: &str) -> Result<Offer, String> {
        let mut offered = Vec::new();
        for name in list.split(',').map(str::trim) {
            match name.parse::<Protocol>() {
                Ok(p) if Offer::OFFERABLE.contains(&p) => offered.push(p),
                _ => {
                    let names: Vec<&str> = Offer::OFFERABLE.iter().map(|p| p.name()).collect();
                    return Err(format!(
                        "'{name}' is not a protocol this server offers ({})",
                        names.join(", ")
                    ));
                }
            }
        }
        Ok(Offer::of(&offered))
    }

    /// Whether `protocol` is offered (a pipelined one with its plain one).
    pub fn offers(&self, protocol: Protocol) -> bool {
        let plain = match protocol {
            Protocol::HttpPipelined => Protocol::Http,
            Protocol::HttpsPipelined => Protocol::Https,
            p => p,
        };
        self.bits & (1 << plain as u8) != 0
    }

    pub fn cleartext(&self) -> bool {
        self.offers(Protocol::Http) || self.offers(Protocol::H2c)
    }

    /// Whether a TLS-over-TCP protocol is offered (h3's TLS is inside QUIC).
    pub fn tls(&self) -> bool {
        self.offers(Protocol::Https) || self.offers(Protocol::H2) || self.offers(Protocol::Spdy3)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsVersions {
    Both,
    Only12,
    Only13,
}

impl TlsVersions {
    /// From the `--tls` knob: Some(true) TLS 1.3 only, Some(false) 1.2 only, None both.
    pub fn from_tls13_only(only13: Option<bool>) -> TlsVersions {
        match only13 {
            None => TlsVersions::Both,
            Some(false) => TlsVersions::Only12,
            Some(true) => TlsVersions::Only13,
        }
    }

    /// The `--tls` knob's form: Some(true) TLS 1.3 only, Some(false) 1.2 only, None both.
    pub fn tls13_only(self) -> Option<bool> {
        match self {
            TlsVersions::Both => None,
            TlsVersions::Only12 => Some(false),
            TlsVersions::Only13 => Some(true),
        }
    }
}

/// Everything a connection handler needs.
pub struct Ctx {
    pub content: Content,
    /// The server's knobs, as the Trial set them.
    pub knobs: Knobs,
    pub h2c: bool,
    pub http: bool,
    /// TCP congestion control set on each accepted socket.
    pub cc: Option<String>,
    /// TLS early data over TCP taken (`early`).
    pub early: Arc<early::Counters>,
}

pub struct ServerOptions {
    pub offer: Offer,
    /// What a Trial sets (`lab::trial::Trial::served`), handed down whole.
    pub knobs: Knobs,
    /// Congestion control: TCP's by name on each socket, and QUIC's
    /// (`cubic`, `reno`, `bbr`) for h3.
    pub cc: Option<String>,
    /// h3's initial congestion window in segments of `quic::QUIC_MSS` bytes
    /// (TCP's comes from the route's `initcwnd`); None: quinn's default.
    pub iw: Option<u32>,
}

impl ServerOptions {
    /// What h3 takes of these options: its congestion control is
    /// `knobs.quic_cc`, else TCP's (`cc`); its initial window `knobs.quic_iw`,
    /// else TCP's (`iw`).
    pub fn quic_knobs(&self) -> quic::QuicKnobs {
        quic::QuicKnobs {
            early_data: self.knobs.early_data,
            max_streams: self.knobs.max_streams,
            iw: self.knobs.quic_iw.or(self.iw),
            cc: self.knobs.quic_cc.map(str::to_string).or(self.cc.clone()),
            ack_frequency: self.knobs.quic_ack_frequency,
            hystart: self.knobs.quic_hystart,
        }
    }
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            offer: Offer::ALL,
            knobs: Knobs::default(),
            cc: None,
            iw: None,
        }
    }
}

/// The built-in server's knobs: the part of a Trial (the experiment's
/// `knobs` section, `results::experiment::FIELDS`) that this server honours.
/// A Trial holds one and hands it down whole, so a new server knob is a field
/// here and its use, with no copy in between. `Default` is FIELDS' defaults
/// (a unit test in `lab::trial` checks that they agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knobs {
    /// Concurrent streams per connection (h2, SPDY, h3), advertised in SETTINGS.
    pub max_streams: u32,
    pub tls: TlsVersions,
    /// Think time before each response.
    pub delay: ServerDelay,
    /// Issue TLS session tickets (rustls's ticketer), so clients that keep
    /// sessions resume (`--tls-resume`). Off: rustls's defaults (a session-ID
    /// cache, no stateless tickets).
    pub tickets: bool,
    /// Accept early data (the repeat view, `--view repeat|both`). QUIC
    /// 0-RTT: rustls's `max_early_data_size` u32::MAX (quinn's requirement)
    /// on the QUIC server, stateful resumption (rustls takes early data only
    /// so), and connections handed to h3 before their handshake ends so
    /// 0-RTT requests are answered at once. TLS 1.3 early data over TCP
    /// (https, h2, SPDY): `early::MAX_EARLY_DATA`, stateful resumption (no
    /// ticketer, whatever `tickets` says), 0.5-RTT data, and the early bytes
    /// handed to the protocol before the handshake ends (`early`, written
    /// by hand: tokio-rustls's server never reads early data).
    pub early_data: bool,
    /// TCP_NOTSENT_LOWAT on each accepted TCP connection: the kernel holds at
    /// most this many unsent bytes in the socket's buffer, so the server's
    /// stream scheduler (not the send buffer) decides what goes next. None:
    /// Linux's default (no limit). TCP only; h3's sending is quinn's.
    pub notsent_lowat: Option<u32>,
    /// TCP's internal pacing on each accepted TCP connection (`--tcp-pacing`):
    /// SO_MAX_PACING_RATE set to a finite rate no link here reaches, so the
    /// kernel spreads each window's segments over the RTT instead of sending
    /// them in bursts (the testbed has no fq qdisc to pace). TCP only: h3's
    /// pacing is quinn's own, always on.
    pub tcp_pacing: bool,
    /// Whether responses are scheduled by the client's priorities
    /// (`proto::priority`), or round robin by arrival (`--server-priorities off`).
    pub priorities: proto::priority::Policy,
    /// Think time before the page's document only (`--server-think`): the
    /// HTML a server has to make, after `delay` (issue 37).
    pub think: Duration,
    /// A `103 Early Hints` with `Link: rel=preload` for the document's
    /// critical resources (`site::critical`), and `rel=preconnect` for the
    /// other origins they are on, as soon as the document is asked for,
    /// before the think time (`--early-hints`): h2, h2c and h3 (`quic`);
    /// not HTTP/1.1 (hyper's server cannot send a 1xx) nor SPDY (it has none).
    pub early_hints: bool,
    /// What the server pushes with the document (`--push`): h2, h2c and
    /// SPDY/3.1 (HTTP/1.1 has no push; quinn and h3 here have none).
    pub push: Push,
    /// The QUIC congestion control (`--quic-cc`: quinn's "cubic", "reno" or
    /// "bbr"); None: the TCP one's (`ServerOptions::cc`).
    pub quic_cc: Option<&'static str>,
    /// The QUIC initial window in segments (`--quic-iw`); None: the TCP
    /// one's (`ServerOptions::iw`).
    pub quic_iw: Option<u32>,
    /// Ask the h3 client to acknowledge every N ack-eliciting packets
    /// (`--quic-ack-frequency`); None: the client's own pattern.
    pub quic_ack_frequency: Option<u32>,
    /// The QUIC Cubic's first slow start ends by HyStart++ (`--quic-hystart`;
    /// quinn's Cubic as vendored here: vendor/README.md).
    pub quic_hystart: bool,
    /// TCP Fast Open on the TCP listeners (`--tcp-fastopen`; the testbed's
    /// kernel must allow it: `netns::TestbedSpec::tcp_fastopen`).
    pub tcp_fastopen: bool,
}

/// What the built-in server pushes when the page's document is asked for
/// (`--push none|critical|all`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Push {
    #[default]
    None,
    /// The document's critical resources on its own host (`site::critical`).
    Critical,
    /// Every resource under the document on its own host
    /// (`site::critical::same_origin_subtree`).
    All,
}

impl Push {
    pub const NAMES: [&'static str; 3] = ["none", "critical", "all"];
}

impl std::fmt::Display for Push {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Push::None => "none",
            Push::Critical => "critical",
            Push::All => "all",
        })
    }
}

impl std::str::FromStr for Push {
    type Err = String;

    fn from_str(s: &str) -> Result<Push, String> {
        match s {
            "none" => Ok(Push::None),
            "critical" => Ok(Push::Critical),
            "all" => Ok(Push::All),
            _ => Err(format!("'{s}' is not a push: none, critical or all")),
        }
    }
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            max_streams: 100,
            tls: TlsVersions::Both,
            delay: ServerDelay::None,
            tickets: false,
            early_data: false,
            notsent_lowat: None,
            tcp_pacing: false,
            priorities: proto::priority::Policy::Honour,
            think: Duration::ZERO,
            early_hints: false,
            push: Push::None,
            quic_cc: None,
            quic_iw: None,
            quic_ack_frequency: None,
            quic_hystart: false,
            tcp_fastopen: false,
        }
    }
}

/// A server's think time before each response (`--server-delay`,
/// `server_delay =`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServerDelay {
    /// No wait.
    #[default]
    None,
    /// The same wait before every response.
    Fixed(Duration),
    /// Each imported response's recorded wait (HAR `timings.wait`).
    FromHar,
}

impl ServerDelay {
    /// Whether the server waits at all.
    pub fn is_some(self) -> bool {
        !matches!(self, ServerDelay::None | ServerDelay::Fixed(Duration::ZERO))
    }
}

/// Installs the process's rustls crypto provider (ring), once.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

pub struct Server {
    ctx: Arc<Ctx>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    /// h3: the QUIC configuration, and the UDP sockets given by `with_quic`.
    quic: Option<quinn::ServerConfig>,
    quic_sockets: Vec<std::net::UdpSocket>,
    /// QUIC handshakes under way above which new addresses get a Retry.
    quic_retry_above: usize,
}

impl Server {
    /// Prepares to serve `site`; `addresses` get a certificate for connections without SNI.
    pub fn new(
        site: site::Site,
        opts: ServerOptions,
        ca: &Ca,
        addresses: &[IpAddr],
    ) -> io::Result<Server> {
        install_crypto_provider();
        if opts.offer.offers(Protocol::H3) && opts.knobs.tls == TlsVersions::Only12 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "h3 runs TLS 1.3 inside QUIC (RFC 9001): --tls 1.2 cannot be offered with h3",
            ));
        }
        let quic = if opts.offer.offers(Protocol::H3) {
            let resolver = Arc::new(ca.resolver(&site.hosts(), addresses)?);
            Some(quic::server_config(resolver, &opts.quic_knobs())?)
        } else {
            None
        };
        let tls = if opts.offer.tls() {
            let versions: &[&rustls::SupportedProtocolVersion] = match opts.knobs.tls {
                TlsVersions::Both => &[&rustls::version::TLS13, &rustls::version::TLS12],
                TlsVersions::Only12 => &[&rustls::version::TLS12],
                TlsVersions::Only13 => &[&rustls::version::TLS13],
            };
            let resolver = ca.resolver(&site.hosts(), addresses)?;
            let mut config = rustls::ServerConfig::builder_with_protocol_versions(versions)
                .with_no_client_auth()
                .with_cert_resolver(Arc::new(resolver));
            if opts.knobs.early_data {
                // rustls takes early data with stateful resumption only
                // (single-use sessions: a replayed ClientHello cannot
                // resume twice); its default cache, 256 sessions, is kept.
                config.max_early_data_size = early::MAX_EARLY_DATA;
                config.send_half_rtt_data = true;
            } else if opts.knobs.tickets {
                config.ticketer = rustls::crypto::ring::Ticketer::new()
                    .map_err(|e| io::Error::other(format!("TLS ticketer: {e}")))?;
            }
            if opts.offer.offers(Protocol::H2) {
                config.alpn_protocols.push(H2.alpn().to_vec());
            }
            if opts.offer.offers(Protocol::Spdy3) {
                config.alpn_protocols.push(protocols::Spdy3.alpn().to_vec());
            }
            if opts.offer.offers(Protocol::Https) {
                config.alpn_protocols.push(protocols::Http1.alpn().to_vec());
            }
            Some(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
        } else {
            None
        };
        let mut content = Content::new(site, opts.knobs.delay);
        content.think = opts.knobs.think;
        content.early_hints = opts.knobs.early_hints;
        content.push = opts.knobs.push;
        let ctx = Arc::new(Ctx {
            content,
            knobs: opts.knobs,
            h2c: opts.offer.offers(Protocol::H2c),
            http: opts.offer.offers(Protocol::Http),
            cc: opts.cc,
            early: Arc::default(),
        });
        Ok(Server {
            ctx,
            tls,
            quic,
            quic_sockets: Vec::new(),
            quic_retry_above: quic::RETRY_ABOVE,
        })
    }

    /// UDP sockets (port 443 of each address) to serve h3 on, if offered.
    pub fn with_quic(mut self, sockets: Vec<std::net::UdpSocket>) -> Server {
        // TCP responses name the port h3 is on (all sockets share one port).
        let port = sockets.first().and_then(|s| s.local_addr().ok());
        if let (Some(addr), Some(ctx), true) =
            (port, Arc::get_mut(&mut self.ctx), self.quic.is_some())
        {
            ctx.content.alt_svc =
                hyper::header::HeaderValue::from_str(&format!("h3=\":{}\"; ma=86400", addr.port()))
                    .ok();
        }
        self.quic_sockets = sockets;
        self
    }

    /// h3: above `n` QUIC handshakes under way, a new client address must
    /// prove itself with a Retry first (0: always; see [`quic::RETRY_ABOVE`]).
    pub fn with_quic_retry_above(mut self, n: usize) -> Server {
        self.quic_retry_above = n;
        self
    }

    /// What the TCP listeners counted of TLS early data.
    pub fn early_data_counters(&self) -> Arc<early::Counters> {
        self.ctx.early.clone()
    }

    /// Notes every request answered (method, host, path, request body
    /// length, status) in `log`, whatever the protocol.
    pub fn with_request_log(mut self, log: RequestLog) -> Server {
        if let Some(ctx) = Arc::get_mut(&mut self.ctx) {
            ctx.content.log = Some(log);
        }
        self
    }

    /// Serves cleartext (`http`, `h2c`) and TLS (`https`, `h2`) listeners until
    /// `shutdown` completes. Accept errors (such as too many open files under a
    /// flood of connections) pause accepting briefly; they never stop the server.
    pub async fn run(
        self,
        cleartext: Vec<std::net::TcpListener>,
        tls: Vec<std::net::TcpListener>,
        shutdown: impl Future<Output = ()>,
    ) -> io::Result<()> {
        let mut tasks = tokio::task::JoinSet::new();
        for l in cleartext.iter().chain(&tls) {
            deepen_backlog(l)?;
            if self.ctx.knobs.tcp_fastopen {
                sys::set_tcp_fastopen(l, BACKLOG)?;
            }
        }
        for l in cleartext {
            l.set_nonblocking(true)?;
            let l = TcpListener::from_std(l)?;
            let ctx = self.ctx.clone();
            tasks.spawn(accept_loop(l, ctx, None));
        }
        if let Some(config) = &self.quic {
            for s in self.quic_sockets {
                s.set_nonblocking(true)?;
                tasks.spawn(quic::serve(
                    s,
                    config.clone(),
                    self.ctx.clone(),
                    self.quic_retry_above,
                ));
            }
        }
        if let Some(acceptor) = &self.tls {
            for l in tls {
                l.set_nonblocking(true)?;
                let l = TcpListener::from_std(l)?;
                tasks.spawn(accept_loop(l, self.ctx.clone(), Some(acceptor.clone())));
            }
        }
        shutdown.await;
        tasks.abort_all();
        Ok(())
    }
}

/// A TLS handshake must finish within this (nginx's default for a client's
/// headers). It was 10 s: under overload (10 000 users arriving over 30 s on
/// two shared cores) thousands of handshakes share the CPU and all finish
/// late; those cut at 10 s were errors to clients still willing to wait
/// (`tls handshake eof`, or a reset under the first request). A load degrades
/// by queueing, so the server must be at least as patient as a browser's
/// connection attempt; a client that never speaks is still dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// The listen backlog asked for (the kernel caps it at net.core.somaxconn,
/// 4096 in a new namespace). std's 128 overflowed when users arrived by the
/// thousand: the handshake's last ACK was dropped, the client's first bytes
/// went unanswered and, after the SYN-ACK retries, met a reset.
const BACKLOG: libc::c_int = 4096;

/// Listens again with [`BACKLOG`] (Linux updates a listening socket's backlog).
fn deepen_backlog(l: &std::net::TcpListener) -> io::Result<()> {
    sys::listen(l, BACKLOG)
}

async fn accept_loop(l: TcpListener, ctx: Arc<Ctx>, tls: Option<tokio_rustls::TlsAcceptor>) {
    loop {
        let (sock, _) = match l.accept().await {
            Ok(s) => s,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        tune(&sock, &ctx);
        let ctx = ctx.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                Some(acceptor) => {
                    // Early data (a repeat view's) needs the hand-written
                    // accept; any other handshake is tokio-rustls's own.
                    let accepted = async {
                        if ctx.knobs.early_data {
                            early::accept(&acceptor, sock, &ctx.early).await
                        } else {
                            acceptor.accept(sock).await.map(early::Accepted::Plain)
                        }
                    };
                    let Ok(Ok(mut stream)) =
                        tokio::time::timeout(HANDSHAKE_TIMEOUT, accepted).await
                    else {
                        return;
                    };
                    // With TCP_NOTSENT_LOWAT, TLS holds no more than the
                    // kernel may: rustls's own buffer of records not yet
                    // written (64 KiB by default) would otherwise be a
                    // second send buffer ahead of the stream scheduler.
                    if let Some(bytes) = ctx.knobs.notsent_lowat {
                        stream
                            .connection_mut()
                            .set_buffer_limit(Some((bytes as usize).max(TLS_RECORD)));
                    }
                    let protocol = protocols::by_alpn(stream.alpn());
                    let gate = stream.gate();
                    let io: protocols::BoxIo = match stream {
                        early::Accepted::Early(s) => Box::new(s),
                        early::Accepted::Plain(s) => Box::new(s),
                    };
                    gate.scope(protocol.serve(io, ctx)).await;
                }
                None => serve_cleartext(sock, ctx).await,
            }
        });
    }
}

/// The largest TLS record's plaintext: rustls's buffer must take one.
const TLS_RECORD: usize = 16 * 1024;

/// Sets an accepted TCP connection's options as the server's knobs say:
/// no Nagle, the congestion control, TCP_NOTSENT_LOWAT, pacing. Best effort: a kernel
/// that refuses one (gVisor may) serves the connection with its defaults.
fn tune(sock: &TcpStream, ctx: &Ctx) {
    let _ = sock.set_nodelay(true);
    if let Some(cc) = &ctx.cc {
        let _ = set_congestion_control(sock, cc);
    }
    if let Some(bytes) = ctx.knobs.notsent_lowat {
        let _ = socket2::SockRef::from(sock).set_tcp_notsent_lowat(bytes);
    }
    if ctx.knobs.tcp_pacing {
        // Not ~0 (unlimited): the kernel then paces the socket itself.
        let _ = sys::set_max_pacing_rate(sock, u64::MAX - 1);
    }
}

/// A cleartext connection's first bytes must come within this: the HTTP/1.1
/// idle keep-alive timeout (`protocols::http1`). It was 10 s: a browser (or a
/// load test's user) opens up to 6 connections for the requests waiting, and
/// under overload one may stay unused longer than that while the others take
/// the requests; closed, it failed the request that came to it at last
/// (`connection closed` errors at 3 000 users × 6 connections).
const FIRST_BYTES_TIMEOUT: Duration = Duration::from_secs(75);

/// Cleartext: HTTP/2 if the client opens with the h2 preface (prior knowledge),
/// otherwise HTTP/1.1 (which may upgrade to h2c) if `http` is offered.
async fn serve_cleartext(sock: TcpStream, ctx: Arc<Ctx>) {
    let mut first = [0u8; 24];
    let mut seen = 0;
    // Peek until the preface is ruled in or out (or the client goes quiet).
    let h2 = loop {
        let Ok(Ok(n)) = tokio::time::timeout(FIRST_BYTES_TIMEOUT, sock.peek(&mut first)).await
        else {
            return;
        };
        if n == 0 {
            return;
        }
        if first[..n] != H2_PREFACE[..n] {
            break false;
        }
        if n == H2_PREFACE.len() {
            break true;
        }
        if n == seen {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        seen = n;
    };
    if h2 && ctx.h2c {
        H2.serve(Box::new(sock), ctx).await
    } else if !h2 && ctx.http {
        // Plain HTTP/1.1, or the way in to h2c by Upgrade.
        protocols::Http1.serve(Box::new(sock), ctx).await
    } else {
        // A protocol this listener does not offer (with h2c alone, only prior
        // knowledge is): close, as RFC 9113 §3.4 asks of an invalid preface —
        // cleanly, reading what was sent so that the close is a FIN, not a RST.
        close_cleanly(sock).await;
    }
}

async fn close_cleanly(mut sock: TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let _ = sock.shutdown().await;
    let mut sink = [0u8; 4096];
    let drain = async { while matches!(sock.read(&mut sink).await, Ok(n) if n > 0) {} };
    let _ = tokio::time::timeout(Duration::from_secs(1), drain).await;
}

/// Sets TCP_CONGESTION on a socket (the testbed's `--cc`).
pub fn set_congestion_control(sock: &impl std::os::fd::AsRawFd, name: &str) -> io::Result<()> {
    sys::set_tcp_congestion(sock, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// h3's congestion control is `--quic-cc`'s where given, else the link's.
    #[test]
    fn quic_takes_its_own_congestion_control_or_tcps() {
        let mut opts = ServerOptions {
            cc: Some("cubic".into()),
            ..ServerOptions::default()
        };
        assert_eq!(opts.quic_knobs().cc.as_deref(), Some("cubic"));
        opts.knobs.quic_cc = Some("bbr");
        assert_eq!(opts.quic_knobs().cc.as_deref(), Some("bbr"));
        assert!(quic::transport(&opts.quic_knobs()).is_ok());
    }

    /// h3's initial window is `--quic-iw`'s where given, else the link's.
    #[test]
    fn quic_takes_its_own_initial_window_or_tcps() {
        let mut opts = ServerOptions {
            iw: Some(32),
            ..ServerOptions::default()
        };
        assert_eq!(opts.quic_knobs().iw, Some(32));
        opts.knobs.quic_iw = Some(10);
        assert_eq!(opts.quic_knobs().iw, Some(10));
    }

    #[test]
    fn an_offer_names_protocols_as_proto_does() {
        let o = Offer::parse("http,h2").unwrap();
        assert!(o.offers(Protocol::Http) && o.offers(Protocol::HttpPipelined));
        assert!(o.offers(Protocol::H2) && !o.offers(Protocol::Https));
        assert!(o.cleartext() && o.tls());
        assert_eq!(
            Offer::parse("http,https,spdy3,h2,h2c,h3").unwrap(),
            Offer::ALL
        );
        assert_eq!(
            Offer::parse("http,h4").unwrap_err(),
            "'h4' is not a protocol this server offers (http, https, h2, h2c, spdy3, h3)"
        );
        assert!(Offer::parse("http-pipelined").is_err());
    }

    /// `Knobs::notsent_lowat` reaches every accepted socket (read back from
    /// the kernel); without it the kernel's default stays.
    #[tokio::test]
    async fn an_accepted_socket_gets_the_knobs_notsent_lowat() {
        let site = site::builtin("icons", site::DEFAULT_SEED).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        for lowat in [Some(16384), None] {
            let ctx = Ctx {
                content: Content::new(site.clone(), ServerDelay::None),
                knobs: Knobs {
                    notsent_lowat: lowat,
                    ..Knobs::default()
                },
                h2c: false,
                http: true,
                cc: None,
                early: Arc::default(),
            };
            let _client = TcpStream::connect(addr).await.unwrap();
            let (accepted, _) = listener.accept().await.unwrap();
            let before = socket2::SockRef::from(&accepted)
                .tcp_notsent_lowat()
                .unwrap();
            tune(&accepted, &ctx);
            let after = socket2::SockRef::from(&accepted)
                .tcp_notsent_lowat()
                .unwrap();
            assert_eq!(after, lowat.unwrap_or(before), "{lowat:?}");
            assert!(accepted.nodelay().unwrap());
        }
    }
}
