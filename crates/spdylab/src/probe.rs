//! `spdylab probe HOST[:PORT]`: what a server speaks (lab::survey), as a table or JSON.

use crate::Failure;
use clap::Args;
use lab::survey::{Survey, SurveyError, SurveyRequest, Target};
use link::units::{format_duration, parse_duration};
use std::path::PathBuf;
use std::time::Duration;

/// Which of http/1.1, h2, spdy/3.1, h2c and h3 a server offers, its TLS versions,
/// certificate names, limits and Server header
#[derive(Debug, Args)]
#[command(after_help = "Examples:
  spdylab probe 127.0.0.1:8443 --http-port 8080 --sni icons.spdylab.test --ca CA.pem
  spdylab probe 198.18.1.1 --json          # TLS checks on 443, cleartext ones on 80

Each check is a connection of its own, made at once, within --timeout: TLS (what an
offer of everything gets), http/1.1 over TLS and in clear, h2 and spdy/3.1 by ALPN
(with the SETTINGS the server sends first), spdy/3.1 by NPN and TLS 1.0/1.1 through
`openssl s_client`, h2c by Upgrade and by prior knowledge, h3 by Alt-Svc and by a QUIC
handshake with ALPN h3 (its control stream's SETTINGS), TLS 1.2 and 1.3 alone.
Certificates are recorded, never rejected: the table says whether the chain verifies
against the system's roots and --ca. Only HOST is contacted: TLS checks on PORT (443),
cleartext ones on --http-port, else PORT, else 80. A check that finds nothing says
why ('no: connection refused'); exit status 1 if nothing answered at all, 2 for bad input.")]
pub struct ProbeArgs {
    /// The server: a host name or address, and the TLS port (default 443)
    #[arg(value_name = "HOST[:PORT]", value_parser = parse_target)]
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

fn parse_target(s: &str) -> Result<Target, String> {
    s.parse()
}

pub fn run(args: ProbeArgs) -> Result<i32, Failure> {
    if args.timeout.is_zero() {
        return Err(Failure::Usage("--timeout must be above 0".into()));
    }
    let survey = lab::survey::survey(&SurveyRequest {
        target: args.target.clone(),
        http_port: args.http_port,
        server_name: args.sni.clone(),
        ca: args.ca.clone(),
        timeout: args.timeout,
    })
    .map_err(|e| match e {
        SurveyError::Usage(m) => Failure::Usage(m),
        e => Failure::Setup(Box::new(e)),
    })?;
    if args.json {
        let mut v = serde_json::to_value(&survey).map_err(|e| Failure::Setup(Box::new(e)))?;
        v["schema"] = 1.into();
        println!("{v:#}");
    } else {
        print!("{}", table(&survey, args.ca.as_deref()));
    }
    if survey.answered() {
        Ok(0)
    } else {
        eprintln!(
            "spdylab: nothing answered at {} (TCP {} and {}, UDP {})",
            survey.address, survey.tls_port, survey.http_port, survey.tls_port
        );
        Ok(1)
    }
}

fn table(s: &Survey, ca: Option<&std::path::Path>) -> String {
    let mut out = format!(
        "probe {} ({}): TLS port {}, cleartext port {}, name {}, timeout {} per check\n",
        s.host,
        s.address,
        s.tls_port,
        s.http_port,
        s.server_name,
        format_duration(Duration::from_millis(s.timeout_ms))
    );
    out.push_str(&format!(
        "{:<22} {:<10} {:<8} {}\n",
        "check", "where", "offered", "detail"
    ));
    for c in &s.checks {
        let place = match c.port {
            Some(p) => format!("{}/{p}", c.transport),
            None => c.transport.to_string(),
        };
        let offered = match c.offered {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        };
        let detail = match c.offered {
            Some(false) => format!("no: {}", c.detail),
            _ => c.detail.clone(),
        };
        out.push_str(&format!(
            "{:<22} {:<10} {:<8} {}\n",
            c.name, place, offered, detail
        ));
    }
    match &s.certificate {
        Some(cert) => {
            let verdict = |v: &lab::survey::Verdict| {
                if v.verifies {
                    "verifies".to_string()
                } else {
                    format!("does not verify ({})", v.detail)
                }
            };
            out.push_str(&format!(
                "certificate: {} (chain of {}); system roots: {}",
                if cert.names.is_empty() {
                    "no subject alternative names".into()
                } else {
                    cert.names.join(", ")
                },
                cert.chain,
                verdict(&cert.system_roots)
            ));
            if let (Some(v), Some(path)) = (&cert.ca, ca) {
                out.push_str(&format!("; --ca {}: {}", path.display(), verdict(v)));
            }
            out.push('\n');
        }
        None => out.push_str("certificate: none seen (no TLS handshake completed)\n"),
    }
    out.push_str(&format!(
        "server: {}\n",
        s.server.as_deref().unwrap_or("(no Server header)")
    ));
    out.push_str(&format!(
        "offered: {}\n",
        match s.offered().join(", ") {
            o if o.is_empty() => "nothing".to_string(),
            o => o,
        }
    ));
    out
}
