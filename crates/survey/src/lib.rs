//! `survey`: what a server speaks (`spdylab probe HOST[:PORT]`). Each check
//! is one connection of its own, all at once, each within the timeout:
//! HTTP/1.1 over TLS and in clear, h2 and SPDY/3.1 by ALPN (with the
//! settings the server sends first), SPDY/3.1 by NPN and TLS 1.0/1.1 through
//! `openssl s_client` (rustls has neither), h2c by `Upgrade` and by prior
//! knowledge, h3 by `Alt-Svc` and by a QUIC handshake with ALPN `h3` (with its
//! control stream's SETTINGS), TLS 1.2 and 1.3 each alone; the certificate's
//! names and whether it verifies (against the system's roots, and a `--ca`),
//! recorded but never rejected; the `Server` header. Only the address asked
//! for is contacted: TLS checks on its port (443 by default), cleartext ones
//! on the same port, or 80 when no port is given, or `http_port`.
//! `lab::probe` is something else: one page load of a Trial. `text`: the
//! survey as a table.

mod openssl;
mod quic;
mod tcp;
pub mod text;
mod tls;
pub mod wire;

use std::cell::Cell;
use std::fmt;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub use tls::Verdict;
pub use wire::Settings;

/// Why a check found nothing: a few words.
pub(crate) type Missing = String;

/// `HOST[:PORT]` as the user gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: String,
    pub port: Option<u16>,
}

impl std::str::FromStr for Target {
    type Err = String;

    /// `example.test`, `example.test:8443`, `127.0.0.1:8443`, `[::1]:8443`, `::1`.
    fn from_str(s: &str) -> Result<Target, String> {
        let bad = |why: &str| format!("'{s}' is not HOST[:PORT]: {why}");
        if s.contains("://") || s.contains('/') {
            return Err(bad("give a host and a port, not a URL"));
        }
        let (host, port) = if let Some(rest) = s.strip_prefix('[') {
            let (host, after) = rest.split_once(']').ok_or_else(|| bad("no closing ']'"))?;
            match after {
                "" => (host, None),
                p => (
                    host,
                    Some(
                        p.strip_prefix(':')
                            .ok_or_else(|| bad("expected ':PORT' after ']'"))?,
                    ),
                ),
            }
        } else if s.matches(':').count() > 1 {
            (s, None) // a bare IPv6 address
        } else {
            match s.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (s, None),
            }
        };
        if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c == '@') {
            return Err(bad("no host"));
        }
        if s.matches(':').count() > 1 && !s.starts_with('[') && host.parse::<IpAddr>().is_err() {
            return Err(bad(
                "an IPv6 address with a port goes in brackets: [::1]:443",
            ));
        }
        let port = match port {
            None => None,
            Some(p) => Some(
                p.parse::<u16>()
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or_else(|| bad(&format!("port '{p}' is not a number from 1 to 65535")))?,
            ),
        };
        Ok(Target {
            host: host.to_string(),
            port,
        })
    }
}

/// One survey, as asked.
#[derive(Debug, Clone)]
pub struct SurveyRequest {
    pub target: Target,
    /// Cleartext checks on this port (default: the target's port, or 80).
    pub http_port: Option<u16>,
    /// The name for SNI, the certificate check and `Host` (default: the target's host).
    pub server_name: Option<String>,
    /// Also check the chain against this file's certificates.
    pub ca: Option<PathBuf>,
    /// Each check's time.
    pub timeout: Duration,
}

/// Why a survey could not be made.
#[derive(Debug)]
pub enum SurveyError {
    /// Bad input: `--ca` unreadable, a server name that is no name.
    Usage(String),
    /// The host name does not resolve.
    Resolve(String),
}

