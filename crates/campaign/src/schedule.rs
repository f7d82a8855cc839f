//! The scheduler: what each testbed of a sweep costs (its CPU weight, from
//! its link's rate, or its browser's), the work queue longest first, and handing the work out
//! to as many testbeds at once as their weights fit in the cores.

use lab::trial::settings;
use proto::Protocol;
use results::experiment::Point;
use results::ClientKind;
use site::Site;
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};

/// Which slice of the points a shard runs: every n-th, starting at i-1.
pub fn in_shard(index: usize, shard: (usize, usize)) -> bool {
    index % shard.1 == shard.0 - 1
}

/// The most testbeds `--jobs auto` runs at once, per core (the CPU budget,
/// [`cpu_weight`], decides how many of them run together). Sixteen since
/// `paper all` ran as one pool (issue 38): its 63 000 expected probe-seconds
/// (warm-ups included) on 16 testbeds cannot end within the hour on 2 cores
/// (about 3 960 s at best), on 32 they can (about 2 000 s), and a testbed at
/// 1 Mbit/s — most of 004's grid — is mostly waiting for its link: the CPU
/// budget, not this cap, is what keeps fast links apart.
pub const AUTO_JOBS_PER_CORE: usize = 16;

/// The most testbeds at once for `jobs` (None: auto, [`AUTO_JOBS_PER_CORE`] per core).
pub fn max_testbeds(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| {
        AUTO_JOBS_PER_CORE * std::thread::available_parallelism().map_or(1, |n| n.get())
    })
    .max(1)
}

/// The share of a core a testbed of this point is expected to use while it
/// probes: its emulator, server and client together. The emulator's and the
/// stacks' work grows with the packets per second, so with the link's rate:
/// measured on this project's 2-core machine, twelve testbeds probing at
/// 1 Mbit/s (fig2, fig4 and fig9 at once) used 0.1 of a core together, and at
/// 100 Mbit/s the emulator alone takes a quarter of a core and the stacks as
/// much again. So: a base of 0.05 (the TLS handshakes at a load's start), plus
/// half a core per 100 Mbit/s of the faster direction, at most a whole core;
/// an unlimited or trace-driven link is a whole core. A calibration weighs
/// [`CALIBRATION_WEIGHT`]. A testbed whose client is Chromium weighs
/// [`CHROMIUM_WEIGHT`] whatever its link.
pub fn cpu_weight(point: &Point, seed: u64, client: ClientKind) -> f64 {
    const BASE: f64 = 0.05;
    if client == ClientKind::Chromium {
        return CHROMIUM_WEIGHT;
    }
    const PER_BIT_PER_SEC: f64 = 0.5 / 100e6;
    let Ok(s) = settings(point, seed) else {
        return 1.0;
    };
    let link = &s.testbed.link;
    let rate = |svc: &link::Service| match svc {
        link::Service::Rate(r) => Some(r.0 as f64),
        _ => None,
    };
    match (rate(&link.down.service), rate(&link.up.service)) {
        (Some(d), Some(u)) => (BASE + d.max(u) * PER_BIT_PER_SEC).min(1.0),
        _ => 1.0,
    }
}

/// What a link's calibration weighs, whatever its link: a quarter of a core,
/// so that eight run at once on two cores and probes start beside them.
/// Until 7 Dec 2026 a calibration weighed a whole core, so two ran at once
/// and nothing beside them: `paper all`'s 78 calibrations took its first
/// 6 min 33 s on a 2-core machine whose load stayed under 0.7 (each ~9 s:
/// ten echoes, 2 s of bulk transfer each way). Weighed as its link's probes
/// (0.55 at 100 Mbit/s), a fast link's calibration waited behind the slow
/// links' probes, each of which fits in less, for the whole of a 5-minute
/// trial run; at a quarter it starts with the others, and its 4 s of bulk
/// transfer may take more than its share for those seconds. A campaign's
/// calibration measures its links under the load its probes run in: over
/// `paper all`'s 58 distinct links, the RTT's error (measured − expected)
/// median 0.10 → 0.14 ms, p90 0.13 → 0.43, worst 0.19 → 0.99; goodput's
/// error unchanged (median 3.5 %); all 78 calibrations in 92 s.
pub const CALIBRATION_WEIGHT: f64 = 0.25;

/// What a testbed loading pages in headless Chromium weighs: two cores. Its
/// browser, not its link, is the work: one load of 200 small objects keeps
/// both cores of this machine 94 % busy (docs/reproduction-h3.md). Weighed
/// by its link alone, `paper quic-long-look --quick --client chromium` ran
/// up to 32 browsers at once on 2 cores: mean PLT of 200 × 5 kB (h2, no
/// loss) 4 587 ms, 1 × 100 kB 656 ms; two at once (`--jobs 2`) 2 564 and
/// 388 ms; one at a time (`--jobs 1`) 1 530 and 348 ms (the model: 1 143
/// and 318), in 118 s against 94 s for the whole grid.
pub const CHROMIUM_WEIGHT: f64 = 2.0;

