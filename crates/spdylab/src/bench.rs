//! `spdylab bench`: requests per second and latency percentiles of a server,
//! every protocol measured the same way (see the `bench` crate).

use crate::Failure;
use bench::{BenchSpec, PathSpec};
use clap::Args;
use link::units::parse_duration;
use proto::Protocol;
use serde_json::json;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Throughput and latency of a server: pipelining, multiplexing, TLS; closed or open loop
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab bench http://127.0.0.1:8080/index.html --protocol http --connections 50 --duration 30s
  spdylab bench http://127.0.0.1:8080/ --protocol http-pipelined --depth 16 --connections 50
  spdylab bench https://127.0.0.1:8443/ --protocol h2 --streams 100 --connections 4 --insecure
  spdylab bench --site icons --protocol h2c --connections 8 --streams 50 --json
  spdylab bench http://127.0.0.1:8080/ --rate 20000 --connections 50 --hdr-out lat.hgrm
  spdylab bench --site youtube --protocol spdy3 --rtt 150ms --link-rate 8mbit -c 1 --streams 50

Closed loop by default: each connection keeps --depth requests (h1) or --streams
streams (h2) in flight. With --rate, open loop: requests are due at a constant rate
and latency runs from when each was due (coordinated-omission correction, as wrk2).
Every response is checked: status, and body length against --paths or the first
response of its path; a wrong one is an error, never a success.")]
#[command(mut_arg("rate", |a| a
    .long("link-rate")
    .help("With --site: rate of both directions of the link (e.g. 10mbit); --rate is requests/s here")))]
pub struct BenchArgs {
    /// http(s)://HOST:PORT/PATH to load (or --site)
    #[arg(required_unless_present = "site", conflicts_with = "site")]
    pub url: Option<String>,
    /// Serve this site with the built-in server on loopback and load it
    #[arg(long)]
    pub site: Option<String>,
    /// http, https, http-pipelined, https-pipelined, spdy3, h2, h2c
    #[arg(long, default_value = "http")]
    pub protocol: Protocol,
    /// Connections
    #[arg(long, short = 'c', default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub connections: u32,
    /// Requests in flight per HTTP/1.1 connection (pipelining; default 8 for *-pipelined, else 1)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub depth: Option<u32>,
    /// Streams in flight per HTTP/2 connection
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub streams: u32,
    /// Generator threads (default: the machine's cores)
    #[arg(long, short = 't', value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Measured time
    #[arg(long, short = 'd', value_parser = parse_duration, default_value = "10s", value_name = "DURATION")]
    pub duration: Duration,
    /// Time run first and not measured
    #[arg(long, value_parser = parse_duration, default_value = "2s", value_name = "DURATION")]
    pub warmup: Duration,
    /// Open loop at this many requests per second (all connections together)
    #[arg(long = "rate", id = "request_rate", value_name = "REQ/S")]
    pub rate: Option<f64>,
    /// Paths to request in turn, one per line: PATH [EXPECTED_BODY_BYTES]
    #[arg(long, value_name = "FILE")]
    pub paths: Option<PathBuf>,
    /// A request unanswered for this long is an error
    #[arg(long, value_parser = parse_duration, default_value = "10s", value_name = "DURATION")]
    pub timeout: Duration,
    /// The status every response must have
    #[arg(long, default_value_t = 200)]
    pub expect_status: u16,
    /// Host header and TLS server name (default: the URL's host)
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Trust any certificate (URL mode)
    #[arg(long)]
    pub insecure: bool,
    /// Trust this CA certificate (PEM; URL mode)
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Measure the CPU of this process and its descendants (the server under test)
    #[arg(long, value_name = "PID")]
    pub server_pid: Option<u32>,
    /// Write the latency distribution (HdrHistogram percentile format, ms) here
    #[arg(long, value_name = "FILE")]
    pub hdr_out: Option<PathBuf>,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
    /// With --site: the emulated link between the generator and the server
    #[command(flatten)]
    pub link: crate::link_args::LinkArgs,
}

fn usage(msg: String) -> Failure {
    Failure::Usage(msg)
}

/// CPU seconds (user + system) of a process and its descendants, from /proc.
fn tree_cpu(root: u32) -> Option<f64> {
    let mut parent = std::collections::HashMap::new();
    let mut cpu = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Some((ppid, seconds)) = stat_cpu(&entry.path().join("stat")) {
            parent.insert(pid, ppid);
            cpu.insert(pid, seconds);
        }
    }
    cpu.get(&root)?;
    let in_tree = |mut p: u32| {
        for _ in 0..64 {
            if p == root {
                return true;
            }
            match parent.get(&p) {
                Some(&q) if q != 0 => p = q,
                _ => return false,
            }
        }
        false
    };
    Some(
        cpu.iter()
            .filter(|(p, _)| in_tree(**p))
            .map(|(_, c)| c)
            .sum(),
    )
}

