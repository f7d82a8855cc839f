//! HTTP/2 on the `h2` crate: the handshake with Chrome's large windows, and
//! one request (waiting for a stream slot under the server's limit, sending,
//! reading the body and giving its flow-control capacity back).
//!
//! Priorities as Chrome sends them (`crate::priority`), for servers that
//! honour them: each HEADERS frame carries RFC 7540's PRIORITY fields —
//! Chromium's exclusive dependency chain and weight, written into the frames
//! on their way out by `h2_priority::PriorityIo`, since the `h2` crate has
//! no API for them — and the request carries the RFC 9218 `priority` header
//! (current Chromium sends both on every HTTP/2 request).

use super::h2_priority::{PriorityIo, Signals};
use super::{Error, Event, Io, PushHandle, PushId};
use crate::priority::Priority;
use crate::schedule::{ConnId, ReqId};
use bytes::Bytes;
use proto::{Protocol, MAX_REFUSED_RETRIES};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::sync::mpsc;

/// What sends requests on an open HTTP/2 connection: the `h2` crate's
/// sender and the connection's priority signals.
#[derive(Clone)]
pub struct Sender {
    pub send: h2::client::SendRequest<Bytes>,
    pub signals: Signals,
}

/// The client side of the handshake, writing through `PriorityIo`: the
/// request sender and the connection future, which the caller drives.
pub async fn handshake(
    io: Box<dyn Io>,
) -> Result<(Sender, h2::client::Connection<Box<dyn Io>, Bytes>), h2::Error> {
    let signals = Signals::default();
    let io: Box<dyn Io> = Box::new(PriorityIo::new(io, signals.clone()));
    let mut builder = h2::client::Builder::new();
    // As Chrome: large stream and connection windows.
    builder
        .initial_window_size(6 * 1024 * 1024)
        .initial_connection_window_size(15 * 1024 * 1024)
        // Until the server's SETTINGS arrive, at most 100 streams, as Chrome
        // (`kDefaultInitialMaxConcurrentStreams`); then the server's limit.
        .initial_max_send_streams(100);
    let (send, connection) = builder.handshake::<_, Bytes>(io).await?;
    Ok((Sender { send, signals }, connection))
}

/// A stream in the connection's dependency chain until dropped (its
/// response complete, failed, or its task aborted).
struct OpenStream<'a> {
    signals: &'a Signals,
    id: u32,
}

impl Drop for OpenStream<'_> {
    fn drop(&mut self) {
        self.signals.closed(self.id);
    }
}

/// The server reset the stream with REFUSED_STREAM: it did not process it.
fn refused(e: &h2::Error) -> bool {
    e.is_reset() && e.is_remote() && e.reason() == Some(h2::Reason::REFUSED_STREAM)
}

