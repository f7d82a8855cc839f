//! Experiment files (TOML): sites, protocols, link axes and Trial knobs, each
//! axis a value, a list or a range; their cross product is the campaign's
//! Trials. Errors name the file, the line and the field. The format is
//! documented with examples in docs/experiments.md.
//!
//! Every axis value is kept in its canonical text form (`150ms`, `1mbit`,
//! `1%`, `256p`), so that a Point prints, compares and keys results the same
//! way everywhere; lab's `trial::settings` turns a Point into a testbed and knobs.

use crate::kinds::{ClientKind, ServerKind, View};
use proto::Protocol;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;
use toml::Spanned;

/// Why an experiment file was refused: each names the file, and the line and
/// field where there is one.
#[derive(Debug, Clone, PartialEq)]
pub enum ExperimentError {
    /// Not TOML, or not the experiment's shape (a missing or unknown key).
    Syntax {
        file: String,
        line: Option<usize>,
        message: String,
    },
    /// A field holds a bad value.
    Field {
        file: String,
        line: usize,
        field: String,
        message: String,
    },
    /// The cross product is too large to be meant.
    TooManyTrials { file: String, trials: usize },
}

impl fmt::Display for ExperimentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExperimentError::Syntax {
                file,
                line: Some(line),
                message,
            } => write!(f, "{file}:{line}: {message}"),
            ExperimentError::Syntax {
                file,
                line: None,
                message,
            } => write!(f, "{file}: {message}"),
            ExperimentError::Field {
                file,
                line,
                field,
                message,
            } => write!(f, "{file}:{line}: {field}: {message}"),
            ExperimentError::TooManyTrials { file, trials } => write!(
                f,
                "{file}: {trials} Trials; more than {MAX_TRIALS} is refused as a likely mistake"
            ),
        }
    }
}

impl std::error::Error for ExperimentError {}

/// Why one axis value (or list, or range) was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueError {
    /// Not in the unit's forms (a duration, a loss, a queue).
    Unit(link::units::UnitError),
    /// Not a bit rate, nor `unlimited`.
    Rate(link::units::UnitError),
    Integer {
        given: String,
        min: i64,
        max: i64,
        default_ok: bool,
    },
    Choice {
        given: String,
        allowed: &'static [&'static str],
    },
    EmptySite,
    /// An empty text where one of these forms is wanted.
    Empty(&'static str),
    /// The same value twice in a list.
    Twice(String),
    /// A list inside a list, or a table.
    NotPlain,
    /// Neither a value, a list nor a range.
    NotAValue,
    /// A range that cannot be expanded: why.
    Range(&'static str),
    RangeKey(String),
    /// A range bound (`from`, `to`, `step`) that is not a value of the axis.
    Bound {
        key: String,
        error: Box<ValueError>,
    },
    NotANumber {
        key: String,
    },
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueError::Unit(e) => write!(f, "{e}"),
            ValueError::Rate(e) => write!(f, "{e}, or unlimited"),
            ValueError::Integer {
                given,
                min,
                max,
                default_ok,
            } => write!(
                f,
                "'{given}' is not an integer in {min}..={max}{}",
                if *default_ok { " or default" } else { "" }
            ),
            ValueError::Choice { given, allowed } => {
                write!(f, "'{given}' is not one of {}", allowed.join(", "))
            }
            ValueError::EmptySite => f.write_str("a site name or file is empty"),
            ValueError::Empty(what) => write!(f, "empty; expected {what}"),
            ValueError::Twice(v) => write!(f, "{v} is listed twice"),
            ValueError::NotPlain => f.write_str("a list holds plain values"),
            ValueError::NotAValue => f.write_str("expected a value, a list or { from, to, step }"),
            ValueError::Range(why) => f.write_str(why),
            ValueError::RangeKey(key) => write!(
                f,
                "unknown range key '{key}'; expected from, to, step or factor"
            ),
            ValueError::Bound { key, error } => write!(f, "{key}: {error}"),
            ValueError::NotANumber { key } => write!(f, "{key}: not a number"),
        }
    }
}

impl std::error::Error for ValueError {}

/// What kind of value an axis holds, and how its text is checked and ordered.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    Duration,
    /// A bit rate, or `unlimited`.
    Rate,
    Loss,
    Queue,
    /// An integer in `min..=max`; `default` allowed where the kernel has one.
    Int {
        min: i64,
        max: i64,
        default_ok: bool,
    },
    Choice(&'static [&'static str]),
    /// Off or on (`Kind::SWITCH`), on the command line a switch: given, on.
    /// A knob of choices that happen to be `on` and `off` (`--early-hints
    /// on`) is a `Choice`: a flag with a value.
    Switch,
    /// A named network (`link::PROFILES`), in our spelling (`3g-fast`) or
    /// WebPageTest's (`3GFast`, `Cable`, `LTE`); canonical: ours.
    Profile,
    /// A built-in site name or a site file.
    Site,
    /// A layout: origin, mirror or shards:N (`site::Layout`).
    Layout,
    /// A server's think time: a duration, or `from-har` (each imported
    /// response's recorded wait).
    Delay,
    /// Text whose form a higher layer checks (lab's `Trial::set`, which names
    /// the field); the words say what it takes.
    Text(&'static str),
}

impl Kind {
    /// A switch's values, off first.
    pub const SWITCH: &'static [&'static str] = &["off", "on"];

    /// The values of a kind of choices (a switch's: `SWITCH`); None: any
    /// value of its form.
    pub fn choices(self) -> Option<&'static [&'static str]> {
        match self {
            Kind::Choice(values) => Some(values),
            Kind::Switch => Some(Kind::SWITCH),
            _ => None,
        }
    }
}

/// A Trial's knob: one per row of FIELDS' section `knobs`, which names it
/// (`Field::knob`), so that code that acts on each knob (lab's
/// `Trial::set`) matches this enum exhaustively: a knob added here and not
/// there does not compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Knob {
    Shards,
    MaxStreams,
    Tls,
    ConnsPerHost,
    Depth,
    ServerDelay,
    Layout,
    Cert,
    TlsResume,
    Headers,
    CookieBytes,
    WarmMetrics,
    Pool,
    BrowserCost,
    Screencast,
    CpuSlowdown,
    NotsentLowat,
    TcpPacing,
    ServerPriorities,
    ServerThink,
    EarlyHints,
    Push,
    View,
    Preload,
    EarlyData,
    RepeatCache,
    QuicCc,
    QuicIw,
    QuicAckFrequency,
    QuicHystart,
    TcpFastOpen,
    RequestLimits,
}

impl Knob {
    /// The knob's row of FIELDS.
    pub fn field(self) -> &'static Field {
        knob_fields()
            .find(|f| f.knob == Some(self))
            .expect("every Knob names a row of FIELDS (a unit test checks it)")
    }

    /// The knob's name in experiment files (`max_streams`).
    pub fn name(self) -> &'static str {
        self.field().name
    }

    /// The knob of this name (`max_streams`), if it is one.
    pub fn named(name: &str) -> Option<Knob> {
        knob_fields().find(|f| f.name == name).and_then(|f| f.knob)
    }
}

/// One axis of an experiment: its section, name, kind and default value.
pub struct Field {
    pub section: &'static str,
    pub name: &'static str,
    /// The knob this row is (section `knobs`), None for other axes.
    pub knob: Option<Knob>,
    /// Whose knob it is: which struct of a Trial holds it (None: not a knob).
    pub holder: Holder,
    pub kind: Kind,
    pub default: &'static str,
    pub help: &'static str,
    /// Which servers and clients honour a knob (`lab::trial::refusal`).
    pub only: Only,
}

