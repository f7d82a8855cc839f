//! `survey`'s h3 check: a QUIC handshake (quinn) offering only ALPN `h3`,
//! with the same recording verifier as over TCP; then the server's control
//! stream read by hand up to its SETTINGS frame ([`wire::h3_control`]) — our
//! own control stream sends empty SETTINGS — and the bidirectional streams the
//! server allows counted as quinn lets us open them without sending anything
//! (its `initial_max_streams_bidi`, as a cross-check of the parameter read).
//!
//! The server's transport parameters (initial windows, stream limits, idle
//! timeout, UDP payload size) are not exposed by quinn's `Connection`. They
//! are caught where quinn's handshake hands them over: [`Recording`] wraps
//! quinn's own rustls crypto config (`quinn::crypto::ClientConfig`) and its
//! sessions, delegating every call, and keeps what the session's
//! `transport_parameters()` returns — quinn_proto's `TransportParameters`,
//! already decoded and validated by quinn. Its fields are private but its
//! public `write` encodes them in RFC 9000 §18's wire form, which
//! [`wire::quic_transport_parameters`] decodes (a few lines of varint TLVs,
//! unit-tested). This is chosen over re-reading rustls's raw
//! `quic_transport_parameters()` because quinn keeps its rustls connection
//! private (reaching it means re-implementing quinn's crypto session), and
//! over parsing `TransportParameters`' `Debug` text, which is no contract.

use super::wire::{self, H3Control, Settings};
use super::{Found, Outcome, Plan, Timer};
use quinn::crypto::{ExportKeyingMaterialError, HeaderKey, KeyPair, Keys, PacketKey, Session};
use quinn_proto::transport_parameters::TransportParameters;
use quinn_proto::TransportError;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// Counting stops here: "at least" this many streams.
const STREAM_COUNT_CAP: u64 = 10_000;

/// H3_NO_ERROR, to close politely.
const H3_NO_ERROR: u32 = 0x100;

pub fn h3(plan: &Plan, port: u16, timer: &Timer) -> Outcome {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("tokio: {e}"))?;
    let left = timer.left()?;
    let timeout_reason = timer.expired();
    rt.block_on(async {
        match tokio::time::timeout(left, handshake_and_read(plan, port, timer)).await {
            Ok(r) => r,
            Err(_) => Err(if timer.answered.get() {
                format!("QUIC handshake done, then {timeout_reason}")
            } else {
                format!("{timeout_reason} (no QUIC answer on UDP port {port})")
            }),
        }
    })
}

