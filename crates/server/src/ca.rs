//! A local certificate authority (rcgen), made fresh for each testbed or `serve`
//! run: one certificate naming every host and address of the site, signed by a
//! CA whose PEM (or SPKI hash, for Chromium) clients are told to trust — and
//! nothing else. One certificate for all hosts is what real sharded sites used
//! and what lets a browser pool h2 connections per address (Chrome reuses a
//! connection for another host only when its certificate covers that host).

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use std::io;
use std::net::IpAddr;
use std::sync::Arc;

pub struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

fn tls_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("certificate: {e}"))
}

impl Ca {
    pub fn new() -> io::Result<Ca> {
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "spdylab testbed CA");
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().map_err(tls_err)?;
        let cert = params.self_signed(&key).map_err(tls_err)?;
        Ok(Ca { cert, key })
    }

    /// The CA certificate in PEM, for clients to trust.
    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    pub fn der(&self) -> CertificateDer<'static> {
        self.cert.der().clone()
    }

    /// A certificate for `names` as PEM (the chain: leaf then CA) and its key as
    /// PEM (PKCS#8), for real servers (nginx, Apache, …) that read files.
    pub fn issue_pem(&self, names: &[String]) -> io::Result<(String, String)> {
        let (cert, key) = self.sign(names)?;
        Ok((format!("{}{}", cert.pem(), self.pem()), key.serialize_pem()))
    }

    fn sign(&self, names: &[String]) -> io::Result<(rcgen::Certificate, KeyPair)> {
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
        for n in names {
            params.subject_alt_names.push(match n.parse::<IpAddr>() {
                Ok(ip) => SanType::IpAddress(ip),
                Err(_) => SanType::DnsName(n.clone().try_into().map_err(tls_err)?),
            });
        }
        params.distinguished_name.push(
            DnType::CommonName,
            names.first().cloned().unwrap_or_default(),
        );
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        let key = KeyPair::generate().map_err(tls_err)?;
        let cert = params
            .signed_by(&key, &self.cert, &self.key)
            .map_err(tls_err)?;
        Ok((cert, key))
    }

    /// A certificate for `names` (DNS names or IP addresses), chained to the CA.
    fn issue(&self, names: &[String]) -> io::Result<Arc<CertifiedKey>> {
        let (cert, key) = self.sign(names)?;
        let der_key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let signer = rustls::crypto::ring::sign::any_supported_type(&der_key).map_err(tls_err)?;
        Ok(Arc::new(CertifiedKey::new(
            vec![cert.der().clone(), self.der()],
            signer,
        )))
    }

    /// base64(SHA-256(SubjectPublicKeyInfo)) of the CA: what Chromium's
    /// `--ignore-certificate-errors-spki-list` takes to trust it.
    pub fn spki_sha256_base64(&self) -> String {
        use base64::Engine;
        let digest = ring::digest::digest(&ring::digest::SHA256, &self.key.public_key_der());
        base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
    }

    /// A resolver that answers every SNI (and none) with one certificate for
    /// all of `hosts` and `addresses`.
    pub fn resolver(&self, hosts: &[&str], addresses: &[IpAddr]) -> io::Result<SniResolver> {
        let mut names: Vec<String> = hosts.iter().map(|h| h.to_string()).collect();
        names.extend(addresses.iter().map(|a| a.to_string()));
        names.push("localhost".into());
        Ok(SniResolver {
            cert: self.issue(&names)?,
        })
    }
}

#[derive(Debug)]
pub struct SniResolver {
    cert: Arc<CertifiedKey>,
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.cert.clone())
    }
}
