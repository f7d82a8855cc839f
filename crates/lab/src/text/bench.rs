//! The text of `spdylab bench`.
