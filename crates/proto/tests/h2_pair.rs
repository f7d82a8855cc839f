//! Tests that teach how proto's lean HTTP/2 client (`proto::h2::ClientConnection`,
//! the load generator's: GETs out, status and body length in) talks to a real
//! server: the `h2` crate's, over an in-memory `tokio::io::duplex` pipe (no
//! sockets). The client is sans-I/O, so each test drives it by hand as
//! `bench` does: requests into the connection, its output written, what is
//! read fed back, its events polled. A hand-written server (`hostile`)
//! stands in where the `h2` crate would never misbehave.

use bytes::Bytes;
use proptest::prelude::*;
use proto::h2::{frame, request_block, ClientConnection, Event, ProtocolError, REFUSED_STREAM};
use std::collections::VecDeque;
use std::sync::OnceLock;
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

/// Bytes the pipe holds each way before a writer waits.
const PIPE: usize = 64 * 1024;

/// The client's windows (`proto::h2`: 16 MiB per stream, 64 MiB for the
/// connection), given back once half is used.
const STREAM_WINDOW: usize = 16 << 20;
const CONNECTION_WINDOW: usize = 64 << 20;

/// The `h2` crate's server answering from a site: (path, status, body
/// length); any other path gets a 404 without a body.
#[derive(Clone, Default)]
struct Server {
    /// Its SETTINGS_MAX_CONCURRENT_STREAMS (None: not announced, no limit).
    max_streams: Option<u32>,
    site: Vec<(&'static str, u16, usize)>,
    /// A graceful shutdown (GOAWAY) once this many requests were answered.
    goaway_after: Option<usize>,
}

impl Server {
    /// Serves one connection until the client goes; the requests answered.
    async fn serve(self, io: DuplexStream) -> Result<usize, h2::Error> {
        let mut builder = h2::server::Builder::new();
        if let Some(n) = self.max_streams {
            builder.max_concurrent_streams(n);
        }
        let mut conn = builder.handshake::<_, Bytes>(io).await?;
        let mut answered = 0;
        while let Some(accepted) = conn.accept().await {
            let (request, mut respond) = accepted?;
            let path = request.uri().path();
            let (status, len) = self
                .site
                .iter()
                .find(|(p, ..)| *p == path)
                .map_or((404, 0), |&(_, status, len)| (status, len));
            let response = http::Response::builder()
                .status(status)
                .header("content-type", "application/octet-stream")
                .header("server", "h2-crate")
                .body(())
                .expect("a valid response");
            // The body is buffered by the h2 crate and sent as the client's
            // windows allow.
            let mut body = respond.send_response(response, len == 0)?;
            if len > 0 {
                body.send_data(Bytes::from(vec![b'x'; len]), true)?;
            }
            answered += 1;
            if Some(answered) == self.goaway_after {
                conn.graceful_shutdown();
            }
        }
        Ok(answered)
    }
}

/// How the caller asks for its requests.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Asking {
    /// All at once, in the first flight, whatever the limits.
    AllAtOnce,
    /// While fewer than `max_open()` are in flight, as `bench` does (which
    /// before the server's SETTINGS is 100: RFC 9113 asks servers for at least
    /// that many).
    WithinLimit,
    /// The same, once the server's SETTINGS have come (and been acknowledged).
    AfterSettings,
}

/// What a client run saw.
#[derive(Debug, Default)]
struct Run {
    /// The connection's events, in order.
    events: Vec<Event<usize>>,
    /// How the connection ended, if it broke.
    error: Option<ProtocolError>,
    /// Every byte the client wrote, and every byte it read.
    written: Vec<u8>,
    read: Vec<u8>,
    /// The most requests in flight at once.
    peak: usize,
}

