//! Sans-I/O: which hosts Chromium may reach on this host (`spdylab record
//! URL --allow-host`), as Chromium's host rules, and which of a page's
//! requests that list blocked.
//!
//! An entry is a host name or address with an optional port: with a port,
//! that port alone; without, 80 and 443 (where URLs without a port go). A
//! host on loopback is thus not opened whole: `--allow-host 127.0.0.1`
//! reaches its ports 80 and 443, not the other services listening there.
//! The page's own host is always allowed at the page's port (and, when that
//! is 80 or 443, at the other of the two: an http page moving to https).
//!
//! Enforced by Chromium's resolver (`--host-resolver-rules`, whose first
//! matching rule wins, by host or by host:port): each allowed host:port is
//! mapped to itself (or to where `--map` sends the host), then `MAP *
//! ~NOTFOUND` makes every other name *and address* fail to resolve, for
//! every request of the network service (subresources, iframes, workers,
//! WebSockets), before any packet. An allowed name still resolves through
//! the system: if it resolves to a loopback address, that is what was allowed.

use std::net::Ipv6Addr;

/// One entry of the allow list: a host (lower case; an IPv6 address without
/// brackets) and its port, or None for 80 and 443.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    pub host: String,
    pub port: Option<u16>,
}

/// The ports a URL without a port goes to.
const DEFAULT_PORTS: [u16; 2] = [80, 443];

impl Reach {
    /// The ports this entry opens.
    pub fn ports(&self) -> Vec<u16> {
        self.port.map_or(DEFAULT_PORTS.to_vec(), |p| vec![p])
    }

    fn allows(&self, host: &str, port: u16) -> bool {
        self.host == host && self.ports().contains(&port)
    }
}

impl std::fmt::Display for Reach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&bracketed(&self.host))?;
        match self.port {
            Some(p) => write!(f, ":{p}"),
            None => Ok(()),
        }
    }
}

/// `HOST`, `HOST:PORT`, `[IPV6]` or `[IPV6]:PORT` (an --allow-host entry).
pub fn parse_reach(s: &str) -> Result<Reach, String> {
    let bad = || format!("'{s}': give HOST or HOST:PORT (a name or an address; no wildcard)");
    let (host, port) = split_host_port(s).ok_or_else(bad)?;
    let name_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if !(name_ok || host.parse::<Ipv6Addr>().is_ok()) {
        return Err(bad());
    }
    let port = match port {
        None => None,
        Some(p) => Some(p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(bad)?),
    };
    Ok(Reach {
        host: host.to_ascii_lowercase(),
        port,
    })
}

/// What the page's own URL allows: its host at its port (and at 80 and 443
/// when its port is one of them).
pub fn page_reach(url: &str) -> Result<Reach, String> {
    let (host, port) = authority(url).ok_or_else(|| format!("URL '{url}': no host in it"))?;
    Ok(Reach {
        host,
        port: (!DEFAULT_PORTS.contains(&port)).then_some(port),
    })
}

/// The host (lower case, IPv6 without brackets) and port of an http(s) or
/// ws(s) URL; None for any other.
pub fn authority(url: &str) -> Option<(String, u16)> {
    let (scheme, rest) = url.split_once("://")?;
    let default = match scheme.to_ascii_lowercase().as_str() {
        "http" | "ws" => 80,
        "https" | "wss" => 443,
        _ => return None,
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let auth = &rest[..end];
    let auth = auth.rsplit_once('@').map_or(auth, |(_, a)| a);
    let (host, port) = split_host_port(auth)?;
    if host.is_empty() {
        return None;
    }
    let port = match port {
        None | Some("") => default,
        Some(p) => p.parse().ok()?,
    };
    Some((host.to_ascii_lowercase(), port))
}

/// `host[:port]` or `[v6][:port]` → host (no brackets) and the port text.
fn split_host_port(s: &str) -> Option<(&str, Option<&str>)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        host.parse::<Ipv6Addr>().ok()?;
        return match after {
            "" => Some((host, None)),
            _ => Some((host, Some(after.strip_prefix(':')?))),
        };
    }
    if s.parse::<Ipv6Addr>().is_ok() {
        return Some((s, None));
    }
    Some(match s.split_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (s, None),
    })
}

fn bracketed(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

/// Whether `url`'s host and port are allowed by `allow`; a URL of another
/// scheme (data:, blob:, about:) is not a network request and counts as allowed.
pub fn allows(allow: &[Reach], url: &str) -> bool {
    match authority(url) {
        None => true,
        Some((host, port)) => allow.iter().any(|r| r.allows(&host, port)),
    }
}

/// Chromium's host rules for `allow`: each allowed host:port mapped to
/// itself, or to the target of the first `map` entry (`--map`: a host, `*`
/// matching any characters, and an address with an optional port) whose
/// pattern matches the host. A map entry of a host not allowed gives no
/// rule. The caller ends the list with `MAP * ~NOTFOUND`.
pub fn rules(allow: &[Reach], map: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for r in allow {
        let target = map
            .iter()
            .find(|(pattern, _)| glob(&pattern.to_ascii_lowercase(), &r.host))
            .map_or_else(|| bracketed(&r.host), |(_, t)| t.clone());
        for p in r.ports() {
            out.push(format!("MAP {}:{p} {target}", bracketed(&r.host)));
        }
    }
    out
}

/// Whether `text` matches `pattern`, where `*` stands for any characters.
pub fn glob(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((head, tail)) => {
            let Some(rest) = text.strip_prefix(head) else {
                return false;
            };
            (0..=rest.len())
                .filter(|&i| rest.is_char_boundary(i))
                .any(|i| glob(tail, &rest[i..]))
        }
    }
}