/// A point's expected duration (for longest-first order): its page's bytes
/// at the down rate plus a few round trips, per probe.
pub(crate) fn expected_secs(point: &Point, seed: u64, site: &Site, probes: usize) -> f64 {
    let Ok(s) = settings(point, seed) else {
        return 0.0;
    };
    let link = &s.testbed.link;
    let rtt = (link.down.delay + link.up.delay).as_secs_f64();
    let bits = site.total_bytes() as f64 * 8.0;
    let transfer = link
        .down
        .service
        .bits_per_sec()
        .map_or(0.0, |r| bits / r.max(1.0));
    probes as f64 * (transfer + 10.0 * rtt)
}

/// What a testbed thread runs: a calibration of one link, or the pending
/// Trials of one point.
pub(super) enum Work {
    /// Measure `link` (of `point`, under `seed`) for the campaigns `to`.
    Calibrate {
        link: String,
        point: Point,
        seed: u64,
        to: Vec<usize>,
    },
    /// Run these pending Trials of `point` of campaign `campaign`.
    Point {
        campaign: usize,
        point: Point,
        pending: Vec<(Protocol, usize)>,
    },
}

/// Hands out the work to the testbeds' threads: the next item whose CPU
/// weight fits in what the running ones leave of the budget (the cores), or
/// any item when none runs.
pub(super) struct Scheduler {
    state: Mutex<Sched>,
    freed: Condvar,
    budget: f64,
}

struct Sched {
    /// Each item with its CPU weight ([`cpu_weight`]; a calibration: 1).
    queue: VecDeque<(Work, f64)>,
    busy: f64,
    running: usize,
}

impl Scheduler {
    /// A scheduler of `queue` (each item with its CPU weight), in its order.
    /// `jobs`: the testbeds asked for (None: auto, as many as the cores'
    /// budget carries).
    pub(super) fn new(queue: VecDeque<(Work, f64)>, jobs: Option<usize>) -> Scheduler {
        Scheduler {
            state: Mutex::new(Sched {
                queue,
                busy: 0.0,
                running: 0,
            }),
            freed: Condvar::new(),
            budget: match jobs {
                // Asked for N testbeds: N, whatever they weigh.
                Some(_) => f64::INFINITY,
                None => std::thread::available_parallelism().map_or(1, |n| n.get()) as f64,
            },
        }
    }

    /// The next work to run and its weight; None when there is none left.
    pub(super) fn take(&self) -> Option<(Work, f64)> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if st.queue.is_empty() {
                return None;
            }
            let weights: Vec<f64> = st.queue.iter().map(|(_, w)| *w).collect();
            if let Some(i) = pick(&weights, st.busy, st.running, self.budget) {
                let (work, weight) = st.queue.remove(i).expect("a queued item");
                st.busy += weight;
                st.running += 1;
                return Some((work, weight));
            }
            st = self.freed.wait(st).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub(super) fn done(&self, weight: f64) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.busy -= weight;
        st.running -= 1;
        self.freed.notify_all();
    }

    /// Drops the work not started (nothing more can be kept).
    pub(super) fn clear(&self) {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .queue
            .clear();
        self.freed.notify_all();
    }
}

/// Which queued item (by its weight) starts next: the first that fits in what
/// the `running` items (weighing `busy`) leave of `budget`; any when none runs.
fn pick(weights: &[f64], busy: f64, running: usize, budget: f64) -> Option<usize> {
    weights
        .iter()
        .position(|w| running == 0 || busy + w <= budget + 1e-9)
}

/// The points' work, longest expected first (`expected_secs`), so that no
/// long point is left to run alone at the end while the other testbeds idle.
/// A point whose pending Trials are expected to take longer than this is
/// spread over several testbeds, whole repetitions each (every protocol of a
/// repetition stays on one testbed, interleaved as compare does; each chunk
/// has its own warm-up): one slow point no longer holds a campaign's end.
/// 004's imgur at 64 kbit/s — 5 repetitions × 3 protocols of 205 s, one after
/// another on one testbed — was 51 of fig4's 62 minutes.
pub(super) const CHUNK_SECS: f64 = 600.0;

