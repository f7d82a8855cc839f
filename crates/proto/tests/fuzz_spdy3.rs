//! Property tests with arbitrary inputs for the SPDY/3.1 frame and header-block
//! decoder (the fuzzing of issue 19): arbitrary bytes, mutated valid sessions
//! and arbitrary header blocks (deflated with the SPDY dictionary, so that they
//! reach the block parser) never panic and stay within the decoder's limits;
//! every frame the encoder writes decodes to itself, however the bytes are cut.
//! The default case count keeps these fast in `cargo test`; docs/fuzzing.md has
//! the long runs (`PROPTEST_CASES=…`) and the coverage-guided targets in fuzz/.

use flate2::Compression;
use proptest::prelude::*;
use proto::spdy3::{Decoder, Encoder, Error, Frame, Headers, Limits};
use testkit::spdy::{control, deflate_blocks, header_frame};

/// Feeds `chunks` one after the other, collecting frames until the first
/// error; never more than `max` frames per chunk (a guard, not a limit).
fn drain(d: &mut Decoder, chunks: &[&[u8]]) -> (Vec<Frame>, Option<Error>) {
    let mut frames = Vec::new();
    for c in chunks {
        d.feed(c);
        loop {
            match d.next_frame() {
                Ok(Some(f)) => frames.push(f),
                Ok(None) => break,
                Err(e) => {
                    // Once failed, the decoder repeats its error.
                    assert_eq!(d.next_frame(), Err(e.clone()));
                    return (frames, Some(e));
                }
            }
        }
    }
    (frames, None)
}

/// What the limits promise of every frame a decoder returns.
fn within(limits: Limits, f: &Frame) -> bool {
    let headers = |h: &Headers| {
        4 + h.iter().map(|(n, v)| 8 + n.len() + v.len()).sum::<usize>() <= limits.max_headers
            // from_utf8_lossy may grow an invalid byte to three.
            || h.iter().any(|(_, v)| v.contains('\u{fffd}'))
    };
    match f {
        Frame::Data { data, .. } => data.len() <= limits.max_frame,
        Frame::SynStream { headers: h, .. }
        | Frame::SynReply { headers: h, .. }
        | Frame::Headers { headers: h, .. } => {
            headers(h)
                && h.iter()
                    .all(|(n, _)| !n.is_empty() && !n.bytes().any(|b| b.is_ascii_uppercase()))
        }
        Frame::Settings { entries, .. } => entries.len() * 8 + 4 <= limits.max_frame,
        _ => true,
    }
}

/// A plain header block for `headers`, as the encoder lays it out.
fn plain_block(headers: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut b = (headers.len() as u32).to_be_bytes().to_vec();
    for (n, v) in headers {
        b.extend_from_slice(&(n.len() as u32).to_be_bytes());
        b.extend_from_slice(n);
        b.extend_from_slice(&(v.len() as u32).to_be_bytes());
        b.extend_from_slice(v);
    }
    b
}

fn any_headers() -> impl Strategy<Value = Headers> {
    proptest::collection::vec(("[a-z:][a-z0-9:._-]{0,15}", "\\PC{0,60}"), 0..8)
}

/// Any frame the encoder can write, with its fields in their wire ranges.
fn any_frame() -> impl Strategy<Value = Frame> {
    let id = 0u32..=0x7fff_ffff;
    prop_oneof![
        (
            id.clone(),
            id.clone(),
            0u8..8,
            any::<bool>(),
            any::<bool>(),
            any_headers()
        )
            .prop_map(
                |(stream_id, associated_to, priority, fin, unidirectional, headers)| {
                    Frame::SynStream {
                        stream_id,
                        associated_to,
                        priority,
                        fin,
                        unidirectional,
                        headers,
                    }
                }
            ),
        (id.clone(), any::<bool>(), any_headers()).prop_map(|(stream_id, fin, headers)| {
            Frame::SynReply {
                stream_id,
                fin,
                headers,
            }
        }),
        (id.clone(), any::<bool>(), any_headers()).prop_map(|(stream_id, fin, headers)| {
            Frame::Headers {
                stream_id,
                fin,
                headers,
            }
        }),
        (id.clone(), any::<u32>())
            .prop_map(|(stream_id, status)| Frame::RstStream { stream_id, status }),
        (
            any::<bool>(),
            proptest::collection::vec((any::<u8>(), 0u32..0x0100_0000, any::<u32>()), 0..6)
        )
            .prop_map(|(clear, entries)| Frame::Settings { clear, entries }),
        any::<u32>().prop_map(|id| Frame::Ping { id }),
        (id.clone(), any::<u32>()).prop_map(|(last_good_stream_id, status)| Frame::GoAway {
            last_good_stream_id,
            status
        }),
        (id.clone(), id.clone())
            .prop_map(|(stream_id, delta)| Frame::WindowUpdate { stream_id, delta }),
        (
            id,
            any::<bool>(),
            proptest::collection::vec(any::<u8>(), 0..3000)
        )
            .prop_map(|(stream_id, fin, data)| Frame::Data {
                stream_id,
                fin,
                data
            }),
        // Every type the decoder does not know (5 was SPDY/2's NOOP, 10 is CREDENTIAL).
        prop_oneof![Just(5u16), 10u16..=0xffff]
            .prop_map(|frame_type| Frame::Unknown { frame_type }),
    ]
}

fn cut(bytes: &[u8], at: &[prop::sample::Index]) -> Vec<usize> {
    let mut v: Vec<usize> = at.iter().map(|i| i.index(bytes.len() + 1)).collect();
    v.push(0);
    v.push(bytes.len());
    v.sort_unstable();
    v
}

