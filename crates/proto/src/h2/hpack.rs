//! HPACK decoding (RFC 7541) for the generator's HTTP/2 connection: the
//! server's header blocks, its dynamic table followed exactly, every string
//! Huffman-decoded or not. Sans-I/O and allocation-free per field (indexed
//! fields and raw literals are handed out as slices; a Huffman string is
//! decoded into one reused buffer).
//!
//! Hand-written on purpose: the crates tried were either slow on Huffman
//! strings (`hpack`/`loona-hpack` build a tree of hash maps for every string:
//! against nginx, which Huffman-codes its date and etag values, that was 80 %
//! of the generator's CPU) or panicked on a truncated block
//! (`httlib-hpack` 0.1.3); a server's bytes must never panic the generator.
//! Huffman codes are decoded canonically: within each code length the RFC's
//! codes are consecutive (a unit test checks it), so a code of `len` bits
//! is symbol number `code - first[len]` among that length's symbols.

use std::collections::VecDeque;
use std::sync::OnceLock;

/// Why a header block could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HpackError(pub &'static str);

/// The dynamic table's size before any size update: SETTINGS_HEADER_TABLE_SIZE's default.
const DEFAULT_TABLE_SIZE: usize = 4096;
/// Each entry's overhead in the table's size (RFC 7541 §4.1).
const ENTRY_OVERHEAD: usize = 32;

/// One direction's decoder: its dynamic table lives as long as the connection.
pub struct Decoder {
    /// Newest first, as indices count them.
    dynamic: VecDeque<(Vec<u8>, Vec<u8>)>,
    size: usize,
    max_size: usize,
    /// A Huffman-decoded name and value, reused.
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Decoder {
        Decoder {
            dynamic: VecDeque::new(),
            size: 0,
            max_size: DEFAULT_TABLE_SIZE,
            name: Vec::new(),
            value: Vec::new(),
        }
    }
}

impl Decoder {
    /// Decodes a whole header block, handing each field to `field`.
    pub fn decode(
        &mut self,
        block: &[u8],
        mut field: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), HpackError> {
        let mut at = 0;
        while at < block.len() {
            let first = block[at];
            if first & 0x80 != 0 {
                // Indexed field (§6.1).
                let index = integer(block, &mut at, 7)?;
                let (n, v) = self.entry(index)?;
                field(n, v);
            } else if first & 0xe0 == 0x20 {
                // Dynamic table size update (§6.3).
                let size = integer(block, &mut at, 5)?;
                if size > DEFAULT_TABLE_SIZE {
                    return Err(HpackError("hpack-table-size-over-limit"));
                }
                self.max_size = size;
                self.evict(0);
            } else {
                // Literal: with incremental indexing (01), else without or never indexed.
                let indexing = first & 0xc0 == 0x40;
                let index = integer(block, &mut at, if indexing { 6 } else { 4 })?;
                let name_raw = if index == 0 {
                    Some(string(block, &mut at, &mut self.name)?)
                } else {
                    None
                };
                let value_raw = string(block, &mut at, &mut self.value)?;
                // Slices into the block, or the Huffman buffers.
                let value: &[u8] = match value_raw {
                    Some(r) => &block[r],
                    None => &self.value,
                };
                let name: &[u8] = match (name_raw, index) {
                    (Some(Some(r)), _) => &block[r],
                    (Some(None), _) => &self.name,
                    (None, i) => self.entry(i)?.0,
                };
                field(name, value);
                if indexing {
                    let entry = (name.to_vec(), value.to_vec());
                    self.insert(entry);
                }
            }
        }
        Ok(())
    }

    fn entry(&self, index: usize) -> Result<(&[u8], &[u8]), HpackError> {
        match index {
            0 => Err(HpackError("hpack-index-zero")),
            i if i <= STATIC.len() => Ok(STATIC[i - 1]),
            i => self
                .dynamic
                .get(i - STATIC.len() - 1)
                .map(|(n, v)| (n.as_slice(), v.as_slice()))
                .ok_or(HpackError("hpack-index-out-of-range")),
        }
    }

