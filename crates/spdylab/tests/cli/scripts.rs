//! Every script in scripts/ answers `--help` with its usage and does nothing
//! else: a user asking a measurement script what it does must not start it
//! (`fuzz.sh --help` once began updating the crates.io index, and
//! `fidelity.sh --help` began measuring).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn every_script_answers_help_with_its_usage_and_runs_nothing() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("scripts/ is there")
        .map(|e| e.expect("an entry").path())
        .collect();
    names.sort();
    assert!(names.len() > 10, "{names:?}");
    for path in names {
        let start = Instant::now();
        let mut child = Command::new(&path)
            .arg("--help")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // A script that ignores --help and starts its work is stopped
        // and named, not waited for.
        while child.try_wait().expect("waitable").is_none() {
            if start.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                panic!("{}: --help still running after 30 s", path.display());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().expect("its output");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}: --help exited {:?}: {}",
            path.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.to_lowercase().contains("usage") && text.lines().count() >= 2,
            "{}: --help printed no usage:\n{text}",
            path.display()
        );
    }
}
