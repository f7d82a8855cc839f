//! RFC 9000 §8.1 to the byte: before a client's address is validated, the
//! server sends it at most three times what it received from it. quinn-proto
//! keeps that budget but, while any of it is left, lets a whole datagram go
//! (quinn issue 1082), so a first flight can pass 3× by up to one datagram:
//! 3 795 B for a 1 200 B Initial with the RSA chain of `--cert rsa2048`,
//! found by the hostile tests. [`Limited`] wraps the endpoint's UDP socket
//! and holds back a datagram that would pass the budget until the address
//! sends more (a client acknowledges the server's Initial at once, in a
//! padded datagram of its own), so nothing is lost and nothing retransmitted.
//!
//! An address is tracked from its first Initial and counts as validated, and
//! is forgotten, once a datagram from it carries a Handshake or 1-RTT packet
//! (§8.1: only a client that decrypted the server's Initial can send one).
//! The table is bounded ([`MAX_TRACKED`], entries idle for [`FORGET_AFTER`]
//! dropped); when full, Initials from new addresses are dropped.

use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};
use std::collections::{HashMap, VecDeque};
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

/// Addresses tracked at once (about 100 B each, datagrams held aside).
pub const MAX_TRACKED: usize = 1 << 17;
/// An unvalidated address silent this long is forgotten (longer than the
/// QUIC idle timeout, which ends its handshake).
pub const FORGET_AFTER: Duration = Duration::from_secs(60);
/// Datagrams held back per address (quinn passes the budget by at most one).
const HELD_MAX: usize = 4;

/// What a datagram from a client says about its address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// It carries a Handshake or 1-RTT packet: the address is validated.
    Validating,
    /// Its first packet is an Initial (a new address is tracked from here).
    Initial,
    /// Anything else (0-RTT, a packet cut short, not QUIC v1).
    Other,
}

/// Reads the coalesced packets of one datagram (RFC 9000 §12.2, §17): their
/// long headers, until a Handshake or a short-header packet. Sans-I/O. (A
/// forged one only lifts this guard: quinn-proto's own budget stays.)
pub fn classify(mut d: &[u8]) -> Seen {
    let mut seen = Seen::Other;
    // A datagram holds a handful of packets at most.
    for i in 0..8 {
        let Some(&b) = d.first() else { break };
        if b & 0x80 == 0 {
            // A short header has the fixed bit; zeros after the packets
            // are padding.
            if b & 0x40 != 0 {
                return Seen::Validating;
            }
            break;
        }
        if d.get(1..5) != Some(&[0, 0, 0, 1][..]) {
            break;
        }
        let kind = (b >> 4) & 0x03;
        match kind {
            2 => return Seen::Validating,
            0 if i == 0 => seen = Seen::Initial,
            _ => {}
        }
        let Some(end) = long_header_end(d, kind) else {
            break;
        };
        match d.get(end..) {
            Some(next) if !next.is_empty() => d = next,
            _ => break,
        }
    }
    seen
}

/// Where the long-header packet at the start of `d` (of type `kind`) ends.
fn long_header_end(d: &[u8], kind: u8) -> Option<usize> {
    let mut at = 5;
    let dcid = usize::from(*d.get(at)?);
    at += 1 + dcid;
    let scid = usize::from(*d.get(at)?);
    at += 1 + scid;
    if kind == 0 {
        let (token, n) = proto::varint::decode(d.get(at..)?)?;
        at = at
            .checked_add(n)?
            .checked_add(usize::try_from(token).ok()?)?;
    }
    if kind == 3 {
        // Retry: no length, the rest of the datagram.
        return Some(d.len());
    }
    let (len, n) = proto::varint::decode(d.get(at..)?)?;
    at.checked_add(n)?.checked_add(usize::try_from(len).ok()?)
}

/// One unvalidated address.
#[derive(Debug)]
struct Budget {
    received: u64,
    sent: u64,
    held: VecDeque<Held>,
    last: Instant,
}

/// A datagram held back: what `try_send` was given.
#[derive(Debug)]
struct Held {
    destination: SocketAddr,
    ecn: Option<quinn::udp::EcnCodepoint>,
    contents: Vec<u8>,
    segment_size: Option<usize>,
    src_ip: Option<std::net::IpAddr>,
}

impl Held {
    fn transmit(&self) -> Transmit<'_> {
        Transmit {
            destination: self.destination,
            ecn: self.ecn,
            contents: &self.contents,
            segment_size: self.segment_size,
            src_ip: self.src_ip,
        }
    }
}

/// The endpoint's socket with the budget kept to the byte.
#[derive(Debug)]
pub struct Limited {
    inner: Arc<dyn AsyncUdpSocket>,
    table: Mutex<HashMap<SocketAddr, Budget>>,
}

impl Limited {
    pub fn new(inner: Arc<dyn AsyncUdpSocket>) -> Limited {
        Limited {
            inner,
            table: Mutex::new(HashMap::new()),
        }
    }

    /// Sends what the budget of `b` now allows of its held datagrams.
    fn flush(&self, b: &mut Budget, validated: bool) {
        while let Some(h) = b.held.front() {
            let n = h.contents.len() as u64;
            if !validated && b.sent + n > 3 * b.received {
                break;
            }
            if self.inner.try_send(&h.transmit()).is_err() {
                // The socket is full: quinn-proto will find it lost and
                // send it again.
                b.held.clear();
                break;
            }
            b.sent += n;
            b.held.pop_front();
        }
    }

