//! The paper's experiments (004, "Can SPDY really make the web faster?") as
//! typed values — its axes, its sites (twitter, youtube, imgur), its 256-packet
//! drop-tail queue, its testbed (every page mirrored on one server, §V; N shard
//! host names for Fig. 8), TLS 1.2, its metric (time on wire) and, where it
//! gives numbers, reference marks — rendered as the experiment file a campaign
//! keeps; and seed 002's mobile study (2 Mbit/s down, 1 Mbit/s up, 150 ms, SPDY
//! against HTTP over many pages). Each grid's description ends with its
//! settings table (`settings`). `--quick` grids are reduced so that each runs
//! in minutes on 2 cores. `paper`'s choices (which presets, which flags a
//! non-campaign refuses, each campaign's directory) are made here too.
//!
//! The paper's "SPDY" is our `spdy3`; `h2`, its heir, is measured beside it.
//! (A server or client without `spdy3` measures `h2` in its place, and says so.)
//!
//! The faithful presets also pool SPDY/h2 sessions per host name (2013 Chrome:
//! "a single SSL connection per domain", 002) and serve the era's RSA 2048
//! chains (`FAITHFUL`); Chromium, which pools as it does, refuses them
//! (`paper --client chromium` says so).
//!
//! The QUIC-era studies (h3 against h2; issue 50) are in `quic`; `every`
//! lists all presets.

use results::{ClientKind, Protocol, ServerKind};
use std::fmt::Write as _;

/// A protocol of a preset: a fixed one, or the paper's SPDY (see [`spdy`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PaperProtocol {
    Is(Protocol),
    Spdy,
}

use PaperProtocol::{Is, Spdy};
const HTTPS: PaperProtocol = Is(Protocol::Https);
const HTTP: PaperProtocol = Is(Protocol::Http);
const H2: PaperProtocol = Is(Protocol::H2);

/// The values of one axis, as the experiment file gives them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Axis {
    One(&'static str),
    List(&'static [&'static str]),
    Ints(&'static [i64]),
    /// `{ from, to, step }` in the axis's unit.
    Range {
        from: &'static str,
        to: &'static str,
        step: &'static str,
    },
    /// `{ from, to }` over integers, step 1.
    IntRange {
        from: i64,
        to: i64,
    },
}

/// One grid of a preset (its full or its quick form).
#[derive(Debug, Clone, Copy)]
pub struct Grid {
    pub name: &'static str,
    pub description: &'static str,
    pub sites: &'static [&'static str],
    pub protocols: &'static [PaperProtocol],
    pub reps: u32,
    pub timeout: Option<&'static str>,
    /// `[link]` axes, in file order.
    pub link: &'static [(&'static str, Axis)],
    /// `[knobs]` axes, in file order.
    pub knobs: &'static [(&'static str, Axis)],
}

/// A number of the paper, drawn as a mark: a gain of its `Preset::marks_of`.
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    pub site: Option<&'static str>,
    /// The axis and value it is at; None: an average over the sweep.
    pub at: Option<(&'static str, &'static str)>,
    pub gain_pct: f64,
    pub label: &'static str,
}

/// A preset: its name, what it reproduces, its grids and the paper's marks.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    pub name: &'static str,
    pub about: &'static str,
    pub full: Grid,
    pub quick: Grid,
    pub marks: &'static [Mark],
    /// The headline metric of its report: "tow" (004's time on wire), "plt",
    /// "lcp", ... (`results::Metric`).
    pub metric: &'static str,
    /// Where its settings come from, one line (for the settings table).
    pub source: &'static str,
    /// The protocol whose gain over the baseline the marks are: the paper's
    /// SPDY for 004 and 002, h3 for the QUIC-era studies.
    pub marks_of: PaperProtocol,
    /// The server it runs on, fixed (`paper --server` does not apply; in
    /// `paper all` it keeps it): a `production-quic` member's, or the
    /// built-in one where the preset turns knobs only it has.
    pub server: Option<ServerKind>,
    /// The group `paper GROUP` runs this preset in, each member in its own
    /// directory (`production-quic`).
    pub part_of: Option<&'static str>,
}

const FIG2_MARKS: &[Mark] = &[
    Mark {
        site: Some("youtube"),
        at: None,
        gain_pct: 13.81,
        label: "004 Fig. 2: average",
    },
    Mark {
        site: Some("twitter"),
        at: None,
        gain_pct: 6.87,
        label: "004 Fig. 2: average",
    },
    Mark {
        site: Some("imgur"),
        at: None,
        gain_pct: 1.32,
        label: "004 Fig. 2: average",
    },
    Mark {
        site: Some("youtube"),
        at: Some(("rtt", "490ms")),
        gain_pct: 21.26,
        label: "004 Fig. 2: best case",
    },
];

const FIG4_MARKS: &[Mark] = &[
    Mark {
        site: None,
        at: Some(("rate", "64kbit")),
        gain_pct: 5.75,
        label: "004 Fig. 4: mean of sites",
    },
    Mark {
        site: None,
        at: Some(("rate", "8mbit")),
        gain_pct: -22.24,
        label: "004 Fig. 4: mean of sites",
    },
];

