//! HTTP/3 over QUIC (quinn + h3 + h3-quinn) on UDP sockets (port 443 of each
//! server address): the same `Content` as every TCP protocol, with the
//! server's knobs mapped onto QUIC — `max_streams` → the peer's
//! `max_concurrent_bidi_streams`, `iw` (segments) → the congestion
//! controller's initial window of `iw × QUIC_MSS` bytes, `cc` → quinn's
//! Cubic, NewReno or BBR — TLS 1.3 only, and no segmentation offload (GSO),
//! so the link sees every datagram at its real size.

use crate::Ctx;
use bytes::{Buf, Bytes};
use http_body_util::{BodyExt, Full};
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

/// QUIC's knobs, from the server's options.
#[derive(Debug, Clone)]
pub struct QuicKnobs {
    pub max_streams: u32,
    /// Initial congestion window in segments (None: quinn's default, 12 000 B).
    pub iw: Option<u32>,
    /// `cubic`, `reno` or `bbr` (None: cubic).
    pub cc: Option<String>,
}

/// Quinn's transport configuration for these knobs (used by the server and
/// the model client alike, so both ends pace and open streams the same way).
pub fn transport(knobs: &QuicKnobs) -> Result<quinn::TransportConfig, String> {
    let mut t = quinn::TransportConfig::default();
    t.max_concurrent_bidi_streams(knobs.max_streams.into())
        .enable_segmentation_offload(false)
        .max_idle_timeout(Some(
            quinn::IdleTimeout::try_from(Duration::from_secs(30)).expect("30 s is a valid timeout"),
        ))
        .keep_alive_interval(Some(Duration::from_secs(10)));
    let iw = knobs.iw.map(|s| s as u64 * QUIC_MSS);
    match knobs.cc.as_deref().unwrap_or("cubic") {
        "cubic" => {
            let mut c = CubicConfig::default();
            if let Some(w) = iw {
                c.initial_window(w);
            }
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
    tls.max_early_data_size = 0;
    let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(tls)
        .map_err(|e| io::Error::other(format!("QUIC TLS configuration: {e}")))?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    config.transport_config(Arc::new(transport(knobs).map_err(io::Error::other)?));
    Ok(config)
}

/// Serves HTTP/3 on `socket` until the task is aborted.
pub async fn serve(socket: std::net::UdpSocket, config: quinn::ServerConfig, ctx: Arc<Ctx>) {
    let Ok(endpoint) = quinn::Endpoint::new(
        quinn::EndpointConfig::default(),
        Some(config),
        socket,
        Arc::new(quinn::TokioRuntime),
    ) else {
        return;
    };
    let mut conns = tokio::task::JoinSet::new();
    while let Some(incoming) = endpoint.accept().await {
        let ctx = ctx.clone();
        conns.spawn(async move {
            let Ok(conn) = incoming.await else { return };
            serve_connection(conn, ctx).await;
        });
        while conns.try_join_next().is_some() {}
    }
}

async fn serve_connection(conn: quinn::Connection, ctx: Arc<Ctx>) {
    let Ok(mut h3) = h3::server::builder()
        .build::<_, Bytes>(h3_quinn::Connection::new(conn))
        .await
    else {
        return;
    };
    while let Ok(Some(resolver)) = h3.accept().await {
        let ctx = ctx.clone();
        tokio::spawn(async move {
            let Ok((req, mut stream)) = resolver.resolve_request().await else {
                return;
            };
            // The sites take no uploads: a request body is read whole (for
            // the content's request log) and dropped there.
            let mut body = bytes::BytesMut::new();
            while let Ok(Some(mut chunk)) = stream.recv_data().await {
                if body.len() + chunk.remaining() > 1 << 20 {
                    stream.stop_sending(h3::error::Code::H3_REQUEST_REJECTED);
                    return;
                }
                body.extend_from_slice(&chunk.copy_to_bytes(chunk.remaining()));
            }
            let (parts, ()) = req.into_parts();
            let req = http::Request::from_parts(parts, Full::new(body.freeze()));
            let resp = ctx.content.respond(req).await;
            let (mut head, body) = resp.into_parts();
            // Alt-Svc advertises h3 on TCP; on h3 itself it says nothing new.
            head.headers.remove(http::header::ALT_SVC);
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
