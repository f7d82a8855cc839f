//! HTTP/3 over QUIC (quinn + h3 + h3-quinn) on UDP sockets (port 443 of each
//! server address): the same `Content` as every TCP protocol, with the
//! server's knobs mapped onto QUIC — `max_streams` → the peer's
//! `max_concurrent_bidi_streams`, `iw` (segments) → the congestion
//! controller's initial window of `iw × QUIC_MSS` bytes, `cc` → quinn's
//! Cubic, NewReno or BBR — TLS 1.3 only, and no segmentation offload (GSO),
//! so the link sees every datagram at its real size.
//!
//! Against hostile peers (tests/cli/hostile_h3.rs): the datagrams to an
//! address not yet validated are kept to 3× what it sent ([`amplification`]);
//! above [`RETRY_ABOVE`] handshakes under way new addresses must answer a
//! Retry; h3's buffering of a frame is bounded by [`guard`] and header
//! sections by [`MAX_FIELD_SECTION`]; request bodies are counted, not held.

pub mod amplification;
pub mod guard;

use crate::Ctx;
use bytes::{Buf, Bytes};
use http_body_util::BodyExt;
use quinn::congestion::{BbrConfig, CubicConfig, NewRenoConfig};
use std::io;
use std::sync::Arc;
use std::time::Duration;

/// Bytes per segment when `--iw` is mapped to a QUIC initial window: Linux
/// TCP's MSS on a 1500 B link with timestamps (1500 − 20 IP − 32 TCP), so
/// `--iw 10` gives QUIC the 14 480 B that TCP's IW10 carries.
pub const QUIC_MSS: u64 = 1448;

/// The ALPN of HTTP/3.
pub const ALPN: &[u8] = b"h3";

/// The largest request header section taken (RFC 9114 §4.2.2
/// SETTINGS_MAX_FIELD_SECTION_SIZE, counted as HPACK and QPACK count: name +
/// value + 32 per field), as hyper's HTTP/2 `max_header_list_size` (16 KiB):
/// h3's own default is unlimited. A larger one is answered 431.
pub const MAX_FIELD_SECTION: u64 = 16 << 10;

/// The longest frame other than DATA that h3 may buffer ([`guard`]): a
/// whole field section of [`MAX_FIELD_SECTION`] (its encoding is no longer
/// than its QPACK size but for odd Huffman strings), with a margin.
pub const MAX_FRAME: u64 = MAX_FIELD_SECTION + 1024;

/// QUIC's knobs, from the server's options.
#[derive(Debug, Clone)]
pub struct QuicKnobs {
    /// Accept 0-RTT (`Knobs::early_data`).
    pub early_data: bool,
    pub max_streams: u32,
    /// Initial congestion window in segments (None: quinn's default, 12 000 B).
    pub iw: Option<u32>,
    /// `cubic`, `reno` or `bbr` (None: cubic).
    pub cc: Option<String>,
    /// Ask the client to acknowledge every N ack-eliciting packets (None:
    /// the client's own pattern). The server's side alone: the
    /// ACK_FREQUENCY frame of draft-ietf-quic-ack-frequency, which quinn
    /// sends to a peer that advertised `min_ack_delay` (quinn's client does;
    /// Chromium, asked, keeps acknowledging every 2nd packet: docs/knobs.md).
    /// The delay asked for is the peer's own `max_ack_delay`, as quinn
    /// leaves it.
    pub ack_frequency: Option<u32>,
    /// Cubic's first slow start ends by HyStart++ (RFC 9406), which the
    /// vendored quinn-proto's Cubic carries (vendor/README.md); only Cubic.
    pub hystart: bool,
}

/// Quinn's transport configuration for these knobs (used by the server and
/// the model client alike, so both ends pace and open streams the same way).
pub fn transport(knobs: &QuicKnobs) -> Result<quinn::TransportConfig, String> {
    let mut t = quinn::TransportConfig::default();
    t.max_concurrent_bidi_streams(knobs.max_streams.into())
        .enable_segmentation_offload(false)
        // A connection silent this long is dropped, handshakes included. The
        // server sends no keep-alive PINGs of its own (it did, every 10 s,
        // which kept any client that merely acknowledges them, such as 1 000
        // idle ones at 57 KiB each, forever): keeping a connection is the
        // client's choice, as Chrome's and our model's PINGs make it.
        .max_idle_timeout(Some(
            quinn::IdleTimeout::try_from(IDLE_TIMEOUT).expect("30 s is a valid timeout"),
        ));
    let iw = knobs.iw.map(|s| s as u64 * QUIC_MSS);
    let cc = knobs.cc.as_deref().unwrap_or("cubic");
    if knobs.hystart && cc != "cubic" {
        return Err(format!(
            "--quic-hystart on: HyStart++ is in quinn's Cubic here, and QUIC's congestion control is {cc} (--quic-cc cubic)"
        ));
    }
    match cc {
        "cubic" => {
            let mut c = CubicConfig::default();
            if let Some(w) = iw {
                c.initial_window(w);
            }
            c.hystart(knobs.hystart);
            t.congestion_controller_factory(Arc::new(c));
        }
        "reno" => {
            let mut c = NewRenoConfig::default();
            if let Some(w) = iw {
                c.initial_window(w);
            }
            t.congestion_controller_factory(Arc::new(c));
        }
        "bbr" => {
            let mut c = BbrConfig::default();
            if let Some(w) = iw {
                c.initial_window(w);
            }
            t.congestion_controller_factory(Arc::new(c));
        }
        other => {
            return Err(format!(
                "--cc {other}: QUIC (quinn) has cubic, reno and bbr"
            ))
        }
    }
    Ok(t)
}

