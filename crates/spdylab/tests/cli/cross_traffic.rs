//! `--cross-traffic` (issue 38) on a real testbed: bulk flows share the
//! bottleneck with the page, the explanation measures them (the page's share
//! of the downlink, their goodput), the page's own byte counts leave them
//! out, and a bad spec is exit 2 naming the flag or the file's key.

use crate::common::{fails, probes, run_json, TempDir};

fn compare(extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "compare",
        "--site",
        "icons",
        "--protocols",
        "https,h2",
        "--rtt",
        "20ms",
        "--rate",
        "10mbit",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ];
    args.extend_from_slice(extra);
    run_json(&args)
}

#[test]
fn cross_traffic_shares_the_bottleneck_and_is_measured() {
    let alone = compare(&[]);
    let shared = compare(&["--cross-traffic", "cubic:1,udp:1mbit"]);
    for (a, s) in probes(&alone).iter().zip(probes(&shared)) {
        assert!(a["explain"].get("competing").is_none(), "{a}");
        // The flows ran past their slow start (20 round trips, at least
        // 1 s) before the page, plus a random part of their cycle.
        assert!(a.get("cross_lead_ms").is_none(), "{a}");
        let lead = s["cross_lead_ms"].as_f64().unwrap();
        assert!(lead >= 1000.0, "{s}");
        let c = &s["explain"]["competing"];
        // One TCP download and one UDP stream, both through the link.
        assert_eq!(c["flows"], 2, "{c}");
        let share = c["page_share_pct"].as_f64().unwrap();
        assert!(share > 0.0 && share < 100.0, "{c}");
        // The UDP stream alone is 1 Mbit/s; the TCP flow takes more.
        let goodput = c["goodput_kbps"].as_f64().unwrap();
        assert!(goodput > 1000.0, "{c}");
        // Per flow, Pantheon's figures: goodputs that add up, and the
        // queue's delay for their packets.
        let flows: Vec<f64> = c["flow_goodput_kbps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(flows.len(), 2, "{c}");
        assert!(
            (flows.iter().sum::<f64>() - goodput).abs() < 1e-6 * goodput,
            "{c}"
        );
        let (mean, p95) = (
            c["queue_wait_mean_ms"].as_f64().unwrap(),
            c["queue_wait_p95_ms"].as_f64().unwrap(),
        );
        assert!(0.0 <= mean && mean <= p95, "{c}");
        // The page's bytes are its own: within 10 % of the load alone.
        let (ba, bs) = (
            a["bytes_down"].as_f64().unwrap(),
            s["bytes_down"].as_f64().unwrap(),
        );
        assert!((bs - ba).abs() <= 0.1 * ba, "{ba} alone, {bs} shared");
        // Sharing the link costs the page time.
        assert!(
            s["plt_ms"].as_f64().unwrap() > a["plt_ms"].as_f64().unwrap(),
            "{a} {s}"
        );
    }
}

#[test]
fn a_bad_cross_traffic_spec_is_refused() {
    fails(
        &[
            "compare",
            "--site",
            "icons",
            "--rtt",
            "20ms",
            "--cross-traffic",
            "vegas:1",
        ],
        2,
        "'vegas:1' is not cross traffic",
    );
    let dir = TempDir::new("cross-bad");
    let exp = dir.0.join("exp.toml");
    std::fs::write(
        &exp,
        "name = \"x\"\nsites = [\"icons\"]\nprotocols = [\"h2\"]\n[link]\nrtt = \"20ms\"\ncross_traffic = \"cubic:99\"\n",
    )
    .unwrap();
    let out = dir.0.join("out");
    fails(
        &[
            "sweep",
            exp.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        2,
        "cross_traffic",
    );
}
