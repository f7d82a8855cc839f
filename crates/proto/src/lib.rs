//! Wire codecs spdylab owns, sans-I/O (bytes in, events out; frames in, bytes
//! out; no sockets, no clocks): SPDY/3.1 framing with its header compression,
//! SPDY/3.1 flow-control windows, and the names of the protocols.

pub mod flow;
mod protocol;
pub mod spdy3;

pub use protocol::Protocol;
