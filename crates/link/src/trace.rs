//! Delivery traces in Mahimahi's format: one line per 1500-byte delivery
//! opportunity, the millisecond at which it occurs; the trace loops with a period
//! equal to its last timestamp.

use serde::{Serialize, Serializer};
use std::fmt;
use std::time::Duration;

/// Bytes one delivery opportunity carries (Mahimahi's PACKET_SIZE).
pub const OPPORTUNITY_BYTES: usize = 1500;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    name: String,
    /// Opportunity times within one period, in nanoseconds, non-decreasing.
    offsets_ns: Vec<u64>,
    period_ns: u64,
}

/// A trace that did not parse: the line (1-based) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    pub name: String,
    pub line: usize,
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.name, self.message)
        } else {
            write!(f, "{}:{}: {}", self.name, self.line, self.message)
        }
    }
}

impl std::error::Error for TraceError {}

impl Trace {
    /// Parses a trace's text; `name` (usually the file's path) goes into errors.
    pub fn parse(name: &str, text: &str) -> Result<Trace, TraceError> {
        let fail = |line: usize, message: String| TraceError {
            name: name.to_string(),
            line,
            message,
        };
        let mut offsets_ns = Vec::new();
        let mut last = 0u64;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            let ms: u64 = line.parse().map_err(|_| {
                fail(
                    i + 1,
                    format!("'{line}' is not a whole number of milliseconds"),
                )
            })?;
            if ms < last {
                return Err(fail(
                    i + 1,
                    format!("timestamps must not decrease ({ms} after {last})"),
                ));
            }
            last = ms;
            let ns = ms
                .checked_mul(1_000_000)
                .ok_or_else(|| fail(i + 1, format!("{ms} ms is too large (over 584 years)")))?;
            offsets_ns.push(ns);
        }
        if offsets_ns.is_empty() {
            return Err(fail(0, "the trace has no delivery opportunities".into()));
        }
        if last == 0 {
            return Err(fail(
                0,
                "the last timestamp must be above 0 ms: it is the period the trace loops with"
                    .into(),
            ));
        }
        Ok(Trace {
            name: name.to_string(),
            offsets_ns,
            period_ns: last * 1_000_000,
        })
    }

    /// A trace with one opportunity every `every_ms` milliseconds.
    pub fn constant(every_ms: u64, opportunities: usize) -> Trace {
        let text: String = (1..=opportunities)
            .map(|i| format!("{}\n", i as u64 * every_ms))
            .collect();
        Trace::parse("constant", &text).expect("a valid constant trace")
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn period(&self) -> Duration {
        Duration::from_nanos(self.period_ns)
    }

    pub fn opportunities_per_period(&self) -> usize {
        self.offsets_ns.len()
    }

    /// The long-run rate in bit/s.
    pub fn mean_bits_per_sec(&self) -> f64 {
        (self.offsets_ns.len() * OPPORTUNITY_BYTES * 8) as f64 / self.period().as_secs_f64()
    }

    /// Time of opportunity number `index` (counting across loops), in ns.
    pub(crate) fn time_of(&self, index: u64) -> u64 {
        let n = self.offsets_ns.len() as u64;
        (index / n) * self.period_ns + self.offsets_ns[(index % n) as usize]
    }

    /// Index of the first opportunity at or after `t_ns`.
    pub(crate) fn first_at_or_after(&self, t_ns: u64) -> u64 {
        let n = self.offsets_ns.len() as u64;
        let cycle = t_ns / self.period_ns;
        let within = t_ns - cycle * self.period_ns;
        let i = self.offsets_ns.partition_point(|&o| o < within) as u64;
        cycle * n + i
    }
}

impl Serialize for Trace {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Trace", 4)?;
        st.serialize_field("trace", &self.name)?;
        st.serialize_field("opportunities", &self.offsets_ns.len())?;
        st.serialize_field("period_ms", &(self.period_ns / 1_000_000))?;
        st.serialize_field("mean_bps", &self.mean_bits_per_sec().round())?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_loops() {
        let t = Trace::parse("t", "1\n1\n5\n\n10\n").unwrap();
        assert_eq!(t.period(), Duration::from_millis(10));
        assert_eq!(t.opportunities_per_period(), 4);
        assert_eq!(t.time_of(0), 1_000_000);
        assert_eq!(t.time_of(1), 1_000_000);
        assert_eq!(t.time_of(4), 11_000_000);
        assert_eq!(t.first_at_or_after(1_500_000), 2);
        assert_eq!(t.first_at_or_after(10_000_001), 4);
        assert_eq!(t.first_at_or_after(0), 0);
    }

    #[test]
    fn errors_name_the_line() {
        let e = Trace::parse("up.trace", "1\n2\nx\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.to_string().starts_with("up.trace:3:"), "{e}");
        let e = Trace::parse("t", "5\n3\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(Trace::parse("t", "").is_err());
        assert!(Trace::parse("t", "0\n0\n").is_err());
    }
}
