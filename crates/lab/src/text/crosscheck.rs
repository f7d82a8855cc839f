//! The text of `spdylab crosscheck`.
