//! The text of `spdylab explain` and `compare --explain`: per point, each
//! protocol's mean components (ms) in a table, its mechanism figures (gateway
//! loss, RTT inflation, goodput, …: `crate::explain::MECHANISMS`) in a
//! second, then each protocol's PLT difference from the baseline as the sum
//! of its components' differences (`explain::text::difference`), with the
//! residual printed.

use crate::explain::{Group, MECHANISMS};
use explain::Component;

/// The lines of `groups`.
pub fn lines(groups: &[Group]) -> Vec<String> {
    let mut out = Vec::new();
    let points = super::Points::of(groups.iter().map(|g| g.point.as_str()));
    if let Some(common) = points.common() {
        out.push(common);
    }
    for g in groups {
        if !g.point.is_empty() {
            out.push(format!("point {}", points.shown(&g.point)));
        }
        let mut header = format!("{:<16} {:>3} {:>8}", "protocol", "n", "PLT");
        for c in Component::ALL {
            header.push_str(&format!(" {:>9}", short(c)));
        }
        out.push(header);
        for p in &g.protocols {
            let mut row = format!(
                "{:<16} {:>3} {:>8}",
                p.label(),
                p.n,
                if p.n == 0 {
                    "n/a".to_string()
                } else {
                    format!("{:.0}", p.mean_plt_ms)
                }
            );
            for v in Component::ALL.map(|c| p.mean.get(c)) {
                row.push_str(&format!(
                    " {:>9}",
                    if p.n == 0 {
                        "n/a".to_string()
                    } else {
                        format!("{v:.0}")
                    }
                ));
            }
            out.push(row);
        }
        // The figures some protocol has (competing traffic's only with it).
        let shown: Vec<_> = MECHANISMS
            .iter()
            .filter(|(name, _, _)| {
                g.protocols
                    .iter()
                    .any(|p| p.mechanisms.iter().any(|m| m.name == *name))
            })
            .collect();
        let mut header = format!("{:<16}", "mechanisms");
        for (_, title, _) in &shown {
            header.push_str(&format!(" {title:>12}"));
        }
        out.push(header);
        for p in &g.protocols {
            let mut row = format!("{:<16}", p.label());
            for (name, _, _) in &shown {
                let cell = match p.mechanisms.iter().find(|m| m.name == *name) {
                    Some(m) if m.mean.abs() >= 100.0 => format!("{:.0}", m.mean),
                    Some(m) => format!("{:.1}", m.mean),
                    None => "n/a".into(),
                };
                row.push_str(&format!(" {cell:>12}"));
            }
            out.push(row);
        }
        for d in &g.differences {
            out.push(explain::text::difference(d));
        }
    }
    out.push(
        "mean ms per probe; each probe's components partition its PLT (docs/explain.md), so a difference is the sum of its components' and the residual is rounding."
            .into(),
    );
    out.push(
        "mechanisms, means per probe: gw-loss% queue drops / packets that reached the queues; rtt-infl% mean queue wait over the base RTT; goodput kbit/s of payload over time on the wire; setup% and request% of the PLT; hol-KB payload held behind a hole (head-of-line blocking), hol-ms the time some connection held any; conns opened; peak-KB the most one connection delivered in one RTT, conn-peak-KB its mean over connections; with cross traffic, page-share% the page's share of the downlink's bytes, cross-kbps the others' goodput and cross-p95ms their 95th-percentile queue wait during the page."
            .into(),
    );
    out
}

/// A component's column title.
fn short(c: Component) -> &'static str {
    match c {
        Component::OffWire => "off-wire",
        Component::Retransmission => "retrans",
        Component::Transfer => "transfer",
        Component::LossRecovery => "loss-rec",
        Component::Setup => "setup",
        Component::Queueing => "queueing",
        Component::Window => "window",
        Component::Request => "request",
        Component::Browser => "browser",
    }
}
