//! spdylab's real browser: Debian's headless Chromium, a fresh profile per page
//! load, driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
//! no port to find or open inside the client's namespace). It trusts only the
//! testbed CA (SPKI list), resolves only the testbed's hosts, speaks the protocol
//! asked for (h1 by `--disable-http2`, h2 through ALPN, h3 by forcing QUIC
//! on the page's origins, QUIC off otherwise), and its
//! Network events become the same `PageResult` the model produces, with what
//! the user saw (TTFB, FCP, LCP: `paint`; Speed Index, visually complete and
//! a filmstrip from the screencast's frames: `visual`) beside it. It never
//! runs as root, and with its sandbox where it can start (`sandbox`); on this
//! host it reaches only the hosts allowed (`allow`).

pub mod allow;
/// The DevTools pipe; public for the fuzz target that feeds it hostile bytes.
pub mod cdp;
pub mod netlog;
mod paint;
mod recorder;
pub mod sandbox;
mod visual;

pub use recorder::{devtools_protocol, Body, CacheUse, RecordSummary, Recorder};
pub use visual::filmstrip_progress;

use client::PageResult;
use netns::Scratch;
use proto::Protocol;
use std::io;
use std::net::IpAddr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A browser is idle before a navigation ([`Browser::settle`]) when its
/// processes used at most this share of one core in each of
/// [`SETTLE_QUIET`] windows of [`SETTLE_WINDOW`] in a row. WebPageTest's
/// author's benchmark runner waits for the machine to be at most
/// max(30 % / cores, 10 %) busy for 2 s; here the browser's own tree is
/// measured, so that other testbeds running beside it (a campaign's jobs)
/// do not hold it back.
const SETTLE_CPU: f64 = 0.1;
/// One window of [`Browser::settle`]'s measure (20 ms of CPU at
/// [`SETTLE_CPU`]: two of the kernel's 10 ms ticks).
const SETTLE_WINDOW: Duration = Duration::from_millis(200);
/// Windows in a row under [`SETTLE_CPU`] that make the browser idle.
const SETTLE_QUIET: u32 = 2;
/// The longest [`Browser::settle`] waits before navigating all the same.
const SETTLE_MAX: Duration = Duration::from_secs(5);

/// What one page load with Chromium needs.
#[derive(Debug, Clone)]
pub struct ChromiumOptions {
    pub protocol: Protocol,
    /// The page's URL.
    pub url: String,
    /// Each host of the page and its address (in a testbed).
    pub resolve: Vec<(String, IpAddr)>,
    /// base64(SHA-256(SubjectPublicKeyInfo)) of the certificates to trust.
    pub spki: Vec<String>,
    /// The whole load must end within this.
    pub timeout: Duration,
    /// Hosts (and ports) reached through the system's resolver, or where
    /// `map` sends them (`spdylab record URL --allow-host`; `allow`'s module
    /// doc); empty in a testbed. Every name and address neither here nor in
    /// `resolve` resolves to nothing.
    pub allow: Vec<allow::Reach>,
    /// Accept any certificate (`spdylab record --insecure`).
    pub insecure: bool,
    /// More host rules: a name (`*` for any characters) and what it maps
    /// to, an address with a port if given. With `allow` empty (a testbed)
    /// each is a rule as given; with `allow` (`spdylab record --map`), where
    /// the allowed hosts it matches go, and nothing more.
    pub map: Vec<(String, String)>,
    /// What a Trial sets (`lab::trial::Trial::chromium`), handed down whole.
    pub knobs: Knobs,
    /// Chromium's HTTP cache stays on (a fresh profile's: empty when the
    /// load starts). Off by default (`Network.setCacheDisabled`); on for
    /// 103 Early Hints, whose preloads reach the page through the cache —
    /// with it disabled Chromium fetched every hinted resource twice
    /// (youtube over h2: 745 kB for its 559).
    pub keep_cache: bool,
    /// The browser loads the page twice (a repeat view: `Browser::repeat_view`):
    /// its net benchmarking extension on (`--enable-net-benchmarking`:
    /// `chrome.benchmarking.closeConnections()` between the loads) and its
    /// net log written into the profile (`netlog`: which handshakes resumed
    /// TLS, which QUIC connections sent 0-RTT, which TLS connections over
    /// TCP sent early data), and TLS 1.3 early data over TCP on where
    /// `knobs.tls_early_data` asks (`--enable-features=EnableTLS13EarlyData`,
    /// on https, h2 and SPDY). Needs `keep_cache`.
    pub repeat_view: bool,
}

