//! Tests that teach how a SPDY/3.1 session works: proto's sans-I/O
//! `ClientSession` and `ServerSession` joined by a `Pair` (after quinn-proto's
//! test `Pair`), which carries their bytes over a link with a fixed one-way
//! delay, in virtual time. No sockets, threads or clocks: every run is the
//! same to the millisecond and the byte, so a test can say exactly when a
//! response ends and which frames went over the wire.
//!
//! Each side is driven as its shell drives it: the server as the built-in
//! server does (`server::protocols::spdy3`: each request answered as it
//! arrives, then every frame the windows allow written), the client as the
//! model client does (`client::conn::spdy3`: `start` after every input, its
//! events polled). A link also decodes a copy of what it carries, so tests
//! read the conversation as frames.

use bytes::Bytes;
use proptest::prelude::*;
use proto::flow::FlowError;
use proto::spdy3::client::{Event, SessionError, StreamError};
use proto::spdy3::{
    rst, settings, ClientSession, Decoder, Encoder, Frame, Headers, Limits, ServerSession,
    INITIAL_WINDOW,
};
use std::collections::{BTreeMap, VecDeque};

/// Virtual time, in milliseconds.
type Ms = u64;

/// The link's one-way delay: a round trip takes 100 ms.
const DELAY: Ms = 50;
const RTT: Ms = 2 * DELAY;

/// Chrome's SPDY/3.1 receive window (10 MiB): large enough never to be the brake.
const LARGE_WINDOW: u32 = 10 << 20;

/// A `Pair` that has not settled after this many deliveries is stuck in a loop.
const MAX_STEPS: usize = 100_000;

/// One direction of the link: first in, first out, each transmission
/// arriving `DELAY` after it was sent (no rate, no loss).
struct Link {
    /// Transmissions on their way: when each arrives, and the pieces its
    /// bytes were cut into (fed to the receiver one `receive` call each).
    in_flight: VecDeque<(Ms, Vec<Vec<u8>>)>,
    /// Decodes a copy of what goes through (its zlib context follows the
    /// sender's, as the receiver's does).
    tap: Decoder,
    /// Every frame that went through, with when it was sent.
    trace: Vec<(Ms, Frame)>,
    /// The sizes each transmission is cut into, cycled (none: one piece).
    cuts: Vec<usize>,
    /// Frames the link loses. Only frames without a header block: losing one
    /// of those would desynchronise the receiver's zlib context.
    lose: fn(&Frame) -> bool,
}

impl Link {
    fn new() -> Link {
        Link {
            in_flight: VecDeque::new(),
            tap: Decoder::new(Limits {
                max_frame: 1 << 24,
                ..Limits::default()
            }),
            trace: Vec::new(),
            cuts: Vec::new(),
            lose: |_| false,
        }
    }

    /// Whole frames from a sender, sent at `now`.
    fn send(&mut self, now: Ms, bytes: &[u8]) {
        let mut kept = Vec::with_capacity(bytes.len());
        let mut rest = bytes;
        while !rest.is_empty() {
            assert!(rest.len() >= 8, "a session writes whole frames");
            let len = 8 + u32::from_be_bytes([0, rest[5], rest[6], rest[7]]) as usize;
            assert!(rest.len() >= len, "a session writes whole frames");
            let (whole, after) = rest.split_at(len);
            rest = after;
            self.tap.feed(whole);
            let frame = self
                .tap
                .next_frame()
                .expect("the frame decodes")
                .expect("the frame is whole");
            if (self.lose)(&frame) {
                assert!(
                    !matches!(
                        frame,
                        Frame::SynStream { .. } | Frame::SynReply { .. } | Frame::Headers { .. }
                    ),
                    "a frame with a header block cannot be lost"
                );
                continue;
            }
            kept.extend_from_slice(whole);
            self.trace.push((now, frame));
        }
        if kept.is_empty() {
            return;
        }
        let mut pieces = Vec::new();
        let mut rest = &kept[..];
        for &n in self.cuts.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (piece, after) = rest.split_at(n.clamp(1, rest.len()));
            pieces.push(piece.to_vec());
            rest = after;
        }
        if !rest.is_empty() {
            pieces.push(rest.to_vec());
        }
        self.in_flight.push_back((now + DELAY, pieces));
    }

    fn next_arrival(&self) -> Option<Ms> {
        self.in_flight.front().map(|(at, _)| *at)
    }
}

