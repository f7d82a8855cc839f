//! The prioritization test (`client::priority_test`) run by the model's page
//! loader against in-process servers on the loopback: over h2c against the
//! `h2` crate's server, whose received bytes are kept so that the HEADERS
//! frames' priority fields (Chromium's dependency chain and weights) and the
//! `priority` headers can be read back; and over HTTP/1.1 (Chrome's six
//! connections per host) against a minimal keep-alive server. Checks the
//! order of the requests in the HAR entries (each released at the right
//! completion), never their durations.

use bytes::Bytes;
use client::priority_test::{Tag, HIGHS, LOWS, REFS};
use client::{PageConfig, PageResult};
use proto::Protocol;
use std::collections::{HashMap, HashSet};
use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpListener;

const HOST: &str = "prio.test";
const IMAGE_BYTES: usize = 20_000;

/// A server-side stream that keeps every byte the client sent.
struct Tap<T> {
    inner: T,
    seen: Arc<Mutex<Vec<u8>>>,
}

impl<T: AsyncRead + Unpin> AsyncRead for Tap<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        let new = buf.filled()[before..].to_vec();
        self.seen.lock().unwrap().extend_from_slice(&new);
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Tap<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

fn body_of(path: &str) -> (&'static str, Bytes) {
    if path == "/" {
        (
            "text/html",
            Bytes::from_static(b"<!doctype html><title>priorities</title>"),
        )
    } else {
        ("image/png", Bytes::from(vec![7u8; IMAGE_BYTES]))
    }
}

/// What the h2 server saw: the client's bytes, and per request its stream
/// id, path and `priority` header.
#[derive(Default)]
struct Seen {
    bytes: Arc<Mutex<Vec<u8>>>,
    requests: Mutex<Vec<(u32, String, Option<String>)>>,
}

async fn h2_server(listener: TcpListener, seen: Arc<Seen>) {
    while let Ok((tcp, _)) = listener.accept().await {
        let seen = seen.clone();
        tokio::spawn(async move {
            let tap = Tap {
                inner: tcp,
                seen: seen.bytes.clone(),
            };
            let Ok(mut conn) = h2::server::handshake(tap).await else {
                return;
            };
            while let Some(Ok((request, mut respond))) = conn.accept().await {
                let path = request
                    .uri()
                    .path_and_query()
                    .map_or("/".to_string(), |p| p.to_string());
                let priority = request
                    .headers()
                    .get("priority")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                let id = u32::from(respond.stream_id());
                seen.requests
                    .lock()
                    .unwrap()
                    .push((id, path.clone(), priority));
                tokio::spawn(async move {
                    let (kind, body) = body_of(&path);
                    let response = http::Response::builder()
                        .status(200)
                        .header("content-type", kind)
                        .body(())
                        .unwrap();
                    if let Ok(mut stream) = respond.send_response(response, false) {
                        let _ = stream.send_data(body, true);
                    }
                });
            }
        });
    }
}

/// A keep-alive HTTP/1.1 server: one request at a time per connection.
async fn h1_server(listener: TcpListener, connections: Arc<Mutex<usize>>) {
    while let Ok((mut tcp, _)) = listener.accept().await {
        *connections.lock().unwrap() += 1;
        tokio::spawn(async move {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                let end = loop {
                    if let Some(at) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break at + 4;
                    }
                    match tcp.read(&mut chunk).await {
                        Ok(n) if n > 0 => buf.extend_from_slice(&chunk[..n]),
                        _ => return,
                    }
                };
                let head = String::from_utf8_lossy(&buf[..end]).to_string();
                buf.drain(..end);
                let path = head.split(' ').nth(1).unwrap_or("/").to_string();
                let (kind, body) = body_of(&path);
                let mut out = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\n\r\n",
                    body.len()
                )
                .into_bytes();
                out.extend_from_slice(&body);
                if tcp.write_all(&out).await.is_err() {
                    return;
                }
            }
        });
    }
}

fn config(protocol: Protocol, port: u16) -> PageConfig {
    PageConfig {
        protocol,
        tls13_only: None,
        knobs: client::Knobs::default(),
        root: (HOST.to_string(), "/".to_string()),
        resolve: HashMap::from([(HOST.to_string(), IpAddr::V4(Ipv4Addr::LOCALHOST))]),
        ca: rustls::pki_types::CertificateDer::from(Vec::new()),
        http_port: port,
        https_port: port,
        timeout: Duration::from_secs(120),
        tls_sessions: None,
        cache: None,
        replay: None,
    }
}

/// The test's HAR entries in order: every request once, each released at
/// the completion the test names.
fn check_sequence(result: &PageResult) {
    assert_eq!(result.error, None);
    let all = 1 + REFS + LOWS + HIGHS;
    assert_eq!(result.entries.len(), all as usize);
    let at = |path: &str| {
        let e = result
            .entries
            .iter()
            .find(|e| e.path == path)
            .unwrap_or_else(|| panic!("{path} missing"));
        assert_eq!(e.host, HOST);
        assert_eq!(e.status, 200);
        (e.started_ms, e.started_ms + e.time_ms)
    };
    // Float sums of the same instants: allow rounding.
    let after = |a: f64, b: f64| a + 1e-6 >= b;
    let (_, doc_end) = at("/");
    let (r1_start, r1_end) = at(&Tag::Ref(1).path());
    let (r2_start, r2_end) = at(&Tag::Ref(2).path());
    assert!(after(r1_start, doc_end));
    assert!(after(r2_start, r1_end));
    let mut low_ends = Vec::new();
    for n in 1..=LOWS {
        let (start, end) = at(&Tag::Low(n).path());
        assert!(after(start, r2_end), "low {n}");
        low_ends.push(end);
    }
    low_ends.sort_by(f64::total_cmp);
    let (h1_start, h1_end) = at(&Tag::High(1).path());
    let (h2_start, _) = at(&Tag::High(2).path());
    assert!(after(h1_start, low_ends[1]), "high 1 after two lows");
    assert!(after(h2_start, h1_end));
    let bytes: u64 = result.entries.iter().map(|e| e.body_bytes).sum();
    assert!(bytes >= u64::from(all - 1) * IMAGE_BYTES as u64);
}

