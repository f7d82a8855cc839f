//! A sans-I/O HTTP/1.1 response decoder for keep-alive and pipelined
//! connections: bytes in, the parts of each response out, in order — its head
//! (status and headers), its body as it arrives (Content-Length or chunked),
//! and its end with the status, the body's length and whether the server
//! announced a close. It never buffers a body (only passes it through or counts
//! it), so it runs at line rate; it rejects what it cannot frame (no length,
//! bad chunk sizes, oversized heads) instead of guessing. Used by the browser
//! model, the load users and bench.

pub use httparse::Header;

/// A complete response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// Body bytes received.
    pub body: u64,
    /// The server asked to close the connection after it.
    pub close: bool,
}

/// A piece of a response, as the decoder meets it.
#[derive(Debug)]
pub enum Part<'a> {
    /// The head: status and headers (the body follows).
    Head {
        status: u16,
        headers: &'a [Header<'a>],
    },
    /// Body bytes (chunked framing removed).
    Body(&'a [u8]),
    /// The response is complete.
    End(Response),
}

/// The value of header `name` (case-insensitive), if the head has it.
pub fn header<'a>(headers: &'a [Header<'a>], name: &str) -> Option<&'a [u8]> {
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .map(|h| h.value)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    BadHead(String),
    HeadTooLarge,
    NoLength,
    BadChunk,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::BadHead(e) => write!(f, "bad response head: {e}"),
            DecodeError::HeadTooLarge => f.write_str("response head larger than 64 KiB"),
            DecodeError::NoLength => {
                f.write_str("response without Content-Length or chunked encoding")
            }
            DecodeError::BadChunk => f.write_str("bad chunked encoding"),
        }
    }
}

const MAX_HEAD: usize = 64 * 1024;

enum State {
    Head,
    Body {
        status: u16,
        close: bool,
        left: u64,
        total: u64,
    },
    ChunkSize {
        status: u16,
        close: bool,
        total: u64,
    },
    ChunkData {
        status: u16,
        close: bool,
        left: u64,
        total: u64,
    },
    ChunkDataEnd {
        status: u16,
        close: bool,
        total: u64,
    },
    Trailers {
        status: u16,
        close: bool,
        total: u64,
    },
}

/// Decodes a stream of responses. Feed bytes with `decode`; it consumes what it
/// can and keeps a partial head or chunk-size line for the next call.
pub struct Decoder {
    state: State,
    pending: Vec<u8>,
    /// Bytes of the response in progress fed by earlier calls.
    carried: u64,
    /// The length of the current call's input, and where in it the response
    /// in progress began (0 when it began in an earlier call).
    call_len: usize,
    response_start: usize,
    /// The fewest bytes any complete response took on the wire, head included.
    smallest: Option<u64>,
    /// The last head parsed whole from one input, and what it said (see `decode`).
    last_head: Vec<u8>,
    last_parsed: Option<Parsed>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            state: State::Head,
            pending: Vec::new(),
            carried: 0,
            call_len: 0,
            response_start: 0,
            smallest: None,
            last_head: Vec::new(),
            last_parsed: None,
        }
    }
}

fn find_crlf(b: &[u8]) -> Option<usize> {
    b.windows(2).position(|w| w == b"\r\n")
}

impl Decoder {
    /// Consumes `input`, calling `on_response` for each complete response.
    ///
    /// A head byte for byte the same as the last one parsed is not parsed
    /// again: the same bytes say the same (status, close, length). A server
    /// answering the same request sends the same head but for its Date, which
    /// changes once a second; a comparison of the bytes replaces the parse
    /// (httparse and the header scan were 2.4 % of `spdylab bench`'s CPU
    /// against nginx, h1, 25 Nov 2026). `decode_parts` parses every head,
    /// since it hands out the headers.
    pub fn decode(
        &mut self,
        input: &[u8],
        on_response: &mut dyn FnMut(Response),
    ) -> Result<(), DecodeError> {
        self.decode_with(input, true, &mut |part| {
            if let Part::End(r) = part {
                on_response(r)
            }
        })
    }

    /// The fewest bytes a complete response has taken on the wire so far, head
    /// and framing included (None before the first one).
    pub fn smallest_response(&self) -> Option<u64> {
        self.smallest
    }

    /// Bytes of the response in progress received so far (0 between responses).
    pub fn partial_bytes(&self) -> u64 {
        self.carried
    }