impl Default for ChromiumOptions {
    /// An h2 load of no page yet, in a testbed (nothing allowed beyond
    /// `resolve`), within 120 s, every knob at its default: a new option is
    /// a field and its default here, not an edit at every load.
    fn default() -> Self {
        ChromiumOptions {
            protocol: Protocol::H2,
            url: String::new(),
            resolve: Vec::new(),
            spki: Vec::new(),
            timeout: Duration::from_secs(120),
            allow: Vec::new(),
            insecure: false,
            map: Vec::new(),
            knobs: Knobs::default(),
            keep_cache: false,
            repeat_view: false,
        }
    }
}

/// Chromium's knobs: the part of a Trial (the experiment's `knobs` section,
/// `results::experiment::FIELDS`) that Chromium honours and the model has no
/// use for, or reads from here. A Trial holds one and hands it down whole, so
/// a new Chromium knob is a field here and its use. `Default` is FIELDS'
/// defaults (a unit test in `lab::trial` checks that they agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knobs {
    /// The renderer's CPU throttled this many times (DevTools'
    /// `Emulation.setCPUThrottlingRate`; 1: not throttled). The model's
    /// browser costs, fitted to this Chromium, are scaled by it too
    /// (`lab::trial::Trial::model_knobs`).
    pub cpu_slowdown: u32,
    /// Whether the screen's frames are recorded (`Page.startScreencast`:
    /// Speed Index, visually complete, the filmstrip); off leaves the
    /// renderer the JPEG encoding of every changed frame (docs/visual.md,
    /// "What it costs").
    pub screencast: bool,
    /// TLS 1.3 early data over TCP on a repeat view
    /// (`--enable-features=EnableTLS13EarlyData`): off, as in stock Chromium
    /// (net/base/features.cc `kEnableTLS13EarlyData`,
    /// FEATURE_DISABLED_BY_DEFAULT). The model sends it when this is on.
    pub tls_early_data: bool,
    /// A repeat view starts with an empty HTTP cache (`--repeat-cache
    /// clear`): every response is fetched again, over resumed TLS and QUIC
    /// 0-RTT (Kakhki et al.'s 0-RTT comparison). Off: WebPageTest's repeat
    /// view, the cache kept. The model clears its own cache when this is on.
    pub clear_cache_before_repeat: bool,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            cpu_slowdown: 1,
            screencast: true,
            tls_early_data: false,
            clear_cache_before_repeat: false,
        }
    }
}

impl ChromiumOptions {
    /// Whether Chromium may reach `url`'s host and port (`resolve` or `allow`).
    pub fn reaches(&self, url: &str) -> bool {
        let in_testbed = allow::authority(url).is_some_and(|(h, _)| {
            self.resolve.iter().any(|(r, _)| r.eq_ignore_ascii_case(&h))
                || (self.allow.is_empty() && self.map.iter().any(|(m, _)| allow::glob(m, &h)))
        });
        in_testbed || allow::allows(&self.allow, url)
    }
}

/// One page load recorded as a HAR 1.2 document with bodies and initiators.
#[derive(Debug, Clone)]
pub struct Recording {
    pub har: serde_json::Value,
    pub summary: RecordSummary,
}

/// Why Chromium cannot load a page over `p` as asked, if it cannot.
pub fn refuses(p: Protocol) -> Option<&'static str> {
    match p {
        Protocol::Spdy3 => Some("Chromium dropped SPDY in version 51: spdy3 needs --client model"),
        Protocol::H2c => Some("Chromium never spoke h2c: h2c needs --client model"),
        Protocol::HttpPipelined | Protocol::HttpsPipelined => {
            Some("Chromium removed HTTP pipelining in version 37: pipelining needs --client model")
        }
        _ => None,
    }
}

/// The Chromium binary, or an error naming the Debian package.
pub fn find() -> io::Result<PathBuf> {
    ["/usr/lib/chromium/chromium", "/usr/bin/chromium"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "chromium not found: install the Debian package `chromium` (apt-get install chromium)",
            )
        })
}

