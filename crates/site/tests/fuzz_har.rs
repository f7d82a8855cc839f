//! Property tests with arbitrary inputs for HAR import (issue 36's fuzzing of
//! the parsers added since issue 19): arbitrary bytes and JSON, valid HARs
//! mutated (cut short, bytes flipped, any field of the file or of one entry
//! given a value of the wrong type, a huge or negative number, bad base64, a
//! lone surrogate, a deep initiator stack) and HARs written from arbitrary
//! parts (redirect loops, duplicate URLs, bodies that reference each other)
//! never panic and finish. An error is one line that says where: a position
//! in the file, the entry's URL, or what is wrong with the whole file. A HAR
//! that imports makes a site whose invariants hold: every entry kept or
//! listed as skipped, the first resource the page and every other under an
//! earlier one (so every resource is reachable from the page), recorded
//! bodies as long as their resource, the report's counts those of the site,
//! sizes within `MAX_RESOURCE_BYTES`, and `site.json` reading back the same.
//! docs/hardening.md lists them.

use proptest::prelude::*;
use serde_json::{json, Value};
use site::har::{import, load, store, ImportReport, MAX_RESOURCE_BYTES, MAX_WAIT_MS};
use site::Site;
use std::collections::{HashMap, HashSet};
use std::sync::mpsc;
use std::time::Duration;

/// A HAR as Chromium's DevTools writes one: a redirect to the page, the page
/// referencing its stylesheet and script, a base64 image, a POST, an entry
/// with a deep async initiator stack, an entry of another page, a data: URL.
fn good() -> Value {
    let entry = |url: &str, status: u16, mime: &str, content: Value| {
        json!({
            "pageref": "page_1",
            "startedDateTime": "2026-11-26T18:00:00.000Z",
            "time": 50.5,
            "request": {"method": "GET", "url": url, "httpVersion": "h2",
                        "headers": [], "queryString": [], "cookies": [],
                        "headersSize": -1, "bodySize": 0},
            "response": {"status": status, "statusText": "", "httpVersion": "h2",
                         "headers": [{"name": "Content-Type", "value": mime}],
                         "cookies": [], "content": content, "redirectURL": "",
                         "headersSize": -1, "bodySize": -1},
            "cache": {},
            "timings": {"blocked": -1, "dns": 1, "connect": 2, "ssl": 1,
                        "send": 0.5, "wait": 20.25, "receive": 3},
        })
    };
    let html = r#"<html><head><link rel="stylesheet" href="/a.css?v=1"><script src="https://cdn.test/app.js"></script></head><body><img src="//img.test/logo.png"></body></html>"#;
    let mut redirect = entry("http://shop.test/", 301, "text/html", json!({"size": 0}));
    redirect["response"]["redirectURL"] = "https://www.shop.test/".into();
    redirect["response"]["headers"] =
        json!([{"name": "Location", "value": "https://www.shop.test/"}]);
    let mut post = entry(
        "https://www.shop.test/api/track?x=1",
        200,
        "application/json",
        json!({"size": 2, "mimeType": "application/json", "text": "{}"}),
    );
    post["request"]["method"] = "POST".into();
    post["request"]["postData"] =
        json!({"mimeType": "text/plain", "text": "aGVsbG8=", "encoding": "base64"});
    post["request"]["bodySize"] = 5.into();
    let mut deep = entry(
        "https://img.test/late.png",
        200,
        "image/png",
        json!({"size": 300, "mimeType": "image/png"}),
    );
    deep["_initiator"] = json!({"type": "script", "stack": {"callFrames": [],
        "parent": {"callFrames": [{"url": ""}], "parent": {"callFrames": [{"url": "https://cdn.test/app.js"}]}}}});
    let mut other = entry(
        "https://www.shop.test/next",
        200,
        "text/html",
        json!({"size": 10}),
    );
    other["pageref"] = "page_2".into();
    json!({"log": {
        "version": "1.2",
        "creator": {"name": "WebInspector", "version": "537.36"},
        "pages": [{"startedDateTime": "2026-11-26T18:00:00.000Z", "id": "page_1",
                   "title": "Shop", "pageTimings": {"onContentLoad": 300, "onLoad": 500}},
                  {"startedDateTime": "2026-11-26T18:00:01.000Z", "id": "page_2",
                   "title": "Next", "pageTimings": {}}],
        "entries": [
            redirect,
            entry("https://www.shop.test/", 200, "text/html; charset=utf-8",
                  json!({"size": html.len(), "mimeType": "text/html", "text": html})),
            entry("https://www.shop.test/a.css?v=1", 200, "text/css",
                  json!({"size": 30, "mimeType": "text/css", "text": "body{background:url(/bg.png)}"})),
            entry("https://cdn.test/app.js", 200, "application/javascript",
                  json!({"size": 5000, "mimeType": "application/javascript"})),
            entry("https://www.shop.test/bg.png", 200, "image/png",
                  json!({"size": 68, "mimeType": "image/png",
                         "text": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII=",
                         "encoding": "base64"})),
            entry("https://img.test/logo.png", 304, "image/png", json!({"size": 0})),
            post,
            deep,
            other,
            entry("data:image/png;base64,AAAA", 200, "image/png", json!({"size": 3})),
        ]
    }})
}

