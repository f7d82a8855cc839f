//! `spdylab serve`: the built-in origin server on this machine (no testbed).

use crate::trial_args::{default_of, knob, ServedArgs};
use crate::Failure;
use clap::Args;
use lab::serve::{Offer, ServeRequest};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;

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
    /// Origin layout: server addresses to spread the site's hosts over (shard
    /// i on 127.0.0.i); --layout shards:N puts each of its N names on its own
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=254))]
    pub shards: u16,
    /// <link rel=preload> for the document's critical resources at the top of its head
    #[arg(long, default_value = default_of("preload"), value_name = "none|critical",
          value_parser = knob("preload", |t| t.preload))]
    pub preload: lab::sites::Preload,
    /// Where to write the CA certificate (default: $TMPDIR/spdylab-ca-UID/ca-PID.pem, this user's alone; removed at exit, or by the next serve after kill -9)
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// Seed of the site's content
    #[arg(long, default_value_t = lab::sites::DEFAULT_SEED)]
    pub seed: u64,
    /// How the site's resources map to host names: origin, mirror (all on the
    /// page's host, 004 §V), shards:N (N host names, each its own address, 004 Fig. 8)
    #[arg(long, default_value = "origin", value_parser = str::parse::<lab::sites::Layout>, value_name = "LAYOUT")]
    pub layout: lab::sites::Layout,
    /// The certificate chain: rsa2048 (root → intermediate → leaf, as in 2014) or ecdsa (P-256 root → leaf)
    #[arg(long, default_value = "ecdsa", value_name = "CERT",
          value_parser = <lab::trial::CertKind as std::str::FromStr>::from_str)]
    pub cert: lab::trial::CertKind,
    /// h3: with more QUIC handshakes than this under way, a new client address
    /// must first answer a Retry (one more round trip; an Initial flood from
    /// addresses that never answer then costs no state). 0: always Retry
    #[arg(long, default_value_t = lab::serve::QUIC_RETRY_ABOVE, value_name = "N")]
    pub h3_retry_above: usize,
    /// The built-in server's knobs, their flags made from FIELDS as compare's.
    #[command(flatten)]
    pub knobs: ServedArgs,
}

pub fn run(args: ServeArgs) -> Result<i32, Failure> {
    let (site, addresses) = lab::sites::laid_out(&args.site, args.seed, args.layout, args.shards)
        .map_err(Failure::Usage)?;
    let site = args
        .preload
        .apply(&site)
        .map_err(|e| Failure::Usage(format!("--preload {}: {e}", args.preload)))?;
    // The one signal path: set before binding, so that a Ctrl-C before
    // "ready" stops the server cleanly (its temporary CA file removed).
    let stop = crate::signals::stop_flag();
    let serving = lab::serve::bind(ServeRequest {
        site,
        offer: args.offer,
        listen: args.listen,
        tls_listen: args.tls_listen,
        shards: addresses,
        knobs: args.knobs.trial().map_err(Failure::Usage)?.served,
        ca: args.ca.clone(),
        cert: args.cert,
        quic_retry_above: args.h3_retry_above,
    })?;

    // A closed stdout must not stop the server: write errors are ignored.
    let ready = lab::text::serve::ready(&args.site, serving.ca_path(), serving.hosts());
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{ready}").and_then(|()| out.flush());
    serving.run(stop)?;
    Ok(0)
}
