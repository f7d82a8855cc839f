//! The server's first flight, seen in the link's packet log, is `--iw` segments.

use link::{first_flights, DirectionSpec, LinkSpec, PacketLog};
use netns::{server_addr, Side, Testbed, TestbedSpec};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

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
    let addr = SocketAddr::from((server_addr(1), 8080));
    let listener = tb
        .namespace(Side::Server)
        .run(move || TcpListener::bind(addr))
        .unwrap();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.write_all(&vec![7u8; 200_000]).unwrap();
    });
    let mut c = tb
        .namespace(Side::Client)
        .run(move || TcpStream::connect(addr))
        .unwrap();
    let mut got = Vec::new();
    c.read_to_end(&mut got).unwrap();
    server.join().unwrap();
    assert_eq!(got.len(), 200_000);
    tb.shutdown().unwrap();
    first_flights(&log.entries())
}

#[test]
fn iw_3_10_16_give_first_flights_of_3_10_16_segments() {
    for iw in [3, 10, 16] {
        assert_eq!(first_flight(iw), vec![iw as usize], "--iw {iw}");
    }
}
