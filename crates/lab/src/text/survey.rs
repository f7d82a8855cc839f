//! The text of `spdylab survey`.
