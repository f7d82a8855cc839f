//! Which request goes on which connection, and when to open one — as a browser
//! of the era: HTTP/1.1 with up to N persistent connections per host (one
//! request at a time, or up to `depth` when pipelining, a non-idempotent
//! request — an imported page's POST — never pipelined: it goes alone on an
//! idle connection, as browsers that pipelined sent them); SPDY/HTTP/2 with one
//! connection per pool (a host name, or an origin address: [`Pool`]), every
//! request multiplexed up to the server's stream limit. Sans-I/O: fed
//! discoveries, connection events and completions; polled for actions.
//!
//! A request the renderer found passes two of Chromium's schedulers, in
//! order, before it waits for a connection:
//!
//! 1. **Blink's ResourceLoadScheduler** (the renderer): a request with a
//!    [`Class`] below HIGH priority (images, async and late scripts) waits,
//!    until the parser reaches the page's body and its first frame (its tight
//!    mode; the renderer says when: `render::Renderer::tight_mode_over`),
//!    while 2 such requests are in flight
//!    (kTightLimitForRendererSideResourceScheduler), on any host and
//!    protocol; then while 1024 are (kLimitForRendererSideResourceScheduler).
//! 2. **The network service's ResourceScheduler**
//!    (`services/network/resource_scheduler/resource_scheduler.cc`, one
//!    client per frame; [`RequestLimits::Chromium`], `--request-limits`): a
//!    request below net::MEDIUM (`kDelayablePriorityThreshold`: the model's
//!    [`Class::Normal`] and [`Class::Delayable`], net LOW and below) is
//!    *delayable* unless its host is known to support request priorities
//!    (`HttpServerProperties::SupportsRequestPriority`: an HTTP/2 session to
//!    it, or a QUIC alternative service, on record — here: a request of the
//!    host has gone out on a multiplexed connection; a fresh profile, as
//!    Chromium's, knows none before). A delayable request waits while 10
//!    delayable ones are in flight on the page
//!    (`kDefaultMaxNumDelayableRequestsPerClient`,
//!    resource_scheduler_params_manager.cc; `non_delayable_weight` 0), and
//!    while 6 requests of any class to its host are
//!    (`kMaxNumDelayableRequestsPerHostPerClient`); the first stops the scan
//!    of the queue, the second lets a request to another host go. Its queue
//!    is by priority, then arrival. These are the parameters of an unknown
//!    or 4G effective connection type, what the network quality estimator
//!    says of an HTTP RTT under 273 ms. Not modelled: at 3G and below
//!    (`GetParamsForNetworkQualityContainer`) the cap is 8 with each
//!    non-delayable request weighing 3 (`NonDelayableWeight`), and
//!    `DelayRequestsOnMultiplexedConnections` (enabled by default, up to 3G)
//!    makes h2/QUIC hosts' requests delayable too, without the per-host cap;
//!    `max_queuing_time` (≥ 15 s) and `ProactivelyThrottleLowPriorityRequests`
//!    (disabled by default) never act on a page of this lab. The 2018-era
//!    copy of the file also held delayable requests to 1 while layout-blocking
//!    ones were in flight (`kMaxNumDelayableWhileLayoutBlockingPerClient`,
//!    `kInFlightNonDelayableRequestCountPerClientThreshold`); today's file has
//!    neither (Blink's tight mode took that job), and a model with that rule
//!    was 0.6 s slower than Chromium on twitter (docs/crosscheck.md).
//!
//! Over h2 with `--pool chromium`, a host not yet known to speak HTTP/2 gets
//! a connection per waiting request until its session is up, as Chromium's
//! jobs open them ([`Scheduler::connect_per_request`]); the ones that come
//! up after the session close unused. As the navigation starts, the page's
//! host gets a second socket, as Chromium's LoadingPredictor preconnects
//! ([`Scheduler::preconnect_navigation`]).
//!
//! With [`RequestLimits::None`] the second stage lets everything go: the
//! model before it. Requests found without a class (no renderer: the pure
//! network model, imported pages, a 103's preloads, load-test users) skip
//! both.

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::str::FromStr;

/// How SPDY/HTTP/2 sessions are shared between hosts (HTTP/1.1 connections
/// are always per host name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pool {
    /// One session per host name: 2013 Chrome ("a single SSL connection per
    /// domain", seed 002), and today's Chromium when no session to the same
    /// address exists yet as the host is resolved.
    PerHost,
    /// One session per server address whose certificate covers the host:
    /// connection coalescing (RFC 7540 §9.1.1); the testbed's certificate
    /// names every host, so the address alone decides.
    PerAddress,
    /// As today's Chromium was measured to (crosscheck's HARs, connection ids
    /// per host): a host joins a session to its address that is already up
    /// when the host is found (not the page's own session, unless the host is
    /// of the page's site); otherwise it opens its own. Over h3, besides, a
    /// connection whose handshake ends when such a session is up closes into
    /// it (`QuicSessionPool`'s IP pooling at the job's end); over h2, a host
    /// not known to speak HTTP/2 gets a connection per waiting request until
    /// its session is up ([`Scheduler::connect_per_request`]). And as the
    /// page's navigation starts, a second socket to its host
    /// ([`Scheduler::preconnect_navigation`]).
    Chromium,
}

impl Pool {
    pub const NAMES: [&'static str; 3] = ["per-host", "per-address", "chromium"];

    pub fn name(self) -> &'static str {
        match self {
            Pool::PerHost => "per-host",
            Pool::PerAddress => "per-address",
            Pool::Chromium => "chromium",
        }
    }
}

impl Default for Pool {
    /// What today's Chromium does (the crosscheck's reference).
    fn default() -> Pool {
        Pool::Chromium
    }
}

impl fmt::Display for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Pool {
    type Err = String;
    fn from_str(s: &str) -> Result<Pool, String> {
        match s {
            "per-host" => Ok(Pool::PerHost),
            "per-address" => Ok(Pool::PerAddress),
            "chromium" => Ok(Pool::Chromium),
            _ => Err(format!(
                "'{s}' is not a pooling; expected {}",
                Pool::NAMES.join(", ")
            )),
        }
    }
}

/// The network service's request limits (`--request-limits`): as today's
/// Chromium, or none (every request Blink lets go starts at once).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RequestLimits {
    /// ResourceScheduler's caps on delayable requests (this module's doc).
    Chromium,
    /// No network-side limits: the model before them.
    None,
}

impl RequestLimits {
    pub const NAMES: [&'static str; 2] = ["chromium", "none"];

    pub fn name(self) -> &'static str {
        match self {
            RequestLimits::Chromium => "chromium",
            RequestLimits::None => "none",
        }
    }
}

impl Default for RequestLimits {
    /// What the browser does.
    fn default() -> RequestLimits {
        RequestLimits::Chromium
    }
}

impl fmt::Display for RequestLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RequestLimits {
    type Err = String;
    fn from_str(s: &str) -> Result<RequestLimits, String> {
        match s {
            "chromium" => Ok(RequestLimits::Chromium),
            "none" => Ok(RequestLimits::None),
            _ => Err(format!(
                "'{s}' is not a request limit; expected {}",
                RequestLimits::NAMES.join(", ")
            )),
        }
    }
}

pub type ReqId = usize;

/// A request's class in Chromium's schedulers, from Blink's priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Priority above MEDIUM (document, stylesheets, head scripts, fonts).
    LayoutBlocking,
    /// MEDIUM (scripts late in the body), or a client without a scheduler.
    Normal,
    /// Below MEDIUM (images, async and script-inserted scripts).
    Delayable,
}

/// A request Blink holds: its id, pool, host, class and where it may join.
type Held = (ReqId, String, String, Class, Option<Join>);

/// SplitMix64's finaliser: a well-mixed 64-bit value from any input.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The order of classes in both schedulers' queues: HIGH, MEDIUM, LOW.
fn rank(class: Class) -> u8 {
    match class {
        Class::LayoutBlocking => 0,
        Class::Normal => 1,
        Class::Delayable => 2,
    }
}

/// Blink's kTightLimitForRendererSideResourceScheduler.
const TIGHT_LIMIT: usize = 2;
/// Blink's BoostImagePriority `tight_medium_limit`: MEDIUM requests in
/// flight whatever the others.
const TIGHT_MEDIUM_LIMIT: usize = 2;
/// Blink's kLimitForRendererSideResourceScheduler.
const NORMAL_LIMIT: usize = 1024;
/// ResourceScheduler's kDefaultMaxNumDelayableRequestsPerClient: delayable
/// requests in flight on the page.
const DELAYABLE_PER_PAGE: usize = 10;
/// ResourceScheduler's kMaxNumDelayableRequestsPerHostPerClient: requests in
/// flight to a host above which its delayable ones wait.
const PER_HOST: usize = 6;
/// A socket pool group's most sockets (`g_max_sockets_per_group`, normal
/// pool): the connections [`Scheduler::connect_per_request`] opens to a host
/// at once.
const PER_GROUP: usize = 6;
/// Sockets Chromium's navigation preconnect asks for to the page's origin
/// ([`Scheduler::preconnect_navigation`]).
pub const NAVIGATION_SOCKETS: usize = 2;
pub type ConnId = usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// HTTP/1.1: `conns` per pool, `depth` requests in flight per connection (1: no pipelining).
    PerHost { conns: usize, depth: usize },
    /// HTTP/2: one connection per pool; streams up to the server's limit.
    Multiplexed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Open connection `conn` for pool `pool` (a host, or an address for h2).
    Open { conn: ConnId, pool: String },
    /// Send request `req` on connection `conn`.
    Send { conn: ConnId, req: ReqId },
    /// Close connection `conn`, up and unused: its requests went to a session
    /// to the same address that was up first (QUIC's pooling at the
    /// handshake's end, [`Scheduler::pool_at_handshake`]), or to its own
    /// host's session, up first ([`Scheduler::connect_per_request`]).
    Close { conn: ConnId },
}

