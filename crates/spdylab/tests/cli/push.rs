//! The built-in server's push and 103 Early Hints (issue 37) against
//! independent clients: nghttp (nghttp2) over h2c by prior knowledge — it
//! accepts pushes unless told not to (`--no-push`: SETTINGS_ENABLE_PUSH 0) and
//! prints, with `-v`, every frame it receives and the headers of every
//! response, 1xx included — and Netty's SPDY/3.1 client (interop/netty-spdy,
//! `--pushes N`), whose SpdyHttpDecoder turns a server's SYN_STREAM into the
//! promised request and its HEADERS and DATA into the pushed response.

use crate::common;

use std::collections::BTreeMap;
use std::process::Command;

/// nghttp -nv on `url` with `:authority` `host`, and `extra` flags: its output.
fn nghttp(host: &str, url: &str, extra: &[&str]) -> String {
    let out = Command::new("nghttp")
        .args(["-nv", "-H", &format!(":authority: {host}")])
        .args(extra)
        .arg(url)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    text
}

/// A frame's stream or promised stream id from nghttp's `stream_id=N` or
/// `promised_stream_id=N`.
fn number_after(line: &str, key: &str) -> Option<u32> {
    let at = line.find(key)? + key.len();
    line[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// What nghttp printed after its `recv (stream_id=N) ` prefix, if the line
/// is a header it received.
fn received_header(line: &str) -> Option<(u32, &str)> {
    let at = line.find("recv (stream_id=")?;
    let id = number_after(&line[at..], "stream_id=")?;
    let rest = &line[at..];
    let header = &rest[rest.find(") ")? + 2..];
    Some((id, header))
}

/// The pushes nghttp received: each promised stream's `:path` (nghttp
/// prints a PUSH_PROMISE's headers before the frame's line), and the DATA
/// bytes that came on it; and the stream they were promised on.
fn pushes(text: &str) -> (BTreeMap<u32, (String, usize)>, Option<u32>) {
    let mut out: BTreeMap<u32, (String, usize)> = BTreeMap::new();
    let mut path = String::new();
    let mut on = None;
    for line in text.lines() {
        if let Some((_, h)) = received_header(line) {
            if let Some(p) = h.strip_prefix(":path: ") {
                path = p.to_string();
            }
            continue;
        }
        if line.contains("recv PUSH_PROMISE frame") {
            on = number_after(line, "stream_id=");
            continue;
        }
        if let Some(id) = number_after(line, "promised_stream_id=") {
            out.insert(id, (std::mem::take(&mut path), 0));
            continue;
        }
        if line.contains("recv DATA frame") {
            let (Some(len), Some(id)) = (
                number_after(line, "length="),
                number_after(line, "stream_id="),
            ) else {
                continue;
            };
            if let Some(e) = out.get_mut(&id) {
                e.1 += len as usize;
            }
        }
    }
    (out, on)
}

fn ready() -> bool {
    if !common::installed("nghttp") {
        common::cannot_run("nghttp is not installed (Debian: nghttp2-client)");
        return false;
    }
    true
}

#[test]
fn nghttp_accepts_pushes_of_exactly_the_critical_resources_with_their_bodies() {
    if !ready() {
        return;
    }
    // One host: every critical resource is the document's own, so pushed.
    let origin = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let model = site::Layout::Mirror.apply(&origin).unwrap();
    let host = model.root().host.clone();
    let critical = site::critical::critical(&model);
    assert!(critical.len() >= 3, "{critical:?}");
    let want: BTreeMap<String, usize> = critical
        .iter()
        .map(|&i| (model.resources[i].path.clone(), model.resources[i].size))
        .collect();
    let s = common::serve(&[
        "--site",
        "youtube",
        "--layout",
        "mirror",
        "--proto",
        "h2c",
        "--push",
        "critical",
        "--server-think",
        "50ms",
    ]);
    let url = format!("http://127.0.0.1:{}/", s.http_port());
    let text = nghttp(&host, &url, &[]);
    let (pushed, doc) = pushes(&text);
    let got: BTreeMap<String, usize> = pushed.into_values().collect();
    assert_eq!(got, want, "{text}");
    // Promised on the document's stream, before its response's HEADERS.
    let doc = doc.unwrap();
    let promise = text.find("recv PUSH_PROMISE frame").unwrap();
    let response = text
        .find(&format!("recv (stream_id={doc}) :status: 200"))
        .unwrap();
    assert!(promise < response, "{text}");

    // SETTINGS_ENABLE_PUSH 0: nothing is promised, the page still comes.
    let text = nghttp(&host, &url, &["--no-push"]);
    assert!(!text.contains("PUSH_PROMISE"), "{text}");
    assert!(text.contains(":status: 200"), "{text}");

    // --push all: every resource under the document on its host.
    let s = common::serve(&[
        "--site", "youtube", "--layout", "mirror", "--proto", "h2c", "--push", "all",
    ]);
    let url = format!("http://127.0.0.1:{}/", s.http_port());
    let text = nghttp(&host, &url, &[]);
    let got: BTreeMap<String, usize> = pushes(&text).0.into_values().collect();
    let want: BTreeMap<String, usize> = site::critical::same_origin_subtree(&model)
        .iter()
        .map(|&i| (model.resources[i].path.clone(), model.resources[i].size))
        .collect();
    assert_eq!(got.len(), model.resources.len() - 1, "{text}");
    assert_eq!(got, want, "{text}");
}

#[test]
fn nghttp_sees_a_103_with_the_critical_resources_links_before_the_page() {
    if !ready() {
        return;
    }
    let model = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let host = model.root().host.clone();
    let mut want: Vec<String> = Vec::new();
    let mut others: Vec<String> = Vec::new();
    for i in site::critical::critical(&model) {
        let r = &model.resources[i];
        let kind = site::critical::preload_as(r.kind).unwrap();
        if r.host == host {
            want.push(format!("link: <{}>; rel=preload; as={kind}", r.path));
        } else {
            want.push(format!(
                "link: <http://{}{}>; rel=preload; as={kind}",
                r.host, r.path
            ));
            if !others.contains(&r.host) {
                others.push(r.host.clone());
            }
        }
    }
    assert!(
        !others.is_empty(),
        "youtube's critical resources are on its CDN"
    );
    want.extend(
        others
            .iter()
            .map(|o| format!("link: <http://{o}>; rel=preconnect")),
    );
    let s = common::serve(&[
        "--site",
        "youtube",
        "--proto",
        "h2c",
        "--early-hints",
        "on",
        "--server-think",
        "100ms",
    ]);
    let url = format!("http://127.0.0.1:{}/", s.http_port());
    let text = nghttp(&host, &url, &[]);
    let hints = text.find(":status: 103").expect("a 103");
    let page = text.find(":status: 200").expect("the page");
    assert!(hints < page, "{text}");
    let links: Vec<String> = text[hints..page]
        .lines()
        .filter_map(received_header)
        .map(|(_, h)| h)
        .filter(|h| h.starts_with("link: "))
        .map(str::to_string)
        .collect();
    assert_eq!(links, want, "{text}");

    // Off (the default): no 103.
    let s = common::serve(&["--site", "youtube", "--proto", "h2c"]);
    let url = format!("http://127.0.0.1:{}/", s.http_port());
    let text = nghttp(&host, &url, &[]);
    assert!(!text.contains(":status: 103"), "{text}");
    // Asked for anything but the document: no 103.
    let s = common::serve(&["--site", "youtube", "--proto", "h2c", "--early-hints", "on"]);
    let path = &model.resources[1].path;
    let url = format!("http://127.0.0.1:{}{path}", s.http_port());
    let text = nghttp(&model.resources[1].host, &url, &[]);
    assert!(!text.contains(":status: 103"), "{text}");
}

#[test]
fn nettys_spdy_client_accepts_pushes_of_exactly_the_critical_resources() {
    if !common::installed("mvn") || !common::installed("java") {
        common::cannot_run("Maven and a JDK build the Netty SPDY peer (make deps)");
        return;
    }
    let origin = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let model = site::Layout::Mirror.apply(&origin).unwrap();
    let host = model.root().host.clone();
    let critical = site::critical::critical(&model);
    let s = common::serve(&[
        "--site",
        "youtube",
        "--layout",
        "mirror",
        "--proto",
        "spdy3",
        "--push",
        "critical",
        "--server-think",
        "50ms",
    ]);
    let out = common::TempDir::new("netty-push");
    let result = crate::spdy_interop::netty_spdy()
        .args(["client", &format!("127.0.0.1:{}", s.https_port()), &host])
        .arg(out.join("out"))
        .args(["--pushes", &critical.len().to_string(), "/"])
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&result.stdout);
    assert!(
        result.status.success(),
        "{listing}{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let lines: Vec<&str> = listing.lines().collect();
    assert!(
        lines[0].starts_with(&format!("/ 200 {} ", model.root().size)),
        "{listing}"
    );
    // Each push: its path, 200, its length and the SHA-256 of the site's
    // body, promised on the document's stream (1); in promise order.
    let want: Vec<String> = critical
        .iter()
        .map(|&i| {
            let r = &model.resources[i];
            let sha = sha256_hex(&model.body(i));
            format!("push {} 200 {} {sha} 1", r.path, r.size)
        })
        .collect();
    assert_eq!(
        lines[1..],
        want.iter().map(String::as_str).collect::<Vec<_>>()[..],
        "{listing}"
    );
}

/// The SHA-256 of `bytes` in hex, by coreutils' sha256sum.
fn sha256_hex(bytes: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string()
}
