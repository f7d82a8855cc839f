//! Queue disciplines behind one small interface (as Mahimahi's AbstractPacketQueue):
//! a FIFO (drop-tail, once the link applies its limit) and CoDel (RFC 8289).
//!
//! The link owns the clock and passes `now` in; a discipline never reads a
//! clock. The link also owns the hard limit (`QueueLimit`, counting the packet
//! being transmitted as well as the waiting ones) and checks it on arrival for
//! every discipline, so drop-tail is a plain FIFO here and CoDel drops only what
//! its control law says. A discipline that drops at dequeue hands those packets
//! back through the `drop` callback; the link counts and logs them as queue drops.

use crate::time::Time;
use std::collections::VecDeque;
use std::time::Duration;

/// A packet waiting for transmission.
#[derive(Debug)]
pub struct Queued {
    pub packet: Vec<u8>,
    pub enqueued: Time,
}

pub trait Queue: Send {
    /// A packet arrives at `now`: takes it, or hands it back if the discipline
    /// drops it on arrival.
    fn enqueue(&mut self, item: Queued, now: Time) -> Result<(), Queued>;
    /// The transmitter is free at `now`: takes the next packet to send out of the
    /// queue. Packets the discipline drops on the way are handed to `drop`.
    fn dequeue(&mut self, now: Time, drop: &mut dyn FnMut(Queued)) -> Option<Queued>;
    /// The packet `dequeue` would consider first, if any.
    fn front(&self) -> Option<&Queued>;
    fn len_packets(&self) -> usize;
    fn len_bytes(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len_packets() == 0
    }
}

/// First in, first out. Behind the link's limit this is drop-tail.
#[derive(Debug, Default)]
pub struct Fifo {
    items: VecDeque<Queued>,
    bytes: usize,
}

impl Fifo {
    pub fn new() -> Fifo {
        Fifo::default()
    }

    fn push(&mut self, item: Queued) {
        self.bytes += item.packet.len();
        self.items.push_back(item);
    }

    fn pop(&mut self) -> Option<Queued> {
        let item = self.items.pop_front()?;
        self.bytes -= item.packet.len();
        Some(item)
    }
}

impl Queue for Fifo {
    fn enqueue(&mut self, item: Queued, _now: Time) -> Result<(), Queued> {
        self.push(item);
        Ok(())
    }

    fn dequeue(&mut self, _now: Time, _drop: &mut dyn FnMut(Queued)) -> Option<Queued> {
        self.pop()
    }

    fn front(&self) -> Option<&Queued> {
        self.items.front()
    }

    fn len_packets(&self) -> usize {
        self.items.len()
    }

    fn len_bytes(&self) -> usize {
        self.bytes
    }
}

/// Controlled Delay (RFC 8289): drops at dequeue once the sojourn time has stayed
/// above `target` for at least `interval`, then at intervals that shrink as
/// `interval / sqrt(count)` until the sojourn time falls below `target` again.
/// A transcription of the RFC's pseudocode (§5), with `maxpacket` the largest
/// packet seen so far (a queue holding at most one packet is never judged).
#[derive(Debug)]
pub struct CoDel {
    target: Duration,
    interval: Duration,
    fifo: Fifo,
    /// When the sojourn time will have been above target for an interval
    /// (the RFC's `first_above_time`; None stands for its 0).
    first_above: Option<Time>,
    /// When the next drop is due while dropping.
    drop_next: Time,
    /// Drops since entering the dropping state.
    count: u32,
    /// `count` when the dropping state was last left.
    last_count: u32,
    dropping: bool,
    maxpacket: usize,
}

impl CoDel {
    pub fn new(target: Duration, interval: Duration) -> CoDel {
        CoDel {
            target,
            interval,
            fifo: Fifo::new(),
            first_above: None,
            drop_next: Time::ZERO,
            count: 0,
            last_count: 0,
            dropping: false,
            maxpacket: 0,
        }
    }

    /// Whether the discipline is in its dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// `t + interval / sqrt(count)`: when the next drop is due.
    fn control_law(&self, t: Time, count: u32) -> Time {
        let ns = self.interval.as_nanos() as f64 / f64::from(count.max(1)).sqrt();
        t + Duration::from_nanos(ns.round() as u64)
    }

