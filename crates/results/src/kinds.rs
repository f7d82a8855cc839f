//! The servers and clients a Trial can name, as plain values: parsing and
//! printing their names is here once; what each can do lives with the code that
//! runs it (`peers` for real servers, `lab` for refusals).

use std::fmt;
use std::str::FromStr;

/// A real server spdylab can run as a peer of the built-in one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PeerKind {
    Nginx,
    Apache,
    H2o,
    Caddy,
}

/// A name that is none of the known ones (of a server, or a client).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    /// What was being named: "server" or "client".
    pub what: &'static str,
    pub given: String,
    pub known: &'static [&'static str],
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} {:?}: one of {}",
            self.what,
            self.given,
            self.known.join(", ")
        )
    }
}

impl std::error::Error for UnknownName {}

impl PeerKind {
    pub const ALL: [PeerKind; 4] = [
        PeerKind::Nginx,
        PeerKind::Apache,
        PeerKind::H2o,
        PeerKind::Caddy,
    ];

    /// Every real server, by name.
    pub const NAMES: [&'static str; 4] = ["nginx", "apache", "h2o", "caddy"];

    pub fn name(self) -> &'static str {
        match self {
            PeerKind::Nginx => "nginx",
            PeerKind::Apache => "apache",
            PeerKind::H2o => "h2o",
            PeerKind::Caddy => "caddy",
        }
    }
}

/// What serves the site inside the testbed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ServerKind {
    /// spdylab's own server, in this process (every protocol, every knob).
    #[default]
    Builtin,
    /// A real server (nginx, Apache, h2o, caddy) from a generated config,
    /// confined in the server namespace.
    Peer(PeerKind),
}

impl ServerKind {
    /// Every server, by name: builtin, nginx, apache, h2o, caddy.
    pub const NAMES: [&'static str; 5] = ["builtin", "nginx", "apache", "h2o", "caddy"];

    pub fn name(self) -> &'static str {
        match self {
            ServerKind::Builtin => "builtin",
            ServerKind::Peer(k) => k.name(),
        }
    }

    /// The server called `name` (one of [`ServerKind::NAMES`]).
    pub fn parse(name: &str) -> Result<ServerKind, UnknownName> {
        name.parse()
    }
}

/// What loads the page at the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ClientKind {
    /// spdylab's browser model (every protocol, every knob).
    #[default]
    Model,
    /// Headless Chromium, started afresh for each probe in the client namespace.
    Chromium,
}

impl ClientKind {
    /// Every client, by name.
    pub const NAMES: [&'static str; 2] = ["model", "chromium"];

    pub fn name(self) -> &'static str {
        match self {
            ClientKind::Model => "model",
            ClientKind::Chromium => "chromium",
        }
    }
}

/// Which load of a page a probe measures (`--view`, issue 38): `first`, a
/// cold client; `repeat`, the same client's second load after its
/// connections closed, keeping its HTTP cache, TLS session tickets and QUIC
/// 0-RTT tickets (docs/repeat-view.md); `both`, each probe measures the
/// first load and then the repeat one. A probe record is `first` or `repeat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum View {
    #[default]
    First,
    Repeat,
    Both,
}

impl View {
    /// Every view, by name.
    pub const NAMES: [&'static str; 3] = ["first", "repeat", "both"];

    pub fn name(self) -> &'static str {
        match self {
            View::First => "first",
            View::Repeat => "repeat",
            View::Both => "both",
        }
    }

    /// The loads a probe of this view measures, in the order they run.
    pub fn measured(self) -> &'static [View] {
        match self {
            View::First => &[View::First],
            View::Repeat => &[View::Repeat],
            View::Both => &[View::First, View::Repeat],
        }
    }

    /// Whether a probe of this view loads the page twice.
    pub fn loads_twice(self) -> bool {
        self != View::First
    }

    /// Whether this is the first view (a record's default).
    pub fn is_first(&self) -> bool {
        *self == View::First
    }
}

macro_rules! named {
    ($t:ty) => {
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> serde::Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

named!(PeerKind);
named!(ServerKind);
named!(ClientKind);
named!(View);

fn unknown(what: &'static str, given: &str, known: &'static [&'static str]) -> UnknownName {
    UnknownName {
        what,
        given: given.to_string(),
        known,
    }
}

impl FromStr for PeerKind {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<PeerKind, UnknownName> {
        PeerKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| unknown("server", s, &PeerKind::NAMES))
    }
}

impl FromStr for ServerKind {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<ServerKind, UnknownName> {
        if s == "builtin" {
            return Ok(ServerKind::Builtin);
        }
        s.parse()
            .map(ServerKind::Peer)
            .map_err(|_| unknown("server", s, &ServerKind::NAMES))
    }
}

impl FromStr for ClientKind {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<ClientKind, UnknownName> {
        match s {
            "model" => Ok(ClientKind::Model),
            "chromium" => Ok(ClientKind::Chromium),
            _ => Err(unknown("client", s, &ClientKind::NAMES)),
        }
    }
}

impl FromStr for View {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<View, UnknownName> {
        [View::First, View::Repeat, View::Both]
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| unknown("view", s, &View::NAMES))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in ServerKind::NAMES {
            assert_eq!(name.parse::<ServerKind>().unwrap().name(), name);
        }
        for name in ClientKind::NAMES {
            assert_eq!(name.parse::<ClientKind>().unwrap().name(), name);
        }
        for name in View::NAMES {
            assert_eq!(name.parse::<View>().unwrap().name(), name);
        }
        assert_eq!(View::Both.measured(), [View::First, View::Repeat]);
        assert_eq!(
            "lighttpd".parse::<ServerKind>().unwrap_err().to_string(),
            "unknown server \"lighttpd\": one of builtin, nginx, apache, h2o, caddy"
        );
        assert_eq!(
            "lighttpd".parse::<PeerKind>().unwrap_err().to_string(),
            "unknown server \"lighttpd\": one of nginx, apache, h2o, caddy"
        );
        for k in PeerKind::ALL {
            assert_eq!(k.name().parse::<PeerKind>(), Ok(k));
        }
        assert!("firefox".parse::<ClientKind>().is_err());
    }
}
