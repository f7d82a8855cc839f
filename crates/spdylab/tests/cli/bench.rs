//! `spdylab bench` against real servers on loopback: a server stalled for a
//! second shows in the open loop's tail latency (coordinated omission
//! corrected: more slow requests than its connections could have carried one
//! after another) but not in the closed loop's, whose connections only ever
//! wait one at a time; servers that answer with the wrong length or out of
//! order are counted as errors, never as successes.

use crate::common::{fails, json_of, serve, signal, spdylab, Served, TempDir};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

fn bench(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["bench"];
    all.extend_from_slice(args);
    all.push("--json");
    json_of(&spdylab(&all))
}

/// TCP connections established to `port` on loopback (as /proc/net/tcp lists them).
fn established_to(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let local = format!("0100007F:{port:04X}");
    table
        .lines()
        .skip(1)
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[1] == local && f[3] == "01"
        })
        .count()
}

/// At least how many requests of the run took `ms` or more, from `--hdr-out`'s
/// distribution (rows of value, quantile, count so far): those above the first
/// row at or above `ms`.
fn slower_than(hdr: &str, ms: f64) -> u64 {
    let rows: Vec<(f64, u64)> = hdr
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((f.first()?.parse().ok()?, f.get(2)?.parse().ok()?))
        })
        .collect();
    let total = rows.last().map_or(0, |r| r.1);
    total - rows.iter().find(|r| r.0 >= ms).map_or(total, |r| r.1)
}

const CONNECTIONS: u64 = 4;
const STALL: Duration = Duration::from_secs(1);

/// The bench's warmup and measured run, as `with_stall` passes them.
const WARMUP: Duration = Duration::from_millis(500);
const MEASURED: Duration = Duration::from_secs(4);

