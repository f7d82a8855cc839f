//! The TLS, request-header and kernel-state flags shared by the commands that
//! load pages (`compare`, `crosscheck`): `--cert`, `--tls-resume`,
//! `--headers`, `--cookie-bytes`, `--warm-metrics` — the knobs that make a
//! Trial look like the studies' era (RSA chains, resumed sessions, a 2014
//! Chrome's request headers, a kernel that remembers each destination).

use clap::{Args, ValueEnum};
use lab::probe::ProbeSpec;

/// `--cert`: the server's certificate.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CertArg {
    /// RSA 2048 root → intermediate → leaf (the server sends leaf and intermediate)
    Rsa2048,
    /// ECDSA P-256 root → leaf (today's small certificate)
    Ecdsa,
}

/// `--headers`: the model client's request headers.
impl CertArg {
    pub fn kind(self) -> lab::trial::CertKind {
        match self {
            CertArg::Rsa2048 => lab::trial::CertKind::Rsa2048,
            CertArg::Ecdsa => lab::trial::CertKind::Ecdsa,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum HeadersArg {
    /// A 2014 Chrome's: user-agent, accept by resource type, accept-encoding,
    /// accept-language, referer (~350–450 B per request on HTTP/1.1)
    Chrome2014,
    /// Two or three short headers (spdylab before issue 16)
    Minimal,
}

#[derive(Debug, Clone, Args)]
pub struct EraArgs {
    /// The server's certificate: rsa2048 (root → intermediate → leaf, as in
    /// 2014; ~1.7 kB more handshake) or ecdsa (P-256 root → leaf); real servers get the same files
    #[arg(long, value_enum, default_value = "ecdsa")]
    pub cert: CertArg,
    /// The model client resumes the TLS sessions of earlier probes of the
    /// Trial (one session store across its probes; the built-in server issues
    /// tickets): later probes make abbreviated handshakes (1 RTT on TLS 1.2).
    /// Default: every probe a full handshake. Not with --client chromium (a
    /// fresh profile per probe)
    #[arg(long)]
    pub tls_resume: bool,
    /// The model client's request headers; sent on every protocol, so SPDY's
    /// and HTTP/2's header compression shows in the bytes up
    #[arg(long, value_enum, default_value = "chrome2014")]
    pub headers: HeadersArg,
    /// A cookie header of N bytes on every request of the model client (with --headers chrome2014)
    #[arg(long, default_value_t = 0, value_name = "N",
          value_parser = clap::value_parser!(u32).range(0..=lab::trial::MAX_COOKIE_BYTES as i64))]
    pub cookie_bytes: u32,
    /// Keep the kernel's per-destination TCP metrics (ssthresh, RTT, cwnd)
    /// between the probes of a Trial (tcp_no_metrics_save=0), as the 2013
    /// kernel of back-to-back runs did. Default: every probe cold
    #[arg(long)]
    pub warm_metrics: bool,
}

impl EraArgs {
    /// Sets the spec's certificate, resumption, headers and kernel state.
    pub fn apply(&self, spec: &mut ProbeSpec) {
        spec.cert = self.cert.kind();
        spec.tls_resume = self.tls_resume;
        spec.headers = self.request_headers();
        spec.testbed.warm_metrics = self.warm_metrics;
    }

    pub fn request_headers(&self) -> lab::trial::RequestHeaders {
        lab::trial::RequestHeaders {
            set: match self.headers {
                HeadersArg::Chrome2014 => lab::trial::HeaderSet::Chrome2014,
                HeadersArg::Minimal => lab::trial::HeaderSet::Minimal,
            },
            cookie_bytes: self.cookie_bytes as usize,
        }
    }
}
