//! QUIC variable-length integers (RFC 9000 §16), the one codec the
//! workspace uses: the server's QUIC guards, the survey's wire readers and
//! the tests' hand-made HTTP/3 frames all read and write them here.

/// The largest value a varint holds (2^62 - 1).
pub const MAX: u64 = (1 << 62) - 1;

/// The varint at the start of `buf`: its value and how many bytes it took;
/// `None` when `buf` ends before it does.
pub fn decode(buf: &[u8]) -> Option<(u64, usize)> {
    let first = *buf.first()?;
    let len = 1usize << (first >> 6);
    let bytes = buf.get(..len)?;
    let value = bytes[1..]
        .iter()
        .fold(u64::from(first & 0x3f), |v, &b| (v << 8) | u64::from(b));
    Some((value, len))
}

/// Appends `value` to `out` in the shortest form (1, 2, 4 or 8 bytes);
/// values above [`MAX`] lose their top two bits.
pub fn encode(out: &mut Vec<u8>, value: u64) {
    match value {
        0..=63 => out.push(value as u8),
        64..=16_383 => out.extend_from_slice(&(value as u16 | 0x4000).to_be_bytes()),
        16_384..=1_073_741_823 => {
            out.extend_from_slice(&(value as u32 | 0x8000_0000).to_be_bytes())
        }
        _ => out.extend_from_slice(&(value | 0xc000_0000_0000_0000).to_be_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_length_round_trips_and_a_short_buffer_is_none() {
        for (value, len) in [
            (0, 1),
            (63, 1),
            (64, 2),
            (16_383, 2),
            (16_384, 4),
            (1_073_741_823, 4),
            (1_073_741_824, 8),
            (MAX, 8),
        ] {
            let mut out = Vec::new();
            encode(&mut out, value);
            assert_eq!(out.len(), len, "{value}");
            assert_eq!(decode(&out), Some((value, len)), "{value}");
            assert_eq!(decode(&out[..len - 1]), None, "{value}");
        }
        // RFC 9000 §A.1's examples.
        assert_eq!(
            decode(&[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c]),
            Some((151_288_809_941_952_652, 8))
        );
        assert_eq!(decode(&[0x9d, 0x7f, 0x3e, 0x7d]), Some((494_878_333, 4)));
        assert_eq!(decode(&[0x7b, 0xbd]), Some((15_293, 2)));
        assert_eq!(decode(&[0x25]), Some((37, 1)));
        assert_eq!(decode(&[0x40, 0x25]), Some((37, 2)));
        assert_eq!(decode(&[]), None);
    }
}
