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
            // Take every request discovered so far before reading on, so
            // that a free stream goes to the highest priority waiting.
            biased;
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
    use super::*;
    use tokio::io::DuplexStream;

    /// A server made of our codec, scripted by the test.
    struct Peer {
        io: DuplexStream,
        dec: Decoder,
        enc: Encoder,
        /// Sum of the client's WINDOW_UPDATEs: (session, per stream).
        updates: (u64, HashMap<u32, u64>),
    }

    impl Peer {
        async fn send(&mut self, frames: &[Frame]) {
            let mut out = Vec::new();
            for f in frames {
                self.enc.encode(f, &mut out);
            }
            self.io.write_all(&out).await.unwrap();
        }

        /// The client's next frame other than a WINDOW_UPDATE (which are tallied).
        async fn next(&mut self) -> Frame {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match self.dec.next_frame().unwrap() {
                    Some(Frame::WindowUpdate {
                        stream_id: 0,
                        delta,
                    }) => self.updates.0 += delta as u64,
                    Some(Frame::WindowUpdate { stream_id, delta }) => {
                        *self.updates.1.entry(stream_id).or_default() += delta as u64
                    }
                    Some(f) => return f,
                    None => {
                        let n = self.io.read(&mut buf).await.unwrap();
                        assert!(n > 0, "the client closed the session");
                        self.dec.feed(&buf[..n]);
                    }
                }
            }
        }

        /// Expects a SYN_STREAM: its id, priority and path.
        async fn syn(&mut self) -> (u32, u8, String) {
            match self.next().await {
                Frame::SynStream {
                    stream_id,
                    priority,
                    headers,
                    ..
                } => {
                    let path = headers
                        .iter()
                        .find(|(n, _)| n == ":path")
                        .unwrap()
                        .1
                        .clone();
                    (stream_id, priority, path)
                }
                other => panic!("expected a SYN_STREAM, got {other:?}"),
            }
        }
    }

    fn reply(stream_id: u32, fin: bool) -> Frame {
        Frame::SynReply {
            stream_id,
            fin,
            headers: vec![
                (":status".into(), "200 OK".into()),
                (":version".into(), "HTTP/1.1".into()),
            ],
        }
    }

    fn data(stream_id: u32, fin: bool, n: usize) -> Frame {
        Frame::Data {
            stream_id,
            fin,
            data: vec![7; n],
        }
    }

    #[tokio::test]
    async fn the_stream_limit_priorities_refusals_and_windows_are_kept() {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let client = tokio::spawn(connection(
            4,
            Box::new(ours),
            jobs_rx,
            events_tx,
            INITIAL_WINDOW,
        ));
        let mut srv = Peer {
            io: theirs,
            dec: Decoder::default(),
            enc: Encoder::default(),
            updates: Default::default(),
        };
        // One stream at a time; the ping's echo shows the client has read it.
        srv.send(&[
            Frame::Settings {
                clear: false,
                entries: vec![(0, settings::MAX_CONCURRENT_STREAMS, 1)],
            },
            Frame::Ping { id: 2 },
        ])
        .await;
        assert_eq!(srv.next().await, Frame::Ping { id: 2 });
        for (req, path) in ["/a.png", "/b.js", "/", "/c.css"].into_iter().enumerate() {
            jobs_tx
                .send(Job {
                    req,
                    host: "www.example.test".into(),
                    path: path.into(),
                })
                .unwrap();
        }
        drop(jobs_tx);
        // The first goes at once; the rest wait for it.
        assert_eq!(srv.syn().await, (1, 3, "/a.png".into()));
        // 90 000 bytes through a 64 KiB window: the rest only once the client
        // has given back half of it, for the stream and for the session.
        srv.send(&[reply(1, false)]).await;
        for _ in 0..4 {
            srv.send(&[data(1, false, 16_384)]).await;
        }
        srv.send(&[Frame::Ping { id: 4 }]).await;
        assert_eq!(srv.next().await, Frame::Ping { id: 4 });
        assert!(srv.updates.0 >= 32_768 && srv.updates.1[&1] >= 32_768);
        srv.send(&[data(1, true, 90_000 - 65_536)]).await;
        // Then the highest priority waiting: the document, then the script
        // (refused once, and asked again), then the style sheet.
        assert_eq!(srv.syn().await, (3, 0, "/".into()));
        srv.send(&[reply(3, false), data(3, true, 2)]).await;
        assert_eq!(srv.syn().await, (5, 1, "/b.js".into()));
        srv.send(&[Frame::RstStream {
            stream_id: 5,
            status: rst::REFUSED_STREAM,
        }])
        .await;
        assert_eq!(srv.syn().await, (7, 1, "/b.js".into()));
        srv.send(&[reply(7, true)]).await;
        assert_eq!(srv.syn().await, (9, 1, "/c.css".into()));
        srv.send(&[reply(9, false), data(9, true, 5)]).await;
        client.await.unwrap();
        let mut bytes = [0usize; 4];
        let mut done = [false; 4];
        while let Ok(ev) = events.try_recv() {
            match ev {
                Event::Data { req, data } => bytes[req] += data.len(),
                Event::Done { req, conn, .. } => {
                    assert_eq!(conn, 4);
                    done[req] = true
                }
                Event::Failed { req, error } => panic!("{req}: {error}"),
                _ => {}
            }
        }
        assert_eq!(done, [true; 4]);
        assert_eq!(bytes, [90_000, 0, 2, 5]);
    }

    #[tokio::test]
    async fn a_server_that_overruns_the_window_is_stopped() {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let client = tokio::spawn(connection(
            0,
            Box::new(ours),
            jobs_rx,
            events_tx,
            INITIAL_WINDOW,
        ));
        let mut srv = Peer {
            io: theirs,
            dec: Decoder::default(),
            enc: Encoder::default(),
            updates: Default::default(),
        };
        jobs_tx
            .send(Job {
                req: 0,
                host: "www.example.test".into(),
                path: "/".into(),
            })
            .unwrap();
        drop(jobs_tx);
        assert_eq!(srv.syn().await, (1, 0, "/".into()));
        srv.send(&[reply(1, false), data(1, true, 70_000)]).await;
        assert!(matches!(srv.next().await, Frame::GoAway { .. }));
        client.await.unwrap();
        let failed = std::iter::from_fn(|| events.try_recv().ok())
            .any(|e| matches!(e, Event::Failed { error, .. } if error.contains("window")));
        assert!(failed);
    }

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
