//! The Link: a deterministic model of a LinkSpec. Packets go in with a timestamp
//! and come out at computed times; no clock, no I/O. Each direction is a pipe:
//! loss at the entrance, a queue (its hard limit checked here on arrival, its
//! discipline free to drop more when the transmitter takes the next packet),
//! serialization at the rate (or at the trace's delivery opportunities), then the
//! one-way delay.

use crate::log::{Event, EventKind, Observer};
use crate::loss::LossProcess;
use crate::queue::{CoDel, Fifo, Queue, Queued};
use crate::spec::{Direction, DirectionSpec, LinkSpec, Service};
use crate::time::Time;
use crate::trace::{Trace, OPPORTUNITY_BYTES};
use crate::units::{Discipline, QueueLimit};
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

/// Counters of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct DirectionStats {
    pub packets_in: u64,
    pub bytes_in: u64,
    pub packets_out: u64,
    pub bytes_out: u64,
    pub drops_loss: u64,
    /// Dropped by the queue: over its limit on arrival, or by its discipline (CoDel).
    pub drops_queue: u64,
    pub max_queue_packets: usize,
    pub max_queue_bytes: usize,
    /// Sum over transmitted packets of the time spent waiting behind others.
    pub queueing_delay_total_ns: u64,
    pub queueing_delay_max_ns: u64,
    /// Packets that started transmission (the denominator of the mean queueing delay).
    pub packets_served: u64,
}

