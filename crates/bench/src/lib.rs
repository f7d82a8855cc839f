//! `spdylab bench`'s engine: a throughput generator that measures every
//! protocol the same way. Closed loop by default (as wrk and h2load); with a
//! rate, open loop with coordinated-omission correction (as wrk2: latency is
//! measured from when a request *should* have been sent). HTTP/1.1 with a
//! pipelining depth, HTTP/2 and SPDY with concurrent streams, either over
//! TLS, and HTTP/3 over QUIC (quinn + h3) with concurrent streams. Every
//! response is checked (status, and body length against the expected one; the
//! i-th pipelined response is matched to the i-th request), so that a broken
//! server cannot look fast. A close the server announces (HTTP/1.1
//! `Connection: close`, an HTTP/2 or SPDY GOAWAY without error) is a
//! reconnect, not an error, as wrk takes it; requests it leaves unanswered
//! (pipelined behind the close, or streams above the GOAWAY's last one) are
//! errors. The framing and the sessions are proto's (`h1`, `spdy3`, and `h2`:
//! a lean HTTP/2 client connection, hand-written for CPU per request). In
//! closed loop, HTTP/1.1 on plain TCP wakes once per pipeline (or whole
//! answer) through the socket's receive low-water mark (`ReadLowWater`), and
//! a multiplexed session refills its free streams a quarter at a time
//! (`refill_due`).
//!
//! This file holds what callers use; the work is done in one module a job:
//! - `engine`: the run (threads, runtimes, the per-second sampler) and each
//!   connection's life, reopened after an error or a close;
//! - `clock`: the run's window and each connection's clock (closed loop, or
//!   the open-loop schedule and the requests due but not sent yet);
//! - `dial`: TCP and TLS;
//! - `h1`, `h2`, `spdy3`, `quic` (h3): one loop a protocol, driving a
//!   connection's requests;
//! - `recorder`: the counters, the latency histogram and the response checks;
//! - `buffer`: the read buffer and the socket's receive low-water mark.

mod buffer;
mod clock;
mod dial;
mod engine;
mod h1;
mod h2;
mod quic;
mod recorder;
mod spdy3;

pub use engine::run;
pub use recorder::percentile_distribution;

use hdrhistogram::Histogram;
use proto::Protocol;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// One path to request, and the body length a correct server sends for it
/// (None: the first response's length, which every later one must match).
#[derive(Debug, Clone)]
pub struct PathSpec {
    pub path: String,
    pub expect_len: Option<u64>,
}

#[derive(Clone)]
pub struct BenchSpec {
    pub addr: SocketAddr,
    /// Host header / :authority, and the TLS server name.
    pub host: String,
    pub tls: Option<Arc<rustls::ClientConfig>>,
    /// HTTP/1.1 (with or without TLS, pipelined by `depth`), h2, h2c or spdy3.
    pub protocol: Protocol,
    pub connections: usize,
    /// HTTP/1.1 requests in flight per connection (1 = no pipelining).
    pub depth: usize,
    /// HTTP/2 streams in flight per connection.
    pub streams: usize,
    pub threads: usize,
    pub duration: Duration,
    pub warmup: Duration,
    /// Requests per second over all connections: open loop. None: closed loop.
    pub rate: Option<f64>,
    pub paths: Vec<PathSpec>,
    pub expect_status: u16,
    /// A request without an answer for this long is an error (and its connection is reopened).
    pub timeout: Duration,
}

/// A second of the measured run.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Second {
    pub t: u64,
    pub requests: u64,
    pub bytes: u64,
    pub errors: u64,
}

pub struct BenchResult {
    pub requests: u64,
    pub bytes: u64,
    pub errors: BTreeMap<String, u64>,
    /// Latency in microseconds of every counted request.
    pub latency: Histogram<u64>,
    pub per_second: Vec<Second>,
    /// The measured window (after the warm-up).
    pub elapsed: Duration,
    /// CPU seconds of this process (user + system) over the whole run.
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
    pub reconnects: u64,
}

impl BenchResult {
    pub fn requests_per_sec(&self) -> f64 {
        self.requests as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    pub fn errors_total(&self) -> u64 {
        self.errors.values().sum()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The tests' spec: to `addr` in `protocol`, one connection on one
    /// thread, one in flight, closed loop, 1 s without warm-up, path `/`
    /// answered with 200, a 5 s timeout.
    pub(crate) fn spec(addr: SocketAddr, protocol: Protocol) -> BenchSpec {
        BenchSpec {
            addr,
            host: "localhost".into(),
            tls: None,
            protocol,
            connections: 1,
            depth: 1,
            streams: 1,
            threads: 1,
            duration: Duration::from_secs(1),
            warmup: Duration::ZERO,
            rate: None,
            paths: vec![PathSpec {
                path: "/".into(),
                expect_len: None,
            }],
            expect_status: 200,
            timeout: Duration::from_secs(5),
        }
    }
}
