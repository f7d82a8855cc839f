//! spdylab's experiments: probes of a Site over protocols on a testbed with the
//! built-in server, campaigns, load tests and HAR output. What they store, and
//! its statistics, are the `results` crate's.

pub mod bench;
pub mod budget;
pub mod ca_file;
pub mod calibrate;
pub mod campaign;
pub mod compare;
pub mod crosscheck;
pub mod diff;
pub mod durable;
mod error;
pub mod explain;
pub mod har;
pub mod judge;
pub mod knob_flags;
pub mod link_flags;
pub mod loadtest;
pub mod peers;
pub mod presets;
pub mod priorities;
pub mod priority_matrix;
pub mod probe;
pub mod procstat;
pub mod record;
pub mod repeat;
pub mod serve;
pub mod settings;
pub mod shell;
pub mod sites;
pub mod stored;
pub mod survey;
pub mod sweep_request;
pub mod testbed_server;
pub mod text;
pub mod trial;

pub use error::{Error, EXIT_INTERRUPTED};

// The CLI names experiment parsing as `lab::experiment`; it is `results::experiment`.
pub use results::experiment;

/// What the process must do before any thread exists: without root, enter a
/// user namespace in which it is root (so that it may make network
/// namespaces); then give servers' and browsers' scratch files a private
/// tmpfs that dies with the process (even after `kill -9`), where it can.
pub fn process_setup() -> std::io::Result<()> {
    netns::userns::enter_if_unprivileged()?;
    netns::private_scratch_root();
    Ok(())
}
