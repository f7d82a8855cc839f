//! Text renderings: one line for a difference
//! (`h2 vs https: −612 ms = −1 050 ms setup (5 fewer handshakes on the
//! critical path) + 310 ms loss recovery (2 more RTO stalls) + … + residual
//! 0 ms`) and a short table for one probe. Minus signs are U+2212,
//! thousands are grouped with a space.

use crate::difference::Difference;
use crate::explanation::{Component, Explanation};
use std::fmt::Write;

/// Whole milliseconds with a sign: `−1 050`, `310`, `0`.
pub fn ms(x: f64) -> String {
    let r = x.round();
    let digits = format!("{}", r.abs() as u64);
    let mut grouped = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(' ');
        }
        grouped.push(ch);
    }
    if r < 0.0 {
        format!("\u{2212}{grouped}")
    } else {
        grouped
    }
}

/// `5 fewer handshakes`, `1 more RTO stall`: a count difference in words;
/// None when it rounds to nothing.
fn counted(delta: Option<f64>, one: &str, many: &str) -> Option<String> {
    let d = delta?;
    let n = (d.abs() * 10.0).round() / 10.0;
    if n == 0.0 {
        return None;
    }
    let word = if d < 0.0 { "fewer" } else { "more" };
    let noun = if n == 1.0 { one } else { many };
    let n = if n.fract() == 0.0 {
        format!("{n:.0}")
    } else {
        format!("{n:.1}")
    };
    Some(format!("{n} {word} {noun}"))
}

/// The note a component's term carries, if any.
fn note(d: &Difference, c: Component) -> Option<String> {
    let w = &d.why;
    match c {
        Component::Setup => {
            let parts: Vec<String> = [
                counted(
                    w.handshakes_on_critical_path,
                    "handshake on the critical path",
                    "handshakes on the critical path",
                ),
                counted(
                    w.handshake_rounds_on_critical_path,
                    "handshake round",
                    "handshake rounds",
                ),
            ]
            .into_iter()
            .flatten()
            .collect();
            (!parts.is_empty()).then(|| parts.join(", "))
        }
        Component::LossRecovery => {
            let parts: Vec<String> = [
                counted(w.rto_stalls, "RTO stall", "RTO stalls"),
                counted(
                    w.retransmitted_segments,
                    "retransmitted segment",
                    "retransmitted segments",
                ),
                w.hol_blocked_bytes
                    .map(|b| b / 1e3)
                    .filter(|kb| kb.round() != 0.0)
                    .map(|kb| {
                        let word = if kb < 0.0 { "fewer" } else { "more" };
                        format!("{:.0} kB {word} held behind a hole", kb.abs())
                    }),
            ]
            .into_iter()
            .flatten()
            .collect();
            (!parts.is_empty()).then(|| parts.join(", "))
        }
        Component::Request => counted(w.request_rounds, "request round", "request rounds"),
        Component::Window => w
            .window_after_loss_ms
            .filter(|m| m.round() != 0.0)
            .map(|m| {
                let word = if m < 0.0 { "less" } else { "more" };
                format!("{} ms {word} of it after a loss", ms(m.abs()))
            }),
        Component::Queueing => w.rtt_inflation_pct.filter(|p| p.abs() >= 0.5).map(|p| {
            format!(
                "RTT inflation {}{:.0} points",
                if p < 0.0 { "\u{2212}" } else { "+" },
                p.abs()
            )
        }),
        _ => None,
    }
}

/// One line: the PLT difference as the sum of its components' differences,
/// largest first (those that round to 0 ms left out), and the residual.
pub fn difference(d: &Difference) -> String {
    let mut line = format!("{} vs {}: ", d.a_label, d.b_label);
    let Some(plt) = d.plt_ms.mean else {
        line.push_str("no probes to compare");
        return line;
    };
    let _ = write!(line, "{} ms =", ms(plt));
    let mut terms: Vec<(Component, f64)> = d
        .components
        .iter()
        .filter_map(|c| c.delta_ms.mean.map(|m| (c.component, m)))
        .filter(|(_, m)| m.round() != 0.0)
        .collect();
    terms.sort_by(|x, y| y.1.abs().total_cmp(&x.1.abs()));
    for (i, (c, m)) in terms.iter().enumerate() {
        let amount = if i == 0 {
            format!(" {}", ms(*m))
        } else if *m < 0.0 {
            format!(" \u{2212} {}", ms(-m))
        } else {
            format!(" + {}", ms(*m))
        };
        let _ = write!(line, "{amount} ms {}", c.name());
        if let Some(n) = note(d, *c) {
            let _ = write!(line, " ({n})");
        }
    }
    let residual = d.residual_ms.unwrap_or(0.0);
    let sep = if terms.is_empty() { " " } else { " + " };
    let _ = write!(line, "{sep}residual {} ms", ms(residual));
    line
}

/// A probe's components, one per line with its share of the PLT, and the
/// counts behind them.
pub fn explanation(e: &Explanation) -> String {
    let mut s = format!("{}: PLT {} ms\n", e.label, ms(e.plt_ms));
    for c in Component::ALL {
        let v = e.components.get(c);
        let pct = if e.plt_ms > 0.0 {
            v / e.plt_ms * 100.0
        } else {
            0.0
        };
        let _ = writeln!(s, "  {:<15} {:>8} ms {:>5.1} %", c.name(), ms(v), pct);
    }
    let w = &e.why;
    let _ = writeln!(
        s,
        "  handshakes {} ({} on the critical path, {} rounds), request rounds {}, \
         drops {}, retransmitted segments {}, RTO stalls {}",
        w.handshakes,
        w.handshakes_on_critical_path,
        w.handshake_rounds_on_critical_path,
        w.request_rounds,
        w.drops,
        w.retransmitted_segments,
        w.rto_stalls
    );
    if w.hol_blocked_bytes > 0 {
        let _ = writeln!(
            s,
            "  head-of-line blocked: {} B waited above a hole, for {} ms",
            w.hol_blocked_bytes,
            ms(w.hol_blocked_ms)
        );
    }
    if let Some(p) = e.bottleneck.rtt_inflation_pct {
        let _ = writeln!(s, "  RTT inflation +{p:.0} %");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milliseconds_are_grouped_and_signed() {
        assert_eq!(ms(-1050.2), "\u{2212}1 050");
        assert_eq!(ms(310.0), "310");
        assert_eq!(ms(1234567.0), "1 234 567");
        assert_eq!(ms(-0.2), "0");
        assert_eq!(ms(0.0), "0");
    }
}
