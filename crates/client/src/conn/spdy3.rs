//! The client's SPDY/3.1 connection: the async shell of proto's sans-I/O
//! `ClientSession` (stream limit, refusals, windows and GOAWAY are there).
//! Each request's SYN_STREAM carries Chrome's SPDY priority for its
//! `crate::priority::Priority` (HIGHEST 0, MEDIUM 1, LOW 2, LOWEST 3, IDLE
//! 4: `ConvertRequestPriorityToSpdyPriority`), for servers that honour it,
//! and a free stream goes to the most urgent request waiting; the receive windows
//! are Chrome's 10 MiB in page loads, or what `fetch_spdy3` asks for. A
//! request with a body (an imported page's POST) goes as a SYN_STREAM
//! without FIN, then DATA frames, the last with FIN.
//!
//! Server push: the session accepts pushes (`ClientSession::accept_pushes`)
//! and each is told as `Event::Promised` with a handle that cancels it
//! (RST_STREAM CANCEL, sent by this connection's task), its response as
//! `Push*` events. A server that never pushes sees no difference.

use super::{client_tls, dial, Error, Event, Io, PushHandle};
use crate::priority::Priority;
use crate::replay::Upload;
use crate::schedule::{ConnId, ReqId};
use proto::spdy3::client::{Event as SessionEvent, PushEvent};
use proto::spdy3::{ClientSession, Headers};
use proto::Protocol;
use rustls::pki_types::CertificateDer;
use std::net::SocketAddr;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// A request for the connection.
pub struct Job {
    pub req: ReqId,
    pub host: String,
    pub path: String,
    /// The headers besides the pseudo-headers.
    pub headers: crate::headers::HeaderList,
    /// The method and body, when it is not a GET.
    pub upload: Option<Upload>,
    /// Its priority (the SYN_STREAM's from it).
    pub priority: Priority,
}

/// The receive window Chrome announced for SPDY/3.1 streams and sessions (10 MiB).
pub const CHROME_RECEIVE_WINDOW: u32 = 10 * 1024 * 1024;

/// The header block of a request, as Chrome sent it: the pseudo-headers,
/// then the job's own (and a body's `content-length`).
fn headers_of(job: &Job) -> Headers {
    let method = job.upload.as_ref().map_or("GET", |u| u.method.as_str());
    let length = job
        .upload
        .as_ref()
        .filter(|u| !u.body.is_empty() || u.expects_body())
        .map(|u| ("content-length".to_string(), u.body.len().to_string()));
    [
        (":method", method),
        (":path", job.path.as_str()),
        (":version", "HTTP/1.1"),
        (":host", job.host.as_str()),
        (":scheme", "https"),
    ]
    .iter()
    .map(|(n, v)| (n.to_string(), v.to_string()))
    .chain(job.headers.iter().cloned())
    .chain(length)
    .collect()
}

