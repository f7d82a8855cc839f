//! Chrome's HTTP/2 priority fields on the `h2` crate's HEADERS frames. The
//! `h2` crate (0.4) has no API for RFC 7540 priorities, so the client writes
//! through [`PriorityIo`], which rewrites its bytes on their way out: each
//! HEADERS frame that opens a new client stream gets the PRIORITY flag (0x20)
//! and the 5 bytes Chromium puts there (exclusive bit | parent stream,
//! weight − 1: `Http2PriorityDependencies` and `Spdy3PriorityToHttp2Weight`,
//! in `crate::priority`), right after the 9-byte frame header, its length
//! grown by 5. Everything else passes unchanged.
//!
//! [`Rewriter`] is the pure part: fed the client's bytes, it returns them
//! rewritten, keeping its state across writes (a frame header split between
//! writes, a payload still passing). It skips the 24-byte connection preface,
//! then reads frame headers. A HEADERS frame that already has the PRIORITY
//! flag, is PADDED (the `h2` crate never pads), is on an even or an already
//! opened stream (trailers) passes unchanged; CONTINUATION frames pass
//! unchanged (the priority belongs in the block's first frame whether or not
//! END_HEADERS is set there). A HEADERS frame that would grow past 16 384
//! bytes (the least SETTINGS_MAX_FRAME_SIZE a peer may have) is cut: its
//! last bytes go on in a CONTINUATION of their own, END_HEADERS moved there.
//! Its memory is one frame header.
//!
//! How a request's priority reaches the rewriter: the `h2` crate assigns a
//! stream its id in `send_request` (ids in call order; the HEADERS frames go
//! out in id order, as HTTP/2 requires), and `ResponseFuture::stream_id`
//! tells it. Right after `send_request`, with no await in between,
//! `conn::h2::request` registers id → priority in the connection's
//! [`Signals`]. A FIFO of priorities in send order would be wrong: request
//! tasks run concurrently, so the order of their pushes need not be the
//! order of their `send_request` calls, and holding a lock across
//! `send_request` could deadlock with the connection task, which writes
//! (through us) while holding the `h2` crate's own lock. On a multi-threaded
//! runtime the connection task may write a HEADERS frame before its id is
//! registered: the writer then waits (returns Pending, its waker kept) until
//! the registration wakes it, which always follows, since nothing can cancel
//! a task between `send_request` and the registration. When a request ends
//! (its response complete, failed, or its task dropped) the stream leaves
//! the dependency chain, as Chromium's `OnStreamDestruction`.
//!
//! [`PriorityIo::poll_write`] reports the bytes of the caller's buffer it
//! took, never those of the rewritten output: what the inner writer did not
//! take is held, and written first on the next write, flush or shutdown.
//! Until the first flush everything is held, so that the preface leaves in
//! one record with the SETTINGS and WINDOW_UPDATE after it, as Chromium's
//! (`PriorityIo::corked`).

use crate::priority::{Dependencies, Dependency, Priority};
use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The client connection preface's length (`PRI * HTTP/2.0…`).
const PREFACE: usize = 24;
const FRAME_HEADER: usize = 9;
const HEADERS: u8 = 0x1;
const CONTINUATION: u8 = 0x9;
const END_HEADERS: u8 = 0x4;
const PADDED: u8 = 0x8;
const PRIORITY: u8 = 0x20;
/// The least SETTINGS_MAX_FRAME_SIZE: every peer takes frames this long.
const MAX_FRAME: usize = 16_384;
/// At most this much of a caller's buffer is rewritten per write.
const CHUNK: usize = 64 * 1024;

/// The result of [`Rewriter::feed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fed {
    /// Bytes of the input taken (held inside or written out).
    pub consumed: usize,
    /// It stopped at a HEADERS frame opening this stream, whose priority the
    /// lookup did not know yet.
    pub waiting_for: Option<u32>,
}

/// The pure frame rewriter (see the module doc).
#[derive(Debug, Clone)]
pub struct Rewriter {
    /// Preface bytes still to pass.
    preface: usize,
    /// A frame header being gathered (complete at 9 bytes, until handled).
    head: [u8; FRAME_HEADER],
    head_len: usize,
    /// Payload bytes of the current frame still to pass on.
    pass: usize,
    /// Then a CONTINUATION frame header to emit, and that many bytes to pass.
    split: Option<([u8; FRAME_HEADER], usize)>,
    /// The highest client stream opened so far.
    last_opened: u32,
}