/// Drives a `ClientConnection` (at most `cap` requests in flight) over `io`,
/// asking for `paths` as `asking` says and asking again for any request the
/// server refused, until each request is answered, reset or lost, or the
/// connection breaks or closes.
async fn client(io: DuplexStream, cap: usize, paths: &[&str], asking: Asking) -> Run {
    let (mut rd, mut wr) = tokio::io::split(io);
    let mut conn = ClientConnection::<usize>::new(cap);
    let blocks: Vec<Vec<u8>> = paths
        .iter()
        .map(|p| request_block("http", "www.example.test", p))
        .collect();
    let mut todo: VecDeque<usize> = (0..paths.len()).collect();
    let mut ended = 0;
    let mut settled = asking != Asking::AfterSettings;
    let mut run = Run::default();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        while settled && !conn.going_away() && !todo.is_empty() {
            if asking != Asking::AllAtOnce && conn.in_flight() >= conn.max_open() {
                break;
            }
            let req = todo.pop_front().expect("not empty");
            conn.request(req, &blocks[req]);
        }
        assert!(
            todo.is_empty() || !conn.going_away(),
            "requests left after the GOAWAY: {todo:?}"
        );
        run.peak = run.peak.max(conn.in_flight());
        let out = std::mem::take(conn.output());
        if !out.is_empty() {
            // The SETTINGS acknowledged: the server's limit is known.
            settled |= frames(&out)
                .iter()
                .any(|f| f.kind == frame::SETTINGS && f.flags & frame::ACK != 0);
            run.written.extend_from_slice(&out);
            wr.write_all(&out).await.expect("the pipe is open");
            continue;
        }
        if ended == paths.len() {
            return run;
        }
        let n = rd.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            return run;
        }
        run.read.extend_from_slice(&buf[..n]);
        let received = conn.receive(&buf[..n]);
        // Events of the frames before an error stand.
        while let Some(e) = conn.poll_event() {
            match e {
                Event::Reset { req, code } if code == REFUSED_STREAM => todo.push_back(req),
                Event::Done { .. } | Event::Reset { .. } | Event::Lost(_) => ended += 1,
                Event::GoAway { .. } => {}
            }
            run.events.push(e);
        }
        if let Err(e) = received {
            run.error = Some(e);
            return run;
        }
    }
}

/// The client against `server` over an in-memory pipe; also what the
/// server's task ended with.
async fn exchange(
    server: Server,
    cap: usize,
    paths: &[&str],
    asking: Asking,
) -> (Run, Result<usize, h2::Error>) {
    let (ours, theirs) = tokio::io::duplex(PIPE);
    let task = tokio::spawn(server.serve(theirs));
    let run = client(ours, cap, paths, asking).await;
    // The client's end dropped: the server's connection ends.
    (run, task.await.expect("the server does not panic"))
}

/// The frames in `bytes` (after the preface, if it starts with it).
fn frames(bytes: &[u8]) -> Vec<testkit::h2::Frame> {
    let rest = bytes.strip_prefix(frame::PREFACE).unwrap_or(bytes);
    let (frames, used) = testkit::h2::split(rest);
    assert_eq!(used, rest.len(), "whole frames");
    frames
}

/// The WINDOW_UPDATEs in `bytes`: (stream, increment).
fn window_updates(bytes: &[u8]) -> Vec<(u32, usize)> {
    frames(bytes)
        .into_iter()
        .filter(|f| f.kind == frame::WINDOW_UPDATE)
        .map(|f| {
            let p = &f.payload;
            (
                f.stream,
                u32::from_be_bytes([p[0], p[1], p[2], p[3]]) as usize,
            )
        })
        .collect()
}

fn done(req: usize, status: u16, body: u64) -> Event<usize> {
    Event::Done { req, status, body }
}

/// GETs out, status and body length in: the connection's first bytes are
/// the preface, its SETTINGS (no push; 16 MiB stream windows) and a
/// WINDOW_UPDATE opening the connection's window to 64 MiB; each request is
/// one HEADERS frame; each response is counted, its body dropped as read (a
/// 300 kB body comes in many 16 KiB DATA frames; a 404 or a 204 in a HEADERS
/// frame alone).
#[tokio::test]
async fn gets_go_out_and_status_and_body_length_come_back() {
    let server = Server {
        site: vec![
            ("/", 200, 1_000),
            ("/style.css", 200, 20_000),
            ("/big.bin", 200, 300_000),
            ("/empty", 204, 0),
        ],
        ..Server::default()
    };
    let paths = ["/", "/style.css", "/big.bin", "/empty", "/missing"];
    let (run, served) = exchange(server, 8, &paths, Asking::WithinLimit).await;
    assert_eq!(run.error, None);
    let mut events = run.events;
    events.sort_by_key(|e| match e {
        Event::Done { req, .. } => *req,
        _ => usize::MAX,
    });
    assert_eq!(
        events,
        [
            done(0, 200, 1_000),
            done(1, 200, 20_000),
            done(2, 200, 300_000),
            done(3, 204, 0),
            done(4, 404, 0)
        ]
    );
    assert_eq!(served.expect("a clean end"), 5);

    assert!(run.written.starts_with(frame::PREFACE));
    let sent = frames(&run.written);
    assert_eq!(sent[0].kind, frame::SETTINGS);
    assert_eq!(
        sent[0].payload,
        [0, 2, 0, 0, 0, 0, 0, 4, 0x01, 0, 0, 0],
        "ENABLE_PUSH 0, INITIAL_WINDOW_SIZE 16 MiB"
    );
    assert_eq!(
        window_updates(&run.written)[0],
        (0, CONNECTION_WINDOW - 65_535)
    );
    let requests: Vec<u32> = sent
        .iter()
        .filter(|f| f.kind == frame::HEADERS)
        .map(|f| {
            assert_eq!(f.flags, frame::END_STREAM | frame::END_HEADERS);
            f.stream
        })
        .collect();
    assert_eq!(requests, [1, 3, 5, 7, 9]);
}