    /// Counts a datagram from `from`; false if it must be dropped (a new
    /// address while the table is full).
    fn received(&self, from: SocketAddr, datagram: &[u8], now: Instant) -> bool {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let seen = classify(datagram);
        if let Some(b) = table.get_mut(&from) {
            b.received += datagram.len() as u64;
            b.last = now;
            let validated = seen == Seen::Validating;
            self.flush(b, validated);
            if validated {
                table.remove(&from);
            }
            return true;
        }
        if seen != Seen::Initial {
            return true;
        }
        if table.len() >= MAX_TRACKED {
            table.retain(|_, b| now.duration_since(b.last) < FORGET_AFTER);
            if table.len() >= MAX_TRACKED {
                return false;
            }
        }
        table.insert(
            from,
            Budget {
                received: datagram.len() as u64,
                sent: 0,
                held: VecDeque::new(),
                last: now,
            },
        );
        true
    }
}

impl AsyncUdpSocket for Limited {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        self.inner.clone().create_io_poller()
    }

    fn try_send(&self, transmit: &Transmit) -> io::Result<()> {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let Some(b) = table.get_mut(&transmit.destination) else {
            drop(table);
            return self.inner.try_send(transmit);
        };
        let n = transmit.contents.len() as u64;
        if b.held.is_empty() && b.sent + n <= 3 * b.received {
            self.inner.try_send(transmit)?;
            b.sent += n;
        } else if b.held.len() < HELD_MAX {
            b.held.push_back(Held {
                destination: transmit.destination,
                ecn: transmit.ecn,
                contents: transmit.contents.to_vec(),
                segment_size: transmit.segment_size,
                src_ip: transmit.src_ip,
            });
        }
        // Beyond HELD_MAX the datagram is dropped, as the network may.
        Ok(())
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        loop {
            let n = match self.inner.poll_recv(cx, bufs, meta) {
                Poll::Ready(Ok(n)) => n,
                other => return other,
            };
            let now = Instant::now();
            let mut kept = 0;
            for i in 0..n {
                let m = &meta[i];
                let data = &bufs[i][..m.len.min(bufs[i].len())];
                let stride = m.stride.max(1);
                // Every segment is counted (no short circuit).
                let mut keep = true;
                for d in data.chunks(stride) {
                    keep &= self.received(m.addr, d, now);
                }
                if keep {
                    if kept != i {
                        meta.swap(kept, i);
                        bufs.swap(kept, i);
                    }
                    kept += 1;
                }
            }
            if kept > 0 || n == 0 {
                return Poll::Ready(Ok(kept));
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    fn max_transmit_segments(&self) -> usize {
        self.inner.max_transmit_segments()
    }

    fn max_receive_segments(&self) -> usize {
        self.inner.max_receive_segments()
    }

    fn may_fragment(&self) -> bool {
        self.inner.may_fragment()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A long-header packet of `kind` (0 Initial, 1 0-RTT, 2 Handshake) with
    /// `payload` bytes after the length.
    fn long(kind: u8, payload: usize) -> Vec<u8> {
        let mut p = vec![0xc0 | (kind << 4), 0, 0, 0, 1, 8];
        p.extend_from_slice(&[1; 8]);
        p.push(8);
        p.extend_from_slice(&[2; 8]);
        if kind == 0 {
            p.push(0); // no token
        }
        p.extend_from_slice(&(payload as u16 | 0x4000).to_be_bytes());
        p.extend(std::iter::repeat_n(0u8, payload));
        p
    }

    #[test]
    fn initials_handshakes_and_short_headers_are_told_apart() {
        assert_eq!(classify(&long(0, 1150)), Seen::Initial);
        assert_eq!(classify(&long(2, 100)), Seen::Validating);
        // Coalesced: Initial (an ACK) then Handshake (Finished).
        let mut d = long(0, 100);
        d.extend(long(2, 60));
        assert_eq!(classify(&d), Seen::Validating);
        // Initial then 1-RTT.
        let mut d = long(0, 100);
        d.extend_from_slice(&[0x40, 1, 2, 3]);
        assert_eq!(classify(&d), Seen::Validating);
        // Initial then padding (zeros are no packet).
        let mut d = long(0, 100);
        d.extend_from_slice(&[0; 900]);
        assert_eq!(classify(&d), Seen::Initial);
        // A lone short header (validates an address we track).
        assert_eq!(classify(&[0x40, 1, 2, 3]), Seen::Validating);
        assert_eq!(classify(&long(1, 100)), Seen::Other);
        // Another version.
        let mut v2 = long(0, 100);
        v2[4] = 2;
        assert_eq!(classify(&v2), Seen::Other);
    }

    #[test]
    fn any_bytes_never_panic() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for len in 0..3000 {
            let mut d = Vec::with_capacity(len % 200);
            for _ in 0..len % 200 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                d.push(x as u8);
            }
            if len % 3 == 0 && !d.is_empty() {
                d[0] = 0xc0;
                if d.len() > 5 {
                    d[1..5].copy_from_slice(&[0, 0, 0, 1]);
                }
            }
            let _ = classify(&d);
        }
    }
}
