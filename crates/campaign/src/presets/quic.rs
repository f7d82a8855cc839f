//! The QUIC-era studies as presets (issue 50; docs/reproduction-h3.md): h3
//! against h2 on each study's own setup as far as this lab builds it, its
//! numbers as marks (a gain of h3 over h2, positive = h3 faster, whatever
//! sign convention the study used).
//!
//! - `quic-long-look`: Kakhki et al., "Taking a Long Look at QUIC" (IMC
//!   2017): their synthetic pages (`objects-NxSIZE`), 36 ms, 10 Mbit/s, no
//!   loss (Fig. 6a/6b) and 1 % (Fig. 8a/8d).
//! - `quic-long-look-rates`: the same pages over Fig. 6's rates (5 to 100
//!   Mbit/s) and delays (36 ms plus 0, 50 or 100), no loss.
//! - `tuned-tcp`: Wolsing et al. (ANRW 2019): stock QUIC against TCP tuned
//!   as they tuned it — initial window 32, pacing (BBR beside) — on real
//!   pages, on their DSL and LTE networks.
//! - `production-quic`: Yu & Benson (WWW 2021): single objects of 100 kB,
//!   1 MB and 5 MB at 10 Mbit/s under 0, 0.1 and 1 % loss, by server
//!   implementation: one member per server here (quinn and quic-go for h3;
//!   nginx, h2o and Apache for h2).
//! - `h3-priorities`: Marx et al. (2019): the server's scheduler, sequential
//!   by the client's priorities or round robin, on real pages.
//!
//! What each differs from its study in is said in its description and in
//! docs/reproduction-h3.md.

use super::{Axis, Grid, Mark, PaperProtocol, Preset};
use results::{PeerKind, Protocol, ServerKind};

const H2: PaperProtocol = PaperProtocol::Is(Protocol::H2);
const H3: PaperProtocol = PaperProtocol::Is(Protocol::H3);
const H2_H3: &[PaperProtocol] = &[H2, H3];

const RTT_36: (&str, Axis) = ("rtt", Axis::One("36ms"));
const RATE_10M: (&str, Axis) = ("rate", Axis::One("10mbit"));
const QUEUE: (&str, Axis) = ("queue", Axis::One("256p"));
/// Google's QUIC of 2016–2019 started with a window of 32 packets (its
/// `kInitialCongestionWindow`, copied as `InitialCongestionWindow = 32` by
/// quic-go's first protocol.go), where Linux TCP starts with 10: Kakhki's
/// and Wolsing's QUIC both had it.
const GOOGLE_QUIC_IW: &[(&str, Axis)] = &[("quic_iw", Axis::Ints(&[32]))];
const REAL_SITES: &[&str] = &["twitter", "youtube", "imgur", "icons", "http-archive-2014"];

/// A study's cell: the page, the loss, h3's gain (%), where it is from.
const fn at_loss(
    site: &'static str,
    loss: &'static str,
    gain_pct: f64,
    label: &'static str,
) -> Mark {
    Mark {
        site: Some(site),
        at: Some(("loss", loss)),
        gain_pct,
        label,
    }
}

/// Kakhki et al.'s pages (Table 2): one object of 5 kB, 100 kB or 1 MB, and
/// about 1 MB in 2 to 200 objects.
const LONG_LOOK_SITES: &[&str] = &[
    "objects-1x5kB",
    "objects-1x100kB",
    "objects-1x1MB",
    "objects-2x500kB",
    "objects-5x200kB",
    "objects-10x100kB",
    "objects-100x10kB",
    "objects-200x5kB",
];