/// The command line for one load; the profile directory must exist and be empty.
pub fn command(o: &ChromiumOptions, profile: &Scratch) -> io::Result<Command> {
    if let Some(why) = refuses(o.protocol) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    }
    let mut rules: Vec<String> = o
        .resolve
        .iter()
        .map(|(h, a)| format!("MAP {h} {a}"))
        .collect();
    match o.allow.is_empty() {
        true => rules.extend(o.map.iter().map(|(h, t)| format!("MAP {h} {t}"))),
        false => rules.extend(allow::rules(&o.allow, &o.map)),
    }
    rules.push("MAP * ~NOTFOUND".into());
    let mut cmd = Command::new(find()?);
    if sandbox::policy().sandbox.is_err() {
        cmd.arg("--no-sandbox");
    }
    cmd.args([
        "--headless=new",
        "--remote-debugging-pipe",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--disable-domain-reliability",
        "--disable-client-side-phishing-detection",
        "--disable-breakpad",
        "--disable-gpu",
        "--mute-audio",
        "--metrics-recording-only",
        "--password-store=basic",
        "--use-mock-keychain",
        // Cross-site iframes in the page's own process, so that their requests
        // are the page target's Network events too (as in the Chrome of 004).
        "--disable-site-isolation-trials",
        // The page's renderer at the browser's own priority: a headless tab
        // counts as hidden, and Chromium lowers a hidden tab's renderer to
        // nice +5 and throttles its timers — on a loaded machine that starved
        // the renderer (icons over h2 at 20 ms / 8 Mbit: 0.4 s to 2.4 s).
        "--disable-renderer-backgrounding",
        "--disable-background-timer-throttling",
        "--disable-backgrounding-occluded-windows",
        "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,OptimizationHints,MediaRouter,Translate,AutofillServerCommunication,CertificateTransparencyComponentUpdater,NetworkTimeServiceQuerying,IsolateOrigins,site-per-process",
        "--window-size=1280,800",
        // WebRTC's UDP would not ask the resolver: no UDP but through a proxy
        // (there is none), so that its TCP goes through the host rules too.
        "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
    ])
    .arg(format!("--user-data-dir={}", profile.0.display()))
    .arg(format!(
        "--ignore-certificate-errors-spki-list={}",
        o.spki.join(",")
    ));
    cmd.arg(format!("--host-resolver-rules={}", rules.join(", ")));
    if o.insecure {
        cmd.arg("--ignore-certificate-errors");
    }
    if o.repeat_view {
        cmd.arg("--enable-net-benchmarking")
            .arg(format!(
                "--log-net-log={}",
                profile.0.join(netlog::FILE).display()
            ))
            .arg("--net-log-capture-mode=Default");
        if o.knobs.tls_early_data && o.protocol.tls() && o.protocol != Protocol::H3 {
            // TLS 1.3 early data over TCP: off by default in Chromium
            // (net/base/features.cc `kEnableTLS13EarlyData`, named
            // "EnableTLS13EarlyData" in Chromium 156's binary): on only
            // when the Trial asks (`--early-data on`).
            cmd.arg("--enable-features=EnableTLS13EarlyData");
        }
    }
    if o.protocol == Protocol::H3 {
        // Chromium accepts a certificate of a private CA over QUIC only for
        // origins forced onto QUIC (no Alt-Svc discovery, no race with TCP).
        let origins: Vec<String> = o.resolve.iter().map(|(h, _)| format!("{h}:443")).collect();
        cmd.args(["--enable-quic", "--quic-version=h3"])
            .arg(format!("--origin-to-force-quic-on={}", origins.join(",")));
    } else {
        cmd.arg("--disable-quic");
    }
    if !matches!(o.protocol, Protocol::H2 | Protocol::H3) {
        cmd.arg("--disable-http2");
    }
    cmd.arg("about:blank");
    Ok(cmd)
}

/// A running Chromium and its DevTools pipe; killed (with everything it
/// started) and its profile removed when dropped.
pub struct Browser {
    child: Child,
    pipe: cdp::Pipe,
    profile: Scratch,
    /// The tabs opened so far (DevTools target ids), closed by `close_connections`.
    tabs: Vec<String>,
}

/// A fresh, empty profile directory (removed when the Browser is dropped; on
/// spdylab's private scratch tmpfs, so gone after `kill -9` too).
pub fn new_profile() -> io::Result<Scratch> {
    Scratch::new("chromium")
}

impl Browser {
    /// Starts `cmd` (from `command`, already confined where it should run by
    /// the caller) with the DevTools pipe on its fds 3 and 4, as the user
    /// `sandbox::policy` names (the profile then that user's, and its home).
    pub fn spawn(mut cmd: Command, profile: Scratch) -> io::Result<Browser> {
        let (to_read, to_write) = pipe()?;
        let (from_read, from_write) = pipe()?;
        // Chromium's --remote-debugging-pipe: it reads fd 3, writes fd 4.
        sys::fds_from_3_on_exec(&mut cmd, [to_read.as_raw_fd(), from_write.as_raw_fd()]);
        let log = std::fs::File::create(profile.0.join("chromium.log"))?;
        if let Some(user) = &sandbox::policy().user {
            use std::os::unix::fs::PermissionsExt;
            std::os::unix::fs::chown(&profile.0, Some(user.uid), Some(user.gid))?;
            std::fs::set_permissions(&profile.0, std::fs::Permissions::from_mode(0o700))?;
            // Its home (caches, NSS database) in the profile too, not root's.
            cmd.env("HOME", &profile.0);
            // After everything registered before (entering the testbed's
            // namespaces needs root).
            sys::run_as_on_exec(&mut cmd, user.uid, user.gid);
        }
        // Its temporary files in the profile, not in the host's /tmp.
        cmd.env("TMPDIR", &profile.0)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        let child = cmd.spawn()?;
        drop((to_read, from_write));
        Ok(Browser {
            child,
            pipe: cdp::Pipe::new(to_write, from_read),
            profile,
            tabs: Vec::new(),
        })
    }

