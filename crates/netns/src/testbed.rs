//! The Testbed: a client namespace and a server namespace joined by an emulated
//! Link. The client is 198.18.0.2; server host *i* is 198.18.1.*i* (one address
//! per shard). Dropping the Testbed stops the emulator and kills what it started.

use crate::emulator::{Emulator, EmulatorCounters};
use crate::namespace::NetNs;
use crate::process::Confinement;
use crate::tun::Tun;
use link::{Link, LinkSpec, LinkStats, Observer};
use serde::Serialize;
use std::fmt;
use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::process::{Child, Command};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
/// The largest number of server addresses (shards) a testbed carries.
pub const MAX_SHARDS: usize = 254;

/// The address of server host `i` (1-based).
pub fn server_addr(i: usize) -> Ipv4Addr {
    assert!(
        (1..=MAX_SHARDS).contains(&i),
        "server host {i} out of range"
    );
    Ipv4Addr::new(198, 18, 1, i as u8)
}

/// Which end of the link a program runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

/// TCP congestion control, set as the namespace's default (and per socket by our own code).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControl {
    Cubic,
    Bbr,
    Reno,
}

impl CongestionControl {
    pub fn name(self) -> &'static str {
        match self {
            CongestionControl::Cubic => "cubic",
            CongestionControl::Bbr => "bbr",
            CongestionControl::Reno => "reno",
        }
    }
}

impl fmt::Display for CongestionControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Everything that defines a testbed.
#[derive(Debug, Clone, Serialize)]
pub struct TestbedSpec {
    pub link: LinkSpec,
    /// Server addresses (shards), 1..=254.
    pub shards: usize,
    /// The server's TCP initial congestion window in segments (route `initcwnd`);
    /// None keeps the kernel's default of 10.
    pub iw: Option<u32>,
    pub cc: CongestionControl,
    /// Seeds the link's loss processes.
    pub seed: u64,
    /// Extra names for the hosts file (a Site's hosts, mapped to shards).
    pub hosts: Vec<(String, Ipv4Addr)>,
    /// Keep the kernel's per-destination TCP metrics (RTT, ssthresh, cwnd:
    /// `ip tcp_metrics`) from one connection to the next, as a 2013 kernel
    /// did between back-to-back runs (`tcp_no_metrics_save=0`). Default false:
    /// every connection starts cold (`tcp_no_metrics_save=1`).
    pub warm_metrics: bool,
    /// TCP Fast Open on both ends (`net.ipv4.tcp_fastopen=3` in the client's
    /// and the server's namespaces: client and server bits). Each namespace
    /// keeps its own cookies, so a testbed's later connections to a server
    /// address carry data in their SYN. Default false: the kernel's 1
    /// (client bit only), which nothing here uses.
    pub tcp_fastopen: bool,
    /// Competing flows the probes start before each page (`cross`:
    /// `Testbed::start_cross_traffic`); empty: none.
    pub cross: link::CrossTraffic,
}

/// The one line that describes a testbed's link, in progress lines, tables
/// and the commands' JSON (`"link"`): `rtt 150ms (down 75ms, up 75ms), down
/// 1mbit, up 1mbit, loss 0%, queue 256p, iw default, cc cubic`.
impl fmt::Display for TestbedSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = |d: &link::DirectionSpec| match &d.service {
            link::Service::Unlimited => "unlimited".to_string(),
            link::Service::Rate(r) => r.to_string(),
            link::Service::Trace(t) => format!("trace {}", t.name()),
        };
        let l = &self.link;
        write!(
            f,
            "rtt {} (down {}, up {}), down {}, up {}, loss {}, queue {}, iw {}, cc {}",
            link::units::format_duration(l.rtt()),
            link::units::format_duration(l.down.delay),
            link::units::format_duration(l.up.delay),
            side(&l.down),
            side(&l.up),
            l.down.loss,
            l.down.queue,
            self.iw.map_or("default".to_string(), |i| i.to_string()),
            self.cc
        )
    }
}

impl Default for TestbedSpec {
    fn default() -> Self {
        TestbedSpec {
            link: LinkSpec::default(),
            shards: 1,
            iw: None,
            cc: CongestionControl::Cubic,
            seed: 1,
            hosts: Vec::new(),
            warm_metrics: false,
            tcp_fastopen: false,
            cross: link::CrossTraffic::default(),
        }
    }
}

/// Read access to a running link from any thread.
#[derive(Clone)]
pub struct LinkHandle(Arc<Mutex<Link>>);

impl LinkHandle {
    pub fn stats(&self) -> LinkStats {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).stats()
    }

    /// Packets inside the link (queued or in flight), both directions.
    pub fn packets_inside(&self) -> usize {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .packets_inside()
    }
}

