//! `survey`'s checks over TCP: TLS (one handshake offering everything, and
//! each version alone), HTTP/1.1 with and without TLS, h2 and SPDY/3.1 by
//! ALPN, h2c by Upgrade and by prior knowledge. Each reads only what it needs:
//! a response head, or the frames a server sends first up to the answer to
//! our PING (HTTP/2 by [`wire::H2Reader`], SPDY by proto's own decoder).

use super::tls::{self, Tls};
use super::wire::{self, H2Reader, H2Seen, Head, Settings};
use super::{Found, Missing, Outcome, Plan, Timer};
use proto::spdy3;
use std::io::{Read, Write};
use std::net::TcpStream;

/// Bytes in and out of a connection, within a check's time.
trait Wire {
    fn send(&mut self, bytes: &[u8], timer: &Timer) -> Result<(), Missing>;
    /// Some bytes; 0 at the end.
    fn recv(&mut self, buf: &mut [u8], timer: &Timer) -> Result<usize, Missing>;
}

impl Wire for Tls {
    fn send(&mut self, bytes: &[u8], timer: &Timer) -> Result<(), Missing> {
        self.write_all(bytes, timer)
    }
    fn recv(&mut self, buf: &mut [u8], timer: &Timer) -> Result<usize, Missing> {
        self.read(buf, timer)
    }
}

impl Wire for TcpStream {
    fn send(&mut self, bytes: &[u8], timer: &Timer) -> Result<(), Missing> {
        let _ = self.set_write_timeout(Some(timer.left()?));
        self.write_all(bytes).map_err(|e| tls::io_reason(&e, timer))
    }
    fn recv(&mut self, buf: &mut [u8], timer: &Timer) -> Result<usize, Missing> {
        let _ = self.set_read_timeout(Some(timer.left()?));
        self.read(buf).map_err(|e| tls::io_reason(&e, timer))
    }
}

const ALL_ALPN: [&[u8]; 3] = [b"h2", spdy3::ALPN, b"http/1.1"];
const BOTH: [&rustls::SupportedProtocolVersion; 2] =
    [&rustls::version::TLS13, &rustls::version::TLS12];

