//! calibration.json: the quick calibration a campaign records of each distinct
//! link it runs (spec against measured), read by the report's table.

use crate::files::CALIBRATION_FILE;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::Path;

/// One calibration in calibration.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationEntry {
    /// The link part of the point (`lab::campaign::link_key`).
    pub link: String,
    pub rtt_ms: f64,
    pub rtt_measured_ms: f64,
    pub rtt_expected_ms: f64,
    pub down_bps: Option<f64>,
    pub down_measured_bps: f64,
    pub up_bps: Option<f64>,
    pub up_measured_bps: f64,
    /// The ± of each measured goodput, bit/s (absent in older campaigns).
    #[serde(default)]
    pub down_error_bps: Option<f64>,
    #[serde(default)]
    pub up_error_bps: Option<f64>,
    pub loss: f64,
    pub loss_measured: f64,
    pub emulator_cpu_pct: f64,
    /// Seconds since the Unix epoch.
    pub when: f64,
}

/// Reads DIR/calibration.json (none: no entries).
pub fn read_calibration(dir: &Path) -> io::Result<Vec<CalibrationEntry>> {
    let path = dir.join(CALIBRATION_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    }
}

/// The text of calibration.json for `entries`.
pub fn calibration_json(entries: &[CalibrationEntry]) -> String {
    serde_json::to_string_pretty(entries).expect("calibration entries serialize")
}