/// The QUIC server configuration: TLS 1.3 (QUIC has no other), ALPN h3,
/// the certificates of `resolver`.
pub fn server_config(
    resolver: Arc<dyn rustls::server::ResolvesServerCert>,
    knobs: &QuicKnobs,
) -> io::Result<quinn::ServerConfig> {
    let mut tls = rustls::ServerConfig::builder_with_protocol_versions(&[&rustls::version::TLS13])
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    tls.alpn_protocols = vec![ALPN.to_vec()];
    // quinn takes 0 or u32::MAX (its stream limits bound 0-RTT data); rustls
    // accepts early data only with stateful resumption: no ticketer here.
    tls.max_early_data_size = if knobs.early_data { u32::MAX } else { 0 };
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls)
        .map_err(|e| io::Error::other(format!("QUIC TLS configuration: {e}")))?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = transport(knobs).map_err(io::Error::other)?;
    if let Some(n) = knobs.ack_frequency {
        // The threshold is the number of packets a peer may take without
        // acknowledging at once: every Nth is acknowledged.
        let mut ack = quinn::AckFrequencyConfig::default();
        ack.ack_eliciting_threshold(quinn::VarInt::from_u32(n.saturating_sub(1)));
        transport.ack_frequency_config(Some(ack));
    }
    config.transport_config(Arc::new(transport));
    Ok(config)
}

/// A request's HEADERS frame must arrive whole within this after its stream
/// opens: 75 s, as HTTP/1.1's header read timeout (`protocols::http1`).
pub const HEADERS_TIMEOUT: Duration = Duration::from_secs(75);

/// A QUIC connection (or handshake) silent this long is dropped (RFC 9308
/// §3.2's recommendation; quinn's default).
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// QUIC handshakes under way above which the server answers the Initial of
/// an address it has not validated with a Retry (RFC 9000 §8.1.2): stateless,
/// so a flood of Initials from addresses that never answer costs a small
/// packet each instead of a connection's state (about 65 KiB, measured) for
/// the 30 s until its handshake times out; a real client echoes the token and pays
/// one round trip. Below it no Retry is sent, so the lab's h3 handshakes are
/// one round trip as on most servers. `spdylab serve --h3-retry-above`.
pub const RETRY_ABOVE: usize = 1024;

/// Handshakes under way beyond which Initials are refused (CONNECTION_CLOSE
/// CONNECTION_REFUSED), even from validated addresses (a client that answers
/// the Retry and then stalls): about 260 MiB of handshake state at most.
pub const MAX_HANDSHAKES: usize = 4096;

/// Counts a handshake under way while it lives.
struct Handshaking(Arc<std::sync::atomic::AtomicUsize>);

impl Handshaking {
    fn start(n: &Arc<std::sync::atomic::AtomicUsize>) -> Handshaking {
        n.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Handshaking(n.clone())
    }
}

