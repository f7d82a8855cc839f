//! A run judged (`spdylab diff A B`, `compare --baseline --budget`): its
//! shifts against a baseline (`diff`) and its budgets' outcomes (`budget`),
//! the JUnit file written, the exit status and the JSON document. Here
//! rather than in either, so that `budget` builds on `diff` and neither on
//! the other.

use crate::budget::{self, Budget, Outcome};
use crate::diff::{check_alpha, diff_with, Pairing, Shift};
use crate::settings::{refusal, Settings};
use crate::Error;
use results::ProbeRecord;
use std::path::{Path, PathBuf};

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

impl Judgement {
    /// Its lines for a person (`text::diff`).
    pub fn lines(&self) -> Vec<String> {
        crate::text::diff::lines(
            self.alpha,
            &self.shifts,
            self.outcomes.as_deref(),
            self.with_baseline,
        )
    }
}

/// How a run is judged, as `--budget`, `--junit`, `--alpha`, `--paired` and
/// `--force` ask: against budgets, at a significance level.
pub struct Decision {
    pub budget: Option<PathBuf>,
    pub junit: Option<PathBuf>,
    pub alpha: f64,
    pub paired: bool,
    pub force: bool,
}

impl Decision {
    /// The budgets, read before any run so that a bad file costs nothing.
    pub fn budgets(&self) -> Result<Option<Vec<Budget>>, Error> {
        check_alpha(self.alpha)?;
        self.budget.as_deref().map(budget::read).transpose()
    }

    /// Where the baseline A and the run B differ: the lines above the table
    /// and their JSON; Err when their client or site differ and `--force`
    /// is not given.
    pub fn settings(&self, a: &Settings, b: &Settings) -> Result<SettingsDiff, Error> {
        let differences = a.differences(b);
        if let (Some(why), false) = (refusal(&differences), self.force) {
            return Err(Error(why));
        }
        let unrecorded = a.unrecorded(b);
        let json = serde_json::json!({
            "differ": differences.iter().map(|d| serde_json::json!({"name": d.name, "a": d.a, "b": d.b})).collect::<Vec<_>>(),
            "unrecorded": unrecorded,
        });
        Ok(SettingsDiff {
            lines: crate::text::diff::settings_lines(&differences, &unrecorded),
            json,
        })
    }

    /// `probes` judged against `baseline` (if any) and `budgets`.
    pub fn judge(
        &self,
        baseline: Option<&[ProbeRecord]>,
        probes: &[ProbeRecord],
        budgets: Option<&[Budget]>,
    ) -> Result<Judgement, Error> {
        let pairing = match self.paired {
            true => Pairing::ByRepetition,
            false => Pairing::Unpaired,
        };
        Judgement::of(
            self.alpha,
            pairing,
            baseline,
            probes,
            budgets,
            self.junit.as_deref(),
        )
    }
}

/// Where A and B differ, as printed above the table and in the JSON's `settings`.
pub struct SettingsDiff {
    pub lines: Vec<String>,
    pub json: serde_json::Value,
}

/// `spdylab diff A B`: B judged against A, and where their settings differ.
pub struct Diffed {
    pub judgement: Judgement,
    pub settings: SettingsDiff,
}

impl Diffed {
    /// Two stored runs (`stored::read`) read, their settings compared (a
    /// refusal unless `--force`), then B judged against A.
    pub fn of(a: &Path, b: &Path, decision: &Decision) -> Result<Diffed, Error> {
        let budgets = decision.budgets()?;
        let (a_probes, _) = crate::stored::read(a)?;
        let (b_probes, _) = crate::stored::read(b)?;
        let settings =
            decision.settings(&crate::stored::settings(a)?, &crate::stored::settings(b)?)?;
        let judgement = decision
            .judge(Some(&a_probes), &b_probes, budgets.as_deref())
            .map_err(|Error(m)| Error(format!("{} against {}: {m}", b.display(), a.display())))?;
        Ok(Diffed {
            judgement,
            settings,
        })
    }

    /// `spdylab diff --json`: the judgement's document with its `settings`.
    pub fn document(&self) -> serde_json::Value {
        let mut doc = self.judgement.document();
        doc["settings"] = self.settings.json.clone();
        doc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(force: bool, alpha: f64) -> Decision {
        Decision {
            budget: None,
            junit: None,
            alpha,
            paired: false,
            force,
        }
    }

    #[test]
    fn another_client_is_refused_unless_forced_and_a_knob_is_said() {
        let a = Settings::of_compare("model", "builtin", "youtube", "150 ms", &[]);
        let b = Settings::of_compare("chromium", "builtin", "youtube", "150 ms", &[]);
        let e = decision(false, 0.05).settings(&a, &b).err().unwrap();
        assert!(e.0.contains("client: A model, B chromium"), "{e}");
        let forced = decision(true, 0.05).settings(&a, &b).unwrap();
        assert_eq!(forced.json["differ"][0]["name"], "client");
        assert!(!forced.lines.is_empty());
    }

    #[test]
    fn a_bad_alpha_costs_no_budget_read_and_no_budget_fails_nothing() {
        assert!(decision(false, 1.5).budgets().is_err());
        assert!(decision(false, 0.05).budgets().unwrap().is_none());
        let j = decision(false, 0.05).judge(None, &[], None).unwrap();
        assert_eq!(j.status(), 0);
        assert!(!j.with_baseline);
    }
}
