//! Who Chromium runs as, and whether its own sandbox is on: decided once per
//! run, here and nowhere else.
//!
//! A page is outside input: Chromium must never run as root, and should run
//! inside its sandbox. spdylab itself always runs with euid 0 — as the real
//! root, or rootless as root of a user namespace of its own where only the
//! invoking user is mapped (`netns::userns`). So:
//!
//! - **Real root** (the uid below is mapped in our user namespace): Chromium
//!   runs as the system user `spdylab-chromium` if one exists (`useradd
//!   --system spdylab-chromium`; a uid nothing else uses), else as `nobody`
//!   (65534:65534). The switch (setgroups, setgid, setuid) happens in the
//!   child after it entered the testbed's namespaces, which needs root
//!   (`sys::run_as_on_exec`); its profile directory — its home and temporary
//!   directory too — is chowned to that user. Nothing else of Chromium's is
//!   a file: the DevTools pipe carries the HAR, bodies and frames to us.
//! - **Rootless**: Chromium runs as the invoking user (on the host); no
//!   other uid exists in our user namespace to switch to.
//!
//! Chromium's sandbox (its layer 1: user, PID and network namespaces per
//! renderer, made by an unprivileged process; no setuid helper is used) is
//! on when a process running as Chromium's user may make those namespaces;
//! that is checked once, by trying (`sys::try_unshare_as`). Chromium refuses
//! its sandbox as uid 0, so rootless (where Chromium is uid 0 of our user
//! namespace) it stays off. Where it is off, `--no-sandbox` is passed and one
//! line on stderr says why, once per run (`policy`). `SPDYLAB_CHROMIUM_SANDBOX=off`
//! turns it off where it could start (said in that line too).

use std::sync::OnceLock;

/// The user Chromium runs as when spdylab is the real root.
#[derive(Debug, Clone, PartialEq)]
pub struct User {
    pub name: String,
    pub uid: u32,
    pub gid: u32,
}

/// The decision: Chromium's user (None: as we are), and its sandbox on, or
/// off and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    pub user: Option<User>,
    pub sandbox: Result<(), String>,
}

/// The environment variable that, set to `off`, turns Chromium's sandbox
/// off where it could start (Chromium still runs as its own user): for a
/// kernel where the check passes but Chromium's sandbox still fails.
pub const SANDBOX_OFF: &str = "SPDYLAB_CHROMIUM_SANDBOX";

/// The dedicated system user preferred over `nobody`.
pub const DEDICATED_USER: &str = "spdylab-chromium";

/// `nobody`:`nogroup`, where /etc/passwd has no entry for it.
const NOBODY: u32 = 65534;

/// The namespaces Chromium's sandbox makes for each renderer (its
/// `NamespaceSandbox`).
const SANDBOX_NAMESPACES: libc::c_int =
    libc::CLONE_NEWUSER | libc::CLONE_NEWPID | libc::CLONE_NEWNET;

/// The decision for this run, made on first use; the first use of one that
/// leaves the sandbox off says why on stderr (one line).
pub fn policy() -> &'static Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    POLICY.get_or_init(|| {
        let p = decide();
        if let Some(line) = p.notice() {
            eprintln!("spdylab: {line}");
        }
        p
    })
}

impl Policy {
    /// The line to tell the user when the sandbox is off.
    pub fn notice(&self) -> Option<String> {
        let why = self.sandbox.as_ref().err()?;
        let who = match &self.user {
            Some(u) => format!("as {} (uid {})", u.name, u.uid),
            None => "as the invoking user".into(),
        };
        Some(format!("chromium runs {who} with --no-sandbox: {why}"))
    }
}

fn decide() -> Policy {
    if sys::geteuid() != 0 {
        return Policy {
            user: None,
            sandbox: sandbox_as(None, "this user"),
        };
    }
    let user = chromium_user(&std::fs::read_to_string("/etc/passwd").unwrap_or_default());
    let map = std::fs::read_to_string("/proc/self/uid_map").unwrap_or_default();
    if !mapped(&map, user.uid) {
        return Policy {
            user: None,
            sandbox: Err(
                "spdylab runs rootless: its user namespace maps only your uid (as 0), so there is no \
                 other user to run Chromium as, and Chromium's sandbox refuses to start as uid 0"
                    .into(),
            ),
        };
    }
    let sandbox = match std::env::var(SANDBOX_OFF) {
        Ok(v) if v == "off" => Err(format!("{SANDBOX_OFF}=off")),
        _ => sandbox_as(Some((user.uid, user.gid)), &user.name),
    };
    Policy {
        user: Some(user),
        sandbox,
    }
}

/// Whether Chromium's sandbox can start as this user: its namespaces can be made.
fn sandbox_as(user: Option<(u32, u32)>, name: &str) -> Result<(), String> {
    sys::try_unshare_as(user, SANDBOX_NAMESPACES).map_err(|e| {
        format!(
            "its sandbox needs new user, PID and network namespaces, and {name} cannot make them here \
             (unshare: {e}; kernel.unprivileged_userns_clone or user.max_user_namespaces?)"
        )
    })
}

/// `spdylab-chromium` from /etc/passwd's text if there, else `nobody`
/// (with its group), else 65534:65534.
pub fn chromium_user(passwd: &str) -> User {
    let entry = |name: &str| {
        passwd.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() >= 4 && f[0] == name).then_some(())?;
            Some(User {
                name: name.to_string(),
                uid: f[2].parse().ok()?,
                gid: f[3].parse().ok()?,
            })
        })
    };
    entry(DEDICATED_USER)
        .filter(|u| u.uid != 0)
        .or_else(|| entry("nobody").filter(|u| u.uid != 0))
        .unwrap_or(User {
            name: "nobody".into(),
            uid: NOBODY,
            gid: NOBODY,
        })
}

/// Whether `uid` is mapped in a user namespace with this `uid_map`.
fn mapped(uid_map: &str, uid: u32) -> bool {
    uid_map.lines().any(|l| {
        let f: Vec<u64> = l
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        f.len() == 3 && (f[0]..f[0] + f[2]).contains(&u64::from(uid))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dedicated_user_is_preferred_then_nobody() {
        let nobody = "root:x:0:0::/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
        assert_eq!(
            chromium_user(nobody),
            User {
                name: "nobody".into(),
                uid: 65534,
                gid: 65534
            }
        );
        let both = format!("{nobody}spdylab-chromium:x:998:997::/nonexistent:/usr/sbin/nologin\n");
        assert_eq!(chromium_user(&both).uid, 998);
        assert_eq!(chromium_user(&both).gid, 997);
        // Never root, whatever the file says; no file: 65534.
        assert_eq!(chromium_user("nobody:x:0:0::/:/bin/sh\n").uid, 65534);
        assert_eq!(chromium_user("").name, "nobody");
    }

    #[test]
    fn a_uid_is_mapped_only_inside_a_range() {
        assert!(mapped("         0          0 4294967295\n", 65534));
        // spdylab rootless: only the invoking user, as 0.
        assert!(!mapped("         0       1000          1\n", 65534));
        assert!(mapped("0 1000 1\n1 100000 65536\n", 65534));
    }

    #[test]
    fn the_notice_says_who_and_why_only_when_off() {
        let mut p = Policy {
            user: Some(chromium_user("")),
            sandbox: Ok(()),
        };
        assert_eq!(p.notice(), None);
        p.sandbox = Err("because".into());
        assert_eq!(
            p.notice().unwrap(),
            "chromium runs as nobody (uid 65534) with --no-sandbox: because"
        );
    }
}
