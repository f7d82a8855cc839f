//! HTTP/3 in the generator: one QUIC connection (quinn, its own UDP socket)
//! per bench connection, h3 on it, `streams` requests in flight, each on a
//! bidirectional stream of its own — counted, checked and timed exactly as
//! h2's (`Recorder::finish`), closed loop or on the open-loop schedule.
//! quinn holds a request back until the server's `max_concurrent_bidi_streams`
//! lets its stream open, as h2's `ready()` waits for SETTINGS' limit; the wait
//! is part of the request's latency in both. A GOAWAY (the server refusing new
//! requests, `RemoteClosing`) is a reconnect as h2's graceful GOAWAY is (the
//! refused request, in open loop, due again on the next connection); a
//! request the server never answers is an error. The transport is the model
//! client's: no segmentation offload (a link sees every datagram), large
//! receive windows (16 MiB a stream, 64 MiB the connection, as h2's here).

use crate::clock::Clock;
use crate::recorder::{Recorder, Shared};
use crate::BenchSpec;
use bytes::{Buf, Bytes};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A stream refused by a graceful GOAWAY: not an error, the cue to reconnect.
const GOING_AWAY: &str = "going-away";

type SendRequest = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// An open h3 connection and the endpoint (UDP socket) it lives on.
pub(crate) struct Conn {
    send: SendRequest,
    driver: h3::client::Connection<h3_quinn::Connection, Bytes>,
    endpoint: quinn::Endpoint,
}

fn transport() -> quinn::TransportConfig {
    let mut t = quinn::TransportConfig::default();
    t.stream_receive_window((16u32 * 1024 * 1024).into())
        .receive_window((64u32 * 1024 * 1024).into())
        .enable_segmentation_offload(false)
        .max_idle_timeout(Some(
            quinn::IdleTimeout::try_from(Duration::from_secs(30)).expect("a valid timeout"),
        ));
    t
}

/// The QUIC handshake and h3's control streams.
pub(crate) async fn open(spec: &BenchSpec) -> Result<Conn, &'static str> {
    let tls = spec.tls.clone().ok_or("tls")?;
    let local = SocketAddr::new(
        if spec.addr.is_ipv4() {
            IpAddr::from([0u8; 4])
        } else {
            IpAddr::from([0u16; 8])
        },
        0,
    );
    let mut endpoint = quinn::Endpoint::client(local).map_err(|_| "bind")?;
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(tls).map_err(|_| "tls")?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(Arc::new(transport()));
    endpoint.set_default_client_config(config);
    let conn = endpoint
        .connect(spec.addr, &spec.host)
        .map_err(|_| "connect")?
        .await
        .map_err(|e| match e {
            quinn::ConnectionError::TimedOut => "connect",
            _ => "quic-handshake",
        })?;
    let (driver, send) = h3::client::builder()
        .build::<_, _, Bytes>(h3_quinn::Connection::new(conn))
        .await
        .map_err(|_| "h3-handshake")?;
    Ok(Conn {
        send,
        driver,
        endpoint,
    })
}

/// `streams` requests in flight on one h3 connection, all driven by this task.
pub(crate) async fn run(
    conn: Conn,
    spec: &BenchSpec,
    shared: &Shared,
    rec: &mut Recorder,
    clock: &mut Clock,
) -> Result<(), &'static str> {
    use futures_util::stream::{FuturesUnordered, StreamExt};
    let Conn {
        send,
        mut driver,
        endpoint,
    } = conn;
    let closed = std::future::poll_fn(|cx| driver.poll_close(cx));
    tokio::pin!(closed);
    let uris: Vec<http::Uri> = spec
        .paths
        .iter()
        .map(|p| {
            format!("https://{}{}", spec.host, p.path)
                .parse()
                .unwrap_or_default()
        })
        .collect();
    let window = clock.window;
    let mut in_flight = FuturesUnordered::new();
    let wake_timer = tokio::time::sleep_until(window.end.into());
    tokio::pin!(wake_timer);
    let mut wake_at = window.end;
    let mut going_away = false;
    let mut flushed = Instant::now();
    let result = loop {
        let Some(now) = clock.tick(&shared.stop) else {
            break Ok(());
        };
        while !going_away && in_flight.len() < spec.streams {
            let Some((path, since)) = clock.next(now) else {
                break;
            };
            in_flight.push(request(
                send.clone(),
                uris[path].clone(),
                path,
                since,
                spec.timeout,
            ));
        }
        if going_away && in_flight.is_empty() {
            break Ok(());
        }
        let wake = clock.wake(!going_away && in_flight.len() < spec.streams);
        if wake != wake_at {
            wake_at = wake;
            wake_timer.as_mut().reset(wake.into());
        }
        tokio::select! {
            biased;
            Some((path, since, outcome)) = in_flight.next(), if !in_flight.is_empty() => {
                match outcome {
                    Ok((status, n)) => {
                        let now = Instant::now();
                        if let Err(kind) = rec.finish(path, since, now, status, n) {
                            break Err(kind);
                        }
                        rec.flush_now_and_then(now, &mut flushed);
                    }
                    // Refused before it went out: due again on the next opening.
                    Err(GOING_AWAY) => {
                        going_away = true;
                        clock.put_back(since);
                    }
                    Err(kind) => break Err(kind),
                }
            }
            e = &mut closed => {
                // The connection ended: whatever is still in flight is lost.
                break if e.is_h3_no_error() && in_flight.is_empty() {
                    Ok(())
                } else if e.is_h3_no_error() {
                    Err("closed-mid-request")
                } else {
                    Err("h3-reset")
                };
            }
            _ = &mut wake_timer => {}
        }
    };
    rec.flush();
    drop(in_flight);
    drop(send);
    endpoint.close(quinn::VarInt::from_u32(0x100), b""); // H3_NO_ERROR
    result
}

/// One HTTP/3 request on a stream of its own: (path, counted from, (status, body bytes)).
async fn request(
    mut send: SendRequest,
    uri: http::Uri,
    path: usize,
    since: Instant,
    timeout: Duration,
) -> (usize, Instant, Result<(u16, u64), &'static str>) {
    let work = async move {
        let req = http::Request::get(uri)
            .header("user-agent", "spdylab-bench")
            .body(())
            .map_err(|_| "request")?;
        // Refused before it went out by a GOAWAY: not lost, a reconnect.
        let mut stream = send.send_request(req).await.map_err(|e| match e {
            h3::error::StreamError::RemoteClosing { .. } => GOING_AWAY,
            _ => "h3-reset",
        })?;
        stream.finish().await.map_err(|_| "h3-reset")?;
        let resp = stream.recv_response().await.map_err(|_| "h3-reset")?;
        let status = resp.status().as_u16();
        let mut n = 0u64;
        while let Some(chunk) = stream.recv_data().await.map_err(|_| "h3-reset")? {
            n += chunk.remaining() as u64;
        }
        Ok::<_, &'static str>((status, n))
    };
    let outcome = tokio::time::timeout(timeout, work)
        .await
        .unwrap_or(Err("timeout"));
    (path, since, outcome)
}
