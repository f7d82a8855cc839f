//! One page load over real sockets: the event loop that joins discovery, the
//! scheduler and the connections, and records each resource's timings. Every
//! load starts cold: new connections, full TLS handshakes (unless the config
//! shares a TLS session store across loads: `--tls-resume`), nothing cached.
//! Requests carry the config's header set (`headers`), with the referer of
//! the document or style sheet that named them; an imported page's requests
//! their recorded method and body (`replay::Upload`), never pipelined.
//! With browser costs (`render`), discovery goes through the renderer's main
//! thread, woken at its virtual times; without, as bytes arrive. A scripted
//! page (a [`Script`]: the prioritization test, `crate::priority_test`) is
//! not discovered from its bytes: the script says what to request after each
//! completion, and at which priority.
//!
//! Every request carries Chrome's priority signals on h2, SPDY and h3
//! (`conn`) for its `Priority`: Blink's, from the renderer, or, without one,
//! what its path suggests (`Priority::from_path`; the page's own document
//! HIGHEST).
//!
//! 103 Early Hints, as Chromium (`crate::hints`): the document's first 103,
//! over h2 and h3 only, starts its `rel=preload`s at once (at the priority
//! of their `as`, outside Blink's scheduler: they take no tight-mode place)
//! and opens its `rel=preconnect`s; the page naming the same URL later uses
//! the request already made (matched by URL). Server push (h2, SPDY/3.1), as
//! Chrome 2014–2021: a push for a host of the connection's address is kept
//! unclaimed until the page asks for its URL, which then takes the push (the
//! request never goes out; its bytes are handed over as they came); a push
//! of a URL the page already requested (or has), of one pushed before, or
//! for a host of another address is cancelled (RST_STREAM CANCEL). Pushes
//! the page never asks for do not hold its end. What hints and pushes did is
//! a [`HintsAndPushes`] ([`load_page_full`]); a load without either is the
//! same, event for event, as before.

use crate::cache::{self, CacheHeaders, CacheUse, Decision, HttpCache, Stored};
use crate::conn::{self, client_tls_resuming, Event, PushId, RequestSender};
use crate::discover::{css_urls, script_injections, Found, HtmlScanner};
use crate::headers::RequestHeaders;
use crate::hints::{self, Hint};
use crate::paint::{Paint, PaintModel};
use crate::priority::Priority;
use crate::render::{BrowserCost, Renderer};
use crate::replay::{ReplayTree, Upload};
use crate::schedule::{Action, Class, ConnId, Join, Policy, Pool, ReqId, RequestLimits, Scheduler};
use bytes::Bytes;
use proto::Protocol;
use rustls::pki_types::CertificateDer;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::mpsc;

/// How to load a page.
#[derive(Clone)]
pub struct PageConfig {
    pub protocol: Protocol,
    /// What a Trial sets (`lab::trial::Trial::model_knobs`), handed down whole.
    pub knobs: Knobs,
    /// The TLS versions offered: only 1.3 (Some(true)), only 1.2
    /// (Some(false)), or either — the server's (a Trial holds them once, in
    /// `server::Knobs::tls`: `lab::trial::Trial::tls13_only`).
    pub tls13_only: Option<bool>,
    /// The page: host and path.
    pub root: (String, String),
    /// Where each host is (the testbed's hosts file, as a map).
    pub resolve: HashMap<String, IpAddr>,
    /// The only certificate authority trusted.
    pub ca: CertificateDer<'static>,
    pub http_port: u16,
    pub https_port: u16,
    /// The whole load must end within this.
    pub timeout: Duration,
    /// A TLS configuration kept across loads with its session store, so that
    /// later loads resume the sessions of earlier ones (`--tls-resume`; make
    /// it with `conn::client_tls_resuming` — rustls resumes only with the very
    /// config's verifier). None: a fresh config, every handshake full.
    pub tls_sessions: Option<Arc<rustls::ClientConfig>>,
    /// An imported page: discover from its tree, not from the bytes.
    pub replay: Option<Arc<ReplayTree>>,
    /// The HTTP cache this load reads and fills (`cache`): the repeat view
    /// gives its two loads one. None: nothing cached, nothing kept.
    pub cache: Option<SharedCache>,
}

/// An HTTP cache shared by the loads of one client.
pub type SharedCache = Arc<std::sync::Mutex<HttpCache>>;

/// What a load reused of an earlier load by the same client (the repeat
/// view, docs/repeat-view.md), beside its `PageResult`: how each entry was
/// got, and QUIC 0-RTT per connection. (TLS resumption is
/// `PageResult::tls_resumed`.)
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Reuse {
    /// How each of the result's entries was got, in their order.
    pub cache: Vec<CacheUse>,
    /// Body bytes the cache gave (fresh hits and 304s).
    pub cached_bytes: u64,
    /// Connections that sent requests before their handshake ended (QUIC
    /// 0-RTT on h3, TLS 1.3 early data on TCP), and those whose early data
    /// the server accepted.
    pub zero_rtt_sent: usize,
    pub zero_rtt_accepted: usize,
}

impl Reuse {
    /// Resources used from the cache without a request.
    pub fn cache_hits(&self) -> usize {
        self.cache.iter().filter(|c| **c == CacheUse::Hit).count()
    }

    /// Conditional requests answered 304.
    pub fn not_modified(&self) -> usize {
        self.cache
            .iter()
            .filter(|c| **c == CacheUse::Revalidated)
            .count()
    }
}

/// The model client's knobs: the part of a Trial (the experiment's `knobs`
/// section, `results::experiment::FIELDS`) that the model honours. A Trial
/// holds one and hands it down whole, so a new model knob is a field here and
/// its use, with no copy in between. `Default` is FIELDS' defaults (a unit
/// test in `lab::trial` checks that they agree).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Knobs {
    /// HTTP/1.1 connections per host.
    pub conns_per_host: usize,
    /// Requests in flight per connection when pipelining.
    pub depth: usize,
    /// The request headers (`--headers`, `--cookie-bytes`).
    pub headers: RequestHeaders,
    /// SPDY/HTTP/2 sessions per host name or per server address.
    pub pool: Pool,
    /// The browser's CPU costs and script order (`render`); NONE: the pure
    /// network model. A slower CPU (`--cpu-slowdown`, Chromium's knob) comes
    /// as costs already scaled (`BrowserCost::slowed`).
    pub browser_cost: BrowserCost,
    /// The network service's limits on delayable requests (`schedule`).
    pub request_limits: RequestLimits,
    /// TCP Fast Open on every TCP connection (`conn::dial_early`).
    pub tcp_fastopen: bool,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            conns_per_host: 6,
            depth: 8,
            headers: RequestHeaders::default(),
            pool: Pool::default(),
            browser_cost: BrowserCost::default(),
            request_limits: RequestLimits::default(),
            tcp_fastopen: false,
        }
    }
}

