//! `spdylab bench` against real servers on loopback: a server stalled for a
//! second shows in the open loop's tail latency (coordinated omission
//! corrected) but barely in the closed loop's; servers that answer with the
//! wrong length or out of order are counted as errors, never as successes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn serve_icons() -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spdylab"))
        .args([
            "serve",
            "--site",
            "icons",
            "--listen",
            "127.0.0.1:0",
            "--tls-listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("serve prints its addresses").unwrap();
        if line.trim_start().starts_with("http://") {
            break line.rsplit(" on ").next().unwrap().trim().to_string();
        }
    };
    // Keep draining stdout so that the server never blocks on it.
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

fn bench(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_spdylab"))
        .arg("bench")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: a plain kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// Runs `bench` while the server is stopped for one second, 1.5 s after the start.
fn with_stall(args: &[&str]) -> serde_json::Value {
    let (mut server, addr) = serve_icons();
    let url = format!("http://{addr}/");
    let mut all = vec![
        url.as_str(),
        "--host",
        "icons.spdylab.test",
        "-c",
        "4",
        "--warmup",
        "500ms",
        "-d",
        "4s",
    ];
    all.extend_from_slice(args);
    let owned: Vec<String> = all.iter().map(|s| s.to_string()).collect();
    let runner = std::thread::spawn(move || {
        let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
        bench(&refs)
    });
    std::thread::sleep(Duration::from_millis(1500));
    signal(&server, libc::SIGSTOP);
    std::thread::sleep(Duration::from_secs(1));
    signal(&server, libc::SIGCONT);
    let v = runner.join().unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    v
}

#[test]
fn a_stall_shows_in_the_open_loop_tail_and_not_in_the_closed_loop() {
    let open = with_stall(&["--rate", "1000"]);
    let closed = with_stall(&[]);
    let (o, c) = (&open["latency_ms"], &closed["latency_ms"]);
    assert!(open["errors"].as_object().unwrap().is_empty(), "{open}");
    assert!(closed["errors"].as_object().unwrap().is_empty(), "{closed}");
    // About a quarter of the open loop's requests were due during the stall.
    assert!(o["max"].as_f64().unwrap() >= 900.0, "open loop: {o}");
    assert!(o["p99"].as_f64().unwrap() >= 500.0, "open loop: {o}");
    assert!(o["p999"].as_f64().unwrap() >= 500.0, "open loop: {o}");
    // The closed loop sent nothing while stalled: only 4 requests waited.
    assert!(c["max"].as_f64().unwrap() >= 900.0, "closed loop: {c}");
    assert!(c["p99"].as_f64().unwrap() < 500.0, "closed loop: {c}");
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
    let dir = std::env::temp_dir().join(format!("spdylab-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
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
    let _ = std::fs::remove_dir_all(&dir);
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
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_spdylab"))
            .arg("bench")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let msg = String::from_utf8_lossy(&out.stderr);
        assert!(msg.contains(want), "{args:?}: {msg}");
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
