//! The server of a testbed, for `compare` and `load` alike: the built-in one
//! on threads of this process (its sockets bound in the server namespace), or
//! a real one from a generated config, confined there (own PID namespace: it
//! dies with the testbed), waited for on every port, Apache until it settles.

use crate::trial::{ServerKind, HTTPS_PORT, HTTP_PORT};
use netns::{server_addr, Side, Testbed, TestbedSpec};
use server::{Ca, Server, ServerOptions};
use site::Site;
use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener, UdpSocket};
use std::os::fd::{AsRawFd, FromRawFd, IntoRawFd, RawFd};
use std::time::{Duration, Instant};

/// Where a site lives in a testbed: each host's server address (the client's
/// resolver), the testbed's spec with its hosts file filled in, and the
/// server addresses (one per shard).
pub struct Placement {
    pub resolve: HashMap<String, IpAddr>,
    pub testbed: TestbedSpec,
    pub addresses: Vec<IpAddr>,
}

/// Spreads `site`'s hosts over the shards of `testbed`.
///
/// An imported page is replayed Mahimahi's way: every origin (host) on its own
/// address, whatever `shards` says (up to the testbed's limit, then shared).
pub fn place(site: &Site, testbed: &TestbedSpec) -> Placement {
    let mut spec = testbed.clone();
    if site.is_recorded() {
        spec.shards = site.hosts().len().clamp(1, netns::MAX_SHARDS);
    }
    let testbed = &spec.clone();
    let map = site.shard_map(testbed.shards);
    spec.hosts = map
        .iter()
        .map(|(h, s)| (h.clone(), server_addr(*s)))
        .collect();
    Placement {
        resolve: map
            .iter()
            .map(|(h, s)| (h.clone(), IpAddr::V4(server_addr(*s))))
            .collect(),
        testbed: spec,
        addresses: (1..=testbed.shards)
            .map(|i| IpAddr::V4(server_addr(i)))
            .collect(),
    }
}

/// What to start.
pub struct ServerSetup<'a> {
    pub site: &'a Site,
    pub kind: ServerKind,
    /// The Trial's server knobs (`Trial::served`): the built-in server takes
    /// them whole; a real one takes what its capability table says.
    pub knobs: server::Knobs,
    /// Keep-alive timeout of a real server (None: its default).
    pub keepalive: Option<Duration>,
    /// Whether a real server logs each request (with its protocol).
    pub access_log: bool,
    /// Stop the built-in server after this long (a fault, for tests).
    pub stop_after: Option<Duration>,
    /// Name of the built-in server's threads (CPU accounting finds them by it).
    pub thread_name: &'static str,
}

/// A running server; `stop` ends it (a real one ends with the testbed).
pub struct RunningServer {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<io::Result<()>>>,
    /// A real server's process (the keeper of its PID namespace).
    pub pid: Option<u32>,
    /// A real server's mod_status address (Apache).
    pub apache_status: Option<SocketAddr>,
    /// A real server's directory (config, logs) and its docroot.
    files: Option<(netns::Scratch, netns::Scratch)>,
}

impl RunningServer {
    /// A real server's directory: config and logs.
    pub fn dir(&self) -> Option<&std::path::Path> {
        self.files.as_ref().map(|(s, _)| s.0.as_path())
    }

