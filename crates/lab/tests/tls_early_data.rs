//! TLS 1.3 early data over TCP (issue 38, docs/repeat-view.md): the model's
//! repeat view (`client::conn::client_tls_repeat`, `dial_early`) against
//! the built-in server (`server::early`) on the loopback, over real TCP and
//! TLS. A second load sends its first request with the ClientHello and the
//! server takes it (h2, HTTPS, SPDY/3.1); a server that cannot take it
//! (early data off, the ticket unknown to it) rejects it and every request
//! is still answered, the early data written again after the handshake; a
//! request that is not safe, in early data, is answered 425. Counts only,
//! no timed assertions.

use client::{PageConfig, PageResult, Reuse};
use proto::Protocol;
use server::{Ca, Knobs, Offer, Server, ServerOptions};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const LOCAL: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// A built-in server of `site` on a loopback TLS port, early data on or
/// off: its port, its early data counters and its stop.
fn serve(
    rt: &tokio::runtime::Runtime,
    site: &site::Site,
    ca: &Ca,
    early_data: bool,
) -> (
    u16,
    Arc<server::early::Counters>,
    tokio::sync::oneshot::Sender<()>,
) {
    let listener = TcpListener::bind((LOCAL, 0)).unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = Server::new(
        site.clone(),
        ServerOptions {
            offer: Offer::parse("https,h2,spdy3").unwrap(),
            knobs: Knobs {
                early_data,
                ..Knobs::default()
            },
            ..Default::default()
        },
        ca,
        &[LOCAL],
    )
    .unwrap();
    let counters = server.early_data_counters();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    rt.spawn(server.run(vec![], vec![listener], async move {
        let _ = stopped.await;
    }));
    (port, counters, stop)
}

/// The model's configuration for a repeat view's loads of `site` on
/// `protocol` to `port`: one cache and one session store for both loads.
fn config(site: &site::Site, ca: &Ca, protocol: Protocol, port: u16) -> PageConfig {
    let store = Arc::new(rustls::client::ClientSessionMemoryCache::new(256));
    let root = site.root();
    PageConfig {
        protocol,
        tls13_only: None,
        knobs: client::Knobs::default(),
        root: (root.host.clone(), root.path.clone()),
        resolve: site
            .hosts()
            .iter()
            .map(|h| (h.to_string(), LOCAL))
            .collect(),
        ca: ca.der(),
        http_port: 1,
        https_port: port,
        timeout: Duration::from_secs(30),
        tls_sessions: Some(client::conn::client_tls_repeat(
            protocol,
            ca.der(),
            None,
            store,
            true,
        )),
        replay: None,
        cache: Some(Arc::new(Mutex::new(client::cache::HttpCache::new()))),
    }
}

fn load(rt: &tokio::runtime::Runtime, cfg: &PageConfig) -> (PageResult, Reuse) {
    let (page, reuse, conns) = rt.block_on(client::load_page_reusing(cfg));
    rt.block_on(conns.close());
    (page, reuse)
}

