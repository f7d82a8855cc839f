//! `spdylab diff A B`, and `compare --baseline FILE --budget FILE`: did a run
//! move against a baseline, and does it keep its budgets (verdict::diff,
//! verdict::budget).

use crate::Failure;
use clap::Args;
use std::path::PathBuf;
use verdict::judge::{Decision, Diffed};

/// Did B get faster or slower than A? Per point and protocol: shift, p-value, verdict; budgets
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab compare --site youtube --protocols https,h2 --reps 10 --out before.json
  spdylab compare --site youtube --protocols https,h2 --reps 10 --out after.json
  spdylab diff before.json after.json
  spdylab diff results/main results/branch --budget budgets.toml --junit budgets.xml

p is the two-sided Mann-Whitney U of the two samples and the shift the median pairwise difference
(Hodges-Lehmann, 95 % interval from 4 a side). With --paired, where A and B pair by repetition (the
same repetition numbers, one loaded probe each, per point, protocol and metric), p is the two-sided
Wilcoxon signed-rank test of the differences B - A and the shift the median of their Walsh averages
(interval from 6 pairs); for runs whose repetitions share something by position. The column `test` says which. Verdict faster/slower
when p < --alpha. Budgets (docs/decisions.md) are checked on B; the exit status is 1 when one
fails. Above the table: the settings in which A and B differ (client, server, site, link, knobs,
build); runs of another client or site are refused (exit 2) unless --force.")]
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
    /// Test the differences of repetitions paired by number (Wilcoxon signed-rank) where the runs pair so, instead of independent samples (Mann-Whitney U)
    #[arg(long)]
    pub paired: bool,
    /// Compare runs of different clients or sites all the same (refused otherwise)
    #[arg(long)]
    pub force: bool,
}

impl Decide {
    /// The flags as verdict takes them.
    pub fn decision(&self) -> Decision {
        Decision {
            budget: self.budget.clone(),
            junit: self.junit.clone(),
            alpha: self.alpha,
            paired: self.paired,
            force: self.force,
        }
    }
}

pub fn run(args: DiffArgs) -> Result<i32, Failure> {
    let d = Diffed::of(&args.a, &args.b, &args.decide.decision())?;
    let (settings, judgement) = (&d.settings.lines, || d.judgement.lines());
    let text = || format!("{}\n{}", settings.join("\n"), judgement().join("\n"));
    crate::print_json_or(args.json, || d.document(), text);
    Ok(d.judgement.status())
}
