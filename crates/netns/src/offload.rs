//! TCP segmentation and receive offload for the emulator's TUN devices
//! (IFF_VNET_HDR; issue 21). Each read or write carries a `virtio_net_hdr`.
//!
//! - **Reads (TSO):** the kernel hands over up to 64 KB of one TCP flow in one
//!   read. [`split`] cuts it into the MTU-sized segments the wire would carry:
//!   the same cut, sequence numbers, IP ids and flags as Linux's
//!   `tcp_gso_segment`, with full checksums. The link model, its losses and
//!   queue, and the packet log see exactly the packets they saw before, with
//!   one read instead of up to 44.
//! - **Writes (GRO):** [`Gro`] writes the packets due to one device in one
//!   wake-up. Where Linux's `tcp_gro_receive` would merge consecutive segments
//!   of one flow, they go out as one TCPv4 GSO frame with a partial checksum.
//!   The receiving stack takes the merged frame in one pass, as behind a NIC
//!   that does GRO, and acknowledges it as one. The emulator asks for merging
//!   only on fast links (see `emulator::busy_quantum`), where several segments
//!   fall due in one wake-up. On slower links each segment is due at its own
//!   time, so it goes alone and the receiver's ACK clock is as before.
//!
//! Hand-written on purpose: the crates that do this are parts of VPN programs,
//! not libraries. Sans-I/O: byte slices in, frames out, tested here without a
//! device. Only IPv4 (the testbed turns IPv6 off) and TCP are offloaded; the
//! devices do not offer UDP segmentation, so QUIC's GSO is cut by the kernel.

/// Bytes of the `virtio_net_hdr` before every frame.
pub const VNET_HDR_LEN: usize = 10;
/// `TUNSETOFFLOAD` flags: checksum offload and TCPv4 segmentation.
pub const TUN_OFFLOADS: libc::c_uint = 0x01 /* TUN_F_CSUM */ | 0x02 /* TUN_F_TSO4 */;

const F_NEEDS_CSUM: u8 = 1;
const GSO_NONE: u8 = 0;
const GSO_TCPV4: u8 = 1;
const GSO_ECN: u8 = 0x80;

const TCP: u8 = 6;
const UDP: u8 = 17;
const FIN: u8 = 0x01;
const PSH: u8 = 0x08;
const ACK: u8 = 0x10;
const CWR: u8 = 0x80;
/// The largest IPv4 packet, and so the largest merged frame.
const MAX_IP: usize = 65_535;

/// `struct virtio_net_hdr`, in the host's byte order (a TUN device's default).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct VnetHdr {
    flags: u8,
    gso_type: u8,
    hdr_len: u16,
    gso_size: u16,
    csum_start: u16,
    csum_offset: u16,
}

impl VnetHdr {
    fn parse(b: &[u8]) -> VnetHdr {
        let u16_at = |i: usize| u16::from_ne_bytes([b[i], b[i + 1]]);
        VnetHdr {
            flags: b[0],
            gso_type: b[1],
            hdr_len: u16_at(2),
            gso_size: u16_at(4),
            csum_start: u16_at(6),
            csum_offset: u16_at(8),
        }
    }

    fn put(&self, out: &mut Vec<u8>) {
        out.push(self.flags);
        out.push(self.gso_type);
        for v in [
            self.hdr_len,
            self.gso_size,
            self.csum_start,
            self.csum_offset,
        ] {
            out.extend_from_slice(&v.to_ne_bytes());
        }
    }
}