fn pieces<'a>(bytes: &'a [u8], points: &[usize]) -> Vec<&'a [u8]> {
    points.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
}

const SMALL: Limits = Limits {
    max_frame: 2048,
    max_headers: 2048,
};

proptest! {
    #[test]
    fn fuzz_arbitrary_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..2000),
        at in proptest::collection::vec(any::<prop::sample::Index>(), 0..5),
    ) {
        let points = cut(&bytes, &at);
        let mut d = Decoder::new(SMALL);
        let (frames, _) = drain(&mut d, &pieces(&bytes, &points));
        for f in &frames {
            prop_assert!(within(SMALL, f), "{f:?}");
        }
    }

    #[test]
    fn fuzz_control_frames_with_arbitrary_payloads_never_panic(
        frames in proptest::collection::vec(
            (0u16..12, any::<u8>(), proptest::collection::vec(any::<u8>(), 0..64)),
            1..8,
        ),
    ) {
        // Valid heads of every known type, with payloads of any length and content.
        let mut bytes = Vec::new();
        for (kind, flags, payload) in &frames {
            bytes.extend(control(*kind, *flags, payload));
        }
        let mut d = Decoder::new(SMALL);
        let (got, _) = drain(&mut d, &[&bytes]);
        for f in &got {
            prop_assert!(within(SMALL, f), "{f:?}");
        }
    }

    #[test]
    fn fuzz_arbitrary_header_blocks_never_panic(
        blocks in proptest::collection::vec(
            prop_oneof![
                // Any bytes at all once inflated.
                proptest::collection::vec(any::<u8>(), 0..200),
                // Well-formed layouts with any names and values, some then damaged.
                (
                    proptest::collection::vec(
                        (proptest::collection::vec(any::<u8>(), 0..12),
                         proptest::collection::vec(any::<u8>(), 0..40)),
                        0..6,
                    ),
                    proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
                )
                    .prop_map(|(h, flips)| {
                        let mut b = plain_block(&h);
                        for (i, x) in flips {
                            let n = i.index(b.len());
                            b[n] ^= x;
                        }
                        b
                    }),
            ],
            1..5,
        ),
        kinds in proptest::collection::vec(prop_oneof![Just(1u16), Just(2), Just(8)], 5),
    ) {
        let deflated = deflate_blocks(Compression::default(), &blocks);
        let mut bytes = Vec::new();
        for (i, block) in deflated.iter().enumerate() {
            bytes.extend(header_frame(kinds[i], 0, block));
        }
        let limits = Limits { max_frame: 1 << 16, max_headers: 1024 };
        let mut d = Decoder::new(limits);
        let (got, err) = drain(&mut d, &[&bytes]);
        for f in &got {
            prop_assert!(within(limits, f), "{f:?}");
        }
        // A block that is a well-formed list of lower-case UTF-8 names decodes.
        if err.is_none() {
            prop_assert_eq!(got.len(), blocks.len());
        }
    }

    #[test]
    fn fuzz_frames_round_trip_however_cut(
        frames in proptest::collection::vec(any_frame(), 1..12),
        at in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let mut e = Encoder::default();
        let mut bytes = Vec::new();
        for f in &frames {
            e.encode(f, &mut bytes);
        }
        // Whole.
        let (whole, err) = drain(&mut Decoder::default(), &[&bytes]);
        prop_assert_eq!(err, None);
        prop_assert_eq!(&whole, &frames);
        // Cut at arbitrary points.
        let points = cut(&bytes, &at);
        let mut d = Decoder::default();
        let (got, err) = drain(&mut d, &pieces(&bytes, &points));
        prop_assert_eq!(err, None);
        prop_assert_eq!(got, frames);
        prop_assert_eq!(d.buffered(), 0);
    }

    #[test]
    fn fuzz_mutated_sessions_never_panic(
        frames in proptest::collection::vec(any_frame(), 1..8),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut_at in any::<prop::sample::Index>(),
        tail in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut e = Encoder::default();
        let mut bytes = Vec::new();
        for f in &frames {
            e.encode(f, &mut bytes);
        }
        for (i, x) in &flips {
            let n = i.index(bytes.len());
            bytes[n] ^= x;
        }
        // Cut somewhere and append garbage: a torn or hostile session.
        bytes.truncate(cut_at.index(bytes.len() + 1));
        bytes.extend_from_slice(&tail);
        let mut d = Decoder::new(SMALL);
        let (got, _) = drain(&mut d, &[&bytes]);
        for f in &got {
            prop_assert!(within(SMALL, f), "{f:?}");
        }
    }
}

#[test]
fn a_header_block_well_formed_in_plain_decodes_to_its_headers() {
    let h: Vec<(Vec<u8>, Vec<u8>)> = vec![
        (b":status".to_vec(), b"200 OK".to_vec()),
        (b"x-bin".to_vec(), vec![0, 0xff, b'a']),
    ];
    let block = &deflate_blocks(Compression::default(), &[plain_block(&h)])[0];
    let mut d = Decoder::default();
    let (got, err) = drain(&mut d, &[&header_frame(2, 1, block)]);
    assert_eq!(err, None);
    assert_eq!(
        got,
        vec![Frame::SynReply {
            stream_id: 1,
            fin: true,
            headers: vec![
                (":status".into(), "200 OK".into()),
                ("x-bin".into(), "\0\u{fffd}a".into()),
            ],
        }]
    );
}
