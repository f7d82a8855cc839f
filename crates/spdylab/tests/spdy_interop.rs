//! SPDY/3.1 against independent implementations, both ways:
//!
//! - Netty 4.1's SPDY codec (interop/netty-spdy, built with Maven): its client,
//!   with its own flow control and 64 KiB windows, fetches every resource of
//!   youtube and twitter byte-exact from our server, also under a limit of 4
//!   concurrent streams; our client fetches every resource of youtube from its
//!   server byte-exact (with 64 KiB windows, so Netty waits for our
//!   WINDOW_UPDATEs) and the model client loads the page from it.
//! - go-spdy (interop/go-spdy), on the SPDY framer of github.com/moby/spdystream
//!   (from Go's go.net/spdy) with flow control of its own: the same both ways.
//!
//! youtube's page is 92 kB and twitter has a 90 kB script: more than a window.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

/// Builds go-spdy once (Go module proxy for moby/spdystream).
fn go_spdy() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/go-spdy");
        let out = std::env::temp_dir().join(format!("go-spdy-{}", std::process::id()));
        let status = Command::new("go")
            .args(["build", "-o"])
            .arg(&out)
            .arg(".")
            .current_dir(&src)
            .env("GOFLAGS", "-mod=mod")
            .status()
            .expect("go (the Go toolchain) builds the independent SPDY peer");
        assert!(status.success(), "go build of interop/go-spdy failed");
        out
    })
    .clone()
}

