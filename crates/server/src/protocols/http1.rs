//! HTTP/1.1: keep-alive and pipelining (responses in request order), with
//! limits for hostile clients: 400 for a malformed request, 431 for oversize
//! headers, a timeout for slow headers. Also the entry to h2c by `Upgrade: h2c`.
//! (hyper's `pipeline_flush` stays off: with it, the automatic 400/431 is never
//! flushed to the client.)

use super::{h2c_upgrade, BoxIo, ServeFuture, ServeProtocol};
use crate::Ctx;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

pub struct Http1;

/// A client has this long to send a request's headers. hyper starts this clock
/// as soon as it waits for the next request, so it is also the keep-alive idle
/// timeout: 75 s, nginx's `keepalive_timeout`. At 10 s, a kept-alive connection
/// idle while an overloaded page waited for other resources was closed under
/// the user's next request (`connection closed` errors at 3 000 users × 6).
const HEADER_TIMEOUT: Duration = Duration::from_secs(75);
/// Headers larger than this get 431.
const MAX_HEADER_BYTES: usize = 16 * 1024;

impl ServeProtocol for Http1 {
    fn alpn(&self) -> &'static [u8] {
        b"http/1.1"
    }

    fn serve(&self, io: BoxIo, ctx: Arc<Ctx>) -> ServeFuture {
        Box::pin(async move {
            let service = service_fn(move |req| {
                let ctx = ctx.clone();
                async move {
                    // Not safe, and from TLS early data not yet verified:
                    // 425 (`crate::early`; this runs in the connection's task).
                    if let Some(r) = crate::early::too_early(req.method(), &ctx.early) {
                        return Ok(r);
                    }
                    if ctx.h2c && h2c_upgrade::is_request(&req) {
                        return Ok::<_, Infallible>(h2c_upgrade::switch(req, ctx));
                    }
                    Ok(ctx.content.respond(req).await)
                }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .max_buf_size(MAX_HEADER_BYTES.max(8192))
                .keep_alive(true)
                .serve_connection(TokioIo::new(io), service)
                .with_upgrades()
                .await;
        })
    }
}
