//! An HTTP/1.1 connection: writes requests as they come (pipelined if the
//! owner sends more than one before the answers; a request with a body goes
//! with its `Content-Length`, and the owner never pipelines it), reads the
//! responses in order
//! with proto's decoder (Content-Length or chunked). A response that announces
//! `Connection: close` ends the connection gracefully (`Event::Closed` before
//! its `Done`); requests still in flight then, or sent later, fail as closed.
//! An interim 1xx response (a 103 Early Hints) is skipped: Chromium acts on
//! Early Hints over h2 and h3 only.

use super::{Error, Event, Io};
use crate::replay::Upload;
use crate::schedule::{ConnId, ReqId};
use bytes::Bytes;
use proto::h1::{header, Decoder, Part};
use std::collections::VecDeque;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

/// A request for the connection: its id, host, path, other headers, and its
/// method and body when it is not a GET.
pub type Job = (
    ReqId,
    String,
    String,
    crate::headers::HeaderList,
    Option<Upload>,
);

/// The bytes of a request: its head (`Content-Length` framing a body, or
/// saying 0 for a POST without one) and its body.
pub fn request_bytes(
    host: &str,
    path: &str,
    headers: &crate::headers::HeaderList,
    upload: Option<&Upload>,
) -> Vec<u8> {
    let method = upload.map_or("GET", |u| u.method.as_str());
    let mut text = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\n");
    for (name, value) in headers {
        text.push_str(&crate::headers::title_case(name));
        text.push_str(": ");
        text.push_str(value);
        text.push_str("\r\n");
    }
    if let Some(u) = upload.filter(|u| !u.body.is_empty() || u.expects_body()) {
        text.push_str(&format!("Content-Length: {}\r\n", u.body.len()));
    }
    text.push_str("\r\n");
    let mut bytes = text.into_bytes();
    if let Some(u) = upload {
        bytes.extend_from_slice(&u.body);
    }
    bytes
}

