//! HTTP/3 on quinn + h3 + h3-quinn: the QUIC handshake (TLS 1.3 inside it,
//! ALPN h3, only the lab's CA; cold unless the TLS configuration keeps
//! sessions: then, with early data enabled (the repeat view's,
//! `conn::client_tls_repeat`), a session whose ticket allows it sends its
//! requests in 0-RTT (quinn's `Connecting::into_0rtt`) and learns at the
//! handshake's end whether the server accepted them: `ZeroRtt`),
//! then one request per bidirectional stream (a body, if any, in DATA before
//! the stream's FIN). quinn holds a request back
//! until the server's `max_concurrent_bidi_streams` lets a stream open, so the
//! server's stream limit is honoured as h2's SETTINGS are.
//!
//! Priorities are sent as Chrome sends them over h3, for servers that honour
//! them: an RFC 9218 `priority` header from the request's priority
//! (`crate::priority::Priority::header`: HIGHEST → u=0, MEDIUM → u=1, LOW →
//! u=2, LOWEST → u=3 (left out, the default), IDLE → u=4; `i` for the
//! document and images), which the page load takes from Blink's priority for
//! the resource ([`request_prioritized`]); [`request`] guesses it from the
//! path (`Priority::from_path`). Chromium sends no PRIORITY_UPDATE unless a
//! priority changes, which the model's never do.
//!
//! A 103 Early Hints before a response is told (`Event::EarlyHints`): the h3
//! crate (0.0.8) hands every HEADERS frame to `recv_response`, so the
//! request reads on past 1xx ones. No server push over h3 (the h3 crate's
//! client has none, and Chromium never accepted it).

use super::{Error, Event};
use crate::priority::Priority;
use crate::replay::Upload;
use crate::schedule::{ConnId, ReqId};
use bytes::{Buf, Bytes};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// What sends requests on an open h3 connection.
pub type SendRequest = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// An h3 connection: its request sender, the h3 driver and the QUIC
/// endpoint (its UDP socket), which live as long as the connection.
pub struct Connection {
    pub send: SendRequest,
    pub driver: h3::client::Connection<h3_quinn::Connection, Bytes>,
    pub endpoint: quinn::Endpoint,
}

/// Whether a connection's requests went in 0-RTT: the server's answer comes
/// when the handshake ends (true: accepted; false: rejected, quinn sends them
/// again in 1-RTT).
pub type ZeroRtt = Option<quinn::ZeroRttAccepted>;

/// QUIC to `addr` from its own UDP socket (bound to `bind` when given), then
/// the h3 control streams. The QUIC handshake is TLS's, so its whole time is
/// returned as the TLS time (HAR `ssl` = `connect`, as Chrome reports QUIC);
/// in 0-RTT the connection is usable at once (the time is ~0) and `ZeroRtt`
/// tells the server's answer later.
pub async fn dial(
    addr: SocketAddr,
    bind: Option<IpAddr>,
    sni: &str,
    tls: Arc<rustls::ClientConfig>,
) -> Result<(Connection, f64, ZeroRtt), Error> {
    let early = tls.enable_early_data;
    let quic = |step: &'static str| move |e: String| Error::Quic { step, reason: e };
    let t0 = Instant::now();
    let local = SocketAddr::new(
        bind.unwrap_or(if addr.is_ipv4() {
            IpAddr::from([0u8; 4])
        } else {
            IpAddr::from([0u16; 8])
        }),
        0,
    );
    let mut endpoint = chromium_endpoint(local).map_err(|source| match bind {
        Some(ip) => Error::Bind { addr, ip, source },
        None => Error::Connect { addr, source },
    })?;
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls)
        .map_err(|e| quic("TLS configuration")(e.to_string()))?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(Arc::new(transport()));
    endpoint.set_default_client_config(config);
    let connecting = endpoint
        .connect(addr, sni)
        .map_err(|e| quic("connect")(e.to_string()))?;
    let (connecting, zero_rtt) = match early {
        true => match connecting.into_0rtt() {
            Ok((conn, accepted)) => (Ok(conn), Some(accepted)),
            Err(connecting) => (Err(connecting), None),
        },
        false => (Err(connecting), None),
    };
    let conn = match connecting {
        Ok(conn) => conn,
        Err(connecting) => connecting.await.map_err(|e| match e {
            quinn::ConnectionError::TimedOut => Error::Connect {
                addr,
                source: std::io::ErrorKind::TimedOut.into(),
            },
            quinn::ConnectionError::TransportError(t) if t.code.to_string().contains("crypto") => {
                Error::Tls {
                    sni: sni.to_string(),
                    source: std::io::Error::other(t.to_string()),
                }
            }
            e => quic("QUIC handshake")(e.to_string()),
        })?,
    };
    let (driver, send) = h3::client::builder()
        .build::<_, _, Bytes>(h3_quinn::Connection::new(conn))
        .await
        .map_err(|e| quic("h3 settings")(e.to_string()))?;
    let handshake_ms = t0.elapsed().as_secs_f64() * 1e3;
    Ok((
        Connection {
            send,
            driver,
            endpoint,
        },
        handshake_ms,
        zero_rtt,
    ))
}

