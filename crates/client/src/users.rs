//! Virtual users for load tests (`spdylab load`): a user loads one page — the
//! root, then each resource's children as soon as their parent is complete, as
//! the site's tree says (no parsing: the page is known) — over up to `conns`
//! keep-alive HTTP/1.1 connections per host, or one multiplexed connection per
//! host (h2, h2c, spdy3), and keeps its connections for the next page unless
//! told to reconnect. Errors end the page, never the user: the page counts as an
//! error of its kind and the connections are dropped (the next page reconnects).
//!
//! Every connection may bind to a source address of its own (each user its
//! client address), and reuses the browser model's connection code (`load.rs`):
//! the HTTP/1.1 reader, `h2_request`, and the SPDY/3.1 session.

use super::{client_tls, h1_connection, h2_request, spdy, ConnId, Event, Link, ReqId};
use bytes::Bytes;
use proto::Protocol;
use rustls::pki_types::CertificateDer;
use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// One resource of the page, as a user loads it.
#[derive(Debug, Clone)]
pub struct PageResource {
    pub host: String,
    pub path: String,
    /// Its body, in bytes (a response of another length is an error).
    pub size: u64,
    pub parent: Option<usize>,
}

/// What every user of a load shares.
pub struct UserConfig {
    pub protocol: Protocol,
    /// HTTP/1.1 connections per host (multiplexed protocols: one).
    pub conns: usize,
    /// The page; resource 0 is the root.
    pub page: Vec<PageResource>,
    pub resolve: HashMap<String, IpAddr>,
    pub ca: CertificateDer<'static>,
    pub tls13_only: Option<bool>,
    pub http_port: u16,
    pub https_port: u16,
    /// A page not loaded by then is a timeout error.
    pub page_timeout: Duration,
    /// Reconnect for every page (else connections are kept between pages).
    pub new_connections: bool,
}

impl UserConfig {
    fn children(&self) -> Vec<Vec<usize>> {
        let mut c = vec![Vec::new(); self.page.len()];
        for (i, r) in self.page.iter().enumerate() {
            if let Some(p) = r.parent {
                c[p].push(i);
            }
        }
        c
    }
}

/// Why a page failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorKind {
    /// The server refused the connection (RST to the SYN).
    Refused,
    /// The page was not complete within the page timeout (or a connect timed out).
    Timeout,
    /// A connection was reset or closed under a request.
    Reset,
    /// The TLS handshake failed.
    Tls,
    /// A response other than 200.
    Status(u16),
    /// A response of the wrong length.
    Incomplete,
    Other,
}

impl ErrorKind {
    /// Its name in records: refused, timeout, reset, tls, http_503, incomplete, other.
    pub fn name(self) -> String {
        match self {
            ErrorKind::Refused => "refused".into(),
            ErrorKind::Timeout => "timeout".into(),
            ErrorKind::Reset => "reset".into(),
            ErrorKind::Tls => "tls".into(),
            ErrorKind::Status(s) => format!("http_{s}"),
            ErrorKind::Incomplete => "incomplete".into(),
            ErrorKind::Other => "other".into(),
        }
    }

    /// The kind an error message of the connection code names.
    pub fn classify(error: &str) -> ErrorKind {
        let e = error.to_ascii_lowercase();
        if e.contains("refused") {
            ErrorKind::Refused
        } else if e.contains("timed out") || e.contains("timeout") {
            ErrorKind::Timeout
        } else if e.starts_with("tls") || e.contains("alpn") {
            ErrorKind::Tls
        } else if e.contains("reset")
            || e.contains("closed")
            || e.contains("broken pipe")
            || e.contains("write failed")
            || e.contains("goaway")
            || e.contains("stream")
            || e.contains("handshake")
        {
            ErrorKind::Reset
        } else {
            ErrorKind::Other
        }
    }
}

/// One page load of a user.
#[derive(Debug, Clone)]
pub struct PageOutcome {
    pub started: Instant,
    /// Start to the last resource complete (or to the failure).
    pub time: Duration,
    /// Resources complete (status 200, exact length).
    pub requests: u32,
    /// Body bytes received.
    pub bytes: u64,
    /// Every resource of the page arrived, each with its exact length.
    pub complete: bool,
    pub error: Option<ErrorKind>,
    pub detail: Option<String>,
    /// Connections opened for this page.
    pub connections_opened: u32,
    /// Requests sent again after a kept-alive connection closed under them.
    pub retries: u32,
}

