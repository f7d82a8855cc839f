//! The text of `spdylab loadtest`.