/// Passes the session's events on to the owner.
fn forward(
    conn: ConnId,
    session: &mut ClientSession<ReqId>,
    events: &mpsc::UnboundedSender<Event>,
    cancel: &mpsc::UnboundedSender<u32>,
) {
    // Promises first: a server sends a push's SYN_STREAM before anything
    // that names its URL, and the owner must know of it before it asks.
    while let Some(e) = session.poll_push_event() {
        let ev = match e {
            PushEvent::Promised {
                assoc,
                stream_id,
                headers,
            } => {
                let get = |name: &str| {
                    headers
                        .iter()
                        .find(|(k, _)| k == name)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default()
                };
                let host = get(":host");
                Event::Promised {
                    assoc,
                    push: (conn, stream_id),
                    host: host.split(':').next().unwrap_or("").to_ascii_lowercase(),
                    path: get(":path"),
                    at: Instant::now(),
                    handle: PushHandle::spdy3(stream_id, cancel.clone()),
                }
            }
            PushEvent::Head {
                stream_id,
                status,
                headers,
            } => Event::PushHead {
                push: (conn, stream_id),
                at: Instant::now(),
                status,
                content_type: headers
                    .into_iter()
                    .find(|(k, _)| k == "content-type")
                    .map(|(_, v)| v)
                    .unwrap_or_default(),
            },
            PushEvent::Data { stream_id, data } => Event::PushData {
                push: (conn, stream_id),
                data: data.into(),
            },
            PushEvent::Done(stream_id) => Event::PushDone {
                push: (conn, stream_id),
                at: Instant::now(),
            },
            PushEvent::Reset { stream_id, status } => Event::PushFailed {
                push: (conn, stream_id),
                error: Error::Spdy(proto::spdy3::client::StreamError::Reset(status)),
            },
        };
        let _ = events.send(ev);
    }
    while let Some(e) = session.poll_event() {
        let ev = match e {
            SessionEvent::Sent(req) => Event::Sent {
                req,
                at: Instant::now(),
            },
            SessionEvent::Head {
                req,
                status,
                headers,
            } => Event::Head {
                req,
                at: Instant::now(),
                status,
                cache: crate::cache::CacheHeaders::from_pairs(
                    headers.iter().map(|(k, v)| (k.as_str(), v.as_str())),
                ),
                content_type: headers
                    .into_iter()
                    .find(|(k, _)| k == "content-type")
                    .map(|(_, v)| v)
                    .unwrap_or_default(),
            },
            SessionEvent::Data { req, data } => Event::Data {
                req,
                data: data.into(),
            },
            SessionEvent::Done(req) => Event::Done {
                req,
                at: Instant::now(),
                conn,
            },
            SessionEvent::Failed { req, error } => Event::Failed {
                req,
                error: Error::Spdy(error),
            },
            SessionEvent::Refused(_) | SessionEvent::GoAway { .. } => continue,
        };
        let _ = events.send(ev);
    }
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
    let (mut rd, mut wr) = tokio::io::split(io);
    let mut session = ClientSession::<ReqId>::new(window).accept_pushes();
    // Pushes the owner cancels, by stream id.
    let (cancel_tx, mut cancel_rx) = mpsc::unbounded_channel::<u32>();
    let mut buf = vec![0u8; 64 * 1024];
    let mut jobs_open = true;
    let fail_all = |session: &mut ClientSession<ReqId>, error: &dyn Fn() -> Error| {
        for req in session.abandon() {
            let _ = events.send(Event::Failed {
                req,
                error: error(),
            });
        }
    };
    loop {
        // Start what the server's limit allows, highest priority first.
        session.start();
        forward(conn, &mut session, &events, &cancel_tx);
        let out = session.output();
        if !out.is_empty() {
            // TLS holds what the socket did not take yet until flushed.
            let written = match wr.write_all(out).await {
                Ok(()) => wr.flush().await,
                Err(e) => Err(e),
            };
            if let Err(e) = written {
                let kind = e.kind();
                let msg = e.to_string();
                fail_all(&mut session, &|| {
                    Error::Write(Some(std::io::Error::new(kind, msg.clone())))
                });
                return;
            }
            out.clear();
        }
        if session.failure().is_some() || (!jobs_open && session.is_idle()) {
            return;
        }
        tokio::select! {
            // Take every request discovered so far before reading on, so
            // that a free stream goes to the highest priority waiting.
            biased;
            Some(id) = cancel_rx.recv() => session.cancel_push(id),
            job = jobs.recv(), if jobs_open => match job {
                Some(j) => {
                    let priority = j.priority.spdy3();
                    let headers = headers_of(&j);
                    match j.upload {
                        Some(u) => session.request_with_body(j.req, priority, headers, u.body.to_vec()),
                        None => session.request(j.req, priority, headers),
                    }
                }
                None => jobs_open = false,
            },
            r = rd.read(&mut buf) => match r {
                Ok(n) if n > 0 => session.receive(&buf[..n]),
                other => {
                    let (kind, msg) = match other {
                        Err(e) => (Some(e.kind()), e.to_string()),
                        _ => (None, String::new()),
                    };
                    fail_all(&mut session, &|| {
                        Error::SpdySession(kind.map(|k| std::io::Error::new(k, msg.clone())))
                    });
                    return;
                }
            },
        }
    }
}

/// One response as `fetch_spdy3` got it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

