//! `warm_metrics`: with it the kernel remembers a destination's TCP metrics
//! (`ip tcp_metrics`) after a connection closes, as a 2013 kernel did between
//! back-to-back runs; without it (the default, `tcp_no_metrics_save=1`) it
//! remembers nothing and every connection starts cold.

use netns::{server_addr, Side, Testbed, TestbedSpec};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};

/// What `ip tcp_metrics show` lists in the server's namespace after one
/// transfer to the client and back, closed.
fn metrics_after_one_transfer(warm_metrics: bool) -> String {
    let spec = TestbedSpec {
        warm_metrics,
        ..Default::default()
    };
    let tb = Testbed::start(spec).unwrap();
    let addr = SocketAddr::from((server_addr(1), 8080));
    let listener = tb
        .namespace(Side::Server)
        .run(move || TcpListener::bind(addr))
        .unwrap();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.write_all(&vec![7u8; 300_000]).unwrap();
    });
    let mut c = tb
        .namespace(Side::Client)
        .run(move || TcpStream::connect(addr))
        .unwrap();
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap();
    server.join().unwrap();
    drop(c);
    assert_eq!(got.len(), 300_000);
    std::thread::sleep(std::time::Duration::from_millis(200));
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