struct Killed(Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Builds netty-spdy once (Maven, offline when ~/.m2 has it all); the command
/// that runs it.
fn netty_spdy() -> Command {
    static CP: OnceLock<String> = OnceLock::new();
    let cp = CP.get_or_init(|| {
        let pom = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../interop/netty-spdy/pom.xml");
        let out = std::env::temp_dir().join(format!("netty-spdy-{}", std::process::id()));
        let build = |offline: bool| {
            let mut mvn = Command::new("mvn");
            mvn.args(["-B", "-q"]);
            if offline {
                mvn.arg("-o");
            }
            mvn.arg("-f")
                .arg(&pom)
                .arg(format!("-Dnetty-spdy.build={}", out.display()))
                .arg("package")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("mvn (Maven) builds the Netty SPDY peer")
                .success()
        };
        assert!(
            build(true) || build(false),
            "mvn package of interop/netty-spdy failed"
        );
        format!("{0}/classes:{0}/dependency/*", out.display())
    });
    let mut java = Command::new("java");
    java.args(["-cp", cp, "spdylab.NettySpdy"]);
    java
}

fn serve(site: &str) -> (Killed, u16) {
    serve_with(site, &[])
}

fn serve_with(site: &str, more: &[&str]) -> (Killed, u16) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spdylab"))
        .args([
            "serve",
            "--site",
            site,
            "--proto",
            "spdy3",
            "--listen",
            "127.0.0.1:0",
            "--tls-listen",
            "127.0.0.1:0",
        ])
        .args(more)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let port = loop {
        let line = lines.next().expect("serve prints its addresses").unwrap();
        if line.trim_start().starts_with("https://") {
            break line.rsplit(':').next().unwrap().trim().parse().unwrap();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    (Killed(child), port)
}

#[test]
fn the_independent_client_fetches_every_resource_byte_exact_from_our_server() {
    let bin = go_spdy();
    for name in ["youtube", "twitter"] {
        let site = site::builtin(name, site::DEFAULT_SEED).unwrap();
        let (_server, port) = serve(name);
        let out = std::env::temp_dir().join(format!("spdy-interop-{name}-{}", std::process::id()));
        for host in site.hosts() {
            let _ = std::fs::remove_dir_all(&out);
            std::fs::create_dir_all(&out).unwrap();
            let ids: Vec<usize> = (0..site.resources.len())
                .filter(|&i| site.resources[i].host == host)
                .collect();
            let result = Command::new(&bin)
                .args(["client", &format!("127.0.0.1:{port}"), host])
                .arg(&out)
                .args(ids.iter().map(|&i| site.resources[i].path.as_str()))
                .output()
                .unwrap();
            assert!(
                result.status.success(),
                "{name} {host}: {}",
                String::from_utf8_lossy(&result.stderr)
            );
            let listing = String::from_utf8_lossy(&result.stdout);
            for (n, &i) in ids.iter().enumerate() {
                let got = std::fs::read(out.join(n.to_string())).unwrap();
                assert!(
                    got == site.body(i),
                    "{name}: {host}{} differs ({} of {} bytes)",
                    site.resources[i].path,
                    got.len(),
                    site.resources[i].size
                );
            }
            assert!(
                listing.lines().all(|l| l.split(' ').nth(1) == Some("200")),
                "{listing}"
            );
        }
        let _ = std::fs::remove_dir_all(&out);
    }
}

#[test]
fn our_client_loads_youtube_from_the_independent_server() {
    let bin = go_spdy();
    let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let dir = peers::Scratch::new("spdy-interop").unwrap();
    peers::write_docroot(&site, &dir.0.join("www")).unwrap();
    let ca = server::Ca::new().unwrap();
    let mut names: Vec<String> = site.hosts().iter().map(|h| h.to_string()).collect();
    names.push("127.0.0.1".into());
    let (cert, key) = ca.issue_pem(&names).unwrap();
    std::fs::write(dir.0.join("cert.pem"), cert).unwrap();
    std::fs::write(dir.0.join("key.pem"), key).unwrap();
    let port = peers::free_port().unwrap();
    let mut child = Command::new(&bin)
        .args(["server", &format!("127.0.0.1:{port}")])
        .arg(dir.0.join("www"))
        .arg(dir.0.join("cert.pem"))
        .arg(dir.0.join("key.pem"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("listening"), "{first}");
    let _server = Killed(child);

    let root = site.root();
    let cfg = client::LoadConfig {
        protocol: proto::Protocol::Spdy3,
        conns_per_host: 6,
        depth: 1,
        root: (root.host.clone(), root.path.clone()),
        resolve: site
            .hosts()
            .iter()
            .map(|h| (h.to_string(), [127, 0, 0, 1].into()))
            .collect(),
        ca: ca.der(),
        tls13_only: None,
        http_port: 0,
        https_port: port,
        timeout: Duration::from_secs(60),
    };
    server::install_crypto_provider();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = rt.block_on(client::load(&cfg));
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(
        result.entries.len(),
        site.resources.len(),
        "every resource discovered and loaded"
    );
    assert_eq!(
        result.connections, 1,
        "one SPDY session for the one address"
    );
    for e in &result.entries {
        let i = site.find(&e.host, &e.path).expect("a resource of the site");
        assert_eq!(e.status, 200, "{}{}", e.host, e.path);
        assert_eq!(
            e.body_bytes as usize, site.resources[i].size,
            "{}{}",
            e.host, e.path
        );
    }
}

/// Netty's client fetches every resource of `name`, host by host, with at most
/// `concurrency` streams open; each body must be the site's, byte for byte.
fn netty_fetches(name: &str, serve_args: &[&str], concurrency: usize) {
    let site = site::builtin(name, site::DEFAULT_SEED).unwrap();
    let (_server, port) = serve_with(name, serve_args);
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out =
        std::env::temp_dir().join(format!("netty-interop-{name}-{}-{run}", std::process::id()));
    let mut fetched = 0;
    for host in site.hosts() {
        let _ = std::fs::remove_dir_all(&out);
        let ids: Vec<usize> = (0..site.resources.len())
            .filter(|&i| site.resources[i].host == host)
            .collect();
        let result = netty_spdy()
            .args(["client", &format!("127.0.0.1:{port}"), host])
            .arg(&out)
            .args(["--concurrency", &concurrency.to_string()])
            .args(ids.iter().map(|&i| site.resources[i].path.as_str()))
            .output()
            .unwrap();
        assert!(
            result.status.success(),
            "{name} {host}: {}",
            String::from_utf8_lossy(&result.stderr)
        );
        let listing = String::from_utf8_lossy(&result.stdout);
        assert_eq!(listing.lines().count(), ids.len(), "{listing}");
        for (n, (&i, line)) in ids.iter().zip(listing.lines()).enumerate() {
            let r = &site.resources[i];
            let got = std::fs::read(out.join(n.to_string())).unwrap();
            assert!(
                got == site.body(i),
                "{name}: {host}{} differs ({} of {} bytes)",
                r.path,
                got.len(),
                r.size
            );
            let fields: Vec<&str> = line.split(' ').collect();
            assert_eq!(fields[..3], [r.path.as_str(), "200", &r.size.to_string()]);
            fetched += 1;
        }
    }
    assert_eq!(fetched, site.resources.len());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn nettys_client_fetches_every_resource_byte_exact_from_our_server() {
    for name in ["youtube", "twitter"] {
        netty_fetches(name, &[], 16);
    }
}

#[test]
fn nettys_client_keeps_to_our_stream_limit() {
    // Netty refuses to open more streams than our SETTINGS allow: with 4 it
    // fetches everything 4 at a time.
    netty_fetches("youtube", &["--max-streams", "4"], 4);
}

#[test]
fn our_client_fetches_every_resource_byte_exact_from_nettys_server() {
    let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let dir = peers::Scratch::new("netty-interop").unwrap();
    peers::write_docroot(&site, &dir.0.join("www")).unwrap();
    let ca = server::Ca::new().unwrap();
    let mut names: Vec<String> = site.hosts().iter().map(|h| h.to_string()).collect();
    names.push("127.0.0.1".into());
    let (cert, key) = ca.issue_pem(&names).unwrap();
    std::fs::write(dir.0.join("cert.pem"), cert).unwrap();
    std::fs::write(dir.0.join("key.pem"), key).unwrap();
    let mut child = netty_spdy()
        .args(["server", "127.0.0.1:0"])
        .arg(dir.0.join("www"))
        .arg(dir.0.join("cert.pem"))
        .arg(dir.0.join("key.pem"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let _server = Killed(child);
    let port: u16 = first
        .strip_prefix("listening ")
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("netty-spdy server: {first}"));
    server::install_crypto_provider();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    // Byte for byte, host by host, with SPDY's default 64 KiB windows.
    for host in site.hosts() {
        let ids: Vec<usize> = (0..site.resources.len())
            .filter(|&i| site.resources[i].host == host)
            .collect();
        let paths: Vec<String> = ids
            .iter()
            .map(|&i| site.resources[i].path.clone())
            .collect();
        let got = rt
            .block_on(client::fetch_spdy3(
                ([127, 0, 0, 1], port).into(),
                host,
                &paths,
                ca.der(),
                65_536,
            ))
            .unwrap_or_else(|e| panic!("{host}: {e}"));
        for (&i, f) in ids.iter().zip(&got) {
            assert_eq!(f.status, 200, "{host}{}", site.resources[i].path);
            assert!(
                f.body == site.body(i),
                "{host}{} differs ({} of {} bytes)",
                site.resources[i].path,
                f.body.len(),
                site.resources[i].size
            );
        }
    }

    // And the page, as the model client loads it (Chrome's windows and priorities).
    let root = site.root();
    let cfg = client::LoadConfig {
        protocol: proto::Protocol::Spdy3,
        conns_per_host: 6,
        depth: 1,
        root: (root.host.clone(), root.path.clone()),
        resolve: site
            .hosts()
            .iter()
            .map(|h| (h.to_string(), [127, 0, 0, 1].into()))
            .collect(),
        ca: ca.der(),
        tls13_only: None,
        http_port: 0,
        https_port: port,
        timeout: Duration::from_secs(60),
    };
    let result = rt.block_on(client::load(&cfg));
    assert!(result.error.is_none(), "{:?}", result.error);
    assert_eq!(result.entries.len(), site.resources.len());
    assert_eq!(result.connections, 1);
    for e in &result.entries {
        let i = site.find(&e.host, &e.path).expect("a resource of the site");
        assert_eq!(e.status, 200, "{}{}", e.host, e.path);
        assert_eq!(e.body_bytes as usize, site.resources[i].size);
    }
}
