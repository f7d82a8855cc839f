//! When requests go out: the run's window (warm-up, measured, end) and each
//! connection's clock, which says which path its next request asks for and
//! when it may go — closed loop (as soon as a slot is free; a multiplexed
//! session refills a quarter of its streams at a time, `refill_due`) or open
//! loop (on the connection's schedule, each request charged from when it fell
//! due).

use crate::BenchSpec;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The run's clock: when measuring starts and ends.
#[derive(Clone, Copy)]
pub(crate) struct Window {
    pub(crate) start: Instant,
    pub(crate) measure: Instant,
    pub(crate) end: Instant,
}

impl Window {
    /// A request counted from `since` and ended at `now` counts: it started
    /// inside the measured window and ended by its end.
    pub(crate) fn counts(&self, since: Instant, now: Instant) -> bool {
        since >= self.measure && now <= self.end
    }
}

/// The open-loop schedule of one connection: request k is due at
/// start + phase + k × interval, spread so that connections interleave.
struct Schedule {
    next: Instant,
    interval: Duration,
    /// The requests that fell due but have not gone out yet, each with the
    /// instant it fell due (from which its latency counts).
    due: VecDeque<Instant>,
}

impl Schedule {
    fn new(spec: &BenchSpec, conn: usize, start: Instant) -> Option<Schedule> {
        let rate = spec.rate?;
        let per_conn = rate / spec.connections as f64;
        let interval = Duration::from_secs_f64(1.0 / per_conn);
        let phase = interval.mul_f64(conn as f64 / spec.connections as f64);
        Some(Schedule {
            next: start + phase,
            interval,
            due: VecDeque::new(),
        })
    }
}

/// One connection's clock for the whole run. It outlives each opening of the
/// connection, so that the paths go on in turn and, in open loop, requests
/// that fell due while the previous opening had no free slot go out first on
/// the next one, charged from when they fell due (as wrk2 does); a clock that
/// died with the opening dropped them unsent, uncounted, and hid the wait.
pub(crate) struct Clock {
    pub(crate) window: Window,
    /// None: closed loop.
    schedule: Option<Schedule>,
    /// Which path comes next (of `paths`).
    counter: usize,
    paths: usize,
}

impl Clock {
    pub(crate) fn new(spec: &BenchSpec, conn: usize, window: Window) -> Clock {
        Clock {
            window,
            schedule: Schedule::new(spec, conn, window.start),
            counter: conn,
            paths: spec.paths.len(),
        }
    }

    pub(crate) fn open_loop(&self) -> bool {
        self.schedule.is_some()
    }

    /// A loop's turn begins: None once the run is over (its end, or `stop`);
    /// else the time, with the requests that fell due by then taken.
    pub(crate) fn tick(&mut self, stop: &AtomicBool) -> Option<Instant> {
        let now = Instant::now();
        if now >= self.window.end || stop.load(Ordering::Relaxed) {
            return None;
        }
        self.take_due(now);
        Some(now)
    }

    /// Open loop: moves the requests that fell due by `now` from the schedule
    /// into the queue of those due.
    fn take_due(&mut self, now: Instant) {
        if let Some(s) = &mut self.schedule {
            while s.next <= now {
                s.due.push_back(s.next);
                s.next += s.interval;
            }
        }
    }

    /// The next request, if one may go now: its path and the instant its
    /// latency counts from. Closed loop: always, counted from `now`; open
    /// loop: the oldest due one (`tick`), if any.
    pub(crate) fn next(&mut self, now: Instant) -> Option<(usize, Instant)> {
        let since = match &mut self.schedule {
            None => now,
            Some(s) => s.due.pop_front()?,
        };
        let path = self.counter % self.paths;
        self.counter += 1;
        Some((path, since))
    }

    /// A request taken by `next` that did not go out after all (h3: refused
    /// by a GOAWAY before it left). Open loop: it is due again, in its place
    /// by when it fell due, for the next opening; closed loop: forgotten (the
    /// next opening makes its own).
    pub(crate) fn put_back(&mut self, since: Instant) {
        if let Some(s) = &mut self.schedule {
            let at = s.due.partition_point(|&t| t <= since);
            s.due.insert(at, since);
        }
    }

    /// The latest the loop must wake to send: in open loop, with `room` for a
    /// request, when the next one falls due; else the end of the run.
    pub(crate) fn wake(&self, room: bool) -> Instant {
        match &self.schedule {
            Some(s) if room => s.next.min(self.window.end),
            _ => self.window.end,
        }
    }
}