/// `pending` (repetition-major, as the sweep lists it) cut into chunks of
/// whole repetitions, each expected to take at most `CHUNK_SECS` where a
/// repetition fits (one repetition a chunk where it does not), given the
/// expected seconds of one repetition.
pub(crate) fn chunks_of_reps<T: Clone>(
    pending: &[(T, usize)],
    rep_secs: f64,
) -> Vec<Vec<(T, usize)>> {
    let per_chunk = if rep_secs > 0.0 {
        ((CHUNK_SECS / rep_secs).floor() as usize).max(1)
    } else {
        usize::MAX
    };
    let mut out: Vec<Vec<(T, usize)>> = Vec::new();
    let mut reps_in_last = 0;
    let mut last_rep: Option<usize> = None;
    for (item, rep) in pending {
        if last_rep != Some(*rep) {
            if out.is_empty() || reps_in_last == per_chunk {
                out.push(Vec::new());
                reps_in_last = 0;
            }
            reps_in_last += 1;
            last_rep = Some(*rep);
        }
        out.last_mut().expect("a chunk").push((item.clone(), *rep));
    }
    out
}

/// The items, longest expected first (a stable sort: equal ones keep their order).
pub(super) fn longest_first<T>(mut order: Vec<(f64, T)>) -> VecDeque<T> {
    order.sort_by(|a, b| b.0.total_cmp(&a.0));
    order.into_iter().map(|(_, w)| w).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(rate: Option<&str>) -> Point {
        let mut p = Point::new();
        p.insert("site".into(), "twitter".into());
        p.insert("rtt".into(), "150ms".into());
        if let Some(r) = rate {
            p.insert("rate".into(), r.into());
        }
        p
    }

    #[test]
    fn long_points_are_cut_into_whole_repetitions() {
        let pending: Vec<(&str, usize)> = (0..5)
            .flat_map(|rep| ["https", "spdy3", "h2"].map(|p| (p, rep)))
            .collect();
        // A repetition of 615 s (imgur at 64 kbit/s): one a chunk.
        let c = chunks_of_reps(&pending, 615.0);
        assert_eq!(c.len(), 5);
        assert!(c
            .iter()
            .all(|c| c.len() == 3 && c.iter().all(|(_, r)| *r == c[0].1)));
        // 220 s (youtube at 64 kbit/s): two a chunk, the last alone.
        let c = chunks_of_reps(&pending, 220.0);
        assert_eq!(c.iter().map(Vec::len).collect::<Vec<_>>(), [6, 6, 3]);
        // Short points stay whole, and nothing is lost or reordered.
        let c = chunks_of_reps(&pending, 10.0);
        assert_eq!(c, vec![pending.clone()]);
        assert_eq!(chunks_of_reps(&pending, 0.0).len(), 1);
        // A resumed point (some Trials done) keeps what is left, by repetition.
        let left = [("h2", 1), ("https", 3), ("spdy3", 3)];
        let c = chunks_of_reps(&left, 615.0);
        assert_eq!(c, vec![vec![("h2", 1)], vec![("https", 3), ("spdy3", 3)]]);
    }

    #[test]
    fn a_testbed_weighs_by_its_links_rate_and_unlimited_is_a_core() {
        let w = |r| cpu_weight(&point(r), 1, ClientKind::Model);
        assert!(
            (w(Some("1mbit")) - 0.055).abs() < 1e-9,
            "{}",
            w(Some("1mbit"))
        );
        assert!((w(Some("10mbit")) - 0.1).abs() < 1e-9);
        assert!((w(Some("100mbit")) - 0.55).abs() < 1e-9);
        assert_eq!(w(Some("1gbit")), 1.0);
        assert_eq!(w(None), 1.0);
        // A browser's testbed weighs its browser, whatever its link.
        let chromium = cpu_weight(&point(Some("1mbit")), 1, ClientKind::Chromium);
        assert_eq!(chromium, CHROMIUM_WEIGHT);
        // Eight calibrations at once on two cores, probes beside them.
        assert_eq!(pick(&[0.25, 0.055], 7.0 * 0.25, 7, 2.0), Some(0));
        assert_eq!(pick(&[0.25, 0.055], 8.0 * 0.25 - 0.1, 8, 2.0), Some(1));
    }

    #[test]
    fn two_cores_carry_many_slow_testbeds_or_two_fast_ones() {
        // Thirty-six 1 Mbit points fit in two cores; the next waits.
        assert_eq!(pick(&[0.055], 35.0 * 0.055, 35, 2.0), Some(0));
        assert_eq!(pick(&[0.055], 2.0, 36, 2.0), None);
        // A whole-core point waits while more than a core is busy, but a slow
        // one later in the queue may start.
        assert_eq!(pick(&[1.0, 0.055], 1.5, 20, 2.0), Some(1));
        // Anything starts when nothing runs, even over the budget.
        assert_eq!(pick(&[4.0], 0.0, 0, 2.0), Some(0));
        // --jobs N: no budget, only the N threads.
        assert_eq!(pick(&[1.0], 7.0, 7, f64::INFINITY), Some(0));
    }

    #[test]
    fn auto_runs_at_most_sixteen_testbeds_per_core_and_n_means_n() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert_eq!(max_testbeds(None), 16 * cores);
        assert_eq!(max_testbeds(Some(1)), 1);
        assert_eq!(max_testbeds(Some(5)), 5);
    }
}