    /// Chromium's own output so far (why it failed).
    pub fn log(&self) -> String {
        let s = std::fs::read_to_string(self.profile.0.join("chromium.log")).unwrap_or_default();
        let lines: Vec<&str> = s.lines().filter(|l| !l.contains("dbus")).collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Loads `url` in a new tab and records it until onload (or the deadline;
    /// a page that declares its own end, `DONE_PROBE`, until that end).
    pub fn load_page(&mut self, o: &ChromiumOptions) -> PageResult {
        self.load_page_cached(o).0
    }

    /// Loads the page as `load_page` does, and says what the load took from
    /// Chromium's HTTP cache (nothing with `keep_cache` off).
    pub fn load_page_cached(&mut self, o: &ChromiumOptions) -> (PageResult, CacheUse) {
        let deadline = Instant::now() + o.timeout;
        match self.navigate(o, deadline) {
            Ok(load) => load,
            Err(e) => (
                PageResult {
                    protocol: o.protocol,
                    plt_ms: 0.0,
                    connections: 0,
                    entries: Vec::new(),
                    error: Some(format!("chromium: {e}\n{}", self.log())),
                    tls_resumed: 0,
                    navigation_start: None,
                    paint: None,
                },
                CacheUse::default(),
            ),
        }
    }

    /// Loads `url` in a new tab as `load_page` does, then asks Chromium for
    /// every response body, and returns the load as a HAR with bodies and
    /// initiators. An error (one line) when the navigation itself failed
    /// (unreachable host, TLS error, …) or onload did not come in time.
    pub fn record_page(&mut self, o: &ChromiumOptions) -> io::Result<Recording> {
        let deadline = Instant::now() + o.timeout;
        let (recorder, session) = self.run(o, deadline, true)?;
        let mut bodies = std::collections::HashMap::new();
        let mut missing = 0;
        for id in recorder.body_ids() {
            match self.pipe.call(
                "Network.getResponseBody",
                serde_json::json!({"requestId": id}),
                Some(&session),
                deadline,
                &mut |_, _| {},
            ) {
                Ok(v) => {
                    let text = v["body"].as_str().unwrap_or("").to_string();
                    let base64 = v["base64Encoded"].as_bool().unwrap_or(false);
                    bodies.insert(id, Body { text, base64 });
                }
                Err(e) if e.kind() == io::ErrorKind::TimedOut => return Err(e),
                Err(_) => missing += 1,
            }
        }
        let (har, mut summary) = recorder.har(&bodies, env!("CARGO_PKG_VERSION"));
        summary.bodies_missing += missing;
        (summary.blocked, summary.blocked_hosts, summary.blocked_urls) =
            allow::blocked(|u| o.reaches(u), recorder.requested_urls());
        Ok(Recording { har, summary })
    }

    /// Closes every tab opened so far, then every connection of the browser
    /// (`chrome.benchmarking.closeConnections()`, in a blank tab of its own:
    /// Chromium's `NetworkContext::CloseAllConnections` — its TCP sockets,
    /// HTTP/2 sessions and QUIC sessions, each QUIC one with a
    /// CONNECTION_CLOSE), keeping its HTTP cache, TLS sessions and QUIC
    /// server configs. Needs `repeat_view` (the extension is off otherwise).
    /// With `clear_cache` the HTTP cache is emptied too
    /// (`Network.clearBrowserCache`, in the same tab; `--repeat-cache
    /// clear`): TLS sessions and QUIC server configs are kept.
    pub fn close_connections(&mut self, deadline: Instant, clear_cache: bool) -> io::Result<()> {
        for tab in std::mem::take(&mut self.tabs) {
            self.close_tab(&tab, deadline)?;
        }
        let (tab, session) = self.new_tab(deadline)?;
        if clear_cache {
            self.pipe.call(
                "Network.clearBrowserCache",
                serde_json::json!({}),
                Some(&session),
                deadline,
                &mut |_, _| {},
            )?;
        }
        let closed = self.pipe.call(
            "Runtime.evaluate",
            serde_json::json!({"expression": CLOSE_CONNECTIONS, "returnByValue": true}),
            Some(&session),
            deadline,
            &mut |_, _| {},
        )?;
        self.close_tab(&tab, deadline)?;
        match closed["result"]["value"].as_bool() {
            Some(true) => Ok(()),
            _ => Err(io::Error::other(format!(
                "chrome.benchmarking.closeConnections() did not run (Chromium started without \
                 --enable-net-benchmarking?): {}",
                closed
            ))),
        }
    }

    /// Ends Chromium as its user would (`Browser.close`: it closes its
    /// connections, QUIC's with a CONNECTION_CLOSE, and writes out its net
    /// log), waiting for it until `deadline` (then it is killed on drop); the
    /// handshakes of each load since it started, from its net log
    /// (`repeat_view`; none without it or if Chromium wrote none).
    pub fn close(&mut self, deadline: Instant) -> Vec<netlog::Handshakes> {
        if self
            .pipe
            .send("Browser.close", serde_json::json!({}), None)
            .is_ok()
        {
            while Instant::now() < deadline {
                match self.child.try_wait() {
                    Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                    Ok(Some(_)) | Err(_) => break,
                }
            }
        }
        std::fs::read_to_string(self.profile.0.join(netlog::FILE))
            .map(|log| netlog::handshakes(&log))
            .unwrap_or_default()
    }

    fn navigate(
        &mut self,
        o: &ChromiumOptions,
        deadline: Instant,
    ) -> io::Result<(PageResult, CacheUse)> {
        let (recorder, _) = self.run(o, deadline, false)?;
        Ok((recorder.finish(o.protocol), recorder.cache_use()))
    }

    /// Closes the tab `tab`.
    fn close_tab(&mut self, tab: &str, deadline: Instant) -> io::Result<()> {
        self.pipe
            .call(
                "Target.closeTarget",
                serde_json::json!({"targetId": tab}),
                None,
                deadline,
                &mut |_, _| {},
            )
            .map(drop)
    }

    /// Waits, before a navigation, until the browser's processes are idle:
    /// [`SETTLE_QUIET`] windows in a row of [`SETTLE_WINDOW`] each in which
    /// they used at most [`SETTLE_CPU`] of a core, for at most
    /// [`SETTLE_MAX`] (or the deadline). A fresh headless Chromium keeps
    /// starting for about half a second after its first tab opens; a page
    /// loaded in that time shares the two cores with it (docs/chromium-flags.md,
    /// "Not a flag: the probe navigates a settled browser"). WebPageTest's
    /// agents wait for an idle machine the same way before each run. A warm
    /// browser (a repeat view's second load) is idle at once: two windows.
    fn settle(&self, deadline: Instant) {
        let limit = (Instant::now() + SETTLE_MAX).min(deadline);
        let cpu = || sys::procstat::tree_cpu_s(self.child.id());
        let mut last = cpu();
        let mut quiet = 0;
        while quiet < SETTLE_QUIET && Instant::now() + SETTLE_WINDOW <= limit {
            std::thread::sleep(SETTLE_WINDOW);
            let now = cpu();
            quiet = match (last, now) {
                (Some(a), Some(b)) if b - a <= SETTLE_CPU * SETTLE_WINDOW.as_secs_f64() => {
                    quiet + 1
                }
                _ => 0,
            };
            last = now;
        }
    }

    /// Opens an about:blank tab and attaches to it: its target id and its
    /// DevTools session.
    fn new_tab(&mut self, deadline: Instant) -> io::Result<(String, String)> {
        let target = self.pipe.call(
            "Target.createTarget",
            serde_json::json!({"url": "about:blank"}),
            None,
            deadline,
            &mut |_, _| {},
        )?;
        let tab = target["targetId"].as_str().unwrap_or_default().to_string();
        let attached = self.pipe.call(
            "Target.attachToTarget",
            serde_json::json!({"targetId": tab, "flatten": true}),
            None,
            deadline,
            &mut |_, _| {},
        )?;
        let session = attached["sessionId"]
            .as_str()
            .ok_or_else(|| io::Error::other("no DevTools session"))?
            .to_string();
        Ok((tab, session))
    }

    /// Opens a tab, navigates it to `o.url` with the cache off and records
    /// its events until onload, and for a page that declares an end of its
    /// own (`DONE_PROBE`) until that end; the recorder and the tab's
    /// DevTools session.
    /// `keep_bodies`: Chromium keeps every body for `Network.getResponseBody`.
    fn run(
        &mut self,
        o: &ChromiumOptions,
        deadline: Instant,
        keep_bodies: bool,
    ) -> io::Result<(Recorder, String)> {
        let (target_id, session) = self.new_tab(deadline)?;
        self.settle(deadline);
        self.tabs.push(target_id.clone());
        let mut recorder = Recorder::new();
        let mut on_event = |method: &str, params: &serde_json::Value| {
            recorder.on_event(method, params);
        };
        let network = if keep_bodies {
            // Room for every body of a large page (the defaults drop big ones).
            serde_json::json!({"maxTotalBufferSize": 512 << 20, "maxResourceBufferSize": 128 << 20})
        } else {
            serde_json::json!({})
        };
        for (method, params) in [
            ("Network.enable", network),
            ("Page.enable", serde_json::json!({})),
            (
                "Network.setCacheDisabled",
                serde_json::json!({"cacheDisabled": !o.keep_cache}),
            ),
            (
                "Emulation.setCPUThrottlingRate",
                serde_json::json!({"rate": o.knobs.cpu_slowdown.max(1)}),
            ),
        ]
        .into_iter()
        .chain(paint_domains(o.knobs.screencast))
        .chain([("Page.navigate", serde_json::json!({"url": o.url}))])
        {
            let r = self
                .pipe
                .call(method, params, Some(&session), deadline, &mut on_event)?;
            if let Some(e) = r.get("errorText").and_then(|e| e.as_str()) {
                return Err(io::Error::other(format!("navigating to {}: {e}", o.url)));
            }
        }
        self.ack_frames(&mut recorder, &session)?;
        // Whether the page declared an end of its own (`DONE_PROBE`): None
        // until asked (at DOMContentLoaded) and answered; Some(mark) once
        // it set the mark it declared, or Some("") for a page that declared none.
        let mut probe: Option<u64> = None;
        let mut declared: Option<String> = None;
        while !(recorder.loaded() && declared.is_some()) {
            if probe.is_none() && (recorder.dom_content_loaded() || recorder.loaded()) {
                probe = Some(self.pipe.send(
                    "Runtime.evaluate",
                    serde_json::json!({"expression": DONE_PROBE, "awaitPromise": true, "returnByValue": true}),
                    Some(&session),
                )?);
            }
            match self.pipe.next_message(deadline)? {
                None if !recorder.loaded() => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no onload within {:?}", o.timeout),
                    ))
                }
                None => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "the page declares its end (a performance mark in <meta name=\"{}\">) and did not reach it within {:?}",
                            site::content::DONE_MARK_META,
                            o.timeout
                        ),
                    ))
                }
                Some(cdp::Message::Event(method, params)) => recorder.on_event(&method, &params),
                Some(cdp::Message::Answer(id, answer)) if Some(id) == probe => {
                    // A page that cannot be asked (its context gone, an
                    // exception) declared nothing: done at onload.
                    let mark = answer
                        .ok()
                        .and_then(|v| v["result"]["value"].as_str().map(String::from))
                        .unwrap_or_default();
                    if !mark.is_empty() {
                        recorder.page_done();
                    }
                    declared = Some(mark);
                }
                Some(cdp::Message::Answer(..)) => {}
            }
            self.ack_frames(&mut recorder, &session)?;
        }
        self.settle_paints(&mut recorder, &session, deadline);
        Ok((recorder, session))
    }

    /// Acknowledges the screencast frames `recorder` received (Chromium
    /// sends the next ones only then), without waiting for the answers.
    fn ack_frames(&mut self, recorder: &mut Recorder, session: &str) -> io::Result<()> {
        for ack in recorder.take_acks() {
            self.pipe.send(
                "Page.screencastFrameAck",
                serde_json::json!({"sessionId": ack}),
                Some(session),
            )?;
        }
        Ok(())
    }

    /// After onload: takes the tab off the network, feeds `recorder` the
    /// reports of the page's paints (each comes when its frame has been
    /// presented, a few ms after it) and describes its LCP element. Listens
    /// until the first contentful paint has been reported — often after
    /// onload: a page whose render-blocking styles and scripts come last
    /// paints its first frame after them — and `PAINT_MARGIN` more, or
    /// until a screencast frame that is not blank came after it (at most
    /// `PAINT_SETTLE` after onload in all), then flushes what the renderer
    /// sent before with a round trip (`Runtime.evaluate` of `0`). PLT was
    /// taken at onload: this costs it nothing (docs/visual.md).
    fn settle_paints(&mut self, recorder: &mut Recorder, session: &str, deadline: Instant) {
        let onload = Instant::now();
        let cap = (onload + PAINT_SETTLE).min(deadline);
        // The tab off the network first: what Chromium fetches after onload
        // (the favicon) would otherwise cross the link inside the probe's
        // window while we listen, and lengthen its time on wire by a round
        // trip. Blocked requests fail in the browser (`blockedReason`
        // "inspector"), without a packet; the recorder leaves them out.
        let _ = self.pipe.call(
            "Network.setBlockedURLs",
            serde_json::json!({"urls": ["*"]}),
            Some(session),
            cap,
            &mut |method: &str, params: &serde_json::Value| recorder.on_event(method, params),
        );
        let mut painted_at = None;
        loop {
            if painted_at.is_none() && recorder.painted() {
                painted_at = Some(Instant::now().max(onload));
            }
            // While the screencast's last frame is blank (the page's
            // background before its content), on to `cap` for the frame
            // of the content: without it the visual metrics have no
            // final frame (`visual`'s module doc).
            let until = match painted_at {
                Some(t) if !recorder.screen_blank() => (t + PAINT_MARGIN).min(cap),
                _ => cap,
            };
            match self.pipe.next_event(until) {
                Ok(Some((method, params))) => recorder.on_event(&method, &params),
                Ok(None) | Err(_) => break,
            }
            if self.ack_frames(recorder, session).is_err() {
                break;
            }
        }
        // The frames by now are all the recorder keeps (`visual`).
        let _ = self.pipe.call(
            "Page.stopScreencast",
            serde_json::json!({}),
            Some(session),
            (Instant::now() + PAINT_MARGIN).min(deadline),
            &mut |method: &str, params: &serde_json::Value| recorder.on_event(method, params),
        );
        let short = (Instant::now() + PAINT_MARGIN).min(deadline);
        let mut on_event = |method: &str, params: &serde_json::Value| {
            recorder.on_event(method, params);
        };
        // No answer in time: what came is kept.
        let _ = self.pipe.call(
            "Runtime.evaluate",
            serde_json::json!({"expression": "0", "returnByValue": true}),
            Some(session),
            short,
            &mut on_event,
        );
        let Some(node) = recorder.lcp_node() else {
            return;
        };
        let described = self.pipe.call(
            "DOM.describeNode",
            serde_json::json!({"backendNodeId": node, "depth": 1}),
            Some(session),
            (Instant::now() + PAINT_SETTLE).min(deadline),
            &mut |method: &str, params: &serde_json::Value| recorder.on_event(method, params),
        );
        recorder.set_lcp_element(&described.map_or(serde_json::Value::Null, |v| v["node"].clone()));
    }
}

