//! HTTP/2 (over TLS by ALPN `h2`, or cleartext h2c), with the server's limit of
//! concurrent streams advertised in SETTINGS. Protocol errors end in GOAWAY with
//! the right code (the `h2` crate's connection state machine).

use super::{BoxIo, ServeFuture, ServeProtocol};
use crate::Ctx;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

pub struct H2;

/// hyper's stream executor: a stream whose response is at hand (static
/// content, room in the window) is answered on the connection's task at once,
/// in request order; only a stream that has to wait gets a task of its own.
/// A task per stream queued behind thousands of others (tokio's LIFO slot
/// running the newest first) had made the p99 under `spdylab bench` load
/// hundreds of times the p50.
#[derive(Clone, Copy)]
struct InlineFirst;

impl<F> hyper::rt::Executor<F> for InlineFirst
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    fn execute(&self, fut: F) {
        let mut fut = Box::pin(fut);
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        // A future polled again re-registers its waker: the task's real one.
        if fut.as_mut().poll(&mut cx).is_pending() {
            tokio::spawn(fut);
        }
    }
}

/// Idle connections are pinged this often, and closed if the ping goes
/// unanswered for [`KEEPALIVE_TIMEOUT`].
const KEEPALIVE: Duration = Duration::from_secs(30);
/// Long enough for a client that is slow only because the machine is
/// overloaded (a load test's users queue; they are not dead): 10 s could cut
/// live users' connections under a 10 000-user load.
const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(60);

impl H2 {
    /// Serves an HTTP/2 connection on any I/O (also the upgraded h2c one).
    pub fn serve_io<I>(io: I, ctx: Arc<Ctx>) -> ServeFuture
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        Box::pin(async move {
            let mut builder = hyper::server::conn::http2::Builder::new(InlineFirst);
            builder
                .timer(TokioTimer::new())
                .keep_alive_interval(KEEPALIVE)
                .keep_alive_timeout(KEEPALIVE_TIMEOUT)
                .max_concurrent_streams(ctx.knobs.max_streams);
            let service = service_fn(move |req| {
                let ctx = ctx.clone();
                async move { Ok::<_, Infallible>(ctx.content.respond(req).await) }
            });
            let _ = builder.serve_connection(TokioIo::new(io), service).await;
        })
    }
}

impl ServeProtocol for H2 {
    fn alpn(&self) -> &'static [u8] {
        b"h2"
    }

    fn serve(&self, io: BoxIo, ctx: Arc<Ctx>) -> ServeFuture {
        H2::serve_io(io, ctx)
    }
}
