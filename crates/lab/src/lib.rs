//! spdylab's experiments: probes of a Site over protocols on a testbed with the
//! built-in server, their statistics, and HAR output.

pub mod bench;
pub mod calibrate;
pub mod campaign;
pub mod compare;
pub mod crosscheck;
pub mod experiment;
pub mod har;
pub mod loadtest;
pub mod presets;
pub mod probe;
pub mod procstat;
pub mod serve;
pub mod shell;
pub mod sites;
pub mod stats;
pub mod testbed_server;
pub mod trial;

/// The old name of `loadtest`, for `report` until it reads the records
/// through the `results` crate.
pub use loadtest as load;