fn tls_with(
    plan: &Plan,
    alpn: &[&[u8]],
    versions: &[&'static rustls::SupportedProtocolVersion],
    timer: &Timer,
) -> Result<(Tls, Option<tls::Seen>), Missing> {
    let (config, seen) = plan.trust.config(alpn, versions);
    let tls = Tls::connect(plan.tls_addr, plan.server_name.clone(), config, timer)?;
    let seen = seen.lock().unwrap().take();
    Ok((tls, seen))
}

/// One handshake offering h2, spdy/3.1 and http/1.1 over TLS 1.2 and 1.3:
/// what the server chose, and its certificate.
pub fn tls_handshake(plan: &Plan, timer: &Timer) -> Outcome {
    let (tls, seen) = tls_with(plan, &ALL_ALPN, &BOTH, timer)?;
    Ok(Found {
        detail: format!(
            "{}, ALPN {}",
            tls.describe(),
            tls.alpn().unwrap_or_else(|| "none chosen".into())
        ),
        seen,
        ..Found::default()
    })
}

/// A handshake with only `version` offered.
pub fn tls_version(
    plan: &Plan,
    version: &'static rustls::SupportedProtocolVersion,
    timer: &Timer,
) -> Outcome {
    let (tls, seen) = tls_with(plan, &ALL_ALPN, &[version], timer)?;
    Ok(Found {
        detail: tls.describe(),
        seen,
        ..Found::default()
    })
}

/// The request an HTTP/1.1 check sends (`extra`: more header lines).
fn get(host: &str, extra: &str) -> Vec<u8> {
    format!(
        "GET / HTTP/1.1\r\nHost: {host}\r\nUser-Agent: spdylab-probe\r\nAccept: */*\r\n{extra}\r\n"
    )
    .into_bytes()
}

/// Reads a response head; returns it with the bytes after it.
fn read_head(w: &mut impl Wire, timer: &Timer) -> Result<(Head, Vec<u8>), Missing> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        match wire::parse_head(&buf) {
            Ok(Some((head, n))) => return Ok((head, buf[n..].to_vec())),
            Ok(None) if buf.len() > 64 * 1024 => return Err("a response head over 64 KiB".into()),
            Ok(None) => {}
            Err(what) => return Err(format!("not HTTP/1.x: the server sent {what}")),
        }
        let n = w.recv(&mut chunk, timer)?;
        if n == 0 {
            return Err(if buf.is_empty() {
                "connection closed without an answer".into()
            } else {
                "connection closed inside the response head".into()
            });
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

fn http1_on(w: &mut impl Wire, host: &str, timer: &Timer) -> Outcome {
    w.send(&get(host, "Connection: close\r\n"), timer)?;
    let (head, _) = read_head(w, timer)?;
    Ok(Found {
        detail: head.status_line.clone(),
        head: Some(head.headers),
        ..Found::default()
    })
}

/// HTTP/1.1 over TLS, ALPN `http/1.1` offered (a server that chooses none is
/// taken at its word by the response).
pub fn http1_tls(plan: &Plan, timer: &Timer) -> Outcome {
    let (mut tls, seen) = tls_with(plan, &[b"http/1.1"], &BOTH, timer)?;
    if let Some(other) = tls.alpn().filter(|a| a != "http/1.1") {
        return Err(format!("the server chose ALPN {other}"));
    }
    let mut found = http1_on(&mut tls, &plan.name, timer)?;
    found.seen = seen;
    Ok(found)
}

/// HTTP/1.1 in clear.
pub fn http1(plan: &Plan, timer: &Timer) -> Outcome {
    let mut sock = tls::connect(plan.http_addr, timer)?;
    http1_on(&mut sock, &plan.name, timer)
}

/// Sends the HTTP/2 opening and reads up to the PING's ACK (`first`: bytes
/// already received).
fn h2_settings(w: &mut impl Wire, first: &[u8], timer: &Timer) -> Result<Settings, Missing> {
    w.send(&wire::h2_opening(), timer)?;
    let mut reader = H2Reader::default();
    let mut seen = reader.feed(first);
    let mut chunk = [0u8; 16 * 1024];
    while seen == H2Seen::More {
        let n = match w.recv(&mut chunk, timer) {
            Ok(0) => break,
            Ok(n) => n,
            // What came before a reset or a timeout still counts.
            Err(e) if reader.settings().is_none() => return Err(e),
            Err(_) => break,
        };
        seen = reader.feed(&chunk[..n]);
    }
    if seen == H2Seen::NotH2 {
        return Err("not HTTP/2: the server's first frame is no SETTINGS".into());
    }
    let settings = reader
        .settings()
        .ok_or_else(|| "connection closed before the server's SETTINGS".to_string())?;
    if let H2Seen::GoAway(code) = seen {
        if settings.all.is_empty() && code != 0 {
            return Err(format!("GOAWAY (error {code}) after SETTINGS"));
        }
    }
    let _ = w.send(&wire::h2_closing(), timer);
    Ok(settings)
}

fn describe_h2(s: &Settings) -> String {
    let or = |v: Option<u64>, default: &str| v.map_or(default.to_string(), |v| v.to_string());
    format!(
        "max streams {}, initial window {}, connection window {}",
        or(s.max_concurrent_streams, "unlimited (not sent)"),
        or(s.initial_window, "65535 (default)"),
        or(s.connection_window, "65535 (default)"),
    )
}

/// h2 by ALPN: the server's SETTINGS.
pub fn h2(plan: &Plan, timer: &Timer) -> Outcome {
    let (mut tls, seen) = tls_with(plan, &[b"h2"], &BOTH, timer)?;
    match tls.alpn() {
        Some(a) if a == "h2" => {}
        Some(other) => return Err(format!("the server chose ALPN {other}")),
        None => return Err("the server chose no ALPN protocol".into()),
    }
    let settings = h2_settings(&mut tls, &[], timer)?;
    Ok(Found {
        detail: describe_h2(&settings),
        settings: Some(settings),
        seen,
        ..Found::default()
    })
}

/// h2c by prior knowledge: the preface in clear, and the server's SETTINGS.
pub fn h2c_prior(plan: &Plan, timer: &Timer) -> Outcome {
    let mut sock = tls::connect(plan.http_addr, timer)?;
    let settings = h2_settings(&mut sock, &[], timer).map_err(|e| {
        if e.starts_with("not HTTP/2") {
            "the server answered the preface with something else than HTTP/2".into()
        } else {
            e
        }
    })?;
    Ok(Found {
        detail: describe_h2(&settings),
        settings: Some(settings),
        ..Found::default()
    })
}

/// h2c by `Upgrade: h2c` on a GET (RFC 7540 §3.2): 101, then the server's SETTINGS.
pub fn h2c_upgrade(plan: &Plan, timer: &Timer) -> Outcome {
    let mut sock = tls::connect(plan.http_addr, timer)?;
    // HTTP2-Settings: ENABLE_PUSH = 0, base64url.
    sock.send(
        &get(
            &plan.name,
            "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAIAAAAA\r\n",
        ),
        timer,
    )?;
    let (head, rest) = read_head(&mut sock, timer)?;
    if head.status != 101 {
        return Err(format!("answered {} without upgrading", head.status_line));
    }
    let settings = h2_settings(&mut sock, &rest, timer)?;
    Ok(Found {
        detail: format!("101, then {}", describe_h2(&settings)),
        settings: Some(settings),
        head: Some(head.headers),
        ..Found::default()
    })
}

/// SPDY/3.1 by ALPN: the server's SETTINGS and session WINDOW_UPDATE up to the
/// answer to our PING, and the SYN_REPLY to a GET / (for `Server`).
pub fn spdy3(plan: &Plan, timer: &Timer) -> Outcome {
    let (mut tls, seen) = tls_with(plan, &[spdy3::ALPN], &BOTH, timer)?;
    match tls.alpn() {
        Some(a) if a.as_bytes() == spdy3::ALPN => {}
        Some(other) => return Err(format!("the server chose ALPN {other}")),
        None => return Err("the server chose no ALPN protocol".into()),
    }
    let mut enc = spdy3::Encoder::default();
    let mut out = Vec::new();
    enc.encode(&spdy3::Frame::Ping { id: 1 }, &mut out);
    let headers: spdy3::Headers = [
        (":method", "GET"),
        (":path", "/"),
        (":version", "HTTP/1.1"),
        (":host", plan.name.as_str()),
        (":scheme", "https"),
        ("user-agent", "spdylab-probe"),
    ]
    .iter()
    .map(|(n, v)| (n.to_string(), v.to_string()))
    .collect();
    enc.encode(
        &spdy3::Frame::SynStream {
            stream_id: 1,
            associated_to: 0,
            priority: 0,
            fin: true,
            unidirectional: false,
            headers,
        },
        &mut out,
    );
    tls.send(&out, timer)?;
    let mut dec = spdy3::Decoder::default();
    let (mut settings, mut window, mut ping, mut reply) =
        (None::<Settings>, None::<u64>, false, None);
    let mut chunk = [0u8; 16 * 1024];
    let mut ended = None;
    while !(ping && reply.is_some()) && ended.is_none() {
        let n = match tls.recv(&mut chunk, timer) {
            Ok(0) => {
                ended = Some("connection closed".to_string());
                break;
            }
            Ok(n) => n,
            Err(e) => {
                ended = Some(e);
                break;
            }
        };
        dec.feed(&chunk[..n]);
        loop {
            match dec.next_frame() {
                Ok(None) => break,
                Err(e) => {
                    ended = Some(format!("not SPDY/3.1: {e}"));
                    break;
                }
                Ok(Some(frame)) => match frame {
                    spdy3::Frame::Settings { entries, .. } => {
                        let s = settings.get_or_insert_with(Settings::default);
                        for (_, id, v) in entries {
                            match id {
                                spdy3::settings::MAX_CONCURRENT_STREAMS => {
                                    s.max_concurrent_streams = Some(v.into())
                                }
                                spdy3::settings::INITIAL_WINDOW_SIZE => {
                                    s.initial_window = Some(v.into())
                                }
                                _ => {}
                            }
                            s.all.push((id.into(), v.into()));
                        }
                    }
                    spdy3::Frame::WindowUpdate {
                        stream_id: 0,
                        delta,
                    } => *window.get_or_insert(0) += u64::from(delta),
                    spdy3::Frame::Ping { id: 1 } => ping = true,
                    spdy3::Frame::SynReply {
                        stream_id: 1,
                        headers,
                        ..
                    } => reply = Some(headers),
                    spdy3::Frame::RstStream {
                        stream_id: 1,
                        status,
                    } => reply = Some(vec![("rst_stream".into(), status.to_string())]),
                    spdy3::Frame::GoAway { status, .. } => {
                        ended = Some(format!("GOAWAY (status {status})"))
                    }
                    _ => {}
                },
            }
        }
    }
    if !ping && settings.is_none() && reply.is_none() {
        return Err(format!(
            "no SPDY frame came back: {}",
            ended.unwrap_or_default()
        ));
    }
    let mut s = settings.unwrap_or_default();
    s.connection_window = window.map(|w| u64::from(spdy3::INITIAL_WINDOW) + w);
    let or = |v: Option<u64>, default: &str| v.map_or(default.to_string(), |v| v.to_string());
    let status = reply
        .as_ref()
        .and_then(|h| h.iter().find(|(n, _)| n == ":status" || n == "rst_stream"))
        .map(|(n, v)| {
            if n == "rst_stream" {
                format!("RST_STREAM {v}")
            } else {
                v.clone()
            }
        })
        .unwrap_or_else(|| "no reply".into());
    Ok(Found {
        detail: format!(
            "max streams {}, initial window {}, connection window {}; GET / → {status}",
            or(s.max_concurrent_streams, "unlimited (not sent)"),
            or(s.initial_window, "65536 (default)"),
            or(s.connection_window, "65536 (default)"),
        ),
        settings: Some(s),
        head: reply,
        seen,
    })
}
