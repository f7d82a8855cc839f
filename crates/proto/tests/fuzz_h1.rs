//! Property tests with arbitrary inputs for the HTTP/1.1 response decoder (the
//! fuzzing of issue 19), through its public API: arbitrary bytes and mutated
//! valid streams, cut anywhere, never panic; pipelined responses the test
//! writes (Content-Length, chunked with extensions and trailers, bodiless
//! statuses, `Connection: close`) decode to what was written at every cut.
//! docs/fuzzing.md has the long runs and the coverage-guided target.

use proptest::prelude::*;
use proto::h1::{DecodeError, Decoder, Part, Response};

fn decode(chunks: &[&[u8]]) -> (Vec<Response>, Option<DecodeError>) {
    let mut d = Decoder::default();
    let mut out = Vec::new();
    for c in chunks {
        if let Err(e) = d.decode(c, &mut |r| out.push(r)) {
            return (out, Some(e));
        }
    }
    (out, None)
}

fn cut<'a>(bytes: &'a [u8], at: &[prop::sample::Index]) -> Vec<&'a [u8]> {
    let mut v: Vec<usize> = at.iter().map(|i| i.index(bytes.len() + 1)).collect();
    v.push(0);
    v.push(bytes.len());
    v.sort_unstable();
    v.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
}

/// How a generated response frames its body.
#[derive(Debug, Clone)]
enum Body {
    Length(usize),
    /// Chunk sizes (the last 0 is added), with or without extensions and trailers.
    Chunked(Vec<usize>, bool),
}

#[derive(Debug, Clone)]
struct Spec {
    status: u16,
    close: bool,
    http10: bool,
    body: Body,
    extra: Vec<(String, String)>,
}

fn any_spec() -> impl Strategy<Value = Spec> {
    (
        prop_oneof![Just(200u16), Just(204), Just(304), Just(404), 100u16..600],
        any::<bool>(),
        any::<bool>(),
        prop_oneof![
            (0usize..3000).prop_map(Body::Length),
            (proptest::collection::vec(1usize..700, 0..5), any::<bool>())
                .prop_map(|(c, x)| Body::Chunked(c, x)),
        ],
        proptest::collection::vec(("x-[a-z]{1,8}", "[ -~]{0,30}"), 0..4),
    )
        .prop_map(|(status, close, http10, body, extra)| Spec {
            status,
            close,
            http10,
            body,
            extra,
        })
}

/// The bytes of a response and what the decoder should report for it.
fn write(s: &Spec, out: &mut Vec<u8>) -> Response {
    let version = if s.http10 { "1.0" } else { "1.1" };
    out.extend(format!("HTTP/{version} {} Reason\r\n", s.status).bytes());
    for (n, v) in &s.extra {
        out.extend(format!("{n}: {}\r\n", v.trim()).bytes());
    }
    if s.close {
        out.extend(b"Connection: close\r\n");
    }
    let bodiless = s.status < 200 || s.status == 204 || s.status == 304;
    let body = match &s.body {
        Body::Length(n) => {
            out.extend(format!("Content-Length: {n}\r\n\r\n").bytes());
            if !bodiless {
                out.extend(std::iter::repeat_n(b'b', *n));
            }
            *n
        }
        Body::Chunked(sizes, ext) => {
            out.extend(b"Transfer-Encoding: chunked\r\n\r\n");
            if !bodiless {
                for n in sizes {
                    let e = if *ext { ";name=value" } else { "" };
                    out.extend(format!("{n:x}{e}\r\n").bytes());
                    out.extend(std::iter::repeat_n(b'c', *n));
                    out.extend(b"\r\n");
                }
                out.extend(b"0\r\n");
                if *ext {
                    out.extend(b"X-Trailer: t\r\n");
                }
                out.extend(b"\r\n");
            }
            sizes.iter().sum()
        }
    };
    Response {
        status: s.status,
        body: if bodiless { 0 } else { body as u64 },
        close: s.close || s.http10,
    }
}

/// The responses and error `decode_parts` reports (it parses every head).
fn decode_every_head(chunks: &[&[u8]]) -> (Vec<Response>, Option<DecodeError>) {
    let mut d = Decoder::default();
    let mut out = Vec::new();
    for c in chunks {
        let ended = &mut |p: Part| {
            if let Part::End(r) = p {
                out.push(r)
            }
        };
        if let Err(e) = d.decode_parts(c, ended) {
            return (out, Some(e));
        }
    }
    (out, None)
}

proptest! {
    #[test]
    fn fuzz_repeated_heads_decode_as_if_each_were_parsed(
        specs in proptest::collection::vec((any_spec(), 1usize..4), 1..5),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
        at in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        // Each response written 1-3 times in a row: `decode` skips parsing a
        // head the same as the last one, and must say what parsing it says,
        // on valid streams and on streams with a few bytes changed.
        let mut bytes = Vec::new();
        for (s, times) in &specs {
            for _ in 0..*times {
                write(s, &mut bytes);
            }
        }
        for (i, x) in &flips {
            let n = i.index(bytes.len());
            bytes[n] ^= x;
        }
        let chunks = cut(&bytes, &at);
        prop_assert_eq!(decode(&chunks), decode_every_head(&chunks));
    }

    #[test]
    fn fuzz_arbitrary_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..3000),
        at in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        decode(&cut(&bytes, &at));
    }

    #[test]
    fn fuzz_written_responses_decode_however_cut(
        specs in proptest::collection::vec(any_spec(), 1..6),
        at in proptest::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let mut bytes = Vec::new();
        let want: Vec<Response> = specs.iter().map(|s| write(s, &mut bytes)).collect();
        let (got, err) = decode(&cut(&bytes, &at));
        prop_assert_eq!(err, None);
        prop_assert_eq!(got, want);
    }

    #[test]
    fn fuzz_mutated_streams_never_panic(
        specs in proptest::collection::vec(any_spec(), 1..5),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        inserts in proptest::collection::vec(
            (any::<prop::sample::Index>(), proptest::collection::vec(any::<u8>(), 0..16)),
            0..3,
        ),
        at in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let mut bytes = Vec::new();
        for s in &specs {
            write(s, &mut bytes);
        }
        for (i, x) in &flips {
            let n = i.index(bytes.len());
            bytes[n] ^= x;
        }
        for (i, b) in &inserts {
            let n = i.index(bytes.len() + 1);
            bytes.splice(n..n, b.iter().copied());
        }
        let whole = decode(&[&bytes]);
        let pieces = decode(&cut(&bytes, &at));
        // However the bytes arrive, the responses before any error are the same.
        let n = whole.0.len().min(pieces.0.len());
        prop_assert_eq!(&whole.0[..n], &pieces.0[..n]);
    }
}
