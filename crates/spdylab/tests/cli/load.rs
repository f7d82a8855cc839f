//! `spdylab load` in real namespaces: a short load against the built-in server
//! loads every page complete (every resource, every byte) and its per-second
//! records add up to the totals; a server that goes away mid-run leaves errors
//! in the records, and the load goes on to the end. No timing assertions.

use crate::common::{ok, run_json, spdylab, TempDir};
use serde_json::Value;

fn load(args: &[&str], out: &std::path::Path) -> (Value, Vec<Value>) {
    let out_s = out.display().to_string();
    let mut all = vec!["load"];
    all.extend_from_slice(args);
    all.extend(["--out", &out_s, "--json"]);
    let doc = run_json(&all);
    let records = std::fs::read_to_string(out.join("load.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (doc, records)
}

fn sum(records: &[Value], protocol: &str, field: &str) -> u64 {
    records
        .iter()
        .filter(|r| r["protocol"] == protocol)
        .map(|r| r[field].as_u64().unwrap())
        .sum()
}

#[test]
fn pages_arrive_complete_and_seconds_add_up() {
    let tmp = TempDir::new("load-complete");
    let dir = tmp.join("out");
    let (doc, records) = load(
        &[
            "--site",
            "icons",
            "--protocols",
            "http,h2",
            "--users",
            "1:20",
            "--ramp",
            "4s",
            "--hold",
            "2s",
            "--think",
            "500ms",
            "--rtt",
            "20ms",
        ],
        &dir,
    );
    let totals = doc["totals"].as_array().unwrap();
    assert_eq!(totals.len(), 2);
    for t in totals {
        let p = t["protocol"].as_str().unwrap();
        let pages = t["pages"].as_u64().unwrap();
        assert!(pages > 0, "{p}: no page loaded: {t}");
        assert_eq!(t["errors"], 0, "{p}: {t}");
        // Every page: every resource, each with its exact length.
        assert_eq!(t["pages_complete"].as_u64().unwrap(), pages, "{p}: {t}");
        assert_eq!(
            t["requests"].as_u64().unwrap(),
            pages * t["resources_per_page"].as_u64().unwrap(),
            "{p}: {t}"
        );
        assert_eq!(
            t["bytes"].as_u64().unwrap(),
            pages * t["bytes_per_page"].as_u64().unwrap(),
            "{p}: {t}"
        );
        // The per-second records add up to the totals.
        for f in ["pages", "errors", "requests", "bytes"] {
            assert_eq!(sum(&records, p, f), t[f].as_u64().unwrap(), "{p} {f}");
        }
        assert_eq!(
            records.iter().filter(|r| r["protocol"] == p).count() as u64,
            t["seconds"].as_u64().unwrap()
        );
        assert_eq!(t["max_users"], 20, "{p}: {t}");
        assert_eq!(t["distinct_addresses"], true, "{p}: {t}");
    }
    // Each user its own address: the server saw as many clients as users.
    let h2_last = records.iter().rfind(|r| r["protocol"] == "h2").unwrap();
    assert_eq!(h2_last["client_addresses"], 20, "{h2_last}");
    assert_eq!(h2_last["server_connections"], 20, "{h2_last}");
    // A record per second, users rising over the ramp.
    let http: Vec<&Value> = records.iter().filter(|r| r["protocol"] == "http").collect();
    assert!(http.first().unwrap()["users"].as_u64().unwrap() < 20);
    assert_eq!(http.last().unwrap()["users"], 20);
    let summary = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 3, "{summary}");
    // The report of a load directory: users against response time and the rest.
    ok(&spdylab(&["report", &dir.display().to_string()]));
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("Page response time") && html.contains("builtin h2"));
}

#[test]
fn a_server_gone_mid_run_is_counted_not_fatal() {
    let tmp = TempDir::new("load-refused");
    let dir = tmp.join("out");
    let (doc, records) = load(
        &[
            "--site",
            "icons",
            "--protocols",
            "https",
            "--users",
            "4:4",
            "--ramp",
            "0s",
            "--hold",
            "5s",
            "--think",
            "200ms",
            "--stop-server-after",
            "2s",
        ],
        &dir,
    );
    let t = &doc["totals"][0];
    assert!(t["pages"].as_u64().unwrap() > 0, "{t}");
    assert!(t["errors"].as_u64().unwrap() > 0, "{t}");
    let kinds = t["errors_by_kind"].as_object().unwrap();
    assert!(
        kinds.contains_key("refused"),
        "connections to a closed port are refused: {t}"
    );
    // The load went on to its end, recording errors after the server left.
    assert_eq!(records.len() as u64, t["seconds"].as_u64().unwrap());
    assert!(records.len() >= 5, "{records:?}");
    assert!(records.last().unwrap()["errors"].as_u64().unwrap() > 0);
    assert_eq!(
        sum(&records, "https", "errors"),
        t["errors"].as_u64().unwrap()
    );
}

/// More HTTP/1.1 users × 6 connections than one descriptor table may hold
/// (users' and server's sockets together past RLIMIT_NOFILE's hard limit, 20 000
/// here, which root cannot raise in this container): the generator and the
/// built-in server each have a table of their own, so no `Too many open files`.
/// Where the hard limit is high, the same load runs at a smaller size.
#[test]
fn more_sockets_than_one_descriptor_table_holds() {
    // SAFETY: plain system call on a local struct.
    let hard = unsafe {
        let mut r: libc::rlimit = std::mem::zeroed();
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut r), 0);
        r.rlim_max
    };
    // 6 connections per user on each side: 12 descriptors a user.
    let users = match hard / 12 + 100 {
        u if u <= 2_000 => u,
        _ => 300,
    };
    let tmp = TempDir::new("load-fds");
    let to = format!("1:{users}");
    let (doc, records) = load(
        &[
            "--site",
            "icons",
            "--protocols",
            "http",
            "--conns-per-user",
            "6",
            "--users",
            &to,
            "--ramp",
            "5s",
            "--hold",
            "8s",
            "--think",
            "1s",
        ],
        &tmp.join("out"),
    );
    let t = &doc["totals"][0];
    assert!(t["pages"].as_u64().unwrap() > 0, "{t}");
    assert_eq!(t["errors"], 0, "{users} users, hard limit {hard}: {t}");
    assert_eq!(t["max_users"].as_u64().unwrap(), users as u64, "{t}");
    let held = records
        .iter()
        .map(|r| r["client_connections"].as_u64().unwrap())
        .max()
        .unwrap();
    println!("{users} users × 6 connections, hard limit {hard}: up to {held} connections held");
}
