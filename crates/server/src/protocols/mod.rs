//! One module per protocol, each behind the `ServeProtocol` trait: the listener hands a
//! connection (already TLS-terminated where needed) to the protocol chosen by
//! ALPN or by the first bytes, so spdy3 and h3 slot in beside these.

mod h2;
mod h2c_upgrade;
mod http1;
mod spdy3;

use crate::Ctx;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};

pub use h2::H2;
pub use http1::Http1;
pub use spdy3::Spdy3;

/// A byte stream a protocol runs over: TCP, or TLS over TCP.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for T {}
pub type BoxIo = Box<dyn Io>;

pub type ServeFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// How the server serves one protocol (the protocols' names are `proto::Protocol`).
pub trait ServeProtocol: Send + Sync {
    /// The ALPN identifier that selects it over TLS.
    fn alpn(&self) -> &'static [u8];
    /// Serves one connection until it closes.
    fn serve(&self, io: BoxIo, ctx: Arc<Ctx>) -> ServeFuture;
}

/// The protocols that TLS connections may choose by ALPN, in order of preference.
pub const OVER_TLS: [&dyn ServeProtocol; 3] = [&H2, &Spdy3, &Http1];

/// The protocol a TLS connection negotiated; HTTP/1.1 when ALPN chose none.
pub fn by_alpn(alpn: Option<&[u8]>) -> &'static dyn ServeProtocol {
    OVER_TLS
        .into_iter()
        .find(|p| Some(p.alpn()) == alpn)
        .unwrap_or(&Http1)
}

/// The SPDY priority (0 most urgent) Chrome gives a request of `kind`, for
/// what the server pushes (`--push`): a stylesheet or font HIGHEST (0), a
/// script MEDIUM (1: a parser-blocking one, Blink's High), an image LOWEST
/// (3: Blink's Low, before layout boosts it), anything else LOW (2).
pub(crate) fn push_priority(kind: site::Kind) -> u8 {
    match kind {
        site::Kind::Css | site::Kind::Font => 0,
        site::Kind::Js => 1,
        site::Kind::Png => 3,
        _ => 2,
    }
}

/// The HTTP/2 connection preface, which starts an h2c prior-knowledge connection.
pub const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
