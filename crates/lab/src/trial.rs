//! What a Trial is made of: the server and client kinds, the ports of a
//! testbed's server, the knobs, the ONE answer to "can this server and client
//! run this Trial exactly as asked?" (`refusal`, used by compare, sweep, load
//! and bench alike), and the translation of choices into a testbed — the one
//! place where an RTT is split into one-way delays, a rate or a trace becomes
//! a link's service, and an experiment's Point becomes the settings of its
//! probes. The CLI's LINK flags and experiment files both come through here.

use link::{Bitrate, DirectionSpec, LinkSpec, LossModel, QueueSpec, Service, Trace};
pub use netns::{CongestionControl, TestbedSpec};
use proto::Protocol;
use results::experiment::{Knob, Point};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use client::headers::MAX_COOKIE_BYTES;
pub use client::{BrowserCost, Pool};
pub use client::{HeaderSet, RequestHeaders};
pub use results::{ClientKind, PeerKind, ServerKind, View};
pub use server::CertKind;
pub use server::Knobs as ServerKnobs;
pub use server::Push;

/// Ports of the server inside a testbed.
pub const HTTP_PORT: u16 = 80;
pub const HTTPS_PORT: u16 = 443;

/// Why a Trial cannot run exactly as asked: it is refused, never measured as
/// something else.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    Server { server: ServerKind, why: String },
    Client { client: ClientKind, why: String },
}

impl Refusal {
    /// The reason alone, without who refuses.
    pub fn why(&self) -> &str {
        match self {
            Refusal::Server { why, .. } | Refusal::Client { why, .. } => why,
        }
    }
}

/// Names the flag: `--server nginx: …` or `--client chromium: …`.
impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Server { server, why } => write!(f, "--server {}: {why}", server.name()),
            Refusal::Client { client, why } => write!(f, "--client {}: {why}", client.name()),
        }
    }
}

impl std::error::Error for Refusal {}

/// A link choice that contradicts itself or names a file that cannot be read;
/// the message names the flag (or the experiment's key).
#[derive(Debug, Clone, PartialEq)]
pub struct LinkError(pub String);

impl fmt::Display for LinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LinkError {}

/// The link as a user chose it, before RTTs are split and rates resolved.
/// A field is None when it was not given: a choice with any field given is
/// `shaped` and asks for a testbed. `T` is how a delivery trace is held: read
/// (`Arc<Trace>`, the default), or still a path as the flags gave it
/// (`LinkChoice<PathBuf>`, `link_flags::LinkFlags`).
#[derive(Debug, Clone)]
pub struct LinkChoice<T = Arc<Trace>> {
    /// A named profile (`--profile 3g-fast`): the rates and RTT of those
    /// fields below that were not given.
    pub profile: Option<&'static link::Profile>,
    pub rtt: Option<Duration>,
    pub delay_down: Option<Duration>,
    pub delay_up: Option<Duration>,
    pub rate: Option<Bitrate>,
    pub down: Option<Bitrate>,
    pub up: Option<Bitrate>,
    pub trace_down: Option<T>,
    pub trace_up: Option<T>,
    pub loss: Option<LossModel>,
    pub queue: Option<QueueSpec>,
    pub iw: Option<u32>,
    pub cc: Option<CongestionControl>,
    pub seed: Option<u64>,
    /// Competing flows sharing the bottleneck (`--cross-traffic cubic:2`).
    pub cross: Option<link::CrossTraffic>,
}

/// The seed of the loss processes when none is given.
pub const DEFAULT_LINK_SEED: u64 = 1;

pub fn congestion_control(name: &str) -> Option<CongestionControl> {
    [
        CongestionControl::Cubic,
        CongestionControl::Bbr,
        CongestionControl::Reno,
    ]
    .into_iter()
    .find(|c| c.name() == name)
}

impl<T> Default for LinkChoice<T> {
    /// Nothing given.
    fn default() -> Self {
        LinkChoice {
            profile: None,
            rtt: None,
            delay_down: None,
            delay_up: None,
            rate: None,
            down: None,
            up: None,
            trace_down: None,
            trace_up: None,
            loss: None,
            queue: None,
            iw: None,
            cc: None,
            seed: None,
            cross: None,
        }
    }
}

