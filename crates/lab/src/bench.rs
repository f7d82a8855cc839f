//! `bench`: requests per second and latency percentiles of a server, every
//! protocol measured the same way (the `bench` crate's generator). This module
//! finds the target — a URL, or a site served by the built-in server on
//! loopback or inside a testbed (`testbed_server`, ports `trial::HTTP_PORT` /
//! `HTTPS_PORT`, h3 on UDP `HTTPS_PORT`) when a link is asked for, or a real
//! server (`--server caddy`, …) always in a testbed, refused for a protocol it
//! does not serve (`trial::refusal`) — trusts its certificate, measures the
//! server's CPU (`procstat`: its threads, or the real server's process tree),
//! and runs seed 003's pipelining matrix.

use crate::procstat;
use crate::testbed_server::{self, ServerSetup};
use crate::trial::{ServerKind, HTTPS_PORT, HTTP_PORT};
use bench::{BenchResult, BenchSpec, PathSpec};
use link::LinkStats;
use netns::{Side, Testbed, TestbedSpec};
use proto::Protocol;
use site::Site;
use std::fmt;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub use bench::percentile_distribution;

/// Why a bench did not run.
#[derive(Debug)]
pub enum BenchError {
    /// Bad input: the message names the flag.
    Usage(String),
    /// Setting up the server, testbed or generator.
    Setup(io::Error),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Usage(m) => f.write_str(m),
            BenchError::Setup(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for BenchError {}

impl From<io::Error> for BenchError {
    fn from(e: io::Error) -> Self {
        BenchError::Setup(e)
    }
}

fn usage(m: String) -> BenchError {
    BenchError::Usage(m)
}

/// What to load.
#[allow(clippy::large_enum_variant)] // one per bench: its size does not matter
pub enum Target {
    /// http(s)://HOST:PORT/PATH of a server that runs already.
    Url {
        url: String,
        /// Trust any certificate.
        insecure: bool,
        /// Trust this CA certificate (PEM).
        cacert: Option<PathBuf>,
    },
    /// A site served by the built-in server: on loopback, or with a link
    /// (any LINK flag given) inside a testbed.
    Site {
        site: Box<Site>,
        link: Option<TestbedSpec>,
    },
}

impl Target {
    /// A URL to load as it is: no --server, --layout or LINK flag (those
    /// need --site), named in the error as the user wrote it.
    pub fn url(
        url: &str,
        insecure: bool,
        cacert: Option<PathBuf>,
        server: ServerKind,
        layout: Option<crate::sites::Layout>,
        link: &crate::trial::LinkChoice,
    ) -> Result<Target, crate::Error> {
        if server != ServerKind::Builtin {
            return Err(crate::Error::Usage(
                "--server serves a --site; a URL names its own server".into(),
            ));
        }
        if let Some(l) = layout {
            return Err(crate::Error::Usage(format!(
                "--layout {l} lays out a --site; a URL is loaded as it is"
            )));
        }
        if let Some(given) = link.given().next() {
            return Err(crate::Error::Usage(format!(
                "{}: LINK flags (--rtt, --link-rate, --loss, ...) need --site: a URL is loaded over loopback",
                match given {
                    "rate" => "--link-rate".to_string(),
                    other => crate::link_flags::flag(other),
                }
            )));
        }
        Ok(Target::Url {
            url: url.to_string(),
            insecure,
            cacert,
        })
    }

    /// A site laid out on `addresses` server addresses, in a testbed with
    /// the link if any LINK flag was given, else on loopback.
    pub fn site(
        site: Site,
        addresses: usize,
        link: &crate::trial::LinkChoice,
    ) -> Result<Target, crate::Error> {
        Ok(Target::Site {
            site: Box::new(site),
            link: if link.shaped() {
                Some(crate::link_flags::testbed_spec(link, addresses)?)
            } else {
                None
            },
        })
    }
}

/// Writes the latency distribution (HdrHistogram percentile format, ms) to
/// `path` (`--hdr-out`), if one is given.
pub fn write_hdr(
    path: Option<&Path>,
    latency: &hdrhistogram::Histogram<u64>,
) -> Result<(), BenchError> {
    let Some(path) = path else { return Ok(()) };
    std::fs::write(path, percentile_distribution(latency))
        .map_err(|e| usage(format!("--hdr-out {}: {e}", path.display())))
}

/// One bench, as asked.
pub struct BenchRequest {
    pub target: Target,
    pub protocol: Protocol,
    pub connections: usize,
    /// Requests in flight per HTTP/1.1 connection (None: 8 pipelined, else 1).
    pub depth: Option<usize>,
    pub streams: usize,
    /// Generator threads (None: the machine's cores).
    pub threads: Option<usize>,
    pub duration: Duration,
    pub warmup: Duration,
    /// Open loop at this many requests/s (None: closed loop).
    pub rate: Option<f64>,
    /// A --paths file: PATH [EXPECTED_BODY_BYTES] a line.
    pub paths: Option<PathBuf>,
    pub timeout: Duration,
    pub expect_status: u16,
    /// Host header and TLS name (default: the URL's host).
    pub host: Option<String>,
    /// Measure this process tree's CPU as the server's.
    pub server_pid: Option<u32>,
    /// The server of a --site bench: the built-in one, or a real one (which
    /// always runs in a testbed, unshaped when no link is given).
    pub server: ServerKind,
}

/// What is about to run (for the start line).
pub struct Plan {
    pub protocol: Protocol,
    pub addr: SocketAddr,
    pub first_path: String,
    pub connections: usize,
    pub multiplexed: bool,
    pub streams: usize,
    pub depth: usize,
    pub threads: usize,
}

/// A bench's measurements.
pub struct BenchOutcome {
    pub plan: Plan,
    pub result: BenchResult,
    /// The generator's CPU seconds (this process less the in-process server).
    pub generator_cpu_s: f64,
    pub server_cpu_s: Option<f64>,
    /// The testbed and its link's counters at the end, with a link.
    pub testbed: Option<(TestbedSpec, LinkStats)>,
}

impl BenchOutcome {
    /// Whether the generator, not the server, may have been the bottleneck
    /// (`generator_may_be_bottleneck`); never said of an open loop (`rate`).
    pub fn generator_may_be_bottleneck(&self, open_loop: bool) -> bool {
        !open_loop
            && generator_may_be_bottleneck(
                self.generator_cpu_s,
                self.server_cpu_s,
                self.result.wall_seconds,
                self.plan.threads,
            )
    }
}

/// A closed loop's generator may be the bottleneck when the server's CPU is
/// known, the generator used over 1.5 times it, and the generator was busy:
/// its threads used 70 % of their time or more (only a busy generator can hold
/// the server back).
pub fn generator_may_be_bottleneck(
    generator_cpu_s: f64,
    server_cpu_s: Option<f64>,
    wall_seconds: f64,
    threads: usize,
) -> bool {
    let Some(server) = server_cpu_s else {
        return false;
    };
    let busy = generator_cpu_s >= 0.7 * wall_seconds * threads as f64;
    generator_cpu_s > server * 1.5 && busy
}

/// The name of the in-process server's threads (their CPU is the server's).
const SERVER_THREADS: &str = "spdylab-server";

/// A client TLS config trusting `roots` (or any certificate), offering the protocol's ALPN.
fn client_tls(
    roots: Option<Vec<rustls::pki_types::CertificateDer<'static>>>,
    protocol: Protocol,
) -> Result<Arc<rustls::ClientConfig>, String> {
    server::install_crypto_provider();
    let mut config = match roots {
        None => rustls::ClientConfig::builder()
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCert))
            .with_no_client_auth(),
        Some(certs) => {
            let mut store = rustls::RootCertStore::empty();
            for c in certs {
                store.add(c).map_err(|e| format!("CA: {e}"))?;
            }
            rustls::ClientConfig::builder()
                .with_root_certificates(store)
                .with_no_client_auth()
        }
    };
    config.alpn_protocols = vec![protocol.alpn().to_vec()];
    Ok(Arc::new(config))
}

