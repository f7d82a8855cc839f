//! Running without root: before any thread starts, the process enters a new user
//! namespace in which it is root, so that it may create network namespaces.

use std::io;

/// If not root, enters a user namespace mapping our uid and gid to root.
/// Must be called before any other thread exists.
pub fn enter_if_unprivileged() -> io::Result<()> {
    let (uid, gid) = (sys::geteuid(), sys::getegid());
    if uid == 0 {
        return Ok(());
    }
    if let Err(e) = sys::unshare(libc::CLONE_NEWUSER) {
        return Err(io::Error::new(
            e.kind(),
            format!(
                "not root, and cannot enter a user namespace ({e}); run as root, or allow \
                 unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)"
            ),
        ));
    }
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("0 {uid} 1"))?;
    std::fs::write("/proc/self/gid_map", format!("0 {gid} 1"))?;
    Ok(())
}

/// Whether this process is in a user namespace other than the initial one
/// (the initial one maps every uid to itself: "0 0 4294967295"). In ours only
/// the caller's uid is mapped (as root): servers that switch their workers to
/// another user (nginx, h2o) cannot.
pub fn inside() -> bool {
    match std::fs::read_to_string("/proc/self/uid_map") {
        Ok(map) => map.split_whitespace().collect::<Vec<_>>() != ["0", "0", "4294967295"],
        Err(_) => false,
    }
}
