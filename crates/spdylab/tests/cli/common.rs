//! Scaffolding shared by spdylab's integration tests: running the binary and
//! reading its output (`--json` included), a built-in server on loopback that
//! stops with the test, scratch directories removed on drop, and the HAR
//! reading that several tests do. Each test module uses a part of it.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

/// The spdylab binary under test, as a command (stdin closed).
pub fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_spdylab"));
    c.args(args).stdin(Stdio::null());
    c
}

/// Runs spdylab with `args` to its end.
pub fn spdylab(args: &[&str]) -> Output {
    command(args).output().expect("spdylab runs")
}

/// Status, stdout and stderr, for assertion messages.
pub fn describe(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Asserts that the run succeeded.
pub fn ok(o: &Output) {
    assert!(o.status.success(), "{}", describe(o));
}

/// The one JSON object a `--json` run printed on stdout (whatever its status).
pub fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", describe(o)))
}

/// Runs spdylab with `args` (which include `--json`), asserts success, and
/// parses what it printed.
pub fn run_json(args: &[&str]) -> Value {
    let o = spdylab(args);
    ok(&o);
    json_of(&o)
}

/// Asserts that the run failed with exit status `code` and that stderr says `want`.
pub fn fails(args: &[&str], code: i32, want: &str) -> String {
    let o = spdylab(args);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(code), "{args:?}: {}", describe(&o));
    assert!(err.contains(want), "{args:?}: wanted {want:?} in {err}");
    err
}

/// The probes of a `compare --json` document.
pub fn probes(v: &Value) -> &Vec<Value> {
    v["probes"]
        .as_array()
        .unwrap_or_else(|| panic!("no probes: {v}"))
}

/// `spdylab serve` on loopback (ports picked by the kernel), killed on drop.
pub struct Served {
    child: Child,
    /// The first cleartext and TLS addresses it printed.
    pub http: Option<SocketAddr>,
    pub https: Option<SocketAddr>,
}

