//! The built-in server's QUIC and HTTP/3 against hostile peers: each test
//! runs one attack on `spdylab serve`'s h3 while legitimate h3 clients
//! (spdylab's own, on quinn + h3, and aioquic, an independent one) keep
//! fetching the front page, and checks that the server stays up and serves
//! afterwards, that its peak RSS (VmHWM) stays under `RSS_BOUND_KIB`, that
//! every legitimate request succeeded and, for the attacks that never
//! validate their address, that the server sent each address at most 3× what
//! it received from it (RFC 9000 §8.1). The server's CPU time (utime + stime)
//! is recorded. Attack traffic is crafted by hand: client Initials from
//! quinn-proto driven without I/O over std UDP sockets, raw HTTP/3 frames and
//! QPACK instructions on quinn streams. Each test prints one row of the table
//! in docs/hardening.md (`cargo test --release --workspace --test cli --
//! hostile::every_attack_over_quic --nocapture`). Bounds are on counts and
//! bytes, never on time.

use crate::common;
use crate::hostile::{Lab, Legit, Tally, HOST, LEGIT_MIN, RSS_BOUND_KIB};
use bytes::Buf;
use proto::h2::hpack_int;
use std::net::UdpSocket;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One QUIC siege at a time (a TCP siege of `hostile` may run beside it).
static SERIAL_QUIC: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The server offers h3 (UDP on its TLS port) besides h2 and https.
const PROTO: &[&str] = &["--proto", "https,h2,h3"];

/// A legitimate request must be answered within this (a hung request is a
/// failure, not a hung test); generous, and no assertion is on time.
const LEGIT_PATIENCE: Duration = Duration::from_secs(60);

/// HTTP/3 error codes (RFC 9114 §8.1, RFC 9204 §6) by name.
fn h3_error(code: u64) -> String {
    let name = match code {
        0x100 => "H3_NO_ERROR",
        0x101 => "H3_GENERAL_PROTOCOL_ERROR",
        0x102 => "H3_INTERNAL_ERROR",
        0x103 => "H3_STREAM_CREATION_ERROR",
        0x104 => "H3_CLOSED_CRITICAL_STREAM",
        0x105 => "H3_FRAME_UNEXPECTED",
        0x106 => "H3_FRAME_ERROR",
        0x107 => "H3_EXCESSIVE_LOAD",
        0x108 => "H3_ID_ERROR",
        0x109 => "H3_SETTINGS_ERROR",
        0x10a => "H3_MISSING_SETTINGS",
        0x10b => "H3_REQUEST_REJECTED",
        0x10c => "H3_REQUEST_CANCELLED",
        0x10d => "H3_REQUEST_INCOMPLETE",
        0x10e => "H3_MESSAGE_ERROR",
        0x10f => "H3_CONNECT_ERROR",
        0x110 => "H3_VERSION_FALLBACK",
        0x200 => "QPACK_DECOMPRESSION_FAILED",
        0x201 => "QPACK_ENCODER_STREAM_ERROR",
        0x202 => "QPACK_DECODER_STREAM_ERROR",
        0 => "0",
        _ => return format!("error {code:#x}"),
    };
    name.to_string()
}

// ---- the server's CPU time ----

/// The server's CPU time so far (user + system), seconds.
fn cpu_s(lab: &Lab) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", lab.served.pid()))
        .expect("the server is running");
    // After the command's ")" come fields 3, 4, …: utime is field 14, stime 15.
    let after = &stat[stat.rfind(')').unwrap() + 1..];
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    // SAFETY: sysconf(3) has no memory arguments.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1);
    ticks as f64 / hz as f64
}

// ---- the legitimate clients ----

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn ca_of(lab: &Lab) -> rustls::pki_types::CertificateDer<'static> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::from_pem_file(&lab.ca).unwrap()
}

/// `GET /` with spdylab's h3 client (quinn + h3, `client::conn::h3::dial`),
/// on a connection of its own.
fn ours(lab: &Lab, rt: &tokio::runtime::Runtime) -> Result<(), String> {
    let tls = client::conn::client_tls(proto::Protocol::H3, ca_of(lab), None);
    let addr = lab.https();
    rt.block_on(async move {
        let fetch = async {
            let (c, _, _) = client::conn::h3::dial(addr, None, HOST, tls)
                .await
                .map_err(|e| e.to_string())?;
            let client::conn::h3::Connection {
                mut send,
                driver,
                endpoint,
            } = c;
            let drive = tokio::spawn(client::conn::h3::drive(driver));
            let req = http::Request::get(format!("https://{HOST}/"))
                .body(())
                .map_err(|e| e.to_string())?;
            let got = async {
                let mut s = send.send_request(req).await?;
                s.finish().await?;
                let resp = s.recv_response().await?;
                let mut n = 0;
                while let Some(mut chunk) = s.recv_data().await? {
                    n += chunk.remaining();
                    chunk.advance(chunk.remaining());
                }
                Ok::<_, h3::error::StreamError>((resp.status().as_u16(), n))
            }
            .await;
            drive.abort();
            endpoint.close(0u32.into(), b"");
            match got {
                Ok((200, n)) if n > 0 => Ok(()),
                Ok((status, n)) => Err(format!("ours: status {status}, {n} bytes")),
                Err(e) => Err(format!("ours: {e}")),
            }
        };
        tokio::time::timeout(LEGIT_PATIENCE, fetch)
            .await
            .unwrap_or_else(|_| Err("ours: no answer in 60 s".into()))
    })
}