async fn handshake_and_read(plan: &Plan, port: u16, timer: &Timer) -> Outcome {
    let (config, seen) = plan.trust.config(&[b"h3"], &[&rustls::version::TLS13]);
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(config)
        .map_err(|e| format!("QUIC client configuration: {e}"))?;
    let params = Arc::new(Mutex::new(None));
    let client = quinn::ClientConfig::new(Arc::new(Recording {
        inner: Arc::new(crypto),
        params: params.clone(),
    }));
    let addr = SocketAddr::new(plan.tls_addr.ip(), port);
    let local: IpAddr = match addr.ip() {
        IpAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        IpAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let endpoint = quinn::Endpoint::client(SocketAddr::new(local, 0))
        .map_err(|e| format!("UDP socket: {e}"))?;
    let server_name = match &plan.server_name {
        rustls::pki_types::ServerName::DnsName(n) => n.as_ref().to_string(),
        rustls::pki_types::ServerName::IpAddress(ip) => IpAddr::from(*ip).to_string(),
        _ => plan.name.clone(),
    };
    let connecting = endpoint
        .connect_with(client, addr, &server_name)
        .map_err(|e| format!("QUIC connect: {e}"))?;
    let conn = connecting.await.map_err(|e| {
        timer
            .answered
            .set(!matches!(e, quinn::ConnectionError::TimedOut));
        reason(&e)
    })?;
    timer.answered.set(true);
    let seen = seen.lock().unwrap().take();

    // Our control stream: type 0x00, SETTINGS (0x04) of length 0.
    let mut ours = conn.open_uni().await.map_err(|e| reason(&e))?;
    let _ = ours.write_all(&[0x00, 0x04, 0x00]).await;

    let mut settings = Settings::default();
    // Most of the time left, so that a server that sends no SETTINGS is still
    // reported as speaking QUIC with ALPN h3.
    let budget = timer.left().unwrap_or_default() * 9 / 10;
    let mut note = String::new();
    match tokio::time::timeout(budget, read_control(&conn)).await {
        Ok(Ok(pairs)) => settings.all = pairs,
        Ok(Err(e)) => note = format!("; SETTINGS not read: {e}"),
        Err(_) => note = "; SETTINGS not read: no control stream in time".into(),
    }

    // Streams we may open now; kept until the connection is closed (dropped
    // earlier, each would be finished, i.e. sent as an empty request).
    let mut opened = Vec::new();
    let waker = Waker::noop();
    let mut cx = Context::from_waker(waker);
    while (opened.len() as u64) < STREAM_COUNT_CAP {
        let mut fut = pin!(conn.open_bi());
        match fut.as_mut().poll(&mut cx) {
            Poll::Ready(Ok(s)) => opened.push(s),
            _ => break,
        }
    }
    let streams = opened.len() as u64;
    settings.max_concurrent_streams = Some(streams);
    let quic = params
        .lock()
        .unwrap()
        .take()
        .map(|raw| wire::quic_transport_parameters(&raw));
    match &quic {
        Some(Ok(p)) => {
            // h2's counterparts: the window of each request stream, and the connection's.
            settings.initial_window = Some(p.initial_max_stream_data_bidi_remote);
            settings.connection_window = Some(p.initial_max_data);
            settings.quic = Some(p.clone());
        }
        Some(Err(e)) => note.push_str(&format!("; transport parameters not read: {e}")),
        None => note.push_str("; transport parameters not read: quinn gave none"),
    }
    conn.close(H3_NO_ERROR.into(), b"spdylab probe");
    drop(opened);
    endpoint.close(H3_NO_ERROR.into(), b"");

    let named: Vec<String> = settings
        .all
        .iter()
        .map(|(id, v)| match wire::h3_setting_name(*id) {
            Some(n) => format!("{n} {v}"),
            None => format!("{id:#x} {v}"),
        })
        .collect();
    let streams_text = if streams >= STREAM_COUNT_CAP {
        format!("at least {streams}")
    } else {
        streams.to_string()
    };
    Ok(Found {
        detail: format!(
            "QUIC handshake, ALPN h3; max streams {streams_text} (bidi streams opened); {}SETTINGS {}{note}",
            match &quic {
                Some(Ok(p)) => format!(
                    "transport parameters [initial_max_data {}, initial_max_stream_data bidi_local {} bidi_remote {} uni {}, initial_max_streams bidi {} uni {}, max_idle_timeout {} ms, max_udp_payload_size {}]; ",
                    p.initial_max_data,
                    p.initial_max_stream_data_bidi_local,
                    p.initial_max_stream_data_bidi_remote,
                    p.initial_max_stream_data_uni,
                    p.initial_max_streams_bidi,
                    p.initial_max_streams_uni,
                    p.max_idle_timeout,
                    p.max_udp_payload_size
                ),
                _ => String::new(),
            },
            if named.is_empty() {
                "(none: every default)".to_string()
            } else {
                format!("[{}]", named.join(", "))
            }
        ),
        settings: Some(settings),
        seen,
        ..Found::default()
    })
}

/// The server's control stream's SETTINGS, skipping its other unidirectional
/// streams (QPACK's).
async fn read_control(conn: &quinn::Connection) -> Result<Vec<(u64, u64)>, String> {
    for _ in 0..4 {
        let mut recv = conn.accept_uni().await.map_err(|e| reason(&e))?;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            match wire::h3_control(&buf) {
                H3Control::Settings(pairs) => return Ok(pairs),
                H3Control::NotSettings(f) => {
                    return Err(format!("the control stream's first frame is {f:#x}"))
                }
                H3Control::Other(_) => break,
                H3Control::More => {}
            }
            match recv.read(&mut chunk).await {
                Ok(Some(n)) => buf.extend_from_slice(&chunk[..n]),
                Ok(None) => return Err("the control stream ended".into()),
                Err(e) => return Err(e.to_string()),
            }
        }
    }
    Err("no control stream among the server's first streams".into())
}

