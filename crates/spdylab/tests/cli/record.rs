//! `spdylab record` end to end with real Chromium: a built-in site served by
//! our own server in a testbed is recorded, imported, and its tree — every
//! resource's URL, parent, size, kind and how the parent reveals it — equals
//! the original site's; the recording replays with no miss. A page on
//! loopback reaches only its own host and port and the hosts allowed: a
//! second host and another loopback port are blocked, counted and named,
//! and get no request. Bad input and an unreachable URL are one line with
//! exit 2 and 1, and nothing is written.

use crate::common::{fails, probes, run_json, serve, spdylab, TempDir};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

/// A site's tree from `spdylab sites X --json`: URL → (parent URL, size, kind, reveal).
fn tree(site: &str) -> BTreeMap<String, (Option<String>, u64, String, String)> {
    let v = run_json(&["sites", site, "--json"]);
    let res = v["site"]["resources"].as_array().unwrap();
    let url = |r: &Value| {
        format!(
            "//{}{}",
            r["host"].as_str().unwrap(),
            r["path"].as_str().unwrap()
        )
    };
    res.iter()
        .map(|r| {
            let parent = r["parent"].as_u64().map(|p| url(&res[p as usize]));
            let s = |k: &str| r[k].as_str().unwrap().to_string();
            (
                url(r),
                (parent, r["size"].as_u64().unwrap(), s("kind"), s("reveal")),
            )
        })
        .collect()
}

