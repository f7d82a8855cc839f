//! The browser model's SPDY/3.1 connection, on our sans-I/O codec (`proto`):
//! requests multiplexed on one session with Chrome's priorities by resource
//! type, at most the server's MAX_CONCURRENT_STREAMS at once (the rest wait,
//! and a refused stream is sent again), receive windows (Chrome's 10 MiB in
//! page loads) kept open with WINDOW_UPDATEs for the stream and (new in 3.1)
//! the session; a server that overruns them gets FLOW_CONTROL_ERROR.

use super::{ConnId, Event, Io, ReqId};
use proto::flow::RecvWindow;
use proto::spdy3::{rst, settings, Decoder, Encoder, Frame, Headers, Limits, INITIAL_WINDOW};
use std::collections::{HashMap, VecDeque};
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// A request for the connection.
pub struct Job {
    pub req: ReqId,
    pub host: String,
    pub path: String,
}

/// Chrome's SPDY priority for a resource, from what its URL says it is:
/// the document highest (0), then style sheets and scripts (1), fonts and
/// other subresources (2), images lowest (3).
pub fn priority_for(path: &str) -> u8 {
    let file = path.split(['?', '#']).next().unwrap_or("");
    let ext = file.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match ext.as_deref() {
        None | Some("html" | "htm") => 0,
        Some("css" | "js") => 1,
        Some("png" | "gif" | "jpg" | "jpeg" | "webp" | "ico" | "svg") => 3,
        _ => 2,
    }
}

/// The receive window Chrome announced for SPDY/3.1 streams and sessions (10 MiB).
pub const CHROME_RECEIVE_WINDOW: u32 = 10 * 1024 * 1024;

struct Stream {
    job: Job,
    window: RecvWindow,
}

