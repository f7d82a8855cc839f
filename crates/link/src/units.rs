//! Units in types: the one place where `150ms`, `1mbit`, `1%`, `256p`, `64kb`
//! and `codel:5ms,100ms` are parsed and printed. Every command line flag and
//! file field uses these.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A value that did not parse: says what was given and which forms are accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError {
    pub given: String,
    pub expected: &'static str,
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}' is not {}", self.given, self.expected)
    }
}

impl std::error::Error for UnitError {}

fn err(given: &str, expected: &'static str) -> UnitError {
    UnitError {
        given: given.to_string(),
        expected,
    }
}

/// Splits "12.5mbit" into (12.5, "mbit"); the number must be finite and non-negative.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    if end == 0 {
        return None;
    }
    let value: f64 = s[..end].parse().ok()?;
    if !value.is_finite() || value < 0.0 {
        return None;
    }
    Some((value, s[end..].trim()))
}

const DURATION_FORMS: &str = "a duration such as 150ms, 0.5ms, 20us or 2s";

/// Parses `150ms`, `0.5ms`, `250us`, `2s`, `1m`. A bare number is refused: the unit must be said.
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let (value, unit) = split_number(s).ok_or_else(|| err(s, DURATION_FORMS))?;
    let nanos_per_unit = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        _ => return Err(err(s, DURATION_FORMS)),
    };
    let nanos = (value * nanos_per_unit).round();
    if nanos > u64::MAX as f64 / 2.0 {
        return Err(err(s, DURATION_FORMS));
    }
    Ok(Duration::from_nanos(nanos as u64))
}

/// Prints a duration the way `parse_duration` reads it back.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns == 0 {
        "0ms".into()
    } else if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else if ns.is_multiple_of(1_000) {
        format!("{}us", ns / 1_000)
    } else {
        format!("{ns}ns")
    }
}

/// A bit rate in bits per second (`1mbit` = 1 000 000 bit/s, as tc counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Bitrate(pub u64);

const RATE_FORMS: &str = "a rate such as 64kbit, 1mbit, 8mbit, 1.5gbit or 9600bit";

impl Bitrate {
    pub fn bits_per_sec(self) -> u64 {
        self.0
    }

    /// Time to serialize `bytes` at this rate, to the nanosecond (rounded up).
    pub fn transmit_time(self, bytes: usize) -> Duration {
        let bits = bytes as u128 * 8;
        let nanos = (bits * 1_000_000_000).div_ceil(self.0 as u128);
        Duration::from_nanos(nanos as u64)
    }
}

impl FromStr for Bitrate {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        let (value, unit) = split_number(s).ok_or_else(|| err(s, RATE_FORMS))?;
        let mult = match unit.to_ascii_lowercase().as_str() {
            "bit" => 1.0,
            "kbit" => 1e3,
            "mbit" => 1e6,
            "gbit" => 1e9,
            _ => return Err(err(s, RATE_FORMS)),
        };
        let bps = (value * mult).round();
        if !(1.0..=1e12).contains(&bps) {
            return Err(err(s, RATE_FORMS));
        }
        Ok(Bitrate(bps as u64))
    }
}

impl fmt::Display for Bitrate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        if b.is_multiple_of(1_000_000_000) {
            write!(f, "{}gbit", b / 1_000_000_000)
        } else if b.is_multiple_of(1_000_000) {
            write!(f, "{}mbit", b / 1_000_000)
        } else if b.is_multiple_of(1_000) {
            write!(f, "{}kbit", b / 1_000)
        } else {
            write!(f, "{b}bit")
        }
    }
}

/// A probability, written as a percentage (`1%`, `0.5%`, `100%`).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize, Deserialize)]
pub struct Probability(pub f64);

const PERCENT_FORMS: &str = "a percentage between 0% and 100%, such as 1% or 0.5%";

impl FromStr for Probability {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        let (value, unit) = split_number(s).ok_or_else(|| err(s, PERCENT_FORMS))?;
        if unit != "%" || value > 100.0 {
            return Err(err(s, PERCENT_FORMS));
        }
        Ok(Probability(value / 100.0))
    }
}

