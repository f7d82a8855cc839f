//! `--cert`: the certificate the built-in server presents, seen by a rustls
//! client in a real handshake (in memory): an RSA 2048 leaf and intermediate
//! for `rsa2048`, an ECDSA leaf and the root for `ecdsa`; the RSA chain makes
//! the server's handshake flight more than a kilobyte longer.

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};
use server::{Ca, CertKind};
use std::sync::Arc;

/// rsaEncryption and id-ecPublicKey, as DER OIDs.
const RSA_OID: &[u8] = &[
    0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01,
];
const EC_OID: &[u8] = &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A full TLS 1.2 handshake against the server's certificate of `kind`:
/// the chain the client received and the bytes the server sent.
fn handshake(kind: CertKind) -> (Vec<Vec<u8>>, usize) {
    server::install_crypto_provider();
    let ca = Ca::of_kind(kind).unwrap();
    assert_eq!(ca.kind(), kind);
    let resolver = ca
        .resolver(&["www.example.test"], &["198.18.1.1".parse().unwrap()])
        .unwrap();
    let server_cfg = ServerConfig::builder_with_protocol_versions(&[&rustls::version::TLS12])
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(resolver));
    let mut roots = RootCertStore::empty();
    roots.add(ca.der()).unwrap();
    let client_cfg = ClientConfig::builder_with_protocol_versions(&[&rustls::version::TLS12])
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from("www.example.test").unwrap();
    let mut c = ClientConnection::new(Arc::new(client_cfg), name).unwrap();
    let mut s = ServerConnection::new(Arc::new(server_cfg)).unwrap();
    let mut down = 0;
    for _ in 0..20 {
        while c.wants_write() {
            let mut buf = Vec::new();
            c.write_tls(&mut buf).unwrap();
            s.read_tls(&mut buf.as_slice()).unwrap();
            s.process_new_packets().unwrap();
        }
        while s.wants_write() {
            let mut buf = Vec::new();
            s.write_tls(&mut buf).unwrap();
            down += buf.len();
            c.read_tls(&mut buf.as_slice()).unwrap();
            c.process_new_packets().unwrap();
        }
        if !c.is_handshaking() && !s.is_handshaking() {
            break;
        }
    }
    assert!(!c.is_handshaking(), "the handshake did not finish");
    let chain = c
        .peer_certificates()
        .unwrap()
        .iter()
        .map(|d| d.to_vec())
        .collect();
    (chain, down)
}

#[test]
fn rsa2048_presents_an_rsa_leaf_and_intermediate_and_a_longer_handshake() {
    let (rsa, rsa_down) = handshake(CertKind::Rsa2048);
    assert_eq!(rsa.len(), 2, "leaf and intermediate");
    assert!(rsa.iter().all(|c| contains(c, RSA_OID)), "RSA keys");
    assert!(
        rsa.iter().all(|c| c.len() > 700),
        "2048-bit keys and signatures"
    );
    let (ec, ec_down) = handshake(CertKind::Ecdsa);
    assert_eq!(ec.len(), 2, "leaf and root");
    assert!(contains(&ec[0], EC_OID) && !contains(&ec[0], RSA_OID));
    assert!(
        rsa_down > ec_down + 1000,
        "server flight: RSA {rsa_down} B, ECDSA {ec_down} B"
    );
    // Chromium is told to trust the root and the intermediate.
    assert_eq!(Ca::of_kind(CertKind::Rsa2048).unwrap().spki_list().len(), 2);
    assert_eq!("rsa2048".parse::<CertKind>(), Ok(CertKind::Rsa2048));
    assert!("rsa4096".parse::<CertKind>().is_err());
}