/// A client session and a server session joined by two `Link`s. The server
/// answers from `site` (path → body; any other path gets a 404).
struct Pair {
    now: Ms,
    client: ClientSession<usize>,
    server: ServerSession,
    site: BTreeMap<String, Vec<u8>>,
    to_server: Link,
    to_client: Link,
    /// The client's events, with when each came.
    events: Vec<(Ms, Event<usize>)>,
    /// The most streams open at once on each side.
    peak_client: usize,
    peak_server: usize,
    /// A side closed the connection: the server once its session finished,
    /// the client once its session failed (each after writing its output).
    server_closed: bool,
    client_closed: bool,
    /// The client saw the connection end: the requests its shell then fails.
    abandoned: Option<Vec<usize>>,
    steps: usize,
}

impl Pair {
    /// A server allowing `max_streams` streams, a client whose receive
    /// windows are `window`, and what each writes first on its way (the
    /// server's SETTINGS; the client's, if its window is not the default).
    fn new(max_streams: u32, window: u32, site: &[(&str, usize)]) -> Pair {
        let mut pair = Pair {
            now: 0,
            client: ClientSession::new(window),
            server: ServerSession::new(max_streams),
            site: site
                .iter()
                .map(|&(path, len)| (path.to_string(), body(path, len)))
                .collect(),
            to_server: Link::new(),
            to_client: Link::new(),
            events: Vec::new(),
            peak_client: 0,
            peak_server: 0,
            server_closed: false,
            client_closed: false,
            abandoned: None,
            steps: 0,
        };
        pair.flush();
        pair
    }

    /// Queues a GET; it goes out at the next `flush` (as `run` begins, or
    /// after a step) that the limits allow.
    fn request(&mut self, req: usize, priority: u8, path: &str) {
        self.client.request(req, priority, get(path));
    }

    /// Each side writes what it can now, as its shell does after any input.
    fn flush(&mut self) {
        if !self.client_closed {
            self.client.start();
            self.poll_client();
            self.peak_client = self.peak_client.max(self.client.open_streams());
            let out = std::mem::take(self.client.output());
            self.to_server.send(self.now, &out);
            self.client_closed = self.client.failure().is_some();
        }
        if !self.server_closed {
            self.server.write(usize::MAX);
            let out = std::mem::take(self.server.output());
            self.to_client.send(self.now, &out);
            self.server_closed = self.server.finished();
        }
        // The server's close reaches the client after its last bytes: the
        // client's shell then fails what is left.
        if self.server_closed && self.to_client.in_flight.is_empty() && self.abandoned.is_none() {
            self.abandoned = Some(self.client.abandon());
        }
    }

    fn poll_client(&mut self) {
        while let Some(e) = self.client.poll_event() {
            self.events.push((self.now, e));
        }
    }

    /// Delivers the next transmission due (on a tie, the one to the server
    /// first); false when nothing is on its way.
    fn step(&mut self) -> bool {
        self.steps += 1;
        assert!(self.steps < MAX_STEPS, "no end in sight at {} ms", self.now);
        let server_first = match (self.to_server.next_arrival(), self.to_client.next_arrival()) {
            (None, None) => return false,
            (Some(a), Some(b)) => a <= b,
            (to_server, _) => to_server.is_some(),
        };
        if server_first {
            let (at, pieces) = self.to_server.in_flight.pop_front().expect("it is there");
            self.now = at;
            if !self.server_closed {
                for piece in pieces {
                    for r in self.server.receive(&piece) {
                        self.answer(r.stream_id, &r.headers);
                    }
                    self.peak_server = self.peak_server.max(self.server.open_streams());
                }
            }
        } else {
            let (at, pieces) = self.to_client.in_flight.pop_front().expect("it is there");
            self.now = at;
            if !self.client_closed {
                for piece in pieces {
                    self.client.receive(&piece);
                }
                self.poll_client();
            }
        }
        self.flush();
        true
    }