/// Where a request Blink holds may join a session already up when it is let
/// go (`--pool chromium`): Chromium picks a request's session as the request
/// starts, not as it is found, so an image found before any session to its
/// address was up still joins one that came up while it was held — unless
/// its host has a connection of its own, up or being opened: Chromium looks
/// for the host's own session first (and waits for the one it opens).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join {
    /// The server address of the request's host.
    pub addr: String,
    /// Whether the host is of the page's site (it may join the page's own session).
    pub same_site: bool,
    /// A cross-site frame's document: it joins only a session of its own
    /// network partition (Chromium's NetworkAnonymizationKey), and the
    /// page's requests never join one of those.
    pub cross_site_frame: bool,
}

#[derive(Debug)]
struct Conn {
    id: ConnId,
    pool: String,
    /// Its server address, whether the page's host opened it, and whether
    /// its host is of the page's site, once told.
    share: Option<(Join, bool)>,
    ready: bool,
    closed: bool,
    in_flight: usize,
    /// Most requests in flight: the pipelining depth, or the server's stream limit.
    limit: usize,
    /// A request that is never pipelined, in flight on it alone.
    alone: Option<ReqId>,
    /// Kept for such a request: takes no more until it is idle.
    draining: bool,
    /// The waiting request whose turn opened it (none for a preconnect).
    opener: Option<ReqId>,
    /// Opened by [`Scheduler::connect_per_request`]: it counts as a
    /// connection only once it carries a request.
    per_request: bool,
    /// It has carried a request.
    used: bool,
    /// When it last went idle (up with nothing on it, or its last response
    /// complete), in the order connections did: [`Conn::reuse_rank`].
    idle_since: u64,
}

impl Conn {
    /// Which idle HTTP/1.1 connection of a pool a request takes, lowest
    /// first: Chromium's (`TransportClientSocketPool::AssignIdleSocketToRequest`)
    /// takes the one that went idle last among those that carried a request
    /// (its congestion window open, not restarted after idle), else the one
    /// idle longest (a preconnect's).
    fn reuse_rank(&self) -> (bool, i128) {
        match self.used {
            true => (false, -i128::from(self.idle_since)),
            false => (true, i128::from(self.idle_since)),
        }
    }
}

#[derive(Debug)]
pub struct Scheduler {
    policy: Policy,
    conns: Vec<Conn>,
    /// The next [`Conn::idle_since`].
    idle_order: u64,
    /// Requests waiting for a connection, in discovery order, with their pool.
    pending: VecDeque<(ReqId, String)>,
    actions: VecDeque<Action>,
    /// Requests Blink holds: (req, pool, host, class, a session it may join).
    held: VecDeque<Held>,
    /// Requests started and not finished: their host and class.
    in_flight: HashMap<ReqId, (String, Class)>,
    /// Blink's tight mode: the body or the first frame is not reached yet.
    tight: bool,
    /// Requests never pipelined (HTTP/1.1: alone on their connection).
    not_pipelined: HashSet<ReqId>,
    /// The network service's limits.
    limits: RequestLimits,
    /// Requests Blink let go that the network service holds, in arrival order.
    net_held: VecDeque<Held>,
    /// Requests the network service started and not finished: their host
    /// and whether they were delayable then.
    net_in_flight: HashMap<ReqId, (String, bool)>,
    /// Hosts known to support request priorities (`SupportsRequestPriority`).
    prioritizing: HashSet<String>,
    /// QUIC's pooling ([`Scheduler::pool_at_handshake`]): a connection up
    /// when a joinable session to its address already is closes, and its
    /// pool's requests go to that session.
    pool_at_handshake: bool,
    /// Pools whose connection closed so: the pool their requests go to.
    pooled_into: HashMap<String, String>,
    /// [`Scheduler::resume_unordered`]'s seed.
    resume_seed: Option<u64>,
    /// Requests' urgencies (0 most urgent), where told: the order by
    /// priority within a class when a session resumes its waiting requests.
    urgency: HashMap<ReqId, u8>,
    /// The pool whose session just came up and the request that opened it,
    /// while `plan` sends what waited for it.
    resuming: Option<(String, Option<ReqId>)>,
    /// [`Scheduler::connect_per_request`].
    connect_per_request: bool,
    /// Connections [`Scheduler::preconnect_navigation`] opened: counted
    /// only once they carry a request, as Chromium's HAR names them.
    preconnected: HashSet<ConnId>,
}

impl Scheduler {
    /// A scheduler without the network service's limits.
    pub fn new(policy: Policy) -> Scheduler {
        Scheduler::with_limits(policy, RequestLimits::None)
    }

    pub fn with_limits(policy: Policy, limits: RequestLimits) -> Scheduler {
        Scheduler {
            policy,
            conns: Vec::new(),
            idle_order: 0,
            pending: VecDeque::new(),
            actions: VecDeque::new(),
            held: VecDeque::new(),
            in_flight: HashMap::new(),
            tight: true,
            not_pipelined: HashSet::new(),
            limits,
            net_held: VecDeque::new(),
            net_in_flight: HashMap::new(),
            prioritizing: HashSet::new(),
            pool_at_handshake: false,
            pooled_into: HashMap::new(),
            resume_seed: None,
            urgency: HashMap::new(),
            resuming: None,
            connect_per_request: false,
            preconnected: HashSet::new(),
        }
    }

    /// Connects as Chromium does to a host it does not know to speak HTTP/2
    /// (a fresh profile knows none): every request waiting for the host's
    /// session has its own job, and each job opens a connection of its own,
    /// up to a socket group's [`PER_GROUP`], until a session is up
    /// (`HttpStreamFactory::Job::DoInitConnectionImpl`: a job that is not
    /// the session's first waits for it instead only when
    /// `ShouldThrottleConnectForSpdy`, i.e. when `HttpServerProperties`
    /// says the server supports SPDY). The first connection up is the
    /// session; one that comes up after it closes unused, its handshake
    /// paid: seen in Chromium 156's loads of this lab (crosscheck's
    /// per-connection rows: twitter over h2, 4 connections to the host of
    /// its 4 head resources and 2 to the host of its 2 images, one of each
    /// carrying everything). Multiplexed TCP protocols only: QUIC's jobs
    /// pool otherwise ([`Scheduler::pool_at_handshake`]).
    pub fn connect_per_request(mut self) -> Scheduler {
        self.connect_per_request = true;
        self
    }

    /// Resumes the requests that waited for a new session as Chromium does:
    /// in no set order. `SpdySessionPool::UpdatePendingRequests` and
    /// `QuicSessionPool`'s job hand the session to their waiting requests
    /// from a `std::set` of pointers, so in heap-address order (its TODO:
    /// "switch RequestSet out for a FIFO queue … Unclear that it matters
    /// here"); the streams are opened, and a server honouring priorities
    /// serves equal ones, in that order. Seen on our server (stream ids per
    /// URL, Chromium 156, h2): the request that opened the connection first,
    /// then by priority, but within a priority not in document order —
    /// twitter's body script before its head script in 3 of 4 loads,
    /// youtube's js3, js5, js4, js6 and yt3.ggpht.com's images in an order
    /// that changed from load to load. Modelled so: the opener first, then
    /// by class and urgency ([`Scheduler::urgency`]), and within an urgency
    /// in an order drawn from `seed`. Not for QUIC sessions, which Chromium
    /// resumes in order (the page loader's choice).
    pub fn resume_unordered(mut self, seed: u64) -> Scheduler {
        self.resume_seed = Some(seed);
        self
    }

    /// Pools as Chromium's QUIC sessions do (`QuicSessionPool`), besides the
    /// join as a request starts ([`Join`]): a connection whose handshake ends
    /// when a session to the same address that its host may join is already
    /// up closes (QUIC_CONNECTION_IP_POOLED) and its requests go to that
    /// session. The handshake was paid; the page's later bytes share one
    /// congestion window. Over h2, Chromium keeps such a connection.
    pub fn pool_at_handshake(mut self) -> Scheduler {
        self.pool_at_handshake = true;
        self
    }

    /// Request `req`'s urgency (its net priority, 0 most urgent), finer than
    /// its class: a new session takes what waited for it by urgency
    /// ([`Scheduler::resume_unordered`]). Call before it is discovered.
    pub fn urgency(&mut self, req: ReqId, urgency: u8) {
        self.urgency.insert(req, urgency);
    }