struct UConn {
    host: String,
    link: Option<Link>,
    /// An HTTP/1.1 request in flight on it.
    busy: Option<usize>,
    /// The page generation it was opened in.
    born: u64,
    task: JoinHandle<()>,
    extra: Vec<JoinHandle<()>>,
}

impl Drop for UConn {
    fn drop(&mut self) {
        self.task.abort();
        for t in &self.extra {
            t.abort();
        }
    }
}

/// A virtual user: its source address, its connections, its event channel.
pub struct User {
    cfg: Arc<UserConfig>,
    children: Arc<Vec<Vec<usize>>>,
    bind: Option<IpAddr>,
    tls: Arc<rustls::ClientConfig>,
    conns: HashMap<ConnId, UConn>,
    next_conn: ConnId,
    generation: u64,
    tx: mpsc::UnboundedSender<Event>,
    rx: mpsc::UnboundedReceiver<Event>,
}

#[derive(Default, Clone)]
struct ReqState {
    status: u16,
    bytes: u64,
    conn: Option<ConnId>,
    /// Sent on a connection kept from an earlier page.
    on_reused: bool,
    retried: bool,
    /// Answered, or failed for good.
    finished: bool,
}

impl User {
    /// A user whose sockets bind to `bind` (None: the namespace's own address).
    pub fn new(cfg: Arc<UserConfig>, bind: Option<IpAddr>) -> User {
        let (tx, rx) = mpsc::unbounded_channel();
        let tls = client_tls(cfg.protocol, cfg.ca.clone(), cfg.tls13_only);
        User {
            children: Arc::new(cfg.children()),
            cfg,
            bind,
            tls,
            conns: HashMap::new(),
            next_conn: 0,
            generation: 0,
            tx,
            rx,
        }
    }

    /// Connections held now.
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// Drops every connection.
    pub fn disconnect(&mut self) {
        self.conns.clear();
    }

