//! X25519MLKEM768 (draft-ietf-tls-ecdhe-mlkem), the hybrid post-quantum key
//! exchange today's Chromium offers first in its TLS 1.3 ClientHello, beside
//! a plain X25519 share: so the model's ClientHello is as large as Chromium's
//! (a 1 216-byte key share more: two TCP segments, or two QUIC Initials), which
//! on a slow uplink is time (docs/crosscheck.md, "The ClientHello's size").
//!
//! Hand-written on purpose: rustls has this group only in its aws-lc-rs
//! provider, and this lab builds on ring. ML-KEM-768 is RustCrypto's
//! `ml-kem`; X25519 is rustls's ring group. The client's share is ML-KEM's
//! 1 184-byte encapsulation key, then X25519's 32 bytes; the server's is the
//! 1 088-byte ciphertext, then X25519's 32; the secret is ML-KEM's 32 bytes,
//! then X25519's (the draft's order for this group). A server without the
//! group picks the X25519 share rustls sends beside it (`hybrid_component`),
//! with no HelloRetryRequest, as Chromium's handshakes with this lab's
//! servers do.

use ml_kem::kem::{Decapsulate, Encapsulate};
use ml_kem::{EncodedSizeUser, KemCore, MlKem768};
use rustls::crypto::ring::kx_group::X25519;
use rustls::crypto::{ActiveKeyExchange, CompletedKeyExchange, SharedSecret, SupportedKxGroup};
use rustls::{Error, NamedGroup, PeerMisbehaved, ProtocolVersion};

const ENCAPSULATION_KEY: usize = 1184;
const CIPHERTEXT: usize = 1088;
const X25519_SHARE: usize = 32;

/// The group, for a `CryptoProvider`'s `kx_groups`.
pub static X25519MLKEM768: &dyn SupportedKxGroup = &X25519MlKem768;

#[derive(Debug)]
struct X25519MlKem768;

type DecapsulationKey = <MlKem768 as KemCore>::DecapsulationKey;
type EncapsulationKey = <MlKem768 as KemCore>::EncapsulationKey;

impl SupportedKxGroup for X25519MlKem768 {
    /// The client's side: a fresh ML-KEM key pair and X25519 key.
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let x25519 = X25519.start()?;
        let (dk, ek) = MlKem768::generate(&mut rand_core::OsRng);
        let mut share = ek.as_bytes().to_vec();
        share.extend_from_slice(x25519.pub_key());
        Ok(Box::new(Started { dk, x25519, share }))
    }

    /// The server's side: encapsulates to the client's key and agrees on
    /// X25519 with its share.
    fn start_and_complete(&self, client_share: &[u8]) -> Result<CompletedKeyExchange, Error> {
        if client_share.len() != ENCAPSULATION_KEY + X25519_SHARE {
            return Err(invalid());
        }
        let (ek, x25519) = client_share.split_at(ENCAPSULATION_KEY);
        let ek = EncapsulationKey::from_bytes(&ek.try_into().map_err(|_| invalid())?);
        let (ciphertext, mlkem_secret) = ek
            .encapsulate(&mut rand_core::OsRng)
            .map_err(|_| invalid())?;
        let classical = X25519.start_and_complete(x25519)?;
        let mut share = ciphertext.to_vec();
        share.extend_from_slice(&classical.pub_key);
        Ok(CompletedKeyExchange {
            group: self.name(),
            pub_key: share,
            secret: joined(&mlkem_secret, classical.secret.secret_bytes()),
        })
    }

    fn name(&self) -> NamedGroup {
        NamedGroup::X25519MLKEM768
    }

    /// TLS 1.3 only: TLS 1.2 has no KEM groups.
    fn usable_for_version(&self, version: ProtocolVersion) -> bool {
        version == ProtocolVersion::TLSv1_3
    }
}

/// A client's exchange under way: its keys and the share it sent.
struct Started {
    dk: DecapsulationKey,
    x25519: Box<dyn ActiveKeyExchange>,
    share: Vec<u8>,
}

impl ActiveKeyExchange for Started {
    fn complete(self: Box<Self>, server_share: &[u8]) -> Result<SharedSecret, Error> {
        if server_share.len() != CIPHERTEXT + X25519_SHARE {
            return Err(invalid());
        }
        let (ciphertext, x25519) = server_share.split_at(CIPHERTEXT);
        let ciphertext: ml_kem::Ciphertext<MlKem768> =
            ciphertext.try_into().map_err(|_| invalid())?;
        let mlkem_secret = self.dk.decapsulate(&ciphertext).map_err(|_| invalid())?;
        let classical = self.x25519.complete(x25519)?;
        Ok(joined(&mlkem_secret, classical.secret_bytes()))
    }

    fn hybrid_component(&self) -> Option<(NamedGroup, &[u8])> {
        Some((NamedGroup::X25519, self.x25519.pub_key()))
    }

    fn complete_hybrid_component(
        self: Box<Self>,
        server_share: &[u8],
    ) -> Result<SharedSecret, Error> {
        self.x25519.complete(server_share)
    }

    fn pub_key(&self) -> &[u8] {
        &self.share
    }

    fn group(&self) -> NamedGroup {
        NamedGroup::X25519MLKEM768
    }
}

fn joined(mlkem: &[u8], x25519: &[u8]) -> SharedSecret {
    SharedSecret::from([mlkem, x25519].concat())
}

fn invalid() -> Error {
    Error::PeerMisbehaved(PeerMisbehaved::InvalidKeyShare)
}

/// ring's provider with Chromium's key exchange groups, in its order:
/// X25519MLKEM768, X25519, P-256, P-384.
pub fn chromium_like_provider() -> rustls::crypto::CryptoProvider {
    use rustls::crypto::ring::kx_group;
    rustls::crypto::CryptoProvider {
        kx_groups: vec![
            X25519MLKEM768,
            kx_group::X25519,
            kx_group::SECP256R1,
            kx_group::SECP384R1,
        ],
        ..rustls::crypto::ring::default_provider()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_and_server_agree_on_one_secret() {
        let client = X25519MLKEM768.start().unwrap();
        assert_eq!(client.pub_key().len(), ENCAPSULATION_KEY + X25519_SHARE);
        let (group, classical) = client.hybrid_component().unwrap();
        assert_eq!(group, NamedGroup::X25519);
        assert_eq!(classical, &client.pub_key()[ENCAPSULATION_KEY..]);
        let server = X25519MLKEM768.start_and_complete(client.pub_key()).unwrap();
        assert_eq!(server.pub_key.len(), CIPHERTEXT + X25519_SHARE);
        let secret = client.complete(&server.pub_key).unwrap();
        assert_eq!(secret.secret_bytes().len(), 64);
        assert_eq!(secret.secret_bytes(), server.secret.secret_bytes());
    }

    #[test]
    fn a_server_without_the_group_completes_on_x25519() {
        let client = X25519MLKEM768.start().unwrap();
        let (_, classical) = client.hybrid_component().unwrap();
        let server = X25519.start_and_complete(classical).unwrap();
        let secret = client.complete_hybrid_component(&server.pub_key).unwrap();
        assert_eq!(secret.secret_bytes(), server.secret.secret_bytes());
    }

    #[test]
    fn shares_of_the_wrong_length_are_refused_not_a_panic() {
        assert!(X25519MLKEM768.start_and_complete(&[0; 100]).is_err());
        let client = X25519MLKEM768.start().unwrap();
        assert!(client.complete(&[0; 33]).is_err());
    }
}
