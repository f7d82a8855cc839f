//! libFuzzer target: arbitrary bytes as probes.jsonl, read by `read_probes`
//! (with and without repair) from a private directory in /dev/shm. Never a
//! panic; a bad complete line is an error naming the file and its line; every
//! record read writes back as a line that reads back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use results::{read_probes, ProbeRecord, PROBES_FILE};
use std::path::PathBuf;
use std::sync::OnceLock;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let base = if std::path::Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let d = base.join(format!("spdylab-fuzz-probes-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

fuzz_target!(|data: &[u8]| {
    let path = dir().join(PROBES_FILE);
    std::fs::write(&path, data).unwrap();
    match read_probes(dir(), false) {
        Ok(records) => {
            for r in &records {
                let line = r.to_line();
                let back: ProbeRecord = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("{line} does not read back: {e}"));
                assert_eq!(back.to_line(), line);
            }
            // Repair cuts a torn last line and keeps the complete ones.
            let repaired = read_probes(dir(), true).unwrap();
            assert_eq!(repaired.len(), records.len());
            let kept = std::fs::read(&path).unwrap();
            assert!(kept.is_empty() || kept.ends_with(b"\n"));
            assert!(data.starts_with(&kept));
        }
        Err(e) => {
            let e = e.to_string();
            assert!(e.contains("probes.jsonl:"), "{e}");
        }
    }
});
