//! `spdylab calibrate --json`: the schema users and scripts rely on, and bounds
//! the physics guarantees.

mod common;

#[test]
fn calibrate_json_reports_spec_and_measured() {
    let v = common::run_json(&[
        "calibrate",
        "--rtt",
        "20ms",
        "--rate",
        "8mbit",
        "--loss",
        "3%",
        "--echo-samples",
        "10",
        "--bulk-time",
        "1s",
        "--datagrams",
        "2000",
        "--json",
    ]);
    assert_eq!(v["schema"], 1);
    for key in ["rtt_ms", "down_bps", "up_bps", "loss"] {
        assert!(v[key]["spec"].is_number(), "{key}: {v}");
        assert!(v[key]["measured"].is_number(), "{key}: {v}");
    }
    assert_eq!(v["rtt_ms"]["spec"], 20.0);
    assert!(v["rtt_ms"]["min"].as_f64().unwrap() >= 20.0, "{v}");
    for dir in ["down_bps", "up_bps"] {
        let wire = v[dir]["wire_bps"].as_f64().unwrap();
        // What the link delivered in a window cannot exceed the rate (one packet of slack for the window's edges).
        let window = v[dir]["window_s"].as_f64().unwrap();
        assert!(wire <= 8e6 + 2.0 * 1500.0 * 8.0 / window, "{dir}: {v}");
        assert!(v[dir]["measured"].as_f64().unwrap() > 0.0);
    }
    // Loss: a fixed seed and only our datagrams on the link, so this is exact, not statistical.
    assert_eq!(v["loss"]["spec"], 0.03);
    assert_eq!(v["loss"]["inside_ci99"], true, "{v}");
}

/// A quick calibration's goodput (the campaign's plan: 2 s windows) over a long,
/// fat link where slow start's losses straddle the window's start: it stays
/// under the rate by more than its stated error, and under the TCP ceiling within it.
#[test]
fn goodput_never_exceeds_the_rate_beyond_its_stated_error() {
    for run in 0..2 {
        let o = common::spdylab(&[
            "calibrate",
            "--rtt",
            "150ms",
            "--rate",
            "8mbit",
            "--echo-samples",
            "10",
            "--bulk-time",
            "2s",
            "--datagrams",
            "1000",
            "--json",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for dir in ["down_bps", "up_bps"] {
            let r = &v[dir];
            let measured = r["measured"].as_f64().unwrap();
            let error = r["error_bps"].as_f64().unwrap();
            let ceiling = r["tcp_ceiling"].as_f64().unwrap();
            let window = r["window_s"].as_f64().unwrap();
            eprintln!("run {run} {dir}: {measured:.0} ± {error:.0} bit/s");
            assert!(error > 0.0 && error < 0.01 * 8e6, "{dir}: {r}");
            assert!(measured <= 8e6 + error, "{dir}: {r}");
            // The link's own edges may let one packet more through each (as above).
            assert!(
                measured <= ceiling + error + 2.0 * 1500.0 * 8.0 / window,
                "{dir}: {r}"
            );
        }
    }
}

/// `--transport udp`: the path h3 takes. RTT from echoes is at least the spec;
/// a paced UDP flow offered above the rate gets through no more than the rate
/// (one datagram of slack at each edge of the window), and no more than its
/// payload share of it within the stated error.
#[test]
fn a_udp_path_is_calibrated_within_physics() {
    let v = common::run_json(&[
        "calibrate",
        "--transport",
        "udp",
        "--rtt",
        "40ms",
        "--rate",
        "4mbit",
        "--echo-samples",
        "5",
        "--bulk-time",
        "1s",
        "--datagrams",
        "200",
        "--json",
    ]);
    assert_eq!(v["plan"]["transport"], "udp", "{v}");
    assert!(v["rtt_ms"]["min"].as_f64().unwrap() >= 40.0, "{v}");
    assert!(v["rtt_ms"]["mdev"].as_f64().unwrap() >= 0.0, "{v}");
    for dir in ["down_bps", "up_bps"] {
        let r = &v[dir];
        let measured = r["measured"].as_f64().unwrap();
        let window = r["window_s"].as_f64().unwrap();
        let one_packet = 1500.0 * 8.0 / window;
        assert!(r["tcp_ceiling"].is_null(), "{dir}: {r}");
        assert!(measured > 0.0, "{dir}: {r}");
        assert!(measured <= 4e6 + 2.0 * one_packet, "{dir}: {r}");
        assert!(
            r["wire_bps"].as_f64().unwrap() <= 4e6 + 2.0 * one_packet,
            "{dir}: {r}"
        );
        let ceiling = r["udp_ceiling"].as_f64().unwrap();
        assert!(
            measured <= ceiling + r["error_bps"].as_f64().unwrap() + 2.0 * one_packet,
            "{dir}: {r}"
        );
    }
}