/// What Chromium's probe asks a page at DOMContentLoaded: whether it declares
/// an end of its own — a performance mark named in `<meta
/// name="spdylab-done-mark" content="MARK">` (`site::content::DONE_MARK_META`;
/// the prioritization test's page, whose script fetches its images after
/// onload) — and if it does, waits (a promise) until the page has set that
/// mark. The answer: the mark's name once set, or false for a page that
/// declares none (at once: it costs other pages nothing but this call).
const DONE_PROBE: &str = r#"(() => {
  const meta = document.querySelector('meta[name="spdylab-done-mark"]');
  const mark = meta && meta.getAttribute("content");
  if (!mark) return false;
  return new Promise((resolve) => {
    if (performance.getEntriesByName(mark, "mark").length > 0) return resolve(mark);
    new PerformanceObserver((list, observer) => {
      if (list.getEntriesByName(mark, "mark").length > 0) {
        observer.disconnect();
        resolve(mark);
      }
    }).observe({ type: "mark" });
  });
})()"#;

/// What `Browser::close_connections` runs in a blank tab: true once
/// Chromium's connections are closed (a synchronous call into the browser).
const CLOSE_CONNECTIONS: &str = r#"(() => {
  if (!(window.chrome && chrome.benchmarking && chrome.benchmarking.closeConnections)) return false;
  chrome.benchmarking.closeConnections();
  return true;
})()"#;

