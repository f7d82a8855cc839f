//! libFuzzer target: the bytes put inside an otherwise valid HAR (Chromium's
//! form: a redirect to the page, its stylesheet, script and images, a POST,
//! an entry with an async initiator stack), so the fuzzer reaches the
//! entry-level code of `site::har::import` at once (issue 36). The first
//! byte says where they go:
//!
//! - 0: the JSON text of one whole entry (the third);
//! - 1: the page's body (base64 `content.text`), the HTML the importer reads
//!   references and `<body>` from;
//! - 2: the JSON text of an entry's `_initiator` (a stack, a URL, anything);
//! - 3: a URL (as a JSON string): the redirect's `Location`, an entry's URL
//!   and its initiator's;
//! - 4: an entry's base64 `content.text` (as a JSON string).
//!
//! Never a panic; an error is one line; an imported site has the page first
//! and every other resource under an earlier one.
#![no_main]

use base64::Engine;
use libfuzzer_sys::fuzz_target;

const PAGE: &str = r#"<html><head><link rel="stylesheet" href="/a.css?v=1"><script src="https://cdn.test/app.js"></script></head><body><img src="//img.test/logo.png"></body></html>"#;

/// One entry's JSON text: `extra` is more fields (with a leading comma).
fn entry(url: &str, status: u16, mime: &str, content: &str, extra: &str) -> String {
    format!(
        r#"{{"pageref":"page_1","startedDateTime":"2026-11-26T18:00:00.000Z","time":50.5,
"request":{{"method":"GET","url":{url},"httpVersion":"h2","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0}},
"response":{{"status":{status},"statusText":"","httpVersion":"h2","headers":[{{"name":"Content-Type","value":"{mime}"}}],"cookies":[],"content":{content},"redirectURL":"","headersSize":-1,"bodySize":-1}},
"cache":{{}},"timings":{{"blocked":-1,"dns":1,"connect":2,"ssl":1,"send":0.5,"wait":20.25,"receive":3}}{extra}}}"#
    )
}

fn har(data: &[u8]) -> Vec<u8> {
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let json = |s: &str| serde_json::to_string(s).unwrap();
    let raw = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let (mode, bytes) = match data.split_first() {
        Some((m, rest)) => (m % 5, rest),
        None => (0, data),
    };
    let page_body = if mode == 1 {
        b64(bytes)
    } else {
        b64(PAGE.as_bytes())
    };
    let url = if mode == 3 {
        json(&raw(bytes))
    } else {
        json("https://www.shop.test/")
    };
    let mut redirect = entry(
        r#""http://shop.test/""#,
        301,
        "text/html",
        r#"{"size":0}"#,
        "",
    );
    redirect = redirect.replace(r#""redirectURL":"""#, &format!(r#""redirectURL":{url}"#));
    redirect = redirect.replace(
        r#"[{"name":"Content-Type","value":"text/html"}]"#,
        &format!(r#"[{{"name":"Location","value":{url}}}]"#),
    );
    let document = entry(
        &url,
        200,
        "text/html; charset=utf-8",
        &format!(
            r#"{{"size":{},"mimeType":"text/html","text":"{page_body}","encoding":"base64"}}"#,
            PAGE.len()
        ),
        "",
    );
    let third = if mode == 0 {
        raw(bytes)
    } else {
        entry(
            r#""https://www.shop.test/a.css?v=1""#,
            200,
            "text/css",
            r#"{"size":30,"mimeType":"text/css","text":"body{background:url(/bg.png)}"}"#,
            "",
        )
    };
    let png = if mode == 4 {
        json(&raw(bytes))
    } else {
        json("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII=")
    };
    let initiator = if mode == 2 {
        raw(bytes)
    } else {
        format!(
            r#"{{"type":"script","stack":{{"callFrames":[],"parent":{{"callFrames":[{{"url":""}}],"parent":{{"callFrames":[{{"url":{}}}]}}}}}}}}"#,
            if mode == 3 {
                url.clone()
            } else {
                json("https://cdn.test/app.js")
            }
        )
    };
    let entries = [
        redirect,
        document,
        third,
        entry(r#""https://cdn.test/app.js""#, 200, "application/javascript", r#"{"size":5000,"mimeType":"application/javascript"}"#, ""),
        entry(
            r#""https://www.shop.test/bg.png""#,
            200,
            "image/png",
            &format!(r#"{{"size":68,"mimeType":"image/png","text":{png},"encoding":"base64"}}"#),
            "",
        ),
        entry(r#""https://img.test/logo.png""#, 304, "image/png", r#"{"size":0}"#, ""),
        entry(
            r#""https://img.test/late.png""#,
            200,
            "image/png",
            r#"{"size":300,"mimeType":"image/png"}"#,
            &format!(r#","_initiator":{initiator}"#),
        ),
        entry(
            r#""https://www.shop.test/api/track?x=1""#,
            200,
            "application/json",
            r#"{"size":2,"mimeType":"application/json","text":"{}"}"#,
            "",
        )
        .replace(r#""method":"GET""#, r#""method":"POST","postData":{"mimeType":"text/plain","text":"aGVsbG8=","encoding":"base64"}"#),
    ];
    format!(
        r#"{{"log":{{"version":"1.2","creator":{{"name":"WebInspector","version":"537.36"}},
"pages":[{{"startedDateTime":"2026-11-26T18:00:00.000Z","id":"page_1","title":"Shop","pageTimings":{{"onContentLoad":300,"onLoad":500}}}}],
"entries":[{}]}}}}"#,
        entries.join(",\n")
    )
    .into_bytes()
}

fuzz_target!(|data: &[u8]| {
    let bytes = har(data);
    match site::har::import("fuzz", &bytes) {
        Err(e) => assert!(!e.0.is_empty() && !e.0.contains('\n'), "{:?}", e.0),
        Ok((site, report)) => {
            assert_eq!(report.resources, site.resources.len());
            assert_eq!(site.resources[0].parent, None);
            for (i, r) in site.resources.iter().enumerate().skip(1) {
                assert!(r.parent.is_some_and(|p| p < i), "{i}: {:?}", r.parent);
            }
        }
    }
});
