//! Campaign reports: reads a campaign directory (experiment, probes.jsonl,
//! calibration.json, HARs) and writes `summary.csv` (one row per group of
//! Trials and protocol) and `report.html`, self-contained (inline SVG, no
//! network): gain against each swept axis with CI bands and the paper's
//! reference marks, PLT CDFs, heatmaps for two-axis sweeps, HAR phase bars,
//! why each PLT is what it is (its components, the bottleneck, the flights),
//! filmstrips of what each protocol's page showed when and its visual
//! progress, a waterfall and the calibration table.
//!
//! One job per file:
//! - `rows`: the probes grouped by point and protocol (`aggregate`, `Row`)
//!   and the headline computed from the groups;
//! - `csv`: summary.csv (`SUMMARY_COLUMNS`) and the bench's pipelining.csv;
//! - `axes`: the swept axes as drawn (x positions, labels, ticks);
//! - `sections`: report.html of a campaign, one function per section;
//! - `waterfall`: the waterfall section, from the probes' HARs;
//! - `why`: the Why section, from the probes' explanations (issue 34);
//! - `filmstrip`: the filmstrip compare view and visual-progress curves,
//!   from the frames beside Chromium probes' HARs (issue 35);
//! - `html`: the page around every report's body;
//! - `svg`: the plots, hand-written inline SVG;
//! - `loss`: the loss comparison of a sweep over loss;
//! - `loadtest`: the report of a load test; `bench`: of a throughput matrix.

#![forbid(unsafe_code)]

mod axes;
mod bench;
mod csv;
mod filmstrip;
mod html;
pub mod loadtest;
pub mod loss;
mod priorities;
mod rows;
mod sections;
mod svg;
#[cfg(test)]
mod tests;
mod waterfall;
mod why;

use results::experiment;
use results::{latest, read_calibration, read_probes, EXPERIMENT_FILE};
use std::io;
use std::path::{Path, PathBuf};

pub use bench::write_bench;
pub use csv::SUMMARY_COLUMNS;
pub use priorities::{write_priorities, MATRIX_FILE, MATRIX_PAGE};
pub use results::{BenchRow, BENCH_FILE, REPORT_FILE, SUMMARY_FILE};
pub use rows::{aggregate, Row};

pub struct Options {
    /// The Trial (its key, as in probes.jsonl) whose waterfall is drawn; by
    /// default the median probe of each protocol at the first point.
    pub waterfall: Option<String>,
}

/// What `write` produced, for the command's closing lines.
pub struct Written {
    pub csv: PathBuf,
    pub html: PathBuf,
    pub rows: usize,
    pub probes: usize,
    pub failed: usize,
    pub missing: usize,
    pub headline: Vec<String>,
}

impl Written {
    /// `spdylab report`'s closing line: the probes counted and the files written.
    pub fn line(&self) -> String {
        format!(
            "report: {} probes ({} failed, {} not run), {} rows → {} and {}",
            self.probes,
            self.failed,
            self.missing,
            self.rows,
            self.csv.display(),
            self.html.display()
        )
    }
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// Reads DIR and writes DIR/summary.csv and DIR/report.html.
pub fn write(dir: &Path, opts: &Options) -> io::Result<Written> {
    let exp_path = dir.join(EXPERIMENT_FILE);
    let text = std::fs::read_to_string(&exp_path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!(
                "{}: {e} (is this a campaign directory?)",
                exp_path.display()
            ),
        )
    })?;
    let exp = experiment::parse(&exp_path.display().to_string(), &text)
        .map_err(|e| invalid(e.to_string()))?;
    let probes = latest(read_probes(dir, false)?);
    let calibration = read_calibration(dir)?;
    let rows = aggregate(&exp, &probes);

    let csv = dir.join(SUMMARY_FILE);
    std::fs::write(&csv, csv::summary_csv(&exp, &rows))?;
    let headline = rows::headline(&exp, &rows);
    let html = dir.join(REPORT_FILE);
    let expected = exp.trial_count();
    let failed = probes.iter().filter(|p| p.error.is_some()).count();
    let page = sections::render(dir, &exp, &probes, &rows, &calibration, &headline, opts);
    std::fs::write(&html, page)?;
    Ok(Written {
        csv,
        html,
        rows: rows.len(),
        probes: probes.len(),
        failed,
        missing: expected.saturating_sub(probes.len()),
        headline,
    })
}
