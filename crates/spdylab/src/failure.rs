//! Why a command failed, and its one mapping to exit codes. Each crate (and
//! each module of lab) keeps its own error type (its variants say what went
//! wrong where); this file is the one place that says which of them are the
//! user's input (exit 2), a refusal (exit 2), a failure to set up or run
//! (exit 1) or a stop by signal (130): one `From` per error, so no command
//! converts on its own.

use lab::trial::Refusal;
use std::fmt;
use std::io;

/// Why a command did not finish as asked.
#[derive(Debug)]
pub enum Failure {
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

impl Failure {
    /// The process's exit status for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::Usage(_) | Failure::Refused(_) => 2,
            Failure::Setup(_) => 1,
            Failure::Interrupted => EXIT_INTERRUPTED,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Usage(m) => f.write_str(m),
            Failure::Refused(r) => r.fmt(f),
            Failure::Setup(e) => e.fmt(f),
            Failure::Interrupted => f.write_str("interrupted"),
        }
    }
}

impl std::error::Error for Failure {}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Setup(Box::new(e))
    }
}

impl From<lab::Error> for Failure {
    fn from(e: lab::Error) -> Failure {
        match e {
            lab::Error::Usage(m) => Failure::Usage(m),
            lab::Error::Refused(r) => Failure::Refused(r),
            lab::Error::Setup(e) => Failure::Setup(e),
            lab::Error::Interrupted => Failure::Interrupted,
        }
    }
}

impl From<Refusal> for Failure {
    fn from(r: Refusal) -> Failure {
        Failure::Refused(r)
    }
}

// lab's modules' errors reach the process through lab's one error: which
// of them are bad input, a refusal or a failure to run is lab's to say
// (`lab::Error`'s `From`s), what each means to the process is said above.
macro_rules! through_lab_error {
    ($($module_error:ty),*) => {$(
        impl From<$module_error> for Failure {
            fn from(e: $module_error) -> Failure {
                lab::Error::from(e).into()
            }
        }
    )*};
}

through_lab_error!(
    lab::shell::ShellError,
    lab::serve::ServeError,
    lab::loadtest::LoadtestError,
    lab::bench::BenchError,
    lab::calibrate::CalibrateError,
    lab::crosscheck::CrosscheckError,
    lab::sites::ImportError,
    lab::record::RecordError
);

impl From<campaign::SweepError> for Failure {
    fn from(e: campaign::SweepError) -> Failure {
        use campaign::SweepError;
        match e {
            SweepError::Usage(m) => Failure::Usage(m),
            SweepError::Io(e) => Failure::Setup(Box::new(e)),
        }
    }
}

/// A verdict's input that is not what it must be: the user's to fix.
impl From<verdict::Error> for Failure {
    fn from(e: verdict::Error) -> Failure {
        Failure::Usage(e.0)
    }
}

/// Bad input is the user's to fix (exit 2); a name that does not resolve
/// is a failure to run (exit 1).
impl From<survey::SurveyError> for Failure {
    fn from(e: survey::SurveyError) -> Failure {
        use survey::SurveyError;
        match e {
            SurveyError::Usage(m) => Failure::Usage(m),
            e => Failure::Setup(Box::new(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_exit_code() {
        assert_eq!(Failure::Usage("--rtt: bad".into()).exit_code(), 2);
        let refused = Refusal::Server {
            server: lab::trial::ServerKind::Peer(lab::trial::PeerKind::Nginx),
            why: "no spdy3".into(),
        };
        let e = Failure::from(refused);
        assert_eq!(e.exit_code(), 2);
        assert_eq!(e.to_string(), "--server nginx: no spdy3");
        assert_eq!(Failure::from(io::Error::other("x")).exit_code(), 1);
        assert_eq!(Failure::Interrupted.exit_code(), 130);
        let e = Failure::from(lab::bench::BenchError::Usage("--rate: 0".into()));
        assert!(matches!(e, Failure::Usage(_)));
        let e = Failure::from(campaign::SweepError::Io(io::Error::other("disk")));
        assert_eq!(e.exit_code(), 1);
    }
}
