//! SPDY/3.1 over TLS (ALPN `spdy/3.1`; NPN, which some 2014 clients needed, is
//! not offered: rustls implements only ALPN): the I/O shell of proto's
//! sans-I/O `ServerSession` (stream limit, priorities, windows, hostile input
//! are all there). `serve` runs it over the connection, asking the site's
//! `Content` for each request; it bounds the content tasks in flight (rapid
//! reset) and closes sessions idle for `IDLE_TIMEOUT`. With `--push`, the
//! page's document request is followed at once by the session's pushes
//! (`ServerSession::push`, at the SPDY priority Chrome gives a request of
//! the resource's kind: `super::push_priority`), answered as any request.

use super::{BoxIo, ServeFuture, ServeProtocol};
use crate::Ctx;
use bytes::Bytes;
use http_body_util::BodyExt;
use proto::spdy3::{Headers, ServerSession};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::Instant;

pub struct Spdy3;

impl ServeProtocol for Spdy3 {
    fn alpn(&self) -> &'static [u8] {
        proto::spdy3::ALPN
    }

    fn serve(&self, io: BoxIo, ctx: Arc<Ctx>) -> ServeFuture {
        Box::pin(serve(io, ctx))
    }
}

/// A session with no stream open for this long is closed: an idle session
/// holds about 400 KiB (two zlib contexts, TLS and frame buffers), so idle
/// ones must not pile up (hyper's HTTP/2 closes idle connections whose
/// keep-alive ping goes unanswered; HTTP/1.1 has its header timeout).
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

