//! `spdylab survey HOST[:PORT]`: the server survey (the `survey` crate).
//! `probe` is its old name, kept as an alias (DESIGN.md's); everywhere else
//! a probe is one page load (lab::probe, results::ProbeRecord).

use crate::Failure;
use ::survey::{SurveyRequest, Target};
use clap::Args;
use link::units::parse_duration;
use std::path::PathBuf;
use std::time::Duration;

/// Which of http/1.1, h2, spdy/3.1, h2c and h3 a server offers, its TLS versions,
/// certificate names, limits and Server header
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab survey 127.0.0.1:8443 --http-port 8080 --sni icons.spdylab.test --ca CA.pem
  spdylab survey 198.18.1.1 --json          # TLS checks on 443, cleartext ones on 80

Each check is a connection of its own, made at once, within --timeout: TLS (what an
offer of everything gets), http/1.1 over TLS and in clear, h2 and spdy/3.1 by ALPN
(with the SETTINGS the server sends first), spdy/3.1 by NPN and TLS 1.0/1.1 through
`openssl s_client`, h2c by Upgrade and by prior knowledge, h3 by Alt-Svc and by a QUIC
handshake with ALPN h3 (its control stream's SETTINGS), TLS 1.2 and 1.3 alone.
Certificates are recorded, never rejected: the table says whether the chain verifies
against the system's roots and --ca. Only HOST is contacted: TLS checks on PORT (443),
cleartext ones on --http-port, else PORT, else 80. A check that finds nothing says
why ('no: connection refused'); exit status 1 if nothing answered at all, 2 for bad input.")]
pub struct SurveyArgs {
    /// The server: a host name or address, and the TLS port (default 443)
    #[arg(value_name = "HOST[:PORT]", value_parser = str::parse::<Target>)]
    pub target: Target,
    /// Port of the cleartext checks (http/1.1, h2c); default PORT, or 80 without one
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    pub http_port: Option<u16>,
    /// Name for TLS SNI, the certificate check and Host (default HOST)
    #[arg(long, value_name = "NAME")]
    pub sni: Option<String>,
    /// Also verify the certificate against this CA (PEM)
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// Time of each check
    #[arg(long, value_parser = parse_duration, default_value = "5s", value_name = "DURATION")]
    pub timeout: Duration,
    /// Print one JSON object
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: SurveyArgs) -> Result<i32, Failure> {
    let survey = ::survey::survey(&SurveyRequest {
        target: args.target,
        http_port: args.http_port,
        server_name: args.sni,
        ca: args.ca.clone(),
        timeout: args.timeout,
    })?;
    match args.json {
        true => println!("{:#}", survey.document()),
        false => print!("{}", ::survey::text::table(&survey, args.ca.as_deref())),
    }
    if survey.answered() {
        return Ok(0);
    }
    eprintln!("{}", ::survey::text::nothing_answered(&survey));
    Ok(1)
}
