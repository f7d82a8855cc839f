//! The text of `spdylab calibrate`: the table of spec against measured (RTT,
//! goodput each way, loss) with the details beside each row, the one JSON
//! object of `--json`, and the command's long help, whose RTT paragraph takes
//! its figures from where calibrate keeps them.

use crate::calibrate::{Calibration, Plan, RateResult, ECHO_WIRE_BYTES, RTT_TOLERANCE};
use crate::trial::TestbedSpec;
use serde_json::{json, Value};

/// The command's long help (`after_help`): examples, then how each figure is
/// measured.
pub fn after_help() -> String {
    let rtt = format!(
        "RTT comes from UDP echoes on an idle link, timed as ping times its echoes:
from just before the send to the kernel's receive stamp, less the time the
echo server held the probe (expected = spec + the {}-byte IP packet's
serialization both ways: the link charges IP bytes, no Ethernet framing).
A warning on stderr (and in the JSON's warnings) says when the probes came
back more than {} ms over that on average, or spread more than that: the
machine was too busy to hold the spec.",
        ECHO_WIRE_BYTES,
        RTT_TOLERANCE.as_secs_f64() * 1e3
    );
    format!(
        "Examples:
  spdylab calibrate --rtt 150ms --rate 1mbit
  spdylab calibrate --rtt 490ms --down 8mbit --up 1mbit --loss 1% --json
  spdylab calibrate --rtt 150ms --rate 8mbit --transport udp

{rtt}

Goodput from one TCP bulk transfer each way, measured after a warm-up of
10 RTTs + 1 s, as the payload the sender's TCP knows reached the receiver
(acknowledged or SACKed), ± the segments that can sit on the window's edges
(TCP with timestamps carries at most 1448/1500 of the rate); loss from paced
UDP datagrams each way, set against the binomial 99 % interval. With --transport udp (the path QUIC and h3 take), goodput comes
from a paced UDP flow each way instead: 1500-byte datagrams offered at 110 % of
the direction's rate (100 Mbit/s unshaped) after a warm-up of 1 RTT + 250 ms,
counted as they arrive, ± one datagram at each edge of the window (1472/1500 of
the rate at most)."
    )
}

/// The one JSON object of `spdylab calibrate --json`.
pub fn json(spec: &TestbedSpec, plan: &Plan, result: &Calibration) -> Value {
    json!({
        "schema": 1,
        "link": spec.to_string(),
        "testbed": spec,
        "plan": plan,
        "rtt_ms": result.rtt_ms,
        "down_bps": result.down_bps,
        "up_bps": result.up_bps,
        "loss": result.loss,
        "warnings": result.warnings,
    })
}

/// The table, in lines: the link, a head line, then rtt, down, up and loss.
pub fn table(link: &str, c: &Calibration) -> String {
    let r = &c.rtt_ms;
    let l = &c.loss;
    [
        format!("link: {link}"),
        format!(
            "{:<10} {:>16} {:>16} {:>9}",
            "", "spec", "measured", "ratio"
        ),
        format!(
            "{:<10} {:>13.3} ms {:>13.3} ms {:>9}   expected {:.3} ms (with probe serialization); min {:.3} max {:.3} mdev {:.3} ms, n={}{}; as the threads saw it {:.3} ms",
            "rtt",
            r.spec,
            r.measured,
            if r.spec > 0.0 { format!("{:.2}%", r.measured / r.spec * 100.0) } else { "-".into() },
            r.expected,
            r.min,
            r.max,
            r.mdev,
            r.samples,
            if r.lost > 0 { format!(", {} lost", r.lost) } else { String::new() },
            r.app_measured
        ),
        rate_row("down", &c.down_bps),
        rate_row("up", &c.up_bps),
        format!(
            "{:<10} {:>15.3}% {:>15.3}% {:>9}   up {:.3}% down {:.3}%, {} datagrams each way; 99% interval [{:.3}%, {:.3}%]: {}",
            "loss",
            l.spec * 100.0,
            l.measured * 100.0,
            "",
            l.up * 100.0,
            l.down * 100.0,
            l.sent_each_way,
            l.ci99[0] * 100.0,
            l.ci99[1] * 100.0,
            if l.inside_ci99 { "inside" } else { "OUTSIDE" }
        ),
    ]
    .join("\n")
}

/// One direction's goodput row: spec, measured, their ratio and the details
/// (or "unlimited" without a spec).
pub fn rate_row(name: &str, r: &RateResult) -> String {
    let mbit = |b: f64| format!("{:.4} Mbit/s", b / 1e6);
    let (ceiling, kind) = match (r.tcp_ceiling, r.udp_ceiling) {
        (Some(c), _) => (Some(c), "TCP"),
        (None, c) => (c, "UDP"),
    };
    match (r.spec, r.ratio, ceiling) {
        (Some(spec), Some(ratio), Some(ceiling)) => format!(
            "{name:<10} {:>16} {:>16} {:>8.2}%   ± {:.2}%; {kind} ceiling {:.2}%; on the wire {:.2}%; emulator {:.1}% of a core",
            mbit(spec),
            mbit(r.measured),
            ratio * 100.0,
            r.error_bps / spec * 100.0,
            ceiling / spec * 100.0,
            r.wire_bps / spec * 100.0,
            r.emulator_cpu_pct
        ),
        _ => format!(
            "{name:<10} {:>16} {:>16} {:>9}   ± {}; on the wire {}; emulator {:.1}% of a core",
            "unlimited",
            mbit(r.measured),
            "",
            mbit(r.error_bps),
            mbit(r.wire_bps),
            r.emulator_cpu_pct
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::{LossResult, RttResult};

    fn rate(spec: Option<f64>, tcp_ceiling: Option<f64>) -> RateResult {
        RateResult {
            spec,
            measured: 950_000.0,
            error_bps: 10_000.0,
            ratio: spec.map(|s| 950_000.0 / s),
            tcp_ceiling,
            udp_ceiling: None,
            wire_bps: 990_000.0,
            window_s: 10.0,
            warmup_s: 2.0,
            emulator_cpu_pct: 1.5,
        }
    }

    fn calibration() -> Calibration {
        Calibration {
            rtt_ms: RttResult {
                spec: 150.0,
                expected: 150.5,
                measured: 151.0,
                min: 150.6,
                max: 152.0,
                mdev: 0.25,
                samples: 50,
                lost: 1,
                echo_hold: 0.01,
                app_measured: 151.2,
                kernel_stamped: 50,
            },
            down_bps: rate(Some(1e6), Some(965_000.0)),
            up_bps: rate(None, None),
            loss: LossResult {
                spec: 0.01,
                measured: 0.0105,
                up: 0.01,
                down: 0.011,
                sent_each_way: 10_000,
                ci99: [0.0075, 0.0127],
                inside_ci99: true,
            },
            warnings: Vec::new(),
        }
    }

    #[test]
    fn the_table_sets_spec_against_measured() {
        assert_eq!(
            table("rtt 150ms", &calibration()).lines().collect::<Vec<_>>(),
            [
                "link: rtt 150ms",
                "                       spec         measured     ratio",
                "rtt              150.000 ms       151.000 ms   100.67%   expected 150.500 ms (with probe serialization); min 150.600 max 152.000 mdev 0.250 ms, n=50, 1 lost; as the threads saw it 151.200 ms",
                "down          1.0000 Mbit/s    0.9500 Mbit/s    95.00%   ± 1.00%; TCP ceiling 96.50%; on the wire 99.00%; emulator 1.5% of a core",
                "up                unlimited    0.9500 Mbit/s             ± 0.0100 Mbit/s; on the wire 0.9900 Mbit/s; emulator 1.5% of a core",
                "loss                 1.000%           1.050%             up 1.000% down 1.100%, 10000 datagrams each way; 99% interval [0.750%, 1.270%]: inside",
            ]
        );
    }

    #[test]
    fn the_help_gives_the_probes_size_and_the_tolerance() {
        let help = after_help();
        assert!(help.starts_with("Examples:\n  spdylab calibrate --rtt 150ms --rate 1mbit\n"));
        assert!(help.contains(&format!("spec + the {ECHO_WIRE_BYTES}-byte IP packet's")));
        let spec = crate::link_flags::LinkFlags::default()
            .testbed_spec(1)
            .unwrap();
        let v = json(&spec, &Plan::default(), &calibration());
        assert_eq!(v["rtt_ms"]["samples"], 50);
        assert_eq!(v["link"], spec.to_string());
    }
}
