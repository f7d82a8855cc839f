//! Competing traffic on the bottleneck (issue 38): bulk flows between other
//! addresses of the testbed, sharing the link with the page. A spec is a
//! comma-separated list of `cubic:N` / `bbr:N` / `reno:N` (N TCP bulk
//! downloads with that congestion control) and `udp:RATE` (one UDP stream
//! at a constant rate down), e.g. `cubic:2,udp:500kbit`; `none` is nothing.
//! Pure: the testbed (`netns`) runs what it describes.

use crate::spec::LinkSpec;
use crate::units::{Bitrate, Discipline};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// One part of a cross-traffic spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CrossFlow {
    /// `count` TCP bulk downloads with this congestion control (`cubic`,
    /// `bbr`, `reno`), set on each socket.
    Tcp { cc: &'static str, count: u32 },
    /// One UDP stream down at a constant rate.
    Udp { rate: Bitrate },
}

/// A whole spec: what competes with the page. Empty: nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrossTraffic(pub Vec<CrossFlow>);

/// The congestion controls a TCP cross flow may name.
pub const CROSS_CCS: [&str; 3] = ["cubic", "bbr", "reno"];
/// At most this many flows in all: each is two threads and a socket pair.
pub const MAX_CROSS_FLOWS: u32 = 16;

const FORMS: &str = "a list such as cubic:2, bbr:1, udp:500kbit or cubic:1,udp:1mbit (TCP flows by congestion control and count 1..=16 in all, UDP by rate), or none";

impl CrossTraffic {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// TCP flows plus UDP streams.
    pub fn flows(&self) -> u32 {
        self.0
            .iter()
            .map(|f| match f {
                CrossFlow::Tcp { count, .. } => *count,
                CrossFlow::Udp { .. } => 1,
            })
            .sum()
    }

    /// The period of the TCP flows' sawtooth on `link`: how long after one
    /// congestion event they fill the queue again. A page started at a fixed
    /// time after the flows always meets them at one phase of that cycle, and
    /// its answer depends on the phase (docs/cross-traffic.md measured h3's
    /// gain over h2 flip sign with it), so the probes start pages at random
    /// phases within it.
    ///
    /// The flows share the downlink's pipe (bandwidth-delay product plus the
    /// queue) evenly; at the cycle's peak each holds `w` full-size packets.
    /// Cubic (RFC 9438, β 0.7, C 0.4) regrows to `w` in K = ∛(w·0.3/0.4)
    /// seconds; Reno halves and regrows one packet per round trip, `w/2`
    /// rounds at the mean round trip; BBR cycles its probe of the bandwidth
    /// every 8 round trips. UDP streams have no cycle. The longest period of
    /// the flows present, at most 10 s; zero without TCP flows or a rate.
    pub fn cycle(&self, link: &LinkSpec) -> Duration {
        const MSS: f64 = 1448.0;
        const PACKET: f64 = 1500.0;
        let tcp: u32 = self
            .0
            .iter()
            .map(|f| match f {
                CrossFlow::Tcp { count, .. } => *count,
                CrossFlow::Udp { .. } => 0,
            })
            .sum();
        let Some(bits) = link.down.service.bits_per_sec() else {
            return Duration::ZERO;
        };
        if tcp == 0 || bits <= 0.0 {
            return Duration::ZERO;
        }
        let bytes_per_s = bits / 8.0;
        let rtt = link.rtt().as_secs_f64();
        let queue = &link.down.queue;
        let queue_bytes = match queue.discipline {
            // CoDel keeps about its target's worth standing.
            Discipline::CoDel { target, .. } => target.as_secs_f64() * bytes_per_s,
            Discipline::DropTail => {
                let by_packets = queue.limit.packets.map(|p| p as f64 * PACKET);
                let by_bytes = queue.limit.bytes.map(|b| b as f64);
                match (by_packets, by_bytes) {
                    (Some(p), Some(b)) => p.min(b),
                    (Some(x), None) | (None, Some(x)) => x,
                    // No limit: nothing drops, the flows never cycle; the cap.
                    (None, None) => f64::INFINITY,
                }
            }
        };
        let w = ((rtt * bytes_per_s + queue_bytes) / (tcp as f64 * MSS)).max(1.0);
        let mean_rtt = rtt + queue_bytes.min(1e12) / bytes_per_s / 2.0;
        let period = |cc: &str| match cc {
            "cubic" => (w * 0.3 / 0.4).cbrt(),
            "reno" => w / 2.0 * mean_rtt,
            _ => 8.0 * rtt,
        };
        let longest = self
            .0
            .iter()
            .filter_map(|f| match f {
                CrossFlow::Tcp { cc, .. } => Some(period(cc)),
                CrossFlow::Udp { .. } => None,
            })
            .fold(0.0_f64, f64::max);
        Duration::from_secs_f64(longest.min(MAX_CYCLE.as_secs_f64()))
    }
}

