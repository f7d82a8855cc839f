//! The protocols a probe can use, with their DESIGN.md names: the one `Protocol`
//! every crate (server, client, bench, peers, lab, results) speaks of.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Protocol {
    #[serde(rename = "http")]
    Http,
    #[serde(rename = "https")]
    Https,
    #[serde(rename = "http-pipelined")]
    HttpPipelined,
    #[serde(rename = "https-pipelined")]
    HttpsPipelined,
    #[serde(rename = "h2")]
    H2,
    #[serde(rename = "h2c")]
    H2c,
    #[serde(rename = "spdy3")]
    Spdy3,
    /// HTTP/3 over QUIC (UDP 443), TLS 1.3 inside the QUIC handshake.
    #[serde(rename = "h3")]
    H3,
}

impl Protocol {
    pub const ALL: [Protocol; 8] = [
        Protocol::Http,
        Protocol::Https,
        Protocol::HttpPipelined,
        Protocol::HttpsPipelined,
        Protocol::Spdy3,
        Protocol::H2,
        Protocol::H2c,
        Protocol::H3,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Http => "http",
            Protocol::Https => "https",
            Protocol::HttpPipelined => "http-pipelined",
            Protocol::HttpsPipelined => "https-pipelined",
            Protocol::H2 => "h2",
            Protocol::H2c => "h2c",
            Protocol::Spdy3 => "spdy3",
            Protocol::H3 => "h3",
        }
    }

    pub fn tls(self) -> bool {
        matches!(
            self,
            Protocol::Https
                | Protocol::HttpsPipelined
                | Protocol::H2
                | Protocol::Spdy3
                | Protocol::H3
        )
    }

    pub fn multiplexed(self) -> bool {
        matches!(
            self,
            Protocol::H2 | Protocol::H2c | Protocol::Spdy3 | Protocol::H3
        )
    }

    /// Whether it runs over QUIC (UDP) rather than TCP.
    pub fn quic(self) -> bool {
        self == Protocol::H3
    }

    pub fn pipelined(self) -> bool {
        matches!(self, Protocol::HttpPipelined | Protocol::HttpsPipelined)
    }

    /// The ALPN token that selects it over TLS.
    pub fn alpn(self) -> &'static [u8] {
        match self {
            Protocol::Spdy3 => crate::spdy3::ALPN,
            Protocol::H2 | Protocol::H2c => b"h2",
            Protocol::H3 => b"h3",
            _ => b"http/1.1",
        }
    }

    /// The HAR `httpVersion` of its requests.
    pub fn http_version(self) -> &'static str {
        if self == Protocol::Spdy3 {
            "SPDY/3.1"
        } else if self == Protocol::H3 {
            "HTTP/3"
        } else if self.multiplexed() {
            "HTTP/2"
        } else {
            "HTTP/1.1"
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Protocol::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| {
                let known: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
                format!("'{s}' is not a protocol; known: {}", known.join(", "))
            })
    }
}
