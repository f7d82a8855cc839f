//! The built-in server, end to end with real clients: curl (HTTP/1.1, TLS 1.2
//! and 1.3, h2, h2c by prior knowledge and by Upgrade) fetching every resource
//! of every built-in site byte for byte, trusting only the generated CA; h2spec;
//! nghttp and the stream limit; hostile input; PNGs decoded by Pillow.

use crate::common;

use crate::common::TempDir;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

/// `spdylab serve` on loopback, its CA certificate written where curl can trust it.
struct Served {
    _server: common::Served,
    http: u16,
    https: u16,
    ca: PathBuf,
    _dir: TempDir,
}

fn serve(extra: &[&str]) -> Served {
    let dir = TempDir::new("ca");
    let ca = dir.join("ca.pem");
    let ca_arg = ca.display().to_string();
    let mut args = vec!["--ca", ca_arg.as_str()];
    args.extend_from_slice(extra);
    let server = common::serve(&args);
    Served {
        http: server.http_port(),
        https: server.https_port(),
        _server: server,
        ca,
        _dir: dir,
    }
}

/// Fetches every resource of `site` with one curl run; returns (http_version, status, body) per resource.
fn fetch_all(
    s: &Served,
    site: &site::Site,
    scheme: &str,
    flags: &[&str],
) -> Vec<(String, u16, Vec<u8>)> {
    let dir = TempDir::new("fetch");
    let port = if scheme == "https" { s.https } else { s.http };
    let one_each = flags.contains(&"--one-per-connection");
    let flags: Vec<&str> = flags
        .iter()
        .copied()
        .filter(|f| *f != "--one-per-connection")
        .collect();
    let batches: Vec<Vec<usize>> = if one_each {
        (0..site.resources.len()).map(|i| vec![i]).collect()
    } else {
        vec![(0..site.resources.len()).collect()]
    };
    let mut lines: Vec<String> = Vec::new();
    for batch in batches {
        let mut cmd = Command::new("curl");
        cmd.args(["-sS", "--cacert"]).arg(&s.ca).args(&flags);
        cmd.arg("--connect-to").arg(format!("::127.0.0.1:{port}"));
        cmd.args(["-w", "%{http_version} %{http_code}\\n"]);
        for i in batch {
            let r = &site.resources[i];
            cmd.arg("-o").arg(dir.join(i.to_string()));
            cmd.arg(format!("{scheme}://{}:{port}{}", r.host, r.path));
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "curl {flags:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        lines.extend(
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(str::to_string),
        );
    }
    let result = (0..site.resources.len())
        .map(|i| {
            let mut parts = lines[i].split(' ');
            let version = parts.next().unwrap().to_string();
            let status = parts.next().unwrap().parse().unwrap();
            (
                version,
                status,
                std::fs::read(dir.join(i.to_string())).unwrap_or_default(),
            )
        })
        .collect();
    result
}

#[test]
fn every_resource_of_every_site_arrives_byte_for_byte_over_every_protocol() {
    for name in site::BUILTIN {
        let model = site::builtin(name, site::DEFAULT_SEED).unwrap();
        let s = serve(&["--site", name]);
        let variants: [(&str, &[&str], &str); 6] = [
            ("http", &["--http1.1"], "1.1"),
            (
                "https",
                &["--http1.1", "--tlsv1.2", "--tls-max", "1.2"],
                "1.1",
            ),
            ("https", &["--http1.1", "--tlsv1.3"], "1.1"),
            ("https", &["--http2"], "2"),
            // curl 7.88 fails to reuse a prior-knowledge connection ("Error in the
            // HTTP2 framing layer" before it sends anything); nghttp and h2spec
            // reuse ours fine. So each transfer gets its own connection here.
            (
                "http",
                &["--http2-prior-knowledge", "--one-per-connection"],
                "2",
            ),
            ("http", &["--http2"], "2"), // h2c by Upgrade (the first request upgrades)
        ];
        for (scheme, flags, version) in variants {
            let got = fetch_all(&s, &model, scheme, flags);
            for (i, (v, status, body)) in got.iter().enumerate() {
                let r = &model.resources[i];
                assert_eq!(*status, 200, "{name} {flags:?} {}{}", r.host, r.path);
                assert_eq!(v, version, "{name} {flags:?} {}{}", r.host, r.path);
                assert!(
                    *body == model.body(i),
                    "{name} {flags:?} {}{}: bytes differ",
                    r.host,
                    r.path
                );
            }
        }
    }
}

