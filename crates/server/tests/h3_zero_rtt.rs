//! h3 with 0-RTT taken (`Knobs::early_data`, a repeat view's server): a
//! client whose ClientHello needs two Initial datagrams — Chromium's, with its
//! X25519MLKEM768 key share — is answered. The server used to hand the
//! connection to h3 (`into_0rtt`) at the first Initial, before the client's
//! transport parameters were in; h3's control stream then waited on a stream
//! limit of 0 that quinn never woke it from, and no request was ever answered
//! (every Chromium h3 load of a repeat/both Trial hung).

use bytes::Buf;
use server::{Ca, Knobs, Offer, Server, ServerOptions};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;
use testkit::relay::Pass;

/// A request must be answered within this; it guards against a hang, it
/// measures nothing.
const PATIENCE: Duration = Duration::from_secs(20);

/// Fetches `/` from `addr` over h3 with a ClientHello of `alpn_padding`
/// more ALPN names than h3 (each 40 bytes): the response's status.
async fn fetch(addr: SocketAddr, host: &str, ca: &Ca, alpn_padding: usize) -> u16 {
    let alpn = std::iter::once(b"h3".to_vec())
        .chain((0..alpn_padding).map(|i| format!("x-padding-{i:030}").into_bytes()))
        .collect();
    let tls = testkit::h3::tls13(ca.der(), alpn);
    let client = testkit::h3::client_config(Arc::new(tls), quinn::TransportConfig::default());
    let endpoint = testkit::h3::endpoint(client);
    let conn = endpoint.connect(addr, host).unwrap().await.unwrap();
    let (mut driver, mut send) = h3::client::new(h3_quinn::Connection::new(conn))
        .await
        .unwrap();
    tokio::spawn(async move { std::future::poll_fn(|cx| driver.poll_close(cx)).await });
    let req = http::Request::get(format!("https://{host}/"))
        .body(())
        .unwrap();
    let mut stream = send.send_request(req).await.unwrap();
    stream.finish().await.unwrap();
    let status = stream.recv_response().await.unwrap().status().as_u16();
    while let Some(mut chunk) = stream.recv_data().await.unwrap() {
        chunk.advance(chunk.remaining());
    }
    status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_hello_of_two_datagrams_is_answered_with_0rtt_on() {
    server::install_crypto_provider();
    let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let host = site.hosts()[0].to_string();
    let ca = Ca::new().unwrap();
    let local = IpAddr::V4(Ipv4Addr::LOCALHOST);
    let opts = ServerOptions {
        offer: Offer::parse("h3").unwrap(),
        knobs: Knobs {
            early_data: true,
            ..Knobs::default()
        },
        cc: None,
        iw: None,
    };
    let udp = UdpSocket::bind((local, 0)).unwrap();
    let addr = udp.local_addr().unwrap();
    let server = Server::new(site, opts, &ca, &[local])
        .unwrap()
        .with_quic(vec![udp]);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.run(Vec::new(), Vec::new(), async {
        let _ = stopped.await;
    }));
    // One datagram of ClientHello, then one of about 2.4 KB: two Initials.
    // The second Initial comes after the server accepted the first.
    for padding in [0, 60] {
        // Every datagram from the client after its first is held back 50 ms
        // (as a slow link spaces a ClientHello's two Initials).
        let mut first = true;
        let relay = testkit::relay::udp(addr, move || {
            if std::mem::take(&mut first) {
                Pass::Now
            } else {
                Pass::After(Duration::from_millis(50))
            }
        })
        .await;
        let status = tokio::time::timeout(PATIENCE, fetch(relay, &host, &ca, padding))
            .await
            .unwrap_or_else(|_| panic!("no answer with {padding} ALPN names more"));
        assert!((200..500).contains(&status), "{status}");
    }
    let _ = stop.send(());
    let _ = serving.await;
}
