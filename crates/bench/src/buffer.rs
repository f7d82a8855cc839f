//! How a connection reads: its read buffer, which grows only as reads fill
//! it, and its socket's receive low-water mark, which lets an HTTP/1.1
//! reader on plain TCP wake once per pipeline or whole answer.

use std::os::fd::RawFd;
use std::time::Duration;

/// A closed-loop pipeline on plain TCP wakes its reader once per pipeline, not
/// once per answer (or part of one): the socket's receive low-water mark
/// (SO_RCVLOWAT) is set to the fewest bytes the answers still in flight can
/// take, from the smallest answer seen on the connection, so epoll reports
/// the socket readable when the pipeline can be complete. Without it, a
/// generator faster than the server woke for every answer or two the
/// server wrote (3.7 reads and 2.6
/// epoll waits per pipeline of 8 against nginx; wrk took 1.8 and 0.8). Each
/// answer is still stamped when it is read, so the first answers of a
/// pipeline are stamped when the last one is: wrk likewise records one
/// latency per pipeline. The mark is a lower bound, so it can only be too
/// high if an answer is smaller than every one before (an error page): then
/// after GUARD without progress it drops to one byte, and lowering it makes
/// the kernel wake the reader if the bytes are there. Not used under TLS (the
/// TLS layer buffers ciphertext the mark cannot account for) nor in open loop
/// (where each answer's latency counts from when its request was due).
/// A connection without pipelining takes it too: nginx writes a small
/// file's headers and body in two calls (writev, then sendfile), and a
/// reader that wakes for the first reads the answer in two halves. Against
/// nginx (h1, 32 connections, `perf stat` over 5 s, 25 Nov 2026): 1.23-1.27
/// reads and 1.21-1.24 epoll waits per answer before, 1.00 and 0.86-0.87
/// with the mark.
pub(crate) struct ReadLowWater {
    fd: RawFd,
    mark: u64,
    /// The kernel refused the option once: do not ask again.
    refused: bool,
}

impl ReadLowWater {
    pub(crate) const GUARD: Duration = Duration::from_millis(10);
    /// Far below any receive buffer: the mark never holds back a window.
    const CAP: u64 = 64 * 1024;

    pub(crate) fn new(fd: RawFd) -> ReadLowWater {
        // The kernel's default mark is one byte.
        ReadLowWater {
            fd,
            mark: 1,
            refused: false,
        }
    }

    /// Sets the mark to `bytes` (at least 1, at most CAP) if it is not that already.
    pub(crate) fn set(&mut self, bytes: u64) {
        let bytes = bytes.clamp(1, Self::CAP);
        if bytes == self.mark || self.refused {
            return;
        }
        // The fd is the connection's socket, open for as long as the loop
        // that owns this runs. A kernel that refuses keeps its mark of one
        // byte: wake per answer.
        if sys::set_rcvlowat(&self.fd, bytes as libc::c_int).is_ok() {
            self.mark = bytes;
        } else {
            self.refused = true;
        }
    }

    /// The reader waits for more than one byte.
    pub(crate) fn holding(&self) -> bool {
        self.mark > 1
    }
}

/// A connection's read buffer: 16 KiB at first, and four times bigger (up to
/// 256 KiB) each time a read fills it. Small answers never touch more than
/// the first: 32 connections' buffers of 256 KiB made from the start cost
/// the process 8 MiB of fresh (huge) pages to fault in and zero, about 70 ms
/// of CPU (1.8 % of a 4 s run, `perf record`, 25 Nov 2026).
pub(crate) struct ReadBuffer {
    buf: Vec<u8>,
}

impl ReadBuffer {
    const FIRST: usize = 16 * 1024;
    const MOST: usize = 256 * 1024;

    pub(crate) fn new() -> ReadBuffer {
        ReadBuffer {
            buf: vec![0; Self::FIRST],
        }
    }

    /// Where the next read puts its bytes.
    pub(crate) fn space(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    /// The `n` bytes the last read put in; the buffer grows if they filled it.
    pub(crate) fn filled(&mut self, n: usize) -> &[u8] {
        if n == self.buf.len() && n < Self::MOST {
            self.buf.resize((n * 4).min(Self::MOST), 0);
        }
        &self.buf[..n]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_buffer_grows_only_when_a_read_fills_it() {
        let mut buf = ReadBuffer::new();
        assert_eq!(buf.space().len(), ReadBuffer::FIRST);
        buf.space()[..3].copy_from_slice(b"abc");
        assert_eq!(buf.filled(3), b"abc");
        assert_eq!(buf.space().len(), ReadBuffer::FIRST);
        let mut len = ReadBuffer::FIRST;
        while len < ReadBuffer::MOST {
            let n = buf.space().len();
            buf.space()[n - 1] = 7;
            let got = buf.filled(n);
            assert_eq!((got.len(), got[n - 1]), (n, 7), "what was read stays");
            let grown = buf.space().len();
            assert_eq!(grown, (len * 4).min(ReadBuffer::MOST));
            len = grown;
        }
        let n = buf.space().len();
        buf.filled(n);
        assert_eq!(buf.space().len(), ReadBuffer::MOST, "and no further");
    }
}