/// Whose knob a row of FIELDS is: which of a Trial's structs holds it
/// (`lab::trial::Trial`). The built-in server's are the flags `serve` and
/// `load` take (`spdylab::trial_args::ServerKnobs`); a unit test of lab
/// checks each knob's `Trial::set` changes its holder's struct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// Not a knob: an axis of the site, link or run.
    None,
    /// The lab's own (testbed, layout, view): `Trial`'s fields.
    Lab,
    /// The built-in server's: `server::Knobs` (`Trial::served`).
    BuiltinServer,
    /// The model client's: `client::Knobs` (`Trial::model`).
    Model,
    /// Chromium's: `browser::Knobs` (`Trial::chromium`).
    Chromium,
}

/// Which servers and clients honour a knob. The built-in server and the model
/// client honour every knob; a Trial that sets a knob away from its default
/// on a server or client that cannot honour it is refused with the reason
/// given here, never measured as something else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Only {
    /// Every server and client, or as the real servers' capability table
    /// (`peers`) says.
    No,
    /// Only the built-in server; why the real servers cannot.
    BuiltinServer(&'static str),
    /// Only the model client; why Chromium cannot.
    ModelClient(&'static str),
    /// Only the built-in server with the model client: why the real
    /// servers cannot, and why Chromium cannot.
    BuiltinServerAndModel(&'static str, &'static str),
}

/// Every axis, in the order points print. One place for names and defaults.
pub const FIELDS: &[Field] = &[
    Field {
        section: "",
        name: "site",
        knob: None,
        holder: Holder::None,
        kind: Kind::Site,
        default: "",
        help: "a built-in site or a site file, relative to the experiment file",
        only: Only::No,
    },
    Field {
        section: "link",
        name: "profile",
        knob: None,
        holder: Holder::None,
        kind: Kind::Profile,
        default: "",
        help: "a named network (spdylab profiles): its rates and RTT fill the link's fields not given",
        only: Only::No,
    },
    Field {
        section: "link",
        name: "rtt",
        knob: None,
        holder: Holder::None,
        kind: Kind::Duration,
        default: "",
        help: "round-trip time, split evenly unless delay_down/delay_up",
        only: Only::No,
    },
    Field {
        section: "link",
        name: "delay_down",
        knob: None,
        holder: Holder::None,
        kind: Kind::Duration,
        default: "",
        help: "one-way delay server → client (with rtt: the rest goes up)",
        only: Only::No,
    },
    Field {
        section: "link",
        name: "delay_up",
        knob: None,
        holder: Holder::None,
        kind: Kind::Duration,
        default: "",
        help: "one-way delay client → server",
        only: Only::No,
    },
    Field {
        section: "link",
        name: "rate",
        knob: None,
        holder: Holder::None,
        kind: Kind::Rate,
        default: "unlimited",
        help: "rate of both directions",
        only: Only::No,
    },
    Field {
        section: "link",
        name: "down",
        knob: None,
        holder: Holder::None,
        kind: Kind::Rate,
        default: "",
        help: "rate server → client (overrides rate)",
        only: Only::No,
    },
    Field {
        section: "link",
        name: "up",
        knob: None,
        holder: Holder::None,
        kind: Kind::Rate,
        default: "",
        help: "rate client → server (overrides rate)",
        only: Only::No,
    },
    Field {
        section: "link",
        name: "loss",
        knob: None,
        holder: Holder::None,
        kind: Kind::Loss,
        default: "0%",
        help: "loss each way: 1% or ge:P,R[,H,K]",
        only: Only::No,
    },
    Field {
        section: "link",
        name: "queue",
        knob: None,
        holder: Holder::None,
        kind: Kind::Queue,
        default: "256p",
        help: "queue: drop-tail 256p, 64kb or both, or codel:5ms,100ms[,LIMIT]",
        only: Only::No,
    },
    Field {
        section: "link",
        name: "iw",
        knob: None,
        holder: Holder::None,
        kind: Kind::Int {
            min: 1,
            max: 1000,
            default_ok: true,
        },
        default: "default",
        help: "server TCP initial window in segments",
        only: Only::No,
    },
    Field {
        section: "link",
        name: "cc",
        knob: None,
        holder: Holder::None,
        kind: Kind::Choice(&["cubic", "bbr", "reno"]),
        default: "cubic",
        help: "TCP congestion control",
        only: Only::No,
    },
    Field {
        section: "link",
        name: "cross_traffic",
        knob: None,
        holder: Holder::None,
        kind: Kind::Text("a list such as cubic:2, bbr:1, udp:500kbit or cubic:1,udp:1mbit, or none"),
        default: "none",
        help: "competing flows sharing the bottleneck, started before each page and stopped after it: TCP bulk downloads by congestion control and count, or a UDP stream by rate (issue 38)",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "shards",
        knob: Some(Knob::Shards),
        holder: Holder::Lab,
        kind: Kind::Int {
            min: 1,
            max: 254,
            default_ok: false,
        },
        default: "1",
        help: "server addresses the origin layout's hosts are spread over (Fig. 8's shards: layout = \"shards:N\")",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "max_streams",
        knob: Some(Knob::MaxStreams),
        holder: Holder::BuiltinServer,
        kind: Kind::Int {
            min: 1,
            max: 1_000_000,
            default_ok: false,
        },
        default: "100",
        help: "server's concurrent streams per connection",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "tls",
        knob: Some(Knob::Tls),
        holder: Holder::BuiltinServer,
        kind: Kind::Choice(&["any", "1.2", "1.3"]),
        default: "any",
        help: "TLS version",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "conns_per_host",
        knob: Some(Knob::ConnsPerHost),
        holder: Holder::Model,
        kind: Kind::Int {
            min: 1,
            max: 64,
            default_ok: false,
        },
        default: "6",
        help: "HTTP/1.1 connections per host",
        only: Only::ModelClient("Chromium opens up to 6 connections per host"),
    },
    Field {
        section: "knobs",
        name: "depth",
        knob: Some(Knob::Depth),
        holder: Holder::Model,
        kind: Kind::Int {
            min: 1,
            max: 128,
            default_ok: false,
        },
        default: "8",
        help: "pipelining depth",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "server_delay",
        knob: Some(Knob::ServerDelay),
        holder: Holder::BuiltinServer,
        kind: Kind::Delay,
        default: "0ms",
        help: "server think time per response; from-har: each imported response's recorded wait (timings.wait)",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "layout",
        knob: Some(Knob::Layout),
        holder: Holder::Lab,
        kind: Kind::Layout,
        default: "origin",
        help: "origin, mirror (one host, 004 §V) or shards:N (N host names, each its own address, 004 Fig. 8)",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "cert",
        knob: Some(Knob::Cert),
        holder: Holder::Lab,
        kind: Kind::Choice(&["ecdsa", "rsa2048"]),
        default: "ecdsa",
        help: "server certificate: ECDSA P-256 root → leaf, or RSA 2048 root → intermediate → leaf",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "tls_resume",
        knob: Some(Knob::TlsResume),
        holder: Holder::BuiltinServer,
        kind: Kind::Switch,
        default: "off",
        help: "model client resumes TLS sessions of earlier probes of a Trial (tickets)",
        only: Only::ModelClient("Chromium starts with a fresh profile for every probe, so it never resumes a TLS session of an earlier probe"),
    },
    Field {
        section: "knobs",
        name: "headers",
        knob: Some(Knob::Headers),
        holder: Holder::Model,
        kind: Kind::Choice(&["chrome2014", "chrome156", "minimal"]),
        default: "chrome2014",
        help: "model client's request headers: a 2014 Chrome's (~350–450 B), Chromium 156's (~500–650 B over TLS) or minimal",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "cookie_bytes",
        knob: Some(Knob::CookieBytes),
        holder: Holder::Model,
        kind: Kind::Int {
            min: 0,
            max: 4096,
            default_ok: false,
        },
        default: "0",
        help: "a cookie header of this many bytes on every request (headers = chrome2014 or chrome156)",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "warm_metrics",
        knob: Some(Knob::WarmMetrics),
        holder: Holder::Lab,
        kind: Kind::Switch,
        default: "off",
        help:
            "keep the kernel's per-destination TCP metrics between probes (tcp_no_metrics_save=0)",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "pool",
        knob: Some(Knob::Pool),
        holder: Holder::Model,
        kind: Kind::Choice(&["chromium", "per-host", "per-address"]),
        default: "chromium",
        help: "model's SPDY/HTTP/2 sessions: per host name, per server address, or as Chromium",
        only: Only::ModelClient("Chromium pools sessions as it does (--pool chromium)"),
    },
    Field {
        section: "knobs",
        name: "browser_cost",
        knob: Some(Knob::BrowserCost),
        holder: Holder::Model,
        kind: Kind::Text("fitted, none, fitted,KEY=VALUE..., or navigation=DUR,parse=DUR/kB,script=DUR/kB,request=DUR,frame=DUR,paint=DUR,present=DUR,lead=DUR,layout=DUR"),
        default: "fitted",
        help: "model's browser costs: fitted (to Chromium on this lab's machine), none (the pure network model), or navigation=DUR,parse=DUR/kB,script=DUR/kB,request=DUR,frame=DUR,paint=DUR,present=DUR,lead=DUR,layout=DUR (scripts in order; layout per element; a key left out is 0); fitted,script=240us/kB changes one fitted cost",
        only: Only::ModelClient("Chromium has its own costs"),
    },
    Field {
        section: "knobs",
        name: "screencast",
        knob: Some(Knob::Screencast),
        holder: Holder::Chromium,
        kind: Kind::Choice(&["on", "off"]),
        default: "on",
        help: "Chromium records the screen's frames for Speed Index, visually complete and the filmstrip (DevTools' Page.startScreencast); off: no frames, the renderer encodes no JPEG (the model has no screen: its estimates do not change)",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "cpu_slowdown",
        knob: Some(Knob::CpuSlowdown),
        holder: Holder::Chromium,
        kind: Kind::Int {
            min: 1,
            max: 20,
            default_ok: false,
        },
        default: "1",
        help: "the client's CPU N times slower: the model's browser costs × N, Chromium throttled with DevTools' Emulation.setCPUThrottlingRate (Lighthouse's mobile default: 4)",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "notsent_lowat",
        knob: Some(Knob::NotsentLowat),
        holder: Holder::BuiltinServer,
        kind: Kind::Int {
            min: 1,
            max: 64 << 20,
            default_ok: true,
        },
        default: "default",
        help: "the built-in server's TCP_NOTSENT_LOWAT in bytes on each TCP connection (default: the kernel's, no limit): unsent bytes the kernel may hold, so that the server's stream priorities, not its send buffer, decide what goes next",
        only: Only::BuiltinServer("a real server here has no setting for TCP_NOTSENT_LOWAT"),
    },
    Field {
        section: "knobs",
        name: "tcp_pacing",
        knob: Some(Knob::TcpPacing),
        holder: Holder::BuiltinServer,
        kind: Kind::Choice(&["off", "on"]),
        default: "off",
        help: "the built-in server's TCP connections pace their sends (Linux's internal TCP pacing, on with SO_MAX_PACING_RATE: the testbed has no fq qdisc) instead of sending each window in bursts (https, h2, h2c, spdy3, http); h3 is paced by quinn, always",
        only: Only::BuiltinServer("the real servers here do not set SO_MAX_PACING_RATE and the testbed has no fq qdisc to pace them"),
    },
    Field {
        section: "knobs",
        name: "server_priorities",
        knob: Some(Knob::ServerPriorities),
        holder: Holder::BuiltinServer,
        kind: Kind::Choice(&["on", "off"]),
        default: "on",
        help: "whether the built-in server schedules responses by the client's priorities (h2: RFC 7540's tree as Chrome sends it, or RFC 9218's priority header and PRIORITY_UPDATE; h3: RFC 9218 on quinn's stream priorities; SPDY/3.1: its priorities); off: round robin over the responses with data, one 16 KiB chunk each, in the order the requests came",
        only: Only::BuiltinServer("a real server's scheduling is its own (the priorities command measures it)"),
    },
    Field {
        section: "knobs",
        name: "server_think",
        knob: Some(Knob::ServerThink),
        holder: Holder::BuiltinServer,
        kind: Kind::Duration,
        default: "0ms",
        help: "the built-in server's think time before the page's document only (the HTML it has to make), after server_delay: when 103 Early Hints and push help",
        only: Only::BuiltinServer("a real server here serves the page's document from a file, with no think time of its own"),
    },
    Field {
        section: "knobs",
        name: "early_hints",
        knob: Some(Knob::EarlyHints),
        holder: Holder::BuiltinServer,
        // on, off: a flag with a value (`--early-hints on`), as issue 37 writes it.
        kind: Kind::Choice(&["on", "off"]),
        default: "off",
        help: "the built-in server answers the document's request at once with 103 Early Hints: Link rel=preload for its critical resources (render-blocking stylesheets and scripts, the LCP image) and rel=preconnect for their other origins, before server_think (h2, h2c and h3)",
        only: Only::BuiltinServer("the configurations generated for the real servers send no 103 (nginx cannot; Apache's H2EarlyHints hints only H2PushResource paths, without the as= a browser needs to preload; h2o's and caddy's would need per-page Link headers, not generated)"),
    },
    Field {
        section: "knobs",
        name: "push",
        knob: Some(Knob::Push),
        holder: Holder::BuiltinServer,
        kind: Kind::Choice(&["none", "critical", "all"]),
        default: "none",
        help: "the built-in server pushes, when the document is asked for and before server_think, its critical resources on its own host or every resource under it on its own host (h2 and h2c: PUSH_PROMISE, not when the client's SETTINGS_ENABLE_PUSH is 0; SPDY/3.1: SYN_STREAM with an associated stream)",
        only: Only::ModelClient("Chromium removed HTTP/2 server push in 2022 (Chrome 106) and accepts no PUSH_PROMISE"),
    },
    Field {
        section: "knobs",
        name: "view",
        knob: Some(Knob::View),
        holder: Holder::Lab,
        kind: Kind::Choice(&View::NAMES),
        default: "first",
        help: "which load a probe measures: first (a cold client), repeat (the same client loads the page again after its connections closed, keeping its HTTP cache, TLS session tickets and QUIC 0-RTT tickets; the first load is not counted) or both (each probe measures the first load, then the repeat one); docs/repeat-view.md",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "preload",
        knob: Some(Knob::Preload),
        holder: Holder::Lab,
        kind: Kind::Choice(&["none", "critical"]),
        default: "none",
        help: "a site transform: <link rel=preload> tags for the document's critical resources at the top of its head (generated and imported pages)",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "early_data",
        knob: Some(Knob::EarlyData),
        holder: Holder::Chromium,
        kind: Kind::Choice(&["off", "on"]),
        default: "off",
        help: "TLS 1.3 early data over TCP on a repeat view (https, h2, spdy3), both clients: Chromium's EnableTLS13EarlyData feature, off in stock Chromium (net/base/features.cc: FEATURE_DISABLED_BY_DEFAULT); QUIC 0-RTT is on either way",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "repeat_cache",
        knob: Some(Knob::RepeatCache),
        holder: Holder::Chromium,
        kind: Kind::Choice(&["keep", "clear"]),
        default: "keep",
        help: "the HTTP cache between a repeat view's two loads, both clients: keep (WebPageTest's repeat view) or clear (every response fetched again; TLS tickets, QUIC 0-RTT and early data kept: Kakhki et al.'s 0-RTT pages, Fig. 7); docs/repeat-view.md",
        only: Only::No,
    },
    Field {
        section: "knobs",
        name: "quic_cc",
        knob: Some(Knob::QuicCc),
        holder: Holder::BuiltinServer,
        kind: Kind::Choice(&["same", "cubic", "reno", "bbr"]),
        default: "same",
        help: "the built-in server's QUIC congestion control (quinn's cubic, reno or bbr) on h3; same: the link's cc, TCP's",
        only: Only::BuiltinServer("caddy's QUIC is quic-go's, with a congestion control of its own"),
    },
    Field {
        section: "knobs",
        name: "quic_iw",
        knob: Some(Knob::QuicIw),
        holder: Holder::BuiltinServer,
        kind: Kind::Int {
            min: 1,
            max: 1000,
            default_ok: true,
        },
        default: "default",
        help: "the built-in server's QUIC initial congestion window on h3, in segments of 1448 B (TCP's MSS here); default: the link's iw (TCP's), or quinn's own 12 000 B without one. Tunes TCP's iw apart from QUIC's (Wolsing et al.'s tuned TCP against stock QUIC)",
        only: Only::BuiltinServer("caddy's QUIC is quic-go's, with an initial window of its own"),
    },
    Field {
        section: "knobs",
        name: "quic_hystart",
        knob: Some(Knob::QuicHystart),
        holder: Holder::BuiltinServer,
        kind: Kind::Choice(&["off", "on"]),
        default: "off",
        help: "the built-in server's QUIC Cubic leaves its first slow start by HyStart++ (RFC 9406: when the round trip grows by an eighth, a quarter of the growth for 5 rounds, then congestion avoidance at the window reached) instead of at the first loss; off: quinn's Cubic as published, which has no HyStart. Linux's TCP Cubic has its own HyStart, always on here",
        only: Only::BuiltinServer("caddy's QUIC is quic-go's, whose Cubic has a hybrid slow start of its own, always on"),
    },
    Field {
        section: "knobs",
        name: "tcp_fastopen",
        knob: Some(Knob::TcpFastOpen),
        holder: Holder::Model,
        kind: Kind::Choice(&["off", "on"]),
        default: "off",
        help: "TCP Fast Open (RFC 7413) between the model client and the built-in server (https, h2, h2c, spdy3, http): the testbed's kernels allow it, the server's listeners take it, the model's sockets ask for it; a connection carries its first bytes (a TLS ClientHello, a request) in the SYN once the client holds the server's cookie, from an earlier connection of the testbed (the repeat view, a later connection of the page)",
        only: Only::BuiltinServerAndModel(
            "the configurations generated for the real servers do not turn TCP Fast Open on",
            "Chromium does not use TCP Fast Open on Linux",
        ),
    },
    Field {
        section: "knobs",
        name: "quic_ack_frequency",
        knob: Some(Knob::QuicAckFrequency),
        holder: Holder::BuiltinServer,
        kind: Kind::Int {
            min: 1,
            max: 100,
            default_ok: true,
        },
        default: "default",
        help: "the built-in server asks the client on h3 to acknowledge every N ack-eliciting packets, or within its max_ack_delay (draft-ietf-quic-ack-frequency's ACK_FREQUENCY frame); default: the client's own pattern (quinn's, like Chromium's as measured: every 2nd packet)",
        only: Only::BuiltinServerAndModel(
            "caddy's QUIC is quic-go's, which does not send ACK_FREQUENCY",
            "Chromium does not take ACK_FREQUENCY: asked for every 10th packet it still acknowledges every 2nd (docs/knobs.md)",
        ),
    },
    Field {
        section: "knobs",
        name: "request_limits",
        knob: Some(Knob::RequestLimits),
        holder: Holder::Model,
        kind: Kind::Choice(&["chromium", "none"]),
        default: "chromium",
        help: "the model's network-side request limits: chromium (Chromium's ResourceScheduler: requests below MEDIUM to a host not known to support priorities wait while 10 such are in flight on the page or 6 requests to their host are) or none (every request the renderer lets go starts at once)",
        only: Only::ModelClient("Chromium's ResourceScheduler always holds its delayable requests"),
    },
];

/// The fields of section `knobs`: a Trial's knobs, in FIELDS' order.
pub fn knob_fields() -> impl Iterator<Item = &'static Field> {
    FIELDS.iter().filter(|f| f.section == "knobs")
}

