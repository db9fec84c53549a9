//! Web origins and `Host` values, parsed and compared the way browsers mean them: the
//! Origin check (a page of another site may not drive the daemon) and the loopback-host
//! check (DNS rebinding) of the README's Security section. Pure: no HTTP types, so config
//! validation shares it.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

/// Longest origin or `Host` value looked at; anything longer is refused unparsed.
const MAX_LEN: usize = 1024;

/// Why a string is not an origin (`scheme://host[:port]`) or a `Host` value (`host[:port]`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OriginError {
    #[error("longer than {MAX_LEN} bytes")]
    TooLong,
    #[error("missing `scheme://`")]
    NoScheme,
    #[error("the scheme must be letters, digits, `+`, `-` or `.`, starting with a letter")]
    BadScheme,
    #[error("no host")]
    NoHost,
    #[error("an origin has no path, query, fragment or user name (drop everything after the host and port)")]
    Extra,
    #[error("the host must be a DNS name (ASCII; punycode for others), an IPv4 address or a bracketed IPv6 address")]
    BadHost,
    #[error("the port must be a number from 1 to 65535")]
    BadPort,
}

/// A web origin, normalized: lowercase scheme and host, default port made explicit for
/// the schemes that have one, so `http://LocalHost` equals `http://localhost:80`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteOrigin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl SiteOrigin {
    /// Parses `scheme://host[:port]`, as sent in an `Origin` header or written in
    /// `gateway.allowedOrigins`. (`null`, sent by sandboxed frames and files, is refused.)
    pub fn parse(s: &str) -> Result<SiteOrigin, OriginError> {
        if s.len() > MAX_LEN {
            return Err(OriginError::TooLong);
        }
        let (scheme, rest) = s.split_once("://").ok_or(OriginError::NoScheme)?;
        let mut chars = scheme.chars();
        let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !scheme_ok {
            return Err(OriginError::BadScheme);
        }
        if rest.contains(['/', '?', '#', '@']) {
            return Err(OriginError::Extra);
        }
        let scheme = scheme.to_ascii_lowercase();
        let authority = Authority::parse(rest)?;
        Ok(SiteOrigin::new(scheme, authority))
    }

    /// The daemon's own origin for a request that arrived with this `Host` (plain HTTP:
    /// the daemon serves no TLS; a TLS proxy in front lists its origin in `allowedOrigins`).
    pub fn of_host(host: &Authority) -> SiteOrigin {
        SiteOrigin::new("http".to_string(), host.clone())
    }

    fn new(scheme: String, authority: Authority) -> SiteOrigin {
        let port = authority.port.or(match scheme.as_str() {
            "http" | "ws" => Some(80),
            "https" | "wss" => Some(443),
            _ => None,
        });
        SiteOrigin {
            scheme,
            host: authority.host,
            port,
        }
    }
}

impl fmt::Display for SiteOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        match self.port {
            Some(p) => write!(f, ":{p}"),
            None => Ok(()),
        }
    }
}

/// `host[:port]`, as in a `Host` header: host lowercased, IPv6 kept in brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authority {
    host: String,
    port: Option<u16>,
}

