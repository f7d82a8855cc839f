//! `spdylab probe HOST[:PORT]`: what a server speaks, checked against servers
//! whose offer we know — the built-in one with each `--proto` offer (and a TLS
//! version restricted), and nginx, Apache, h2o and caddy from their generated
//! configs (caddy a second time with h3 turned on, for a real QUIC handshake) —
//! all on loopback; and bad input: a closed port, a server that resets every
//! connection, a cleartext port asked for ALPN, bad HOST:PORT syntax; and a
//! testbed's server address probed from the client namespace through the link.

use crate::common::{describe, fails, json_of, serve, spdylab, TempDir};
use peers::{Peer, PeerKind, PeerOptions};
use serde_json::Value;
use std::collections::BTreeSet;

/// The keys of the checks that found their protocol.
fn offered(v: &Value) -> BTreeSet<String> {
    v["checks"]
        .as_array()
        .unwrap_or_else(|| panic!("no checks: {v}"))
        .iter()
        .filter(|c| c["offered"] == true)
        .map(|c| c["key"].as_str().unwrap().to_string())
        .collect()
}

fn check<'a>(v: &'a Value, key: &str) -> &'a Value {
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["key"] == key)
        .unwrap_or_else(|| panic!("no check {key}: {v}"))
}

/// Runs `spdylab probe ARGS --json` (each check within the default 5 s, all at
/// once) and returns the JSON and the exit status. With SPDYLAB_TEST_SHOW_PROBE
/// set, the table is printed too (run with --nocapture to see it).
fn probe(args: &[&str]) -> (Value, i32) {
    if std::env::var_os("SPDYLAB_TEST_SHOW_PROBE").is_some() {
        let table = spdylab(&[&["probe"], args].concat());
        eprintln!(
            "$ spdylab probe {}\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&table.stdout),
            String::from_utf8_lossy(&table.stderr)
        );
    }
    // `survey` is the command's name; `probe`, its old one, is an alias
    // (the bad-input test below still calls it so).
    let o = spdylab(&[&["survey", "--json"], args].concat());
    let code = o.status.code().unwrap_or(-1);
    (json_of(&o), code)
}

fn set(keys: &[&str]) -> BTreeSet<String> {
    keys.iter().map(|k| k.to_string()).collect()
}

#[test]
fn each_offer_of_the_builtin_server_is_detected() {
    let dir = TempDir::new("probe-builtin");
    let ca = dir.arg("ca.pem");
    for (offer, tls, want) in [
        (
            "http,https,spdy3,h2,h2c",
            None,
            &[
                "tls",
                "http1_tls",
                "h2",
                "spdy3",
                "http1",
                "h2c_upgrade",
                "h2c_prior",
                "tls1.2",
                "tls1.3",
            ][..],
        ),
        ("https", None, &["tls", "http1_tls", "tls1.2", "tls1.3"]),
        ("h2", Some("1.3"), &["tls", "h2", "tls1.3"]),
        ("spdy3", Some("1.2"), &["tls", "spdy3", "tls1.2"]),
        ("http", None, &["http1"]),
        // The built-in server upgrades to h2c only where it serves HTTP/1.1 too.
        ("h2c", None, &["h2c_prior"]),
    ] {
        let mut args = vec![
            "--site",
            "icons",
            "--proto",
            offer,
            "--max-streams",
            "6",
            "--ca",
            &ca,
        ];
        if let Some(v) = tls {
            args.extend(["--tls", v]);
        }
        let served = serve(&args);
        // One port for both kinds of check when only one kind is served.
        let tls_port = served.https.or(served.http).unwrap().port().to_string();
        let http_port = served.http.or(served.https).unwrap().port().to_string();
        let (v, code) = probe(&[
            &format!("127.0.0.1:{tls_port}"),
            "--http-port",
            &http_port,
            "--sni",
            "icons.spdylab.test",
            "--ca",
            &ca,
        ]);
        assert_eq!(code, 0, "{offer}: {v:#}");
        let got = offered(&v);
        assert_eq!(got, set(want), "{offer}: {v:#}");
        for key in ["spdy3_npn", "tls1.0", "tls1.1", "h3"] {
            assert_eq!(check(&v, key)["offered"], false, "{offer} {key}: {v:#}");
        }
        for key in ["h2", "spdy3", "h2c_prior"] {
            if got.contains(key) {
                assert_eq!(
                    check(&v, key)["settings"]["max_concurrent_streams"],
                    6,
                    "{offer} {key}: --max-streams 6"
                );
            }
        }
        if offer.contains("http") && offer.contains("https") {
            // What a TLS-less port says when asked for TLS is shown below; here, a
            // certificate for the site's host and 127.0.0.1, by our CA only.
            let cert = &v["certificate"];
            let names: Vec<&str> = cert["names"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap())
                .collect();
            assert!(
                names.contains(&"icons.spdylab.test") && names.contains(&"127.0.0.1"),
                "{names:?}"
            );
            assert_eq!(cert["system_roots"]["verifies"], false, "{cert}");
            assert_eq!(cert["ca"]["verifies"], true, "{cert}");
        }
        if !offer.contains("http") && !offer.contains("h2c") {
            // Cleartext checks on the TLS port: a clear "no" each.
            let c = check(&v, "h2c_prior");
            assert_eq!(c["offered"], false);
            assert!(!c["detail"].as_str().unwrap().is_empty(), "{c}");
        }
    }
}