pub fn field(name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.name == name)
}

/// One point of the sweep: a value for every axis (empty text = not set).
pub type Point = BTreeMap<String, String>;

/// A paper's number, drawn as a mark on the report's plots.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    /// A site name, or absent for "all sites" (an average over them).
    #[serde(default)]
    pub site: Option<String>,
    /// The protocol whose gain the number is (default: every non-baseline protocol).
    #[serde(default)]
    pub protocol: Option<String>,
    /// The axis and its value the number is at; absent: an average over the sweep.
    #[serde(default)]
    pub axis: Option<String>,
    #[serde(default)]
    pub at: Option<String>,
    pub gain_pct: f64,
    pub label: String,
}

/// A parsed, validated experiment.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct Experiment {
    pub name: String,
    pub description: String,
    pub protocols: Vec<Protocol>,
    pub baseline: Protocol,
    pub reps: usize,
    pub warmup: usize,
    pub seed: u64,
    pub site_seed: u64,
    pub server: ServerKind,
    pub client: ClientKind,
    #[serde(serialize_with = "ser_duration")]
    pub timeout: Duration,
    /// Every axis with its values, in FIELDS order.
    pub axes: Vec<(String, Vec<String>)>,
    pub references: Vec<Reference>,
    /// The headline metric of the report's gains (`metric = "tow"|"plt"`,
    /// default PLT); the other is shown beside it.
    pub metric: Metric,
}

