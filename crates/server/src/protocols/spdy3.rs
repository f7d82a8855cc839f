//! SPDY/3.1 over TLS (ALPN `spdy/3.1`), on our own sans-I/O codec (`proto`).
//! The server advertises its concurrent-stream limit in SETTINGS and refuses
//! streams beyond it (RST_STREAM REFUSED_STREAM); responses go out by priority
//! (0 first, as mod_spdy did), round robin within a priority, in DATA frames of
//! at most 16 KiB, never beyond the stream's or the session's window.

use super::{BoxIo, Protocol, ServeFuture};
use crate::Ctx;
use bytes::Bytes;
use http_body_util::BodyExt;
use proto::spdy3::{rst, settings, Decoder, Encoder, Frame, Headers, INITIAL_WINDOW};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;

pub struct Spdy3;

impl Protocol for Spdy3 {
    fn alpn(&self) -> &'static [u8] {
        proto::spdy3::ALPN
    }

    fn serve(&self, io: BoxIo, ctx: Arc<Ctx>) -> ServeFuture {
        Box::pin(serve(io, ctx))
    }
}

/// Largest DATA frame we send.
const CHUNK: usize = 16 * 1024;

/// A response on its way out.
struct Outgoing {
    priority: u8,
    head: Option<Headers>,
    body: Bytes,
    sent: usize,
    window: i64,
}

/// A response produced by the content task of a stream.
struct Ready {
    stream_id: u32,
    status: u16,
    reason: String,
    headers: Headers,
    body: Bytes,
}