/// Seed 002: "a mean page load time improvement of 23% across these sites, compared to HTTP".
const MOBILE_MARKS: &[Mark] = &[Mark {
    site: None,
    at: None,
    gain_pct: 23.0,
    label: "002: mean PLT reduction over 77 pages",
}];

/// The knobs of 004's testbed (§III-B, §V): every page mirrored with wget onto
/// one server ("converting their links accordingly"), TLS 1.2 (Apache 2.2 with
/// mod_ssl and mod_spdy, 2013: no TLS 1.3).
/// 2013 Chrome kept one SPDY session per host name, and certificates were RSA
/// chains.
const MIRROR: (&str, Axis) = ("layout", Axis::One("mirror"));
const TLS12: (&str, Axis) = ("tls", Axis::One("1.2"));
const PER_HOST: (&str, Axis) = ("pool", Axis::One("per-host"));
const RSA: (&str, Axis) = ("cert", Axis::One("rsa2048"));
const FAITHFUL: &[(&str, Axis)] = &[MIRROR, TLS12, PER_HOST, RSA];

const THREE_SITES: &[&str] = &["youtube", "twitter", "imgur"];
const ALL_SITES: &[&str] = &["twitter", "youtube", "imgur", "icons", "http-archive-2014"];
const TWO_SITES: &[&str] = &["youtube", "twitter"];
const QUEUE: (&str, Axis) = ("queue", Axis::One("256p"));
const RTT_150: (&str, Axis) = ("rtt", Axis::One("150ms"));
const RATE_1M: (&str, Axis) = ("rate", Axis::One("1mbit"));

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "fig2",
        about: "Fig. 2: effect of RTT, 10-490 ms at 1 Mbit/s, 0 % loss",
        full: Grid {
            name: "fig2",
            description: "004 Fig. 2: gain of SPDY over HTTPS against RTT (BW 1 Mbit/s, PLR 0 %, 256-packet queue). 13 RTTs, 10 repetitions (the paper ran 20 on a noisier testbed).",
            sites: THREE_SITES,
            protocols: &[HTTPS, Spdy, H2],
            reps: 10,
            timeout: None,
            link: &[
                (
                    "rtt",
                    Axis::Range {
                        from: "10ms",
                        to: "490ms",
                        step: "40ms",
                    },
                ),
                RATE_1M,
                QUEUE,
            ],
            knobs: FAITHFUL,
        },
        quick: Grid {
            name: "fig2-quick",
            description: "004 Fig. 2, reduced: three RTTs, two sites, two repetitions (BW 1 Mbit/s, PLR 0 %, 256-packet queue).",
            sites: TWO_SITES,
            protocols: &[HTTPS, Spdy, H2],
            reps: 2,
            timeout: None,
            link: &[
                ("rtt", Axis::List(&["10ms", "150ms", "490ms"])),
                RATE_1M,
                QUEUE,
            ],
            knobs: FAITHFUL,
        },
        marks: FIG2_MARKS,
        metric: "tow",
        source: "004 §V-A, Fig. 2",
        marks_of: Spdy,
        server: None,
        part_of: None,
    },
    Preset {
        name: "fig4",
        about: "Fig. 4: effect of bandwidth, 64 kbit/s-8 Mbit/s at 150 ms",
        full: Grid {
            name: "fig4",
            description: "004 Fig. 4: gain of SPDY over HTTPS against bandwidth (RTT 150 ms, PLR 0 %, 256-packet queue).",
            sites: THREE_SITES,
            protocols: &[HTTPS, Spdy, H2],
            reps: 5,
            timeout: Some("600s"),
            link: &[
                RTT_150,
                (
                    "rate",
                    Axis::List(&[
                        "64kbit", "128kbit", "256kbit", "512kbit", "1mbit", "2mbit", "4mbit",
                        "8mbit",
                    ]),
                ),
                QUEUE,
            ],
            knobs: FAITHFUL,
        },
        quick: Grid {
            name: "fig4-quick",
            description: "004 Fig. 4, reduced: three bandwidths, two sites, two repetitions (RTT 150 ms, PLR 0 %).",
            sites: TWO_SITES,
            protocols: &[HTTPS, Spdy],
            reps: 2,
            timeout: Some("600s"),
            link: &[
                RTT_150,
                ("rate", Axis::List(&["256kbit", "1mbit", "8mbit"])),
                QUEUE,
            ],
            knobs: FAITHFUL,
        },
        marks: FIG4_MARKS,
        metric: "tow",
        source: "004 §V-B, Fig. 4",
        marks_of: Spdy,
        server: None,
        part_of: None,
    },
    Preset {
        name: "fig6",
        about: "Fig. 6: effect of packet loss, 0-3 % at 150 ms, 1 Mbit/s",
        full: Grid {
            name: "fig6",
            description: "004 Fig. 6: gain of SPDY over HTTPS against packet loss (RTT 150 ms, BW 1 Mbit/s).",
            sites: THREE_SITES,
            protocols: &[HTTPS, Spdy, H2],
            reps: 20,
            timeout: Some("300s"),
            link: &[
                RTT_150,
                RATE_1M,
                (
                    "loss",
                    Axis::Range {
                        from: "0%",
                        to: "3%",
                        step: "0.5%",
                    },
                ),
                QUEUE,
            ],
            knobs: FAITHFUL,
        },
        quick: Grid {
            name: "fig6-quick",
            description: "004 Fig. 6, reduced: 0, 1 and 3 % loss, two sites, three repetitions.",
            sites: TWO_SITES,
            protocols: &[HTTPS, Spdy],
            reps: 3,
            timeout: Some("300s"),
            link: &[
                RTT_150,
                RATE_1M,
                ("loss", Axis::List(&["0%", "1%", "3%"])),
                QUEUE,
            ],
            knobs: FAITHFUL,
        },
        marks: &[],
        metric: "tow",
        source: "004 §V-C, Fig. 6",
        marks_of: Spdy,
        server: None,
        part_of: None,
    },
    Preset {
        name: "fig8",
        about: "Fig. 8: effect of domain sharding, 1-7 shards at 150 ms, 1 Mbit/s",
        full: Grid {
            name: "fig8",
            description: "004 Fig. 8: gain of SPDY over HTTPS against the number of shards (RTT 150 ms, BW 1 Mbit/s, PLR 0 %). The paper ran 100 repetitions; the emulator is deterministic, so 10 suffice.",
            sites: THREE_SITES,
            protocols: &[HTTPS, Spdy, H2],
            reps: 10,
            timeout: None,
            link: &[RTT_150, RATE_1M, QUEUE],
            knobs: &[
                (
                    "layout",
                    Axis::List(&[
                        "shards:1", "shards:2", "shards:3", "shards:4", "shards:5", "shards:6",
                        "shards:7",
                    ]),
                ),
                TLS12,
                PER_HOST,
                RSA,
            ],
        },
        quick: Grid {
            name: "fig8-quick",
            description: "004 Fig. 8, reduced: 1, 3 and 7 shards, two sites, two repetitions.",
            sites: TWO_SITES,
            protocols: &[HTTPS, Spdy],
            reps: 2,
            timeout: None,
            link: &[RTT_150, RATE_1M, QUEUE],
            knobs: &[
                ("layout", Axis::List(&["shards:1", "shards:3", "shards:7"])),
                TLS12,
                PER_HOST,
                RSA,
            ],
        },
        marks: &[],
        metric: "tow",
        source: "004 §VI, Fig. 8",
        marks_of: Spdy,
        server: None,
        part_of: None,
    },
    Preset {
        name: "fig9",
        about: "Fig. 9: concurrent streams per connection (1-100) x RTT at 1 Mbit/s",
        full: Grid {
            name: "fig9",
            description: "004 Fig. 9: gain of SPDY over HTTPS against the server's maximum concurrent streams, over RTTs (BW 1 Mbit/s, PLR 0 %).",
            sites: THREE_SITES,
            protocols: &[HTTPS, Spdy],
            reps: 5,
            timeout: None,
            link: &[
                (
                    "rtt",
                    Axis::List(&["50ms", "150ms", "250ms", "350ms", "490ms"]),
                ),
                RATE_1M,
                QUEUE,
            ],
            knobs: &[
                MIRROR,
                TLS12,
                PER_HOST,
                RSA,
                (
                    "max_streams",
                    Axis::Ints(&[1, 2, 4, 6, 8, 10, 20, 30, 50, 100]),
                ),
            ],
        },
        quick: Grid {
            name: "fig9-quick",
            description: "004 Fig. 9, reduced: YouTube, 4 stream limits x 3 RTTs, two repetitions (BW 1 Mbit/s).",
            sites: &["youtube"],
            protocols: &[HTTPS, Spdy],
            reps: 2,
            timeout: None,
            link: &[
                ("rtt", Axis::List(&["50ms", "250ms", "490ms"])),
                RATE_1M,
                QUEUE,
            ],
            knobs: &[
                MIRROR,
                TLS12,
                PER_HOST,
                RSA,
                ("max_streams", Axis::Ints(&[1, 6, 30, 100])),
            ],
        },
        marks: &[],
        metric: "tow",
        source: "004 §VI, Fig. 9",
        marks_of: Spdy,
        server: None,
        part_of: None,
    },
    Preset {
        name: "iw",
        about: "Sec. V-B: TCP initial window 3, 7, 10, 16 at 150 ms, 1 Mbit/s",
        full: Grid {
            name: "iw",
            description: "004 Sec. V-B: gain of SPDY over HTTPS against the server's TCP initial window (RTT 150 ms, BW 1 Mbit/s, PLR 0 %).",
            sites: THREE_SITES,
            protocols: &[HTTPS, Spdy, H2],
            reps: 10,
            timeout: None,
            link: &[RTT_150, RATE_1M, QUEUE, ("iw", Axis::Ints(&[3, 7, 10, 16]))],
            knobs: FAITHFUL,
        },
        quick: Grid {
            name: "iw-quick",
            description: "004 Sec. V-B, reduced: initial windows 3, 10 and 16, two sites, two repetitions.",
            sites: TWO_SITES,
            protocols: &[HTTPS, Spdy],
            reps: 2,
            timeout: None,
            link: &[RTT_150, RATE_1M, QUEUE, ("iw", Axis::Ints(&[3, 10, 16]))],
            knobs: FAITHFUL,
        },
        marks: &[],
        metric: "tow",
        source: "004 §V-B (initial window)",
        marks_of: Spdy,
        server: None,
        part_of: None,
    },
    Preset {
        name: "mobile",
        about: "Seed 002: SPDY on mobile networks, 2 Mbit/s down, 1 Mbit/s up, 150 ms, against HTTP",
        full: Grid {
            name: "mobile",
            description: "Seed 002 (Welsh, Greenstein, Piatek, 2012): page load time of SPDY (and h2) against HTTP on an emulated 3G link, 2 Mbit/s down, 1 Mbit/s up, 150 ms RTT, no loss; every built-in site (002 loaded 77 pages of 31 sites through one server).",
            sites: ALL_SITES,
            protocols: &[HTTP, Spdy, H2],
            reps: 10,
            timeout: Some("300s"),
            link: &[RTT_150, ("down", Axis::One("2mbit")), ("up", Axis::One("1mbit")), QUEUE],
            knobs: &[PER_HOST],
        },
        quick: Grid {
            name: "mobile-quick",
            description: "Seed 002, reduced: every built-in site, two repetitions (2 Mbit/s down, 1 Mbit/s up, 150 ms).",
            sites: ALL_SITES,
            protocols: &[HTTP, Spdy, H2],
            reps: 2,
            timeout: Some("300s"),
            link: &[RTT_150, ("down", Axis::One("2mbit")), ("up", Axis::One("1mbit")), QUEUE],
            knobs: &[PER_HOST],
        },
        marks: MOBILE_MARKS,
        // 002 reports the browser's page load time.
        metric: "plt",
        // 002 mapped every domain to the one GFE address (its /etc/hosts),
        // kept the names ("a single SSL connection per domain"): the origin
        // layout on one address, one session per host name (`pool = per-host`).
        source: "seed 002 (Google, 2012)",
        marks_of: Spdy,
        server: None,
        part_of: None,
    },
];

