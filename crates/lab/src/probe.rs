//! One probe, and a plan of them on one testbed: the server of a Trial inside
//! it, the browser model (or Chromium) at the client; each probe waits for an
//! idle link, loads the page cold, and reads its time on wire and counters
//! from the link's own packet log into a `results::ProbeRecord`, its page
//! load kept beside it (`Probe`). `compare` and `sweep` order the plans.

use crate::testbed_server::{self, Placement, ServerSetup};
use crate::trial::{ClientKind, Refusal, ServerKind, Trial, View, HTTPS_PORT, HTTP_PORT};
use client::{PageConfig, PageResult};
use link::packet::{TCP_ACK, TCP_SYN};
use link::{Direction, EventKind, PacketLog, Time};
use netns::{Side, Testbed, TestbedSpec};
use proto::Protocol;
use results::probe::unix_secs;
pub use results::{Phases, ProbeRecord};
use server::Ca;
use site::Site;
use std::io;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime};

/// One testbed, one server, one client, and the probes to run on them.
pub struct ProbeSpec {
    /// The site, laid out as `trial.layout` says.
    pub site: Site,
    pub protocols: Vec<Protocol>,
    pub testbed: TestbedSpec,
    pub reps: usize,
    /// Probes per protocol run first and thrown away.
    pub warmup: usize,
    /// Every knob: server and client kinds, limits, TLS, headers, costs.
    pub trial: Trial,
    /// Copy a real server's access and error logs here at the end (tests read
    /// the protocol of each request from them).
    pub keep_server_log: Option<std::path::PathBuf>,
    /// Write the link's packets as the client sees them to this file (pcap,
    /// as `shell --pcap`): every probe of the run, warm-ups too.
    pub pcap: Option<std::path::PathBuf>,
}

impl ProbeSpec {
    /// Why the server or the client cannot run this spec exactly as asked
    /// (`refusal`).
    pub fn refusal(&self) -> Option<Refusal> {
        refusal(
            &self.trial,
            &self.protocols,
            self.site.resources.len(),
            &self.testbed,
        )
    }
}

/// Why `trial`'s server or client cannot run `protocols` on a site of
/// `resources` in `testbed` exactly as asked: the Trial's refusal, or the
/// built-in server's QUIC's with this testbed (`quic_refusal`). The one
/// answer of compare, crosscheck and sweep, before any testbed starts.
pub fn refusal(
    trial: &Trial,
    protocols: &[Protocol],
    resources: usize,
    testbed: &TestbedSpec,
) -> Option<Refusal> {
    trial.refusal(protocols, resources).or_else(|| {
        quic_refusal(trial, protocols, testbed).map(|why| Refusal::Server {
            server: trial.server,
            why,
        })
    })
}

/// Why the built-in server's QUIC cannot be configured as asked (its knobs
/// with the testbed's congestion control, as the server will take them:
/// `--quic-hystart on` with a QUIC congestion control other than Cubic),
/// from the server's own check.
fn quic_refusal(trial: &Trial, protocols: &[Protocol], testbed: &TestbedSpec) -> Option<String> {
    if trial.server != ServerKind::Builtin || !protocols.contains(&Protocol::H3) {
        return None;
    }
    let opts = testbed_server::builtin_options(trial.served, testbed);
    server::quic::transport(&opts.quic_knobs()).err()
}

/// One probe as run: its record (what `compare` prints and a campaign
/// stores), and beside it what only lab keeps of it, never stored.
#[derive(Debug, Clone)]
pub struct Probe {
    /// No Trial, no point (a campaign sets them), no HAR.
    pub record: ProbeRecord,
    /// A warm-up probe (run, not counted).
    pub warmup: bool,
    /// The page load, its HAR entries (None for a probe that could not run).
    pub load: Option<PageResult>,
    /// When the probe started (the HAR's dates).
    pub started: SystemTime,
}

impl Probe {
    /// A probe that could not run: all zeros but its error.
    pub fn failed(protocol: Protocol, rep: usize, error: String) -> Probe {
        let started = SystemTime::now();
        Probe {
            record: ProbeRecord {
                started: unix_secs(started),
                ..ProbeRecord::failed(protocol, rep, error)
            },
            warmup: false,
            load: None,
            started,
        }
    }
}

