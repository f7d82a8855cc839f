//! The record of a throughput matrix (seed 003's pipelining and multiplexing
//! experiment, `spdylab paper pipelining`): one row per server, file,
//! protocol and depth, written by lab and drawn by report.

/// One measured configuration of a throughput matrix.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchRow {
    pub server: String,
    pub file: String,
    pub protocol: String,
    /// Pipelining depth (h1) or streams (h2).
    pub depth: usize,
    pub requests_per_sec: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub p999_ms: f64,
    pub errors: u64,
    pub generator_cpu_s: f64,
    pub server_cpu_s: f64,
    /// Why it was not measured (the server cannot do it), if so.
    pub skipped: Option<String>,
}