/// How long to listen after onload at most for the first contentful paint
/// (a page with nothing to paint never reports one).
const PAINT_SETTLE: Duration = Duration::from_secs(1);

/// How long to listen after onload (or after a first contentful paint that
/// came later) for the reports of the frames presented by then.
const PAINT_MARGIN: Duration = Duration::from_millis(100);

/// The DevTools calls that report paints (`paint`'s module doc): FCP as a
/// lifecycle event, LCP candidates as performance-timeline events, and the
/// screen's frames (`visual`'s module doc) unless `screencast` is off.
fn paint_domains(screencast: bool) -> Vec<(&'static str, serde_json::Value)> {
    let mut calls = vec![
        (
            "Page.setLifecycleEventsEnabled",
            serde_json::json!({"enabled": true}),
        ),
        (
            "PerformanceTimeline.enable",
            serde_json::json!({"eventTypes": ["largest-contentful-paint"]}),
        ),
    ];
    if screencast {
        calls.push((
            "Page.startScreencast",
            serde_json::json!({"format": "jpeg", "quality": visual::QUALITY,
                "maxWidth": visual::MAX_WIDTH, "maxHeight": visual::MAX_HEIGHT,
                "everyNthFrame": visual::EVERY_NTH_FRAME}),
        ));
    }
    calls
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The keeper of a confined Chromium dies; its PID namespace goes with it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    sys::pipe()
}

