//! The text of `spdylab sites`.
