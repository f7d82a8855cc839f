//! lab's one error, and which of its modules' errors are bad input (the
//! message names the flag, file, line or key), a refusal, a failure to set
//! up or run, a stop by signal. The exit code each means is the CLI's
//! (`spdylab::failure`).

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

impl From<crate::shell::ShellError> for Error {
    fn from(e: crate::shell::ShellError) -> Error {
        if e.is_usage() {
            Error::Usage(e.to_string())
        } else {
            Error::Setup(Box::new(e))
        }
    }
}

impl From<crate::serve::ServeError> for Error {
    fn from(e: crate::serve::ServeError) -> Error {
        match e {
            crate::serve::ServeError::Setup(e) => Error::Setup(Box::new(e)),
            e => Error::Usage(e.to_string()),
        }
    }
}

impl From<crate::loadtest::LoadtestError> for Error {
    fn from(e: crate::loadtest::LoadtestError) -> Error {
        use crate::loadtest::LoadtestError;
        match e {
            LoadtestError::Usage(m) => Error::Usage(m),
            LoadtestError::Refused(r) => Error::Refused(r),
            // An output directory or file that cannot be written: the user's to fix.
            LoadtestError::Output(..) => Error::Usage(e.to_string()),
            LoadtestError::Setup(e) => Error::Setup(Box::new(e)),
        }
    }
}

impl From<crate::bench::BenchError> for Error {
    fn from(e: crate::bench::BenchError) -> Error {
        use crate::bench::BenchError;
        match e {
            BenchError::Usage(m) => Error::Usage(m),
            BenchError::Setup(e) => Error::Setup(Box::new(e)),
        }
    }
}

impl From<crate::calibrate::CalibrateError> for Error {
    fn from(e: crate::calibrate::CalibrateError) -> Error {
        use crate::calibrate::CalibrateError;
        match e {
            CalibrateError::Setup(e) => Error::Setup(Box::new(e)),
            e => Error::Usage(e.to_string()),
        }
    }
}

impl From<crate::crosscheck::CrosscheckError> for Error {
    fn from(e: crate::crosscheck::CrosscheckError) -> Error {
        use crate::crosscheck::CrosscheckError;
        match e {
            // No Chromium: the user asked for a client that is not installed.
            CrosscheckError::NoBrowser(e) => Error::Usage(e.to_string()),
            CrosscheckError::Refused(r) => Error::Refused(r),
            CrosscheckError::Setup(e) => Error::Setup(Box::new(e)),
        }
    }
}

impl From<crate::sites::ImportError> for Error {
    fn from(e: crate::sites::ImportError) -> Error {
        use crate::sites::ImportError;
        match e {
            ImportError::Input(m) => Error::Usage(m),
            ImportError::Write(m) => Error::Setup(m.into()),
        }
    }
}

impl From<crate::record::RecordError> for Error {
    fn from(e: crate::record::RecordError) -> Error {
        use crate::record::RecordError;
        match e {
            RecordError::Usage(m) => Error::Usage(m),
            RecordError::Failed(m) => Error::Setup(m.into()),
        }
    }
}