impl Drop for Handshaking {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Serves HTTP/3 on `socket` until the task is aborted; above `retry_above`
/// handshakes under way, new addresses get a Retry ([`RETRY_ABOVE`]).
pub async fn serve(
    socket: std::net::UdpSocket,
    config: quinn::ServerConfig,
    ctx: Arc<Ctx>,
    retry_above: usize,
) {
    use quinn::Runtime;
    let Ok(inner) = quinn::TokioRuntime.wrap_udp_socket(socket) else {
        return;
    };
    let Ok(endpoint) = quinn::Endpoint::new_with_abstract_socket(
        quinn::EndpointConfig::default(),
        Some(config),
        Arc::new(amplification::Limited::new(inner)),
        Arc::new(quinn::TokioRuntime),
    ) else {
        return;
    };
    let mut conns = tokio::task::JoinSet::new();
    let handshaking = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    while let Some(incoming) = endpoint.accept().await {
        let under_way = handshaking.load(std::sync::atomic::Ordering::Relaxed);
        if under_way >= retry_above && !incoming.remote_address_validated() && incoming.may_retry()
        {
            let _ = incoming.retry();
            continue;
        }
        if under_way >= MAX_HANDSHAKES {
            incoming.refuse();
            continue;
        }
        let ctx = ctx.clone();
        let counted = Handshaking::start(&handshaking);
        conns.spawn(async move {
            // With 0-RTT on, the connection is served before its handshake
            // ends (a server's `into_0rtt` always succeeds): requests sent in
            // 0-RTT are answered at once, as 0.5-RTT data. But only once the
            // whole ClientHello is in (`handshake_data`): `accept` comes with
            // the first Initial, and a ClientHello longer than a datagram
            // (Chromium's, with its X25519MLKEM768 key share: two Initials)
            // leaves the client's transport parameters unknown until the
            // next one. h3 would open its control stream at once, against
            // a stream limit of 0, and quinn-proto wakes no stream opener when
            // the parameters raise it (`StreamsState::set_params` queues no
            // `StreamEvent::Available`): h3's SETTINGS, and so every request
            // of the connection, waited forever. The server answers the
            // ClientHello only once it has it all anyway, so this costs no
            // round trip.
            let conn = match ctx.knobs.early_data {
                true => match incoming.accept() {
                    Ok(mut connecting) => {
                        let hello = connecting.handshake_data().await.map(drop);
                        match hello {
                            Ok(()) => match connecting.into_0rtt() {
                                Ok((conn, _)) => Ok(conn),
                                Err(connecting) => connecting.await,
                            },
                            Err(e) => Err(e),
                        }
                    }
                    Err(e) => Err(e),
                },
                false => incoming.await,
            };
            drop(counted);
            let Ok(conn) = conn else { return };
            serve_connection(conn, ctx).await;
        });
        while conns.try_join_next().is_some() {}
    }
}

async fn serve_connection(conn: quinn::Connection, ctx: Arc<Ctx>) {
    let priorities = Arc::new(guard::Priorities::new(ctx.knobs.priorities));
    let Ok(mut h3) = h3::server::builder()
        .max_field_section_size(MAX_FIELD_SECTION)
        .build::<_, Bytes>(guard::Guarded::new(conn, MAX_FRAME, priorities.clone()))
        .await
    else {
        return;
    };
    while let Ok(Some(resolver)) = h3.accept().await {
        let (ctx, priorities) = (ctx.clone(), priorities.clone());
        tokio::spawn(async move {
            // A request's HEADERS must be whole within this; a client that
            // trickles them holds a stream slot no longer.
            let Ok(Ok((req, mut stream))) =
                tokio::time::timeout(HEADERS_TIMEOUT, resolver.resolve_request()).await
            else {
                return;
            };
            // RFC 9218: the response's priority from the request's header
            // (a PRIORITY_UPDATE may change it later: `guard::Priorities`).
            if let Some(value) = req.headers().get("priority").and_then(|v| v.to_str().ok()) {
                priorities.signal(
                    stream.id().into_inner(),
                    proto::priority::parse_priority_field(value),
                );
            }
            // The sites take no uploads: a request body is read whole and
            // counted (for the content's request log), never held: a hundred
            // streams of a megabyte each would otherwise be 100 MiB a
            // connection.
            let mut body_bytes = 0;
            while let Ok(Some(mut chunk)) = stream.recv_data().await {
                body_bytes += chunk.remaining();
                if body_bytes > crate::content::MAX_REQUEST_BODY {
                    stream.stop_sending(h3::error::Code::H3_REQUEST_REJECTED);
                    return;
                }
                chunk.advance(chunk.remaining());
            }
            // 103 Early Hints first (an informational response is one more
            // HEADERS frame before the final one, RFC 9114 §4.1), before
            // the document's think time.
            if let Some(hints) = ctx.content.early_hints(&req) {
                if stream.send_response(hints).await.is_err() {
                    return;
                }
            }
            let resp = ctx.content.respond_read(req, body_bytes).await;
            let (head, body) = resp.into_parts();
            // Alt-Svc stays on h3 responses too (`h3=":443"`): Chromium's
            // network service lets a host's delayable requests go unthrottled
            // only when it knows the host supports priorities — an h2 session,
            // or a QUIC alternative service on record. Forced onto QUIC
            // (`--origin-to-force-quic-on`, how the testbed loads h3 with its
            // private CA) it has no such record until a response says so, and
            // throttled icons over h3 to 6 images per host at a time: 1746 ms
            // against 1032 ms with it, h2 1007–1019 (150 ms / 8 Mbit, 3 each).
            let body = body
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            if stream
                .send_response(http::Response::from_parts(head, ()))
                .await
                .is_err()
            {
                return;
            }
            if !body.is_empty() && stream.send_data(body).await.is_err() {
                return;
            }
            let _ = stream.finish().await;
        });
    }
}
