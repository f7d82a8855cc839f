//! A UDP relay on loopback between a QUIC client and a server: the client
//! sends to the relay's address; each of its datagrams passes on at once,
//! after a while, or not at all, as the test's rule says; the server's
//! datagrams go back to the client unchanged.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::UdpSocket;

/// What becomes of one datagram from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// On to the server now.
    Now,
    /// On to the server after this long.
    After(Duration),
    /// Dropped.
    Drop,
}

/// Starts a relay to `server` on the current tokio runtime: `rule` decides
/// for each datagram from the client, in order. Returns the address the
/// client sends to.
pub async fn udp(
    server: SocketAddr,
    mut rule: impl FnMut() -> Pass + Send + 'static,
) -> SocketAddr {
    let front = Arc::new(
        UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .expect("a UDP socket on loopback"),
    );
    let back = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .expect("a UDP socket on loopback");
    back.connect(server).await.expect("the server's address");
    let back = Arc::new(back);
    let addr = front.local_addr().expect("the relay's address");
    let client = Arc::new(Mutex::new(None::<SocketAddr>));
    let (f, b, c) = (front.clone(), back.clone(), client.clone());
    tokio::spawn(async move {
        let mut buf = vec![0; 65536];
        while let Ok((n, from)) = f.recv_from(&mut buf).await {
            *c.lock().unwrap() = Some(from);
            match rule() {
                Pass::Now => {}
                Pass::After(hold) => tokio::time::sleep(hold).await,
                Pass::Drop => continue,
            }
            let _ = b.send(&buf[..n]).await;
        }
    });
    tokio::spawn(async move {
        let mut buf = vec![0; 65536];
        while let Ok(n) = back.recv(&mut buf).await {
            let to = *client.lock().unwrap();
            if let Some(to) = to {
                let _ = front.send_to(&buf[..n], to).await;
            }
        }
    });
    addr
}
