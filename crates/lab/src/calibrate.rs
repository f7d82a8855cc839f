//! `calibrate`: measures a testbed against its spec (RTT, goodput each way,
//! loss) with netns's calibration, which uses the probes' own code paths.
//! This module is the CLI's door to it: a typed request, a typed result, and
//! a typed error that says whether the input or the machine was at fault.

use crate::trial::TestbedSpec;
use std::fmt;
use std::io;
use std::time::Duration;

pub use netns::calibrate::{
    Calibration, LossResult, Plan, RateResult, RttResult, Transport, ECHO_WIRE_BYTES, RTT_TOLERANCE,
};

/// A goodput transport by its name (`--transport tcp|udp`).
pub fn transport(name: &str) -> Option<Transport> {
    match name {
        "tcp" => Some(Transport::Tcp),
        "udp" => Some(Transport::Udp),
        _ => None,
    }
}

/// The shortest measured window of a bulk transfer that means anything.
pub const MIN_BULK_TIME: Duration = Duration::from_millis(100);

/// One calibration, as asked (checked when made).
#[derive(Debug, Clone)]
pub struct CalibrateRequest {
    testbed: TestbedSpec,
    plan: Plan,
}

impl CalibrateRequest {
    /// A calibration of `testbed` by `plan`, or why the plan cannot be run.
    pub fn new(testbed: TestbedSpec, plan: Plan) -> Result<Self, CalibrateError> {
        if plan.bulk_time < MIN_BULK_TIME {
            return Err(CalibrateError::BulkTimeTooShort);
        }
        Ok(CalibrateRequest { testbed, plan })
    }

    pub fn testbed(&self) -> &TestbedSpec {
        &self.testbed
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// How long the calibration is expected to take (for a progress bar).
    pub fn estimate(&self) -> Duration {
        self.plan.estimate(&self.testbed)
    }
}

/// Why a calibration did not run or did not finish.
#[derive(Debug)]
pub enum CalibrateError {
    /// The plan's bulk window is below [`MIN_BULK_TIME`] (bad input).
    BulkTimeTooShort,
    /// Setting up a testbed or measuring on it.
    Setup(io::Error),
}

impl fmt::Display for CalibrateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CalibrateError::BulkTimeTooShort => write!(
                f,
                "--bulk-time must be at least {}",
                link::units::format_duration(MIN_BULK_TIME)
            ),
            CalibrateError::Setup(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for CalibrateError {}

/// Measures; `progress` hears each phase's name.
pub fn run(
    request: &CalibrateRequest,
    progress: &mut dyn FnMut(&str),
) -> Result<Calibration, CalibrateError> {
    netns::calibrate::run(&request.testbed, &request.plan, progress).map_err(CalibrateError::Setup)
}

/// Which of these errors are bad input, a refusal or a failure to run (`crate::Error`).
impl From<CalibrateError> for crate::Error {
    fn from(e: CalibrateError) -> crate::Error {
        match e {
            CalibrateError::Setup(e) => crate::Error::Setup(Box::new(e)),
            e => crate::Error::Usage(e.to_string()),
        }
    }
}