    /// The server's answer to a request: its body from the site, or a 404.
    fn answer(&mut self, stream_id: u32, headers: &Headers) {
        let path = header(headers, ":path");
        let (status, body) = match self.site.get(path) {
            Some(body) => ("200 OK", body.clone()),
            None => ("404 Not Found", b"not found\n".to_vec()),
        };
        let length = vec![("content-length".to_string(), body.len().to_string())];
        self.server
            .respond(stream_id, status, length, Bytes::from(body));
    }

    /// Sends what is queued, then delivers until nothing is on its way.
    fn run(&mut self) {
        self.flush();
        while self.step() {}
    }

    /// Delivers what arrives by `t`, then lets the clock reach `t`.
    fn run_until(&mut self, t: Ms) {
        self.flush();
        while [self.to_server.next_arrival(), self.to_client.next_arrival()]
            .into_iter()
            .flatten()
            .min()
            .is_some_and(|at| at <= t)
        {
            self.step();
        }
        self.now = t;
    }

    /// What each request got, by the client's events.
    fn outcomes(&self) -> BTreeMap<usize, Outcome> {
        let mut out: BTreeMap<usize, Outcome> = BTreeMap::new();
        for (at, e) in &self.events {
            match e {
                Event::Sent(req) => out.entry(*req).or_default().sent += 1,
                Event::Head { req, status, .. } => out.entry(*req).or_default().status = *status,
                Event::Data { req, data } => {
                    out.entry(*req).or_default().body.extend_from_slice(data)
                }
                Event::Done(req) => {
                    let o = out.entry(*req).or_default();
                    assert_eq!(o.done, None, "request {req} done twice");
                    o.done = Some(*at);
                }
                Event::Failed { req, error } => {
                    out.entry(*req).or_default().failed = Some(error.clone())
                }
                Event::Refused(req) => panic!("request {req} refused: the client retries"),
                Event::GoAway { .. } => {}
            }
        }
        out
    }

    /// The paths of the streams the client opened, by stream id.
    fn paths(&self) -> BTreeMap<u32, String> {
        self.to_server
            .trace
            .iter()
            .filter_map(|(_, f)| match f {
                Frame::SynStream {
                    stream_id, headers, ..
                } => Some((*stream_id, header(headers, ":path").to_string())),
                _ => None,
            })
            .collect()
    }
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Outcome {
    /// Times its SYN_STREAM went out.
    sent: usize,
    status: u16,
    body: Vec<u8>,
    done: Option<Ms>,
    failed: Option<StreamError>,
}

/// A GET's header block, as the model client writes it.
fn get(path: &str) -> Headers {
    [
        (":method", "GET"),
        (":path", path),
        (":version", "HTTP/1.1"),
        (":host", "www.example.test"),
        (":scheme", "https"),
    ]
    .iter()
    .map(|(n, v)| (n.to_string(), v.to_string()))
    .collect()
}

fn header<'a>(headers: &'a Headers, name: &str) -> &'a str {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map_or("", |(_, v)| v.as_str())
}