/// The server's stream limit (2 here). `max_open()` is 100 until the
/// server's SETTINGS say otherwise, so a caller asking for ten at once
/// before they arrive sends all ten, and the `h2` crate refuses the eight
/// beyond its limit (RST_STREAM REFUSED_STREAM, which the connection reports
/// as `Reset { code: 7 }`; the request was never processed, so the caller may
/// ask again, as this one does; `bench` counts it as an error). A caller that
/// waits for the SETTINGS and keeps to `max_open()` is never refused.
#[tokio::test]
async fn the_servers_stream_limit_is_kept_once_known() {
    let server = Server {
        max_streams: Some(2),
        site: vec![("/r", 200, 5_000)],
        ..Server::default()
    };
    let paths = ["/r"; 10];
    let refused = |run: &Run| {
        run.events
            .iter()
            .filter(|e| matches!(e, Event::Reset { code, .. } if *code == REFUSED_STREAM))
            .count()
    };
    let answered = |run: &Run| {
        run.events
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    Event::Done {
                        status: 200,
                        body: 5_000,
                        ..
                    }
                )
            })
            .count()
    };

    let (run, _) = exchange(server.clone(), 100, &paths, Asking::WithinLimit).await;
    assert_eq!(run.error, None);
    assert_eq!(run.peak, 10, "sent before the SETTINGS");
    assert_eq!(refused(&run), 8);
    assert_eq!(answered(&run), 10, "asked again, all answered");

    let (run, _) = exchange(server, 100, &paths, Asking::AfterSettings).await;
    assert_eq!(run.error, None);
    assert_eq!(run.peak, 2);
    assert_eq!(refused(&run), 0);
    assert_eq!(answered(&run), 10);
}

/// Flow control: four bodies of 20 MiB, each beyond the client's 16 MiB
/// stream window and together beyond its 64 MiB connection window, arrive
/// whole only because the client gives the windows back (half a window at a
/// time) as it reads: WINDOW_UPDATEs on every stream and on the connection.
#[tokio::test]
async fn bodies_beyond_both_windows_arrive_because_window_updates_flow() {
    const BODY: usize = 20 << 20;
    let server = Server {
        site: vec![("/big", 200, BODY)],
        ..Server::default()
    };
    let paths = ["/big"; 4];
    let (run, _) = exchange(server, 8, &paths, Asking::WithinLimit).await;
    assert_eq!(run.error, None);
    let mut events = run.events;
    events.sort_by_key(|e| match e {
        Event::Done { req, .. } => *req,
        _ => usize::MAX,
    });
    let whole: Vec<Event<usize>> = (0..4).map(|req| done(req, 200, BODY as u64)).collect();
    assert_eq!(events, whole);

    let updates = window_updates(&run.written);
    let given_back = |stream: u32| -> usize {
        updates
            .iter()
            .filter(|(s, _)| *s == stream)
            .map(|(_, n)| n)
            .sum()
    };
    for stream in [1, 3, 5, 7] {
        // At least the excess over the window, less than the whole body.
        let back = given_back(stream);
        assert!(
            (BODY - STREAM_WINDOW..BODY).contains(&back),
            "stream {stream}: {back}"
        );
    }
    let connection = given_back(0) - (CONNECTION_WINDOW - 65_535);
    assert!(connection >= 4 * BODY - CONNECTION_WINDOW, "{connection}");
}

/// A graceful shutdown by the `h2` crate: GOAWAY twice, first with the
/// largest stream id (no new streams, please), then, a PING's round trip
/// later, with the last stream it processed. Requests at or below it are
/// answered; the connection says `going_away()` and the caller asks no more.
#[tokio::test]
async fn a_graceful_goaway_lets_the_streams_in_flight_finish() {
    let server = Server {
        site: vec![("/r", 200, 50_000)],
        goaway_after: Some(1),
        ..Server::default()
    };
    let paths = ["/r"; 3];
    let (run, served) = exchange(server, 8, &paths, Asking::WithinLimit).await;
    assert_eq!(run.error, None);
    let goaways: Vec<&Event<usize>> = run
        .events
        .iter()
        .filter(|e| matches!(e, Event::GoAway { .. }))
        .collect();
    assert_eq!(
        goaways,
        [
            &Event::GoAway {
                last_stream: 0x7fff_ffff,
                code: 0
            },
            &Event::GoAway {
                last_stream: 5,
                code: 0
            }
        ]
    );
    let answered = run
        .events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Done {
                    status: 200,
                    body: 50_000,
                    ..
                }
            )
        })
        .count();
    assert_eq!(answered, 3);
    assert_eq!(served.expect("a clean end"), 3);
}