/// Runs the probes of `plan` in order on one testbed: (protocol, Some(rep)) is
/// a counted repetition, (protocol, None) a warm-up.
pub fn run_plan(
    spec: &ProbeSpec,
    plan: Vec<(Protocol, Option<usize>)>,
    on_probe: &mut dyn FnMut(&Probe, usize, usize),
) -> io::Result<Vec<Probe>> {
    let Placement {
        resolve,
        testbed: tb_spec,
        addresses,
    } = testbed_server::place(&spec.site, &spec.testbed);
    preflight(spec)?;
    let log = PacketLog::new();
    let mut observers: Vec<Box<dyn link::Observer>> = vec![Box::new(log.clone())];
    if let Some(path) = &spec.pcap {
        observers.push(Box::new(netns::pcap::PcapWriter::create(path)?));
    }
    let mut testbed = Testbed::start_observed(tb_spec, observers)?;
    let ca = Ca::of_kind(spec.trial.cert)?;
    let tls_sessions = resuming_tls_configs(spec, &ca);
    // The model's repeat view: its cache and sessions between a probe's loads.
    let model_views = crate::repeat::ModelViews::new(&spec.trial, ca.der());
    let mut server = start_server(spec, &mut testbed, &ca, &addresses)?;
    let plan = with_views(plan, spec.trial.view());
    let total = plan.len();
    let prober = Prober {
        spec,
        testbed: &testbed,
        log,
        link: testbed.link(),
        epoch: testbed.epoch(),
        base: model_config(spec, &ca, resolve),
        spki: ca.spki_list(),
        tls_sessions,
        model_views,
        // The model's own costs go into its explanation; Chromium's are its own.
        browser_cost: (spec.trial.client == ClientKind::Model)
            .then(|| spec.trial.model_knobs().browser_cost),
        last_start: Time(0),
        kept: None,
        held: None,
    };
    let (tx, rx) = mpsc::channel::<Probe>();
    let results = std::thread::scope(|s| -> io::Result<Vec<Probe>> {
        let client = s.spawn(move || prober.run(plan, tx));
        let mut results = Vec::new();
        for (done, probe) in rx.iter().enumerate() {
            on_probe(&probe, done + 1, total);
            results.push(probe);
        }
        client
            .join()
            .map_err(|_| io::Error::other("client thread panicked"))??;
        Ok(results)
    });
    server.stop();
    testbed.shutdown()?;
    keep_server_log(spec, &server)?;
    drop(server);
    results
}

/// What must hold before any testbed: the server and client can run the
/// spec as asked, and a real server's program is installed (a missing one
/// names its Debian package).
fn preflight(spec: &ProbeSpec) -> io::Result<()> {
    if let Some(why) = spec.refusal() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    }
    if let ServerKind::Peer(kind) = spec.trial.server {
        let (binary, package) = peers::Program::binary(kind);
        netns::find_binary(binary, package)?;
    }
    Ok(())
}

/// The model's TLS configs when it resumes sessions (`tls_resume`): one
/// store per protocol for all the probes, so each resumes the sessions of
/// the earlier ones of its protocol (a session is resumed only with the
/// ALPN it was made with, and the store keeps one TLS 1.2 session per name).
/// The config itself is kept: rustls resumes only with the same verifier.
fn resuming_tls_configs(
    spec: &ProbeSpec,
    ca: &Ca,
) -> std::collections::HashMap<Protocol, Arc<rustls::ClientConfig>> {
    let mut tls_sessions = std::collections::HashMap::new();
    if spec.trial.tls_resume() {
        for p in spec.protocols.iter().filter(|p| p.tls()) {
            let store = std::sync::Arc::new(rustls::client::ClientSessionMemoryCache::new(256));
            let config = client::conn::client_tls_resuming(
                *p,
                ca.der(),
                spec.trial.tls13_only(),
                Some(store),
            );
            tls_sessions.insert(*p, config);
        }
    }
    tls_sessions
}

/// The Trial's server in the testbed, serving the spec's site.
fn start_server(
    spec: &ProbeSpec,
    testbed: &mut Testbed,
    ca: &Ca,
    addresses: &[std::net::IpAddr],
) -> io::Result<testbed_server::RunningServer> {
    testbed_server::start(
        testbed,
        ca,
        addresses,
        &ServerSetup {
            site: &spec.site,
            kind: spec.trial.server,
            // A repeat view's server resumes sessions (TLS 1.2's too), as the
            // real servers do by default: the built-in one from its session
            // cache, since it takes early data then (`Knobs::early_data`).
            knobs: server::Knobs {
                tickets: spec.trial.served.tickets || spec.trial.view().loads_twice(),
                ..spec.trial.served
            },
            keepalive: None,
            access_log: true,
            stop_after: None,
            thread_name: "compare-srv",
        },
    )
}

/// Each probe's loads (`--view`): `both` measures a first and a repeat
/// view, one record each (a repeat view's uncounted first load is not here).
fn with_views(
    plan: Vec<(Protocol, Option<usize>)>,
    view: View,
) -> Vec<(Protocol, Option<usize>, View)> {
    let measured = view.measured();
    plan.into_iter()
        .flat_map(|(p, rep)| measured.iter().map(move |v| (p, rep, *v)))
        .collect()
}