    /// The RFC's `dodequeue`: the head, and whether the sojourn time has been
    /// above target for an interval.
    fn do_dequeue(&mut self, now: Time) -> (Option<Queued>, bool) {
        let Some(item) = self.fifo.pop() else {
            self.first_above = None;
            return (None, false);
        };
        let sojourn = now - item.enqueued;
        let mut ok_to_drop = false;
        if sojourn < self.target || self.fifo.bytes <= self.maxpacket {
            self.first_above = None;
        } else {
            match self.first_above {
                None => self.first_above = Some(now + self.interval),
                Some(t) => ok_to_drop = now >= t,
            }
        }
        (Some(item), ok_to_drop)
    }
}

impl Queue for CoDel {
    fn enqueue(&mut self, item: Queued, _now: Time) -> Result<(), Queued> {
        self.maxpacket = self.maxpacket.max(item.packet.len());
        self.fifo.push(item);
        Ok(())
    }

    fn dequeue(&mut self, now: Time, drop: &mut dyn FnMut(Queued)) -> Option<Queued> {
        let (mut item, mut ok_to_drop) = self.do_dequeue(now);
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                if let Some(p) = item.take() {
                    drop(p);
                }
                self.count += 1;
                (item, ok_to_drop) = self.do_dequeue(now);
                if ok_to_drop {
                    self.drop_next = self.control_law(self.drop_next, self.count);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            if let Some(p) = item.take() {
                drop(p);
            }
            (item, _) = self.do_dequeue(now);
            self.dropping = true;
            // Re-entering soon after leaving: resume near the old drop rate.
            let delta = self.count.saturating_sub(self.last_count);
            self.count = if delta > 1 && now < self.drop_next + self.interval * 16 {
                delta
            } else {
                1
            };
            self.drop_next = self.control_law(now, self.count);
            self.last_count = self.count;
        }
        item
    }

    fn front(&self) -> Option<&Queued> {
        self.fifo.items.front()
    }

    fn len_packets(&self) -> usize {
        self.fifo.items.len()
    }

