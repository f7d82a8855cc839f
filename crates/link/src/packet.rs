//! Reads the headers the packet log needs (IPv4 addresses, protocol, ports, TCP
//! flags, sequence and acknowledgement numbers) from a raw IP packet.

use serde::Serialize;
use std::net::Ipv4Addr;

pub const TCP_FIN: u8 = 0x01;
pub const TCP_SYN: u8 = 0x02;
pub const TCP_RST: u8 = 0x04;
pub const TCP_PSH: u8 = 0x08;
pub const TCP_ACK: u8 = 0x10;

pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// Bytes of an IPv4 header without options. The link carries IP packets (the
/// TUN devices are layer 3: no Ethernet header, no preamble) and charges each
/// its IP length, so a packet's size on the wire is this plus what is above it.
pub const IPV4_HEADER: usize = 20;
/// Bytes of a UDP header.
pub const UDP_HEADER: usize = 8;
/// Bytes of an ICMP echo header (type, code, checksum, id, sequence): ping's
/// default 56 data bytes make an 84-byte packet on this link, not the 98 of
/// an Ethernet frame.
pub const ICMP_ECHO_HEADER: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TcpInfo {
    pub flags: u8,
    pub seq: u32,
    pub ack: u32,
}

impl TcpInfo {
    pub fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// Flags as tcpdump prints them: `S`, `S.`, `P.`, `F.`, `R`, `.`.
    pub fn flag_letters(&self) -> String {
        let mut s = String::new();
        for (bit, c) in [
            (TCP_SYN, 'S'),
            (TCP_FIN, 'F'),
            (TCP_RST, 'R'),
            (TCP_PSH, 'P'),
        ] {
            if self.has(bit) {
                s.push(c);
            }
        }
        if self.has(TCP_ACK) {
            s.push('.');
        }
        s
    }
}

/// What the log keeps of one IPv4 packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Headers {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub protocol: u8,
    pub src_port: u16,
    pub dst_port: u16,
    /// Bytes above the transport header (TCP/UDP payload; for others, above IP).
    pub payload: u16,
    pub tcp: Option<TcpInfo>,
    /// A QUIC long-header packet's type, numbered as in QUIC v1: 0 Initial,
    /// 1 0-RTT, 2 Handshake, 3 Retry (RFC 9000 §17.2; a v2 packet's type is
    /// mapped to these, RFC 9369 §3.2). A long header is a UDP payload with
    /// the header-form bit set and a QUIC version this lab's peers speak
    /// (`quic_version`); its fixed bit is not looked at, since a client
    /// resuming a session may clear it (RFC 9287 §3: quinn greases it at
    /// random, so the Initial of a 0-RTT connection went uncounted in one
    /// repeat view of three). None for short headers, version negotiation and
    /// anything else.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quic_long: Option<u8>,
}

/// The long-header type of a QUIC Initial packet.
pub const QUIC_INITIAL: u8 = 0;

/// How a QUIC version numbers its long-header packet types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuicVersion {
    /// v1 (RFC 9000) and the IETF drafts before it.
    V1,
    /// v2 (RFC 9369).
    V2,
}

/// The versions a long header is read for: v1, v2 and the IETF drafts
/// (0xff0000xx), so that other UDP (the cross traffic's `0xa5` bytes, a
/// greased version) is not taken for QUIC.
fn quic_version(version: u32) -> Option<QuicVersion> {
    match version {
        0x0000_0001 => Some(QuicVersion::V1),
        0x6b33_43cf => Some(QuicVersion::V2),
        v if v >> 8 == 0x00ff_0000 => Some(QuicVersion::V1),
        _ => None,
    }
}

impl Headers {
    /// A QUIC Initial packet: what opens a QUIC connection, as a SYN opens TCP's.
    pub fn quic_initial(&self) -> bool {
        self.quic_long == Some(QUIC_INITIAL)
    }
}

/// Parses an IPv4 packet's headers; None for anything else or a truncated packet.
pub fn parse(packet: &[u8]) -> Option<Headers> {
    if packet.len() < 20 || packet[0] >> 4 != 4 {
        return None;
    }
    let ihl = (packet[0] & 0x0f) as usize * 4;
    let total = u16::from_be_bytes([packet[2], packet[3]]) as usize;
    if ihl < 20 || packet.len() < ihl || total < ihl {
        return None;
    }
    let total = total.min(packet.len());
    let protocol = packet[9];
    let src = Ipv4Addr::new(packet[12], packet[13], packet[14], packet[15]);
    let dst = Ipv4Addr::new(packet[16], packet[17], packet[18], packet[19]);
    let l4 = &packet[ihl..total];
    let mut headers = Headers {
        src,
        dst,
        protocol,
        src_port: 0,
        dst_port: 0,
        payload: l4.len() as u16,
        tcp: None,
        quic_long: None,
    };
    let ports = |b: &[u8]| {
        (
            u16::from_be_bytes([b[0], b[1]]),
            u16::from_be_bytes([b[2], b[3]]),
        )
    };
    match protocol {
        PROTO_TCP if l4.len() >= 20 => {
            let data_offset = (l4[12] >> 4) as usize * 4;
            (headers.src_port, headers.dst_port) = ports(l4);
            headers.payload = l4.len().saturating_sub(data_offset) as u16;
            headers.tcp = Some(TcpInfo {
                flags: l4[13],
                seq: u32::from_be_bytes([l4[4], l4[5], l4[6], l4[7]]),
                ack: u32::from_be_bytes([l4[8], l4[9], l4[10], l4[11]]),
            });
        }
        PROTO_UDP if l4.len() >= UDP_HEADER => {
            (headers.src_port, headers.dst_port) = ports(l4);
            headers.payload = (l4.len() - UDP_HEADER) as u16;
            let q = &l4[UDP_HEADER..];
            if q.len() >= 5 && q[0] & 0x80 != 0 {
                let kind = (q[0] >> 4) & 0x03;
                headers.quic_long = match quic_version(u32::from_be_bytes([q[1], q[2], q[3], q[4]]))
                {
                    Some(QuicVersion::V1) => Some(kind),
                    // v2's types are v1's rotated by one: Retry 0, Initial 1, 0-RTT 2, Handshake 3.
                    Some(QuicVersion::V2) => Some((kind + 3) & 0x03),
                    None => None,
                };
            }
        }
        _ => {}
    }
    Some(headers)
}

