//! Each peer (nginx, Apache, h2o, caddy) from a generated config, on loopback,
//! checked against the capability table with the tools anyone would use:
//! curl over HTTP/1.1, HTTPS, HTTP/2 and h2c (byte-exact), pipelined requests
//! on one socket, `nghttp -v` for the advertised stream limit, `openssl
//! s_client` for the TLS versions and for SPDY's ALPN; its access log shows
//! the protocol of each request, and dropping it leaves no process or directory.

use peers::{Peer, PeerKind, PeerOptions, Program, StreamLimit};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

struct Fixture {
    site: site::Site,
    docroot: netns::Scratch,
    cert: String,
    key: String,
    _dir: netns::Scratch,
}

fn fixture() -> Fixture {
    let site = site::builtin("icons", site::DEFAULT_SEED).unwrap();
    let docroot = netns::Scratch::new("test-docroot").unwrap();
    peers::write_docroot(&site, &docroot.0).unwrap();
    // A self-signed certificate is enough here: the clients are told to skip verification.
    let dir = netns::Scratch::new("test-cert").unwrap();
    let (cert, key) = (dir.0.join("c.pem"), dir.0.join("k.pem"));
    let ok = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=icons.spdylab.test"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(ok.status.success());
    Fixture {
        cert: std::fs::read_to_string(&cert).unwrap(),
        key: std::fs::read_to_string(&key).unwrap(),
        site,
        docroot,
        _dir: dir,
    }
}

fn options(f: &Fixture, ports: &[u16], tls13_only: Option<bool>) -> PeerOptions {
    PeerOptions {
        addresses: vec![[127, 0, 0, 1].into()],
        http_port: ports[0],
        https_port: ports[1],
        h2c_port: Some(ports[2]),
        tls13_only,
        cert_pem: f.cert.clone(),
        key_pem: f.key.clone(),
        workers: 1,
        max_streams: 6,
        keepalive_timeout: None,
        access_log: true,
        docroot: f.docroot.0.clone(),
        early_data: false,
    }
}

fn installed(kind: PeerKind) -> bool {
    match kind.version() {
        Ok(_) => true,
        Err(e) => panic!("{kind}: {e} (`make deps` installs it)"),
    }
}