/// A server that sends a malformed frame, after a good response: the
/// connection's `receive` returns a `ProtocolError` naming what was wrong
/// (what `bench` counts), never a panic, and the events before it stand.
#[tokio::test]
async fn a_malformed_frame_from_the_server_is_a_clean_error() {
    use frame::*;
    use testkit::h2::frame as raw;
    let mut too_large = raw(DATA, 0, 1, &[0; 16_385]);
    too_large.truncate(9);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "h2-push-refused",
            raw(PUSH_PROMISE, END_HEADERS, 3, &[0, 0, 0, 2, 0x82]),
        ),
        ("h2-frame-too-large", too_large),
        ("hpack-index-zero", raw(HEADERS, END_HEADERS, 3, &[0x80])),
        (
            "hpack-index-out-of-range",
            raw(HEADERS, END_HEADERS, 3, &[0xff, 0x7f]),
        ),
        ("h2-bad-padding", raw(DATA, PADDED, 3, &[9, 1, 2])),
        (
            "h2-unexpected-continuation",
            raw(CONTINUATION, END_HEADERS, 3, &[0x88]),
        ),
        ("h2-expected-continuation", {
            let mut b = raw(HEADERS, 0, 3, &[0x88]);
            b.extend(raw(DATA, 0, 3, b"x"));
            b
        }),
        ("h2-bad-continuation", {
            let mut b = raw(HEADERS, 0, 3, &[0x88]);
            b.extend(raw(CONTINUATION, END_HEADERS, 5, &[]));
            b
        }),
        ("h2-short-frame", raw(RST_STREAM, 0, 3, &[0, 0])),
        ("h2-short-frame", raw(GOAWAY, 0, 0, &[0, 0, 0, 3])),
    ];
    for (name, bad) in cases {
        // SETTINGS, a good response to the first request (":status 200" by
        // its static index, five bytes of body), then the bad frame.
        let mut bytes = raw(SETTINGS, 0, 0, &[]);
        bytes.extend(raw(HEADERS, END_HEADERS, 1, &[0x88]));
        bytes.extend(raw(DATA, END_STREAM, 1, b"hello"));
        bytes.extend(bad);
        let (ours, theirs) = tokio::io::duplex(PIPE);
        let server = tokio::spawn(hostile(theirs, bytes));
        let run = client(ours, 8, &["/", "/b"], Asking::AllAtOnce).await;
        assert_eq!(run.error, Some(ProtocolError(name)));
        assert_eq!(run.events, [done(0, 200, 5)], "{name}");
        server.await.expect("the server ends");
    }
}

/// A server of bytes written by hand: it sends `bytes` and reads until the
/// client goes.
async fn hostile(mut io: DuplexStream, bytes: Vec<u8>) {
    let _ = io.write_all(&bytes).await;
    let mut buf = [0u8; 4096];
    while matches!(io.read(&mut buf).await, Ok(n) if n > 0) {}
}

/// What the `h2` crate's server sent for a page of requests (its HPACK
/// encoder indexes the response headers, so later responses refer to the
/// first's), and what the client made of them: recorded once.
fn recorded() -> &'static (Vec<u8>, Vec<Event<usize>>) {
    static RECORDED: OnceLock<(Vec<u8>, Vec<Event<usize>>)> = OnceLock::new();
    RECORDED.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        let server = Server {
            site: vec![("/", 200, 30_000), ("/a", 200, 70_000), ("/e", 204, 0)],
            ..Server::default()
        };
        let (run, _) = rt.block_on(exchange(server, 8, &RECORDED_PATHS, Asking::AllAtOnce));
        assert_eq!(run.error, None);
        (run.read, run.events)
    })
}

const RECORDED_PATHS: [&str; 5] = ["/", "/a", "/e", "/missing", "/a"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// However the server's bytes are cut (a frame head, an HPACK block or
    /// a DATA frame split anywhere), the connection reports the same events.
    #[test]
    fn any_cut_of_the_servers_bytes_gives_the_same_events(
        cuts in prop::collection::vec(1usize..3_000, 1..8),
    ) {
        let (bytes, events) = recorded();
        let mut conn = ClientConnection::<usize>::new(8);
        for (req, path) in RECORDED_PATHS.iter().enumerate() {
            conn.request(req, &request_block("http", "www.example.test", path));
        }
        let mut rest = &bytes[..];
        for &n in cuts.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (piece, after) = rest.split_at(n.min(rest.len()));
            prop_assert_eq!(conn.receive(piece), Ok(()));
            rest = after;
        }
        let got: Vec<Event<usize>> = std::iter::from_fn(|| conn.poll_event()).collect();
        prop_assert_eq!(&got, events);
    }
}
