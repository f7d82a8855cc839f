//! h2c by `Upgrade: h2c` (RFC 7540 §3.2). After `101 Switching Protocols` the
//! upgrade request becomes stream 1 of an HTTP/2 connection. The h2 state
//! machine has no way in for a stream it did not read, so we show it one: its
//! input starts with a connection preface, a SETTINGS frame carrying the
//! client's `HTTP2-Settings`, and a HEADERS frame for stream 1 made from the
//! upgrade request; then the client's own bytes, less the preface the client
//! sends after 101. The one SETTINGS ACK the server writes for the injected
//! SETTINGS is dropped: the 101 already acknowledged those settings. And no
//! byte goes out before the client's preface has come in.

use super::{H2, H2_PREFACE};
use crate::Ctx;
use bytes::{Buf, Bytes, BytesMut};
use http_body_util::Full;
use hyper::header::{HeaderValue, CONNECTION, UPGRADE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use proto::h2::hpack_int;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

const SETTINGS: u8 = 0x4;
const HEADERS: u8 = 0x1;
const ACK: u8 = 0x1;
const END_STREAM: u8 = 0x1;
const END_HEADERS: u8 = 0x4;

/// A bodiless request asking to upgrade to h2c, with its HTTP2-Settings.
pub fn is_request<B>(req: &Request<B>) -> bool {
    let has_token = |name, token: &str| {
        req.headers().get_all(name).iter().any(|v| {
            v.to_str()
                .is_ok_and(|s| s.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
        })
    };
    has_token(UPGRADE, "h2c")
        && req.headers().contains_key("http2-settings")
        && req
            .headers()
            .get(hyper::header::CONTENT_LENGTH)
            .is_none_or(|v| v == "0")
        && !req.headers().contains_key(hyper::header::TRANSFER_ENCODING)
}

/// Answers 101 and hands the upgraded connection to HTTP/2.
pub fn switch(mut req: Request<hyper::body::Incoming>, ctx: Arc<Ctx>) -> Response<Full<Bytes>> {
    let settings = req
        .headers()
        .get("http2-settings")
        .and_then(|v| base64url_decode(v.as_bytes()));
    let Some(settings) = settings.filter(|s| s.len() % 6 == 0) else {
        return crate::content::plain(
            StatusCode::BAD_REQUEST,
            "HTTP2-Settings is not base64url of a SETTINGS payload\n".into(),
        );
    };
    let prefix = synthetic_prefix(&req, &settings);
    let upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        if let Ok(upgraded) = upgrade.await {
            let io = Spliced {
                inner: TokioIo::new(upgraded),
                prefix,
                preface_left: H2_PREFACE.len(),
                out: AckFilter::default(),
                pending: Vec::new(),
            };
            H2::serve_io(io, ctx).await;
        }
    });
    let mut resp = Response::new(Full::new(Bytes::new()));
    *resp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    resp.headers_mut()
        .insert(CONNECTION, HeaderValue::from_static("Upgrade"));
    resp.headers_mut()
        .insert(UPGRADE, HeaderValue::from_static("h2c"));
    resp
}

fn frame(out: &mut Vec<u8>, kind: u8, flags: u8, stream: u32, payload: &[u8]) {
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes()[1..]);
    out.push(kind);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
    out.extend_from_slice(payload);
}

/// "Literal header field without indexing — new name": leaves both HPACK tables alone.
fn hpack_literal(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.push(0x00);
    hpack_int(out, 0, 7, name.len());
    out.extend_from_slice(name);
    hpack_int(out, 0, 7, value.len());
    out.extend_from_slice(value);
}

fn synthetic_prefix<B>(req: &Request<B>, settings: &[u8]) -> Bytes {
    let mut block = Vec::new();
    let authority = req
        .headers()
        .get(hyper::header::HOST)
        .map(|h| h.as_bytes().to_vec())
        .unwrap_or_default();
    let path = req
        .uri()
        .path_and_query()
        .map_or("/".to_string(), |p| p.to_string());
    hpack_literal(&mut block, b":method", req.method().as_str().as_bytes());
    hpack_literal(&mut block, b":scheme", b"http");
    hpack_literal(&mut block, b":authority", &authority);
    hpack_literal(&mut block, b":path", path.as_bytes());
    for (name, value) in req.headers() {
        let n = name.as_str();
        let hop = [
            "host",
            "connection",
            "upgrade",
            "http2-settings",
            "keep-alive",
            "te",
            "transfer-encoding",
            "proxy-connection",
        ];
        if !hop.contains(&n) {
            hpack_literal(&mut block, n.as_bytes(), value.as_bytes());
        }
    }
    let mut out = H2_PREFACE.to_vec();
    frame(&mut out, SETTINGS, 0, 0, settings);
    frame(&mut out, HEADERS, END_STREAM | END_HEADERS, 1, &block);
    Bytes::from(out)
}

