//! `spdylab import` and replay end to end: every real HAR in tests/data
//! imports (figures checked against the file), imported directories and
//! corpora load back, bad input is one line and exit 2 with nothing written,
//! and `compare --site X.har` replays every resource — count and bytes equal
//! to the import's, no replay miss — on every built-in-server protocol; a
//! page's POSTs and PUT go with their recorded method and body, which the
//! server sees, on every protocol, from the model and from Chromium.

use crate::common;

use crate::common::{describe, probes, run_json, spdylab, TempDir};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

fn fixtures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(data())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "har"))
        .collect();
    v.sort();
    assert!(v.len() >= 30, "{v:?}");
    v
}

#[test]
fn every_fixture_imports_and_loads_back() {
    let tmp = TempDir::new("har-import");
    for har in fixtures() {
        let name = har.file_stem().unwrap().to_string_lossy().to_string();
        let out = tmp.join(&name);
        let v = run_json(&[
            "import",
            har.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--json",
        ]);
        let r = &v["sites"][0]["import"];
        let n = |k: &str| r[k].as_u64().unwrap();
        let skipped = r["skipped"].as_array().unwrap().len() as u64;
        // Every entry is a resource, or skipped with a reason.
        assert_eq!(n("entries"), n("resources") + skipped, "{name}: {r}");
        assert_eq!(n("bodies_recorded") + n("bodies_generated"), n("resources"));
        assert_eq!(
            n("parents_initiator")
                + n("parents_discovery")
                + n("parents_document")
                + n("parents_redirect")
                + n("parents_timing")
                + 1,
            n("resources"),
            "{name}: {r}"
        );
        // The directory loads back as the same site, through the one resolver.
        let s = run_json(&["sites", out.to_str().unwrap(), "--json"]);
        let res = s["site"]["resources"].as_array().unwrap();
        assert_eq!(res.len() as u64, n("resources"), "{name}");
        let bytes: u64 = res.iter().map(|r| r["size"].as_u64().unwrap()).sum();
        assert_eq!(bytes, n("bytes"), "{name}");
        let direct = run_json(&["sites", har.to_str().unwrap(), "--json"]);
        assert_eq!(
            direct["site"]["resources"], s["site"]["resources"],
            "{name}"
        );
    }
    // SPDY-era and h2 captures: their httpVersion values were read.
    let v = run_json(&["import", data().to_str().unwrap(), "--json"]);
    let versions = v.to_string();
    for want in ["spdy/3.1", "h2", "HTTP/2.0", "http/1.1"] {
        assert!(
            versions.contains(&format!("[\"{want}\"")),
            "{want} in {versions}"
        );
    }
    // A directory of HARs is a corpus: one site directory each.
    let corpus = tmp.join("corpus");
    run_json(&[
        "import",
        data().to_str().unwrap(),
        "--out",
        corpus.to_str().unwrap(),
        "--json",
    ]);
    for har in fixtures() {
        let stem = har.file_stem().unwrap().to_string_lossy().to_string();
        assert!(corpus.join(stem).join("site.json").is_file());
    }
}

/// A HAR of `entries` (url, mime, body) on one page.
fn small_har(entries: &[(&str, &str, &str)]) -> String {
    let e: Vec<serde_json::Value> = entries
        .iter()
        .map(|(u, m, t)| {
            serde_json::json!({"pageref": "p", "request": {"method": "GET", "url": u},
                "response": {"status": 200, "httpVersion": "http/2.0", "headers": [],
                "content": {"size": t.len(), "mimeType": m, "text": t}}})
        })
        .collect();
    serde_json::json!({"log": {"version": "1.2", "pages": [{"id": "p", "title": "x"}], "entries": e}})
        .to_string()
}