/// A client endpoint on a UDP socket bound to `local`, whose connections
/// have no connection ID of their own, as Chromium's: QUICHE's client sends
/// a zero-length source connection ID, so each of the server's packets
/// carries none (quinn's default is 8 bytes: 8 more in every packet the
/// server sends, a few kB over a page). Each connection here has its own
/// socket, so its 4-tuple tells its packets apart.
///
/// The socket reads one datagram at a time ([`OneDatagram`]): with
/// quinn-udp's receive offload, quinn gives each endpoint a zeroed receive
/// buffer of 64 segments × 32 datagrams × 1 472 bytes (3 MB), and on this
/// lab's VM faulting it in took 7–20 ms of every other page's first QUIC
/// connection, before its first Initial (the model's h3 connections opened
/// a median 6.7 ms after navigation start, its TCP ones 2.5 ms: the
/// fidelity benchmark's references, docs/crosscheck.md, "A QUIC endpoint's
/// receive buffer"). Chromium's opens as its TCP ones do.
fn chromium_endpoint(local: SocketAddr) -> std::io::Result<quinn::Endpoint> {
    let socket = std::net::UdpSocket::bind(local)?;
    let runtime: Arc<dyn quinn::Runtime> = Arc::new(quinn::TokioRuntime);
    // quinn-udp turns the offload on as it wraps the socket: off again,
    // after, so that no read coalesces datagrams.
    let fd = socket.try_clone()?;
    let socket = runtime.wrap_udp_socket(socket)?;
    sys::disable_udp_gro(&fd)?;
    let mut config = quinn::EndpointConfig::default();
    config.cid_generator(|| Box::new(NoConnectionId));
    quinn::Endpoint::new_with_abstract_socket(config, None, Arc::new(OneDatagram(socket)), runtime)
}

/// A UDP socket whose reads take one datagram each (its offload is off:
/// [`chromium_endpoint`]), so quinn sizes its receive buffer for that.
#[derive(Debug)]
struct OneDatagram(Arc<dyn quinn::AsyncUdpSocket>);

impl quinn::AsyncUdpSocket for OneDatagram {
    fn create_io_poller(self: Arc<Self>) -> std::pin::Pin<Box<dyn quinn::UdpPoller>> {
        self.0.clone().create_io_poller()
    }

    fn try_send(&self, transmit: &quinn::udp::Transmit) -> std::io::Result<()> {
        self.0.try_send(transmit)
    }

    fn poll_recv(
        &self,
        cx: &mut std::task::Context,
        bufs: &mut [std::io::IoSliceMut<'_>],
        meta: &mut [quinn::udp::RecvMeta],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.0.poll_recv(cx, bufs, meta)
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.0.local_addr()
    }

    fn max_transmit_segments(&self) -> usize {
        self.0.max_transmit_segments()
    }

    fn max_receive_segments(&self) -> usize {
        1
    }

    fn may_fragment(&self) -> bool {
        self.0.may_fragment()
    }
}

/// Zero-length connection IDs (`chromium_endpoint`).
struct NoConnectionId;

impl quinn::ConnectionIdGenerator for NoConnectionId {
    fn generate_cid(&mut self) -> quinn::ConnectionId {
        quinn::ConnectionId::new(&[])
    }

    fn cid_len(&self) -> usize {
        0
    }

