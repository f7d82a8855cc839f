//! spdylab's protocol logic, sans-I/O (bytes in, events out; frames in, bytes
//! out; no sockets, no clocks): the names of the protocols (`Protocol`), the
//! HTTP/1.1 response decoder (`h1`), SPDY/3.1 framing with its header
//! compression and the client and server sessions on it (`spdy3`), a lean
//! HTTP/2 client connection for the generator (`h2`), SPDY/3.1
//! flow-control windows (`flow`), and QUIC's variable-length integers
//! (`varint`). The crates that do I/O (server, client,
//! bench) keep only thin async shells around these.

#![forbid(unsafe_code)]

pub mod flow;
pub mod h1;
pub mod h2;
pub mod priority;
mod protocol;
pub mod spdy3;
pub mod varint;

pub use protocol::Protocol;

/// How many times a client sends again a request the server refused
/// (REFUSED_STREAM: not processed, safe to retry) before it fails: the h2
/// and SPDY clients alike. Chrome's `HttpNetworkTransaction` retries a
/// refused request a small number of times (not checked here how many); we
/// allow 8, since a server at a limit of one stream can refuse the same
/// request on every race between its stream's end and the next request, and
/// a lab must not fail a load that a patient browser would complete; a bound
/// still ends a server that refuses for ever.
pub const MAX_REFUSED_RETRIES: u32 = 8;
