//! One page load over real sockets: the event loop that joins discovery, the
//! scheduler and the connections, and records each resource's timings. Every
//! load starts cold: new connections, full TLS handshakes, nothing cached.

use crate::discover::{css_urls, script_injections, Found, HtmlScanner};
use crate::schedule::{Action, ConnId, Policy, ReqId, Scheduler};
use bytes::Bytes;
use proto::Protocol;
use rustls::pki_types::{CertificateDer, ServerName};
use serde::Serialize;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

#[path = "spdy.rs"]
mod spdy;

#[path = "users.rs"]
pub mod users;

/// How to load a page.
#[derive(Clone)]
pub struct LoadConfig {
    pub protocol: Protocol,
    /// HTTP/1.1 connections per host.
    pub conns_per_host: usize,
    /// Requests in flight per connection when pipelining.
    pub depth: usize,
    /// The page: host and path.
    pub root: (String, String),
    /// Where each host is (the testbed's hosts file, as a map).
    pub resolve: HashMap<String, IpAddr>,
    /// The only certificate authority trusted.
    pub ca: CertificateDer<'static>,
    pub tls13_only: Option<bool>,
    pub http_port: u16,
    pub https_port: u16,
    /// The whole load must end within this.
    pub timeout: Duration,
}

/// HAR 1.2 phases in milliseconds; -1 where a phase does not apply.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Timings {
    pub blocked: f64,
    pub dns: f64,
    pub connect: f64,
    pub ssl: f64,
    pub send: f64,
    pub wait: f64,
    pub receive: f64,
}

/// One resource as loaded.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub host: String,
    pub path: String,
    /// When it was discovered, from navigation start, in ms.
    pub started_ms: f64,
    /// Discovery to last byte, in ms (the sum of the phases).
    pub time_ms: f64,
    pub status: u16,
    pub content_type: String,
    pub body_bytes: u64,
    pub connection: ConnId,
    pub timings: Timings,
}

#[derive(Debug, Clone, Serialize)]
pub struct LoadResult {
    pub protocol: Protocol,
    /// Navigation start to the last resource complete, in ms.
    pub plt_ms: f64,
    pub connections: usize,
    pub entries: Vec<Entry>,
    pub error: Option<String>,
}

enum Event {
    Connected {
        conn: ConnId,
        at: Instant,
        tls_ms: f64,
        link: Link,
    },
    ConnFailed {
        conn: ConnId,
        error: String,
    },
    Sent {
        req: ReqId,
        at: Instant,
    },
    Head {
        req: ReqId,
        at: Instant,
        status: u16,
        content_type: String,
    },
    Data {
        req: ReqId,
        data: Bytes,
    },
    Done {
        req: ReqId,
        at: Instant,
        conn: ConnId,
    },
    Failed {
        req: ReqId,
        error: String,
    },
}

/// What the loop holds to send requests on a connection.
enum Link {
    H1(mpsc::UnboundedSender<(ReqId, String, String)>),
    H2(h2::client::SendRequest<Bytes>),
    Spdy(mpsc::UnboundedSender<spdy::Job>),
}

#[derive(Default)]
struct Req {
    host: String,
    path: String,
    discovered: Option<Instant>,
    assigned: Option<Instant>,
    conn: Option<ConnId>,
    sent: Option<Instant>,
    head: Option<Instant>,
    done: Option<Instant>,
    status: u16,
    content_type: String,
    bytes: u64,
    html: Option<HtmlScanner>,
    body: Vec<u8>,
}

struct Conn {
    opened: Instant,
    ready: Option<Instant>,
    tls_ms: f64,
    first_req: Option<ReqId>,
    link: Option<Link>,
}

trait Io: AsyncRead + AsyncWrite + Unpin + Send + 'static {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send + 'static> Io for T {}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Loads the page; never panics on network trouble: errors are in the result.
pub async fn load(cfg: &LoadConfig) -> LoadResult {
    let start = Instant::now();
    let mut state = State::new(cfg, start);
    let outcome = tokio::time::timeout(cfg.timeout, state.run()).await;
    let error = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(_) => Some(format!("the page did not load within {:?}", cfg.timeout)),
    };
    state.result(error)
}