fn reason(e: &quinn::ConnectionError) -> String {
    match e {
        quinn::ConnectionError::ConnectionClosed(c) if u64::from(c.error_code) == 0x100 + 120 => {
            "the server refused ALPN h3 (no_application_protocol)".into()
        }
        quinn::ConnectionError::ConnectionClosed(c) => format!("QUIC closed by the server: {c}"),
        quinn::ConnectionError::ApplicationClosed(c) => format!("closed by the server: {c}"),
        quinn::ConnectionError::VersionMismatch => "no QUIC version in common".into(),
        other => format!("QUIC: {other}"),
    }
}

/// quinn's rustls client crypto, keeping the server's transport parameters
/// (encoded) as the handshake hands them to quinn.
struct Recording {
    inner: Arc<quinn::crypto::rustls::QuicClientConfig>,
    params: Arc<Mutex<Option<Vec<u8>>>>,
}

impl quinn::crypto::ClientConfig for Recording {
    fn start_session(
        self: Arc<Self>,
        version: u32,
        server_name: &str,
        params: &TransportParameters,
    ) -> Result<Box<dyn Session>, quinn::ConnectError> {
        let inner = self
            .inner
            .clone()
            .start_session(version, server_name, params)?;
        Ok(Box::new(RecordingSession {
            inner,
            params: self.params.clone(),
        }))
    }
}

/// quinn's session, every call delegated; `transport_parameters` also kept.
struct RecordingSession {
    inner: Box<dyn Session>,
    params: Arc<Mutex<Option<Vec<u8>>>>,
}

impl Session for RecordingSession {
    fn initial_keys(&self, dst_cid: &quinn::ConnectionId, side: quinn::Side) -> Keys {
        self.inner.initial_keys(dst_cid, side)
    }
    fn handshake_data(&self) -> Option<Box<dyn std::any::Any>> {
        self.inner.handshake_data()
    }
    fn peer_identity(&self) -> Option<Box<dyn std::any::Any>> {
        self.inner.peer_identity()
    }
    fn early_crypto(&self) -> Option<(Box<dyn HeaderKey>, Box<dyn PacketKey>)> {
        self.inner.early_crypto()
    }
    fn early_data_accepted(&self) -> Option<bool> {
        self.inner.early_data_accepted()
    }
    fn is_handshaking(&self) -> bool {
        self.inner.is_handshaking()
    }
    fn read_handshake(&mut self, buf: &[u8]) -> Result<bool, TransportError> {
        self.inner.read_handshake(buf)
    }
    fn transport_parameters(&self) -> Result<Option<TransportParameters>, TransportError> {
        let r = self.inner.transport_parameters();
        if let Ok(Some(p)) = &r {
            let mut raw = Vec::new();
            p.write(&mut raw);
            *self.params.lock().unwrap() = Some(raw);
        }
        r
    }
    fn write_handshake(&mut self, buf: &mut Vec<u8>) -> Option<Keys> {
        self.inner.write_handshake(buf)
    }
    fn next_1rtt_keys(&mut self) -> Option<KeyPair<Box<dyn PacketKey>>> {
        self.inner.next_1rtt_keys()
    }
    fn is_valid_retry(
        &self,
        orig_dst_cid: &quinn::ConnectionId,
        header: &[u8],
        payload: &[u8],
    ) -> bool {
        self.inner.is_valid_retry(orig_dst_cid, header, payload)
    }
    fn export_keying_material(
        &self,
        output: &mut [u8],
        label: &[u8],
        context: &[u8],
    ) -> Result<(), ExportKeyingMaterialError> {
        self.inner.export_keying_material(output, label, context)
    }
}
