//! The model's repeat view (`--view repeat|both`, issue 38;
//! docs/repeat-view.md): one client per probe, its HTTP cache
//! (`client::cache`) and TLS session store (`client::conn::client_tls_repeat`:
//! tickets, and QUIC 0-RTT on h3) kept between its two loads. A `both`
//! probe's first view fills them and its repeat view reads them; a lone
//! repeat view first loads the page once, uncounted, its connections closed
//! before the measured load's window opens. What each load reused becomes
//! the record's `results::Reuse`.

use crate::trial::{Trial, View};
use client::{PageConfig, PageResult};
use proto::Protocol;
use rustls::pki_types::CertificateDer;
use std::sync::{Arc, Mutex};

/// The model's state between a probe's loads.
pub struct ModelViews {
    view: View,
    ca: CertificateDer<'static>,
    tls13_only: Option<bool>,
    /// TLS 1.3 early data over TCP (`--early-data`).
    tls_early_data: bool,
    /// The repeat view starts with an empty HTTP cache (`--repeat-cache
    /// clear`), its TLS sessions kept.
    clear_cache: bool,
    /// The cache and TLS configuration of the probe under way (`both`:
    /// made by its first view, taken by its repeat view).
    kept: Option<(client::SharedCache, Arc<rustls::ClientConfig>)>,
}

impl ModelViews {
    pub fn new(trial: &Trial, ca: CertificateDer<'static>) -> ModelViews {
        ModelViews {
            view: trial.view(),
            ca,
            tls13_only: trial.tls13_only(),
            tls_early_data: trial.chromium.tls_early_data,
            clear_cache: trial.chromium.clear_cache_before_repeat,
            kept: None,
        }
    }

    /// The configuration of the load measuring `view` on `protocol`, from
    /// `cfg` (the Trial's), before the probe's window: a first view of a
    /// Trial whose probes load once is `cfg` itself; otherwise a fresh cache
    /// and session store (a first view's, kept), or the kept ones (the
    /// repeat of `both`), or fresh ones filled by an uncounted first load
    /// on `rt` (a lone repeat view; its failure is the probe's).
    pub fn config(
        &mut self,
        rt: &tokio::runtime::Runtime,
        cfg: PageConfig,
        protocol: Protocol,
        view: View,
    ) -> Result<PageConfig, String> {
        if !self.view.loads_twice() {
            return Ok(cfg);
        }
        // TLS 1.3 early data on TCP where the Trial asks (`--early-data`,
        // off as in stock Chromium) and no request of the page is unsafe
        // (an imported POST): the model cannot hold it back until the
        // handshake is verified (RFC 8470 §4.1).
        let tcp_early_data =
            self.tls_early_data && cfg.replay.as_ref().is_none_or(|t| !t.has_unsafe());
        let fresh = || {
            let store = Arc::new(rustls::client::ClientSessionMemoryCache::new(256));
            let tls = client::conn::client_tls_repeat(
                protocol,
                self.ca.clone(),
                self.tls13_only,
                store,
                tcp_early_data,
            );
            (empty_cache(), tls)
        };
        let with = |(cache, tls): &(client::SharedCache, Arc<rustls::ClientConfig>)| PageConfig {
            cache: Some(cache.clone()),
            tls_sessions: protocol.tls().then(|| tls.clone()),
            ..cfg.clone()
        };
        // `--repeat-cache clear`: the repeat view's cache is a new one.
        let emptied = |(cache, tls): (client::SharedCache, Arc<rustls::ClientConfig>)| match self
            .clear_cache
        {
            true => (empty_cache(), tls),
            false => (cache, tls),
        };
        match view {
            View::Repeat => match self.kept.take() {
                Some(kept) => Ok(with(&emptied(kept))),
                None => {
                    let kept = fresh();
                    let first = with(&kept);
                    let (load, _, conns) = rt.block_on(client::load_page_reusing(&first));
                    rt.block_on(conns.close());
                    match load.error {
                        Some(e) => Err(format!("the first view (not counted): {e}")),
                        None => Ok(with(&emptied(kept))),
                    }
                }
            },
            _ => {
                let kept = fresh();
                let first = with(&kept);
                self.kept = Some(kept);
                Ok(first)
            }
        }
    }
}

/// A new, empty HTTP cache.
fn empty_cache() -> client::SharedCache {
    Arc::new(Mutex::new(client::cache::HttpCache::new()))
}

/// What a load of `view` on `protocol` reused, as its record keeps it
/// (`results::Reuse`, one meaning per field): cache hits, 304s, bytes from
/// the cache; connections that sent requests before their handshake ended
/// (`zero_rtt_sent`: QUIC 0-RTT on h3, TLS 1.3 early data on TCP) and those
/// the server accepted (`zero_rtt_accepted`); of the sent ones, those over
/// TCP (`early_data`); and the handshake round trips saved (one per
/// accepted 0-RTT or early data — the request goes with the ClientHello;
/// one per resumed TCP handshake when the Trial asks for TLS 1.2, whose
/// abbreviated handshake takes one round trip of two — TLS 1.3's full and
/// resumed handshakes both take one).
pub fn record(
    view: View,
    reuse: Option<&client::Reuse>,
    load: &PageResult,
    tls13_only: Option<bool>,
    protocol: Protocol,
) -> results::Reuse {
    let Some(r) = reuse else {
        return results::Reuse {
            view,
            ..Default::default()
        };
    };
    let tcp_resumed = load.tls_resumed.saturating_sub(r.zero_rtt_accepted);
    let tls12 = tls13_only == Some(false);
    results::Reuse {
        view,
        cache_hits: r.cache_hits(),
        not_modified: r.not_modified(),
        cached_bytes: r.cached_bytes,
        zero_rtt_sent: r.zero_rtt_sent,
        zero_rtt_accepted: r.zero_rtt_accepted,
        early_data: if protocol == Protocol::H3 {
            0
        } else {
            r.zero_rtt_sent
        },
        handshake_rtts_saved: r.zero_rtt_accepted + if tls12 { tcp_resumed } else { 0 },
    }
}
