//! A QUIC client over quinn for the tests that talk to a server of their
//! own — the built-in one or a bare quinn endpoint — trusting the test's CA
//! (`tls13`, or the browser model's configuration where the test wants
//! Chrome's), on its own loopback UDP port; and HTTP/3 frames by hand
//! (RFC 9114 §7.1), for the hostile peers that send what h3 never would.

use quinn::crypto::rustls::QuicClientConfig;
use rustls::pki_types::CertificateDer;
use std::net::Ipv4Addr;
use std::sync::Arc;

/// A TLS 1.3 client configuration that trusts `ca` alone and offers `alpn`
/// (in order).
pub fn tls13(ca: CertificateDer<'static>, alpn: Vec<Vec<u8>>) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca).unwrap();
    let mut tls = rustls::ClientConfig::builder_with_protocol_versions(&[&rustls::version::TLS13])
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = alpn;
    tls
}

/// quinn's client configuration of `tls` with `transport`.
pub fn client_config(
    tls: Arc<rustls::ClientConfig>,
    transport: quinn::TransportConfig,
) -> quinn::ClientConfig {
    let crypto = QuicClientConfig::try_from(tls).unwrap();
    let mut c = quinn::ClientConfig::new(Arc::new(crypto));
    c.transport_config(Arc::new(transport));
    c
}

/// A client endpoint on a UDP port of its own on 127.0.0.1 that connects
/// with `config`. Needs a tokio runtime.
pub fn endpoint(config: quinn::ClientConfig) -> quinn::Endpoint {
    let mut ep = quinn::Endpoint::client((Ipv4Addr::LOCALHOST, 0).into()).unwrap();
    ep.set_default_client_config(config);
    ep
}

/// Appends the head of an HTTP/3 frame of `kind` that claims `len` bytes of
/// payload (which may never follow).
pub fn frame_head(out: &mut Vec<u8>, kind: u64, len: u64) {
    proto::varint::encode(out, kind);
    proto::varint::encode(out, len);
}

/// Appends an HTTP/3 frame of `kind` with `payload`.
pub fn frame(out: &mut Vec<u8>, kind: u64, payload: &[u8]) {
    frame_head(out, kind, payload.len() as u64);
    out.extend_from_slice(payload);
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_frame_is_its_varint_type_and_length_then_its_payload() {
        let mut out = Vec::new();
        super::frame(&mut out, 0x21, b"ab");
        super::frame_head(&mut out, 0x01, 1 << 30);
        assert_eq!(
            out,
            [0x21, 0x02, b'a', b'b', 0x01, 0xc0, 0, 0, 0, 0x40, 0, 0, 0]
        );
    }
}
