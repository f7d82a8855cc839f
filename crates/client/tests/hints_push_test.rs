//! 103 Early Hints and server push, acted on by the model's page loader
//! against in-process servers on the loopback: over h2c against the `h2`
//! crate's server (103 with `Link` headers before the document; pushes
//! promised on the document's stream), and SPDY/3.1's pushes against a
//! server made of proto's frame codec, driving the client's SPDY connection
//! directly. Checks what was requested and what was cancelled, never how
//! long anything took: the servers wait for the client's requests instead.

use bytes::Bytes;
use client::{HintsAndPushes, PageConfig, PageResult};
use proto::spdy3::{rst, Decoder, Encoder, Frame};
use proto::Protocol;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, Notify};

const HOST: &str = "hints.test";

const PAGE: &[u8] = br#"<!doctype html><html><head><link rel="stylesheet" href="//hints.test/s.css"><script src="//hints.test/a.js"></script></head><body><p>text</p><img src="//hints.test/i.png" width="100" height="100"></body></html>"#;

fn body_of(path: &str) -> (&'static str, Bytes) {
    match path {
        "/" => ("text/html", Bytes::from_static(PAGE)),
        "/s.css" => ("text/css", Bytes::from_static(b"p { color: red }")),
        "/a.js" => ("application/javascript", Bytes::from_static(b"var x = 1;")),
        _ => ("image/png", Bytes::from(vec![7u8; 5_000])),
    }
}

fn response(path: &str) -> http::Response<()> {
    http::Response::builder()
        .status(200)
        .header("content-type", body_of(path).0)
        .body(())
        .expect("a valid response")
}

/// How the h2 server answers the document.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// A 103 naming the stylesheet and the image (and a preconnect), then
    /// the document once both were asked for.
    Hints,
    /// Pushes of the stylesheet, the image and the document itself (the
    /// last cancelled by the client: it asked for it), then the document.
    Push,
    /// Neither.
    Plain,
}

#[derive(Default)]
struct Log {
    /// The paths the client asked for, in order.
    requests: Mutex<Vec<String>>,
    /// Reset reasons of the pushes the client cancelled: (path, reason).
    resets: Mutex<Vec<(String, h2::Reason)>>,
    asked: Notify,
}

async fn h2_server(listener: TcpListener, mode: Mode, log: Arc<Log>) {
    while let Ok((tcp, _)) = listener.accept().await {
        let log = log.clone();
        tokio::spawn(async move {
            let Ok(mut conn) = h2::server::handshake(tcp).await else {
                return;
            };
            while let Some(Ok((request, respond))) = conn.accept().await {
                let path = request
                    .uri()
                    .path_and_query()
                    .map_or("/".to_string(), |p| p.to_string());
                log.requests.lock().unwrap().push(path.clone());
                log.asked.notify_waiters();
                tokio::spawn(answer(path, respond, mode, log.clone()));
            }
        });
    }
}

async fn answer(
    path: String,
    mut respond: h2::server::SendResponse<Bytes>,
    mode: Mode,
    log: Arc<Log>,
) {
    if path == "/" && mode == Mode::Hints {
        let hints = http::Response::builder()
            .status(103)
            .header("link", "</s.css>; rel=preload; as=style")
            .header(
                "link",
                "</i.png>; rel=preload; as=image, <https://cdn.other.test>; rel=preconnect",
            )
            .body(())
            .expect("a valid 103");
        let _ = respond.send_informational(hints);
        // The document waits for both hinted requests: they can only have
        // come from the 103.
        loop {
            let asked = log.asked.notified();
            tokio::pin!(asked);
            asked.as_mut().enable();
            let seen = log.requests.lock().unwrap().clone();
            if seen.iter().any(|p| p == "/s.css") && seen.iter().any(|p| p == "/i.png") {
                break;
            }
            asked.await;
        }
    }
    if path == "/" && mode == Mode::Push {
        for pushed in ["/s.css", "/i.png", "/"] {
            let request = http::Request::builder()
                .uri(format!("http://{HOST}{pushed}"))
                .body(())
                .expect("a valid push request");
            let Ok(mut push) = respond.push_request(request) else {
                continue;
            };
            let Ok(mut stream) = push.send_response(response(pushed), false) else {
                continue;
            };
            if pushed == "/" {
                // Never ends: the client cancels it.
                let log = log.clone();
                tokio::spawn(async move {
                    if let Ok(reason) = std::future::poll_fn(|cx| stream.poll_reset(cx)).await {
                        log.resets.lock().unwrap().push(("/".into(), reason));
                    }
                });
            } else {
                let _ = stream.send_data(body_of(pushed).1, true);
            }
        }
    }
    if let Ok(mut stream) = respond.send_response(response(&path), false) {
        let _ = stream.send_data(body_of(&path).1, true);
    }
}

