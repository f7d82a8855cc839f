//! Campaigns: an experiment's Trials run on N isolated testbeds in parallel,
//! each probe's record appended to `DIR/probes.jsonl` (and fsync'd, its HAR
//! first) the moment it ends, so that Ctrl-C or `kill -9` loses only the
//! probes in flight and a rerun skips every finished Trial. A failed write
//! (a full disk) cuts the file back to its last whole line and stops the
//! sweep. DIR also keeps a copy of the experiment (pinned: it means the same
//! wherever it lies), a fingerprint of each site (`sites.json`), a HAR per
//! probe and `calibration.json`. `merge` joins the directories of
//! slices run apart (`--shard i/n`). What is stored, and the file names, are
//! the `results` crate's: this module runs probes and writes through it.
//!
//! One job per file:
//! - `dir`: the campaign directory — its lock, the pinned experiment,
//!   `sites.json`, and every write to it (whole or not at all; probes.jsonl
//!   appended a fsync'd line at a time);
//! - `schedule`: the work queue — CPU weight of a testbed, longest first,
//!   as many testbeds as their weights fit in the cores, shards;
//! - `sweep`: running the pending Trials of a campaign — or of several in
//!   one pool, longest first across them (`sweep_pooled`, `paper all`) — and
//!   recording each probe in its own campaign's directory as it ends;
//! - `merge`: joining the directories of slices run apart;
//! - `sweep_request`: an experiment file (or several) made a sweep: the
//!   campaign directory opened, the pending Trials run;
//! - `presets`: `spdylab paper`'s figures of the studies as experiments;
//! - `text`: a sweep's progress and summary as a person reads them.
//!
//! A Trial's probe and the testbed it runs on are `lab`'s; what a run was
//! made with (`builds.txt`) is `verdict::settings`'.

mod dir;
mod merge;
pub mod presets;
pub(crate) mod schedule;
mod sweep;
pub mod sweep_request;
pub mod text;

pub use dir::{CampaignDir, SITES_FILE};
pub use merge::merge;
pub use schedule::{cpu_weight, in_shard, max_testbeds, AUTO_JOBS_PER_CORE};
pub use sweep::{link_key, quick_plan, sweep, sweep_pooled, Campaign, Event, SweepOptions};

// The CLI names these as `campaign::…`.
pub use results::{EXPERIMENT_FILE, PROBES_FILE};

use std::io;

/// Why a sweep (or a merge) could not start.
#[derive(Debug)]
pub enum SweepError {
    /// Bad input: a different experiment in DIR, a point that contradicts itself, …
    Usage(String),
    Io(io::Error),
}

impl From<io::Error> for SweepError {
    fn from(e: io::Error) -> Self {
        SweepError::Io(e)
    }
}

impl std::fmt::Display for SweepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SweepError::Usage(m) => f.write_str(m),
            SweepError::Io(e) => write!(f, "{e}"),
        }
    }
}
