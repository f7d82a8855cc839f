//! `--tcp-pacing` (`Knobs::tcp_pacing`) reaches the kernel: the built-in
//! server, started with the knob on, sets SO_MAX_PACING_RATE on the TCP
//! connection it accepts, which turns on Linux's internal TCP pacing; `ss
//! -tin` prints a socket's maximum pacing rate (`pacing_rate RATE/MAX`; older
//! iproute2: `max_pacing_rate MAX`) only when it is not unlimited. With the
//! knob off the accepted socket has none.

use server::{Ca, Knobs, Offer, Server, ServerOptions};
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpListener, TcpStream};
use std::process::Command;
use std::time::Duration;

/// Guards the client's read against a hang; it measures nothing.
const PATIENCE: Duration = Duration::from_secs(20);

/// `ss -tin`'s line of the server's side of its one established connection.
fn server_socket_state(port: u16) -> String {
    let out = Command::new("ss")
        .args([
            "-tin",
            "state",
            "established",
            "sport",
            "=",
            &format!(":{port}"),
        ])
        .output()
        .expect("ss (iproute2) runs");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains(&format!(":{port}")),
        "no connection in {text}"
    );
    text
}

/// Starts the built-in server (cleartext HTTP/1.1 on loopback) with
/// `tcp_pacing`, has it answer one request, and returns what `ss` says of
/// the socket it accepted.
fn accepted_socket_with(tcp_pacing: bool) -> String {
    let site = site::builtin("icons", site::DEFAULT_SEED).unwrap();
    let opts = ServerOptions {
        offer: Offer::parse("http").unwrap(),
        knobs: Knobs {
            tcp_pacing,
            ..Knobs::default()
        },
        ..ServerOptions::default()
    };
    let loopback = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let server = Server::new(site, opts, &Ca::new().unwrap(), &[loopback]).unwrap();
    let listener = TcpListener::bind((loopback, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(server.run(vec![listener], Vec::new(), async {
            let _ = stopped.await;
        }))
    });
    let mut client = TcpStream::connect((loopback, port)).unwrap();
    client.set_read_timeout(Some(PATIENCE)).unwrap();
    // An answer means the server has accepted the connection and tuned it.
    client
        .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 12];
    client.read_exact(&mut first).unwrap();
    assert!(first.starts_with(b"HTTP/1.1 "), "{first:?}");
    let state = server_socket_state(port);
    drop(client);
    let _ = stop.send(());
    serving.join().unwrap().unwrap();
    state
}

/// The maximum pacing rate `ss -tin` prints for a socket, if any.
fn max_pacing_rate(state: &str) -> Option<&str> {
    let mut words = state.split_whitespace();
    while let Some(word) = words.next() {
        match word {
            "max_pacing_rate" => return words.next(),
            "pacing_rate" => return words.next()?.split_once('/').map(|(_, max)| max),
            _ => {}
        }
    }
    None
}

#[test]
fn the_servers_accepted_socket_is_paced_with_the_knob_on_only() {
    let on = accepted_socket_with(true);
    // u64::MAX - 1 bytes/s (147573952589676412928bps by iproute2 6.x).
    assert!(max_pacing_rate(&on).is_some(), "tcp_pacing on: {on}");
    let off = accepted_socket_with(false);
    assert_eq!(max_pacing_rate(&off), None, "tcp_pacing off: {off}");
}
