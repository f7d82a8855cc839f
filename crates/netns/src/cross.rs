//! Cross traffic (issue 38) run on a testbed: bulk flows from the server
//! side's cross address (198.18.2.1) to the client namespace (UDP to
//! 198.18.0.3; TCP receivers connect out to their senders),
//! through the same emulated link as the page, so that they share its queue
//! and rate. TCP flows get their congestion control per socket (a
//! namespace-wide default is refused here); a UDP stream is paced at its
//! rate. Each flow is a sender thread in the server namespace and a
//! receiver thread in the client namespace; `stop` ends them and returns
//! what each receiver got. The link's packet log tells the page's share.

use crate::namespace::NetNs;
use link::{CrossFlow, CrossTraffic};
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The client side's address for cross traffic (the page's is 198.18.0.2).
pub const CROSS_CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 3);
/// The server side's address for cross traffic (outside the shards' 198.18.1.0/24).
pub const CROSS_SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 2, 1);
/// A UDP stream's datagram payload.
const UDP_PAYLOAD: usize = 1200;
/// How often a blocked thread looks at the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// Cross traffic running; dropping it stops it too.
pub struct CrossRunning {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    received: Vec<Arc<AtomicU64>>,
}

impl CrossRunning {
    /// Starts every flow of `spec` between `client` and `server`; an error
    /// (a congestion control the kernel refuses, say) names the flow.
    pub fn start(spec: &CrossTraffic, client: &NetNs, server: &NetNs) -> io::Result<CrossRunning> {
        let mut running = CrossRunning {
            stop: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
            received: Vec::new(),
        };
        for flow in &spec.0 {
            match *flow {
                CrossFlow::Tcp { cc, count } => {
                    for _ in 0..count {
                        running.tcp(cc, client, server)?;
                    }
                }
                CrossFlow::Udp { rate } => running.udp(rate.0, client, server)?,
            }
        }
        Ok(running)
    }

    /// Bytes each flow's receiver got so far, in the spec's order.
    pub fn received(&self) -> Vec<u64> {
        self.received
            .iter()
            .map(|r| r.load(Ordering::Relaxed))
            .collect()
    }

    /// Stops every flow and waits for its threads; the bytes each got.
    pub fn stop(mut self) -> Vec<u64> {
        self.halt();
        self.received()
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }

    fn tcp(&mut self, cc: &'static str, client: &NetNs, server: &NetNs) -> io::Result<()> {
        // The sender listens on the cross address and the receiver connects
        // (std binds a listener, not a connecting socket): the flow's server
        // end is 198.18.2.1 whichever client address the kernel picks.
        let listener =
            server.run(|| TcpListener::bind(SocketAddr::from((CROSS_SERVER_ADDR, 0))))?;
        let to = listener.local_addr()?;
        let mut conn = client.run(|| std::net::TcpStream::connect(to))?;
        let (mut sender, _) = listener.accept()?;
        sys::set_tcp_congestion(&sender, cc).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cross traffic {cc}: the kernel refuses TCP_CONGESTION {cc}: {e}"),
            )
        })?;
        conn.set_read_timeout(Some(POLL))?;
        sender.set_write_timeout(Some(POLL))?;
        self.receive(move |buf| conn.read(buf));
        let stop = self.stop.clone();
        self.threads.push(std::thread::spawn(move || {
            let buf = vec![0x5au8; 64 << 10];
            while !stop.load(Ordering::Relaxed) {
                match sender.write(&buf) {
                    Ok(_) => {}
                    Err(e) if timed_out(&e) => {}
                    Err(_) => break,
                }
            }
            let _ = sender.shutdown(std::net::Shutdown::Both);
        }));
        Ok(())
    }

    /// A receiver thread: reads with `read` until stopped, the end of the
    /// stream (0) or an error, counting what it got in a new `received` slot.
    fn receive(&mut self, mut read: impl FnMut(&mut [u8]) -> io::Result<usize> + Send + 'static) {
        let got = Arc::new(AtomicU64::new(0));
        let (stop, count) = (self.stop.clone(), got.clone());
        self.threads.push(std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 << 10];
            while !stop.load(Ordering::Relaxed) {
                match read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        count.fetch_add(n as u64, Ordering::Relaxed);
                    }
                    Err(e) if timed_out(&e) => {}
                    Err(_) => break,
                }
            }
        }));
        self.received.push(got);
    }

    fn udp(&mut self, bps: u64, client: &NetNs, server: &NetNs) -> io::Result<()> {
        let receiver = client.run(|| UdpSocket::bind(SocketAddr::from((CROSS_CLIENT_ADDR, 0))))?;
        let to = receiver.local_addr()?;
        let sender = server.run(|| UdpSocket::bind(SocketAddr::from((CROSS_SERVER_ADDR, 0))))?;
        sender.connect(to)?;
        receiver.set_read_timeout(Some(POLL))?;
        self.receive(move |buf| receiver.recv(buf));
        let stop = self.stop.clone();
        self.threads.push(std::thread::spawn(move || {
            // Paced: by now, rate × elapsed bytes should have left (IP and
            // UDP headers counted), sent in bursts of what is due every 5 ms.
            let datagram = vec![0xa5u8; UDP_PAYLOAD];
            let wire_bits = ((UDP_PAYLOAD + 28) * 8) as f64;
            let start = Instant::now();
            let mut sent = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let due = (start.elapsed().as_secs_f64() * bps as f64 / wire_bits) as u64;
                while sent < due {
                    if sender.send(&datagram).is_err() {
                        break;
                    }
                    sent += 1;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }));
        Ok(())
    }
}

impl Drop for CrossRunning {
    fn drop(&mut self) {
        self.halt();
    }
}

fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}