/// A running testbed.
pub struct Testbed {
    spec: TestbedSpec,
    client: NetNs,
    server: NetNs,
    hosts: String,
    link: Arc<Mutex<Link>>,
    counters: Arc<EmulatorCounters>,
    emulator: Emulator,
    epoch: Instant,
    children: Vec<Child>,
}

impl Testbed {
    /// Builds the namespaces, TUN devices, addresses and routes, and starts the link.
    pub fn start(spec: TestbedSpec) -> io::Result<Testbed> {
        Testbed::start_observed(spec, Vec::new())
    }

    /// As `start`, with observers (packet log, pcap) attached to the link from its first packet.
    pub fn start_observed(
        spec: TestbedSpec,
        observers: Vec<Box<dyn Observer>>,
    ) -> io::Result<Testbed> {
        if !(1..=MAX_SHARDS).contains(&spec.shards) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("shards must be 1..={MAX_SHARDS}, not {}", spec.shards),
            ));
        }
        let client = NetNs::new()?;
        let server = NetNs::new()?;
        let client_tun = Tun::create(&client, "tun0")?;
        let server_tun = Tun::create(&server, "tun0")?;
        // Sysctls first: with IPv6 off before the links come up, no router
        // solicitation or MLD packet ever crosses the link (nor draws on its
        // loss process), so a seed gives the same losses every time.
        for ns in [&client, &server] {
            apply_sysctls(ns, &spec)?;
        }
        configure(&client, &client_iproute())?;
        configure(&server, &server_iproute(&spec))?;
        let hosts = hosts_file(&spec);

        let mut link = Link::new(&spec.link, spec.seed);
        for o in observers {
            link.add_observer(o);
        }
        let link = Arc::new(Mutex::new(link));
        let counters = Arc::new(EmulatorCounters::default());
        let epoch = Instant::now();
        let emulator = Emulator::start(
            client_tun,
            server_tun,
            link.clone(),
            epoch,
            counters.clone(),
            crate::emulator::busy_quantum(&spec.link),
        )?;
        Ok(Testbed {
            spec,
            client,
            server,
            hosts,
            link,
            counters,
            emulator,
            epoch,
            children: Vec::new(),
        })
    }

    /// Starts the spec's cross traffic (None when it has none): bulk
    /// flows through the link until the handle is stopped or dropped.
    pub fn start_cross_traffic(&self) -> io::Result<Option<crate::cross::CrossRunning>> {
        if self.spec.cross.is_empty() {
            return Ok(None);
        }
        crate::cross::CrossRunning::start(&self.spec.cross, &self.client, &self.server).map(Some)
    }

    pub fn spec(&self) -> &TestbedSpec {
        &self.spec
    }

    pub fn namespace(&self, side: Side) -> &NetNs {
        match side {
            Side::Client => &self.client,
            Side::Server => &self.server,
        }
    }

    /// The instant the link's time counts from (link `Time` 0).
    pub fn epoch(&self) -> Instant {
        self.epoch
    }

    /// Prepares `cmd` to run confined at `side`: its namespace, the testbed's
    /// hosts file, a PID namespace, killed if we die.
    pub fn confine(&self, side: Side, cmd: &mut Command) {
        Confinement {
            netns: self.namespace(side).as_raw_fd(),
            hosts: self.hosts.clone().into_bytes(),
        }
        .apply(cmd);
    }

    /// Starts a background program (e.g. a server) at `side`; it is killed when
    /// the testbed is dropped.
    pub fn spawn_background(&mut self, side: Side, mut cmd: Command) -> io::Result<u32> {
        self.confine(side, &mut cmd);
        let child = cmd.spawn()?;
        let pid = child.id();
        self.children.push(child);
        Ok(pid)
    }

    /// Waits until some socket listens (TCP) or is bound (UDP) at `side`, or the
    /// deadline passes; returns whether one did.
    pub fn wait_for_listener(&self, side: Side, within: std::time::Duration) -> bool {
        let deadline = Instant::now() + within;
        loop {
            let listening = ["net/tcp", "net/tcp6"]
                .iter()
                .filter_map(|f| self.namespace(side).read_proc(f).ok())
                .any(|t| {
                    t.lines()
                        .skip(1)
                        .any(|l| l.split_whitespace().nth(3) == Some("0A"))
                })
                || ["net/udp", "net/udp6"]
                    .iter()
                    .filter_map(|f| self.namespace(side).read_proc(f).ok())
                    .any(|t| t.lines().count() > 1);
            if listening {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Runs `ip -batch -` with `commands` (one per line) in one side's namespace.
    pub fn ip(&self, side: Side, commands: &str) -> io::Result<()> {
        configure(self.namespace(side), commands)
    }

    /// A handle on the running link that other threads may keep.
    pub fn link(&self) -> LinkHandle {
        LinkHandle(self.link.clone())
    }

    /// The link's counters so far.
    pub fn stats(&self) -> LinkStats {
        self.link.lock().unwrap_or_else(|e| e.into_inner()).stats()
    }

    /// CPU time the emulator thread has used so far.
    pub fn emulator_cpu(&self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.counters.cpu_ns.load(Ordering::Relaxed))
    }

    /// Stops the link, kills background programs and releases the namespaces.
    /// Returns the link's final counters, or the error that stopped the emulator.
    pub fn shutdown(mut self) -> io::Result<LinkStats> {
        self.kill_children();
        self.emulator.stop()?;
        Ok(self.stats())
    }

    fn kill_children(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.children.clear();
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        self.kill_children();
    }
}

fn client_iproute() -> String {
    format!(
        "link set lo up\n\
         link set tun0 mtu 1500 up\n\
         addr add {CLIENT_ADDR}/32 dev tun0\n\
         addr add {cross}/32 dev tun0\n\
         route add 198.18.1.0/24 dev tun0\n\
         route add 198.18.2.0/24 dev tun0\n",
        cross = crate::cross::CROSS_CLIENT_ADDR
    )
}

fn server_iproute(spec: &TestbedSpec) -> String {
    let mut s = String::from("link set lo up\nlink set tun0 mtu 1500 up\n");
    for i in 1..=spec.shards {
        s += &format!("addr add {}/32 dev tun0\n", server_addr(i));
    }
    s += &format!("addr add {}/32 dev tun0\n", crate::cross::CROSS_SERVER_ADDR);
    s += "route add 198.18.0.0/24 dev tun0";
    if let Some(iw) = spec.iw {
        s += &format!(" initcwnd {iw}");
    }
    s.push('\n');
    s
}

/// Runs `ip -batch -` inside `ns` with the given commands.
fn configure(ns: &NetNs, batch: &str) -> io::Result<()> {
    let mut cmd = Command::new("ip");
    cmd.args(["-batch", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    // `ns` outlives the spawn below.
    sys::setns_on_exec(&mut cmd, ns.as_raw_fd(), libc::CLONE_NEWNET);
    let mut child = cmd.spawn().map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot run 'ip' (iproute2 is needed to configure the testbed): {e}"),
        )
    })?;
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(batch.as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        return Err(io::Error::other(format!(
            "configuring the testbed failed: ip: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

fn apply_sysctls(ns: &NetNs, spec: &TestbedSpec) -> io::Result<()> {
    // Cold (default): no metrics (ssthresh, RTT) cached from earlier
    // connections; warm: the kernel keeps them per destination.
    let save = if spec.warm_metrics { "0" } else { "1" };
    ns.write_sysctl("net/ipv4/tcp_no_metrics_save", save)?;
    if spec.tcp_fastopen {
        ns.write_sysctl("net/ipv4/tcp_fastopen", "3")?;
    }
    for key in [
        "net/ipv6/conf/default/disable_ipv6",
        "net/ipv6/conf/all/disable_ipv6",
    ] {
        let _ = ns.write_sysctl(key, "1");
    }
    set_congestion_control(ns, spec.cc)
}

/// Makes `cc` the namespace's default. The kernel lets a namespace pick only
/// algorithms in the host's allowed list; as root we add it there (a harmless,
/// host-wide permission), otherwise we say what to run.
fn set_congestion_control(ns: &NetNs, cc: CongestionControl) -> io::Result<()> {
    let key = "net/ipv4/tcp_congestion_control";
    match ns.write_sysctl(key, cc.name()) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() != io::ErrorKind::PermissionDenied => return Err(e),
        Err(_) => {}
    }
    let allowed_path = "/proc/sys/net/ipv4/tcp_allowed_congestion_control";
    let allowed = std::fs::read_to_string(allowed_path).unwrap_or_default();
    let widened = format!("{} {}", allowed.trim(), cc.name());
    if std::fs::write(allowed_path, &widened).is_err() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "--cc {cc}: the host does not let namespaces use '{cc}'; allow it with: \
                 sysctl -w net.ipv4.tcp_allowed_congestion_control='{}'",
                widened.trim()
            ),
        ));
    }
    ns.write_sysctl(key, cc.name()).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("--cc {cc}: {e} (is the tcp_{cc} module available?)"),
        )
    })
}

fn hosts_file(spec: &TestbedSpec) -> String {
    let mut s = String::from("# spdylab testbed hosts\n127.0.0.1\tlocalhost\n");
    s += &format!("{CLIENT_ADDR}\tclient\n");
    for i in 1..=spec.shards {
        let extra = if i == 1 { " server" } else { "" };
        s += &format!("{}\tserver{i}{extra}\n", server_addr(i));
    }
    for (name, addr) in &spec.hosts {
        s += &format!("{addr}\t{name}\n");
    }
    s
}
