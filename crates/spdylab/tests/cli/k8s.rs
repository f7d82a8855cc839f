//! Keeps the Kubernetes Indexed Job example (docs/examples/k8s-indexed-job.yaml)
//! true without a cluster: it decodes strictly into the Kubernetes Go API types
//! (interop/k8s-job-check, k8s.io/api/batch/v1), a misspelt field is refused,
//! each pod's command runs as written with JOB_COMPLETION_INDEX set (volumes as
//! scratch directories), and the slices merge into the same sweep run on one
//! machine. The Dockerfile that builds the image it names copies and runs paths
//! that exist.

use crate::common::{ok, records, spdylab, TempDir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const EXPERIMENT: &str = r#"
name = "k8s-indexed"
sites = ["twitter"]
protocols = ["https", "h2"]
reps = 1
warmup = 0
[link]
rtt = ["10ms", "40ms"]
rate = "8mbit"
"#;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn manifest() -> PathBuf {
    repo().join("docs/examples/k8s-indexed-job.yaml")
}

/// Builds interop/k8s-job-check (Go module proxy for k8s.io/api) into `dir`.
fn checker(dir: &TempDir) -> PathBuf {
    let out = dir.join("k8s-job-check");
    let status = Command::new("go")
        .args(["build", "-o"])
        .arg(&out)
        .arg(".")
        .current_dir(repo().join("interop/k8s-job-check"))
        .env("GOFLAGS", "-mod=mod")
        .status()
        .expect("go (Debian golang-go; `make deps`)");
    assert!(status.success(), "go build of interop/k8s-job-check failed");
    out
}

#[test]
fn the_indexed_job_decodes_strictly_and_its_pods_merge_into_the_whole_sweep() {
    let dir = TempDir::new("k8s");
    let check = checker(&dir);

    // A misspelt field is an error, so the decoding below is a real check.
    let text = std::fs::read_to_string(manifest()).unwrap();
    let typo = dir.join("typo.yaml");
    std::fs::write(&typo, text.replace("completionMode:", "completionMod:")).unwrap();
    let o = Command::new(&check).arg(&typo).output().unwrap();
    assert!(!o.status.success(), "a misspelt field was accepted");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("completionMod"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let o = Command::new(&check).arg(manifest()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let job: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(job["completionMode"], "Indexed", "{job}");
    let n = job["completions"].as_u64().unwrap() as usize;
    assert!(n >= 2, "{job}");
    assert_eq!(
        job["command"],
        serde_json::json!(["/bin/sh", "-c"]),
        "{job}"
    );
    let mut script = job["args"][0].as_str().unwrap().to_string();
    assert!(script.contains("JOB_COMPLETION_INDEX"), "{script}");

    // The image is the one the Dockerfile says it builds.
    let image = job["image"].as_str().unwrap();
    let dockerfile = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    assert!(
        dockerfile.contains(&format!("docker build -t {image} .")),
        "the Dockerfile does not build {image}"
    );

    // The volumes as directories: the configMap holds experiment.toml (the
    // manifest's `kubectl create configmap ... --from-file=experiment.toml=...`).
    assert!(text.contains("--from-file=experiment.toml="));
    let mut results = None;
    for m in job["mounts"].as_array().unwrap() {
        let (path, source) = (
            m["mountPath"].as_str().unwrap(),
            m["source"].as_str().unwrap(),
        );
        let local = dir.join(m["name"].as_str().unwrap());
        std::fs::create_dir_all(&local).unwrap();
        if source.starts_with("configMap:") {
            std::fs::write(local.join("experiment.toml"), EXPERIMENT).unwrap();
        } else {
            results = Some(local.clone());
        }
        // Every word of the command under the mount, moved to the directory.
        script = script
            .split(' ')
            .map(
                |w| match w.strip_prefix(path).filter(|r| r.starts_with('/')) {
                    Some(rest) => format!("{}{rest}", local.display()),
                    None => w.to_string(),
                },
            )
            .collect::<Vec<_>>()
            .join(" ");
    }
    let results = results.expect("a results volume");

    // Each pod's command as the kubelet would run it, `spdylab` on PATH.
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_spdylab"));
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for index in 0..n {
        let o = Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("{script} --no-calibration --no-har"))
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .env("PATH", &path)
            .output()
            .unwrap();
        ok(&o);
    }
    let mut slices: Vec<String> = std::fs::read_dir(&results)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    slices.sort();
    assert_eq!(slices.len(), n, "one directory per pod: {slices:?}");
    let merged = dir.arg("merged");
    let mut args = vec!["merge"];
    args.extend(slices.iter().map(String::as_str));
    args.extend(["--out", &merged]);
    ok(&spdylab(&args));

    let exp = dir.join("exp.toml");
    std::fs::write(&exp, EXPERIMENT).unwrap();
    let whole = dir.arg("whole");
    ok(&spdylab(&[
        "sweep",
        &exp.display().to_string(),
        "--out",
        &whole,
        "--no-calibration",
        "--no-har",
    ]));
    let (m, w) = (records(Path::new(&merged)), records(Path::new(&whole)));
    assert_eq!(w.len(), 2 * 2, "{w:?}");
    assert_eq!(m, w, "the merged pods against the one-machine sweep");
}

#[test]
fn the_dockerfile_copies_and_runs_paths_that_exist() {
    let text = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    let mut workdir = String::from("/");
    let mut built = Vec::new();
    let mut copies = 0;
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first().copied() {
            Some("FROM") => {
                let base = words[1];
                assert!(
                    base.starts_with("debian:") || base.starts_with("rust:1-bookworm"),
                    "a Debian base image: {line}"
                );
            }
            Some("WORKDIR") => workdir = words[1].to_string(),
            Some("RUN") if line.contains("cargo build") => {
                assert!(line.contains("--release") && line.contains("--locked"));
                // What that build leaves, relative to WORKDIR.
                built.push(format!("{workdir}/target/release/spdylab"));
            }
            Some("COPY") => {
                copies += 1;
                let (src, _dst) = (words[words.len() - 2], words[words.len() - 1]);
                if words[1].starts_with("--from=") {
                    assert!(built.iter().any(|b| b == src), "{src} is not built: {line}");
                } else {
                    assert!(repo().join(src).exists(), "{src} does not exist: {line}");
                }
            }
            _ => {}
        }
    }
    assert_eq!(copies, 2, "the sources in, the binary out");
    // The build stage's `cargo build` makes the binary named in the Cargo manifest.
    let manifest = std::fs::read_to_string(repo().join("crates/spdylab/Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"spdylab\""));
    // Whatever the .dockerignore leaves out, the build's inputs stay in.
    let ignore = std::fs::read_to_string(repo().join(".dockerignore")).unwrap();
    for needed in ["Cargo.lock", "Cargo.toml", "crates"] {
        assert!(
            !ignore.lines().any(|l| l.trim() == needed),
            ".dockerignore leaves out {needed}"
        );
    }
}
