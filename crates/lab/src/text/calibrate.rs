//! The text of `spdylab calibrate`.