/// Why a frame read from a device could not be cut into packets.
#[derive(Debug, PartialEq, Eq)]
pub struct Malformed(pub &'static str);

/// Cuts one frame read from a device (header, then packet) into wire packets,
/// each in a buffer from `buffer`, handed to `emit` in order. A packet whose
/// checksum the kernel left to the device gets it completed.
pub fn split(
    frame: &[u8],
    mut buffer: impl FnMut() -> Vec<u8>,
    mut emit: impl FnMut(Vec<u8>),
) -> Result<(), Malformed> {
    if frame.len() < VNET_HDR_LEN {
        return Err(Malformed("shorter than its virtio_net_hdr"));
    }
    let (hdr, packet) = frame.split_at(VNET_HDR_LEN);
    let hdr = VnetHdr::parse(hdr);
    match hdr.gso_type & !GSO_ECN {
        GSO_NONE => {
            let mut b = buffer();
            b.clear();
            b.extend_from_slice(packet);
            if hdr.flags & F_NEEDS_CSUM != 0 {
                complete_checksum(&mut b, hdr.csum_start.into(), hdr.csum_offset.into())?;
            }
            emit(b);
            Ok(())
        }
        GSO_TCPV4 => split_tcp4(packet, hdr.gso_size.into(), buffer, emit),
        _ => Err(Malformed("a segmentation type the device did not offer")),
    }
}

/// Header lengths (IP, IP + TCP) of an IPv4 TCP packet, checked against its length.
fn tcp4_header_lens(p: &[u8]) -> Option<(usize, usize)> {
    if p.len() < 40 || p[0] >> 4 != 4 || p[9] != TCP {
        return None;
    }
    let ihl = (p[0] & 0x0f) as usize * 4;
    if ihl < 20 || p.len() < ihl + 20 {
        return None;
    }
    let thl = (p[ihl + 12] >> 4) as usize * 4;
    (thl >= 20 && p.len() >= ihl + thl).then_some((ihl, ihl + thl))
}

/// `tcp_gso_segment` for one IPv4 packet: `mss` bytes of payload per segment.
fn split_tcp4(
    packet: &[u8],
    mss: usize,
    mut buffer: impl FnMut() -> Vec<u8>,
    mut emit: impl FnMut(Vec<u8>),
) -> Result<(), Malformed> {
    let (ihl, hl) = tcp4_header_lens(packet).ok_or(Malformed("TCPv4 GSO frame too short"))?;
    if mss == 0 {
        return Err(Malformed("TCPv4 GSO frame with a segment size of 0"));
    }
    let payload = &packet[hl..];
    let seq0 = be32(&packet[ihl + 4..]);
    let id0 = be16(&packet[4..]);
    let flags = packet[ihl + 13];
    let n = payload.len().div_ceil(mss).max(1);
    for i in 0..n {
        let chunk = &payload[(i * mss).min(payload.len())..((i + 1) * mss).min(payload.len())];
        let mut b = buffer();
        b.clear();
        b.extend_from_slice(&packet[..hl]);
        b.extend_from_slice(chunk);
        b[2..4].copy_from_slice(&((hl + chunk.len()) as u16).to_be_bytes());
        b[4..6].copy_from_slice(&id0.wrapping_add(i as u16).to_be_bytes());
        ip_checksum(&mut b[..ihl]);
        let seq = seq0.wrapping_add((i * mss) as u32);
        b[ihl + 4..ihl + 8].copy_from_slice(&seq.to_be_bytes());
        let mut f = flags;
        if i + 1 < n {
            f &= !(FIN | PSH);
        }
        if i > 0 {
            f &= !CWR;
        }
        b[ihl + 13] = f;
        tcp_checksum(&mut b, ihl);
        emit(b);
    }
    Ok(())
}

/// Fills in a checksum the kernel left partial: the field holds the
/// pseudo-header's sum, the rest is summed from `start`.
fn complete_checksum(p: &mut [u8], start: usize, offset: usize) -> Result<(), Malformed> {
    let at = start + offset;
    if at + 2 > p.len() {
        return Err(Malformed("checksum offset past the packet's end"));
    }
    let partial = be16(&p[at..]);
    p[at..at + 2].fill(0);
    let mut sum = !fold(sum_words(&p[start..], partial.into()));
    if sum == 0 && p.len() > 9 && p[9] == UDP {
        sum = 0xffff; // UDP sends a computed 0 as all ones (RFC 768)
    }
    p[at..at + 2].copy_from_slice(&sum.to_be_bytes());
    Ok(())
}

/// Writes the packets due to one device, merging where Linux's GRO would.
#[derive(Default)]
pub struct Gro {
    frame: Vec<u8>,
}

/// The run of mergeable segments being built: from its first packet.
struct Run {
    ihl: usize,
    hl: usize,
    mss: usize,
    next_seq: u32,
    bytes: usize,
    /// The last segment was shorter than `mss` or carried PSH: nothing follows it.
    closed: bool,
}

impl Run {
    /// A run can start at `p`: IPv4 without options or fragments, TCP, ACK
    /// (PSH allowed) and nothing else, some payload.
    fn start(p: &[u8]) -> Option<Run> {
        let (ihl, hl) = tcp4_header_lens(p)?;
        let flags = p[ihl + 13];
        let fragment = be16(&p[6..]) & 0x3fff != 0;
        if ihl != 20 || fragment || be16(&p[2..]) as usize != p.len() || flags & !PSH != ACK {
            return None;
        }
        let mss = p.len() - hl;
        (mss > 0).then(|| Run {
            ihl,
            hl,
            mss,
            next_seq: be32(&p[ihl + 4..]).wrapping_add(mss as u32),
            bytes: p.len(),
            closed: flags & PSH != 0,
        })
    }

    /// Whether `p` continues the run that `first` opened, as `tcp_gro_receive`
    /// decides: the same flow, addresses, TOS and TTL, the next sequence
    /// number, the same ACK, window and options, ACK (PSH allowed), a payload
    /// no larger than the first's, and room left in 64 KB.
    fn follows(&self, first: &[u8], p: &[u8]) -> bool {
        let (ihl, hl) = (self.ihl, self.hl);
        if self.closed || p.len() <= hl || p.len() - hl > self.mss {
            return false;
        }
        if self.bytes + p.len() - hl > MAX_IP
            || p[0] != first[0]
            || be16(&p[2..]) as usize != p.len()
        {
            return false;
        }
        let flags = p[ihl + 13];
        first[1] == p[1]
            && first[6..10] == p[6..10]
            && first[12..20] == p[12..20]
            && flags & !PSH == ACK
            && first[ihl..ihl + 4] == p[ihl..ihl + 4]
            && be32(&p[ihl + 4..]) == self.next_seq
            && first[ihl + 8..ihl + 13] == p[ihl + 8..ihl + 13]
            && first[ihl + 14..ihl + 16] == p[ihl + 14..ihl + 16]
            && first[ihl + 18..hl] == p[ihl + 18..hl]
    }

    fn push(&mut self, p: &[u8]) {
        let len = p.len() - self.hl;
        self.next_seq = self.next_seq.wrapping_add(len as u32);
        self.bytes += len;
        self.closed = len < self.mss || p[self.ihl + 13] & PSH != 0;
    }
}

impl Gro {
    /// Hands `write` one frame (header, then packet) per run of packets in
    /// `packets` (one device's, in delivery order) with the number of packets
    /// in it. With `merge`, a run of consecutive segments `tcp_gro_receive`
    /// would merge is one TCPv4 GSO frame; without, every packet is its own.
    pub fn frames(
        &mut self,
        packets: &[Vec<u8>],
        merge: bool,
        mut write: impl FnMut(&[u8], usize),
    ) {
        let mut i = 0;
        while i < packets.len() {
            let first = &packets[i];
            let mut end = i + 1;
            let run = merge.then(|| Run::start(first)).flatten();
            if let Some(mut run) = run {
                while end < packets.len() && run.follows(first, &packets[end]) {
                    run.push(&packets[end]);
                    end += 1;
                }
                if end - i > 1 {
                    self.merged(&packets[i..end], &run);
                    write(&self.frame, end - i);
                    i = end;
                    continue;
                }
            }
            self.frame.clear();
            VnetHdr::default().put(&mut self.frame);
            self.frame.extend_from_slice(first);
            write(&self.frame, 1);
            i = end;
        }
    }

    /// One GSO frame of `segments`: the first's headers, every payload, a
    /// partial checksum (the pseudo-header's) for the receiver to take as
    /// verified, as the segments' own checksums were whole.
    fn merged(&mut self, segments: &[Vec<u8>], run: &Run) {
        let (ihl, hl) = (run.ihl, run.hl);
        let f = &mut self.frame;
        f.clear();
        VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV4,
            hdr_len: hl as u16,
            gso_size: run.mss as u16,
            csum_start: ihl as u16,
            csum_offset: 16,
        }
        .put(f);
        let first = &segments[0];
        f.extend_from_slice(&first[..hl]);
        for s in segments {
            f.extend_from_slice(&s[hl..]);
        }
        let p = &mut f[VNET_HDR_LEN..];
        p[2..4].copy_from_slice(&(run.bytes as u16).to_be_bytes());
        ip_checksum(&mut p[..ihl]);
        p[ihl + 13] |= segments[segments.len() - 1][ihl + 13] & PSH;
        let pseudo = pseudo_sum(p, ihl, run.bytes - ihl);
        p[ihl + 16..ihl + 18].copy_from_slice(&fold(pseudo).to_be_bytes());
    }
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// The ones'-complement sum of `data` as big-endian 16-bit words, added to
/// `acc`, unfolded (summed four bytes at a time: 2^16 ≡ 1 modulo 2^16 - 1).
fn sum_words(data: &[u8], mut acc: u64) -> u64 {
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        acc += u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as u64;
    }
    let rest = words.remainder();
    let mut tail = [0u8; 4];
    tail[..rest.len()].copy_from_slice(rest);
    acc + u32::from_be_bytes(tail) as u64
}