mod quic;

/// Every preset: 004's and 002's (`PRESETS`), then the QUIC-era studies'
/// (`quic::PRESETS`).
pub fn every() -> impl Iterator<Item = &'static Preset> {
    PRESETS.iter().chain(quic::PRESETS)
}

pub fn preset(name: &str) -> Option<&'static Preset> {
    every().find(|p| p.name == name)
}

/// Who serves and who loads a preset's pages: the built-in server and the
/// model unless told otherwise (`paper --server/--client`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Peers {
    pub server: ServerKind,
    pub client: ClientKind,
}

/// The protocol that stands for the paper's SPDY: `spdy3` where the server and
/// the client have it (the built-in server and the model); otherwise `h2`, its
/// heir (and the presets then measure h2 only once).
pub fn spdy(peers: Peers) -> Protocol {
    if peers.server == ServerKind::Builtin && peers.client == ClientKind::Model {
        Protocol::Spdy3
    } else {
        Protocol::H2
    }
}

/// The protocol `pp` is, the paper's SPDY being `spdy`.
fn resolve(pp: PaperProtocol, spdy: Protocol) -> Protocol {
    match pp {
        Is(proto) => proto,
        Spdy => spdy,
    }
}

/// A TOML basic string.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn list<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    let items: Vec<String> = items.iter().map(f).collect();
    format!("[{}]", items.join(", "))
}