impl<T> LinkChoice<T> {
    /// The same choice with its traces turned by `read` (a path into a
    /// trace), which names the field it failed on.
    pub fn map_traces<U, E>(
        self,
        read: impl Fn(&'static str, T) -> Result<U, E>,
    ) -> Result<LinkChoice<U>, E> {
        Ok(LinkChoice {
            trace_down: self.trace_down.map(|t| read("trace_down", t)).transpose()?,
            trace_up: self.trace_up.map(|t| read("trace_up", t)).transpose()?,
            profile: self.profile,
            rtt: self.rtt,
            delay_down: self.delay_down,
            delay_up: self.delay_up,
            rate: self.rate,
            down: self.down,
            up: self.up,
            loss: self.loss,
            queue: self.queue,
            iw: self.iw,
            cc: self.cc,
            seed: self.seed,
            cross: self.cross,
        })
    }

    /// Whether any field was given: such a link is emulated on a testbed,
    /// and a command that cannot put one in the path must refuse it.
    pub fn shaped(&self) -> bool {
        self.given().next().is_some()
    }

    /// The fields that were given (`rtt`, `delay_down`, …, `seed`), in order.
    pub fn given(&self) -> impl Iterator<Item = &'static str> {
        [
            ("profile", self.profile.is_some()),
            ("rtt", self.rtt.is_some()),
            ("delay_down", self.delay_down.is_some()),
            ("delay_up", self.delay_up.is_some()),
            ("rate", self.rate.is_some()),
            ("down", self.down.is_some()),
            ("up", self.up.is_some()),
            ("trace_down", self.trace_down.is_some()),
            ("trace_up", self.trace_up.is_some()),
            ("loss", self.loss.is_some()),
            ("queue", self.queue.is_some()),
            ("iw", self.iw.is_some()),
            ("cc", self.cc.is_some()),
            ("seed", self.seed.is_some()),
            ("cross_traffic", self.cross.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
    }
}

impl LinkChoice {
    /// The testbed, or an error naming the fields through `name` (which turns
    /// `rtt`, `delay_down`, … into `--rtt` or `link.rtt`).
    pub fn testbed_spec(
        &self,
        shards: usize,
        name: &dyn Fn(&str) -> String,
    ) -> Result<TestbedSpec, LinkError> {
        let resolved = self.with_profile();
        let this = &resolved;
        let (down_delay, up_delay) = this.delays(name)?;
        let service = |trace: &Option<Arc<Trace>>, rate: Option<Bitrate>| match trace {
            Some(t) => Service::Trace(t.clone()),
            None => rate.map_or(Service::Unlimited, Service::Rate),
        };
        let direction = |service, delay| DirectionSpec {
            service,
            delay,
            loss: this.loss.unwrap_or_default(),
            queue: this.queue.unwrap_or_default(),
        };
        Ok(TestbedSpec {
            link: LinkSpec {
                down: direction(
                    service(&this.trace_down, this.down.or(this.rate)),
                    down_delay,
                ),
                up: direction(service(&this.trace_up, this.up.or(this.rate)), up_delay),
            },
            shards,
            iw: this.iw,
            cc: this.cc.unwrap_or(CongestionControl::Cubic),
            seed: this.seed.unwrap_or(DEFAULT_LINK_SEED),
            hosts: Vec::new(),
            warm_metrics: false,
            tcp_fastopen: false,
            cross: this.cross.clone().unwrap_or_default(),
        })
    }

    /// The choice with its profile's values in the fields not given: the RTT
    /// when no delay was given, each direction's rate when neither its rate,
    /// `rate` nor its trace was.
    fn with_profile(&self) -> LinkChoice {
        let mut c = self.clone();
        if let Some(p) = self.profile {
            if c.rtt.is_none() && c.delay_down.is_none() && c.delay_up.is_none() {
                c.rtt = Some(p.rtt);
            }
            if c.rate.is_none() {
                if c.down.is_none() && c.trace_down.is_none() {
                    c.down = Some(p.down);
                }
                if c.up.is_none() && c.trace_up.is_none() {
                    c.up = Some(p.up);
                }
            }
        }
        c
    }

    /// (down, up) one-way delays from rtt, delay_down and delay_up.
    fn delays(&self, name: &dyn Fn(&str) -> String) -> Result<(Duration, Duration), LinkError> {
        match (self.rtt, self.delay_down, self.delay_up) {
            (None, down, up) => Ok((down.unwrap_or_default(), up.unwrap_or_default())),
            (Some(rtt), None, None) => Ok((rtt / 2, rtt - rtt / 2)),
            (Some(rtt), Some(down), None) => {
                rtt.checked_sub(down).map(|up| (down, up)).ok_or_else(|| {
                    LinkError(format!(
                        "{} is longer than {}",
                        name("delay_down"),
                        name("rtt")
                    ))
                })
            }
            (Some(rtt), None, Some(up)) => {
                rtt.checked_sub(up).map(|down| (down, up)).ok_or_else(|| {
                    LinkError(format!(
                        "{} is longer than {}",
                        name("delay_up"),
                        name("rtt")
                    ))
                })
            }
            (Some(rtt), Some(down), Some(up)) if down + up == rtt => Ok((down, up)),
            (Some(_), Some(_), Some(_)) => Err(LinkError(format!(
                "{} disagrees with {} + {}; give the delays or the RTT",
                name("rtt"),
                name("delay_down"),
                name("delay_up")
            ))),
        }
    }
}

/// How many server addresses a site in `layout` is placed on: `shards`
/// (the addresses the origin layout's own hosts are spread over) for
/// `origin`, the layout's own count otherwise. `shards` above 1 with another
/// layout is refused: `shards:N` is where Fig. 8's shards are asked for.
/// `name` turns `shards`/`layout` into the flag or key.
pub fn addresses(
    layout: site::Layout,
    shards: usize,
    name: &dyn Fn(&str) -> String,
) -> Result<usize, String> {
    match layout.addresses() {
        None => Ok(shards),
        Some(n) if shards <= 1 => Ok(n),
        Some(_) => Err(format!(
            "{} {shards} spreads the origin layout's hosts over addresses; with {} {layout} it is not used (N host names, each its own address: {} shards:N)",
            name("shards"),
            name("layout"),
            name("layout"),
        )),
    }
}

pub use server::ServerDelay;

/// A server's think time from its text (`--server-delay`, `server_delay =`):
/// a duration (zero: none) or `from-har`.
pub fn parse_server_delay(s: &str) -> Result<ServerDelay, String> {
    if s == "from-har" {
        return Ok(ServerDelay::FromHar);
    }
    link::units::parse_duration(s)
        .map(|d| {
            if d.is_zero() {
                ServerDelay::None
            } else {
                ServerDelay::Fixed(d)
            }
        })
        .map_err(|e| format!("{e} (or from-har: each imported response's recorded wait)"))
}

/// Every knob of a Trial besides its site, protocols and link: one struct,
/// used by compare, crosscheck, sweeps, load and bench alike. Its defaults,
/// ranges and words are the experiment's (`results::experiment::FIELDS`,
/// section `knobs`): `Default` is those defaults, `set` checks a value against
/// its field and parses it, and the CLI's flags are made from the same table
/// (`spdylab::trial_args`). The built-in server's knobs (`served`) and the
/// model's (`model`) are handed down whole to the server and the client.
/// Adding a knob (docs/architecture.md, "Where to add a knob"): its FIELDS
/// entry (with who honours it), a field in `server::Knobs` or
/// `client::Knobs` (or here, for the lab's own), its arm in `set`, its use,
/// its line in docs/experiments.md.
#[derive(Debug, Clone, PartialEq)]
pub struct Trial {
    pub server: ServerKind,
    pub client: ClientKind,
    /// A probe that has not loaded the page by then fails.
    pub timeout: Duration,
    /// Origin layout only: server addresses the site's hosts are spread over.
    pub shards: usize,
    /// How the site's resources map to host names.
    pub layout: site::Layout,
    /// `<link rel=preload>` for the document's critical resources
    /// (`--preload`), a site transform applied where the layout is, after it.
    pub preload: site::Preload,
    /// The server's certificate.
    pub cert: CertKind,
    /// Keep the kernel's per-destination TCP metrics between probes.
    pub warm_metrics: bool,
    /// Which load a probe measures (`--view`): the first, the repeat one
    /// (the same client again, its cache and tickets kept), or both.
    pub view: View,
    /// The built-in server's knobs (a real server: as the capability table says).
    pub served: server::Knobs,
    /// The model client's knobs (Chromium: `refusal` says which it cannot
    /// take), handed down through `model_knobs`.
    pub model: client::Knobs,
    /// Chromium's knobs. `cpu_slowdown` lives here: Chromium throttles its
    /// own CPU, and the model, whose costs are fitted to this Chromium,
    /// scales them by the same factor (`model_knobs`).
    pub chromium: browser::Knobs,
}

/// The knobs `Trial::set` takes: the experiment's `knobs` section.
pub fn knob_fields() -> impl Iterator<Item = &'static results::experiment::Field> {
    results::experiment::FIELDS
        .iter()
        .filter(|f| f.section == "knobs")
}

/// A probe's timeout when none is given.
pub use results::experiment::DEFAULT_TIMEOUT;

/// `--max-streams` from `max_streams`: a knob's flag.
fn flag(key: &str) -> String {
    format!("--{}", key.replace('_', "-"))
}

impl Default for Trial {
    /// The built-in server and the model with every knob at its FIELDS default.
    fn default() -> Trial {
        let mut t = Trial {
            server: ServerKind::Builtin,
            client: ClientKind::Model,
            timeout: DEFAULT_TIMEOUT,
            shards: 1,
            layout: site::Layout::Origin,
            preload: site::Preload::None,
            cert: CertKind::default(),
            warm_metrics: false,
            view: View::First,
            served: server::Knobs::default(),
            model: client::Knobs::default(),
            chromium: browser::Knobs::default(),
        };
        for f in knob_fields() {
            // FIELDS' defaults are checked by a unit test: none fails.
            let _ = t.set(f.name, f.default);
        }
        t
    }
}

/// The model's knobs that say how it imitates Chromium (how it pools
/// connections, what its work costs, which requests it holds back): beside
/// the model (`crosscheck`, `compare --check`) Chromium does all three its
/// own way, so they go back to their defaults for it instead of refusing.
const CHROMIUMS_OWN_WAY: [Knob; 3] = [Knob::Pool, Knob::BrowserCost, Knob::RequestLimits];

impl Trial {
    /// What this Trial's knobs set in the kernel of its testbed: the TCP
    /// metrics kept or not, TCP Fast Open on or not.
    pub fn shape_testbed(&self, testbed: &mut netns::TestbedSpec) {
        testbed.warm_metrics = self.warm_metrics;
        testbed.tcp_fastopen = self.served.tcp_fastopen;
    }

