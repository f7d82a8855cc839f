//! A local certificate authority (rcgen), made fresh for each testbed or `serve`
//! run: one certificate naming every host and address of the site, signed by a
//! CA whose PEM (or SPKI hashes, for Chromium) clients are told to trust — and
//! nothing else. One certificate for all hosts is what real sharded sites used
//! and what lets a browser pool h2 connections per address (Chrome reuses a
//! connection for another host only when its certificate covers that host).
//!
//! Two kinds of certificate (`--cert`): today's small ECDSA P-256 (root → leaf,
//! the default), or a chain of the 2013–14 era, RSA 2048 root → RSA 2048
//! intermediate → RSA 2048 leaf, whose server sends leaf and intermediate (about
//! 1.7 kB more in the handshake than ECDSA). ring signs with RSA but cannot make
//! RSA keys: the `rsa` crate makes the three keys once per process (a 2048-bit
//! key takes a second or so) and every CA of the process reuses them, with
//! fresh certificates.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use std::io;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};

/// The server's certificate: key type and chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CertKind {
    /// ECDSA P-256, root → leaf (today's certificates).
    #[default]
    Ecdsa,
    /// RSA 2048, root → intermediate → leaf (the era of the studies).
    Rsa2048,
}

impl CertKind {
    pub const ALL: [CertKind; 2] = [CertKind::Rsa2048, CertKind::Ecdsa];

    pub fn name(self) -> &'static str {
        match self {
            CertKind::Ecdsa => "ecdsa",
            CertKind::Rsa2048 => "rsa2048",
        }
    }
}

impl std::str::FromStr for CertKind {
    type Err = String;
    fn from_str(s: &str) -> Result<CertKind, String> {
        CertKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("'{s}' is not a certificate kind (rsa2048, ecdsa)"))
    }
}

impl std::fmt::Display for CertKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

pub struct Ca {
    kind: CertKind,
    cert: rcgen::Certificate,
    key: KeyPair,
    /// The intermediate that signs leaves (RSA chains only).
    intermediate: Option<(rcgen::Certificate, KeyPair)>,
}

fn tls_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("certificate: {e}"))
}

/// The process's three RSA 2048 keys (root, intermediate, leaf) as PKCS#8 DER,
/// made on first use.
fn rsa_keys() -> io::Result<&'static [Vec<u8>; 3]> {
    static KEYS: OnceLock<Result<[Vec<u8>; 3], String>> = OnceLock::new();
    let made = KEYS.get_or_init(|| {
        use rsa::pkcs8::EncodePrivateKey;
        let one = || -> Result<Vec<u8>, String> {
            let key = rsa::RsaPrivateKey::new(&mut rsa::rand_core::OsRng, 2048)
                .map_err(|e| e.to_string())?;
            Ok(key
                .to_pkcs8_der()
                .map_err(|e| e.to_string())?
                .as_bytes()
                .to_vec())
        };
        Ok([one()?, one()?, one()?])
    });
    made.as_ref().map_err(tls_err)
}

/// A key of `kind`: a fresh ECDSA key, or the process's RSA key number `i`.
fn key_of(kind: CertKind, i: usize) -> io::Result<KeyPair> {
    match kind {
        CertKind::Ecdsa => KeyPair::generate().map_err(tls_err),
        CertKind::Rsa2048 => KeyPair::from_pkcs8_der_and_sign_algo(
            &PrivatePkcs8KeyDer::from(rsa_keys()?[i].as_slice()),
            &rcgen::PKCS_RSA_SHA256,
        )
        .map_err(tls_err),
    }
}

fn ca_params(name: &str) -> io::Result<CertificateParams> {
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(tls_err)?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    Ok(params)
}

fn spki_hash(spki_der: &[u8]) -> String {
    use base64::Engine;
    let digest = ring::digest::digest(&ring::digest::SHA256, spki_der);
    base64::engine::general_purpose::STANDARD.encode(digest.as_ref())
}

/// base64(SHA-256(SubjectPublicKeyInfo)) of every certificate of a PEM text:
/// what Chromium's `--ignore-certificate-errors-spki-list` takes to trust a
/// private CA (`spdylab record --ca FILE`).
pub fn spki_of_pem(pem: &str) -> Result<Vec<String>, String> {
    use rustls::pki_types::pem::PemObject;
    let mut out = Vec::new();
    for c in CertificateDer::pem_slice_iter(pem.as_bytes()) {
        let c = c.map_err(|e| format!("not a PEM certificate file: {e:?}"))?;
        let spki = spki_of_der(&c).ok_or("a CERTIFICATE that is not X.509 DER")?;
        out.push(spki_hash(spki));
    }
    if out.is_empty() {
        return Err("no CERTIFICATE in the file".into());
    }
    Ok(out)
}

