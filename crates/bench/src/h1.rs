//! HTTP/1.1 in the generator, with TLS or without: `depth` requests
//! pipelined on one connection, decoded by `proto::h1`, the i-th answer
//! matched to the i-th request; in closed loop on plain TCP the reader wakes
//! once per pipeline (`ReadLowWater`).

use crate::buffer::{ReadBuffer, ReadLowWater};
use crate::clock::Clock;
use crate::dial::{self, Opened};
use crate::recorder::{Recorder, Shared};
use crate::BenchSpec;
use proto::h1;
use std::collections::VecDeque;
use std::time::Instant;
use tokio::io::AsyncReadExt;

/// Each path's request, written once.
fn requests(spec: &BenchSpec) -> Vec<Vec<u8>> {
    spec.paths
        .iter()
        .map(|p| {
            format!(
                "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: spdylab-bench\r\nAccept: */*\r\n\r\n",
                p.path, spec.host
            )
            .into_bytes()
        })
        .collect()
}

/// HTTP/1.1: keep `depth` requests in flight, written in one batch as slots free.
pub(crate) async fn run(
    opened: Opened,
    spec: &BenchSpec,
    shared: &Shared,
    rec: &mut Recorder,
    clock: &mut Clock,
) -> Result<(), &'static str> {
    // One task reads and writes in turn: no split (and no lock per call).
    let Opened { mut io, plain_fd } = opened;
    let window = clock.window;
    let requests = requests(spec);
    // (path, counted from, sent at)
    let mut in_flight: VecDeque<(usize, Instant, Instant)> = VecDeque::with_capacity(spec.depth);
    let mut decoder = h1::Decoder::default();
    let mut buf = ReadBuffer::new();
    let mut out = Vec::with_capacity(4096);
    // Two timers for the connection's life, reset rather than made anew each
    // time. (One timer moved only when it had to fire earlier, looked at again
    // when it fired early, cost more CPU per request against nginx, not less:
    // 13.1-14.0 µs in six runs against 10.7-12.0 in five of six (one 13.4),
    // 25 Nov 2026; the cause was not found.)
    let wake_timer = tokio::time::sleep_until(window.end.into());
    let deadline_timer = tokio::time::sleep_until((window.end + spec.timeout).into());
    tokio::pin!(wake_timer, deadline_timer);
    let (mut wake_at, mut deadline_at) = (window.end, window.end + spec.timeout);
    let mut flushed = Instant::now();
    // Closed loop on plain TCP wakes once per pipeline, or per whole answer
    // without pipelining (see ReadLowWater).
    let mut low_water = match plain_fd {
        Some(fd) if !clock.open_loop() => Some(ReadLowWater::new(fd)),
        _ => None,
    };
    let mut progress_at = Instant::now();
    loop {
        let Some(now) = clock.tick(&shared.stop) else {
            return Ok(());
        };
        // Send what the loop allows.
        out.clear();
        // Refill in batches, as wrk does (when the pipeline has drained): one
        // write per `depth` requests. Refilling at half drained cost 10 %
        // more CPU per request (bench-generators h1x8: 0.86x wrk, now 0.95-0.98x).
        let refill = clock.open_loop() || in_flight.is_empty();
        while refill && in_flight.len() < spec.depth {
            let Some((path, since)) = clock.next(now) else {
                break;
            };
            out.extend_from_slice(&requests[path]);
            in_flight.push_back((path, since, now));
        }
        if !out.is_empty() {
            dial::write(&mut *io, &out).await?;
            progress_at = now;
        }
        // Wait for bytes, the next due request, the end, or the timeout.
        let mut wake = clock.wake(in_flight.len() < spec.depth);
        if let Some(lw) = low_water.as_mut() {
            let least = decoder.smallest_response().map_or(1, |smallest| {
                (in_flight.len() as u64 * smallest).saturating_sub(decoder.partial_bytes())
            });
            let guard = progress_at + ReadLowWater::GUARD;
            lw.set(if now < guard { least } else { 1 });
            if lw.holding() {
                wake = wake.min(guard);
            }
        }
        let deadline = in_flight
            .front()
            .map_or(window.end + spec.timeout, |(_, _, sent)| {
                *sent + spec.timeout
            });
        if wake != wake_at {
            wake_at = wake;
            wake_timer.as_mut().reset(wake.into());
        }
        if deadline != deadline_at {
            deadline_at = deadline;
            deadline_timer.as_mut().reset(deadline.into());
        }
        let n = tokio::select! {
            biased;
            r = io.read(buf.space()) => match r {
                Ok(0) => return Err(if in_flight.is_empty() { "closed" } else { "closed-mid-request" }),
                Ok(n) => n,
                Err(_) => return Err("reset"),
            },
            _ = &mut wake_timer => continue,
            _ = &mut deadline_timer, if !in_flight.is_empty() => {
                return Err("timeout");
            }
        };
        // Every response in this read completed now.
        let now = Instant::now();
        progress_at = now;
        let buf = buf.filled(n);
        let mut result = Ok(());
        let mut close = false;
        let decoded = decoder.decode(buf, &mut |r| {
            if result.is_err() || close {
                return;
            }
            let Some((path, since, _)) = in_flight.pop_front() else {
                result = Err("unrequested-response");
                return;
            };
            close = r.close;
            result = rec.finish(path, since, now, r.status, r.body);
        });
        rec.flush_now_and_then(now, &mut flushed);
        decoded.map_err(|_| "bad-response")?;
        result?;
        if close {
            // Announced: a reconnect, not an error; but what was pipelined
            // behind the closing response is lost, and each loss is an error.
            for (_, since, _) in in_flight.drain(..) {
                shared.error("server-closed", window.counts(since, now));
            }
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{run, BenchSpec};
    use proto::Protocol;
    use std::io::{Read, Write};
    use std::net::SocketAddr;

    /// A server that answers pipelined requests one write per answer: the
    /// first `good` with 200 and a 600-byte body, the rest with a 503 of 2.
    fn shrinking_server(good: usize) -> SocketAddr {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let mut answered = 0;
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { return };
                let mut pending = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = conn.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        let answer = if answered < good {
                            format!(
                                "HTTP/1.1 200 OK\r\nContent-Length: 600\r\n\r\n{}",
                                "x".repeat(600)
                            )
                        } else {
                            "HTTP/1.1 503 Busy\r\nContent-Length: 2\r\n\r\nno".to_string()
                        };
                        answered += 1;
                        if conn.write_all(answer.as_bytes()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        addr
    }

    #[test]
    fn a_pipeline_whose_answers_shrink_is_not_held_by_the_read_low_water_mark() {
        // After 16 answers of 640 bytes the mark asks for 8 x 640 bytes, and
        // every later pipeline of 503s brings 8 x 42: only the guard (10 ms
        // without progress) lets the reader see them before the 5 s timeout.
        // Without pipelining the mark asks for 640 bytes and a 503 brings 42.
        for (protocol, depth) in [(Protocol::HttpPipelined, 8), (Protocol::Http, 1)] {
            shrinking_answers_are_read(protocol, depth);
        }
    }

    fn shrinking_answers_are_read(protocol: Protocol, depth: usize) {
        let spec = BenchSpec {
            depth,
            ..crate::tests::spec(shrinking_server(16), protocol)
        };
        let result = run(spec).unwrap();
        assert_eq!(result.requests, 16, "depth {depth}: {:?}", result.errors);
        assert!(
            !result.errors.contains_key("timeout"),
            "{:?}",
            result.errors
        );
        // At least two pipelines of 503s were read (hundreds in practice).
        assert!(
            result.errors.get("status").copied().unwrap_or(0) >= 16,
            "{:?}",
            result.errors
        );
    }
}
