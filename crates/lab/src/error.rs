//! lab's one error: bad input (the message names the flag, file, line or
//! key), a refusal, a failure to set up or run, a stop by signal. Each module
//! with an error of its own says next to it which of these each variant is
//! (its `From`); the exit code each means is the CLI's (`spdylab::failure`).

use crate::trial::Refusal;
use std::fmt;
use std::io;

/// Why a lab function did not finish as asked.
#[derive(Debug)]
pub enum Error {
    /// Bad input: the message names the flag, file, line or key.
    Usage(String),
    /// The server or the client cannot run the Trial exactly as asked.
    Refused(Refusal),
    /// Setting up or running the testbed, server, peer or client failed.
    Setup(Box<dyn std::error::Error + Send + Sync>),
    /// Stopped by SIGINT or SIGTERM: what finished before was kept.
    Interrupted,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Usage(m) => f.write_str(m),
            Error::Refused(r) => r.fmt(f),
            Error::Setup(e) => e.fmt(f),
            Error::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Setup(Box::new(e))
    }
}

impl From<Refusal> for Error {
    fn from(r: Refusal) -> Error {
        Error::Refused(r)
    }
}

/// A verdict's input that is not what it must be (a baseline, a budget
/// file, `--alpha`): the user's to fix.
impl From<verdict::Error> for Error {
    fn from(e: verdict::Error) -> Error {
        Error::Usage(e.0)
    }
}
