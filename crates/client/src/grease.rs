//! Chromium's GREASE Encrypted Client Hello: every TLS 1.3 ClientHello of
//! today's Chromium carries an `encrypted_client_hello` extension of random
//! bytes (draft-ietf-tls-esni §6.2, "GREASE ECH"), 250 bytes of the 1 990
//! its ClientHello takes on the wire here (Chromium 156, `compare --pcap`),
//! so that a connection's first flight is as large as the browser's: on a
//! page that opens 70 connections over a 1 Mbit/s uplink, the extension
//! alone is 140 ms of sending (docs/crosscheck.md, "What Chromium's https
//! sends up").
//!
//! rustls sends GREASE ECH (`EchMode::Grease`) through an HPKE suite, which
//! only its aws-lc-rs provider has; this lab builds on ring. GREASE seals
//! nothing: the suite only has to hand rustls an encapsulated key of its
//! KEM's length (32 random bytes for X25519, as Chromium's) — rustls fills
//! the payload with random bytes itself, as long as its inner hello would
//! be: 410 bytes of extension where Chromium's is 250. What rustls cannot
//! send at all (Chromium's 186-byte 0xca34 extension, ALPS, certificate
//! compression, GREASE values) about makes up the rest: the model's
//! ClientHello is 1 888 bytes on the wire, Chromium's 1 990 (1 472 before). So this is an HPKE suite that can
//! do just that, hand-written on purpose; any other use is an error.
//! rustls offers ECH with TLS 1.3 only: where the model offers TLS 1.3
//! (`--tls any`, `1.3`, and h3) it sends GREASE ECH and lists 1.3 alone in
//! `supported_versions` (Chromium lists 1.2 too: 2 bytes, and no server
//! here that would take 1.3 picks 1.2); `--tls 1.2` sends neither, and
//! SPDY/3.1, a 2014 protocol, keeps its ClientHello without it.

use rustls::client::{EchGreaseConfig, EchMode};
use rustls::crypto::hpke::{
    EncapsulatedSecret, Hpke, HpkeOpener, HpkePrivateKey, HpkePublicKey, HpkeSealer, HpkeSuite,
};
use rustls::internal::msgs::enums::{HpkeAead, HpkeKdf, HpkeKem};
use rustls::internal::msgs::handshake::HpkeSymmetricCipherSuite;
use rustls::Error;

/// X25519's public key length: the encapsulated key's.
const X25519_KEY: usize = 32;

/// Chromium's GREASE ECH as rustls's ECH mode.
pub fn ech_mode() -> EchMode {
    EchMode::Grease(EchGreaseConfig::new(
        &GreaseOnly,
        HpkePublicKey(random(X25519_KEY)),
    ))
}

/// The suite Chromium names in its GREASE extension: DHKEM(X25519,
/// HKDF-SHA256), HKDF-SHA256, AES-128-GCM.
#[derive(Debug)]
struct GreaseOnly;

fn random(n: usize) -> Vec<u8> {
    let mut b = vec![0; n];
    // Random as Chromium's; zeros would do as well if ring's generator
    // failed (it does not on Linux): nobody opens them.
    let _ = rustls::crypto::ring::default_provider()
        .secure_random
        .fill(&mut b);
    b
}

fn not_for_grease() -> Error {
    Error::General("an HPKE suite for GREASE ECH only".into())
}

impl Hpke for GreaseOnly {
    fn seal(
        &self,
        _info: &[u8],
        _aad: &[u8],
        _plaintext: &[u8],
        _pub_key: &HpkePublicKey,
    ) -> Result<(EncapsulatedSecret, Vec<u8>), Error> {
        Err(not_for_grease())
    }

    fn setup_sealer(
        &self,
        _info: &[u8],
        _pub_key: &HpkePublicKey,
    ) -> Result<(EncapsulatedSecret, Box<dyn HpkeSealer + 'static>), Error> {
        Ok((EncapsulatedSecret(random(X25519_KEY)), Box::new(NoSealer)))
    }