/// The model's page config, each probe's protocol and TLS sessions aside.
fn model_config(
    spec: &ProbeSpec,
    ca: &Ca,
    resolve: std::collections::HashMap<String, std::net::IpAddr>,
) -> PageConfig {
    let root = spec.site.root();
    PageConfig {
        protocol: Protocol::Https,
        knobs: spec.trial.model_knobs(),
        tls13_only: spec.trial.tls13_only(),
        root: (root.host.clone(), root.path.clone()),
        resolve,
        ca: ca.der(),
        http_port: HTTP_PORT,
        https_port: HTTPS_PORT,
        timeout: spec.trial.timeout,
        tls_sessions: None,
        cache: None,
        replay: spec
            .site
            .is_recorded()
            .then(|| Arc::new(client::replay::ReplayTree::of(&spec.site))),
    }
}

/// Chromium's options for a probe of `protocol`: the page of `base` (the
/// model's config), its hosts, and the Trial's Chromium knobs.
fn chromium_options(
    spec: &ProbeSpec,
    base: &PageConfig,
    spki: &[String],
    protocol: Protocol,
) -> browser::ChromiumOptions {
    let (page, hosts) = (&base.root, &base.resolve);
    // A recorded page replays Web Page Replay's way: a name the recording
    // never saw (a beacon's redirect to a URL the HAR lacks) still reaches
    // the testbed's server, which answers 404 and counts the miss, instead
    // of failing the load on name resolution. Only the page's own server
    // address: nothing leaves the testbed.
    let unknown_hosts: Vec<(String, String)> = match hosts.get(&page.0) {
        Some(addr) if spec.site.is_recorded() => vec![("*".into(), addr.to_string())],
        _ => Vec::new(),
    };
    browser::ChromiumOptions {
        protocol,
        url: format!(
            "{}://{}{}",
            if protocol.tls() { "https" } else { "http" },
            page.0,
            page.1
        ),
        resolve: hosts.iter().map(|(h, a)| (h.clone(), *a)).collect(),
        spki: spki.to_vec(),
        timeout: spec.trial.timeout,
        allow: Vec::new(),
        insecure: false,
        map: unknown_hosts,
        knobs: spec.trial.chromium,
        // A repeat view needs the first load's cache.
        keep_cache: spec.trial.served.early_hints || spec.trial.view().loads_twice(),
        repeat_view: spec.trial.view().loads_twice(),
    }
}

/// Copies a real server's access and error logs where the spec asks.
fn keep_server_log(spec: &ProbeSpec, server: &testbed_server::RunningServer) -> io::Result<()> {
    if let (Some(out), Some(dir)) = (&spec.keep_server_log, server.dir()) {
        std::fs::create_dir_all(out)?;
        for f in ["access.log", "error.log", "stderr.log"] {
            let from = dir.join(f);
            if from.exists() {
                std::fs::copy(&from, out.join(f))
                    .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", out.display())))?;
            }
        }
    }
    Ok(())
}

/// The client's side of a plan, on its own thread in the client namespace:
/// what every probe reads, and what one probe leaves to the next.
struct Prober<'a> {
    spec: &'a ProbeSpec,
    testbed: &'a Testbed,
    log: PacketLog,
    link: netns::LinkHandle,
    epoch: Instant,
    /// The model's page config, each probe's protocol and sessions aside.
    base: PageConfig,
    spki: Vec<String>,
    tls_sessions: std::collections::HashMap<Protocol, Arc<rustls::ClientConfig>>,
    model_views: crate::repeat::ModelViews,
    browser_cost: Option<client::BrowserCost>,
    /// The last probe's start on the link's clock: its packets tell a
    /// straggler of its connections (a QUIC close after its window) from a
    /// connection of the next page.
    last_start: Time,
    /// `both`: the Chromium of a probe's first view, kept for its repeat
    /// view, and that first view's probe, sent once the browser's net log
    /// gives its handshakes.
    kept: Option<io::Result<browser::Browser>>,
    held: Option<Probe>,
}

/// One probe as measured, with what only Chromium's records still need:
/// the handshakes of its net log and what its cache answered.
struct Measured {
    probe: Probe,
    handshakes: Vec<browser::netlog::Handshakes>,
    cache: browser::CacheUse,
}

/// A load as the client did it: the page, and what the model keeps of it.
struct Loaded {
    load: PageResult,
    /// The model's reuse of its repeat view's cache and sessions.
    model_reuse: Option<client::Reuse>,
    /// The model's connections, closed after the probe's window.
    open: Option<client::OpenConnections>,
    cache: browser::CacheUse,
}

