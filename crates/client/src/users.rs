//! Virtual users for load tests (`spdylab load`): a user loads one page — the
//! root, then each resource's children as soon as their parent is complete, as
//! the site's tree says (no parsing: the page is known) — over up to `conns`
//! keep-alive HTTP/1.1 connections per host, or one multiplexed connection per
//! host (h2, h2c, spdy3), and keeps its connections for the next page unless
//! told to reconnect. Errors end the page, never the user: the page counts as an
//! error of its kind and the connections are dropped (the next page reconnects).
//!
//! Every connection may bind to a source address of its own (each user its
//! client address), and is the browser model's (`conn`). A connection the
//! server closes after announcing it (`Connection: close`) is a reconnect, not
//! an error; errors are classified by the variant of `conn::Error`.

use crate::conn::{self, client_tls, Event, RequestSender};
use crate::schedule::{ConnId, ReqId};
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
    /// Its method and body when it is not a GET (an imported page's POST).
    pub upload: Option<crate::replay::Upload>,
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

    /// The kind of a connection's error.
    pub fn of(error: &conn::Error) -> ErrorKind {
        use conn::Error as E;
        use proto::spdy3::client::StreamError;
        use std::io::ErrorKind as Io;
        let io = |e: &std::io::Error| match e.kind() {
            Io::ConnectionRefused => ErrorKind::Refused,
            Io::TimedOut => ErrorKind::Timeout,
            Io::ConnectionReset | Io::ConnectionAborted | Io::BrokenPipe => ErrorKind::Reset,
            _ => ErrorKind::Other,
        };
        match error {
            E::Connect { source, .. } | E::Bind { source, .. } => io(source),
            E::Tls { source, .. } if source.kind() == Io::TimedOut => ErrorKind::Timeout,
            E::ServerName { .. } | E::Tls { .. } | E::Alpn { .. } => ErrorKind::Tls,
            E::H2Handshake(_)
            | E::H2 { .. }
            | E::Write(_)
            | E::Closed
            | E::ClosedMidBody
            | E::SpdySession(_)
            | E::Quic { .. } => ErrorKind::Reset,
            E::Spdy(StreamError::Session(_)) => ErrorKind::Other,
            E::Spdy(_) => ErrorKind::Reset,
            E::Unresolved(_) | E::Request(_) | E::BadResponse(_) => ErrorKind::Other,
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
    sender: Option<RequestSender>,
    /// An HTTP/1.1 request in flight on it.
    busy: Option<usize>,
    /// The page generation it was opened in.
    born: u64,
    /// Requests sent on it so far.
    sent: u32,
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
                Event::Connected { conn, sender, .. } => {
                    if let Some(c) = self.conns.get_mut(&conn) {
                        c.sender = Some(sender);
                    }
                }
                Event::ConnFailed { conn, error } if self.conns.remove(&conn).is_some() => {
                    fail(&mut out, ErrorKind::of(&error), error.to_string());
                }
                // The server closes it after the response now ending (announced):
                // no more requests on it; the next one opens a new connection.
                Event::Closed { conn } => {
                    self.conns.remove(&conn);
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
                        let kind = ErrorKind::of(&error);
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
            let priority = crate::priority::Priority::from_path(&path);
            let upload = self.cfg.page[i].upload.clone();
            let req = base + i;
            let ready = self.conns.iter_mut().find(|(_, c)| {
                c.host == host && c.sender.is_some() && (multiplexed || c.busy.is_none())
            });
            if let Some((&id, c)) = ready {
                // Reused, as a browser says: kept from an earlier page, or an
                // HTTP/1.1 connection idle after an earlier request of this
                // page (the server may have closed it meanwhile: the request
                // goes again, once, and counts as a retry).
                let reused = c.born < self.generation || (!multiplexed && c.sent > 0);
                c.sent += 1;
                match c.sender.as_ref().expect("ready") {
                    RequestSender::H1(tx) => {
                        c.busy = Some(i);
                        let headers = crate::headers::minimal(self.cfg.protocol);
                        let _ = tx.send((req, host, path, headers, upload));
                    }
                    RequestSender::Spdy3(tx) => {
                        let job = conn::spdy3::Job {
                            req,
                            host: host.clone(),
                            path,
                            headers: crate::headers::minimal(self.cfg.protocol),
                            upload,
                            priority,
                        };
                        if tx.send(job).is_err() {
                            // The session has ended: a new one takes it.
                            self.conns.remove(&id);
                            pending.push_front(i);
                            continue;
                        }
                    }
                    RequestSender::H3(send) => {
                        let t = tokio::spawn(conn::h3::request(
                            send.clone(),
                            req,
                            id,
                            host,
                            path,
                            self.tx.clone(),
                            upload,
                        ));
                        c.extra.retain(|h| !h.is_finished());
                        c.extra.push(t);
                    }
                    RequestSender::H2(send) => {
                        let t = tokio::spawn(conn::h2::request(
                            send.clone(),
                            req,
                            id,
                            host,
                            path,
                            self.cfg.protocol,
                            self.tx.clone(),
                            crate::headers::minimal(self.cfg.protocol),
                            upload,
                            priority,
                        ));
                        c.extra.retain(|h| !h.is_finished());
                        c.extra.push(t);
                    }
                }
                reqs[i].conn = Some(id);
                reqs[i].on_reused = reused;
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
                .filter(|c| c.host == host && c.sender.is_none())
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
            Some(ip) => tokio::spawn(conn::open(
                id,
                cfg.protocol,
                SocketAddr::new(*ip, port),
                conn::Dial {
                    bind: self.bind,
                    fast_open: false,
                    backup: None,
                },
                host.to_string(),
                self.tls.clone(),
                self.tx.clone(),
            )),
            None => {
                let _ = self.tx.send(Event::ConnFailed {
                    conn: id,
                    error: conn::Error::Unresolved(host.to_string()),
                });
                tokio::spawn(async {})
            }
        };
        self.conns.insert(
            id,
            UConn {
                host: host.to_string(),
                sender: None,
                busy: None,
                born: self.generation,
                sent: 0,
                task,
                extra: Vec::new(),
            },
        );
    }
}

/// The page of a site as users load it.
pub fn page_of(site: &site::Site) -> Vec<PageResource> {
    site.resources
        .iter()
        .enumerate()
        .map(|(i, r)| PageResource {
            host: r.host.clone(),
            path: r.path.clone(),
            size: r.size as u64,
            parent: r.parent,
            upload: site.recorded(i).filter(|rec| rec.is_upload()).map(|rec| {
                crate::replay::Upload {
                    method: rec.method.clone(),
                    body: rec.request_body_bytes().into(),
                }
            }),
        })
        .collect()
}