/// Kakhki et al.'s heatmaps at 10 Mbit/s, 36 ms (values read off the
/// figures' colours, ±3–5 points; docs/reproduction-h3.md).
const LONG_LOOK_MARKS: &[Mark] = &[
    at_loss("objects-1x5kB", "0%", 45.0, "Kakhki Fig. 6a"),
    at_loss("objects-1x100kB", "0%", 39.0, "Kakhki Fig. 6a"),
    at_loss("objects-1x1MB", "0%", 17.0, "Kakhki Fig. 6a/6b"),
    at_loss("objects-2x500kB", "0%", 19.0, "Kakhki Fig. 6b"),
    at_loss("objects-5x200kB", "0%", 19.0, "Kakhki Fig. 6b"),
    at_loss("objects-10x100kB", "0%", 17.0, "Kakhki Fig. 6b"),
    at_loss("objects-100x10kB", "0%", 20.0, "Kakhki Fig. 6b"),
    at_loss("objects-200x5kB", "0%", -22.0, "Kakhki Fig. 6b"),
    at_loss("objects-1x5kB", "1%", 47.0, "Kakhki Fig. 8a"),
    at_loss("objects-1x100kB", "1%", 55.0, "Kakhki Fig. 8a"),
    at_loss("objects-1x1MB", "1%", 31.0, "Kakhki Fig. 8a/8d"),
    at_loss("objects-2x500kB", "1%", 58.0, "Kakhki Fig. 8d"),
    at_loss("objects-5x200kB", "1%", 62.0, "Kakhki Fig. 8d"),
    at_loss("objects-10x100kB", "1%", 58.0, "Kakhki Fig. 8d"),
    at_loss("objects-100x10kB", "1%", 56.0, "Kakhki Fig. 8d"),
    at_loss("objects-200x5kB", "1%", 33.0, "Kakhki Fig. 8d"),
];

/// A study's cell on the rate axis (at its base RTT, 36 ms).
const fn at_rate(
    site: &'static str,
    rate: &'static str,
    gain_pct: f64,
    label: &'static str,
) -> Mark {
    Mark {
        site: Some(site),
        at: Some(("rate", rate)),
        gain_pct,
        label,
    }
}

/// Kakhki et al.'s Fig. 6 cells that could be read as numbers (±5 points):
/// the 10 Mbit/s row's one loss, 200 × 5 kB at 36 ms (a mark is at a rate,
/// so the report draws it at every delay). Their 50 and 100 Mbit/s cells
/// were read only as a range (−36 to −99 % for 100 × 10 kB and 200 × 5 kB;
/// docs/reproduction-h3.md) and are not marks.
const LONG_LOOK_RATE_MARKS: &[Mark] = &[at_rate(
    "objects-200x5kB",
    "10mbit",
    -22.0,
    "Kakhki Fig. 6b",
)];

/// Yu & Benson's single-object cells (their repository's heatmaps, 10
/// Mbit/s; their (H3 − H2)/H2 negated into a gain; 0 = not significant at
/// p < 0.01) for Google, the best, and Cloudflare, whose QUIC ran Cubic
/// against its TCP's BBR.
const PRODUCTION_MARKS: &[Mark] = &[
    at_loss("objects-1x100kB", "0%", 20.5, "Yu & Benson: Google"),
    at_loss("objects-1x1MB", "0%", 4.2, "Yu & Benson: Google"),
    at_loss("objects-1x5MB", "0%", 0.0, "Yu & Benson: Google"),
    at_loss("objects-1x100kB", "0.1%", 17.2, "Yu & Benson: Google"),
    at_loss("objects-1x1MB", "0.1%", 0.0, "Yu & Benson: Google"),
    at_loss("objects-1x5MB", "0.1%", 0.0, "Yu & Benson: Google"),
    at_loss("objects-1x100kB", "1%", 17.1, "Yu & Benson: Google"),
    at_loss("objects-1x1MB", "1%", 0.0, "Yu & Benson: Google"),
    at_loss("objects-1x5MB", "1%", 2.3, "Yu & Benson: Google"),
    at_loss("objects-1x100kB", "0%", 9.3, "Yu & Benson: Cloudflare"),
    at_loss("objects-1x1MB", "0%", 0.0, "Yu & Benson: Cloudflare"),
    at_loss("objects-1x5MB", "0%", -1.3, "Yu & Benson: Cloudflare"),
    at_loss("objects-1x100kB", "0.1%", 6.5, "Yu & Benson: Cloudflare"),
    at_loss("objects-1x1MB", "0.1%", 0.0, "Yu & Benson: Cloudflare"),
    at_loss("objects-1x5MB", "0.1%", 0.0, "Yu & Benson: Cloudflare"),
    at_loss("objects-1x100kB", "1%", 0.0, "Yu & Benson: Cloudflare"),
    at_loss("objects-1x1MB", "1%", -16.0, "Yu & Benson: Cloudflare"),
    at_loss("objects-1x5MB", "1%", -23.6, "Yu & Benson: Cloudflare"),
];

