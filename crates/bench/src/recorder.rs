//! What is counted and how: the counters every connection shares, each
//! connection's own tally (`Recorder`: the checks a response must pass, and
//! its latency into its thread's histogram), and the histogram's percentile
//! output.

use crate::clock::Window;
use crate::BenchSpec;
use hdrhistogram::Histogram;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Counters shared by every connection, sampled each second.
pub(crate) struct Shared {
    pub(crate) requests: AtomicU64,
    pub(crate) bytes: AtomicU64,
    pub(crate) errors: AtomicU64,
    pub(crate) reconnects: AtomicU64,
    pub(crate) error_kinds: Mutex<BTreeMap<String, u64>>,
    pub(crate) histograms: Mutex<Vec<Histogram<u64>>>,
    pub(crate) stop: AtomicBool,
    /// Per path: the body length a correct response has (UNKNOWN until the first one).
    expected: Vec<AtomicU64>,
}

const UNKNOWN: u64 = u64::MAX;

impl Shared {
    pub(crate) fn new(spec: &BenchSpec) -> Shared {
        Shared {
            requests: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            reconnects: AtomicU64::new(0),
            error_kinds: Mutex::new(BTreeMap::new()),
            histograms: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            expected: spec
                .paths
                .iter()
                .map(|p| AtomicU64::new(p.expect_len.unwrap_or(UNKNOWN)))
                .collect(),
        }
    }

    pub(crate) fn error(&self, kind: &str, measuring: bool) {
        if measuring {
            self.errors.fetch_add(1, Ordering::Relaxed);
            *self
                .error_kinds
                .lock()
                .unwrap()
                .entry(kind.to_string())
                .or_default() += 1;
        }
    }
}

pub(crate) fn new_histogram() -> Histogram<u64> {
    // 1 µs to 1 hour, 3 significant digits.
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds")
}

thread_local! {
    /// The generator thread's latency histogram (about 190 KB), shared by
    /// its connections: one per connection was most of the memory at
    /// `-c 1000`. Its connections are tasks of the thread's one
    /// current-thread runtime, which never moves them to another thread.
    static LATENCY: RefCell<Option<Histogram<u64>>> = const { RefCell::new(None) };
}

/// This thread's latency histogram so far, taken (empty if nothing was recorded).
pub(crate) fn take_thread_latency() -> Histogram<u64> {
    LATENCY
        .with_borrow_mut(Option::take)
        .unwrap_or_else(new_histogram)
}

/// A task's own tally, flushed into the shared counters now and then so that
/// connections do not contend on every response; latencies go into its
/// thread's histogram (`LATENCY`).
pub(crate) struct Recorder {
    shared: Arc<Shared>,
    window: Window,
    expect_status: u16,
    requests: u64,
    bytes: u64,
}

impl Recorder {
    pub(crate) fn new(shared: Arc<Shared>, spec: &BenchSpec, window: Window) -> Recorder {
        Recorder {
            shared,
            window,
            expect_status: spec.expect_status,
            requests: 0,
            bytes: 0,
        }
    }

    /// Checks a response and counts it if it started inside the measured window.
    pub(crate) fn finish(
        &mut self,
        path: usize,
        since: Instant,
        now: Instant,
        status: u16,
        body: u64,
    ) -> Result<(), &'static str> {
        let counted = self.window.counts(since, now);
        if status != self.expect_status {
            self.shared.error("status", counted);
            return Ok(());
        }
        // The first correct response of a path sets its length, unless the spec gave it.
        let slot = &self.shared.expected[path];
        let mut expected = slot.load(Ordering::Relaxed);
        if expected == UNKNOWN {
            expected =
                match slot.compare_exchange(UNKNOWN, body, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => body,
                    Err(known) => known,
                };
        }
        if expected != body {
            // A wrong length means this connection's framing cannot be trusted.
            self.shared.error("length", counted);
            return Err("length-reset");
        }
        if counted {
            self.requests += 1;
            self.bytes += body;
            let micros = (now - since).as_micros().max(1) as u64;
            LATENCY.with_borrow_mut(|h| {
                let _ = h.get_or_insert_with(new_histogram).record(micros);
            });
        }
        Ok(())
    }

    /// Flushes every 64 requests or 100 ms (`flushed`: when it last did),
    /// not on every read: the shared counters are read once a second.
    pub(crate) fn flush_now_and_then(&mut self, now: Instant, flushed: &mut Instant) {
        if self.requests >= 64 || now - *flushed >= Duration::from_millis(100) {
            self.flush();
            *flushed = now;
        }
    }

    pub(crate) fn flush(&mut self) {
        if self.requests > 0 {
            self.shared
                .requests
                .fetch_add(self.requests, Ordering::Relaxed);
            self.shared.bytes.fetch_add(self.bytes, Ordering::Relaxed);
            self.requests = 0;
            self.bytes = 0;
        }
    }
}

/// The latency distribution in HdrHistogram's percentile format (values in ms),
/// which its plotter (hdrhistogram.github.io/HdrHistogram/plotFiles.html) reads.
pub fn percentile_distribution(h: &Histogram<u64>) -> String {
    use std::fmt::Write;
    let mut out = String::from("       Value     Percentile TotalCount 1/(1-Percentile)\n\n");
    let mut total = 0u64;
    for v in h.iter_quantiles(5) {
        total += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let inv = if q < 1.0 {
            format!("{:14.2}", 1.0 / (1.0 - q))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "{:12.3} {:14.12} {:10} {}",
            v.value_iterated_to() as f64 / 1e3,
            q,
            total,
            inv
        );
    }
    let _ = writeln!(
        out,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]\n#[Max     = {:12.3}, Total count    = {:12}]\n#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.mean() / 1e3,
        h.stdev() / 1e3,
        h.max() as f64 / 1e3,
        h.len(),
        h.buckets(),
        h.distinct_values()
    );
    out
}
