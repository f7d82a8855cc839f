//! `spdylab diff A B`, and `compare --baseline FILE --budget FILE`: did a run
//! move against a baseline, and does it keep its budgets (verdict::diff,
//! verdict::budget).

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
    /// The budgets, read before any run so that a bad file costs nothing.
    pub fn budgets(&self) -> Result<Option<Vec<verdict::budget::Budget>>, Failure> {
        verdict::diff::check_alpha(self.alpha)?;
        Ok(self
            .budget
            .as_deref()
            .map(verdict::budget::read)
            .transpose()?)
    }

    /// Where the baseline A and the run B differ: the lines above the table
    /// and their JSON; Err (exit 2) when their client or site differ and
    /// --force is not given.
    pub fn settings(
        &self,
        a: &verdict::settings::Settings,
        b: &verdict::settings::Settings,
    ) -> Result<SettingsDiff, Failure> {
        let differences = a.differences(b);
        if let (Some(why), false) = (verdict::settings::refusal(&differences), self.force) {
            return Err(Failure::Usage(why));
        }
        let unrecorded = a.unrecorded(b);
        let json = serde_json::json!({
            "differ": differences.iter().map(|d| serde_json::json!({"name": d.name, "a": d.a, "b": d.b})).collect::<Vec<_>>(),
            "unrecorded": unrecorded,
        });
        Ok(SettingsDiff {
            lines: verdict::text::diff::settings_lines(&differences, &unrecorded),
            json,
        })
    }

    /// `probes` judged against `baseline` (if any) and `budgets`.
    pub fn judge(
        &self,
        baseline: Option<&[ProbeRecord]>,
        probes: &[ProbeRecord],
        budgets: Option<&[verdict::budget::Budget]>,
    ) -> Result<verdict::judge::Judgement, Failure> {
        let pairing = match self.paired {
            true => verdict::diff::Pairing::ByRepetition,
            false => verdict::diff::Pairing::Unpaired,
        };
        Ok(verdict::judge::Judgement::of(
            self.alpha,
            pairing,
            baseline,
            probes,
            budgets,
            self.junit.as_deref(),
        )?)
    }
}

/// Where A and B differ, as printed above the table and in the JSON's `settings`.
pub struct SettingsDiff {
    pub lines: Vec<String>,
    pub json: serde_json::Value,
}

/// The lines of a judgement.
pub fn lines(j: &verdict::judge::Judgement) -> Vec<String> {
    verdict::text::diff::lines(j.alpha, &j.shifts, j.outcomes.as_deref(), j.with_baseline)
}

pub fn run(args: DiffArgs) -> Result<i32, Failure> {
    let budgets = args.decide.budgets()?;
    let (a, _) = verdict::stored::read(&args.a)?;
    let (b, _) = verdict::stored::read(&args.b)?;
    let settings = args.decide.settings(
        &verdict::stored::settings(&args.a)?,
        &verdict::stored::settings(&args.b)?,
    )?;
    let j = args
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
        true => {
            let mut doc = j.document();
            doc["settings"] = settings.json;
            println!("{doc}")
        }
        false => println!("{}\n{}", settings.lines.join("\n"), lines(&j).join("\n")),
    }
    Ok(j.status())
}