const PRODUCTION_FULL_LINK: &[(&str, Axis)] = &[
    ("rtt", Axis::One("20ms")),
    RATE_10M,
    ("loss", Axis::List(&["0%", "0.1%", "1%"])),
    QUEUE,
];
const PRODUCTION_QUICK_LINK: &[(&str, Axis)] = &[
    ("rtt", Axis::One("20ms")),
    RATE_10M,
    ("loss", Axis::List(&["0%", "1%"])),
    QUEUE,
];
const PRODUCTION_SITES: &[&str] = &["objects-1x100kB", "objects-1x1MB", "objects-1x5MB"];
const PRODUCTION_QUICK_SITES: &[&str] = &["objects-1x100kB", "objects-1x1MB"];
const PRODUCTION_DESCRIPTION: &str = "Yu & Benson (WWW 2021): one object of 100 kB, 1 MB or 5 MB at 10 Mbit/s each way, random loss 0, 0.1 or 1 % each way, 20 ms (their base RTT, a home network to production CDNs, is not given; their +50/+100 ms cells are not here), 10 repetitions (they ran 40), by server implementation: h3 against h2 on the same server where it has both. Their servers were Google's, Facebook's and Cloudflare's; ours are the ones this lab runs, so the comparison is of kinds, not of the same code.";
const PRODUCTION_QUICK_DESCRIPTION: &str = "Yu & Benson (WWW 2021), reduced: one object of 100 kB or 1 MB at 10 Mbit/s, 20 ms, loss 0 or 1 % each way, three repetitions, by server implementation.";

/// The member of `production-quic` on `server`, speaking `protocols`.
const fn production(
    name: &'static str,
    quick_name: &'static str,
    about: &'static str,
    server: ServerKind,
    protocols: &'static [PaperProtocol],
    marks: &'static [Mark],
) -> Preset {
    Preset {
        name,
        about,
        full: Grid {
            name,
            description: PRODUCTION_DESCRIPTION,
            sites: PRODUCTION_SITES,
            protocols,
            reps: 10,
            timeout: None,
            link: PRODUCTION_FULL_LINK,
            knobs: &[],
        },
        quick: Grid {
            name: quick_name,
            description: PRODUCTION_QUICK_DESCRIPTION,
            sites: PRODUCTION_QUICK_SITES,
            protocols,
            reps: 3,
            timeout: None,
            link: PRODUCTION_QUICK_LINK,
            knobs: &[],
        },
        marks,
        // Their metric for single objects: time to last byte, here the
        // page's load (its one image).
        metric: "plt",
        source: "Yu & Benson, WWW 2021 (their tool's single-object grid)",
        marks_of: H3,
        server: Some(server),
        part_of: Some("production-quic"),
    }
}

