//! spdylab's verdicts on stored results, with no network, no processes and
//! no privileges: did B get faster than A (`diff`, `budget`, `judge`), why
//! one protocol is faster (`explain`'s grouping of stored probes), is the
//! model right (`crosscheck`'s rows, metrics, gains and references; `check`,
//! one compare's gains against Chromium's), what a run was made with
//! (`settings`), and reading runs back (`stored`); `text` is how each reads
//! for a person.

#![forbid(unsafe_code)]

pub mod budget;
pub mod check;
pub mod crosscheck;
pub mod diff;
pub mod explain;
pub mod fidelity;
pub mod judge;
pub mod settings;
pub mod stored;
pub mod text;

use std::fmt;

/// Why a verdict could not be given: the input is not what it must be (the
/// message names the flag, file, line or field). Always the user's to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}