/// Imports `bytes` on a thread of its own and waits for it: a case that does
/// not finish within a minute (inputs are a few kilobytes: a loop) fails.
fn run(bytes: Vec<u8>) -> Result<(Site, ImportReport), String> {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let _ = tx.send(import("fuzz", &bytes).map_err(|e| e.0));
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(r) => r,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the import did not finish in 60 s"),
        // The import panicked: join to re-raise its panic.
        Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
            Err(p) => std::panic::resume_unwind(p),
            Ok(()) => unreachable!(),
        },
    }
}

/// Imports `bytes`; checks what an error says and, when it imports, the site.
fn check(bytes: &[u8]) -> Result<(Site, ImportReport), String> {
    let r = run(bytes.to_vec());
    match &r {
        Err(e) => check_error(e),
        Ok((site, report)) => check_site(bytes, site, report),
    }
    r
}

/// One line that says where: a position in the file, the URL of the entry,
/// or what is wrong with the file as a whole.
fn check_error(e: &str) {
    assert!(!e.is_empty() && !e.contains('\n'), "not one line: {e:?}");
    let whole_file = [
        "not a HAR: no log.entries",
        "the HAR has no entries",
        "no entry of the HAR can be replayed",
    ];
    let positioned = e.contains("line ") && e.contains("column ");
    let names_entry = e.starts_with("the URL ") || e.starts_with("entry ");
    assert!(
        positioned || names_entry || whole_file.iter().any(|w| e.starts_with(w)),
        "the error does not say where: {e}"
    );
}

fn check_site(bytes: &[u8], site: &Site, report: &ImportReport) {
    let n = site.resources.len();
    assert!(n >= 1);
    assert_eq!(report.resources, n);
    // Every entry of the HAR is kept or said to be skipped.
    let v: Value = serde_json::from_slice(
        bytes
            .strip_prefix(b"\xef\xbb\xbf".as_slice())
            .unwrap_or(bytes),
    )
    .unwrap();
    let entries = v["log"]["entries"].as_array().unwrap().len();
    assert_eq!(report.entries, entries);
    assert_eq!(n + report.skipped.len(), entries, "{:?}", report.skipped);
    // The page first; every other resource under an earlier one, so every
    // resource is reachable from the page.
    assert_eq!(site.resources[0].parent, None);
    for (i, r) in site.resources.iter().enumerate().skip(1) {
        assert!(r.parent.is_some_and(|p| p < i), "{i}: {:?}", r.parent);
    }
    assert_eq!(
        report.parents_initiator
            + report.parents_discovery
            + report.parents_document
            + report.parents_redirect
            + report.parents_timing,
        n - 1
    );
    // Sizes: bounded, the report's total theirs, recorded bodies as long.
    for (i, r) in site.resources.iter().enumerate() {
        let rec = site.recorded(i).unwrap();
        if rec.body.is_none() {
            // Enlarged at most to hold its children's references.
            assert!(
                r.size as u64 <= MAX_RESOURCE_BYTES + (1 << 20),
                "{i}: {}",
                r.size
            );
        }
        assert!(rec.request_body_size as u64 <= MAX_RESOURCE_BYTES, "{i}");
        // Replay waits the think time (server_delay = from-har).
        assert!(
            (0.0..=MAX_WAIT_MS).contains(&rec.wait_ms),
            "{i}: {}",
            rec.wait_ms
        );
        let _ = Duration::from_secs_f64(rec.wait_ms / 1e3);
        if let Some(b) = &rec.body {
            assert_eq!(b.len(), r.size, "{i}");
        }
        if let Some(t) = rec.redirect_to {
            assert!(t > i && t < n, "{i} redirects to {t}");
        }
        // A generated body is as long as its resource and holds its
        // children's references (only small ones are made, to stay fast).
        if rec.body.is_none() && r.size <= 1 << 20 {
            let body = site.body(i);
            assert_eq!(body.len(), r.size, "{i}");
        }
    }
    let total: u128 = site.resources.iter().map(|r| r.size as u128).sum();
    assert_eq!(report.bytes as u128, total);
    assert_eq!(report.bodies_recorded + report.bodies_generated, n);
    let hosts: HashSet<&str> = site.resources.iter().map(|r| r.host.as_str()).collect();
    assert_eq!(report.hosts, hosts.len());
    // site.json reads back the same site.
    let (json, files) = store(site, report);
    let files: HashMap<String, Vec<u8>> = files.into_iter().collect();
    let (back, report2) = load(&json, |f| Ok(files[f].clone())).unwrap();
    assert_eq!(back.resources, site.resources);
    assert_eq!(&report2, report);
    for i in 0..n {
        assert_eq!(back.recorded(i), site.recorded(i));
    }
}