/// Runs one session until the jobs end and every stream is done; `window` is
/// the receive window of each stream and of the session (at least 64 KiB).
pub async fn connection(
    conn: ConnId,
    io: Box<dyn Io>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    events: mpsc::UnboundedSender<Event>,
    window: u32,
) {
    let window = window.max(INITIAL_WINDOW);
    let (mut rd, mut wr) = tokio::io::split(io);
    // A server may send a DATA frame as long as the window it has.
    let mut dec = Decoder::new(Limits {
        max_frame: Limits::default().max_frame.max(window as usize),
        ..Limits::default()
    });
    let mut enc = Encoder::default();
    let mut out = Vec::new();
    if window > INITIAL_WINDOW {
        enc.encode(
            &Frame::Settings {
                clear: false,
                entries: vec![(0, settings::INITIAL_WINDOW_SIZE, window)],
            },
            &mut out,
        );
        enc.encode(
            &Frame::WindowUpdate {
                stream_id: 0,
                delta: window - INITIAL_WINDOW,
            },
            &mut out,
        );
    }
    let mut session_window = RecvWindow::new(window);
    let mut limit = usize::MAX; // until the server's SETTINGS say otherwise
    let mut queue: VecDeque<Job> = VecDeque::new();
    let mut open: HashMap<u32, Stream> = HashMap::new();
    let mut next_id = 1u32;
    let mut buf = vec![0u8; 64 * 1024];
    let mut jobs_open = true;
    let mut going_away = false;
    let fail = |req: ReqId, error: String| {
        let _ = events.send(Event::Failed { req, error });
    };
    loop {
        // Start what the server's limit allows, highest priority first.
        while open.len() < limit {
            let Some(i) = (0..queue.len()).min_by_key(|&i| priority_for(&queue[i].path)) else {
                break;
            };
            let job = queue.remove(i).expect("the index is in range");
            let headers: Headers = [
                (":method", "GET"),
                (":path", job.path.as_str()),
                (":version", "HTTP/1.1"),
                (":host", job.host.as_str()),
                (":scheme", "https"),
                ("user-agent", "spdylab/0.1"),
                ("accept", "*/*"),
                ("accept-encoding", "gzip,deflate,sdch"),
            ]
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
            let stream_id = next_id;
            next_id += 2;
            enc.encode(
                &Frame::SynStream {
                    stream_id,
                    associated_to: 0,
                    priority: priority_for(&job.path),
                    fin: true,
                    unidirectional: false,
                    headers,
                },
                &mut out,
            );
            let req = job.req;
            open.insert(
                stream_id,
                Stream {
                    job,
                    window: RecvWindow::new(window),
                },
            );
            let _ = events.send(Event::Sent {
                req,
                at: Instant::now(),
            });
        }
        if !out.is_empty() {
            // TLS holds what the socket did not take yet until flushed.
            let written = match wr.write_all(&out).await {
                Ok(()) => wr.flush().await,
                Err(e) => Err(e),
            };
            if let Err(e) = written {
                for s in open.values() {
                    fail(s.job.req, format!("write: {e}"));
                }
                return;
            }
            out.clear();
        }
        tokio::select! {
            job = jobs.recv(), if jobs_open => match job {
                Some(j) if going_away => fail(j.req, "the server went away (GOAWAY)".into()),
                Some(j) => queue.push_back(j),
                None => {
                    jobs_open = false;
                    if open.is_empty() && queue.is_empty() {
                        return;
                    }
                }
            },
            r = rd.read(&mut buf) => {
                let n = match r {
                    Ok(n) if n > 0 => n,
                    other => {
                        let why = match other { Err(e) => e.to_string(), _ => "closed".into() };
                        for s in open.values() {
                            fail(s.job.req, format!("SPDY session {why}"));
                        }
                        for j in &queue {
                            fail(j.req, format!("SPDY session {why}"));
                        }
                        return;
                    }
                };
                dec.feed(&buf[..n]);
                loop {
                    let frame = match dec.next_frame() {
                        Ok(Some(f)) => f,
                        Ok(None) => break,
                        Err(e) => {
                            enc.encode(&Frame::GoAway { last_good_stream_id: 0, status: 1 }, &mut out);
                            let _ = wr.write_all(&out).await;
                            for s in open.values() {
                                fail(s.job.req, format!("SPDY: {e}"));
                            }
                            for j in &queue {
                                fail(j.req, format!("SPDY: {e}"));
                            }
                            return;
                        }
                    };
                    match frame {
                        Frame::SynReply { stream_id, fin, headers } => {
                            let Some(s) = open.get(&stream_id) else { continue };
                            let get = |n: &str| headers.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
                            let status = get(":status")
                                .and_then(|v| v.split(' ').next().and_then(|c| c.parse().ok()))
                                .unwrap_or(0);
                            let _ = events.send(Event::Head {
                                req: s.job.req,
                                at: Instant::now(),
                                status,
                                content_type: get("content-type").unwrap_or_default(),
                            });
                            if fin {
                                let s = open.remove(&stream_id).expect("it is open");
                                let _ = events.send(Event::Done { req: s.job.req, at: Instant::now(), conn });
                            }
                        }
                        Frame::Data { stream_id, fin, data } => {
                            match session_window.received(data.len()) {
                                Ok(Some(delta)) => enc.encode(&Frame::WindowUpdate { stream_id: 0, delta }, &mut out),
                                Ok(None) => {}
                                Err(e) => {
                                    enc.encode(&Frame::GoAway { last_good_stream_id: 0, status: 1 }, &mut out);
                                    let _ = wr.write_all(&out).await;
                                    let _ = wr.flush().await;
                                    for s in open.values() {
                                        fail(s.job.req, format!("SPDY session window: {e}"));
                                    }
                                    for j in &queue {
                                        fail(j.req, format!("SPDY session window: {e}"));
                                    }
                                    return;
                                }
                            }
                            let Some(s) = open.get_mut(&stream_id) else { continue };
                            match s.window.received(data.len()) {
                                Ok(Some(delta)) if !fin => enc.encode(&Frame::WindowUpdate { stream_id, delta }, &mut out),
                                Ok(_) => {}
                                Err(e) => {
                                    enc.encode(&Frame::RstStream { stream_id, status: rst::FLOW_CONTROL_ERROR }, &mut out);
                                    let s = open.remove(&stream_id).expect("it is open");
                                    fail(s.job.req, format!("stream window: {e}"));
                                    continue;
                                }
                            }
                            if !data.is_empty() {
                                let _ = events.send(Event::Data { req: s.job.req, data: data.into() });
                            }
                            if fin {
                                let s = open.remove(&stream_id).expect("it is open");
                                let _ = events.send(Event::Done { req: s.job.req, at: Instant::now(), conn });
                            }
                        }
                        Frame::Headers { stream_id, fin: true, .. } => {
                            // Trailing headers that end the stream.
                            if let Some(s) = open.remove(&stream_id) {
                                let _ = events.send(Event::Done { req: s.job.req, at: Instant::now(), conn });
                            }
                        }
                        Frame::RstStream { stream_id, status } => {
                            let Some(s) = open.remove(&stream_id) else { continue };
                            if status == rst::REFUSED_STREAM {
                                // Over the server's limit: ask again when a stream ends.
                                limit = limit.min(open.len().max(1));
                                queue.push_front(s.job);
                            } else {
                                fail(s.job.req, format!("stream reset by the server (status {status})"));
                            }
                        }
                        Frame::Settings { entries, .. } => {
                            for (_, id, value) in entries {
                                if id == settings::MAX_CONCURRENT_STREAMS {
                                    limit = value.max(1) as usize;
                                }
                            }
                        }
                        Frame::Ping { id } if id % 2 == 0 => enc.encode(&Frame::Ping { id }, &mut out),
                        Frame::GoAway { last_good_stream_id, status } => {
                            going_away = true;
                            // Streams above the last good one were not processed.
                            let lost: Vec<u32> = open.keys().copied().filter(|&id| id > last_good_stream_id).collect();
                            for id in lost {
                                let s = open.remove(&id).expect("it is open");
                                fail(s.job.req, format!("the server went away (GOAWAY status {status})"));
                            }
                            for j in &queue {
                                fail(j.req, format!("the server went away (GOAWAY status {status})"));
                            }
                            queue.clear();
                        }
                        _ => {}
                    }
                }
                if !jobs_open && open.is_empty() && queue.is_empty() {
                    let _ = wr.write_all(&out).await;
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::priority_for;

    #[test]
    fn priorities_by_resource_type_as_chrome() {
        assert_eq!(priority_for("/"), 0);
        assert_eq!(priority_for("/index.html"), 0);
        assert_eq!(priority_for("/css/a.css?v=1"), 1);
        assert_eq!(priority_for("/js/app.js"), 1);
        assert_eq!(priority_for("/font/x.woff"), 2);
        assert_eq!(priority_for("/png/png1.png"), 3);
    }
}