/// h3's transport parameters, read from the QUIC handshake, are what
/// server::quic configures: `--max-streams` as `initial_max_streams_bidi`, a
/// 30 s idle timeout, and quinn 0.11's defaults, which it keeps, for the rest
/// (1 250 000 B a stream, an unlimited connection window (2^62 − 1), 100
/// unidirectional streams, 1472 B UDP payloads); the stream count quinn lets
/// us open agrees with the parameter.
#[test]
fn the_builtin_servers_h3_transport_parameters_are_its_config() {
    let dir = TempDir::new("probe-h3-builtin");
    let ca = dir.arg("ca.pem");
    let served = serve(&[
        "--site",
        "icons",
        "--proto",
        "https,h3",
        "--max-streams",
        "37",
        "--ca",
        &ca,
    ]);
    let port = served.https.unwrap().port().to_string();
    let (v, code) = probe(&[
        &format!("127.0.0.1:{port}"),
        "--sni",
        "icons.spdylab.test",
        "--ca",
        &ca,
    ]);
    assert_eq!(code, 0, "{v:#}");
    let h3 = check(&v, "h3");
    assert_eq!(h3["offered"], true, "{v:#}");
    let q = &h3["settings"]["quic"];
    for (key, want) in [
        ("initial_max_streams_bidi", 37u64),
        ("initial_max_streams_uni", 100),
        ("max_idle_timeout", 30_000),
        ("initial_max_stream_data_bidi_local", 1_250_000),
        ("initial_max_stream_data_bidi_remote", 1_250_000),
        ("initial_max_stream_data_uni", 1_250_000),
        ("initial_max_data", (1 << 62) - 1),
        ("max_udp_payload_size", 1472),
    ] {
        assert_eq!(q[key].as_u64(), Some(want), "{key}: {h3:#}");
    }
    assert_eq!(h3["settings"]["max_concurrent_streams"], 37, "{h3}");
    assert_eq!(h3["settings"]["initial_window"], 1_250_000, "{h3}");
    let detail = h3["detail"].as_str().unwrap();
    assert!(
        detail.contains("initial_max_data 4611686018427387903"),
        "{detail}"
    );
    assert!(!detail.contains("not read"), "{detail}");
}

/// A certificate for `names` from a new CA, and the CA's PEM.
fn certificate(names: &[&str]) -> (String, String, String) {
    let ca = server::Ca::new().unwrap();
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let (cert, key) = ca.issue_pem(&names).unwrap();
    (cert, key, ca.pem())
}