/// Every entry answered (200, or 304 for the revalidated document).
fn answered(page: &PageResult, what: &str) {
    assert!(page.error.is_none(), "{what}: {:?}", page.error);
    assert!(!page.entries.is_empty(), "{what}");
    for e in &page.entries {
        assert!(
            e.status == 200 || e.status == 304,
            "{what}: {} {} answered {}",
            e.host,
            e.path,
            e.status
        );
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_repeat_view_sends_early_data_that_the_server_takes() {
    server::install_crypto_provider();
    let rt = runtime();
    let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let ca = Ca::new().unwrap();
    let (port, counters, stop) = serve(&rt, &site, &ca, true);
    for protocol in [Protocol::H2, Protocol::Https, Protocol::Spdy3] {
        let cfg = config(&site, &ca, protocol, port);
        let (first, reuse) = load(&rt, &cfg);
        answered(&first, &format!("{protocol} first"));
        // Later connections to a host may resume the first's session, early
        // data and all: over h2 and SPDY also the connections opened per
        // waiting request and closed unused (their preface went as early
        // data; `connections` leaves them out), so the count of those that
        // sent some is not bounded by `connections` (seen in CI: spdy3, 2
        // of 2). That the very first has no ticket:
        // `first_connection_of_a_first_view_sends_no_early_data`.
        assert_eq!(reuse.zero_rtt_accepted, reuse.zero_rtt_sent, "{protocol}");
        let taken = counters.accepted();
        let (repeat, reuse) = load(&rt, &cfg);
        answered(&repeat, &format!("{protocol} repeat"));
        assert!(reuse.zero_rtt_sent >= 1, "{protocol}: {reuse:?}");
        assert_eq!(reuse.zero_rtt_accepted, reuse.zero_rtt_sent, "{protocol}");
        assert!(repeat.tls_resumed >= reuse.zero_rtt_accepted, "{protocol}");
        assert_eq!(
            counters.accepted(),
            taken + reuse.zero_rtt_accepted,
            "{protocol}: the server counts what it took"
        );
    }
    assert!(counters.bytes.load(std::sync::atomic::Ordering::Relaxed) > 0);
    let _ = stop.send(());
}

/// A first view's one connection (icons: one host, one request at first)
/// has no ticket to send early data with, on any protocol.
#[test]
fn first_connection_of_a_first_view_sends_no_early_data() {
    server::install_crypto_provider();
    let rt = runtime();
    let site = site::builtin("icons", site::DEFAULT_SEED).unwrap();
    let ca = Ca::new().unwrap();
    let (port, counters, stop) = serve(&rt, &site, &ca, true);
    for protocol in [Protocol::H2, Protocol::Spdy3] {
        let cfg = config(&site, &ca, protocol, port);
        let (first, reuse) = load(&rt, &cfg);
        answered(&first, &format!("{protocol} first"));
        assert_eq!(first.connections, 1, "{protocol}");
        // Only the navigation's second socket, opened beside the first and
        // closed unused, may find a ticket of the first by its handshake
        // (seen once in CI over h2): the page's own connection had none.
        assert!(reuse.zero_rtt_sent <= 1, "{protocol}: {reuse:?}");
    }
    assert!(counters.accepted() <= 2);
    let _ = stop.send(());
}

#[test]
fn rejected_early_data_is_sent_again_and_every_request_answered() {
    server::install_crypto_provider();
    let rt = runtime();
    let site = site::builtin("youtube", site::DEFAULT_SEED).unwrap();
    let ca = Ca::new().unwrap();
    // The first load's tickets come from a server that takes early data;
    // the repeat goes to another (same names, same CA) that does not: it
    // knows no session, resumes nothing and skips the early data.
    let (taking, _, stop_taking) = serve(&rt, &site, &ca, true);
    let (refusing, counters, stop_refusing) = serve(&rt, &site, &ca, false);
    for protocol in [Protocol::H2, Protocol::Https, Protocol::Spdy3] {
        let cfg = config(&site, &ca, protocol, taking);
        let (first, _) = load(&rt, &cfg);
        answered(&first, &format!("{protocol} first"));
        let cfg = PageConfig {
            https_port: refusing,
            ..cfg
        };
        let (repeat, reuse) = load(&rt, &cfg);
        answered(&repeat, &format!("{protocol} repeat, early data rejected"));
        assert!(reuse.zero_rtt_sent >= 1, "{protocol}: {reuse:?}");
        assert_eq!(reuse.zero_rtt_accepted, 0, "{protocol}: {reuse:?}");
        // The first load's sessions are unknown to this server; a later
        // connection (the navigation's second socket among them) may resume
        // a session it gave earlier in the same load, so resumptions are not
        // bounded here: the rejected early data above is the point.
        // The document's revalidation, sent as early data, was sent again
        // after the handshake and answered (`answered`).
    }
    assert_eq!(counters.accepted(), 0);
    let _ = stop_taking.send(());
    let _ = stop_refusing.send(());
}

/// A POST in early data is answered 425 (RFC 8470), a GET beside it 200 or
/// 404 as ever: HTTP/1.1 over tokio-rustls's client with early data.
#[test]
fn an_unsafe_request_in_early_data_is_too_early() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    server::install_crypto_provider();
    let rt = runtime();
    let site = site::builtin("icons", site::DEFAULT_SEED).unwrap();
    let (host, path) = (site.root().host.clone(), site.root().path.clone());
    let ca = Ca::new().unwrap();
    let (port, counters, stop) = serve(&rt, &site, &ca, true);
    let store = Arc::new(rustls::client::ClientSessionMemoryCache::new(16));
    let tls = client::conn::client_tls_repeat(Protocol::Https, ca.der(), None, store, true);
    let ask = |request: String| {
        let tls = tls.clone();
        let host = host.clone();
        rt.block_on(async move {
            let tcp = tokio::net::TcpStream::connect(SocketAddr::new(LOCAL, port))
                .await
                .unwrap();
            let name = rustls::pki_types::ServerName::try_from(host).unwrap();
            let mut s = tokio_rustls::TlsConnector::from(tls)
                .early_data(true)
                .connect(name, tcp)
                .await
                .unwrap();
            s.write_all(request.as_bytes()).await.unwrap();
            s.flush().await.unwrap();
            let mut answer = Vec::new();
            s.read_to_end(&mut answer).await.unwrap();
            let early = s.get_ref().1.is_early_data_accepted();
            (String::from_utf8_lossy(&answer).to_string(), early)
        })
    };
    let get = format!("GET {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n\r\n");
    let post = format!(
        "POST {path} HTTP/1.1\r\nhost: {host}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    );
    // The first connection gets a ticket; the next ones send early data.
    let (first, early) = ask(get.clone());
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    assert!(!early);
    let (answer, early) = ask(post);
    assert!(early, "a ticket from the first connection");
    assert!(answer.starts_with("HTTP/1.1 425"), "{answer}");
    let (answer, early) = ask(get);
    assert!(early);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(counters.accepted(), 2);
    assert_eq!(
        counters
            .too_early
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    let _ = stop.send(());
}
