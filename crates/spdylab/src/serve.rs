//! `spdylab serve`: the built-in origin server on this machine (no testbed).

use crate::link_args::TlsArg;
use crate::sites::load;
use crate::Failure;
use clap::Args;
use link::units::parse_duration;
use server::{Ca, Offer, Server, ServerOptions, TlsVersions};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// Serve a site with the built-in server, on this machine (no emulated link)
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab serve --site icons
  spdylab serve --site youtube --proto https,h2 --max-streams 6 --tls 1.2
  curl --cacert CA.pem --resolve icons.spdylab.test:8443:127.0.0.1 https://icons.spdylab.test:8443/

Cleartext (http, h2c: prior knowledge or Upgrade) and TLS (https, spdy3, h2 by ALPN)
listen on separate ports. With --shards N, shard i listens on 127.0.0.i.")]
pub struct ServeArgs {
    /// A built-in site (see `spdylab sites`) or a site file (.toml)
    #[arg(long)]
    pub site: String,
    /// Protocols to offer
    #[arg(long = "proto", default_value = "http,https,spdy3,h2,h2c", value_parser = Offer::parse)]
    pub offer: Offer,
    /// Cleartext address (http, h2c)
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// TLS address (https, h2)
    #[arg(long, default_value = "127.0.0.1:8443")]
    pub tls_listen: SocketAddr,
    /// Server addresses to spread the site's hosts over (shard i on 127.0.0.i)
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=254))]
    pub shards: u16,
    /// Concurrent streams per HTTP/2 connection (advertised in SETTINGS)
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_streams: u32,
    /// Think time before each response
    #[arg(long, value_parser = parse_duration, default_value = "0ms", value_name = "DURATION")]
    pub server_delay: Duration,
    /// Only this TLS version (default: 1.2 and 1.3)
    #[arg(long)]
    pub tls: Option<TlsArg>,
    /// Where to write the CA certificate (default: a temporary file, removed at exit)
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// Seed of the site's content
    #[arg(long, default_value_t = lab::sites::DEFAULT_SEED)]
    pub seed: u64,
}

fn shard_addr(base: SocketAddr, shard: usize) -> SocketAddr {
    match (base.ip(), shard) {
        (_, 1) => base,
        (IpAddr::V4(ip), i) if ip.is_loopback() => {
            SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, i as u8)), base.port())
        }
        _ => base,
    }
}

pub fn run(args: ServeArgs) -> Result<i32, Failure> {
    let site = load(&args.site, args.seed)?;
    let shards = args.shards as usize;
    if shards > 1 && !(args.listen.ip().is_loopback() && args.tls_listen.ip().is_loopback()) {
        return Err(Failure::Usage(
            "--shards above 1 needs loopback --listen/--tls-listen (shard i on 127.0.0.i)".into(),
        ));
    }
    let bind = |base: SocketAddr, flag: &str| -> Result<Vec<std::net::TcpListener>, Failure> {
        (1..=shards)
            .map(|i| {
                let a = shard_addr(base, i);
                std::net::TcpListener::bind(a)
                    .map_err(|e| Failure::Usage(format!("{flag} {a}: {e}")))
            })
            .collect()
    };
    let cleartext = if args.offer.cleartext() {
        bind(args.listen, "--listen")?
    } else {
        vec![]
    };
    let tls = if args.offer.tls() {
        bind(args.tls_listen, "--tls-listen")?
    } else {
        vec![]
    };

    let ca = Ca::new()?;
    let (ca_path, remove_ca) = match &args.ca {
        Some(p) => (p.clone(), false),
        None => (
            std::env::temp_dir().join(format!("spdylab-ca-{}.pem", std::process::id())),
            true,
        ),
    };
    std::fs::write(&ca_path, ca.pem())
        .map_err(|e| Failure::Usage(format!("--ca {}: {e}", ca_path.display())))?;
    let addresses: Vec<IpAddr> = (1..=shards)
        .flat_map(|i| {
            [
                shard_addr(args.listen, i).ip(),
                shard_addr(args.tls_listen, i).ip(),
            ]
        })
        .collect();
    let opts = ServerOptions {
        offer: args.offer,
        max_streams: args.max_streams,
        tls: TlsVersions::from_tls13_only(TlsArg::tls13_only(args.tls)),
        server_delay: args.server_delay,
        cc: None,
    };
    let map = site.shard_map(shards);
    let server = Server::new(site, opts, &ca, &addresses)?;

    // Print the addresses actually bound (a port of 0 picks a free one). A
    // closed stdout must not stop the server: write errors are ignored.
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let bound = |ls: &[std::net::TcpListener], shard: usize| {
        ls.get(shard - 1).and_then(|l| l.local_addr().ok())
    };
    let _ = writeln!(
        out,
        "serving site '{}' — CA certificate: {}",
        args.site,
        ca_path.display()
    );
    for (host, shard) in &map {
        if let Some(a) = bound(&cleartext, *shard) {
            let _ = writeln!(out, "  http://{host}:{}/  on {a}", a.port());
        }
        if let Some(a) = bound(&tls, *shard) {
            let _ = writeln!(out, "  https://{host}:{}/  on {a}", a.port());
        }
    }
    if let Some(a) = bound(&tls, map[0].1) {
        let host = &map[0].0;
        let _ = writeln!(
            out,
            "try: curl --cacert {} --resolve {host}:{}:{} https://{host}:{}/",
            ca_path.display(),
            a.port(),
            a.ip(),
            a.port()
        );
    }
    let _ = writeln!(out, "ready; Ctrl-C stops the server");
    let _ = out.flush();
    drop(out);
    let result = server.run_until_signal(cleartext, tls);
    if remove_ca {
        let _ = std::fs::remove_file(&ca_path);
    }
    result?;
    Ok(0)
}
