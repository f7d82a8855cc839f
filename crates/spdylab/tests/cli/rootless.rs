//! Rootless, tested: `shell`, `calibrate` and `compare` as an unprivileged
//! user (setpriv --reuid=65534), through the user-namespace path; what cannot
//! work there (nginx and h2o switching users) is refused with the reason, and
//! what can (Apache, Caddy, Chromium without its sandbox) works. Where
//! unprivileged user namespaces or TUN are not available to nobody on this
//! machine, or the test is not run as root (which it needs to become nobody),
//! or a server is missing, it says so: a failure under CI, a "skipped" here.

use crate::common::{cannot_run, installed, is_root};
use std::process::{Command, Output, Stdio};

/// `spdylab ARGS` as uid/gid 65534 with no groups, from `/`.
fn as_nobody(args: &[&str]) -> Output {
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_spdylab"))
        .args(args)
        .current_dir("/")
        .env("TMPDIR", "/tmp")
        .stdin(Stdio::null())
        .output()
        .expect("setpriv runs");
    for line in String::from_utf8_lossy(&out.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&out.stderr).lines())
    {
        eprintln!("rootless {}: {line}", args.first().copied().unwrap_or(""));
    }
    out
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\n{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Whether nobody can make a user namespace and a TUN device here; else why not.
fn rootless_possible() -> Result<(), String> {
    if !is_root() {
        return Err("the test must run as root to become uid 65534 (setpriv)".into());
    }
    if !installed("setpriv") {
        return Err("setpriv (util-linux) is not installed".into());
    }
    let probe = as_nobody(&["shell", "--", "true"]);
    if probe.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&probe.stderr);
    if err.contains("user namespace") || err.contains("/dev/net/tun") || err.contains("tun") {
        Err(format!(
            "unprivileged user namespaces or TUN unavailable: {}",
            err.trim()
        ))
    } else {
        panic!("rootless shell failed for another reason: {}", text(&probe));
    }
}

#[test]
fn shell_calibrate_and_compare_run_rootless() {
    if let Err(why) = rootless_possible() {
        return cannot_run(&why);
    }
    let ping = as_nobody(&["shell", "--rtt", "20ms", "--", "ping", "-c", "2", "server"]);
    assert!(ping.status.success(), "{}", text(&ping));
    assert!(
        String::from_utf8_lossy(&ping.stdout).contains("2 received"),
        "{}",
        text(&ping)
    );

    let cal = as_nobody(&["calibrate", "--rtt", "20ms", "--json"]);
    assert!(cal.status.success(), "{}", text(&cal));
    let v: serde_json::Value = serde_json::from_slice(&cal.stdout).expect("calibrate --json");
    let rtt = v["rtt_ms"]["measured"].as_f64().expect("rtt_ms.measured");
    assert!(rtt >= 20.0, "measured rtt {rtt} ms below the 20 ms set");

    let cmp = as_nobody(&[
        "compare",
        "--site",
        "icons",
        "--protocols",
        "http,h2",
        "--reps",
        "1",
        "--rtt",
        "20ms",
    ]);
    assert!(cmp.status.success(), "{}", text(&cmp));
    let out = String::from_utf8_lossy(&cmp.stdout);
    for p in ["http ", "h2 "] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(p) && !l.contains("failed")),
            "{p}: {out}"
        );
    }
}

/// `compare` of icons over h2 with `extra` (a server or client), as nobody.
fn compare_h2(extra: &[&str]) -> Output {
    let mut args = vec![
        "compare",
        "--site",
        "icons",
        "--protocols",
        "h2",
        "--reps",
        "1",
        "--rtt",
        "20ms",
    ];
    args.extend_from_slice(extra);
    as_nobody(&args)
}

#[test]
fn servers_that_switch_users_are_refused_rootless_and_the_others_run() {
    if let Err(why) = rootless_possible() {
        return cannot_run(&why);
    }
    for server in ["nginx", "h2o"] {
        if !installed(server) {
            cannot_run(&format!("{server} is not installed: not checked rootless"));
            continue;
        }
        let o = compare_h2(&["--server", server]);
        assert!(!o.status.success(), "{server} rootless: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("{server} cannot run rootless"))
                && err.contains("switches its workers to another user"),
            "{server}: {}",
            text(&o)
        );
    }
    for server in ["apache", "caddy"] {
        let binary = if server == "apache" {
            "apache2"
        } else {
            server
        };
        if !installed(binary) {
            cannot_run(&format!("{server} is not installed: not checked rootless"));
            continue;
        }
        let o = compare_h2(&["--server", server]);
        assert!(o.status.success(), "{server} rootless: {}", text(&o));
    }
    if !(installed("chromium") || installed("chromium-browser")) {
        cannot_run("chromium is not installed: not checked rootless");
    } else {
        // Chromium runs as the invoking user with --no-sandbox (in our user
        // namespace it is uid 0, where its sandbox refuses to start), which
        // it says once (browser::sandbox).
        let o = compare_h2(&["--client", "chromium"]);
        assert!(o.status.success(), "chromium rootless: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        let said = err
            .matches("with --no-sandbox: spdylab runs rootless")
            .count();
        assert_eq!(said, 1, "{}", text(&o));
    }
}

/// `spdylab ARGS` as uid 65534 in a user namespace of its own that may make
/// no other (`user.max_user_namespaces` 0 there): a machine whose kernel
/// does not give users namespaces, without touching the host's setting.
fn as_nobody_without_user_namespaces(args: &[&str]) -> Output {
    const SCRIPT: &str = "import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe(); r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    if libc.unshare(0x10000000) != 0:
        os._exit(90)
    os.write(w, b'x'); os.read(r2, 1)
    with open('/proc/sys/user/max_user_namespaces', 'w') as f:
        f.write('0')
    os.setgroups([]); os.setgid(65534); os.setuid(65534)
    os.chdir('/')
    os.execv(sys.argv[1], sys.argv[1:])
os.read(r, 1)
for m in ('uid_map', 'gid_map'):
    with open('/proc/%d/%s' % (pid, m), 'w') as f:
        f.write('0 0 1\\n65534 65534 1\\n')
os.write(w2, b'x')
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
";
    Command::new("python3")
        .args(["-c", SCRIPT, env!("CARGO_BIN_EXE_spdylab")])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("python3 runs")
}

/// `--help`, a bad flag and the commands that only read and print need no
/// user namespace (issue 48): they ran the namespace setup before parsing
/// and failed for a user where unprivileged user namespaces are off; a
/// command that needs one still says why it cannot run.
#[test]
fn help_and_printing_commands_need_no_user_namespace() {
    if !is_root() {
        return cannot_run("the test must run as root to map uid 65534 in a user namespace");
    }
    for args in [
        &["--help"][..],
        &["diff", "--help"],
        &["compare", "--help"],
        &["sites"],
        &["profiles"],
    ] {
        let o = as_nobody_without_user_namespaces(args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        assert!(!o.stdout.is_empty(), "{args:?}: {}", text(&o));
    }
    let bad = as_nobody_without_user_namespaces(&["compare", "--site"]);
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    let shell = as_nobody_without_user_namespaces(&["shell", "--", "true"]);
    assert_eq!(shell.status.code(), Some(1), "{}", text(&shell));
    assert!(
        String::from_utf8_lossy(&shell.stderr).contains("cannot enter a user namespace"),
        "{}",
        text(&shell)
    );
}
