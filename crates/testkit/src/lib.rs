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
//! - `cli`: the arguments the CLI tests give `spdylab` again and again.

pub mod cli;
#[cfg(feature = "lines")]
pub mod lines;
#[cfg(feature = "page")]
pub mod page;
#[cfg(feature = "relay")]
pub mod relay;
