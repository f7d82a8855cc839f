//! An imported page replayed through each real server (nginx, Apache, h2o,
//! caddy) with the model client over https and h2: every resource fetched,
//! bytes equal to the import's, no miss, and each response (URL with its query
//! string, status, content type, body size) the same as the built-in server's
//! replay of the same HAR — one server per origin, as the built-in one.

use crate::common::{entries, hars, probes, run_json, TempDir};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// cnn: 138 resources on 30 hosts, 50 URLs with query strings, 301 and 302 redirects.
fn cnn() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/haralyzer-cnn.har")
}

/// Per protocol, each response: (URL, status, content type, body size), sorted.
type Responses = BTreeMap<String, Vec<(String, i64, String, i64)>>;

/// compare's probes and its responses.
fn replay(server: &str, tmp: &TempDir) -> (Vec<Value>, Responses) {
    let har_dir = tmp.join(server);
    let har = cnn();
    // Caddy (Go's HTTP/2) advertises 250 streams and cannot be told otherwise.
    let streams = if server == "caddy" { "250" } else { "100" };
    let v = run_json(&[
        "compare",
        "--site",
        har.to_str().unwrap(),
        "--server",
        server,
        "--max-streams",
        streams,
        "--protocols",
        "https,h2",
        "--rtt",
        "20ms",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--har-dir",
        har_dir.to_str().unwrap(),
        "--json",
    ]);
    let mut responses = BTreeMap::new();
    for (name, h) in hars(&har_dir) {
        let protocol = if name.contains("-h2-") { "h2" } else { "https" };
        let mut rs: Vec<(String, i64, String, i64)> = entries(&h)
            .iter()
            .map(|e| {
                let ct = e["response"]["headers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|h| {
                        h["name"]
                            .as_str()
                            .unwrap()
                            .eq_ignore_ascii_case("content-type")
                    })
                    // Apache writes the charset in lower case.
                    .map_or(String::new(), |h| {
                        h["value"].as_str().unwrap().to_lowercase()
                    });
                (
                    e["request"]["url"].as_str().unwrap().to_string(),
                    e["response"]["status"].as_i64().unwrap(),
                    ct,
                    e["response"]["bodySize"].as_i64().unwrap(),
                )
            })
            .collect();
        rs.sort();
        responses.insert(protocol.to_string(), rs);
    }
    (probes(&v).clone(), responses)
}

fn replays_exactly(server: &str) {
    let tmp = TempDir::new(&format!("replay-{server}"));
    let import = run_json(&["import", cnn().to_str().unwrap(), "--json"]);
    let r = &import["sites"][0]["import"];
    let (_, reference) = replay("builtin", &tmp);
    let (ps, got) = replay(server, &tmp);
    assert_eq!(ps.len(), 2);
    for p in &ps {
        assert!(p["error"].is_null(), "{server}: {p}");
        assert_eq!(p["resources"], r["resources"], "{server}: {p}");
        assert_eq!(p["body_bytes"], r["bytes"], "{server}: {p}");
        assert_eq!(p["misses"], 0, "{server}: {p}");
    }
    assert_eq!(reference.len(), 2);
    for (protocol, want) in &reference {
        let have = &got[protocol];
        assert!(want.iter().filter(|(u, ..)| u.contains('?')).count() >= 40);
        assert!(want.iter().any(|(_, s, ..)| *s == 302));
        for (w, h) in want.iter().zip(have) {
            assert_eq!(w, h, "{server} {protocol}");
        }
        assert_eq!(want.len(), have.len(), "{server} {protocol}");
    }
}

#[test]
fn nginx_replays_an_imported_page_exactly() {
    replays_exactly("nginx");
}

#[test]
fn apache_replays_an_imported_page_exactly() {
    replays_exactly("apache");
}

#[test]
fn h2o_replays_an_imported_page_exactly() {
    replays_exactly("h2o");
}

#[test]
fn caddy_replays_an_imported_page_exactly() {
    replays_exactly("caddy");
}