#[test]
fn only_the_generated_ca_is_trusted() {
    let s = serve(&["--site", "icons"]);
    // Without --cacert, the system's store does not know our CA: the handshake fails.
    let out = Command::new("curl")
        .args(["-s", "-o", "/dev/null", "--connect-to"])
        .arg(format!("::127.0.0.1:{}", s.https))
        .arg(format!("https://icons.spdylab.test:{}/", s.https))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(60),
        "curl should refuse the certificate"
    );
}

/// openssl s_client against the TLS port: its output (TLS 1.2, so the
/// ticket arrives inside the handshake), saving or reusing a session file.
fn s_client(s: &Served, session: (&str, &std::path::Path)) -> String {
    let out = Command::new("openssl")
        .args(["s_client", "-tls1_2", "-servername", "icons.spdylab.test"])
        .arg("-connect")
        .arg(format!("127.0.0.1:{}", s.https))
        .arg("-CAfile")
        .arg(&s.ca)
        .arg(session.0)
        .arg(session.1)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn serve_cert_rsa2048_sends_a_chain_and_tls_resume_lets_openssl_resume() {
    let s = serve(&["--site", "icons", "--cert", "rsa2048", "--tls-resume"]);
    let dir = TempDir::new("sess");
    let session = dir.join("session.pem");
    let first = s_client(&s, ("-sess_out", &session));
    assert!(first.contains("Verify return code: 0 (ok)"), "{first}");
    assert!(
        first.contains("i:CN = spdylab testbed intermediate CA"),
        "{first}"
    );
    assert!(first.contains("Server public key is 2048 bit"), "{first}");
    assert!(first.contains("TLS session ticket:"), "{first}");
    let again = s_client(&s, ("-sess_in", &session));
    assert!(again.contains("Reused, TLSv1.2"), "{again}");

    // By default: an ECDSA leaf signed by the root, and no ticket (rustls's
    // session-ID cache still lets a TLS 1.2 client resume).
    let plain = serve(&["--site", "icons"]);
    let first = s_client(&plain, ("-sess_out", &dir.join("plain.pem")));
    assert!(first.contains("Verify return code: 0 (ok)"), "{first}");
    assert!(!first.contains("intermediate CA"), "{first}");
    assert!(first.contains("Server public key is 256 bit"), "{first}");
    assert!(!first.contains("TLS session ticket:"), "{first}");
}

#[test]
fn icons_decode_as_32_by_32_pngs_with_pillow() {
    let model = site::builtin("icons", site::DEFAULT_SEED).unwrap();
    let dir = TempDir::new("icons");
    for i in 1..model.resources.len() {
        std::fs::write(dir.join(format!("{i}.png")), model.body(i)).unwrap();
    }
    let script = "import sys, glob\nfrom PIL import Image\nn = 0\nfor f in glob.glob(sys.argv[1] + '/*.png'):\n    im = Image.open(f); im.load()\n    assert im.size == (32, 32), (f, im.size)\n    n += 1\nprint(n)\n";
    assert_eq!(common::python(script, &[&dir.0]).trim(), "50");
}

fn h2spec() -> String {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    for p in [
        format!("{home}/go/bin/h2spec"),
        "/usr/local/bin/h2spec".into(),
        "h2spec".into(),
    ] {
        if Command::new(&p).arg("--version").output().is_ok() {
            return p;
        }
    }
    panic!("h2spec is not installed (.ci/run installs it with go install)");
}

#[test]
fn h2spec_passes_against_h2_and_h2c() {
    let s = serve(&["--site", "icons", "--proto", "h2,h2c"]);
    for args in [
        vec!["-t", "-k", "-p", &s.https.to_string()],
        vec!["-p", &s.http.to_string()],
    ]
    .iter()
    .map(|v| v.iter().map(|x| x.to_string()).collect::<Vec<_>>())
    {
        let out = Command::new(h2spec())
            .args(&args)
            .args(["-h", "127.0.0.1", "--timeout", "5"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let summary = text
            .lines()
            .rev()
            .find(|l| l.contains("tests,"))
            .unwrap_or("");
        assert!(
            summary.contains("0 failed") && summary.contains("145 passed"),
            "h2spec {args:?}: {summary}\n{text}"
        );
    }
}

#[test]
fn nghttp_sees_the_stream_limit_and_is_held_to_it() {
    let s = serve(&[
        "--site",
        "icons",
        "--max-streams",
        "6",
        "--server-delay",
        "20ms",
    ]);
    let out = Command::new("nghttp")
        .args(["-nv", "-m", "20", "-H", ":authority: icons.spdylab.test"])
        .arg(format!("http://127.0.0.1:{}/png/png1.png", s.http))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):6]"),
        "{text}"
    );
    // Replay the frames: streams opened by HEADERS, closed by END_STREAM from the server.
    let (mut open, mut max, mut done) = (0i32, 0i32, 0);
    for line in text.lines() {
        if line.contains("send HEADERS frame") {
            open += 1;
            max = max.max(open);
        }
        let end_stream = line
            .split("flags=0x")
            .nth(1)
            .and_then(|f| u8::from_str_radix(&f[..2], 16).ok())
            .is_some_and(|f| f & 1 == 1);
        if line.contains("recv DATA frame") && end_stream {
            open -= 1;
            done += 1;
        }
    }
    // nghttp sends all 20 requests before the server's SETTINGS arrive: the
    // server serves 6 and refuses the rest, which the client may retry.
    let refused = text.matches("error_code=REFUSED_STREAM").count();
    assert_eq!((done, refused), (6, 14), "{text}");
    let _ = max;
}

