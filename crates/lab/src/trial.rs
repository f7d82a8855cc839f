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
use results::experiment::Point;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

pub use client::headers::MAX_COOKIE_BYTES;
pub use client::{BrowserCost, Pool};
pub use client::{HeaderSet, RequestHeaders};
pub use results::{ClientKind, PeerKind, ServerKind};
pub use server::CertKind;

/// Ports of the server inside a testbed.
pub const HTTP_PORT: u16 = 80;
pub const HTTPS_PORT: u16 = 443;

/// The knobs of a Trial that a server or a client may not honour: the
/// server's (`peers::Knobs`, the capability table's) and the client's.
#[derive(Debug, Clone, Copy)]
pub struct Knobs {
    pub server: peers::Knobs,
    /// HTTP/1.1 connections per host the client is asked to open.
    pub conns_per_host: usize,
    /// Resume TLS sessions between the probes of a Trial (`--tls-resume`).
    pub tls_resume: bool,
    /// How the model pools SPDY/HTTP/2 sessions (Chromium pools as it does).
    pub pool: Pool,
    /// The model's browser costs (Chromium has its own).
    pub browser_cost: BrowserCost,
}

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

/// Why `server` (and `client`, when the command loads pages with one) cannot
/// run `protocols` as `knobs` ask, if one cannot — from the capability table
/// (`peers::Program::capabilities`) and the browser's limits. The first
/// protocol that is refused, the server before the client.
pub fn refusal(
    server: ServerKind,
    client: Option<ClientKind>,
    protocols: &[Protocol],
    knobs: &Knobs,
) -> Option<Refusal> {
    use peers::Program;
    protocols.iter().find_map(|p| {
        let by_server = match server {
            _ if *p == Protocol::H3 && knobs.server.tls13_only == Some(false) => Some(
                "h3 runs TLS 1.3 inside QUIC (RFC 9001), never TLS 1.2: drop h3 or --tls 1.2"
                    .to_string(),
            ),
            ServerKind::Builtin => None,
            ServerKind::Peer(k) => k.refuses(*p, &knobs.server),
        };
        let by_client = || match client {
            None | Some(ClientKind::Model) => None,
            Some(ClientKind::Chromium) => browser::refuses(*p)
                .map(str::to_string)
                .or_else(|| {
                    (knobs.conns_per_host != 6).then(|| {
                        "Chromium opens up to 6 connections per host: --conns-per-host needs --client model"
                            .to_string()
                    })
                })
                .or_else(|| {
                    knobs.tls_resume.then(|| {
                        "Chromium starts with a fresh profile for every probe, so it never resumes a TLS session of an earlier probe: --tls-resume needs --client model"
                            .to_string()
                    })
                })
                .or_else(|| {
                    (knobs.pool != Pool::default()).then(|| {
                        "Chromium pools sessions as it does (--pool chromium): --pool needs --client model"
                            .to_string()
                    })
                })
                .or_else(|| {
                    (knobs.browser_cost != BrowserCost::default()).then(|| {
                        "Chromium has its own costs: --browser-cost needs --client model".to_string()
                    })
                }),
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
/// `shaped` and asks for a testbed.
#[derive(Debug, Clone, Default)]
pub struct LinkChoice {
    pub rtt: Option<Duration>,
    pub delay_down: Option<Duration>,
    pub delay_up: Option<Duration>,
    pub rate: Option<Bitrate>,
    pub down: Option<Bitrate>,
    pub up: Option<Bitrate>,
    pub trace_down: Option<Arc<Trace>>,
    pub trace_up: Option<Arc<Trace>>,
    pub loss: Option<LossModel>,
    pub queue: Option<QueueSpec>,
    pub iw: Option<u32>,
    pub cc: Option<CongestionControl>,
    pub seed: Option<u64>,
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

impl LinkChoice {
    /// Whether any field was given: such a link is emulated on a testbed,
    /// and a command that cannot put one in the path must refuse it.
    pub fn shaped(&self) -> bool {
        self.given().next().is_some()
    }

    /// The fields that were given (`rtt`, `delay_down`, …, `seed`), in order.
    pub fn given(&self) -> impl Iterator<Item = &'static str> {
        [
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
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
    }

    /// The testbed, or an error naming the fields through `name` (which turns
    /// `rtt`, `delay_down`, … into `--rtt` or `link.rtt`).
    pub fn testbed_spec(
        &self,
        shards: usize,
        name: &dyn Fn(&str) -> String,
    ) -> Result<TestbedSpec, LinkError> {
        let (down_delay, up_delay) = self.delays(name)?;
        let service = |trace: &Option<Arc<Trace>>, rate: Option<Bitrate>| match trace {
            Some(t) => Service::Trace(t.clone()),
            None => rate.map_or(Service::Unlimited, Service::Rate),
        };
        let direction = |service, delay| DirectionSpec {
            service,
            delay,
            loss: self.loss.unwrap_or_default(),
            queue: self.queue.unwrap_or_default(),
        };
        Ok(TestbedSpec {
            link: LinkSpec {
                down: direction(
                    service(&self.trace_down, self.down.or(self.rate)),
                    down_delay,
                ),
                up: direction(service(&self.trace_up, self.up.or(self.rate)), up_delay),
            },
            shards,
            iw: self.iw,
            cc: self.cc.unwrap_or(CongestionControl::Cubic),
            seed: self.seed.unwrap_or(DEFAULT_LINK_SEED),
            hosts: Vec::new(),
            warm_metrics: false,
        })
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

/// Everything a probe of one Point needs besides the site and protocols.
#[derive(Debug, Clone)]
pub struct Settings {
    pub site: String,
    pub testbed: TestbedSpec,
    pub max_streams: u32,
    pub tls13_only: Option<bool>,
    pub conns_per_host: usize,
    pub depth: usize,
    pub server_delay: Duration,
    /// How the site's resources map to host names (the testbed's address
    /// count already follows it).
    pub layout: site::Layout,
    /// The server's certificate (`cert`).
    pub cert: server::CertKind,
    /// TLS resumption between probes (`tls_resume`).
    pub tls_resume: bool,
    /// The model client's request headers (`headers`, `cookie_bytes`).
    pub headers: client::RequestHeaders,
    pub pool: Pool,
    pub browser_cost: BrowserCost,
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
    let int = |k: &str, default: i64| -> Result<i64, String> {
        match text(k) {
            None | Some("default") => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("{k}: '{v}' is not an integer")),
        }
    };
    let choice = LinkChoice {
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
            Some(_) => Some(int("iw", 10)? as u32),
        },
        cc: text("cc").and_then(congestion_control),
        seed: Some(seed),
    };
    let layout: site::Layout = match text("layout") {
        None => site::Layout::Origin,
        Some(v) => v.parse().map_err(|e| format!("knobs.layout: {e}"))?,
    };
    let shards = addresses(layout, int("shards", 1)? as usize, &|k| {
        format!("knobs.{k} =")
    })?;
    let mut testbed = choice
        .testbed_spec(shards, &|k| format!("link.{k}"))
        .map_err(|e| e.0)?;
    let on = |k: &str| text(k) == Some("on");
    testbed.warm_metrics = on("warm_metrics");
    let parsed = |k: &str, default: &str| text(k).unwrap_or(default).to_string();
    Ok(Settings {
        site: text("site").unwrap_or_default().to_string(),
        testbed,
        max_streams: int("max_streams", 100)? as u32,
        tls13_only: match text("tls") {
            Some("1.3") => Some(true),
            Some("1.2") => Some(false),
            _ => None,
        },
        conns_per_host: int("conns_per_host", 6)? as usize,
        depth: int("depth", 8)? as usize,
        server_delay: duration("server_delay")?.unwrap_or_default(),
        layout,
        cert: parsed("cert", "ecdsa")
            .parse()
            .map_err(|e| format!("cert: {e}"))?,
        tls_resume: on("tls_resume"),
        headers: client::RequestHeaders {
            set: parsed("headers", "chrome2014")
                .parse()
                .map_err(|e| format!("headers: {e}"))?,
            cookie_bytes: int("cookie_bytes", 0)? as usize,
        },
        pool: match text("pool") {
            None => Pool::default(),
            Some(v) => v.parse().map_err(|e| format!("knobs.pool: {e}"))?,
        },
        browser_cost: match text("browser_cost") {
            None => BrowserCost::default(),
            Some(v) => v.parse().map_err(|e| format!("knobs.browser_cost: {e}"))?,
        },
    })
}