/// Records `site` from a testbed, imports it, and checks the tree; the import's figures.
fn record_and_import(tmp: &TempDir, site: &str) -> (Value, Value) {
    let out = tmp.join(site);
    let rec = run_json(&[
        "record",
        "--site",
        site,
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    let har = out.join("page.har");
    assert_eq!(rec["har"].as_str(), Some(har.to_str().unwrap()));
    let s = &rec["summary"];
    let n = |k: &str| s[k].as_u64().unwrap();
    // The HAR as import reads it: entries with bodies, initiators, versions, onload.
    let doc: Value = serde_json::from_slice(&std::fs::read(&har).unwrap()).unwrap();
    let entries = doc["log"]["entries"].as_array().unwrap();
    assert_eq!(entries.len() as u64, n("entries"));
    assert!(
        doc["log"]["pages"][0]["pageTimings"]["onLoad"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    for e in entries {
        assert_eq!(e["response"]["status"], 200, "{}", e["request"]["url"]);
        assert_eq!(e["response"]["httpVersion"], "HTTP/2.0");
        assert!(e["timings"]["wait"].as_f64().unwrap() >= 0.0);
    }
    assert_eq!((n("failed"), n("redirects")), (0, 0), "{s}");
    assert_eq!(
        n("bodies_recorded") + n("bodies_missing"),
        n("entries"),
        "{s}"
    );
    // Every resource but the page names its parent.
    assert_eq!(n("initiators"), n("entries") - 1, "{s}");
    let dir = tmp.join(format!("{site}-imported"));
    let imp = run_json(&[
        "import",
        har.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    let r = imp["sites"][0]["import"].clone();
    assert_eq!(r["resources"], s["entries"], "{r}");
    assert_eq!(r["bodies_recorded"], s["bodies_recorded"], "{r}");
    assert_eq!(r["parents_document"], 0, "{r}");
    assert_eq!(r["skipped"].as_array().unwrap().len(), 0, "{r}");
    // The tree: equal to the original site's, resource by resource.
    let (want, got) = (tree(site), tree(dir.to_str().unwrap()));
    for (url, w) in &want {
        assert_eq!(got.get(url), Some(w), "{site}: {url}");
    }
    assert_eq!(got.len(), want.len(), "{site}");
    (s.clone(), r)
}

#[test]
fn a_recorded_site_imports_as_the_original_tree_and_replays() {
    let tmp = TempDir::new("record");
    // YouTube: parser, CSS and script-injected resources over four hosts.
    let (s, r) = record_and_import(&tmp, "youtube");
    assert_eq!(s["bodies_missing"], 0, "{s}");
    assert!(r["parents_discovery"].as_u64().unwrap() > 0, "{r}");
    // The HTTP Archive page: bytes Chromium keeps no body of (not images, in
    // <img>) are recorded by size and generated on import.
    let (s, _) = record_and_import(&tmp, "http-archive-2014");
    assert!(s["bodies_missing"].as_u64().unwrap() > 0, "{s}");
    // The recording replays: every resource fetched, no miss.
    let har = tmp.join("youtube/page.har");
    let v = run_json(&[
        "compare",
        "--site",
        har.to_str().unwrap(),
        "--protocols",
        "https,h2",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    let bytes: u64 = tree("youtube").values().map(|t| t.1).sum();
    for p in probes(&v) {
        assert_eq!(p["error"], Value::Null, "{p}");
        assert_eq!(p["misses"], 0, "{p}");
        assert_eq!(p["resources"], 50, "{p}");
        assert_eq!(p["body_bytes"].as_u64(), Some(bytes), "{p}");
    }
}

#[test]
fn a_page_of_a_server_on_loopback_is_recorded_from_the_host() {
    let tmp = TempDir::new("record-host");
    let ca = tmp.join("ca.pem");
    let served = serve(&["--site", "icons", "--ca", ca.to_str().unwrap()]);
    let map = format!("icons.spdylab.test=127.0.0.1:{}", served.https_port());
    let har = tmp.join("icons.har");
    let rec = run_json(&[
        "record",
        "https://icons.spdylab.test/",
        "--map",
        &map,
        "--ca",
        ca.to_str().unwrap(),
        "--out",
        har.to_str().unwrap(),
        "--json",
    ]);
    let s = &rec["summary"];
    assert_eq!(s["entries"], 51, "{s}");
    assert_eq!(s["bodies_recorded"], 51, "{s}");
    assert_eq!(s["failed"], 0, "{s}");
    let dir = tmp.join("imported");
    run_json(&[
        "import",
        har.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(tree(dir.to_str().unwrap()), tree("icons"));
}

#[test]
fn bad_input_and_unreachable_pages_are_one_line() {
    let tmp = TempDir::new("record-bad");
    let out = tmp.arg("x");
    fails(
        &["record", "ftp://a.test/", "--out", &out],
        2,
        "http:// or https://",
    );
    fails(&["record"], 2, "URL");
    fails(
        &[
            "record",
            "http://127.0.0.1:1/",
            "--allow-host",
            "*.test",
            "--out",
            &out,
        ],
        2,
        "--allow-host",
    );
    fails(
        &[
            "record",
            "--site",
            "youtube",
            "--allow-host",
            "a.test",
            "--out",
            &out,
        ],
        2,
        "--allow-host go with a URL",
    );
    fails(
        &[
            "record",
            "http://127.0.0.1:1/",
            "--rtt",
            "50ms",
            "--out",
            &out,
        ],
        2,
        "--rtt: link flags need --site",
    );
    fails(
        &[
            "record",
            "--site",
            "youtube",
            "--protocol",
            "spdy3",
            "--out",
            &out,
        ],
        2,
        "Chromium dropped SPDY",
    );
    fails(
        &[
            "record",
            "https://127.0.0.1:1/",
            "--protocol",
            "http",
            "--out",
            &out,
        ],
        2,
        "does not go with the URL's scheme",
    );
    // Nothing listens on a port just freed: the navigation fails, one line, exit 1.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/");
    let err = fails(
        &["record", &url, "--out", &out],
        1,
        "ERR_CONNECTION_REFUSED",
    );
    let lines: Vec<&str> = err.lines().filter(|l| !l.starts_with("record: ")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(!tmp.join("x").exists());
}

/// A bare HTTP/1.1 server on 127.0.0.1 (port from the kernel) answering
/// every request with `body` as `content_type`, one connection a thread,
/// `Connection: close`; the request lines it was sent are kept. Its threads
/// end with the test binary.
struct Bare {
    port: u16,
    asked: Arc<Mutex<Vec<String>>>,
}

fn bare(content_type: &'static str, body: Vec<u8>) -> Bare {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let (log, body) = (log.clone(), body.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&conn);
                let mut first = String::new();
                if reader.read_line(&mut first).unwrap_or(0) == 0 {
                    return; // a preconnect that asked nothing
                }
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 2 {
                    line.clear();
                }
                log.lock().unwrap().push(first.trim_end().to_string());
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let mut w = &conn;
                let _ = w
                    .write_all(head.as_bytes())
                    .and_then(|_| w.write_all(&body));
            });
        }
    });
    Bare { port, asked }
}

#[test]
fn a_page_reaches_only_the_hosts_allowed_and_the_rest_is_blocked_and_named() {
    // Another service on loopback (another port), also the address --map
    // gives a second host name: the page references both.
    let other = bare("text/plain", b"secret".to_vec());
    let o = other.port;
    let page = format!(
        "<!doctype html><html><body><p>page</p>\
         <img src=\"http://127.0.0.1:{o}/other-port.png\">\
         <img src=\"http://second.test/second-host.png\"></body></html>"
    );
    let served = bare("text/html", page.into_bytes());
    let url = format!("http://127.0.0.1:{}/", served.port);
    let map = format!("second.test=127.0.0.1:{o}");
    let tmp = TempDir::new("record-allow");
    let har = tmp.arg("page.har");
    let blocked_urls = [
        format!("http://127.0.0.1:{o}/other-port.png"),
        "http://second.test/second-host.png".to_string(),
    ];

    // Default: the page's own host and port alone.
    let rec = run_json(&["record", &url, "--map", &map, "--out", &har, "--json"]);
    let s = &rec["summary"];
    assert_eq!(s["blocked"], 2, "{s}");
    let hosts: Vec<(String, u64)> = serde_json::from_value(s["blocked_hosts"].clone()).unwrap();
    assert_eq!(
        hosts,
        [
            (format!("127.0.0.1:{o}"), 1),
            ("second.test:80".to_string(), 1)
        ],
        "{s}"
    );
    let named: Vec<String> = serde_json::from_value(s["blocked_urls"].clone()).unwrap();
    assert_eq!(named, blocked_urls, "{s}");
    assert_eq!(
        *other.asked.lock().unwrap(),
        Vec::<String>::new(),
        "reached"
    );
    assert!(served
        .asked
        .lock()
        .unwrap()
        .contains(&"GET / HTTP/1.1".to_string()));
    // The text names them too.
    let out = spdylab(&["record", &url, "--map", &map, "--out", &har]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", crate::common::describe(&out));
    assert!(
        text.contains(&format!(
            "blocked: 2 request(s) to hosts not allowed (--allow-host): 127.0.0.1:{o} x1, second.test:80 x1"
        )),
        "{text}"
    );
    for u in &blocked_urls {
        assert!(text.contains(&format!("    {u}\n")), "{text}");
    }
    assert_eq!(
        *other.asked.lock().unwrap(),
        Vec::<String>::new(),
        "reached"
    );

    // Allowed: both reach the other server, nothing is blocked.
    let allow = format!("127.0.0.1:{o},second.test");
    let rec = run_json(&[
        "record",
        &url,
        "--map",
        &map,
        "--allow-host",
        &allow,
        "--out",
        &har,
        "--json",
    ]);
    let s = &rec["summary"];
    assert_eq!(s["blocked"], 0, "{s}");
    assert_eq!(s["blocked_urls"], serde_json::json!([]), "{s}");
    let mut asked = other.asked.lock().unwrap().clone();
    asked.sort();
    assert_eq!(
        asked,
        [
            "GET /other-port.png HTTP/1.1",
            "GET /second-host.png HTTP/1.1"
        ]
    );
}