    fn insert(&mut self, entry: (Vec<u8>, Vec<u8>)) {
        let size = entry.0.len() + entry.1.len() + ENTRY_OVERHEAD;
        self.evict(size);
        // An entry larger than the table empties it and is not kept (§4.4).
        if size <= self.max_size {
            self.size += size;
            self.dynamic.push_front(entry);
        }
    }

    /// Evicts the oldest entries until `room` more bytes fit.
    fn evict(&mut self, room: usize) {
        while self.size + room > self.max_size {
            match self.dynamic.pop_back() {
                Some((n, v)) => self.size -= n.len() + v.len() + ENTRY_OVERHEAD,
                None => break,
            }
        }
    }
}

/// An HPACK integer with an N-bit prefix (§5.1), at most 2^28.
fn integer(b: &[u8], at: &mut usize, prefix: u8) -> Result<usize, HpackError> {
    let max = (1usize << prefix) - 1;
    let mut v = (*b.get(*at).ok_or(HpackError("hpack-truncated"))? as usize) & max;
    *at += 1;
    if v < max {
        return Ok(v);
    }
    let mut shift = 0;
    loop {
        let byte = *b.get(*at).ok_or(HpackError("hpack-truncated"))?;
        *at += 1;
        v += ((byte & 0x7f) as usize) << shift;
        shift += 7;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
        if shift > 21 {
            return Err(HpackError("hpack-integer-too-large"));
        }
    }
}

/// A string literal (§5.2): `Some(range)` of the block when raw, `None`
/// when Huffman-coded (decoded into `out`).
fn string(
    b: &[u8],
    at: &mut usize,
    out: &mut Vec<u8>,
) -> Result<Option<std::ops::Range<usize>>, HpackError> {
    let huffman = *b.get(*at).ok_or(HpackError("hpack-truncated"))? & 0x80 != 0;
    let len = integer(b, at, 7)?;
    let range = *at..at.checked_add(len).ok_or(HpackError("hpack-truncated"))?;
    if range.end > b.len() {
        return Err(HpackError("hpack-truncated"));
    }
    *at = range.end;
    if !huffman {
        return Ok(Some(range));
    }
    huffman_decode(&b[range], out)?;
    Ok(None)
}

/// Per code length (5..=30 bits): the first code and where that length's
/// symbols start in `symbols` (sorted by code).
struct Canonical {
    first: [u32; 31],
    count: [u16; 31],
    start: [u16; 31],
    symbols: [u16; 257],
}

fn canonical() -> &'static Canonical {
    static TABLE: OnceLock<Canonical> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut by_code: Vec<(u8, u32, u16)> = HUFFMAN
            .iter()
            .enumerate()
            .map(|(sym, &(code, len))| (len, code, sym as u16))
            .collect();
        by_code.sort_unstable();
        let mut c = Canonical {
            first: [0; 31],
            count: [0; 31],
            start: [0; 31],
            symbols: [0; 257],
        };
        for (i, &(len, code, sym)) in by_code.iter().enumerate() {
            let l = len as usize;
            if c.count[l] == 0 {
                c.first[l] = code;
                c.start[l] = i as u16;
            }
            c.count[l] += 1;
            c.symbols[i] = sym;
        }
        c
    })
}

const EOS: u16 = 256;

/// Decodes a Huffman-coded string (Appendix B) into `out`.
fn huffman_decode(bytes: &[u8], out: &mut Vec<u8>) -> Result<(), HpackError> {
    let t = canonical();
    out.clear();
    let (mut code, mut len) = (0u32, 0usize);
    for &byte in bytes {
        for shift in (0..8).rev() {
            code = code << 1 | (byte >> shift & 1) as u32;
            len += 1;
            if len > 30 {
                return Err(HpackError("hpack-huffman-bad-code"));
            }
            if len >= 5 {
                let index = code.wrapping_sub(t.first[len]);
                if index < t.count[len] as u32 {
                    let sym = t.symbols[t.start[len] as usize + index as usize];
                    if sym == EOS {
                        return Err(HpackError("hpack-huffman-eos"));
                    }
                    out.push(sym as u8);
                    code = 0;
                    len = 0;
                }
            }
        }
    }
    // Padding: fewer than 8 bits, all ones (EOS's first bits).
    if len > 7 || code != (1u32 << len) - 1 {
        return Err(HpackError("hpack-huffman-bad-padding"));
    }
    Ok(())
}