impl fmt::Display for SurveyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SurveyError::Usage(m) | SurveyError::Resolve(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SurveyError {}

/// One check's result.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Check {
    /// A stable name: `tls`, `http1_tls`, `h2`, `spdy3`, `spdy3_npn`, `http1`,
    /// `h2c_upgrade`, `h2c_prior`, `h3_alt_svc`, `h3`, `tls1.0` … `tls1.3`.
    pub key: &'static str,
    /// For people: "h2 (ALPN)".
    pub name: &'static str,
    /// `tcp` or `udp`, and the port (None: derived from other checks).
    pub transport: &'static str,
    pub port: Option<u16>,
    /// Some(true) offered, Some(false) not, None not tested.
    pub offered: Option<bool>,
    /// The server accepted a connection (or answered QUIC) for this check.
    pub answered: bool,
    /// What was seen, or why not.
    pub detail: String,
    /// The limits the server sent first (h2, h2c, spdy3, h3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
}

/// The certificate the server presented.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Certificate {
    /// Subject alternative names (DNS names and IP addresses).
    pub names: Vec<String>,
    /// Certificates in the chain sent (the leaf first).
    pub chain: usize,
    /// Against the system's roots.
    pub system_roots: Verdict,
    /// Against `--ca FILE`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca: Option<Verdict>,
}

/// What a server speaks.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Survey {
    pub host: String,
    pub address: IpAddr,
    pub tls_port: u16,
    pub http_port: u16,
    pub server_name: String,
    pub timeout_ms: u64,
    pub checks: Vec<Check>,
    pub certificate: Option<Certificate>,
    /// The `Server` header of the first HTTP response (h1, h2c Upgrade or SPDY).
    pub server: Option<String>,
    /// The `Alt-Svc` header, if any response had one.
    pub alt_svc: Option<String>,
}

impl Survey {
    /// Whether the server answered any check at all.
    pub fn answered(&self) -> bool {
        self.checks.iter().any(|c| c.answered)
    }

    /// The check named `key`.
    pub fn check(&self, key: &str) -> Option<&Check> {
        self.checks.iter().find(|c| c.key == key)
    }

    /// The protocols offered, by key ("http1_tls", "h2", …), in order.
    pub fn offered(&self) -> Vec<&'static str> {
        self.checks
            .iter()
            .filter(|c| c.offered == Some(true))
            .map(|c| c.key)
            .collect()
    }

    /// The survey as one JSON object (`probe --json`), with its schema.
    pub fn document(&self) -> serde_json::Value {
        // Plain fields, string keys: serializing cannot fail.
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("schema".into(), 1.into());
        }
        v
    }
}

/// A check's time, and whether the server answered it.
pub(crate) struct Timer {
    deadline: Instant,
    timeout: Duration,
    pub answered: Cell<bool>,
}

impl Timer {
    fn new(timeout: Duration) -> Timer {
        Timer {
            deadline: Instant::now() + timeout,
            timeout,
            answered: Cell::new(false),
        }
    }

    /// The time left, or Err once it is over.
    pub fn left(&self) -> Result<Duration, Missing> {
        match self.deadline.checked_duration_since(Instant::now()) {
            Some(d) if !d.is_zero() => Ok(d),
            _ => Err(self.expired()),
        }
    }

    pub fn expired(&self) -> String {
        format!(
            "no answer within {}",
            link::units::format_duration(self.timeout)
        )
    }
}

/// What a check found.
#[derive(Debug, Default)]
pub(crate) struct Found {
    pub detail: String,
    pub settings: Option<Settings>,
    /// A response's head, for `Server` and `Alt-Svc`.
    pub head: Option<Vec<(String, String)>>,
    pub seen: Option<tls::Seen>,
}

pub(crate) type Outcome = Result<Found, Missing>;

/// Where and how the checks connect.
#[derive(Clone)]
pub(crate) struct Plan {
    pub tls_addr: SocketAddr,
    pub http_addr: SocketAddr,
    pub name: String,
    pub server_name: rustls::pki_types::ServerName<'static>,
    pub trust: tls::Trust,
}