/// A body of `len` bytes that differs from every other path's, so that a
/// byte delivered to the wrong request shows.
fn body(path: &str, len: usize) -> Vec<u8> {
    let mut x = path.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// The DATA frames a link carried: (sent at, stream, bytes).
fn data_frames(link: &Link) -> Vec<(Ms, u32, usize)> {
    link.trace
        .iter()
        .filter_map(|(at, f)| match f {
            Frame::Data {
                stream_id, data, ..
            } => Some((*at, *stream_id, data.len())),
            _ => None,
        })
        .collect()
}

/// The WINDOW_UPDATEs a link carried: (stream, delta).
fn window_updates(link: &Link) -> Vec<(u32, u32)> {
    link.trace
        .iter()
        .filter_map(|(_, f)| match f {
            Frame::WindowUpdate { stream_id, delta } => Some((*stream_id, *delta)),
            _ => None,
        })
        .collect()
}

fn refusals(link: &Link) -> usize {
    link.trace
        .iter()
        .filter(|(_, f)| {
            matches!(
                f,
                Frame::RstStream {
                    status: rst::REFUSED_STREAM,
                    ..
                }
            )
        })
        .count()
}

/// A page: the document, style and script, a font, images, and a 404.
/// (path, SPDY priority as Chrome gave it: 0 highest, size).
const PAGE: &[(&str, u8, usize)] = &[
    ("/hero.png", 3, 120_000),
    ("/", 0, 30_000),
    ("/app.js", 1, 50_000),
    ("/icon.png", 3, 3_000),
    ("/style.css", 1, 20_000),
    ("/missing.png", 3, 0),
    ("/font.woff", 2, 10_000),
];

fn page_site() -> Vec<(&'static str, usize)> {
    PAGE.iter()
        .filter(|(path, ..)| *path != "/missing.png")
        .map(|&(path, _, len)| (path, len))
        .collect()
}

/// A page of requests, queued at once in no order of priority: the client
/// opens its streams highest priority first (in the order asked within
/// one); the server answers highest priority first too, round robin within
/// one, in DATA frames of at most 16 KiB; every request gets exactly its own
/// body, and, with windows large enough, the whole page takes one round trip.
#[test]
fn a_page_completes_by_priority_with_each_body_its_own() {
    let mut pair = Pair::new(100, LARGE_WINDOW, &page_site());
    for (req, &(path, priority, _)) in PAGE.iter().enumerate() {
        pair.request(req, priority, path);
    }
    pair.run();

    let paths = pair.paths();
    let opened: Vec<&str> = paths.values().map(String::as_str).collect();
    assert_eq!(
        opened,
        [
            "/",
            "/app.js",
            "/style.css",
            "/font.woff",
            "/hero.png",
            "/icon.png",
            "/missing.png"
        ],
        "streams in priority order, in the order asked within one"
    );
    // The server's DATA frames: priority 0 whole, then 1 round robin (the
    // style sheet's two frames between the script's four), 2, then 3 round
    // robin: the icon and the 404 end inside the hero image's first frames.
    let frames = data_frames(&pair.to_client);
    assert!(frames.iter().all(|&(_, _, n)| n <= 16 * 1024));
    let order: Vec<&str> = frames.iter().map(|(_, id, _)| paths[id].as_str()).collect();
    let mut expected = vec!["/", "/", "/app.js", "/style.css", "/app.js", "/style.css"];
    expected.extend(["/app.js", "/app.js", "/font.woff"]);
    expected.extend(["/hero.png", "/icon.png", "/missing.png"]);
    expected.extend(["/hero.png"; 7]);
    assert_eq!(order, expected);

    let outcomes = pair.outcomes();
    for (req, &(path, ..)) in PAGE.iter().enumerate() {
        let o = &outcomes[&req];
        assert_eq!(o.sent, 1, "{path}");
        assert_eq!(o.failed, None, "{path}");
        assert_eq!(o.done, Some(RTT), "{path}: one round trip");
        match pair.site.get(path) {
            Some(b) => assert!(o.status == 200 && &o.body == b, "{path}"),
            None => assert_eq!((o.status, &o.body[..]), (404, &b"not found\n"[..])),
        }
    }
    // Within the round trip, responses end in the order the server wrote them.
    let done: Vec<&str> = pair
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Done(req) => Some(PAGE[*req].0),
            _ => None,
        })
        .collect();
    assert_eq!(
        done,
        [
            "/",
            "/style.css",
            "/app.js",
            "/font.woff",
            "/icon.png",
            "/missing.png",
            "/hero.png"
        ]
    );
    assert!(pair.client.is_idle() && pair.server.open_streams() == 0);
}

