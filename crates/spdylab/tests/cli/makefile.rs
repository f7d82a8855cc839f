//! The README's first two commands: `make demo` installs only what the demo
//! runs, `make test` (and CI, which runs it) everything the tests need.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("the workspace holds crates/spdylab")
}

/// What `make -n TARGET` would run (nothing is run).
fn dry_run(target: &str) -> String {
    let o = Command::new("make")
        .args(["-n", "-C"])
        .arg(root())
        .arg(target)
        .output()
        .expect("make runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The packages of the first `for p in ...; do` loop of a dry run.
fn packages(dry: &str) -> Vec<String> {
    let list = dry
        .split("for p in ")
        .nth(1)
        .and_then(|s| s.split(';').next())
        .unwrap_or_else(|| panic!("no package loop in:\n{dry}"));
    list.split_whitespace().map(String::from).collect()
}

/// Packages only tests use: servers, peers, Chromium and the tools tests drive.
const TEST_ONLY: [&str; 12] = [
    "maven",
    "default-jdk-headless",
    "apache2",
    "h2o",
    "caddy",
    "nginx",
    "chromium",
    "iperf3",
    "tcpdump",
    "nghttp2-client",
    "python3-pil",
    "python3-jsonschema",
];

#[test]
fn make_demo_installs_only_what_the_demo_runs() {
    let dry = dry_run("demo");
    let demo = packages(&dry);
    assert!(demo.iter().any(|p| p == "iproute2"), "{demo:?}");
    for p in TEST_ONLY {
        assert!(
            !demo.iter().any(|d| d == p),
            "make demo installs {p}: {demo:?}"
        );
    }
    assert!(!dry.contains("h2spec"), "make demo installs h2spec:\n{dry}");
    assert!(dry.contains("compare --site youtube"), "{dry}");
}

#[test]
fn make_test_and_ci_install_everything() {
    let test = packages(&dry_run("test"));
    let demo = packages(&dry_run("demo"));
    for p in TEST_ONLY
        .iter()
        .copied()
        .chain(demo.iter().map(String::as_str))
    {
        assert!(
            test.iter().any(|t| t == p),
            "make test misses {p}: {test:?}"
        );
    }
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    let ci_words: Vec<&str> = ci.split_whitespace().collect();
    for p in &test {
        assert!(ci_words.contains(&p.as_str()), ".ci/run misses {p}");
    }
    assert!(ci.contains("make test"), ".ci/run runs make test");
}

/// Rootless use needs /dev/net/tun open to every user; a machine whose
/// device is root-only (0600, as many images leave it) failed the rootless
/// tests under `make test` (issue 47). `make rootless`, which `make test`
/// runs first, makes it 0666 (and allows unprivileged user namespaces where
/// the kernel has them off), and running it again changes nothing.
#[test]
fn make_test_leaves_dev_net_tun_usable_by_every_user() {
    let dry = dry_run("test");
    assert!(dry.contains("chmod 0666 /dev/net/tun"), "{dry}");
    let tun = Path::new("/dev/net/tun");
    if !tun.exists() || !crate::common::is_root() {
        return crate::common::cannot_run("no /dev/net/tun, or not root: make rootless cannot run");
    }
    for _ in 0..2 {
        let o = Command::new("make")
            .args(["-s", "-C"])
            .arg(root())
            .arg("rootless")
            .output()
            .expect("make runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(tun)
            .expect("stat /dev/net/tun")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o666, "after make rootless: {mode:o}");
        // Absent where the kernel has no such switch (user namespaces on).
        let clone = std::fs::read_to_string("/proc/sys/kernel/unprivileged_userns_clone")
            .unwrap_or_default();
        assert_ne!(clone.trim(), "0", "unprivileged user namespaces still off");
    }
}