struct State<'a> {
    cfg: &'a LoadConfig,
    start: Instant,
    sched: Scheduler,
    reqs: Vec<Req>,
    seen: HashMap<(String, String), ReqId>,
    conns: Vec<Conn>,
    tx: mpsc::UnboundedSender<Event>,
    rx: mpsc::UnboundedReceiver<Event>,
    tls: Arc<rustls::ClientConfig>,
}

impl<'a> State<'a> {
    fn new(cfg: &'a LoadConfig, start: Instant) -> State<'a> {
        let policy = if cfg.protocol.multiplexed() {
            Policy::Multiplexed
        } else {
            Policy::PerHost {
                conns: cfg.conns_per_host,
                depth: if cfg.protocol.pipelined() {
                    cfg.depth
                } else {
                    1
                },
            }
        };
        let (tx, rx) = mpsc::unbounded_channel();
        State {
            cfg,
            start,
            sched: Scheduler::new(policy),
            reqs: Vec::new(),
            seen: HashMap::new(),
            conns: Vec::new(),
            tx,
            rx,
            tls: tls_config(cfg),
        }
    }

    fn pool_of(&self, host: &str) -> Result<String, String> {
        if self.cfg.protocol.multiplexed() {
            // One connection per origin address.
            self.cfg
                .resolve
                .get(host)
                .map(|a| a.to_string())
                .ok_or_else(|| format!("cannot resolve {host}"))
        } else {
            Ok(host.to_string())
        }
    }

    fn discover(&mut self, found: Found) -> Result<(), String> {
        let key = (found.host.clone(), found.path.clone());
        if self.seen.contains_key(&key) {
            return Ok(());
        }
        let id = self.reqs.len();
        self.seen.insert(key, id);
        let pool = self.pool_of(&found.host)?;
        self.reqs.push(Req {
            host: found.host,
            path: found.path,
            discovered: Some(Instant::now()),
            ..Default::default()
        });
        self.sched.discovered(id, &pool);
        Ok(())
    }

    async fn run(&mut self) -> Result<(), String> {
        let (host, path) = self.cfg.root.clone();
        self.discover(Found { host, path })?;
        loop {
            self.act()?;
            if self.reqs.iter().all(|r| r.done.is_some()) {
                return Ok(());
            }
            let Some(ev) = self.rx.recv().await else {
                return Err("all connections ended".into());
            };
            self.handle(ev)?;
        }
    }

    fn act(&mut self) -> Result<(), String> {
        while let Some(action) = self.sched.poll_action() {
            match action {
                Action::Open { conn, pool } => {
                    // Connect to the pool's address; for h1 the pool is the host.
                    let first_host = self
                        .reqs
                        .iter()
                        .find(|r| {
                            r.conn.is_none()
                                && self.pool_of(&r.host).ok().as_deref() == Some(pool.as_str())
                        })
                        .map(|r| r.host.clone())
                        .unwrap_or(pool.clone());
                    let addr = self
                        .cfg
                        .resolve
                        .get(&first_host)
                        .copied()
                        .ok_or_else(|| format!("cannot resolve {first_host}"))?;
                    self.conns.push(Conn {
                        opened: Instant::now(),
                        ready: None,
                        tls_ms: -1.0,
                        first_req: None,
                        link: None,
                    });
                    debug_assert_eq!(self.conns.len() - 1, conn);
                    tokio::spawn(open(
                        conn,
                        self.cfg.protocol,
                        addr,
                        first_host,
                        self.cfg.clone(),
                        self.tls.clone(),
                        self.tx.clone(),
                    ));
                }
                Action::Send { conn, req } => {
                    let now = Instant::now();
                    let r = &mut self.reqs[req];
                    r.assigned = Some(now);
                    r.conn = Some(conn);
                    let c = &mut self.conns[conn];
                    c.first_req.get_or_insert(req);
                    let (host, path) = (r.host.clone(), r.path.clone());
                    match c.link.as_mut() {
                        Some(Link::H1(tx)) => {
                            let _ = tx.send((req, host, path));
                        }
                        Some(Link::Spdy(tx)) => {
                            let _ = tx.send(spdy::Job { req, host, path });
                        }
                        Some(Link::H2(send)) => {
                            tokio::spawn(h2_request(
                                send.clone(),
                                req,
                                conn,
                                host,
                                path,
                                self.cfg.protocol,
                                self.tx.clone(),
                            ));
                        }
                        None => return Err("a request was scheduled on a closed connection".into()),
                    }
                }
            }
        }
        Ok(())
    }

    fn handle(&mut self, ev: Event) -> Result<(), String> {
        match ev {
            Event::Connected {
                conn,
                at,
                tls_ms,
                link,
            } => {
                let c = &mut self.conns[conn];
                c.ready = Some(at);
                c.tls_ms = tls_ms;
                c.link = Some(link);
                self.sched.connected(conn, None);
            }
            Event::ConnFailed { conn, error } => {
                return Err(format!("connection {conn}: {error}"));
            }
            Event::Sent { req, at } => self.reqs[req].sent = Some(at),
            Event::Head {
                req,
                at,
                status,
                content_type,
            } => {
                let r = &mut self.reqs[req];
                r.head = Some(at);
                r.status = status;
                if content_type.starts_with("text/html") {
                    r.html = Some(HtmlScanner::default());
                }
                r.content_type = content_type;
            }
            Event::Data { req, data } => {
                let r = &mut self.reqs[req];
                r.bytes += data.len() as u64;
                let found = match r.html.as_mut() {
                    Some(scanner) => scanner.feed(&data),
                    None => {
                        if r.content_type.starts_with("text/css")
                            || r.content_type.contains("javascript")
                        {
                            r.body.extend_from_slice(&data);
                        }
                        Vec::new()
                    }
                };
                for f in found {
                    self.discover(f)?;
                }
            }
            Event::Done { req, at, conn } => {
                let r = &mut self.reqs[req];
                r.done = Some(at);
                let body = std::mem::take(&mut r.body);
                let found = if r.content_type.starts_with("text/css") {
                    css_urls(&body)
                } else if r.content_type.contains("javascript") {
                    script_injections(&body)
                } else {
                    Vec::new()
                };
                self.sched.finished(conn);
                for f in found {
                    self.discover(f)?;
                }
            }
            Event::Failed { req, error } => {
                let r = &self.reqs[req];
                return Err(format!("{}{}: {error}", r.host, r.path));
            }
        }
        Ok(())
    }

    fn result(self, error: Option<String>) -> LoadResult {
        let since = |t: Instant| ms(t.saturating_duration_since(self.start));
        let last = self.reqs.iter().filter_map(|r| r.done).max();
        let entries = self
            .reqs
            .iter()
            .filter(|r| r.done.is_some())
            .map(|r| {
                let disc = r.discovered.unwrap_or(self.start);
                let conn = r.conn.unwrap_or(0);
                let c = &self.conns[conn];
                let assigned = r.assigned.unwrap_or(disc);
                let sent = r.sent.unwrap_or(assigned);
                let head = r.head.unwrap_or(sent);
                let done = r.done.unwrap_or(head);
                let d = |a: Instant, b: Instant| ms(b.saturating_duration_since(a));
                let mut t = Timings {
                    dns: -1.0,
                    ..Default::default()
                };
                let send_start;
                match c.ready {
                    Some(ready)
                        if c.first_req == Some(self.seen[&(r.host.clone(), r.path.clone())])
                            && ready > disc =>
                    {
                        let from = c.opened.max(disc);
                        t.blocked = d(disc, from);
                        t.connect = d(from, ready);
                        t.ssl = if c.tls_ms < 0.0 {
                            -1.0
                        } else {
                            c.tls_ms.min(t.connect)
                        };
                        send_start = ready.max(assigned);
                        t.blocked += d(ready, send_start);
                    }
                    _ => {
                        t.blocked = d(disc, assigned);
                        t.connect = -1.0;
                        t.ssl = -1.0;
                        send_start = assigned;
                    }
                }
                t.send = d(send_start, sent);
                t.wait = d(sent, head);
                t.receive = d(head, done);
                Entry {
                    host: r.host.clone(),
                    path: r.path.clone(),
                    started_ms: since(disc),
                    time_ms: d(disc, done),
                    status: r.status,
                    content_type: r.content_type.clone(),
                    body_bytes: r.bytes,
                    connection: conn,
                    timings: t,
                }
            })
            .collect();
        LoadResult {
            protocol: self.cfg.protocol,
            plt_ms: last.map_or(0.0, since),
            connections: self.sched.connections(),
            entries,
            error,
        }
    }
}

fn tls_config(cfg: &LoadConfig) -> Arc<rustls::ClientConfig> {
    client_tls(cfg.protocol, cfg.ca.clone(), cfg.tls13_only)
}

fn client_tls(
    protocol: Protocol,
    ca: CertificateDer<'static>,
    tls13_only: Option<bool>,
) -> Arc<rustls::ClientConfig> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    let _ = roots.add(ca);
    let versions: &[&rustls::SupportedProtocolVersion] = match tls13_only {
        None => &[&rustls::version::TLS13, &rustls::version::TLS12],
        Some(true) => &[&rustls::version::TLS13],
        Some(false) => &[&rustls::version::TLS12],
    };
    let mut c = rustls::ClientConfig::builder_with_protocol_versions(versions)
        .with_root_certificates(roots)
        .with_no_client_auth();
    c.alpn_protocols = if protocol == Protocol::Spdy3 {
        vec![proto::spdy3::ALPN.to_vec()]
    } else if protocol.multiplexed() {
        vec![b"h2".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    c.resumption = rustls::client::Resumption::disabled();
    Arc::new(c)
}

/// One response as `fetch_spdy3` got it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub status: u16,
    pub content_type: String,
    pub body: Vec<u8>,
}

/// Fetches `paths` of `host` from `addr` on one SPDY/3.1 session (TLS trusting
/// only `ca`, ALPN `spdy/3.1`) with the connection `load` uses, keeping the
/// bodies; `window` is the receive window of the session and of each stream
/// (64 KiB, SPDY's default, makes the server wait for our WINDOW_UPDATEs). For
/// checking the client byte by byte against other servers.
pub async fn fetch_spdy3(
    addr: SocketAddr,
    host: &str,
    paths: &[String],
    ca: CertificateDer<'static>,
    window: u32,
) -> Result<Vec<Fetched>, String> {
    let tls = client_tls(Protocol::Spdy3, ca, None);
    let (io, _) = dial(addr, None, Protocol::Spdy3, host, tls).await?;
    let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
    let (events_tx, mut events) = mpsc::unbounded_channel();
    for (req, path) in paths.iter().enumerate() {
        let _ = jobs_tx.send(spdy::Job {
            req,
            host: host.to_string(),
            path: path.clone(),
        });
    }
    drop(jobs_tx);
    tokio::spawn(spdy::connection(
        0,
        Box::new(io),
        jobs_rx,
        events_tx,
        window,
    ));
    let mut out = vec![
        Fetched {
            status: 0,
            content_type: String::new(),
            body: Vec::new(),
        };
        paths.len()
    ];
    let mut done = 0;
    while done < paths.len() {
        match events.recv().await {
            Some(Event::Head {
                req,
                status,
                content_type,
                ..
            }) => {
                out[req].status = status;
                out[req].content_type = content_type;
            }
            Some(Event::Data { req, data }) => out[req].body.extend_from_slice(&data),
            Some(Event::Done { .. }) => done += 1,
            Some(Event::Failed { req, error }) => return Err(format!("{}: {error}", paths[req])),
            Some(_) => {}
            None => {
                return Err(format!(
                    "the session ended after {done} of {} responses",
                    paths.len()
                ))
            }
        }
    }
    Ok(out)
}

/// TCP to `addr` (from `bind` when given: a user's own address), then TLS if
/// `protocol` wants it, with spdy3 only where ALPN chose spdy/3.1. The stream
/// and the TLS handshake's time in ms (-1 without TLS); an error names the
/// step, TLS ones starting with "TLS".
async fn dial(
    addr: SocketAddr,
    bind: Option<IpAddr>,
    protocol: Protocol,
    sni: &str,
    tls: Arc<rustls::ClientConfig>,
) -> Result<(Box<dyn Io>, f64), String> {
    let sock = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }
    .map_err(|e| format!("connect {addr}: {e}"))?;
    if let Some(ip) = bind {
        sock.bind(SocketAddr::new(ip, 0))
            .map_err(|e| format!("connect {addr} from {ip}: {e}"))?;
    }
    let tcp = sock
        .connect(addr)
        .await
        .map_err(|e| format!("connect {addr}: {e}"))?;
    let _ = tcp.set_nodelay(true);
    if !protocol.tls() {
        return Ok((Box::new(tcp), -1.0));
    }
    let t0 = Instant::now();
    let name =
        ServerName::try_from(sni.to_string()).map_err(|e| format!("TLS server name {sni}: {e}"))?;
    let s = tokio_rustls::TlsConnector::from(tls)
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS with {sni}: {e}"))?;
    if protocol == Protocol::Spdy3 && s.get_ref().1.alpn_protocol() != Some(proto::spdy3::ALPN) {
        return Err(format!("TLS: {sni} did not negotiate spdy/3.1 by ALPN"));
    }
    Ok((Box::new(s), ms(t0.elapsed())))
}