impl Authority {
    pub fn parse(s: &str) -> Result<Authority, OriginError> {
        if s.len() > MAX_LEN {
            return Err(OriginError::TooLong);
        }
        if s.is_empty() {
            return Err(OriginError::NoHost);
        }
        let (host, port) = if let Some(v6) = s.strip_prefix('[') {
            let (inside, after) = v6.split_once(']').ok_or(OriginError::BadHost)?;
            let ip = inside
                .parse::<Ipv6Addr>()
                .map_err(|_| OriginError::BadHost)?;
            let port = match after {
                "" => None,
                p => Some(p.strip_prefix(':').ok_or(OriginError::BadHost)?),
            };
            (format!("[{ip}]"), port)
        } else {
            let (host, port) = match s.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (s, None),
            };
            let host_ok = !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
            if !host_ok {
                return Err(OriginError::BadHost);
            }
            (host.to_ascii_lowercase(), port)
        };
        let port = match port {
            None => None,
            Some(p) => Some(parse_port(p)?),
        };
        Ok(Authority { host, port })
    }

    /// `localhost`, an address in 127.0.0.0/8, or `[::1]`: names a DNS rebinding
    /// attacker cannot point at this machine from a page of their own.
    pub fn is_loopback(&self) -> bool {
        if self.host == "localhost" {
            return true;
        }
        let bare = self
            .host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(&self.host);
        bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

fn parse_port(p: &str) -> Result<u16, OriginError> {
    if p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()) {
        return Err(OriginError::BadPort);
    }
    match p.parse::<u16>() {
        Ok(0) | Err(_) => Err(OriginError::BadPort),
        Ok(n) => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin(s: &str) -> SiteOrigin {
        SiteOrigin::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn origins_normalize_case_and_default_ports() {
        assert_eq!(origin("HTTP://LocalHost"), origin("http://localhost:80"));
        assert_eq!(origin("https://a.example"), origin("https://a.example:443"));
        assert_ne!(origin("http://a.example"), origin("https://a.example"));
        assert_ne!(origin("http://a.example:8080"), origin("http://a.example"));
        assert_eq!(origin("http://[::1]:9").to_string(), "http://[::1]:9");
        assert_eq!(
            origin("chrome-extension://abc").to_string(),
            "chrome-extension://abc"
        );
        let host = Authority::parse("LOCALHOST:18789").expect("authority");
        assert_eq!(SiteOrigin::of_host(&host), origin("http://localhost:18789"));
    }

    #[test]
    fn malformed_origins_say_what_is_wrong() {
        for (s, e) in [
            ("null", OriginError::NoScheme),
            ("evil.example", OriginError::NoScheme),
            ("1http://a", OriginError::BadScheme),
            ("://a", OriginError::BadScheme),
            ("http://", OriginError::NoHost),
            ("http://a.example/", OriginError::Extra),
            ("http://u@a.example", OriginError::Extra),
            ("http://a b", OriginError::BadHost),
            ("http://ä.example", OriginError::BadHost),
            ("http://[::1", OriginError::BadHost),
            ("http://[nope]", OriginError::BadHost),
            ("http://a:0", OriginError::BadPort),
            ("http://a:65536", OriginError::BadPort),
            ("http://a:", OriginError::BadPort),
            ("http://a:+1", OriginError::BadPort),
        ] {
            assert_eq!(SiteOrigin::parse(s), Err(e), "{s}");
        }
    }

    #[test]
    fn loopback_hosts_are_localhost_127_8_and_v6_one() {
        for ok in [
            "localhost",
            "LocalHost:1",
            "127.0.0.1:18789",
            "127.255.0.9",
            "[::1]:80",
            "[::1]",
        ] {
            assert!(
                Authority::parse(ok).expect("authority").is_loopback(),
                "{ok}"
            );
        }
        for no in [
            "evil.example",
            "localhost.evil.example",
            "0.0.0.0",
            "10.0.0.1:80",
            "[::2]",
            "[::ffff:127.0.0.1]",
            "128.0.0.1",
        ] {
            assert!(
                !Authority::parse(no).expect("authority").is_loopback(),
                "{no}"
            );
        }
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Arbitrary text with plenty of what the parsers split on.
    fn messy() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                4 => any::<char>().prop_map(String::from),
                2 => Just("://".to_string()),
                2 => Just(":".to_string()),
                1 => Just("[".to_string()),
                1 => Just("]".to_string()),
                1 => Just("::1".to_string()),
                1 => Just("127.0.0.1".to_string()),
                1 => Just("localhost".to_string()),
                1 => Just("http".to_string()),
                1 => Just("/".to_string()),
                1 => "[0-9]{1,6}",
            ],
            0..24,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(crate::proptest_cases::config())]

        /// Never panics; whatever parses prints back to a string that parses to the same
        /// origin (normalization is stable), and a loopback verdict needs a loopback host.
        #[test]
        fn parsing_is_total_and_stable(s in messy()) {
            if let Ok(o) = SiteOrigin::parse(&s) {
                prop_assert_eq!(SiteOrigin::parse(&o.to_string()), Ok(o.clone()));
            }
            if let Ok(a) = Authority::parse(&s) {
                if a.is_loopback() {
                    let h = a.host.as_str();
                    prop_assert!(h == "localhost" || h.starts_with("127.") || h == "[::1]", "{}", h);
                }
            }
        }
    }
}
