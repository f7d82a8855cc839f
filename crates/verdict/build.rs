//! The build's commit, for what a run records of how it was made
//! (`verdict::settings::BUILD`): `git describe --always --abbrev=12` of the
//! checkout, "unknown" outside one. Rerun when HEAD moves (a commit, a
//! checkout), not on every edit: the commit a build was made from, not
//! whether its tree had uncommitted changes.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Watch `path` where it exists (cargo reruns a script whose watched file is
/// missing on every build).
fn watch(path: Option<String>) {
    if let Some(p) = path.filter(|p| std::path::Path::new(p).exists()) {
        println!("cargo:rerun-if-changed={p}");
    }
}

fn main() {
    let commit = git(&["describe", "--always", "--abbrev=12"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=SPDYLAB_BUILD={commit}");
    // HEAD, and the branch file it names (a worktree's own HEAD included).
    watch(git(&["rev-parse", "--git-path", "HEAD"]));
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch(git(&["rev-parse", "--git-path", &branch]));
    }
    watch(git(&["rev-parse", "--git-path", "packed-refs"]));
    println!("cargo:rerun-if-changed=build.rs");
}