impl fmt::Display for Probability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%", self.0 * 100.0)
    }
}

const BYTES_FORMS: &str = "a size such as 1500b, 9.5kb or 2mb (1 kb = 1000 bytes)";

/// Parses a byte count: `1500b`, `9.5kb`, `2mb` (powers of 1000).
pub fn parse_bytes(s: &str) -> Result<usize, UnitError> {
    let (value, unit) = split_number(s).ok_or_else(|| err(s, BYTES_FORMS))?;
    let mult = match unit.to_ascii_lowercase().as_str() {
        "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        _ => return Err(err(s, BYTES_FORMS)),
    };
    let n = (value * mult).round();
    if n > 1e12 || (value * mult - n).abs() > 1e-6 {
        return Err(err(s, BYTES_FORMS));
    }
    Ok(n as usize)
}

/// How much a drop-tail queue holds: packets, bytes, or both (whichever fills first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueLimit {
    pub packets: Option<usize>,
    pub bytes: Option<usize>,
}

impl Default for QueueLimit {
    /// 256 packets: the tail-drop queue of the paper (004, §V-B).
    fn default() -> Self {
        QueueLimit {
            packets: Some(256),
            bytes: None,
        }
    }
}

const QUEUE_FORMS: &str =
    "a queue limit such as 256p (packets), 64kb or 1500b (bytes), or both as 256p,64kb";

impl FromStr for QueueLimit {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        let mut limit = QueueLimit {
            packets: None,
            bytes: None,
        };
        for part in s.split(',') {
            let (value, unit) = split_number(part).ok_or_else(|| err(s, QUEUE_FORMS))?;
            if value.fract() != 0.0 && unit == "p" {
                return Err(err(s, QUEUE_FORMS));
            }
            let (slot, mult) = match unit.to_ascii_lowercase().as_str() {
                "p" => (&mut limit.packets, 1.0),
                "b" => (&mut limit.bytes, 1.0),
                "kb" => (&mut limit.bytes, 1e3),
                "mb" => (&mut limit.bytes, 1e6),
                _ => return Err(err(s, QUEUE_FORMS)),
            };
            let n = (value * mult).round();
            if slot.is_some() || !(1.0..=1e12).contains(&n) {
                return Err(err(s, QUEUE_FORMS));
            }
            *slot = Some(n as usize);
        }
        Ok(limit)
    }
}

impl fmt::Display for QueueLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.packets, self.bytes) {
            (Some(p), Some(b)) => write!(f, "{p}p,{b}b"),
            (Some(p), None) => write!(f, "{p}p"),
            (None, Some(b)) => write!(f, "{b}b"),
            (None, None) => write!(f, "unlimited"),
        }
    }
}

/// How a queue chooses what to drop, besides its hard limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discipline {
    /// First in, first out: only the limit drops, on arrival.
    DropTail,
    /// CoDel (RFC 8289): drops at dequeue once packets have waited longer than
    /// `target` for at least `interval`.
    CoDel {
        target: Duration,
        interval: Duration,
    },
}

/// A queue: its discipline and its hard limit (checked on arrival, whatever the
/// discipline). Written `256p`, `64kb`, `256p,64kb` (drop-tail) or
/// `codel:TARGET,INTERVAL[,LIMIT]` such as `codel:5ms,100ms` or
/// `codel:5ms,100ms,256p`; CoDel's limit defaults to [`QueueSpec::CODEL_LIMIT`].
/// Displays as the canonical form of what it parses (a CoDel limit only when it
/// is not the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueSpec {
    pub discipline: Discipline,
    pub limit: QueueLimit,
}

impl QueueSpec {
    /// CoDel's hard limit when none is given: 1000 packets, as Linux's `codel` qdisc.
    pub const CODEL_LIMIT: QueueLimit = QueueLimit {
        packets: Some(1000),
        bytes: None,
    };

