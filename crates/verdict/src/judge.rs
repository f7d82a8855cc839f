//! A run judged (`spdylab diff A B`, `compare --baseline --budget`): its
//! shifts against a baseline (`diff`) and its budgets' outcomes (`budget`),
//! the JUnit file written, the exit status and the JSON document. Here
//! rather than in either, so that `budget` builds on `diff` and neither on
//! the other.

use crate::budget::{self, Budget, Outcome};
use crate::diff::{check_alpha, diff_with, Pairing, Shift};
use crate::Error;
use results::ProbeRecord;

/// A run judged: its shifts against a baseline (none without one) and its
/// budgets' outcomes (None without a budget file).
pub struct Judgement {
    pub alpha: f64,
    pub shifts: Vec<Shift>,
    pub outcomes: Option<Vec<Outcome>>,
    pub with_baseline: bool,
}

impl Judgement {
    /// `probes` against `baseline` (if any) at `alpha`, paired by
    /// repetition as `pairing` allows, and `budgets` checked on them; the
    /// outcomes written as JUnit XML to `junit`.
    pub fn of(
        alpha: f64,
        pairing: Pairing,
        baseline: Option<&[ProbeRecord]>,
        probes: &[ProbeRecord],
        budgets: Option<&[Budget]>,
        junit: Option<&std::path::Path>,
    ) -> Result<Judgement, Error> {
        check_alpha(alpha)?;
        let shifts = match baseline {
            Some(a) => diff_with(a, probes, alpha, pairing).map_err(Error)?,
            None => Vec::new(),
        };
        let outcomes = budgets.map(|b| budget::check(b, probes));
        if let (Some(path), Some(o)) = (junit, &outcomes) {
            results::durable::write_whole(path, budget::junit(o).as_bytes())
                .map_err(|e| Error(format!("--junit {}: {e}", path.display())))?;
        }
        Ok(Judgement {
            alpha,
            shifts,
            outcomes,
            with_baseline: baseline.is_some(),
        })
    }

    /// The exit status it asks for: 1 when a budget failed.
    pub fn status(&self) -> i32 {
        i32::from(
            self.outcomes
                .as_ref()
                .is_some_and(|o| o.iter().any(|o| !o.pass)),
        )
    }

    /// `spdylab diff --json` and compare's `decision`: schema 1.
    pub fn document(&self) -> serde_json::Value {
        serde_json::json!({
            "schema": 1,
            "alpha": self.alpha,
            "shifts": self.shifts,
            "budgets": self.outcomes,
        })
    }
}