async fn serve(io: BoxIo, ctx: Arc<Ctx>) {
    let (mut rd, mut wr) = tokio::io::split(io);
    let mut session = ServerSession::new(ctx.knobs.max_streams);
    if ctx.knobs.priorities == proto::priority::Policy::Ignore {
        session.ignore_priorities();
    }
    // What one turn of the loop writes: with TCP_NOTSENT_LOWAT set, a chunk
    // (the socket takes little at a time, and the session's priorities decide
    // each chunk as late as h2's scheduler does); else 256 KiB.
    let budget = match ctx.knobs.notsent_lowat {
        Some(_) => super::h2::CHUNK,
        None => 256 * 1024,
    };
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel::<Ready>();
    let mut buf = vec![0u8; 64 * 1024];
    // Content tasks spawned whose response has not come back. A client that
    // resets each stream at once (rapid reset) frees its stream slot but not
    // the task: reading stops while as many tasks as the stream limit are
    // running, so that they and their responses stay bounded.
    let mut in_flight = 0usize;
    let mut busy_at = Instant::now();
    loop {
        session.write(budget);
        let out = session.output();
        if !out.is_empty() {
            // TLS holds what the socket did not take yet until flushed.
            if wr.write_all(out).await.is_err() || wr.flush().await.is_err() {
                return;
            }
            out.clear();
            busy_at = Instant::now();
        }
        if session.finished() {
            let _ = wr.shutdown().await;
            return;
        }
        // Idle: no stream open, no content task running, nothing left to
        // send. Requests answered inline close their stream within one turn
        // of the loop, so reads and writes also count as activity (else a
        // session answering one stream at a time, never open at the top of
        // the loop, was closed 30 s after it began).
        let more_to_send = session.can_write();
        let busy = session.open_streams() > 0 || in_flight > 0 || more_to_send;
        if busy {
            busy_at = Instant::now();
        }
        let may_read = in_flight < ctx.knobs.max_streams.max(1) as usize;
        // Responses ready go out before more requests are read: with reads
        // first, a client keeping the socket readable starved its own
        // responses (the p99 of seconds under `spdylab bench` load).
        tokio::select! {
            biased;
            Some(r) = ready_rx.recv() => {
                in_flight -= 1;
                session.respond(r.stream_id, &format!("{} {}", r.status, r.reason), r.headers, r.body);
            }
            r = rd.read(&mut buf), if may_read => {
                let n = match r {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                busy_at = Instant::now();
                let mut asked = Vec::new();
                for req in session.receive(&buf[..n]) {
                    // Pushes first, promised on the document's stream before
                    // its reply (and before its think time).
                    for (id, headers) in pushes(&ctx, &mut session, &req) {
                        asked.push(proto::spdy3::server::Request { stream_id: id, headers, body: Vec::new() });
                    }
                    asked.push(req);
                }
                for req in asked {
                    // A request that is not safe, from TLS early data not
                    // yet verified: 425 (`crate::early`).
                    let method = req.headers.iter().find(|(k, _)| k == ":method");
                    let method = method.and_then(|(_, m)| hyper::Method::from_bytes(m.as_bytes()).ok());
                    if let Some(r) = method.and_then(|m| crate::early::too_early(&m, &ctx.early)) {
                        let (parts, body) = r.into_parts();
                        let body = body.collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                        let headers = vec![("content-type".to_string(), "text/plain".to_string())];
                        session.respond(req.stream_id, &format!("{} {}", parts.status.as_u16(), "Too Early"), headers, body);
                        continue;
                    }
                    let body = Bytes::from(req.body);
                    // Content already at hand is answered here, in request
                    // order: a task per request queued behind thousands of
                    // others (and tokio's LIFO slot running the newest first)
                    // had made the p99 of closed-loop bench load 18-30x the p50.
                    let now = std::future::Future::poll(
                        std::pin::pin!(respond(&ctx, req.stream_id, &req.headers, body.clone())),
                        &mut std::task::Context::from_waker(std::task::Waker::noop()),
                    );
                    if let std::task::Poll::Ready(r) = now {
                        session.respond(r.stream_id, &format!("{} {}", r.status, r.reason), r.headers, r.body);
                        continue;
                    }
                    let (ctx, tx) = (ctx.clone(), ready_tx.clone());
                    in_flight += 1;
                    tokio::spawn(async move {
                        let _ = tx.send(respond(&ctx, req.stream_id, &req.headers, body).await);
                    });
                }
            }
            // Nothing to read yet and more to send: go on sending.
            _ = std::future::ready(()), if more_to_send => {}
            _ = tokio::time::sleep_until(busy_at + IDLE_TIMEOUT), if !busy => {
                let _ = wr.shutdown().await;
                return;
            }
        }
        // Every response already done goes into the same write.
        while let Ok(r) = ready_rx.try_recv() {
            in_flight -= 1;
            session.respond(
                r.stream_id,
                &format!("{} {}", r.status, r.reason),
                r.headers,
                r.body,
            );
        }
    }
}

/// What `--push` pushes with `req` if it asks for the document: each
/// promised on `req`'s stream (`ServerSession::push`), returned as the
/// pushed stream's id and the request headers its response is made from.
fn pushes(
    ctx: &Ctx,
    session: &mut ServerSession,
    req: &proto::spdy3::server::Request,
) -> Vec<(u32, Headers)> {
    if ctx.content.push == crate::Push::None {
        return Vec::new();
    }
    let get = |n: &str| {
        req.headers
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.as_str())
    };
    let host = get(":host").unwrap_or("");
    let head = hyper::Request::builder()
        .method(get(":method").unwrap_or("GET"))
        .uri(format!(
            "{}://{host}{}",
            get(":scheme").unwrap_or("https"),
            get(":path").unwrap_or("/")
        ))
        .header(hyper::header::HOST, host)
        .body(());
    let Ok(head) = head else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (pushed, kind) in ctx.content.pushes(&head) {
        let uri = pushed.uri();
        let authority = uri.authority().map_or(host, |a| a.as_str()).to_string();
        let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_string();
        let scheme = uri.scheme_str().unwrap_or("https").to_string();
        // SPDY/3 §3.3.1 asks for :scheme, :host and :path (what Chromium
        // reads); Netty's SpdyHttpDecoder also wants :method and :version
        // to make the promised request.
        let url: Headers = vec![
            (":method".into(), "GET".into()),
            (":scheme".into(), scheme.clone()),
            (":host".into(), authority.clone()),
            (":path".into(), path.clone()),
            (":version".into(), "HTTP/1.1".into()),
        ];
        let Some(id) = session.push(req.stream_id, super::push_priority(kind), url) else {
            break;
        };
        let headers: Headers = vec![
            (":method".into(), "GET".into()),
            (":scheme".into(), scheme),
            (":host".into(), authority),
            (":path".into(), path),
            (":version".into(), "HTTP/1.1".into()),
        ];
        out.push((id, headers));
    }
    out
}

/// A response produced by the content task of a stream.
struct Ready {
    stream_id: u32,
    status: u16,
    reason: String,
    headers: Headers,
    body: Bytes,
}