/// MAX_CONCURRENT_STREAMS, known before the requests: the client queues what
/// the server's limit does not allow and sends it as streams end, so the
/// server never refuses one. Each batch of `limit` requests costs a round
/// trip: 12 requests take 12 round trips at a limit of 1, 6 at 2, 2 at 6.
#[test]
fn the_client_keeps_the_servers_stream_limit_and_queues_the_rest() {
    let site: Vec<(String, usize)> = (0..12).map(|i| (format!("/r{i}"), 10_000)).collect();
    let site: Vec<(&str, usize)> = site.iter().map(|(p, n)| (p.as_str(), *n)).collect();
    for limit in [1usize, 2, 6] {
        let mut pair = Pair::new(limit as u32, LARGE_WINDOW, &site);
        // The SETTINGS exchange: the client learns the limit at 50 ms.
        pair.run();
        assert_eq!(pair.now, DELAY);
        assert_eq!(pair.client.max_open(), limit);
        for (req, (path, _)) in site.iter().enumerate() {
            pair.request(req, 2, path);
        }
        assert_eq!(pair.client.in_flight(), 12, "all queued");
        pair.flush();
        assert_eq!(pair.client.open_streams(), limit, "the limit's worth sent");
        pair.run();

        let outcomes = pair.outcomes();
        for (req, (path, len)) in site.iter().enumerate() {
            let o = &outcomes[&req];
            assert_eq!((o.sent, o.status, o.body.len()), (1, 200, *len), "{path}");
            let batch = (req / limit) as Ms;
            assert_eq!(
                o.done,
                Some(DELAY + (batch + 1) * RTT),
                "limit {limit}, {path}: in batch {batch}"
            );
        }
        assert_eq!(refusals(&pair.to_client), 0, "limit {limit}");
        assert_eq!(pair.peak_client, limit, "limit {limit}");
        assert_eq!(pair.peak_server, limit, "limit {limit}");
    }
}

/// The limit learned late: requests asked at once, before the server's
/// SETTINGS arrive, all go out (the client knows no limit yet); the server
/// refuses those beyond its limit (RST_STREAM REFUSED_STREAM), and the client
/// asks them again on new streams as others end, keeping to the limit it has
/// learned meanwhile. Here the refusals come back with the first responses,
/// so they cost bytes, not time: the page ends when it would have with the
/// limit known (8 requests: 8 round trips at a limit of 1, 4 at 2, 2 at 6).
#[test]
fn a_limit_learned_late_costs_a_refusal_then_a_retry() {
    let site: Vec<(String, usize)> = (0..8).map(|i| (format!("/r{i}"), 5_000)).collect();
    let site: Vec<(&str, usize)> = site.iter().map(|(p, n)| (p.as_str(), *n)).collect();
    for limit in [1usize, 2, 6] {
        let mut pair = Pair::new(limit as u32, LARGE_WINDOW, &site);
        for (req, (path, _)) in site.iter().enumerate() {
            pair.request(req, 0, path);
        }
        pair.flush();
        assert_eq!(pair.client.open_streams(), 8, "no limit known yet");
        pair.run();

        assert_eq!(refusals(&pair.to_client), 8 - limit, "limit {limit}");
        assert_eq!(pair.peak_server, limit, "the server kept its limit");
        let outcomes = pair.outcomes();
        for (req, (path, len)) in site.iter().enumerate() {
            let o = &outcomes[&req];
            assert_eq!((o.status, o.body.len(), &o.failed), (200, *len, &None));
            let sent = if req < limit { 1 } else { 2 };
            assert_eq!(o.sent, sent, "limit {limit}, {path}: refused once");
        }
        // Streams 1, 3, … accepted or refused, then the refused ones again.
        let ids: Vec<u32> = pair.paths().into_keys().collect();
        let expected: Vec<u32> = (0..16 - limit as u32).map(|i| 2 * i + 1).collect();
        assert_eq!(ids, expected, "limit {limit}");
        let last = outcomes.values().filter_map(|o| o.done).max();
        let batches = 8usize.div_ceil(limit) as Ms;
        assert_eq!(last, Some(batches * RTT), "limit {limit}: as if known");
    }
}