/// RFC 7541 Appendix A: the static table (index 1 is the first entry).
pub(crate) const STATIC: [(&[u8], &[u8]); 61] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// RFC 7541 Appendix B: each symbol's Huffman code (code, bits); 256 is EOS.
pub(crate) const HUFFMAN: [(u32, u8); 257] = [
    (0x1ff8, 13),
    (0x7fffd8, 23),
    (0xfffffe2, 28),
    (0xfffffe3, 28),
    (0xfffffe4, 28),
    (0xfffffe5, 28),
    (0xfffffe6, 28),
    (0xfffffe7, 28),
    (0xfffffe8, 28),
    (0xffffea, 24),
    (0x3ffffffc, 30),
    (0xfffffe9, 28),
    (0xfffffea, 28),
    (0x3ffffffd, 30),
    (0xfffffeb, 28),
    (0xfffffec, 28),
    (0xfffffed, 28),
    (0xfffffee, 28),
    (0xfffffef, 28),
    (0xffffff0, 28),
    (0xffffff1, 28),
    (0xffffff2, 28),
    (0x3ffffffe, 30),
    (0xffffff3, 28),
    (0xffffff4, 28),
    (0xffffff5, 28),
    (0xffffff6, 28),
    (0xffffff7, 28),
    (0xffffff8, 28),
    (0xffffff9, 28),
    (0xffffffa, 28),
    (0xffffffb, 28),
    (0x14, 6),
    (0x3f8, 10),
    (0x3f9, 10),
    (0xffa, 12),
    (0x1ff9, 13),
    (0x15, 6),
    (0xf8, 8),
    (0x7fa, 11),
    (0x3fa, 10),
    (0x3fb, 10),
    (0xf9, 8),
    (0x7fb, 11),
    (0xfa, 8),
    (0x16, 6),
    (0x17, 6),
    (0x18, 6),
    (0x0, 5),
    (0x1, 5),
    (0x2, 5),
    (0x19, 6),
    (0x1a, 6),
    (0x1b, 6),
    (0x1c, 6),
    (0x1d, 6),
    (0x1e, 6),
    (0x1f, 6),
    (0x5c, 7),
    (0xfb, 8),
    (0x7ffc, 15),
    (0x20, 6),
    (0xffb, 12),
    (0x3fc, 10),
    (0x1ffa, 13),
    (0x21, 6),
    (0x5d, 7),
    (0x5e, 7),
    (0x5f, 7),
    (0x60, 7),
    (0x61, 7),
    (0x62, 7),
    (0x63, 7),
    (0x64, 7),
    (0x65, 7),
    (0x66, 7),
    (0x67, 7),
    (0x68, 7),
    (0x69, 7),
    (0x6a, 7),
    (0x6b, 7),
    (0x6c, 7),
    (0x6d, 7),
    (0x6e, 7),
    (0x6f, 7),
    (0x70, 7),
    (0x71, 7),
    (0x72, 7),
    (0xfc, 8),
    (0x73, 7),
    (0xfd, 8),
    (0x1ffb, 13),
    (0x7fff0, 19),
    (0x1ffc, 13),
    (0x3ffc, 14),
    (0x22, 6),
    (0x7ffd, 15),
    (0x3, 5),
    (0x23, 6),
    (0x4, 5),
    (0x24, 6),
    (0x5, 5),
    (0x25, 6),
    (0x26, 6),
    (0x27, 6),
    (0x6, 5),
    (0x74, 7),
    (0x75, 7),
    (0x28, 6),
    (0x29, 6),
    (0x2a, 6),
    (0x7, 5),
    (0x2b, 6),
    (0x76, 7),
    (0x2c, 6),
    (0x8, 5),
    (0x9, 5),
    (0x2d, 6),
    (0x77, 7),
    (0x78, 7),
    (0x79, 7),
    (0x7a, 7),
    (0x7b, 7),
    (0x7ffe, 15),
    (0x7fc, 11),
    (0x3ffd, 14),
    (0x1ffd, 13),
    (0xffffffc, 28),
    (0xfffe6, 20),
    (0x3fffd2, 22),
    (0xfffe7, 20),
    (0xfffe8, 20),
    (0x3fffd3, 22),
    (0x3fffd4, 22),
    (0x3fffd5, 22),
    (0x7fffd9, 23),
    (0x3fffd6, 22),
    (0x7fffda, 23),
    (0x7fffdb, 23),
    (0x7fffdc, 23),
    (0x7fffdd, 23),
    (0x7fffde, 23),
    (0xffffeb, 24),
    (0x7fffdf, 23),
    (0xffffec, 24),
    (0xffffed, 24),
    (0x3fffd7, 22),
    (0x7fffe0, 23),
    (0xffffee, 24),
    (0x7fffe1, 23),
    (0x7fffe2, 23),
    (0x7fffe3, 23),
    (0x7fffe4, 23),
    (0x1fffdc, 21),
    (0x3fffd8, 22),
    (0x7fffe5, 23),
    (0x3fffd9, 22),
    (0x7fffe6, 23),
    (0x7fffe7, 23),
    (0xffffef, 24),
    (0x3fffda, 22),
    (0x1fffdd, 21),
    (0xfffe9, 20),
    (0x3fffdb, 22),
    (0x3fffdc, 22),
    (0x7fffe8, 23),
    (0x7fffe9, 23),
    (0x1fffde, 21),
    (0x7fffea, 23),
    (0x3fffdd, 22),
    (0x3fffde, 22),
    (0xfffff0, 24),
    (0x1fffdf, 21),
    (0x3fffdf, 22),
    (0x7fffeb, 23),
    (0x7fffec, 23),
    (0x1fffe0, 21),
    (0x1fffe1, 21),
    (0x3fffe0, 22),
    (0x1fffe2, 21),
    (0x7fffed, 23),
    (0x3fffe1, 22),
    (0x7fffee, 23),
    (0x7fffef, 23),
    (0xfffea, 20),
    (0x3fffe2, 22),
    (0x3fffe3, 22),
    (0x3fffe4, 22),
    (0x7ffff0, 23),
    (0x3fffe5, 22),
    (0x3fffe6, 22),
    (0x7ffff1, 23),
    (0x3ffffe0, 26),
    (0x3ffffe1, 26),
    (0xfffeb, 20),
    (0x7fff1, 19),
    (0x3fffe7, 22),
    (0x7ffff2, 23),
    (0x3fffe8, 22),
    (0x1ffffec, 25),
    (0x3ffffe2, 26),
    (0x3ffffe3, 26),
    (0x3ffffe4, 26),
    (0x7ffffde, 27),
    (0x7ffffdf, 27),
    (0x3ffffe5, 26),
    (0xfffff1, 24),
    (0x1ffffed, 25),
    (0x7fff2, 19),
    (0x1fffe3, 21),
    (0x3ffffe6, 26),
    (0x7ffffe0, 27),
    (0x7ffffe1, 27),
    (0x3ffffe7, 26),
    (0x7ffffe2, 27),
    (0xfffff2, 24),
    (0x1fffe4, 21),
    (0x1fffe5, 21),
    (0x3ffffe8, 26),
    (0x3ffffe9, 26),
    (0xffffffd, 28),
    (0x7ffffe3, 27),
    (0x7ffffe4, 27),
    (0x7ffffe5, 27),
    (0xfffec, 20),
    (0xfffff3, 24),
    (0xfffed, 20),
    (0x1fffe6, 21),
    (0x3fffe9, 22),
    (0x1fffe7, 21),
    (0x1fffe8, 21),
    (0x7ffff3, 23),
    (0x3fffea, 22),
    (0x3fffeb, 22),
    (0x1ffffee, 25),
    (0x1ffffef, 25),
    (0xfffff4, 24),
    (0xfffff5, 24),
    (0x3ffffea, 26),
    (0x7ffff4, 23),
    (0x3ffffeb, 26),
    (0x7ffffe6, 27),
    (0x3ffffec, 26),
    (0x3ffffed, 26),
    (0x7ffffe7, 27),
    (0x7ffffe8, 27),
    (0x7ffffe9, 27),
    (0x7ffffea, 27),
    (0x7ffffeb, 27),
    (0xffffffe, 28),
    (0x7ffffec, 27),
    (0x7ffffed, 27),
    (0x7ffffee, 27),
    (0x7ffffef, 27),
    (0x7fffff0, 27),
    (0x3ffffee, 26),
    (0x3fffffff, 30),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn decode_all(d: &mut Decoder, block: &[u8]) -> Result<Vec<(String, String)>, HpackError> {
        let mut got = Vec::new();
        d.decode(block, |n, v| {
            got.push((
                String::from_utf8_lossy(n).into_owned(),
                String::from_utf8_lossy(v).into_owned(),
            ))
        })?;
        Ok(got)
    }

    fn huffman_encode(s: &[u8]) -> Vec<u8> {
        let (mut acc, mut bits, mut out) = (0u64, 0u32, Vec::new());
        for &c in s {
            let (code, len) = HUFFMAN[c as usize];
            acc = acc << len | code as u64;
            bits += len as u32;
            while bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
            }
        }
        if bits > 0 {
            out.push(((acc << (8 - bits)) as u8) | ((1u8 << (8 - bits)) - 1));
        }
        out
    }

    /// Within each length the RFC's codes are consecutive: the canonical
    /// decoding this module does is exact.
    #[test]
    fn each_lengths_codes_are_consecutive() {
        for len in 5..=30u8 {
            let mut codes: Vec<u32> = HUFFMAN.iter().filter(|c| c.1 == len).map(|c| c.0).collect();
            codes.sort_unstable();
            for w in codes.windows(2) {
                assert_eq!(w[1], w[0] + 1, "length {len}");
            }
        }
    }

    /// Every byte value, Huffman-coded and decoded, comes back.
    #[test]
    fn huffman_round_trips_every_byte() {
        let all: Vec<u8> = (0..=255u8)
            .chain(b"Mon, 21 Oct 2013 20:13:21 GMT".iter().copied())
            .collect();
        let mut out = Vec::new();
        huffman_decode(&huffman_encode(&all), &mut out).unwrap();
        assert_eq!(out, all);
    }

    /// RFC 7541 C.4.1 (a request, Huffman) and C.6.1-C.6.2 (responses with
    /// Huffman strings and dynamic-table entries reused).
    #[test]
    fn the_rfcs_examples_decode() {
        let mut d = Decoder::default();
        let got = decode_all(&mut d, &hex("828684418cf1e3c2e5f23a6ba0ab90f4ff")).unwrap();
        assert_eq!(
            got,
            [
                (":method", "GET"),
                (":scheme", "http"),
                (":path", "/"),
                (":authority", "www.example.com")
            ]
            .map(|(n, v)| (n.to_string(), v.to_string()))
        );
        let mut d = Decoder::default();
        let c61 = hex("488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3");
        let got = decode_all(&mut d, &c61).unwrap();
        let want = [
            (":status", "302"),
            ("cache-control", "private"),
            ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
            ("location", "https://www.example.com"),
        ];
        assert_eq!(got, want.map(|(n, v)| (n.to_string(), v.to_string())));
        assert_eq!(d.size, 222);
        // C.6.2: ":status 307" as a literal, the rest from the dynamic table.
        let got = decode_all(&mut d, &hex("4883640effc1c0bf")).unwrap();
        assert_eq!(got[0], (":status".into(), "307".into()));
        assert_eq!(
            got[1..],
            decode_all(&mut Decoder::default(), &c61).unwrap()[1..]
        );
    }

    /// Every prefix of a block and corrupted bytes are errors or fields, never a panic.
    #[test]
    fn cut_or_corrupted_blocks_never_panic() {
        let c61 = hex("488264025885aec3771a4b6196d07abe941054d444a8200595040b8166e082a62d1bff6e919d29ad171863c78f0b97c8e9ae82ae43d3");
        for cut in 0..c61.len() {
            let _ = decode_all(&mut Decoder::default(), &c61[..cut]);
        }
        let mut x = 0x2545f491u32;
        for _ in 0..20_000 {
            let block: Vec<u8> = (0..(x % 40) as usize)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            let _ = decode_all(&mut Decoder::default(), &block);
        }
        assert!(decode_all(&mut Decoder::default(), &[0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(decode_all(&mut Decoder::default(), &[0x80]).is_err());
    }
}
