//! Secrets and files: `serve`'s CA certificate lives in a directory of this
//! user alone and does not outlive the next `serve` after a `kill -9`; the
//! private keys spdylab writes for real servers (nginx here) are 0600.

use crate::common;

use crate::common::TempDir;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

/// `spdylab serve` with TMPDIR=`tmp`, read until ready; returns the child and
/// the CA path it printed.
fn serve_in(tmp: &Path) -> (Child, PathBuf) {
    let mut child = common::command(&[
        "serve",
        "--site",
        "icons",
        "--listen",
        "127.0.0.1:0",
        "--tls-listen",
        "127.0.0.1:0",
    ])
    .env("TMPDIR", tmp)
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .expect("spdylab serve starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ca = None;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some((_, path)) = line.split_once("CA certificate: ") {
            ca = Some(PathBuf::from(path.trim()));
        }
        if line.starts_with("ready") {
            break;
        }
    }
    std::thread::spawn(move || for _ in lines {});
    (child, ca.expect("serve printed its CA path"))
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_killed_serves_ca_file_does_not_survive_the_next_serve() {
    let tmp = TempDir::new("ca-kill");
    let (mut first, first_ca) = serve_in(&tmp.0);
    assert!(first_ca.starts_with(&tmp.0), "{}", first_ca.display());
    assert!(first_ca.exists());
    assert_eq!(mode(first_ca.parent().unwrap()), 0o700, "the CA directory");
    assert_eq!(mode(&first_ca), 0o600, "the CA file");
    // kill -9: no destructor runs, the file stays behind…
    common::signal(first.id(), libc::SIGKILL);
    let _ = first.wait();
    assert!(first_ca.exists(), "nothing can remove it at kill -9");
    // …until the next serve of this user starts.
    let (second, second_ca) = serve_in(&tmp.0);
    assert!(
        !first_ca.exists(),
        "{} survived the next serve",
        first_ca.display()
    );
    assert!(second_ca.exists());
    let files: Vec<_> = std::fs::read_dir(second_ca.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files, vec![second_ca.clone()]);
    // A normal stop removes its own.
    common::signal(second.id(), libc::SIGTERM);
    let mut second = second;
    let _ = second.wait();
    assert!(!second_ca.exists(), "removed at a normal exit");
}

#[test]
fn a_live_serves_ca_file_is_left_alone_by_another_serve() {
    let tmp = TempDir::new("ca-live");
    let (mut a, a_ca) = serve_in(&tmp.0);
    let (mut b, b_ca) = serve_in(&tmp.0);
    assert!(a_ca.exists() && b_ca.exists() && a_ca != b_ca);
    for c in [&mut a, &mut b] {
        common::signal(c.id(), libc::SIGTERM);
        let _ = c.wait();
    }
    assert!(!a_ca.exists() && !b_ca.exists());
}

/// Every `key.pem` under `dir` with its mode, and every directory holding one.
fn keys_under(dir: &Path, out: &mut Vec<(PathBuf, u32, u32)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            keys_under(&p, out);
        } else if p.file_name().is_some_and(|n| n == "key.pem") {
            if let (Ok(k), Ok(d)) = (std::fs::metadata(&p), std::fs::metadata(dir)) {
                out.push((
                    p.clone(),
                    k.permissions().mode() & 0o777,
                    d.permissions().mode() & 0o777,
                ));
            }
        }
    }
}

#[test]
fn keys_written_for_nginx_are_0600() {
    if !common::is_root() {
        return common::cannot_run("keys_written_for_nginx_are_0600 needs root (a testbed)");
    }
    if !common::installed("nginx") {
        return common::cannot_run("keys_written_for_nginx_are_0600 needs nginx");
    }
    let mut child = common::command(&[
        "compare",
        "--site",
        "icons",
        "--protocols",
        "https,h2",
        "--reps",
        "3",
        "--rtt",
        "20ms",
        "--server",
        "nginx",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .expect("compare starts");
    // The scratch is a tmpfs in compare's own mount namespace: look through
    // /proc/PID/root while it runs, until it has ended.
    let root = PathBuf::from(format!("/proc/{}/root/run/spdylab", child.id()));
    let mut keys = vec![];
    let status = loop {
        keys_under(&root, &mut keys);
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success(), "compare --server nginx: {status:?}");
    assert!(!keys.is_empty(), "saw no key.pem under {}", root.display());
    for (path, key, dir) in &keys {
        assert_eq!(*key, 0o600, "{}", path.display());
        // Root's scratch: workers (nobody) read the docroot; invisible outside.
        assert_eq!(*dir, 0o755, "{}", path.display());
    }
    eprintln!("{} key files seen, all 0600", keys.len());
}