/// The link's counters over a probe less what cross traffic moved meanwhile.
struct LinkCounts {
    bytes: [u64; 2],
    packets: [u64; 2],
    drops_queue: u64,
    drops_loss: u64,
}

impl LinkCounts {
    /// [up, down] as `CrossDelivered` counts them.
    fn between(before: &link::LinkStats, after: &link::LinkStats, cross: &CrossDelivered) -> Self {
        LinkCounts {
            bytes: [
                (after.up.bytes_out - before.up.bytes_out).saturating_sub(cross.bytes[0]),
                (after.down.bytes_out - before.down.bytes_out).saturating_sub(cross.bytes[1]),
            ],
            packets: [
                (after.up.packets_out - before.up.packets_out).saturating_sub(cross.packets[0]),
                (after.down.packets_out - before.down.packets_out).saturating_sub(cross.packets[1]),
            ],
            drops_queue: (after.down.drops_queue + after.up.drops_queue)
                - (before.down.drops_queue + before.up.drops_queue),
            drops_loss: (after.down.drops_loss + after.up.drops_loss)
                - (before.down.drops_loss + before.up.drops_loss),
        }
    }
}

impl Prober<'_> {
    /// Runs `plan` in order, sending each probe as it is done (a `both`
    /// first view of Chromium's once its repeat view is); stops when no one
    /// listens.
    fn run(
        mut self,
        plan: Vec<(Protocol, Option<usize>, View)>,
        tx: mpsc::Sender<Probe>,
    ) -> io::Result<()> {
        self.testbed
            .namespace(Side::Client)
            .enter_current_thread()?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        for (protocol, rep, view) in plan {
            let measured = self.probe(&rt, protocol, rep, view)?;
            let Some(probe) = self.with_reuse(measured, view) else {
                continue;
            };
            if let Some(first) = self.held.take() {
                if tx.send(first).is_err() {
                    break;
                }
            }
            if tx.send(probe).is_err() {
                break;
            }
        }
        Ok(())
    }

    /// One probe: its client ready, an idle link, cross traffic started, the
    /// page loaded in the probe's window, then the link's counters and log.
    fn probe(
        &mut self,
        rt: &tokio::runtime::Runtime,
        protocol: Protocol,
        rep: Option<usize>,
        view: View,
    ) -> io::Result<Measured> {
        let client_kind = self.spec.trial.client;
        // Chromium starts before the probe (its start-up is not the page's).
        let opts = chromium_options(self.spec, &self.base, &self.spki, protocol);
        let mut browser = self.browser(&opts, view);
        // The model's load: its repeat view's cache and sessions, or an
        // uncounted first load for a lone repeat view, now, before the
        // probe's window.
        let model_cfg = (client_kind == ClientKind::Model).then(|| {
            let cfg = PageConfig {
                protocol,
                tls_sessions: self.tls_sessions.get(&protocol).cloned(),
                ..self.base.clone()
            };
            self.model_views.config(rt, cfg, protocol, view)
        });
        wait_idle(&self.link);
        // Competing flows (`cross_traffic`) start before the page and run
        // through it: past their slow start, and at a random phase of their
        // cycle (`cross_ramp`).
        let cross_started = Instant::now();
        let cross = self.testbed.start_cross_traffic()?;
        if cross.is_some() {
            std::thread::sleep(cross_ramp(self.testbed.spec(), rep));
        }
        let before = self.link.stats();
        let t_before = Instant::now();
        let started = SystemTime::now();
        let t0 = Instant::now();
        let mut loaded = self.load(rt, browser.as_mut(), model_cfg, protocol, &opts);
        // A browser with loads to come (`both`'s first view) is kept; one
        // that loaded twice ends after the link's counters are read
        // (`close`, for its net log); any other ends now.
        if opts.repeat_view {
            if view == View::First {
                self.kept = browser.take();
            }
        } else {
            drop(browser.take());
        }
        let t1 = Instant::now();
        if let Some(conns) = loaded.open.take() {
            rt.block_on(conns.close());
        }
        let cross_ran = cross.is_some();
        drop(cross);
        wait_idle(&self.link);
        let after = self.link.stats();
        // Each load's handshakes from Chromium's net log: [first, repeat].
        let handshakes = match browser.take() {
            Some(Ok(mut b)) => b.close(Instant::now() + CLOSE_WAIT),
            _ => Vec::new(),
        };
        // The page's bytes and packets: the link's counters less what cross
        // traffic moved meanwhile. One copy of the log for both readers of it.
        let entries = self.log.entries();
        let cross_out = if cross_ran {
            cross_delivered(&entries, to_time(self.epoch, t_before))
        } else {
            CrossDelivered::default()
        };
        let counts = LinkCounts::between(&before, &after, &cross_out);
        let record = self.record(
            (protocol, rep, view),
            &loaded,
            &entries,
            (cross_ran.then_some(cross_started), t0, t1),
            counts,
            started,
        );
        let probe = Probe {
            record,
            warmup: rep.is_none(),
            load: Some(loaded.load),
            started,
        };
        Ok(Measured {
            probe,
            handshakes,
            cache: loaded.cache,
        })
    }

    /// The probe's Chromium (None: the model): the one kept from its first
    /// view with its connections closed, a new one that loaded the page once
    /// for a lone repeat view, or a new one.
    fn browser(
        &mut self,
        opts: &browser::ChromiumOptions,
        view: View,
    ) -> Option<io::Result<browser::Browser>> {
        match (self.spec.trial.client, view, self.kept.take()) {
            (ClientKind::Model, ..) => None,
            (ClientKind::Chromium, View::Repeat, Some(Ok(mut b))) => Some(
                b.close_connections(
                    Instant::now() + opts.timeout,
                    opts.knobs.clear_cache_before_repeat,
                )
                .map(|()| b),
            ),
            (ClientKind::Chromium, View::Repeat, _) => {
                Some(chromium_first_view(self.testbed, opts, &self.link))
            }
            (ClientKind::Chromium, ..) => Some(start_chromium(self.testbed, opts)),
        }
    }

    /// The page loaded by Chromium (`browser`) or the model (`model_cfg`,
    /// else the base config).
    fn load(
        &self,
        rt: &tokio::runtime::Runtime,
        browser: Option<&mut io::Result<browser::Browser>>,
        model_cfg: Option<Result<PageConfig, String>>,
        protocol: Protocol,
        opts: &browser::ChromiumOptions,
    ) -> Loaded {
        let (mut model_reuse, mut open, mut cache) = (None, None, browser::CacheUse::default());
        let load = match browser {
            None => match model_cfg.unwrap_or_else(|| Ok(self.base.clone())) {
                // A lone repeat view whose uncounted first load failed.
                Err(e) => failed_load(protocol, e),
                Ok(cfg) => {
                    // The prioritization test's page runs a script the model
                    // cannot: the model plays its sequence.
                    let (load, conns) = if self.spec.site.name == site::priorities::NAME {
                        rt.block_on(client::priority_test::run_keeping_connections(&cfg))
                    } else {
                        let (load, reuse, conns) = rt.block_on(client::load_page_reusing(&cfg));
                        model_reuse = Some(reuse);
                        (load, conns)
                    };
                    open = Some(conns);
                    load
                }
            },
            Some(Ok(b)) => {
                let (load, used) = b.load_page_cached(opts);
                cache = used;
                load
            }
            Some(Err(e)) => failed_load(protocol, format!("chromium did not start: {e}")),
        };
        Loaded {
            load,
            model_reuse,
            open,
            cache,
        }
    }

    /// The probe's record: the load's numbers, its time on wire and
    /// explanation from the link's log, the link's counts.
    fn record(
        &mut self,
        (protocol, rep, view): (Protocol, Option<usize>, View),
        loaded: &Loaded,
        entries: &[link::LogEntry],
        (cross_started, t0, t1): (Option<Instant>, Instant, Instant),
        counts: LinkCounts,
        started: SystemTime,
    ) -> ProbeRecord {
        let (load, epoch) = (&loaded.load, self.epoch);
        let window = (to_time(epoch, t0), to_time(epoch, t1));
        // Navigation on the link's clock: the model's first step, Chromium's
        // document request (after the tab opened: a third of a second here),
        // not t0, which a loaded machine can put seconds before either.
        let navigation = load.navigation_start.filter(|&nav| nav >= t0 && nav <= t1);
        let navigation_start = navigation.map_or(window.0, |nav| to_time(epoch, nav));
        // Chromium's page ends at its onload: what the tab sends after it (a
        // favicon, before the browser is stopped) is not the page's time on wire.
        let page_end = match navigation {
            Some(nav) if load.error.is_none() => {
                let plt = Duration::from_secs_f64(load.plt_ms.max(0.0) / 1e3);
                (nav + plt).min(t1)
            }
            _ => t1,
        };
        let (tow_ms, syns, syns_with_data) =
            time_on_wire(entries, (window.0, to_time(epoch, page_end)));
        let explain = load.error.is_none().then(|| {
            explain_probe(
                entries,
                self.last_start,
                &self.testbed.spec().link,
                (window.0, navigation_start),
                load,
                self.browser_cost,
            )
        });
        self.last_start = window.0;
        ProbeRecord {
            trial: String::new(),
            point: Default::default(),
            schema: 1,
            protocol,
            rep: rep.unwrap_or(0),
            plt_ms: load.plt_ms,
            tow_ms,
            connections: load.connections,
            syns,
            syns_with_data,
            bytes_down: counts.bytes[1],
            bytes_up: counts.bytes[0],
            packets_down: counts.packets[1],
            packets_up: counts.packets[0],
            drops_queue: counts.drops_queue,
            drops_loss: counts.drops_loss,
            resources: load.entries.len(),
            body_bytes: load.entries.iter().map(|e| e.body_bytes).sum(),
            misses: misses(&self.spec.site, load),
            phases: phase_totals(load),
            error: load.error.clone(),
            tls_resumed: load.tls_resumed,
            cross_lead_ms: cross_started.map(|c| {
                let page = navigation.unwrap_or(t0);
                page.saturating_duration_since(c).as_secs_f64() * 1e3
            }),
            started: unix_secs(started),
            har: None,
            explain,
            paint: load.paint.as_ref().map(paint_record),
            reuse: crate::repeat::record(
                view,
                loaded.model_reuse.as_ref(),
                load,
                self.spec.trial.tls13_only(),
                protocol,
            ),
            requests: Vec::new(),
        }
    }

    /// Chromium's reuse into its records: the probe's own (a repeat view's
    /// numbers), and its first view's handshakes (`both`) once known. None:
    /// the probe is held until its repeat view is done (`both`'s first view).
    fn with_reuse(&mut self, measured: Measured, view: View) -> Option<Probe> {
        let Measured {
            mut probe,
            handshakes,
            cache,
        } = measured;
        if self.spec.trial.client != ClientKind::Chromium {
            return Some(probe);
        }
        let counted = handshakes.get(usize::from(view == View::Repeat));
        reused(&mut probe.record, counted, cache);
        if let (Some(first), Some(h)) = (self.held.as_mut(), handshakes.first()) {
            let cache = browser::CacheUse {
                from_cache: first.record.reuse.cache_hits,
                not_modified: first.record.reuse.not_modified,
                cached_bytes: first.record.reuse.cached_bytes,
            };
            reused(&mut first.record, Some(h), cache);
        }
        if self.kept.is_some() {
            self.held = Some(probe);
            return None;
        }
        Some(probe)
    }
}