    fn len_bytes(&self) -> usize {
        self.fifo.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn item(len: usize, at: Time) -> Queued {
        Queued {
            packet: vec![0; len],
            enqueued: at,
        }
    }

    fn codel() -> CoDel {
        CoDel::new(Duration::from_millis(5), Duration::from_millis(100))
    }

    /// Serves `q` as a link of one packet per `service` would, from `start` to
    /// `end`, keeping `backlog` packets queued by refilling at each dequeue.
    /// Returns the times of the drops.
    fn standing_queue(
        q: &mut CoDel,
        start: Time,
        end: Time,
        service: u64,
        backlog: usize,
    ) -> Vec<Time> {
        let mut drops = Vec::new();
        let mut now = start;
        while now < end {
            while q.len_packets() < backlog {
                q.enqueue(item(1500, now), now).unwrap();
            }
            let mut dropped = 0;
            let sent = q.dequeue(now, &mut |_| dropped += 1);
            drops.extend(std::iter::repeat_n(now, dropped));
            assert!(sent.is_some() || q.is_empty());
            now = Time(now.0 + service);
        }
        drops
    }

    #[test]
    fn fifo_keeps_order_and_counts_bytes() {
        let mut q = Fifo::new();
        q.enqueue(item(10, Time::ZERO), Time::ZERO).unwrap();
        q.enqueue(item(20, Time::ZERO), Time::ZERO).unwrap();
        assert_eq!(q.len_bytes(), 30);
        let mut never = |_| panic!("a FIFO never drops");
        assert_eq!(q.dequeue(Time::ZERO, &mut never).unwrap().packet.len(), 10);
        assert_eq!(q.len_bytes(), 20);
        assert_eq!(q.dequeue(Time::ZERO, &mut never).unwrap().packet.len(), 20);
        assert!(q.dequeue(Time::ZERO, &mut never).is_none());
    }

    #[test]
    fn codel_drops_nothing_while_the_sojourn_stays_under_target() {
        let mut q = codel();
        // A backlog of 4 served at 1 ms each: every packet waits 3 ms < 5 ms, for 10 s.
        let drops = standing_queue(&mut q, Time::ZERO, Time(10_000 * MS), MS, 4);
        assert!(drops.is_empty(), "{drops:?}");
        assert!(!q.dropping());
    }

    #[test]
    fn codel_never_judges_a_single_packet() {
        let mut q = codel();
        // A lone packet that waited a second is still sent: there is no queue.
        for i in 0..100 {
            let t = Time(i * 1000 * MS);
            q.enqueue(item(1500, t), t).unwrap();
            let later = Time(t.0 + 999 * MS);
            assert!(q
                .dequeue(later, &mut |_| panic!("dropped at {later:?}"))
                .is_some());
        }
    }

    #[test]
    fn codel_drops_a_standing_queue_at_interval_over_sqrt_count() {
        let mut q = codel();
        // A backlog of 20 served at 1 ms each: 19 ms of sojourn, far above target.
        let drops = standing_queue(&mut q, Time::ZERO, Time(3_000 * MS), MS, 20);
        // The first 20 packets all arrived at 0, so the sojourn reaches target at
        // 5 ms; it must stay above it for an interval before the first drop.
        assert!(drops.len() > 5, "{drops:?}");
        assert_eq!(drops[0], Time(105 * MS));
        assert!(q.dropping());
        // The spacing follows the control law, to the service time (1 ms) at which
        // the queue is looked at: interval / sqrt(count) after the previous drop.
        let mut due = drops[0];
        for (k, pair) in drops.windows(2).enumerate() {
            let count = (k + 1) as f64;
            let law = 100.0 / count.sqrt();
            due = Time(due.0 + (law * MS as f64).round() as u64);
            let gap_ms = (pair[1].0 - pair[0].0) as f64 / MS as f64;
            assert!(
                pair[1] >= due && pair[1].0 < due.0 + MS,
                "drop {k}: {pair:?}, due {due:?}"
            );
            assert!(
                (gap_ms - law).abs() <= 1.0,
                "drop {k}: gap {gap_ms} ms, law {law} ms"
            );
        }
        let gaps: Vec<u64> = drops.windows(2).map(|w| w[1].0 - w[0].0).collect();
        assert_eq!(gaps[0], 100 * MS);
        assert!(gaps[gaps.len() - 1] < 20 * MS, "{gaps:?}");
    }

    #[test]
    fn codel_leaves_the_dropping_state_when_the_queue_drains() {
        let mut q = codel();
        let drops = standing_queue(&mut q, Time::ZERO, Time(1_000 * MS), MS, 20);
        assert!(q.dropping() && !drops.is_empty());
        // The sender backs off: from now on the backlog is 2 (1 ms of sojourn).
        // Drain the standing queue first: packets it sends are still above target
        // at first, but the state ends once one is below target.
        let mut now = Time(1_000 * MS);
        let mut dropped = 0;
        while q.len_packets() > 2 {
            q.dequeue(now, &mut |_| dropped += 1);
            now = Time(now.0 + MS);
        }
        let later = standing_queue(&mut q, now, Time(now.0 + 5_000 * MS), MS, 2);
        assert!(!q.dropping());
        assert!(later.is_empty(), "{later:?}");
    }

    #[test]
    fn codel_resumes_near_its_old_rate_when_it_reenters_soon() {
        let mut q = codel();
        let first = standing_queue(&mut q, Time::ZERO, Time(2_000 * MS), MS, 20);
        let count_before = q.count;
        assert!(count_before > 3);
        // A short lull: the queue empties (the state ends), then the standing queue returns.
        let mut now = Time(2_000 * MS);
        while q.dequeue(now, &mut |_| {}).is_some() {
            now = Time(now.0 + MS);
        }
        assert!(!q.dropping());
        let again = standing_queue(&mut q, now, Time(now.0 + 2_000 * MS), MS, 20);
        assert!(!first.is_empty() && !again.is_empty());
        // Re-entry after count - lastcount > 1 drops starts from that delta, so the
        // first gap of the second episode is shorter than the first episode's first gap.
        let gap = |d: &[Time]| d[1].0 - d[0].0;
        assert!(
            gap(&again) < gap(&first),
            "{} vs {}",
            gap(&again),
            gap(&first)
        );
    }
}