    fn cid_lifetime(&self) -> Option<Duration> {
        None
    }
}

/// The round trip Chromium's QUIC assumes before its first sample:
/// QUICHE's `kInitialRttMs` (quic_constants.h). With its
/// `kPtoMultiplierWithoutRttSamples` of 3, a lost Initial or Handshake
/// packet is sent again after 300 ms. quinn's default is RFC 9002's 333 ms,
/// whose probe timeout (smoothed + 4 × half of it) is 999 ms; quinn's at
/// 100 ms is 300 ms, Chromium's.
const CHROMIUM_INITIAL_RTT: Duration = Duration::from_millis(100);

/// The client's transport: Chrome's receive windows (6 MB per stream, 15 MB
/// per connection), initial round trip and acknowledgements, no
/// segmentation offload (the link sees every datagram).
///
/// Acknowledgements: QUICHE's receiver (`QuicReceivedPacketManager`)
/// acknowledges every 2nd packet until 100 have come, then every 10th or a
/// quarter of the minimum RTT after the first unacknowledged one (ack
/// decimation, on by default: `kMinReceivedBeforeAckDecimation`,
/// `kMaxRetransmittablePacketsBeforeAck`, `kAckDecimationDelay` in
/// quic_constants.h), where quinn acknowledges every 2nd throughout. The
/// vendored quinn-proto's `receiver_ack_decimation`
/// (docs/quinn-proto-ack-decimation.patch) does what QUICHE does.
fn transport() -> quinn::TransportConfig {
    let mut t = quinn::TransportConfig::default();
    t.initial_rtt(CHROMIUM_INITIAL_RTT)
        .receiver_ack_decimation(true)
        .stream_receive_window((6u32 * 1024 * 1024).into())
        .receive_window((15u32 * 1024 * 1024).into())
        .enable_segmentation_offload(false)
        .max_idle_timeout(Some(
            quinn::IdleTimeout::try_from(Duration::from_secs(30)).expect("a valid timeout"),
        ))
        .keep_alive_interval(Some(Duration::from_secs(10)));
    t
}

/// Runs the connection until it closes (or the task is aborted, which drops
/// the endpoint and so closes it).
pub async fn drive(mut c: h3::client::Connection<h3_quinn::Connection, Bytes>) {
    let _ = std::future::poll_fn(|cx| c.poll_close(cx)).await;
}

/// One HTTP/3 request at the priority its path suggests
/// (`Priority::from_path`); see [`request_prioritized`].
pub async fn request(
    send: SendRequest,
    req: ReqId,
    conn: ConnId,
    host: String,
    path: String,
    events: mpsc::UnboundedSender<Event>,
    upload: Option<Upload>,
) {
    let priority = Priority::from_path(&path);
    let extra = Vec::new();
    request_prioritized(send, req, conn, host, path, priority, events, upload, extra).await
}

/// One HTTP/3 request on a stream of its own, with Chrome's `priority`
/// header for `priority`: opens it (waiting for the server's stream limit),
/// sends the headers, the body of an `upload` and FIN, reads the response.
#[allow(clippy::too_many_arguments)]
pub async fn request_prioritized(
    mut send: SendRequest,
    req: ReqId,
    conn: ConnId,
    host: String,
    path: String,
    priority: Priority,
    events: mpsc::UnboundedSender<Event>,
    upload: Option<Upload>,
    extra: Vec<(String, String)>,
) {
    let fail = |error: Error| {
        let _ = events.send(Event::Failed { req, error });
    };
    let h3 = |step: &'static str| {
        move |e: h3::error::StreamError| Error::Quic {
            step,
            reason: e.to_string(),
        }
    };
    let method = upload.as_ref().map_or("GET", |u| u.method.as_str());
    let mut builder = http::Request::builder()
        .method(method)
        .uri(format!("https://{host}{path}"))
        .header("user-agent", "spdylab/0.1");
    if let Some(p) = priority.header() {
        builder = builder.header("priority", p);
    }
    // A conditional request's validators (the repeat view's cache).
    for (name, value) in extra {
        builder = builder.header(name, value);
    }
    if let Some(u) = upload
        .as_ref()
        .filter(|u| !u.body.is_empty() || u.expects_body())
    {
        builder = builder.header("content-length", u.body.len());
    }
    let request = match builder.body(()) {
        Ok(r) => r,
        Err(e) => return fail(Error::Request(e.to_string())),
    };
    let mut stream = match send.send_request(request).await {
        Ok(s) => s,
        Err(e) => return fail(h3("h3 request")(e)),
    };
    if let Some(body) = upload.map(|u| u.body).filter(|b| !b.is_empty()) {
        if let Err(e) = stream.send_data(body).await {
            return fail(h3("h3 request body")(e));
        }
    }
    if let Err(e) = stream.finish().await {
        return fail(h3("h3 request end")(e));
    }
    let _ = events.send(Event::Sent {
        req,
        at: Instant::now(),
    });
    // The h3 crate returns each HEADERS frame as a response: a 103 (Early
    // Hints) is told, any 1xx skipped, until the final one.
    let response = loop {
        match stream.recv_response().await {
            Ok(r) if r.status().is_informational() => {
                if r.status().as_u16() == 103 {
                    let _ = events.send(Event::EarlyHints {
                        req,
                        at: Instant::now(),
                        links: r
                            .headers()
                            .get_all("link")
                            .iter()
                            .filter_map(|v| v.to_str().ok())
                            .map(str::to_string)
                            .collect(),
                    });
                }
            }
            Ok(r) => break r,
            Err(e) => return fail(h3("h3 response")(e)),
        }
    };
    let _ = events.send(Event::head(req, &response));
    loop {
        match stream.recv_data().await {
            Ok(Some(mut chunk)) => {
                let data = chunk.copy_to_bytes(chunk.remaining());
                let _ = events.send(Event::Data { req, data });
            }
            Ok(None) => break,
            Err(e) => return fail(h3("h3 body")(e)),
        }
    }
    let _ = events.send(Event::Done {
        req,
        at: Instant::now(),
        conn,
    });
}
