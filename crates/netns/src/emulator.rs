//! The emulator loop: a thread that moves real packets between the client's and
//! the server's TUN devices through the Link model. It owns the clock: it stamps
//! each packet as it is read, and sleeps (ppoll, 1 ns timer slack) exactly until
//! the model's next event.
//!
//! Cost per packet, and why it is done this way (issue 21). One wake-up reads
//! only the devices ppoll reported readable (a read that finds nothing is a
//! system call for nothing), delivers every packet due by then, and reuses the
//! delivered packets' buffers for the next reads (no allocation per packet).
//! The adaptive spin before a deadline (up to 500 µs) is kept only on a sparse
//! link, where one packet's time is the measurement (an RTT probe); a busy link
//! spins only through waits shorter than a sleep and a wake-up cost (20 µs, as
//! before: at 1 Gbit packets are 12 µs apart). On the loaded machine this was
//! measured on, iperf3 at 1 Gbit could not tell the two apart (117-148 Mbit/s
//! before, 143-189 without that short spin, 140-161 with it).
//! Measured at 100 Mbit (iperf3 -R through `spdylab shell`, `perf stat` on this
//! thread, on a machine loaded by other builds): 5.9-6.9 system calls per data
//! packet before, 4.2-6.2 after; what is left is one read and one write per
//! packet each way plus one ppoll per wake-up, and a profile puts about a
//! quarter of the thread's time in sleeping and waking (context switches).
//! This machine is a Firecracker VM with a full Linux 6.18 kernel (not
//! gVisor): a TUN write runs the receiving namespace's TCP stack inside our
//! thread, so it dominates, and batching the calls themselves (io_uring with a
//! provided buffer ring, or IFF_VNET_HDR with TSO/GRO to move 64 KB per call)
//! was the next step (taken below); multi-queue TUN only spreads the same
//! calls over threads, and readv/writev carry one packet per call on a TUN
//! device.
//! Then, on a quiet machine (24 Nov 2026): `perf` on this thread at 100 Mbit
//! counted 13 200 context switches a second, with finish_task_switch and the
//! IRQ restore at 48 % of its time: a wake-up per packet. A busy link whose
//! next packet is due within `BUSY_QUANTUM` (only on links over 60 Mbit/s or
//! unlimited: `busy_quantum`) now sleeps the quantum on the timer alone and
//! delivers every packet due: `scripts/fidelity.sh` gave 39.7 % of a core at
//! 100 Mbit before, 23.7 % after (200 µs), with goodput unchanged (96.53 %).
//! Then (25 Nov 2026) the devices' offloads (`offload`: one read takes up to
//! 64 KB of a TCP flow, cut here into wire packets; on fast links the
//! segments due in one wake-up go in one write) and a 500 µs quantum, with
//! arrivals in it stamped at its middle: 21 % -> 11.7-12.7 % of a core at
//! 100 Mbit (Mahimahi 26.5 % in the same run), unshaped 1.5-2.0 -> 10-16
//! Gbit/s. Then each quantum also delivers what falls due in its next half:
//! a packet is off by at most half a quantum, early or late, and not late on
//! average (docs/results/fidelity.md). Then a 1 ms quantum (see
//! `BUSY_QUANTUM`): 10.3-11.5 % -> 6.5-8.7 % of a core at 100 Mbit. Slower
//! links and RTT probes take the exact path as before; the offloads only
//! change how many calls move them.

use crate::offload::{self, Gro};
use crate::tun::Tun;
use link::{Direction, Link, Time};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Counters of the emulator itself (not of the model).
#[derive(Debug, Default)]
pub struct EmulatorCounters {
    /// CPU time the emulator thread has used, in ns.
    pub cpu_ns: AtomicU64,
    /// Packets the kernel would not take back (TUN write failed).
    pub write_errors: AtomicU64,
    /// Frames read that could not be cut into packets (dropped; see `offload`).
    pub malformed: AtomicU64,
}

pub(crate) struct Emulator {
    stop: OwnedFd,
    thread: Option<JoinHandle<io::Result<()>>>,
}