impl Default for Rewriter {
    fn default() -> Self {
        Rewriter::new()
    }
}

fn frame_header(len: usize, kind: u8, flags: u8, stream: u32) -> [u8; FRAME_HEADER] {
    let l = (len as u32).to_be_bytes();
    let s = (stream & 0x7fff_ffff).to_be_bytes();
    [l[1], l[2], l[3], kind, flags, s[0], s[1], s[2], s[3]]
}

impl Rewriter {
    pub fn new() -> Rewriter {
        Rewriter {
            preface: PREFACE,
            head: [0; FRAME_HEADER],
            head_len: 0,
            pass: 0,
            split: None,
            last_opened: 0,
        }
    }

    /// Rewrites what it can of `input` onto `out`; `lookup` gives a new
    /// stream's priority fields (None: not known yet — it stops there, the
    /// frame header kept, and says which stream it waits for).
    pub fn feed(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        lookup: &mut dyn FnMut(u32) -> Option<Dependency>,
    ) -> Fed {
        let mut at = 0;
        loop {
            if self.preface > 0 {
                let n = self.preface.min(input.len() - at);
                out.extend_from_slice(&input[at..at + n]);
                self.preface -= n;
                at += n;
                if self.preface > 0 {
                    break;
                }
                continue;
            }
            if self.pass > 0 {
                let n = self.pass.min(input.len() - at);
                out.extend_from_slice(&input[at..at + n]);
                self.pass -= n;
                at += n;
                if self.pass > 0 {
                    break;
                }
                if let Some((head, rest)) = self.split.take() {
                    out.extend_from_slice(&head);
                    self.pass = rest;
                }
                continue;
            }
            if self.head_len < FRAME_HEADER {
                let n = (FRAME_HEADER - self.head_len).min(input.len() - at);
                self.head[self.head_len..self.head_len + n].copy_from_slice(&input[at..at + n]);
                self.head_len += n;
                at += n;
                if self.head_len < FRAME_HEADER {
                    break;
                }
            }
            if let Some(stream) = self.on_head(out, lookup) {
                return Fed {
                    consumed: at,
                    waiting_for: Some(stream),
                };
            }
            if at == input.len() && self.pass == 0 && self.split.is_none() {
                break;
            }
        }
        Fed {
            consumed: at,
            waiting_for: None,
        }
    }

    /// Handles a complete frame header: emits it (rewritten if it opens a
    /// stream) and sets the payload to pass. Some(stream): its priority is
    /// not known yet; nothing was emitted.
    fn on_head(
        &mut self,
        out: &mut Vec<u8>,
        lookup: &mut dyn FnMut(u32) -> Option<Dependency>,
    ) -> Option<u32> {
        let h = self.head;
        let len = (usize::from(h[0]) << 16) | (usize::from(h[1]) << 8) | usize::from(h[2]);
        let (kind, flags) = (h[3], h[4]);
        let stream = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff;
        let opens = kind == HEADERS
            && stream % 2 == 1
            && stream > self.last_opened
            && flags & (PRIORITY | PADDED) == 0;
        if !opens {
            out.extend_from_slice(&h);
            self.pass = len;
            self.head_len = 0;
            return None;
        }
        let Some(dep) = lookup(stream) else {
            return Some(stream);
        };
        self.last_opened = stream;
        self.head_len = 0;
        let grown = len + 5;
        if grown <= MAX_FRAME {
            out.extend_from_slice(&frame_header(grown, HEADERS, flags | PRIORITY, stream));
            self.pass = len;
        } else {
            // Cut: the HEADERS frame at the limit, the rest in a CONTINUATION
            // that takes over END_HEADERS.
            let first = MAX_FRAME - 5;
            out.extend_from_slice(&frame_header(
                MAX_FRAME,
                HEADERS,
                (flags & !END_HEADERS) | PRIORITY,
                stream,
            ));
            self.pass = first;
            let rest = len - first;
            self.split = Some((
                frame_header(rest, CONTINUATION, flags & END_HEADERS, stream),
                rest,
            ));
        }
        let parent = (dep.parent & 0x7fff_ffff) | if dep.exclusive { 0x8000_0000 } else { 0 };
        out.extend_from_slice(&parent.to_be_bytes());
        out.push((dep.weight.clamp(1, 256) - 1) as u8);
        None
    }
}