/// (parent pid, CPU seconds user + system) from a /proc/…/stat file.
fn stat_cpu(path: &std::path::Path) -> Option<(u32, f64)> {
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let stat = std::fs::read_to_string(path).ok()?;
    // The fields after the command (which may hold spaces) start after the last ')'.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some((f.get(1)?.parse().ok()?, ticks / tick))
}

/// CPU seconds of this process's threads named `name` (the in-process server).
fn threads_cpu(name: &str) -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0.0;
    };
    tasks
        .flatten()
        .filter(|t| std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name))
        .filter_map(|t| stat_cpu(&t.path().join("stat")).map(|(_, c)| c))
        .sum()
}

struct Target {
    addr: SocketAddr,
    host: String,
    tls: bool,
    paths: Vec<PathSpec>,
}

fn parse_url(url: &str) -> Result<Target, String> {
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
    Ok(Target {
        addr,
        host,
        tls,
        paths: vec![PathSpec {
            path: path.to_string(),
            expect_len: None,
        }],
    })
}

fn read_paths(file: &PathBuf) -> Result<Vec<PathSpec>, String> {
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

fn tls_config(
    args: &BenchArgs,
    wire: Protocol,
    ca: Option<rustls::pki_types::CertificateDer<'static>>,
) -> Result<Arc<rustls::ClientConfig>, String> {
    server::install_crypto_provider();
    let mut config = if args.insecure {
        rustls::ClientConfig::builder()
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCert))
            .with_no_client_auth()
    } else {
        let mut roots = rustls::RootCertStore::empty();
        if let Some(ca) = ca {
            roots.add(ca).map_err(|e| format!("CA: {e}"))?;
        }
        if let Some(path) = &args.cacert {
            let pem =
                std::fs::read(path).map_err(|e| format!("--cacert {}: {e}", path.display()))?;
            for cert in rustls_pemfile_certs(&pem) {
                roots
                    .add(cert)
                    .map_err(|e| format!("--cacert {}: {e}", path.display()))?;
            }
        }
        if roots.is_empty() {
            return Err("https needs --cacert FILE or --insecure".into());
        }
        rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth()
    };
    config.alpn_protocols = vec![wire.alpn().to_vec()];
    Ok(Arc::new(config))
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

/// The built-in server on loopback, on its own runtime whose threads are named
/// so that their CPU can be told apart from the generator's.
const SERVER_THREADS: &str = "spdylab-server";

type Builtin = (
    Target,
    rustls::pki_types::CertificateDer<'static>,
    std::sync::mpsc::Sender<()>,
);

fn start_builtin(site: site::Site, tls: bool, threads: Option<usize>) -> Result<Builtin, Failure> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    serve_builtin(site, tls, threads, listener)
}

/// The built-in server on a listener bound where the caller chose (loopback,
/// or a testbed's server namespace).
fn serve_builtin(
    site: site::Site,
    tls: bool,
    threads: Option<usize>,
    listener: std::net::TcpListener,
) -> Result<Builtin, Failure> {
    let ca = server::Ca::new()?;
    let host = site.root().host.clone();
    let paths: Vec<PathSpec> = site
        .resources
        .iter()
        .filter(|r| r.host == host)
        .map(|r| PathSpec {
            path: r.path.clone(),
            expect_len: Some(r.size as u64),
        })
        .collect();
    let addr = listener.local_addr()?;
    let der = ca.der();
    let srv = server::Server::new(site, server::ServerOptions::default(), &ca, &[addr.ip()])?;
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
    Ok((
        Target {
            addr,
            host,
            tls,
            paths,
        },
        der,
        stop_tx,
    ))
}