/// One HTTP/2 request with `headers` besides the pseudo-headers and its
/// `priority` (the `priority` header, the HEADERS frame's fields): waits for
/// a stream slot (the server's limit), sends, reads.
#[allow(clippy::too_many_arguments)]
pub async fn request(
    sender: Sender,
    req: ReqId,
    conn: ConnId,
    host: String,
    path: String,
    protocol: Protocol,
    events: mpsc::UnboundedSender<Event>,
    headers: crate::headers::HeaderList,
    upload: Option<crate::replay::Upload>,
    priority: Priority,
) {
    let Sender { mut send, signals } = sender;
    let priority_header = priority.header();
    let fail = |error: Error| {
        let _ = events.send(Event::Failed { req, error });
    };
    let h2 = |step: &'static str| move |source| Error::H2 { step, source };
    let scheme = if protocol.tls() { "https" } else { "http" };
    let build = || {
        let method = upload.as_ref().map_or("GET", |u| u.method.as_str());
        let mut builder = http::Request::builder()
            .method(method)
            .uri(format!("{scheme}://{host}{path}"));
        for (name, value) in &headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        if let Some(u) = upload
            .as_ref()
            .filter(|u| !u.body.is_empty() || u.expects_body())
        {
            builder = builder.header("content-length", u.body.len());
        }
        // Chromium adds it after the others (`CreateSpdyHeadersFromHttpRequest`).
        if let Some(p) = &priority_header {
            builder = builder.header("priority", p.as_str());
        }
        builder.body(())
    };
    let mut refusals = 0;
    // The stream in the dependency chain (each refused one leaves it).
    let mut open: Option<OpenStream>;
    // The promises the server makes on the stream (h2 pushes).
    let mut pushes: Option<h2::client::PushPromises>;
    let response = loop {
        let request = match build() {
            Ok(r) => r,
            Err(e) => return fail(Error::Request(e.to_string())),
        };
        // Waits while the server's SETTINGS_MAX_CONCURRENT_STREAMS (once
        // known) has every stream busy: the h2 crate queues the stream.
        if let Err(e) = std::future::poll_fn(|cx| send.poll_ready(cx)).await {
            return fail(h2("stream")(e));
        }
        // A body (an imported page's POST) follows the headers in DATA.
        let body = upload
            .as_ref()
            .map(|u| u.body.clone())
            .filter(|b| !b.is_empty());
        let mut response = match send.send_request(request, body.is_none()) {
            Ok((response, mut stream)) => {
                // Registered before any await: the writer may be waiting for it.
                let id = u32::from(response.stream_id());
                signals.opened(id, priority);
                open = Some(OpenStream {
                    signals: &signals,
                    id,
                });
                if let Some(body) = body {
                    if let Err(e) = stream.send_data(body, true) {
                        return fail(h2("send body")(e));
                    }
                }
                response
            }
            Err(e) => return fail(h2("send")(e)),
        };
        let _ = events.send(Event::Sent {
            req,
            at: Instant::now(),
        });
        pushes = Some(response.push_promises());
        let mut informational = true;
        // The response, telling the 103s and the promises before it.
        let got = loop {
            let step = std::future::poll_fn(|cx| {
                poll_head(cx, &mut response, &mut informational, &mut pushes)
            })
            .await;
            match step {
                Step::Info(r) => early_hints(req, &r, &events),
                Step::Promise(p) => promised(p, req, conn, &events),
                Step::Response(r) => break r,
            }
        };
        match got {
            Ok(r) => break r,
            // The server refused the stream before processing it (its limit
            // arrived after the request left, or it still counted a stream
            // we saw end): safe to send again, as Chrome does.
            Err(e) if refused(&e) && refusals < MAX_REFUSED_RETRIES => refusals += 1,
            Err(e) => return fail(h2("response")(e)),
        }
    };
    let _ = events.send(Event::head(req, &response));
    let mut body = response.into_body();
    loop {
        let step = std::future::poll_fn(|cx| poll_body(cx, &mut body, &mut pushes)).await;
        match step {
            BodyStep::Promise(p) => promised(*p, req, conn, &events),
            BodyStep::Data(data) => {
                let _ = body.flow_control().release_capacity(data.len());
                let _ = events.send(Event::Data { req, data });
            }
            BodyStep::End => break,
            BodyStep::Failed(e) => return fail(h2("body")(e)),
        }
    }
    // Promises the server made before its END_STREAM are all in by now.
    while let Some(p) = pushes.as_mut().and_then(|p| {
        match p.poll_push_promise(&mut std::task::Context::from_waker(std::task::Waker::noop())) {
            std::task::Poll::Ready(Some(Ok(p))) => Some(p),
            _ => None,
        }
    }) {
        promised(p, req, conn, &events);
    }
    // The stream is closed (as Chromium's once END_STREAM is read) before
    // the owner hears of it and makes its next requests.
    drop(open.take());
    let _ = events.send(Event::Done {
        req,
        at: Instant::now(),
        conn,
    });
}

/// What came on a stream before its response.
enum Step {
    /// An informational (1xx) response.
    Info(http::Response<()>),
    Promise(h2::client::PushPromise),
    Response(Result<http::Response<h2::RecvStream>, h2::Error>),
}

/// Polls the 1xx responses first (the `h2` crate's response future drops
/// those not taken before it), then the promises, then the response.
fn poll_head(
    cx: &mut Context<'_>,
    response: &mut h2::client::ResponseFuture,
    informational: &mut bool,
    pushes: &mut Option<h2::client::PushPromises>,
) -> Poll<Step> {
    if *informational {
        match response.poll_informational(cx) {
            Poll::Ready(Some(Ok(r))) => return Poll::Ready(Step::Info(r)),
            Poll::Ready(_) => *informational = false,
            Poll::Pending => {}
        }
    }
    if let Some(p) = poll_promise(cx, pushes) {
        return Poll::Ready(Step::Promise(p));
    }
    Pin::new(response).poll(cx).map(Step::Response)
}