/// A load that could not be made: `error`, nothing loaded.
fn failed_load(protocol: Protocol, error: String) -> PageResult {
    PageResult {
        protocol,
        plt_ms: 0.0,
        connections: 0,
        entries: Vec::new(),
        error: Some(error),
        tls_resumed: 0,
        navigation_start: None,
        paint: None,
    }
}

/// A repeat view's Chromium: started, the page loaded once (not counted: a
/// failure is the probe's error), then every connection it opened closed;
/// its HTTP cache, TLS sessions and QUIC server configs kept.
fn chromium_first_view(
    testbed: &Testbed,
    opts: &browser::ChromiumOptions,
    link: &netns::LinkHandle,
) -> io::Result<browser::Browser> {
    let mut b = start_chromium(testbed, opts)?;
    wait_idle(link);
    let (first, _) = b.load_page_cached(opts);
    if let Some(e) = first.error {
        return Err(io::Error::other(format!(
            "the first view (not counted): {e}"
        )));
    }
    b.close_connections(
        Instant::now() + opts.timeout,
        opts.knobs.clear_cache_before_repeat,
    )?;
    Ok(b)
}

/// How long a Chromium that loaded twice gets to exit and write out its net log.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// What a Chromium load reused, into its record: what its HTTP cache
/// answered (DevTools), and from its net log its handshakes that resumed
/// (over TCP and QUIC: `tls_resumed`), its connections that sent early
/// data — QUIC 0-RTT, and TLS 1.3 early data over TCP (off by default in
/// Chrome; a repeat view turns on `EnableTLS13EarlyData`) — and those the
/// server took, as the model's record counts them (`repeat::record`), and
/// the round trips saved (an accepted 0-RTT or early data, a resumed TLS
/// 1.2 handshake).
fn reused(
    record: &mut ProbeRecord,
    handshakes: Option<&browser::netlog::Handshakes>,
    cache: browser::CacheUse,
) {
    let r = &mut record.reuse;
    r.cache_hits = cache.from_cache;
    r.not_modified = cache.not_modified;
    r.cached_bytes = cache.cached_bytes;
    r.early_data = 0;
    if let Some(h) = handshakes {
        record.tls_resumed = h.tls_resumed + h.quic_resumed;
        r.zero_rtt_sent = h.zero_rtt_attempted + h.tls_early_data;
        r.zero_rtt_accepted = h.zero_rtt_accepted + h.tls_early_data_accepted;
        r.early_data = h.tls_early_data;
        r.handshake_rtts_saved = r.zero_rtt_accepted + h.tls12_resumed;
    }
}

