//! Durability: the one way spdylab writes a file (or a directory) whole or not
//! at all. The bytes go to a temporary file beside the target, which is
//! fsync'd, renamed over the target, and then the directory holding it is
//! fsync'd, so that after a crash the target is either the old one or the new
//! one, whole, and its name survives. On any error the temporary is removed.
//! Neither function makes a missing parent directory: the caller does.
//! (Appends to probes.jsonl are not written whole: each line is appended and
//! fsync'd, see `campaign`.)

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Temporaries of one process are told apart by this (and by the pid from
/// other processes').
static NEXT: AtomicU64 = AtomicU64::new(0);

/// The directory holding `path` (`.` for a bare file name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A hidden temporary sibling of `path`, unique in this process.
fn temporary(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    parent(path).join(format!(".{name}.{}-{n}.tmp", std::process::id()))
}

/// fsyncs the directory `dir`, so that the names made in it survive a crash.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir).and_then(|d| d.sync_all())
}

/// Writes `bytes` to `path` whole or not at all: a temporary file in the same
/// directory, fsync'd, renamed over `path`, then the directory fsync'd. An
/// existing `path` is replaced atomically; on error no temporary is left.
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = temporary(path);
    let written = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    sync_dir(parent(path))
}

/// Writes the directory `dir` whole or not at all: `fill` writes it into a
/// temporary sibling; every file and directory in it is then fsync'd, it is
/// renamed to `dir`, and the parent fsync'd. `dir` must not exist or be empty
/// (an empty one is replaced atomically); on error the temporary is removed.
pub fn write_dir_whole(dir: &Path, fill: impl FnOnce(&Path) -> io::Result<()>) -> io::Result<()> {
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} exists and is not empty", dir.display()),
        ));
    }
    let tmp = temporary(dir);
    let written = std::fs::create_dir(&tmp)
        .and_then(|()| fill(&tmp))
        .and_then(|()| sync_tree(&tmp))
        .and_then(|()| std::fs::rename(&tmp, dir));
    if written.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    written?;
    sync_dir(parent(dir))
}

/// fsyncs every file and directory under `dir`, and `dir`.
fn sync_tree(dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            sync_tree(&entry.path())?;
        } else {
            File::open(entry.path())?.sync_all()?;
        }
    }
    sync_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh scratch directory for one test.
    fn scratch(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("durable-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_file_appears_whole_and_alone() {
        let d = scratch("whole");
        let path = d.join("out.json");
        write_whole(&path, b"{\"a\": 1}\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{\"a\": 1}\n");
        assert_eq!(names(&d), ["out.json"]);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn an_existing_file_is_replaced() {
        let d = scratch("replace");
        let path = d.join("out.json");
        std::fs::write(&path, "old, and longer than the new one").unwrap();
        let before = std::fs::File::open(&path).unwrap();
        write_whole(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(names(&d), ["out.json"]);
        // Replaced by a rename, not rewritten in place: an open reader keeps
        // the old file whole.
        assert_eq!(
            std::io::read_to_string(before).unwrap(),
            "old, and longer than the new one"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_failed_write_leaves_nothing() {
        let d = scratch("missing");
        // The directory does not exist: nothing is made.
        assert!(write_whole(&d.join("no/such/out.json"), b"x").is_err());
        assert!(!d.join("no").exists());
        // The target is a non-empty directory: the rename fails after the
        // temporary was written, and the temporary is removed.
        std::fs::create_dir_all(d.join("taken/x")).unwrap();
        assert!(write_whole(&d.join("taken"), b"x").is_err());
        assert_eq!(names(&d), ["taken"]);
        assert_eq!(names(&d.join("taken")), ["x"]);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_directory_appears_whole_or_not_at_all() {
        let d = scratch("dir");
        let out = d.join("site");
        write_dir_whole(&out, |tmp| {
            std::fs::create_dir(tmp.join("bodies"))?;
            std::fs::write(tmp.join("bodies/0"), "body")?;
            std::fs::write(tmp.join("site.json"), "{}")
        })
        .unwrap();
        assert_eq!(names(&d), ["site"]);
        assert_eq!(names(&out), ["bodies", "site.json"]);
        // A fill that fails half-way leaves neither the target nor a temporary.
        let failed = d.join("failed");
        let e = write_dir_whole(&failed, |tmp| {
            std::fs::write(tmp.join("site.json"), "{}")?;
            Err(io::Error::other("disk full"))
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "disk full");
        assert_eq!(names(&d), ["site"]);
        // A non-empty target is refused; an empty one is replaced.
        assert!(write_dir_whole(&out, |_| Ok(())).is_err());
        assert_eq!(names(&out), ["bodies", "site.json"]);
        std::fs::create_dir(&failed).unwrap();
        write_dir_whole(&failed, |tmp| std::fs::write(tmp.join("a"), "a")).unwrap();
        assert_eq!(names(&failed), ["a"]);
        let _ = std::fs::remove_dir_all(&d);
    }
}