/// Runs `bench` against the built-in server, which is stopped (SIGSTOP) for
/// `STALL` once the bench's connections are up and its warmup is over; returns
/// the JSON and the latency distribution, or None when the stall did not end
/// inside the measured run (this thread woke too late on a loaded machine).
fn with_stall(args: &[&str]) -> Option<(serde_json::Value, String)> {
    let server: Served = serve(&["--site", "icons"]);
    let url = format!("http://{}/", server.http.unwrap());
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let hdr = std::env::temp_dir().join(format!("spdylab-bench-hdr-{}-{run}", std::process::id()));
    let mut all: Vec<String> = [
        url.as_str(),
        "--host",
        "icons.spdylab.test",
        "-c",
        &CONNECTIONS.to_string(),
        "--warmup",
        &format!("{}ms", WARMUP.as_millis()),
        "-d",
        &format!("{}ms", MEASURED.as_millis()),
        "--hdr-out",
        hdr.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    all.extend(args.iter().map(|s| s.to_string()));
    // The bench's clock starts after this, so its measured run ends after
    // `spawned` + WARMUP + MEASURED.
    let spawned = Instant::now();
    let runner = std::thread::spawn(move || {
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        bench(&refs)
    });
    // The stall must fall inside the measured 4 s: after the connections are up
    // and the warmup is over, well before the end.
    let port = server.http.unwrap().port();
    let deadline = Instant::now() + Duration::from_secs(60);
    while established_to(port) < CONNECTIONS as usize {
        assert!(Instant::now() < deadline, "the bench never connected");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(1000));
    signal(server.pid(), libc::SIGSTOP);
    std::thread::sleep(STALL);
    signal(server.pid(), libc::SIGCONT);
    let inside = spawned.elapsed() < WARMUP + MEASURED;
    let v = runner.join().unwrap();
    let dist = std::fs::read_to_string(&hdr).unwrap_or_else(|e| panic!("--hdr-out: {e}: {v}"));
    let _ = std::fs::remove_file(&hdr);
    inside.then_some((v, dist))
}

/// `with_stall` until the stall falls inside the measured run, three tries.
/// (CI of 44abcc9: an open loop with no request slower than 16 ms, the stall
/// outside its run.)
fn stalled(args: &[&str]) -> (serde_json::Value, String) {
    (0..3)
        .find_map(|_| with_stall(args))
        .expect("in three tries, this thread never stalled the server inside the bench's run")
}

#[test]
fn a_stall_shows_in_the_open_loop_tail_and_not_in_the_closed_loop() {
    let rate = 1000.0;
    let (open, open_hdr) = stalled(&["--rate", "1000"]);
    let (closed, closed_hdr) = stalled(&[]);
    let (o, c) = (&open["latency_ms"], &closed["latency_ms"]);
    assert!(open["errors"].as_object().unwrap().is_empty(), "{open}");
    assert!(closed["errors"].as_object().unwrap().is_empty(), "{closed}");
    let half = STALL.as_secs_f64() * 1e3 / 2.0;
    // A closed loop's connections each wait for one request at a time, so the
    // latencies on one connection add up to at most the run (plus the request
    // that straddles the warmup's end): at most this many requests of `half` or
    // more, however slow the machine.
    let ceiling = |v: &serde_json::Value| {
        CONNECTIONS * ((v["seconds"].as_f64().unwrap() * 1e3 / half).floor() as u64 + 1)
    };
    // Open loop: every request due in the stall's first half was answered after
    // it, and its latency counts from when it was due. At least half of those
    // (`rate` × `half`), far more than any closed loop over as many
    // connections could have shown.
    let open_slow = slower_than(&open_hdr, half);
    assert!(
        open_slow as f64 >= rate * half / 1e3 / 2.0,
        "open loop: {open_slow} requests of {half} ms or more: {o}"
    );
    assert!(open_slow > ceiling(&open), "open loop: {open_slow}: {open}");
    // The first request due after the server stopped (1/rate later at most)
    // waited until it went on.
    assert!(
        o["max"].as_f64().unwrap() >= STALL.as_secs_f64() * 1e3 - 1e3 / rate,
        "open loop: {o}"
    );
    // Closed loop: the stall shows only in the requests in flight at the time.
    let closed_slow = slower_than(&closed_hdr, half);
    assert!(
        closed_slow <= ceiling(&closed),
        "closed loop: {closed_slow} requests of {half} ms or more: {closed}"
    );
    // A request sent after the server stopped waited at least until it went
    // on (less the moment the client took to send it, half the stall at most).
    assert!(c["max"].as_f64().unwrap() >= half, "closed loop: {c}");
}

/// A server that answers every request on /a with 100 bytes and /b with 200,
/// but swaps each pipelined pair (`swap`) or declares a Content-Length longer
/// than the body it sends (`lie`).
fn broken_server(mode: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve_broken(stream, mode));
        }
    });
    addr
}

fn response(len: usize, declared: usize) -> Vec<u8> {
    let mut r = format!("HTTP/1.1 200 OK\r\nContent-Length: {declared}\r\n\r\n").into_bytes();
    r.extend(std::iter::repeat_n(b'x', len));
    r
}

fn serve_broken(mut s: TcpStream, mode: &str) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut pending: Vec<usize> = Vec::new();
    loop {
        let Ok(n) = s.read(&mut chunk) else { return };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            buf.drain(..end + 4);
            pending.push(if head.starts_with("GET /b") { 200 } else { 100 });
        }
        let mut out = Vec::new();
        match mode {
            "swap" => {
                while pending.len() >= 2 {
                    let (a, b) = (pending.remove(0), pending.remove(0));
                    out.extend(response(b, b));
                    out.extend(response(a, a));
                }
            }
            _ => {
                for len in pending.drain(..) {
                    out.extend(response(len - 10, len));
                }
            }
        }
        if s.write_all(&out).is_err() {
            return;
        }
    }
}