fn base64url_decode(s: &[u8]) -> Option<Vec<u8>> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'-' | b'+' => Some(62),
        b'_' | b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for &c in s.iter().filter(|&&c| c != b'=') {
        acc = (acc << 6) | val(c)? as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

/// Passes the server's frames through, except the first SETTINGS ACK.
#[derive(Default)]
struct AckFilter {
    dropped: bool,
    header: BytesMut,
    /// Bytes of the current frame's payload still to pass.
    passing: usize,
}

impl AckFilter {
    /// Filters `buf`; returns the bytes to write.
    fn filter(&mut self, mut buf: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(buf.len());
        while !buf.is_empty() && !self.dropped {
            if self.passing > 0 {
                let n = self.passing.min(buf.len());
                out.extend_from_slice(&buf[..n]);
                self.passing -= n;
                buf = &buf[n..];
                continue;
            }
            let need = 9 - self.header.len();
            let n = need.min(buf.len());
            self.header.extend_from_slice(&buf[..n]);
            buf = &buf[n..];
            if self.header.len() < 9 {
                break;
            }
            let h = std::mem::take(&mut self.header);
            let len = ((h[0] as usize) << 16) | ((h[1] as usize) << 8) | h[2] as usize;
            if h[3] == SETTINGS && h[4] & ACK != 0 && len == 0 {
                self.dropped = true;
            } else {
                out.extend_from_slice(&h);
                self.passing = len;
            }
        }
        out.extend_from_slice(buf);
        out
    }
}

/// The upgraded connection as HTTP/2 must see it.
struct Spliced<I> {
    inner: I,
    prefix: Bytes,
    preface_left: usize,
    out: AckFilter,
    pending: Vec<u8>,
}

impl<I: AsyncRead + Unpin> AsyncRead for Spliced<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if !self.prefix.is_empty() {
            let n = self.prefix.len().min(buf.remaining());
            buf.put_slice(&self.prefix[..n]);
            self.prefix.advance(n);
            return Poll::Ready(Ok(()));
        }
        match self.poll_preface(cx) {
            Poll::Ready(Ok(true)) => {}
            Poll::Ready(Ok(false)) => return Poll::Ready(Ok(())), // EOF
            Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
            Poll::Pending => return Poll::Pending,
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<I: AsyncRead + Unpin> Spliced<I> {
    /// Reads and checks the preface the client sends after 101. Ready(true)
    /// once it is all in, Ready(false) at EOF.
    fn poll_preface(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<bool>> {
        while self.preface_left > 0 {
            let mut tmp = [0u8; 24];
            let want = self.preface_left;
            let mut rb = ReadBuf::new(&mut tmp[..want]);
            ready!(Pin::new(&mut self.inner).poll_read(cx, &mut rb))?;
            let got = rb.filled();
            if got.is_empty() {
                return Poll::Ready(Ok(false));
            }
            let at = H2_PREFACE.len() - self.preface_left;
            if got != &H2_PREFACE[at..at + got.len()] {
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "h2c upgrade: the client did not send the connection preface",
                )));
            }
            self.preface_left -= got.len();
        }
        Poll::Ready(Ok(true))
    }
}

impl<I: AsyncRead + AsyncWrite + Unpin> Spliced<I> {
    /// Writes out what the filter let through and is still buffered.
    fn poll_pending(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while !self.pending.is_empty() {
            match Pin::new(&mut self.inner).poll_write(cx, &self.pending) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    self.pending.drain(..n);
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl<I: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Spliced<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        // Nothing goes out until the client's preface is in: some clients (curl
        // 7.88) cannot take more than 32 kB right behind the 101.
        if this.preface_left > 0 {
            match this.poll_preface(cx) {
                Poll::Ready(Ok(true)) => {}
                Poll::Ready(Ok(false)) => {
                    return Poll::Ready(Err(io::ErrorKind::UnexpectedEof.into()))
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        match this.poll_pending(cx) {
            Poll::Ready(Ok(())) => {}
            other => return other.map(|r| r.map(|_| 0)),
        }
        if this.out.dropped {
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        }
        // Until the ACK is gone, take all of `buf` through the filter.
        let filtered = this.out.filter(buf);
        this.pending.extend_from_slice(&filtered);
        if let Poll::Ready(Err(e)) = this.poll_pending(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        match this.poll_pending(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.inner).poll_flush(cx),
            other => other,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        match this.poll_pending(cx) {
            Poll::Ready(Ok(())) => Pin::new(&mut this.inner).poll_shutdown(cx),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_exactly_the_first_settings_ack_across_split_writes() {
        let mut server_out = Vec::new();
        frame(&mut server_out, SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 100]);
        frame(&mut server_out, SETTINGS, ACK, 0, &[]);
        frame(&mut server_out, SETTINGS, ACK, 0, &[]);
        let mut f = AckFilter::default();
        let mut got = Vec::new();
        for chunk in server_out.chunks(5) {
            got.extend(f.filter(chunk));
        }
        let mut want = Vec::new();
        frame(&mut want, SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 100]);
        frame(&mut want, SETTINGS, ACK, 0, &[]);
        assert_eq!(got, want);
    }

    #[test]
    fn base64url_and_hpack_integers() {
        assert_eq!(
            base64url_decode(b"AAMAAABkAAQAoAAAAAIAAAAA").unwrap().len(),
            18
        );
        let mut v = Vec::new();
        hpack_int(&mut v, 0, 7, 300);
        assert_eq!(v, vec![127, 173, 1]);
    }
}
