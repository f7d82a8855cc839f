//! `spdylab record`: one page load in headless Chromium over DevTools, written
//! as a HAR 1.2 file with bodies and initiators, ready for `spdylab import`.
//! Either a site served by the built-in server inside a testbed (Chromium in
//! the client namespace, as `--client chromium`), or a URL of a server the
//! user runs, loaded by Chromium on this host, which then reaches only the
//! page's own host and port and the hosts allowed (`--allow-host`; the rest
//! is blocked, counted and named: `browser::allow`). The HAR is written whole
//! or not at all (`durable::write_whole`).

use crate::testbed_server::{self, Placement, ServerSetup};
use netns::{Side, Testbed, TestbedSpec};
use proto::Protocol;
use server::Ca;
use site::Site;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use browser::allow::Reach as AllowHost;
pub use browser::{RecordSummary, Recording};

/// An `--allow-host` entry: HOST or HOST:PORT.
pub fn parse_allow_host(s: &str) -> Result<AllowHost, String> {
    browser::allow::parse_reach(s)
}

/// Where the page comes from.
pub enum Source {
    /// A site served by the built-in server in a testbed; Chromium loads it
    /// from the client namespace over `protocol`.
    Testbed {
        site: Site,
        protocol: Protocol,
        testbed: Box<TestbedSpec>,
    },
    /// A URL of a server the user runs, loaded by Chromium on this host with
    /// the system's resolver. `protocol`: http (h1 in clear), https (h1 over
    /// TLS) or h2 (TLS; ALPN decides: HTTP/1.1 if the server has no h2).
    Host {
        url: String,
        protocol: Protocol,
        /// Accept any certificate.
        insecure: bool,
        /// SPKI hashes of certificates to trust besides the system's (`--ca`).
        spki: Vec<String>,
        /// Names mapped to an address (and port): Chromium's host rules (`--map`).
        map: Vec<(String, String)>,
        /// What Chromium may reach: the page's host and port, and `--allow-host`.
        allow: Vec<AllowHost>,
    },
}

/// Why a recording failed: bad input (exit 2) or the load failed (exit 1).
#[derive(Debug)]
pub enum RecordError {
    Usage(String),
    Failed(String),
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordError::Usage(m) | RecordError::Failed(m) => f.write_str(m),
        }
    }
}

fn failed(what: &str) -> impl Fn(io::Error) -> RecordError + '_ {
    move |e| RecordError::Failed(format!("{what}: {e}"))
}

/// The SPKI hashes of the certificates of a PEM file (`--ca`), for Chromium.
pub fn spki_of_pem(pem: &str) -> Result<Vec<String>, String> {
    server::spki_of_pem(pem)
}

/// The URL of a site's page over `protocol`.
pub fn page_url(site: &Site, protocol: Protocol) -> String {
    let root = site.root();
    let scheme = if protocol.tls() { "https" } else { "http" };
    format!("{scheme}://{}{}", root.host, root.path)
}

/// Records one page load; `progress` gets a line at each step.
pub fn record(
    source: &Source,
    timeout: Duration,
    progress: &mut dyn FnMut(&str),
) -> Result<Recording, RecordError> {
    let protocol = match source {
        Source::Testbed { protocol, .. } | Source::Host { protocol, .. } => *protocol,
    };
    if let Some(why) = browser::refuses(protocol) {
        return Err(RecordError::Usage(format!("--protocol {protocol}: {why}")));
    }
    if protocol == Protocol::H3 {
        return Err(RecordError::Usage(
            "--protocol h3: record over http, https or h2 (a recording holds no transport)".into(),
        ));
    }
    // Before any testbed: a missing Chromium names its Debian package.
    browser::find().map_err(|e| RecordError::Failed(e.to_string()))?;
    match source {
        Source::Testbed {
            site,
            protocol,
            testbed,
        } => in_testbed(site, *protocol, testbed, timeout, progress),
        Source::Host {
            url,
            protocol,
            insecure,
            spki,
            map,
            allow,
        } => {
            let opts = browser::ChromiumOptions {
                protocol: *protocol,
                url: url.clone(),
                resolve: Vec::new(),
                spki: spki.clone(),
                timeout,
                allow: allow.clone(),
                insecure: *insecure,
                map: map.clone(),
                ..browser::ChromiumOptions::default()
            };
            let allowed: Vec<String> = allow.iter().map(|a| a.to_string()).collect();
            progress(&format!(
                "chromium: loading {url}, reaching only {}",
                allowed.join(", ")
            ));
            let profile = browser::new_profile().map_err(failed("chromium profile"))?;
            let mut cmd = browser::command(&opts, &profile).map_err(failed("chromium"))?;
            // Not confined in a testbed: tied to us by its death signal alone.
            sys::die_with_parent_on_exec(&mut cmd);
            let mut b = browser::Browser::spawn(cmd, profile).map_err(failed("chromium"))?;
            b.record_page(&opts)
                .map_err(|e| RecordError::Failed(format!("chromium: {e}")))
        }
    }
}