/// The SubjectPublicKeyInfo (whole TLV) of a DER certificate: a minimal DER walk.
fn spki_of_der(cert: &[u8]) -> Option<&[u8]> {
    /// A tag, the whole TLV, its content and what follows it.
    type Tlv<'a> = (u8, &'a [u8], &'a [u8], &'a [u8]);
    fn tlv(b: &[u8]) -> Option<Tlv<'_>> {
        let tag = *b.first()?;
        let l0 = *b.get(1)? as usize;
        let (len, hdr) = if l0 < 0x80 {
            (l0, 2)
        } else {
            let n = l0 & 0x7f;
            if n == 0 || n > 4 {
                return None;
            }
            let mut len = 0usize;
            for i in 0..n {
                len = (len << 8) | *b.get(2 + i)? as usize;
            }
            (len, 2 + n)
        };
        let end = hdr.checked_add(len)?;
        (end <= b.len()).then(|| (tag, &b[..end], &b[hdr..end], &b[end..]))
    }
    let (_, _, cert, _) = tlv(cert)?;
    let (_, _, mut tbs, _) = tlv(cert)?;
    let (tag, _, _, rest) = tlv(tbs)?;
    if tag == 0xa0 {
        tbs = rest; // the version
    }
    // serial, signature, issuer, validity, subject
    for _ in 0..5 {
        tbs = tlv(tbs)?.3;
    }
    let (tag, whole, _, _) = tlv(tbs)?;
    (tag == 0x30).then_some(whole)
}

impl Ca {
    /// A CA of today's kind (ECDSA).
    pub fn new() -> io::Result<Ca> {
        Ca::of_kind(CertKind::Ecdsa)
    }

    /// A CA whose leaves are of `kind` (with an intermediate for RSA).
    pub fn of_kind(kind: CertKind) -> io::Result<Ca> {
        let key = key_of(kind, 0)?;
        let cert = ca_params("spdylab testbed CA")?
            .self_signed(&key)
            .map_err(tls_err)?;
        let intermediate = match kind {
            CertKind::Ecdsa => None,
            CertKind::Rsa2048 => {
                let ikey = key_of(kind, 1)?;
                let mut params = ca_params("spdylab testbed intermediate CA")?;
                params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
                params.use_authority_key_identifier_extension = true;
                let icert = params.signed_by(&ikey, &cert, &key).map_err(tls_err)?;
                Some((icert, ikey))
            }
        };
        Ok(Ca {
            kind,
            cert,
            key,
            intermediate,
        })
    }

    pub fn kind(&self) -> CertKind {
        self.kind
    }

    /// The CA certificate in PEM, for clients to trust.
    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    pub fn der(&self) -> CertificateDer<'static> {
        self.cert.der().clone()
    }

    /// A certificate for `names` as PEM (the chain the server sends: leaf,
    /// then the intermediate or the CA) and its key as PEM (PKCS#8), for real
    /// servers (nginx, Apache, …) that read files.
    pub fn issue_pem(&self, names: &[String]) -> io::Result<(String, String)> {
        let (cert, key) = self.sign(names)?;
        let next = match &self.intermediate {
            Some((icert, _)) => icert.pem(),
            None => self.pem(),
        };
        Ok((format!("{}{}", cert.pem(), next), key.serialize_pem()))
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
        let key = key_of(self.kind, 2)?;
        let (issuer, issuer_key) = match &self.intermediate {
            Some((c, k)) => (c, k),
            None => (&self.cert, &self.key),
        };
        let cert = params
            .signed_by(&key, issuer, issuer_key)
            .map_err(tls_err)?;
        Ok((cert, key))
    }

    /// A certificate for `names` (DNS names or IP addresses), chained to the CA.
    fn issue(&self, names: &[String]) -> io::Result<Arc<CertifiedKey>> {
        let (cert, key) = self.sign(names)?;
        let der_key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let signer = rustls::crypto::ring::sign::any_supported_type(&der_key).map_err(tls_err)?;
        let next = match &self.intermediate {
            Some((icert, _)) => icert.der().clone(),
            None => self.der(),
        };
        Ok(Arc::new(CertifiedKey::new(
            vec![cert.der().clone(), next],
            signer,
        )))
    }

    /// base64(SHA-256(SubjectPublicKeyInfo)) of the CA: what Chromium's
    /// `--ignore-certificate-errors-spki-list` takes to trust it.
    pub fn spki_sha256_base64(&self) -> String {
        spki_hash(&self.key.public_key_der())
    }

    /// The SPKI hashes Chromium is to trust: the CA's and, in an RSA chain,
    /// the intermediate's (the root is not in the chain the server sends).
    pub fn spki_list(&self) -> Vec<String> {
        let mut list = vec![self.spki_sha256_base64()];
        if let Some((_, ikey)) = &self.intermediate {
            list.push(spki_hash(&ikey.public_key_der()));
        }
        list
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spki_of_a_pem_file_is_the_ca_s() {
        for kind in [CertKind::Ecdsa, CertKind::Rsa2048] {
            let ca = Ca::of_kind(kind).unwrap();
            assert_eq!(
                spki_of_pem(&ca.pem()).unwrap(),
                vec![ca.spki_sha256_base64()]
            );
        }
        assert!(spki_of_pem("hello").unwrap_err().contains("no CERTIFICATE"));
    }
}
