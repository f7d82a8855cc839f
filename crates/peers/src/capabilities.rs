//! What each peer serves and which knobs it honours, as verified on loopback
//! against the Debian packages (nginx 1.22, apache2 2.4, h2o 2.2.5, caddy
//! 2.6.2) with curl --http1.1/--http2/--http2-prior-knowledge, pipelined
//! requests on one socket, `nghttp -v` (SETTINGS) and `openssl s_client
//! -tls1_2/-tls1_3`. A Trial a server cannot do exactly is refused with the
//! reason, never measured as something else.

use crate::{PeerKind, Program};
use proto::Protocol;

/// The stream limit a server advertises (HTTP/2 and SPDY SETTINGS, or h3's
/// QUIC transport parameter `initial_max_streams_bidi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamLimit {
    /// Whatever the knob says.
    Any,
    /// Always this (SETTINGS_MAX_CONCURRENT_STREAMS), whatever the config.
    Fixed(u32),
}

/// One server's row of the table: None where it does as asked, Some(why not) where not.
#[derive(Debug, Clone, Copy)]
pub struct Capabilities {
    /// Per protocol of `Protocol::ALL` (same order): see [`Capabilities::protocol`].
    pub protocols: [Option<&'static str>; Protocol::ALL.len()],
    /// HTTP/2's and SPDY's SETTINGS_MAX_CONCURRENT_STREAMS.
    pub max_streams: StreamLimit,
    /// h3's concurrent request streams (QUIC `initial_max_streams_bidi`);
    /// `Any` where the server has no h3.
    pub h3_max_streams: StreamLimit,
    pub tls12_only: Option<&'static str>,
    pub tls13_only: Option<&'static str>,
    pub server_delay: Option<&'static str>,
    /// TLS 1.3 early data over TCP (the repeat view's: `PeerOptions::early_data`).
    pub early_data: Option<&'static str>,
}

impl Capabilities {
    /// None where the server serves `protocol` as asked, else why not.
    pub fn protocol(&self, protocol: Protocol) -> Option<&'static str> {
        let i = Protocol::ALL.iter().position(|p| *p == protocol)?;
        self.protocols[i]
    }
}

/// The knobs of a Trial that a server may not honour.
#[derive(Debug, Clone, Copy)]
pub struct Knobs {
    pub max_streams: u32,
    /// Some(true): TLS 1.3 only; Some(false): TLS 1.2 only; None: either.
    pub tls13_only: Option<bool>,
    /// A server think time is asked for.
    pub server_delay: bool,
    /// Resources of the site: no connection ever has more streams open, so any
    /// stream limit at least this large is the same as any other.
    pub resources: usize,
}

const NO_DELAY: &str = "has no think time";

/// `kind`'s row of the capability table.
pub(crate) fn row(kind: PeerKind) -> Capabilities {
    match kind {
            PeerKind::Nginx => Capabilities {
                protocols: [
                    None,
                    None,
                    None,
                    None,
                    Some("nginx has no SPDY since 1.9.5 (Debian's is 1.22)"),
                    None,
                    Some("nginx serves h2c only on a port without HTTP/1.1, which the testbed's port 80 is not"),
                    Some("nginx has no HTTP/3 in Debian's build (1.22, no ngx_http_v3_module, which came in 1.25)"),
                ],
                max_streams: StreamLimit::Any,
                h3_max_streams: StreamLimit::Any,
                tls12_only: None,
                tls13_only: None,
                server_delay: Some(NO_DELAY),
                // `ssl_early_data on` (since 1.15.3; OpenSSL 3.0 here).
                early_data: None,
            },
            PeerKind::Apache => Capabilities {
                protocols: [
                    None,
                    None,
                    None,
                    None,
                    Some("Apache has no SPDY: mod_spdy was for 2.2 and was retired in 2014 (Debian's is 2.4 with mod_http2)"),
                    None,
                    None,
                    Some("Apache has no HTTP/3 (no QUIC module for httpd 2.4)"),
                ],
                max_streams: StreamLimit::Any,
                h3_max_streams: StreamLimit::Any,
                tls12_only: None,
                tls13_only: None,
                server_delay: Some(NO_DELAY),
                early_data: Some("Apache 2.4's mod_ssl has no setting for TLS 1.3 early data (none among mod_ssl.so's strings): its tickets allow none"),
            },
            PeerKind::H2o => Capabilities {
                protocols: [
                    None,
                    None,
                    None,
                    None,
                    Some("h2o has no SPDY (it offers only h2 and http/1.1 by ALPN)"),
                    None,
                    None,
                    Some("h2o 2.2.5 (Debian's) has no QUIC: HTTP/3 came in h2o 2.3 betas"),
                ],
                max_streams: StreamLimit::Fixed(100),
                h3_max_streams: StreamLimit::Any,
                tls12_only: Some("h2o 2.2 cannot be limited to TLS 1.2 (it has a minimum version only)"),
                tls13_only: None,
                server_delay: Some(NO_DELAY),
                early_data: Some("h2o 2.2.5 (Debian's) has no setting for TLS 1.3 early data (no such directive among its binary's strings): its tickets allow none"),
            },
            PeerKind::Caddy => Capabilities {
                protocols: [
                    None,
                    None,
                    None,
                    None,
                    Some("caddy has no SPDY (Go's net/http offers only h2 and http/1.1 by ALPN)"),
                    None,
                    None,
                    None,
                ],
                // Go's net/http advertises 250 for h2; quic-go's default
                // MaxIncomingStreams (caddy 2.6 does not set it) is 100 for h3,
                // as `spdylab probe` reads in its transport parameters.
                max_streams: StreamLimit::Fixed(250),
                h3_max_streams: StreamLimit::Fixed(100),
                tls12_only: None,
                tls13_only: None,
                server_delay: Some(NO_DELAY),
                early_data: Some("Go's crypto/tls, which caddy serves TLS with, has no 0-RTT: TLS 1.3 early data is never accepted"),
            },
        }
}