/// Opens a connection: TCP, TLS if the protocol wants it, then HTTP/1.1 or HTTP/2.
async fn open(
    conn: ConnId,
    protocol: Protocol,
    addr: IpAddr,
    sni: String,
    cfg: LoadConfig,
    tls: Arc<rustls::ClientConfig>,
    events: mpsc::UnboundedSender<Event>,
) {
    let fail = |e: String| {
        let _ = events.send(Event::ConnFailed { conn, error: e });
    };
    let port = if protocol.tls() {
        cfg.https_port
    } else {
        cfg.http_port
    };
    let (io, tls_ms) = match dial(SocketAddr::new(addr, port), None, protocol, &sni, tls).await {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    if protocol == Protocol::Spdy3 {
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let _ = events.send(Event::Connected {
            conn,
            at: Instant::now(),
            tls_ms,
            link: Link::Spdy(jobs_tx),
        });
        spdy::connection(conn, io, jobs_rx, events, spdy::CHROME_RECEIVE_WINDOW).await;
    } else if protocol.multiplexed() {
        let mut builder = h2::client::Builder::new();
        // As Chrome: large stream and connection windows.
        builder
            .initial_window_size(6 * 1024 * 1024)
            .initial_connection_window_size(15 * 1024 * 1024);
        match builder.handshake::<_, Bytes>(io).await {
            Ok((send, connection)) => {
                tokio::spawn(async move {
                    let _ = connection.await;
                });
                let _ = events.send(Event::Connected {
                    conn,
                    at: Instant::now(),
                    tls_ms,
                    link: Link::H2(send),
                });
            }
            Err(e) => fail(format!("HTTP/2 handshake: {e}")),
        }
    } else {
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let _ = events.send(Event::Connected {
            conn,
            at: Instant::now(),
            tls_ms,
            link: Link::H1(jobs_tx),
        });
        h1_connection(conn, io, jobs_rx, events).await;
    }
}

/// An HTTP/1.1 connection: writes requests as they come (pipelined if the
/// scheduler sends more than one), reads responses in order.
async fn h1_connection(
    conn: ConnId,
    io: Box<dyn Io>,
    mut jobs: mpsc::UnboundedReceiver<(ReqId, String, String)>,
    events: mpsc::UnboundedSender<Event>,
) {
    let (mut rd, mut wr) = tokio::io::split(io);
    let (order_tx, mut order_rx) = mpsc::unbounded_channel::<ReqId>();
    let ev = events.clone();
    let writer = async move {
        while let Some((req, host, path)) = jobs.recv().await {
            let text = format!(
                "GET {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: spdylab/0.1\r\nAccept: */*\r\n\r\n"
            );
            if order_tx.send(req).is_err() || wr.write_all(text.as_bytes()).await.is_err() {
                let _ = ev.send(Event::Failed {
                    req,
                    error: "write failed".into(),
                });
                return;
            }
            let _ = ev.send(Event::Sent {
                req,
                at: Instant::now(),
            });
        }
    };
    let reader = async move {
        let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
        let mut chunk = vec![0u8; 64 * 1024];
        while let Some(req) = order_rx.recv().await {
            // Head.
            let (status, ctype, length, head_len) = loop {
                let mut headers = [httparse::EMPTY_HEADER; 32];
                let mut resp = httparse::Response::new(&mut headers);
                match resp.parse(&buf) {
                    Ok(httparse::Status::Complete(n)) => {
                        let get = |name: &str| {
                            resp.headers
                                .iter()
                                .find(|h| h.name.eq_ignore_ascii_case(name))
                                .map(|h| String::from_utf8_lossy(h.value).to_string())
                        };
                        let length =
                            get("content-length").and_then(|v| v.trim().parse::<u64>().ok());
                        break (
                            resp.code.unwrap_or(0),
                            get("content-type").unwrap_or_default(),
                            length,
                            n,
                        );
                    }
                    Ok(httparse::Status::Partial) => {}
                    Err(e) => {
                        let _ = events.send(Event::Failed {
                            req,
                            error: format!("bad response: {e}"),
                        });
                        return;
                    }
                }
                match rd.read(&mut chunk).await {
                    Ok(0) | Err(_) => {
                        let _ = events.send(Event::Failed {
                            req,
                            error: "connection closed".into(),
                        });
                        return;
                    }
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            };
            let _ = events.send(Event::Head {
                req,
                at: Instant::now(),
                status,
                content_type: ctype,
            });
            let Some(mut left) = length else {
                let _ = events.send(Event::Failed {
                    req,
                    error: "no Content-Length".into(),
                });
                return;
            };
            buf.drain(..head_len);
            loop {
                let take = (left as usize).min(buf.len());
                if take > 0 {
                    let data = Bytes::copy_from_slice(&buf[..take]);
                    buf.drain(..take);
                    left -= take as u64;
                    let _ = events.send(Event::Data { req, data });
                }
                if left == 0 {
                    break;
                }
                match rd.read(&mut chunk).await {
                    Ok(0) | Err(_) => {
                        let _ = events.send(Event::Failed {
                            req,
                            error: "connection closed mid-body".into(),
                        });
                        return;
                    }
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            let _ = events.send(Event::Done {
                req,
                at: Instant::now(),
                conn,
            });
        }
    };
    tokio::join!(writer, reader);
}

/// One HTTP/2 request: waits for a stream slot (the server's limit), sends, reads.
async fn h2_request(
    mut send: h2::client::SendRequest<Bytes>,
    req: ReqId,
    conn: ConnId,
    host: String,
    path: String,
    protocol: Protocol,
    events: mpsc::UnboundedSender<Event>,
) {
    let fail = |e: String| {
        let _ = events.send(Event::Failed { req, error: e });
    };
    let scheme = if protocol.tls() { "https" } else { "http" };
    let request = match http::Request::get(format!("{scheme}://{host}{path}"))
        .header("user-agent", "spdylab/0.1")
        .body(())
    {
        Ok(r) => r,
        Err(e) => return fail(e.to_string()),
    };
    if let Err(e) = std::future::poll_fn(|cx| send.poll_ready(cx)).await {
        return fail(format!("stream: {e}"));
    }
    let response = match send.send_request(request, true) {
        Ok((response, _)) => response,
        Err(e) => return fail(format!("send: {e}")),
    };
    let _ = events.send(Event::Sent {
        req,
        at: Instant::now(),
    });
    let response = match response.await {
        Ok(r) => r,
        Err(e) => return fail(format!("response: {e}")),
    };
    let ctype = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let _ = events.send(Event::Head {
        req,
        at: Instant::now(),
        status: response.status().as_u16(),
        content_type: ctype,
    });
    let mut body = response.into_body();
    while let Some(chunk) = body.data().await {
        match chunk {
            Ok(data) => {
                let _ = body.flow_control().release_capacity(data.len());
                let _ = events.send(Event::Data { req, data });
            }
            Err(e) => return fail(format!("body: {e}")),
        }
    }
    let _ = events.send(Event::Done {
        req,
        at: Instant::now(),
        conn,
    });
}