/// What came on a stream after its response's head.
enum BodyStep {
    Promise(Box<h2::client::PushPromise>),
    Data(Bytes),
    End,
    Failed(h2::Error),
}

fn poll_body(
    cx: &mut Context<'_>,
    body: &mut h2::RecvStream,
    pushes: &mut Option<h2::client::PushPromises>,
) -> Poll<BodyStep> {
    if let Some(p) = poll_promise(cx, pushes) {
        return Poll::Ready(BodyStep::Promise(Box::new(p)));
    }
    body.poll_data(cx).map(|d| match d {
        Some(Ok(data)) => BodyStep::Data(data),
        Some(Err(e)) => BodyStep::Failed(e),
        None => BodyStep::End,
    })
}

/// The next promise, if one is in; none are polled once they ended.
fn poll_promise(
    cx: &mut Context<'_>,
    pushes: &mut Option<h2::client::PushPromises>,
) -> Option<h2::client::PushPromise> {
    let p = pushes.as_mut()?;
    match p.poll_push_promise(cx) {
        Poll::Ready(Some(Ok(p))) => Some(p),
        Poll::Ready(_) => {
            *pushes = None;
            None
        }
        Poll::Pending => None,
    }
}

/// A 103 before `req`'s response: its `Link` values, told to the owner
/// (another 1xx is not).
fn early_hints(req: ReqId, r: &http::Response<()>, events: &mpsc::UnboundedSender<Event>) {
    if r.status().as_u16() != 103 {
        return;
    }
    let links = r
        .headers()
        .get_all("link")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .map(str::to_string)
        .collect();
    let _ = events.send(Event::EarlyHints {
        req,
        at: Instant::now(),
        links,
    });
}

/// A promise on `assoc`'s stream: its response read by a task of its own,
/// the owner told with the handle that cancels it.
fn promised(
    p: h2::client::PushPromise,
    assoc: ReqId,
    conn: ConnId,
    events: &mpsc::UnboundedSender<Event>,
) {
    let (request, response) = p.into_parts();
    let push = (conn, u32::from(response.stream_id()));
    let uri = request.uri();
    let host = uri
        .host()
        .map(str::to_ascii_lowercase)
        .or_else(|| {
            request
                .headers()
                .get("host")
                .and_then(|h| h.to_str().ok())
                .map(|h| h.split(':').next().unwrap_or(h).to_ascii_lowercase())
        })
        .unwrap_or_default();
    let path = uri
        .path_and_query()
        .map_or("/".to_string(), |p| p.as_str().to_string());
    // The task tells nothing before the promise is told.
    let (told, wait) = tokio::sync::oneshot::channel::<()>();
    let reader = events.clone();
    let task = tokio::spawn(async move {
        if wait.await.is_ok() {
            pushed(push, response, reader).await;
        }
    });
    let _ = events.send(Event::Promised {
        assoc,
        push,
        host,
        path,
        at: Instant::now(),
        handle: PushHandle::h2(task),
    });
    let _ = told.send(());
}

/// Reads a pushed response (its capacity given back as it comes).
async fn pushed(
    push: PushId,
    response: h2::client::PushedResponseFuture,
    events: mpsc::UnboundedSender<Event>,
) {
    let fail = |source| {
        let _ = events.send(Event::PushFailed {
            push,
            error: Error::H2 {
                step: "push",
                source,
            },
        });
    };
    let response = match response.await {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let Event::Head {
        at,
        status,
        content_type,
        ..
    } = Event::head(0, &response)
    else {
        return;
    };
    let _ = events.send(Event::PushHead {
        push,
        at,
        status,
        content_type,
    });
    let mut body = response.into_body();
    while let Some(chunk) = body.data().await {
        match chunk {
            Ok(data) => {
                let _ = body.flow_control().release_capacity(data.len());
                let _ = events.send(Event::PushData { push, data });
            }
            Err(e) => return fail(e),
        }
    }
    let _ = events.send(Event::PushDone {
        push,
        at: Instant::now(),
    });
}