fn config(port: u16) -> PageConfig {
    let local = IpAddr::V4(Ipv4Addr::LOCALHOST);
    PageConfig {
        protocol: Protocol::H2c,
        tls13_only: None,
        knobs: client::Knobs::default(),
        root: (HOST.to_string(), "/".to_string()),
        resolve: HashMap::from([
            (HOST.to_string(), local),
            ("cdn.other.test".to_string(), local),
        ]),
        ca: rustls::pki_types::CertificateDer::from(Vec::new()),
        http_port: port,
        https_port: port,
        timeout: Duration::from_secs(60),
        tls_sessions: None,
        cache: None,
        replay: None,
    }
}

async fn load(mode: Mode) -> (PageResult, HintsAndPushes, Arc<Log>) {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let log = Arc::new(Log::default());
    let server = tokio::spawn(h2_server(listener, mode, log.clone()));
    let (result, pushes, connections) = client::load_page_full(&config(port)).await;
    connections.close().await;
    server.abort();
    (result, pushes, log)
}

fn paths(result: &PageResult) -> Vec<&str> {
    let mut p: Vec<&str> = result.entries.iter().map(|e| e.path.as_str()).collect();
    p.sort_unstable();
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_103_starts_its_preloads_and_preconnect_and_nothing_is_fetched_twice() {
    let (result, x, log) = load(Mode::Hints).await;
    assert_eq!(result.error, None);
    assert_eq!(paths(&result), vec!["/", "/a.js", "/i.png", "/s.css"]);
    let mut asked = log.requests.lock().unwrap().clone();
    asked.sort_unstable();
    assert_eq!(asked, vec!["/", "/a.js", "/i.png", "/s.css"]);
    assert!(x.early_hints);
    assert_eq!(
        x.hinted,
        vec![
            (HOST.to_string(), "/s.css".to_string()),
            (HOST.to_string(), "/i.png".to_string())
        ]
    );
    assert_eq!(x.preconnected, vec!["cdn.other.test".to_string()]);
    // The preconnect's connection counts; nothing was pushed.
    assert_eq!(result.connections, 2);
    assert_eq!((x.promised, x.pushed_bytes), (0, 0));
    let css = result.entries.iter().find(|e| e.path == "/s.css").unwrap();
    assert!(x.was_hinted(css));
    assert!(!x.was_pushed(css));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushed_responses_are_used_and_a_push_of_what_was_asked_for_is_cancelled() {
    let (result, x, log) = load(Mode::Push).await;
    assert_eq!(result.error, None);
    assert_eq!(paths(&result), vec!["/", "/a.js", "/i.png", "/s.css"]);
    // The pushed ones never went out as requests.
    let mut asked = log.requests.lock().unwrap().clone();
    asked.sort_unstable();
    assert_eq!(asked, vec!["/", "/a.js"]);
    assert_eq!(x.promised, 3);
    let mut pushed = x.pushed.clone();
    pushed.sort_unstable();
    assert_eq!(
        pushed,
        vec![
            (HOST.to_string(), "/i.png".to_string()),
            (HOST.to_string(), "/s.css".to_string())
        ]
    );
    assert_eq!(x.cancelled, 1);
    assert_eq!(x.unclaimed, 0);
    let png = result.entries.iter().find(|e| e.path == "/i.png").unwrap();
    assert!(x.was_pushed(png));
    assert_eq!(png.body_bytes, 5_000);
    assert_eq!(png.status, 200);
    assert!(x.pushed_bytes >= 5_000 + 16);
    // The server saw the cancel (RST_STREAM CANCEL) of the document's push.
    for _ in 0..200 {
        if !log.resets.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        log.resets.lock().unwrap().clone(),
        vec![("/".to_string(), h2::Reason::CANCEL)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_hints_or_pushes_nothing_is_reported() {
    let (result, x, log) = load(Mode::Plain).await;
    assert_eq!(result.error, None);
    assert_eq!(paths(&result), vec!["/", "/a.js", "/i.png", "/s.css"]);
    assert_eq!(log.requests.lock().unwrap().len(), 4);
    assert_eq!(x, HintsAndPushes::default());
    assert_eq!(result.connections, 1);
}

/// SPDY/3.1: the client's connection against a scripted server. The
/// server answers the request on stream 1 and pushes two streams on it;
/// the client reports both, and the one its owner cancels is reset with
/// CANCEL on the wire.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spdy_pushes_are_told_and_a_cancelled_one_is_reset() {
    use client::conn::{spdy3, Event};
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (rst_tx, mut rst_rx) = mpsc::unbounded_channel::<(u32, u32)>();
    tokio::spawn(async move {
        let Ok((mut tcp, _)) = listener.accept().await else {
            return;
        };
        let mut dec = Decoder::default();
        let mut enc = Encoder::default();
        let mut buf = vec![0u8; 65_536];
        loop {
            let n = match tcp.read(&mut buf).await {
                Ok(n) if n > 0 => n,
                _ => return,
            };
            dec.feed(&buf[..n]);
            let mut out = Vec::new();
            while let Ok(Some(frame)) = dec.next_frame() {
                match frame {
                    Frame::SynStream { stream_id: 1, .. } => {
                        let status = vec![
                            (":status".to_string(), "200".to_string()),
                            (":version".to_string(), "HTTP/1.1".to_string()),
                            ("content-type".to_string(), "text/html".to_string()),
                        ];
                        for (id, path) in [(2, "/s.css"), (4, "/i.png")] {
                            enc.encode(
                                &Frame::SynStream {
                                    stream_id: id,
                                    associated_to: 1,
                                    priority: 0,
                                    fin: false,
                                    unidirectional: true,
                                    headers: vec![
                                        (":scheme".into(), "https".into()),
                                        (":host".into(), HOST.into()),
                                        (":path".into(), path.into()),
                                    ],
                                },
                                &mut out,
                            );
                        }
                        enc.encode(
                            &Frame::SynReply {
                                stream_id: 1,
                                fin: false,
                                headers: status.clone(),
                            },
                            &mut out,
                        );
                        enc.encode(
                            &Frame::Headers {
                                stream_id: 2,
                                fin: false,
                                headers: status,
                            },
                            &mut out,
                        );
                        enc.encode(
                            &Frame::Data {
                                stream_id: 2,
                                fin: true,
                                data: b"p{}".to_vec(),
                            },
                            &mut out,
                        );
                        enc.encode(
                            &Frame::Data {
                                stream_id: 1,
                                fin: true,
                                data: PAGE.to_vec(),
                            },
                            &mut out,
                        );
                    }
                    Frame::RstStream { stream_id, status } => {
                        let _ = rst_tx.send((stream_id, status));
                    }
                    _ => {}
                }
            }
            if !out.is_empty() && tcp.write_all(&out).await.is_err() {
                return;
            }
        }
    });
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
    let (ev_tx, mut ev_rx) = mpsc::unbounded_channel();
    let conn = tokio::spawn(spdy3::connection(
        0,
        Box::new(tcp),
        jobs_rx,
        ev_tx,
        spdy3::CHROME_RECEIVE_WINDOW,
    ));
    jobs_tx
        .send(spdy3::Job {
            req: 0,
            host: HOST.into(),
            path: "/".into(),
            headers: Vec::new(),
            upload: None,
            priority: client::Priority::DOCUMENT,
        })
        .unwrap();
    let mut promised = Vec::new();
    let mut pushed_css = Vec::new();
    let mut done = (false, false);
    while let Some(ev) = ev_rx.recv().await {
        match ev {
            Event::Promised {
                assoc,
                push,
                path,
                handle,
                ..
            } => {
                assert_eq!(assoc, 0);
                promised.push((push, path.clone()));
                if path == "/i.png" {
                    handle.cancel();
                } else {
                    let _ = handle.keep();
                }
            }
            Event::PushHead { push, status, .. } => assert_eq!((push, status), ((0, 2), 200)),
            Event::PushData { push, data } => {
                assert_eq!(push, (0, 2));
                pushed_css.extend_from_slice(&data);
            }
            Event::PushDone { push, .. } => {
                assert_eq!(push, (0, 2));
                done.1 = true;
            }
            Event::Done { req: 0, .. } => done.0 = true,
            _ => {}
        }
        if done == (true, true) {
            break;
        }
    }
    assert_eq!(
        promised,
        vec![
            ((0, 2), "/s.css".to_string()),
            ((0, 4), "/i.png".to_string())
        ]
    );
    assert_eq!(pushed_css, b"p{}");
    let reset = tokio::time::timeout(Duration::from_secs(30), rst_rx.recv()).await;
    assert_eq!(reset.ok().flatten(), Some((4, rst::CANCEL)));
    drop(jobs_tx);
    conn.abort();
}
