//! TLS for `survey`: a certificate verifier that records the server's chain
//! and whether it verifies — against the system's roots and against a
//! `--ca FILE` — but never rejects it (a survey wants to see what a server
//! with a private CA speaks; the handshake's signatures are still checked, so
//! the peer does hold the certificate's key), client configurations for one
//! ALPN list and TLS version set, and a blocking TLS connection with a deadline.

use super::{Missing, Timer};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{ring, CryptoProvider};
use rustls::pki_types::{pem::PemObject, CertificateDer, ServerName, UnixTime};
use rustls::{
    ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where the system's roots are read from (Debian's bundle; `SSL_CERT_FILE` overrides).
pub const SYSTEM_ROOTS: &str = "/etc/ssl/certs/ca-certificates.crt";

/// Whether the chain verifies against one set of roots.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Verdict {
    pub verifies: bool,
    /// The roots' file; and why not, when it does not.
    pub detail: String,
}

/// What the server presented, as recorded.
#[derive(Debug, Clone)]
pub struct Seen {
    pub chain: Vec<CertificateDer<'static>>,
    pub system: Verdict,
    pub ca: Option<Verdict>,
}

/// The roots a survey checks the chain against, made once.
#[derive(Debug, Clone)]
pub struct Trust {
    provider: Arc<CryptoProvider>,
    system: Result<(PathBuf, Arc<WebPkiServerVerifier>), String>,
    ca: Option<(PathBuf, Arc<WebPkiServerVerifier>)>,
}

fn verifier(
    path: &Path,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<WebPkiServerVerifier>, String> {
    let mut roots = RootCertStore::empty();
    let certs = CertificateDer::pem_file_iter(path).map_err(|e| e.to_string())?;
    for c in certs {
        let c = c.map_err(|e| e.to_string())?;
        // A bundle may hold a certificate webpki cannot use as an anchor: skip it.
        let _ = roots.add(c);
    }
    if roots.is_empty() {
        return Err("no certificate in it".into());
    }
    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| e.to_string())
}

impl Trust {
    /// The system's roots (if readable) and `ca`'s (Err names the file and why).
    pub fn new(ca: Option<&Path>) -> Result<Trust, String> {
        let provider = Arc::new(ring::default_provider());
        let system_path = std::env::var_os("SSL_CERT_FILE")
            .map(PathBuf::from)
            .unwrap_or_else(|| SYSTEM_ROOTS.into());
        let system = verifier(&system_path, &provider)
            .map(|v| (system_path.clone(), v))
            .map_err(|e| format!("{}: {e}", system_path.display()));
        let ca = match ca {
            None => None,
            Some(p) => Some((
                p.to_path_buf(),
                verifier(p, &provider).map_err(|e| format!("--ca {}: {e}", p.display()))?,
            )),
        };
        Ok(Trust {
            provider,
            system,
            ca,
        })
    }

    /// A client configuration offering `alpn` over `versions`, whose
    /// verifier records into the returned slot.
    pub fn config(
        &self,
        alpn: &[&[u8]],
        versions: &[&'static rustls::SupportedProtocolVersion],
    ) -> (Arc<ClientConfig>, Arc<Mutex<Option<Seen>>>) {
        let seen = Arc::new(Mutex::new(None));
        let recorder = Arc::new(Recorder {
            trust: self.clone(),
            seen: seen.clone(),
        });
        let mut config = ClientConfig::builder_with_provider(self.provider.clone())
            .with_protocol_versions(versions)
            .expect("ring supports TLS 1.2 and 1.3")
            .dangerous()
            .with_custom_certificate_verifier(recorder)
            .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|a| a.to_vec()).collect();
        config.resumption = rustls::client::Resumption::disabled();
        (Arc::new(config), seen)
    }
}

/// Records the chain and the verdicts; accepts every chain (see the module's doc).
#[derive(Debug)]
struct Recorder {
    trust: Trust,
    seen: Arc<Mutex<Option<Seen>>>,
}

