//! h3's first flight, seen in the link's packet log, is `--iw` segments' worth
//! of bytes (`iw × server::quic::QUIC_MSS`, within one datagram), as
//! netns/tests/tcp_on_testbed.rs shows TCP's first flight is `--iw` segments.
//!
//! QUIC's packets are encrypted, so the flight is found by time: the link
//! delays each way by 50 ms, so nothing the server sends in the 95 ms after
//! the first packet of its response can have been paced by an
//! acknowledgement of that response. The handshake's own flight (before the
//! request arrives) is left out: quinn does not grow the window for it, since
//! the server is application-limited then.

use link::{Direction, DirectionSpec, EventKind, LinkSpec, PacketLog};
use netns::{server_addr, Side, Testbed, TestbedSpec};
use proto::Protocol;
use server::{Ca, Offer, Server, ServerOptions};
use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::time::Duration;

const ONE_WAY: Duration = Duration::from_millis(50);

/// The UDP payload bytes of the server's first response flight, and the body
/// length received.
fn first_flight(iw: u32) -> (u64, usize) {
    let d = DirectionSpec {
        delay: ONE_WAY,
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
    let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let big = (0..site.resources.len())
        .max_by_key(|&i| site.resources[i].size)
        .unwrap();
    let (host, path, size) = {
        let r = &site.resources[big];
        (r.host.clone(), r.path.clone(), r.size)
    };
    assert!(size as u64 > 2 * iw as u64 * server::quic::QUIC_MSS);
    let addr = SocketAddr::from((server_addr(1), 443));
    let sock = tb
        .namespace(Side::Server)
        .run(move || UdpSocket::bind(addr))
        .unwrap();
    let ca = Ca::new().unwrap();
    let server = Server::new(
        site,
        ServerOptions {
            offer: Offer::of(&[Protocol::H3]),
            iw: Some(iw),
            cc: Some("cubic".into()),
            ..Default::default()
        },
        &ca,
        &[IpAddr::V4(server_addr(1))],
    )
    .unwrap()
    .with_quic(vec![sock]);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(server.run(vec![], vec![], async move {
            let _ = stopped.await;
        }))
    });
    let ca_der = ca.der();
    let got = tb
        .namespace(Side::Client)
        .run(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(async move {
                use client::conn::{client_tls, h3, Event};
                let tls = client_tls(Protocol::H3, ca_der, None);
                let (c, _, _) = h3::dial(addr, None, &host, tls)
                    .await
                    .map_err(|e| io::Error::other(e.to_string()))?;
                let _endpoint = c.endpoint;
                let driver = tokio::spawn(h3::drive(c.driver));
                let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
                tokio::spawn(h3::request(c.send.clone(), 0, 0, host, path, tx, None));
                let mut bytes = 0;
                while let Some(ev) = rx.recv().await {
                    match ev {
                        Event::Data { data, .. } => bytes += data.len(),
                        Event::Done { .. } => break,
                        Event::Failed { error, .. } => {
                            return Err(io::Error::other(error.to_string()))
                        }
                        _ => {}
                    }
                }
                driver.abort();
                Ok(bytes)
            })
        })
        .unwrap();
    let _ = stop.send(());
    serving.join().unwrap().unwrap();
    tb.shutdown().unwrap();
    assert_eq!(got, size);

    // The server's datagrams as they enter the link.
    let sent: Vec<_> = log
        .entries()
        .into_iter()
        .filter(|e| e.dir == Direction::Down && e.kind == EventKind::Arrive)
        .filter_map(|e| e.headers.map(|h| (e.time, h)))
        .filter(|(_, h)| h.protocol == link::packet::PROTO_UDP && h.src_port == 443)
        .collect();
    let handshake = sent[0].0;
    let (t0, _) = *sent
        .iter()
        .find(|(t, _)| t.saturating_since(handshake) >= ONE_WAY)
        .expect("a response after the handshake");
    let flight = sent
        .iter()
        .filter(|(t, _)| {
            *t >= t0 && t.saturating_since(t0) < 2 * ONE_WAY - Duration::from_millis(5)
        })
        .map(|(_, h)| h.payload as u64)
        .sum();
    (flight, size)
}

#[test]
fn h3_first_flights_are_iw_segments_worth_of_bytes() {
    for iw in [10, 20] {
        let (flight, _) = first_flight(iw);
        let want = iw as u64 * server::quic::QUIC_MSS;
        // Within one datagram: quinn fills the window with whole packets.
        assert!(
            flight.abs_diff(want) < 1500,
            "--iw {iw}: first flight {flight} B, want {want} B (± one datagram)"
        );
    }
}