/// Headless Chromium in the testbed's client namespace (its own PID namespace:
/// dropping the Browser, or our death, ends it and all its processes).
fn start_chromium(
    testbed: &Testbed,
    opts: &browser::ChromiumOptions,
) -> io::Result<browser::Browser> {
    let profile = browser::new_profile()?;
    let mut cmd = browser::command(opts, &profile)?;
    testbed.confine(Side::Client, &mut cmd);
    browser::Browser::spawn(cmd, profile)
}

/// Responses 404 to requests the site has no resource (or no recorded 404)
/// for, matched with the method each request was sent with.
pub fn misses(site: &Site, load: &PageResult) -> usize {
    load.entries
        .iter()
        .filter(|e| e.status == 404)
        .filter(|e| match site.find_request(&e.host, &e.method, &e.path) {
            None => true,
            Some(i) => site.recorded(i).map(|r| r.status) != Some(404),
        })
        .count()
}

/// What the user saw, as a probe record keeps it.
fn paint_record(p: &client::Paint) -> results::Paint {
    results::Paint {
        ttfb_ms: p.ttfb_ms,
        fcp_ms: p.fcp_ms,
        lcp_ms: p.lcp_ms,
        lcp_element: p.lcp_element.clone(),
        lcp_size: p.lcp_size,
        speed_index_ms: p.speed_index_ms,
        visually_complete_ms: p.visually_complete_ms,
    }
}