/// Fetches `paths` of `host` from `addr` on one SPDY/3.1 session (TLS trusting
/// only `ca`, ALPN `spdy/3.1`) with the connection the browser model uses, keeping the
/// bodies; `window` is the receive window of the session and of each stream
/// (64 KiB, SPDY's default, makes the server wait for our WINDOW_UPDATEs). For
/// checking the client byte by byte against other servers.
pub async fn fetch(
    addr: SocketAddr,
    host: &str,
    paths: &[String],
    ca: CertificateDer<'static>,
    window: u32,
) -> Result<Vec<Fetched>, FetchError> {
    let tls = client_tls(Protocol::Spdy3, ca, None);
    let (io, _, _) = dial(addr, None, Protocol::Spdy3, host, tls)
        .await
        .map_err(FetchError::Dial)?;
    let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
    let (events_tx, mut events) = mpsc::unbounded_channel();
    for (req, path) in paths.iter().enumerate() {
        let _ = jobs_tx.send(Job {
            req,
            host: host.to_string(),
            path: path.clone(),
            headers: crate::headers::minimal(Protocol::Spdy3),
            upload: None,
            priority: Priority::from_path(path),
        });
    }
    drop(jobs_tx);
    tokio::spawn(connection(0, Box::new(io), jobs_rx, events_tx, window));
    let mut out = vec![
        Fetched {
            status: 0,
            content_type: String::new(),
            body: Vec::new(),
        };
        paths.len()
    ];
    let mut done = 0;
    while done < paths.len() {
        match events.recv().await {
            Some(Event::Head {
                req,
                status,
                content_type,
                ..
            }) => {
                out[req].status = status;
                out[req].content_type = content_type;
            }
            Some(Event::Data { req, data }) => out[req].body.extend_from_slice(&data),
            Some(Event::Done { .. }) => done += 1,
            Some(Event::Failed { req, error }) => {
                return Err(FetchError::Request {
                    path: paths[req].clone(),
                    error,
                })
            }
            Some(_) => {}
            None => {
                return Err(FetchError::Ended {
                    done,
                    of: paths.len(),
                })
            }
        }
    }
    Ok(out)
}

/// Why `fetch` failed.
#[derive(Debug)]
pub enum FetchError {
    /// TCP, TLS or ALPN.
    Dial(Error),
    /// A request failed.
    Request { path: String, error: Error },
    /// The session ended after `done` of `of` responses.
    Ended { done: usize, of: usize },
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Dial(e) => e.fmt(f),
            FetchError::Request { path, error } => write!(f, "{path}: {error}"),
            FetchError::Ended { done, of } => {
                write!(f, "the session ended after {done} of {of} responses")
            }
        }
    }
}

impl std::error::Error for FetchError {}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::spdy3::{rst, settings, Decoder, Encoder, Frame, INITIAL_WINDOW};
    use std::collections::HashMap;
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
                    headers: crate::headers::minimal(Protocol::Spdy3),
                    upload: None,
                    priority: Priority::from_path(path),
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
        // Then the most urgent waiting: the document and the style sheet
        // (HIGHEST, in arrival order), then the script (MEDIUM; refused once,
        // and asked again).
        assert_eq!(srv.syn().await, (3, 0, "/".into()));
        srv.send(&[reply(3, false), data(3, true, 2)]).await;
        assert_eq!(srv.syn().await, (5, 0, "/c.css".into()));
        srv.send(&[reply(5, false), data(5, true, 5)]).await;
        assert_eq!(srv.syn().await, (7, 1, "/b.js".into()));
        srv.send(&[Frame::RstStream {
            stream_id: 7,
            status: rst::REFUSED_STREAM,
        }])
        .await;
        assert_eq!(srv.syn().await, (9, 1, "/b.js".into()));
        srv.send(&[reply(9, true)]).await;
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
                headers: crate::headers::minimal(Protocol::Spdy3),
                upload: None,
                priority: Priority::DOCUMENT,
            })
            .unwrap();
        drop(jobs_tx);
        assert_eq!(srv.syn().await, (1, 0, "/".into()));
        srv.send(&[reply(1, false), data(1, true, 70_000)]).await;
        assert!(matches!(srv.next().await, Frame::GoAway { .. }));
        client.await.unwrap();
        let failed = std::iter::from_fn(|| events.try_recv().ok()).any(
            |e| matches!(e, Event::Failed { error, .. } if error.to_string().contains("window")),
        );
        assert!(failed);
    }

    #[test]
    fn a_post_says_its_method_and_length() {
        let job = |upload| Job {
            req: 0,
            host: "a.test".into(),
            path: "/t".into(),
            headers: Vec::new(),
            upload,
            priority: Priority::OTHER,
        };
        let get = |h: &Headers, n: &str| h.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        let h = headers_of(&job(None));
        assert_eq!(get(&h, ":method").as_deref(), Some("GET"));
        assert_eq!(get(&h, "content-length"), None);
        let h = headers_of(&job(Some(Upload {
            method: "POST".into(),
            body: bytes::Bytes::from_static(b"12345"),
        })));
        assert_eq!(get(&h, ":method").as_deref(), Some("POST"));
        assert_eq!(get(&h, "content-length").as_deref(), Some("5"));
    }
}