/// Why a page did not load (its words are `PageResult::error`).
#[derive(Debug)]
pub enum Error {
    /// A host not in the resolve map.
    Unresolved(String),
    /// A connection could not be opened.
    Connection { conn: ConnId, error: conn::Error },
    /// A request failed.
    Request {
        host: String,
        path: String,
        error: conn::Error,
    },
    /// Every connection ended with requests still to go.
    ConnectionsEnded,
    /// The scheduler chose a connection that has no sender (a bug).
    Unconnected,
    /// Not loaded within the timeout.
    Timeout(Duration),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Unresolved(host) => write!(f, "cannot resolve {host}"),
            Error::Connection { conn, error } => write!(f, "connection {conn}: {error}"),
            Error::Request { host, path, error } => write!(f, "{host}{path}: {error}"),
            Error::ConnectionsEnded => f.write_str("all connections ended"),
            Error::Unconnected => f.write_str("a request was scheduled on a closed connection"),
            Error::Timeout(t) => write!(f, "the page did not load within {t:?}"),
        }
    }
}

impl std::error::Error for Error {}

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
    /// The request's method (GET but for an imported page's POSTs and the like).
    pub method: String,
    pub host: String,
    pub path: String,
    /// The request body's length (0: none).
    pub request_body_bytes: u64,
    /// When it was discovered, from navigation start, in ms.
    pub started_ms: f64,
    /// Discovery to last byte, in ms (the sum of the phases).
    pub time_ms: f64,
    pub status: u16,
    pub content_type: String,
    pub body_bytes: u64,
    pub connection: ConnId,
    pub timings: Timings,
    /// Taken from a server push (HAR `_was_pushed`, as Chrome wrote it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub pushed: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct PageResult {
    pub protocol: Protocol,
    /// Navigation start to the last resource complete, in ms.
    pub plt_ms: f64,
    pub connections: usize,
    pub entries: Vec<Entry>,
    pub error: Option<String>,
    /// TLS handshakes that resumed an earlier session (model client only).
    pub tls_resumed: usize,
    /// When navigation started (PLT's zero): the model's at its first step,
    /// Chromium's at the document request's DevTools timestamp (after the
    /// tab is opened and its domains enabled). None where unknown (a page
    /// read back from a HAR). The probe puts the page's window on the link's
    /// clock from it: a caller's own clock reading before the call can be
    /// seconds early on a loaded machine, and would cut the page's last
    /// connections out of its window.
    #[serde(skip)]
    pub navigation_start: Option<Instant>,
    /// What the user saw: TTFB, first and largest contentful paint, Speed
    /// Index (Chromium's measured; the model's estimated by `paint`).
    pub paint: Option<Paint>,
}

#[derive(Default)]
struct Req {
    host: String,
    path: String,
    /// The scheduler's pool it was put in when found.
    pool: String,
    /// A cross-site frame's document (`Page::cross_site_frames`).
    cross_site_frame: bool,
    /// Its method and body, when it is not a GET (imported pages).
    upload: Option<Upload>,
    /// Sent again after a reused HTTP/1.1 connection closed before answering.
    retried: bool,
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
    /// The URL of the document or style sheet that named it (None: the page).
    referer: Option<String>,
    /// Its priority (set when discovered).
    priority: Option<Priority>,
    /// Taken from a push (its index in `State::pushes`).
    pushed: Option<usize>,
    /// How it was got: over the network, a fresh cache hit or a 304.
    cache_use: CacheUse,
    /// A conditional request's headers (the cache's validators).
    validators: Vec<(String, String)>,
    /// Its response's headers a cache reads.
    cache_headers: CacheHeaders,
    /// Its whole body, kept for the cache (only when there is one).
    kept: Vec<u8>,
}

/// A pushed response, kept until the page asks for it.
struct Push {
    /// Its connection (the entry's, once claimed).
    conn: ConnId,
    head: Option<(Instant, u16, String)>,
    chunks: Vec<Bytes>,
    bytes: u64,
    done: Option<Instant>,
    failed: bool,
    /// The request that took it, and the connection the scheduler gave it.
    claimed: Option<(ReqId, ConnId)>,
}

/// What 103 Early Hints and server pushes did in one load (the model's;
/// all empty for a load with neither). A HAR marks the entries of
/// `pushed` as Chrome's did (`_was_pushed: 1`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct HintsAndPushes {
    /// The document's first 103 was acted on (h2 and h3 only).
    pub early_hints: bool,
    /// Requests its `rel=preload`s started: host and path, in order.
    pub hinted: Vec<(String, String)>,
    /// Hosts its `rel=preconnect`s named (a connection opened for each,
    /// unless one it may share is up or opening).
    pub preconnected: Vec<String>,
    /// Pushes the server promised.
    pub promised: usize,
    /// Pushed responses the page used: host and path, in order.
    pub pushed: Vec<(String, String)>,
    /// Body bytes of every pushed response received, used or not.
    pub pushed_bytes: u64,
    /// Pushes cancelled (RST_STREAM CANCEL): the page had asked for the URL
    /// already, it was pushed before, or its host is of another address.
    pub cancelled: usize,
    /// Pushes never used: not asked for by the page's end.
    pub unclaimed: usize,
    /// Body bytes of pushes cancelled or never used.
    pub wasted_bytes: u64,
}

impl HintsAndPushes {
    /// Whether `entry` was taken from a push (HAR `_was_pushed`).
    pub fn was_pushed(&self, entry: &Entry) -> bool {
        self.pushed
            .iter()
            .any(|(h, p)| *h == entry.host && *p == entry.path)
    }

    /// Whether `entry` was started by a 103's preload.
    pub fn was_hinted(&self, entry: &Entry) -> bool {
        self.hinted
            .iter()
            .any(|(h, p)| *h == entry.host && *p == entry.path)
    }
}