/// Each HAR phase summed over the page's resources (a phase that does not
/// apply, -1 in the HAR, counts 0).
fn phase_totals(load: &PageResult) -> Phases {
    let mut t = Phases::default();
    for e in &load.entries {
        let p = &e.timings;
        t.blocked += p.blocked.max(0.0);
        t.dns += p.dns.max(0.0);
        t.connect += p.connect.max(0.0);
        t.ssl += p.ssl.max(0.0);
        t.send += p.send.max(0.0);
        t.wait += p.wait.max(0.0);
        t.receive += p.receive.max(0.0);
    }
    t
}

fn to_time(epoch: Instant, t: Instant) -> Time {
    Time(t.saturating_duration_since(epoch).as_nanos() as u64)
}

/// Why the probe's PLT is what it is (`explain::analyze`): the packets of
/// its window (and those since `since`, the last probe's start, so that a
/// flow of the last probe is not taken for one of this page), the link's
/// spec, the probe's start and navigation start on the link's clock, its
/// PLT, its resources' HAR phases, and the model's browser costs summed
/// over the page.
fn explain_probe(
    log: &[link::LogEntry],
    since: Time,
    spec: &link::LinkSpec,
    (window_start, navigation_start): (Time, Time),
    load: &PageResult,
    cost: Option<client::BrowserCost>,
) -> explain::Explanation {
    let plt = Duration::from_secs_f64(load.plt_ms.max(0.0) / 1e3);
    let end = Time(navigation_start.0 + plt.as_nanos() as u64);
    let entries: Vec<link::LogEntry> = log
        .iter()
        .filter(|e| e.time >= since.min(navigation_start) && e.time <= end)
        .copied()
        .collect();
    let resources: Vec<explain::Resource> = load
        .entries
        .iter()
        .map(|e| explain::Resource {
            connection: e.connection.to_string(),
            started_ms: e.started_ms,
            phases: explain::Phases {
                blocked_ms: e.timings.blocked,
                dns_ms: e.timings.dns,
                connect_ms: e.timings.connect,
                ssl_ms: e.timings.ssl,
                send_ms: e.timings.send,
                wait_ms: e.timings.wait,
                receive_ms: e.timings.receive,
            },
            handshake_rounds: None,
        })
        .collect();
    let kb = |kind: &str| -> f64 {
        load.entries
            .iter()
            .filter(|e| e.content_type.contains(kind))
            .map(|e| e.body_bytes as f64 / 1e3)
            .sum()
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let browser_cost = cost.map(|c| explain::BrowserCost {
        navigation_ms: ms(c.navigation),
        parse_ms: ms(c.parse_per_kb) * kb("html"),
        script_ms: ms(c.script_per_kb) * kb("javascript"),
        request_ms: ms(c.request) * load.entries.len() as f64,
    });
    explain::analyze(&explain::Input {
        label: load.protocol.name(),
        log: &entries,
        spec,
        navigation_start,
        window_start: Some(window_start),
        plt,
        resources: &resources,
        browser_cost,
    })
}

/// What cross traffic got through the link, per direction (0 up, 1 down).
#[derive(Default)]
struct CrossDelivered {
    bytes: [u64; 2],
    packets: [u64; 2],
}

/// Cross traffic's deliveries since `since` (its addresses, either end).
fn cross_delivered(entries: &[link::LogEntry], since: Time) -> CrossDelivered {
    use netns::cross::{CROSS_CLIENT_ADDR, CROSS_SERVER_ADDR};
    let mut out = CrossDelivered::default();
    for e in entries.iter().filter(|e| e.time >= since) {
        let Some(h) = e.headers else { continue };
        let cross = [h.src, h.dst]
            .iter()
            .any(|a| *a == CROSS_CLIENT_ADDR || *a == CROSS_SERVER_ADDR);
        if e.kind == link::EventKind::Deliver && cross {
            let d = usize::from(e.dir == link::Direction::Down);
            out.bytes[d] += u64::from(e.size);
            out.packets[d] += 1;
        }
    }
    out
}

/// Waits until nothing is left in the link (bounded: 30 s), then a little more.
fn wait_idle(link: &netns::LinkHandle) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while link.packets_inside() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(20));
}

