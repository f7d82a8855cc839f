//! The emulator loop: a thread that moves real packets between the client's and
//! the server's TUN devices through the Link model. It owns the clock: it stamps
//! each packet as it is read, and sleeps (ppoll, 1 ns timer slack) exactly until
//! the model's next event.

use crate::sys;
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

impl Emulator {
    pub(crate) fn start(
        client: Tun,
        server: Tun,
        link: Arc<Mutex<Link>>,
        epoch: Instant,
        counters: Arc<EmulatorCounters>,
    ) -> io::Result<Emulator> {
        let stop = sys::eventfd()?;
        let stop_raw = stop.as_raw_fd();
        let thread = std::thread::Builder::new()
            .name("spdylab-link".into())
            .spawn(move || run(client, server, link, epoch, stop_raw, counters))?;
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

fn run(
    client: Tun,
    server: Tun,
    link: Arc<Mutex<Link>>,
    epoch: Instant,
    stop: i32,
    counters: Arc<EmulatorCounters>,
) -> io::Result<()> {
    sys::set_min_timer_slack();
    let mut buf = vec![0u8; 65536];
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
    let mut iterations = 0u64;
    let mut spin = SPIN_MIN;
    loop {
        let wakeup = {
            let mut link = link.lock().unwrap_or_else(|e| e.into_inner());
            for (tun, dir) in [(&client, Direction::Up), (&server, Direction::Down)] {
                for _ in 0..BATCH {
                    match tun.recv(&mut buf)? {
                        Some(n) => link.push(now_since(epoch), dir, buf[..n].to_vec()),
                        None => break,
                    }
                }
            }
            let now = now_since(epoch);
            while let Some(d) = link.pop_ready(now) {
                let to = match d.dir {
                    Direction::Up => &server,
                    Direction::Down => &client,
                };
                if to.send(&d.packet).is_err() {
                    counters.write_errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            (link.next_wakeup(), link.packets_inside())
        };
        let (wakeup, inside) = wakeup;
        let spin_now = if inside <= SPARSE { spin } else { SPIN_MIN };
        iterations += 1;
        if iterations.is_multiple_of(256) {
            counters
                .cpu_ns
                .store(sys::thread_cpu_ns(), Ordering::Relaxed);
        }
        let timeout = wakeup.map(|t| t.saturating_since(now_since(epoch)));
        if let Some(left) = timeout {
            if left <= spin_now {
                // Spin for the last microseconds unless a packet comes first.
                let deadline = Instant::now() + left;
                while Instant::now() < deadline {
                    std::hint::spin_loop();
                }
                continue;
            }
        }
        let ts = timeout.map(|d| {
            let d = d - spin_now;
            libc::timespec {
                tv_sec: d.as_secs() as libc::time_t,
                tv_nsec: d.subsec_nanos() as libc::c_long,
            }
        });
        let ts_ptr = ts
            .as_ref()
            .map_or(std::ptr::null(), |t| t as *const libc::timespec);
        let asked = timeout.map(|d| Instant::now() + (d - spin_now));
        // SAFETY: fds is a valid array; ts_ptr is null or points to a live timespec.
        let r = unsafe { libc::ppoll(fds.as_mut_ptr(), 3, ts_ptr, std::ptr::null()) };
        if let (0, Some(asked)) = (r, asked) {
            // Woken by the timer: learn how late it was; forget slowly.
            let late = Instant::now().saturating_duration_since(asked);
            spin = (spin * 63 / 64)
                .max(late + SPIN_MIN)
                .clamp(SPIN_MIN, SPIN_MAX);
        }
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        if fds[2].revents != 0 {
            counters
                .cpu_ns
                .store(sys::thread_cpu_ns(), Ordering::Relaxed);
            return Ok(());
        }
    }
}