fn in_testbed(
    site: &Site,
    protocol: Protocol,
    spec: &TestbedSpec,
    timeout: Duration,
    progress: &mut dyn FnMut(&str),
) -> Result<Recording, RecordError> {
    let Placement {
        resolve,
        testbed: tb_spec,
        addresses,
    } = testbed_server::place(site, spec);
    progress(&format!(
        "testbed: {} host(s) of {} on {} address(es)",
        resolve.len(),
        site.name,
        addresses.len()
    ));
    let mut testbed = Testbed::start(tb_spec).map_err(failed("testbed"))?;
    let ca = Ca::new().map_err(failed("CA"))?;
    let mut server = testbed_server::start(
        &mut testbed,
        &ca,
        &addresses,
        &ServerSetup {
            site,
            kind: crate::trial::ServerKind::Builtin,
            knobs: server::Knobs::default(),
            keepalive: None,
            access_log: false,
            stop_after: None,
            thread_name: "record-srv",
        },
    )
    .map_err(failed("server"))?;
    let opts = browser::ChromiumOptions {
        protocol,
        url: page_url(site, protocol),
        resolve: resolve.iter().map(|(h, a)| (h.clone(), *a)).collect(),
        spki: ca.spki_list(),
        timeout,
        allow: Vec::new(),
        insecure: false,
        map: Vec::new(),
        ..browser::ChromiumOptions::default()
    };
    progress(&format!("chromium: loading {} over {protocol}", opts.url));
    let recording = (|| {
        let profile = browser::new_profile().map_err(failed("chromium profile"))?;
        let mut cmd = browser::command(&opts, &profile).map_err(failed("chromium"))?;
        testbed.confine(Side::Client, &mut cmd);
        let mut b = browser::Browser::spawn(cmd, profile).map_err(failed("chromium"))?;
        b.record_page(&opts)
            .map_err(|e| RecordError::Failed(format!("chromium: {e}")))
    })();
    server.stop();
    drop(server);
    testbed.shutdown().map_err(failed("testbed"))?;
    recording
}

/// The HAR file `--out` names: `out` itself when it ends in `.har`, else
/// `out/page.har`.
pub fn har_path(out: &Path) -> PathBuf {
    if out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("har"))
    {
        out.to_path_buf()
    } else {
        out.join("page.har")
    }
}

/// Writes `har` to `path` whole or not at all (`durable::write_whole`; the
/// directory is made if missing).
pub fn write_har(path: &Path, har: &serde_json::Value) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let mut bytes = serde_json::to_vec_pretty(har)?;
    bytes.push(b'\n');
    results::durable::write_whole(path, &bytes)
}

/// What `spdylab record` asks for: a URL, or a site (exactly one).
pub struct Request {
    pub url: Option<String>,
    pub site: Option<String>,
    /// Default: h2, or http for an http:// URL.
    pub protocol: Option<Protocol>,
    /// With a site: its layout (default: origin) and seed.
    pub layout: Option<site::Layout>,
    pub site_seed: u64,
    /// With a URL: a PEM file of certificates to trust (`--ca`).
    pub ca: Option<PathBuf>,
    pub insecure: bool,
    pub map: Vec<(String, String)>,
    /// With a URL: hosts Chromium may reach besides the page's own (`--allow-host`).
    pub allow: Vec<AllowHost>,
}

/// `--map HOST=ADDR[:PORT]`: a host name and where Chromium connects for it.
pub fn parse_map(s: &str) -> Result<(String, String), String> {
    let ok = |x: &str| !x.is_empty() && !x.contains([',', ' ', '=']);
    match s.split_once('=') {
        Some((h, t)) if ok(h) && ok(t) => Ok((h.to_string(), t.to_string())),
        _ => Err(format!("'{s}': give HOST=ADDR or HOST=ADDR:PORT")),
    }
}

