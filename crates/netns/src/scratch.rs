//! Private scratch space for what spdylab starts (servers' configs, docroots
//! and logs; Chromium's profiles): a tmpfs in a private mount namespace where
//! there is root, the temporary directory otherwise; each directory removed
//! on drop.

use std::io;
use std::path::PathBuf;

/// Where Scratch directories go when `private_scratch_root` succeeded.
static SCRATCH_ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// The mount point of the private scratch tmpfs (an empty directory on the host).
const SCRATCH_MOUNT: &str = "/run/spdylab";

/// Gives this process a private mount namespace with a fresh tmpfs at
/// /run/spdylab for every Scratch directory (servers' configs, docroots and
/// logs; Chromium's profiles): the servers and browsers we confine see it, the
/// host does not, and it vanishes with the last of us — even after `kill -9`,
/// where no destructor runs. Must be called before any thread exists. Returns
/// false (and Scratch falls back to the temp directory, cleaned on drop) where
/// it cannot be done, e.g. without root.
pub fn private_scratch_root() -> bool {
    let dir = PathBuf::from(SCRATCH_MOUNT);
    let ok = sys::geteuid() == 0
        && sys::unshare(libc::CLONE_NEWNS).is_ok()
        // Nothing we mount propagates back to the host.
        && sys::mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None).is_ok()
        && std::fs::create_dir_all(&dir).is_ok()
        && sys::mount(
            Some(c"spdylab"),
            c"/run/spdylab",
            Some(c"tmpfs"),
            libc::MS_NOSUID | libc::MS_NODEV,
            Some(c"mode=0755"),
        )
        .is_ok();
    ok && SCRATCH_ROOT.set(dir).is_ok()
}

/// The mode of a Scratch directory: 0700 (ours alone) unless we are the real
/// root, whose servers drop their workers to another user (www-data, nobody)
/// that must read the docroot: then 0755, inside the private tmpfs that no
/// process outside our mount namespace sees. Keys in it are 0600 either way.
fn scratch_mode() -> u32 {
    let root = sys::geteuid() == 0;
    if root && !crate::userns::inside() {
        0o755
    } else {
        0o700
    }
}

/// A private directory for a server's config, docroot and logs, removed on drop;
/// readable by the unprivileged workers servers drop to (see `scratch_mode`).
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(what: &str) -> io::Result<Scratch> {
        static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let root = SCRATCH_ROOT
            .get()
            .cloned()
            .unwrap_or_else(std::env::temp_dir);
        let dir = root.join(format!("spdylab-{what}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&root)?;
        // Ours alone: creating fails if someone made it in between.
        std::fs::create_dir(&dir)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(scratch_mode()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
