//! What spdylab stores and reads back: the names a Trial is made of (server,
//! client; the protocol is `proto::Protocol`), experiment files, the records of
//! a campaign (probes.jsonl, calibration.json) and of a load test (load.jsonl),
//! the file names, the statistics every summary uses, and how a result file is
//! written whole (`durable`).
//! No sockets, no processes: `report` reads results through this crate alone.

#![forbid(unsafe_code)]

pub mod bench;
pub mod calibration;
pub mod durable;
pub mod experiment;
pub mod files;
mod kinds;
pub mod loadtest;
pub mod probe;
pub mod stats;
pub mod summary;

pub use bench::BenchRow;
pub use calibration::{calibration_json, read_calibration, CalibrationEntry};
pub use experiment::Metric;
pub use experiment::{
    campaign_differences, differences, point_key, trial_key, Experiment, ExperimentError, Point,
    ValueError,
};
pub use files::{
    BENCH_FILE, CALIBRATION_FILE, EXPERIMENT_FILE, HAR_DIR, LOAD_FILE, PROBES_FILE, REPORT_FILE,
    SUMMARY_FILE,
};
pub use kinds::{ClientKind, PeerKind, ServerKind, UnknownName, View};
pub use probe::{latest, read_probes, Paint, Phases, ProbeRecord, Reuse};
pub use proto::Protocol;
pub use summary::{summarize_protocols, PartSummary, ProtocolSummary};