fn ser_duration<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&link::units::format_duration(*d))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: String,
    sites: Spanned<toml::Value>,
    protocols: Spanned<Vec<String>>,
    #[serde(default)]
    baseline: Option<Spanned<String>>,
    #[serde(default)]
    reps: Option<Spanned<i64>>,
    #[serde(default)]
    warmup: Option<Spanned<i64>>,
    #[serde(default)]
    seed: Option<Spanned<i64>>,
    #[serde(default)]
    site_seed: Option<Spanned<i64>>,
    #[serde(default)]
    server: Option<Spanned<String>>,
    #[serde(default)]
    client: Option<Spanned<String>>,
    #[serde(default)]
    timeout: Option<Spanned<String>>,
    #[serde(default)]
    link: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    knobs: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    reference: Vec<Spanned<Reference>>,
    #[serde(default)]
    metric: Option<Spanned<String>>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// A probe's timeout when the experiment (or the command) gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Trials a campaign may have before it is refused as a likely mistake.
pub const MAX_TRIALS: usize = 1_000_000;

/// Parses and validates an experiment; `file` names the source in errors.
pub fn parse(file: &str, text: &str) -> Result<Experiment, ExperimentError> {
    let doc: File = toml::from_str(text).map_err(|e| ExperimentError::Syntax {
        file: file.to_string(),
        line: e.span().map(|s| line_of(text, s.start)),
        message: e.message().trim().to_string(),
    })?;
    let at = |span: std::ops::Range<usize>, field: &str, msg: &str| ExperimentError::Field {
        file: file.to_string(),
        line: line_of(text, span.start),
        field: field.to_string(),
        message: msg.to_string(),
    };

    let mut protocols = Vec::new();
    for name in doc.protocols.get_ref() {
        let p: Protocol = name
            .parse()
            .map_err(|e: String| at(doc.protocols.span(), "protocols", &e))?;
        if protocols.contains(&p) {
            return Err(at(
                doc.protocols.span(),
                "protocols",
                &format!("{p} is listed twice"),
            ));
        }
        protocols.push(p);
    }
    if protocols.is_empty() {
        return Err(at(doc.protocols.span(), "protocols", "name at least one"));
    }
    let baseline = match &doc.baseline {
        None => protocols[0],
        Some(b) => {
            let p: Protocol = b
                .get_ref()
                .parse()
                .map_err(|e: String| at(b.span(), "baseline", &e))?;
            if !protocols.contains(&p) {
                return Err(at(b.span(), "baseline", "must be one of the protocols"));
            }
            p
        }
    };
    let count = |v: &Option<Spanned<i64>>, name: &str, default: i64, min: i64, max: i64| match v {
        None => Ok(default),
        Some(s) if (min..=max).contains(s.get_ref()) => Ok(*s.get_ref()),
        Some(s) => Err(at(
            s.span(),
            name,
            &format!("{} is outside {min}..={max}", s.get_ref()),
        )),
    };
    let reps = count(&doc.reps, "reps", 5, 1, 10_000)? as usize;
    let warmup = count(&doc.warmup, "warmup", 1, 0, 100)? as usize;
    let seed = count(&doc.seed, "seed", 1, 0, i64::MAX)? as u64;
    let site_seed = count(
        &doc.site_seed,
        "site_seed",
        site::DEFAULT_SEED as i64,
        0,
        i64::MAX,
    )? as u64;
    // A name not in `allowed` is refused; the first is the default.
    fn choice<T: std::str::FromStr + Default>(
        v: &Option<Spanned<String>>,
        allowed: &[&str],
    ) -> Result<T, (std::ops::Range<usize>, String)> {
        match v {
            None => Ok(T::default()),
            Some(s) => match s.get_ref().parse() {
                Ok(k) if allowed.contains(&s.get_ref().as_str()) => Ok(k),
                _ => Err((
                    s.span(),
                    format!("'{}' is not one of {}", s.get_ref(), allowed.join(", ")),
                )),
            },
        }
    }
    let server: ServerKind =
        choice(&doc.server, &ServerKind::NAMES).map_err(|(s, e)| at(s, "server", &e))?;
    let client: ClientKind =
        choice(&doc.client, &ClientKind::NAMES).map_err(|(s, e)| at(s, "client", &e))?;
    let timeout = match &doc.timeout {
        None => DEFAULT_TIMEOUT,
        Some(s) => link::units::parse_duration(s.get_ref())
            .map_err(|e| at(s.span(), "timeout", &e.to_string()))?,
    };

    let mut axes = Vec::new();
    for f in FIELDS {
        let given = match f.section {
            "" => Some(&doc.sites),
            "link" => doc.link.get(f.name),
            _ => doc.knobs.get(f.name),
        };
        let path = if f.section.is_empty() {
            "sites".to_string()
        } else {
            format!("{}.{}", f.section, f.name)
        };
        let values = match given {
            None => vec![f.default.to_string()],
            Some(v) => {
                values(f.kind, v.get_ref()).map_err(|e| at(v.span(), &path, &e.to_string()))?
            }
        };
        // A sweep's `view = "both"` is its two points, first and repeat:
        // each stored record is one view, keyed by its point.
        let values = match f.name {
            "view" => expand_both(values),
            _ => values,
        };
        if values.is_empty() {
            let span = given.map(|v| v.span()).unwrap_or(0..0);
            return Err(at(span, &path, "no values"));
        }
        axes.push((f.name.to_string(), values));
    }
    for (section, table) in [("link", &doc.link), ("knobs", &doc.knobs)] {
        for (key, v) in table {
            if !FIELDS.iter().any(|f| f.section == section && f.name == key) {
                let known: Vec<&str> = FIELDS
                    .iter()
                    .filter(|f| f.section == section)
                    .map(|f| f.name)
                    .collect();
                return Err(at(
                    v.span(),
                    &format!("{section}.{key}"),
                    &format!("unknown; expected one of {}", known.join(", ")),
                ));
            }
        }
    }
    let mut references = Vec::new();
    for r in &doc.reference {
        let span = r.span();
        let r = r.get_ref().clone();
        if let Some(axis) = &r.axis {
            let Some(f) = field(axis) else {
                return Err(at(
                    span,
                    "reference.axis",
                    &format!("'{axis}' is not an axis"),
                ));
            };
            let Some(v) = &r.at else {
                return Err(at(span, "reference.at", "missing (the axis value)"));
            };
            canonical(f.kind, v).map_err(|e| at(span.clone(), "reference.at", &e.to_string()))?;
        }
        references.push(r);
    }

    let metric = match &doc.metric {
        None => Metric::Plt,
        Some(m) => m
            .get_ref()
            .parse()
            .map_err(|e: String| at(m.span(), "metric", &e))?,
    };
    let exp = Experiment {
        name: doc.name.unwrap_or_else(|| {
            std::path::Path::new(file)
                .file_stem()
                .map_or("experiment".into(), |s| s.to_string_lossy().into_owned())
        }),
        description: doc.description,
        protocols,
        baseline,
        reps,
        warmup,
        seed,
        site_seed,
        server,
        client,
        timeout,
        axes,
        references,
        metric,
    };
    let n = exp.trial_count();
    if n > MAX_TRIALS {
        return Err(ExperimentError::TooManyTrials {
            file: file.to_string(),
            trials: n,
        });
    }
    Ok(exp)
}