    /// Loads the page once.
    pub async fn load_page(&mut self) -> PageOutcome {
        if self.cfg.new_connections {
            self.disconnect();
        }
        self.generation += 1;
        // Events of earlier pages' requests are ignored below (their ids are
        // of another generation); a connection's events are kept, since a
        // connection opened late in the last page may be ready only now.
        let started = Instant::now();
        let deadline = tokio::time::Instant::now() + self.cfg.page_timeout;
        let n = self.cfg.page.len();
        let mut out = PageOutcome {
            started,
            time: Duration::ZERO,
            requests: 0,
            bytes: 0,
            complete: false,
            error: None,
            detail: None,
            connections_opened: 0,
            retries: 0,
        };
        let mut reqs = vec![ReqState::default(); n];
        let mut pending: VecDeque<usize> = VecDeque::from([0]);
        let mut done = 0usize;
        let base = (self.generation as usize) * n;
        let fail = |out: &mut PageOutcome, kind: ErrorKind, detail: String| {
            out.error = Some(kind);
            out.detail = Some(detail);
        };
        while done < n && out.error.is_none() {
            self.dispatch(&mut pending, &mut reqs, base, &mut out);
            let ev = match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(ev)) => ev,
                Ok(None) => break,
                Err(_) => {
                    fail(
                        &mut out,
                        ErrorKind::Timeout,
                        format!("page not complete after {:?}", self.cfg.page_timeout),
                    );
                    break;
                }
            };
            let own = |req: ReqId| req >= base && req < base + n;
            match ev {
                Event::Connected { conn, link, .. } => {
                    if let Some(c) = self.conns.get_mut(&conn) {
                        c.link = Some(link);
                    }
                }
                Event::ConnFailed { conn, error } if self.conns.remove(&conn).is_some() => {
                    fail(&mut out, ErrorKind::classify(&error), error);
                }
                Event::Head { req, status, .. } if own(req) => reqs[req - base].status = status,
                Event::Data { req, data } if own(req) => {
                    reqs[req - base].bytes += data.len() as u64;
                    out.bytes += data.len() as u64;
                }
                Event::Done { req, .. } if own(req) => {
                    let i = req - base;
                    reqs[i].finished = true;
                    if let Some(c) = reqs[i].conn.and_then(|c| self.conns.get_mut(&c)) {
                        c.busy = None;
                    }
                    let r = &reqs[i];
                    if r.status != 200 {
                        fail(
                            &mut out,
                            ErrorKind::Status(r.status),
                            format!("{}: status {}", self.cfg.page[i].path, r.status),
                        );
                    } else if r.bytes != self.cfg.page[i].size {
                        fail(
                            &mut out,
                            ErrorKind::Incomplete,
                            format!(
                                "{}: {} bytes of {}",
                                self.cfg.page[i].path, r.bytes, self.cfg.page[i].size
                            ),
                        );
                    } else {
                        done += 1;
                        out.requests += 1;
                        pending.extend(self.children[i].iter().copied());
                    }
                }
                Event::Failed { req, error } if own(req) => {
                    let i = req - base;
                    let conn = reqs[i].conn;
                    // A connection kept from an earlier page may have been
                    // closed by the server meanwhile: send again, once, on a new one.
                    let reused = reqs[i].on_reused;
                    let mut dropped: Vec<ConnId> = conn.into_iter().collect();
                    if reused {
                        // Its siblings from earlier pages were most likely
                        // closed at the same time (the server's keep-alive
                        // timeout): the request goes again on a fresh connection.
                        let generation = self.generation;
                        dropped.extend(
                            self.conns
                                .iter()
                                .filter(|(_, c)| c.born != generation && c.busy.is_none())
                                .map(|(id, _)| *id),
                        );
                    }
                    for c in &dropped {
                        self.conns.remove(c);
                    }
                    // Dropping a connection aborts what it carried (h2, spdy3
                    // streams): this page's other requests on it go again, once.
                    for (j, r) in reqs.iter_mut().enumerate() {
                        if j != i && !r.finished && r.conn.is_some_and(|c| dropped.contains(&c)) {
                            if r.retried {
                                r.finished = true;
                                fail(
                                    &mut out,
                                    ErrorKind::Reset,
                                    format!(
                                        "{}: its connection failed twice",
                                        self.cfg.page[j].path
                                    ),
                                );
                            } else {
                                *r = ReqState {
                                    retried: true,
                                    ..ReqState::default()
                                };
                                out.retries += 1;
                                pending.push_front(j);
                            }
                        }
                    }
                    if (reused || conn.is_none()) && !reqs[i].retried && reqs[i].bytes == 0 {
                        reqs[i].retried = true;
                        reqs[i].conn = None;
                        out.retries += 1;
                        pending.push_front(i);
                    } else {
                        reqs[i].finished = true;
                        let kind = ErrorKind::classify(&error);
                        fail(
                            &mut out,
                            kind,
                            format!("{}: {error}", self.cfg.page[i].path),
                        );
                    }
                }
                _ => {}
            }
        }
        out.time = started.elapsed();
        if out.error.is_some() || done < n {
            if out.error.is_none() {
                out.error = Some(ErrorKind::Other);
                out.detail = Some("the user's event channel closed".into());
            }
            self.disconnect();
        } else {
            out.complete = true;
        }
        out
    }

    /// Sends what can be sent; opens connections where needed.
    fn dispatch(
        &mut self,
        pending: &mut VecDeque<usize>,
        reqs: &mut [ReqState],
        base: usize,
        out: &mut PageOutcome,
    ) {
        let multiplexed = self.cfg.protocol.multiplexed();
        let mut waiting: VecDeque<usize> = VecDeque::new();
        while let Some(i) = pending.pop_front() {
            let host = self.cfg.page[i].host.clone();
            let path = self.cfg.page[i].path.clone();
            let req = base + i;
            let ready = self.conns.iter_mut().find(|(_, c)| {
                c.host == host && c.link.is_some() && (multiplexed || c.busy.is_none())
            });
            if let Some((&id, c)) = ready {
                let born = c.born;
                match c.link.as_ref().expect("ready") {
                    Link::H1(tx) => {
                        c.busy = Some(i);
                        let _ = tx.send((req, host, path));
                    }
                    Link::Spdy(tx) => {
                        let job = spdy::Job {
                            req,
                            host: host.clone(),
                            path,
                        };
                        if tx.send(job).is_err() {
                            // The session has ended: a new one takes it.
                            self.conns.remove(&id);
                            pending.push_front(i);
                            continue;
                        }
                    }
                    Link::H2(send) => {
                        let t = tokio::spawn(h2_request(
                            send.clone(),
                            req,
                            id,
                            host,
                            path,
                            self.cfg.protocol,
                            self.tx.clone(),
                        ));
                        c.extra.retain(|h| !h.is_finished());
                        c.extra.push(t);
                    }
                }
                reqs[i].conn = Some(id);
                reqs[i].on_reused = born < self.generation;
                continue;
            }
            let have = self.conns.values().filter(|c| c.host == host).count();
            let limit = if multiplexed {
                1
            } else {
                self.cfg.conns.max(1)
            };
            // Connections being opened count as taken by the waiting requests.
            let connecting = self
                .conns
                .values()
                .filter(|c| c.host == host && c.link.is_none())
                .count();
            let waiting_here = waiting
                .iter()
                .filter(|&&w| self.cfg.page[w].host == host)
                .count();
            if have < limit && (multiplexed && have == 0 || connecting <= waiting_here) {
                self.open(&host);
                out.connections_opened += 1;
            }
            waiting.push_back(i);
        }
        *pending = waiting;
    }

    fn open(&mut self, host: &str) {
        let id = self.next_conn;
        self.next_conn += 1;
        let cfg = &self.cfg;
        let port = if cfg.protocol.tls() {
            cfg.https_port
        } else {
            cfg.http_port
        };
        let task = match cfg.resolve.get(host) {
            Some(ip) => tokio::spawn(open(
                id,
                cfg.protocol,
                SocketAddr::new(*ip, port),
                self.bind,
                host.to_string(),
                self.tls.clone(),
                self.tx.clone(),
            )),
            None => {
                let _ = self.tx.send(Event::ConnFailed {
                    conn: id,
                    error: format!("{host} is not in the hosts map"),
                });
                tokio::spawn(async {})
            }
        };
        self.conns.insert(
            id,
            UConn {
                host: host.to_string(),
                link: None,
                busy: None,
                born: self.generation,
                task,
                extra: Vec::new(),
            },
        );
    }
}