/// Where the request's page comes from. `link` gives the link flags: with a
/// URL none may be given; with a site they make its testbed. Errors name
/// the flag.
pub fn source<E: From<RecordError>>(
    req: &Request,
    link: impl FnOnce() -> Result<crate::trial::LinkChoice, E>,
) -> Result<Source, E> {
    let usage = |m: String| E::from(RecordError::Usage(m));
    let flag = |k: &str| format!("--{}", k.replace('_', "-"));
    match (&req.url, &req.site) {
        (Some(url), _) => {
            let given: Vec<String> = link()?.given().map(flag).collect();
            if !given.is_empty() {
                return Err(usage(format!(
                    "{}: link flags need --site (a URL is loaded on this host, with no emulated link)",
                    given.join(", ")
                )));
            }
            let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
            let tls = match scheme.as_deref() {
                Some("https") => true,
                Some("http") => false,
                _ => {
                    return Err(usage(format!(
                        "URL '{url}': give an http:// or https:// URL"
                    )))
                }
            };
            let protocol = req
                .protocol
                .unwrap_or(if tls { Protocol::H2 } else { Protocol::Http });
            if protocol.tls() != tls {
                return Err(usage(format!(
                    "--protocol {protocol} does not go with the URL's scheme ({})",
                    scheme.unwrap_or_default()
                )));
            }
            let spki = match &req.ca {
                None => Vec::new(),
                Some(f) => std::fs::read_to_string(f)
                    .map_err(|e| e.to_string())
                    .and_then(|pem| spki_of_pem(&pem))
                    .map_err(|e| usage(format!("--ca {}: {e}", f.display())))?,
            };
            let page = browser::allow::page_reach(url).map_err(usage)?;
            let mut allow = vec![page];
            for a in &req.allow {
                if !allow.contains(a) {
                    allow.push(a.clone());
                }
            }
            Ok(Source::Host {
                url: url.clone(),
                protocol,
                insecure: req.insecure,
                spki,
                map: req.map.clone(),
                allow,
            })
        }
        (None, Some(name)) => {
            if req.ca.is_some() || req.insecure || !req.map.is_empty() || !req.allow.is_empty() {
                return Err(usage(
                    "--ca, --insecure, --map and --allow-host go with a URL (with --site the testbed's CA is trusted and only its hosts resolved)"
                        .into(),
                ));
            }
            let layout = req.layout.unwrap_or(site::Layout::Origin);
            let (site, addresses) =
                crate::sites::laid_out(name, req.site_seed, layout, 1).map_err(usage)?;
            let testbed = link()?
                .testbed_spec(addresses, &flag)
                .map_err(|e| usage(e.to_string()))?;
            Ok(Source::Testbed {
                site,
                protocol: req.protocol.unwrap_or(Protocol::H2),
                testbed: Box::new(testbed),
            })
        }
        (None, None) => Err(usage("give a URL or --site".into())),
    }
}

/// Records the page of `source` into the HAR file `out` names (`har_path`):
/// the file and what it holds.
pub fn record_to(
    source: &Source,
    out: &Path,
    timeout: Duration,
    progress: &mut dyn FnMut(&str),
) -> Result<(PathBuf, RecordSummary), RecordError> {
    let path = har_path(out);
    let rec = record(source, timeout, progress)?;
    write_har(&path, &rec.har)
        .map_err(|e| RecordError::Failed(format!("--out {}: {e}", path.display())))?;
    Ok((path, rec.summary))
}

/// A recording as one JSON object (`--json`): its file and summary.
pub fn document(path: &Path, summary: &RecordSummary) -> serde_json::Value {
    serde_json::json!({"schema": 1, "har": path, "summary": summary})
}

/// Which of these errors are bad input, a refusal or a failure to run (`crate::Error`).
impl From<RecordError> for crate::Error {
    fn from(e: RecordError) -> crate::Error {
        match e {
            RecordError::Usage(m) => crate::Error::Usage(m),
            RecordError::Failed(m) => crate::Error::Setup(m.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_names_a_directory_or_a_har() {
        assert_eq!(har_path(Path::new("d")), Path::new("d/page.har"));
        assert_eq!(har_path(Path::new("d/x.HAR")), Path::new("d/x.HAR"));
    }

    #[test]
    fn a_har_is_written_whole() {
        let dir = std::env::temp_dir().join(format!("record-unit-{}", std::process::id()));
        let path = dir.join("sub/page.har");
        write_har(&path, &serde_json::json!({"log": {"entries": []}})).unwrap();
        let back: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(back["log"]["entries"], serde_json::json!([]));
        let left: Vec<_> = std::fs::read_dir(dir.join("sub")).unwrap().collect();
        assert_eq!(left.len(), 1);
        // Into a directory that cannot be made: an error, nothing written.
        assert!(write_har(&path.join("x.har"), &serde_json::json!({})).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