/// Why `kind` cannot serve `protocol` with `knobs` exactly, if it cannot; the
/// message names the servers that can.
pub(crate) fn refuses(kind: PeerKind, protocol: Protocol, knobs: &Knobs) -> Option<String> {
    let caps = row(kind);
    let others = |ok: &dyn Fn(&Capabilities) -> bool| -> String {
        let mut names = vec!["builtin"];
        names.extend(
            PeerKind::ALL
                .into_iter()
                .filter(|k| ok(&k.capabilities()))
                .map(|k| k.name()),
        );
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    };
    if let Some(why) = caps.protocol(protocol) {
        return Some(format!(
            "{why}: {protocol} needs --server {}",
            others(&|c| c.protocol(protocol).is_none())
        ));
    }
    let tls = protocol.tls();
    let multiplexed = protocol.multiplexed();
    if knobs.server_delay {
        if let Some(why) = caps.server_delay {
            return Some(format!(
                "{kind} {why}: --server-delay needs --server {}",
                others(&|c| c.server_delay.is_none())
            ));
        }
    }
    if tls {
        let (refused, flag) = match knobs.tls13_only {
            Some(false) => (caps.tls12_only, "--tls 1.2"),
            Some(true) => (caps.tls13_only, "--tls 1.3"),
            None => (None, ""),
        };
        if let Some(why) = refused {
            let ok = |c: &Capabilities| match knobs.tls13_only {
                Some(false) => c.tls12_only.is_none(),
                _ => c.tls13_only.is_none(),
            };
            return Some(format!("{why}: {flag} needs --server {}", others(&ok)));
        }
    }
    let limit = if protocol.quic() {
        caps.h3_max_streams
    } else {
        caps.max_streams
    };
    if let (true, StreamLimit::Fixed(fixed)) = (multiplexed, limit) {
        // The limit cannot bind when the site has no more resources than it.
        let same =
            knobs.max_streams == fixed || knobs.max_streams.min(fixed) as usize >= knobs.resources;
        if !same {
            return Some(format!(
                    "{kind} advertises {fixed} concurrent streams and cannot change it: --max-streams {} needs --server {} (or --max-streams {fixed})",
                    knobs.max_streams,
                    others(&|c| c.max_streams == StreamLimit::Any)
                ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knobs(max_streams: u32, tls13_only: Option<bool>) -> Knobs {
        Knobs {
            max_streams,
            tls13_only,
            server_delay: false,
            resources: 60,
        }
    }

    #[test]
    fn refusals_name_the_servers_that_can() {
        let k = knobs(6, None);
        let why = PeerKind::H2o.refuses(Protocol::H2, &k).unwrap();
        assert!(why.starts_with("h2o advertises 100 concurrent streams and cannot change it: --max-streams 6 needs --server builtin, nginx or apache"), "{why}");
        assert_eq!(
            PeerKind::H2o.refuses(Protocol::Https, &k),
            None,
            "no streams in HTTP/1.1"
        );
        assert_eq!(PeerKind::Apache.refuses(Protocol::H2, &k), None);
        let why = PeerKind::Nginx
            .refuses(Protocol::H2c, &knobs(100, None))
            .unwrap();
        assert!(
            why.ends_with("h2c needs --server builtin, apache, h2o or caddy"),
            "{why}"
        );
        let why = PeerKind::Caddy
            .refuses(Protocol::Spdy3, &knobs(100, None))
            .unwrap();
        assert!(why.ends_with("spdy3 needs --server builtin"), "{why}");
        let why = PeerKind::H2o
            .refuses(Protocol::H2, &knobs(100, Some(false)))
            .unwrap();
        assert!(
            why.contains("--tls 1.2 needs --server builtin, nginx, apache or caddy"),
            "{why}"
        );
        assert_eq!(
            PeerKind::H2o.refuses(Protocol::H2, &knobs(100, Some(true))),
            None
        );
        assert_eq!(
            PeerKind::H2o.refuses(Protocol::Http, &knobs(100, Some(false))),
            None,
            "no TLS"
        );
        let delay = Knobs {
            server_delay: true,
            ..knobs(100, None)
        };
        assert!(PeerKind::Apache
            .refuses(Protocol::Http, &delay)
            .unwrap()
            .contains("--server-delay needs --server builtin"));
    }

    #[test]
    fn a_stream_limit_above_the_page_is_any_limit() {
        // caddy's 250 against the default 100: a 60-resource page never has more open.
        assert_eq!(
            PeerKind::Caddy.refuses(Protocol::H2, &knobs(100, None)),
            None
        );
        let big = Knobs {
            resources: 300,
            ..knobs(100, None)
        };
        assert!(PeerKind::Caddy.refuses(Protocol::H2, &big).is_some());
        assert_eq!(
            PeerKind::Caddy.refuses(Protocol::H2, &knobs(250, None)),
            None
        );
        assert!(PeerKind::H2o
            .refuses(Protocol::H2c, &knobs(50, None))
            .is_some());
    }

    #[test]
    fn caddys_h3_limit_is_quic_gos_100_not_its_h2_250() {
        let big = |n| Knobs {
            resources: 300,
            ..knobs(n, None)
        };
        assert_eq!(PeerKind::Caddy.refuses(Protocol::H3, &big(100)), None);
        let why = PeerKind::Caddy.refuses(Protocol::H3, &big(250)).unwrap();
        assert!(why.contains("advertises 100"), "{why}");
        assert_eq!(PeerKind::Caddy.refuses(Protocol::H2, &big(250)), None);
    }
}