impl Axis {
    /// The axis's value as the experiment file writes it.
    fn toml(self) -> String {
        match self {
            Axis::One(v) => quoted(v),
            Axis::List(vs) => list(vs, |v| quoted(v)),
            Axis::Ints(vs) => list(vs, |v| v.to_string()),
            Axis::Range { from, to, step } => format!(
                "{{ from = {}, to = {}, step = {} }}",
                quoted(from),
                quoted(to),
                quoted(step)
            ),
            Axis::IntRange { from, to } => format!("{{ from = {from}, to = {to} }}"),
        }
    }
}

impl Preset {
    /// Who serves and loads this preset's pages: `peers`, with the study's
    /// own server where it has one (`server`).
    pub fn peers(&self, peers: Peers) -> Peers {
        Peers {
            server: self.server.unwrap_or(peers.server),
            ..peers
        }
    }

    /// Whether it runs on a server of its own rather than on `server`.
    pub fn keeps_own_server(&self, server: ServerKind) -> bool {
        self.server.is_some_and(|s| s != server)
    }

    /// The protocols of its grid, SPDY resolved (`spdy`), each once.
    fn protocols(&self, quick: bool, peers: Peers) -> Vec<Protocol> {
        let spdy = spdy(peers);
        let mut out: Vec<Protocol> = Vec::new();
        for pp in self.grid(quick).protocols {
            let proto = resolve(*pp, spdy);
            if !out.contains(&proto) {
                out.push(proto);
            }
        }
        out
    }