pub(super) const PRESETS: &[Preset] = &[
    Preset {
        name: "quic-long-look",
        about: "Kakhki et al. (IMC 2017) Fig. 6 and 8: h3 against h2 on N objects of size S, 36 ms, 10 Mbit/s, no loss and 1 %",
        full: Grid {
            name: "quic-long-look",
            description: "Kakhki et al., Taking a Long Look at QUIC (IMC 2017), Fig. 6a/6b (no loss) and 8a/8d (1 % loss), the 10 Mbit/s row: a page of one object of 5 kB, 100 kB or 1 MB, and of about 1 MB in 2, 5, 10, 100 or 200 objects, 36 ms, random loss each way, 10 repetitions. QUIC starts with Google's initial window of the time, 32 packets (quic_iw = 32; TCP keeps IW10). Differs: their QUIC was Google's of 2017 (Cubic emulating two connections, its window cap raised, 0-RTT from kept state) against Apache's h2 over TLS 1.2; here both are cold TLS 1.3 on the built-in server (quinn's Cubic for h3), with its 10 MB page left out; its other rates and delays are quic-long-look-rates.",
            sites: LONG_LOOK_SITES,
            protocols: H2_H3,
            reps: 10,
            timeout: None,
            link: &[RTT_36, RATE_10M, ("loss", Axis::List(&["0%", "1%"])), QUEUE],
            knobs: GOOGLE_QUIC_IW,
        },
        quick: Grid {
            name: "quic-long-look-quick",
            description: "Kakhki et al. (IMC 2017) Fig. 6/8, reduced: 1 × 100 kB, 10 × 100 kB and 200 × 5 kB at 36 ms, 10 Mbit/s, no loss and 1 %, QUIC's initial window 32 packets, three repetitions.",
            sites: &["objects-1x100kB", "objects-10x100kB", "objects-200x5kB"],
            protocols: H2_H3,
            reps: 3,
            timeout: None,
            link: &[RTT_36, RATE_10M, ("loss", Axis::List(&["0%", "1%"])), QUEUE],
            knobs: GOOGLE_QUIC_IW,
        },
        marks: LONG_LOOK_MARKS,
        metric: "plt",
        source: "Kakhki et al., IMC 2017, Table 2, Fig. 6, Fig. 8",
        marks_of: H3,
        // The knob it turns (quic_iw) is the built-in server's.
        server: Some(ServerKind::Builtin),
        part_of: None,
    },
    Preset {
        name: "quic-long-look-rates",
        about: "Kakhki et al. (IMC 2017) Fig. 6: h3 against h2 on N objects of size S at 5-100 Mbit/s and 36, 86 and 136 ms, no loss",
        full: Grid {
            name: "quic-long-look-rates",
            description: "Kakhki et al., Taking a Long Look at QUIC (IMC 2017), Fig. 6 over its rates and delays: the pages of quic-long-look at 5, 10, 50 and 100 Mbit/s, a base RTT of 36 ms and 50 or 100 ms added, no loss, 5 repetitions (they ran 10 rounds). QUIC starts with 32 packets (quic_iw = 32). Differs as quic-long-look does; their many-small-object losses at 50 and 100 Mbit/s came from Google's hybrid slow start of 2016, which quinn has not (quic_hystart, RFC 9406's HyStart++, is another heuristic and stays off here).",
            sites: LONG_LOOK_SITES,
            protocols: H2_H3,
            reps: 5,
            timeout: None,
            link: &[
                ("rtt", Axis::List(&["36ms", "86ms", "136ms"])),
                ("rate", Axis::List(&["5mbit", "10mbit", "50mbit", "100mbit"])),
                QUEUE,
            ],
            knobs: GOOGLE_QUIC_IW,
        },
        quick: Grid {
            name: "quic-long-look-rates-quick",
            description: "Kakhki et al. (IMC 2017) Fig. 6, reduced: 1 × 100 kB, 10 × 100 kB and 200 × 5 kB at 10 and 50 Mbit/s, 36 and 136 ms, no loss, QUIC's initial window 32 packets, two repetitions.",
            sites: &["objects-1x100kB", "objects-10x100kB", "objects-200x5kB"],
            protocols: H2_H3,
            reps: 2,
            timeout: None,
            link: &[
                ("rtt", Axis::List(&["36ms", "136ms"])),
                ("rate", Axis::List(&["10mbit", "50mbit"])),
                QUEUE,
            ],
            knobs: GOOGLE_QUIC_IW,
        },
        marks: LONG_LOOK_RATE_MARKS,
        metric: "plt",
        source: "Kakhki et al., IMC 2017, Table 2, Fig. 6",
        marks_of: H3,
        // The knob it turns (quic_iw) is the built-in server's.
        server: Some(ServerKind::Builtin),
        part_of: None,
    },
    Preset {
        name: "tuned-tcp",
        about: "Wolsing et al. (ANRW 2019): stock QUIC (IW32, Cubic) against TCP stock and tuned (IW32, pacing, BBR), real pages, their DSL and LTE networks",
        full: Grid {
            name: "tuned-tcp",
            description: "Wolsing et al. (ANRW 2019): h3 with QUIC as Google's was (initial window 32 packets, Cubic) against h2 over TCP as shipped (IW10, no pacing, Cubic) and tuned (IW32, pacing; BBR beside it), every factor apart, on the built-in real pages (theirs were 38 sites replayed by Mahimahi), TLS 1.3 on both, no 0-RTT and no TFO on either (as theirs), on two of their networks: DSL (25 Mbit/s down, 5 up, 24 ms) and LTE (10.5 down, 2.8 up, 74 ms), no loss (their MSS satellite link, 1.89 Mbit/s, 760 ms, 6 % loss, and DA2GC are not here). 5 repetitions.",
            sites: REAL_SITES,
            protocols: H2_H3,
            reps: 5,
            timeout: None,
            link: &[
                ("profile", Axis::List(&["wolsing-dsl", "wolsing-lte"])),
                QUEUE,
                ("iw", Axis::Ints(&[10, 32])),
                ("cc", Axis::List(&["cubic", "bbr"])),
            ],
            knobs: &[
                ("tcp_pacing", Axis::List(&["off", "on"])),
                GOOGLE_QUIC_IW[0],
                ("quic_cc", Axis::One("cubic")),
            ],
        },
        quick: Grid {
            name: "tuned-tcp-quick",
            description: "Wolsing et al. (ANRW 2019), reduced: twitter and youtube, TCP's IW10 or IW32 with pacing off or on (Cubic), stock QUIC (IW32, Cubic), their DSL network (25/5 Mbit/s, 24 ms), two repetitions.",
            sites: &["twitter", "youtube"],
            protocols: H2_H3,
            reps: 2,
            timeout: None,
            link: &[
                ("profile", Axis::One("wolsing-dsl")),
                QUEUE,
                ("iw", Axis::Ints(&[10, 32])),
            ],
            knobs: &[
                ("tcp_pacing", Axis::List(&["off", "on"])),
                GOOGLE_QUIC_IW[0],
                ("quic_cc", Axis::One("cubic")),
            ],
        },
        marks: &[],
        metric: "plt",
        source: "Wolsing et al., ANRW 2019 (abstract; the networks of the authors' APNIC post, Table 1)",
        marks_of: H3,
        // The knobs it turns (quic_iw, tcp_pacing, quic_cc) are the
        // built-in server's.
        server: Some(ServerKind::Builtin),
        part_of: None,
    },
    production(
        "production-quic-builtin",
        "production-quic-builtin-quick",
        "Yu & Benson (WWW 2021): h3 against h2 on the built-in server (quinn, the h2 crate)",
        ServerKind::Builtin,
        H2_H3,
        PRODUCTION_MARKS,
    ),
    production(
        "production-quic-caddy",
        "production-quic-caddy-quick",
        "Yu & Benson (WWW 2021): h3 against h2 on caddy (quic-go, Go's h2)",
        ServerKind::Peer(PeerKind::Caddy),
        H2_H3,
        PRODUCTION_MARKS,
    ),
    production(
        "production-quic-nginx",
        "production-quic-nginx-quick",
        "Yu & Benson (WWW 2021): h2 on nginx (no h3 in Debian's 1.22), against the h3 members",
        ServerKind::Peer(PeerKind::Nginx),
        &[H2],
        &[],
    ),
    production(
        "production-quic-h2o",
        "production-quic-h2o-quick",
        "Yu & Benson (WWW 2021): h2 on h2o (no h3 in Debian's 2.2.5), against the h3 members",
        ServerKind::Peer(PeerKind::H2o),
        &[H2],
        &[],
    ),
    production(
        "production-quic-apache",
        "production-quic-apache-quick",
        "Yu & Benson (WWW 2021): h2 on Apache (no h3), against the h3 members",
        ServerKind::Peer(PeerKind::Apache),
        &[H2],
        &[],
    ),
    Preset {
        name: "h3-priorities",
        about: "Marx et al. (2019): the server's scheduler, sequential by priority or round robin, h2 and h3, real pages",
        full: Grid {
            name: "h3-priorities",
            description: "Marx et al., Of the Utmost Importance (WEBIST 2019): the server schedules responses by the client's priorities (RFC 9218 on h3, the priority tree on h2: sequential for Chromium's non-incremental requests) or round robin (16 KiB each in turn), on the built-in real pages, 1 Mbit/s, 50 ms, no loss and 1 %, 5 repetitions. Their network and pages could not be read; their 11 schedulers are two here. Largest contentful paint is the headline.",
            sites: REAL_SITES,
            protocols: H2_H3,
            reps: 5,
            timeout: Some("300s"),
            link: &[
                ("rtt", Axis::One("50ms")),
                ("rate", Axis::One("1mbit")),
                ("loss", Axis::List(&["0%", "1%"])),
                QUEUE,
            ],
            knobs: &[("server_priorities", Axis::List(&["on", "off"]))],
        },
        quick: Grid {
            name: "h3-priorities-quick",
            description: "Marx et al. (2019), reduced: twitter and youtube at 1 Mbit/s, 50 ms, no loss, priorities on or off, two repetitions.",
            sites: &["twitter", "youtube"],
            protocols: H2_H3,
            reps: 2,
            timeout: Some("300s"),
            link: &[
                ("rtt", Axis::One("50ms")),
                ("rate", Axis::One("1mbit")),
                ("loss", Axis::One("0%")),
                QUEUE,
            ],
            knobs: &[("server_priorities", Axis::List(&["on", "off"]))],
        },
        marks: &[],
        metric: "lcp",
        source: "Marx et al., WEBIST 2019 (abstract; its setup unread)",
        marks_of: H3,
        // The knob it turns (server_priorities) is the built-in server's.
        server: Some(ServerKind::Builtin),
        part_of: None,
    },
];

