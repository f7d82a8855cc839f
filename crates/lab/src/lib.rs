//! spdylab's experiments: probes of a Site over protocols on a testbed with the
//! built-in server, campaigns, load tests and HAR output. What they store, and
//! its statistics, are the `results` crate's.

pub mod campaign;
pub mod compare;
pub mod crosscheck;
pub mod har;
pub mod load;
pub mod presets;
pub mod testbed_server;
pub mod trial;

// The CLI (and trial.rs) name experiment parsing as `lab::experiment`; it is
// `results::experiment`.
pub use results::experiment;
