//! `serve`: the built-in origin server on this machine, without a testbed.
//! [`bind`] opens the listeners (shard i of a loopback address on 127.0.0.i),
//! makes a CA and writes its certificate, and says what is served where;
//! [`Serving::run`] serves until SIGINT or SIGTERM.

use crate::sites::Site;
use server::{Ca, Server, ServerOptions};
use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub use server::quic::RETRY_ABOVE as QUIC_RETRY_ABOVE;
pub use server::Offer;

/// One server, as asked.
pub struct ServeRequest {
    pub site: Site,
    pub offer: Offer,
    /// Cleartext address (http, h2c) of shard 1.
    pub listen: SocketAddr,
    /// TLS address (https, spdy3, h2) of shard 1.
    pub tls_listen: SocketAddr,
    /// Server addresses to spread the site's hosts over.
    pub shards: usize,
    /// The server's knobs: streams, TLS versions, think time, tickets, …
    pub knobs: server::Knobs,
    /// Where to write the CA certificate (None: `ca-PID.pem` in this user's
    /// private directory, see [`crate::ca_file`]; removed at the end, or by the
    /// next run after `kill -9`).
    pub ca: Option<PathBuf>,
    /// The certificate chain's kind (RSA 2048 with an intermediate, or ECDSA).
    pub cert: crate::trial::CertKind,
    /// h3: QUIC handshakes under way above which a new client address must
    /// first answer a Retry (`server::quic::RETRY_ABOVE`; 0: always).
    pub quic_retry_above: usize,
}

/// Why the server did not start or stopped with an error.
#[derive(Debug)]
pub enum ServeError {
    /// More than one shard on addresses that are not loopback (bad input).
    ShardsNeedLoopback,
    /// An address cannot be bound (bad input): the flag, the address, why.
    Bind {
        flag: &'static str,
        addr: SocketAddr,
        error: io::Error,
    },
    /// The CA certificate cannot be written there (bad input).
    CaFile { path: PathBuf, error: io::Error },
    /// Making the CA or the server, or running it.
    Setup(io::Error),
}

impl ServeError {
    /// Whether the input was at fault (else the machine).
    pub fn is_usage(&self) -> bool {
        !matches!(self, ServeError::Setup(_))
    }
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::ShardsNeedLoopback => f.write_str(
                "--shards above 1 needs loopback --listen/--tls-listen (shard i on 127.0.0.i)",
            ),
            ServeError::Bind { flag, addr, error } => write!(f, "{flag} {addr}: {error}"),
            ServeError::CaFile { path, error } => write!(f, "--ca {}: {error}", path.display()),
            ServeError::Setup(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ServeError {}

/// Where one of the site's host names is served (the addresses actually bound).
#[derive(Debug, Clone)]
pub struct HostAddrs {
    pub host: String,
    /// Cleartext (None if no cleartext protocol is offered).
    pub http: Option<SocketAddr>,
    /// TLS (None if no TLS protocol is offered).
    pub https: Option<SocketAddr>,
}

/// How often `Serving::run` looks at its stop flag.
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// A server bound and ready to run.
pub struct Serving {
    server: Server,
    cleartext: Vec<TcpListener>,
    tls: Vec<TcpListener>,
    ca_path: PathBuf,
    rt: tokio::runtime::Runtime,
    /// The temporary CA file (None with `--ca FILE`): removed on drop.
    ca_file: Option<crate::ca_file::CaFile>,
    hosts: Vec<HostAddrs>,
}

fn shard_addr(base: SocketAddr, shard: usize) -> SocketAddr {
    match (base.ip(), shard) {
        (_, 1) => base,
        (IpAddr::V4(ip), i) if ip.is_loopback() => {
            SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, i as u8)), base.port())
        }
        _ => base,
    }
}