    /// Stops the built-in server and waits for its threads.
    pub fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts the server of `setup` at `addresses` (ports 80 and 443) in `testbed`.
pub fn start(
    testbed: &mut Testbed,
    ca: &Ca,
    addresses: &[IpAddr],
    setup: &ServerSetup<'_>,
) -> io::Result<RunningServer> {
    match setup.kind {
        ServerKind::Builtin => start_builtin(testbed, ca, addresses, setup),
        ServerKind::Peer(kind) => start_peer(testbed, ca, addresses, setup, kind),
    }
}

/// The built-in server's options in `testbed`: its knobs, and the testbed's
/// congestion control and initial window, which h3 takes unless its own
/// knobs say otherwise (`ServerOptions::quic_knobs`).
pub fn builtin_options(knobs: server::Knobs, testbed: &TestbedSpec) -> ServerOptions {
    ServerOptions {
        knobs,
        cc: Some(testbed.cc.name().to_string()),
        iw: testbed.iw,
        // h3 is TLS 1.3 only: a TLS 1.2 testbed offers the rest
        // (`Trial::refusal` refuses h3 with --tls 1.2 before this).
        offer: if knobs.tls == server::TlsVersions::Only12 {
            server::Offer::of(&[
                proto::Protocol::Http,
                proto::Protocol::Https,
                proto::Protocol::H2,
                proto::Protocol::H2c,
                proto::Protocol::Spdy3,
            ])
        } else {
            server::Offer::ALL
        },
    }
}

/// The built-in server on its own threads, its listeners bound in the server
/// namespace.
fn start_builtin(
    testbed: &mut Testbed,
    ca: &Ca,
    addresses: &[IpAddr],
    setup: &ServerSetup<'_>,
) -> io::Result<RunningServer> {
    let bind = |port: u16| -> io::Result<Vec<TcpListener>> {
        addresses
            .iter()
            .map(|a| {
                let addr = SocketAddr::new(*a, port);
                testbed
                    .namespace(Side::Server)
                    .run(move || TcpListener::bind(addr))
            })
            .collect()
    };
    let (cleartext, tls) = (bind(HTTP_PORT)?, bind(HTTPS_PORT)?);
    // h3: UDP 443 of each address.
    let quic: Vec<UdpSocket> = addresses
        .iter()
        .map(|a| {
            let addr = SocketAddr::new(*a, HTTPS_PORT);
            testbed
                .namespace(Side::Server)
                .run(move || UdpSocket::bind(addr))
        })
        .collect::<io::Result<_>>()?;
    let server = Server::new(
        setup.site.clone(),
        builtin_options(setup.knobs, testbed.spec()),
        ca,
        addresses,
    )?;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let (name, stop_after) = (setup.thread_name, setup.stop_after);
    // The server's threads get a descriptor table of their own (see
    // `netns::own_fd_table`): its sockets and the load generator's
    // each count against RLIMIT_NOFILE apart. The listeners go over
    // as numbers; our copies close once the server has its own.
    init_tokio_globals();
    let fds: Vec<RawFd> = cleartext
        .iter()
        .chain(&tls)
        .map(|l| l.as_raw_fd())
        .chain(quic.iter().map(|u| u.as_raw_fd()))
        .collect();
    let (n_clear, n_tls) = (cleartext.len(), tls.len());
    let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel::<io::Result<()>>(1);
    let thread =
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || -> io::Result<()> {
                let owned = netns::own_fd_table();
                let _ = ready_tx.send(owned);
                // SAFETY: these descriptors are open in this thread's table
                // (a copy, or the shared one if own_fd_table failed) and
                // owned by nothing else in it.
                let (cleartext, tls, quic) = unsafe {
                    let listener = |fd: &RawFd| TcpListener::from_raw_fd(*fd);
                    (
                        fds[..n_clear].iter().map(listener).collect::<Vec<_>>(),
                        fds[n_clear..n_clear + n_tls]
                            .iter()
                            .map(listener)
                            .collect::<Vec<_>>(),
                        fds[n_clear + n_tls..]
                            .iter()
                            .map(|fd| UdpSocket::from_raw_fd(*fd))
                            .collect::<Vec<_>>(),
                    )
                };
                let server = server.with_quic(quic);
                let rt = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(2)
                    .thread_name(name)
                    .enable_all()
                    .build()?;
                rt.block_on(server.run(cleartext, tls, async move {
                    match stop_after {
                        Some(d) => {
                            let _ = tokio::time::timeout(d, stop_rx).await;
                        }
                        None => {
                            let _ = stop_rx.await;
                        }
                    }
                }))
            })?;
    match ready_rx.recv() {
        // Our copies of the listeners close here; the server's stay.
        Ok(Ok(())) => drop((cleartext, tls, quic)),
        // One table still: the server owns them (it closes them).
        _ => {
            for l in cleartext.into_iter().chain(tls) {
                let _ = l.into_raw_fd();
            }
            for u in quic {
                let _ = u.into_raw_fd();
            }
        }
    }
    Ok(RunningServer {
        stop: Some(stop_tx),
        thread: Some(thread),
        pid: None,
        apache_status: None,
        files: None,
    })
}

