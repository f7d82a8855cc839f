//! spdylab's experiments: a Trial and its probes of a Site over protocols on
//! a testbed (the built-in server or a real one, the model or Chromium), and
//! the commands made of them: compare, crosscheck's run, priorities, load,
//! bench, record, serve, shell, calibrate, and HAR output. What they store,
//! and its statistics, are the `results` crate's; campaigns are
//! `campaign`'s, verdicts on stored results `verdict`'s.

pub mod bench;
pub mod ca_file;
pub mod calibrate;
pub mod compare;
pub mod crosscheck;
mod error;
pub mod har;
pub mod link_flags;
pub mod loadtest;
pub mod peers;
pub mod priorities;
pub mod priority_matrix;
pub mod probe;
pub use sys::procstat;
pub mod record;
pub mod repeat;
pub mod serve;
pub mod shell;
pub mod sites;
pub mod testbed_server;
pub mod text;
pub mod trial;

pub use error::Error;

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