    pub fn grid(&self, quick: bool) -> &Grid {
        if quick {
            &self.quick
        } else {
            &self.full
        }
    }
}

/// The settings table of a preset's grid: (setting, value) rows — what it
/// loads, over which link, on which layout, TLS, pooling, with which metric —
/// every knob the experiment file leaves to its default named with it.
pub fn settings(p: &Preset, quick: bool, peers: Peers) -> Vec<(String, String)> {
    let g = p.grid(quick);
    let peers = p.peers(peers);
    let protocols: Vec<&str> = p.protocols(quick, peers).iter().map(|p| p.name()).collect();
    let value = |axes: &[(&str, Axis)], name: &str| {
        axes.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, a)| a.toml().replace('"', ""))
    };
    let mut rows = vec![
        ("source".to_string(), p.source.to_string()),
        ("sites".to_string(), g.sites.join(", ")),
        (
            "protocols".to_string(),
            format!("{} (baseline {})", protocols.join(", "), protocols[0]),
        ),
    ];
    for (name, axis) in g.link {
        rows.push((name.to_string(), axis.toml().replace('"', "")));
    }
    rows.push((
        "layout".to_string(),
        value(g.knobs, "layout").unwrap_or_else(|| "origin (one address)".into()),
    ));
    rows.push((
        "tls".to_string(),
        value(g.knobs, "tls").unwrap_or_else(|| "1.3, 1.2 offered".into()),
    ));
    rows.push((
        "pool".to_string(),
        value(g.knobs, "pool").unwrap_or_else(|| "chromium (as today's Chromium)".into()),
    ));
    rows.push((
        "cert".to_string(),
        value(g.knobs, "cert").unwrap_or_else(|| "ecdsa".into()),
    ));
    for (name, axis) in g.knobs {
        if !["layout", "tls", "pool", "cert"].contains(name) {
            rows.push((name.to_string(), axis.toml().replace('"', "")));
        }
    }
    rows.push((
        "metric".to_string(),
        match p.metric {
            "tow" => "ToW (time on wire), PLT beside it".to_string(),
            "plt" => "PLT, ToW beside it".to_string(),
            m => format!("{}, PLT beside it", m.to_uppercase()),
        },
    ));
    rows.push(("reps".to_string(), g.reps.to_string()));
    rows.push((
        "server, client".to_string(),
        format!("{}, {}", peers.server.name(), peers.client.name()),
    ));
    rows
}

/// Every preset's settings tables, full and quick, for `paper --help`.
pub fn help_tables() -> String {
    let mut out = String::new();
    for p in every() {
        let _ = writeln!(out, "{}: {}", p.name, p.about);
        let (full, quick) = (
            settings(p, false, Peers::default()),
            settings(p, true, Peers::default()),
        );
        let _ = writeln!(out, "  {:<15} {:<40} quick", "setting", "full");
        for ((k, f), (_, q)) in full.iter().zip(&quick) {
            let q = if q == f { "=" } else { q.as_str() };
            let _ = writeln!(out, "  {k:<15} {f:<40} {q}");
        }
        out.push('\n');
    }
    out
}

/// The experiment text of a preset, with the paper's reference marks.
pub fn text(p: &Preset, quick: bool, peers: Peers) -> String {
    let g = p.grid(quick);
    let peers = p.peers(peers);
    let spdy = spdy(peers);
    let protocols = p.protocols(quick, peers);
    let stand_in = if spdy == Protocol::Spdy3 || !g.protocols.contains(&Spdy) {
        String::new()
    } else {
        format!(
            "(server {}, client {}: no spdy3, so {spdy}, SPDY's heir, stands in for it.) ",
            peers.server, peers.client
        )
    };
    // Top-level keys first: before any [table].
    let mut t = String::new();
    let _ = writeln!(t, "server = {}", quoted(peers.server.name()));
    let _ = writeln!(t, "client = {}", quoted(peers.client.name()));
    let _ = writeln!(t, "name = {}", quoted(g.name));
    let table: Vec<String> = settings(p, quick, peers)
        .iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect();
    let _ = writeln!(
        t,
        "description = {}",
        quoted(&format!(
            "{stand_in}{} Settings — {}.",
            g.description,
            table.join("; ")
        ))
    );
    let _ = writeln!(t, "metric = {}", quoted(p.metric));
    let _ = writeln!(t, "sites = {}", list(g.sites, |s| quoted(s)));
    let _ = writeln!(t, "protocols = {}", list(&protocols, |p| quoted(p.name())));
    let _ = writeln!(t, "reps = {}", g.reps);
    if let Some(timeout) = g.timeout {
        let _ = writeln!(t, "timeout = {}", quoted(timeout));
    }
    for (table, axes) in [("link", g.link), ("knobs", g.knobs)] {
        if !axes.is_empty() {
            let _ = writeln!(t, "[{table}]");
            for (name, axis) in axes {
                let _ = writeln!(t, "{name} = {}", axis.toml());
            }
        }
    }
    let marks_of = resolve(p.marks_of, spdy);
    // The marks of the grid's sites (the quick grids load fewer).
    let in_grid = |m: &&Mark| m.site.is_none_or(|s| g.sites.contains(&s));
    for m in p.marks.iter().filter(in_grid) {
        t.push_str("\n[[reference]]\n");
        if let Some(site) = m.site {
            let _ = writeln!(t, "site = {}", quoted(site));
        }
        let _ = writeln!(t, "protocol = {}", quoted(marks_of.name()));
        if let Some((axis, at)) = m.at {
            let _ = writeln!(t, "axis = {}\nat = {}", quoted(axis), quoted(at));
        }
        let _ = writeln!(t, "gain_pct = {}", m.gain_pct);
        let _ = writeln!(t, "label = {}", quoted(m.label));
    }
    t
}