async fn serve(io: BoxIo, ctx: Arc<Ctx>) {
    let (mut rd, mut wr) = tokio::io::split(io);
    let mut dec = Decoder::default();
    let mut enc = Encoder::default();
    let mut out = Vec::with_capacity(64 * 1024);
    enc.encode(
        &Frame::Settings {
            clear: false,
            entries: vec![(0, settings::MAX_CONCURRENT_STREAMS, ctx.max_streams)],
        },
        &mut out,
    );
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel::<Ready>();
    // Streams opened and not finished (their responses count against the limit).
    let mut open: HashMap<u32, u8> = HashMap::new();
    let mut sending: BTreeMap<(u8, u64), (u32, Outgoing)> = BTreeMap::new();
    let mut turn: u64 = 0;
    let mut session_window: i64 = INITIAL_WINDOW as i64;
    let mut initial_window: i64 = INITIAL_WINDOW as i64;
    let mut last_stream = 0u32;
    let mut buf = vec![0u8; 64 * 1024];
    let mut going_away = false;
    loop {
        // Write what the windows allow, highest priority first, round robin within one.
        let mut budget = 256 * 1024;
        while budget > 0 && session_window > 0 {
            let Some((&key, _)) = sending
                .iter()
                .find(|(_, (_, o))| o.head.is_some() || (o.window > 0 && o.sent < o.body.len()))
            else {
                break;
            };
            let (id, mut o) = sending.remove(&key).expect("the key was just found");
            let fin_sent = if let Some(headers) = o.head.take() {
                let fin = o.body.is_empty();
                enc.encode(
                    &Frame::SynReply {
                        stream_id: id,
                        fin,
                        headers,
                    },
                    &mut out,
                );
                fin
            } else {
                let n = (o.body.len() - o.sent)
                    .min(CHUNK)
                    .min(o.window as usize)
                    .min(session_window as usize);
                let fin = o.sent + n == o.body.len();
                Encoder::data_head(id, fin, n, &mut out);
                out.extend_from_slice(&o.body[o.sent..o.sent + n]);
                o.sent += n;
                o.window -= n as i64;
                session_window -= n as i64;
                budget -= n.min(budget);
                fin
            };
            if fin_sent {
                open.remove(&id);
            } else {
                turn += 1;
                sending.insert((o.priority, turn), (id, o));
            }
        }
        if !out.is_empty() {
            // TLS holds what the socket did not take yet until flushed.
            if wr.write_all(&out).await.is_err() || wr.flush().await.is_err() {
                return;
            }
            out.clear();
        }
        if going_away && open.is_empty() {
            let _ = wr.shutdown().await;
            return;
        }
        let more_to_send = session_window > 0
            && sending
                .values()
                .any(|(_, o)| o.head.is_some() || (o.window > 0 && o.sent < o.body.len()));
        tokio::select! {
            biased;
            r = rd.read(&mut buf) => {
                let n = match r {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                dec.feed(&buf[..n]);
                loop {
                    let frame = match dec.next_frame() {
                        Ok(Some(f)) => f,
                        Ok(None) => break,
                        Err(_) => {
                            enc.encode(&Frame::GoAway { last_good_stream_id: last_stream, status: 1 }, &mut out);
                            let _ = wr.write_all(&out).await;
                            let _ = wr.flush().await;
                            return;
                        }
                    };
                    match frame {
                        Frame::SynStream { stream_id, priority, headers, .. } => {
                            if stream_id <= last_stream || stream_id % 2 == 0 {
                                enc.encode(&Frame::RstStream { stream_id, status: rst::PROTOCOL_ERROR }, &mut out);
                                continue;
                            }
                            last_stream = stream_id;
                            if going_away {
                                enc.encode(&Frame::RstStream { stream_id, status: rst::REFUSED_STREAM }, &mut out);
                                continue;
                            }
                            if open.len() >= ctx.max_streams as usize {
                                enc.encode(&Frame::RstStream { stream_id, status: rst::REFUSED_STREAM }, &mut out);
                                continue;
                            }
                            open.insert(stream_id, priority);
                            let (ctx, tx) = (ctx.clone(), ready_tx.clone());
                            tokio::spawn(async move {
                                let _ = tx.send(respond(&ctx, stream_id, &headers).await);
                            });
                        }
                        Frame::WindowUpdate { stream_id: 0, delta } => session_window += delta as i64,
                        Frame::WindowUpdate { stream_id, delta } => {
                            for (id, o) in sending.values_mut() {
                                if *id == stream_id {
                                    o.window += delta as i64;
                                }
                            }
                        }
                        Frame::Settings { entries, .. } => {
                            for (_, id, value) in entries {
                                if id == settings::INITIAL_WINDOW_SIZE {
                                    let delta = value as i64 - initial_window;
                                    initial_window = value as i64;
                                    for (_, o) in sending.values_mut() {
                                        o.window += delta;
                                    }
                                }
                            }
                        }
                        Frame::Ping { id } => enc.encode(&Frame::Ping { id }, &mut out),
                        Frame::RstStream { stream_id, .. } => {
                            open.remove(&stream_id);
                            sending.retain(|_, (id, _)| *id != stream_id);
                        }
                        Frame::GoAway { .. } => going_away = true,
                        Frame::Data { stream_id, data, .. } => {
                            // Request bodies are not served; give the window back.
                            if !data.is_empty() {
                                enc.encode(&Frame::WindowUpdate { stream_id: 0, delta: data.len() as u32 }, &mut out);
                                if open.contains_key(&stream_id) {
                                    enc.encode(&Frame::WindowUpdate { stream_id, delta: data.len() as u32 }, &mut out);
                                }
                            }
                        }
                        Frame::SynReply { stream_id, .. } | Frame::Headers { stream_id, .. } => {
                            enc.encode(&Frame::RstStream { stream_id, status: rst::PROTOCOL_ERROR }, &mut out);
                        }
                        Frame::Unknown { .. } => {}
                    }
                }
            }
            Some(r) = ready_rx.recv() => {
                let Some(&priority) = open.get(&r.stream_id) else { continue };
                let mut head: Headers = vec![
                    (":status".into(), format!("{} {}", r.status, r.reason)),
                    (":version".into(), "HTTP/1.1".into()),
                ];
                head.extend(r.headers);
                turn += 1;
                sending.insert((priority, turn), (r.stream_id, Outgoing { priority, head: Some(head), body: r.body, sent: 0, window: initial_window }));
            }
            // Nothing to read yet and more to send: go on sending.
            _ = std::future::ready(()), if more_to_send => {}
        }
    }
}

/// The response to a SYN_STREAM's request headers, from the site's content.
async fn respond(ctx: &Ctx, stream_id: u32, headers: &Headers) -> Ready {
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
    let req = hyper::Request::builder()
        .method(method)
        .uri(format!("{scheme}://{host}{path}"))
        .header(hyper::header::HOST, host)
        .body(http_body_util::Empty::<Bytes>::new());
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
