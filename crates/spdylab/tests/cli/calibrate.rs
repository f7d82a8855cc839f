//! `spdylab calibrate --json`: the schema users and scripts rely on, and bounds
//! the physics guarantees. No timed assertion can flake: a figure is bounded
//! below by what the link model makes it at least (the probes take the
//! emulator's exact path: nothing is delivered before its time), or checked
//! against arithmetic, never held under a time.

use crate::common;

use crate::common::{describe, spdylab, TempDir};
use link::packet::{ICMP_ECHO_HEADER, IPV4_HEADER};
use netns::calibrate::ECHO_WIRE_BYTES;

/// ping's default echo on this link: the IP packet of 56 data bytes (the
/// link is layer 3: no Ethernet header, so not 98).
const PING_BYTES: usize = IPV4_HEADER + ICMP_ECHO_HEADER + 56;
/// Float formatting and ping's microsecond clock: not a tolerance for earliness.
const EPSILON_MS: f64 = 0.01;

/// The round trip of a `bytes`-byte IP packet each way over an idle link at
/// `rtt_ms` and `bps` both ways, by hand: the delays plus 8 bits a byte at the rate, twice.
fn formula_ms(rtt_ms: f64, bps: f64, bytes: usize) -> f64 {
    rtt_ms + 2.0 * (bytes * 8) as f64 / bps * 1e3
}

/// What holds of any calibration's RTT: its statistics agree with each other,
/// every sample was timed by the kernel's stamps, and none came back before
/// its expectation.
fn rtt_is_consistent_and_never_early(v: &serde_json::Value) {
    let r = &v["rtt_ms"];
    let f = |k: &str| r[k].as_f64().unwrap_or_else(|| panic!("rtt_ms.{k}: {v}"));
    let (min, mean, max, mdev) = (f("min"), f("measured"), f("max"), f("mdev"));
    assert!(min <= mean && mean <= max, "{r}");
    // The mean absolute deviation is at most half the range.
    assert!(mdev <= (max - min) / 2.0 + 1e-9, "{r}");
    assert!(r["samples"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["kernel_stamped"], r["samples"], "{r}");
    assert!(f("echo_hold") >= 0.0, "{r}");
    assert!(min >= f("expected") - EPSILON_MS, "{r}");
    assert!(f("expected") > f("spec"), "{r}");
}

/// (min, avg) from ping's summary line.
fn ping_min_avg(o: &std::process::Output) -> (f64, f64) {
    let out = String::from_utf8_lossy(&o.stdout);
    let nums: Vec<f64> = out
        .lines()
        .find_map(|l| l.strip_prefix("rtt min/avg/max/mdev = "))
        .unwrap_or_else(|| panic!("no ping summary: {}", describe(o)))
        .trim_end_matches(" ms")
        .split('/')
        .filter_map(|x| x.trim().parse().ok())
        .collect();
    assert_eq!(nums.len(), 4, "{}", describe(o));
    (nums[0], nums[1])
}

/// Lengths of the ICMP packets in a pcap file (LINKTYPE_RAW: each record is an IP packet).
fn icmp_lengths(pcap: &[u8]) -> Vec<usize> {
    let mut at = 24;
    let mut out = Vec::new();
    while at + 16 <= pcap.len() {
        let word = |o: usize| u32::from_le_bytes(pcap[o..o + 4].try_into().unwrap()) as usize;
        let (incl, orig) = (word(at + 8), word(at + 12));
        let packet = &pcap[at + 16..(at + 16 + incl).min(pcap.len())];
        if packet.len() > 9 && packet[9] == link::packet::PROTO_ICMP {
            out.push(orig);
        }
        at += 16 + incl;
    }
    out
}

/// Issue 32: calibrate's expectation against ping, at 64 kbit, 1 and 8
/// Mbit/s. One formula (the delays plus the IP packet's serialization each
/// way) gives calibrate's expectation for its 44-byte probe and ping's for its
/// 84-byte echo; neither tool reads less than its own (the link delivers
/// nothing early on this path), and the link carries ping's echoes as 84
/// bytes. (At 64 kbit ping reads about 171.1 ms at 150 ms: the 98 bytes of an
/// Ethernet frame would make it 174.5, which the link cannot beat.)
#[test]
fn calibrate_and_ping_sit_above_one_formula_at_64kbit_1mbit_and_8mbit() {
    let tmp = TempDir::new("calibrate-ping");
    for (rate, bps) in [("64kbit", 64e3), ("1mbit", 1e6), ("8mbit", 8e6)] {
        let v = common::run_json(&[
            "calibrate",
            "--rtt",
            "40ms",
            "--rate",
            rate,
            "--echo-samples",
            "10",
            "--bulk-time",
            "100ms",
            "--datagrams",
            "10",
            "--json",
        ]);
        let r = &v["rtt_ms"];
        let expected = r["expected"].as_f64().unwrap();
        let want = formula_ms(40.0, bps, ECHO_WIRE_BYTES);
        assert!(
            (expected - want).abs() < 1e-6,
            "{rate}: {expected} != {want}"
        );
        rtt_is_consistent_and_never_early(&v);

        let pcap = tmp.join(format!("{rate}.pcap"));
        let o = spdylab(&[
            "shell",
            "--rtt",
            "40ms",
            "--rate",
            rate,
            "--pcap",
            &pcap.display().to_string(),
            "--",
            "ping",
            "-c",
            "5",
            "-i",
            "0.2",
            "-q",
            "server",
        ]);
        common::ok(&o);
        let (min, avg) = ping_min_avg(&o);
        let ping_expected = formula_ms(40.0, bps, PING_BYTES);
        eprintln!(
            "{rate}: calibrate {:.3} (expected {expected:.3}), ping {avg:.3} (expected {ping_expected:.3})",
            r["measured"].as_f64().unwrap()
        );
        assert!(
            min >= ping_expected - EPSILON_MS,
            "{rate}: ping min {min} under {ping_expected}"
        );
        let lengths = icmp_lengths(&std::fs::read(&pcap).unwrap());
        assert_eq!(lengths.len(), 10, "{rate}: {lengths:?}");
        assert!(
            lengths.iter().all(|&l| l == PING_BYTES),
            "{rate}: {lengths:?}"
        );
    }
}

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
    rtt_is_consistent_and_never_early(&v);
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
/// under the rate by more than its stated error, and under the TCP ceiling within
/// it; and it is at least half the rate.
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
            // And the link is used: a 2 s window after the handshake on an
            // idle 8 Mbit/s link sees at least half of it (a stalled or
            // mis-paced emulator would not).
            assert!(measured >= 0.5 * 8e6, "{dir}: {r}");
            // The link's own edges may let one packet more through each (as
            // above), and on a loaded machine the receiver may read each end
            // of its window a packet's time late (seen in CI: 194 bit/s over
            // the two-packet bound, at 7.79 Mbit/s).
            assert!(
                measured <= ceiling + error + 4.0 * 1500.0 * 8.0 / window,
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
    rtt_is_consistent_and_never_early(&v);
    for dir in ["down_bps", "up_bps"] {
        let r = &v[dir];
        let measured = r["measured"].as_f64().unwrap();
        let window = r["window_s"].as_f64().unwrap();
        let one_packet = 1500.0 * 8.0 / window;
        assert!(r["tcp_ceiling"].is_null(), "{dir}: {r}");
        // Offered above the rate, the paced flow fills at least half of it.
        assert!(measured >= 0.5 * 4e6, "{dir}: {r}");
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