    pub fn drop_tail(limit: QueueLimit) -> QueueSpec {
        QueueSpec {
            discipline: Discipline::DropTail,
            limit,
        }
    }
}

impl Default for QueueSpec {
    /// Drop-tail, 256 packets: the queue of the paper (004, §V-B).
    fn default() -> Self {
        QueueSpec::drop_tail(QueueLimit::default())
    }
}

const QUEUE_SPEC_FORMS: &str = "a queue such as 256p (packets), 64kb (bytes) or 256p,64kb (both) \
     for drop-tail, or codel:TARGET,INTERVAL[,LIMIT] such as codel:5ms,100ms or \
     codel:5ms,100ms,256p for CoDel (0 < target < interval; limit 1000p unless given)";

impl FromStr for QueueSpec {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, UnitError> {
        let bad = || err(s, QUEUE_SPEC_FORMS);
        let Some(rest) = s.trim().strip_prefix("codel:") else {
            return s.parse().map(QueueSpec::drop_tail).map_err(|_| bad());
        };
        let mut parts = rest.splitn(3, ',');
        let mut duration = || parts.next().and_then(|p| parse_duration(p).ok());
        let (Some(target), Some(interval)) = (duration(), duration()) else {
            return Err(bad());
        };
        if target.is_zero() || target >= interval {
            return Err(bad());
        }
        let limit = match parts.next() {
            None => QueueSpec::CODEL_LIMIT,
            Some(l) => l.parse().map_err(|_| bad())?,
        };
        Ok(QueueSpec {
            discipline: Discipline::CoDel { target, interval },
            limit,
        })
    }
}

impl fmt::Display for QueueSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.discipline {
            Discipline::DropTail => write!(f, "{}", self.limit),
            Discipline::CoDel { target, interval } => {
                write!(
                    f,
                    "codel:{},{}",
                    format_duration(target),
                    format_duration(interval)
                )?;
                if self.limit != QueueSpec::CODEL_LIMIT {
                    write!(f, ",{}", self.limit)?;
                }
                Ok(())
            }
        }
    }
}