/// Runs the connection until the owner drops its sender and every answer is
/// in, or the connection ends.
pub async fn connection(
    conn: ConnId,
    io: Box<dyn Io>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    events: mpsc::UnboundedSender<Event>,
) {
    let (mut rd, mut wr) = tokio::io::split(io);
    let (order_tx, mut order_rx) = mpsc::unbounded_channel::<ReqId>();
    let ev = events.clone();
    let writer = async move {
        let mut broken = false;
        while let Some((req, host, path, headers, upload)) = jobs.recv().await {
            let fail = |error| {
                let _ = ev.send(Event::Failed { req, error });
            };
            if broken {
                fail(Error::Write(None));
                continue;
            }
            let text = request_bytes(&host, &path, &headers, upload.as_ref());
            // The reader has stopped: the connection is closed.
            if order_tx.send(req).is_err() {
                fail(Error::Closed);
                continue;
            }
            if wr.write_all(&text).await.is_err() {
                fail(Error::Write(None));
                broken = true;
                continue;
            }
            let _ = ev.send(Event::Sent {
                req,
                at: Instant::now(),
            });
        }
    };
    let reader = async move {
        let mut decoder = Decoder::default();
        let mut chunk = vec![0u8; 64 * 1024];
        // Requests written, oldest first; whether the oldest's head is in.
        let mut waiting: VecDeque<ReqId> = VecDeque::new();
        let mut head_seen = false;
        // An interim (1xx) response is being read: skipped, as Chromium
        // skips a 103 over HTTP/1.1 (it acts on Early Hints on h2 and h3 only).
        let mut interim = false;
        let fail_all = |waiting: &mut VecDeque<ReqId>,
                        order_rx: &mut mpsc::UnboundedReceiver<ReqId>,
                        first: Error| {
            let mut error = Some(first);
            while let Ok(req) = order_rx.try_recv() {
                waiting.push_back(req);
            }
            for req in waiting.drain(..) {
                let error = error.take().unwrap_or(Error::Closed);
                let _ = events.send(Event::Failed { req, error });
            }
        };
        loop {
            if waiting.is_empty() {
                match order_rx.recv().await {
                    Some(req) => waiting.push_back(req),
                    None => return,
                }
            }
            let n = match rd.read(&mut chunk).await {
                Ok(n) if n > 0 => n,
                _ => {
                    let error = if head_seen {
                        Error::ClosedMidBody
                    } else {
                        Error::Closed
                    };
                    return fail_all(&mut waiting, &mut order_rx, error);
                }
            };
            // Every request written so far may be answered in these bytes.
            while let Ok(req) = order_rx.try_recv() {
                waiting.push_back(req);
            }
            let mut closing = false;
            let mut unrequested = false;
            let decoded = decoder.decode_parts(&chunk[..n], &mut |part| {
                if closing || unrequested {
                    return;
                }
                let Some(&req) = waiting.front() else {
                    unrequested = true;
                    return;
                };
                match part {
                    Part::Head { status, .. } if (100..200).contains(&status) && status != 101 => {
                        interim = true;
                    }
                    Part::End(_) if interim => interim = false,
                    Part::Head { status, headers } => {
                        head_seen = true;
                        let content_type = header(headers, "content-type")
                            .map(|v| String::from_utf8_lossy(v).to_string())
                            .unwrap_or_default();
                        let cache =
                            crate::cache::CacheHeaders::from_pairs(headers.iter().filter_map(
                                |h| Some((h.name, std::str::from_utf8(h.value).ok()?)),
                            ));
                        let _ = events.send(Event::Head {
                            req,
                            at: Instant::now(),
                            status,
                            content_type,
                            cache,
                        });
                    }
                    Part::Body(data) => {
                        let data = Bytes::copy_from_slice(data);
                        let _ = events.send(Event::Data { req, data });
                    }
                    Part::End(response) => {
                        waiting.pop_front();
                        head_seen = false;
                        if response.close {
                            // Announced before the Done, so that nothing more goes on it.
                            closing = true;
                            let _ = events.send(Event::Closed { conn });
                        }
                        let _ = events.send(Event::Done {
                            req,
                            at: Instant::now(),
                            conn,
                        });
                    }
                }
            });
            if let Err(e) = decoded {
                return fail_all(&mut waiting, &mut order_rx, Error::BadResponse(e));
            }
            if closing || unrequested {
                // Pipelined requests behind a close are lost with it.
                return fail_all(&mut waiting, &mut order_rx, Error::Closed);
            }
        }
    };
    tokio::join!(writer, reader);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a connection against scripted server bytes; the events it reports.
    async fn run(requests: usize, answer: &'static [u8]) -> Vec<Event> {
        let (ours, mut theirs) = tokio::io::duplex(1 << 16);
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let (events_tx, mut events) = mpsc::unbounded_channel();
        let task = tokio::spawn(connection(7, Box::new(ours), jobs_rx, events_tx));
        for req in 0..requests {
            let headers = crate::headers::minimal(proto::Protocol::Http);
            jobs_tx
                .send((req, "h.test".into(), "/".into(), headers, None))
                .unwrap();
        }
        // Read the requests, then answer and close.
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while got.windows(4).filter(|w| w == b"\r\n\r\n").count() < requests {
            let n = theirs.read(&mut buf).await.unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        theirs.write_all(answer).await.unwrap();
        drop(theirs);
        drop(jobs_tx);
        task.await.unwrap();
        std::iter::from_fn(|| events.try_recv().ok()).collect()
    }

    /// The events in words, the body bytes of a response summed.
    fn names(events: &[Event]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut body: Option<(ReqId, usize)> = None;
        for e in events {
            if let Event::Data { req, data } = e {
                let n = body.map_or(0, |(_, n)| n);
                body = Some((*req, n + data.len()));
                continue;
            }
            if let Some((req, n)) = body.take() {
                out.push(format!("data {req} {n}"));
            }
            out.push(match e {
                Event::Head { req, status, .. } => format!("head {req} {status}"),
                Event::Done { req, conn, .. } => format!("done {req} on {conn}"),
                Event::Closed { conn } => format!("closed {conn}"),
                Event::Failed { req, error } => format!("failed {req}: {error}"),
                _ => continue,
            });
        }
        out
    }

    #[test]
    fn a_post_says_its_method_and_length_and_carries_its_body() {
        let headers = vec![("accept".to_string(), "*/*".to_string())];
        let upload = |method: &str, body: &'static [u8]| Upload {
            method: method.into(),
            body: Bytes::from_static(body),
        };
        let text = |u: Option<Upload>| {
            String::from_utf8(request_bytes("h.test", "/t?a=1", &headers, u.as_ref())).unwrap()
        };
        assert_eq!(
            text(None),
            "GET /t?a=1 HTTP/1.1\r\nHost: h.test\r\nAccept: */*\r\n\r\n"
        );
        assert_eq!(
            text(Some(upload("POST", b"{\"e\":1}"))),
            "POST /t?a=1 HTTP/1.1\r\nHost: h.test\r\nAccept: */*\r\nContent-Length: 7\r\n\r\n{\"e\":1}"
        );
        // A POST without a body says so; a DELETE without one says nothing.
        assert!(text(Some(upload("POST", b""))).ends_with("Content-Length: 0\r\n\r\n"));
        assert!(text(Some(upload("DELETE", b""))).ends_with("*/*\r\n\r\n"));
    }

    #[tokio::test]
    async fn chunked_bodies_and_an_announced_close_are_no_errors() {
        let events = run(
            1,
            b"HTTP/1.1 200 OK\r\nContent-Type: text/css\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        )
        .await;
        assert_eq!(
            names(&events),
            ["head 0 200", "data 0 5", "closed 7", "done 0 on 7"]
        );
    }

    /// A 103 over HTTP/1.1 is skipped (Chromium acts on Early Hints over h2
    /// and h3 only): the response after it is the request's.
    #[tokio::test]
    async fn an_early_hints_response_over_http1_is_skipped() {
        let events = run(
            1,
            b"HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload; as=style\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
        )
        .await;
        assert_eq!(names(&events), ["head 0 200", "data 0 2", "done 0 on 7"]);
    }

    #[tokio::test]
    async fn pipelined_requests_behind_a_close_fail() {
        let events = run(
            2,
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok",
        )
        .await;
        assert_eq!(
            names(&events),
            [
                "head 0 200",
                "data 0 2",
                "closed 7",
                "done 0 on 7",
                "failed 1: connection closed"
            ]
        );
    }
}