#[cfg(test)]
mod tests {
    use super::super::{chosen, each_in_own_dir, refuse_server, text, Peers};
    use super::*;
    use results::experiment::parse;
    use results::ClientKind;

    /// Each QUIC-era preset parses with either client, measures h3 against
    /// h2 (h2 alone on the servers without h3), draws its marks as h3's and
    /// keeps its study's server; the quick grids stay small.
    #[test]
    fn the_quic_presets_parse_and_measure_h3_against_h2_on_their_servers() {
        for p in PRESETS {
            for quick in [false, true] {
                for client in [ClientKind::Model, ClientKind::Chromium] {
                    let peers = Peers {
                        client,
                        ..Peers::default()
                    };
                    let e = parse(p.name, &text(p, quick, peers))
                        .unwrap_or_else(|e| panic!("{}: {e}", p.name));
                    assert_eq!(e.client, client);
                    assert_eq!(e.server, p.server.unwrap_or_default(), "{}", p.name);
                    assert_eq!(e.baseline, Protocol::H2, "{}", p.name);
                    let h3 = matches!(
                        e.server,
                        ServerKind::Builtin | ServerKind::Peer(PeerKind::Caddy)
                    );
                    let want: &[Protocol] = if h3 {
                        &[Protocol::H2, Protocol::H3]
                    } else {
                        &[Protocol::H2]
                    };
                    assert_eq!(e.protocols, want, "{}", p.name);
                    assert!(e
                        .references
                        .iter()
                        .all(|r| r.protocol.as_deref() == Some("h3")));
                    // Every mark on a site the grid loads, on one of its
                    // axes; the full grid has every mark's value.
                    for r in &e.references {
                        let axis = r.axis.as_deref().unwrap();
                        assert!(!e.values(axis).is_empty(), "{r:?}");
                        if !quick {
                            assert!(e.values(axis).contains(r.at.as_ref().unwrap()), "{r:?}");
                        }
                        assert!(e.values("site").contains(r.site.as_ref().unwrap()));
                    }
                    if quick {
                        assert!(e.trial_count() <= 48, "{}: {}", p.name, e.trial_count());
                    }
                }
            }
        }
        let long = parse("l", &text(&PRESETS[0], false, Peers::default())).unwrap();
        assert_eq!(long.references.len(), LONG_LOOK_MARKS.len());
        assert_eq!(long.values("loss"), ["0%", "1%"]);
    }

