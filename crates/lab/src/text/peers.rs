//! The text of `spdylab peers`.
