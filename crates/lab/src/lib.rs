//! spdylab's experiments: probes of a Site over protocols on a testbed with the
//! built-in server, their statistics, and HAR output.

pub mod campaign;
pub mod compare;
pub mod crosscheck;
pub mod experiment;
pub mod har;
pub mod load;
pub mod presets;
pub mod stats;
pub mod testbed_server;
pub mod trial;