/// Most packets read from one side before the other gets a turn.
const BATCH: usize = 64;
/// The least and most time before a deadline that is spent spinning rather than
/// sleeping. In between, the spin adapts to how late the kernel wakes us: on a
/// virtual machine an idle vCPU can take 100 µs or more to come back. A busy
/// link (more than `SPARSE` packets inside) only gets the least: there the CPU
/// is better spent moving packets, and each packet's time is already fixed by
/// the model, so a late wake-up delays, but never reorders or drops, packets.
const SPIN_MIN: Duration = Duration::from_micros(20);
const SPIN_MAX: Duration = Duration::from_micros(500);
const SPARSE: usize = 8;
/// On a busy link whose next packet is due sooner than this, the thread
/// sleeps this long on the timer alone (arrivals do not wake it), then reads
/// what came and delivers every packet due within the next half quantum. A
/// packet therefore goes out at most half the quantum early or late (never
/// reordered, never dropped for it), not late on average. What arrived during
/// the sleep is stamped at the middle of it (it came after the last read and
/// before this one), and never before the time the link has been run to, so
/// an answer is never stamped before what it answers: its stamp too is off by
/// at most half the quantum, either way. Each wake-up is a context switch, and
/// on this VM switches were half the thread's time (perf: 13 200 a second at
/// 100 Mbit, finish_task_switch and the IRQ restore 48 %). With the devices'
/// offloads (see `offload`), the segments due in one wake-up also go in one
/// write. At 100 Mbit, `scripts/fidelity.sh`: 18.3 % of a core with a 200 µs
/// quantum (`--quick`). From 500 µs up the quantum hardly matters: three
/// interleaved runs each gave 11.7-12.2 % at 500 µs delivering only what was
/// due (late by up to 500 µs, 250 µs on average), 11.5-11.8 % at 500 µs with
/// the look-ahead (off by at most 250 µs, either way) and 11.5-11.7 % at 1 ms
/// with it, though 1 ms halves the wake-ups. On another VM of the same kind
/// (25 Nov 2026, 15:25 UTC, quiet, three interleaved rounds) a wake-up cost
/// far more (`perf`: finish_task_switch under ppoll 16 % of the thread):
/// 10.3-11.5 % at 500 µs, 6.5-8.7 % at 1 ms, 5.5-5.8 % at 2 ms, goodput
/// 96.3 Mbit/s in all. The quantum is now 1 ms, Mahimahi's own granularity
/// (its traces count milliseconds): a packet on a busy fast link is off by
/// at most 500 µs either way, not late on average.
/// Sparse links (RTT probes, a page's first round trips, every link of 60
/// Mbit/s or less) keep the exact, spinning path.
const BUSY_QUANTUM: Duration = Duration::from_millis(1);
/// A link batches only where a direction moves a full-size packet (1500 B)
/// in less than this (over 60 Mbit/s, or no rate limit).
const FAST_PACKET: Duration = Duration::from_micros(200);

/// The quantum for `spec`: only on fast links (see `FAST_PACKET`), where
/// packets come closer than one wake-up apart. Slower links, the paper's
/// 64 kbit to 8 Mbit among them, keep a wake-up per packet at its exact time.
pub(crate) fn busy_quantum(spec: &link::LinkSpec) -> Option<Duration> {
    let fast = |d: &link::DirectionSpec| {
        d.service
            .bits_per_sec()
            .is_none_or(|bps| 1500.0 * 8.0 / bps < FAST_PACKET.as_secs_f64())
    };
    (fast(&spec.up) || fast(&spec.down)).then_some(BUSY_QUANTUM)
}