/// Any JSON value, nested a few levels.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            proptest::collection::vec(
                (
                    "(log|entries|pages|request|response|url|method|status|content|text|size|[a-z]{1,6})",
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A value a field could be given, right or wrong.
fn nasty() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!([])),
        Just(json!({})),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop_oneof![
            Just(1e300),
            Just(-1e300),
            Just(1.8e19),
            Just(-1.0),
            Just(0.5),
            Just(9e15)
        ]
        .prop_map(Value::from),
        "-?[0-9]{1,25}(\\.[0-9]{1,3})?".prop_map(Value::from),
        "(https?|HTTP|ftp|data|ws|wss|blob)://[a-z0-9.@\\[\\]:-]{0,16}(/[a-z0-9./?&=#%;, \"-]{0,16})?"
            .prop_map(Value::from),
        "(/|//|\\?|\\.\\./|#)[a-z0-9./?&=]{0,12}".prop_map(Value::from),
        "(GET|POST|HEAD|OPTIONS|PUT|get|P T|DELETE|CONNECT|)".prop_map(Value::from),
        "(base64|utf8|BASE64|)".prop_map(Value::from),
        "[A-Za-z0-9+/= \n_-]{0,24}".prop_map(Value::from),
        "(text/html|text/css|application/javascript|image/png|image/svg\\+xml|font/woff2|application/x-shockwave-flash|)"
            .prop_map(Value::from),
        "\\PC{0,40}".prop_map(Value::from),
        // Lone surrogates and other escapes a HAR may hold.
        Just(Value::from("\u{0}\u{fffd}\u{10ffff}é")),
        any_json(),
    ]
}

/// Fields of an entry (JSON pointers below the entry).
const ENTRY_FIELDS: &[&str] = &[
    "",
    "/pageref",
    "/request",
    "/request/method",
    "/request/url",
    "/request/postData",
    "/request/postData/text",
    "/request/postData/encoding",
    "/request/postData/params",
    "/request/bodySize",
    "/response",
    "/response/status",
    "/response/httpVersion",
    "/response/headers",
    "/response/headers/0",
    "/response/headers/0/name",
    "/response/headers/0/value",
    "/response/content",
    "/response/content/size",
    "/response/content/text",
    "/response/content/encoding",
    "/response/content/mimeType",
    "/response/redirectURL",
    "/response/_error",
    "/response/bodySize",
    "/timings",
    "/timings/wait",
    "/_initiator",
    "/_initiator_detail",
    "/_resourceType",
];

/// Fields of the file.
const FILE_FIELDS: &[&str] = &[
    "",
    "/log",
    "/log/pages",
    "/log/pages/0",
    "/log/pages/0/id",
    "/log/pages/0/title",
    "/log/entries",
];

/// Sets (Some) or removes (None) the field at `pointer` in `v`, making the
/// objects on the way if needed (and replacing what is not one).
fn set(v: &mut Value, pointer: &str, value: Option<Value>) {
    if pointer.is_empty() {
        *v = value.unwrap_or(Value::Null);
        return;
    }
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let mut at = v;
    for k in parent.split('/').skip(1) {
        at = match at {
            Value::Array(a) => match k.parse::<usize>().ok().filter(|&i| i < a.len()) {
                Some(i) => &mut a[i],
                None => return,
            },
            other => {
                if !other.is_object() {
                    *other = json!({});
                }
                other
                    .as_object_mut()
                    .unwrap()
                    .entry(k.to_string())
                    .or_insert_with(|| json!({}))
            }
        };
    }
    match (at, value) {
        (Value::Array(a), v) => {
            if let Some(i) = key.parse::<usize>().ok().filter(|&i| i < a.len()) {
                match v {
                    Some(v) => a[i] = v,
                    None => {
                        a.remove(i);
                    }
                }
            }
        }
        (Value::Object(o), Some(v)) => {
            o.insert(key.to_string(), v);
        }
        (Value::Object(o), None) => {
            o.remove(key);
        }
        (other, Some(v)) => *other = json!({ key: v }),
        (_, None) => {}
    }
}