fn run_check(
    key: &'static str,
    name: &'static str,
    transport: &'static str,
    port: Option<u16>,
    timeout: Duration,
    f: impl FnOnce(&Timer) -> Result<Outcome, NotTested>,
) -> (Check, Option<Found>) {
    let timer = Timer::new(timeout);
    let result = f(&timer);
    let mut check = Check {
        key,
        name,
        transport,
        port,
        offered: None,
        answered: timer.answered.get(),
        detail: String::new(),
        settings: None,
    };
    match result {
        Err(NotTested(why)) => {
            check.detail = why;
            (check, None)
        }
        Ok(Ok(mut found)) => {
            check.offered = Some(true);
            check.detail = std::mem::take(&mut found.detail);
            check.settings = found.settings.take();
            (check, Some(found))
        }
        Ok(Err(reason)) => {
            check.offered = Some(false);
            check.detail = reason;
            (check, None)
        }
    }
}

/// Why a check was not made (openssl's, without openssl).
pub(crate) struct NotTested(pub String);

/// Runs every check against the target.
pub fn survey(request: &SurveyRequest) -> Result<Survey, SurveyError> {
    if request.timeout.is_zero() {
        return Err(SurveyError::Usage("--timeout must be above 0".into()));
    }
    let target = &request.target;
    let tls_port = target.port.unwrap_or(443);
    let http_port = request.http_port.or(target.port).unwrap_or(80);
    let address = match target.host.parse::<IpAddr>() {
        Ok(ip) => ip,
        Err(_) => (target.host.as_str(), tls_port)
            .to_socket_addrs()
            .map_err(|e| SurveyError::Resolve(format!("{}: {e}", target.host)))?
            .next()
            .ok_or_else(|| SurveyError::Resolve(format!("{}: no address", target.host)))?
            .ip(),
    };
    let name = request
        .server_name
        .clone()
        .unwrap_or_else(|| target.host.clone());
    let server_name = rustls::pki_types::ServerName::try_from(name.clone())
        .map_err(|e| SurveyError::Usage(format!("--sni '{name}': {e}")))?;
    let trust = tls::Trust::new(request.ca.as_deref()).map_err(SurveyError::Usage)?;
    let plan = Plan {
        tls_addr: SocketAddr::new(address, tls_port),
        http_addr: SocketAddr::new(address, http_port),
        name: name.clone(),
        server_name,
        trust,
    };
    let t = request.timeout;
    let (tp, hp) = (Some(tls_port), Some(http_port));

    type Job<'a> = Box<dyn FnOnce() -> (Check, Option<Found>) + Send + 'a>;
    let p = &plan;
    let jobs: Vec<Job> = vec![
        Box::new(move || {
            run_check("tls", "TLS handshake", "tcp", tp, t, |tm| {
                Ok(tcp::tls_handshake(p, tm))
            })
        }),
        Box::new(move || {
            run_check("http1_tls", "http/1.1 (TLS)", "tcp", tp, t, |tm| {
                Ok(tcp::http1_tls(p, tm))
            })
        }),
        Box::new(move || run_check("h2", "h2 (ALPN)", "tcp", tp, t, |tm| Ok(tcp::h2(p, tm)))),
        Box::new(move || {
            run_check("spdy3", "spdy/3.1 (ALPN)", "tcp", tp, t, |tm| {
                Ok(tcp::spdy3(p, tm))
            })
        }),
        Box::new(move || {
            run_check("spdy3_npn", "spdy/3.1 (NPN)", "tcp", tp, t, |tm| {
                openssl::npn(p, tm)
            })
        }),
        Box::new(move || {
            run_check("http1", "http/1.1 (cleartext)", "tcp", hp, t, |tm| {
                Ok(tcp::http1(p, tm))
            })
        }),
        Box::new(move || {
            run_check("h2c_upgrade", "h2c (Upgrade)", "tcp", hp, t, |tm| {
                Ok(tcp::h2c_upgrade(p, tm))
            })
        }),
        Box::new(move || {
            run_check("h2c_prior", "h2c (prior knowledge)", "tcp", hp, t, |tm| {
                Ok(tcp::h2c_prior(p, tm))
            })
        }),
        Box::new(move || {
            run_check("h3", "h3 (QUIC)", "udp", tp, t, |tm| {
                Ok(quic::h3(p, tls_port, tm))
            })
        }),
        Box::new(move || {
            run_check("tls1.0", "TLS 1.0", "tcp", tp, t, |tm| {
                openssl::version(p, "-tls1", tm)
            })
        }),
        Box::new(move || {
            run_check("tls1.1", "TLS 1.1", "tcp", tp, t, |tm| {
                openssl::version(p, "-tls1_1", tm)
            })
        }),
        Box::new(move || {
            run_check("tls1.2", "TLS 1.2", "tcp", tp, t, |tm| {
                Ok(tcp::tls_version(p, &rustls::version::TLS12, tm))
            })
        }),
        Box::new(move || {
            run_check("tls1.3", "TLS 1.3", "tcp", tp, t, |tm| {
                Ok(tcp::tls_version(p, &rustls::version::TLS13, tm))
            })
        }),
    ];
    let mut results: Vec<(Check, Option<Found>)> = std::thread::scope(|s| {
        let handles: Vec<_> = jobs.into_iter().map(|j| s.spawn(j)).collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a survey check panicked"))
            .collect()
    });

    // What the responses said.
    let header = |name: &str| {
        results.iter().find_map(|(_, f)| {
            f.as_ref()?
                .head
                .as_ref()?
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        })
    };
    let server = header("server");
    let alt_svc = header("alt-svc");
    let certificate = results
        .iter()
        .find_map(|(_, f)| f.as_ref()?.seen.clone())
        .map(|seen| Certificate {
            names: seen
                .chain
                .first()
                .map(|leaf| {
                    wire::subject_alt_names(leaf)
                        .iter()
                        .map(|n| n.to_string())
                        .collect()
                })
                .unwrap_or_default(),
            chain: seen.chain.len(),
            system_roots: seen.system,
            ca: seen.ca,
        });

    // h3 by Alt-Svc, and QUIC on the port it names if that is another one.
    let h3_ports = alt_svc
        .as_deref()
        .map(wire::alt_svc_h3_ports)
        .unwrap_or_default();
    let mut alt = Check {
        key: "h3_alt_svc",
        name: "h3 (Alt-Svc)",
        transport: "tcp",
        port: tp,
        offered: Some(!h3_ports.is_empty()),
        answered: results
            .iter()
            .any(|(c, _)| c.answered && c.transport == "tcp"),
        detail: match (&alt_svc, h3_ports.is_empty()) {
            (Some(v), false) => v.clone(),
            (Some(v), true) => format!("no h3 on this host in Alt-Svc: {v}"),
            (None, _) => "no Alt-Svc header".into(),
        },
        settings: None,
    };
    if alt.offered == Some(false) && server.is_none() && !results.iter().any(|(_, f)| f.is_some()) {
        alt.detail = "no HTTP response to read it from".into();
    }
    let at = results.iter().position(|(c, _)| c.key == "h3").unwrap();
    if let Some(&port) = h3_ports.iter().find(|p| **p != tls_port) {
        if results[at].0.offered != Some(true) {
            let (check, _) = run_check("h3", "h3 (QUIC)", "udp", Some(port), t, |tm| {
                Ok(quic::h3(&plan, port, tm))
            });
            results[at].0 = check;
        }
    }
    let mut checks: Vec<Check> = results.into_iter().map(|(c, _)| c).collect();
    checks.insert(at, alt);

    Ok(Survey {
        host: target.host.clone(),
        address,
        tls_port,
        http_port,
        server_name: name,
        timeout_ms: request.timeout.as_millis() as u64,
        checks,
        certificate,
        server,
        alt_svc,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_as_host_and_optional_port() {
        let t = |s: &str| s.parse::<Target>();
        assert_eq!(
            t("127.0.0.1:8443").unwrap(),
            Target {
                host: "127.0.0.1".into(),
                port: Some(8443)
            }
        );
        assert_eq!(t("example.test").unwrap().port, None);
        assert_eq!(t("[::1]:443").unwrap().host, "::1");
        assert_eq!(t("::1").unwrap().port, None);
        for bad in [
            "",
            ":443",
            "host:",
            "host:0",
            "host:70000",
            "host:https",
            "https://host/",
            "[::1",
            "fe80::1:x:443",
        ] {
            assert!(t(bad).is_err(), "{bad}");
        }
        assert!(t("host:x").unwrap_err().contains("port 'x'"));
    }
}