/// The HEADERS frames a client sent: stream id → (exclusive, parent, weight).
fn priority_fields(bytes: &[u8]) -> HashMap<u32, (bool, u32, u16)> {
    use proto::h2::frame::{HEADERS, PREFACE, PRIORITY};
    let (frames, _) = testkit::h2::split(&bytes[PREFACE.len()..]);
    frames
        .into_iter()
        .filter(|f| f.kind == HEADERS)
        .map(|f| {
            let id = f.stream;
            assert_eq!(
                f.flags & PRIORITY,
                PRIORITY,
                "stream {id}: HEADERS without PRIORITY"
            );
            let p = &f.payload;
            let dep = u32::from_be_bytes([p[0], p[1], p[2], p[3]]);
            (
                id,
                (
                    dep & 0x8000_0000 != 0,
                    dep & 0x7fff_ffff,
                    u16::from(p[4]) + 1,
                ),
            )
        })
        .collect()
}

/// `whole_chain`: the lows' HEADERS all go out before any low ends (one
/// thread: the request tasks run before the connection task writes).
async fn h2_run(whole_chain: bool) {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Seen::default());
    let server = tokio::spawn(h2_server(listener, seen.clone()));
    let result = client::priority_test::run(&config(Protocol::H2c, port)).await;
    server.abort();
    check_sequence(&result);
    assert_eq!(result.connections, 1, "one session to the page's host");

    let requests = seen.requests.lock().unwrap().clone();
    let fields = priority_fields(&seen.bytes.lock().unwrap());
    let by_path: HashMap<&str, (u32, Option<&str>)> = requests
        .iter()
        .map(|(id, p, h)| (p.as_str(), (*id, h.as_deref())))
        .collect();
    let stream = |path: &str| by_path[path].0;
    // The `priority` headers: the document HIGHEST incremental, the
    // references and lows LOWEST (urgency 3 left out), the highs MEDIUM.
    assert_eq!(by_path["/"].1, Some("u=0, i"));
    for role in (1..=REFS).map(Tag::Ref).chain((1..=LOWS).map(Tag::Low)) {
        assert_eq!(by_path[role.path().as_str()].1, Some("i"), "{role:?}");
    }
    for n in 1..=HIGHS {
        assert_eq!(by_path[Tag::High(n).path().as_str()].1, Some("u=1, i"));
    }
    // The PRIORITY fields: every dependency exclusive; the document and the
    // references alone on the root (each ended before the next began).
    assert!(fields.values().all(|f| f.0), "{fields:?}");
    assert_eq!(fields[&stream("/")], (true, 0, 256));
    for n in 1..=REFS {
        assert_eq!(fields[&stream(&Tag::Ref(n).path())], (true, 0, 147));
    }
    // The lows: one chain in the order their HEADERS went out — when all
    // went out before any ended (`whole_chain`); else each hangs under the
    // last low still open, or the root, or a high sent before it: on
    // threads a low's task can send after two lows ended and the first high
    // went out (the lab's model runs on one thread, as Chromium's network
    // stack does, and sends in the page's order).
    let mut lows: Vec<u32> = (1..=LOWS).map(|n| stream(&Tag::Low(n).path())).collect();
    lows.sort();
    let mut parent = 0;
    for id in &lows {
        let (exclusive, on, weight) = fields[id];
        assert!(exclusive && weight == 147, "low on stream {id}");
        if whole_chain {
            assert_eq!(on, parent, "low on stream {id}");
        } else {
            let highs: Vec<u32> = (1..=HIGHS).map(|n| stream(&Tag::High(n).path())).collect();
            assert!(
                on == 0 || ((lows.contains(&on) || highs.contains(&on)) && on < *id),
                "low on stream {id} hangs under {on}: lows {lows:?}, fields {fields:?}"
            );
        }
        parent = *id;
    }
    // The highs: MEDIUM, ahead of every LOWEST stream: on the root (nothing
    // of their band or above open), exclusively — the lows now under them.
    for n in 1..=HIGHS {
        assert_eq!(fields[&stream(&Tag::High(n).path())], (true, 0, 220));
    }
    let ids: HashSet<u32> = requests.iter().map(|r| r.0).collect();
    assert_eq!(ids.len(), requests.len());
}

#[tokio::test]
async fn over_h2_the_test_runs_with_chromes_priority_signals() {
    h2_run(true).await;
}

/// On a multi-threaded runtime the connection task may write a HEADERS
/// frame before its request registered the stream's priority: the writer
/// waits for it, and the signals are Chromium's (a low may end, on the
/// loopback, before the next low's HEADERS goes out: it has left the chain).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_h2_on_threads_the_signals_are_the_same() {
    h2_run(false).await;
}

#[tokio::test]
async fn over_http1_the_test_runs_on_six_connections() {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let opened = Arc::new(Mutex::new(0));
    let server = tokio::spawn(h1_server(listener, opened.clone()));
    let result = client::priority_test::run(&config(Protocol::Http, port)).await;
    server.abort();
    check_sequence(&result);
    assert_eq!(result.connections, 6, "Chrome's six per host");
    assert_eq!(*opened.lock().unwrap(), 6);
}