impl DirectionStats {
    pub fn mean_queueing_delay(&self) -> Duration {
        Duration::from_nanos(
            self.queueing_delay_total_ns
                .checked_div(self.packets_served)
                .unwrap_or(0),
        )
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LinkStats {
    pub up: DirectionStats,
    pub down: DirectionStats,
}

/// Where a trace-driven transmitter stands: the opportunity in use and what is left of it.
#[derive(Debug, Clone)]
struct TraceCursor {
    trace: Arc<Trace>,
    index: u64,
    bytes_left: usize,
}

impl TraceCursor {
    /// When the last byte of a `size`-byte packet that may start at `start` is delivered.
    fn depart(&mut self, start: Time, size: usize) -> Time {
        if self.bytes_left == 0 {
            self.index += 1;
            self.bytes_left = OPPORTUNITY_BYTES;
        }
        if self.trace.time_of(self.index) < start.0 {
            // Opportunities that passed while the queue was empty are wasted.
            self.index = self.trace.first_at_or_after(start.0);
            self.bytes_left = OPPORTUNITY_BYTES;
        }
        let mut left = size.max(1);
        while left > self.bytes_left {
            left -= self.bytes_left;
            self.index += 1;
            self.bytes_left = OPPORTUNITY_BYTES;
        }
        self.bytes_left -= left;
        Time(self.trace.time_of(self.index))
    }
}

#[derive(Debug, Clone)]
enum Transmitter {
    Unlimited,
    Rate(crate::units::Bitrate),
    Trace(TraceCursor),
}

impl Transmitter {
    fn depart(&mut self, start: Time, size: usize) -> Time {
        match self {
            Transmitter::Unlimited => start,
            Transmitter::Rate(rate) => start + rate.transmit_time(size),
            Transmitter::Trace(cursor) => cursor.depart(start, size),
        }
    }
}

/// The packet being serialized: out of the queue, still counted against its limit.
struct Serving {
    packet: Vec<u8>,
    departs: Time,
}

struct InFlight {
    deliver_at: Time,
    packet: Vec<u8>,
}

/// One direction of the link.
struct Pipe {
    dir: Direction,
    delay: Duration,
    loss: LossProcess,
    queue: Box<dyn Queue>,
    /// The queue's hard limit, counting the packet being serialized.
    limit: QueueLimit,
    transmitter: Transmitter,
    serving: Option<Serving>,
    last_departure: Time,
    in_flight: VecDeque<InFlight>,
    stats: DirectionStats,
}

impl Pipe {
    fn new(dir: Direction, spec: &DirectionSpec, seed: u64) -> Pipe {
        let transmitter = match &spec.service {
            Service::Unlimited => Transmitter::Unlimited,
            Service::Rate(r) => Transmitter::Rate(*r),
            Service::Trace(t) => Transmitter::Trace(TraceCursor {
                trace: t.clone(),
                index: 0,
                bytes_left: OPPORTUNITY_BYTES,
            }),
        };
        Pipe {
            dir,
            delay: spec.delay,
            loss: LossProcess::new(spec.loss, seed),
            queue: match spec.queue.discipline {
                Discipline::DropTail => Box::new(Fifo::new()),
                Discipline::CoDel { target, interval } => Box::new(CoDel::new(target, interval)),
            },
            limit: spec.queue.limit,
            transmitter,
            serving: None,
            last_departure: Time::ZERO,
            in_flight: VecDeque::new(),
            stats: DirectionStats::default(),
        }
    }

    /// Packets in the queue, the one being serialized included.
    fn backlog_packets(&self) -> usize {
        self.queue.len_packets() + usize::from(self.serving.is_some())
    }

    fn backlog_bytes(&self) -> usize {
        self.queue.len_bytes() + self.serving.as_ref().map_or(0, |s| s.packet.len())
    }

    /// Moves every packet whose serialization ends by `now` into the delay line.
    /// The transmitter takes the next packet from the queue as soon as it is free
    /// (at a model time no later than `now`); what the discipline drops then is
    /// told to `observer` at that time.
    fn advance(&mut self, now: Time, observer: &mut dyn FnMut(&Event<'_>)) {
        loop {
            let departs = match &self.serving {
                Some(s) => s.departs,
                None => {
                    let Some(head) = self.queue.front() else {
                        return;
                    };
                    let free = head.enqueued.max(self.last_departure);
                    if free > now {
                        return;
                    }
                    let (dir, stats) = (self.dir, &mut self.stats);
                    let next = self.queue.dequeue(free, &mut |dropped| {
                        stats.drops_queue += 1;
                        observer(&Event {
                            time: free,
                            dir,
                            kind: EventKind::DropQueue,
                            packet: &dropped.packet,
                        });
                    });
                    let Some(item) = next else {
                        return;
                    };
                    let start = item.enqueued.max(free);
                    let waited = (start - item.enqueued).as_nanos() as u64;
                    self.stats.queueing_delay_total_ns += waited;
                    self.stats.queueing_delay_max_ns = self.stats.queueing_delay_max_ns.max(waited);
                    self.stats.packets_served += 1;
                    let departs = self.transmitter.depart(start, item.packet.len());
                    self.serving = Some(Serving {
                        packet: item.packet,
                        departs,
                    });
                    departs
                }
            };
            if departs > now {
                return;
            }
            let sent = self.serving.take().expect("a packet is serializing");
            self.last_departure = departs;
            self.in_flight.push_back(InFlight {
                deliver_at: departs + self.delay,
                packet: sent.packet,
            });
        }
    }

    fn push(&mut self, now: Time, packet: Vec<u8>, observer: &mut dyn FnMut(&Event<'_>)) {
        self.advance(now, observer);
        self.stats.packets_in += 1;
        self.stats.bytes_in += packet.len() as u64;
        let dir = self.dir;
        let tell = |kind, packet: &[u8], observer: &mut dyn FnMut(&Event<'_>)| {
            observer(&Event {
                time: now,
                dir,
                kind,
                packet,
            })
        };
        tell(EventKind::Arrive, &packet, observer);
        if self.loss.lose_next() {
            self.stats.drops_loss += 1;
            tell(EventKind::DropLoss, &packet, observer);
            return;
        }
        let item = Queued {
            packet,
            enqueued: now,
        };
        let too_many = self
            .limit
            .packets
            .is_some_and(|p| self.backlog_packets() >= p);
        let too_big = self
            .limit
            .bytes
            .is_some_and(|b| self.backlog_bytes() + item.packet.len() > b);
        let refused = if too_many || too_big {
            Err(item)
        } else {
            self.queue.enqueue(item, now)
        };
        if let Err(item) = refused {
            self.stats.drops_queue += 1;
            tell(EventKind::DropQueue, &item.packet, observer);
            return;
        }
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.backlog_packets());
        self.stats.max_queue_bytes = self.stats.max_queue_bytes.max(self.backlog_bytes());
        self.advance(now, observer);
    }

    fn next_delivery(&self) -> Option<Time> {
        self.in_flight.front().map(|p| p.deliver_at)
    }

    /// When the next packet is due out. Serialization ends need no wake-up of
    /// their own: the head's delivery time is known once it starts serializing.
    fn next_wakeup(&self) -> Option<Time> {
        self.next_delivery()
            .or_else(|| self.serving.as_ref().map(|s| s.departs + self.delay))
    }
}

/// A packet leaving the link.
#[derive(Debug, PartialEq, Eq)]
pub struct Delivered {
    pub dir: Direction,
    /// The model time at which it leaves (never later than the `now` it was popped at).
    pub at: Time,
    pub packet: Vec<u8>,
}

/// The two-way link model.
///
/// ```
/// use link::{Link, LinkSpec, DirectionSpec, Direction, Service, Time};
/// use std::time::Duration;
///
/// let dir = DirectionSpec {
///     service: Service::Rate("1mbit".parse().unwrap()),
///     delay: Duration::from_millis(75),
///     ..Default::default()
/// };
/// let mut link = Link::new(&LinkSpec { up: dir.clone(), down: dir }, 1);
/// link.push(Time::ZERO, Direction::Up, vec![0; 1500]);
/// // 12 ms to serialize 1500 bytes at 1 Mbit/s, then 75 ms of delay.
/// assert_eq!(link.next_wakeup(), Some(Time::from_millis(87)));
/// assert!(link.pop_ready(Time::from_millis(86)).is_none());
/// let out = link.pop_ready(Time::from_millis(87)).unwrap();
/// assert_eq!(out.at, Time::from_millis(87));
/// ```
pub struct Link {
    up: Pipe,
    down: Pipe,
    observers: Vec<Box<dyn Observer>>,
}

impl Link {
    /// A link in its initial state; `seed` fixes the loss processes.
    pub fn new(spec: &LinkSpec, seed: u64) -> Link {
        let mut mix = crate::rng::Rng::new(seed);
        Link {
            up: Pipe::new(Direction::Up, &spec.up, mix.next_u64()),
            down: Pipe::new(Direction::Down, &spec.down, mix.next_u64()),
            observers: Vec::new(),
        }
    }

    /// Adds an observer told of every packet event from now on.
    pub fn add_observer(&mut self, observer: Box<dyn Observer>) {
        self.observers.push(observer);
    }

    fn pipe(&mut self, dir: Direction) -> &mut Pipe {
        match dir {
            Direction::Up => &mut self.up,
            Direction::Down => &mut self.down,
        }
    }

    /// A packet enters the link in direction `dir` at time `now`.
    /// `now` must not go backwards between calls.
    pub fn push(&mut self, now: Time, dir: Direction, packet: Vec<u8>) {
        let observers = &mut self.observers;
        let pipe = match dir {
            Direction::Up => &mut self.up,
            Direction::Down => &mut self.down,
        };
        pipe.push(now, packet, &mut |e| {
            for o in observers.iter_mut() {
                o.on_event(e);
            }
        });
    }

    /// The next packet due by `now` (the earliest of either direction), if any.
    pub fn pop_ready(&mut self, now: Time) -> Option<Delivered> {
        let observers = &mut self.observers;
        let mut tell = |e: &Event<'_>| {
            for o in observers.iter_mut() {
                o.on_event(e);
            }
        };
        self.up.advance(now, &mut tell);
        self.down.advance(now, &mut tell);
        let dir = [Direction::Up, Direction::Down]
            .into_iter()
            .filter_map(|d| {
                let pipe = match d {
                    Direction::Up => &self.up,
                    Direction::Down => &self.down,
                };
                pipe.next_delivery().filter(|&t| t <= now).map(|t| (t, d))
            })
            .min()?
            .1;
        let pipe = self.pipe(dir);
        let p = pipe.in_flight.pop_front().expect("a packet is due");
        pipe.stats.packets_out += 1;
        pipe.stats.bytes_out += p.packet.len() as u64;
        let event = Event {
            time: p.deliver_at,
            dir,
            kind: EventKind::Deliver,
            packet: &p.packet,
        };
        for o in self.observers.iter_mut() {
            o.on_event(&event);
        }
        Some(Delivered {
            dir,
            at: p.deliver_at,
            packet: p.packet,
        })
    }

    /// When the next packet is due out of the link, if any is in it.
    pub fn next_wakeup(&self) -> Option<Time> {
        [self.up.next_wakeup(), self.down.next_wakeup()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Packets currently queued (waiting or serializing) in a direction.
    pub fn queued_packets(&self, dir: Direction) -> usize {
        match dir {
            Direction::Up => self.up.backlog_packets(),
            Direction::Down => self.down.backlog_packets(),
        }
    }

    /// Packets inside the link, queued or on their way, both directions.
    pub fn packets_inside(&self) -> usize {
        [&self.up, &self.down]
            .iter()
            .map(|p| p.backlog_packets() + p.in_flight.len())
            .sum()
    }

    pub fn stats(&self) -> LinkStats {
        LinkStats {
            up: self.up.stats,
            down: self.down.stats,
        }
    }
}
