//! SPDY/3.1 against an independent implementation: go-spdy (interop/go-spdy),
//! built on the SPDY framer of github.com/moby/spdystream (from Go's go.net/spdy),
//! with its own flow control. Its client, with the default 64 KiB windows, fetches
//! every resource of youtube and twitter byte-exact from our server (twitter has
//! a 90 kB script: more than a window); our model client loads youtube from its
//! server with every resource complete.

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

fn serve(site: &str) -> (Killed, u16) {
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
        protocol: client::Protocol::Spdy3,
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
