//! The run: generator threads (one current-thread runtime each, driving its
//! share of the connections as local tasks), the per-second sampler, the
//! result; and each connection's life, opened and reopened (after an error or
//! a close) over the run, handing every opening to its protocol's loop.

use crate::clock::{Clock, Window};
use crate::recorder::{new_histogram, take_thread_latency, Recorder, Shared};
use crate::{dial, h1, h2, quic, spdy3};
use crate::{BenchResult, BenchSpec, Second};
use proto::Protocol;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn cpu_seconds() -> f64 {
    sys::process_cpu_seconds()
}

/// Runs the benchmark on its own runtime; blocks until it ends.
pub fn run(spec: BenchSpec) -> io::Result<BenchResult> {
    if spec.protocol == Protocol::H3 && spec.tls.is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "h3 needs a TLS configuration (QUIC carries TLS 1.3)",
        ));
    }
    if spec.paths.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no path to request",
        ));
    }
    let threads = spec.threads.max(1).min(spec.connections.max(1));
    // One current-thread runtime per generator thread, each driving its own
    // share of the connections (as wrk's threads do): no work stealing, no
    // cross-thread wake-ups, no task migrating between cores.
    let runtimes = (0..threads)
        .map(|_| {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
        })
        .collect::<io::Result<Vec<_>>>()?;
    let shared = Arc::new(Shared::new(&spec));
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let window = Window {
        start,
        measure: start + spec.warmup,
        end: start + spec.warmup + spec.duration,
    };
    let spec = Arc::new(spec);
    let per_second = std::thread::scope(|scope| {
        for (t, runtime) in runtimes.into_iter().enumerate() {
            let (spec, shared) = (spec.clone(), shared.clone());
            // Threads made here inherit this thread's network namespace.
            scope.spawn(move || {
                // The thread's connections are tasks of its one
                // current-thread runtime, not of a LocalSet: a LocalSet's
                // task woken by the I/O driver (outside the set's own poll)
                // goes through its shared queue (a lock) and wakes the
                // runtime's eventfd (a write system call, and one more epoll
                // event) before it runs. They share the thread's latency
                // histogram (`recorder::take_thread_latency`).
                runtime.block_on(async {
                    let tasks: Vec<_> = connections_of(t, threads, spec.connections)
                        .map(|c| {
                            let (spec, shared) = (spec.clone(), shared.clone());
                            let rec = Recorder::new(shared.clone(), &spec, window);
                            tokio::spawn(connection(c, spec, shared, window, rec))
                        })
                        .collect();
                    for task in tasks {
                        let _ = task.await;
                    }
                });
                shared
                    .histograms
                    .lock()
                    .unwrap()
                    .push(take_thread_latency());
                runtime.shutdown_timeout(Duration::from_secs(1));
            });
        }
        // Sample the counters once a second of the measured window.
        let snap = |s: &Shared| {
            (
                s.requests.load(Ordering::Relaxed),
                s.bytes.load(Ordering::Relaxed),
                s.errors.load(Ordering::Relaxed),
            )
        };
        let sleep_until =
            |t: Instant| std::thread::sleep(t.saturating_duration_since(Instant::now()));
        let mut series = Vec::new();
        sleep_until(window.measure);
        let mut last = snap(&shared);
        let mut t = 0;
        while Instant::now() < window.end {
            let next = (window.measure + Duration::from_secs(t + 1)).min(window.end);
            sleep_until(next);
            let now = snap(&shared);
            t += 1;
            series.push(Second {
                t,
                requests: now.0 - last.0,
                bytes: now.1 - last.1,
                errors: now.2 - last.2,
            });
            last = now;
        }
        shared.stop.store(true, Ordering::Relaxed);
        series
    });
    let wall = start.elapsed();
    let mut latency = new_histogram();
    for h in shared.histograms.lock().unwrap().iter() {
        let _ = latency.add(h);
    }
    let errors = shared.error_kinds.lock().unwrap().clone();
    Ok(BenchResult {
        requests: shared.requests.load(Ordering::Relaxed),
        bytes: shared.bytes.load(Ordering::Relaxed),
        errors,
        latency,
        per_second,
        elapsed: window.end - window.measure,
        cpu_seconds: cpu_seconds() - cpu0,
        wall_seconds: wall.as_secs_f64(),
        reconnects: shared.reconnects.load(Ordering::Relaxed),
    })
}

/// The connections generator thread `t` of `threads` drives: every
/// `threads`-th one, so that each thread has its share (±1).
fn connections_of(t: usize, threads: usize, connections: usize) -> impl Iterator<Item = usize> {
    (t..connections).step_by(threads.max(1))
}

