//! The paper's experiments (004, "Can SPDY really make the web faster?") as
//! experiment files: its axes, its sites (twitter, youtube, imgur), its
//! 256-packet drop-tail queue, and, where it gives numbers, reference marks.
//! `--quick` grids are reduced so that each runs in minutes on 2 cores.
//!
//! The paper's "SPDY" is our `spdy3`; `h2`, its heir, is measured beside it.
//! (A build without `spdy3` measures `h2` in its place, and says so.)

/// A preset: its name, what it reproduces, and its experiment file (full, quick).
pub struct Preset {
    pub name: &'static str,
    pub about: &'static str,
    pub full: &'static str,
    pub quick: &'static str,
}

const FIG2_REFS: &str = r#"
[[reference]]
site = "youtube"
protocol = "SPDY"
gain_pct = 13.81
label = "004 Fig. 2: average"

[[reference]]
site = "twitter"
protocol = "SPDY"
gain_pct = 6.87
label = "004 Fig. 2: average"

[[reference]]
site = "imgur"
protocol = "SPDY"
gain_pct = 1.32
label = "004 Fig. 2: average"

[[reference]]
site = "youtube"
protocol = "SPDY"
axis = "rtt"
at = "490ms"
gain_pct = 21.26
label = "004 Fig. 2: best case"
"#;

const FIG4_REFS: &str = r#"
[[reference]]
protocol = "SPDY"
axis = "rate"
at = "64kbit"
gain_pct = 5.75
label = "004 Fig. 4: mean of sites"

[[reference]]
protocol = "SPDY"
axis = "rate"
at = "8mbit"
gain_pct = -22.24
label = "004 Fig. 4: mean of sites"
"#;

macro_rules! preset {
    ($name:literal, $about:literal, $full:expr, $quick:expr) => {
        Preset {
            name: $name,
            about: $about,
            full: $full,
            quick: $quick,
        }
    };
}

pub const PRESETS: &[Preset] = &[
    preset!(
        "fig2",
        "Fig. 2: effect of RTT, 10-490 ms at 1 Mbit/s, 0 % loss",
        r#"name = "fig2"
description = "004 Fig. 2: gain of SPDY over HTTPS against RTT (BW 1 Mbit/s, PLR 0 %, 256-packet queue). 13 RTTs, 10 repetitions (the paper ran 20 on a noisier testbed)."
sites = ["youtube", "twitter", "imgur"]
protocols = ["https", "SPDY", "h2"]
reps = 10
[link]
rtt = { from = "10ms", to = "490ms", step = "40ms" }
rate = "1mbit"
queue = "256p"
"#,
        r#"name = "fig2-quick"
description = "004 Fig. 2, reduced: three RTTs, two sites, two repetitions (BW 1 Mbit/s, PLR 0 %, 256-packet queue)."
sites = ["youtube", "twitter"]
protocols = ["https", "SPDY", "h2"]
reps = 2
[link]
rtt = ["10ms", "150ms", "490ms"]
rate = "1mbit"
queue = "256p"
"#
    ),
    preset!(
        "fig4",
        "Fig. 4: effect of bandwidth, 64 kbit/s-8 Mbit/s at 150 ms",
        r#"name = "fig4"
description = "004 Fig. 4: gain of SPDY over HTTPS against bandwidth (RTT 150 ms, PLR 0 %, 256-packet queue)."
sites = ["youtube", "twitter", "imgur"]
protocols = ["https", "SPDY", "h2"]
reps = 5
timeout = "600s"
[link]
rtt = "150ms"
rate = ["64kbit", "128kbit", "256kbit", "512kbit", "1mbit", "2mbit", "4mbit", "8mbit"]
queue = "256p"
"#,
        r#"name = "fig4-quick"
description = "004 Fig. 4, reduced: three bandwidths, two sites, two repetitions (RTT 150 ms, PLR 0 %)."
sites = ["youtube", "twitter"]
protocols = ["https", "SPDY"]
reps = 2
timeout = "600s"
[link]
rtt = "150ms"
rate = ["256kbit", "1mbit", "8mbit"]
queue = "256p"
"#
    ),
    preset!(
        "fig6",
        "Fig. 6: effect of packet loss, 0-3 % at 150 ms, 1 Mbit/s",
        r#"name = "fig6"
description = "004 Fig. 6: gain of SPDY over HTTPS against packet loss (RTT 150 ms, BW 1 Mbit/s)."
sites = ["youtube", "twitter", "imgur"]
protocols = ["https", "SPDY", "h2"]
reps = 20
timeout = "300s"
[link]
rtt = "150ms"
rate = "1mbit"
loss = { from = "0%", to = "3%", step = "0.5%" }
queue = "256p"
"#,
        r#"name = "fig6-quick"
description = "004 Fig. 6, reduced: 0, 1 and 3 % loss, two sites, three repetitions."
sites = ["youtube", "twitter"]
protocols = ["https", "SPDY"]
reps = 3
timeout = "300s"
[link]
rtt = "150ms"
rate = "1mbit"
loss = ["0%", "1%", "3%"]
queue = "256p"
"#
    ),
    preset!(
        "fig8",
        "Fig. 8: effect of domain sharding, 1-7 shards at 150 ms, 1 Mbit/s",
        r#"name = "fig8"
description = "004 Fig. 8: gain of SPDY over HTTPS against the number of shards (RTT 150 ms, BW 1 Mbit/s, PLR 0 %). The paper ran 100 repetitions; the emulator is deterministic, so 10 suffice."
sites = ["youtube", "twitter", "imgur"]
protocols = ["https", "SPDY", "h2"]
reps = 10
[link]
rtt = "150ms"
rate = "1mbit"
queue = "256p"
[knobs]
shards = { from = 1, to = 7 }
"#,
        r#"name = "fig8-quick"
description = "004 Fig. 8, reduced: 1, 3 and 7 shards, two sites, two repetitions."
sites = ["youtube", "twitter"]
protocols = ["https", "SPDY"]
reps = 2
[link]
rtt = "150ms"
rate = "1mbit"
queue = "256p"
[knobs]
shards = [1, 3, 7]
"#
    ),
    preset!(
        "fig9",
        "Fig. 9: concurrent streams per connection (1-100) x RTT at 1 Mbit/s",
        r#"name = "fig9"
description = "004 Fig. 9: gain of SPDY over HTTPS against the server's maximum concurrent streams, over RTTs (BW 1 Mbit/s, PLR 0 %)."
sites = ["youtube", "twitter", "imgur"]
protocols = ["https", "SPDY"]
reps = 5
[link]
rtt = ["50ms", "150ms", "250ms", "350ms", "490ms"]
rate = "1mbit"
queue = "256p"
[knobs]
max_streams = [1, 2, 4, 6, 8, 10, 20, 30, 50, 100]
"#,
        r#"name = "fig9-quick"
description = "004 Fig. 9, reduced: YouTube, 4 stream limits x 3 RTTs, two repetitions (BW 1 Mbit/s)."
sites = ["youtube"]
protocols = ["https", "SPDY"]
reps = 2
[link]
rtt = ["50ms", "250ms", "490ms"]
rate = "1mbit"
queue = "256p"
[knobs]
max_streams = [1, 6, 30, 100]
"#
    ),
    preset!(
        "iw",
        "Sec. V-B: TCP initial window 3, 7, 10, 16 at 150 ms, 1 Mbit/s",
        r#"name = "iw"
description = "004 Sec. V-B: gain of SPDY over HTTPS against the server's TCP initial window (RTT 150 ms, BW 1 Mbit/s, PLR 0 %)."
sites = ["youtube", "twitter", "imgur"]
protocols = ["https", "SPDY", "h2"]
reps = 10
[link]
rtt = "150ms"
rate = "1mbit"
queue = "256p"
iw = [3, 7, 10, 16]
"#,
        r#"name = "iw-quick"
description = "004 Sec. V-B, reduced: initial windows 3, 10 and 16, two sites, two repetitions."
sites = ["youtube", "twitter"]
protocols = ["https", "SPDY"]
reps = 2
[link]
rtt = "150ms"
rate = "1mbit"
queue = "256p"
iw = [3, 10, 16]
"#
    ),
];

pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Who serves and who loads a preset's pages: the built-in server and the
/// model unless told otherwise (`paper --server/--client`).
#[derive(Debug, Clone, Copy)]
pub struct Peers<'a> {
    pub server: &'a str,
    pub client: &'a str,
}

impl Default for Peers<'_> {
    fn default() -> Self {
        Peers {
            server: "builtin",
            client: "model",
        }
    }
}

/// The protocol that stands for the paper's SPDY: `spdy3` where the server and
/// the client have it (the built-in server and the model); otherwise `h2`, its
/// heir (and the presets then measure h2 only once).
pub fn spdy(peers: Peers<'_>) -> &'static str {
    if peers.server == "builtin" && peers.client == "model" {
        "spdy3"
    } else {
        "h2"
    }
}

/// The experiment text of a preset, with the paper's reference marks.
pub fn text(p: &Preset, quick: bool, peers: Peers<'_>) -> String {
    let body = if quick { p.quick } else { p.full };
    let refs = match p.name {
        "fig2" => FIG2_REFS,
        "fig4" => FIG4_REFS,
        _ => "",
    };
    // Top-level keys first: before any [table] of the preset.
    let text = format!(
        "server = \"{}\"\nclient = \"{}\"\n{body}{refs}",
        peers.server, peers.client
    );
    match spdy(peers) {
        "spdy3" => text.replace("\"SPDY\"", "\"spdy3\""),
        other => text
            .replace(", \"SPDY\", \"h2\"]", ", \"h2\"]")
            .replace("\"SPDY\"", &format!("\"{other}\""))
            .replace(
                "description = \"",
                &format!(
                    "description = \"(server {}, client {}: no spdy3, so h2, SPDY's heir, stands in for it.) ",
                    peers.server, peers.client
                ),
            ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_the_quick_ones_are_small() {
        for p in PRESETS {
            for quick in [false, true] {
                let e = crate::experiment::parse(p.name, &text(p, quick, Peers::default()))
                    .unwrap_or_else(|e| panic!("{}: {e}", p.name));
                let chromium = Peers {
                    server: "nginx",
                    client: "chromium",
                };
                let t = text(p, quick, chromium);
                assert!(!t.contains("\"spdy3\""), "{}", p.name);
                let e2 = crate::experiment::parse(p.name, &t)
                    .unwrap_or_else(|e| panic!("{}: {e}", p.name));
                assert_eq!(
                    (e2.server.name(), e2.client.name()),
                    ("nginx", "chromium")
                );
                assert_eq!(e.values("queue"), ["256p"], "{}", p.name);
                if quick {
                    assert!(e.trial_count() <= 80, "{}: {}", p.name, e.trial_count());
                }
            }
        }
    }
}