    /// tuned-tcp tunes TCP alone: its iw axis reaches TCP's route, QUIC's
    /// initial window stays 32 packets and its congestion control Cubic
    /// while TCP's goes to BBR.
    #[test]
    fn tuned_tcp_changes_tcp_and_leaves_quic_as_shipped() {
        let p = super::super::preset("tuned-tcp").unwrap();
        let e = parse(p.name, &text(p, false, Peers::default())).unwrap();
        let mut seen = Vec::new();
        for point in e.points() {
            let s = lab::trial::settings(&point, 1).unwrap();
            assert_eq!(s.trial.served.quic_iw, Some(32));
            assert_eq!(s.trial.served.quic_cc, Some("cubic"));
            seen.push((
                point["iw"].clone(),
                point["cc"].clone(),
                s.trial.served.tcp_pacing,
            ));
        }
        for want in [("10", "cubic", false), ("32", "bbr", true)] {
            assert!(
                seen.iter()
                    .any(|(iw, cc, pacing)| (iw.as_str(), cc.as_str(), *pacing) == want),
                "{seen:?}"
            );
        }
    }

    /// `paper production-quic` is its five members, one server each, each
    /// in its own directory; `--server` does not apply to them.
    #[test]
    fn production_quic_is_one_campaign_per_server() {
        let members = chosen("production-quic").unwrap();
        let servers: Vec<&str> = members.iter().map(|p| p.server.unwrap().name()).collect();
        assert_eq!(servers, ["builtin", "caddy", "nginx", "h2o", "apache"]);
        assert!(each_in_own_dir("production-quic") && !each_in_own_dir("tuned-tcp"));
        assert!(refuse_server(&members, ServerKind::Builtin).is_ok());
        let why = refuse_server(&members, ServerKind::Peer(PeerKind::Nginx)).unwrap_err();
        assert!(
            why.starts_with("paper production-quic: --server nginx: "),
            "{why}"
        );
        let one = chosen("production-quic-nginx").unwrap();
        assert!(refuse_server(&one, ServerKind::Peer(PeerKind::Nginx)).is_ok());
        // The presets that turn the built-in server's knobs run on it.
        for name in ["quic-long-look", "tuned-tcp", "h3-priorities"] {
            let why = refuse_server(&chosen(name).unwrap(), ServerKind::Peer(PeerKind::Caddy))
                .unwrap_err();
            assert!(
                why.starts_with(&format!(
                    "paper {name}: --server caddy: runs on builtin only"
                )),
                "{why}"
            );
        }
        assert!(chosen("fig3")
            .unwrap_err()
            .contains("tuned-tcp, production-quic, h3-priorities or all"));
    }
}