/// The roots of URL mode: --insecure (None), else the CA file's certificates.
fn url_roots(
    insecure: bool,
    cacert: &Option<PathBuf>,
) -> Result<Option<Vec<rustls::pki_types::CertificateDer<'static>>>, String> {
    if insecure {
        return Ok(None);
    }
    let mut certs = Vec::new();
    if let Some(path) = cacert {
        let pem = std::fs::read(path).map_err(|e| format!("--cacert {}: {e}", path.display()))?;
        certs.extend(rustls_pemfile_certs(&pem));
    }
    if certs.is_empty() {
        return Err(match cacert {
            Some(path) => format!("--cacert {}: no certificate", path.display()),
            None => "https needs --cacert FILE or --insecure".into(),
        });
    }
    Ok(Some(certs))
}

struct Target_ {
    addr: SocketAddr,
    host: String,
    tls: bool,
    paths: Vec<PathSpec>,
}

fn parse_url(url: &str) -> Result<Target_, String> {
    let (tls, rest) = if let Some(r) = url.strip_prefix("https://") {
        (true, r)
    } else if let Some(r) = url.strip_prefix("http://") {
        (false, r)
    } else {
        return Err(format!("URL '{url}' must start with http:// or https://"));
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let with_port = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        authority.to_string()
    } else {
        format!("{authority}:{}", if tls { 443 } else { 80 })
    };
    let addr = with_port
        .to_socket_addrs()
        .map_err(|e| format!("URL '{url}': {e}"))?
        .next()
        .ok_or_else(|| format!("URL '{url}': no address"))?;
    let host = authority
        .rsplit_once(':')
        .map_or(authority, |(h, _)| h)
        .to_string();
    Ok(Target_ {
        addr,
        host,
        tls,
        paths: vec![PathSpec {
            path: path.to_string(),
            expect_len: None,
        }],
    })
}

