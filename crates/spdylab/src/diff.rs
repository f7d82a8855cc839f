//! `spdylab diff A B`, and `compare --baseline FILE --budget FILE`: did a run
//! move against a baseline, and does it keep its budgets (lab::diff,
//! lab::budget).

use crate::Failure;
use clap::Args;
use results::ProbeRecord;
use std::path::PathBuf;

/// Did B get faster or slower than A? Per point and protocol: shift, p-value, verdict; budgets
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab compare --site youtube --protocols https,h2 --reps 10 --out before.json
  spdylab compare --site youtube --protocols https,h2 --reps 10 --out after.json
  spdylab diff before.json after.json
  spdylab diff results/main results/branch --budget budgets.toml --junit budgets.xml

Shift: Hodges-Lehmann (median pairwise difference B - A) with its 95 % interval; p: two-sided
Mann-Whitney U; verdict faster/slower when p < --alpha. Budgets (docs/decisions.md) are checked
on B; the exit status is 1 when one fails.")]
pub struct DiffArgs {
    /// The baseline: what `compare --out FILE` wrote, or a campaign directory
    pub a: PathBuf,
    /// The run to judge, the same kinds
    pub b: PathBuf,
    #[command(flatten)]
    pub decide: Decide,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

/// How a run is judged: against budgets, at a significance level.
#[derive(Debug, Args)]
pub struct Decide {
    /// A budget file (TOML, docs/decisions.md) to check on the run; exit status 1 when one fails
    #[arg(long, value_name = "FILE")]
    pub budget: Option<PathBuf>,
    /// Write the budgets' outcomes as JUnit XML
    #[arg(long, value_name = "FILE", requires = "budget")]
    pub junit: Option<PathBuf>,
    /// The significance level of the verdicts against a baseline
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
}

impl Decide {
    /// The budgets, read before any run so that a bad file costs nothing.
    pub fn budgets(&self) -> Result<Option<Vec<lab::budget::Budget>>, Failure> {
        self.budget.as_deref().map(lab::budget::read).transpose()
    }

    /// `probes` judged against `baseline` (if any) and `budgets`: the JSON
    /// of it, its lines, and the exit status (1 when a budget fails).
    pub fn judge(
        &self,
        baseline: Option<&[ProbeRecord]>,
        probes: &[ProbeRecord],
        budgets: Option<&[lab::budget::Budget]>,
    ) -> Result<(serde_json::Value, Vec<String>, i32), Failure> {
        let shifts = match baseline {
            Some(a) => lab::diff::diff(a, probes, self.alpha).map_err(Failure::Usage)?,
            None => Vec::new(),
        };
        let outcomes = budgets.map(|b| lab::budget::check(b, probes));
        if let (Some(path), Some(o)) = (&self.junit, &outcomes) {
            std::fs::write(path, lab::budget::junit(o))
                .map_err(|e| Failure::Usage(format!("--junit {}: {e}", path.display())))?;
        }
        let failed = outcomes.as_ref().is_some_and(|o| o.iter().any(|o| !o.pass));
        Ok((
            lab::diff::document(self.alpha, &shifts, outcomes.as_deref()),
            lab::text::diff::lines(self.alpha, &shifts, outcomes.as_deref(), baseline.is_some()),
            i32::from(failed),
        ))
    }
}

pub fn run(args: DiffArgs) -> Result<i32, Failure> {
    let budgets = args.decide.budgets()?;
    lab::diff::check_alpha(args.decide.alpha)?;
    let (a, _) = lab::stored::read(&args.a)?;
    let (b, _) = lab::stored::read(&args.b)?;
    let (doc, lines, status) = args
        .decide
        .judge(Some(&a), &b, budgets.as_deref())
        .map_err(|e| match e {
            Failure::Usage(m) => Failure::Usage(format!(
                "{} against {}: {m}",
                args.b.display(),
                args.a.display()
            )),
            e => e,
        })?;
    match args.json {
        true => println!("{doc}"),
        false => println!("{}", lines.join("\n")),
    }
    Ok(status)
}