impl Serialize for QueueSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("150ms").unwrap(), Duration::from_millis(150));
        assert_eq!(parse_duration("0.5ms").unwrap(), Duration::from_micros(500));
        assert_eq!(parse_duration("20us").unwrap(), Duration::from_micros(20));
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        for bad in ["150", "ms", "-1ms", "1 parsec", "", "1e3ms", "nanms"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(format_duration(Duration::from_millis(150)), "150ms");
        assert_eq!(format_duration(Duration::from_micros(1500)), "1500us");
    }

    #[test]
    fn rates() {
        assert_eq!("1mbit".parse::<Bitrate>().unwrap(), Bitrate(1_000_000));
        assert_eq!("64kbit".parse::<Bitrate>().unwrap(), Bitrate(64_000));
        assert_eq!(
            "1.5Gbit".parse::<Bitrate>().unwrap(),
            Bitrate(1_500_000_000)
        );
        for bad in ["1mbps", "1", "0mbit", "fast", "1mbt"] {
            assert!(bad.parse::<Bitrate>().is_err(), "{bad}");
        }
        assert_eq!(Bitrate(64_000).to_string(), "64kbit");
        assert_eq!(
            Bitrate(1_000_000).transmit_time(1500),
            Duration::from_millis(12)
        );
    }

    #[test]
    fn percentages_and_queues() {
        assert_eq!("1%".parse::<Probability>().unwrap(), Probability(0.01));
        assert!("1".parse::<Probability>().is_err());
        assert!("101%".parse::<Probability>().is_err());
        let q: QueueLimit = "256p".parse().unwrap();
        assert_eq!((q.packets, q.bytes), (Some(256), None));
        let q: QueueLimit = "64kb".parse().unwrap();
        assert_eq!((q.packets, q.bytes), (None, Some(64_000)));
        let q: QueueLimit = "100p,150kb".parse().unwrap();
        assert_eq!((q.packets, q.bytes), (Some(100), Some(150_000)));
        assert_eq!(parse_bytes("9.5kb").unwrap(), 9_500);
        assert_eq!(parse_bytes("1500b").unwrap(), 1_500);
        assert!(parse_bytes("1500").is_err());
        for bad in ["256", "0p", "1.5p", "1p,2p", "64kib"] {
            assert!(bad.parse::<QueueLimit>().is_err(), "{bad}");
        }
        let e = "256".parse::<QueueLimit>().unwrap_err().to_string();
        assert!(e.contains("256p"), "{e}");
    }

    #[test]
    fn queue_specs() {
        let q: QueueSpec = "256p".parse().unwrap();
        assert_eq!(q, QueueSpec::default());
        let q: QueueSpec = "64kb".parse().unwrap();
        assert_eq!(q, QueueSpec::drop_tail("64000b".parse().unwrap()));
        assert_eq!(q.to_string(), "64000b");
        let codel = Discipline::CoDel {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
        };
        let q: QueueSpec = "codel:5ms,100ms".parse().unwrap();
        assert_eq!((q.discipline, q.limit), (codel, QueueSpec::CODEL_LIMIT));
        assert_eq!(q.to_string(), "codel:5ms,100ms");
        assert_eq!("codel:5ms,100ms,1000p".parse::<QueueSpec>().unwrap(), q);
        let q: QueueSpec = "codel:5ms,100ms,256p".parse().unwrap();
        assert_eq!((q.discipline, q.limit), (codel, QueueLimit::default()));
        assert_eq!(q.to_string(), "codel:5ms,100ms,256p");
        let q: QueueSpec = "codel:0.5ms,20ms,100p,150kb".parse().unwrap();
        assert_eq!(q.to_string(), "codel:500us,20ms,100p,150000b");
        for bad in [
            "",
            "256",
            "codel",
            "codel:",
            "codel:5ms",
            "codel:5,100ms",
            "codel:5ms,100",
            "codel:0ms,100ms",
            "codel:100ms,5ms",
            "codel:5ms,5ms",
            "codel:5ms,100ms,",
            "codel:5ms,100ms,256",
            "codel:5ms,100ms,1p,2p",
            "pie:15ms",
            "fq_codel",
        ] {
            let e = bad.parse::<QueueSpec>().unwrap_err().to_string();
            assert!(
                e.contains("256p") && e.contains("codel:5ms,100ms"),
                "{bad}: {e}"
            );
        }
    }

    /// Round trip: every spec displays as text that parses back to it, and that
    /// text is a fixed point (seeded, so a failure names its case).
    #[test]
    fn queue_specs_round_trip() {
        let mut rng = crate::rng::Rng::new(7);
        let mut pick = |n: u64| rng.next_u64() % n;
        for case in 0..20_000 {
            let limit = match pick(3) {
                0 => QueueLimit {
                    packets: Some(1 + pick(5000) as usize),
                    bytes: None,
                },
                1 => QueueLimit {
                    packets: None,
                    bytes: Some(1 + pick(10_000_000) as usize),
                },
                _ => QueueLimit {
                    packets: Some(1 + pick(5000) as usize),
                    bytes: Some(1 + pick(10_000_000) as usize),
                },
            };
            let discipline = if pick(2) == 0 {
                Discipline::DropTail
            } else {
                // Any unit: whole seconds, ms, us or odd nanoseconds.
                let unit = [1, 1_000, 1_000_000, 1_000_000_000][pick(4) as usize];
                let target = Duration::from_nanos((1 + pick(1000)) * unit);
                let interval = target + Duration::from_nanos((1 + pick(1000)) * unit);
                Discipline::CoDel { target, interval }
            };
            let spec = QueueSpec { discipline, limit };
            let text = spec.to_string();
            let back: QueueSpec = text.parse().unwrap_or_else(|e| panic!("case {case}: {e}"));
            assert_eq!(back, spec, "case {case}: {text}");
            assert_eq!(back.to_string(), text, "case {case}");
        }
    }
}
