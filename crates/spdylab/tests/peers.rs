//! `compare --server nginx|apache|h2o|caddy`: each real server, from a
//! generated config confined in the testbed's server namespace, serves every
//! resource of a site over each protocol it has, and its own access log shows
//! that protocol (and TLS version) for every request; the ones it has not, and
//! the knobs it cannot honour, are refused before anything runs; a missing
//! server names its Debian package; and no server process outlives the run.
//!
//! What is byte-checked: the model client reads each body to its length
//! (Content-Length for HTTP/1.1, DATA to END_STREAM for HTTP/2) and records it
//! (`body_bytes`, the HAR's `content.size`), with the status; it does not compare
//! the bytes themselves. So the test checks, from the HARs, that every
//! resource of the site came back 200 with exactly the length of the file the
//! server was given; that the HTML, CSS and scripts were the ones written is
//! shown by the page being discovered completely (resources == the site's).
//! `crates/peers/tests/servers.rs` compares bodies byte for byte with curl.

#[allow(dead_code)]
#[path = "cli/common.rs"]
mod common;

use common::{assert_loaded_whole, entries, fails, hars, ok, probes, run_json, spdylab, TempDir};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// One test at a time: each counts the servers' processes, which another's would disturb.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// How many processes named `comm` descend from this test process. The test
/// process is made a child subreaper first, so a server that outlived its
/// spdylab is still counted (orphans come to us, not to init). Only our own
/// descendants count: other test binaries run beside this one (scripts/test.py)
/// and start the same servers in their own testbeds, and the host may run
/// Debian's own apache2 or nginx service.
fn processes(comm: &str) -> usize {
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    let mut parent: HashMap<u32, u32> = HashMap::new();
    let mut named = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
            continue;
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(|v| v.trim().to_string())
        };
        if let Some(ppid) = field("PPid:").and_then(|v| v.parse().ok()) {
            parent.insert(pid, ppid);
        }
        if field("Name:").as_deref() == Some(comm) {
            named.push(pid);
        }
    }
    let me = std::process::id();
    let descends = |mut pid: u32| {
        for _ in 0..parent.len() {
            match parent.get(&pid) {
                Some(&ppid) if ppid == me => return true,
                Some(&ppid) if ppid > 1 => pid = ppid,
                _ => return false,
            }
        }
        false
    };
    named.into_iter().filter(|&pid| descends(pid)).count()
}

/// The key the access log counts a protocol's requests under.
fn served_as(protocol: &str) -> &'static str {
    match protocol {
        "http" | "http-pipelined" => "HTTP/1.1 cleartext",
        "https" | "https-pipelined" => "HTTP/1.1 TLSv1.3",
        "h2" => "HTTP/2 TLSv1.3",
        "h2c" => "HTTP/2 cleartext",
        other => panic!("{other}"),
    }
}

/// Every request of every HAR in `dir` got 200 and exactly its file's length.
fn check_hars(dir: &Path, site: &site::Site, server: &str) -> usize {
    let want: HashMap<String, usize> = (0..site.resources.len())
        .map(|i| {
            let r = &site.resources[i];
            (format!("{}{}", r.host, r.path), site.body(i).len())
        })
        .collect();
    let mut files = 0;
    for (name, har) in hars(dir) {
        assert_eq!(entries(&har).len(), site.resources.len(), "{server} {name}");
        for e in entries(&har) {
            let url = e["request"]["url"].as_str().unwrap();
            let key = url.split_once("://").unwrap().1;
            assert_eq!(e["response"]["status"], 200, "{server} {url}");
            assert_eq!(
                e["response"]["content"]["size"].as_u64(),
                want.get(key).map(|n| *n as u64),
                "{server} {url}: the file's length"
            );
        }
        files += 1;
    }
    files
}