    /// Request `req` (a POST: not idempotent) is never pipelined: over
    /// HTTP/1.1 it goes only on an idle connection, and nothing follows it
    /// there until its answer is in. Call before it is discovered.
    pub fn not_pipelined(&mut self, req: ReqId) {
        self.not_pipelined.insert(req);
    }

    /// Blink's tight mode is over (the page's body and its first frame were
    /// reached): its throttling loosens.
    pub fn tight_mode_over(&mut self) {
        if self.tight {
            self.tight = false;
            self.plan();
        }
    }

    /// Whether Blink's ResourceLoadScheduler lets a request of `class`
    /// below HIGH priority go to the network now: under the limit of those in
    /// flight, or, for MEDIUM, while fewer than `TIGHT_MEDIUM_LIMIT` MEDIUM
    /// ones are (`IsRunningThrottleableRequestsLessThanOutStandingLimit`).
    fn blink_allows(&self, class: Class) -> bool {
        let limit = if self.tight {
            TIGHT_LIMIT
        } else {
            NORMAL_LIMIT
        };
        let running =
            |of: &dyn Fn(Class) -> bool| self.in_flight.values().filter(|(_, c)| of(*c)).count();
        (class == Class::Normal && running(&|c| c == Class::Normal) < TIGHT_MEDIUM_LIMIT)
            || running(&|c| c != Class::LayoutBlocking) < limit
    }

    /// A request was discovered; `pool` is its host (h1) or its server address (h2).
    /// It starts at once (no ResourceScheduler).
    pub fn discovered(&mut self, req: ReqId, pool: &str) {
        self.in_flight.remove(&req);
        self.pending.push_back((req, pool.to_string()));
        self.plan();
    }

    /// A request was discovered by a browser: it goes out when Blink's
    /// ResourceLoadScheduler would let it, given its class — on `pool`, or,
    /// with a [`Join`], on a session to its address up by then.
    pub fn discovered_as(
        &mut self,
        req: ReqId,
        pool: &str,
        host: &str,
        class: Class,
        join: Option<Join>,
    ) {
        self.held
            .push_back((req, pool.to_string(), host.to_string(), class, join));
        self.plan();
    }

    /// Connection `conn` (just opened) goes to `at`'s server address, for
    /// a host of the page's site or not; `root`: the page's own host opened
    /// it. Lets held requests [`Join`] it.
    pub fn opened(&mut self, conn: ConnId, at: Join, root: bool) {
        if let Some(c) = self.conns.iter_mut().find(|c| c.id == conn) {
            c.share = Some((at, root));
        }
    }

    /// The pool of a session up now that a request may [`Join`], if any:
    /// today's Chromium's rule (`--pool chromium`), in this one place.
    pub fn joinable(&self, join: &Join) -> Option<String> {
        self.joinable_conn(join, None)
            .map(|c| self.conns[c].pool.clone())
    }

    /// The index of the first session up that a request may [`Join`], other
    /// than `except`.
    fn joinable_conn(&self, join: &Join, except: Option<usize>) -> Option<usize> {
        (0..self.conns.len()).find(|&i| {
            let c = &self.conns[i];
            Some(i) != except
                && c.ready
                && !c.closed
                && c.share.as_ref().is_some_and(|(at, root)| {
                    at.addr == join.addr
                        && (!root || join.same_site)
                        && at.cross_site_frame == join.cross_site_frame
                })
        })
    }

    /// QUIC's pooling at the handshake's end: `conn`, just up, closes if
    /// its host may join a session up before it, and its pool's requests
    /// go there from now on.
    fn pool_into_earlier(&mut self, conn: ConnId) {
        let Some(i) = self.conns.iter().position(|c| c.id == conn) else {
            return;
        };
        let Some((at, _)) = self.conns[i].share.clone() else {
            return;
        };
        let Some(into) = self.joinable_conn(&at, Some(i)) else {
            return;
        };
        let (from, to) = (self.conns[i].pool.clone(), self.conns[into].pool.clone());
        self.conns[i].closed = true;
        for (_, pool) in self.pending.iter_mut().filter(|(_, p)| *p == from) {
            pool.clone_from(&to);
        }
        self.pooled_into.insert(from, to);
        self.actions.push_back(Action::Close { conn });
    }

    /// [`Scheduler::connect_per_request`]: `conn`, just up, closes unused if
    /// another connection of its pool is up (the session).
    fn close_if_spare(&mut self, conn: ConnId) {
        let Some(i) = self.conns.iter().position(|c| c.id == conn) else {
            return;
        };
        let pool = &self.conns[i].pool;
        let session_up = self
            .conns
            .iter()
            .any(|c| c.id != conn && &c.pool == pool && c.ready && !c.closed);
        if session_up {
            self.conns[i].closed = true;
            self.actions.push_back(Action::Close { conn });
        }
    }

    /// Whether `pool` has a connection of its own, up or being opened
    /// (one closed into another's session is not).
    fn has_connection(&self, pool: &str) -> bool {
        self.conns.iter().any(|c| c.pool == pool && !c.closed)
    }

    /// The pool a request for `pool` goes to: another, if `pool`'s
    /// connection was pooled into it.
    fn pooled(&self, pool: String) -> String {
        match self.pooled_into.get(&pool) {
            Some(to) => self.pooled(to.clone()),
            None => pool,
        }
    }

    /// Request `req`'s response is complete (call before [`Scheduler::finished`]).
    pub fn completed(&mut self, req: ReqId) {
        self.in_flight.remove(&req);
        self.net_in_flight.remove(&req);
        for c in self.conns.iter_mut().filter(|c| c.alone == Some(req)) {
            c.alone = None;
        }
    }

    /// Starts what Blink lets go: every HIGH request at once, the others
    /// under its limit, MEDIUM before LOW (Blink's scheduler keeps its pending
    /// requests by priority, then in discovery order).
    fn admit(&mut self) {
        let mut by_class: Vec<usize> = (0..self.held.len()).collect();
        by_class.sort_by_key(|&i| rank(self.held[i].3));
        let mut go = Vec::new();
        for i in by_class {
            let (req, _, host, class, _) = &self.held[i];
            if *class == Class::LayoutBlocking || self.blink_allows(*class) {
                // In flight from now: the limit holds for the next one.
                self.in_flight.insert(*req, (host.clone(), *class));
                go.push(i);
            }
        }
        let mut held: Vec<Option<Held>> = std::mem::take(&mut self.held)
            .into_iter()
            .map(Some)
            .collect();
        for i in go {
            let h = held[i].take().expect("each goes once");
            self.net_held.push_back(h);
        }
        self.held = held.into_iter().flatten().collect();
        self.start_in_network();
    }

    /// Whether the network service would delay a request of `class` to
    /// `host`: below net::MEDIUM, to a host not known to support priorities.
    fn delayable(&self, class: Class, host: &str) -> bool {
        self.limits == RequestLimits::Chromium
            && class != Class::LayoutBlocking
            && !self.prioritizing.contains(host)
    }

    /// Starts what the network service's ResourceScheduler lets go, by
    /// priority, then arrival (`LoadAnyStartablePendingRequests`), and sends
    /// each to its pool — with a [`Join`], to a session up by now.
    fn start_in_network(&mut self) {
        let mut queue: Vec<Held> = std::mem::take(&mut self.net_held).into();
        queue.sort_by_key(|h| rank(h.3));
        let mut stopped = false;
        for (req, pool, host, class, join) in queue {
            let delayable = self.delayable(class, &host);
            // A request that is not delayable starts as it comes; a
            // delayable one over the page's cap stops the scan
            // (DO_NOT_START_REQUEST_AND_STOP_SEARCHING), over its host's lets
            // the next be tried (DO_NOT_START_REQUEST_AND_KEEP_SEARCHING).
            let go = !delayable
                || (!stopped && {
                    let delayable_in_flight =
                        self.net_in_flight.values().filter(|(_, d)| *d).count();
                    stopped = delayable_in_flight >= DELAYABLE_PER_PAGE;
                    !stopped
                        && self
                            .net_in_flight
                            .values()
                            .filter(|(h, _)| *h == host)
                            .count()
                            < PER_HOST
                });
            if !go {
                self.net_held.push_back((req, pool, host, class, join));
                continue;
            }
            self.net_in_flight.insert(req, (host, delayable));
            // Chromium looks for its host's own session first, and waits
            // for its host's connection being opened; only a host with
            // neither joins another host's session to its address.
            let pool = match (&self.policy, join) {
                (Policy::Multiplexed, Some(j)) if !self.has_connection(&pool) => {
                    self.joinable(&j).unwrap_or(pool)
                }
                _ => pool,
            };
            self.pending.push_back((req, pool));
        }
    }

    /// Connection `conn` is up; `limit` is what the server allows in flight on it
    /// (h2: SETTINGS_MAX_CONCURRENT_STREAMS; h1: ignored).
    pub fn connected(&mut self, conn: ConnId, limit: Option<usize>) {
        let policy = self.policy;
        let idle_since = self.next_idle();
        if let Some(c) = self.conns.iter_mut().find(|c| c.id == conn) {
            c.ready = true;
            c.idle_since = idle_since;
            if let (Policy::Multiplexed, Some(l)) = (policy, limit) {
                c.limit = l.max(1);
            }
        }
        if self.pool_at_handshake && policy == Policy::Multiplexed {
            self.pool_into_earlier(conn);
        }
        if self.connect_per_request && policy == Policy::Multiplexed {
            self.close_if_spare(conn);
        }
        if policy == Policy::Multiplexed && self.resume_seed.is_some() {
            self.resuming = self
                .conns
                .iter()
                .find(|c| c.id == conn && !c.closed)
                .map(|c| (c.pool.clone(), c.opener));
        }
        self.plan();
        self.resuming = None;
    }

