//! `spdylab record`: a page loaded by headless Chromium over DevTools, written
//! as a HAR 1.2 file with bodies and initiators (for `spdylab import`) — a
//! site served by the built-in server in a testbed, or a URL of your server.

use crate::link_args::LinkArgs;
use crate::Failure;
use clap::Args;
use link::units::parse_duration;
use proto::Protocol;
use std::path::PathBuf;
use std::time::Duration;

/// Record a page with headless Chromium as a HAR 1.2 file with bodies and initiators
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  sudo spdylab record --site youtube --out rec            # rec/page.har, from a testbed
  sudo spdylab record --site icons --protocol https --rtt 50ms --rate 8mbit --out icons.har
  spdylab record http://127.0.0.1:8080/ --out rec         # a server you run, Chromium on this host
  spdylab record https://www.example.test/ --map www.example.test=127.0.0.1:8443 --ca ca.pem --out rec
  spdylab record https://www.example.test/ --allow-host cdn.example.test,127.0.0.1:9000 --out rec
  spdylab import rec/page.har --out sites/rec && sudo spdylab compare --site sites/rec --protocols https,h2

With --site, the built-in server serves the site in a testbed (every host on its
address, the link flags as compare's) and Chromium loads it from the client
namespace. With a URL, Chromium runs on this host and reaches only the page's
own host at its port (and 80/443 if on one of them) and the hosts of
--allow-host (HOST: its ports 80 and 443; HOST:PORT: that port), resolved through
the system or --map. Every other name and address — other ports of loopback
too — resolves to nothing: those requests fail before any packet and are counted
and named in the output (blocked). As root, Chromium runs as the user
spdylab-chromium if it exists, else nobody; never as root.
For https with a private CA give --ca FILE (its PEM certificates are trusted by
their public keys), or --insecure (any certificate).

--out DIR writes DIR/page.har; --out FILE.har writes that file. The HAR is
written whole or not at all. It holds every request that ended by onload (redirect
hops and failed requests too), with request and response headers, status,
httpVersion (the protocol of the response), mimeType, sizes, the seven phases,
the body (base64 when binary), Chrome's _initiator and pages[0].pageTimings.onLoad.
Exit status: 0 recorded, 1 the load failed (unreachable, TLS error, no onload,
no Chromium), 2 bad input.")]
pub struct RecordArgs {
    /// The page to record (http:// or https://), on a server you run
    #[arg(value_name = "URL", conflicts_with_all = ["site", "layout"], required_unless_present = "site")]
    pub url: Option<String>,
    /// Instead of a URL: a site (built-in name, .toml, .har or imported
    /// directory) served by the built-in server in a testbed
    #[arg(long)]
    pub site: Option<String>,
    /// What Chromium speaks: http, https (HTTP/1.1 over TLS) or h2 (over TLS;
    /// with a URL, ALPN decides). Default: h2, or http for an http:// URL
    #[arg(long)]
    pub protocol: Option<Protocol>,
    #[command(flatten)]
    pub link: LinkArgs,
    /// With --site: how the site's resources map to host names (origin, mirror, shards:N)
    #[arg(long, value_parser = str::parse::<lab::sites::Layout>, value_name = "LAYOUT")]
    pub layout: Option<lab::sites::Layout>,
    /// Seed of the site's content
    #[arg(long, default_value_t = lab::sites::DEFAULT_SEED)]
    pub site_seed: u64,
    /// Where to write: a directory (gets page.har) or a file ending in .har
    #[arg(long, value_name = "DIR|FILE.har", default_value = ".")]
    pub out: PathBuf,
    /// With a URL: trust the certificates in this PEM file (a private CA)
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// With a URL: accept any certificate
    #[arg(long)]
    pub insecure: bool,
    /// With a URL: connect to ADDR[:PORT] for HOST (Chromium's host rules;
    /// repeatable), e.g. www.example.test=127.0.0.1:8443
    #[arg(long, value_name = "HOST=ADDR[:PORT]", value_parser = lab::record::parse_map)]
    pub map: Vec<(String, String)>,
    /// With a URL: hosts Chromium may reach besides the page's own host and
    /// port (comma-separated or repeated): HOST (ports 80 and 443) or
    /// HOST:PORT; requests to any other host are blocked and named
    #[arg(long, value_name = "HOST[:PORT],...", value_delimiter = ',', value_parser = lab::record::parse_allow_host)]
    pub allow_host: Vec<lab::record::AllowHost>,
    /// The load must reach onload (and its bodies be read) within this
    #[arg(long, value_parser = parse_duration, default_value = "60s", value_name = "DURATION")]
    pub timeout: Duration,
    /// Print one JSON object (the summary)
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: RecordArgs) -> Result<i32, Failure> {
    let link = args.link.flags();
    link.refuse_cross_traffic("record")?;
    let req = lab::record::Request {
        url: args.url,
        site: args.site,
        protocol: args.protocol,
        layout: args.layout,
        site_seed: args.site_seed,
        ca: args.ca,
        insecure: args.insecure,
        map: args.map,
        allow: args.allow_host,
    };
    let source = lab::record::source(&req, || link.choice())?;
    let (path, summary) = lab::record::record_to(&source, &args.out, args.timeout, &mut |line| {
        eprintln!("record: {line}")
    })?;
    let doc = || lab::record::document(&path, &summary);
    let text = || lab::text::record::summary(&path, &summary).join("\n");
    crate::print_json_or(args.json, doc, text);
    Ok(0)
}