fn read_paths(file: &Path) -> Result<Vec<PathSpec>, String> {
    let text =
        std::fs::read_to_string(file).map_err(|e| format!("--paths {}: {e}", file.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split_whitespace();
        let path = parts.next().unwrap_or_default();
        if !path.starts_with('/') {
            return Err(format!(
                "{}:{}: path '{path}' must start with /",
                file.display(),
                i + 1
            ));
        }
        let expect_len = match parts.next() {
            None => None,
            Some(n) => Some(n.parse::<u64>().map_err(|_| {
                format!(
                    "{}:{}: '{n}' is not a body length in bytes",
                    file.display(),
                    i + 1
                )
            })?),
        };
        out.push(PathSpec {
            path: path.to_string(),
            expect_len,
        });
    }
    if out.is_empty() {
        return Err(format!("--paths {}: no path", file.display()));
    }
    Ok(out)
}

/// Certificates from PEM text (BEGIN CERTIFICATE blocks), without another crate.
fn rustls_pemfile_certs(pem: &[u8]) -> Vec<rustls::pki_types::CertificateDer<'static>> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::pem_slice_iter(pem)
        .filter_map(Result::ok)
        .collect()
}

#[derive(Debug)]
struct AnyCert;

impl rustls::client::danger::ServerCertVerifier for AnyCert {
    fn verify_server_cert(
        &self,
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &[rustls::pki_types::CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
    }
    fn verify_tls13_signature(
        &self,
        _: &[u8],
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
    }
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        rustls::crypto::ring::default_provider()
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The built-in server on a loopback listener, on its own runtime whose threads
/// are named so that their CPU can be told apart from the generator's.
struct Loopback {
    target: Target_,
    ca: rustls::pki_types::CertificateDer<'static>,
    stop: std::sync::mpsc::Sender<()>,
}

fn serve_loopback(site: Site, protocol: Protocol, threads: Option<usize>) -> io::Result<Loopback> {
    let tls = protocol.tls();
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let ca = server::Ca::new()?;
    let host = site.root().host.clone();
    let paths = site_paths(&site);
    let mut addr = listener.local_addr()?;
    let der = ca.der();
    let mut srv = server::Server::new(site, server::ServerOptions::default(), &ca, &[addr.ip()])?;
    if protocol.quic() {
        // h3: a UDP socket of its own (the TCP listener stays, unused).
        let udp = std::net::UdpSocket::bind("127.0.0.1:0")?;
        addr = udp.local_addr()?;
        srv = srv.with_quic(vec![udp]);
    }
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = threads {
        rt.worker_threads(n);
    }
    let rt = rt.thread_name(SERVER_THREADS).enable_all().build()?;
    std::thread::Builder::new()
        .name(SERVER_THREADS.into())
        .spawn(move || {
            let (clear, tls_l) = if tls {
                (vec![], vec![listener])
            } else {
                (vec![listener], vec![])
            };
            rt.block_on(async move {
                let stop = async move {
                    let _ = tokio::task::spawn_blocking(move || stop_rx.recv()).await;
                };
                let _ = srv.run(clear, tls_l, stop).await;
            });
        })?;
    Ok(Loopback {
        target: Target_ {
            addr,
            host,
            tls,
            paths,
        },
        ca: der,
        stop: stop_tx,
    })
}

/// The root host's resources, each with its length.
fn site_paths(site: &Site) -> Vec<PathSpec> {
    let host = &site.root().host;
    site.resources
        .iter()
        .filter(|r| &r.host == host)
        .map(|r| PathSpec {
            path: r.path.clone(),
            expect_len: Some(r.size as u64),
        })
        .collect()
}

/// Where the generator runs: here, or in a testbed's client namespace.
enum Place {
    Here,
    Testbed(Box<Testbed>, testbed_server::RunningServer),
}

/// The requests each connection pipelines (`--depth`: 8 by default on a
/// pipelined protocol, else 1), or the usage error of `--depth` or `--rate`.
fn pipelining_depth(req: &BenchRequest) -> Result<usize, BenchError> {
    let protocol = req.protocol;
    let depth = match (req.depth, protocol.pipelined()) {
        (Some(d), true) => d,
        (None, true) => 8,
        (Some(1) | None, false) => 1,
        (Some(_), false) => {
            return Err(usage(format!(
                "--depth pipelines HTTP/1.1: use --protocol {}-pipelined",
                protocol.name().trim_end_matches("-pipelined")
            )))
        }
    };
    if protocol.multiplexed() && req.depth.is_some() {
        return Err(usage(
            "--depth is for HTTP/1.1; HTTP/2 takes --streams".into(),
        ));
    }
    if let Some(r) = req.rate {
        if !(r > 0.0 && r.is_finite()) {
            return Err(usage(format!("--rate {r}: requests per second above 0")));
        }
    }
    Ok(depth)
}

/// The roots a generator trusts of a bench's own server.
type Roots = Option<Vec<rustls::pki_types::CertificateDer<'static>>>;

/// What a bench runs against: its target, the roots its generator trusts,
/// the stop of its server on loopback, and where its generator runs.
type Served = (Target_, Roots, Option<std::sync::mpsc::Sender<()>>, Place);

/// A site served in a testbed (unshaped without `link`): the server in its
/// server namespace (testbed_server, as compare and load), the generator to
/// run in its client namespace.
fn serve_in_testbed(
    req: &BenchRequest,
    site: &Site,
    link: Option<&TestbedSpec>,
) -> Result<Served, BenchError> {
    let protocol = req.protocol;
    // The server in the testbed's server namespace (testbed_server,
    // as compare and load), the generator in its client namespace.
    // The server's knobs at the Trial's defaults (the generator's
    // own: streams, pipelining, are bench's).
    let trial = crate::trial::Trial::default();
    let trial = crate::trial::Trial {
        server: req.server,
        ..trial
    };
    if let Some(why) = trial.refusal_for(None, &[protocol], site.resources.len()) {
        return Err(usage(why.to_string()));
    }
    if let ServerKind::Peer(kind) = req.server {
        let (binary, package) = peers::Program::binary(kind);
        netns::find_binary(binary, package)?;
    }
    let unshaped;
    let spec = match link {
        Some(spec) => spec,
        None => {
            unshaped = netns::TestbedSpec::default();
            &unshaped
        }
    };
    let placement = testbed_server::place(site, spec);
    let mut testbed = Testbed::start(placement.testbed)?;
    let ca = server::Ca::new()?;
    let server = testbed_server::start(
        &mut testbed,
        &ca,
        &placement.addresses[..1],
        &ServerSetup {
            site,
            kind: req.server,
            knobs: trial.served,
            keepalive: None,
            access_log: false,
            stop_after: None,
            thread_name: SERVER_THREADS,
        },
    )?;
    let port = if protocol.tls() {
        HTTPS_PORT
    } else {
        HTTP_PORT
    };
    let t = Target_ {
        addr: SocketAddr::new(placement.addresses[0], port),
        host: site.root().host.clone(),
        tls: protocol.tls(),
        paths: site_paths(site),
    };
    Ok((
        t,
        Some(vec![ca.der()]),
        None,
        Place::Testbed(Box::new(testbed), server),
    ))
}

/// The generator's run of `spec`: here, or from a thread in the testbed's
/// client namespace (its threads made from there).
fn run_generator(place: &Place, spec: BenchSpec) -> io::Result<BenchResult> {
    Ok(match place {
        Place::Here => bench::run(spec)?,
        Place::Testbed(tb, _) => {
            let ns = tb.namespace(Side::Client);
            // The generator's threads are made from one inside the client namespace.
            std::thread::scope(|s| {
                s.spawn(|| {
                    ns.enter_current_thread()?;
                    bench::run(spec)
                })
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the generator panicked")))
            })?
        }
    })
}

/// Runs one bench; `on_start` hears what is about to run.
pub fn run(
    req: &BenchRequest,
    on_start: &mut dyn FnMut(&Plan),
) -> Result<BenchOutcome, BenchError> {
    let protocol = req.protocol;
    let depth = pipelining_depth(req)?;
    let (mut target, roots, stop, place) = match &req.target {
        Target::Url {
            url,
            insecure,
            cacert,
        } => {
            let t = parse_url(url).map_err(usage)?;
            let roots = if protocol.tls() {
                url_roots(*insecure, cacert).map_err(usage)?
            } else {
                None
            };
            (t, roots, None, Place::Here)
        }
        Target::Site { site, link: None } if req.server == ServerKind::Builtin => {
            let l = serve_loopback((**site).clone(), protocol, None)?;
            (l.target, Some(vec![l.ca]), Some(l.stop), Place::Here)
        }
        Target::Site { site, link } => serve_in_testbed(req, site, link.as_ref())?,
    };
    if target.tls != protocol.tls() {
        return Err(usage(format!(
            "--protocol {protocol} {} TLS, but the URL is {}",
            if protocol.tls() {
                "needs"
            } else {
                "is without"
            },
            if target.tls { "https" } else { "http" }
        )));
    }
    if let Some(host) = &req.host {
        target.host = host.clone();
    }
    if let Some(file) = &req.paths {
        target.paths = read_paths(file).map_err(usage)?;
    }
    let tls = if protocol.tls() {
        Some(client_tls(roots, protocol).map_err(usage)?)
    } else {
        None
    };
    let threads = req
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let spec = BenchSpec {
        addr: target.addr,
        host: target.host.clone(),
        tls,
        protocol,
        connections: req.connections,
        depth,
        streams: req.streams,
        threads,
        duration: req.duration,
        warmup: req.warmup,
        rate: req.rate,
        paths: target.paths.clone(),
        expect_status: req.expect_status,
        timeout: req.timeout,
    };
    let plan = Plan {
        protocol,
        addr: target.addr,
        first_path: target
            .paths
            .first()
            .map_or("/".to_string(), |p| p.path.clone()),
        connections: spec.connections,
        multiplexed: protocol.multiplexed(),
        streams: spec.streams,
        depth,
        threads,
    };
    on_start(&plan);
    // The server's process tree: --server-pid, or the real server in the testbed.
    let server_pid = req.server_pid.or(match &place {
        Place::Testbed(_, server) => server.pid,
        Place::Here => None,
    });
    let server_cpu0 = server_pid.and_then(procstat::tree).map(|u| u.cpu_s);
    let in_process0 = procstat::threads_cpu(SERVER_THREADS);
    let result = run_generator(&place, spec)?;
    let in_process = procstat::threads_cpu(SERVER_THREADS) - in_process0;
    let own_server = stop.is_some() || matches!(place, Place::Testbed(..));
    let server_cpu_s = match (server_pid, server_cpu0) {
        (Some(pid), Some(c0)) => procstat::tree(pid).map(|u| u.cpu_s - c0),
        _ if own_server => Some(in_process),
        _ => None,
    };
    if let Some(stop) = stop {
        let _ = stop.send(());
    }
    let testbed = match place {
        Place::Here => None,
        Place::Testbed(tb, mut server) => {
            server.stop();
            let spec = tb.spec().clone();
            let stats = tb.shutdown()?;
            Some((spec, stats))
        }
    };
    let generator_cpu_s = result.cpu_seconds - in_process;
    Ok(BenchOutcome {
        plan,
        result,
        generator_cpu_s,
        server_cpu_s,
        testbed,
    })
}

/// The site of seed 003's matrix: nginx's 612-byte index.html and a 32x32 icon as in 000.
const MATRIX_SITE: &str = r#"
name = "pipelining"
about = "a small static file (612 bytes, as nginx's index.html in seed 003) and an icon PNG (as in 000)"
[[resource]]
url = "//bench.spdylab.test/"
kind = "html"
size = "612b"
[[resource]]
url = "//bench.spdylab.test/icon.png"
kind = "png"
size = "1.6kb"
parent = "//bench.spdylab.test/"
reveal = "body"
"#;

/// One row of seed 003's matrix.
pub use results::BenchRow;

/// The matrix's measured and warm-up times.
pub fn matrix_times(quick: bool) -> (Duration, Duration) {
    if quick {
        (Duration::from_secs(3), Duration::from_secs(1))
    } else {
        (Duration::from_secs(10), Duration::from_secs(2))
    }
}

/// Seed 003's side-by-side that nobody published — HTTP/1.1, +TLS,
/// +pipelining (depth 8 and 16), SPDY, h2, h2c, and h3 (the built-in server
/// only: nginx 1.22 has none) — on the built-in server and on nginx, one generator thread against one server thread, on loopback.
/// `on_row` hears of each row as it is measured (with done and total).
/// `out`, the directory its files go to, is made first.
pub fn pipelining_matrix(
    quick: bool,
    out: &Path,
    connections: usize,
    on_row: &mut dyn FnMut(&BenchRow, usize, usize),
) -> Result<Vec<BenchRow>, BenchError> {
    std::fs::create_dir_all(out).map_err(|e| usage(format!("--out {}: {e}", out.display())))?;
    let site = site::parse_toml("pipelining preset", MATRIX_SITE).map_err(usage)?;
    let (duration, warmup) = matrix_times(quick);
    let configs: [(Protocol, usize); 9] = [
        (Protocol::Http, 1),
        (Protocol::HttpPipelined, 8),
        (Protocol::HttpPipelined, 16),
        (Protocol::Https, 1),
        (Protocol::HttpsPipelined, 8),
        (Protocol::Spdy3, 100),
        (Protocol::H2, 100),
        (Protocol::H2c, 100),
        (Protocol::H3, 100),
    ];
    let files = [("/", "612 B file"), ("/icon.png", "1.6 kB PNG")];
    let host = site.root().host.clone();
    let mut rows = Vec::new();
    let total = 2 * configs.len() * files.len();
    for server in ["builtin", "nginx"] {
        // One server for all its rows: (cleartext, tls, h2c) addresses, CA.
        let ca = server::Ca::new()?;
        let (clear, tls, h2c, quic, stop, nginx, _docroot, ca_der) = if server == "builtin" {
            let c = serve_loopback(site.clone(), Protocol::Http, Some(1))?;
            let t = serve_loopback(site.clone(), Protocol::Https, Some(1))?;
            // h3: a server of its own on UDP, with the same CA as the TLS one's rows use.
            let q = serve_loopback(site.clone(), Protocol::H3, Some(1))?;
            (
                c.target.addr,
                t.target.addr,
                c.target.addr,
                Some((q.target.addr, q.ca)),
                vec![c.stop, t.stop, q.stop],
                None,
                None,
                t.ca,
            )
        } else {
            let docroot = netns::Scratch::new("docroot")?;
            peers::write_docroot(&site, &docroot.0)?;
            let (cert, key) = ca.issue_pem(&[host.clone(), "127.0.0.1".into()])?;
            let p = netns::free_ports(3)?;
            let ng = peers::Peer::start(
                peers::PeerKind::Nginx,
                &peers::PeerOptions {
                    addresses: vec![[127, 0, 0, 1].into()],
                    http_port: p[0],
                    https_port: p[1],
                    h2c_port: Some(p[2]),
                    tls13_only: None,
                    cert_pem: cert,
                    key_pem: key,
                    workers: 1,
                    max_streams: crate::trial::Trial::default().served.max_streams,
                    keepalive_timeout: None,
                    access_log: false,
                    docroot: docroot.0.clone(),
                    early_data: false,
                },
            )
            .map_err(io::Error::other)?;
            let a = |port| SocketAddr::from(([127, 0, 0, 1], port));
            (
                a(p[0]),
                a(p[1]),
                a(p[2]),
                None,
                vec![],
                Some(ng),
                Some(docroot),
                ca.der(),
            )
        };
        for (path, file) in files {
            for (protocol, depth) in configs {
                let name = protocol.name();
                // Not `trial::refusal`: that table is for a testbed's ports 80
                // and 443, while here nginx serves h2c on a port of its own.
                let refused = match protocol {
                    Protocol::Spdy3 if nginx.is_some() => {
                        Some("nginx dropped SPDY in 1.9.5 (Debian's 1.22 has HTTP/2 only)")
                    }
                    Protocol::H3 if nginx.is_some() => Some(
                        "nginx has no HTTP/3 in Debian's build (1.22; ngx_http_v3_module came in 1.25)",
                    ),
                    _ => None,
                };
                if let Some(why) = refused {
                    // Refused, never measured as something else.
                    let row = BenchRow {
                        server: server.into(),
                        file: file.into(),
                        protocol: name.into(),
                        depth,
                        requests_per_sec: 0.0,
                        p50_ms: 0.0,
                        p99_ms: 0.0,
                        p999_ms: 0.0,
                        errors: 0,
                        generator_cpu_s: 0.0,
                        server_cpu_s: 0.0,
                        skipped: Some(why.into()),
                    };
                    rows.push(row);
                    on_row(&rows[rows.len() - 1], rows.len(), total);
                    continue;
                }
                let addr = if protocol == Protocol::H2c {
                    h2c
                } else if protocol.quic() {
                    quic.as_ref().map_or(tls, |q| q.0)
                } else if protocol.tls() {
                    tls
                } else {
                    clear
                };
                let ca = match &quic {
                    Some((_, ca)) if protocol.quic() => ca.clone(),
                    _ => ca_der.clone(),
                };
                let tls_config = if protocol.tls() {
                    Some(client_tls(Some(vec![ca]), protocol).map_err(usage)?)
                } else {
                    None
                };
                let spec = BenchSpec {
                    addr,
                    host: host.clone(),
                    tls: tls_config,
                    protocol,
                    connections,
                    depth: if protocol.multiplexed() { 1 } else { depth },
                    streams: if protocol.multiplexed() { depth } else { 1 },
                    threads: 1,
                    duration,
                    warmup,
                    rate: None,
                    paths: vec![PathSpec {
                        path: path.to_string(),
                        expect_len: None,
                    }],
                    expect_status: 200,
                    timeout: Duration::from_secs(10),
                };
                let server_cpu = |ng: &Option<peers::Peer>| match ng {
                    Some(n) => procstat::tree(n.pid).map_or(0.0, |u| u.cpu_s),
                    None => procstat::threads_cpu(SERVER_THREADS),
                };
                let s0 = server_cpu(&nginx);
                let r = bench::run(spec)?;
                let server_s = server_cpu(&nginx) - s0;
                let generator = if nginx.is_some() {
                    r.cpu_seconds
                } else {
                    r.cpu_seconds - server_s
                };
                let h = &r.latency;
                let q = |x: f64| h.value_at_quantile(x) as f64 / 1e3;
                rows.push(BenchRow {
                    server: server.into(),
                    file: file.into(),
                    protocol: name.into(),
                    depth,
                    requests_per_sec: r.requests_per_sec(),
                    p50_ms: q(0.5),
                    p99_ms: q(0.99),
                    p999_ms: q(0.999),
                    errors: r.errors_total(),
                    generator_cpu_s: generator,
                    server_cpu_s: server_s,
                    skipped: None,
                });
                on_row(&rows[rows.len() - 1], rows.len(), total);
            }
        }
        for s in stop {
            let _ = s.send(());
        }
        drop(nginx);
    }
    Ok(rows)
}

/// Which of these errors are bad input, a refusal or a failure to run (`crate::Error`).
impl From<BenchError> for crate::Error {
    fn from(e: BenchError) -> crate::Error {
        match e {
            BenchError::Usage(m) => crate::Error::Usage(m),
            BenchError::Setup(e) => crate::Error::Setup(Box::new(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::generator_may_be_bottleneck as limited;

    #[test]
    fn only_a_busy_generator_using_more_than_the_server_is_the_bottleneck() {
        // 10 s, 2 threads: busy from 14 CPU-seconds.
        assert!(limited(15.0, Some(9.0), 10.0, 2));
        // Not busy enough, though far above the server.
        assert!(!limited(13.9, Some(1.0), 10.0, 2));
        // Busy, but not 1.5 times the server.
        assert!(!limited(15.0, Some(10.0), 10.0, 2));
        // No server CPU measured: nothing to say.
        assert!(!limited(20.0, None, 10.0, 2));
    }
}