/// `view`'s values with `both` as `first` and `repeat`, none twice.
fn expand_both(values: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values {
        let each: &[View] = match v.parse::<View>() {
            Ok(view) => view.measured(),
            Err(_) => &[],
        };
        for name in each.iter().map(|v| v.name().to_string()) {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// The values an axis takes: a value, a list, or a `{ from, to, step | factor }` range.
fn values(kind: Kind, v: &toml::Value) -> Result<Vec<String>, ValueError> {
    match v {
        toml::Value::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                if matches!(item, toml::Value::Array(_) | toml::Value::Table(_)) {
                    return Err(ValueError::NotPlain);
                }
                let c = canonical(kind, &scalar(item)?)?;
                if out.contains(&c) {
                    return Err(ValueError::Twice(c));
                }
                out.push(c);
            }
            Ok(out)
        }
        toml::Value::Table(t) => range(kind, t),
        other => Ok(vec![canonical(kind, &scalar(other)?)?]),
    }
}

fn scalar(v: &toml::Value) -> Result<String, ValueError> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        _ => Err(ValueError::NotAValue),
    }
}

/// Checks one value and returns its canonical text.
pub fn canonical(kind: Kind, s: &str) -> Result<String, ValueError> {
    let s = s.trim();
    match kind {
        Kind::Duration => link::units::parse_duration(s)
            .map(link::units::format_duration)
            .map_err(ValueError::Unit),
        Kind::Rate if s == "unlimited" => Ok(s.into()),
        Kind::Rate => s
            .parse::<link::Bitrate>()
            .map(|r| r.to_string())
            .map_err(ValueError::Rate),
        Kind::Loss => s
            .parse::<link::LossModel>()
            .map(|l| l.to_string())
            .map_err(ValueError::Unit),
        Kind::Queue => s
            .parse::<link::QueueSpec>()
            .map(|q| q.to_string())
            .map_err(ValueError::Unit),
        Kind::Int {
            default_ok: true, ..
        } if s == "default" => Ok(s.into()),
        Kind::Int {
            min,
            max,
            default_ok,
        } => match s.parse::<i64>() {
            Ok(i) if (min..=max).contains(&i) => Ok(i.to_string()),
            _ => Err(ValueError::Integer {
                given: s.to_string(),
                min,
                max,
                default_ok,
            }),
        },
        Kind::Switch => canonical(Kind::Choice(Kind::SWITCH), s),
        Kind::Choice(allowed) if allowed.contains(&s) => Ok(s.into()),
        Kind::Choice(allowed) => Err(ValueError::Choice {
            given: s.to_string(),
            allowed,
        }),
        Kind::Profile => {
            link::profile(s)
                .map(|p| p.name.to_string())
                .ok_or_else(|| ValueError::Choice {
                    given: s.to_string(),
                    allowed: link::PROFILE_NAMES,
                })
        }
        Kind::Site if s.is_empty() => Err(ValueError::EmptySite),
        Kind::Site => Ok(s.into()),
        Kind::Layout => s
            .parse::<site::Layout>()
            .map(|l| l.to_string())
            .map_err(|_| ValueError::Choice {
                given: s.to_string(),
                allowed: &["origin", "mirror", "shards:N (N in 1..=254)"],
            }),
        Kind::Delay if s == "from-har" => Ok(s.into()),
        Kind::Delay => canonical(Kind::Duration, s),
        Kind::Text(what) if s.is_empty() => Err(ValueError::Empty(what)),
        Kind::Text(_) => Ok(s.into()),
    }
}

