//! summary.csv (one row per group of Trials and protocol) and the bench's
//! pipelining.csv: CSV fields and numbers.

use crate::axes::swept_axes;
use crate::rows::Row;
use results::{BenchRow, Experiment};
use std::fmt::Write as _;

/// The columns of summary.csv, in order (documented in docs/experiments.md).
pub const SUMMARY_COLUMNS: &[&str] = &[
    "site",
    "point",
    "protocol",
    "n",
    "failed",
    "plt_mean_ms",
    "plt_median_ms",
    "plt_ci_lo_ms",
    "plt_ci_hi_ms",
    "tow_mean_ms",
    "tow_median_ms",
    "gain_pct",
    "gain_ci_lo",
    "gain_ci_hi",
    "tow_gain_pct",
    "connect_ms",
    "ssl_ms",
    "send_ms",
    "wait_ms",
    "receive_ms",
    "connections",
    "bytes_down",
    "metric",
    "plt_gain_pct",
    "tow_gain_ci_lo",
    "tow_gain_ci_hi",
    "metric_mean_ms",
    "metric_median_ms",
    "metric_ci_lo_ms",
    "metric_ci_hi_ms",
    "ttfb_mean_ms",
    "fcp_mean_ms",
    "lcp_mean_ms",
    "si_mean_ms",
];

pub(crate) fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A CSV number: empty when there is none (no finished probe, no interval).
fn num(v: impl Into<Option<f64>>) -> String {
    v.into()
        .filter(|v| v.is_finite())
        .map_or(String::new(), |v| format!("{:.3}", v + 0.0))
}

/// summary.csv: `site`, one column per swept axis, then SUMMARY_COLUMNS[1..].
pub(crate) fn summary_csv(exp: &Experiment, rows: &[Row]) -> String {
    let axes = swept_axes(exp);
    let mut header = vec![SUMMARY_COLUMNS[0].to_string()];
    header.extend(axes.iter().cloned());
    header.extend(SUMMARY_COLUMNS[1..].iter().map(|c| c.to_string()));
    let mut out = header.join(",");
    out.push('\n');
    for r in rows {
        let ph = |k: &str| num(r.phases.get(k).copied().unwrap_or(f64::NAN));
        let mut fields = vec![csv_field(r.point.get("site").map_or("", String::as_str))];
        fields.extend(
            axes.iter()
                .map(|a| csv_field(r.point.get(a).map_or("", String::as_str))),
        );
        fields.extend([
            csv_field(&r.key),
            r.protocol.clone(),
            r.n.to_string(),
            r.failed.to_string(),
            num(r.plt.mean),
            num(r.plt.median),
            num(r.plt.ci95[0]),
            num(r.plt.ci95[1]),
            num(r.tow.mean),
            num(r.tow.median),
            num(r.gain),
            num(r.gain_ci[0]),
            num(r.gain_ci[1]),
            num(r.tow_gain),
            ph("connect"),
            ph("ssl"),
            ph("send"),
            ph("wait"),
            ph("receive"),
            num(r.connections),
            num(r.bytes_down),
            exp.metric.name().to_string(),
            num(r.plt_gain),
            num(r.tow_gain_ci[0]),
            num(r.tow_gain_ci[1]),
            num(r.headline.mean),
            num(r.headline.median),
            num(r.headline.ci95[0]),
            num(r.headline.ci95[1]),
        ]);
        fields.extend(r.paint_means.iter().map(|&m| num(m)));
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// pipelining.csv: one line per run of the throughput matrix.
pub(crate) fn bench_csv(rows: &[BenchRow]) -> String {
    let mut csv = String::from("server,file,protocol,depth,requests_per_sec,p50_ms,p99_ms,p999_ms,errors,generator_cpu_s,server_cpu_s,skipped\n");
    for r in rows {
        let _ = writeln!(
            csv,
            "{},{},{},{},{:.0},{:.3},{:.3},{:.3},{},{:.2},{:.2},{}",
            r.server,
            csv_field(&r.file),
            r.protocol,
            r.depth,
            r.requests_per_sec,
            r.p50_ms,
            r.p99_ms,
            r.p999_ms,
            r.errors,
            r.generator_cpu_s,
            r.server_cpu_s,
            csv_field(r.skipped.as_deref().unwrap_or(""))
        );
    }
    csv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_fields_are_quoted() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("x\"y"), "\"x\"\"y\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn no_number_is_an_empty_field() {
        assert_eq!(num(f64::NAN), "");
        assert_eq!(num(None), "");
        assert_eq!(num(-0.0), "0.000");
    }
}
