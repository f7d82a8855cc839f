//! The one error of lab's commands and its one mapping to exit codes. Each
//! module keeps its own error type (its variants say what went wrong where);
//! this file is the one place that says which of them are the user's input
//! (exit 2), a refusal (exit 2), a failure to set up or run (exit 1) or a stop
//! by signal (130), so the CLI needs no conversion of its own per command.

use crate::trial::Refusal;
use std::fmt;
use std::io;

/// Why a command did not finish as asked.
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

/// The exit status of a run stopped by SIGINT (128 + 2), as shells report it.
pub const EXIT_INTERRUPTED: u8 = 130;

impl Error {
    /// The process's exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) | Error::Refused(_) => 2,
            Error::Setup(_) => 1,
            Error::Interrupted => EXIT_INTERRUPTED,
        }
    }
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

impl From<crate::campaign::SweepError> for Error {
    fn from(e: crate::campaign::SweepError) -> Error {
        use crate::campaign::SweepError;
        match e {
            SweepError::Usage(m) => Error::Usage(m),
            SweepError::Io(e) => Error::Setup(Box::new(e)),
        }
    }
}

/// Bad input is the user's to fix (exit 2); a name that does not resolve
/// is a failure to run (exit 1).
impl From<crate::survey::SurveyError> for Error {
    fn from(e: crate::survey::SurveyError) -> Error {
        use crate::survey::SurveyError;
        match e {
            SurveyError::Usage(m) => Error::Usage(m),
            e => Error::Setup(Box::new(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_exit_code() {
        assert_eq!(Error::Usage("--rtt: bad".into()).exit_code(), 2);
        let refused = Refusal::Server {
            server: crate::trial::ServerKind::Peer(crate::trial::PeerKind::Nginx),
            why: "no spdy3".into(),
        };
        let e = Error::from(refused);
        assert_eq!(e.exit_code(), 2);
        assert_eq!(e.to_string(), "--server nginx: no spdy3");
        assert_eq!(Error::from(io::Error::other("x")).exit_code(), 1);
        assert_eq!(Error::Interrupted.exit_code(), 130);
        let e = Error::from(crate::bench::BenchError::Usage("--rate: 0".into()));
        assert!(matches!(e, Error::Usage(_)));
        let e = Error::from(crate::campaign::SweepError::Io(io::Error::other("disk")));
        assert_eq!(e.exit_code(), 1);
    }
}