/// The value's magnitude in the axis's base unit (ms, bit/s, fraction, count),
/// for ranges and plots; None where the axis is not numeric.
pub fn magnitude(kind: Kind, canonical: &str) -> Option<f64> {
    match kind {
        Kind::Duration => link::units::parse_duration(canonical)
            .ok()
            .map(|d| d.as_secs_f64() * 1e3),
        Kind::Rate => canonical
            .parse::<link::Bitrate>()
            .ok()
            .map(|r| r.bits_per_sec() as f64),
        Kind::Loss => canonical
            .parse::<link::LossModel>()
            .ok()
            .map(|l| l.mean_loss() * 100.0),
        Kind::Int { .. } => canonical.parse::<i64>().ok().map(|i| i as f64),
        Kind::Layout => match canonical.parse::<site::Layout>().ok()? {
            site::Layout::Origin => None,
            site::Layout::Mirror => Some(1.0),
            site::Layout::Shards(n) => Some(n as f64),
        },
        Kind::Delay => magnitude(Kind::Duration, canonical),
        Kind::Queue
        | Kind::Choice(_)
        | Kind::Switch
        | Kind::Profile
        | Kind::Site
        | Kind::Text(_) => None,
    }
}

/// The canonical text of a magnitude (inverse of `magnitude`).
fn from_magnitude(kind: Kind, m: f64) -> String {
    match kind {
        Kind::Duration => {
            link::units::format_duration(Duration::from_nanos((m * 1e6).round() as u64))
        }
        Kind::Rate => link::Bitrate(m.round() as u64).to_string(),
        Kind::Loss => {
            let pct = (m * 1e6).round() / 1e6;
            format!("{pct}%")
        }
        _ => format!("{}", m.round() as i64),
    }
}

fn range(kind: Kind, t: &toml::map::Map<String, toml::Value>) -> Result<Vec<String>, ValueError> {
    use ValueError::Range;
    if !matches!(
        kind,
        Kind::Duration | Kind::Rate | Kind::Loss | Kind::Int { .. }
    ) {
        return Err(Range("this axis takes a value or a list, not a range"));
    }
    for key in t.keys() {
        if !["from", "to", "step", "factor"].contains(&key.as_str()) {
            return Err(ValueError::RangeKey(key.clone()));
        }
    }
    let get = |key: &str| -> Result<Option<f64>, ValueError> {
        t.get(key)
            .map(|v| {
                let text = canonical(kind, &scalar(v)?).map_err(|e| ValueError::Bound {
                    key: key.to_string(),
                    error: Box::new(e),
                })?;
                magnitude(kind, &text).ok_or_else(|| ValueError::NotANumber {
                    key: key.to_string(),
                })
            })
            .transpose()
    };
    let from = get("from")?.ok_or(Range("a range needs from"))?;
    let to = get("to")?.ok_or(Range("a range needs to"))?;
    if to < from {
        return Err(Range("to is below from"));
    }
    let mut out = Vec::new();
    match (t.get("step"), t.get("factor")) {
        (Some(_), Some(_)) => return Err(Range("give step or factor, not both")),
        (None, Some(f)) => {
            let factor = match f {
                toml::Value::Integer(i) => *i as f64,
                toml::Value::Float(x) => *x,
                _ => return Err(Range("factor is a number such as 2")),
            };
            if !(factor > 1.0 && factor.is_finite()) || from <= 0.0 {
                return Err(Range("factor must be above 1, and from above 0"));
            }
            let mut x = from;
            while x <= to * (1.0 + 1e-9) {
                out.push(canonical(kind, &from_magnitude(kind, x))?);
                x *= factor;
                if out.len() > 10_000 {
                    return Err(Range("more than 10000 values"));
                }
            }
        }
        (step, None) => {
            let step = match step {
                None if matches!(kind, Kind::Int { .. }) => 1.0,
                None => return Err(Range("a range needs step (or factor)")),
                Some(_) => get("step")?.unwrap_or(0.0),
            };
            if step <= 0.0 {
                return Err(Range("step must be above 0"));
            }
            let n = ((to - from) / step + 1e-9).floor() as usize;
            if n >= 10_000 {
                return Err(Range("more than 10000 values"));
            }
            for i in 0..=n {
                out.push(canonical(
                    kind,
                    &from_magnitude(kind, from + step * i as f64),
                )?);
            }
        }
    }
    out.dedup();
    Ok(out)
}

impl Experiment {
    /// The axes that take more than one value: what the sweep varies.
    pub fn swept(&self) -> Vec<&str> {
        self.axes
            .iter()
            .filter(|(_, v)| v.len() > 1)
            .map(|(n, _)| n.as_str())
            .collect()
    }

    pub fn values(&self, axis: &str) -> &[String] {
        self.axes
            .iter()
            .find(|(n, _)| n == axis)
            .map_or(&[], |(_, v)| v.as_slice())
    }

    /// Every point of the cross product, in a stable order (first axis slowest).
    pub fn points(&self) -> Vec<Point> {
        let mut points = vec![Point::new()];
        for (name, values) in &self.axes {
            let mut next = Vec::with_capacity(points.len() * values.len());
            for p in &points {
                for v in values {
                    let mut q = p.clone();
                    if !v.is_empty() {
                        q.insert(name.clone(), v.clone());
                    }
                    next.push(q);
                }
            }
            points = next;
        }
        points
    }

    pub fn trial_count(&self) -> usize {
        self.axes
            .iter()
            .map(|(_, v)| v.len())
            .fold(1usize, |a, n| a.saturating_mul(n))
            .saturating_mul(self.protocols.len())
            .saturating_mul(self.reps)
    }
}

/// The fields a point's key names even at their default: those of the
/// campaigns stored before this list was frozen. Every other field (`layout`,
/// `notsent_lowat`, and any added from now on) is named only when set away
/// from its default, so that an older campaign's Trials keep their keys and
/// it resumes instead of running again — with no edit here for a new knob.
/// Never add to this list.
const KEYED_ALWAYS: &[&str] = &[
    "site",
    "rtt",
    "delay_down",
    "delay_up",
    "rate",
    "down",
    "up",
    "loss",
    "queue",
    "iw",
    "cc",
    "shards",
    "max_streams",
    "tls",
    "conns_per_host",
    "depth",
    "server_delay",
    "cert",
    "tls_resume",
    "headers",
    "cookie_bytes",
    "warm_metrics",
    "pool",
    "browser_cost",
];

