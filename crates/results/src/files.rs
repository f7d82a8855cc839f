//! The names of the files a campaign or a load test keeps in its directory:
//! every reader and writer joins these, never a literal.

/// The experiment a campaign runs, as its author wrote it.
pub const EXPERIMENT_FILE: &str = "experiment.toml";
/// One [`crate::ProbeRecord`] a line, appended as each probe ends.
pub const PROBES_FILE: &str = "probes.jsonl";
/// The campaign's [`crate::CalibrationEntry`]s, one per distinct link.
pub const CALIBRATION_FILE: &str = "calibration.json";
/// The directory of a campaign's HARs, one per probe.
pub const HAR_DIR: &str = "har";
/// One [`crate::loadtest::Second`] a line, from `spdylab load`.
pub const LOAD_FILE: &str = "load.jsonl";
/// The report's table (a campaign's groups, or a load test's protocols).
pub const SUMMARY_FILE: &str = "summary.csv";
/// A throughput matrix's rows ([`crate::BenchRow`]), as CSV.
pub const BENCH_FILE: &str = "pipelining.csv";
/// The self-contained HTML report.
pub const REPORT_FILE: &str = "report.html";