    /// A response ended with `remaining` bytes of the current call's input left.
    fn response_ended(&mut self, remaining: usize) {
        let end = self.call_len - remaining;
        let len = self.carried + (end - self.response_start) as u64;
        self.smallest = Some(self.smallest.map_or(len, |s| s.min(len)));
        self.carried = 0;
        self.response_start = end;
    }

    /// Consumes `input`, calling `on_part` for each head, piece of body and end.
    pub fn decode_parts(
        &mut self,
        input: &[u8],
        on_part: &mut dyn FnMut(Part),
    ) -> Result<(), DecodeError> {
        self.decode_with(input, false, on_part)
    }

    fn decode_with(
        &mut self,
        input: &[u8],
        same_heads: bool,
        on_part: &mut dyn FnMut(Part),
    ) -> Result<(), DecodeError> {
        self.call_len = input.len();
        self.response_start = 0;
        let result = self.decode_input(input, same_heads, on_part);
        // Whatever the call returned, it consumed its whole input.
        self.carried += (self.call_len - self.response_start) as u64;
        result
    }

    /// `same_heads`: a head the same as the last one may skip the parse (and
    /// its `Part::Head`).
    fn decode_input(
        &mut self,
        mut input: &[u8],
        same_heads: bool,
        on_part: &mut dyn FnMut(Part),
    ) -> Result<(), DecodeError> {
        while !input.is_empty() {
            match &mut self.state {
                State::Head => {
                    // Parse from the pending bytes plus the new ones, without copying when possible.
                    let (head_len, parsed) = if self.pending.is_empty() {
                        let cached = match self.last_parsed {
                            Some(parsed) if same_heads && input.starts_with(&self.last_head) => {
                                Some((self.last_head.len(), parsed))
                            }
                            _ => None,
                        };
                        match cached.map_or_else(|| parse_head(input, on_part), |c| Ok(Some(c)))? {
                            Some((n, parsed)) => {
                                if same_heads && cached.is_none() {
                                    self.last_head.clear();
                                    self.last_head.extend_from_slice(&input[..n]);
                                    self.last_parsed = Some(parsed);
                                }
                                (n, parsed)
                            }
                            None => {
                                if input.len() > MAX_HEAD {
                                    return Err(DecodeError::HeadTooLarge);
                                }
                                self.pending.extend_from_slice(input);
                                return Ok(());
                            }
                        }
                    } else {
                        let before = self.pending.len();
                        let take = input.len().min(MAX_HEAD + 4 - before.min(MAX_HEAD));
                        self.pending.extend_from_slice(&input[..take]);
                        match parse_head(&self.pending, on_part)? {
                            Some((n, p)) => {
                                self.pending.clear();
                                (n - before, p)
                            }
                            None => {
                                if self.pending.len() > MAX_HEAD {
                                    return Err(DecodeError::HeadTooLarge);
                                }
                                input = &input[take..];
                                if input.is_empty() {
                                    return Ok(());
                                }
                                continue;
                            }
                        }
                    };
                    input = &input[head_len..];
                    let (status, close, length) = parsed;
                    self.state = match length {
                        Length::Bytes(0) => {
                            on_part(Part::End(Response {
                                status,
                                body: 0,
                                close,
                            }));
                            self.response_ended(input.len());
                            State::Head
                        }
                        Length::Bytes(n) => State::Body {
                            status,
                            close,
                            left: n,
                            total: 0,
                        },
                        Length::Chunked => State::ChunkSize {
                            status,
                            close,
                            total: 0,
                        },
                    };
                }
                State::Body {
                    status,
                    close,
                    left,
                    total,
                } => {
                    let take = (*left).min(input.len() as u64);
                    *left -= take;
                    *total += take;
                    on_part(Part::Body(&input[..take as usize]));
                    input = &input[take as usize..];
                    if *left == 0 {
                        on_part(Part::End(Response {
                            status: *status,
                            body: *total,
                            close: *close,
                        }));
                        self.state = State::Head;
                        self.response_ended(input.len());
                    }
                }
                State::ChunkSize {
                    status,
                    close,
                    total,
                } => {
                    let (status, close, total) = (*status, *close, *total);
                    let Some(line) = self.line(&mut input)? else {
                        return Ok(());
                    };
                    let hex = line.split(|b| *b == b';').next().unwrap_or(&[]);
                    let text = std::str::from_utf8(hex)
                        .map_err(|_| DecodeError::BadChunk)?
                        .trim();
                    let size = u64::from_str_radix(text, 16).map_err(|_| DecodeError::BadChunk)?;
                    self.state = if size == 0 {
                        State::Trailers {
                            status,
                            close,
                            total,
                        }
                    } else {
                        State::ChunkData {
                            status,
                            close,
                            left: size,
                            total,
                        }
                    };
                }
                State::ChunkData {
                    status,
                    close,
                    left,
                    total,
                } => {
                    let take = (*left).min(input.len() as u64);
                    *left -= take;
                    *total += take;
                    on_part(Part::Body(&input[..take as usize]));
                    input = &input[take as usize..];
                    if *left == 0 {
                        self.state = State::ChunkDataEnd {
                            status: *status,
                            close: *close,
                            total: *total,
                        };
                    }
                }
                State::ChunkDataEnd {
                    status,
                    close,
                    total,
                } => {
                    let (status, close, total) = (*status, *close, *total);
                    let Some(line) = self.line(&mut input)? else {
                        return Ok(());
                    };
                    if !line.is_empty() {
                        return Err(DecodeError::BadChunk);
                    }
                    self.state = State::ChunkSize {
                        status,
                        close,
                        total,
                    };
                }
                State::Trailers {
                    status,
                    close,
                    total,
                } => {
                    let (status, close, total) = (*status, *close, *total);
                    let Some(line) = self.line(&mut input)? else {
                        return Ok(());
                    };
                    if line.is_empty() {
                        on_part(Part::End(Response {
                            status,
                            body: total,
                            close,
                        }));
                        self.state = State::Head;
                        self.response_ended(input.len());
                    }
                }
            }
        }
        Ok(())
    }