/// Builds a minimal IPv4 packet (for tests and for the emulator's own probes).
pub fn build_ipv4(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, l4: &[u8]) -> Vec<u8> {
    let total = IPV4_HEADER + l4.len();
    let mut p = vec![0u8; total];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
    p[8] = 64;
    p[9] = protocol;
    p[12..16].copy_from_slice(&src.octets());
    p[16..20].copy_from_slice(&dst.octets());
    let mut sum = 0u32;
    for chunk in p[..20].chunks(2) {
        sum += u16::from_be_bytes([chunk[0], chunk[1]]) as u32;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    p[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    p[IPV4_HEADER..].copy_from_slice(l4);
    p
}

/// Builds a TCP segment (no options, checksum left zero) inside an IPv4 packet.
pub fn build_tcp(
    src: (Ipv4Addr, u16),
    dst: (Ipv4Addr, u16),
    flags: u8,
    seq: u32,
    ack: u32,
    payload: usize,
) -> Vec<u8> {
    let mut l4 = vec![0u8; 20 + payload];
    l4[0..2].copy_from_slice(&src.1.to_be_bytes());
    l4[2..4].copy_from_slice(&dst.1.to_be_bytes());
    l4[4..8].copy_from_slice(&seq.to_be_bytes());
    l4[8..12].copy_from_slice(&ack.to_be_bytes());
    l4[12] = 5 << 4;
    l4[13] = flags;
    l4[14..16].copy_from_slice(&65535u16.to_be_bytes());
    build_ipv4(src.0, dst.0, PROTO_TCP, &l4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_tcp_headers() {
        let a = Ipv4Addr::new(198, 18, 0, 2);
        let b = Ipv4Addr::new(198, 18, 1, 1);
        let p = build_tcp((a, 40000), (b, 443), TCP_SYN | TCP_ACK, 7, 9, 100);
        let h = parse(&p).unwrap();
        assert_eq!((h.src, h.dst, h.src_port, h.dst_port), (a, b, 40000, 443));
        assert_eq!(h.payload, 100);
        let tcp = h.tcp.unwrap();
        assert_eq!((tcp.seq, tcp.ack), (7, 9));
        assert_eq!(tcp.flag_letters(), "S.");
        assert!(parse(&p[..10]).is_none());
        assert_eq!(h.quic_long, None);
        // A QUIC v1 Initial (long header, type 0) and a short-header packet.
        let mut udp = vec![0u8; 8 + 1200];
        udp[8..13].copy_from_slice(&[0xc3, 0, 0, 0, 1]);
        let q = parse(&build_ipv4(a, b, PROTO_UDP, &udp)).unwrap();
        assert!(q.quic_initial() && q.payload == 1200);
        udp[8] = 0xe3;
        assert_eq!(
            parse(&build_ipv4(a, b, PROTO_UDP, &udp)).unwrap().quic_long,
            Some(2)
        );
        udp[8] = 0x43;
        assert_eq!(
            parse(&build_ipv4(a, b, PROTO_UDP, &udp)).unwrap().quic_long,
            None
        );
        assert!(parse(&[0x60; 40]).is_none());
    }

    #[test]
    fn quic_long_headers_with_a_greased_fixed_bit_or_v2_are_read() {
        let (a, b) = (Ipv4Addr::new(198, 18, 0, 2), Ipv4Addr::new(198, 18, 1, 1));
        let kind = |first: u8, version: [u8; 4]| {
            let mut udp = vec![0u8; 8 + 1200];
            udp[8] = first;
            udp[9..13].copy_from_slice(&version);
            parse(&build_ipv4(a, b, PROTO_UDP, &udp)).unwrap().quic_long
        };
        let v1 = [0, 0, 0, 1];
        // A resuming client's Initial and 0-RTT with the fixed bit cleared (RFC 9287).
        assert_eq!(kind(0x83, v1), Some(QUIC_INITIAL));
        assert_eq!(kind(0x93, v1), Some(1));
        // v2: Initial is type 1, Handshake 3, Retry 0.
        let v2 = [0x6b, 0x33, 0x43, 0xcf];
        assert_eq!(kind(0xd0, v2), Some(QUIC_INITIAL));
        assert_eq!(kind(0xf0, v2), Some(2));
        assert_eq!(kind(0xc0, v2), Some(3));
        // A draft's Initial; version negotiation; the cross traffic's datagrams.
        assert_eq!(kind(0xc0, [0xff, 0, 0, 0x1d]), Some(QUIC_INITIAL));
        assert_eq!(kind(0xc0, [0, 0, 0, 0]), None);
        assert_eq!(kind(0xa5, [0xa5; 4]), None);
    }
}