#[test]
fn wrong_lengths_and_wrong_order_are_errors_not_successes() {
    let dir = TempDir::new("bench");
    let paths = dir.join("paths");
    std::fs::write(&paths, "/a 100\n/b 200\n").unwrap();
    let paths = paths.display().to_string();

    let addr = broken_server("swap");
    let v = bench(&[
        &format!("http://{addr}/"),
        "--protocol",
        "http-pipelined",
        "--depth",
        "2",
        "-c",
        "2",
        "-d",
        "1s",
        "--warmup",
        "0s",
        "--paths",
        &paths,
    ]);
    assert_eq!(v["requests"].as_u64().unwrap(), 0, "{v}");
    assert!(v["errors"]["length"].as_u64().unwrap_or(0) > 0, "{v}");

    // Without a paths file the first response of a path sets its length.
    let addr = broken_server("lie");
    let v = bench(&[
        &format!("http://{addr}/a"),
        "--protocol",
        "http-pipelined",
        "--depth",
        "2",
        "-c",
        "2",
        "-d",
        "1s",
        "--warmup",
        "0s",
    ]);
    let errors: u64 = v["errors"]
        .as_object()
        .unwrap()
        .values()
        .map(|e| e.as_u64().unwrap())
        .sum();
    assert!(errors > 0, "{v}");
    // Each cycle of a connection passes at most its first response for a good one
    // before the framing breaks (one error); a cycle cut by the end of the run
    // may count its success without its error: at most one per connection.
    assert!(v["requests"].as_u64().unwrap() <= errors + 2, "{v}");
}

#[test]
fn bad_input_is_a_clear_error() {
    for (args, want) in [
        (vec!["ftp://x/"], "must start with http://"),
        (
            vec!["http://127.0.0.1:1/", "--depth", "4"],
            "--depth pipelines HTTP/1.1",
        ),
        (vec!["https://127.0.0.1:1/", "--protocol", "http"], "TLS"),
        (vec!["http://127.0.0.1:1/", "--rate", "0"], "--rate"),
        (
            vec!["--site", "icons", "--protocol", "h3", "--server", "nginx"],
            "HTTP/3",
        ),
        (
            vec!["http://127.0.0.1:1/", "--server", "caddy"],
            "--server serves a --site",
        ),
    ] {
        let mut all = vec!["bench"];
        all.extend_from_slice(&args);
        fails(&all, 2, want);
    }
}

#[test]
fn through_an_emulated_link_every_request_takes_at_least_a_round_trip() {
    for protocol in ["http", "spdy3"] {
        let v = bench(&[
            "--site",
            "icons",
            "--protocol",
            protocol,
            "-c",
            "2",
            "--streams",
            "4",
            "--rtt",
            "50ms",
            "--link-rate",
            "10mbit",
            "-d",
            "1s",
            "--warmup",
            "300ms",
        ]);
        assert!(v["errors"].as_object().unwrap().is_empty(), "{v}");
        assert!(v["requests"].as_u64().unwrap() > 0, "{v}");
        // Physics: nothing is answered faster than the round trip.
        assert!(v["latency_ms"]["p50"].as_f64().unwrap() >= 50.0, "{v}");
        // And at most a request per round trip per stream in flight.
        let in_flight = if protocol == "http" { 2.0 } else { 8.0 };
        assert!(
            v["requests_per_sec"].as_f64().unwrap() <= in_flight / 0.05 * 1.05,
            "{v}"
        );
    }
}

/// A server that closes each connection after `keepalive` responses, as
/// nginx's `keepalive_requests` does: the last one says `Connection: close`.
/// Bodies are chunked (100 bytes in two chunks).
fn closing_server(keepalive: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve_closing(stream, keepalive));
        }
    });
    addr
}