/// Whether `paper FIGURE` runs campaigns (the figures, `all`): `load` and
/// `pipelining` are not campaigns (their own servers, no experiment file, no
/// slices).
pub fn is_campaign(figure: &str) -> bool {
    !matches!(figure, "load" | "pipelining")
}

/// The flags of `paper` that only the figures' campaigns take, as given.
#[derive(Debug, Clone, Copy, Default)]
pub struct CampaignFlags {
    /// `--print` (or no `--out`).
    pub print: bool,
    pub server: ServerKind,
    pub client: ClientKind,
    pub shard: bool,
    pub retry_failed: bool,
    pub no_har: bool,
    pub no_calibration: bool,
    pub jobs: bool,
}

/// For `paper load` and `paper pipelining`: Err names the first flag given
/// that applies only to campaigns.
pub fn refuse_campaign_flags(figure: &str, f: &CampaignFlags) -> Result<(), String> {
    let given = [
        (f.print, "--print"),
        (f.server != ServerKind::Builtin, "--server"),
        (f.client != ClientKind::Model, "--client"),
        (f.shard, "--shard"),
        (f.retry_failed, "--retry-failed"),
        (f.no_har, "--no-har"),
        (f.no_calibration, "--no-calibration"),
        (f.jobs, "--jobs"),
    ];
    match given.iter().find(|(set, _)| *set) {
        Some((_, flag)) => Err(format!(
            "paper {figure}: {flag} applies to the figures' campaigns, not to this preset"
        )),
        None => Ok(()),
    }
}

/// The presets `paper FIGURE` runs: one by its name, the members of a group
/// (`production-quic`), or every one for `all`.
pub fn chosen(figure: &str) -> Result<Vec<&'static Preset>, String> {
    if figure == "all" {
        return Ok(every().collect());
    }
    let group: Vec<&'static Preset> = every().filter(|p| p.part_of == Some(figure)).collect();
    if !group.is_empty() {
        return Ok(group);
    }
    let mut names: Vec<&str> = Vec::new();
    for p in every() {
        let name = p.part_of.unwrap_or(p.name);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    preset(figure)
        .map(|p| vec![p])
        .ok_or_else(|| format!("'{figure}' is not a figure: {} or all", names.join(", ")))
}

/// Runs `chosen` in one directory each (`out/NAME`): `all` and a group.
pub fn each_in_own_dir(figure: &str) -> bool {
    figure == "all" || every().any(|p| p.part_of == Some(figure))
}

/// Err when `paper FIGURE --server S` asks a preset with a server of its
/// own (the members of `production-quic`, the presets that turn the
/// built-in server's knobs) for another one.
pub fn refuse_server(chosen: &[&Preset], server: ServerKind) -> Result<(), String> {
    if server == ServerKind::Builtin {
        return Ok(());
    }
    match chosen.iter().find(|p| p.keeps_own_server(server)) {
        Some(p) => Err(match p.part_of {
            Some(group) => format!(
                "paper {group}: --server {}: runs one campaign per server, each its study's (paper {} runs one)",
                server.name(),
                p.name
            ),
            None => format!(
                "paper {}: --server {}: runs on {} only (the knobs it turns are that server's)",
                p.name,
                server.name(),
                p.server.map_or("", |s| s.name())
            ),
        }),
        None => Ok(()),
    }
}

/// Of `chosen`, those that keep a server of their own when `paper all` is
/// asked for `server`, by name.
pub fn keeping_their_server(chosen: &[&Preset], server: ServerKind) -> Vec<&'static str> {
    chosen
        .iter()
        .filter(|p| p.keeps_own_server(server))
        .map(|p| p.name)
        .collect()
}

/// The experiment files of `presets` (`paper --print`), each under a
/// comment naming it.
pub fn files(presets: &[&Preset], quick: bool, peers: Peers) -> String {
    let mut out = String::new();
    for p in presets {
        let _ = write!(out, "# {}: {}\n{}", p.name, p.about, text(p, quick, peers));
    }
    out
}