#[test]
fn each_real_server_offers_what_its_config_says() {
    let site = site::builtin("icons", site::DEFAULT_SEED).unwrap();
    let docroot = TempDir::new("probe-docroot");
    peers::write_docroot(&site, &docroot.0).unwrap();
    let dir = TempDir::new("probe-peers");
    let (cert_pem, key_pem, ca_pem) = certificate(&["icons.spdylab.test", "127.0.0.1"]);
    let ca = dir.arg("ca.pem");
    std::fs::write(&ca, ca_pem).unwrap();
    for (kind, want, server, streams) in [
        (
            PeerKind::Nginx,
            &["tls", "http1_tls", "h2", "http1", "tls1.2", "tls1.3"][..],
            "nginx",
            6,
        ),
        (
            PeerKind::Apache,
            &[
                "tls",
                "http1_tls",
                "h2",
                "http1",
                "h2c_upgrade",
                "h2c_prior",
                "tls1.2",
                "tls1.3",
            ],
            "Apache",
            6,
        ),
        (
            PeerKind::H2o,
            &[
                "tls",
                "http1_tls",
                "h2",
                "http1",
                "h2c_upgrade",
                "h2c_prior",
                "tls1.2",
                "tls1.3",
            ],
            "h2o",
            100,
        ),
        (
            PeerKind::Caddy,
            &[
                "tls",
                "http1_tls",
                "h2",
                "http1",
                "h2c_upgrade",
                "h2c_prior",
                "tls1.2",
                "tls1.3",
            ],
            "Caddy",
            250,
        ),
    ] {
        let p = netns::free_ports(3).unwrap();
        let options = PeerOptions {
            addresses: vec![[127, 0, 0, 1].into()],
            http_port: p[0],
            https_port: p[1],
            h2c_port: Some(p[2]),
            tls13_only: None,
            cert_pem: cert_pem.clone(),
            key_pem: key_pem.clone(),
            workers: 1,
            max_streams: 6,
            keepalive_timeout: None,
            access_log: false,
            docroot: docroot.0.clone(),
            early_data: false,
        };
        let peer = Peer::start(kind, &options).unwrap_or_else(|e| panic!("{kind}: {e}"));
        let (v, code) = probe(&[
            &format!("127.0.0.1:{}", p[1]),
            "--http-port",
            &p[0].to_string(),
            "--sni",
            "icons.spdylab.test",
            "--ca",
            &ca,
        ]);
        assert_eq!(code, 0, "{kind}: {v:#}");
        let mut got = offered(&v);
        // h3 is the config's to decide (caddy's may turn it on): not asserted here.
        got.remove("h3");
        got.remove("h3_alt_svc");
        assert_eq!(got, set(want), "{kind}: {v:#}");
        assert_eq!(
            check(&v, "h2")["settings"]["max_concurrent_streams"],
            streams,
            "{kind}: {v:#}"
        );
        assert!(
            v["server"].as_str().is_some_and(|s| s.starts_with(server)),
            "{kind}: Server header {}",
            v["server"]
        );
        assert_eq!(v["certificate"]["ca"]["verifies"], true, "{kind}");
        if kind == PeerKind::Nginx {
            // nginx speaks h2c by prior knowledge on a port of its own.
            let (v, _) = probe(&[&format!("127.0.0.1:{}", p[2])]);
            assert_eq!(check(&v, "h2c_prior")["offered"], true, "{v:#}");
        }
        drop(peer);
    }
}

#[test]
fn caddy_with_h3_answers_quic_and_says_so_in_alt_svc() {
    let site = site::builtin("icons", site::DEFAULT_SEED).unwrap();
    let docroot = TempDir::new("probe-h3-docroot");
    peers::write_docroot(&site, &docroot.0).unwrap();
    let (cert_pem, key_pem, _) = certificate(&["icons.spdylab.test", "127.0.0.1"]);
    let p = netns::free_ports(2).unwrap();
    let options = PeerOptions {
        addresses: vec![[127, 0, 0, 1].into()],
        http_port: p[0],
        https_port: p[1],
        h2c_port: None,
        tls13_only: None,
        cert_pem,
        key_pem,
        workers: 1,
        max_streams: 6,
        keepalive_timeout: None,
        access_log: false,
        docroot: docroot.0.clone(),
        early_data: false,
    };
    // The generated Caddyfile, with h3 among the protocols (caddy's default).
    let prepared = peers::prepare(PeerKind::Caddy, &options).unwrap();
    let file = prepared.scratch.0.join("Caddyfile");
    let conf = std::fs::read_to_string(&file).unwrap();
    let conf = conf.replace("protocols h1 h2 h2c\n", "protocols h1 h2 h2c h3\n");
    assert!(conf.contains(" h3\n"), "{conf}");
    std::fs::write(&file, conf).unwrap();
    let mut child = netns::spawn_tied(prepared.command).unwrap();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{}", p[1]).parse().unwrap();
    netns::wait_listening(&mut child, &[addr], std::time::Duration::from_secs(10)).unwrap();
    let (v, code) = probe(&[
        &format!("127.0.0.1:{}", p[1]),
        "--http-port",
        &p[0].to_string(),
        "--sni",
        "icons.spdylab.test",
    ]);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(code, 0, "{v:#}");
    let alt = check(&v, "h3_alt_svc");
    assert_eq!(alt["offered"], true, "{v:#}");
    let h3 = check(&v, "h3");
    assert_eq!(h3["offered"], true, "{v:#}");
    // quic-go's default: 100 bidirectional streams; its SETTINGS came on the control stream.
    assert_eq!(h3["settings"]["max_concurrent_streams"], 100, "{h3}");
    // And read directly from its transport parameters.
    assert_eq!(
        h3["settings"]["quic"]["initial_max_streams_bidi"], 100,
        "{h3}"
    );
    assert!(
        h3["settings"]["quic"]["initial_max_data"].as_u64().unwrap() > 0,
        "{h3}"
    );
    let detail = h3["detail"].as_str().unwrap();
    assert!(
        detail.contains("SETTINGS [") || detail.contains("SETTINGS (none: every default)"),
        "{h3}"
    );
    assert!(
        !h3["detail"].as_str().unwrap().contains("not read:"),
        "{h3}"
    );
    // A private CA: recorded, not rejected.
    assert_eq!(v["certificate"]["system_roots"]["verifies"], false);
}

