//! `compare --server nginx`: nginx from a generated config, confined in the
//! testbed's server namespace, serves every resource of a site over each
//! protocol it has; the ones it has not are refused before anything runs; and
//! no nginx process outlives the run.

use std::process::Command;

fn spdylab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_spdylab"))
        .args(args)
        .output()
        .unwrap()
}

fn nginx_processes() -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim() == "nginx")
        })
        .count()
}

#[test]
fn nginx_serves_every_resource_over_each_of_its_protocols() {
    let before = nginx_processes();
    let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let out = spdylab(&[
        "compare",
        "--site",
        "youtube",
        "--server",
        "nginx",
        "--protocols",
        "https,h2,http,http-pipelined,https-pipelined",
        "--rtt",
        "20ms",
        "--rate",
        "20mbit",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for p in v["probes"].as_array().unwrap() {
        assert!(p["error"].is_null(), "{p}");
        assert_eq!(
            p["resources"].as_u64().unwrap() as usize,
            site.resources.len(),
            "{p}"
        );
        assert!(
            p["bytes_down"].as_u64().unwrap() as usize > site.total_bytes(),
            "{p}"
        );
        let conns = p["connections"].as_u64().unwrap();
        match p["protocol"].as_str().unwrap() {
            "h2" => assert_eq!(conns, 1, "{p}"),
            _ => assert!(conns <= 6 * site.hosts().len() as u64, "{p}"),
        }
    }
    assert_eq!(nginx_processes(), before, "nginx is gone with the testbed");
    for (protocol, why) in [("spdy3", "SPDY"), ("h2c", "h2c")] {
        let out = spdylab(&[
            "compare",
            "--site",
            "twitter",
            "--server",
            "nginx",
            "--protocols",
            protocol,
        ]);
        assert_eq!(out.status.code(), Some(2), "{protocol}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(why),
            "{protocol}"
        );
    }
}