/// The campaign of preset `p` and its directory: `out`, or for `all`
/// (`each_in_own_dir`) `out/NAME`. Err: the preset's text does not parse
/// (a bug).
pub fn campaign(
    p: &Preset,
    quick: bool,
    peers: Peers,
    out: &std::path::Path,
    each_in_own_dir: bool,
) -> Result<(crate::sweep_request::PreparedSweep, std::path::PathBuf), String> {
    let text = text(p, quick, peers);
    let experiment = results::experiment::parse(&format!("preset {}", p.name), &text)
        .map_err(|e| e.to_string())?;
    let dir = match each_in_own_dir {
        true => out.join(p.name),
        false => out.to_path_buf(),
    };
    let prepared = crate::sweep_request::PreparedSweep {
        experiment,
        text,
        site_base: std::path::PathBuf::new(),
    };
    Ok((prepared, dir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::experiment::parse;
    use results::PeerKind;

    #[test]
    fn every_preset_parses_and_the_quick_ones_are_small() {
        for p in PRESETS {
            for quick in [false, true] {
                let e = parse(p.name, &text(p, quick, Peers::default()))
                    .unwrap_or_else(|e| panic!("{}: {e}", p.name));
                assert!(e.protocols.contains(&Protocol::Spdy3), "{}", p.name);
                let chromium = Peers {
                    server: ServerKind::Peer(PeerKind::Nginx),
                    client: ClientKind::Chromium,
                };
                let t = text(p, quick, chromium);
                assert!(!t.contains("\"spdy3\""), "{}", p.name);
                let e2 = parse(p.name, &t).unwrap_or_else(|e| panic!("{}: {e}", p.name));
                assert_eq!((e2.server, e2.client), (chromium.server, chromium.client));
                let base = if p.name == "mobile" {
                    Protocol::Http
                } else {
                    Protocol::Https
                };
                assert_eq!(e2.protocols, [base, Protocol::H2], "{}", p.name);
                assert!(e2
                    .description
                    .starts_with("(server nginx, client chromium: "));
                assert_eq!(e.values("queue"), ["256p"], "{}", p.name);
                let sites = p.grid(quick).sites;
                let marks = p
                    .marks
                    .iter()
                    .filter(|m| m.site.is_none_or(|s| sites.contains(&s)));
                assert_eq!(e.references.len(), marks.count(), "{}", p.name);
                assert!(e
                    .references
                    .iter()
                    .all(|r| r.protocol.as_deref() == Some("spdy3")));
                if quick {
                    assert!(e.trial_count() <= 80, "{}: {}", p.name, e.trial_count());
                }
                assert!(e.description.contains("Settings — source: "), "{}", p.name);
            }
        }
    }

    /// The quick plans are what the settings tables say: 004's figures on the
    /// mirror (Fig. 8 on shards:N), TLS 1.2, ToW; seed 002 on 2/1 Mbit/s,
    /// 150 ms, no loss, http against spdy3 and h2, every built-in site, PLT.
    #[test]
    fn quick_plans_are_as_described() {
        use results::Metric;
        let parsed = |name: &str, quick: bool| {
            let p = preset(name).unwrap();
            parse(name, &text(p, quick, Peers::default())).unwrap()
        };
        for quick in [false, true] {
            for name in ["fig2", "fig4", "fig6", "fig9", "iw"] {
                let e = parsed(name, quick);
                assert_eq!(e.values("layout"), ["mirror"], "{name}");
                assert_eq!(e.values("tls"), ["1.2"], "{name}");
                assert_eq!(e.metric, Metric::Tow, "{name}");
                assert_eq!(e.baseline, Protocol::Https, "{name}");
                for point in e.points() {
                    let s = lab::trial::settings(&point, 1).unwrap();
                    assert_eq!(s.testbed.shards, 1, "{name}: one server");
                    assert_eq!(s.trial.tls13_only(), Some(false));
                }
            }
            let e = parsed("fig8", quick);
            assert_eq!(e.metric, Metric::Tow);
            let shards: Vec<usize> = e
                .points()
                .iter()
                .map(|pt| lab::trial::settings(pt, 1).unwrap().testbed.shards)
                .collect();
            let want: &[usize] = if quick {
                &[1, 3, 7]
            } else {
                &[1, 2, 3, 4, 5, 6, 7]
            };
            for n in want {
                assert!(shards.contains(n), "fig8: {shards:?}");
            }
            assert!(shards.iter().all(|n| want.contains(n)));
            let e = parsed("mobile", quick);
            assert_eq!(e.values("site").len(), site::BUILTIN.len());
            assert_eq!(e.protocols, [Protocol::Http, Protocol::Spdy3, Protocol::H2]);
            assert_eq!(e.metric, Metric::Plt);
            assert_eq!(
                (
                    e.values("rtt"),
                    e.values("down"),
                    e.values("up"),
                    e.values("loss")
                ),
                (
                    &["150ms".to_string()][..],
                    &["2mbit".to_string()][..],
                    &["1mbit".to_string()][..],
                    &["0%".to_string()][..]
                )
            );
            assert_eq!(e.values("layout"), ["origin"]);
        }
        let help = help_tables();
        for p in every() {
            assert!(help.contains(&format!("{}: ", p.name)), "{help}");
        }
        assert!(help.contains("shards:1, shards:2"), "{help}");
    }

    #[test]
    fn load_and_pipelining_refuse_print_and_campaign_flags() {
        for figure in ["load", "pipelining"] {
            assert!(!is_campaign(figure));
            assert!(refuse_campaign_flags(figure, &CampaignFlags::default()).is_ok());
            let print = CampaignFlags {
                print: true,
                jobs: true,
                ..CampaignFlags::default()
            };
            let why = refuse_campaign_flags(figure, &print).unwrap_err();
            assert_eq!(
                why,
                format!(
                    "paper {figure}: --print applies to the figures' campaigns, not to this preset"
                )
            );
            let jobs = CampaignFlags {
                jobs: true,
                ..CampaignFlags::default()
            };
            let why = refuse_campaign_flags(figure, &jobs).unwrap_err();
            assert!(why.contains("--jobs applies to the figures"), "{why}");
        }
        assert!(is_campaign("fig2") && is_campaign("all"));
        assert!(chosen("fig3")
            .unwrap_err()
            .contains("'fig3' is not a figure: fig2, "));
        assert_eq!(chosen("all").unwrap().len(), every().count());
    }

    /// The arithmetic of docs/notes on `paper all`: per preset, its Trials,
    /// its work items (points or chunks), the expected probe-seconds
    /// (warm-ups included) by the scheduler's own expectation, the longest
    /// item, and the makespan of the scheduler's rule simulated on 16
    /// testbeds and 2 cores: each preset alone (the sum is `paper all` run
    /// one after another) and all in one pool.
    /// `cargo test --release -p lab -- --ignored expected_paper_all --nocapture`
    #[test]
    #[ignore]
    fn expected_paper_all() {
        use crate::schedule::{chunks_of_reps, cpu_weight, expected_secs};
        fn simulate(mut items: Vec<(f64, f64)>, testbeds: usize, budget: f64) -> f64 {
            items.sort_by(|a, b| b.0.total_cmp(&a.0));
            let (mut now, mut running): (f64, Vec<(f64, f64)>) = (0.0, Vec::new());
            let mut queue: std::collections::VecDeque<(f64, f64)> = items.into();
            loop {
                loop {
                    let busy: f64 = running.iter().map(|r| r.1).sum();
                    if running.len() >= testbeds {
                        break;
                    }
                    let pos = queue
                        .iter()
                        .position(|w| running.is_empty() || busy + w.1 <= budget + 1e-9);
                    match pos.and_then(|i| queue.remove(i)) {
                        Some((secs, w)) => running.push((now + secs, w)),
                        None => break,
                    }
                }
                if running.is_empty() {
                    return now;
                }
                running.sort_by(|a, b| a.0.total_cmp(&b.0));
                now = running.remove(0).0;
            }
        }
        for quick in [false, true] {
            let mut all = Vec::new();
            let mut seq = [0.0; 3];
            println!("quick={quick}");
            for p in every() {
                let e =
                    results::experiment::parse(p.name, &text(p, quick, Peers::default())).unwrap();
                let mut items = Vec::new();
                for pt in e.points() {
                    let site =
                        lab::sites::resolve_in(&pt["site"], e.site_seed, std::path::Path::new(""))
                            .unwrap();
                    let pending: Vec<(Protocol, usize)> = (0..e.reps)
                        .flat_map(|r| e.protocols.iter().map(move |&p| (p, r)))
                        .collect();
                    let rep = expected_secs(&pt, e.seed, &site, e.protocols.len());
                    for c in chunks_of_reps(&pending, rep) {
                        let n = c.len() + e.warmup * e.protocols.len();
                        items.push((
                            expected_secs(&pt, e.seed, &site, n),
                            cpu_weight(&pt, e.seed, e.client),
                        ));
                    }
                }
                let sum: f64 = items.iter().map(|i| i.0).sum();
                let cpu: f64 = items.iter().map(|i| i.0 * i.1).sum();
                let max = items.iter().map(|i| i.0).fold(0.0, f64::max);
                let (m16, m32) = (
                    simulate(items.clone(), 16, 2.0),
                    simulate(items.clone(), 32, 2.0),
                );
                let m64 = simulate(items.clone(), 64, 2.0);
                seq[0] += m16;
                seq[1] += m32;
                seq[2] += m64;
                println!(
                    "{:7} trials {:5} items {:4} probe-s {:8.0} /16 {:6.0} weighted-cpu-s {:6.0} longest {:5.0} makespan16 {:6.0} makespan32 {:6.0} makespan64 {:6.0}",
                    p.name, e.trial_count(), items.len(), sum, sum / 16.0, cpu, max, m16, m32, m64
                );
                all.extend(items);
            }
            let sum: f64 = all.iter().map(|i| i.0).sum();
            println!(
                "all: probe-s {sum:.0} /16 {:.0}; one after another: {:.0} (16) {:.0} (32) {:.0} (64); pooled: {:.0} (16) {:.0} (32) {:.0} (64)",
                sum / 16.0,
                seq[0], seq[1], seq[2],
                simulate(all.clone(), 16, 2.0),
                simulate(all.clone(), 32, 2.0),
                simulate(all.clone(), 64, 2.0)
            );
        }
    }
}
