//! `spdylab shell` end to end: real namespaces, real TCP, ping, iperf3, tcpdump.
//! Every assertion is a bound that cannot flake (nothing is faster than light
//! or than the link's rate, no queue holds more than its limit) or a count,
//! never a timing.

use crate::common;

use crate::common::{describe as text, spdylab, tcpdump, TempDir};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// (min, avg, max, mdev) from ping's summary line.
fn ping_summary(o: &Output) -> [f64; 4] {
    let out = String::from_utf8_lossy(&o.stdout);
    let line = out
        .lines()
        .find(|l| l.starts_with("rtt min/avg/max/mdev"))
        .unwrap_or_else(|| panic!("no ping summary in {}", text(o)));
    let nums: Vec<f64> = line
        .split('=')
        .nth(1)
        .unwrap()
        .trim()
        .trim_end_matches(" ms")
        .split(" ms")
        .next()
        .unwrap()
        .split('/')
        .map(|x| x.trim().parse().unwrap())
        .collect();
    [nums[0], nums[1], nums[2], nums[3]]
}

#[test]
fn ping_never_beats_the_configured_rtt() {
    let o = spdylab(&[
        "shell", "--rtt", "30ms", "--", "ping", "-c", "5", "-i", "0.2", "-q", "server",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let [min, ..] = ping_summary(&o);
    assert!(min >= 30.0, "min RTT {min} ms below the 30 ms spec");
}

#[test]
fn asymmetric_delays_add_up() {
    let o = spdylab(&[
        "shell",
        "--delay-down",
        "40ms",
        "--delay-up",
        "45ms",
        "--",
        "ping",
        "-c",
        "3",
        "-i",
        "0.2",
        "-q",
        "198.18.1.1",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(ping_summary(&o)[0] >= 85.0, "{}", text(&o));
}

/// A busy fast link moves packets once per quantum (1 ms): an arrival is
/// stamped at most half of it early, and a packet leaves at most half of it
/// before its time. A ping crossing a 100 Mbit/s link that iperf3 keeps busy
/// is never more than 2 × (500 + 500) µs under the configured RTT.
#[test]
fn a_busy_fast_link_is_early_by_at_most_half_a_quantum_each_way() {
    let o = spdylab(&[
        "shell",
        "--rate",
        "100mbit",
        "--rtt",
        "10ms",
        "--server-cmd",
        "iperf3 -s -1 >/dev/null",
        "--",
        "sh",
        "-c",
        "iperf3 -c server -R -b 60M -t 4 >/dev/null & sleep 1; ping -c 40 -i 0.05 -q server; wait",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let [min, ..] = ping_summary(&o);
    assert!(min >= 8.0, "min RTT {min} ms: more than 2 ms under 10 ms");
}
#[test]
fn the_exit_status_of_cmd_is_ours() {
    let o = spdylab(&["shell", "--", "sh", "-c", "exit 7"]);
    assert_eq!(o.status.code(), Some(7), "{}", text(&o));
    let o = spdylab(&["shell", "--", "no-such-program-anywhere"]);
    assert_ne!(o.status.code(), Some(0), "{}", text(&o));
}

#[test]
fn names_resolve_through_the_testbed_hosts_file() {
    let o = spdylab(&[
        "shell", "--shards", "3", "--", "getent", "hosts", "server3", "client", "server",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", text(&o));
    assert!(out.contains("198.18.1.3"), "{out}");
    // The host's own /etc/hosts is untouched.
    let hosts = std::fs::read_to_string("/etc/hosts").unwrap();
    assert!(!hosts.contains("spdylab testbed"), "{hosts}");
}

#[test]
fn bad_values_are_one_line_errors_naming_the_flag() {
    for (args, flag, form) in [
        (vec!["--rate", "1mbt"], "--rate", "1mbit"),
        (vec!["--rtt", "150"], "--rtt", "150ms"),
        (vec!["--loss", "1"], "--loss", "1%"),
        (vec!["--queue", "256"], "--queue", "256p"),
        (
            vec!["--queue", "codel:100ms,5ms"],
            "--queue",
            "codel:5ms,100ms",
        ),
        (vec!["--iw", "0"], "--iw", ""),
        (vec!["--cc", "vegas"], "--cc", "cubic"),
        (
            vec!["--trace-down", "/nonexistent/trace"],
            "--trace-down",
            "",
        ),
        (
            vec!["--rtt", "10ms", "--delay-down", "20ms"],
            "--delay-down",
            "",
        ),
        (vec!["--down", "1mbit", "--trace-down", "x"], "--down", ""),
    ] {
        let mut all = vec!["shell"];
        all.extend(args.iter());
        all.extend(["--", "true"]);
        let o = spdylab(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(flag) && err.contains(form), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn a_bad_trace_file_names_its_line() {
    let tmp = TempDir::new("trace");
    let path = tmp.join("bad.trace");
    std::fs::write(&path, "1\n2\nfast\n").unwrap();
    let o = spdylab(&[
        "shell",
        "--trace-down",
        path.to_str().unwrap(),
        "--",
        "true",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(err.contains("--trace-down") && err.contains(":3:"), "{err}");
}

#[test]
fn iperf3_goodput_stays_under_the_rate_both_ways() {
    let tmp = TempDir::new("iperf");
    for reverse in [false, true] {
        let stats = tmp.arg(format!("stats-{reverse}.json"));
        let mut args = vec![
            "shell",
            "--rate",
            "8mbit",
            "--rtt",
            "20ms",
            "--stats",
            &stats,
            "--server-cmd",
            "iperf3 -s -1 >/dev/null",
            "--",
            "iperf3",
            "-c",
            "server",
            "-t",
            "3",
            "-J",
        ];
        if reverse {
            args.push("-R");
        }
        let o = spdylab(&args);
        assert!(o.status.success(), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let received = &v["end"]["sum_received"];
        let bps = received["bits_per_second"].as_f64().unwrap();
        let secs = received["seconds"].as_f64().unwrap();
        // The link delivers at most its rate over any window, give or take
        // one 1500-byte packet at each edge of iperf3's.
        let bound = 8e6 + 2.0 * 1500.0 * 8.0 / secs;
        assert!(bps <= bound, "received {bps} bit/s over an 8 Mbit/s link");
        // And the link carries it: 3 s of one TCP flow on an idle 20 ms,
        // 8 Mbit/s link get at least half the rate, slow start included.
        assert!(
            bps >= 0.5 * 8e6,
            "received only {bps} bit/s over an 8 Mbit/s link"
        );
        // Every byte iperf3 received crossed the emulated link, in the
        // direction of the data (down with -R, from the server).
        let link: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
        let dir = &link["link"][if reverse { "down" } else { "up" }];
        let bytes = received["bytes"].as_u64().unwrap();
        assert!(bytes > 0, "{received}");
        assert!(
            bytes <= dir["bytes_out"].as_u64().unwrap(),
            "{bytes}: {dir}"
        );
        assert!(dir["bytes_out"].as_u64().unwrap() <= dir["bytes_in"].as_u64().unwrap());
    }
}

/// The server's output goes to stderr (or --server-log), so CMD's stdout stays
/// one machine-readable JSON document.
#[test]
fn server_cmd_output_never_mixes_into_cmd_stdout() {
    let log = std::env::temp_dir().join(format!("spdylab-server-{}.log", std::process::id()));
    let log_arg = log.to_string_lossy().into_owned();
    // The marker, echoed by the shell, is written at once; iperf3's own
    // report is the next test's (the_server_cmd_is_stopped_with_sigterm_…).
    let marked = "echo server-marker; iperf3 -s -1";
    for (server_cmd, to_log) in [
        ("iperf3 -s -1", false),
        ("iperf3 -s -1", false),
        (marked, false),
        (marked, true),
    ] {
        let mut args = vec![
            "shell",
            "--rate",
            "1mbit",
            "--rtt",
            "20ms",
            "--server-cmd",
            server_cmd,
        ];
        if to_log {
            args.extend(["--server-log", log_arg.as_str()]);
        }
        args.extend(["--", "iperf3", "-c", "198.18.1.1", "-t", "2", "-J"]);
        let o = spdylab(&args);
        assert!(o.status.success(), "{}", text(&o));
        let v: Result<serde_json::Value, _> = serde_json::from_slice(&o.stdout);
        assert!(
            v.is_ok_and(|v| v["end"]["sum_received"]["bytes"].is_number()),
            "stdout is not one iperf3 JSON document: {}",
            text(&o)
        );
        if server_cmd == marked {
            let server = if to_log {
                std::fs::read_to_string(&log).unwrap_or_default()
            } else {
                String::from_utf8_lossy(&o.stderr).into_owned()
            };
            assert!(server.contains("server-marker"), "{server}\n{}", text(&o));
        }
    }
    let _ = std::fs::remove_file(&log);
    let o = spdylab(&["shell", "--server-log", &log_arg, "--", "true"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "--server-log needs --server-cmd: {}",
        text(&o)
    );
}

#[test]
fn the_queue_never_holds_more_than_its_limit_and_ping_sees_the_standing_queue() {
    let tmp = TempDir::new("queue");
    let stats = tmp.join("stats.json");
    let o = spdylab(&[
        "shell",
        "--rate",
        "1mbit",
        "--rtt",
        "20ms",
        "--queue",
        "32p",
        "--stats",
        stats.to_str().unwrap(),
        "--server-cmd",
        "iperf3 -s -1 >/dev/null",
        "--",
        "sh",
        "-c",
        "iperf3 -c server -R -t 5 >/dev/null & sleep 1; ping -c 15 -i 0.2 -q server; wait",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let [_, _, max, _] = ping_summary(&o);
    // Behind a standing queue of TCP segments (12 ms each at 1 Mbit/s) the RTT
    // inflates: some ping of the 15 sent while iperf3 runs waits behind it.
    assert!(
        max > 60.0,
        "ping RTTs up to {max} ms show no standing queue"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(v["schema"], 1);
    let down = &v["link"]["down"];
    assert!(down["max_queue_packets"].as_u64().unwrap() <= 32, "{down}");
    assert!(
        down["drops_queue"].as_u64().unwrap() > 0,
        "CUBIC should overflow 32 packets: {down}"
    );
    // The link's own word: a packet waited behind a standing queue.
    assert!(
        down["queueing_delay_max_ns"].as_u64().unwrap() >= 40_000_000,
        "{down}"
    );
    assert!(down["bytes_out"].as_u64().unwrap() <= down["bytes_in"].as_u64().unwrap());
}

/// The down counters of a 400 KB download (iperf3 -R) through `queue`, at 1 Mbit/s.
fn download_through(queue: &str) -> serde_json::Value {
    let stats = std::env::temp_dir().join(format!(
        "spdylab-stats-{}-{}.json",
        std::process::id(),
        queue.replace([':', ','], "-")
    ));
    let o = spdylab(&[
        "shell",
        "--rate",
        "1mbit",
        "--rtt",
        "50ms",
        "--queue",
        queue,
        "--stats",
        stats.to_str().unwrap(),
        "--server-cmd",
        "iperf3 -s -1 >/dev/null",
        "--",
        "iperf3",
        "-c",
        "server",
        "-R",
        "-n",
        "400K",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    std::fs::remove_file(&stats).unwrap();
    v["link"]["down"].clone()
}

#[test]
fn codel_drops_the_standing_queue_a_large_drop_tail_keeps() {
    // 400 KB is under 300 full segments: a 1000-packet queue cannot overflow.
    let tail = download_through("1000p");
    assert_eq!(tail["drops_queue"], 0, "{tail}");
    // Slow start puts tens of segments (12 ms each) ahead of the rest for well
    // over CoDel's 100 ms interval, so CoDel must drop some of them.
    let codel = download_through("codel:5ms,100ms");
    assert!(codel["drops_queue"].as_u64().unwrap() > 0, "{codel}");
    assert!(
        codel["max_queue_packets"].as_u64().unwrap() <= 1000,
        "{codel}"
    );
}

#[test]
fn pcap_is_readable_by_tcpdump() {
    let tmp = TempDir::new("pcap");
    let pcap = tmp.join("ping.pcap");
    let o = spdylab(&[
        "shell",
        "--rtt",
        "10ms",
        "--pcap",
        pcap.to_str().unwrap(),
        "--",
        "ping",
        "-c",
        "2",
        "-i",
        "0.2",
        "server",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = tcpdump(&pcap);
    assert_eq!(out.matches("ICMP echo request").count(), 2, "{out}");
    assert_eq!(out.matches("ICMP echo reply").count(), 2, "{out}");
    assert!(out.contains("198.18.0.2 > 198.18.1.1"), "{out}");
}

#[test]
fn two_shells_side_by_side_each_get_their_own_link() {
    let tmp = TempDir::new("two");
    let start = |rtt: &str| {
        common::command(&[
            "shell",
            "--rtt",
            rtt,
            "--pcap",
            &tmp.arg(format!("{rtt}.pcap")),
            "--",
            "ping",
            "-c",
            "4",
            "-i",
            "0.2",
            "-q",
            "server",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
    };
    let (a, b) = (start("10ms"), start("200ms"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(
        a.status.success() && b.status.success(),
        "{}\n{}",
        text(&a),
        text(&b)
    );
    let (a, b) = (ping_summary(&a), ping_summary(&b));
    assert!(a[0] >= 10.0, "short link saw {a:?}");
    assert!(b[0] >= 200.0, "long link saw {b:?}");
    // Each link carried its own shell's pings and nothing of the other's.
    for rtt in ["10ms", "200ms"] {
        let out = tcpdump(&tmp.join(format!("{rtt}.pcap")));
        assert_eq!(out.matches("ICMP echo request").count(), 4, "{rtt}: {out}");
        assert_eq!(out.matches("ICMP echo reply").count(), 4, "{rtt}: {out}");
    }
}

/// Processes whose argv is exactly `sleep <marker>`.
fn sleepers(marker: &str) -> Vec<u32> {
    let want = format!("sleep\0{marker}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| c == want.as_bytes())
                .unwrap_or(false)
        })
        .collect()
}

/// Every network namespace any process refers to (its own or through an open fd).
fn referenced_namespaces() -> Vec<String> {
    let mut all = Vec::new();
    for pid in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()) {
        let p = pid.path();
        if let Ok(l) = std::fs::read_link(p.join("ns/net")) {
            all.push(l.to_string_lossy().into_owned());
        }
        if let Ok(fds) = std::fs::read_dir(p.join("fd")) {
            for fd in fds.filter_map(|e| e.ok()) {
                if let Ok(l) = std::fs::read_link(fd.path()) {
                    let l = l.to_string_lossy().into_owned();
                    if l.starts_with("net:[") {
                        all.push(l);
                    }
                }
            }
        }
    }
    all
}

fn root_interfaces() -> String {
    let o = Command::new("ip")
        .args(["-o", "link", "show"])
        .output()
        .unwrap();
    let mut names: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.split(": ").nth(1).map(str::to_string))
        .collect();
    names.sort();
    names.join(",")
}

#[test]
fn sigkill_leaves_no_namespace_interface_or_process() {
    let marker = format!("317.{}", std::process::id());
    let before = root_interfaces();
    // A grandchild in the background, and a server: both must die with us.
    let script = format!("sleep {marker} & sleep {marker}");
    let mut child = common::command(&["shell", "--rtt", "10ms", "--server-cmd"])
        .arg(format!("sleep {marker} & exec iperf3 -s >/dev/null"))
        .args(["--", "sh", "-c", &script])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut inside = Vec::new();
    while Instant::now() < deadline {
        inside = sleepers(&marker);
        if inside.len() >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(inside.len() >= 3, "the programs did not start: {inside:?}");
    let namespaces: Vec<String> = inside
        .iter()
        .filter_map(|p| std::fs::read_link(format!("/proc/{p}/ns/net")).ok())
        .map(|l| l.to_string_lossy().into_owned())
        .collect();
    let host_ns = std::fs::read_link("/proc/self/ns/net").unwrap();
    assert!(namespaces.iter().all(|n| *n != host_ns.to_string_lossy()));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = sleepers(&marker);
        let refs = referenced_namespaces();
        let held: Vec<&String> = namespaces.iter().filter(|n| refs.contains(n)).collect();
        if left.is_empty() && held.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "after SIGKILL: processes {left:?} and namespaces {held:?} remain"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        root_interfaces(),
        before,
        "interfaces changed in the root namespace"
    );
}

#[test]
fn sigterm_is_passed_on_to_cmd_which_may_finish_cleanly() {
    let mut child = common::command(&[
        "shell",
        "--",
        "sh",
        "-c",
        "trap 'echo got-term; exit 3' TERM; echo ready; while :; do sleep 0.05; done",
    ])
    .stdout(Stdio::piped())
    .spawn()
    .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 6];
    std::io::Read::read_exact(&mut out, &mut first).unwrap();
    assert_eq!(&first, b"ready\n");
    common::signal(child.id(), libc::SIGTERM);
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert_eq!(status.code(), Some(3), "{rest}");
    assert!(rest.contains("got-term"), "{rest}");
}

/// Issue 33: at the end the server command is stopped, not killed: its PID
/// namespace's init passes SIGTERM to every process in it and waits for them
/// (then kills what is left). iperf3 -s never ends by itself and buffers what
/// it writes to a pipe or a file, so its report reaches us only if it is let
/// exit; under an `sh -c` that cannot exec it (a command follows) it is not
/// the program but a process below it. Its output, read to the end, holds
/// the connection it accepted and its own summary of the test.
#[test]
fn the_server_cmd_is_stopped_with_sigterm_and_its_report_kept() {
    if !common::installed("iperf3") {
        return common::cannot_run("iperf3 is not installed");
    }
    let tmp = TempDir::new("server-report");
    let log = tmp.arg("server.log");
    for (server_cmd, to_log) in [
        ("iperf3 -s", false),
        ("iperf3 -s; echo not-reached", false),
        ("iperf3 -s; echo not-reached", true),
    ] {
        let mut args = vec![
            "shell",
            "--rate",
            "10mbit",
            "--rtt",
            "20ms",
            "--server-cmd",
            server_cmd,
        ];
        if to_log {
            args.extend(["--server-log", log.as_str()]);
        }
        args.extend(["--", "iperf3", "-c", "server", "-t", "1"]);
        let o = spdylab(&args);
        assert!(o.status.success(), "{server_cmd}: {}", text(&o));
        let server = if to_log {
            std::fs::read_to_string(&log).unwrap()
        } else {
            String::from_utf8_lossy(&o.stderr).into_owned()
        };
        assert!(
            server.contains("Accepted connection from 198.18.0.2"),
            "{server_cmd}: the server's output was lost:\n{server}\n{}",
            text(&o)
        );
        // The receiver's summary, as the server saw it (the client's is on stdout).
        assert!(
            server.lines().any(|l| l.trim_end().ends_with("receiver")),
            "{server_cmd}: no summary from the server:\n{server}\n{}",
            text(&o)
        );
        assert!(!server.contains("not-reached"), "{server}");
    }
}