struct Conn {
    /// Its pool (its server address and whether the page's host opened it
    /// are the scheduler's, for `--pool chromium`).
    pool: String,
    opened: Instant,
    ready: Option<Instant>,
    tls_ms: f64,
    first_req: Option<ReqId>,
    sender: Option<RequestSender>,
    resumed: bool,
    /// QUIC 0-RTT: sent, and the server's answer once known.
    zero_rtt: Option<Option<bool>>,
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Loads the page, then closes its connections; never panics on network
/// trouble: errors are in the result.
pub async fn load_page(cfg: &PageConfig) -> PageResult {
    let (result, connections) = load_page_keeping_connections(cfg).await;
    connections.close().await;
    result
}

/// Loads the page and hands back its still-open connections, for a caller
/// that ends its measurement before closing them (the probe's time on wire
/// must not include the close, and the next page must not share the link
/// with this one's close_notify and FIN).
pub async fn load_page_keeping_connections(cfg: &PageConfig) -> (PageResult, OpenConnections) {
    let (result, _, connections) = load(cfg, None).await;
    (result, connections)
}

/// Loads the page as [`load_page_keeping_connections`], also telling what
/// 103 Early Hints and server pushes did.
pub async fn load_page_full(cfg: &PageConfig) -> (PageResult, HintsAndPushes, OpenConnections) {
    load(cfg, None).await
}

/// A page whose requests a script makes, instead of discovery from its
/// bytes: after the page's own document (requested first, as a page's),
/// each completion is told, and what the script then asks for is requested
/// at the priority it gives (Blink's tight mode is over once the document is
/// complete). Sans-I/O.
pub trait Script: Send {
    /// The response of `host` `path` is complete (the document's too).
    fn completed(&mut self, host: &str, path: &str);
    /// The next request to make now, with its priority (None: none now).
    fn next(&mut self) -> Option<(Found, Priority)>;
    /// Whether it has nothing more to ask for.
    fn finished(&self) -> bool;
}

/// Loads `cfg`'s page as `script` says (browser costs not modelled: the
/// script stands for the page's own), keeping its connections as
/// [`load_page_keeping_connections`].
pub async fn load_scripted_keeping_connections(
    cfg: &PageConfig,
    script: Box<dyn Script>,
) -> (PageResult, OpenConnections) {
    let (result, _, connections) = load(cfg, Some(script)).await;
    (result, connections)
}

/// Loads the page as [`load_page_keeping_connections`], also telling what
/// it reused of an earlier load by the same client (`PageConfig::cache`,
/// `tls_sessions`): the repeat view's facts.
pub async fn load_page_reusing(cfg: &PageConfig) -> (PageResult, Reuse, OpenConnections) {
    let (result, _, connections, reuse) = load_with_reuse(cfg, None).await;
    (result, reuse, connections)
}

async fn load(
    cfg: &PageConfig,
    script: Option<Box<dyn Script>>,
) -> (PageResult, HintsAndPushes, OpenConnections) {
    let (result, pushes, connections, _) = load_with_reuse(cfg, script).await;
    (result, pushes, connections)
}

async fn load_with_reuse(
    cfg: &PageConfig,
    script: Option<Box<dyn Script>>,
) -> (PageResult, HintsAndPushes, OpenConnections, Reuse) {
    // The clock starts at the document's request, as Chromium's; a first
    // view (nothing cached) opening its connections as Chromium's navigation
    // does (it preconnects) dials the page's host `lead` before
    // (`BrowserCost::lead`: measured on first views only).
    let lead = match !has_loaded_before(cfg) && cfg.knobs.pool == Pool::Chromium {
        true => cfg.knobs.browser_cost.lead,
        false => Duration::ZERO,
    };
    let start = Instant::now() + lead;
    let mut state = State::new(cfg, start);
    state.script = script;
    let outcome = tokio::time::timeout(cfg.timeout, state.run()).await;
    let error = match outcome {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e.to_string()),
        Err(_) => Some(Error::Timeout(cfg.timeout).to_string()),
    };
    let tasks = std::mem::take(&mut state.tasks);
    let pushes = state.hints_and_pushes();
    let reuse = state.reuse();
    (
        state.result(error),
        pushes,
        OpenConnections { tasks },
        reuse,
    )
}

/// A loaded page's connection tasks (and any request task still running).
pub struct OpenConnections {
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl OpenConnections {
    /// How long a connection may take to close cleanly (GOAWAY, close_notify,
    /// FIN) before its task is aborted.
    const GRACE: Duration = Duration::from_secs(2);

    /// Closes every connection: their request senders are already dropped
    /// with the page's state, so each connection task ends on its own; those
    /// that do not within `GRACE` are aborted.
    pub async fn close(self) {
        let deadline = tokio::time::Instant::now() + Self::GRACE;
        for task in self.tasks {
            let abort = task.abort_handle();
            if tokio::time::timeout_at(deadline, task).await.is_err() {
                abort.abort();
            }
        }
    }
}

struct State<'a> {
    cfg: &'a PageConfig,
    start: Instant,
    /// The wall clock at `start`: the cache's times are the server's `Date`'s.
    wall: SystemTime,
    sched: Scheduler,
    reqs: Vec<Req>,
    seen: HashMap<(String, String), ReqId>,
    /// Cross-site frames' documents the renderer found: Chromium requests
    /// them in their own network partition (a NetworkAnonymizationKey with
    /// the cross-site bit), so they share no connection with the page's
    /// own requests (http-archive-2014: Chromium's three frames came on
    /// three new h2 connections, one new QUIC session, not the page's).
    cross_site_frames: HashSet<(String, String)>,
    conns: Vec<Conn>,
    tx: mpsc::UnboundedSender<Event>,
    rx: mpsc::UnboundedReceiver<Event>,
    tls: Arc<rustls::ClientConfig>,
    /// The browser's main thread, when it has costs.
    render: Option<Renderer>,
    /// What the user would see: FCP, LCP, Speed Index (estimated).
    paint: PaintModel,
    /// The connection and request tasks spawned, closed after the page.
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// A scripted page's script (then nothing is discovered from bytes).
    script: Option<Box<dyn Script>>,
    /// What hints and pushes did so far.
    extras: HintsAndPushes,
    /// The host each preconnected pool was opened for.
    preconnects: HashMap<String, String>,
    /// Sockets opened per host (Chromium's socket pool group), shared with
    /// the connections' backup connect jobs (`conn::Backup`).
    group_sockets: HashMap<String, Arc<std::sync::atomic::AtomicUsize>>,
    /// Pushes kept, by id and by URL; those cancelled.
    pushes: Vec<Push>,
    push_ids: HashMap<PushId, usize>,
    push_urls: HashMap<(String, String), usize>,
    cancelled: HashSet<PushId>,
}

/// Whether the client has loaded from the page's hosts before: its cache
/// holds an earlier load's responses (the repeat view).
fn has_loaded_before(cfg: &PageConfig) -> bool {
    cfg.cache
        .as_ref()
        .is_some_and(|c| !c.lock().unwrap_or_else(|e| e.into_inner()).is_empty())
}

/// A seed for the model's choices that Chromium leaves to chance (the order
/// in which a new session takes its waiting requests): the clock's
/// nanoseconds, different for every load.
fn load_seed() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