/// A real server (`kind`) in the server namespace, with its docroot and
/// configuration; ready when every port listens (Apache: when its workers
/// settled).
fn start_peer(
    testbed: &mut Testbed,
    ca: &Ca,
    addresses: &[IpAddr],
    setup: &ServerSetup<'_>,
    kind: peers::PeerKind,
) -> io::Result<RunningServer> {
    let docroot = netns::Scratch::new("docroot")?;
    peers::write_docroot(setup.site, &docroot.0)?;
    let mut names: Vec<String> = setup.site.hosts().iter().map(|h| h.to_string()).collect();
    names.extend(addresses.iter().map(|a| a.to_string()));
    let (cert_pem, key_pem) = ca.issue_pem(&names)?;
    let peers::Prepared {
        scratch, command, ..
    } = peers::prepare(
        kind,
        &peers::PeerOptions {
            addresses: addresses.to_vec(),
            http_port: HTTP_PORT,
            https_port: HTTPS_PORT,
            h2c_port: None,
            tls13_only: setup.knobs.tls.tls13_only(),
            cert_pem,
            key_pem,
            workers: 2,
            max_streams: setup.knobs.max_streams,
            keepalive_timeout: setup.keepalive,
            access_log: setup.access_log,
            docroot: docroot.0.clone(),
            early_data: setup.knobs.early_data,
        },
    )?;
    let pid = testbed.spawn_background(Side::Server, command)?;
    let ports: Vec<SocketAddr> = addresses
        .iter()
        .flat_map(|a| {
            [
                SocketAddr::new(*a, HTTP_PORT),
                SocketAddr::new(*a, HTTPS_PORT),
            ]
        })
        .collect();
    if let Err(e) = wait_for_ports(testbed, &ports, Duration::from_secs(10)) {
        return Err(io::Error::other(format!(
            "{kind} did not start in the testbed ({e}); its log:\n{}",
            peers::error_log(&scratch.0)
        )));
    }
    let mut apache_status = None;
    if kind == peers::PeerKind::Apache {
        let status = SocketAddr::new(addresses[0], HTTP_PORT);
        let ns = testbed.namespace(Side::Server);
        peers::wait_apache_settled(
            &mut || ns.run(move || peers::fetch_apache_status(status)),
            Duration::from_secs(15),
        )?;
        apache_status = Some(status);
    }
    Ok(RunningServer {
        stop: None,
        thread: None,
        pid: Some(pid),
        apache_status,
        files: Some((scratch, docroot)),
    })
}

/// Opens the process-wide descriptors a tokio runtime with I/O dups (its
/// signal pipe) while every thread shares one table, so that a thread which
/// takes a table of its own (`netns::own_fd_table`) has them too.
pub(crate) fn init_tokio_globals() {
    let _ = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build();
}

/// Waits until something listens on every one of `addrs` in the server
/// namespace (read from its /proc/net/tcp*), or `within` passes.
fn wait_for_ports(testbed: &Testbed, addrs: &[SocketAddr], within: Duration) -> io::Result<()> {
    let deadline = Instant::now() + within;
    loop {
        let mut listening = Vec::new();
        for f in ["net/tcp", "net/tcp6"] {
            let table = testbed
                .namespace(Side::Server)
                .read_proc(f)
                .unwrap_or_default();
            for l in table.lines().skip(1) {
                let cols: Vec<&str> = l.split_whitespace().collect();
                if cols.get(3) == Some(&"0A") {
                    if let Some(port) = cols.get(1).and_then(|a| a.rsplit(':').next()) {
                        listening.push((cols[1].to_string(), u16::from_str_radix(port, 16).ok()));
                    }
                }
            }
        }
        // A socket on 0.0.0.0/:: listens on every address; else the address must match.
        let ok = |a: &SocketAddr| {
            listening.iter().any(|(local, port)| {
                *port == Some(a.port())
                    && (local.starts_with("00000000:")
                        || local.starts_with("00000000000000000000000000000000:")
                        || proc_addr(a.ip()).is_some_and(|hex| local.starts_with(&hex)))
            })
        };
        if let Some(missing) = addrs.iter().find(|a| !ok(a)) {
            if Instant::now() >= deadline {
                return Err(io::Error::other(format!(
                    "nothing listens on {missing} after {within:?}"
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        } else {
            return Ok(());
        }
    }
}

/// An IPv4 address as /proc/net/tcp writes it (host byte order, hex).
fn proc_addr(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => Some(format!("{:08X}:", u32::from_ne_bytes(v4.octets()))),
        IpAddr::V6(_) => None,
    }
}