fn fold(mut acc: u64) -> u16 {
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

/// The TCP/UDP pseudo-header's sum for an IPv4 packet `p` whose transport
/// part is `len` bytes.
fn pseudo_sum(p: &[u8], _ihl: usize, len: usize) -> u64 {
    sum_words(&p[12..20], p[9] as u64 + len as u64)
}

fn ip_checksum(h: &mut [u8]) {
    h[10..12].fill(0);
    let sum = !fold(sum_words(h, 0));
    h[10..12].copy_from_slice(&sum.to_be_bytes());
}

fn tcp_checksum(p: &mut [u8], ihl: usize) {
    p[ihl + 16..ihl + 18].fill(0);
    let sum = !fold(sum_words(&p[ihl..], pseudo_sum(p, ihl, p.len() - ihl)));
    p[ihl + 16..ihl + 18].copy_from_slice(&sum.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use link::packet::{build_tcp, parse, TCP_ACK, TCP_FIN, TCP_PSH};
    use std::net::Ipv4Addr;

    const A: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
    const B: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 1);

    /// A TCP segment with 12 bytes of options (timestamps) and a patterned payload.
    fn segment(seq: u32, flags: u8, payload: usize, start: usize) -> Vec<u8> {
        let mut p = build_tcp((A, 443), (B, 40000), flags, seq, 77, 0);
        p[32] = 8 << 4; // data offset: 32 bytes of TCP header
        p.splice(40..40, [1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 7]);
        p.extend((0..payload).map(|k| ((start + k) % 251) as u8));
        let len = p.len() as u16;
        p[2..4].copy_from_slice(&len.to_be_bytes());
        p[4..6].copy_from_slice(&1000u16.to_be_bytes());
        p[6] = 0x40; // DF
        ip_checksum(&mut p[..20]);
        tcp_checksum(&mut p, 20);
        p
    }

    fn valid(p: &[u8]) -> bool {
        fold(sum_words(&p[..20], 0)) == 0xffff
            && fold(sum_words(&p[20..], pseudo_sum(p, 20, p.len() - 20))) == 0xffff
    }

    fn split_all(frame: &[u8]) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        split(frame, Vec::new, |b| out.push(b)).unwrap();
        out
    }

    /// What the kernel hands over: one 3.5-segment TSO frame.
    fn tso_frame(mss: usize, flags: u8) -> Vec<u8> {
        let mut p = segment(5000, flags, mss * 3 + mss / 2, 0);
        // The kernel leaves the pseudo-header's sum in the checksum field.
        let pseudo = fold(pseudo_sum(&p, 20, p.len() - 20));
        p[36..38].copy_from_slice(&pseudo.to_be_bytes());
        let mut f = Vec::new();
        VnetHdr {
            flags: F_NEEDS_CSUM,
            gso_type: GSO_TCPV4,
            hdr_len: 52,
            gso_size: mss as u16,
            csum_start: 20,
            csum_offset: 16,
        }
        .put(&mut f);
        f.extend_from_slice(&p);
        f
    }

    #[test]
    fn a_tso_frame_is_cut_as_the_kernel_would_cut_it() {
        let mss = 1448;
        let segs = split_all(&tso_frame(mss, TCP_ACK | TCP_PSH | TCP_FIN));
        assert_eq!(segs.len(), 4);
        let mut payload = 0;
        for (i, s) in segs.iter().enumerate() {
            assert!(valid(s), "segment {i} has a bad checksum");
            let h = parse(s).unwrap();
            let tcp = h.tcp.unwrap();
            assert_eq!(tcp.seq, 5000 + (i * mss) as u32);
            assert_eq!(tcp.ack, 77);
            assert_eq!(h.payload as usize, if i < 3 { mss } else { mss / 2 });
            assert_eq!(be16(&s[4..]), 1000 + i as u16, "IP ids count up");
            let last = i == 3;
            assert_eq!(tcp.has(TCP_PSH), last);
            assert_eq!(tcp.has(TCP_FIN), last);
            assert_eq!(
                &s[40..52],
                &[1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 7],
                "options kept"
            );
            assert!(s[52..]
                .iter()
                .enumerate()
                .all(|(k, &b)| b == ((payload + k) % 251) as u8));
            payload += h.payload as usize;
        }
        assert_eq!(payload, mss * 3 + mss / 2);
    }

    #[test]
    fn a_partial_checksum_is_completed_and_a_whole_packet_kept() {
        let whole = segment(1, TCP_ACK, 100, 0);
        let mut partial = whole.clone();
        let pseudo = fold(pseudo_sum(&partial, 20, partial.len() - 20));
        partial[36..38].copy_from_slice(&pseudo.to_be_bytes());
        let mut f = Vec::new();
        VnetHdr {
            flags: F_NEEDS_CSUM,
            csum_start: 20,
            csum_offset: 16,
            ..Default::default()
        }
        .put(&mut f);
        f.extend_from_slice(&partial);
        assert_eq!(split_all(&f), vec![whole.clone()]);
        let mut plain = Vec::new();
        VnetHdr::default().put(&mut plain);
        plain.extend_from_slice(&whole);
        assert_eq!(split_all(&plain), vec![whole]);
        assert!(split(&plain[..4], Vec::new, |_| ()).is_err());
        let mut udp_gso = plain.clone();
        udp_gso[1] = 5;
        assert!(split(&udp_gso, Vec::new, |_| ()).is_err());
    }

    fn frames(packets: &[Vec<u8>], merge: bool) -> Vec<(Vec<u8>, usize)> {
        let mut out = Vec::new();
        Gro::default().frames(packets, merge, |f, n| out.push((f.to_vec(), n)));
        out
    }

    #[test]
    fn segments_merged_and_cut_again_are_the_same_segments() {
        let segs = split_all(&tso_frame(1448, TCP_ACK | TCP_PSH));
        let out = frames(&segs, true);
        assert_eq!(out.len(), 1);
        let (frame, n) = &out[0];
        assert_eq!(*n, 4);
        let hdr = VnetHdr::parse(frame);
        assert_eq!(
            (hdr.gso_type, hdr.gso_size, hdr.hdr_len),
            (GSO_TCPV4, 1448, 52)
        );
        let p = &frame[VNET_HDR_LEN..];
        assert_eq!(be16(&p[2..]) as usize, p.len());
        assert_eq!(fold(sum_words(&p[..20], 0)), 0xffff, "IP header checksum");
        assert_eq!(
            p[20 + 13],
            TCP_ACK | TCP_PSH,
            "PSH rides on the merged frame"
        );
        let again = split_all(frame);
        assert_eq!(again, segs);
    }

    #[test]
    fn only_what_gro_would_merge_is_merged() {
        let seg = |seq, flags, len| segment(seq, flags, len, 0);
        let ack = TCP_ACK;
        // Two full segments, a short one (ends the run), then a new run.
        let a = vec![
            seg(0, ack, 1000),
            seg(1000, ack, 1000),
            seg(2000, ack, 10),
            seg(2010, ack, 1000),
        ];
        assert_eq!(
            frames(&a, true).iter().map(|f| f.1).collect::<Vec<_>>(),
            [3, 1]
        );
        // PSH ends a run; a gap in sequence numbers, a pure ACK, a FIN, a SYN,
        // another flow and another ACK number each stand alone.
        let mut other_flow = seg(1000, ack, 1000);
        other_flow[20..22].copy_from_slice(&444u16.to_be_bytes());
        let mut other_ack = seg(1000, ack, 1000);
        other_ack[28..32].copy_from_slice(&78u32.to_be_bytes());
        for (second, why) in [
            (seg(1500, ack, 1000), "a gap"),
            (seg(1000, ack, 0), "no payload"),
            (seg(1000, ack | TCP_FIN, 1000), "FIN"),
            (seg(1000, 0x02, 1000), "SYN"),
            (other_flow, "another flow"),
            (other_ack, "another ACK"),
            (seg(1000, ack, 1001), "longer than the first"),
        ] {
            let out = frames(&[seg(0, ack, 1000), second], true);
            assert_eq!(out.len(), 2, "{why} merged");
        }
        let psh = vec![seg(0, ack | TCP_PSH, 1000), seg(1000, ack, 1000)];
        assert_eq!(frames(&psh, true).len(), 2);
        // Without merging every packet is its own frame, header zeroed.
        let out = frames(&a, false);
        assert_eq!(out.len(), 4);
        assert!(out.iter().zip(&a).all(|((f, n), p)| *n == 1
            && f[..VNET_HDR_LEN] == [0; VNET_HDR_LEN]
            && &f[VNET_HDR_LEN..] == p.as_slice()));
    }

    #[test]
    fn a_merged_frame_stays_under_64_kb() {
        let segs: Vec<_> = (0..60)
            .map(|i| segment(i * 1448, TCP_ACK, 1448, 0))
            .collect();
        let out = frames(&segs, true);
        assert_eq!(out.iter().map(|f| f.1).sum::<usize>(), 60);
        assert!(out.len() == 2 && out.iter().all(|(f, _)| f.len() - VNET_HDR_LEN <= MAX_IP));
    }
}