#[cfg(test)]
mod tests {
    /// A repeat view passes EnableTLS13EarlyData only when the Trial asks
    /// (`--early-data on`): stock Chromium has it off.
    #[test]
    fn early_data_over_tcp_is_asked_for_only_by_its_knob() {
        if let Err(e) = super::find() {
            assert!(std::env::var_os("CI").is_none(), "CI needs Chromium: {e}");
            return;
        }
        let profile = netns::Scratch::new("early-data-flag").unwrap();
        let flags = |tls_early_data: bool, protocol| {
            let o = super::ChromiumOptions {
                protocol,
                url: "https://a.test/".into(),
                keep_cache: true,
                repeat_view: true,
                knobs: super::Knobs {
                    tls_early_data,
                    ..super::Knobs::default()
                },
                ..super::ChromiumOptions::default()
            };
            let cmd = super::command(&o, &profile).unwrap();
            cmd.get_args()
                .any(|a| a == "--enable-features=EnableTLS13EarlyData")
        };
        assert!(!flags(false, proto::Protocol::H2), "stock: off");
        assert!(flags(true, proto::Protocol::H2));
        assert!(
            !flags(true, proto::Protocol::H3),
            "QUIC 0-RTT is not this flag's"
        );
    }

    /// docs/chromium-flags.md lists every flag the launcher passes (each
    /// protocol kind, a repeat view with early data, an insecure record) and
    /// every feature it turns off or on, with stock Chromium's default and
    /// why: a new flag without its row fails here.
    #[test]
    fn every_flag_the_probe_sets_is_in_docs_chromium_flags() {
        if let Err(e) = super::find() {
            assert!(std::env::var_os("CI").is_none(), "CI needs Chromium: {e}");
            return;
        }
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/chromium-flags.md"),
        )
        .unwrap();
        let profile = netns::Scratch::new("flags-doc").unwrap();
        let mut missing = Vec::new();
        for protocol in [
            proto::Protocol::Https,
            proto::Protocol::H2,
            proto::Protocol::H3,
        ] {
            for (repeat_view, insecure) in [(false, false), (true, true)] {
                let o = super::ChromiumOptions {
                    protocol,
                    url: "https://a.test/".into(),
                    keep_cache: repeat_view,
                    repeat_view,
                    insecure,
                    resolve: vec![("a.test".into(), [198, 18, 0, 1].into())],
                    knobs: super::Knobs {
                        tls_early_data: true,
                        ..super::Knobs::default()
                    },
                    ..super::ChromiumOptions::default()
                };
                let cmd = super::command(&o, &profile).unwrap();
                for arg in cmd.get_args().filter_map(|a| a.to_str()) {
                    let Some(flag) = arg.strip_prefix("--") else {
                        continue;
                    };
                    let (name, value) = flag.split_once('=').unwrap_or((flag, ""));
                    let mut wanted = vec![format!("`--{name}")];
                    if name == "disable-features" || name == "enable-features" {
                        wanted.extend(value.split(',').map(|f| format!("`{f}`")));
                    }
                    missing.extend(wanted.into_iter().filter(|w| !doc.contains(w.as_str())));
                }
            }
        }
        missing.sort();
        missing.dedup();
        assert!(
            missing.is_empty(),
            "not in docs/chromium-flags.md: {missing:?}"
        );
    }

    #[test]
    fn the_done_probe_reads_the_meta_the_site_crate_names() {
        let meta = format!("meta[name=\"{}\"]", site::content::DONE_MARK_META);
        assert!(super::DONE_PROBE.contains(&meta));
        // The prioritization test's page declares it.
        let page = site::priorities::page(site::priorities::IMAGE_PATH);
        assert!(page.contains(&format!(
            "<meta name=\"{}\" content=\"{}\">",
            site::content::DONE_MARK_META,
            site::priorities::DONE_MARK
        )));
    }
}