pub fn run(args: BenchArgs) -> Result<i32, Failure> {
    let protocol = args.protocol;
    let wire = protocol;
    let depth = match (args.depth, protocol.pipelined()) {
        (Some(d), true) => d as usize,
        (None, true) => 8,
        (Some(1) | None, false) => 1,
        (Some(_), false) => {
            return Err(usage(format!(
                "--depth pipelines HTTP/1.1: use --protocol {}-pipelined",
                protocol.name().trim_end_matches("-pipelined")
            )))
        }
    };
    if protocol.multiplexed() && args.depth.is_some() {
        return Err(usage(
            "--depth is for HTTP/1.1; HTTP/2 takes --streams".into(),
        ));
    }
    if let Some(r) = args.rate {
        if !(r > 0.0 && r.is_finite()) {
            return Err(usage(format!("--rate {r}: requests per second above 0")));
        }
    }
    let l = &args.link;
    let shaped = l.rtt.is_some()
        || l.delay_down.is_some()
        || l.delay_up.is_some()
        || l.rate.is_some()
        || l.down.is_some()
        || l.up.is_some()
        || l.trace_down.is_some()
        || l.trace_up.is_some()
        || l.iw.is_some();
    if shaped && args.site.is_none() {
        return Err(usage(
            "LINK flags (--rtt, --rate, ...) need --site: a URL is loaded over loopback".into(),
        ));
    }
    // With a link: a testbed, the server in its server namespace, the generator in its client one.
    let testbed = if shaped {
        let mut spec = l.testbed_spec(1).map_err(usage)?;
        let name = args.site.as_deref().unwrap_or_default();
        let host = crate::sites::load(name, site::DEFAULT_SEED)?
            .root()
            .host
            .clone();
        spec.hosts = vec![(host, netns::server_addr(1))];
        Some(netns::Testbed::start(spec)?)
    } else {
        None
    };
    let (mut target, ca, stop) = match (&args.url, &args.site) {
        (Some(url), _) => (parse_url(url).map_err(usage)?, None, None),
        (None, Some(name)) => {
            let site = crate::sites::load(name, site::DEFAULT_SEED)?;
            let (t, ca, stop) = match &testbed {
                None => start_builtin(site, protocol.tls(), None)?,
                Some(tb) => {
                    let port = if protocol.tls() { 443 } else { 80 };
                    let addr = SocketAddr::from((netns::server_addr(1), port));
                    let listener = tb
                        .namespace(netns::Side::Server)
                        .run(move || std::net::TcpListener::bind(addr))?;
                    serve_builtin(site, protocol.tls(), None, listener)?
                }
            };
            (t, Some(ca), Some(stop))
        }
        (None, None) => unreachable!("clap requires a URL or --site"),
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
    if let Some(host) = &args.host {
        target.host = host.clone();
    }
    if let Some(file) = &args.paths {
        target.paths = read_paths(file).map_err(usage)?;
    }
    let tls = if protocol.tls() {
        Some(tls_config(&args, wire, ca).map_err(usage)?)
    } else {
        None
    };
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |t| t as usize,
    );
    let spec = BenchSpec {
        addr: target.addr,
        host: target.host.clone(),
        tls,
        protocol: wire,
        connections: args.connections as usize,
        depth,
        streams: args.streams as usize,
        threads,
        duration: args.duration,
        warmup: args.warmup,
        rate: args.rate,
        paths: target.paths.clone(),
        expect_status: args.expect_status,
        timeout: args.timeout,
    };
    let server_cpu0 = args.server_pid.and_then(tree_cpu);
    let in_process0 = threads_cpu(SERVER_THREADS);
    if !args.json {
        eprintln!(
            "bench: {} {} on {} — {} connections, {}, {} threads, {} {}",
            protocol,
            target.paths.first().map_or("/", |p| p.path.as_str()),
            target.addr,
            spec.connections,
            if wire.multiplexed() {
                format!("{} streams each", spec.streams)
            } else {
                format!("depth {depth}")
            },
            threads,
            link::units::format_duration(args.duration),
            args.rate.map_or("closed loop".to_string(), |r| format!(
                "open loop at {r} req/s"
            ))
        );
    }
    let result = match &testbed {
        None => bench::run(spec)?,
        Some(tb) => {
            let ns = tb.namespace(netns::Side::Client);
            // The generator's threads are made from one inside the client namespace.
            std::thread::scope(|s| {
                s.spawn(|| {
                    ns.enter_current_thread()?;
                    bench::run(spec)
                })
                .join()
                .expect("the generator thread does not panic")
            })?
        }
    };
    let in_process = threads_cpu(SERVER_THREADS) - in_process0;
    let server_cpu = match (args.server_pid, server_cpu0) {
        (Some(pid), Some(c0)) => tree_cpu(pid).map(|c| c - c0),
        _ if stop.is_some() => Some(in_process),
        _ => None,
    };
    if let Some(stop) = stop {
        let _ = stop.send(());
    }
    if let Some(tb) = testbed {
        tb.shutdown()?;
    }
    let generator_cpu = result.cpu_seconds - in_process;
    if let Some(path) = &args.hdr_out {
        std::fs::write(path, bench::percentile_distribution(&result.latency))
            .map_err(|e| usage(format!("--hdr-out {}: {e}", path.display())))?;
    }
    let h = &result.latency;
    let pct = |q: f64| h.value_at_quantile(q) as f64 / 1e3;
    let rps = result.requests_per_sec();
    if args.json {
        println!(
            "{}",
            json!({
                "schema": 1,
                "protocol": protocol.name(),
                "target": target.addr.to_string(),
                "connections": args.connections,
                "depth": depth,
                "streams": args.streams,
                "rate": args.rate,
                "seconds": result.elapsed.as_secs_f64(),
                "requests": result.requests,
                "requests_per_sec": rps,
                "bytes_per_sec": result.bytes as f64 / result.elapsed.as_secs_f64(),
                "latency_ms": {
                    "p50": pct(0.5), "p90": pct(0.9), "p99": pct(0.99), "p999": pct(0.999),
                    "p9999": pct(0.9999), "max": h.max() as f64 / 1e3, "mean": h.mean() / 1e3,
                },
                "errors": result.errors,
                "reconnects": result.reconnects,
                "generator_cpu_seconds": generator_cpu,
                "requests_per_generator_cpu_second": result.requests as f64 / generator_cpu.max(1e-9),
                "server_cpu_seconds": server_cpu,
                "per_second": result.per_second,
            })
        );
    } else {
        println!(
            "{:.0} requests/s, {:.2} MB/s over {:.1} s ({} requests, {} errors{})",
            rps,
            result.bytes as f64 / result.elapsed.as_secs_f64() / 1e6,
            result.elapsed.as_secs_f64(),
            result.requests,
            result.errors_total(),
            if result.errors.is_empty() {
                String::new()
            } else {
                format!(
                    ": {}",
                    result
                        .errors
                        .iter()
                        .map(|(k, v)| format!("{k} {v}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        );
        println!(
            "latency ms: p50 {:.3}  p90 {:.3}  p99 {:.3}  p99.9 {:.3}  p99.99 {:.3}  max {:.3}{}",
            pct(0.5),
            pct(0.9),
            pct(0.99),
            pct(0.999),
            pct(0.9999),
            h.max() as f64 / 1e3,
            if args.rate.is_some() {
                "  (from when each request was due)"
            } else {
                ""
            }
        );
        println!(
            "generator CPU {:.2} s ({:.0} requests per CPU-second){}",
            generator_cpu,
            result.requests as f64 / generator_cpu.max(1e-9),
            server_cpu.map_or(String::new(), |c| format!(
                "; server CPU {c:.2} s ({:.0} % of a core)",
                c / result.wall_seconds * 100.0
            ))
        );
        if let Some(c) = server_cpu {
            // Only a busy generator can be the bottleneck: most of its threads' time used.
            let busy = generator_cpu >= 0.7 * result.wall_seconds * threads as f64;
            if generator_cpu > c * 1.5 && busy && args.rate.is_none() {
                eprintln!("bench: note: the generator used more CPU than the server; on this machine it may be the bottleneck");
            }
        }
    }
    Ok(if result.errors_total() == 0 { 0 } else { 1 })
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

/// `spdylab paper pipelining`: seed 003's side-by-side that nobody published —
/// HTTP/1.1, +TLS, +pipelining (depth 8 and 16), h2, h2c — on the built-in
/// server and on nginx, one generator thread against one server thread.
pub fn pipelining_matrix(
    quick: bool,
    out: &std::path::Path,
    connections: usize,
) -> Result<i32, Failure> {
    let site = site::parse_toml("pipelining preset", MATRIX_SITE).map_err(Failure::Usage)?;
    std::fs::create_dir_all(out).map_err(|e| usage(format!("--out {}: {e}", out.display())))?;
    let (duration, warmup) = if quick {
        (Duration::from_secs(3), Duration::from_secs(1))
    } else {
        (Duration::from_secs(10), Duration::from_secs(2))
    };
    let configs: [(&str, usize); 8] = [
        ("http", 1),
        ("http-pipelined", 8),
        ("http-pipelined", 16),
        ("https", 1),
        ("https-pipelined", 8),
        ("spdy3", 100),
        ("h2", 100),
        ("h2c", 100),
    ];
    let files = [("/", "612 B file"), ("/icon.png", "1.6 kB PNG")];
    let host = site.root().host.clone();
    let mut rows = Vec::new();
    let total = 2 * configs.len() * files.len();
    let progress = crate::progress::CountProgress::new("pipelining", total);
    let mut done = 0;
    for server in ["builtin", "nginx"] {
        // One server for all its rows: (cleartext, tls, h2c) addresses, CA, CPU probe.
        let ca = server::Ca::new()?;
        let (clear, tls, h2c, stop, nginx, _docroot, ca_der) = if server == "builtin" {
            let (t, _, stop) = start_builtin(site.clone(), false, Some(1))?;
            let (ts, der, stop2) = start_builtin(site.clone(), true, Some(1))?;
            (t.addr, ts.addr, t.addr, vec![stop, stop2], None, None, der)
        } else {
            let docroot = netns::Scratch::new("docroot")?;
            peers::write_docroot(&site, &docroot.0)?;
            let (cert, key) = ca.issue_pem(&[host.clone(), "127.0.0.1".into()])?;
            let p = netns::free_ports(3)?;
            let ports = (p[0], p[1], p[2]);
            let ng = peers::Peer::start(
                peers::PeerKind::Nginx,
                &peers::PeerOptions {
                    addresses: vec![[127, 0, 0, 1].into()],
                    http_port: ports.0,
                    https_port: ports.1,
                    h2c_port: Some(ports.2),
                    tls13_only: None,
                    cert_pem: cert,
                    key_pem: key,
                    workers: 1,
                    max_streams: 100,
                    keepalive_timeout: None,
                    access_log: false,
                    docroot: docroot.0.clone(),
                },
            )
            .map_err(|e| Failure::Setup(Box::new(e)))?;
            let a = |p| SocketAddr::from(([127, 0, 0, 1], p));
            (
                a(ports.0),
                a(ports.1),
                a(ports.2),
                vec![],
                Some(ng),
                Some(docroot),
                ca.der(),
            )
        };
        for (path, file) in files {
            for (name, depth) in configs {
                let protocol: Protocol = name.parse().map_err(Failure::Usage)?;
                if nginx.is_some() && protocol == Protocol::Spdy3 {
                    // Refused, never measured as something else.
                    done += 1;
                    rows.push(report::BenchRow {
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
                        skipped: Some(
                            "nginx dropped SPDY in 1.9.5 (Debian's 1.22 has HTTP/2 only)".into(),
                        ),
                    });
                    continue;
                }
                let wire = protocol;
                let addr = if protocol == Protocol::H2c {
                    h2c
                } else if protocol.tls() {
                    tls
                } else {
                    clear
                };
                let tls_config = if protocol.tls() {
                    let mut roots = rustls::RootCertStore::empty();
                    roots
                        .add(ca_der.clone())
                        .map_err(|e| usage(e.to_string()))?;
                    let mut c = rustls::ClientConfig::builder()
                        .with_root_certificates(roots)
                        .with_no_client_auth();
                    c.alpn_protocols = vec![wire.alpn().to_vec()];
                    Some(Arc::new(c))
                } else {
                    None
                };
                let spec = BenchSpec {
                    addr,
                    host: host.clone(),
                    tls: tls_config,
                    protocol: wire,
                    connections,
                    depth: if wire.multiplexed() { 1 } else { depth },
                    streams: if wire.multiplexed() { depth } else { 1 },
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
                    Some(n) => tree_cpu(n.pid).unwrap_or(0.0),
                    None => threads_cpu(SERVER_THREADS),
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
                done += 1;
                progress.item(
                    done,
                    total,
                    &format!(
                        "{server} {name} x{depth} {file}: {:.0} req/s",
                        r.requests_per_sec()
                    ),
                );
                rows.push(report::BenchRow {
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
            }
        }
        for s in stop {
            let _ = s.send(());
        }
        drop(nginx);
    }
    progress.finish();
    println!(
        "{:<8} {:<12} {:<16} {:>5} {:>12} {:>9} {:>9} {:>7}",
        "server", "file", "protocol", "depth", "req/s", "p50 ms", "p99 ms", "errors"
    );
    for r in rows.iter().filter(|r| r.skipped.is_none()) {
        println!(
            "{:<8} {:<12} {:<16} {:>5} {:>12.0} {:>9.3} {:>9.3} {:>7}",
            r.server, r.file, r.protocol, r.depth, r.requests_per_sec, r.p50_ms, r.p99_ms, r.errors
        );
    }
    let html = report::write_bench(
        out,
        "pipelining and multiplexing (seed 003)",
        &format!("{connections} connections, one generator thread against one server thread (nginx: 1 worker; built-in: 1 runtime thread), closed loop, {}s measured after {}s.", duration.as_secs(), warmup.as_secs()),
        &rows,
    )?;
    eprintln!(
        "pipelining: {} and {}",
        out.join("pipelining.csv").display(),
        html.display()
    );
    Ok(if rows.iter().all(|r| r.errors == 0) {
        0
    } else {
        1
    })
}
