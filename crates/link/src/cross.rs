//! Competing traffic on the bottleneck (issue 38): bulk flows between other
//! addresses of the testbed, sharing the link with the page. A spec is a
//! comma-separated list of `cubic:N` / `bbr:N` / `reno:N` (N TCP bulk
//! downloads with that congestion control) and `udp:RATE` (one UDP stream
//! at a constant rate down), e.g. `cubic:2,udp:500kbit`; `none` is nothing.
//! Pure: the testbed (`netns`) runs what it describes.

use crate::units::Bitrate;
use std::fmt;
use std::str::FromStr;

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
}

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