    /// This Trial as Chromium loads it beside the model: the client
    /// Chromium, and the model's imitations of Chromium (`CHROMIUMS_OWN_WAY`)
    /// at their defaults. Another model-only knob set stays, and Chromium
    /// refuses it (`refusal`): it changes what is loaded, not how the model
    /// imitates the browser.
    pub fn for_chromium(&self) -> Trial {
        let mut t = Trial {
            client: ClientKind::Chromium,
            ..self.clone()
        };
        for knob in CHROMIUMS_OWN_WAY {
            // FIELDS' defaults are checked by a unit test: none fails.
            let _ = t.set_knob(knob, knob.field().default);
        }
        t
    }

    /// Sets knob `key` (a FIELDS name of section `knobs`) from its text: the
    /// field's range or choices first, then the typed parse. The error names
    /// neither key nor source: the caller adds `--max-streams` or `knobs.max_streams`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let knob = Knob::named(key).ok_or_else(|| format!("unknown knob '{key}'"))?;
        self.set_knob(knob, value)
    }

    /// Sets `knob` from its text, as `set` does. One arm per knob, no other:
    /// a knob added to FIELDS (`results::experiment::Knob`) and not here
    /// does not compile.
    pub fn set_knob(&mut self, knob: Knob, value: &str) -> Result<(), String> {
        let v =
            results::experiment::canonical(knob.field().kind, value).map_err(|e| e.to_string())?;
        let int = || -> i64 { v.parse().unwrap_or_default() };
        let on = v == "on";
        match knob {
            Knob::Shards => self.shards = int() as usize,
            Knob::MaxStreams => self.served.max_streams = int() as u32,
            // The server's versions; the model offers them (`tls13_only`).
            Knob::Tls => {
                self.served.tls = server::TlsVersions::from_tls13_only(match v.as_str() {
                    "1.3" => Some(true),
                    "1.2" => Some(false),
                    _ => None,
                })
            }
            Knob::ConnsPerHost => self.model.conns_per_host = int() as usize,
            Knob::Depth => self.model.depth = int() as usize,
            Knob::ServerDelay => self.served.delay = parse_server_delay(&v)?,
            Knob::Layout => self.layout = v.parse()?,
            Knob::Cert => self.cert = v.parse()?,
            // The model keeps its sessions (`tls_resume()`) when the server
            // issues tickets: one fact.
            Knob::TlsResume => self.served.tickets = on,
            Knob::Headers => self.model.headers.set = v.parse()?,
            Knob::CookieBytes => self.model.headers.cookie_bytes = int() as usize,
            Knob::WarmMetrics => self.warm_metrics = on,
            Knob::Screencast => self.chromium.screencast = on,
            Knob::Pool => self.model.pool = v.parse()?,
            Knob::BrowserCost => self.model.browser_cost = v.parse()?,
            Knob::RequestLimits => self.model.request_limits = v.parse()?,
            Knob::CpuSlowdown => self.chromium.cpu_slowdown = int() as u32,
            Knob::NotsentLowat => {
                self.served.notsent_lowat = (v != "default").then(|| int() as u32)
            }
            Knob::TcpPacing => self.served.tcp_pacing = on,
            Knob::ServerPriorities => {
                self.served.priorities = match on {
                    true => proto::priority::Policy::Honour,
                    false => proto::priority::Policy::Ignore,
                }
            }
            Knob::ServerThink => {
                self.served.think = link::units::parse_duration(&v).map_err(|e| e.to_string())?
            }
            Knob::EarlyHints => self.served.early_hints = on,
            Knob::Push => self.served.push = v.parse()?,
            Knob::Preload => self.preload = v.parse()?,
            Knob::EarlyData => self.chromium.tls_early_data = on,
            Knob::RepeatCache => self.chromium.clear_cache_before_repeat = v == "clear",
            Knob::QuicIw => self.served.quic_iw = (v != "default").then(|| int() as u32),
            // One fact for three ends: the testbed's kernels, the server's
            // listeners, the model's sockets.
            Knob::TcpFastOpen => {
                self.served.tcp_fastopen = on;
                self.model.tcp_fastopen = on;
            }
            Knob::QuicAckFrequency => {
                self.served.quic_ack_frequency = (v != "default").then(|| int() as u32)
            }
            Knob::QuicHystart => self.served.quic_hystart = on,
            Knob::QuicCc => {
                self.served.quic_cc = ["cubic", "reno", "bbr"].into_iter().find(|cc| *cc == v)
            }
            // A repeat view's server takes QUIC 0-RTT: one fact, the view.
            Knob::View => {
                self.view = v.parse().map_err(|e: results::UnknownName| e.to_string())?;
                self.served.early_data = self.view.loads_twice();
            }
        }
        Ok(())
    }

