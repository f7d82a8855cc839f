//! Real TCP through a testbed: the server's first flight, seen in the link's
//! packet log, is `--iw` segments; and `warm_metrics`: with it the kernel
//! remembers a destination's TCP metrics (`ip tcp_metrics`) after a
//! connection closes, as a 2013 kernel did between back-to-back runs; without
//! it (the default, `tcp_no_metrics_save=1`) it remembers nothing and every
//! connection starts cold.

use link::{first_flights, DirectionSpec, LinkSpec, PacketLog};
use netns::{server_addr, Side, Testbed, TestbedSpec};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

/// Sends `bytes` from the server namespace to the client over one TCP
/// connection, read to the end and closed.
fn transfer(tb: &Testbed, bytes: usize) {
    let addr = SocketAddr::from((server_addr(1), 8080));
    let listener = tb
        .namespace(Side::Server)
        .run(move || TcpListener::bind(addr))
        .unwrap();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.write_all(&vec![7u8; bytes]).unwrap();
    });
    let mut c = tb
        .namespace(Side::Client)
        .run(move || TcpStream::connect(addr))
        .unwrap();
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap();
    server.join().unwrap();
    assert_eq!(got.len(), bytes);
}

fn first_flight(iw: u32) -> Vec<usize> {
    let d = DirectionSpec {
        delay: Duration::from_millis(50),
        ..Default::default()
    };
    let spec = TestbedSpec {
        link: LinkSpec {
            up: d.clone(),
            down: d,
        },
        iw: Some(iw),
        ..Default::default()
    };
    let log = PacketLog::new();
    let tb = Testbed::start_observed(spec, vec![Box::new(log.clone())]).unwrap();
    transfer(&tb, 200_000);
    tb.shutdown().unwrap();
    first_flights(&log.entries())
}

#[test]
fn iw_3_10_16_give_first_flights_of_3_10_16_segments() {
    for iw in [3, 10, 16] {
        assert_eq!(first_flight(iw), vec![iw as usize], "--iw {iw}");
    }
}

/// What `ip tcp_metrics show` lists in the server's namespace after one
/// transfer to the client and back, closed.
fn metrics_after_one_transfer(warm_metrics: bool) -> String {
    let spec = TestbedSpec {
        warm_metrics,
        ..Default::default()
    };
    let tb = Testbed::start(spec).unwrap();
    transfer(&tb, 300_000);
    std::thread::sleep(Duration::from_millis(200));
    // A process started from a thread inside the namespace lives in it.
    let out = tb
        .namespace(Side::Server)
        .run(|| {
            std::process::Command::new("ip")
                .args(["tcp_metrics", "show"])
                .output()
        })
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn warm_metrics_keep_the_destination_and_cold_ones_do_not() {
    let client = netns::CLIENT_ADDR.to_string();
    let warm = metrics_after_one_transfer(true);
    assert!(warm.contains(&client), "warm: {warm:?}");
    let cold = metrics_after_one_transfer(false);
    assert!(!cold.contains(&client), "cold: {cold:?}");
}