#[test]
fn each_real_server_serves_every_resource_over_each_of_its_protocols() {
    let _serial = serial();
    let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let all = "https,h2,http,h2c,http-pipelined,https-pipelined";
    for (server, comm, protocols) in [
        (
            "nginx",
            "nginx",
            "https,h2,http,http-pipelined,https-pipelined",
        ),
        ("apache", "apache2", all),
        ("h2o", "h2o", all),
        ("caddy", "caddy", all),
    ] {
        assert_eq!(processes(comm), 0, "{server}: none of ours before the run");
        let scratch = TempDir::new(&format!("peers-{server}"));
        let (har, log) = (scratch.join("har"), scratch.join("log"));
        let v = run_json(&testkit::cli::one_quick_rep(
            &[
                "compare",
                "--site",
                "youtube",
                "--server",
                server,
                "--protocols",
                protocols,
            ],
            &[
                "--json",
                "--har-dir",
                har.to_str().unwrap(),
                "--keep-server-log",
                log.to_str().unwrap(),
                "--pool",
                "per-address",
            ],
        ));
        let mut expected: BTreeMap<String, u64> = BTreeMap::new();
        for p in probes(&v) {
            assert_loaded_whole(p, &site);
            let protocol = p["protocol"].as_str().unwrap();
            let conns = p["connections"].as_u64().unwrap();
            match protocol {
                "h2" | "h2c" => assert_eq!(conns, 1, "{server}: {p}"),
                _ => assert!(conns <= 6 * site.hosts().len() as u64, "{server}: {p}"),
            }
            *expected.entry(served_as(protocol).into()).or_insert(0) += site.resources.len() as u64;
        }
        assert_eq!(
            check_hars(&har, &site, server),
            protocols.split(',').count(),
            "{server}: one HAR per probe"
        );
        // The server's own word on the protocol of each request.
        let kind: peers::PeerKind = server.parse().unwrap();
        let access = std::fs::read_to_string(log.join("access.log")).unwrap();
        assert_eq!(
            peers::served(kind, &access),
            expected,
            "{server}'s access log"
        );
        assert_eq!(processes(comm), 0, "{server} is gone with the testbed");
    }
}

#[test]
fn what_a_server_cannot_do_exactly_is_refused_up_front() {
    let _serial = serial();
    for (server, args, why) in [
        ("nginx", &["--protocols", "spdy3"][..], "SPDY"),
        ("nginx", &["--protocols", "h2c"], "h2c"),
        ("apache", &["--protocols", "spdy3"], "SPDY"),
        ("caddy", &["--protocols", "spdy3"], "SPDY"),
        (
            "h2o",
            &["--protocols", "https,h2", "--max-streams", "6"],
            "h2o advertises 100 concurrent streams and cannot change it: --max-streams 6 needs --server builtin, nginx or apache",
        ),
        ("caddy", &["--protocols", "h2c", "--max-streams", "6"], "caddy advertises 250"),
        ("h2o", &["--protocols", "https", "--tls", "1.2"], "TLS 1.2"),
        ("apache", &["--protocols", "http", "--server-delay", "10ms"], "think time"),
    ] {
        let mut a = vec!["compare", "--site", "twitter", "--server", server];
        a.extend_from_slice(args);
        fails(&a, 2, why);
    }
    // What it can do is not refused: HTTP/1.1 has no streams to limit.
    ok(&spdylab(&[
        "compare",
        "--site",
        "twitter",
        "--server",
        "h2o",
        "--protocols",
        "https",
        "--max-streams",
        "6",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--rtt",
        "20ms",
        "--rate",
        "20mbit",
    ]));
}

#[test]
fn a_missing_server_names_its_debian_package() {
    let _serial = serial();
    for (server, package) in [("h2o", "h2o"), ("caddy", "caddy")] {
        let out = common::command(&[
            "compare",
            "--site",
            "twitter",
            "--server",
            server,
            "--protocols",
            "https",
        ])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{server}: {stderr}");
        assert!(
            stderr.contains(&format!("apt-get install {package}")),
            "{server}: {stderr}"
        );
    }
}

#[test]
fn peers_prints_the_capability_table() {
    let v = run_json(&["peers", "--json"]);
    let servers = v["servers"].as_array().unwrap();
    let names: Vec<&str> = servers
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["builtin", "nginx", "apache", "h2o", "caddy"]);
    for s in servers {
        assert_eq!(s["installed"], true, "{s}");
        assert_eq!(s["capabilities"]["https"], "yes", "{s}");
    }
    assert_eq!(servers[3]["fixed_max_streams"], 100);
    assert_eq!(servers[4]["fixed_max_streams"], 250);
    // caddy's h3 is quic-go's: 100 streams, not Go net/http's 250 for h2.
    assert_eq!(servers[4]["capabilities"]["--max-streams h3"], "100 only");
    assert_eq!(servers[1]["capabilities"]["--max-streams h3"], "no");
    assert_eq!(servers[1]["capabilities"]["h2c"], "no");
    let text = spdylab(&["peers"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("Why not:"));
}
