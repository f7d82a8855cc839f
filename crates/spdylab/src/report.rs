//! `spdylab report`: summary.csv and a self-contained report.html from a campaign directory.

use crate::Failure;
use clap::Args;
use std::io::ErrorKind;
use std::path::PathBuf;

/// Write DIR/summary.csv and DIR/report.html (inline SVG, no network) from a campaign or a load test
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab report results/fig2
  spdylab report results/fig2 --waterfall 'site=youtube rtt=490ms ... protocol=h2 rep=3'

summary.csv has one row per point and protocol: site, point, protocol, n, failed,
plt_mean_ms, plt_median_ms, plt_ci_lo_ms, plt_ci_hi_ms, tow_mean_ms, tow_median_ms,
gain_pct, gain_ci_lo, gain_ci_hi, tow_gain_pct, connect_ms, ssl_ms, send_ms, wait_ms,
receive_ms, connections, bytes_down, metric, plt_gain_pct, tow_gain_ci_lo,
tow_gain_ci_hi, metric_mean_ms, metric_median_ms, metric_ci_lo_ms, metric_ci_hi_ms,
ttfb_mean_ms, fcp_mean_ms, lcp_mean_ms, si_mean_ms (see docs/experiments.md). gain_pct is the experiment's headline
metric's gain (metric = \"plt\", \"tow\", \"ttfb\", \"fcp\", \"lcp\" or \"si\";
default plt).")]
pub struct ReportArgs {
    /// The campaign directory (from `spdylab sweep` or `spdylab paper`), or a load test's (`spdylab load --out`)
    pub dir: PathBuf,
    /// Draw the waterfall of this Trial (its "trial" key in probes.jsonl)
    #[arg(long, value_name = "TRIAL")]
    pub waterfall: Option<String>,
    /// A load test's response-time objective (drawn, and where it is first broken)
    #[arg(long, value_parser = link::units::parse_duration, default_value = "3s", value_name = "DURATION")]
    pub sla: std::time::Duration,
}

pub fn run(args: ReportArgs) -> Result<i32, Failure> {
    // A load test's directory (`spdylab load`): its own report.
    if args.dir.join(report::loadtest::LOAD_FILE).exists()
        && !args.dir.join(campaign::EXPERIMENT_FILE).exists()
    {
        let (html, headline) = report::loadtest::write_load(&args.dir, args.sla)
            .map_err(|e| Failure::Usage(e.to_string()))?;
        for line in &headline {
            println!("{line}");
        }
        eprintln!("report: load test → {}", html.display());
        return Ok(0);
    }
    write(&args.dir, args.waterfall)
}

/// Writes the report and prints its headline; shared with `paper`.
pub fn write(dir: &std::path::Path, waterfall: Option<String>) -> Result<i32, Failure> {
    let w = report::write(dir, &report::Options { waterfall }).map_err(|e| match e.kind() {
        ErrorKind::InvalidData | ErrorKind::NotFound => Failure::Usage(e.to_string()),
        _ => Failure::Setup(Box::new(e)),
    })?;
    for line in &w.headline {
        println!("{line}");
    }
    eprintln!("{}", w.line());
    Ok(0)
}
