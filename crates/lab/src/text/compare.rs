//! The text of `spdylab compare`.