    /// The model's knobs as handed to it: its browser costs slowed by the
    /// client's CPU (`chromium.cpu_slowdown`).
    pub fn model_knobs(&self) -> client::Knobs {
        client::Knobs {
            browser_cost: self.model.browser_cost.slowed(self.chromium.cpu_slowdown),
            ..self.model
        }
    }

    /// The TLS versions asked for (`--tls`): only 1.3 (Some(true)), only 1.2
    /// (Some(false)), or either. Held once, as the server's (`served.tls`);
    /// the model and a real server are given these.
    pub fn tls13_only(&self) -> Option<bool> {
        self.served.tls.tls13_only()
    }

    /// Whether the model resumes TLS sessions of earlier probes of the Trial
    /// (`--tls-resume`): the server issues tickets and the client keeps them.
    pub fn tls_resume(&self) -> bool {
        self.served.tickets
    }

    /// Which load a probe measures (`--view first|repeat|both`, issue 38;
    /// docs/repeat-view.md): `first`, a cold client; `repeat`, the same
    /// client's second load after its connections closed, its HTTP cache,
    /// TLS tickets and QUIC 0-RTT kept; `both`, the two from one probe.
    pub fn view(&self) -> View {
        self.view
    }

    /// The Trial of an experiment's Point: every knob it sets, the rest at
    /// their defaults; an error names the key (`knobs.pool: …`).
    pub fn of_point(p: &Point) -> Result<Trial, String> {
        let mut t = Trial::default();
        for f in knob_fields() {
            if let Some(v) = p.get(f.name).filter(|v| !v.is_empty()) {
                t.set(f.name, v)
                    .map_err(|e| format!("knobs.{}: {e}", f.name))?;
            }
        }
        Ok(t)
    }

    /// The knobs set away from their defaults, in FIELDS' order: those a
    /// server or client that honours only the defaults must refuse.
    pub fn changed_knobs(&self) -> impl Iterator<Item = &'static results::experiment::Field> + '_ {
        knob_fields().filter(move |f| {
            let mut at_default = self.clone();
            at_default.set(f.name, f.default).is_ok() && at_default != *self
        })
    }

    /// What a knob asks of the site that this site cannot give: `server_delay
    /// = from-har` waits as each imported response recorded, so it needs an
    /// imported page. `name` turns `server_delay` into the flag or key.
    pub fn site_refusal(&self, site: &site::Site, name: &dyn Fn(&str) -> String) -> Option<String> {
        (self.served.delay == ServerDelay::FromHar && !site.is_recorded()).then(|| {
            format!(
                "{} from-har: site {} is not an imported page (give a .har file or an imported directory)",
                name("server_delay"),
                site.name
            )
        })
    }

    /// Why this Trial's server or client cannot run `protocols` on a site of
    /// `resources` exactly as asked.
    pub fn refusal(&self, protocols: &[Protocol], resources: usize) -> Option<Refusal> {
        self.refusal_for(Some(self.client), protocols, resources)
    }

    /// Why this Trial's server (and `client`, when the command loads pages
    /// with one: load and bench have their own generators) cannot run
    /// `protocols` on a site of `resources` as asked, if one cannot — from
    /// the capability table (`peers::Program::capabilities`), the browser's
    /// limits and who honours each knob set away from its default (FIELDS'
    /// `only`). The first protocol that is refused, the server before the
    /// client: the ONE answer, used by compare, sweep, load and bench alike.
    pub fn refusal_for(
        &self,
        client: Option<ClientKind>,
        protocols: &[Protocol],
        resources: usize,
    ) -> Option<Refusal> {
        use peers::Program;
        use results::experiment::Only;
        let server = self.server;
        let peer_knobs = peers::Knobs {
            max_streams: self.served.max_streams,
            tls13_only: self.tls13_only(),
            server_delay: self.served.delay.is_some(),
            resources,
        };
        let changed: Vec<_> = self.changed_knobs().collect();
        protocols.iter().find_map(|p| {
            let by_server = match server {
                _ if *p == Protocol::H3 && self.tls13_only() == Some(false) => Some(
                    "h3 runs TLS 1.3 inside QUIC (RFC 9001), never TLS 1.2: drop h3 or --tls 1.2"
                        .to_string(),
                ),
                ServerKind::Builtin => self.builtin_refuses(*p),
                ServerKind::Peer(k) => k
                    .refuses(*p, &peer_knobs)
                    .or_else(|| {
                        changed.iter().find_map(|f| match f.only {
                            Only::BuiltinServer(why) | Only::BuiltinServerAndModel(why, _) => {
                                Some(format!("{why}: {} needs --server builtin", flag(f.name)))
                            }
                            _ => None,
                        })
                    })
                    .or_else(|| {
                        (self.served.push != server::Push::None).then(|| {
                            format!(
                                "the configurations generated for the real servers push nothing (nginx removed http2_push in 1.25.1; Apache's H2PushResource and h2o's push need Link headers per page, not generated): {} needs --server builtin",
                                flag("push")
                            )
                        })
                    }),
            };
            let by_client = || match client {
                None | Some(ClientKind::Model) => None,
                Some(ClientKind::Chromium) => {
                    browser::refuses(*p).map(str::to_string).or_else(|| {
                        changed.iter().find_map(|f| match f.only {
                            Only::ModelClient(why) | Only::BuiltinServerAndModel(_, why) => {
                                Some(format!("{why}: {} needs --client model", flag(f.name)))
                            }
                            _ => None,
                        })
                    })
                }
            };
            by_server
                .map(|why| Refusal::Server { server, why })
                .or_else(|| {
                    by_client().map(|why| Refusal::Client {
                        client: client.unwrap_or(ClientKind::Model),
                        why,
                    })
                })
        })
    }
}