    /// A response on `conn` is complete.
    pub fn finished(&mut self, conn: ConnId) {
        let idle_since = self.next_idle();
        if let Some(c) = self.conns.iter_mut().find(|c| c.id == conn) {
            c.in_flight = c.in_flight.saturating_sub(1);
            if c.in_flight == 0 {
                c.idle_since = idle_since;
            }
        }
        self.plan();
    }

    /// The order of a connection going idle now.
    fn next_idle(&mut self) -> u64 {
        self.idle_order += 1;
        self.idle_order
    }

    /// Connection `conn` closed or failed; its pool may open another.
    pub fn closed(&mut self, conn: ConnId) {
        if let Some(c) = self.conns.iter_mut().find(|c| c.id == conn) {
            c.closed = true;
        }
        self.plan();
    }

    /// Opens a connection for `pool` now, with no request for it yet, unless
    /// one is open or opening (a 103's `rel=preconnect`: Chromium's
    /// PreconnectManager); requests found later take it as any other.
    pub fn preconnect(&mut self, pool: &str) {
        let pool = self.pooled(pool.to_string());
        if self.conns.iter().any(|c| c.pool == pool && !c.closed) {
            return;
        }
        let limit = match self.policy {
            Policy::PerHost { depth, .. } => depth.max(1),
            Policy::Multiplexed => usize::MAX,
        };
        self.open_unasked(&pool, limit, false);
    }

    /// Opens a connection for `pool` that no waiting request asked for.
    fn open_unasked(&mut self, pool: &str, limit: usize, per_request: bool) -> ConnId {
        let id = self.conns.len();
        self.conns.push(Conn {
            id,
            pool: pool.to_string(),
            share: None,
            ready: false,
            closed: false,
            in_flight: 0,
            limit,
            alone: None,
            draining: false,
            opener: None,
            per_request,
            used: false,
            idle_since: 0,
        });
        self.actions.push_back(Action::Open {
            conn: id,
            pool: pool.to_string(),
        });
        id
    }

    /// Chromium's preconnect as a navigation starts: `LoadingPredictor::
    /// PrepareForPageLoad` asks for [`NAVIGATION_SOCKETS`] sockets to the
    /// page's origin (`AddInitialUrlToPreconnectPrediction`'s `kMinSockets`:
    /// a redirect to the same host then finds a socket free), the
    /// document's own connection among them. Call it right after
    /// the document's request is discovered: the connections `pool` lacks
    /// of that many open at once. Over HTTP/1.1 the extra one waits idle
    /// for the page's next request to the host (its first subresource then
    /// skips a handshake); over h2 and SPDY, whose jobs connect per request
    /// ([`Scheduler::connect_per_request`]), it is one such job's: it closes
    /// unused if the session came up before it (its handshake paid). Seen in
    /// every Chromium 156 load of this lab over http, https and h2: a second
    /// connection to the document's host opened 10–30 ms after navigation
    /// start, before the document's first byte. None over QUIC (the
    /// preconnect joins the one session) nor where the server is known to
    /// speak h2 (Chromium then preconnects one socket).
    pub fn preconnect_navigation(&mut self, pool: &str) {
        let pool = self.pooled(pool.to_string());
        let (limit, per_request) = match self.policy {
            Policy::PerHost { conns, depth } => {
                if conns < NAVIGATION_SOCKETS {
                    return;
                }
                (depth.max(1), false)
            }
            Policy::Multiplexed if self.connect_per_request => (usize::MAX, true),
            Policy::Multiplexed => return,
        };
        let live = self
            .conns
            .iter()
            .filter(|c| c.pool == pool && !c.closed)
            .count();
        for _ in live..NAVIGATION_SOCKETS {
            let id = self.open_unasked(&pool, limit, per_request);
            self.preconnected.insert(id);
        }
    }

    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// Connections opened so far, but for those QUIC's pooling closed as
    /// their handshake ended and those opened per request or preconnected
    /// that carried none (Chromium's HAR names none of those either).
    pub fn connections(&self) -> usize {
        let unused = self
            .conns
            .iter()
            .filter(|c| (c.per_request || self.preconnected.contains(&c.id)) && !c.used);
        self.conns.len() - self.pooled_into.len() - unused.count()
    }