/// The requests `allow` blocked, of those `urls` the page made: their
/// number, and per host:port how many (in the order first seen), and the
/// URLs (each once).
pub fn blocked<'a>(
    allow: impl Fn(&str) -> bool,
    urls: impl IntoIterator<Item = &'a str>,
) -> (usize, Vec<(String, usize)>, Vec<String>) {
    let mut count = 0;
    let mut hosts: Vec<(String, usize)> = Vec::new();
    let mut listed: Vec<String> = Vec::new();
    for url in urls {
        let Some((host, port)) = authority(url) else {
            continue;
        };
        if allow(url) {
            continue;
        }
        count += 1;
        let key = format!("{}:{port}", bracketed(&host));
        match hosts.iter_mut().find(|(h, _)| *h == key) {
            Some((_, n)) => *n += 1,
            None => hosts.push((key, 1)),
        }
        if !listed.iter().any(|u| u == url) {
            listed.push(url.to_string());
        }
    }
    (count, hosts, listed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach(s: &str) -> Reach {
        parse_reach(s).unwrap()
    }

    #[test]
    fn entries_are_a_host_with_an_optional_port() {
        assert_eq!(
            reach("CDN.Example.test"),
            Reach {
                host: "cdn.example.test".into(),
                port: None
            }
        );
        assert_eq!(reach("127.0.0.1:8443").port, Some(8443));
        assert_eq!(reach("[::1]:8080").host, "::1");
        assert_eq!(reach("::1").port, None);
        assert_eq!(reach("[::1]:8080").to_string(), "[::1]:8080");
        for bad in [
            "",
            "*.example.test",
            "a b",
            "a:0",
            "a:99999",
            "a:x",
            "http://a/",
            "a/b",
            "[zz]:1",
            "u@a",
        ] {
            assert!(parse_reach(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn urls_give_their_host_and_port() {
        assert_eq!(authority("http://A.test/x"), Some(("a.test".into(), 80)));
        assert_eq!(authority("https://a.test"), Some(("a.test".into(), 443)));
        assert_eq!(
            authority("wss://u:p@127.0.0.1:9000/s?q#f"),
            Some(("127.0.0.1".into(), 9000))
        );
        assert_eq!(authority("http://[::1]:81/"), Some(("::1".into(), 81)));
        assert_eq!(authority("data:text/plain,hi"), None);
        assert_eq!(authority("http://a.test:x/"), None);
    }

    #[test]
    fn the_page_allows_its_own_port_and_loopback_stays_closed() {
        let page = [page_reach("http://127.0.0.1:8080/index.html").unwrap()];
        assert!(allows(&page, "http://127.0.0.1:8080/a.css"));
        // Another service on the same loopback address: blocked.
        assert!(!allows(&page, "http://127.0.0.1:6379/"));
        assert!(!allows(&page, "http://127.0.0.1/"));
        // A page on a default port: http and https of its host.
        let page = [page_reach("https://www.example.test/").unwrap()];
        assert!(allows(&page, "http://www.example.test/"));
        assert!(!allows(&page, "https://cdn.example.test/"));
        assert!(allows(&page, "data:image/png;base64,AA"));
        assert!(allows(
            &[reach("cdn.example.test")],
            "https://cdn.example.test/x"
        ));
        assert!(!allows(
            &[reach("cdn.example.test")],
            "https://cdn.example.test:8443/x"
        ));
    }

    #[test]
    fn rules_map_each_allowed_port_and_only_allowed_hosts() {
        let allow = [
            page_reach("https://icons.test/").unwrap(),
            reach("127.0.0.1:9000"),
            reach("::1"),
        ];
        let map = [
            ("icons.test".to_string(), "127.0.0.1:8443".to_string()),
            ("other.test".to_string(), "127.0.0.1:22".to_string()),
        ];
        assert_eq!(
            rules(&allow, &map),
            [
                "MAP icons.test:80 127.0.0.1:8443",
                "MAP icons.test:443 127.0.0.1:8443",
                "MAP 127.0.0.1:9000 127.0.0.1",
                "MAP [::1]:80 [::1]",
                "MAP [::1]:443 [::1]",
            ]
        );
        let wild = [("*.icons.test".to_string(), "10.0.0.1".to_string())];
        assert_eq!(
            rules(&[reach("a.icons.test:81")], &wild),
            ["MAP a.icons.test:81 10.0.0.1"]
        );
    }

    #[test]
    fn blocked_requests_are_counted_per_host_and_named_once() {
        let allow = [page_reach("http://127.0.0.1:8080/").unwrap()];
        let urls = [
            "http://127.0.0.1:8080/",
            "http://127.0.0.1:6379/a",
            "http://second.test/x.png",
            "http://127.0.0.1:6379/a",
            "data:,x",
        ];
        let (n, hosts, named) = blocked(|u| allows(&allow, u), urls);
        assert_eq!(n, 3);
        assert_eq!(
            hosts,
            [
                ("127.0.0.1:6379".to_string(), 2),
                ("second.test:80".to_string(), 1)
            ]
        );
        assert_eq!(
            named,
            ["http://127.0.0.1:6379/a", "http://second.test/x.png"]
        );
    }
}