impl Trial {
    /// What the built-in server cannot do of this Trial's knobs on
    /// `protocol`: 103 Early Hints are h2's, h2c's and h3's here, push h2's,
    /// h2c's and SPDY's.
    fn builtin_refuses(&self, protocol: Protocol) -> Option<String> {
        use Protocol::*;
        let h1 = matches!(protocol, Http | HttpPipelined | Https | HttpsPipelined);
        if self.served.early_hints {
            let why = match protocol {
                _ if h1 => Some("hyper 1's HTTP/1.1 server cannot send a 1xx response other than its own 100 Continue (and Chromium acts on 103 only over h2 and h3)"),
                Spdy3 => Some("SPDY/3.1 has no 1xx responses, so no 103 Early Hints"),
                _ => None,
            };
            if let Some(why) = why {
                return Some(format!("{why}: --early-hints on needs h2, h2c or h3"));
            }
        }
        if self.served.push != server::Push::None {
            let why = match protocol {
                _ if h1 => Some("HTTP/1.1 has no server push"),
                H3 => Some(
                    "quinn and the h3 crate here have no server push (PUSH_PROMISE, MAX_PUSH_ID)",
                ),
                _ => None,
            };
            if let Some(why) = why {
                return Some(format!("{why}: --push needs h2, h2c or spdy3"));
            }
        }
        None
    }
}

/// Everything a probe of one Point needs besides the site and protocols.
#[derive(Debug, Clone)]
pub struct Settings {
    pub site: String,
    pub testbed: TestbedSpec,
    pub trial: Trial,
}