/// Flow control: a response larger than the client's 64 KiB window (the
/// default, on the stream and, new in 3.1, on the session) goes out 64 KiB
/// per round trip, each more only because the client's WINDOW_UPDATEs (half
/// a window at a time) reach the server. The window, not the link, sets the
/// pace: 200 000 bytes take four round trips, and one with a 10 MiB window.
#[test]
fn a_body_beyond_the_window_completes_because_window_updates_flow() {
    let site = [("/big", 200_000)];
    let mut pair = Pair::new(100, INITIAL_WINDOW, &site);
    pair.request(0, 0, "/big");
    pair.run();
    let o = &pair.outcomes()[&0];
    assert_eq!(o.body, pair.site["/big"]);
    assert_eq!(o.done, Some(4 * RTT));
    // What the server sent per flight: never more than the window.
    let mut flights: BTreeMap<Ms, usize> = BTreeMap::new();
    for (at, _, n) in data_frames(&pair.to_client) {
        *flights.entry(at).or_default() += n;
    }
    assert_eq!(
        flights.into_iter().collect::<Vec<_>>(),
        [(50, 65_536), (150, 65_536), (250, 65_536), (350, 3_392)]
    );
    // Half a window given back each time, for the stream and the session;
    // none for the last bytes of the stream.
    let mut updates = window_updates(&pair.to_server);
    updates.sort_unstable();
    assert_eq!(updates, [[(0, 32_768); 6], [(1, 32_768); 6]].concat());

    // A 10 MiB window, announced in the client's first bytes: one round trip.
    let mut pair = Pair::new(100, LARGE_WINDOW, &site);
    assert!(matches!(
        &pair.to_server.trace[..],
        [
            (0, Frame::Settings { entries, .. }),
            (0, Frame::WindowUpdate { stream_id: 0, delta })
        ] if entries == &[(0, settings::INITIAL_WINDOW_SIZE, LARGE_WINDOW)]
            && *delta == LARGE_WINDOW - INITIAL_WINDOW
    ));
    pair.request(0, 0, "/big");
    pair.run();
    assert_eq!(pair.outcomes()[&0].done, Some(RTT));
    assert_eq!(window_updates(&pair.to_server).len(), 1, "only the first");
}

/// Without WINDOW_UPDATEs (a link that loses them), the same response stops
/// at exactly the window: the server has more to send and may not, and the
/// session waits for ever (its caller's timeout is what ends it).
#[test]
fn without_window_updates_a_response_stalls_at_the_window() {
    let mut pair = Pair::new(100, INITIAL_WINDOW, &[("/big", 200_000)]);
    pair.to_server.lose = |f| matches!(f, Frame::WindowUpdate { .. });
    pair.request(0, 0, "/big");
    pair.run();
    let o = &pair.outcomes()[&0];
    assert_eq!((o.body.len(), o.done), (INITIAL_WINDOW as usize, None));
    assert_eq!(pair.now, RTT, "nothing moved after the first flight");
    assert_eq!(pair.client.open_streams(), 1);
    assert_eq!(pair.server.open_streams(), 1);
    assert!(!pair.server.can_write(), "the server waits for window");
}

/// The session's window (new in SPDY/3.1) bounds all streams together: two
/// responses of one priority share the first 64 KiB, 32 KiB each (round
/// robin), though each stream's own window would allow 64 KiB.
#[test]
fn streams_share_the_sessions_window() {
    let site = [("/a", 100_000), ("/b", 100_000)];
    let mut pair = Pair::new(100, INITIAL_WINDOW, &site);
    pair.request(0, 1, "/a");
    pair.request(1, 1, "/b");
    pair.run_until(DELAY);
    let first: Vec<(u32, usize)> = data_frames(&pair.to_client)
        .into_iter()
        .map(|(_, id, n)| (id, n))
        .collect();
    assert_eq!(first, [(1, 16_384), (3, 16_384), (1, 16_384), (3, 16_384)]);
    pair.run();
    let outcomes = pair.outcomes();
    assert_eq!(outcomes[&0].body, pair.site["/a"]);
    assert_eq!(outcomes[&1].body, pair.site["/b"]);
    // 200 000 bytes at 64 KiB per round trip: four round trips.
    assert_eq!(outcomes[&1].done, Some(4 * RTT));
}