/// A point's key: its set values in FIELDS order, `name=value` joined by
/// spaces, but for fields not in `KEYED_ALWAYS` at their default.
pub fn point_key(p: &Point) -> String {
    FIELDS
        .iter()
        .filter_map(|f| {
            p.get(f.name)
                .filter(|v| !v.is_empty())
                .filter(|v| KEYED_ALWAYS.contains(&f.name) || v.as_str() != f.default)
                .map(|v| format!("{}={v}", f.name))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A Trial's key: its point, protocol and repetition.
pub fn trial_key(p: &Point, protocol: Protocol, rep: usize) -> String {
    format!("{} protocol={protocol} rep={rep}", point_key(p))
}

/// The top-level fields and axes in which two experiments differ.
pub fn differences(a: &Experiment, b: &Experiment) -> Vec<String> {
    let (ja, jb) = (
        serde_json::to_value(a).unwrap_or_default(),
        serde_json::to_value(b).unwrap_or_default(),
    );
    let mut out = Vec::new();
    if let (Some(ma), Some(mb)) = (ja.as_object(), jb.as_object()) {
        for (k, va) in ma {
            if k == "axes" {
                for ((name, x), (_, y)) in a.axes.iter().zip(&b.axes) {
                    if x != y {
                        out.push(name.clone());
                    }
                }
            } else if mb.get(k) != Some(va) {
                out.push(k.clone());
            }
        }
    }
    out
}

/// Top-level fields that label a campaign without changing what it measures:
/// they may change between the runs of one campaign (the copy follows).
pub const LABELS: &[&str] = &["name", "description", "metric"];

/// The fields in which two experiments differ as campaigns: `differences`
/// less the labels. Empty: a campaign of one may resume with the other.
pub fn campaign_differences(a: &Experiment, b: &Experiment) -> Vec<String> {
    differences(a, b)
        .into_iter()
        .filter(|k| !LABELS.contains(&k.as_str()))
        .collect()
}

/// Top-level keys that a campaign's copy of an experiment always sets, so that
/// the copy means the same wherever it lies (its name does not come from its
/// own file name) and whatever a later version's defaults are.
/// Each with the value the copy gets from the experiment: a key cannot be
/// added without its value.
const PINNED: &[(&str, PinnedValue)] = &[
    ("name", |e| toml_string(&e.name)),
    ("baseline", |e| toml_string(e.baseline.name())),
    ("reps", |e| e.reps.to_string()),
    ("warmup", |e| e.warmup.to_string()),
    ("seed", |e| e.seed.to_string()),
    ("site_seed", |e| e.site_seed.to_string()),
    ("server", |e| toml_string(e.server.name())),
    ("client", |e| toml_string(e.client.name())),
    ("timeout", |e| {
        toml_string(&link::units::format_duration(e.timeout))
    }),
];

/// How a pinned key's value is written from the experiment.
type PinnedValue = fn(&Experiment) -> String;

/// `s` as a TOML string.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// Whether `text` sets top-level `key` (false where `text` is not TOML).
pub fn sets_key(text: &str, key: &str) -> bool {
    text.parse::<toml::Table>()
        .is_ok_and(|t| t.contains_key(key))
}

/// The text a campaign keeps of `exp` (parsed from `text`): `text` headed by
/// every pinned key it leaves to its file name, a default or a command-line
/// flag, with the value `exp` has. Parsing it anywhere gives `exp` again.
pub fn pinned_text(exp: &Experiment, text: &str) -> String {
    let Ok(table) = text.parse::<toml::Table>() else {
        return text.to_string();
    };
    let mut head = String::new();
    for (key, value) in PINNED {
        if table.contains_key(*key) {
            continue;
        }
        head.push_str(&format!("{key} = {}\n", value(exp)));
    }
    if head.is_empty() {
        return text.to_string();
    }
    format!(
        "# Set by spdylab: what the file below left to its name, a default or a flag.\n{head}\n{text}"
    )
}

/// What a comparison, a diff or a budget is about: the page's load (PLT,
/// compare's default; time on wire, the paper's, 004 §IV: first request
/// packet to last response packet) or what the user sees (TTFB, FCP, LCP,
/// Speed Index: Chromium's measured, the model's estimated; docs/visual.md).
/// Every metric is stored either way; this picks the headline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Metric {
    #[default]
    Plt,
    Tow,
    Ttfb,
    Fcp,
    Lcp,
    Si,
}

impl Metric {
    pub const ALL: [Metric; 6] = [
        Metric::Plt,
        Metric::Tow,
        Metric::Ttfb,
        Metric::Fcp,
        Metric::Lcp,
        Metric::Si,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Plt => "plt",
            Metric::Tow => "tow",
            Metric::Ttfb => "ttfb",
            Metric::Fcp => "fcp",
            Metric::Lcp => "lcp",
            Metric::Si => "si",
        }
    }

    /// As a reader sees it: `PLT`, `ToW`, `TTFB`, `FCP`, `LCP`, `SI`.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Plt => "PLT",
            Metric::Tow => "ToW",
            Metric::Ttfb => "TTFB",
            Metric::Fcp => "FCP",
            Metric::Lcp => "LCP",
            Metric::Si => "SI",
        }
    }

    /// Whether it is one of what the user sees (`ProbeRecord::paint`),
    /// which a probe may lack.
    pub fn is_paint(self) -> bool {
        !matches!(self, Metric::Plt | Metric::Tow)
    }

    /// The other load metric, shown beside the headline: ToW beside PLT,
    /// PLT beside any other.
    pub fn other(self) -> Metric {
        match self {
            Metric::Plt => Metric::Tow,
            _ => Metric::Plt,
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Metric {
    type Err = String;
    fn from_str(s: &str) -> Result<Metric, String> {
        Metric::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("'{s}' is not a metric: plt, tow, ttfb, fcp, lcp or si"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIG: &str = r#"
name = "fig"
sites = ["youtube", "twitter"]
protocols = ["https", "h2"]
reps = 3

[link]
rtt = { from = "10ms", to = "490ms", step = "40ms" }
rate = "1mbit"
loss = ["0%", "1%"]

[knobs]
max_streams = [1, 6, 100]
"#;

    /// Each row of section `knobs` names its own Knob and its holder, and
    /// only those rows name one; a switch's values are off and on, in that order.
    #[test]
    fn every_knob_row_names_its_own_knob() {
        let mut seen = Vec::new();
        for f in FIELDS {
            assert_eq!(f.knob.is_some(), f.section == "knobs", "{}", f.name);
            assert_eq!(f.knob.is_some(), f.holder != Holder::None, "{}", f.name);
            if let Some(k) = f.knob {
                assert!(!seen.contains(&k), "{}: {k:?} twice", f.name);
                seen.push(k);
                assert_eq!((k.name(), Knob::named(f.name)), (f.name, Some(k)));
            }
        }
        assert_eq!(Knob::named("rtt"), None);
        let switch = field("tls_resume").unwrap().kind;
        assert_eq!(switch.choices(), Some(&["off", "on"][..]));
        assert_eq!(canonical(switch, "on"), Ok("on".to_string()));
        let e = canonical(switch, "yes").unwrap_err().to_string();
        assert_eq!(e, "'yes' is not one of off, on");
    }

    /// A profile in WebPageTest's spelling is the same point as ours (one
    /// key, one campaign); an unknown one lists the names (issue 47).
    #[test]
    fn profiles_in_webpagetests_spelling_are_ours() {
        let e = parse(
            "p.toml",
            "sites = [\"youtube\"]\nprotocols = [\"h2\"]\n[link]\nprofile = [\"Cable\", \"3GFast\", \"lte\"]\n",
        )
        .unwrap();
        assert_eq!(e.values("profile"), ["cable", "3g-fast", "lte"]);
        let err = parse(
            "p.toml",
            "sites = [\"youtube\"]\nprotocols = [\"h2\"]\n[link]\nprofile = \"5G\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("'5G' is not one of fios, cable"), "{err}");
    }

    #[test]
    fn axes_expand_to_the_cross_product() {
        let e = parse("fig.toml", FIG).unwrap();
        assert_eq!(e.values("rtt").len(), 13);
        assert_eq!(e.values("rtt")[0], "10ms");
        assert_eq!(e.values("rtt")[12], "490ms");
        assert_eq!(e.values("loss"), ["0%", "1%"]);
        assert_eq!(e.values("rate"), ["1mbit"]);
        assert_eq!(e.swept(), ["site", "rtt", "loss", "max_streams"]);
        let points = e.points();
        assert_eq!(points.len(), 2 * 13 * 2 * 3);
        assert_eq!(e.trial_count(), points.len() * 2 * 3);
        let key = point_key(&points[0]);
        assert!(
            key.starts_with("site=youtube rtt=10ms rate=1mbit loss=0% queue=256p"),
            "{key}"
        );
        assert!(!key.contains("delay_down"), "{key}");
        let keys: std::collections::HashSet<String> = points.iter().map(point_key).collect();
        assert_eq!(keys.len(), points.len());
    }

    #[test]
    fn geometric_ranges_and_integer_ranges() {
        let e = parse(
            "x.toml",
            "sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nrate = { from = \"64kbit\", to = \"8192kbit\", factor = 2 }\n[knobs]\nshards = { from = 1, to = 7 }\n",
        )
        .unwrap();
        assert_eq!(
            e.values("rate"),
            [
                "64kbit", "128kbit", "256kbit", "512kbit", "1024kbit", "2048kbit", "4096kbit",
                "8192kbit"
            ]
        );
        assert_eq!(e.values("shards").len(), 7);
        assert_eq!(e.values("iw"), ["default"]);
        let e = parse(
            "x.toml",
            "sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nloss = { from = \"0%\", to = \"3%\", step = \"0.5%\" }\n",
        )
        .unwrap();
        assert_eq!(
            e.values("loss"),
            ["0%", "0.5%", "1%", "1.5%", "2%", "2.5%", "3%"]
        );
    }

    #[test]
    fn queue_axis_takes_drop_tail_and_codel_in_canonical_form() {
        let e = parse(
            "x.toml",
            "sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nqueue = [\"64kb\", \"codel:5ms,0.1s,1000p\", \"codel:10ms,200ms,256p\"]\n",
        )
        .unwrap();
        assert_eq!(
            e.values("queue"),
            ["64000b", "codel:5ms,100ms", "codel:10ms,200ms,256p"]
        );
        // Two spellings of one queue are one value.
        let err = parse(
            "x.toml",
            "sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nqueue = [\"codel:5ms,100ms\", \"codel:5ms,0.1s,1000p\"]\n",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("codel:5ms,100ms is listed twice"),
            "{err}"
        );
    }

    #[test]
    fn server_and_client_are_typed_and_differences_named() {
        let base = "sites = \"youtube\"\nprotocols = [\"https\"]\n";
        let e = parse("x.toml", base).unwrap();
        assert_eq!(
            (e.server, e.client),
            (ServerKind::Builtin, ClientKind::Model)
        );
        let f = parse(
            "x.toml",
            &format!("server = \"nginx\"\nclient = \"chromium\"\n{base}reps = 2\n"),
        )
        .unwrap();
        assert_eq!(f.server, ServerKind::Peer(crate::PeerKind::Nginx));
        assert_eq!(f.client, ClientKind::Chromium);
        let mut d = differences(&e, &f);
        d.sort();
        assert_eq!(d, ["client", "reps", "server"]);
        let err = parse("x.toml", &format!("server = \"lighttpd\"\n{base}")).unwrap_err();
        assert!(matches!(&err, ExperimentError::Field { line: 1, field, .. } if field == "server"));
        assert_eq!(
            err.to_string(),
            "x.toml:1: server: 'lighttpd' is not one of builtin, nginx, apache, h2o, caddy"
        );
    }

    #[test]
    fn a_pinned_copy_parses_the_same_wherever_it_lies() {
        let text = "# my figure\nsites = [\"icons\", \"shop.toml\"]\nprotocols = [\"https\", \"h2\"]\n[link]\nrtt = \"20ms\"\n";
        let exp = parse("/home/u/exps/my fig2.toml", text).unwrap();
        assert_eq!(exp.name, "my fig2");
        let copy = pinned_text(&exp, text);
        assert!(copy.ends_with(text), "{copy}");
        let again = parse("/out/experiment.toml", &copy).unwrap();
        assert_eq!(again, exp);
        // Pinning twice adds nothing; a file that sets every key is kept as is.
        assert_eq!(pinned_text(&again, &copy), copy);
        // --server/--client set on the command line are pinned like defaults.
        let mut flagged = exp.clone();
        flagged.server = ServerKind::Peer(crate::PeerKind::Nginx);
        let copy = pinned_text(&flagged, text);
        assert!(copy.contains("server = \"nginx\"\n"), "{copy}");
        assert_eq!(parse("experiment.toml", &copy).unwrap(), flagged);
        // Labels may differ between runs of one campaign; the rest may not.
        let renamed = parse("/tmp/other.toml", text).unwrap();
        assert_eq!(differences(&exp, &renamed), ["name"]);
        assert!(campaign_differences(&exp, &renamed).is_empty());
        assert_eq!(campaign_differences(&exp, &flagged), ["server"]);
        assert!(sets_key(text, "sites") && !sets_key(text, "rtt") && !sets_key("=", "x"));
    }

    /// A field added later, at its default, leaves an older campaign's
    /// Trial keys as they were (so it resumes); set, it is in the key.
    #[test]
    fn later_fields_at_their_default_keep_older_keys() {
        let older: Point = [("site", "icons"), ("max_streams", "100")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut now = older.clone();
        for f in FIELDS.iter().filter(|f| !KEYED_ALWAYS.contains(&f.name)) {
            now.insert(f.name.to_string(), f.default.to_string());
        }
        assert_eq!(point_key(&now), point_key(&older));
        now.insert("notsent_lowat".into(), "16384".into());
        assert_eq!(
            point_key(&now),
            "site=icons max_streams=100 notsent_lowat=16384"
        );
    }

    #[test]
    fn every_pinned_key_is_written_with_its_own_value() {
        let minimal = "sites = [\"icons\"]\nprotocols = [\"https\", \"h2\"]\n";
        let full = format!(
            "{minimal}name = \"x\"\nbaseline = \"h2\"\nreps = 7\nwarmup = 2\nseed = 9\nsite_seed = 11\nserver = \"nginx\"\nclient = \"chromium\"\ntimeout = \"45s\"\n"
        );
        let exp = parse("elsewhere.toml", &full).unwrap();
        assert!(PINNED.iter().all(|(k, _)| sets_key(&full, k)));
        // Every pinned key set to a value other than its default: the copy of
        // a file that leaves them all out gives each back.
        let copy = pinned_text(&exp, minimal);
        assert_eq!(parse("experiment.toml", &copy).unwrap(), exp, "{copy}");
        for (key, _) in PINNED {
            assert!(sets_key(&copy, key), "{key}: {copy}");
        }
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let cases = [
            ("sites = \"youtube\"\nprotocols = [\"https\", \"h9\"]\n", "x.toml:2: protocols: "),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nrtt = \"150 parsecs\"\n", "x.toml:4: link.rtt: "),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nrtx = \"150ms\"\n", "x.toml:4: link.rtx: unknown"),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\n[knobs]\nshards = 0\n", "x.toml:4: knobs.shards: "),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nrtt = { from = \"10ms\", to = \"5ms\", step = \"1ms\" }\n", "x.toml:4: link.rtt: to is below from"),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\nreps = 0\n", "x.toml:3: reps: "),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\nbaseline = \"h2\"\n", "x.toml:3: baseline: "),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\ncolour = 3\n", "x.toml:3: unknown field `colour`"),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nqueue = { from = 1, to = 2 }\n", "x.toml:4: link.queue: "),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\n[link]\nqueue = \"codel:100ms,5ms\"\n", "x.toml:4: link.queue: 'codel:100ms,5ms' is not a queue such as 256p"),
            ("protocols = [\"https\"]\n", "x.toml:1: missing field `sites`"),
            ("sites = \"youtube\"\nprotocols = [\"https\"]\n[knobs]\nview = \"second\"\n", "x.toml:4: knobs.view: 'second' is not one of first, repeat, both"),
        ];
        for (text, want) in cases {
            let err = parse("x.toml", text).unwrap_err().to_string();
            assert!(err.starts_with(want), "{err:?} should start with {want:?}");
        }
    }

    /// A sweep's `view = "both"` is two points, first and repeat; the first
    /// view (the default) is left out of the key, so older campaigns resume.
    #[test]
    fn view_both_is_the_first_and_the_repeat_point() {
        let text = "sites = \"youtube\"\nprotocols = [\"h2\"]\n[knobs]\nview = \"both\"\n";
        let e = parse("x.toml", text).unwrap();
        assert_eq!(e.values("view"), ["first", "repeat"]);
        let text =
            "sites = \"youtube\"\nprotocols = [\"h2\"]\n[knobs]\nview = [\"repeat\", \"both\"]\n";
        assert_eq!(
            parse("x.toml", text).unwrap().values("view"),
            ["repeat", "first"]
        );
        let mut p = Point::new();
        p.insert("site".into(), "youtube".into());
        p.insert("view".into(), "first".into());
        assert_eq!(point_key(&p), "site=youtube");
        p.insert("view".into(), "repeat".into());
        assert_eq!(point_key(&p), "site=youtube view=repeat");
    }
}