/// A connection of a user: TCP (from `bind`), TLS if the protocol wants it,
/// then HTTP/1.1, HTTP/2 or SPDY/3.1 until aborted or closed.
async fn open(
    conn: ConnId,
    protocol: Protocol,
    addr: SocketAddr,
    bind: Option<IpAddr>,
    sni: String,
    tls: Arc<rustls::ClientConfig>,
    events: mpsc::UnboundedSender<Event>,
) {
    let fail = |e: String| {
        let _ = events.send(Event::ConnFailed { conn, error: e });
    };
    let (io, _) = match super::dial(addr, bind, protocol, &sni, tls).await {
        Ok(d) => d,
        Err(e) => return fail(e),
    };
    let connected = |link: Link| Event::Connected {
        conn,
        at: Instant::now(),
        tls_ms: -1.0,
        link,
    };
    if protocol == Protocol::Spdy3 {
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let _ = events.send(connected(Link::Spdy(jobs_tx)));
        spdy::connection(conn, io, jobs_rx, events, spdy::CHROME_RECEIVE_WINDOW).await;
    } else if protocol.multiplexed() {
        let mut builder = h2::client::Builder::new();
        builder
            .initial_window_size(6 * 1024 * 1024)
            .initial_connection_window_size(15 * 1024 * 1024);
        match builder.handshake::<_, Bytes>(io).await {
            Ok((send, connection)) => {
                let _ = events.send(connected(Link::H2(send)));
                // Driven here: aborting this task closes the connection.
                let _ = connection.await;
            }
            Err(e) => fail(format!("HTTP/2 handshake: {e}")),
        }
    } else {
        let (jobs_tx, jobs_rx) = mpsc::unbounded_channel();
        let _ = events.send(connected(Link::H1(jobs_tx)));
        h1_connection(conn, io, jobs_rx, events).await;
    }
}

/// The page of a site as users load it.
pub fn page_of(site: &site::Site) -> Vec<PageResource> {
    site.resources
        .iter()
        .map(|r| PageResource {
            host: r.host.clone(),
            path: r.path.clone(),
            size: r.size as u64,
            parent: r.parent,
        })
        .collect()
}