/// Binds the listeners, makes the CA (writing its certificate) and the server.
pub fn bind(request: ServeRequest) -> Result<Serving, ServeError> {
    let shards = request.shards;
    if shards > 1 && !(request.listen.ip().is_loopback() && request.tls_listen.ip().is_loopback()) {
        return Err(ServeError::ShardsNeedLoopback);
    }
    let bind = |base: SocketAddr, flag: &'static str| -> Result<Vec<TcpListener>, ServeError> {
        (1..=shards)
            .map(|i| {
                let addr = shard_addr(base, i);
                TcpListener::bind(addr).map_err(|error| ServeError::Bind { flag, addr, error })
            })
            .collect()
    };
    let cleartext = if request.offer.cleartext() {
        bind(request.listen, "--listen")?
    } else {
        vec![]
    };
    let tls = if request.offer.tls() {
        bind(request.tls_listen, "--tls-listen")?
    } else {
        vec![]
    };

    let ca = Ca::of_kind(request.cert).map_err(ServeError::Setup)?;
    let (ca_path, ca_file) = match &request.ca {
        Some(p) => {
            std::fs::write(p, ca.pem()).map_err(|error| ServeError::CaFile {
                path: p.clone(),
                error,
            })?;
            (p.clone(), None)
        }
        None => {
            let dir = crate::ca_file::dir();
            let file = crate::ca_file::write_in(&dir, &ca.pem()).map_err(|e| {
                ServeError::Setup(io::Error::new(e.kind(), format!("CA certificate: {e}")))
            })?;
            (file.path().to_path_buf(), Some(file))
        }
    };
    let addresses: Vec<IpAddr> = (1..=shards)
        .flat_map(|i| {
            [
                shard_addr(request.listen, i).ip(),
                shard_addr(request.tls_listen, i).ip(),
            ]
        })
        .collect();
    let opts = ServerOptions {
        offer: request.offer,
        knobs: request.knobs,
        cc: None,
        iw: None,
    };
    // h3 listens on UDP at the TLS listener's address and port.
    let quic = if request.offer.offers(proto::Protocol::H3) {
        (1..=shards)
            .map(|i| {
                let addr = tls
                    .get(i - 1)
                    .and_then(|l| l.local_addr().ok())
                    .unwrap_or_else(|| shard_addr(request.tls_listen, i));
                std::net::UdpSocket::bind(addr).map_err(|error| ServeError::Bind {
                    flag: "--tls-listen",
                    addr,
                    error,
                })
            })
            .collect::<Result<Vec<_>, _>>()?
    } else {
        vec![]
    };
    let map = request.site.shard_map(shards);
    let server = Server::new(request.site, opts, &ca, &addresses)
        .map_err(ServeError::Setup)?
        .with_quic(quic)
        .with_quic_retry_above(request.quic_retry_above);
    // A port of 0 picks a free one: say the address actually bound.
    let bound =
        |ls: &[TcpListener], shard: usize| ls.get(shard - 1).and_then(|l| l.local_addr().ok());
    let hosts = map
        .into_iter()
        .map(|(host, shard)| HostAddrs {
            http: bound(&cleartext, shard),
            https: bound(&tls, shard),
            host,
        })
        .collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Setup)?;
    Ok(Serving {
        rt,
        server,
        cleartext,
        tls,
        ca_path,
        ca_file,
        hosts,
    })
}

impl Serving {
    /// Where the CA certificate is.
    pub fn ca_path(&self) -> &Path {
        &self.ca_path
    }

    /// The site's host names (the first is the page's) and their addresses.
    pub fn hosts(&self) -> &[HostAddrs] {
        &self.hosts
    }

    /// Serves until `stop` is set (the CLI's one signal path sets it on
    /// SIGINT or SIGTERM; set it before `bind`, so that a signal before
    /// "ready" stops the server rather than killing us before the CA file
    /// goes); then removes a temporary CA file.
    pub fn run(self, stop: Arc<AtomicBool>) -> Result<(), ServeError> {
        let Serving {
            rt,
            server,
            cleartext,
            tls,
            ca_file,
            ..
        } = self;
        let stopped = async move {
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(STOP_POLL).await;
            }
        };
        let result = rt.block_on(server.run(cleartext, tls, stopped));
        drop(ca_file);
        result.map_err(ServeError::Setup)
    }
}

/// Which of these errors are bad input, a refusal or a failure to run (`crate::Error`).
impl From<ServeError> for crate::Error {
    fn from(e: ServeError) -> crate::Error {
        match e {
            ServeError::Setup(e) => crate::Error::Setup(Box::new(e)),
            e => crate::Error::Usage(e.to_string()),
        }
    }
}