fn verdict(
    v: &WebPkiServerVerifier,
    path: &Path,
    end_entity: &CertificateDer<'_>,
    intermediates: &[CertificateDer<'_>],
    name: &ServerName<'_>,
    now: UnixTime,
) -> Verdict {
    match v.verify_server_cert(end_entity, intermediates, name, &[], now) {
        Ok(_) => Verdict {
            verifies: true,
            detail: path.display().to_string(),
        },
        Err(e) => Verdict {
            verifies: false,
            detail: format!("{}: {e}", path.display()),
        },
    }
}

impl ServerCertVerifier for Recorder {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        name: &ServerName<'_>,
        _ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let system = match &self.trust.system {
            Ok((path, v)) => verdict(v, path, end_entity, intermediates, name, now),
            Err(e) => Verdict {
                verifies: false,
                detail: e.clone(),
            },
        };
        let ca = self
            .trust
            .ca
            .as_ref()
            .map(|(path, v)| verdict(v, path, end_entity, intermediates, name, now));
        let chain = std::iter::once(end_entity)
            .chain(intermediates)
            .map(|c| c.clone().into_owned())
            .collect();
        *self.seen.lock().unwrap() = Some(Seen { chain, system, ca });
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.trust.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.trust.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.trust
            .provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A TCP connection within the timer's time.
pub fn connect(addr: SocketAddr, timer: &Timer) -> Result<TcpStream, Missing> {
    let sock =
        TcpStream::connect_timeout(&addr, timer.left()?).map_err(|e| io_reason(&e, timer))?;
    timer.answered.set(true);
    let _ = sock.set_nodelay(true);
    Ok(sock)
}

/// Why an I/O operation failed, in a few words.
pub fn io_reason(e: &io::Error, timer: &Timer) -> String {
    if let Some(tls) = e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
        return tls_reason(tls);
    }
    match e.kind() {
        io::ErrorKind::ConnectionRefused => "connection refused".into(),
        io::ErrorKind::ConnectionReset => "connection reset by the server".into(),
        io::ErrorKind::UnexpectedEof => "connection closed by the server".into(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => timer.expired(),
        _ => e.to_string(),
    }
}

/// Why a TLS handshake failed, in a few words.
pub fn tls_reason(e: &rustls::Error) -> String {
    use rustls::{AlertDescription as A, Error as E, InvalidMessage as M};
    match e {
        E::AlertReceived(A::NoApplicationProtocol) => {
            "the server refused the ALPN offer (no_application_protocol alert)".into()
        }
        E::AlertReceived(A::ProtocolVersion) => {
            "the server refused this TLS version (protocol_version alert)".into()
        }
        E::AlertReceived(a) => format!("the server sent a TLS alert: {a:?}"),
        E::InvalidMessage(M::InvalidContentType) | E::InvalidMessage(M::UnknownProtocolVersion) => {
            "not TLS: the server answered something else".into()
        }
        E::PeerIncompatible(p) => format!("no TLS in common: {p:?}"),
        E::PeerMisbehaved(rustls::PeerMisbehaved::SelectedUnofferedApplicationProtocol) => {
            "the server chose an ALPN protocol that was not offered".into()
        }
        other => other.to_string(),
    }
}

/// A TLS connection, handshake done, within the timer's time.
pub struct Tls {
    pub conn: ClientConnection,
    pub sock: TcpStream,
}

impl Tls {
    /// Connects and completes the handshake.
    pub fn connect(
        addr: SocketAddr,
        name: ServerName<'static>,
        config: Arc<ClientConfig>,
        timer: &Timer,
    ) -> Result<Tls, Missing> {
        let sock = connect(addr, timer)?;
        let conn = ClientConnection::new(config, name).map_err(|e| e.to_string())?;
        let mut tls = Tls { conn, sock };
        while tls.conn.is_handshaking() {
            let _ = tls.sock.set_read_timeout(Some(timer.left()?));
            match tls.conn.complete_io(&mut tls.sock) {
                Ok((0, 0)) if tls.conn.is_handshaking() => {
                    return Err("connection closed during the TLS handshake".into())
                }
                Ok(_) => {}
                Err(e) => {
                    // Send our alert, if any, before we go.
                    let _ = tls.conn.write_tls(&mut tls.sock);
                    return Err(io_reason(&e, timer));
                }
            }
        }
        Ok(tls)
    }

    /// The negotiated ALPN protocol, as text.
    pub fn alpn(&self) -> Option<String> {
        self.conn
            .alpn_protocol()
            .map(|a| String::from_utf8_lossy(a).into_owned())
    }

    /// "TLS 1.3, TLS13_AES_256_GCM_SHA384".
    pub fn describe(&self) -> String {
        let version = match self.conn.protocol_version() {
            Some(rustls::ProtocolVersion::TLSv1_3) => "TLS 1.3".to_string(),
            Some(rustls::ProtocolVersion::TLSv1_2) => "TLS 1.2".to_string(),
            Some(v) => format!("{v:?}"),
            None => "TLS ?".into(),
        };
        match self.conn.negotiated_cipher_suite() {
            Some(s) => format!("{version}, {:?}", s.suite()),
            None => version,
        }
    }

    pub fn write_all(&mut self, bytes: &[u8], timer: &Timer) -> Result<(), Missing> {
        let _ = self.sock.set_write_timeout(Some(timer.left()?));
        let mut stream = rustls::Stream::new(&mut self.conn, &mut self.sock);
        stream.write_all(bytes).map_err(|e| io_reason(&e, timer))?;
        stream.flush().map_err(|e| io_reason(&e, timer))
    }

    /// Some bytes (an empty read at a clean end).
    pub fn read(&mut self, buf: &mut [u8], timer: &Timer) -> Result<usize, Missing> {
        let _ = self.sock.set_read_timeout(Some(timer.left()?));
        let mut stream = rustls::Stream::new(&mut self.conn, &mut self.sock);
        match stream.read(buf) {
            Ok(n) => Ok(n),
            Err(e) => Err(io_reason(&e, timer)),
        }
    }
}