fn raw(port: u16, request: &[u8]) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    s.write_all(request).unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

#[test]
fn hostile_input_gets_clear_answers_and_everyone_else_is_served() {
    let s = serve(&["--site", "icons"]);
    assert!(raw(s.http, b"GARBAGE\r\n\r\n").starts_with("HTTP/1.1 400"));
    let mut big = b"GET / HTTP/1.1\r\nHost: icons.spdylab.test\r\nX-Big: ".to_vec();
    big.extend(vec![b'a'; 70_000]);
    big.extend(b"\r\n\r\n");
    assert!(raw(s.http, &big).starts_with("HTTP/1.1 431"));
    let r = raw(
        s.http,
        b"GET / HTTP/1.1\r\nHost: nowhere.test\r\nConnection: close\r\n\r\n",
    );
    assert!(
        r.starts_with("HTTP/1.1 404") && r.contains("unknown host 'nowhere.test'"),
        "{r}"
    );
    let r = raw(
        s.http,
        b"GET /nope HTTP/1.1\r\nHost: icons.spdylab.test\r\nConnection: close\r\n\r\n",
    );
    assert!(r.starts_with("HTTP/1.1 404"), "{r}");
    // Pipelining: three requests in one write, three responses in order.
    let r = raw(
        s.http,
        b"GET /png/png1.png HTTP/1.1\r\nHost: icons.spdylab.test\r\n\r\nGET /png/png2.png HTTP/1.1\r\nHost: icons.spdylab.test\r\n\r\nGET / HTTP/1.1\r\nHost: icons.spdylab.test\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(r.matches("HTTP/1.1 200").count(), 3, "{r}");
    let (a, b, c) = (
        r.find("image/png").unwrap(),
        r.rfind("image/png").unwrap(),
        r.find("text/html").unwrap(),
    );
    assert!(a < b && b < c);
    // A flood of idle connections, then a normal client is still served.
    let idle: Vec<TcpStream> = (0..300)
        .map(|_| TcpStream::connect(("127.0.0.1", s.http)).unwrap())
        .collect();
    let r = raw(
        s.http,
        b"GET / HTTP/1.1\r\nHost: icons.spdylab.test\r\nConnection: close\r\n\r\n",
    );
    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    drop(idle);
}