/// The TLS version `openssl s_client` gets with only `version` offered, if any.
fn handshake(port: u16, version: &str, alpn: &str) -> String {
    let mut child = Command::new("openssl")
        .args(["s_client", version, "-alpn", alpn, "-connect"])
        .arg(format!("127.0.0.1:{port}"))
        .args(["-servername", "icons.spdylab.test"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).to_string()
}

fn negotiated(port: u16, version: &str) -> bool {
    handshake(port, version, "http/1.1")
        .lines()
        .any(|l| l.starts_with("New, TLSv1."))
}

/// SETTINGS_MAX_CONCURRENT_STREAMS as `nghttp -v` shows it.
fn advertised_streams(url: &str, host: &str) -> Option<u32> {
    let out = Command::new("nghttp")
        .args(["-v", "-H", &format!(":authority: {host}"), url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // The server's SETTINGS, not the ones nghttp sends ("send SETTINGS frame").
    let mut received = false;
    for l in text.lines() {
        if l.contains(" SETTINGS frame ") {
            received = l.contains("recv SETTINGS frame");
        } else if let (true, Some(v)) = (
            received,
            l.trim()
                .strip_prefix("[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):"),
        ) {
            return v.trim_end_matches(']').parse().ok();
        }
    }
    None
}

/// 8 GETs written at once on one connection: every response comes back, in order.
fn pipelined(port: u16, host: &str, path: &str, want: &[u8]) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let one = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
    s.write_all(one.repeat(8).as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 65536];
    while count(&got, want) < 8 {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    assert_eq!(
        count(&got, b"HTTP/1.1 200"),
        8,
        "8 pipelined responses on port {port}"
    );
    assert_eq!(count(&got, want), 8, "8 pipelined bodies on port {port}");
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

#[test]
fn each_peer_serves_as_its_capability_table_says() {
    let f = fixture();
    let host = f.site.root().host.clone();
    let (path, want) = (f.site.resources[1].path.clone(), f.site.body(1));
    for kind in PeerKind::ALL {
        assert!(installed(kind));
        let caps = kind.capabilities();
        let p = netns::free_ports(3).unwrap();
        let peer = Peer::start(kind, &options(&f, &p, None)).unwrap();
        let h2c = if kind == PeerKind::Nginx { p[2] } else { p[0] };
        let mut expected = std::collections::BTreeMap::new();
        for (scheme, port, flag, served) in [
            ("http", p[0], "--http1.1", "HTTP/1.1 cleartext"),
            ("https", p[1], "--http1.1", "HTTP/1.1 TLSv1.3"),
            ("https", p[1], "--http2", "HTTP/2 TLSv1.3"),
            ("http", h2c, "--http2-prior-knowledge", "HTTP/2 cleartext"),
        ] {
            let out = Command::new("curl")
                .args([
                    "-sk",
                    flag,
                    "--resolve",
                    &format!("{host}:{port}:127.0.0.1"),
                ])
                .arg(format!("{scheme}://{host}:{port}{path}"))
                .output()
                .unwrap();
            assert!(out.status.success(), "{kind} {scheme} {flag}");
            assert_eq!(out.stdout, want, "{kind} {scheme} {flag}: byte-exact");
            *expected.entry(served.to_string()).or_insert(0u64) += 1;
            // Every request is logged by the time its response is complete.
            let mut served_now = peer.served();
            for _ in 0..50 {
                if served_now == expected {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
                served_now = peer.served();
            }
            assert_eq!(
                served_now,
                expected,
                "{kind} {scheme} {flag}: {}",
                peer.access_log()
            );
        }
        pipelined(p[0], &host, &path, &want);
        let streams = advertised_streams(&format!("https://127.0.0.1:{}/", p[1]), &host);
        let want_streams = match caps.max_streams {
            StreamLimit::Any => 6,
            StreamLimit::Fixed(n) => n,
        };
        assert_eq!(
            streams,
            Some(want_streams),
            "{kind}: advertised stream limit"
        );
        let alpn = handshake(p[1], "-tls1_3", "spdy/3.1");
        assert!(
            !alpn.contains("ALPN protocol: spdy"),
            "{kind}: no SPDY\n{alpn}"
        );
        assert!(
            negotiated(p[1], "-tls1_2") && negotiated(p[1], "-tls1_3"),
            "{kind}: both TLS versions by default"
        );
        if kind == PeerKind::Apache {
            let out = Command::new("curl")
                .arg(format!("http://127.0.0.1:{}/server-status?auto", p[0]))
                .output()
                .unwrap();
            let (busy, idle) = peers::apache_status(&String::from_utf8_lossy(&out.stdout))
                .expect("mod_status answers");
            assert!(busy >= 1 && idle >= 1, "{busy} busy, {idle} idle");
        }
        let (pid, dir) = (peer.pid, peer.dir.clone());
        drop(peer);
        assert!(!dir.exists(), "{kind}: its directory is removed");
        // SAFETY: kill(pid, 0) only checks for existence.
        assert_ne!(unsafe { libc::kill(pid as i32, 0) }, 0, "{kind} is gone");

        // The TLS version knobs, where honoured; refused (not faked) where not.
        for (tls13_only, honoured) in [
            (Some(false), caps.tls12_only),
            (Some(true), caps.tls13_only),
        ] {
            if honoured.is_some() {
                continue;
            }
            let p = netns::free_ports(3).unwrap();
            let peer = Peer::start(kind, &options(&f, &p, tls13_only)).unwrap();
            let (v12, v13) = (negotiated(p[1], "-tls1_2"), negotiated(p[1], "-tls1_3"));
            assert_eq!(
                (v12, v13),
                (tls13_only == Some(false), tls13_only == Some(true)),
                "{kind} {tls13_only:?}"
            );
            drop(peer);
        }
    }
}

#[test]
fn a_missing_server_names_its_package() {
    let nowhere = std::ffi::OsStr::new("/nonexistent");
    for (binary, package) in [("h2o", "h2o"), ("caddy", "caddy")] {
        let msg = netns::find_binary_in(nowhere, binary, package)
            .unwrap_err()
            .to_string();
        assert!(msg.contains(&format!("apt-get install {package}")), "{msg}");
    }
}