impl<'a> State<'a> {
    fn new(cfg: &'a PageConfig, start: Instant) -> State<'a> {
        let policy = if cfg.protocol.multiplexed() {
            Policy::Multiplexed
        } else {
            Policy::PerHost {
                conns: cfg.knobs.conns_per_host,
                depth: if cfg.protocol.pipelined() {
                    cfg.knobs.depth
                } else {
                    1
                },
            }
        };
        let sched = Scheduler::with_limits(policy, cfg.knobs.request_limits);
        let sched = match cfg.protocol == Protocol::H3 && cfg.knobs.pool == Pool::Chromium {
            true => sched.pool_at_handshake(),
            false => sched,
        };
        // A new order per load, as Chromium's heap gives one: over h2 and
        // SPDY. Its QUIC sessions take their waiting requests in the order
        // they came (a same-host pair of stylesheets or scripts that waited
        // together was served in found order in 98 % of 1 548 pairs over
        // h3, 95 % of 1 612 over h2 — the h2 pairs mostly of different
        // priorities; the model drawing an order over h3 gave 79 %:
        // docs/crosscheck.md, "The order a QUIC session takes its requests").
        let sched = match cfg.knobs.pool == Pool::Chromium && cfg.protocol != Protocol::H3 {
            true => sched.resume_unordered(load_seed()),
            false => sched,
        };
        // Over h2 and SPDY, a socket per waiting request until the host's
        // session is up — unless the client has loaded from the hosts
        // before (the repeat view: its cache holds the first load's
        // responses), when Chromium's `HttpServerProperties` know they
        // speak HTTP/2 and its jobs wait for the session instead.
        let known = has_loaded_before(cfg);
        let sched = match cfg.knobs.pool == Pool::Chromium
            && cfg.protocol.multiplexed()
            && cfg.protocol.tls()
            && cfg.protocol != Protocol::H3
            && !known
        {
            true => sched.connect_per_request(),
            false => sched,
        };
        // The repeat view's browser has shown a page: its first frame is
        // not held for its start-up.
        let paint = PaintModel::new(&cfg.root.0, &cfg.root.1, cfg.knobs.browser_cost);
        let paint = if known { paint.warm() } else { paint };
        let (tx, rx) = mpsc::unbounded_channel();
        State {
            cfg,
            start,
            // The wall clock at `start` (after now by the navigation's lead).
            wall: SystemTime::now() + start.saturating_duration_since(Instant::now()),
            sched,
            reqs: Vec::new(),
            seen: HashMap::new(),
            cross_site_frames: HashSet::new(),
            conns: Vec::new(),
            tx,
            rx,
            tls: tls_config(cfg),
            render: None,
            paint,
            tasks: Vec::new(),
            script: None,
            extras: HintsAndPushes::default(),
            preconnects: HashMap::new(),
            group_sockets: HashMap::new(),
            pushes: Vec::new(),
            push_ids: HashMap::new(),
            push_urls: HashMap::new(),
            cancelled: HashSet::new(),
        }
    }

    /// What hints and pushes did, the pushes never used counted.
    fn hints_and_pushes(&self) -> HintsAndPushes {
        let mut x = self.extras.clone();
        for p in self.pushes.iter().filter(|p| p.claimed.is_none()) {
            x.unclaimed += 1;
            x.wasted_bytes += p.bytes;
        }
        x
    }

    /// The document's 103 (its first; h2 and h3 only, as Chromium): its
    /// preloads requested now, outside Blink's scheduler, its preconnects
    /// opened.
    fn early_hints(&mut self, req: ReqId, links: &[String]) -> Result<(), Error> {
        let over = matches!(
            self.cfg.protocol,
            Protocol::H2 | Protocol::H2c | Protocol::H3
        );
        if req != 0 || !over || self.extras.early_hints {
            return Ok(());
        }
        self.extras.early_hints = true;
        let referer = self.url_of(0);
        for hint in hints::parse(&self.reqs[0].host, links) {
            match hint {
                Hint::Preload { found, priority } => {
                    let key = (found.host.clone(), found.path.clone());
                    if self.seen.contains_key(&key) || !self.cfg.resolve.contains_key(&found.host) {
                        continue;
                    }
                    let id = self.reqs.len();
                    self.seen.insert(key.clone(), id);
                    let pool = self.pool_of(&found.host, false)?;
                    self.reqs.push(Req {
                        host: found.host,
                        path: found.path,
                        pool: pool.clone(),
                        discovered: Some(Instant::now()),
                        referer: Some(referer.clone()),
                        priority: Some(priority),
                        ..Default::default()
                    });
                    self.extras.hinted.push(key);
                    self.sched.discovered(id, &pool);
                }
                Hint::Preconnect { host } => {
                    if !self.cfg.resolve.contains_key(&host) {
                        continue;
                    }
                    let pool = self.pool_of(&host, false)?;
                    self.preconnects.entry(pool.clone()).or_insert(host.clone());
                    self.extras.preconnected.push(host);
                    self.sched.preconnect(&pool);
                }
            }
        }
        Ok(())
    }

    /// A push promised on `assoc`'s stream: kept until the page asks for
    /// it, or cancelled (see the module doc).
    fn promised(
        &mut self,
        assoc: ReqId,
        push: PushId,
        host: String,
        path: String,
        handle: conn::PushHandle,
    ) {
        self.extras.promised += 1;
        let key = (host, path);
        let addr = |h: &str| self.cfg.resolve.get(h).copied();
        let same_address = self
            .reqs
            .get(assoc)
            .is_some_and(|r| addr(&key.0).is_some() && addr(&key.0) == addr(&r.host));
        let asked = self.seen.get(&key).is_some_and(|&id| {
            let r = &self.reqs[id];
            r.assigned.is_some() || r.done.is_some()
        });
        if !same_address || asked || self.push_urls.contains_key(&key) {
            handle.cancel();
            self.extras.cancelled += 1;
            self.cancelled.insert(push);
            return;
        }
        if let Some(task) = handle.keep() {
            self.tasks.push(task);
        }
        let i = self.pushes.len();
        self.pushes.push(Push {
            conn: push.0,
            head: None,
            chunks: Vec::new(),
            bytes: 0,
            done: None,
            failed: false,
            claimed: None,
        });
        self.push_ids.insert(push, i);
        self.push_urls.insert(key, i);
    }

    /// Request `req`, let go to connection `conn`, takes the push of its URL
    /// if one is kept (and has not failed): what came of it so far is
    /// handed over now, the rest as it comes. False: no push to take.
    fn claim(&mut self, req: ReqId, conn: ConnId) -> Result<bool, Error> {
        let r = &self.reqs[req];
        if r.upload.is_some() {
            return Ok(false);
        }
        let key = (r.host.clone(), r.path.clone());
        let Some(&i) = self.push_urls.get(&key) else {
            return Ok(false);
        };
        let p = &mut self.pushes[i];
        if p.claimed.is_some() || p.failed {
            return Ok(false);
        }
        p.claimed = Some((req, conn));
        let now = Instant::now();
        let r = &mut self.reqs[req];
        r.assigned = Some(now);
        r.sent = Some(now);
        r.conn = Some(p.conn);
        r.pushed = Some(i);
        self.extras.pushed.push(key);
        let head = p.head.take();
        let chunks = std::mem::take(&mut p.chunks);
        let done = p.done;
        if let Some((at, status, content_type)) = head {
            self.handle(Event::Head {
                req,
                at: at.max(now),
                status,
                content_type,
                cache: Default::default(),
            })?;
        }
        for data in chunks {
            self.handle(Event::Data { req, data })?;
        }
        if let Some(at) = done {
            self.handle(Event::Done {
                req,
                at: at.max(now),
                conn,
            })?;
        }
        Ok(true)
    }

    /// An event of a push: kept, or handed to the request that took it.
    fn push_event(&mut self, push: PushId, ev: Event) -> Result<(), Error> {
        let Some(&i) = self.push_ids.get(&push) else {
            if let Event::PushData { data, .. } = &ev {
                if self.cancelled.contains(&push) {
                    self.extras.pushed_bytes += data.len() as u64;
                    self.extras.wasted_bytes += data.len() as u64;
                }
            }
            return Ok(());
        };
        let p = &mut self.pushes[i];
        if let Event::PushData { data, .. } = &ev {
            p.bytes += data.len() as u64;
            self.extras.pushed_bytes += data.len() as u64;
        }
        match (p.claimed, ev) {
            (
                Some((req, _)),
                Event::PushHead {
                    at,
                    status,
                    content_type,
                    ..
                },
            ) => self.handle(Event::Head {
                req,
                at,
                status,
                content_type,
                cache: Default::default(),
            }),
            (Some((req, _)), Event::PushData { data, .. }) => {
                self.handle(Event::Data { req, data })
            }
            (Some((req, conn)), Event::PushDone { at, .. }) => {
                self.handle(Event::Done { req, at, conn })
            }
            (Some((req, _)), Event::PushFailed { error, .. }) => {
                self.handle(Event::Failed { req, error })
            }
            (
                None,
                Event::PushHead {
                    at,
                    status,
                    content_type,
                    ..
                },
            ) => {
                p.head = Some((at, status, content_type));
                Ok(())
            }
            (None, Event::PushData { data, .. }) => {
                p.chunks.push(data);
                Ok(())
            }
            (None, Event::PushDone { at, .. }) => {
                p.done = Some(at);
                Ok(())
            }
            (None, Event::PushFailed { .. }) => {
                // The page's request, if it comes, goes to the network.
                p.failed = true;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn now(&self) -> Duration {
        Instant::now().saturating_duration_since(self.start)
    }

    /// Requests what the renderer has finished with by now.
    fn render_advance(&mut self) -> Result<(), Error> {
        let now = self.now();
        let Some(r) = self.render.as_mut() else {
            return Ok(());
        };
        r.advance(now);
        if r.tight_mode_over() {
            self.sched.tight_mode_over();
        }
        let mut found: Vec<(Found, Priority, bool)> = Vec::new();
        while let Some(f) = r.poll() {
            let (priority, frame) = (r.priority_of(&f), r.is_frame(&f));
            found.push((f, priority, frame));
        }
        for (f, priority, frame) in found {
            if frame && !same_site(&f.host, &self.cfg.root.0) {
                self.cross_site_frames
                    .insert((f.host.clone(), f.path.clone()));
            }
            // The renderer does not say which document or style sheet named a
            // resource: the page's own URL is its referer (the root has none).
            let referer = (!self.reqs.is_empty()).then(|| self.url_of(0));
            self.discover_as(f, referer, Some(priority))?;
        }
        Ok(())
    }

    /// The scheduler's pool of a request to `host`; under `--pool
    /// chromium`, a cross-site frame's document's (`cross_site_frame`) is
    /// apart from the page's (today's network partitioning; the 2013-era
    /// pools, `per-host` and `per-address`, had none).
    fn pool_of(&self, host: &str, cross_site_frame: bool) -> Result<String, Error> {
        let addr = self
            .cfg
            .resolve
            .get(host)
            .ok_or_else(|| Error::Unresolved(host.to_string()))?;
        let partitioned = cross_site_frame && self.cfg.knobs.pool == Pool::Chromium;
        let apart = |pool: String| match partitioned {
            true => format!("{pool} (cross-site frames)"),
            false => pool,
        };
        if !self.cfg.protocol.multiplexed() {
            return Ok(apart(host.to_string()));
        }
        match self.cfg.knobs.pool {
            // One connection per origin address (coalescing).
            Pool::PerAddress => Ok(apart(addr.to_string())),
            Pool::PerHost => Ok(apart(host.to_string())),
            // A session to the address already up, if one may be shared.
            Pool::Chromium => Ok(self
                .join_of(host, cross_site_frame)
                .and_then(|j| self.sched.joinable(&j))
                .unwrap_or_else(|| apart(host.to_string()))),
        }
    }

    /// What a request to `host` may join under `--pool chromium` (h2/SPDY
    /// only): a session up to its address, as the scheduler decides.
    fn join_of(&self, host: &str, cross_site_frame: bool) -> Option<Join> {
        if self.cfg.knobs.pool != Pool::Chromium || !self.cfg.protocol.multiplexed() {
            return None;
        }
        self.cfg.resolve.get(host).map(|addr| Join {
            addr: addr.to_string(),
            same_site: same_site(host, &self.cfg.root.0),
            cross_site_frame,
        })
    }

    fn discover(&mut self, found: Found, referer: Option<String>) -> Result<(), Error> {
        self.discover_as(found, referer, None)
    }

    /// Discovers `found`; with a priority (Blink's), Chromium's
    /// ResourceScheduler holds it by its class; without, it goes at once, at
    /// the priority its path suggests (the page's document: HIGHEST).
    fn discover_as(
        &mut self,
        found: Found,
        referer: Option<String>,
        blink: Option<Priority>,
    ) -> Result<(), Error> {
        let class: Option<Class> = blink.map(Priority::class);
        let key = (found.host.clone(), found.path.clone());
        if self.seen.contains_key(&key) {
            return Ok(());
        }
        let id = self.reqs.len();
        let priority = blink.unwrap_or_else(|| match id {
            0 => Priority::DOCUMENT,
            _ => Priority::from_path(&found.path),
        });
        let cross_site_frame = self.cross_site_frames.contains(&key);
        self.seen.insert(key, id);
        let pool = self.pool_of(&found.host, cross_site_frame)?;
        let host = found.host.clone();
        let upload = self
            .cfg
            .replay
            .as_ref()
            .and_then(|t| t.upload(&found.host, &found.path))
            .cloned();
        if upload.is_some() {
            self.sched.not_pipelined(id);
        }
        // The navigation's own preconnect, as it starts, whether or not
        // the document then comes from the cache (`--pool chromium`).
        if id == 0 && self.cfg.knobs.pool == Pool::Chromium {
            self.preconnects
                .entry(pool.clone())
                .or_insert(found.host.clone());
            self.sched.preconnect_navigation(&pool);
        }
        self.reqs.push(Req {
            host: found.host,
            path: found.path,
            pool: pool.clone(),
            cross_site_frame,
            upload,
            discovered: Some(Instant::now()),
            referer,
            priority: Some(priority),
            ..Default::default()
        });
        if self.answer_from_cache(id)? {
            return Ok(());
        }
        // Chromium picks the session as the request starts: one held by
        // Blink may join a session up by then.
        let join = self.join_of(&host, cross_site_frame);
        self.sched.urgency(id, priority.level.urgency());
        match class {
            Some(c) => self.sched.discovered_as(id, &pool, &host, c, join),
            None => self.sched.discovered(id, &pool),
        }
        Ok(())
    }

    async fn run(&mut self) -> Result<(), Error> {
        let (host, path) = self.cfg.root.clone();
        // With browser costs the renderer discovers (from the bytes, or an
        // imported page's tree); a scripted page's script does.
        let root = Found { host, path };
        let cost = self.cfg.knobs.browser_cost;
        if self.script.is_some() {
            self.discover_as(root, None, Some(Priority::DOCUMENT))?;
        } else if cost.is_none() {
            self.discover(root, None)?;
        } else {
            self.render = Some(match &self.cfg.replay {
                Some(tree) => Renderer::replaying(cost, root, tree.clone()),
                None => Renderer::new(cost, root),
            });
        }
        loop {
            self.render_advance()?;
            self.act()?;
            let idle = self.render.as_ref().is_none_or(|r| r.idle())
                && self.script.as_ref().is_none_or(|s| s.finished());
            if idle && self.reqs.iter().all(|r| r.done.is_some()) {
                return Ok(());
            }
            let wake = self
                .render
                .as_ref()
                .and_then(|r| r.next_wakeup())
                .map(|t| tokio::time::Instant::from_std(self.start + t));
            let ev = match wake {
                Some(at) => tokio::select! {
                    ev = self.rx.recv() => ev,
                    _ = tokio::time::sleep_until(at) => continue,
                },
                None => self.rx.recv().await,
            };
            let Some(ev) = ev else {
                return Err(Error::ConnectionsEnded);
            };
            self.handle(ev)?;
        }
    }

    fn act(&mut self) -> Result<(), Error> {
        while let Some(action) = self.sched.poll_action() {
            match action {
                Action::Open { conn, pool } => {
                    // Connect to the pool's address; for h1 the pool is the host.
                    let (first_host, cross_site_frame) = self
                        .reqs
                        .iter()
                        .find(|r| r.conn.is_none() && r.pool == pool)
                        .map(|r| (r.host.clone(), r.cross_site_frame))
                        .or_else(|| self.preconnects.get(&pool).map(|h| (h.clone(), false)))
                        .unwrap_or((pool.clone(), false));
                    let addr = self
                        .cfg
                        .resolve
                        .get(&first_host)
                        .copied()
                        .ok_or_else(|| Error::Unresolved(first_host.clone()))?;
                    self.conns.push(Conn {
                        pool: pool.clone(),
                        opened: Instant::now(),
                        ready: None,
                        tls_ms: -1.0,
                        first_req: None,
                        sender: None,
                        resumed: false,
                        zero_rtt: None,
                    });
                    debug_assert_eq!(self.conns.len() - 1, conn);
                    let at = Join {
                        addr: addr.to_string(),
                        same_site: same_site(&first_host, &self.cfg.root.0),
                        cross_site_frame,
                    };
                    self.sched.opened(conn, at, first_host == self.cfg.root.0);
                    let port = if self.cfg.protocol.tls() {
                        self.cfg.https_port
                    } else {
                        self.cfg.http_port
                    };
                    // The host's sockets, this one counted: a backup
                    // connect job takes a free slot among them.
                    let group = self
                        .group_sockets
                        .entry(first_host.clone())
                        .or_default()
                        .clone();
                    group.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let task = tokio::spawn(conn::open(
                        conn,
                        self.cfg.protocol,
                        SocketAddr::new(addr, port),
                        conn::Dial {
                            bind: None,
                            fast_open: self.cfg.knobs.tcp_fastopen,
                            backup: Some(conn::Backup { group }),
                        },
                        first_host,
                        self.tls.clone(),
                        self.tx.clone(),
                    ));
                    self.tasks.push(task);
                }
                Action::Send { conn, req } => {
                    if !self.pushes.is_empty() && self.claim(req, conn)? {
                        continue;
                    }
                    let now = Instant::now();
                    let r = &mut self.reqs[req];
                    r.assigned = Some(now);
                    r.conn = Some(conn);
                    let c = &mut self.conns[conn];
                    // Blink may have let it join another host's session.
                    r.pool.clone_from(&c.pool);
                    c.first_req.get_or_insert(req);
                    let (host, path) = (r.host.clone(), r.path.clone());
                    let upload = r.upload.clone();
                    let priority = r.priority.unwrap_or_else(|| Priority::from_path(&path));
                    let mut headers = self.cfg.knobs.headers.for_request(
                        self.cfg.protocol,
                        &host,
                        &path,
                        r.referer.as_deref(),
                    );
                    headers.extend(r.validators.iter().cloned());
                    match c.sender.as_mut() {
                        Some(RequestSender::H1(tx)) => {
                            let _ = tx.send((req, host, path, headers, upload));
                        }
                        Some(RequestSender::Spdy3(tx)) => {
                            let _ = tx.send(conn::spdy3::Job {
                                req,
                                host,
                                path,
                                headers,
                                upload,
                                priority,
                            });
                        }
                        Some(RequestSender::H3(send)) => {
                            let task = tokio::spawn(conn::h3::request_prioritized(
                                send.clone(),
                                req,
                                conn,
                                host,
                                path,
                                priority,
                                self.tx.clone(),
                                upload,
                                r.validators.clone(),
                            ));
                            self.tasks.push(task);
                        }
                        Some(RequestSender::H2(send)) => {
                            let task = tokio::spawn(conn::h2::request(
                                send.clone(),
                                req,
                                conn,
                                host,
                                path,
                                self.cfg.protocol,
                                self.tx.clone(),
                                headers,
                                upload,
                                priority,
                            ));
                            self.tasks.push(task);
                        }
                        None => return Err(Error::Unconnected),
                    }
                }
                // Pooled into a session up before it: dropping its only
                // sender closes the QUIC connection (h3's SendRequest).
                Action::Close { conn } => self.conns[conn].sender = None,
            }
        }
        Ok(())
    }

    fn handle(&mut self, ev: Event) -> Result<(), Error> {
        match ev {
            Event::Connected {
                conn,
                at,
                tls_ms,
                sender,
                resumed,
            } => {
                let c = &mut self.conns[conn];
                c.ready = Some(at);
                c.tls_ms = tls_ms;
                c.resumed = resumed;
                c.sender = Some(sender);
                self.sched.connected(conn, None);
            }
            // The server closes it after the response now ending: the pool
            // opens another for what is still to come.
            Event::Closed { conn } => self.sched.closed(conn),
            Event::ZeroRtt { conn, accepted } => {
                let c = &mut self.conns[conn];
                c.zero_rtt = Some(accepted);
                // Accepted 0-RTT is a resumed session's (RFC 8446 §4.2.10).
                c.resumed |= accepted == Some(true);
            }
            Event::Resumed { conn } => self.conns[conn].resumed = true,
            Event::ConnFailed { conn, error } => {
                return Err(Error::Connection { conn, error });
            }
            Event::Sent { req, at } => self.reqs[req].sent = Some(at),
            Event::EarlyHints { req, links, .. } => return self.early_hints(req, &links),
            Event::Promised {
                assoc,
                push,
                host,
                path,
                handle,
                ..
            } => self.promised(assoc, push, host, path, handle),
            ev @ (Event::PushHead { .. }
            | Event::PushData { .. }
            | Event::PushDone { .. }
            | Event::PushFailed { .. }) => {
                let push = match &ev {
                    Event::PushHead { push, .. }
                    | Event::PushData { push, .. }
                    | Event::PushDone { push, .. }
                    | Event::PushFailed { push, .. } => *push,
                    _ => return Ok(()),
                };
                return self.push_event(push, ev);
            }
            Event::Head {
                req,
                at,
                status,
                content_type,
                cache,
            } => return self.head(req, at, status, content_type, cache),
            Event::Data { req, data } => return self.data(req, data),
            Event::Done { req, at, conn } => return self.done(req, at, conn),
            Event::Failed { req, error } => return self.failed(req, error),
        }
        Ok(())
    }

    /// A response's head: a 304 answered from the stored response, else
    /// kept, painted, and (replaying) what it reveals at once discovered.
    fn head(
        &mut self,
        req: ReqId,
        at: Instant,
        status: u16,
        content_type: String,
        cache: CacheHeaders,
    ) -> Result<(), Error> {
        // A 304 to a conditional request: the stored response is
        // used, its body handed to the page as if it came.
        if let Some(stored) = self.not_modified(req, status, at, &cache) {
            let head = Event::Head {
                req,
                at,
                status,
                content_type: stored.content_type,
                cache,
            };
            self.reqs[req].cache_use = CacheUse::Revalidated;
            self.handle(head)?;
            if !stored.body.is_empty() {
                self.handle(Event::Data {
                    req,
                    data: stored.body,
                })?;
            }
            return Ok(());
        }
        let r = &mut self.reqs[req];
        r.cache_headers = cache;
        r.head = Some(at);
        r.status = status;
        let since = at.saturating_duration_since(self.start);
        self.paint.head(since, &r.host, &r.path, &content_type);
        if let Some(render) = self.render.as_mut() {
            render.head(&r.host, &r.path, &content_type);
            r.content_type = content_type;
            return Ok(());
        }
        if self.script.is_some() {
            r.content_type = content_type;
            return Ok(());
        }
        if content_type.starts_with("text/html") && self.cfg.replay.is_none() {
            r.html = Some(HtmlScanner::default());
        }
        r.content_type = content_type;
        let cfg = self.cfg;
        if let Some(t) = &cfg.replay {
            let (host, path) = (r.host.clone(), r.path.clone());
            let url = self.url_of(req);
            for f in t.due(&host, &path, 0, false) {
                let preload = t.preload(&f);
                self.discover_as(f, Some(url.clone()), preload)?;
            }
        }
        Ok(())
    }

    /// A piece of a response's body: counted, kept for the cache, painted,
    /// and scanned for what it references (or, replaying, what is due).
    fn data(&mut self, req: ReqId, data: Bytes) -> Result<(), Error> {
        let url = self.url_of(req);
        let now = self.now();
        let r = &mut self.reqs[req];
        r.bytes += data.len() as u64;
        if self.cfg.cache.is_some() && r.cache_use == CacheUse::Network {
            r.kept.extend_from_slice(&data);
        }
        self.paint.data(now, &r.host, &r.path, &data);
        if let Some(render) = self.render.as_mut() {
            render.data(now, &r.host, &r.path, &data);
            return Ok(());
        }
        if self.script.is_some() {
            return Ok(());
        }
        let cfg = self.cfg;
        if let Some(t) = &cfg.replay {
            let (host, path, bytes) = (r.host.clone(), r.path.clone(), r.bytes);
            for f in t.due(&host, &path, bytes, false) {
                let preload = t.preload(&f);
                self.discover_as(f, Some(url.clone()), preload)?;
            }
            return Ok(());
        }
        let found = match r.html.as_mut() {
            Some(scanner) => scanner.feed(&data),
            None => {
                if r.content_type.starts_with("text/css") || r.content_type.contains("javascript") {
                    r.body.extend_from_slice(&data);
                }
                Vec::new()
            }
        };
        for f in found {
            self.discover(f, Some(url.clone()))?;
        }
        Ok(())
    }

    /// A response's end: the scheduler told, and what its body references
    /// (a stylesheet's, a script's, what the page's script asks next) discovered.
    fn done(&mut self, req: ReqId, at: Instant, conn: ConnId) -> Result<(), Error> {
        self.keep(req);
        let url = self.url_of(req);
        let now = self.now();
        let r = &mut self.reqs[req];
        r.done = Some(at);
        // A fresh cache hit never went to the scheduler.
        let hit = r.cache_use == CacheUse::Hit;
        self.paint
            .done(at.saturating_duration_since(self.start), &r.host, &r.path);
        if !hit {
            self.sched.completed(req);
        }
        if let Some(render) = self.render.as_mut() {
            render.done(now, &r.host, &r.path);
            if !hit {
                self.sched.finished(conn);
            }
            return Ok(());
        }
        if let Some(script) = self.script.as_mut() {
            script.completed(&r.host, &r.path);
            if req == 0 {
                // The document is parsed: Blink's tight mode is over.
                self.sched.tight_mode_over();
            }
            if !hit {
                self.sched.finished(conn);
            }
            let mut asked = Vec::new();
            while let Some(next) = script.next() {
                asked.push(next);
            }
            // The page's script asks: the page is the referer.
            let page = self.url_of(0);
            for (f, priority) in asked {
                self.discover_as(f, Some(page.clone()), Some(priority))?;
            }
            return Ok(());
        }
        let body = std::mem::take(&mut r.body);
        let found = if let Some(t) = &self.cfg.replay {
            t.due(&r.host, &r.path, r.bytes, true)
        } else if r.content_type.starts_with("text/css") {
            css_urls(&body)
        } else if r.content_type.contains("javascript") {
            script_injections(&body)
        } else {
            Vec::new()
        };
        if !hit {
            self.sched.finished(conn);
        }
        for f in found {
            self.discover(f, Some(url.clone()))?;
        }
        Ok(())
    }

    /// A request that failed: sent again once when a kept-alive HTTP/1.1
    /// connection was closed under it, else the load's error.
    fn failed(&mut self, req: ReqId, error: conn::Error) -> Result<(), Error> {
        let r = &mut self.reqs[req];
        // A kept-alive HTTP/1.1 connection the server closed (idle)
        // as the request went out: sent again once on another, as
        // browsers do with a GET before any byte of its answer.
        let closed = matches!(error, conn::Error::Closed | conn::Error::Write(_));
        if closed && !self.cfg.protocol.multiplexed() && r.head.is_none() && !r.retried {
            r.retried = true;
            r.assigned = None;
            r.sent = None;
            if let Some(c) = r.conn.take() {
                self.sched.closed(c);
            }
            let pool = r.pool.clone();
            self.sched.discovered(req, &pool);
            return Ok(());
        }
        let r = &self.reqs[req];
        Err(Error::Request {
            host: r.host.clone(),
            path: r.path.clone(),
            error,
        })
    }

    /// What the cache says of request `id`, just discovered: a fresh hit
    /// is answered from it at once (its head, body and end as events, no
    /// connection, no scheduler: true); a stale response with validators
    /// makes it conditional. Uploads and loads without a cache: nothing.
    fn answer_from_cache(&mut self, id: ReqId) -> Result<bool, Error> {
        let Some(cache) = self.cfg.cache.clone() else {
            return Ok(false);
        };
        if self.reqs[id].upload.is_some() {
            return Ok(false);
        }
        let r = &self.reqs[id];
        let asked = self.cfg.knobs.headers.for_request(
            self.cfg.protocol,
            &r.host,
            &r.path,
            r.referer.as_deref(),
        );
        let url = self.url_of(id);
        let now = self.wall_of(Instant::now());
        let decision = match cache.lock() {
            Ok(c) => c.decide(&url, now, cache::request_revalidates(&asked)),
            Err(_) => Decision::Fetch,
        };
        match decision {
            Decision::Fetch => Ok(false),
            Decision::Revalidate(v) => {
                self.reqs[id].validators = v;
                Ok(false)
            }
            Decision::Use(stored) => {
                let stored = *stored;
                self.reqs[id].cache_use = CacheUse::Hit;
                let at = Instant::now();
                let tx = self.tx.clone();
                let _ = tx.send(Event::Head {
                    req: id,
                    at,
                    status: stored.status,
                    content_type: stored.content_type,
                    cache: stored.headers,
                });
                if !stored.body.is_empty() {
                    let _ = tx.send(Event::Data {
                        req: id,
                        data: stored.body,
                    });
                }
                let _ = tx.send(Event::Done {
                    req: id,
                    at,
                    conn: usize::MAX,
                });
                Ok(true)
            }
        }
    }

    /// The stored response a 304 to conditional request `req` lets the page
    /// use (its headers refreshed), if it is one.
    fn not_modified(
        &mut self,
        req: ReqId,
        status: u16,
        at: Instant,
        headers: &CacheHeaders,
    ) -> Option<Stored> {
        let r = &self.reqs[req];
        if status != 304 || r.validators.is_empty() || r.cache_use != CacheUse::Network {
            return None;
        }
        let cache = self.cfg.cache.as_ref()?;
        let sent = self.wall_of(r.sent.unwrap_or(at));
        let url = self.url_of(req);
        let got = self.wall_of(at);
        cache.lock().ok()?.not_modified(&url, headers, sent, got)
    }

    /// Keeps request `req`'s complete response in the cache, if there is one
    /// and the response came whole over the network and may be kept.
    fn keep(&mut self, req: ReqId) {
        let Some(cache) = self.cfg.cache.clone() else {
            return;
        };
        let url = self.url_of(req);
        let (start, wall) = (self.start, self.wall);
        let r = &mut self.reqs[req];
        if r.cache_use != CacheUse::Network || r.upload.is_some() || r.pushed.is_some() {
            return;
        }
        let at = |t: Option<Instant>| wall + t.unwrap_or(start).saturating_duration_since(start);
        let stored = Stored {
            status: r.status,
            content_type: r.content_type.clone(),
            headers: std::mem::take(&mut r.cache_headers),
            body: Bytes::from(std::mem::take(&mut r.kept)),
            request_time: at(r.sent),
            response_time: at(r.head),
        };
        if let Ok(mut c) = cache.lock() {
            c.store(&url, stored);
        };
    }

    /// An instant of this load on the wall clock (the server's `Date`'s).
    fn wall_of(&self, t: Instant) -> SystemTime {
        self.wall + t.saturating_duration_since(self.start)
    }

    /// What this load reused, entry by entry as `result` lists them.
    fn reuse(&self) -> Reuse {
        let done = self.reqs.iter().filter(|r| r.done.is_some());
        let cache: Vec<CacheUse> = done.clone().map(|r| r.cache_use).collect();
        let cached_bytes = done
            .filter(|r| r.cache_use != CacheUse::Network)
            .map(|r| r.bytes)
            .sum();
        Reuse {
            cache,
            cached_bytes,
            zero_rtt_sent: self.conns.iter().filter(|c| c.zero_rtt.is_some()).count(),
            zero_rtt_accepted: self
                .conns
                .iter()
                .filter(|c| c.zero_rtt == Some(Some(true)))
                .count(),
        }
    }

    /// The URL of request `req`, as a referer.
    fn url_of(&self, req: ReqId) -> String {
        let r = &self.reqs[req];
        let scheme = if self.cfg.protocol.tls() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}{}", r.host, r.path)
    }

    fn result(self, error: Option<String>) -> PageResult {
        let since = |t: Instant| ms(t.saturating_duration_since(self.start));
        let last = self.reqs.iter().filter_map(|r| r.done).max();
        // The main thread's last work (a script run after the last byte) counts.
        let last = match (&self.render, last) {
            (Some(r), Some(l)) if error.is_none() => Some(l.max(self.start + r.busy_until())),
            _ => last,
        };
        let entries = self
            .reqs
            .iter()
            .filter(|r| r.done.is_some())
            .map(|r| {
                // Nothing before the clock's zero: a connection the
                // navigation opened before it (`BrowserCost::lead`) shows
                // what is left of its connect, as Chromium's HAR does.
                let disc = r.discovered.unwrap_or(self.start).max(self.start);
                let conn = r.conn.unwrap_or(0);
                // A fresh cache hit has no connection.
                let c = r.conn.and_then(|i| self.conns.get(i));
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
                match c.and_then(|c| Some((c, c.ready?))) {
                    Some((c, ready))
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
                    method: r
                        .upload
                        .as_ref()
                        .map_or("GET", |u| u.method.as_str())
                        .to_string(),
                    host: r.host.clone(),
                    path: r.path.clone(),
                    request_body_bytes: r.upload.as_ref().map_or(0, |u| u.body.len() as u64),
                    started_ms: since(disc),
                    time_ms: d(disc, done),
                    status: r.status,
                    content_type: r.content_type.clone(),
                    body_bytes: r.bytes,
                    connection: conn,
                    timings: t,
                    pushed: r.pushed.is_some(),
                }
            })
            .collect();
        let plt_ms = last.map_or(0.0, since);
        // Paint is estimated for a load that finished (Chromium reports none
        // for one that failed either).
        let paint = error
            .is_none()
            .then(|| self.paint.estimate(Duration::from_secs_f64(plt_ms / 1e3)))
            .filter(|p| p.ttfb_ms.is_some() || p.fcp_ms.is_some());
        PageResult {
            protocol: self.cfg.protocol,
            plt_ms,
            connections: self.sched.connections(),
            entries,
            error,
            tls_resumed: self.conns.iter().filter(|c| c.resumed).count(),
            navigation_start: Some(self.start),
            paint,
        }
    }
}

/// Whether two hosts are of one site: the same last two labels
/// (`s.imgur.com` and `imgur.com`; enough for the built-in sites' names).
fn same_site(a: &str, b: &str) -> bool {
    fn site(h: &str) -> Vec<&str> {
        h.rsplit('.').take(2).collect()
    }
    site(a) == site(b)
}

fn tls_config(cfg: &PageConfig) -> Arc<rustls::ClientConfig> {
    match &cfg.tls_sessions {
        Some(kept) => kept.clone(),
        None => client_tls_resuming(cfg.protocol, cfg.ca.clone(), cfg.tls13_only, None),
    }
}
