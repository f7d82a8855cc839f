//! spdylab's test kit (a dev-dependency, never published): the pieces the
//! tests of several crates wrote again each, kept once. Each module is
//! behind the feature of its name so that a crate's tests build only what
//! they use:
//! - `relay`: a UDP relay on loopback between a QUIC client and a server,
//!   which passes, holds back or drops the client's datagrams;
//! - `page`: a whole page load through the browser model in virtual time
//!   (the main thread and the paint estimate fed one response after
//!   another), and the checks of what it reads and estimates;
//! - `lines`: the line-by-line mutation of a good file that the property
//!   tests of file formats start from;
//! - `cli`: the arguments the CLI tests give `spdylab` again and again;
//! - `h2`: HTTP/2 frames written and read by hand, for hostile clients and
//!   scripted servers;
//! - `spdy`: SPDY/3.1 control frames and deflated header blocks by hand, and
//!   a server's frames read back until the last one wanted;
//! - `h3`: the QUIC test client (quinn, trusting the test's CA) and HTTP/3
//!   frames by hand.

pub mod cli;
#[cfg(feature = "h2")]
pub mod h2;
#[cfg(feature = "h3")]
pub mod h3;
#[cfg(feature = "lines")]
pub mod lines;
#[cfg(feature = "page")]
pub mod page;
#[cfg(feature = "relay")]
pub mod relay;
#[cfg(feature = "spdy")]
pub mod spdy;
