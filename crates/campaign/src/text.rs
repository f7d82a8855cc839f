//! The text of `spdylab sweep`, `spdylab merge` and `spdylab paper`: what a
//! campaign's events say (its start, a calibration, each probe's progress
//! line), its closing line, merge's count and the heading of each of the
//! paper's figures.

use crate::presets::Preset;
use crate::sweep_request::Ran;
use crate::{max_testbeds, Event, SweepOptions, PROBES_FILE};
use std::path::Path;

/// What an event of the campaign `name` says: at the start, its Trials (in
/// this slice), those finished before, those to run, on how many testbeds
/// and where; a calibrated link; a finished probe (for the progress bar).
pub fn event_line(name: &str, event: &Event<'_>, opts: &SweepOptions, out: &Path) -> String {
    match event {
        Event::Start {
            total,
            finished,
            pending,
        } => format!(
            "sweep {name}: {total} Trials{}, {finished} finished before, {pending} to run on {} testbed(s) → {}",
            if opts.shard.1 > 1 {
                format!(" in slice {}/{}", opts.shard.0, opts.shard.1)
            } else {
                String::new()
            },
            match opts.jobs {
                Some(n) => n.to_string(),
                None => format!("up to {} (auto)", max_testbeds(None)),
            },
            out.display()
        ),
        Event::Calibrated { link } => format!("sweep: calibrated {link}"),
        Event::Probe { label, probe, .. } => match &probe.error {
            None => format!("{label}: PLT {:.0} ms", probe.plt_ms),
            Some(e) => format!("{label}: failed: {e}"),
        },
    }
}

/// The campaign `name` ended: what ran, how fast, what failed and where the
/// results are.
pub fn end_line(name: &str, ran: &Ran, out: &Path) -> String {
    let (n, seconds) = (ran.ran, ran.seconds);
    format!(
        "sweep {name}: ran {n} probes in {:.0} s ({:.1} per minute), {} failed; results in {}; `spdylab report {}` draws them",
        seconds,
        if seconds > 0.0 {
            n as f64 * 60.0 / seconds
        } else {
            0.0
        },
        ran.failed,
        out.join(PROBES_FILE).display(),
        out.display()
    )
}

/// What `merge` wrote into `out`, and what it skipped.
pub fn merge_line(written: usize, skipped: usize, out: &Path) -> String {
    format!(
        "merge: {written} records into {}, {skipped} duplicates or superseded records skipped",
        out.join(PROBES_FILE).display()
    )
}

/// The heading of one of the paper's figures as its campaign starts.
pub fn paper_line(p: &Preset, quick: bool) -> String {
    format!(
        "paper {}: {}{}",
        p.name,
        p.about,
        if quick { " (quick)" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_campaign_of_no_time_runs_zero_per_minute() {
        let ran = Ran {
            ran: 4,
            failed: 1,
            ..Ran::default()
        };
        let line = end_line("rtt", &ran, Path::new("results/rtt"));
        assert!(
            line.starts_with("sweep rtt: ran 4 probes in 0 s (0.0 per minute), 1 failed; results in results/rtt/probes.jsonl"),
            "{line}"
        );
    }
}
