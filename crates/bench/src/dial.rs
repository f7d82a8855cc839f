//! Opening a connection over TCP, with TLS or without, and writing to it:
//! the byte stream the h1, h2 and SPDY loops read and write (h3 opens its own
//! QUIC connection, in `quic`).

use crate::BenchSpec;
use std::os::fd::{AsRawFd, RawFd};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

pub(crate) trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// An open connection.
pub(crate) struct Opened {
    pub(crate) io: Box<dyn Io>,
    /// Its socket, when the bytes on it are the plain HTTP bytes (no TLS):
    /// for `ReadLowWater`.
    pub(crate) plain_fd: Option<RawFd>,
}

pub(crate) async fn open(spec: &BenchSpec) -> Result<Opened, &'static str> {
    let tcp = TcpStream::connect(spec.addr).await.map_err(|_| "connect")?;
    let _ = tcp.set_nodelay(true);
    match &spec.tls {
        None => {
            let plain_fd = Some(tcp.as_raw_fd());
            Ok(Opened {
                io: Box::new(tcp),
                plain_fd,
            })
        }
        Some(config) => {
            let name =
                rustls::pki_types::ServerName::try_from(spec.host.clone()).map_err(|_| "tls")?;
            let tls = tokio_rustls::TlsConnector::from(config.clone())
                .connect(name, tcp)
                .await
                .map_err(|_| "tls")?;
            Ok(Opened {
                io: Box::new(tls),
                plain_fd: None,
            })
        }
    }
}

/// Writes `bytes` whole and flushes them: TLS holds what the socket did not
/// take yet until flushed.
pub(crate) async fn write(io: &mut dyn Io, bytes: &[u8]) -> Result<(), &'static str> {
    io.write_all(bytes).await.map_err(|_| "write")?;
    io.flush().await.map_err(|_| "write")
}