/// A Point's settings; its values were checked when the experiment was parsed,
/// so an error here names the axis and means the values contradict each other.
pub fn settings(p: &Point, seed: u64) -> Result<Settings, String> {
    let text = |k: &str| p.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let duration = |k: &str| -> Result<Option<Duration>, String> {
        text(k)
            .map(|v| link::units::parse_duration(v).map_err(|e| format!("link.{k}: {e}")))
            .transpose()
    };
    let rate = |k: &str| -> Result<Option<Bitrate>, String> {
        match text(k) {
            None | Some("unlimited") => Ok(None),
            Some(v) => v.parse().map(Some).map_err(|e| format!("link.{k}: {e}")),
        }
    };
    let choice: LinkChoice = LinkChoice {
        profile: match text("profile") {
            None => None,
            Some(v) => {
                Some(link::profile(v).ok_or_else(|| format!("link.profile: no profile '{v}'"))?)
            }
        },
        rtt: duration("rtt")?,
        delay_down: duration("delay_down")?,
        delay_up: duration("delay_up")?,
        rate: rate("rate")?,
        down: rate("down")?,
        up: rate("up")?,
        trace_down: None,
        trace_up: None,
        loss: match text("loss") {
            None => None,
            Some(v) => Some(
                v.parse::<LossModel>()
                    .map_err(|e| format!("link.loss: {e}"))?,
            ),
        },
        queue: match text("queue") {
            None => None,
            Some(v) => Some(
                v.parse::<QueueSpec>()
                    .map_err(|e| format!("link.queue: {e}"))?,
            ),
        },
        iw: match text("iw") {
            None | Some("default") => None,
            Some(v) => Some(
                v.parse()
                    .map_err(|_| format!("link.iw: '{v}' is not an integer"))?,
            ),
        },
        cc: text("cc").and_then(congestion_control),
        seed: Some(seed),
        cross: match text("cross_traffic") {
            None => None,
            Some(v) => Some(v.parse().map_err(|e| format!("link.cross_traffic: {e}"))?),
        },
    };
    let trial = Trial::of_point(p)?;
    let shards = addresses(trial.layout, trial.shards, &|k| format!("knobs.{k} ="))?;
    let mut testbed = choice
        .testbed_spec(shards, &|k| format!("link.{k}"))
        .map_err(|e| e.0)?;
    trial.shape_testbed(&mut testbed);
    Ok(Settings {
        site: text("site").unwrap_or_default().to_string(),
        testbed,
        trial,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(pairs: &[(&str, &str)]) -> Point {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// A value of field `f` other than its default, that `set` takes.
    fn another_value(f: &results::experiment::Field) -> String {
        use results::experiment::Kind;
        match f.kind {
            Kind::Int { min, max, .. } => [min, max].map(|v| v.to_string()),
            Kind::Duration | Kind::Delay => ["5ms", "5ms"].map(String::from),
            Kind::Layout => ["mirror", "mirror"].map(String::from),
            Kind::Text(_) => ["none", "none"].map(String::from),
            k => {
                let choices = k.choices().expect("a knob's kind is one of the above");
                [choices[0], choices[choices.len() - 1]].map(String::from)
            }
        }
        .into_iter()
        .find(|v| v != f.default)
        .unwrap_or_else(|| panic!("{}: no value but its default", f.name))
    }

    /// Beside the model, Chromium runs with the model's imitations of it
    /// (pool, browser costs, request limits) at their defaults and refuses
    /// another model-only knob; every other knob is left as set.
    #[test]
    fn chromium_beside_the_model_drops_the_models_imitations_only() {
        let mut model = Trial::default();
        for knob in CHROMIUMS_OWN_WAY {
            model.set_knob(knob, &another_value(knob.field())).unwrap();
        }
        model.set("max_streams", "10").unwrap();
        let chromium = model.for_chromium();
        assert_eq!(chromium.client, ClientKind::Chromium);
        assert_eq!(chromium.model, Trial::default().model);
        assert_eq!(chromium.served.max_streams, 10);
        assert_eq!(chromium.refusal(&[Protocol::H2], 10), None);
        model.set("conns_per_host", "2").unwrap();
        let why = model.for_chromium().refusal(&[Protocol::H2], 10).unwrap();
        assert!(why.to_string().contains("--conns-per-host"), "{why}");
    }

    /// Each knob's FIELDS row names its holder (`Field::holder`, what
    /// `serve` and `load` take as flags): setting the knob away from its
    /// default changes that struct of the Trial, and no other's (the lab's
    /// `view` also tells the server to take 0-RTT: one fact).
    #[test]
    fn each_knob_is_held_where_its_row_says() {
        use results::experiment::Holder;
        for f in knob_fields() {
            let (d, mut t) = (Trial::default(), Trial::default());
            let value = another_value(f);
            t.set(f.name, &value)
                .unwrap_or_else(|e| panic!("{}: {value}: {e}", f.name));
            let lab = |t: &Trial| Trial {
                served: server::Knobs::default(),
                model: client::Knobs::default(),
                chromium: browser::Knobs::default(),
                ..t.clone()
            };
            let changed = [
                (Holder::Lab, lab(&t) != lab(&d)),
                (Holder::BuiltinServer, t.served != d.served),
                (Holder::Model, t.model != d.model),
                (Holder::Chromium, t.chromium != d.chromium),
            ];
            let changed: Vec<_> = changed.iter().filter(|c| c.1).map(|c| c.0).collect();
            let expected = match f.name {
                "view" => vec![Holder::Lab, Holder::BuiltinServer],
                "tcp_fastopen" => vec![Holder::BuiltinServer, Holder::Model],
                _ => vec![f.holder],
            };
            assert_eq!(changed, expected, "{} = {value}", f.name);
        }
    }

    /// Every FIELDS default is a value `set` takes, and `Default` is them.
    #[test]
    fn the_defaults_are_the_tables() {
        let mut t = Trial::default();
        for f in knob_fields() {
            t.set(f.name, f.default)
                .unwrap_or_else(|e| panic!("{}: default {}: {e}", f.name, f.default));
        }
        assert_eq!(t, Trial::default());
        let d = Trial::default();
        assert_eq!(
            (
                d.served.max_streams,
                d.model.conns_per_host,
                d.model.depth,
                d.shards
            ),
            (100, 6, 8, 1)
        );
        assert_eq!(d.tls13_only(), None);
        assert_eq!(d.served.delay, ServerDelay::None);
        assert_eq!(d.served.notsent_lowat, None);
        assert_eq!(d.layout, site::Layout::Origin);
        assert!(!d.tls_resume() && !d.warm_metrics);
        // The server's and the model's own defaults (for those that start
        // them without a Trial) are the table's.
        assert_eq!(d.served, server::Knobs::default());
        assert_eq!(d.model, client::Knobs::default());
        assert_eq!(d.chromium, browser::Knobs::default());
        assert_eq!(d.changed_knobs().count(), 0);
        assert_eq!(
            (d.server, d.client),
            (ServerKind::Builtin, ClientKind::Model)
        );
        assert_eq!(Trial::of_point(&Point::new()).unwrap(), d);
    }

    /// One range per knob: the table's, for flags and files alike.
    #[test]
    fn values_out_of_range_or_form_are_refused() {
        let mut t = Trial::default();
        for (k, bad) in [
            ("max_streams", "0"),
            ("max_streams", "1000001"),
            ("conns_per_host", "0"),
            ("depth", "129"),
            ("shards", "255"),
            ("cookie_bytes", "-1"),
            ("tls", "1.1"),
            ("server_delay", "later"),
            ("layout", "shards:0"),
            ("cert", "dsa"),
            ("pool", "per-street"),
            ("browser_cost", ""),
            ("browser_cost", "parse=3"),
            ("headers", "chrome2030"),
            ("tls_resume", "yes"),
            ("notsent_lowat", "0"),
            ("cpu_slowdown", "0"),
            ("cpu_slowdown", "21"),
            ("notsent_lowat", "off"),
            ("notsent_lowat", "67108865"),
        ] {
            assert!(t.set(k, bad).is_err(), "{k} = {bad} was taken");
        }
        assert_eq!(t, Trial::default(), "a refused value changes nothing");
        assert!(t.set("no_such_knob", "1").is_err());
        // The link's axes are not knobs.
        assert!(t.set("rtt", "10ms").is_err());
    }

    #[test]
    fn a_point_sets_its_knobs_and_names_a_bad_one() {
        let t = Trial::of_point(&point(&[
            ("site", "youtube"),
            ("rtt", "150ms"),
            ("max_streams", "6"),
            ("server_delay", "from-har"),
            ("tls", "1.2"),
            ("browser_cost", "none"),
            ("cookie_bytes", "200"),
        ]))
        .unwrap();
        assert_eq!(t.served.max_streams, 6);
        assert_eq!(t.served.delay, ServerDelay::FromHar);
        assert!(t.served.delay.is_some());
        assert_eq!(t.tls13_only(), Some(false));
        assert_eq!(t.served.tls, server::TlsVersions::Only12);
        assert_eq!(t.model.browser_cost, BrowserCost::NONE);
        assert_eq!(t.model.headers.cookie_bytes, 200);
        assert_eq!(
            t.changed_knobs().map(|f| f.name).collect::<Vec<_>>(),
            [
                "max_streams",
                "tls",
                "server_delay",
                "cookie_bytes",
                "browser_cost"
            ]
        );
        let e = Trial::of_point(&point(&[("pool", "nope")])).unwrap_err();
        assert!(e.starts_with("knobs.pool: "), "{e}");
        // A zero delay is no delay.
        let mut t = Trial::default();
        t.set("server_delay", "0ms").unwrap();
        assert!(!t.served.delay.is_some());
        t.set("notsent_lowat", "16384").unwrap();
        assert_eq!(t.served.notsent_lowat, Some(16384));
        t.set("notsent_lowat", "default").unwrap();
        assert_eq!(t.served.notsent_lowat, None);
    }

    /// The Trial's refusals: what a real server or Chromium cannot do.
    #[test]
    fn refusals_name_who_refuses_and_why() {
        let h3 = [Protocol::H3];
        let mut t = Trial::default();
        assert_eq!(t.refusal(&h3, 10), None);
        t.set("tls", "1.2").unwrap();
        assert!(matches!(t.refusal(&h3, 10), Some(Refusal::Server { .. })));
        let mut t = Trial {
            client: ClientKind::Chromium,
            ..Trial::default()
        };
        assert_eq!(t.refusal(&[Protocol::H2], 10), None);
        for (k, v) in [
            ("conns_per_host", "2"),
            ("tls_resume", "on"),
            ("pool", "per-host"),
            ("browser_cost", "none"),
        ] {
            let mut c = t.clone();
            c.set(k, v).unwrap();
            let r = c.refusal(&[Protocol::H2], 10).expect(k);
            assert!(matches!(r, Refusal::Client { .. }), "{k}: {r}");
            assert!(r.to_string().starts_with("--client chromium: "), "{r}");
        }
        t.server = ServerKind::Peer(PeerKind::Nginx);
        let r = t
            .refusal(&[Protocol::Spdy3], 10)
            .expect("nginx has no spdy3");
        assert!(r.to_string().starts_with("--server nginx: "), "{r}");
        // A knob only the built-in server honours, set on a real one: refused
        // by FIELDS' `only`, with no code of its own.
        assert_eq!(t.refusal(&[Protocol::H2], 10), None);
        t.set("notsent_lowat", "16384").unwrap();
        let r = t.refusal(&[Protocol::H2], 10).expect("nginx");
        assert_eq!(
            r.to_string(),
            "--server nginx: a real server here has no setting for TCP_NOTSENT_LOWAT: --notsent-lowat needs --server builtin"
        );
    }

    /// Issue 37's knobs: parsed by `set`, refused where they cannot be done
    /// (by protocol on the built-in server, by Chromium, by real servers).
    #[test]
    fn early_hints_push_think_and_preload_are_set_and_refused_where_they_cannot_be() {
        let mut t = Trial::default();
        t.set("server_think", "300ms").unwrap();
        t.set("early_hints", "on").unwrap();
        t.set("push", "critical").unwrap();
        t.set("preload", "critical").unwrap();
        assert_eq!(t.served.think, Duration::from_millis(300));
        assert!(t.served.early_hints);
        assert_eq!(t.served.push, server::Push::Critical);
        assert_eq!(t.preload, site::Preload::Critical);
        assert!(t.set("push", "some").is_err());
        assert!(t.set("server_think", "soon").is_err());
        let names: Vec<&str> = t.changed_knobs().map(|f| f.name).collect();
        assert_eq!(names, ["server_think", "early_hints", "push", "preload"]);

        let why = |t: &Trial, p: Protocol| t.refusal(&[p], 10).map(|r| r.to_string());
        let mut hints = Trial::default();
        hints.set("early_hints", "on").unwrap();
        assert_eq!(why(&hints, Protocol::H2), None);
        assert_eq!(why(&hints, Protocol::H2c), None);
        assert!(why(&hints, Protocol::Https)
            .unwrap()
            .contains("hyper 1's HTTP/1.1 server cannot send a 1xx"));
        assert!(why(&hints, Protocol::Spdy3)
            .unwrap()
            .contains("SPDY/3.1 has no 1xx"));
        assert_eq!(why(&hints, Protocol::H3), None);
        let chromium = Trial {
            client: ClientKind::Chromium,
            ..hints.clone()
        };
        // Chromium acts on 103 (the probe keeps its cache on then: the
        // preloads reach the page through it).
        assert_eq!(why(&chromium, Protocol::H2), None);
        let nginx = Trial {
            server: ServerKind::Peer(PeerKind::Nginx),
            ..hints
        };
        assert!(why(&nginx, Protocol::H2)
            .unwrap()
            .contains("--early-hints needs --server builtin"));

        let mut push = Trial::default();
        push.set("push", "all").unwrap();
        assert_eq!(why(&push, Protocol::H2), None);
        assert_eq!(why(&push, Protocol::Spdy3), None);
        assert!(why(&push, Protocol::Http)
            .unwrap()
            .contains("HTTP/1.1 has no server push"));
        assert!(why(&push, Protocol::H3).unwrap().contains("no server push"));
        let chromium = Trial {
            client: ClientKind::Chromium,
            ..push.clone()
        };
        let r = why(&chromium, Protocol::H2).unwrap();
        assert!(
            r.starts_with("--client chromium: Chromium removed HTTP/2 server push"),
            "{r}"
        );
        let apache = Trial {
            server: ServerKind::Peer(PeerKind::Apache),
            ..push
        };
        assert!(why(&apache, Protocol::H2)
            .unwrap()
            .contains("--push needs --server builtin"));

        // Preload is the page's own: every server and client take it.
        let mut preload = Trial {
            client: ClientKind::Chromium,
            server: ServerKind::Peer(PeerKind::Nginx),
            ..Trial::default()
        };
        preload.set("preload", "critical").unwrap();
        assert_eq!(why(&preload, Protocol::H2), None);
    }

    /// Issue 38's view: first by default, set by `set`, taken by Chromium
    /// (one profile across the two loads) and by real servers (the model
    /// keeps whatever they send).
    #[test]
    fn view_is_set_and_every_client_takes_a_repeat_view() {
        assert_eq!(Trial::default().view(), View::First);
        let mut t = Trial::default();
        t.set("view", "both").unwrap();
        assert_eq!(t.view(), View::Both);
        t.set("view", "repeat").unwrap();
        assert_eq!(t.view(), View::Repeat);
        let e = t.set("view", "second").unwrap_err();
        assert!(
            e.contains("'second' is not one of first, repeat, both"),
            "{e}"
        );
        let why = |t: &Trial, p: Protocol| t.refusal(&[p], 10).map(|r| r.to_string());
        assert_eq!(why(&t, Protocol::H3), None);
        let nginx = Trial {
            server: ServerKind::Peer(PeerKind::Nginx),
            ..t.clone()
        };
        assert_eq!(why(&nginx, Protocol::H2), None);
        let chromium = Trial {
            client: ClientKind::Chromium,
            ..t
        };
        assert_eq!(why(&chromium, Protocol::H2), None);
        assert_eq!(why(&chromium, Protocol::H3), None);
    }

    #[test]
    fn early_data_and_quic_cc_reach_chromium_the_model_and_the_server() {
        let t = Trial::default();
        assert!(!t.chromium.tls_early_data, "stock Chromium's default");
        assert_eq!(t.served.quic_cc, None);
        let mut t = Trial::default();
        t.set("early_data", "on").unwrap();
        assert!(t.chromium.tls_early_data);
        t.set("quic_cc", "bbr").unwrap();
        assert_eq!(t.served.quic_cc, Some("bbr"));
        t.set("quic_cc", "same").unwrap();
        assert_eq!(t.served.quic_cc, None);
        t.set("quic_iw", "10").unwrap();
        assert_eq!(t.served.quic_iw, Some(10));
        t.set("quic_iw", "default").unwrap();
        assert_eq!(t.served.quic_iw, None);
        assert!(t.set("quic_iw", "0").is_err());
        t.set("quic_ack_frequency", "10").unwrap();
        assert_eq!(t.served.quic_ack_frequency, Some(10));
        t.set("quic_ack_frequency", "default").unwrap();
        assert_eq!(t.served.quic_ack_frequency, None);
        assert!(t.set("quic_ack_frequency", "0").is_err());
        assert!(!Trial::default().served.quic_hystart);
        t.set("quic_hystart", "on").unwrap();
        assert!(t.served.quic_hystart);
        assert!(t.set("quic_hystart", "hybrid").is_err());
        assert!(t.set("quic_cc", "vegas").is_err());
        t.set("quic_cc", "reno").unwrap();
        let why = |t: &Trial, p: Protocol| t.refusal(&[p], 10).map(|r| r.to_string());
        let caddy = Trial {
            server: ServerKind::Peer(PeerKind::Caddy),
            ..t.clone()
        };
        let refused = why(&caddy, Protocol::H3).unwrap_or_default();
        assert!(refused.contains("quic-go"), "{refused}");
        let chromium = Trial {
            client: ClientKind::Chromium,
            ..t
        };
        assert_eq!(why(&chromium, Protocol::H2), None);
    }

    /// Chromium's request limits are the model's by default; `none` reaches
    /// the model's knobs, and Chromium, which always has them, refuses it.
    #[test]
    fn request_limits_reach_the_model_and_chromium_refuses_none() {
        let limits = |t: &Trial| t.model_knobs().request_limits.to_string();
        assert_eq!(limits(&Trial::default()), "chromium");
        let mut t = Trial::default();
        t.set("request_limits", "none").unwrap();
        assert_eq!(limits(&t), "none");
        let e = t.set("request_limits", "firefox").unwrap_err();
        assert!(e.contains("'firefox' is not one of chromium, none"), "{e}");
        assert_eq!(limits(&t), "none", "a refused value changes nothing");
        let why = |t: &Trial, p: Protocol| t.refusal(&[p], 10).map(|r| r.to_string());
        assert_eq!(why(&t, Protocol::Https), None);
        let chromium = Trial {
            client: ClientKind::Chromium,
            ..t
        };
        let r = why(&chromium, Protocol::Https).unwrap_or_default();
        assert!(
            r.starts_with("--client chromium: Chromium's ResourceScheduler always holds"),
            "{r}"
        );
        let stock = Trial {
            client: ClientKind::Chromium,
            ..Trial::default()
        };
        assert_eq!(why(&stock, Protocol::Https), None);
    }

    /// `tcp_pacing` reaches the built-in server's knobs; every real server
    /// refuses it, with the reason; Chromium takes it (a server's knob).
    #[test]
    fn tcp_pacing_reaches_the_server_and_real_servers_refuse_it() {
        assert!(!Trial::default().served.tcp_pacing);
        let mut t = Trial::default();
        t.set("tcp_pacing", "on").unwrap();
        assert!(t.served.tcp_pacing);
        assert!(t.set("tcp_pacing", "fq").is_err());
        let why = |t: &Trial, p: Protocol| t.refusal(&[p], 10).map(|r| r.to_string());
        assert_eq!(why(&t, Protocol::H2), None);
        for peer in [
            PeerKind::Nginx,
            PeerKind::Apache,
            PeerKind::H2o,
            PeerKind::Caddy,
        ] {
            let real = Trial {
                server: ServerKind::Peer(peer),
                ..t.clone()
            };
            let refused = why(&real, Protocol::H2).unwrap_or_default();
            assert!(
                refused.contains("do not set SO_MAX_PACING_RATE")
                    && refused.contains("no fq qdisc"),
                "{peer:?}: {refused}"
            );
        }
        let chromium = Trial {
            client: ClientKind::Chromium,
            ..t
        };
        assert_eq!(why(&chromium, Protocol::H2), None);
        t = Trial::default();
        t.set("tcp_pacing", "off").unwrap();
        assert_eq!(t, Trial::default());
    }

    #[test]
    fn from_har_needs_an_imported_page() {
        let mut t = Trial::default();
        let site = site::builtin("icons", site::DEFAULT_SEED).unwrap();
        let key = |k: &str| format!("knobs.{k} =");
        assert_eq!(t.site_refusal(&site, &key), None);
        t.set("server_delay", "from-har").unwrap();
        let why = t.site_refusal(&site, &key).unwrap();
        assert!(
            why.starts_with("knobs.server_delay = from-har: site icons"),
            "{why}"
        );
    }

    #[test]
    fn settings_put_the_knobs_in_the_testbed() {
        let s = settings(
            &point(&[
                ("site", "icons"),
                ("rtt", "100ms"),
                ("warm_metrics", "on"),
                ("layout", "shards:3"),
            ]),
            7,
        )
        .unwrap();
        assert!(s.testbed.warm_metrics);
        assert_eq!(s.testbed.shards, 3);
        assert_eq!(s.testbed.seed, 7);
        assert_eq!(s.testbed.link.rtt(), Duration::from_millis(100));
        let e = settings(&point(&[("layout", "mirror"), ("shards", "2")]), 1).unwrap_err();
        assert!(e.contains("knobs.shards ="), "{e}");
    }
}
