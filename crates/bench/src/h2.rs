//! HTTP/2 in the generator (h2 over TLS, h2c in the clear) on proto's lean
//! sans-I/O client connection (`proto::h2`, hand-written for the generator's
//! CPU per request: see its module doc): `streams` requests in flight on one
//! connection, read and written by this one task.

use crate::buffer::ReadBuffer;
use crate::clock::{refill_due, Clock};
use crate::dial::{self, Io};
use crate::recorder::{Recorder, Shared};
use crate::BenchSpec;
use proto::h2::{request_block, ClientConnection, Event, REFUSED_STREAM};
use std::time::Instant;
use tokio::io::AsyncReadExt;

/// `streams` requests in flight on one connection. A stream the server
/// resets is a connection error, as a refused one (REFUSED_STREAM) is a
/// counted error; requests lost to a graceful GOAWAY are errors and the
/// connection is reopened once the rest are in.
pub(crate) async fn run(
    mut io: Box<dyn Io>,
    spec: &BenchSpec,
    shared: &Shared,
    rec: &mut Recorder,
    clock: &mut Clock,
) -> Result<(), &'static str> {
    let window = clock.window;
    // Each request: (path, counted from, sent at).
    let mut conn = ClientConnection::<(usize, Instant, Instant)>::new(spec.streams);
    let scheme = if spec.tls.is_some() { "https" } else { "http" };
    let blocks: Vec<Vec<u8>> = spec
        .paths
        .iter()
        .map(|p| request_block(scheme, &spec.host, &p.path))
        .collect();
    let mut buf = ReadBuffer::new();
    // Timers made once and moved only when their time changes.
    let wake_timer = tokio::time::sleep_until(window.end.into());
    // Checks the oldest request's age now and then (moved only when it fires).
    let timeout_timer = tokio::time::sleep_until((Instant::now() + spec.timeout).into());
    tokio::pin!(wake_timer, timeout_timer);
    let mut wake_at = window.end;
    let mut flushed = Instant::now();
    let result = loop {
        let Some(now) = clock.tick(&shared.stop) else {
            break Ok(());
        };
        let draining = conn.going_away() || conn.exhausted();
        // A graceful GOAWAY (or stream ids used up): reconnect once the last one is in.
        if draining && conn.in_flight() == 0 {
            break Ok(());
        }
        if conn.in_flight() == 0 {
            timeout_timer.as_mut().reset((now + spec.timeout).into());
        }
        let refill = clock.open_loop() || refill_due(conn.in_flight(), conn.max_open());
        while refill && !draining && conn.in_flight() < conn.max_open() {
            let Some((path, since)) = clock.next(now) else {
                break;
            };
            conn.request((path, since, now), &blocks[path]);
        }
        let out = conn.output();
        if !out.is_empty() {
            dial::write(&mut *io, out).await?;
            out.clear();
        }
        let wake = clock.wake(!draining && conn.in_flight() < conn.max_open());
        if wake != wake_at {
            wake_at = wake;
            wake_timer.as_mut().reset(wake.into());
        }
        let n = tokio::select! {
            biased;
            r = io.read(buf.space()) => match r {
                Ok(0) if conn.in_flight() == 0 => break Ok(()),
                Ok(0) => break Err("closed-mid-request"),
                Ok(n) => n,
                Err(_) => break Err("h2-reset"),
            },
            _ = &mut wake_timer => continue,
            _ = &mut timeout_timer, if conn.in_flight() > 0 => {
                // A request unanswered for the timeout is an error; else
                // look again when the oldest one would be.
                let at = conn.oldest().map_or(window.end, |r| r.2 + spec.timeout);
                if Instant::now() >= at {
                    break Err("timeout");
                }
                timeout_timer.as_mut().reset(at.into());
                continue;
            }
        };
        let now = Instant::now();
        if let Err(e) = conn.receive(buf.filled(n)) {
            break Err(e.0);
        }
        let counted = window.counts(now, now);
        while let Some(event) = conn.poll_event() {
            match event {
                Event::Done {
                    req: (path, since, _),
                    status,
                    body,
                } => rec.finish(path, since, now, status, body)?,
                // Over the server's limit: an error, and the connection goes on.
                Event::Reset { code, .. } if code == REFUSED_STREAM => {
                    shared.error("refused", counted)
                }
                Event::Reset { .. } => return Err("h2-reset"),
                Event::GoAway { code, .. } if code != 0 => return Err("goaway"),
                Event::GoAway { .. } => {}
                // Lost to a graceful GOAWAY: this request is an error.
                Event::Lost(_) => shared.error("goaway", counted),
            }
        }
        rec.flush_now_and_then(now, &mut flushed);
    };
    rec.flush();
    result
}