/// GOAWAY from the server. A session error on its side (here a client
/// SETTINGS_INITIAL_WINDOW_SIZE over 2^31-1, injected on the link) makes the server say GOAWAY with the last stream it saw, write nothing
/// more and close. For the client, the streams above that id were never
/// processed and fail at once (safe to ask elsewhere); the streams at or below
/// it do not fail by the GOAWAY: they wait, and fail only when the
/// connection ends; and a request asked after the GOAWAY fails at once.
#[test]
fn goaway_names_the_last_stream_the_server_saw() {
    let mut pair = Pair::new(100, INITIAL_WINDOW, &[("/big", 100_000), ("/b", 10)]);
    pair.request(0, 0, "/big");
    pair.flush();
    // At 50 ms the server answers stream 1 with a window's worth.
    pair.run_until(60);
    let mut bad = Vec::new();
    Encoder::default().encode(
        &Frame::Settings {
            clear: false,
            entries: vec![(0, settings::INITIAL_WINDOW_SIZE, 0x8000_0000)],
        },
        &mut bad,
    );
    pair.to_server.send(pair.now, &bad);
    // Stream 3 goes out behind it.
    pair.request(1, 0, "/b");
    pair.flush();
    pair.run();

    assert!(pair.server.failure().unwrap().contains("over 2^31-1"));
    assert_eq!(
        pair.to_client.trace.last(),
        Some(&(
            110,
            Frame::GoAway {
                last_good_stream_id: 1,
                status: 1
            }
        ))
    );
    assert!(pair.client.going_away());
    let outcomes = pair.outcomes();
    // Stream 1: a window's worth, then the connection ended under it.
    assert_eq!(outcomes[&0].body.len(), 65_536);
    assert_eq!((outcomes[&0].done, &outcomes[&0].failed), (None, &None));
    assert_eq!(pair.abandoned, Some(vec![0]));
    // Stream 3: above the last good one.
    assert_eq!(
        outcomes[&1].failed,
        Some(StreamError::GoneAway(Some(1))),
        "status 1: PROTOCOL_ERROR"
    );
    // Asked after the GOAWAY: fails at once, nothing sent.
    pair.request(2, 0, "/b");
    pair.flush();
    assert_eq!(
        pair.outcomes()[&2],
        Outcome {
            failed: Some(StreamError::GoneAway(None)),
            ..Outcome::default()
        }
    );
}

/// GOAWAY from the client. A server that sends beyond the session's window
/// (a DATA frame injected on the link) breaks the session: the client says
/// GOAWAY (last good stream 0: it accepts no streams from the server),
/// fails every request it has and closes. The server, told GOAWAY, refuses
/// new streams and finishes once its streams are done.
#[test]
fn a_server_overrunning_the_window_gets_goaway_and_every_request_fails() {
    let mut pair = Pair::new(100, INITIAL_WINDOW, &[("/", 1_000)]);
    pair.request(0, 0, "/");
    pair.request(1, 0, "/");
    pair.flush();
    let mut overrun = Vec::new();
    Encoder::default().encode(
        &Frame::Data {
            stream_id: 1,
            fin: false,
            data: vec![0; INITIAL_WINDOW as usize + 1],
        },
        &mut overrun,
    );
    pair.to_client.send(pair.now, &overrun);
    pair.run();

    let window = SessionError::Window(FlowError::Overrun {
        window: INITIAL_WINDOW as i64,
        got: INITIAL_WINDOW as usize + 1,
    });
    assert_eq!(pair.client.failure(), Some(&window));
    let outcomes = pair.outcomes();
    for req in [0, 1] {
        assert_eq!(
            outcomes[&req].failed,
            Some(StreamError::Session(window.clone()))
        );
    }
    assert_eq!(
        pair.to_server.trace.last(),
        Some(&(
            DELAY,
            Frame::GoAway {
                last_good_stream_id: 0,
                status: 1
            }
        ))
    );
    assert!(pair.server.finished());
}

