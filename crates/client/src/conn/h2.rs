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
use super::{Error, Event, Io};
use crate::priority::Priority;
use crate::schedule::{ConnId, ReqId};
use bytes::Bytes;
use proto::{Protocol, MAX_REFUSED_RETRIES};
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
        let response = match send.send_request(request, body.is_none()) {
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
        match response.await {
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
    while let Some(chunk) = body.data().await {
        match chunk {
            Ok(data) => {
                let _ = body.flow_control().release_capacity(data.len());
                let _ = events.send(Event::Data { req, data });
            }
            Err(e) => return fail(h2("body")(e)),
        }
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