#[test]
fn bad_input_is_one_line_exit_2_and_nothing_written() {
    let tmp = TempDir::new("har-bad");
    let good = std::fs::read(data().join("pagexray-http2-chrome.har")).unwrap();
    let big = PathBuf::from(format!("/tmp/har-test-big-{}.har", std::process::id()));
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated.har",
            good[..good.len() / 2].to_vec(),
            "truncated",
        ),
        (
            "other.har",
            br#"{"name": "not a har", "items": [1, 2]}"#.to_vec(),
            "not a HAR",
        ),
        (
            "empty.har",
            br#"{"log": {"pages": [], "entries": []}}"#.to_vec(),
            "no entries",
        ),
        (
            "dup.har",
            small_har(&[
                ("https://a.test/", "text/html", "<p>"),
                ("https://a.test/x.js", "text/javascript", "one"),
                ("https://a.test/x.js", "text/javascript", "two"),
            ])
            .into_bytes(),
            "appears twice with different bodies",
        ),
    ];
    let mut paths: Vec<(PathBuf, &str)> = Vec::new();
    for (name, bytes, want) in &cases {
        let p = tmp.join(name);
        std::fs::write(&p, bytes).unwrap();
        paths.push((p, want));
    }
    // 200 MB, made here (not committed): refused by its size before it is read.
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(200 << 20).unwrap();
    drop(f);
    paths.push((big.clone(), "200 MB"));
    for (p, want) in &paths {
        let out = tmp.join("out");
        let o = spdylab(&[
            "import",
            p.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(
            err.contains(p.to_str().unwrap()) && err.contains(want),
            "{want}: {err}"
        );
        assert!(!out.exists(), "{} was written", out.display());
        // --site takes the same path, with the same line.
        let o = spdylab(&["sites", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    }
    let _ = std::fs::remove_file(&big);
    // A corpus with one bad HAR writes nothing at all.
    let corpus = tmp.join("corpus-in");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::write(corpus.join("a.har"), &good).unwrap();
    std::fs::write(corpus.join("b.har"), &cases[0].1).unwrap();
    let out = tmp.join("corpus-out");
    let o = spdylab(&[
        "import",
        corpus.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    assert!(!out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(&tmp.0)
        .unwrap()
        .filter_map(|e| e.ok())
        // results::durable's temporaries are `.NAME.PID-N.tmp`.
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.ends_with(".tmp") || name.contains("partial")
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A HAR without pages is a documented choice: its first entry is the page.
    let p = tmp.join("nopages.har");
    let text = small_har(&[("https://a.test/", "text/html", "<p>")])
        .replace(r#""pages":[{"id":"p","title":"x"}],"#, "");
    assert!(!text.contains("pages"));
    std::fs::write(&p, text).unwrap();
    let v = run_json(&["import", p.to_str().unwrap(), "--json"]);
    assert_eq!(v["sites"][0]["import"]["resources"], 1);
}

/// How many of `har`'s entries are HTML documents.
fn html_documents(har: &Path) -> u64 {
    let text = std::fs::read_to_string(har).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).unwrap();
    v["log"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["response"]["content"]["mimeType"]
                .as_str()
                .is_some_and(|m| m.contains("html"))
        })
        .count() as u64
}

/// compare --site X.har: every resource fetched, bytes as imported, no miss.
fn replays_whole(har: &Path, protocols: &str) {
    replays_whole_with(har, protocols, "model")
}

fn replays_whole_with(har: &Path, protocols: &str, client: &str) {
    let v = run_json(&["import", har.to_str().unwrap(), "--json"]);
    let r = &v["sites"][0]["import"];
    let c = run_json(&[
        "compare",
        "--site",
        har.to_str().unwrap(),
        "--protocols",
        protocols,
        "--client",
        client,
        "--rtt",
        "20ms",
        "--rate",
        "50mbit",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]);
    let ps = probes(&c);
    assert_eq!(ps.len(), protocols.split(',').count());
    for p in ps {
        assert!(p["error"].is_null(), "{}: {p}", har.display());
        assert_eq!(p["resources"], r["resources"], "{}: {p}", har.display());
        assert_eq!(p["body_bytes"], r["bytes"], "{}: {p}", har.display());
        assert_eq!(p["misses"], 0, "{}: {p}", har.display());
        // Every origin on its own address: one multiplexed connection each
        // (the model; Chromium's own pooling is crosscheck's business), and
        // a cross-site frame's document one more, in its own network
        // partition: at most one per HTML document but the page's.
        if client == "model"
            && (p["protocol"] == "h2" || p["protocol"] == "spdy3" || p["protocol"] == "h2c")
        {
            let (conns, hosts) = (
                p["connections"].as_u64().unwrap(),
                r["hosts"].as_u64().unwrap(),
            );
            let frames = html_documents(har).saturating_sub(1);
            assert!(
                (hosts..=hosts + frames).contains(&conns),
                "{}: {conns} connections, {hosts} hosts, {frames} frames: {p}",
                har.display()
            );
        }
    }
}

#[test]
fn compare_replays_every_resource_of_a_har() {
    replays_whole(&data().join("pagexray-http2-chrome.har"), "https,h2");
    replays_whole(&data().join("haralyzer-humanssuck.net.har"), "https,h2");
    // Redirect chains (scheme upgrades collapse), and every built-in protocol.
    replays_whole(
        &data().join("pagexray-www.sitespeed.io-redirecting-to-https.har"),
        "http,http-pipelined,spdy3,h2c",
    );
    // An imported page replays on its own hosts: its recorded bodies and
    // redirects name them, so another layout is refused, not half-applied.
    let har = data().join("pagexray-http2-chrome.har");
    common::fails(
        &[
            "compare",
            "--site",
            har.to_str().unwrap(),
            "--layout",
            "mirror",
        ],
        2,
        "replays on its own hosts only",
    );
}

/// Chromium replays HARs of every exporter whole: Chrome (HTTP/1.1, HTTP/2,
/// SPDY era), Firefox, WebPageTest, browsertime (a page behind a redirect:
/// the hop counts as the resource it is) — each resource fetched, the
/// bytes as imported, no miss. (haralyzer's pages are incomplete recordings:
/// their misses are listed in docs/results/replay/.)
#[test]
fn chromium_replays_every_exporters_har_whole() {
    for har in [
        "pagexray-http1.1-chrome.har",
        "pagexray-http2-chrome.har",
        "pagexray-spdy-chrome.har",
        "pagexray-http2-firefox.har",
        "pagexray-spdy-firefox.har",
        "pagexray-en.wikipedia.org.spdy-wpt.har",
        "pagexray-browsertime-recalculate-style.har",
        "pagexray-www.sitespeed.io-redirecting-to-https.har",
    ] {
        replays_whole_with(&data().join(har), "https,h2", "chromium");
    }
}

/// Every built-in-server protocol.
const EVERY_PROTOCOL: &str = "http,https,http-pipelined,https-pipelined,spdy3,h2,h2c,h3";

/// The corpus (tests/data, SOURCES says where each page comes from: 32
/// real pages of news, media, code-hosting and tool sites, 2009-2018, from
/// Chrome, Firefox, WebPageTest, browsertime, Firebug and Fiddler) replays
/// whole with the model on every protocol: each resource fetched, the
/// bytes as imported, no miss. One compare a page, one probe a protocol;
/// the corpus in two halves, two tests that may run side by side (whole,
/// it was the CLI tests' second-longest path, 104 s).
#[test]
fn every_corpus_har_replays_whole_on_every_protocol_first_half() {
    for har in fixtures().iter().step_by(2) {
        replays_whole(har, EVERY_PROTOCOL);
    }
}

#[test]
fn every_corpus_har_replays_whole_on_every_protocol_second_half() {
    for har in fixtures().iter().skip(1).step_by(2) {
        replays_whole(har, EVERY_PROTOCOL);
    }
}

/// Chromium replays the corpus's pages that upload (POSTs kept since the
/// importer keeps them) with no miss: their generated parents send each
/// with its method, where a tag's GET was answered 404 (PerfCascade's
/// github.com captures: 2 misses a protocol), and Chrome's OCSP POSTs
/// recorded before the page are not its document (WebPageTest's
/// filamentgroup capture: the page was never loaded). Chromium's own
/// requests beyond the recording (a manifest, what a recorded script
/// computes) are the page's business: misses only are checked here.
#[test]
fn chromium_replays_the_corpus_uploads_with_no_miss() {
    for har in [
        "perfcascade-chrome_github.com_home.har",
        "perfcascade-github.com.151226_X7_b43d35e592fab70e0ba012fe11a41020.har",
        "perfcascade-github.com.MODIFIED.151226_X7_b43d35e592fab70e0ba012fe11a41020.har",
        "perfcascade-wpt_github.com.151226_X7_b43d35e592fab70e0ba012fe11a41020.har",
        "perfcascade-wpt_h2_www.nghttp2.org.har",
        "perfcascade-wpt_h2_www.filamentgroup.com.har",
    ] {
        let har = data().join(har);
        let c = run_json(&[
            "compare",
            "--site",
            har.to_str().unwrap(),
            "--protocols",
            "https,h2",
            "--client",
            "chromium",
            "--rtt",
            "20ms",
            "--rate",
            "50mbit",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--json",
        ]);
        for p in probes(&c) {
            assert!(p["error"].is_null(), "{}: {p}", har.display());
            assert_eq!(p["misses"], 0, "{}: {p}", har.display());
            assert!(
                p["resources"].as_u64().unwrap() > 1,
                "{}: {p}",
                har.display()
            );
        }
    }
}

/// A small page in the style of a 2016 Firefox HAR (no initiators) whose
/// script POSTs twice — one body recorded as `postData.text`, one only as its
/// `bodySize` — and PUTs a form recorded as `postData.params`.
fn post_page() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/post-page.har")
}

/// post-page.har's uploads: method, path with query, request body bytes.
const UPLOADS: [(&str, &str, usize); 3] = [
    ("POST", "/mob/tracking", 50),
    ("POST", "/lite/rum-track?t=1462000000&v=2", 1200),
    ("PUT", "/api/state", 10),
];

/// The model loads post-page.har over `protocol` from the built-in server on
/// loopback; what the server saw.
fn model_uploads(protocol: proto::Protocol) -> (client::PageResult, Vec<server::Seen>) {
    let bytes = std::fs::read(post_page()).unwrap();
    let (site, _) = site::har::import("post-page", &bytes).unwrap();
    server::install_crypto_provider();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ca = server::Ca::new().unwrap();
    let lo: IpAddr = [127, 0, 0, 1].into();
    let clear = std::net::TcpListener::bind((lo, 0)).unwrap();
    let tls = std::net::TcpListener::bind((lo, 0)).unwrap();
    let (http_port, https_port) = (
        clear.local_addr().unwrap().port(),
        tls.local_addr().unwrap().port(),
    );
    let udp = std::net::UdpSocket::bind((lo, https_port)).unwrap();
    let log = server::RequestLog::default();
    let srv = server::Server::new(site.clone(), server::ServerOptions::default(), &ca, &[lo])
        .unwrap()
        .with_quic(vec![udp])
        .with_request_log(log.clone());
    let _serving = rt.spawn(srv.run(vec![clear], vec![tls], std::future::pending()));
    let root = site.root();
    let cfg = client::PageConfig {
        protocol,
        root: (root.host.clone(), root.path.clone()),
        resolve: site.hosts().iter().map(|h| (h.to_string(), lo)).collect(),
        ca: ca.der(),
        http_port,
        https_port,
        timeout: Duration::from_secs(60),
        tls_sessions: None,
        cache: None,
        tls13_only: None,
        knobs: client::Knobs {
            pool: client::Pool::PerAddress,
            browser_cost: client::BrowserCost::NONE,
            ..client::Knobs::default()
        },
        replay: Some(Arc::new(client::replay::ReplayTree::of(&site))),
    };
    let result = rt.block_on(client::load_page(&cfg));
    drop(rt);
    let seen = log.lock().unwrap().clone();
    (result, seen)
}

/// An imported page's POSTs and PUT are sent as recorded — method, and a
/// body of the recorded size (the recorded text, else that many bytes) — on
/// every protocol: the server sees each with its method and body size and
/// answers it, and compare counts no miss.
#[test]
fn uploads_replay_with_their_method_and_body_on_every_protocol() {
    let har = post_page();
    let v = run_json(&["import", har.to_str().unwrap(), "--json"]);
    let r = &v["sites"][0]["import"];
    assert_eq!(r["resources"], 6, "every upload is a resource: {r}");
    assert_eq!(r["skipped"].as_array().unwrap().len(), 0, "{r}");
    for protocol in proto::Protocol::ALL {
        let (load, seen) = model_uploads(protocol);
        assert!(load.error.is_none(), "{protocol}: {:?}", load.error);
        assert_eq!(load.entries.len(), 6, "{protocol}");
        for (method, path, bytes) in UPLOADS {
            let e = load.entries.iter().find(|e| e.path == path).unwrap();
            assert_eq!(
                (e.method.as_str(), e.request_body_bytes, e.status),
                (method, bytes as u64, 200),
                "{protocol}: {path}"
            );
            let s: Vec<_> = seen.iter().filter(|s| s.path == path).collect();
            assert_eq!(s.len(), 1, "{protocol}: {path}: {seen:?}");
            assert_eq!(
                (s[0].method.as_str(), s[0].body_bytes, s[0].status),
                (method, bytes, 200),
                "{protocol}: the server saw {:?}",
                s[0]
            );
        }
        assert!(seen.iter().all(|s| s.status == 200), "{protocol}: {seen:?}");
        assert_eq!(seen.len(), 6, "{protocol}: {seen:?}");
    }
    // Through compare, on a testbed: every protocol, no miss.
    replays_whole(&har, EVERY_PROTOCOL);
}

/// Chromium replays the page whole too: its script sends the POSTs and the
/// PUT itself (synchronous XHRs, answered before onload), and the server
/// matches each by its method — no miss.
#[test]
fn chromium_replays_a_pages_uploads() {
    replays_whole_with(&post_page(), "http,https,h2,h3", "chromium");
}
