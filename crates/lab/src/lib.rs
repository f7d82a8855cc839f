//! spdylab's experiments: probes of a Site over protocols on a testbed with the
//! built-in server, their statistics, and HAR output.

pub mod compare;
pub mod har;
pub mod stats;
