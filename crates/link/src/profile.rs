//! Named network profiles: the connectivity people already name instead of
//! typing it. The values are WebPageTest's connectivity profiles (its
//! `connectivity.ini`: down, up, round-trip latency; no loss); Lighthouse's
//! default mobile throttling ("slow 4G": 1.6 Mbit/s down, 750 kbit/s up,
//! 150 ms) is within a few percent of `3g-fast`. A profile fills the rates and
//! the RTT a user did not give: `--profile 3g-fast --loss 1%` is 3G Fast with
//! loss, and `--profile cable --rtt 100ms` is Cable's rates at 100 ms.
//! Beside WebPageTest's, the two networks of the seed studies: 002's
//! emulated 3G (Dummynet: 2 Mbit/s down, 1 Mbit/s up, 150 ms) and 004's
//! "default network" (1 Mbit/s, 150 ms, no loss), and two of Wolsing et
//! al.'s (ANRW 2019), which `paper tuned-tcp` runs on. `spdylab profiles` lists
//! them with their numbers and sources.

use crate::units::Bitrate;
use std::time::Duration;

/// One named profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub name: &'static str,
    /// Server → client.
    pub down: Bitrate,
    /// Client → server.
    pub up: Bitrate,
    pub rtt: Duration,
    /// Where the numbers come from.
    pub source: &'static str,
}

const fn kbit(k: u64) -> Bitrate {
    Bitrate(k * 1000)
}

const fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// Every profile.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "fios",
        down: kbit(20_000),
        up: kbit(5_000),
        rtt: ms(4),
        source: "WebPageTest connectivity.ini (FIOS)",
    },
    Profile {
        name: "cable",
        down: kbit(5_000),
        up: kbit(1_000),
        rtt: ms(28),
        source: "WebPageTest connectivity.ini (Cable)",
    },
    Profile {
        name: "lte",
        down: kbit(12_000),
        up: kbit(12_000),
        rtt: ms(70),
        source: "WebPageTest connectivity.ini (LTE)",
    },
    Profile {
        name: "4g",
        down: kbit(9_000),
        up: kbit(9_000),
        rtt: ms(170),
        source: "WebPageTest connectivity.ini (4G)",
    },
    Profile {
        name: "dsl",
        down: kbit(1_500),
        up: kbit(384),
        rtt: ms(50),
        source: "WebPageTest connectivity.ini (DSL)",
    },
    Profile {
        name: "3g-fast",
        down: kbit(1_600),
        up: kbit(768),
        rtt: ms(150),
        source: "WebPageTest connectivity.ini (3G Fast); Lighthouse's mobile throttling is within a few % of it",
    },
    Profile {
        name: "3g",
        down: kbit(1_600),
        up: kbit(768),
        rtt: ms(300),
        source: "WebPageTest connectivity.ini (3G)",
    },
    Profile {
        name: "mobile-002",
        down: kbit(2_000),
        up: kbit(1_000),
        rtt: ms(150),
        source: "seed 002, Google's mobile SPDY measurements: 3G by Dummynet, 2 Mbit/s down, 1 Mbit/s up, 150 ms",
    },
    Profile {
        name: "paper-004",
        down: kbit(1_000),
        up: kbit(1_000),
        rtt: ms(150),
        source: "seed 004, \"Can SPDY really make the web faster?\": its default network, 1 Mbit/s, 150 ms, no loss",
    },
    Profile {
        name: "wolsing-dsl",
        down: kbit(25_000),
        up: kbit(5_000),
        rtt: ms(24),
        source: "Wolsing et al., ANRW 2019 (TCP+TLS+HTTP/2 vs. QUIC): their DSL network, 25 Mbit/s down, 5 up, 24 ms, no loss (the authors' APNIC post of 25 Sep 2019, Table 1)",
    },
    Profile {
        name: "wolsing-lte",
        down: kbit(10_500),
        up: kbit(2_800),
        rtt: ms(74),
        source: "Wolsing et al., ANRW 2019: their LTE network, 10.5 Mbit/s down, 2.8 up, 74 ms, no loss (the authors' APNIC post of 25 Sep 2019, Table 1)",
    },
];

/// The names, in `PROFILES`' order (for help texts and choices).
pub const PROFILE_NAMES: &[&str] = &[
    "fios",
    "cable",
    "lte",
    "4g",
    "dsl",
    "3g-fast",
    "3g",
    "mobile-002",
    "paper-004",
    "wolsing-dsl",
    "wolsing-lte",
];

/// The profile named `name`, if there is one: our name (`3g-fast`) or
/// WebPageTest's spelling of it (`3GFast`, `Cable`, `LTE`, `FIOS`), in any
/// case, with or without `-`, `_` or spaces.
pub fn profile(name: &str) -> Option<&'static Profile> {
    let plain = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '-' | '_' | ' '))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let wanted = plain(name);
    PROFILES.iter().find(|p| plain(p.name) == wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_are_the_profiles_and_each_is_found() {
        let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
        assert_eq!(names, PROFILE_NAMES);
        for p in PROFILES {
            assert_eq!(profile(p.name), Some(p));
            assert!(p.down >= p.up, "{}", p.name);
        }
        let fast = profile("3g-fast").unwrap();
        assert_eq!(
            (fast.down, fast.up, fast.rtt),
            (Bitrate(1_600_000), Bitrate(768_000), ms(150))
        );
        assert_eq!(profile("5g"), None);
        assert_eq!(profile(""), None);
    }

    #[test]
    fn webpagetests_own_spellings_name_the_same_profiles() {
        // connectivity.ini's names, as WebPageTest's UI and API spell them.
        for (wpt, ours) in [
            ("3GFast", "3g-fast"),
            ("3G", "3g"),
            ("Cable", "cable"),
            ("LTE", "lte"),
            ("4G", "4g"),
            ("DSL", "dsl"),
            ("FIOS", "fios"),
            ("3G Fast", "3g-fast"),
            ("3g_fast", "3g-fast"),
        ] {
            assert_eq!(profile(wpt).map(|p| p.name), Some(ours), "{wpt}");
        }
        assert_eq!(profile("3GSlow"), None);
    }
}
