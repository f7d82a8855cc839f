//! Progress for long work: a bar with ETA on a terminal, plain lines otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

pub struct TimedProgress {
    bar: Option<ProgressBar>,
    what: &'static str,
    start: Instant,
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
        TimedProgress {
            bar,
            what,
            start: Instant::now(),
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

    /// Keeps the bar moving with time; call from the waiting loop.
    pub fn tick(&self) {
        if let Some(bar) = &self.bar {
            let pos = self.start.elapsed().as_millis() as u64;
            bar.set_position(pos.min(bar.length().unwrap_or(pos).saturating_sub(1)));
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
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