/// A chain of `depth` async stack frames, the URL at the bottom.
fn deep_stack(depth: usize, url: &str) -> Value {
    let mut s = json!({"callFrames": [{"url": url}]});
    for _ in 0..depth {
        s = json!({"callFrames": [], "parent": s});
    }
    json!({"type": "script", "stack": s})
}

/// One entry written from parts: host `h`, path `p` (few of each, so URLs
/// repeat), a kind, a status, a body that may reference other entries, a
/// redirect to another entry (loops included), an initiator naming another.
#[derive(Debug, Clone)]
struct Part {
    host: usize,
    path: usize,
    kind: usize,
    status: usize,
    body: Option<Vec<usize>>,
    base64: bool,
    size: i64,
    redirect_to: usize,
    initiator: Option<(usize, usize, bool)>,
    method: usize,
}

fn part() -> impl Strategy<Value = Part> {
    (
        (0usize..4, 0usize..6, 0usize..7, 0usize..8),
        proptest::option::of(proptest::collection::vec(0usize..12, 0..4)),
        any::<bool>(),
        prop_oneof![0i64..5000, Just(-1), Just(i64::MAX), any::<i64>()],
        0usize..12,
        proptest::option::of((0usize..12, 0usize..200, any::<bool>())),
        0usize..6,
    )
        .prop_map(
            |((host, path, kind, status), body, base64, size, redirect_to, initiator, method)| {
                Part {
                    host,
                    path,
                    kind,
                    status,
                    body,
                    base64,
                    size,
                    redirect_to,
                    initiator,
                    method,
                }
            },
        )
}

fn url_of(p: &Part) -> String {
    const PATHS: [&str; 6] = [
        "/",
        "/a.css",
        "/b.js?x=1&y=2",
        "/img/c.png",
        "/f.woff2",
        "/d",
    ];
    let scheme = if p.host == 3 { "http" } else { "https" };
    format!("{scheme}://h{}.fuzz.test{}", p.host % 3, PATHS[p.path])
}

fn har_of(parts: &[Part]) -> Value {
    use base64::Engine;
    const MIMES: [&str; 7] = [
        "text/html",
        "text/css",
        "application/javascript",
        "image/png",
        "font/woff2",
        "",
        "application/json",
    ];
    const STATUSES: [i64; 8] = [200, 200, 200, 301, 302, 304, 204, 0];
    const METHODS: [&str; 6] = ["GET", "GET", "GET", "POST", "PUT", "HEAD"];
    let urls: Vec<String> = parts.iter().map(url_of).collect();
    let entries: Vec<Value> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut content = json!({"size": p.size, "mimeType": MIMES[p.kind]});
            if let Some(refs) = &p.body {
                let mut text = String::from("<html><head>");
                for &r in refs {
                    let u = &urls[r % urls.len()];
                    text.push_str(&format!("<script src=\"{u}\"></script><body>url({u})"));
                }
                if p.base64 {
                    content["text"] = base64::engine::general_purpose::STANDARD
                        .encode(text)
                        .into();
                    content["encoding"] = "base64".into();
                } else {
                    content["text"] = text.into();
                }
            }
            let mut e = json!({
                "pageref": "page_1",
                "request": {"method": METHODS[p.method], "url": urls[i],
                            "bodySize": p.size, "postData": {"text": "a=1"}},
                "response": {"status": STATUSES[p.status], "httpVersion": "http/2.0",
                             "headers": [], "content": content, "bodySize": p.size},
                "timings": {"wait": p.size as f64 / 7.0},
            });
            if (3..5).contains(&p.status) {
                e["response"]["redirectURL"] = urls[p.redirect_to % urls.len()].clone().into();
            }
            if let Some((to, depth, flattened)) = p.initiator {
                let stack = deep_stack(depth, &urls[to % urls.len()]);
                if flattened {
                    e["_initiator_detail"] = stack.to_string().into();
                } else if depth < 40 {
                    e["_initiator"] = stack;
                } else {
                    e["_initiator"] = urls[to % urls.len()].clone().into();
                }
            }
            e
        })
        .collect();
    json!({"log": {"pages": [{"id": "page_1", "title": "fuzz"}], "entries": entries}})
}

