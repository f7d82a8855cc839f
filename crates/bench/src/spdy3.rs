//! SPDY/3.1 in the generator, on proto's sans-I/O `ClientSession`: `streams`
//! requests in flight on one session, Chrome's 10 MiB receive windows kept
//! open.

use crate::buffer::ReadBuffer;
use crate::clock::{refill_due, Clock};
use crate::dial::{self, Io};
use crate::recorder::{Recorder, Shared};
use crate::BenchSpec;
use proto::spdy3::client::{Event, StreamError};
use proto::spdy3::{ClientSession, Headers};
use std::collections::HashMap;
use std::time::Instant;
use tokio::io::AsyncReadExt;

const RECEIVE_WINDOW: u32 = 10 * 1024 * 1024;

/// Requests a session takes at most: its odd stream ids (2n + 1 for the
/// n-th) must stay below 2^31, with a margin.
const LAST_REQUEST: u64 = 0x3fff_8000;

/// `streams` requests in flight on one session. A stream the server refuses
/// is an error (and the session keeps below its limit from then on).
pub(crate) async fn run(
    mut io: Box<dyn Io>,
    spec: &BenchSpec,
    shared: &Shared,
    rec: &mut Recorder,
    clock: &mut Clock,
) -> Result<(), &'static str> {
    // One task reads and writes in turn: no split (and no lock per call).
    let window = clock.window;
    let mut session = ClientSession::<u64>::new(RECEIVE_WINDOW)
        .with_max_streams(spec.streams)
        .report_refused();
    let scheme = if spec.tls.is_some() { "https" } else { "http" };
    let headers: Vec<Headers> = spec
        .paths
        .iter()
        .map(|p| {
            [
                (":method", "GET"),
                (":path", p.path.as_str()),
                (":version", "HTTP/1.1"),
                (":host", spec.host.as_str()),
                (":scheme", scheme),
                ("user-agent", "spdylab-bench"),
            ]
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
        })
        .collect();
    // request → (path, counted from, status, body bytes)
    let mut open: HashMap<u64, (usize, Instant, u16, u64)> = HashMap::new();
    let mut next_req = 0u64;
    let mut buf = ReadBuffer::new();
    loop {
        let Some(now) = clock.tick(&shared.stop) else {
            return Ok(());
        };
        // A graceful GOAWAY: no new streams; reconnect once the last one is in.
        if session.going_away() && open.is_empty() {
            return Ok(());
        }
        let refill = clock.open_loop() || refill_due(session.in_flight(), session.max_open());
        while refill && !session.going_away() && session.in_flight() < session.max_open() {
            // Before taking a due request, which the next session then sends.
            if next_req >= LAST_REQUEST {
                return Err("stream-ids-exhausted");
            }
            let Some((path, since)) = clock.next(now) else {
                break;
            };
            session.request(next_req, 0, headers[path].clone());
            open.insert(next_req, (path, since, 0, 0));
            next_req += 1;
        }
        session.start();
        let out = session.output();
        if !out.is_empty() {
            dial::write(&mut *io, out).await?;
            out.clear();
        }
        let wake = clock.wake(session.in_flight() < session.max_open());
        let n = tokio::select! {
            biased;
            r = io.read(buf.space()) => match r {
                Ok(0) => return Err("closed"),
                Ok(n) => n,
                Err(_) => return Err("reset"),
            },
            _ = tokio::time::sleep_until(wake.into()) => continue,
            _ = tokio::time::sleep(spec.timeout), if !open.is_empty() => return Err("timeout"),
        };
        let now = Instant::now();
        let counted = window.counts(now, now);
        session.receive(buf.filled(n));
        while let Some(event) = session.poll_event() {
            match event {
                Event::Head { req, status, .. } => {
                    if let Some(s) = open.get_mut(&req) {
                        s.2 = status;
                    }
                }
                Event::Data { req, data } => {
                    if let Some(s) = open.get_mut(&req) {
                        s.3 += data.len() as u64;
                    }
                }
                Event::Done(req) => {
                    if let Some((path, since, status, body)) = open.remove(&req) {
                        rec.finish(path, since, now, status, body)?;
                    }
                }
                Event::Refused(req) => {
                    // Over the server's limit: an error, and the session keeps below it.
                    open.remove(&req);
                    shared.error("refused", counted);
                }
                Event::GoAway { status, .. } if status != 0 => return Err("goaway"),
                Event::Failed {
                    req,
                    error: StreamError::GoneAway(_),
                } => {
                    // Lost to a graceful GOAWAY: this request is an error.
                    open.remove(&req);
                    shared.error("goaway", counted);
                }
                Event::Failed {
                    error: StreamError::Session(_),
                    ..
                } => return Err("bad-response"),
                Event::Failed { .. } => return Err("stream-reset"),
                Event::Sent(_) | Event::GoAway { .. } => {}
            }
        }
        rec.flush();
    }
}