/// `GET /` with aioquic (tests/aioquic_fetch.py), on a connection of its own.
fn aioquic(lab: &Lab, dir: &Path) -> Result<(), String> {
    let plan = dir.join("plan.json");
    std::fs::write(&plan, format!("[[0, \"{HOST}\", \"/\"]]")).unwrap();
    let out = std::process::Command::new("/usr/bin/python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/aioquic_fetch.py"
        ))
        .arg(&lab.ca)
        .arg(lab.https().port().to_string())
        .arg(dir)
        .arg(&plan)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    if out.status.success() && text.contains("\"200\", \"h3\"") {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("");
        Err(format!("aioquic: {} {last}", text.trim()))
    }
}

fn have_aioquic() -> bool {
    std::process::Command::new("/usr/bin/python3")
        .args(["-c", "import aioquic"])
        .status()
        .is_ok_and(|s| s.success())
}

/// Sets the flag when dropped: the legitimate client stops even when the
/// attack panics (the scope would otherwise wait for it forever).
struct Over<'a>(&'a AtomicBool);

impl Drop for Over<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Runs `attack` against a fresh h3 server of `site` (`extra` arguments to
/// `spdylab serve`), round after round until each legitimate client (ours and
/// aioquic, taking turns, fetching the front page all along) has made at
/// least `LEGIT_MIN` requests; then checks that the server is up, bounded
/// and serving, and that every legitimate request succeeded; prints the
/// table row. False if it cannot run here (aioquic missing).
fn siege_h3(
    name: &str,
    params: &str,
    site: &str,
    extra: &[&str],
    mut attack: impl FnMut(&Lab, &tokio::runtime::Runtime) -> Tally,
) -> bool {
    if !have_aioquic() {
        common::cannot_run("aioquic is not installed (pip install aioquic)");
        return false;
    }
    let _one = SERIAL_QUIC.lock().unwrap_or_else(|e| e.into_inner());
    let mut args = PROTO.to_vec();
    args.extend_from_slice(extra);
    let lab = Lab::start_with(site, &args);
    let scratch = common::TempDir::new("hostile-h3");
    let legit_rt = runtime();
    ours(&lab, &legit_rt).expect("the server serves h3 (ours) before the attack");
    aioquic(&lab, &scratch.0).expect("the server serves h3 (aioquic) before the attack");
    let before = lab.peak_rss_kib();
    let cpu0 = cpu_s(&lab);
    let t0 = Instant::now();
    let attack_over = AtomicBool::new(false);
    let legit_min_done = AtomicBool::new(false);
    let attack_rt = runtime();
    let (outcome, rounds, legit) = std::thread::scope(|s| {
        let legit = s.spawn(|| {
            // [ours, aioquic]
            let mut l = [Legit::default(), Legit::default()];
            let mut i = 0;
            let enough = |l: &[Legit; 2]| l.iter().all(|c| c.ok + c.failed.len() >= LEGIT_MIN);
            while !attack_over.load(Ordering::SeqCst) || !enough(&l) {
                let t = Instant::now();
                let got = if i % 2 == 0 {
                    ours(&lab, &legit_rt)
                } else {
                    aioquic(&lab, &scratch.0)
                };
                let c = &mut l[i % 2];
                match got {
                    Ok(()) => {
                        c.ok += 1;
                        c.ms.push(t.elapsed().as_secs_f64() * 1e3);
                    }
                    Err(e) => c.failed.push(e),
                }
                i += 1;
                if enough(&l) {
                    legit_min_done.store(true, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            l
        });
        let over = Over(&attack_over);
        let mut outcome = Tally::default();
        let mut rounds = 0;
        while rounds == 0 || !legit_min_done.load(Ordering::SeqCst) {
            outcome.merge(attack(&lab, &attack_rt));
            rounds += 1;
        }
        drop(over);
        (outcome, rounds, legit.join().unwrap())
    });
    let secs = t0.elapsed().as_secs_f64();
    let cpu = cpu_s(&lab) - cpu0;
    assert!(lab.alive(), "{name}: the server died ({})", outcome.words());
    ours(&lab, &legit_rt).expect("the server serves h3 (ours) after the attack");
    aioquic(&lab, &scratch.0).expect("the server serves h3 (aioquic) after the attack");
    let peak = lab.peak_rss_kib();
    let share = |c: &Legit| {
        let total = c.ok + c.failed.len();
        format!("{}/{total}", c.ok)
    };
    let p99 = legit[0].p99().max(legit[1].p99());
    println!(
        "| {name} | {params}; {rounds} round(s) | {} | {} MiB (idle {} MiB) | {cpu:.1} s in {secs:.0} s | {} | {} | {p99:.0} ms |",
        outcome.words(),
        peak / 1024,
        before / 1024,
        share(&legit[0]),
        share(&legit[1]),
    );
    for (who, c) in ["ours", "aioquic"].iter().zip(&legit) {
        assert!(
            c.failed.is_empty(),
            "{name}: {} of {} legitimate requests ({who}) failed: {:?}",
            c.failed.len(),
            c.ok + c.failed.len(),
            &c.failed[..c.failed.len().min(5)]
        );
    }
    assert!(
        peak < RSS_BOUND_KIB,
        "{name}: peak RSS {peak} KiB over {RSS_BOUND_KIB}"
    );
    true
}

// ---- HTTP/3 and QPACK by hand ----

const HEADERS: u64 = 0x01;

/// A QPACK field section for `GET path` on HOST over https, from the static
/// table (RFC 9204 Appendix A), plus `extra` literal fields; no dynamic
/// table (Required Insert Count 0, Base 0).
fn get_section(path: &str, extra: &[(&[u8], &[u8])]) -> Vec<u8> {
    // :method GET (17), :scheme https (23): indexed static, 11 T=1 index.
    let mut b = vec![0x00, 0x00, 0xc0 | 17, 0xc0 | 23];
    // :path (1) and :authority (0): literal with static name reference, 01 N T=1.
    for (index, value) in [(1, path.as_bytes()), (0, HOST.as_bytes())] {
        hpack_int(&mut b, 0x50, 4, index);
        hpack_int(&mut b, 0x00, 7, value.len());
        b.extend_from_slice(value);
    }
    // Literal field line with literal name: 001 N H=0, 3-bit name length.
    for (name, value) in extra {
        hpack_int(&mut b, 0x20, 3, name.len());
        b.extend_from_slice(name);
        hpack_int(&mut b, 0x00, 7, value.len());
        b.extend_from_slice(value);
    }
    b
}

/// The HEADERS frame of `GET path`.
fn get_frame(path: &str) -> Vec<u8> {
    let mut f = Vec::new();
    testkit::h3::frame(&mut f, HEADERS, &get_section(path, &[]));
    f
}

/// The status of a response's first HEADERS frame, as h3's QPACK encoder
/// writes it (static, no dynamic table, Huffman-coded literals): `:status
/// 200` is static entry 25; `431` a literal (Huffman `69 90 ff`) under the
/// name of static entry 24.
fn status_of(section: &[u8]) -> String {
    match section.get(2..) {
        Some([0xd9, ..]) => "200".into(),
        Some([0x5f, 0x09, 0x83, 0x69, 0x90, 0xff, ..]) => "431".into(),
        Some(rest) => format!("other ({:02x?})", &rest[..rest.len().min(6)]),
        None => "empty".into(),
    }
}

/// Reads the response on `r` up to its first HEADERS frame: its status, or
/// how the stream or connection ended instead.
async fn response(r: &mut quinn::RecvStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        // Frame header: type and length varints.
        let mut at = 0;
        let mut fields = [0u64; 2];
        let mut complete = true;
        for f in fields.iter_mut() {
            let Some((value, len)) = proto::varint::decode(&buf[at..]) else {
                complete = false;
                break;
            };
            *f = value;
            at += len;
        }
        if complete {
            let (kind, len) = (fields[0], fields[1] as usize);
            if buf.len() >= at + len {
                if kind == HEADERS {
                    return status_of(&buf[at..at + len]);
                }
                buf.drain(..at + len);
                continue;
            }
        }
        match r.read(&mut chunk).await {
            Ok(Some(n)) => buf.extend_from_slice(&chunk[..n]),
            Ok(None) => return "stream ended without a response".into(),
            Err(quinn::ReadError::Reset(code)) => {
                return format!("reset by the server {}", h3_error(code.into_inner()))
            }
            Err(quinn::ReadError::ConnectionLost(e)) => return conn_end(&e),
            Err(e) => return e.to_string(),
        }
    }
}

/// How a connection ended, named shortly.
fn conn_end(e: &quinn::ConnectionError) -> String {
    match e {
        quinn::ConnectionError::ApplicationClosed(c) => {
            format!("connection closed {}", h3_error(c.error_code.into_inner()))
        }
        quinn::ConnectionError::ConnectionClosed(c) => {
            format!("QUIC CONNECTION_CLOSE {}", c.error_code)
        }
        quinn::ConnectionError::TimedOut => "connection timed out".into(),
        quinn::ConnectionError::Reset => "stateless reset".into(),
        quinn::ConnectionError::LocallyClosed => "closed by us".into(),
        e => e.to_string(),
    }
}

/// Our QUIC client configuration (the browser model's TLS: ALPN h3, the
/// lab's CA) with `transport`.
fn quic_client(lab: &Lab, transport: quinn::TransportConfig) -> quinn::ClientConfig {
    let tls = client::conn::client_tls(proto::Protocol::H3, ca_of(lab), None);
    testkit::h3::client_config(tls, transport)
}

/// A client endpoint on its own UDP socket.
fn endpoint(lab: &Lab, transport: quinn::TransportConfig) -> quinn::Endpoint {
    testkit::h3::endpoint(quic_client(lab, transport))
}

/// A QUIC connection speaking HTTP/3 by hand: its control stream is open
/// (with empty SETTINGS) and must stay so while the connection lives (a
/// closed control stream is a connection error).
struct RawH3 {
    conn: quinn::Connection,
    control: quinn::SendStream,
}

async fn raw_h3(ep: &quinn::Endpoint, lab: &Lab) -> Result<RawH3, String> {
    let conn = ep
        .connect(lab.https(), HOST)
        .map_err(|e| e.to_string())?
        .await
        .map_err(|e| e.to_string())?;
    let mut control = conn.open_uni().await.map_err(|e| e.to_string())?;
    // Stream type 0x00 (control), then SETTINGS (0x04) of length 0.
    control
        .write_all(&[0x00, 0x04, 0x00])
        .await
        .map_err(|e| e.to_string())?;
    Ok(RawH3 { conn, control })
}

/// How a write of an attack's bytes ended.
fn write_end(r: Result<Result<(), quinn::WriteError>, tokio::time::error::Elapsed>) -> String {
    match r {
        Ok(Ok(())) => "ran to our budget".into(),
        Ok(Err(quinn::WriteError::Stopped(code))) => {
            format!("STOP_SENDING {}", h3_error(code.into_inner()))
        }
        Ok(Err(quinn::WriteError::ConnectionLost(e))) => conn_end(&e),
        Ok(Err(e)) => e.to_string(),
        Err(_) => "stalled: no flow-control credit for 5 s".into(),
    }
}

// ---- attacks ----

/// What one unvalidated address sent and received.
#[derive(Default, Clone, Copy)]
struct Flow {
    sent: u64,
    received: u64,
    /// Retry packets among what the server sent.
    retries: u64,
}

/// `n` client Initials (each a new connection's first datagram, 1200 bytes
/// and up), made by quinn-proto without I/O and never continued.
fn initials(lab: &Lab, n: usize) -> Vec<Vec<u8>> {
    let config = quic_client(lab, quinn::TransportConfig::default());
    let mut ep = quinn_proto::Endpoint::new(
        Arc::new(quinn_proto::EndpointConfig::default()),
        None,
        false,
        None,
    );
    let now = Instant::now();
    (0..n)
        .filter_map(|_| {
            let (_, mut conn) = ep.connect(now, config.clone(), lab.https(), HOST).ok()?;
            let mut buf = Vec::with_capacity(1500);
            let t = conn.poll_transmit(now, 1, &mut buf)?;
            buf.truncate(t.size);
            Some(buf)
        })
        .collect()
}

/// Sends `datagrams` to the server from `sockets` (in turn), 100 every
/// 10 ms (so that they reach the server rather than overflow its socket's
/// buffer), retrying while a socket's buffer is full; counts the bytes sent
/// per socket in `flows`.
fn spray(lab: &Lab, sockets: &[UdpSocket], datagrams: &[Vec<u8>], flows: &mut [Flow]) {
    for (i, d) in datagrams.iter().enumerate() {
        if i % 100 == 99 {
            std::thread::sleep(Duration::from_millis(10));
        }
        let k = i % sockets.len();
        loop {
            match sockets[k].send_to(d, lab.https()) {
                Ok(n) => {
                    flows[k].sent += n as u64;
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(1))
                }
                Err(_) => break,
            }
        }
    }
}

/// Reads what the server sends to `sockets` for `wait`, adding it to `flows`.
fn listen(sockets: &[UdpSocket], flows: &mut [Flow], wait: Duration) -> Duration {
    let t0 = Instant::now();
    let mut last = Duration::ZERO;
    let mut buf = vec![0u8; 65_536];
    while t0.elapsed() < wait {
        let mut any = false;
        for (s, f) in sockets.iter().zip(flows.iter_mut()) {
            while let Ok(n) = s.recv(&mut buf) {
                f.received += n as u64;
                // Long header, fixed bit, type 3.
                f.retries += u64::from(n > 0 && buf[0] & 0xf0 == 0xf0);
                any = true;
            }
        }
        if any {
            last = t0.elapsed();
        } else {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    last
}

fn udp_sockets(n: usize) -> Vec<UdpSocket> {
    (0..n)
        .map(|_| {
            let s = UdpSocket::bind("127.0.0.1:0").unwrap();
            s.set_nonblocking(true).unwrap();
            s
        })
        .collect()
}

fn amplification_words(t: &mut Tally, flows: &[Flow]) {
    let sent: u64 = flows.iter().map(|f| f.sent).sum();
    let received: u64 = flows.iter().map(|f| f.received).sum();
    t.add("KiB sent by the attacker", sent >> 10);
    t.add("KiB the server sent back", received >> 10);
    let retries: u64 = flows.iter().map(|f| f.retries).sum();
    if retries > 0 {
        t.add("Retry packets from the server", retries);
    }
}

/// The most the server sent an address for each byte it received from it.
fn worst_ratio(flows: &[Flow]) -> f64 {
    flows
        .iter()
        .filter(|f| f.sent > 0)
        .map(|f| f.received as f64 / f.sent as f64)
        .fold(0.0, f64::max)
}

fn assert_amplification(name: &str, flows: &[Flow]) {
    println!(
        "  ({name}: at worst the server sent an address {:.2}× what it received)",
        worst_ratio(flows)
    );
    for (i, f) in flows.iter().enumerate() {
        assert!(
            f.received <= 3 * f.sent,
            "{name}: the server sent address #{i} {} bytes for {} received (over 3×)",
            f.received,
            f.sent
        );
    }
}

/// Initial flood: many UDP sockets (source ports) each send client Initials
/// of new connections and never answer; what the server sends back is read
/// and must stay within 3× per address.
fn h3_initial_flood() {
    const SOCKETS: usize = 64;
    const PER_ROUND: usize = 3000;
    let mut all = Vec::new();
    let name = "QUIC Initial flood";
    let _ = siege_h3(
        name,
        &format!("{SOCKETS} UDP sockets, {PER_ROUND} client Initials a round (new connections, never continued); the replies read for 2 s"),
        "icons",
        &[],
        |lab, _| {
            let datagrams = initials(lab, PER_ROUND);
            let sockets = udp_sockets(SOCKETS);
            let mut flows = vec![Flow::default(); SOCKETS];
            spray(lab, &sockets, &datagrams, &mut flows);
            listen(&sockets, &mut flows, Duration::from_secs(2));
            let mut t = Tally::default();
            t.add("Initials sent", datagrams.len() as u64);
            amplification_words(&mut t, &flows);
            all.extend(flows);
            t
        },
    );
    assert_amplification(name, &all);
}

/// Amplification: clients that send one Initial and never answer; everything
/// the server sends them (its first flight and retransmissions) is counted
/// for 12 s. With the 3-certificate RSA chain the first flight alone would
/// exceed 3×.
fn h3_amplification_limit() {
    const CLIENTS: usize = 50;
    let mut all = Vec::new();
    let mut silent_after = Duration::ZERO;
    let name = "QUIC amplification (unvalidated address)";
    let s = siege_h3(
        name,
        &format!("{CLIENTS} UDP sockets × 1 Initial, never answered, listened to for 12 s; --cert rsa2048 (root → intermediate → leaf)"),
        "icons",
        &["--cert", "rsa2048"],
        |lab, _| {
            let datagrams = initials(lab, CLIENTS);
            let sockets = udp_sockets(CLIENTS);
            let mut flows = vec![Flow::default(); CLIENTS];
            spray(lab, &sockets, &datagrams, &mut flows);
            silent_after = silent_after.max(listen(&sockets, &mut flows, Duration::from_secs(12)));
            let mut t = Tally::default();
            amplification_words(&mut t, &flows);
            t.add(
                format!(
                    "per address: {} B received, at most {} B sent",
                    flows[0].sent,
                    flows.iter().map(|f| f.received).max().unwrap_or(0)
                ),
                1,
            );
            all.extend(flows);
            t
        },
    );
    if !s {
        return;
    }
    println!("  (the last reply came {silent_after:.1?} after the Initials)");
    assert_amplification(name, &all);
    assert!(
        all.iter().all(|f| f.received > 0),
        "an Initial went unanswered"
    );
}

/// Connection-ID churn: one connection migrates to a new UDP socket (source
/// port) before each request, so the server validates a new path and the
/// client moves to a new connection ID every time; keys are updated too.
fn h3_connection_id_churn() {
    const MOVES: usize = 200;
    let _ = siege_h3(
        "QUIC connection-ID churn and migration",
        &format!("1 conn × {MOVES} moves to a new source port (new path, new CID, key update), a GET after each"),
        "icons",
        &[],
        |lab, rt| {
            rt.block_on(async {
                let mut t = Tally::default();
                let ep = endpoint(lab, quinn::TransportConfig::default());
                let h = match raw_h3(&ep, lab).await {
                    Ok(h) => h,
                    Err(e) => {
                        t.add(format!("connect failed: {e}"), 1);
                        return t;
                    }
                };
                let get = get_section("/", &[]);
                for _ in 0..MOVES {
                    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                    if ep.rebind(sock).is_err() {
                        t.add("rebind failed", 1);
                        continue;
                    }
                    h.conn.force_key_update();
                    t.add(format!("GET after a move: {}", request(&h, &get).await), 1);
                    if let Some(e) = h.conn.close_reason() {
                        t.add(conn_end(&e), 1);
                        break;
                    }
                }
                let stats = h.conn.stats();
                t.add("PATH_CHALLENGE from the server", stats.frame_rx.path_challenge);
                t.add("RETIRE_CONNECTION_ID from us", stats.frame_tx.retire_connection_id);
                t.add("NEW_CONNECTION_ID from the server", stats.frame_rx.new_connection_id);
                h.conn.close(0u32.into(), b"");
                t
            })
        },
    );
}

/// HTTP/3 rapid reset: a request stream opened, its GET sent, and reset
/// (RESET_STREAM and STOP_SENDING, H3_REQUEST_CANCELLED) at once, stream
/// after stream; quinn's client opens a stream only when the server's
/// MAX_STREAMS allows it.
fn h3_rapid_reset() {
    const STREAMS: usize = 20_000;
    let _ = siege_h3(
        "HTTP/3 rapid reset",
        &format!("1 conn × {STREAMS} request streams: HEADERS (GET /) then RESET_STREAM + STOP_SENDING at once"),
        "icons",
        &[],
        |lab, rt| {
            rt.block_on(async {
                let mut t = Tally::default();
                let ep = endpoint(lab, quinn::TransportConfig::default());
                let h = match raw_h3(&ep, lab).await {
                    Ok(h) => h,
                    Err(e) => {
                        t.add(format!("connect failed: {e}"), 1);
                        return t;
                    }
                };
                let get = get_frame("/");
                let cancel = quinn::VarInt::from_u32(0x10c);
                let mut opened = 0u64;
                for _ in 0..STREAMS {
                    match tokio::time::timeout(Duration::from_secs(20), h.conn.open_bi()).await {
                        Ok(Ok((mut s, mut r))) => {
                            let _ = s.write_all(&get).await;
                            let _ = s.reset(cancel);
                            let _ = r.stop(cancel);
                            opened += 1;
                        }
                        Ok(Err(e)) => {
                            t.add(conn_end(&e), 1);
                            break;
                        }
                        Err(_) => {
                            t.add("stalled: no stream credit for 20 s", 1);
                            break;
                        }
                    }
                }
                t.add("streams opened and reset", opened);
                t.add(
                    "connection still open after",
                    u64::from(h.conn.close_reason().is_none()),
                );
                h.conn.close(0u32.into(), b"");
                t
            })
        },
    );
}

/// Stream-open flood: connections that open every request stream the server
/// allows, each with an unfinished HEADERS frame, hold them, and ask for
/// more (quinn's client waits for MAX_STREAMS: the limit holds).
fn h3_stream_open_flood() {
    const CONNS: usize = 20;
    const STREAMS: usize = 150;
    let _ = siege_h3(
        "HTTP/3 stream-open flood",
        &format!("{CONNS} conns × up to {STREAMS} request streams, each an unfinished HEADERS frame (10 of 1 000 bytes), held 3 s"),
        "icons",
        &[],
        |lab, rt| {
            rt.block_on(async {
                let mut t = Tally::default();
                let ep = endpoint(lab, quinn::TransportConfig::default());
                let mut conns = Vec::new();
                let mut streams = Vec::new();
                let mut partial = Vec::new();
                testkit::h3::frame_head(&mut partial, HEADERS, 1000);
                partial.extend_from_slice(&[0u8; 10]);
                for _ in 0..CONNS {
                    let Ok(h) = raw_h3(&ep, lab).await else {
                        t.add("connect failed", 1);
                        continue;
                    };
                    let mut opened = 0;
                    for _ in 0..STREAMS {
                        // Past the server's limit, quinn waits for credit.
                        let Ok(Ok((mut s, r))) =
                            tokio::time::timeout(Duration::from_millis(200), h.conn.open_bi())
                                .await
                        else {
                            break;
                        };
                        let _ = s.write_all(&partial).await;
                        streams.push((s, r));
                        opened += 1;
                    }
                    t.add(format!("conns that could open {opened} streams"), 1);
                    conns.push(h);
                }
                tokio::time::sleep(Duration::from_secs(3)).await;
                let closed = conns
                    .iter()
                    .filter(|h| h.conn.close_reason().is_some())
                    .count();
                t.add("conns closed by the server within 3 s", closed as u64);
                for h in &conns {
                    h.conn.close(0u32.into(), b"");
                }
                t
            })
        },
    );
}

/// Writes `chunk` `times` times on `s`, each write given 5 s: how it ended
/// and the bytes the server took.
async fn pour(s: &mut quinn::SendStream, chunk: &[u8], times: usize) -> (String, u64) {
    let mut sent = 0u64;
    for _ in 0..times {
        let r = tokio::time::timeout(Duration::from_secs(5), s.write_all(chunk)).await;
        if !matches!(r, Ok(Ok(()))) {
            return (write_end(r), sent);
        }
        sent += chunk.len() as u64;
    }
    (write_end(Ok(Ok(()))), sent)
}

/// A request on a new stream of `h` (its HEADERS section `section`, then
/// FIN): the response's status or how the stream or connection ended.
async fn request(h: &RawH3, section: &[u8]) -> String {
    let mut f = Vec::new();
    testkit::h3::frame(&mut f, HEADERS, section);
    let got = async {
        let (mut s, mut r) = match h.conn.open_bi().await {
            Ok(sr) => sr,
            Err(e) => return conn_end(&e),
        };
        let wrote = s.write_all(&f).await;
        let _ = s.finish();
        let answer = response(&mut r).await;
        match wrote {
            Err(quinn::WriteError::Stopped(code)) => {
                format!("STOP_SENDING {}, {answer}", h3_error(code.into_inner()))
            }
            _ => answer,
        }
    };
    tokio::time::timeout(Duration::from_secs(20), got)
        .await
        .unwrap_or_else(|_| "no answer in 20 s".into())
}

/// QPACK abuse on the unidirectional streams (RFC 9204 §4.2): the server
/// advertises a dynamic table of 0 (h3 has none). One connection: an encoder
/// stream setting the capacity to 1 GiB, then a flood of Insert With Literal
/// Name (1 KiB values), then a request that references the dynamic table; a
/// second: a decoder-stream flood (Insert Count Increment); a third: two
/// encoder streams.
fn h3_qpack_encoder_stream_bomb() {
    const MIB: usize = 16;
    let _ = siege_h3(
        "QPACK encoder/decoder-stream bombs, dynamic table over the limit",
        &format!("a round: encoder stream with Set Dynamic Table Capacity 2^30 (server: 0) and {MIB} MiB of Insert With Literal Name, then a GET referencing the dynamic table; a decoder stream of {MIB} MiB of Insert Count Increment; a second encoder stream"),
        "icons",
        &[],
        |lab, rt| {
            rt.block_on(async {
                let mut t = Tally::default();
                let ep = endpoint(lab, quinn::TransportConfig::default());
                // The encoder stream.
                let mut set_cap = vec![0x02];
                hpack_int(&mut set_cap, 0x20, 5, 1 << 30);
                let mut inserts = Vec::new();
                while inserts.len() < 1 << 20 {
                    hpack_int(&mut inserts, 0x40, 5, 6);
                    inserts.extend_from_slice(b"x-bomb");
                    hpack_int(&mut inserts, 0x00, 7, 1024);
                    inserts.extend_from_slice(&[b'a'; 1024]);
                }
                if let Ok(h) = raw_h3(&ep, lab).await {
                    if let Ok(mut enc) = h.conn.open_uni().await {
                        let _ = enc.write_all(&set_cap).await;
                        let (end, sent) = pour(&mut enc, &inserts, MIB).await;
                        t.add(format!("encoder stream: {end}"), 1);
                        t.add("encoder stream KiB taken", sent >> 10);
                        t.add(format!("then GET /: {}", request(&h, &get_section("/", &[])).await), 1);
                        // Required Insert Count 1 (encoded 2), Base 0, indexed dynamic entry 0.
                        t.add(
                            format!("then a GET referencing the dynamic table: {}", request(&h, &[0x02, 0x00, 0x80]).await),
                            1,
                        );
                        drop(enc);
                    }
                    h.conn.close(0u32.into(), b"");
                }
                // The decoder stream: Insert Count Increment 1, over and over.
                if let Ok(h) = raw_h3(&ep, lab).await {
                    if let Ok(mut dec) = h.conn.open_uni().await {
                        let mut incs = vec![0x03];
                        incs.resize(1 << 20, 0x01);
                        let (end, sent) = pour(&mut dec, &incs, MIB).await;
                        t.add(format!("decoder stream: {end}"), 1);
                        t.add("decoder stream KiB taken", sent >> 10);
                        t.add(format!("then GET /: {}", request(&h, &get_section("/", &[])).await), 1);
                    }
                    h.conn.close(0u32.into(), b"");
                }
                // Two encoder streams.
                if let Ok(h) = raw_h3(&ep, lab).await {
                    let mut encs = Vec::new();
                    for _ in 0..2 {
                        if let Ok(mut enc) = h.conn.open_uni().await {
                            let _ = enc.write_all(&[0x02]).await;
                            encs.push(enc);
                        }
                    }
                    t.add(format!("two encoder streams, then GET /: {}", request(&h, &get_section("/", &[])).await), 1);
                    h.conn.close(0u32.into(), b"");
                }
                t
            })
        },
    );
}

/// HEADERS over the size limit: complete field sections with a 1 MiB field;
/// HEADERS frames that declare 1 GiB and keep coming; and an unknown frame
/// type of 1 GiB on the control stream.
fn h3_oversized_headers() {
    const BIG_STREAMS: usize = 20;
    const MIB_EACH: usize = 16;
    let _ = siege_h3(
        "HTTP/3 HEADERS over the size limit",
        &format!("a round: 5 GETs each with a 1 MiB field (whole HEADERS); a GET of 400 B that decodes to 25 KiB; {BIG_STREAMS} streams each a HEADERS frame declaring 1 GiB, {MIB_EACH} MiB sent; a reserved frame type of 1 GiB on the control stream, 64 MiB sent"),
        "icons",
        &[],
        |lab, rt| {
            rt.block_on(async {
                let mut t = Tally::default();
                let ep = endpoint(lab, quinn::TransportConfig::default());
                let big = vec![b'a'; 1 << 20];
                if let Ok(h) = raw_h3(&ep, lab).await {
                    for _ in 0..5 {
                        let section = get_section("/", &[(b"x-big", &big)]);
                        t.add(format!("1 MiB field: {}", request(&h, &section).await), 1);
                    }
                    // 400 B that decode to 25 KiB: static entry 31
                    // (accept-encoding: gzip, deflate, br; 64 B as QPACK counts).
                    let mut section = get_section("/", &[]);
                    section.extend_from_slice(&[0xc0 | 31; 400]);
                    t.add(format!("400 static references (25 KiB): {}", request(&h, &section).await), 1);
                    h.conn.close(0u32.into(), b"");
                }
                if let Ok(h) = raw_h3(&ep, lab).await {
                    let mut head = Vec::new();
                    testkit::h3::frame_head(&mut head, HEADERS, 1 << 30);
                    let chunk = vec![0u8; 1 << 20];
                    let mut pours = tokio::task::JoinSet::new();
                    for _ in 0..BIG_STREAMS {
                        let Ok((mut s, r)) = h.conn.open_bi().await else { break };
                        let head = head.clone();
                        let chunk = chunk.clone();
                        pours.spawn(async move {
                            let _r = r;
                            let _ = s.write_all(&head).await;
                            pour(&mut s, &chunk, MIB_EACH).await
                        });
                    }
                    while let Some(Ok((end, sent))) = pours.join_next().await {
                        t.add(format!("1 GiB HEADERS: {end}"), 1);
                        t.add("1 GiB HEADERS: MiB taken", sent >> 20);
                    }
                    h.conn.close(0u32.into(), b"");
                }
                if let Ok(mut h) = raw_h3(&ep, lab).await {
                    let mut head = Vec::new();
                    testkit::h3::frame_head(&mut head, 0x21, 1 << 30);
                    let _ = h.control.write_all(&head).await;
                    let (end, sent) = pour(&mut h.control, &vec![0u8; 1 << 20], 64).await;
                    t.add(format!("control stream 1 GiB frame: {end}"), 1);
                    t.add("control stream: MiB taken", sent >> 20);
                    h.conn.close(0u32.into(), b"");
                }
                t
            })
        },
    );
}

/// A reader that never extends flow control: connections that ask for a
/// 4 MB resource on every stream the server allows and never read, so the
/// server's responses wait on the client's windows (Chrome's: 6 MiB a
/// stream, 15 MiB a connection), which they fill.
fn h3_slow_reader() {
    const CONNS: usize = 10;
    let dir = common::TempDir::new("hostile-h3-site");
    let site = dir.join("bulk.toml");
    std::fs::write(
        &site,
        format!(
            "name = \"bulk\"\n\n[[resource]]\nurl = \"//{HOST}/\"\nkind = \"html\"\nsize = \"9kb\"\n\n\
             [[resource]]\nurl = \"//{HOST}/big.png\"\nkind = \"png\"\nsize = \"4mb\"\nparent = \"//{HOST}/\"\nreveal = \"body\"\n"
        ),
    )
    .unwrap();
    let _ = siege_h3(
        "HTTP/3 reader that never extends flow control",
        &format!("{CONNS} conns × 100 streams, each GET of a 4 MB resource, never read, held 3 s; client windows 6 MiB a stream, 15 MiB a conn"),
        site.to_str().unwrap(),
        &[],
        |lab, rt| {
            rt.block_on(async {
                let mut t = Tally::default();
                let mut transport = quinn::TransportConfig::default();
                transport
                    .stream_receive_window((6u32 << 20).into())
                    .receive_window((15u32 << 20).into());
                let ep = endpoint(lab, transport);
                let get = get_frame("/big.png");
                let mut conns = Vec::new();
                let mut streams = Vec::new();
                for _ in 0..CONNS {
                    let Ok(h) = raw_h3(&ep, lab).await else {
                        t.add("connect failed", 1);
                        continue;
                    };
                    for _ in 0..100 {
                        let Ok(Ok((mut s, r))) =
                            tokio::time::timeout(Duration::from_secs(5), h.conn.open_bi()).await
                        else {
                            t.add("stream refused", 1);
                            break;
                        };
                        let _ = s.write_all(&get).await;
                        let _ = s.finish();
                        streams.push((s, r));
                    }
                    conns.push(h);
                }
                t.add("requests never read", streams.len() as u64);
                tokio::time::sleep(Duration::from_secs(3)).await;
                let rss = lab
                    .status_field("VmRSS:")
                    .and_then(|v| v.trim_end_matches("kB").trim().parse::<u64>().ok())
                    .unwrap_or(0);
                t.add(format!("server RSS while held: {} MiB", rss >> 10), 1);
                let got: u64 = conns.iter().map(|h| h.conn.stats().udp_rx.bytes).sum();
                t.add("MiB the server sent meanwhile", got >> 20);
                for h in &conns {
                    h.conn.close(0u32.into(), b"");
                }
                t
            })
        },
    );
}

/// Idle QUIC connections: `n` handshakes (h3 control streams open), then
/// nothing for 33 s (the client's own idle timeout is longer, and it sends
/// no PING); then a GET on each, which a server that dropped the
/// connection leaves unanswered.
fn idle_quic(n: usize) {
    let _ = siege_h3(
        "idle QUIC connections",
        &format!("{n} QUIC conns (h3 control stream open, client idle timeout 120 s), then silent for 33 s"),
        "icons",
        &[],
        |lab, rt| {
            rt.block_on(async {
                let mut t = Tally::default();
                let mut transport = quinn::TransportConfig::default();
                transport.max_idle_timeout(Some(
                    quinn::IdleTimeout::try_from(Duration::from_secs(120)).unwrap(),
                ));
                let ep = endpoint(lab, transport);
                let mut dials = tokio::task::JoinSet::new();
                let mut conns = Vec::new();
                let mut failed = 0u64;
                for i in 0..n {
                    let connecting = ep.connect(lab.https(), HOST);
                    dials.spawn(async move {
                        let conn = connecting
                            .map_err(|e| e.to_string())?
                            .await
                            .map_err(|e| e.to_string())?;
                        let mut control = conn.open_uni().await.map_err(|e| e.to_string())?;
                        control
                            .write_all(&[0x00, 0x04, 0x00])
                            .await
                            .map_err(|e| e.to_string())?;
                        Ok::<_, String>(RawH3 { conn, control })
                    });
                    // At most 100 handshakes under way at once.
                    if i % 100 == 99 {
                        while let Some(r) = dials.join_next().await {
                            match r {
                                Ok(Ok(h)) => conns.push(h),
                                _ => failed += 1,
                            }
                        }
                    }
                }
                while let Some(r) = dials.join_next().await {
                    match r {
                        Ok(Ok(h)) => conns.push(h),
                        _ => failed += 1,
                    }
                }
                t.add("conns established", conns.len() as u64);
                if failed > 0 {
                    t.add("conns failed", failed);
                }
                let rss = || {
                    lab.status_field("VmRSS:")
                        .and_then(|v| v.trim_end_matches("kB").trim().parse::<u64>().ok())
                        .unwrap_or(0)
                };
                tokio::time::sleep(Duration::from_secs(5)).await;
                t.add(format!("server RSS with all open: {} MiB", rss() >> 10), 1);
                tokio::time::sleep(Duration::from_secs(28)).await;
                t.add(format!("server RSS after 33 s: {} MiB", rss() >> 10), 1);
                // Then a GET on each: a connection the server dropped gets
                // no answer (quinn rate-limits its stateless resets).
                let mut probes = tokio::task::JoinSet::new();
                for h in &conns {
                    let conn = h.conn.clone();
                    let get = get_frame("/");
                    probes.spawn(tokio::time::timeout(Duration::from_secs(3), async move {
                        let (mut s, mut r) = conn.open_bi().await.ok()?;
                        s.write_all(&get).await.ok()?;
                        let _ = s.finish();
                        Some(response(&mut r).await)
                    }));
                }
                let (mut answered, mut dropped) = (0u64, 0u64);
                while let Some(Ok(r)) = probes.join_next().await {
                    match r {
                        Ok(Some(status)) if status == "200" => answered += 1,
                        _ => dropped += 1,
                    }
                }
                t.add("then a GET on each: answered", answered);
                t.add("then a GET on each: no answer in 3 s (dropped by the server)", dropped);
                for h in &conns {
                    h.conn.close(0u32.into(), b"");
                }
                t
            })
        },
    );
}

fn h3_idle_connections_1000() {
    idle_quic(1000);
}

/// Five times the size: 158 MiB at the peak, about 27 KiB a
/// connection (the server has no limit on established connections).
#[test]
#[ignore]
fn h3_idle_connections_5000() {
    idle_quic(5000);
}

/// This file's attacks, by name, in the order `hostile::every_attack_one_after_another` runs them.
pub(crate) const ATTACKS: [(&str, fn()); 9] = [
    ("h3_initial_flood", h3_initial_flood),
    ("h3_amplification_limit", h3_amplification_limit),
    ("h3_connection_id_churn", h3_connection_id_churn),
    ("h3_rapid_reset", h3_rapid_reset),
    ("h3_stream_open_flood", h3_stream_open_flood),
    ("h3_qpack_encoder_stream_bomb", h3_qpack_encoder_stream_bomb),
    ("h3_oversized_headers", h3_oversized_headers),
    ("h3_slow_reader", h3_slow_reader),
    ("h3_idle_connections_1000", h3_idle_connections_1000),
];