/// A session with all of the above at once: refusals and retries (limit 2,
/// requests asked before the SETTINGS), WINDOW_UPDATEs (the default window,
/// bodies beyond it), priorities.
fn busy_pair(cuts_to_server: Vec<usize>, cuts_to_client: Vec<usize>) -> Pair {
    let mut pair = Pair::new(2, INITIAL_WINDOW, &page_site());
    pair.to_server.cuts = cuts_to_server;
    pair.to_client.cuts = cuts_to_client;
    for (req, &(path, priority, _)) in PAGE.iter().enumerate() {
        pair.request(req, priority, path);
    }
    pair.run();
    pair
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// However the bytes are cut on their way (a frame split anywhere, even
    /// inside a compressed header block or a DATA frame's head), both
    /// sessions decode the same frames and do the same things: the same
    /// events at the same times, the same frames on the wire both ways.
    #[test]
    fn any_cut_of_the_byte_streams_gives_the_same_session(
        to_server in prop::collection::vec(1usize..700, 0..6),
        to_client in prop::collection::vec(1usize..20_000, 0..6),
    ) {
        let whole = busy_pair(Vec::new(), Vec::new());
        let cut = busy_pair(to_server, to_client);
        prop_assert_eq!(&cut.events, &whole.events);
        prop_assert_eq!(&cut.to_server.trace, &whole.to_server.trace);
        prop_assert_eq!(&cut.to_client.trace, &whole.to_client.trace);
    }
}

/// `busy_pair` does what it says: the property above is about a session
/// with refusals, retries, window updates and every response complete.
#[test]
fn the_busy_session_of_the_property_is_busy() {
    let pair = busy_pair(Vec::new(), Vec::new());
    assert_eq!(refusals(&pair.to_client), 5);
    assert!(!window_updates(&pair.to_server).is_empty());
    let outcomes = pair.outcomes();
    for (req, &(path, ..)) in PAGE.iter().enumerate() {
        let o = &outcomes[&req];
        assert!(o.done.is_some() && o.failed.is_none(), "{path}: {o:?}");
        if let Some(b) = pair.site.get(path) {
            assert_eq!(&o.body, b, "{path}");
        }
    }
}

// Two defects these tests found (issue 32), fixed in `ClientSession`.

/// `ClientSession` promises "highest priority first, in order within one",
/// refused requests too: each keeps its place in the order asked (before the
/// fix, each refusal was put back at the queue's front, and /r5, /r4, /r3,
/// /r2 went out again in reverse).
#[test]
fn refused_requests_are_asked_again_in_the_order_they_were_asked() {
    let site: Vec<(String, usize)> = (0..6).map(|i| (format!("/r{i}"), 5_000)).collect();
    let site: Vec<(&str, usize)> = site.iter().map(|(p, n)| (p.as_str(), *n)).collect();
    let mut pair = Pair::new(2, LARGE_WINDOW, &site);
    for (req, (path, _)) in site.iter().enumerate() {
        pair.request(req, 0, path);
    }
    pair.run();
    let retried: Vec<String> = pair.paths().into_values().skip(6).collect();
    assert_eq!(retried, ["/r2", "/r3", "/r4", "/r5"]);
}

/// A server may announce MAX_CONCURRENT_STREAMS 0 (SPDY/3 allows it: no new
/// streams for now). The client then opens none and fails its requests at
/// once, naming the limit (before the fix, it clamped the limit to 1 and
/// retried each refusal every round trip, 10 in the first second, for ever).
#[test]
fn a_limit_of_zero_does_not_make_the_client_retry_every_round_trip() {
    let mut pair = Pair::new(0, INITIAL_WINDOW, &[("/", 10)]);
    pair.run();
    pair.request(0, 0, "/");
    pair.run_until(1_000);
    let syns = pair.paths().len();
    assert!(
        syns <= 1,
        "{syns} SYN_STREAMs and {} refusals in 1 s",
        refusals(&pair.to_client)
    );
    let failed = pair.outcomes()[&0].failed.clone();
    assert_eq!(failed, Some(StreamError::Refused(0)));
    assert!(
        failed
            .unwrap()
            .to_string()
            .contains("MAX_CONCURRENT_STREAMS 0"),
        "the error names the limit"
    );
}
