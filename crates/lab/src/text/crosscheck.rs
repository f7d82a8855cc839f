//! The text of `spdylab crosscheck`: each probe's progress line, the table
//! of Trials (each client's median PLT, ratio, error, resources,
//! connections and the model's phases minus Chromium's) with its legend,
//! and the agreement of each group of Trials against the goal.

use crate::crosscheck::{Agreement, Phases, Row};
use crate::probe::ProbeRecord;
use crate::trial::{ClientKind, Trial};
use results::summary::or_na;
use site::Site;

/// A finished probe, for the progress bar.
pub fn progress_line(p: &ProbeRecord, site: &Site, label: &str, client: ClientKind) -> String {
    match &p.error {
        None => format!(
            "{} {} {} {}: PLT {:.0} ms",
            site.name,
            label,
            client.name(),
            p.protocol,
            p.plt_ms
        ),
        Some(e) => format!(
            "{} {} {} {} failed: {e}",
            site.name,
            label,
            client.name(),
            p.protocol
        ),
    }
}

/// The table of Trials and its legend, a blank line, then the agreement of
/// each group, the goal, and the note its n/a cells call for. `trial`: the
/// model's knobs (its pooling and browser costs are named in the legend).
pub fn report(rows: &[Row], groups: &[Agreement], trial: &Trial) -> Vec<String> {
    let mut out = vec![format!(
        "{:<17} {:<13} {:<5} {:>8} {:>8} {:>5} {:>6} {:>7} {:>7}  {:>7} {:>7} {:>7} {:>7} {:>8}",
        "site",
        "link",
        "proto",
        "model",
        "chrome",
        "ratio",
        "error",
        "res",
        "conns",
        "Δconn",
        "Δssl",
        "Δwait",
        "Δrecv",
        "Δdisc"
    )];
    for r in rows {
        let d = r.phase_diff();
        out.push(format!(
            "{:<17} {:<13} {:<5} {:>8} {:>8} {:>5} {:>6} {:>3}/{:<3} {:>3}/{:<3}  {:>7} {:>7} {:>7} {:>7} {:>8}",
            r.site,
            r.link,
            r.protocol.name(),
            or_na(r.model.median, |v| format!("{v:.0}")),
            or_na(r.chromium.median, |v| format!("{v:.0}")),
            or_na(r.ratio, |v| format!("{v:.2}")),
            or_na(r.ape_pct, |v| format!("{v:.1}%")),
            // A client that loaded nothing has no count: n/a, not NaN.
            or_na(r.model_resources, |v| format!("{v:.0}")),
            or_na(r.chromium_resources, |v| format!("{v:.0}")),
            or_na(r.model_connections, |v| format!("{v:.0}")),
            or_na(r.chromium_connections, |v| format!("{v:.0}")),
            or_na(d.connect, |v| format!("{v:+.0}")),
            or_na(d.ssl, |v| format!("{v:+.0}")),
            or_na(d.wait, |v| format!("{v:+.0}")),
            or_na(d.receive, |v| format!("{v:+.0}")),
            or_na(d.discovery, |v| format!("{v:+.0}")),
        ));
    }
    out.push(format!(
        "model and chrome: median PLT, ms; res, conns: model/Chromium; Δ: model - Chromium, ms ({}); model: --pool {} --browser-cost {}",
        Phases::NAMES.join(", "),
        trial.model.pool,
        trial.model.browser_cost
    ));
    out.push(String::new());
    out.push(format!(
        "{:<26} {:>6} {:>7} {:>9} {:>6}  worst",
        "Trials", "n", "MAPE", "within10", "rho"
    ));
    for g in groups {
        out.push(format!(
            "{:<26} {:>6} {:>7} {:>9} {:>6}  {}",
            g.group,
            format!("{}/{}", g.compared, g.trials),
            or_na(g.mape_pct, |v| format!("{v:.1}%")),
            or_na(g.within_10_pct, |v| format!("{v:.0}%")),
            or_na(g.spearman, |v| format!("{v:.3}")),
            or_na(g.worst_pct, |v| format!("{v:.1}% {}", g.worst)),
        ));
    }
    out.push(
        "goal: MAPE within 10% overall and per rate, rho >= 0.95, no Trial worse than 20%".into(),
    );
    if rows.iter().any(|r| !r.ape_pct.is_finite()) {
        out.push("n/a: a client loaded none of that Trial's pages: nothing to compare.".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crosscheck::{agreements, row};
    use proto::Protocol;

    #[test]
    fn a_trial_no_client_loaded_reads_na_with_its_note() {
        let rows = [row(
            "icons",
            "50ms 1mbit",
            "1mbit",
            "50ms",
            Protocol::H2,
            &[],
            &[],
        )];
        let out = report(&rows, &agreements(&rows), &Trial::default());
        assert!(
            out[0].starts_with("site ") && out[0].ends_with("Δdisc"),
            "{}",
            out[0]
        );
        assert!(
            out[1].starts_with("icons") && out[1].contains(" n/a "),
            "{}",
            out[1]
        );
        // Counts of a client that loaded nothing are n/a too, never NaN.
        assert!(out[1].contains("n/a/n/a"), "{}", out[1]);
        assert!(!out.iter().any(|l| l.contains("NaN")), "{out:#?}");
        assert!(
            out.contains(&String::new()),
            "a blank line before the agreement"
        );
        assert_eq!(
            out.last().unwrap(),
            "n/a: a client loaded none of that Trial's pages: nothing to compare."
        );
    }
}
