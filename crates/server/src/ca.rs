//! A local certificate authority (rcgen), made fresh for each testbed or `serve`
//! run: one certificate per host name (chosen by SNI), one for bare addresses,
//! all signed by a CA whose PEM clients are told to trust — and nothing else.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use std::collections::HashMap;
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

    /// A resolver that picks the certificate by SNI: one per host, and one for
    /// `addresses` when the client sends no SNI (connections by IP address).
    pub fn resolver(&self, hosts: &[&str], addresses: &[IpAddr]) -> io::Result<SniResolver> {
        let mut by_name = HashMap::new();
        for h in hosts {
            by_name.insert(h.to_string(), self.issue(&[h.to_string()])?);
        }
        let mut fallback_names: Vec<String> = addresses.iter().map(|a| a.to_string()).collect();
        fallback_names.push("localhost".into());
        Ok(SniResolver {
            by_name,
            fallback: self.issue(&fallback_names)?,
        })
    }
}

#[derive(Debug)]
pub struct SniResolver {
    by_name: HashMap<String, Arc<CertifiedKey>>,
    fallback: Arc<CertifiedKey>,
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        match hello.server_name() {
            Some(name) => self
                .by_name
                .get(&name.to_ascii_lowercase())
                .cloned()
                .or_else(|| Some(self.fallback.clone())),
            None => Some(self.fallback.clone()),
        }
    }
}