    /// A CRLF-terminated line (without it), or None when it is not complete yet.
    fn line(&mut self, input: &mut &[u8]) -> Result<Option<Vec<u8>>, DecodeError> {
        match find_crlf(input) {
            Some(i) if self.pending.is_empty() => {
                let line = input[..i].to_vec();
                *input = &input[i + 2..];
                Ok(Some(line))
            }
            _ => {
                // Slow path: a line split across reads.
                let before = self.pending.len();
                self.pending.extend_from_slice(input);
                if let Some(i) = find_crlf(&self.pending) {
                    let line = self.pending[..i].to_vec();
                    let used = i + 2 - before;
                    *input = &input[used..];
                    self.pending.clear();
                    Ok(Some(line))
                } else {
                    if self.pending.len() > 4096 {
                        return Err(DecodeError::BadChunk);
                    }
                    *input = &[];
                    Ok(None)
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Length {
    Bytes(u64),
    Chunked,
}

/// What a head says: (status, close, body length).
type Parsed = (u16, bool, Length);

/// A parsed head: its length in bytes, then what it says.
type Head = (usize, Parsed);

fn parse_head(b: &[u8], on_part: &mut dyn FnMut(Part)) -> Result<Option<Head>, DecodeError> {
    let mut headers = [httparse::EMPTY_HEADER; 48];
    let mut resp = httparse::Response::new(&mut headers);
    let n = match resp.parse(b) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(DecodeError::BadHead(e.to_string())),
    };
    let status = resp.code.unwrap_or(0);
    let mut close = resp.version == Some(0);
    let mut length = None;
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let v = std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok());
            length =
                Some(Length::Bytes(v.ok_or_else(|| {
                    DecodeError::BadHead("bad Content-Length".into())
                })?));
        } else if h.name.eq_ignore_ascii_case("transfer-encoding")
            && h.value.eq_ignore_ascii_case(b"chunked")
        {
            length = Some(Length::Chunked);
        } else if h.name.eq_ignore_ascii_case("connection") {
            close = h.value.eq_ignore_ascii_case(b"close");
        }
    }
    // 1xx, 204 and 304 have no body.
    if status < 200 || status == 204 || status == 304 {
        length = Some(Length::Bytes(0));
    }
    let length = length.ok_or(DecodeError::NoLength)?;
    on_part(Part::Head {
        status,
        headers: resp.headers,
    });
    Ok(Some((n, (status, close, length))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(input: &[u8], split: usize) -> Result<Vec<Response>, DecodeError> {
        let mut d = Decoder::default();
        let mut out = Vec::new();
        for chunk in input.chunks(split.max(1)) {
            d.decode(chunk, &mut |r| out.push(r))?;
        }
        Ok(out)
    }

    const STREAM: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;x=y\r\ndefg\r\n0\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

    #[test]
    fn the_smallest_response_and_the_partial_bytes_are_counted_at_every_split() {
        // Where each response starts, and where the stream ends.
        let mut bounds: Vec<usize> = (0..STREAM.len())
            .filter(|&i| STREAM[i..].starts_with(b"HTTP/1.1 "))
            .collect();
        bounds.push(STREAM.len());
        let smallest = bounds.windows(2).map(|w| (w[1] - w[0]) as u64).min();
        for split in 1..=STREAM.len() {
            let mut d = Decoder::default();
            let mut fed = 0;
            for chunk in STREAM.chunks(split) {
                d.decode(chunk, &mut |_| {}).unwrap();
                fed += chunk.len();
                let last_end = *bounds.iter().filter(|&&b| b <= fed).max().unwrap();
                assert_eq!(
                    d.partial_bytes(),
                    (fed - last_end) as u64,
                    "split {split}, fed {fed}"
                );
            }
            assert_eq!(d.smallest_response(), smallest, "split {split}");
        }
    }

    #[test]
    fn pipelined_responses_decode_the_same_at_every_split() {
        let want = vec![
            Response {
                status: 200,
                body: 5,
                close: false,
            },
            Response {
                status: 404,
                body: 0,
                close: false,
            },
            Response {
                status: 200,
                body: 7,
                close: false,
            },
            Response {
                status: 200,
                body: 2,
                close: true,
            },
        ];
        for split in 1..=STREAM.len() {
            assert_eq!(all(STREAM, split).unwrap(), want, "split {split}");
        }
    }

    #[test]
    fn a_repeated_head_says_what_it_said_and_a_changed_one_is_parsed_anew() {
        let a = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n".as_slice();
        // Each differs from `a` just after a prefix of it.
        let longer = b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n".as_slice();
        let closing = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\n";
        let missing = b"HTTP/1.1 500 Oops\r\nContent-Length: 5\r\n\r\n".as_slice();
        let mut stream = Vec::new();
        let mut want = Vec::new();
        for (head, body, status, close) in [
            (a, 5, 200, false),
            (a, 5, 200, false),
            (longer, 50, 200, false),
            (a, 5, 200, false),
            (missing, 5, 500, false),
            (a, 5, 200, false),
            (a, 5, 200, false),
            (closing.as_slice(), 5, 200, true),
        ] {
            stream.extend_from_slice(head);
            stream.extend(std::iter::repeat_n(b'x', body));
            want.push(Response {
                status,
                body: body as u64,
                close,
            });
        }
        for split in 1..=stream.len() {
            assert_eq!(all(&stream, split).unwrap(), want, "split {split}");
        }
        // A head the same but for a byte that breaks it is still an error.
        let mut bad = [a, b"xxxxx"].concat();
        bad.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\nxxxxx");
        assert!(all(&bad, bad.len()).is_err());
    }

    #[test]
    fn heads_and_bodies_come_out_whole_at_every_split() {
        for split in 1..=STREAM.len() {
            let mut d = Decoder::default();
            // (status, content-length header, body) per response.
            let mut got: Vec<(u16, Option<Vec<u8>>, Vec<u8>)> = Vec::new();
            let mut ends = 0;
            for chunk in STREAM.chunks(split) {
                d.decode_parts(chunk, &mut |p| match p {
                    Part::Head { status, headers } => got.push((
                        status,
                        header(headers, "Content-Length").map(<[u8]>::to_vec),
                        Vec::new(),
                    )),
                    Part::Body(b) => got.last_mut().unwrap().2.extend_from_slice(b),
                    Part::End(_) => ends += 1,
                })
                .unwrap();
            }
            assert_eq!(ends, 4, "split {split}");
            assert_eq!(
                got,
                vec![
                    (200, Some(b"5".to_vec()), b"hello".to_vec()),
                    (404, Some(b"0".to_vec()), vec![]),
                    (200, None, b"abcdefg".to_vec()),
                    (200, Some(b"2".to_vec()), b"ok".to_vec()),
                ],
                "split {split}"
            );
        }
    }

    #[test]
    fn unframeable_responses_are_errors() {
        assert_eq!(
            all(b"HTTP/1.1 200 OK\r\n\r\nbody", 100),
            Err(DecodeError::NoLength)
        );
        assert!(matches!(
            all(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", 100),
            Err(DecodeError::BadHead(_))
        ));
        assert!(matches!(
            all(b"garbage\r\n\r\n", 100),
            Err(DecodeError::BadHead(_))
        ));
        assert_eq!(
            all(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                3
            ),
            Err(DecodeError::BadChunk)
        );
        let huge = [b"HTTP/1.1 200 OK\r\nX: ".as_slice(), &vec![b'a'; 70_000]].concat();
        assert_eq!(all(&huge, 1000), Err(DecodeError::HeadTooLarge));
    }
}
