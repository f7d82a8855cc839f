//! Where `serve` puts its CA certificate when no `--ca FILE` is given: in a
//! directory of this user alone (`$TMPDIR/spdylab-ca-UID/`, mode 0700), as
//! `ca-PID.pem`, locked (flock) for as long as the server lives. A normal exit
//! removes it; after `kill -9` the lock dies with the process, and the next
//! `serve` of the same user removes every file whose lock it can take — so no
//! certificate of a dead server survives the next run.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The directory of this user's temporary CA files.
pub fn dir() -> PathBuf {
    let uid = sys::geteuid();
    std::env::temp_dir().join(format!("spdylab-ca-{uid}"))
}

/// A CA file of a live server: removed on drop; while it exists, its lock says
/// that its server lives.
pub struct CaFile {
    path: PathBuf,
    _lock: File,
}

impl CaFile {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for CaFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Takes the lock of `file` without waiting: whether it was free.
fn try_lock(file: &File) -> bool {
    sys::try_lock_exclusive(file)
}

/// Makes (or checks) the private directory: ours, a real directory, 0700.
fn private_dir(dir: &Path) -> io::Result<()> {
    match std::fs::create_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    let uid = sys::geteuid();
    if !meta.is_dir() || meta.uid() != uid {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "exists but is not a directory of this user (remove it, or give --ca FILE)",
        ));
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// Removes the CA files in `dir` whose server is gone (their lock is free);
/// returns how many.
pub fn clean_dead(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with("ca-") && name.ends_with(".pem")) {
            continue;
        }
        let path = entry.path();
        let Ok(file) = File::open(&path) else {
            continue;
        };
        if try_lock(&file) && std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Cleans `dir` of dead servers' files, then writes `pem` as `ca-PID.pem` in
/// it, locked until the returned CaFile is dropped (or the process dies).
pub fn write_in(dir: &Path, pem: &str) -> io::Result<CaFile> {
    let at = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", dir.display()));
    private_dir(dir).map_err(at)?;
    clean_dead(dir);
    let path = dir.join(format!("ca-{}.pem", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(at)?;
    if !try_lock(&file) {
        let _ = std::fs::remove_file(&path);
        return Err(at(io::Error::other("cannot lock the new CA file")));
    }
    let ca = CaFile {
        path,
        _lock: file.try_clone()?,
    };
    file.write_all(pem.as_bytes())?;
    Ok(ca)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_file_stays_and_a_released_one_goes() {
        let dir = std::env::temp_dir().join(format!("ca-file-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let live = write_in(&dir, "PEM").unwrap();
        assert_eq!(std::fs::read_to_string(live.path()).unwrap(), "PEM");
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // Another open file description cannot take the live lock.
        assert_eq!(clean_dead(&dir), 0);
        assert!(live.path().exists());
        // A file nobody locks (its server died) goes.
        let dead = dir.join("ca-999999999.pem");
        std::fs::write(&dead, "old").unwrap();
        assert_eq!(clean_dead(&dir), 1);
        assert!(!dead.exists());
        let path = live.path().to_path_buf();
        drop(live);
        assert!(!path.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