/// Closed loop on a multiplexed session (h2, h2c, spdy3): free streams are
/// refilled a quarter of the limit at a time (at least one), not one by one,
/// as a pipeline is refilled when drained. A generator faster than the
/// server otherwise wakes for every write the server makes and answers each
/// with a write of the few requests that just finished, and the server
/// answers those in as small a write: one response or a few per system call
/// each way. Batches of a quarter keep at least three quarters of the
/// streams in flight, so the server never waits for us, and each of our
/// writes carries enough requests for its answers to come in bigger reads.
/// Against nginx (1 worker, h2c, 32 connections, 100 streams, 8 s runs,
/// 25 Nov 2026): 79 423-87 969 requests per generator CPU-second refilled
/// one by one, 96 881-99 107 a quarter at a time (93 207-93 562 by halves),
/// requests per second unchanged (43-45 k/s). Latency counts from each
/// request's own send, so a request held for its batch is not charged for
/// the wait. Open loop sends each request when it is due, as before.
pub(crate) fn refill_due(in_flight: usize, max_open: usize) -> bool {
    in_flight + (max_open / 4).max(1) <= max_open
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(rate: Option<f64>, connections: usize, paths: usize) -> BenchSpec {
        let paths = (0..paths)
            .map(|i| crate::PathSpec {
                path: format!("/{i}"),
                expect_len: None,
            })
            .collect();
        BenchSpec {
            rate,
            connections,
            paths,
            ..crate::tests::spec(([127, 0, 0, 1], 1).into(), proto::Protocol::Http)
        }
    }

    fn window(start: Instant) -> Window {
        Window {
            start,
            measure: start,
            end: start + Duration::from_secs(1),
        }
    }

    #[test]
    fn closed_loop_sends_at_once_and_takes_the_paths_in_turn_from_its_connection() {
        let start = Instant::now();
        let mut clock = Clock::new(&spec(None, 4, 3), 2, window(start));
        assert!(!clock.open_loop());
        let now = start + Duration::from_millis(5);
        clock.take_due(now);
        let got: Vec<_> = (0..4).map(|_| clock.next(now)).collect();
        assert_eq!(
            got,
            [2, 0, 1, 2].map(|path| Some((path, now))),
            "from now, path = connection + k"
        );
        assert_eq!(clock.wake(true), start + Duration::from_secs(1));
    }

    #[test]
    fn open_loop_sends_what_fell_due_oldest_first_and_wakes_for_the_next() {
        // 100/s over 2 connections: 20 ms apart, the second half a step later.
        let start = Instant::now();
        let ms = |n| start + Duration::from_millis(n);
        let mut clock = Clock::new(&spec(Some(100.0), 2, 1), 1, window(start));
        assert!(clock.open_loop());
        clock.take_due(ms(5));
        assert_eq!(clock.next(ms(5)), None, "nothing due before 10 ms");
        assert_eq!(clock.wake(true), ms(10));
        assert_eq!(clock.wake(false), ms(1000), "no room: no wake to send");
        clock.take_due(ms(55));
        assert_eq!(clock.next(ms(55)), Some((0, ms(10))));
        // What is not sent stays due, however late, until it is.
        clock.take_due(ms(75));
        let rest: Vec<_> = std::iter::from_fn(|| clock.next(ms(75))).collect();
        assert_eq!(rest, [(0, ms(30)), (0, ms(50)), (0, ms(70))]);
        assert_eq!(clock.wake(true), ms(90));
    }

    #[test]
    fn a_request_that_did_not_go_out_is_due_again_in_its_place() {
        let start = Instant::now();
        let ms = |n| start + Duration::from_millis(n);
        let mut clock = Clock::new(&spec(Some(100.0), 1, 2), 0, window(start));
        clock.take_due(ms(35));
        let taken: Vec<_> = std::iter::from_fn(|| clock.next(ms(35))).collect();
        assert_eq!(taken, [(0, ms(0)), (1, ms(10)), (0, ms(20)), (1, ms(30))]);
        // The second and fourth were refused before they left.
        clock.put_back(ms(30));
        clock.put_back(ms(10));
        clock.take_due(ms(45));
        let again: Vec<_> = std::iter::from_fn(|| clock.next(ms(45))).collect();
        assert_eq!(again, [(0, ms(10)), (1, ms(30)), (0, ms(40))]);
        // Closed loop: nothing is due, so nothing comes back.
        let mut closed = Clock::new(&spec(None, 1, 1), 0, window(start));
        closed.put_back(ms(10));
        assert_eq!(closed.next(ms(45)), Some((0, ms(45))));
    }

    #[test]
    fn free_streams_are_refilled_a_quarter_at_a_time() {
        let first = |max: usize| (0..=max).rev().find(|&n| refill_due(n, max));
        // 100 streams: refilled once 25 are done, so 75-100 stay in flight.
        assert_eq!(first(100), Some(75));
        assert_eq!(first(8), Some(6));
        // Fewer than four: one by one, as before.
        assert_eq!(first(3), Some(2));
        assert_eq!(first(1), Some(0));
        // An empty session is always refilled; a full one never.
        for max in 1..=300 {
            assert!(refill_due(0, max) && !refill_due(max, max), "{max}");
        }
    }
}