/// A TCP server on loopback that resets every connection it accepts (SO_LINGER 0).
fn resetting_server() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            use std::os::fd::AsRawFd;
            let linger = libc::linger {
                l_onoff: 1,
                l_linger: 0,
            };
            // SAFETY: a valid socket and a linger struct of the right size.
            unsafe {
                libc::setsockopt(
                    s.as_raw_fd(),
                    libc::SOL_SOCKET,
                    libc::SO_LINGER,
                    &linger as *const _ as *const libc::c_void,
                    std::mem::size_of::<libc::linger>() as libc::socklen_t,
                )
            };
            std::thread::sleep(std::time::Duration::from_millis(20));
            drop(s);
        }
    });
    port
}

#[test]
fn bad_input_gets_a_clear_line_per_check_and_the_right_status() {
    // Nothing listens: every check says why; exit 1, nothing answered.
    let closed = netns::free_port().unwrap();
    let o = spdylab(&["probe", &format!("127.0.0.1:{closed}"), "--timeout", "1s"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(out.contains("no: connection refused"), "{out}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("nothing answered"));
    let v = json_of(&spdylab(&[
        "probe",
        &format!("127.0.0.1:{closed}"),
        "--timeout",
        "1s",
        "--json",
    ]));
    assert!(offered(&v).is_empty(), "{v:#}");
    assert_eq!(check(&v, "h2")["detail"], "connection refused");

    // A server that resets: a "no" with the reason, but it did answer.
    let port = resetting_server();
    let (v, code) = probe(&[&format!("127.0.0.1:{port}")]);
    assert_eq!(code, 0, "it accepted connections: {v:#}");
    assert!(offered(&v).is_empty(), "{v:#}");
    for key in ["tls", "h2", "http1", "h2c_prior"] {
        let d = check(&v, key)["detail"].as_str().unwrap().to_string();
        assert!(d.contains("reset") || d.contains("closed"), "{key}: {d}");
    }

    // A TLS-less port asked for ALPN.
    let served = serve(&["--site", "icons", "--proto", "http"]);
    let (v, code) = probe(&[&format!("127.0.0.1:{}", served.http_port())]);
    assert_eq!(code, 0);
    assert_eq!(offered(&v), set(&["http1"]), "{v:#}");
    for key in ["tls", "h2", "spdy3", "tls1.2", "tls1.3"] {
        let d = check(&v, key)["detail"].as_str().unwrap().to_string();
        assert!(d.contains("not TLS") || d.contains("closed"), "{key}: {d}");
    }

    // Usage errors: exit 2, naming what is wrong.
    fails(&["probe", "127.0.0.1:99999"], 2, "port '99999'");
    fails(&["probe", "https://example.test/"], 2, "not a URL");
    fails(&["probe", "127.0.0.1", "--timeout", "5"], 2, "--timeout");
    fails(
        &["probe", "127.0.0.1", "--ca", "/nonexistent/ca.pem"],
        2,
        "--ca",
    );
}

#[test]
fn inside_a_testbed_the_server_address_is_probed_through_the_link() {
    // The built-in server on 198.18.1.1 (80 and 443) behind a 40 ms link;
    // probe runs in the client namespace with the defaults: TLS on 443, cleartext on 80.
    let exe = env!("CARGO_BIN_EXE_spdylab");
    let server = format!(
        "{exe} serve --site icons --listen 198.18.1.1:80 --tls-listen 198.18.1.1:443 --max-streams 8 --proto https,h2,h2c,http"
    );
    let o = spdylab(&[
        "shell",
        "--rtt",
        "40ms",
        "--rate",
        "20mbit",
        "--server-cmd",
        &server,
        "--",
        exe,
        "probe",
        "198.18.1.1",
        "--sni",
        "icons.spdylab.test",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let v = json_of(&o);
    assert_eq!(
        (v["tls_port"].as_u64(), v["http_port"].as_u64()),
        (Some(443), Some(80))
    );
    assert_eq!(
        offered(&v),
        set(&[
            "tls",
            "http1_tls",
            "h2",
            "http1",
            "h2c_upgrade",
            "h2c_prior",
            "tls1.2",
            "tls1.3"
        ]),
        "{v:#}"
    );
    assert_eq!(check(&v, "h2")["settings"]["max_concurrent_streams"], 8);
    let names = v["certificate"]["names"].as_array().unwrap();
    assert!(names.iter().any(|n| n == "198.18.1.1"), "{names:?}");
}