/// Time on wire in ms — the first request packet the client sends to the last
/// response packet it receives, within `window` — and the connections the
/// client opened: its TCP SYNs, plus its QUIC connections (distinct client
/// address and port among the long-header Initial packets it sent, since a
/// QUIC connection sends several Initials and each of ours has its own port).
/// Only connections opened inside the window count: a packet of a connection
/// of an earlier probe (a TLS close_notify or FIN sent as its connections are
/// dropped, after the window began) is not this page's traffic.
/// For QUIC every packet has a payload (its ACKs are encrypted frames), so
/// its time on wire starts at the first Initial (the ClientHello, as TCP's
/// starts at the first data segment) and may end with a final ACK packet.
/// Last, the SYNs that carried data (TCP Fast Open with the server's cookie).
pub fn time_on_wire(entries: &[link::LogEntry], window: (Time, Time)) -> (f64, u64, u64) {
    use std::collections::HashSet;
    let inside = entries
        .iter()
        .filter(|e| e.time >= window.0 && e.time <= window.1);
    // Connections as (protocol, client address and port, server address and port).
    type Conn = (u8, std::net::Ipv4Addr, u16, std::net::Ipv4Addr, u16);
    let (mut first, mut last) = (None, None);
    let mut opened: HashSet<Conn> = HashSet::new();
    let mut syns_with_data = 0;
    for e in inside {
        let Some(h) = e.headers else { continue };
        let quic = h.protocol == link::packet::PROTO_UDP;
        if !quic && h.tcp.is_none() {
            continue;
        }
        match (e.dir, e.kind) {
            (Direction::Up, EventKind::Arrive) => {
                let conn = (h.protocol, h.src, h.src_port, h.dst, h.dst_port);
                let opens = if quic {
                    h.quic_initial()
                } else {
                    h.tcp.is_some_and(|t| t.has(TCP_SYN) && !t.has(TCP_ACK))
                };
                if opens {
                    opened.insert(conn);
                    if !quic && h.payload > 0 {
                        syns_with_data += 1;
                    }
                }
                if h.payload > 0 && first.is_none() && opened.contains(&conn) {
                    first = Some(e.time);
                }
            }
            (Direction::Down, EventKind::Deliver) if h.payload > 0 => {
                let conn = (h.protocol, h.dst, h.dst_port, h.src, h.src_port);
                if opened.contains(&conn) {
                    last = Some(e.time);
                }
            }
            _ => {}
        }
    }
    let tow = match (first, last) {
        (Some(a), Some(b)) if b > a => (b - a).as_secs_f64() * 1e3,
        _ => 0.0,
    };
    (tow, opened.len() as u64, syns_with_data)
}

/// How long competing flows run before the page: past their slow start (20
/// round trips, 1 s to 10 s), then a random part of their sawtooth's cycle
/// (`CrossTraffic::cycle`). A fixed wait met the flows at one phase in every
/// probe, and h3's gain over h2 beside four Cubic flows changed sign with
/// that phase (docs/cross-traffic.md). The draw is the testbed's seed's and
/// the repetition's, so a repetition's protocols, and both clients, meet the
/// flows at the same phase, and a rerun at the same ones.
fn cross_ramp(spec: &TestbedSpec, rep: Option<usize>) -> Duration {
    let past_slow_start =
        (spec.link.rtt() * 20).clamp(Duration::from_secs(1), Duration::from_secs(10));
    let rep_key = rep.map_or(u64::MAX, |r| r as u64);
    let mut rng = link::rng::Rng::new(spec.seed ^ rep_key.wrapping_mul(0xD1B5_4A32_D192_ED03));
    past_slow_start + spec.cross.cycle(&spec.link).mul_f64(rng.next_f64())
}