impl Served {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
    pub fn http_port(&self) -> u16 {
        self.http.expect("serving cleartext").port()
    }
    pub fn https_port(&self) -> u16 {
        self.https.expect("serving TLS").port()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `spdylab serve --listen 127.0.0.1:0 --tls-listen 127.0.0.1:0 ARGS`
/// and waits until it is ready; its stdout is drained from then on so that it
/// never blocks on it.
pub fn serve(args: &[&str]) -> Served {
    let mut child = command(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--tls-listen",
        "127.0.0.1:0",
    ])
    .args(args)
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .expect("spdylab serve starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut http, mut https) = (None, None);
    // "  http://HOST:PORT/  on ADDR" per host, then "ready; …".
    for line in lines.by_ref() {
        let line = line.unwrap();
        let addr = || line.rsplit(" on ").next()?.trim().parse().ok();
        if line.trim_start().starts_with("http://") && http.is_none() {
            http = addr();
        } else if line.trim_start().starts_with("https://") && https.is_none() {
            https = addr();
        }
        if line.starts_with("ready") {
            break;
        }
    }
    assert!(
        http.is_some() || https.is_some(),
        "spdylab serve {args:?} printed no address"
    );
    std::thread::spawn(move || for _ in lines {});
    Served { child, http, https }
}

/// A directory of this test process, new and empty, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// `$TMPDIR/spdylab-test-<what>-<pid>-<n>`.
    pub fn new(what: &str) -> TempDir {
        static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("spdylab-test-{what}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn join(&self, p: impl AsRef<Path>) -> PathBuf {
        self.0.join(p)
    }

    /// The path of `p` inside, as a string (for arguments).
    pub fn arg(&self, p: impl AsRef<Path>) -> String {
        self.0.join(p).display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every HAR file in `dir`, parsed, by file name.
pub fn hars(dir: &Path) -> Vec<(String, Value)> {
    let mut v: Vec<(String, Value)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        // Not Chromium's filmstrips beside them (NAME.filmstrip/).
        .filter(|p| p.extension().is_some_and(|x| x == "har"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let har = serde_json::from_slice(&std::fs::read(&p).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (name, har)
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// A HAR's entries.
pub fn entries(har: &Value) -> &Vec<Value> {
    har["log"]["entries"].as_array().unwrap()
}

/// The host of an entry's request URL.
pub fn host_of(entry: &Value) -> String {
    let url = entry["request"]["url"].as_str().unwrap();
    url.split('/').nth(2).unwrap().to_string()
}

/// A HAR's connection ids, by host.
pub fn connections_per_host(har: &Value) -> HashMap<String, HashSet<String>> {
    let mut per_host: HashMap<String, HashSet<String>> = HashMap::new();
    for e in entries(har) {
        per_host
            .entry(host_of(e))
            .or_default()
            .insert(e["connection"].as_str().unwrap().to_string());
    }
    per_host
}

/// Sends `sig` to our own child.
pub fn signal(pid: u32, sig: i32) {
    // SAFETY: a plain kill(2) on a process we started.
    assert_eq!(unsafe { libc::kill(pid as i32, sig) }, 0);
}

/// Asserts that a probe loaded the whole of `site`: no error, every resource,
/// and at least every byte of it down the link (plus headers and TLS).
pub fn assert_loaded_whole(p: &Value, site: &site::Site) {
    assert!(p["error"].is_null(), "{p}");
    assert_eq!(
        p["resources"].as_u64().unwrap() as usize,
        site.resources.len(),
        "{p}"
    );
    assert!(
        p["bytes_down"].as_u64().unwrap() as usize > site.total_bytes(),
        "{p}"
    );
}

/// The indices of `site`'s resources on `host`, in order.
pub fn resources_on(site: &site::Site, host: &str) -> Vec<usize> {
    (0..site.resources.len())
        .filter(|&i| site.resources[i].host == host)
        .collect()
}

/// What `tcpdump -n -r` reads from a pcap file.
pub fn tcpdump(pcap: &Path) -> String {
    let r = Command::new("tcpdump")
        .args(["-n", "-r"])
        .arg(pcap)
        .output()
        .expect("tcpdump runs");
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    String::from_utf8_lossy(&r.stdout).into_owned()
}

/// Runs a Python 3 `script` with `args`, asserts that it succeeded, and
/// returns what it printed.
pub fn python(script: &str, args: &[&Path]) -> String {
    let out = Command::new("/usr/bin/python3")
        .args(["-c", script])
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", describe(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Trial key → (records, records whose probe failed), over a campaign's
/// probes.jsonl (the slices of a Slurm array or a Kubernetes Job, merged, and
/// the one-machine sweep they must equal).
pub fn records(dir: &Path) -> std::collections::BTreeMap<String, (usize, usize)> {
    let text = std::fs::read_to_string(dir.join("probes.jsonl")).unwrap_or_default();
    let mut out = std::collections::BTreeMap::new();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let e: &mut (usize, usize) = out
            .entry(v["trial"].as_str().unwrap().to_string())
            .or_default();
        e.0 += 1;
        if !v["error"].is_null() {
            e.1 += 1;
        }
    }
    out
}

/// A test that cannot run here, for `why` (a prerequisite missing): under CI
/// (the environment variable `CI` set) that is a failure, never a silent pass;
/// elsewhere it says "skipped: …" on stderr and the caller returns.
pub fn cannot_run(why: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("cannot run under CI: {why} (`make test` installs what the tests need and runs them as root)");
    }
    eprintln!("skipped: {why}");
}

/// Whether `binary` is on PATH or in /usr/sbin (where Debian puts the servers).
pub fn installed(binary: &str) -> bool {
    Command::new("sh")
        .args([
            "-c",
            &format!("command -v {binary} || test -x /usr/sbin/{binary}"),
        ])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether this process runs as root (the testbeds need it).
pub fn is_root() -> bool {
    // SAFETY: geteuid(2) has no arguments and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A campaign of `experiment` (TOML) swept into a fresh directory named
/// after `name`, for the report tests that render it in Chromium: the
/// directory and the campaign's; None (the test says why it cannot run)
/// without root or Chromium.
pub fn chromium_campaign(name: &str, experiment: &str) -> Option<(TempDir, PathBuf)> {
    if !is_root() {
        cannot_run("a campaign needs root (its testbed's namespaces)");
        return None;
    }
    if !installed("chromium") {
        cannot_run("chromium is not installed (`make deps` installs it)");
        return None;
    }
    let dir = TempDir::new(name);
    let exp = dir.join("exp.toml");
    std::fs::write(&exp, experiment).unwrap();
    let out = dir.join("out");
    ok(&spdylab(&[
        "sweep",
        exp.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]));
    Some((dir, out))
}