impl Emulator {
    pub(crate) fn start(
        client: Tun,
        server: Tun,
        link: Arc<Mutex<Link>>,
        epoch: Instant,
        counters: Arc<EmulatorCounters>,
        quantum: Option<Duration>,
    ) -> io::Result<Emulator> {
        let stop = sys::eventfd()?;
        let stop_raw = stop.as_raw_fd();
        let thread = std::thread::Builder::new()
            .name("spdylab-link".into())
            .spawn(move || run(client, server, link, epoch, stop_raw, counters, quantum))?;
        Ok(Emulator {
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the loop and waits for it; returns the error that ended it, if one did.
    pub(crate) fn stop(&mut self) -> io::Result<()> {
        let _ = sys::write_all(self.stop.as_raw_fd(), &1u64.to_ne_bytes());
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("emulator thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

fn now_since(epoch: Instant) -> Time {
    Time(epoch.elapsed().as_nanos() as u64)
}

/// Packet buffers, reused: a delivered packet's buffer takes the next read,
/// so a busy link allocates nothing per packet.
struct Pool(Vec<Vec<u8>>);

/// Each buffer holds one packet: the devices' MTU (1500) with room to spare.
const BUF: usize = 2048;
/// Buffers kept for reuse at most (a queue of 256 packets each way fits).
const POOL_MAX: usize = 1024;

impl Pool {
    fn take(&mut self) -> Vec<u8> {
        self.0.pop().unwrap_or_else(|| Vec::with_capacity(BUF))
    }

    fn put(&mut self, buf: Vec<u8>) {
        if self.0.len() < POOL_MAX && buf.capacity() >= BUF {
            self.0.push(buf);
        }
    }
}

fn run(
    client: Tun,
    server: Tun,
    link: Arc<Mutex<Link>>,
    epoch: Instant,
    stop: i32,
    counters: Arc<EmulatorCounters>,
    quantum: Option<Duration>,
) -> io::Result<()> {
    sys::set_min_timer_slack();
    let mut pool = Pool(Vec::new());
    let mut fds = [
        libc::pollfd {
            fd: client.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: server.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: stop,
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    // Which devices to read: after ppoll, only those it says are readable (a
    // read that finds nothing is a system call for nothing).
    let mut readable = [true, true];
    let mut iterations = 0u64;
    let mut spin = SPIN_MIN;
    // One read's frame on an offloading device: up to 64 KB of one TCP flow.
    let mut frame = Vec::with_capacity(offload::VNET_HDR_LEN + 65_536);
    // The packets due in one wake-up, per device (client, server), in order.
    let mut due: [Vec<Vec<u8>>; 2] = [Vec::new(), Vec::new()];
    let mut gro = Gro::default();
    // Merge segments into one write only on a fast link, where several fall
    // due in one wake-up (see `offload`); elsewhere each goes at its own time.
    let merge = quantum.is_some();
    let devices = [&client, &server];
    // After a sleep on the timer alone: when the reads before it ended (what
    // is read now came after that), to stamp arrivals at the middle.
    let mut blind_since: Option<Time> = None;
    // How far the link has been run: no arrival is stamped before it.
    let mut horizon = Time(0);
    loop {
        let wakeup = {
            let mut link = link.lock().unwrap_or_else(|e| e.into_inner());
            // At the middle of the sleep, but never more than half a quantum
            // before now: a sleep the scheduler stretched (a busy machine)
            // would otherwise stamp what came at its end early by half the
            // stretch (seen: a ping 2.6 ms under a 10 ms RTT). Late, not early.
            let half_quantum = quantum.map_or(0, |q| q.as_nanos() as u64 / 2);
            let stamp = |epoch| {
                let now = now_since(epoch);
                let at = blind_since.map_or(now, |t: Time| {
                    let half_sleep = now.0.saturating_sub(t.0) / 2;
                    Time(now.0 - half_sleep.min(half_quantum))
                });
                at.max(horizon)
            };
            for (i, dir) in [Direction::Up, Direction::Down].into_iter().enumerate() {
                let tun = devices[i];
                if !readable[i] {
                    continue;
                }
                for _ in 0..BATCH {
                    if tun.vnet() {
                        if !tun.recv_into(&mut frame)? {
                            break;
                        }
                        let at = stamp(epoch);
                        let cut = offload::split(&frame, || pool.take(), |p| link.push(at, dir, p));
                        if cut.is_err() {
                            counters.malformed.fetch_add(1, Ordering::Relaxed);
                        }
                        continue;
                    }
                    let mut buf = pool.take();
                    if !tun.recv_into(&mut buf)? {
                        pool.put(buf);
                        break;
                    }
                    link.push(stamp(epoch), dir, buf);
                }
            }
            // Every packet due by now (or by `until`) goes out in this one wake-up.
            let now = now_since(epoch);
            // After a quantum's sleep, what falls due in the next half
            // quantum goes now too: each packet is then off by at most half
            // a quantum, early or late, not late by up to a whole one.
            let until = match (blind_since, quantum) {
                (Some(_), Some(q)) => Time(now.0 + q.as_nanos() as u64 / 2),
                _ => now,
            };
            horizon = horizon.max(until);
            blind_since = None;
            while let Some(d) = link.pop_ready(until) {
                let to = match d.dir {
                    Direction::Up => 1,
                    Direction::Down => 0,
                };
                due[to].push(d.packet);
            }
            for (tun, packets) in devices.into_iter().zip(due.iter_mut()) {
                let mut failed = 0;
                if tun.vnet() {
                    gro.frames(packets, merge, |f, n| {
                        if tun.send(f).is_err() {
                            failed += n;
                        }
                    });
                } else {
                    failed = packets.iter().filter(|p| tun.send(p).is_err()).count();
                }
                if failed > 0 {
                    counters
                        .write_errors
                        .fetch_add(failed as u64, Ordering::Relaxed);
                }
                for p in packets.drain(..) {
                    pool.put(p);
                }
            }
            (link.next_wakeup(), link.packets_inside(), now)
        };
        let (wakeup, inside, last_reads) = wakeup;
        // The adaptive spin only on a sparse link, where one packet's exact
        // time is the measurement (an RTT probe). On a busy one each packet's
        // time is fixed by the model (a late wake-up delays, but never
        // reorders or drops, packets): it spins only through waits shorter
        // than a sleep and a wake-up cost (at 1 Gbit, 12 µs between packets).
        let spin_now = if inside <= SPARSE { spin } else { SPIN_MIN };
        iterations += 1;
        if iterations.is_multiple_of(256) {
            counters
                .cpu_ns
                .store(sys::thread_cpu_ns(), Ordering::Relaxed);
        }
        let timeout = wakeup.map(|t| t.saturating_since(now_since(epoch)));
        if let (true, Some(left), Some(quantum)) = (inside > SPARSE, timeout, quantum) {
            // Busy, and the next packet is due within the quantum: batch.
            // Sleep the quantum on the timer alone, then read both devices
            // and deliver all that is due. A longer wait takes the exact path
            // below, which an arrival wakes. What arrives meanwhile is
            // stamped at the middle of the sleep (`blind_since`).
            if left < quantum {
                readable = [true, true];
                if left.is_zero() {
                    continue;
                }
                blind_since = Some(last_reads);
                // The quantum is below a second (as tv_nsec was).
                let r = sys::ppoll(&mut fds[2..], Some(quantum));
                if let Err(e) = r {
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(e);
                    }
                } else if r.is_ok_and(|n| n > 0) && fds[2].revents != 0 {
                    counters
                        .cpu_ns
                        .store(sys::thread_cpu_ns(), Ordering::Relaxed);
                    return Ok(());
                }
                continue;
            }
        }
        if let Some(left) = timeout {
            if left.is_zero() || left <= spin_now {
                // Spin for the last microseconds unless a packet comes first.
                let deadline = Instant::now() + left;
                while Instant::now() < deadline {
                    std::hint::spin_loop();
                }
                // What arrived meanwhile is read at once.
                readable = [true, true];
                continue;
            }
        }
        let wait = timeout.map(|d| d - spin_now);
        let asked = wait.map(|d| Instant::now() + d);
        let r = sys::ppoll(&mut fds, wait);
        if let (Ok(0), Some(asked)) = (&r, asked) {
            // Woken by the timer: learn how late it was; forget slowly.
            if inside <= SPARSE {
                let late = Instant::now().saturating_duration_since(asked);
                spin = (spin * 63 / 64)
                    .max(late + SPIN_MIN)
                    .clamp(SPIN_MIN, SPIN_MAX);
            }
        }
        if let Err(e) = r {
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
            readable = [true, true];
            continue;
        }
        if fds[2].revents != 0 {
            counters
                .cpu_ns
                .store(sys::thread_cpu_ns(), Ordering::Relaxed);
            return Ok(());
        }
        readable = [fds[0].revents != 0, fds[1].revents != 0];
    }
}