    fn plan(&mut self) {
        self.admit();
        let (max_conns, depth) = match self.policy {
            Policy::PerHost { conns, depth } => (conns.max(1), depth.max(1)),
            Policy::Multiplexed => (1, usize::MAX),
        };
        // Send what can be sent, by priority (Chromium's socket pools and
        // sessions take their waiting requests so), then in discovery order;
        // a request without a class (no scheduler) counts as MEDIUM.
        let class = |req: &ReqId| self.in_flight.get(req).map_or(Class::Normal, |(_, c)| *c);
        // The requests that waited for the session just up: its opener
        // first of all (its own job takes the session), the others by class
        // and urgency, then in an order drawn from the seed
        // ([`Scheduler::resume_unordered`]); the rest in discovery order.
        // An HTTP/1.1 socket group's queue is by the request's own priority
        // (`ClientSocketPool`'s priority queue: a HIGHEST stylesheet before a
        // MEDIUM head script of the same class), then arrival; told
        // urgencies only (none: all equal, discovery order).
        let per_host = matches!(self.policy, Policy::PerHost { .. });
        let urgency = |req: &ReqId| u64::from(*self.urgency.get(req).unwrap_or(&0));
        let key = |req: ReqId, pool: &str| -> (u8, u64) {
            let rank = rank(class(&req));
            let (Some(seed), Some((up, opener))) = (self.resume_seed, &self.resuming) else {
                return (rank, if per_host { urgency(&req) } else { 0 });
            };
            if self.pooled(pool.to_string()) != *up {
                return (rank, 0);
            }
            if *opener == Some(req) {
                return (0, 0);
            }
            let urgency = u64::from(*self.urgency.get(&req).unwrap_or(&0));
            let draw = mix(seed ^ (req as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            (rank, 1 + (urgency << 56 | draw >> 8))
        };
        let ranks: HashMap<ReqId, (u8, u64)> = self
            .pending
            .iter()
            .map(|(r, pool)| (*r, key(*r, pool)))
            .collect();
        self.pending
            .make_contiguous()
            .sort_by_key(|(r, _)| ranks[r]);
        let mut waiting = VecDeque::new();
        let multiplexed = self.policy == Policy::Multiplexed;
        while let Some((req, pool)) = self.pending.pop_front() {
            let pool = self.pooled(pool);
            // Only pipelining changes anything: without it, every request
            // goes alone on an idle connection anyway.
            let alone = depth > 1
                && self.policy != Policy::Multiplexed
                && self.not_pipelined.contains(&req);
            let free = self
                .conns
                .iter_mut()
                .filter(|c| c.pool == pool && c.ready && !c.closed && c.alone.is_none())
                .filter(|c| match alone {
                    true => c.in_flight == 0,
                    false => c.in_flight < c.limit && !c.draining,
                })
                .min_by_key(|c| match multiplexed {
                    true => (c.in_flight, (false, 0)),
                    false => (c.in_flight, c.reuse_rank()),
                });
            match free {
                Some(c) => {
                    c.in_flight += 1;
                    c.used = true;
                    if alone {
                        c.alone = Some(req);
                    }
                    self.actions.push_back(Action::Send { conn: c.id, req });
                    // A request on an HTTP/2 (or QUIC) connection: its host
                    // is on record as supporting priorities from now on.
                    if self.policy == Policy::Multiplexed {
                        if let Some((host, _)) = self.in_flight.get(&req) {
                            self.prioritizing.insert(host.clone());
                        }
                    }
                    if alone {
                        for c in self.conns.iter_mut().filter(|c| c.pool == pool) {
                            c.draining = false;
                        }
                    }
                }
                None => {
                    // Pipelining behind others: the connection with the
                    // fewest takes no more, so that it soon goes alone.
                    let draining = self
                        .conns
                        .iter()
                        .any(|c| c.pool == pool && !c.closed && c.draining);
                    if alone && !draining {
                        if let Some(c) = self
                            .conns
                            .iter_mut()
                            .filter(|c| c.pool == pool && c.ready && !c.closed && c.alone.is_none())
                            .min_by_key(|c| c.in_flight)
                        {
                            c.draining = true;
                        }
                    }
                    waiting.push_back((req, pool));
                }
            }
        }
        // Open connections for what still waits: one per waiting request beyond
        // what connections being opened will take, up to the pool's maximum
        // (a multiplexed pool with no session up yet, connecting per
        // request: one each, up to a socket group's).
        for (i, (_, pool)) in waiting.iter().enumerate() {
            let live: Vec<&Conn> = self
                .conns
                .iter()
                .filter(|c| &c.pool == pool && !c.closed)
                .collect();
            let opening = live.iter().filter(|c| !c.ready).count();
            let ahead = waiting.iter().take(i).filter(|(_, p)| p == pool).count();
            let per_request = self.connect_per_request
                && self.policy == Policy::Multiplexed
                && live.iter().all(|c| !c.ready);
            let (max_conns, takes) = match per_request {
                true => (PER_GROUP, 1),
                false => (max_conns, depth),
            };
            let will_take = opening.saturating_mul(takes);
            if live.len() < max_conns && ahead >= will_take {
                let id = self.conns.len();
                self.conns.push(Conn {
                    id,
                    pool: pool.clone(),
                    share: None,
                    ready: false,
                    closed: false,
                    in_flight: 0,
                    limit: depth,
                    alone: None,
                    draining: false,
                    opener: Some(waiting[i].0),
                    per_request,
                    used: false,
                    idle_since: 0,
                });
                self.actions.push_back(Action::Open {
                    conn: id,
                    pool: pool.clone(),
                });
            }
        }
        self.pending = waiting;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(s: &mut Scheduler) -> Vec<Action> {
        std::iter::from_fn(|| s.poll_action()).collect()
    }

    /// A preconnect opens one connection for its pool at once (none if one
    /// is up or opening); the requests found later go on it.
    #[test]
    fn a_preconnected_connection_takes_the_requests_found_later() {
        let mut s = Scheduler::new(Policy::Multiplexed);
        s.preconnect("img.test");
        s.preconnect("img.test");
        assert_eq!(
            drain(&mut s),
            vec![Action::Open {
                conn: 0,
                pool: "img.test".into()
            }]
        );
        s.connected(0, Some(100));
        s.discovered(0, "img.test");
        assert_eq!(drain(&mut s), vec![Action::Send { conn: 0, req: 0 }]);
        let mut h1 = Scheduler::new(Policy::PerHost { conns: 6, depth: 1 });
        h1.preconnect("a.test");
        h1.discovered(0, "a.test");
        h1.discovered(1, "a.test");
        // The preconnect is opening: one more for the second request.
        assert_eq!(drain(&mut h1).len(), 2);
    }

    /// The navigation's preconnect: two sockets to the page's host, the
    /// document on the first up; over HTTP/1.1 the other takes the page's
    /// next request to the host, found while it opened, and counts only
    /// then; over h2 (connecting per request) it closes unused, over QUIC's
    /// pooling and a known h2 server it is not opened.
    #[test]
    fn the_navigation_preconnects_a_second_socket_to_the_pages_host() {
        let opens = |actions: &[Action]| {
            actions
                .iter()
                .filter(|a| matches!(a, Action::Open { pool, .. } if pool == "a.test"))
                .count()
        };
        let mut h1 = Scheduler::new(Policy::PerHost { conns: 6, depth: 1 });
        h1.preconnect_navigation("a.test");
        h1.discovered(0, "a.test");
        assert_eq!(opens(&drain(&mut h1)), NAVIGATION_SOCKETS);
        h1.connected(1, None);
        assert_eq!(drain(&mut h1), [Action::Send { conn: 1, req: 0 }]);
        assert_eq!(h1.connections(), 1);
        // Found while the other socket opens: it waits for it, no third.
        h1.discovered(1, "a.test");
        assert_eq!(drain(&mut h1), []);
        h1.connected(0, None);
        assert_eq!(drain(&mut h1), [Action::Send { conn: 0, req: 1 }]);
        assert_eq!(h1.connections(), 2);
        // Asked again (a later navigation's), nothing more opens.
        h1.preconnect_navigation("a.test");
        assert_eq!(drain(&mut h1), []);

        let mut h2 = Scheduler::new(Policy::Multiplexed).connect_per_request();
        h2.preconnect_navigation("a.test");
        h2.discovered(0, "a.test");
        assert_eq!(opens(&drain(&mut h2)), NAVIGATION_SOCKETS);
        h2.connected(0, Some(100));
        assert_eq!(drain(&mut h2), [Action::Send { conn: 0, req: 0 }]);
        h2.connected(1, Some(100));
        assert_eq!(drain(&mut h2), [Action::Close { conn: 1 }]);
        assert_eq!(h2.connections(), 1);

        for mut s in [
            Scheduler::new(Policy::Multiplexed),
            Scheduler::new(Policy::Multiplexed).pool_at_handshake(),
            Scheduler::new(Policy::PerHost { conns: 1, depth: 1 }),
        ] {
            s.preconnect_navigation("a.test");
            s.discovered(0, "a.test");
            assert_eq!(opens(&drain(&mut s)), 1);
        }
    }

    /// An HTTP/1.1 socket freed goes to the most urgent request waiting for
    /// it (a stylesheet before a head script found earlier), then to the
    /// earliest found.
    #[test]
    fn a_freed_http1_socket_takes_the_most_urgent_request_first() {
        let mut s = Scheduler::new(Policy::PerHost { conns: 1, depth: 1 });
        s.discovered(0, "a.test");
        assert_eq!(drain(&mut s).len(), 1);
        s.connected(0, None);
        assert_eq!(drain(&mut s), [Action::Send { conn: 0, req: 0 }]);
        for (req, urgency) in [(1, 2), (2, 0), (3, 2)] {
            s.urgency(req, urgency);
            s.discovered(req, "a.test");
        }
        assert_eq!(drain(&mut s), []);
        for (done, next) in [(0, 2), (2, 1), (1, 3)] {
            s.completed(done);
            s.finished(0);
            assert_eq!(drain(&mut s), [Action::Send { conn: 0, req: next }]);
        }
    }

    /// As Chromium's socket pool: a request takes the HTTP/1.1 connection
    /// that went idle last among those that carried one (its window open),
    /// not the first opened; with none used, the one idle longest.
    #[test]
    fn an_http1_request_takes_the_connection_idle_last() {
        let mut s = Scheduler::new(Policy::PerHost { conns: 3, depth: 1 });
        for r in 0..3 {
            s.discovered(r, "a.test");
        }
        assert_eq!(drain(&mut s).len(), 3);
        for c in 0..3 {
            s.connected(c, None);
        }
        assert_eq!(sent(&drain(&mut s)), [0, 1, 2]);
        // Connection 1 finishes first, then 2, then 0: 0 went idle last.
        for c in [1, 2, 0] {
            s.finished(c);
        }
        s.discovered(3, "a.test");
        assert_eq!(drain(&mut s), [Action::Send { conn: 0, req: 3 }]);
        s.discovered(4, "a.test");
        assert_eq!(drain(&mut s), [Action::Send { conn: 2, req: 4 }]);
        // Of the navigation's two sockets, neither used, the one idle
        // longest; then the used one before the other.
        let mut p = Scheduler::new(Policy::PerHost { conns: 6, depth: 1 });
        p.preconnect_navigation("b.test");
        assert_eq!(drain(&mut p).len(), 2);
        p.connected(1, None);
        p.connected(0, None);
        p.discovered(0, "b.test");
        assert_eq!(
            drain(&mut p),
            [Action::Send { conn: 1, req: 0 }],
            "idle longest"
        );
        p.finished(1);
        p.discovered(1, "b.test");
        assert_eq!(
            drain(&mut p),
            [Action::Send { conn: 1, req: 1 }],
            "used first"
        );
    }

    #[test]
    fn http1_opens_up_to_six_connections_per_host_and_sends_in_order() {
        let mut s = Scheduler::new(Policy::PerHost { conns: 6, depth: 1 });
        for r in 0..10 {
            s.discovered(r, "a.test");
        }
        let opens = drain(&mut s);
        assert_eq!(opens.len(), 6);
        assert!(opens.iter().all(|a| matches!(a, Action::Open { .. })));
        for c in 0..6 {
            s.connected(c, None);
        }
        let sends: Vec<ReqId> = drain(&mut s)
            .into_iter()
            .map(|a| match a {
                Action::Send { req, .. } => req,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(sends, vec![0, 1, 2, 3, 4, 5]);
        s.finished(2);
        assert_eq!(drain(&mut s), vec![Action::Send { conn: 2, req: 6 }]);
        // Another host gets its own connections.
        s.discovered(10, "b.test");
        assert!(matches!(drain(&mut s)[..], [Action::Open { conn: 6, .. }]));
    }

    #[test]
    fn a_post_is_never_pipelined() {
        let mut s = Scheduler::new(Policy::PerHost { conns: 2, depth: 4 });
        s.not_pipelined(2);
        for r in 0..5 {
            s.discovered(r, "a.test");
        }
        assert_eq!(drain(&mut s).len(), 2);
        // One connection up: the POST does not go behind 0 and 1.
        s.connected(0, None);
        assert_eq!(
            drain(&mut s),
            [
                Action::Send { conn: 0, req: 0 },
                Action::Send { conn: 0, req: 1 }
            ]
        );
        // An idle one: the POST alone on it, the rest pipelined on the other.
        s.connected(1, None);
        assert_eq!(
            drain(&mut s),
            [
                Action::Send { conn: 1, req: 2 },
                Action::Send { conn: 0, req: 3 },
                Action::Send { conn: 0, req: 4 },
            ]
        );
        // Nothing goes behind it until its answer is in.
        s.discovered(5, "a.test");
        assert!(drain(&mut s).is_empty());
        s.completed(2);
        s.finished(1);
        assert_eq!(drain(&mut s), [Action::Send { conn: 1, req: 5 }]);
        // No idle connection for the next POST: the one with the fewest in
        // flight takes no more until it is idle, then takes the POST.
        s.not_pipelined(6);
        s.discovered(6, "a.test");
        s.discovered(7, "a.test");
        assert!(drain(&mut s).is_empty());
        s.completed(5);
        s.finished(1);
        assert_eq!(drain(&mut s), [Action::Send { conn: 1, req: 6 }]);
        s.completed(0);
        s.finished(0);
        assert_eq!(drain(&mut s), [Action::Send { conn: 0, req: 7 }]);
        // Without pipelining, nothing changes: one request per connection.
        let mut s = Scheduler::new(Policy::PerHost { conns: 1, depth: 1 });
        s.not_pipelined(0);
        s.discovered(0, "a.test");
        s.discovered(1, "a.test");
        drain(&mut s);
        s.connected(0, None);
        assert_eq!(drain(&mut s), [Action::Send { conn: 0, req: 0 }]);
        s.completed(0);
        s.finished(0);
        assert_eq!(drain(&mut s), [Action::Send { conn: 0, req: 1 }]);
    }

    #[test]
    fn one_request_opens_one_connection() {
        let mut s = Scheduler::new(Policy::PerHost { conns: 6, depth: 1 });
        s.discovered(0, "a.test");
        assert_eq!(drain(&mut s).len(), 1);
        s.discovered(1, "a.test");
        assert_eq!(
            drain(&mut s).len(),
            1,
            "a second request opens a second connection"
        );
    }

    /// Chromium's jobs to a host not known to speak HTTP/2: a connection
    /// each, up to a socket group's six, until the session is up; the
    /// first up carries every request, one up after it closes unused, and
    /// a request found once the session is up opens nothing.
    #[test]
    fn connecting_per_request_opens_one_each_until_the_first_is_up() {
        let mut s = Scheduler::new(Policy::Multiplexed).connect_per_request();
        for r in 0..8 {
            s.discovered(r, "a.test");
        }
        s.discovered(8, "b.test");
        let opened = |actions: &[Action], pool: &str| {
            actions
                .iter()
                .filter(|a| matches!(a, Action::Open { pool: p, .. } if p == pool))
                .count()
        };
        let first = drain(&mut s);
        assert_eq!(opened(&first, "a.test"), PER_GROUP, "{first:?}");
        assert_eq!(opened(&first, "b.test"), 1);
        // The third of a.test's connections is up first: it is the session.
        s.connected(2, Some(100));
        let up = drain(&mut s);
        assert_eq!(sent(&up).len(), 8, "{up:?}");
        assert!(up.iter().all(|a| matches!(a, Action::Send { conn: 2, .. })));
        // The others close as they come up.
        s.connected(0, Some(100));
        assert_eq!(drain(&mut s), [Action::Close { conn: 0 }]);
        s.discovered(9, "a.test");
        assert_eq!(drain(&mut s), [Action::Send { conn: 2, req: 9 }]);
        // Only connections that carried a request count (as in Chromium's HAR).
        assert_eq!(s.connections(), 1);
        s.connected(PER_GROUP, Some(100));
        assert_eq!(
            drain(&mut s),
            [Action::Send {
                conn: PER_GROUP,
                req: 8
            }]
        );
        assert_eq!(s.connections(), 2);
        // Without it, one connection per host.
        let mut s = Scheduler::new(Policy::Multiplexed);
        for r in 0..8 {
            s.discovered(r, "a.test");
        }
        assert_eq!(drain(&mut s).len(), 1);
    }

    #[test]
    fn pipelining_puts_depth_requests_on_a_connection() {
        let mut s = Scheduler::new(Policy::PerHost { conns: 1, depth: 4 });
        for r in 0..6 {
            s.discovered(r, "a.test");
        }
        assert_eq!(drain(&mut s).len(), 1);
        s.connected(0, None);
        assert_eq!(drain(&mut s).len(), 4);
        s.finished(0);
        assert_eq!(drain(&mut s), vec![Action::Send { conn: 0, req: 4 }]);
    }

    #[test]
    fn h2_uses_one_connection_held_to_the_stream_limit() {
        let mut s = Scheduler::new(Policy::Multiplexed);
        for r in 0..10 {
            s.discovered(r, "198.18.1.1");
        }
        assert_eq!(drain(&mut s).len(), 1);
        s.connected(0, Some(3));
        assert_eq!(drain(&mut s).len(), 3);
        s.finished(0);
        s.finished(0);
        assert_eq!(drain(&mut s).len(), 2);
        assert_eq!(s.connections(), 1);
    }

    /// A session up takes what waited for it as Chromium's pools do: the
    /// request that opened it first of all, then by class and urgency, within an
    /// urgency in an order drawn from the seed (the same for the same seed, not always
    /// discovery order); requests found later go in discovery order.
    #[test]
    fn a_new_session_takes_its_waiting_requests_opener_first_then_by_class_in_no_set_order() {
        let order = |seed: u64| {
            let mut s = Scheduler::new(Policy::Multiplexed).resume_unordered(seed);
            let h = "a.test";
            // A stylesheet opens the connection; six head scripts (HIGH:
            // the same class, less urgent) and another stylesheet wait.
            s.urgency(0, 0);
            s.discovered_as(0, h, h, Class::LayoutBlocking, None);
            for script in 1..7 {
                s.urgency(script, 1);
                s.discovered_as(script, h, h, Class::LayoutBlocking, None);
            }
            s.urgency(7, 0);
            s.discovered_as(7, h, h, Class::LayoutBlocking, None);
            assert_eq!(drain(&mut s).len(), 1, "one connection");
            s.connected(0, Some(100));
            let mut order = sent(&drain(&mut s));
            s.discovered_as(8, h, h, Class::LayoutBlocking, None);
            s.discovered_as(9, h, h, Class::LayoutBlocking, None);
            order.extend(sent(&drain(&mut s)));
            order
        };
        let orders: Vec<Vec<ReqId>> = (0..16).map(order).collect();
        for o in &orders {
            assert_eq!(&o[..2], &[0, 7], "{o:?}");
            let mut scripts = o[2..8].to_vec();
            scripts.sort();
            assert_eq!(scripts, vec![1, 2, 3, 4, 5, 6], "{o:?}");
            assert_eq!(&o[8..], &[8, 9], "{o:?}");
        }
        assert_eq!(order(3), order(3));
        assert!(
            orders.iter().any(|o| o[2..8] != [1, 2, 3, 4, 5, 6]),
            "{orders:?}"
        );
        // An image that opened the connection still goes first: its own
        // job takes the session before the waiting requests are handed it.
        let mut s = Scheduler::new(Policy::Multiplexed).resume_unordered(1);
        s.tight_mode_over();
        s.discovered_as(0, "a.test", "a.test", Class::Delayable, None);
        s.discovered_as(1, "a.test", "a.test", Class::LayoutBlocking, None);
        drain(&mut s);
        s.connected(0, Some(100));
        assert_eq!(sent(&drain(&mut s)), vec![0, 1]);
        // Without it: discovery order within a class.
        let mut s = Scheduler::new(Policy::Multiplexed);
        for r in 0..4 {
            s.discovered_as(r, "a.test", "a.test", Class::LayoutBlocking, None);
        }
        drain(&mut s);
        s.connected(0, Some(100));
        assert_eq!(sent(&drain(&mut s)), vec![0, 1, 2, 3]);
    }

    fn sent(actions: &[Action]) -> Vec<ReqId> {
        actions
            .iter()
            .filter_map(|a| match a {
                Action::Send { req, .. } => Some(*req),
                _ => None,
            })
            .collect()
    }

    /// Over HTTP/1.1: a document, a head stylesheet and script (HIGH),
    /// then 12 images; until the body 2 images in flight, then up to the
    /// connections (6 per host).
    #[test]
    fn over_http1_two_images_until_the_body_then_the_connections_decide() {
        let mut s = Scheduler::new(Policy::PerHost { conns: 6, depth: 1 });
        let h = "a.test";
        s.discovered_as(0, h, h, Class::LayoutBlocking, None);
        drain(&mut s);
        s.connected(0, None);
        assert_eq!(sent(&drain(&mut s)), vec![0]);
        s.discovered_as(1, h, h, Class::LayoutBlocking, None);
        s.discovered_as(2, h, h, Class::LayoutBlocking, None);
        for img in 3..15 {
            s.discovered_as(img, h, h, Class::Delayable, None);
        }
        // Stylesheet, script and 2 images wait for 4 more connections.
        let opened = drain(&mut s);
        assert_eq!(opened.len(), 4, "{opened:?}");
        for c in 1..5 {
            s.connected(c, None);
        }
        assert_eq!(sent(&drain(&mut s)), vec![1, 2, 3, 4]);
        s.completed(0);
        s.finished(0);
        assert!(sent(&drain(&mut s)).is_empty(), "2 images in flight");
        s.completed(3);
        s.finished(3);
        assert_eq!(sent(&drain(&mut s)), vec![5]);
        // The head script ran: the parser is in the body.
        s.tight_mode_over();
        let mut acts = drain(&mut s);
        s.connected(5, None);
        acts.extend(drain(&mut s));
        assert_eq!(sent(&acts), vec![6, 7], "{acts:?}");
    }

    /// Both queues are by priority: held MEDIUM images go before LOW ones
    /// found earlier, and on HTTP/1.1 a stylesheet found late goes before the
    /// images waiting for a connection.
    #[test]
    fn medium_goes_before_low_and_high_before_both_on_a_busy_host() {
        let mut s = Scheduler::new(Policy::PerHost { conns: 1, depth: 1 });
        let h = "a.test";
        s.discovered_as(0, h, h, Class::LayoutBlocking, None);
        drain(&mut s);
        s.connected(0, None);
        assert_eq!(sent(&drain(&mut s)), vec![0]);
        s.tight_mode_over();
        for img in 1..4 {
            s.discovered_as(img, h, h, Class::Delayable, None);
        }
        s.discovered_as(4, h, h, Class::Normal, None);
        s.discovered_as(5, h, h, Class::LayoutBlocking, None);
        let mut order = Vec::new();
        for done in [0, 5, 4, 1, 2] {
            s.completed(done);
            s.finished(0);
            order.extend(sent(&drain(&mut s)));
        }
        assert_eq!(order, vec![5, 4, 1, 2, 3]);
    }

    /// In tight mode two MEDIUM requests go whatever else is in flight; a
    /// third waits for one of theirs, and the LOW ones for fewer than two in
    /// flight of any kind.
    #[test]
    fn in_tight_mode_two_medium_go_beside_the_two_low_then_medium_first() {
        let mut s = Scheduler::new(Policy::Multiplexed);
        s.discovered_as(0, "a.test", "a.test", Class::LayoutBlocking, None);
        drain(&mut s);
        s.connected(0, Some(100));
        drain(&mut s);
        for img in 1..5 {
            s.discovered_as(img, "a.test", "a.test", Class::Delayable, None);
        }
        assert_eq!(sent(&drain(&mut s)), vec![1, 2]);
        for medium in 5..8 {
            s.discovered_as(medium, "a.test", "a.test", Class::Normal, None);
        }
        assert_eq!(sent(&drain(&mut s)), vec![5, 6]);
        // A MEDIUM place frees: the third MEDIUM takes it, not a LOW.
        s.completed(5);
        s.finished(0);
        assert_eq!(sent(&drain(&mut s)), vec![7]);
        // Two LOW done: the four in flight are now two MEDIUM, at the limit.
        for low in [1, 2] {
            s.completed(low);
            s.finished(0);
        }
        assert!(sent(&drain(&mut s)).is_empty());
        s.completed(6);
        s.finished(0);
        assert_eq!(sent(&drain(&mut s)), vec![3]);
    }

    /// Blink's tight mode: until the body, 2 requests below HIGH in flight,
    /// on an h2 session that is up; then every one at once.
    #[test]
    fn until_the_body_two_images_are_in_flight_then_all() {
        let mut s = Scheduler::new(Policy::Multiplexed);
        s.discovered_as(0, "a.test", "a.test", Class::LayoutBlocking, None);
        drain(&mut s);
        s.connected(0, Some(100));
        drain(&mut s);
        s.discovered_as(1, "a.test", "a.test", Class::LayoutBlocking, None);
        for img in 2..12 {
            s.discovered_as(img, "a.test", "a.test", Class::Delayable, None);
        }
        assert_eq!(sent(&drain(&mut s)), vec![1, 2, 3]);
        s.completed(2);
        s.finished(0);
        assert_eq!(sent(&drain(&mut s)), vec![4]);
        s.completed(1);
        s.finished(0);
        assert!(sent(&drain(&mut s)).is_empty());
        s.tight_mode_over();
        assert_eq!(sent(&drain(&mut s)), (5..12).collect::<Vec<_>>());
    }

    /// A host's place on the one server address; of the page's site if it
    /// ends in site.test.
    fn at(host: &str) -> Join {
        Join {
            cross_site_frame: false,
            addr: "198.18.0.2".into(),
            same_site: host.ends_with("site.test"),
        }
    }

    /// The page's document, www.site.test, sent on session 0, up.
    fn page_up(s: &mut Scheduler) {
        s.discovered_as(
            0,
            "www.site.test",
            "www.site.test",
            Class::LayoutBlocking,
            None,
        );
        drain(s);
        s.opened(0, at("www.site.test"), true);
        s.connected(0, Some(100));
        assert_eq!(sent(&drain(s)), vec![0]);
    }

    /// `--pool chromium`: images of a third-party host found while no session
    /// to its address was up, held by Blink, join the one that came up while
    /// they waited (Chromium picks the session as the request starts); a
    /// third-party host never joins the page's own session.
    #[test]
    fn a_held_request_joins_a_session_up_by_the_time_it_goes() {
        let mut s = Scheduler::new(Policy::Multiplexed);
        page_up(&mut s);
        // A head script from a third party: its own session.
        s.discovered_as(1, "cdn.other", "cdn.other", Class::LayoutBlocking, None);
        // Images of two more third parties and of the site, found while
        // cdn.other's session is still opening: each named for its own host.
        s.discovered_as(
            2,
            "img.third",
            "img.third",
            Class::Delayable,
            Some(at("img.third")),
        );
        s.discovered_as(
            3,
            "ads.fourth",
            "ads.fourth",
            Class::Delayable,
            Some(at("ads.fourth")),
        );
        s.discovered_as(
            4,
            "i.site.test",
            "i.site.test",
            Class::Delayable,
            Some(at("i.site.test")),
        );
        let acts = drain(&mut s);
        let opens = |acts: &[Action]| {
            acts.iter()
                .filter_map(|a| match a {
                    Action::Open { pool, .. } => Some(pool.clone()),
                    _ => None,
                })
                .collect::<Vec<_>>()
        };
        // Two images may go (tight mode): no session they may share is up.
        assert_eq!(opens(&acts), vec!["cdn.other", "img.third", "ads.fourth"]);
        s.opened(1, at("cdn.other"), false);
        s.opened(2, at("img.third"), false);
        s.opened(3, at("ads.fourth"), false);
        s.connected(1, Some(100));
        s.tight_mode_over();
        // The site's image joins the page's session; none opens another.
        let acts = drain(&mut s);
        assert!(opens(&acts).is_empty(), "{acts:?}");
        assert!(acts.contains(&Action::Send { conn: 0, req: 4 }), "{acts:?}");
        // A third party found later joins the first third-party session up.
        s.discovered_as(
            5,
            "late.fifth",
            "late.fifth",
            Class::Delayable,
            Some(at("late.fifth")),
        );
        assert_eq!(drain(&mut s), vec![Action::Send { conn: 1, req: 5 }]);
    }

    /// A cross-site frame's document is in its own network partition: it
    /// joins no session of the page's, and the page's requests join none
    /// of its (Chromium: http-archive-2014's frames on new h2 connections).
    #[test]
    fn a_cross_site_frame_shares_no_session_with_the_page() {
        let mut s = Scheduler::new(Policy::Multiplexed);
        page_up(&mut s);
        s.discovered_as(1, "img.third", "img.third", Class::LayoutBlocking, None);
        drain(&mut s);
        s.opened(1, at("img.third"), false);
        s.connected(1, Some(100));
        drain(&mut s);
        let framed = Join {
            cross_site_frame: true,
            ..at("frame.third")
        };
        assert_eq!(s.joinable(&at("frame.third")).as_deref(), Some("img.third"));
        assert_eq!(s.joinable(&framed), None);
        s.discovered_as(
            2,
            "frame.third (cross-site frames)",
            "frame.third",
            Class::LayoutBlocking,
            Some(framed.clone()),
        );
        let acts = drain(&mut s);
        assert!(
            acts.contains(&Action::Open {
                conn: 2,
                pool: "frame.third (cross-site frames)".into()
            }),
            "{acts:?}"
        );
        s.opened(2, framed.clone(), false);
        s.connected(2, Some(100));
        drain(&mut s);
        // Another cross-site frame joins that session; a page's image does not.
        let other_frame = Join {
            cross_site_frame: true,
            ..at("frame2.third")
        };
        assert_eq!(
            s.joinable(&other_frame).as_deref(),
            Some("frame.third (cross-site frames)")
        );
        assert_eq!(s.joinable(&at("img2.third")).as_deref(), Some("img.third"));
    }

    /// A host whose own connection is being opened keeps its requests for
    /// it, even those let go after another host's session to its address
    /// came up: Chromium looks for the host's own session (and waits for
    /// the one it opens) before pooling by address. Youtube's images on
    /// i.ytimg.com, over h2 at 20 ms / 1 Mbit: Chromium sent every one on
    /// i.ytimg.com's connection; the model sent all but two on s.ytimg.com's,
    /// behind its scripts.
    #[test]
    fn a_host_opening_its_own_connection_waits_for_it() {
        let mut s = Scheduler::new(Policy::Multiplexed);
        page_up(&mut s);
        s.discovered_as(1, "s.third", "s.third", Class::LayoutBlocking, None);
        for req in [2, 3, 4] {
            s.discovered_as(
                req,
                "i.third",
                "i.third",
                Class::Delayable,
                Some(at("i.third")),
            );
        }
        // The script's host and the first two images' open a connection each.
        let acts = drain(&mut s);
        assert_eq!(acts.len(), 2, "{acts:?}");
        s.opened(1, at("s.third"), false);
        s.opened(2, at("i.third"), false);
        // s.third's session is up first, then tight mode ends: the
        // third image waits for its host's connection all the same.
        s.connected(1, Some(100));
        s.tight_mode_over();
        assert_eq!(drain(&mut s), vec![Action::Send { conn: 1, req: 1 }]);
        s.connected(2, Some(100));
        assert_eq!(sent(&drain(&mut s)), vec![2, 3, 4]);
    }

    /// Over QUIC (`pool_at_handshake`): third parties found together each
    /// open a connection; the first up takes them all, each other one closes
    /// as its handshake ends and its requests, and any found later for its
    /// host, go to the first. The page's own session stays the site's.
    #[test]
    fn over_quic_a_connection_up_after_another_to_its_address_closes_into_it() {
        let mut s = Scheduler::new(Policy::Multiplexed).pool_at_handshake();
        page_up(&mut s);
        s.tight_mode_over();
        for (req, host) in [(1, "a.third"), (2, "b.fourth"), (3, "c.fifth")] {
            s.discovered_as(req, host, host, Class::LayoutBlocking, Some(at(host)));
        }
        let acts = drain(&mut s);
        assert_eq!(acts.len(), 3, "{acts:?}");
        for (conn, host) in [(1, "a.third"), (2, "b.fourth"), (3, "c.fifth")] {
            s.opened(conn, at(host), false);
        }
        // b.fourth's handshake ends first: its request goes on it.
        s.connected(2, Some(100));
        assert_eq!(drain(&mut s), vec![Action::Send { conn: 2, req: 2 }]);
        // Then a.third's and c.fifth's: each closes, its request on conn 2.
        s.connected(1, Some(100));
        assert_eq!(
            drain(&mut s),
            vec![Action::Close { conn: 1 }, Action::Send { conn: 2, req: 1 }]
        );
        s.connected(3, Some(100));
        assert_eq!(
            drain(&mut s),
            vec![Action::Close { conn: 3 }, Action::Send { conn: 2, req: 3 }]
        );
        // A request to a.third found later, named for its own host, opens
        // nothing: it goes where a.third's connection went.
        s.discovered_as(4, "a.third", "a.third", Class::LayoutBlocking, None);
        assert_eq!(drain(&mut s), vec![Action::Send { conn: 2, req: 4 }]);
        assert_eq!(s.connections(), 2, "the page's and the first up");
        // Over h2 (no pooling at the handshake) each keeps its own.
        let mut h2 = Scheduler::new(Policy::Multiplexed);
        for (req, host) in [(0, "a.third"), (1, "b.fourth")] {
            h2.discovered_as(req, host, host, Class::LayoutBlocking, Some(at(host)));
            drain(&mut h2);
            h2.opened(req, at(host), false);
        }
        h2.connected(1, Some(100));
        h2.connected(0, Some(100));
        assert_eq!(sent(&drain(&mut h2)), vec![1, 0]);
    }

    /// Connects every connection opened in `acts`; returns what was sent,
    /// as (request, connection), in `acts` and after.
    fn connect_all(
        s: &mut Scheduler,
        acts: Vec<Action>,
        limit: Option<usize>,
    ) -> Vec<(ReqId, ConnId)> {
        let mut acts = acts;
        let mut sent = Vec::new();
        while !acts.is_empty() {
            let mut next = Vec::new();
            for a in acts {
                match a {
                    Action::Open { conn, .. } => {
                        s.connected(conn, limit);
                        next.extend(drain(s));
                    }
                    Action::Send { conn, req } => sent.push((req, conn)),
                    Action::Close { .. } => {}
                }
            }
            acts = next;
        }
        sent
    }

    /// A page past its head (Blink lets everything go) with a script and
    /// 20 images on one HTTP/1.1 host, 10 connections allowed: as
    /// Chromium's ResourceScheduler, 6 requests to the host in flight, the
    /// script counted; each that completes lets one image go. With no
    /// limits, the connections decide.
    #[test]
    fn over_http1_six_requests_to_a_host_go_while_the_script_loads() {
        let page = |limits: RequestLimits| {
            let mut s = Scheduler::with_limits(
                Policy::PerHost {
                    conns: 10,
                    depth: 1,
                },
                limits,
            );
            let h = "a.test";
            s.discovered_as(0, h, h, Class::LayoutBlocking, None);
            let acts = drain(&mut s);
            assert_eq!(connect_all(&mut s, acts, None), vec![(0, 0)]);
            s.completed(0);
            s.finished(0);
            s.tight_mode_over();
            s.discovered_as(1, h, h, Class::LayoutBlocking, None);
            for img in 2..22 {
                s.discovered_as(img, h, h, Class::Delayable, None);
            }
            let acts = drain(&mut s);
            let sent = connect_all(&mut s, acts, None);
            (s, sent)
        };
        let (mut s, went) = page(RequestLimits::Chromium);
        let reqs: Vec<ReqId> = went.iter().map(|(r, _)| *r).collect();
        assert_eq!(reqs, vec![1, 2, 3, 4, 5, 6], "the script and 5 images");
        assert_eq!(s.connections(), 6, "no connection for a held image");
        let on = |req: ReqId| went.iter().find(|(r, _)| *r == req).unwrap().1;
        s.completed(1);
        s.finished(on(1));
        assert_eq!(sent(&drain(&mut s)), vec![7], "the script's place");
        s.completed(2);
        s.finished(on(2));
        assert_eq!(sent(&drain(&mut s)), vec![8]);

        let (s, went) = page(RequestLimits::None);
        let reqs: Vec<ReqId> = went.iter().map(|(r, _)| *r).collect();
        assert_eq!(reqs, (1..11).collect::<Vec<_>>(), "one per connection");
        assert_eq!(s.connections(), 10);
    }

    /// On a page of many HTTP/1.1 hosts, 10 delayable requests in flight
    /// in all (each host far from its 6); a completed one lets the next go.
    #[test]
    fn ten_delayable_requests_in_flight_on_a_page_of_many_hosts() {
        let mut s = Scheduler::with_limits(
            Policy::PerHost { conns: 6, depth: 1 },
            RequestLimits::Chromium,
        );
        s.tight_mode_over();
        let hosts = ["a.test", "b.test", "c.test", "d.test"];
        for img in 0..20 {
            let h = hosts[img % 4];
            s.discovered_as(img, h, h, Class::Delayable, None);
        }
        let acts = drain(&mut s);
        let went = connect_all(&mut s, acts, None);
        let reqs: Vec<ReqId> = went.iter().map(|(r, _)| *r).collect();
        assert_eq!(reqs, (0..10).collect::<Vec<_>>());
        // A MEDIUM request (a late script) is delayable too: it waits.
        s.discovered_as(20, "e.test", "e.test", Class::Normal, None);
        assert!(drain(&mut s).is_empty());
        // A HIGH one is not.
        s.discovered_as(21, "a.test", "a.test", Class::LayoutBlocking, None);
        let acts = drain(&mut s);
        assert_eq!(acts.len(), 1, "a connection for it: {acts:?}");
        let (req, conn) = went[0];
        s.completed(req);
        s.finished(conn);
        // The HIGH one takes the freed connection; the MEDIUM one goes
        // before the images (the queue is by priority) and takes the place.
        let acts = drain(&mut s);
        assert_eq!(sent(&acts), vec![21], "{acts:?}");
        let e_conn = match acts.as_slice() {
            [_, Action::Open { conn, pool }] if pool == "e.test" => *conn,
            _ => panic!("a connection for e.test: {acts:?}"),
        };
        s.connected(e_conn, None);
        assert_eq!(sent(&drain(&mut s)), vec![20]);
        let mut s = Scheduler::with_limits(Policy::Multiplexed, RequestLimits::Chromium);
        let h = "a.test";
        s.discovered_as(0, h, h, Class::LayoutBlocking, None);
        let acts = drain(&mut s);
        assert_eq!(connect_all(&mut s, acts, Some(100)), vec![(0, 0)]);
        s.tight_mode_over();
        s.discovered_as(1, h, h, Class::LayoutBlocking, None);
        for img in 2..22 {
            s.discovered_as(img, h, h, Class::Delayable, None);
        }
        assert_eq!(sent(&drain(&mut s)), (1..22).collect::<Vec<_>>());

        let cdn = "cdn.test";
        for img in 22..30 {
            s.discovered_as(img, cdn, cdn, Class::Delayable, None);
        }
        let acts = drain(&mut s);
        assert_eq!(
            acts,
            vec![Action::Open {
                conn: 1,
                pool: cdn.into()
            }]
        );
        s.connected(1, Some(100));
        assert_eq!(sent(&drain(&mut s)), (22..28).collect::<Vec<_>>());
        // Its session is on record now: the next event lets the rest go.
        s.completed(22);
        s.finished(1);
        assert_eq!(sent(&drain(&mut s)), vec![28, 29]);
    }
}