fn serve_closing(mut s: TcpStream, keepalive: usize) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let mut answered = 0;
    loop {
        let Ok(n) = s.read(&mut chunk) else { return };
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        while let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.drain(..end + 4);
            answered += 1;
            let last = answered == keepalive;
            let close = if last { "Connection: close\r\n" } else { "" };
            let body = "28\r\n".to_string() + &"x".repeat(40) + "\r\n3c\r\n" + &"y".repeat(60);
            let r = format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n{close}\r\n{body}\r\n0\r\n\r\n"
            );
            if s.write_all(r.as_bytes()).is_err() || last {
                let _ = s.shutdown(std::net::Shutdown::Both);
                return;
            }
        }
    }
}

#[test]
fn an_announced_close_is_a_reconnect_and_requests_lost_behind_it_are_errors() {
    let addr = closing_server(5);
    let url = format!("http://{addr}/");
    let run = |protocol: &str, depth: &str| {
        bench(&[
            &url,
            "--protocol",
            protocol,
            "--depth",
            depth,
            "-c",
            "4",
            "-d",
            "1s",
            "--warmup",
            "0s",
        ])
    };
    // One request at a time: every close comes with nothing in flight.
    let v = run("http", "1");
    assert!(v["errors"].as_object().unwrap().is_empty(), "{v}");
    assert!(v["requests"].as_u64().unwrap() >= 5, "{v}");
    assert!(v["reconnects"].as_u64().unwrap() > 0, "{v}");
    // Pipelined: what was sent behind the closing response is lost, each an error.
    let v = run("http-pipelined", "8");
    assert!(
        v["errors"]["server-closed"].as_u64().unwrap_or(0) > 0,
        "{v}"
    );
    assert!(v["reconnects"].as_u64().unwrap() > 0, "{v}");
}

/// h2 and h2c (proto's lean client connection) against the built-in server,
/// nginx (h2) and h2o (h2c), h3 over QUIC against the built-in server and caddy (a real h3
/// server), in a testbed: requests counted, none an error — and in site mode
/// every response's body is checked against its resource's exact size — and a
/// wrong expected length (`--paths`) is an error for h2 and h3 as for every protocol.
#[test]
fn multiplexed_protocols_are_counted_and_checked() {
    let dir = TempDir::new("bench-mux");
    let wrong = dir.0.join("paths");
    std::fs::write(&wrong, "/ 1\n").unwrap();
    for (protocol, server) in [
        ("h2", "builtin"),
        ("h2", "nginx"),
        ("h2c", "builtin"),
        ("h2c", "h2o"),
        ("h3", "builtin"),
        ("h3", "caddy"),
    ] {
        let v = bench(&[
            "--site",
            "icons",
            "--protocol",
            protocol,
            "--server",
            server,
            "-c",
            "2",
            "--streams",
            "8",
            "-d",
            "1s",
            "--warmup",
            "300ms",
        ]);
        assert!(
            v["errors"].as_object().unwrap().is_empty(),
            "{server} {protocol}: {v}"
        );
        let requests = v["requests"].as_u64().unwrap();
        assert!(requests > 0, "{server} {protocol}: {v}");
        // At least the smallest resource (a 32×32 PNG is > 60 bytes) per request.
        assert!(
            v["bytes"].as_u64().unwrap() >= requests * 60,
            "{server} {protocol}: {v}"
        );
        assert!(
            v["server_cpu_seconds"].as_f64().unwrap() > 0.0,
            "{server} {protocol}: {v}"
        );
    }
    for protocol in ["h2", "h3"] {
        let out = spdylab(&[
            "bench",
            "--site",
            "icons",
            "--protocol",
            protocol,
            "-c",
            "1",
            "-d",
            "500ms",
            "--warmup",
            "0s",
            "--paths",
            wrong.to_str().unwrap(),
            "--json",
        ]);
        let v = json_of(&out);
        assert_eq!(v["requests"].as_u64(), Some(0), "{protocol}: {v}");
        assert!(
            v["errors"]["length"].as_u64().unwrap() > 0,
            "{protocol}: {v}"
        );
    }
}
