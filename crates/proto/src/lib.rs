//! Wire codecs spdylab owns, sans-I/O (bytes in, events out; frames in, bytes
//! out; no sockets, no clocks): SPDY/3.1 framing with its header compression,
//! and SPDY/3.1 flow-control windows.

pub mod flow;
pub mod spdy3;