#[derive(Default)]
struct Shared {
    /// Streams sent whose HEADERS has not gone out yet: their priority, and
    /// whether they have already ended.
    pending: HashMap<u32, (Priority, bool)>,
    deps: Dependencies,
    /// The writer waiting for a stream's priority.
    waker: Option<Waker>,
}

/// One connection's priorities, shared by its requests (which register
/// their streams) and its writer (which looks them up).
#[derive(Clone, Default)]
pub struct Signals(Arc<Mutex<Shared>>);

impl Signals {
    fn with<R>(&self, f: impl FnOnce(&mut Shared) -> R) -> R {
        let mut g = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut g)
    }

    /// Stream `id` was just sent with `priority` (call right after
    /// `send_request`, with no await in between).
    pub fn opened(&self, id: u32, priority: Priority) {
        let waker = self.with(|s| {
            s.pending.insert(id, (priority, false));
            s.waker.take()
        });
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Stream `id` has ended: it leaves the dependency chain (once its
    /// HEADERS has gone out, if it has not yet).
    pub fn closed(&self, id: u32) {
        self.with(|s| match s.pending.get_mut(&id) {
            Some(p) => p.1 = true,
            None => s.deps.closed(id),
        });
    }

    /// The priority fields of stream `id`, whose HEADERS goes out now.
    fn lookup(&self, id: u32) -> Option<Dependency> {
        self.with(|s| {
            let (priority, ended) = s.pending.remove(&id)?;
            let dep = s.deps.created(id, priority.spdy3());
            if ended {
                s.deps.closed(id);
            }
            Some(dep)
        })
    }

    fn wait(&self, waker: &Waker) {
        self.with(|s| s.waker = Some(waker.clone()));
    }

    /// Streams in the dependency chain now (open, their HEADERS sent).
    pub fn open_streams(&self) -> usize {
        self.with(|s| s.deps.len())
    }
}

/// The connection's byte stream, with Chrome's priority fields written into
/// its HEADERS frames (see the module doc).
pub struct PriorityIo<T> {
    inner: T,
    rewriter: Rewriter,
    signals: Signals,
    /// Rewritten bytes the inner writer has not taken yet.
    held: Vec<u8>,
    /// How much of `held` it has taken.
    taken: usize,
    /// Until the first flush, writes are held: the `h2` crate writes the
    /// connection preface alone and its SETTINGS and WINDOW_UPDATE only on
    /// the connection's first poll, and a TLS stream makes each write a
    /// record and a segment of its own. Chromium sends the three in one
    /// record (92 bytes, seen on the wire); an extra small segment from the
    /// client makes the server answer with one more small segment too (its
    /// SETTINGS ACK apart): with the session ticket and its own SETTINGS,
    /// four small segments of the ten its initial window allows, where
    /// Chromium's load sees three; a response filling the rest then has
    /// its last segment wait a round trip for an ACK.
    corked: bool,
}

impl<T> PriorityIo<T> {
    pub fn new(inner: T, signals: Signals) -> PriorityIo<T> {
        PriorityIo {
            inner,
            rewriter: Rewriter::new(),
            signals,
            held: Vec::new(),
            taken: 0,
            corked: true,
        }
    }
}

impl<T: AsyncWrite + Unpin> PriorityIo<T> {
    /// Writes what is held; Ready(Ok) once none is.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.taken < self.held.len() {
            match Pin::new(&mut self.inner).poll_write(cx, &self.held[self.taken..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => self.taken += n,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        self.held.clear();
        self.taken = 0;
        Poll::Ready(Ok(()))
    }

    fn feed(&mut self, buf: &[u8]) -> Fed {
        let signals = self.signals.clone();
        let mut lookup = |id| signals.lookup(id);
        self.rewriter.feed(buf, &mut self.held, &mut lookup)
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for PriorityIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for PriorityIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if !this.corked || this.held.len() >= CHUNK {
            if let Err(e) = std::task::ready!(this.poll_drain(cx)) {
                return Poll::Ready(Err(e));
            }
        }
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let input = &buf[..buf.len().min(CHUNK)];
        let mut fed = this.feed(input);
        if fed.consumed == 0 {
            // Waiting for a stream's priority: keep the waker, then look
            // again (the registration may have come in between).
            this.signals.wait(cx.waker());
            fed = this.feed(input);
            if fed.consumed == 0 {
                return Poll::Pending;
            }
        }
        // Pass on what it can now; the rest is held (an error shows again on
        // the next write or flush).
        if !this.corked {
            let _ = this.poll_drain(cx);
        }
        Poll::Ready(Ok(fed.consumed))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        this.corked = false;
        std::task::ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        this.corked = false;
        std::task::ready!(this.poll_drain(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::priority::http2_weight;

    const PREFACE_BYTES: &[u8; 24] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let mut f = frame_header(payload.len(), kind, flags, stream).to_vec();
        f.extend_from_slice(payload);
        f
    }

    fn dep(parent: u32, spdy: u8) -> Dependency {
        Dependency {
            parent,
            exclusive: true,
            weight: http2_weight(spdy),
        }
    }

    /// What the rewriter makes of `input` fed in pieces cut at `cuts`, every
    /// stream's priority known.
    fn rewrite(input: &[u8], cuts: &[usize], deps: &HashMap<u32, Dependency>) -> Vec<u8> {
        let mut r = Rewriter::new();
        let mut out = Vec::new();
        let mut lookup = |id: u32| deps.get(&id).copied();
        let mut from = 0;
        for &to in cuts.iter().chain(std::iter::once(&input.len())) {
            let fed = r.feed(&input[from..to], &mut out, &mut lookup);
            assert_eq!(fed.consumed, to - from);
            assert_eq!(fed.waiting_for, None);
            from = to;
        }
        out
    }

    /// A client's opening: preface, SETTINGS, WINDOW_UPDATE, then two
    /// requests' HEADERS and a DATA frame.
    fn opening() -> (Vec<u8>, Vec<u8>) {
        let settings = frame(0x4, 0, 0, &[0, 4, 0, 0x60, 0, 0]);
        let window = frame(0x8, 0, 0, &[0, 0xe0, 0, 0]);
        let h1 = frame(HEADERS, END_HEADERS | 0x1, 1, b"\x82\x87\x84");
        let h3 = frame(HEADERS, END_HEADERS, 3, b"\x82\x87\x85abc");
        let data = frame(0x0, 0x1, 3, b"body");
        let mut input = PREFACE_BYTES.to_vec();
        for f in [&settings, &window, &h1, &h3, &data] {
            input.extend_from_slice(f);
        }
        let mut want = PREFACE_BYTES.to_vec();
        want.extend_from_slice(&settings);
        want.extend_from_slice(&window);
        want.extend_from_slice(&frame(
            HEADERS,
            END_HEADERS | 0x1 | PRIORITY,
            1,
            &[0x80, 0, 0, 0, 255, 0x82, 0x87, 0x84],
        ));
        want.extend_from_slice(&frame(
            HEADERS,
            END_HEADERS | PRIORITY,
            3,
            &[0x80, 0, 0, 1, 146, 0x82, 0x87, 0x85, b'a', b'b', b'c'],
        ));
        want.extend_from_slice(&data);
        (input, want)
    }

    fn deps13() -> HashMap<u32, Dependency> {
        HashMap::from([(1, dep(0, 0)), (3, dep(1, 3))])
    }

    #[test]
    fn headers_opening_streams_get_chromes_priority_fields() {
        let (input, want) = opening();
        assert_eq!(rewrite(&input, &[], &deps13()), want);
    }

    /// Every way of cutting the bytes in two and in three gives the same
    /// output: frame headers split between writes are gathered.
    #[test]
    fn split_writes_give_the_same_bytes() {
        let (input, want) = opening();
        for a in 0..=input.len() {
            assert_eq!(rewrite(&input, &[a], &deps13()), want, "cut at {a}");
        }
        for a in (0..input.len()).step_by(3) {
            for b in a..input.len() {
                assert_eq!(rewrite(&input, &[a, b], &deps13()), want, "cuts {a} {b}");
            }
        }
        // One byte at a time.
        let cuts: Vec<usize> = (1..input.len()).collect();
        assert_eq!(rewrite(&input, &cuts, &deps13()), want);
    }

    /// A header block in HEADERS + CONTINUATION: the priority goes in the
    /// HEADERS frame (END_HEADERS not set there), the CONTINUATION passes.
    #[test]
    fn continuation_frames_pass_and_their_headers_frame_gets_the_priority() {
        let mut input = PREFACE_BYTES.to_vec();
        input.extend(frame(HEADERS, 0x1, 1, b"first"));
        input.extend(frame(CONTINUATION, 0, 1, b"second"));
        input.extend(frame(CONTINUATION, END_HEADERS, 1, b"third"));
        let mut want = PREFACE_BYTES.to_vec();
        want.extend(frame(
            HEADERS,
            0x1 | PRIORITY,
            1,
            &[0x80, 0, 0, 0, 109, b'f', b'i', b'r', b's', b't'],
        ));
        want.extend(frame(CONTINUATION, 0, 1, b"second"));
        want.extend(frame(CONTINUATION, END_HEADERS, 1, b"third"));
        let deps = HashMap::from([(1, dep(0, 4))]);
        for cut in 0..input.len() {
            assert_eq!(rewrite(&input, &[cut], &deps), want, "cut at {cut}");
        }
    }

    /// Trailers (HEADERS on a stream already open), even streams, padded or
    /// already prioritized frames pass unchanged.
    #[test]
    fn other_headers_frames_pass_unchanged() {
        let mut input = PREFACE_BYTES.to_vec();
        input.extend(frame(HEADERS, END_HEADERS, 1, b"req"));
        let opened = input.len();
        let rest = [
            frame(HEADERS, END_HEADERS | 0x1, 1, b"trailers"),
            frame(HEADERS, END_HEADERS, 2, b"even"),
            frame(HEADERS, END_HEADERS | PADDED, 5, b"\x01pad\x00"),
            frame(HEADERS, END_HEADERS | PRIORITY, 7, b"\x00\x00\x00\x00\x0fx"),
        ];
        for f in &rest {
            input.extend_from_slice(f);
        }
        let out = rewrite(&input, &[], &HashMap::from([(1, dep(0, 0))]));
        assert_eq!(out[opened + 5..], input[opened..]);
    }

    /// A HEADERS frame at 16 384 bytes: cut, its last 5 bytes in a
    /// CONTINUATION that takes END_HEADERS.
    #[test]
    fn a_headers_frame_at_the_limit_is_cut_in_two() {
        let block: Vec<u8> = (0..MAX_FRAME).map(|i| (i % 251) as u8).collect();
        let mut input = PREFACE_BYTES.to_vec();
        input.extend(frame(HEADERS, END_HEADERS | 0x1, 1, &block));
        let deps = HashMap::from([(1, dep(0, 1))]);
        let mut want = PREFACE_BYTES.to_vec();
        let mut first = vec![0x80, 0, 0, 0, 219];
        first.extend_from_slice(&block[..MAX_FRAME - 5]);
        want.extend(frame(HEADERS, 0x1 | PRIORITY, 1, &first));
        want.extend(frame(CONTINUATION, END_HEADERS, 1, &block[MAX_FRAME - 5..]));
        assert_eq!(rewrite(&input, &[], &deps), want);
        assert_eq!(rewrite(&input, &[40, 16_390, 16_400], &deps), want);
    }

    /// An unknown stream's HEADERS stops the rewriter, its frame header
    /// kept; once known, it goes on where it stopped.
    #[test]
    fn it_waits_for_a_priority_it_does_not_know() {
        let (input, want) = opening();
        let mut r = Rewriter::new();
        let mut out = Vec::new();
        let fed = r.feed(&input, &mut out, &mut |id| (id == 1).then(|| dep(0, 0)));
        assert_eq!(fed.waiting_for, Some(3));
        let at = fed.consumed;
        let again = r.feed(&input[at..], &mut out, &mut |_| None);
        assert_eq!(again.consumed, 0);
        assert_eq!(again.waiting_for, Some(3));
        let fed = r.feed(&input[at..], &mut out, &mut |id| deps13().get(&id).copied());
        assert_eq!(fed.consumed, input.len() - at);
        assert_eq!(out, want);
    }

    /// The shared signals: a stream registered after its HEADERS reached the
    /// writer, and one that ended before its HEADERS went out.
    #[test]
    fn signals_keep_chromes_chain() {
        let s = Signals::default();
        assert_eq!(s.lookup(1), None);
        s.opened(1, Priority::DOCUMENT);
        assert_eq!(s.lookup(1), Some(dep(0, 0)));
        s.opened(3, Priority::IMAGE);
        s.closed(3);
        assert_eq!(s.lookup(3), Some(dep(1, 3)));
        assert_eq!(s.open_streams(), 1, "3 ended: it left the chain");
        s.opened(5, Priority::VISIBLE_IMAGE);
        assert_eq!(s.lookup(5), Some(dep(1, 1)));
        s.closed(1);
        s.closed(5);
        assert_eq!(s.open_streams(), 0);
    }

    /// The writer meets a HEADERS frame whose stream is not registered yet
    /// (another thread's request between `send_request` and registering):
    /// Pending, then woken by the registration, and on from there.
    #[test]
    fn the_writer_waits_for_a_registration_and_is_woken() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        struct Count(AtomicUsize);
        impl std::task::Wake for Count {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, Ordering::SeqCst);
            }
        }
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let (input, want) = opening();
        let signals = Signals::default();
        signals.opened(1, Priority::DOCUMENT);
        let mut io = PriorityIo::new(Vec::new(), signals.clone());
        let mut at = 0;
        let mut pending = 0;
        while at < input.len() {
            match Pin::new(&mut io).poll_write(&mut cx, &input[at..]) {
                Poll::Ready(Ok(n)) => at += n,
                Poll::Ready(Err(e)) => panic!("{e}"),
                Poll::Pending => {
                    pending += 1;
                    assert_eq!(count.0.load(Ordering::SeqCst), 0);
                    signals.opened(3, Priority::IMAGE);
                    assert_eq!(count.0.load(Ordering::SeqCst), 1, "woken");
                }
            }
        }
        assert_eq!(pending, 1);
        assert!(Pin::new(&mut io).poll_flush(&mut cx).is_ready());
        assert_eq!(io.inner, want);
    }

    /// Through the async writer, with an inner writer that takes 7 bytes a
    /// call: every caller byte is reported once, the output is the
    /// rewriter's.
    #[tokio::test]
    async fn the_writer_reports_the_callers_bytes_and_holds_the_rest() {
        use tokio::io::AsyncWriteExt;
        struct Trickle(Vec<u8>);
        impl AsyncWrite for Trickle {
            fn poll_write(
                mut self: Pin<&mut Self>,
                _: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                let n = buf.len().min(7);
                self.0.extend_from_slice(&buf[..n]);
                Poll::Ready(Ok(n))
            }
            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
            fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
        }
        let (input, want) = opening();
        let signals = Signals::default();
        signals.opened(1, Priority::DOCUMENT);
        signals.opened(3, Priority::IMAGE);
        let mut io = PriorityIo::new(Trickle(Vec::new()), signals);
        let mut reported = 0;
        for piece in input.chunks(10) {
            let n = std::future::poll_fn(|cx| Pin::new(&mut io).poll_write(cx, piece))
                .await
                .unwrap();
            assert!(n <= piece.len());
            reported += n;
            io.write_all(&piece[n..]).await.unwrap();
            reported += piece.len() - n;
        }
        io.flush().await.unwrap();
        assert_eq!(reported, input.len());
        assert_eq!(io.inner.0, want);
    }

    /// The preface is held until the first flush and goes in one write with
    /// the frames after it (one TLS record, as Chromium's); after that flush,
    /// each write goes on at once.
    #[tokio::test]
    async fn the_preface_waits_for_the_first_flush() {
        use tokio::io::AsyncWriteExt;
        #[derive(Default)]
        struct Writes(Vec<Vec<u8>>);
        impl AsyncWrite for Writes {
            fn poll_write(
                mut self: Pin<&mut Self>,
                _: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<io::Result<usize>> {
                self.0.push(buf.to_vec());
                Poll::Ready(Ok(buf.len()))
            }
            fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
            fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(()))
            }
        }
        let settings = frame(0x4, 0, 0, &[0, 4, 0, 0x60, 0, 0]);
        let window = frame(0x8, 0, 0, &[0, 0xe0, 0, 0]);
        let ping = frame(0x6, 0, 0, &[0; 8]);
        let mut io = PriorityIo::new(Writes::default(), Signals::default());
        io.write_all(PREFACE_BYTES).await.unwrap();
        assert!(io.inner.0.is_empty(), "the preface waits");
        io.write_all(&settings).await.unwrap();
        io.write_all(&window).await.unwrap();
        assert!(io.inner.0.is_empty());
        io.flush().await.unwrap();
        let first = [&PREFACE_BYTES[..], &settings, &window].concat();
        assert_eq!(io.inner.0, vec![first]);
        io.write_all(&ping).await.unwrap();
        assert_eq!(io.inner.0.len(), 2, "on at once after the first flush");
        assert_eq!(io.inner.0[1], ping);
    }
}