proptest! {
    #[test]
    fn fuzz_har_arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = check(&bytes);
    }

    #[test]
    fn fuzz_har_arbitrary_json_never_panics(v in any_json(), wrap in 0u8..3) {
        // As is, as log.entries, and as one entry of it.
        let v = match wrap {
            0 => v,
            1 => json!({"log": {"entries": v}}),
            _ => json!({"log": {"entries": [v]}}),
        };
        let _ = check(&serde_json::to_vec(&v).unwrap());
    }

    #[test]
    fn fuzz_har_cut_or_flipped_files_never_panic_and_say_where(
        cut in any::<prop::sample::Index>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        garbage in proptest::collection::vec(any::<u8>(), 0..8),
        pretty in any::<bool>(),
    ) {
        let h = good();
        let mut bytes = if pretty { serde_json::to_vec_pretty(&h) } else { serde_json::to_vec(&h) }.unwrap();
        for (at, b) in flips {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        if !garbage.is_empty() || cut.index(4) == 0 {
            bytes.truncate(cut.index(bytes.len() + 1));
            bytes.extend_from_slice(&garbage);
        }
        let _ = check(&bytes);
    }

    #[test]
    fn fuzz_har_files_with_fields_of_any_value_never_panic_and_say_where(
        edits in proptest::collection::vec(
            (any::<prop::sample::Index>(), any::<prop::sample::Index>(), proptest::option::of(nasty()), any::<bool>()),
            1..4,
        ),
    ) {
        let mut h = good();
        for (field, entry, value, in_entry) in edits {
            if in_entry {
                let n = h["log"]["entries"].as_array().map_or(0, Vec::len);
                if n == 0 {
                    continue;
                }
                let ptr = format!("/log/entries/{}{}", entry.index(n), ENTRY_FIELDS[field.index(ENTRY_FIELDS.len())]);
                set(&mut h, &ptr, value);
            } else {
                set(&mut h, FILE_FIELDS[field.index(FILE_FIELDS.len())], value);
            }
        }
        let _ = check(&serde_json::to_vec(&h).unwrap());
    }

    #[test]
    fn fuzz_har_one_entry_of_a_valid_file_replaced_never_panics(
        at in any::<prop::sample::Index>(),
        v in any_json(),
        text in "\\PC{0,60}",
        raw in any::<bool>(),
    ) {
        // The entry's JSON replaced by any value, or by any text (so the
        // file's syntax breaks inside the entry).
        let mut h = good();
        let n = h["log"]["entries"].as_array().unwrap().len();
        let i = at.index(n);
        if !raw {
            h["log"]["entries"][i] = v;
            let _ = check(&serde_json::to_vec(&h).unwrap());
        } else {
            h["log"]["entries"][i] = "@ENTRY@".into();
            let s = serde_json::to_string(&h).unwrap().replace("\"@ENTRY@\"", &text);
            let _ = check(s.as_bytes());
        }
    }

    #[test]
    fn fuzz_har_files_written_from_parts_import_or_say_why(
        parts in proptest::collection::vec(part(), 1..12),
    ) {
        let _ = check(&serde_json::to_vec(&har_of(&parts)).unwrap());
    }
}

#[test]
fn the_good_file_imports() {
    let (site, report) = check(&serde_json::to_vec_pretty(&good()).unwrap()).unwrap();
    assert_eq!(site.resources.len(), 8, "{:?}", report.skipped);
    assert_eq!(report.skipped.len(), 2, "{:?}", report.skipped);
    assert_eq!(report.parents_redirect, 1);
    assert!(report.parents_initiator >= 1, "{report:?}");
}

#[test]
fn a_deep_initiator_stack_is_followed_or_refused_without_a_panic() {
    // Nested past serde_json's recursion limit (128) as an object: the file
    // is refused at its position; as the flattened string form: ignored.
    let mut h = good();
    h["log"]["entries"][7]["_initiator"] = deep_stack(200, "https://cdn.test/app.js");
    let e = check(&serde_json::to_vec(&h).unwrap()).unwrap_err();
    assert!(e.contains("recursion limit"), "{e}");
    let mut h = good();
    h["log"]["entries"][7]["_initiator"] = Value::Null;
    // Built as text: a Value this deep would overflow the stack when dropped.
    let depth = 100_000;
    let text = format!(
        "{{\"type\":\"script\",\"stack\":{}{{\"callFrames\":[{{\"url\":\"https://cdn.test/app.js\"}}]}}{}}}",
        "{\"callFrames\":[],\"parent\":".repeat(depth),
        "}".repeat(depth)
    );
    h["log"]["entries"][7]["_initiator_detail"] = text.into();
    check(&serde_json::to_vec(&h).unwrap()).unwrap();
}