/// One connection for the whole run, reopened after an error (as wrk does).
/// Its clock lives as long: the paths go on in turn, and requests due but
/// not sent yet are sent on the next opening.
async fn connection(
    conn: usize,
    spec: Arc<BenchSpec>,
    shared: Arc<Shared>,
    window: Window,
    mut rec: Recorder,
) {
    let mut clock = Clock::new(&spec, conn, window);
    let mut first = true;
    while !shared.stop.load(Ordering::Relaxed) && Instant::now() < window.end {
        if !first {
            shared.reconnects.fetch_add(1, Ordering::Relaxed);
        }
        first = false;
        let measuring = Instant::now() >= window.measure;
        // Ok: opened, and what its loop ended with.
        let ran = match spec.protocol {
            Protocol::H3 => match quic::open(&spec).await {
                Ok(c) => Ok(quic::run(c, &spec, &shared, &mut rec, &mut clock).await),
                Err(kind) => Err(kind),
            },
            protocol => match dial::open(&spec).await {
                Ok(opened) => Ok(match protocol {
                    Protocol::Http
                    | Protocol::Https
                    | Protocol::HttpPipelined
                    | Protocol::HttpsPipelined => {
                        h1::run(opened, &spec, &shared, &mut rec, &mut clock).await
                    }
                    Protocol::Spdy3 => {
                        spdy3::run(opened.io, &spec, &shared, &mut rec, &mut clock).await
                    }
                    Protocol::H2 | Protocol::H2c => {
                        h2::run(opened.io, &spec, &shared, &mut rec, &mut clock).await
                    }
                    Protocol::H3 => unreachable!("h3 runs over QUIC, above"),
                }),
                Err(kind) => Err(kind),
            },
        };
        match ran {
            Ok(Ok(())) => {}
            Ok(Err(kind)) => {
                let now = Instant::now();
                shared.error(kind, now >= window.measure && now < window.end);
            }
            // Not opened: an error, and a pause before the next try.
            Err(kind) => {
                shared.error(kind, measuring);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
    rec.flush();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PathSpec;
    use std::io::{Read, Write};
    use std::net::SocketAddr;

    #[test]
    fn every_connection_has_exactly_one_thread() {
        for (threads, conns) in [(1, 32), (2, 32), (3, 32), (4, 3), (2, 1)] {
            let mut seen: Vec<usize> = (0..threads)
                .flat_map(|t| connections_of(t, threads, conns))
                .collect();
            let shares: Vec<usize> = (0..threads)
                .map(|t| connections_of(t, threads, conns).count())
                .collect();
            seen.sort();
            assert_eq!(seen, (0..conns).collect::<Vec<_>>());
            let (lo, hi) = (shares.iter().min().unwrap(), shares.iter().max().unwrap());
            assert!(
                hi - lo <= 1,
                "{threads} threads, {conns} connections: {shares:?}"
            );
        }
    }

    /// A server whose first connection answers its first request late
    /// (`late`), then the second at once with `Connection: close`; every
    /// later connection answers at once and stays open.
    fn closes_once_after_a_late_answer(late: Duration) -> SocketAddr {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let body = "x".repeat(10);
            let ok = format!("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{body}");
            let closing =
                format!("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 10\r\n\r\n{body}");
            for (c, conn) in listener.incoming().enumerate() {
                let Ok(mut conn) = conn else { return };
                let (ok, closing) = (ok.clone(), closing.clone());
                std::thread::spawn(move || {
                    let mut pending = Vec::new();
                    let mut buf = [0u8; 4096];
                    let mut answered = 0;
                    while let Ok(n) = conn.read(&mut buf) {
                        if n == 0 {
                            return;
                        }
                        pending.extend_from_slice(&buf[..n]);
                        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                            pending.drain(..end + 4);
                            let answer = match (c, answered) {
                                (0, 0) => {
                                    std::thread::sleep(late);
                                    &ok
                                }
                                (0, _) => &closing,
                                _ => &ok,
                            };
                            answered += 1;
                            if conn.write_all(answer.as_bytes()).is_err() || answer == &closing {
                                return;
                            }
                        }
                    }
                });
            }
        });
        addr
    }

    #[test]
    fn requests_due_but_unsent_when_a_connection_reopens_are_sent_on_the_next() {
        // 100 requests a second for 1 s on one connection, one in flight: the
        // first answer takes 300 ms, so about 30 requests fall due behind it;
        // one goes out, and its answer closes the connection. The rest must go
        // out on the next connection (late, and charged for it from when they
        // fell due), not vanish: every one of the 100 is answered, none lost.
        let addr = closes_once_after_a_late_answer(Duration::from_millis(300));
        let spec = BenchSpec {
            rate: Some(100.0),
            paths: vec![PathSpec {
                path: "/".into(),
                expect_len: Some(10),
            }],
            ..crate::tests::spec(addr, Protocol::Http)
        };
        let result = run(spec).unwrap();
        assert_eq!(result.errors_total(), 0, "{:?}", result.errors);
        assert_eq!(result.reconnects, 1);
        // 100 fell due (71 were answered when the reopen dropped the rest);
        // the last ones may miss the end of the run on a busy machine.
        assert!(result.requests >= 95, "{} of 100 answered", result.requests);
        // Those due at 10-100 ms waited behind the late answer, and are
        // charged for it.
        let waited = result.latency.count_between(200_000, 400_000);
        assert!(waited >= 5, "{waited} answers of 200-400 ms");
    }
}
