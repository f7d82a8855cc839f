//! `spdylab diff A B`: did B move against A, and does it keep its budgets
//! (lab::diff, lab::budget).

use crate::Failure;
use clap::Args;
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
    /// The significance level of the verdicts
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// A budget file (TOML) to check on B
    #[arg(long, value_name = "FILE")]
    pub budget: Option<PathBuf>,
    /// Write the budgets' outcomes as JUnit XML
    #[arg(long, value_name = "FILE", requires = "budget")]
    pub junit: Option<PathBuf>,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: DiffArgs) -> Result<i32, Failure> {
    let budgets = args.budget.as_deref().map(lab::budget::read).transpose()?;
    let (shifts, b) = lab::diff::read_and_diff(&args.a, &args.b, args.alpha)?;
    let outcomes = budgets.map(|budgets| lab::budget::check(&budgets, &b));
    if let (Some(path), Some(o)) = (&args.junit, &outcomes) {
        std::fs::write(path, lab::budget::junit(o))
            .map_err(|e| lab::Error::Usage(format!("--junit {}: {e}", path.display())))?;
    }
    match args.json {
        true => println!(
            "{}",
            lab::diff::document(args.alpha, &shifts, outcomes.as_deref())
        ),
        false => println!(
            "{}",
            lab::text::diff::lines(args.alpha, &shifts, outcomes.as_deref()).join("\n")
        ),
    }
    Ok(i32::from(
        outcomes.is_some_and(|o| o.iter().any(|o| !o.pass)),
    ))
}
