//! Progress for long work: a bar with ETA on a terminal, plain lines otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct TimedProgress {
    bar: Option<ProgressBar>,
    what: &'static str,
    start: Instant,
    ticker: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
}

impl TimedProgress {
    /// A bar for work expected to take about `estimate`.
    pub fn new(what: &'static str, estimate: Duration) -> TimedProgress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(estimate.as_millis().max(1) as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix} [{elapsed_precise}] {wide_bar} ETA {eta} {msg}",
                )
                .expect("a valid template"),
            );
            bar.set_prefix(what);
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        let start = Instant::now();
        // Time moves the bar, so that it advances while a phase runs.
        let ticker = bar.clone().map(|bar| {
            let done = Arc::new(AtomicBool::new(false));
            let flag = done.clone();
            let handle = std::thread::spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    let pos = start.elapsed().as_millis() as u64;
                    let len = bar.length().unwrap_or(pos + 1);
                    bar.set_position(pos.min(len.saturating_sub(1)));
                    std::thread::sleep(Duration::from_millis(200));
                }
            });
            (done, handle)
        });
        TimedProgress {
            bar,
            what,
            start,
            ticker,
        }
    }

    /// A new phase begins.
    pub fn phase(&mut self, name: &str) {
        let elapsed = self.start.elapsed();
        match &self.bar {
            Some(bar) => {
                bar.set_position(elapsed.as_millis() as u64);
                bar.set_message(name.to_string());
            }
            None => eprintln!("{}: [{:>6.1}s] {name}", self.what, elapsed.as_secs_f64()),
        }
    }

    pub fn finish(mut self) {
        if let Some((done, handle)) = self.ticker.take() {
            done.store(true, Ordering::Relaxed);
            let _ = handle.join();
        }
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        } else {
            eprintln!(
                "{}: [{:>6.1}s] done",
                self.what,
                self.start.elapsed().as_secs_f64()
            );
        }
    }
}

/// A bar counting finished items, with ETA; one plain line per item otherwise.
/// Clones share the one bar.
#[derive(Clone)]
pub struct CountProgress {
    bar: Option<ProgressBar>,
    what: &'static str,
}

impl CountProgress {
    pub fn new(what: &'static str, total: usize) -> CountProgress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} ETA {eta} {msg}",
                )
                .expect("a valid template"),
            );
            bar.set_prefix(what);
            bar
        });
        CountProgress { bar, what }
    }

    /// Item `done` of `total` finished; `line` says what it was.
    pub fn item(&self, done: usize, total: usize, line: &str) {
        match &self.bar {
            Some(bar) => {
                bar.set_position(done as u64);
                bar.set_message(line.to_string());
            }
            None => eprintln!("{}: [{done}/{total}] {line}", self.what),
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