/// The longest cycle `CrossTraffic::cycle` gives.
pub const MAX_CYCLE: Duration = Duration::from_secs(10);

impl FromStr for CrossTraffic {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("'{s}' is not cross traffic: {FORMS}");
        let s_trim = s.trim();
        if s_trim == "none" || s_trim.is_empty() {
            return Ok(CrossTraffic::default());
        }
        let mut flows = Vec::new();
        for part in s_trim.split(',') {
            let (kind, arg) = part.trim().split_once(':').ok_or_else(bad)?;
            let flow = match kind {
                "udp" => CrossFlow::Udp {
                    rate: arg.parse().map_err(|_| bad())?,
                },
                cc => {
                    let cc = CROSS_CCS.into_iter().find(|&c| c == cc).ok_or_else(bad)?;
                    let count: u32 = arg.parse().map_err(|_| bad())?;
                    if count == 0 {
                        return Err(bad());
                    }
                    CrossFlow::Tcp { cc, count }
                }
            };
            flows.push(flow);
        }
        let all = CrossTraffic(flows);
        if all.flows() > MAX_CROSS_FLOWS {
            return Err(bad());
        }
        Ok(all)
    }
}

impl fmt::Display for CrossTraffic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|c| match c {
                CrossFlow::Tcp { cc, count } => format!("{cc}:{count}"),
                CrossFlow::Udp { rate } => format!("udp:{rate}"),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

impl serde::Serialize for CrossTraffic {
    /// As written: `cubic:2,udp:500kbit`, or `none`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cycle_follows_the_pipe_and_the_congestion_control() {
        let link = |rate: &str, rtt_ms: u64, queue: &str| {
            let mut l = LinkSpec::default();
            for d in [&mut l.up, &mut l.down] {
                d.service = crate::Service::Rate(rate.parse().unwrap());
                d.delay = Duration::from_millis(rtt_ms / 2);
                d.queue = queue.parse().unwrap();
            }
            l
        };
        let cross = |s: &str| s.parse::<CrossTraffic>().unwrap();
        let at_8mbit = link("8mbit", 50, "256p");
        // Four Cubic flows, 8 Mbit/s, 50 ms, 256 packets: the pipe is
        // 50 kB + 384 kB, 75 packets a flow, K = ∛(75·0.3/0.4) ≈ 3.8 s.
        let k = cross("cubic:4").cycle(&at_8mbit).as_secs_f64();
        assert!((3.7..3.9).contains(&k), "{k}");
        // Fewer flows hold more each and take longer to regrow.
        assert!(cross("cubic:1").cycle(&at_8mbit).as_secs_f64() > k);
        // Reno regrows a packet per round trip: slower than Cubic here.
        assert!(cross("reno:4").cycle(&at_8mbit).as_secs_f64() > k);
        // BBR's cycle is 8 round trips; the longest flow's period counts.
        assert_eq!(cross("bbr:1").cycle(&at_8mbit), Duration::from_millis(400));
        assert!(cross("bbr:1,cubic:1").cycle(&at_8mbit).as_secs_f64() > k);
        // UDP has no cycle, nor has a link without a rate; the cap holds.
        assert_eq!(cross("udp:1mbit").cycle(&at_8mbit), Duration::ZERO);
        assert_eq!(cross("cubic:1").cycle(&LinkSpec::default()), Duration::ZERO);
        assert_eq!(
            cross("reno:1").cycle(&link("100mbit", 300, "10000p")),
            MAX_CYCLE
        );
    }

    #[test]
    fn specs_read_and_write_back() {
        for s in [
            "cubic:2",
            "bbr:1",
            "udp:500kbit",
            "cubic:1,udp:1mbit",
            "none",
        ] {
            let c: CrossTraffic = s.parse().unwrap();
            assert_eq!(c.to_string(), s);
        }
        let c: CrossTraffic = "cubic:2,bbr:1,udp:500kbit".parse().unwrap();
        assert_eq!(c.flows(), 4);
        assert!("".parse::<CrossTraffic>().unwrap().is_empty());
        for bad in [
            "cubic",
            "cubic:0",
            "vegas:1",
            "udp:fast",
            "cubic:17",
            "cubic:9,bbr:8",
            "cubic:-1",
        ] {
            let e = bad.parse::<CrossTraffic>().unwrap_err();
            assert!(
                e.starts_with(&format!("'{bad}' is not cross traffic")),
                "{e}"
            );
        }
    }
}