/// The response to a SYN_STREAM's request headers (and the request's body),
/// from the site's content.
async fn respond(ctx: &Ctx, stream_id: u32, headers: &Headers, body: Bytes) -> Ready {
    let get = |n: &str| {
        headers
            .iter()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.as_str())
    };
    let method = get(":method").unwrap_or("GET");
    let host = get(":host").unwrap_or("");
    let path = get(":path").unwrap_or("/");
    let scheme = get(":scheme").unwrap_or("https");
    let mut req = hyper::Request::builder()
        .method(method)
        .uri(format!("{scheme}://{host}{path}"))
        .header(hyper::header::HOST, host);
    // The request's own headers as h1 and h2 hand them to the content: a
    // repeat view's If-None-Match and If-Modified-Since (a 304), cookies.
    // One the codec let through but HTTP cannot carry is left out, not
    // made the whole request's error.
    for (name, value) in headers {
        if name.starts_with(':') || name == "host" {
            continue;
        }
        let name = hyper::header::HeaderName::from_bytes(name.as_bytes());
        let value = hyper::header::HeaderValue::from_str(value);
        if let (Ok(name), Ok(value)) = (name, value) {
            req = req.header(name, value);
        }
    }
    let req = req.body(http_body_util::Full::new(body));
    let resp = match req {
        Ok(req) => ctx.content.respond(req).await,
        Err(e) => crate::content::plain(
            hyper::StatusCode::BAD_REQUEST,
            format!("bad request: {e}\n"),
        ),
    };
    let (parts, body) = resp.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let mut out: Headers = parts
        .headers
        .iter()
        .filter(|(n, _)| {
            !matches!(
                n.as_str(),
                "connection" | "keep-alive" | "transfer-encoding"
            )
        })
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    if !out.iter().any(|(n, _)| n == "content-length") {
        out.push(("content-length".into(), body.len().to_string()));
    }
    Ready {
        stream_id,
        status: parts.status.as_u16(),
        reason: parts.status.canonical_reason().unwrap_or("").to_string(),
        headers: out,
        body: if method == "HEAD" { Bytes::new() } else { body },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::spdy3::client::Event;
    use proto::spdy3::ClientSession;

    /// A client asking for one resource at a time, each a while after the
    /// last response (Fig. 9's one stream at 490 ms), keeps its session for
    /// longer than `IDLE_TIMEOUT`: answered inline, its stream is never open
    /// at the top of the server's loop, and that alone had closed the session
    /// 30 s after it began.
    #[tokio::test(start_paused = true)]
    async fn one_stream_at_a_time_for_longer_than_the_idle_timeout_is_not_idle() {
        let site = site::builtin("icons", site::DEFAULT_SEED).unwrap();
        let (host, path) = (
            site.resources[1].host.clone(),
            site.resources[1].path.clone(),
        );
        let ctx = Arc::new(Ctx {
            content: crate::content::Content::new(site, crate::ServerDelay::None),
            knobs: crate::Knobs {
                max_streams: 1,
                ..crate::Knobs::default()
            },
            h2c: false,
            http: false,
            cc: None,
            early: Arc::default(),
        });
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let server = tokio::spawn(serve(Box::new(theirs), ctx));
        let (mut rd, mut wr) = tokio::io::split(ours);
        let mut client = ClientSession::<u32>::new(1 << 24).with_max_streams(1);
        let mut buf = vec![0u8; 1 << 16];
        let started = Instant::now();
        for i in 0..8u32 {
            let headers = [
                (":method", "GET"),
                (":path", path.as_str()),
                (":version", "HTTP/1.1"),
                (":host", host.as_str()),
                (":scheme", "https"),
            ]
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
            client.request(i, 0, headers);
            client.start();
            let out = std::mem::take(client.output());
            wr.write_all(&out).await.unwrap();
            'response: loop {
                let n = rd.read(&mut buf).await.unwrap();
                assert!(
                    n > 0,
                    "request {i}: the session closed after {:?}",
                    started.elapsed()
                );
                client.receive(&buf[..n]);
                while let Some(e) = client.poll_event() {
                    match e {
                        Event::Done(_) => break 'response,
                        Event::Failed { error, .. } => panic!("request {i}: {error}"),
                        _ => {}
                    }
                }
            }
            // The next request a little later, as a slow link would send it.
            tokio::time::sleep(Duration::from_secs(10)).await;
        }
        assert!(started.elapsed() > IDLE_TIMEOUT * 2);
        // Truly idle now: the session closes by itself.
        tokio::time::sleep(IDLE_TIMEOUT * 2).await;
        assert!(server.is_finished());
    }
}