    fn open(
        &self,
        _enc: &EncapsulatedSecret,
        _info: &[u8],
        _aad: &[u8],
        _ciphertext: &[u8],
        _secret_key: &HpkePrivateKey,
    ) -> Result<Vec<u8>, Error> {
        Err(not_for_grease())
    }

    fn setup_opener(
        &self,
        _enc: &EncapsulatedSecret,
        _info: &[u8],
        _secret_key: &HpkePrivateKey,
    ) -> Result<Box<dyn HpkeOpener + 'static>, Error> {
        Err(not_for_grease())
    }

    fn generate_key_pair(&self) -> Result<(HpkePublicKey, HpkePrivateKey), Error> {
        Err(not_for_grease())
    }

    fn suite(&self) -> HpkeSuite {
        HpkeSuite {
            kem: HpkeKem::DHKEM_X25519_HKDF_SHA256,
            sym: HpkeSymmetricCipherSuite {
                kdf_id: HpkeKdf::HKDF_SHA256,
                aead_id: HpkeAead::AES_128_GCM,
            },
        }
    }
}

/// GREASE's sealer: rustls never seals with it (its payload is random).
#[derive(Debug)]
struct NoSealer;

impl HpkeSealer for NoSealer {
    fn seal(&mut self, _aad: &[u8], _plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        Err(not_for_grease())
    }
}

#[cfg(test)]
mod tests {
    use crate::conn::client_tls;
    use proto::Protocol;
    use rustls::pki_types::CertificateDer;

    /// The extensions of the ClientHello a configuration sends first:
    /// (type, length) in order.
    fn client_hello_extensions(protocol: Protocol, tls13_only: Option<bool>) -> Vec<(u16, usize)> {
        let config = client_tls(protocol, CertificateDer::from(Vec::new()), tls13_only);
        let mut conn =
            rustls::ClientConnection::new(config, "site.spdylab.test".try_into().unwrap()).unwrap();
        let mut wire = Vec::new();
        while conn.wants_write() {
            conn.write_tls(&mut wire).unwrap();
        }
        // Record header 5, handshake header 4, version 2, random 32.
        let mut at = 5 + 4 + 2 + 32;
        at += 1 + wire[at] as usize; // session id
        at += 2 + u16::from_be_bytes([wire[at], wire[at + 1]]) as usize; // suites
        at += 1 + wire[at] as usize; // compression
        let end = at + 2 + u16::from_be_bytes([wire[at], wire[at + 1]]) as usize;
        at += 2;
        let mut out = Vec::new();
        while at < end {
            let kind = u16::from_be_bytes([wire[at], wire[at + 1]]);
            let len = u16::from_be_bytes([wire[at + 2], wire[at + 3]]) as usize;
            out.push((kind, len));
            at += 4 + len;
        }
        out
    }

    const ECH: u16 = 0xfe0d;

    #[test]
    fn tls_1_3_client_hellos_carry_grease_ech_as_chromiums() {
        for (protocol, tls13_only) in [
            (Protocol::Https, None),
            (Protocol::H2, None),
            (Protocol::H2, Some(true)),
            (Protocol::H3, None),
        ] {
            let exts = client_hello_extensions(protocol, tls13_only);
            let ech = exts.iter().find(|(k, _)| *k == ECH);
            // Outer ECH: type, suite, config id, a 32-byte X25519 key and a
            // payload of an inner hello's size.
            assert!(
                ech.is_some_and(|(_, len)| *len > 1 + 4 + 1 + 2 + 32 + 2 + 100),
                "{protocol} {tls13_only:?}: {exts:?}"
            );
        }
        for (protocol, tls13_only) in [(Protocol::H2, Some(false)), (Protocol::Spdy3, None)] {
            let exts = client_hello_extensions(protocol, tls13_only);
            assert!(
                exts.iter().all(|(k, _)| *k != ECH),
                "{protocol} {tls13_only:?}: {exts:?}"
            );
        }
    }
}
