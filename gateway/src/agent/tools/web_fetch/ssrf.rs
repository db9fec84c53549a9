//! The SSRF guard of `web_fetch`: which addresses a fetch may connect to. Loopback,
//! private (RFC 1918, IPv6 unique-local), link-local (cloud metadata lives there),
//! CGNAT, multicast, broadcast, unspecified and reserved addresses are refused, IPv4 and
//! IPv6 alike, including IPv4 addresses carried inside IPv6 (mapped, compatible, NAT64,
//! 6to4). The check runs inside the HTTP client's resolver, so the address checked is
//! the address connected to (no second lookup for DNS rebinding to exploit).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use parking_lot::Mutex;

/// Why `ip` may not be fetched from, if it may not.
pub fn forbidden(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

fn forbidden_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        (0, _, _) => "an unspecified (0.0.0.0/8) address",
        (127, _, _) => "a loopback address",
        (10, _, _) => "a private (RFC 1918) address",
        (172, 16..=31, _) => "a private (RFC 1918) address",
        (192, 168, _) => "a private (RFC 1918) address",
        (169, 254, _) => "a link-local address (cloud metadata lives there)",
        (100, 64..=127, _) => "a shared (CGNAT, 100.64.0.0/10) address",
        (192, 0, 0) => "an IETF protocol (192.0.0.0/24) address",
        (198, 18..=19, _) => "a benchmarking (198.18.0.0/15) address",
        (224..=239, _, _) => "a multicast address",
        (240..=255, _, _) => "a reserved or broadcast address",
        _ => return None,
    })
}

fn forbidden_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if ip.is_unspecified() {
        return Some("the unspecified address");
    }
    if ip.is_loopback() {
        return Some("a loopback address");
    }
    let s = ip.segments();
    // IPv4 inside IPv6: mapped (::ffff:a.b.c.d), compatible (::a.b.c.d), NAT64
    // (64:ff9b::a.b.c.d), 6to4 (2002:AABB:CCDD::).
    let embedded = match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo]
        | [0, 0, 0, 0, 0, 0, hi, lo]
        | [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(v4(hi, lo)),
        [0x2002, hi, lo, ..] => Some(v4(hi, lo)),
        _ => None,
    };
    if let Some(inner) = embedded {
        return forbidden_v4(inner);
    }
    match s[0] {
        x if x & 0xfe00 == 0xfc00 => Some("a unique-local (fc00::/7) address"),
        x if x & 0xffc0 == 0xfe80 => Some("a link-local address"),
        x if x & 0xffc0 == 0xfec0 => Some("a site-local address"),
        x if x & 0xff00 == 0xff00 => Some("a multicast address"),
        _ => None,
    }
}

fn v4(hi: u16, lo: u16) -> Ipv4Addr {
    let [a, b] = hi.to_be_bytes();
    let [c, d] = lo.to_be_bytes();
    Ipv4Addr::new(a, b, c, d)
}

/// Whether `host` is listed in `tools.web.fetch.allowHosts` (case-insensitive; an IPv6
/// literal may be written with or without brackets).
pub fn host_allowed(allow: &[String], host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    allow.iter().any(|a| {
        a.trim_start_matches('[')
            .trim_end_matches(']')
            .eq_ignore_ascii_case(host)
    })
}

/// The HTTP client's resolver: resolves a name, refuses it when any of its addresses is
/// forbidden (unless the name is allowed), and records why for the tool's answer.
pub struct GuardedResolver {
    pub allow: Vec<String>,
    pub refused: Arc<Mutex<Option<String>>>,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        let allowed = host_allowed(&self.allow, &host);
        let refused = self.refused.clone();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allowed {
                if let Some((ip, why)) = addrs
                    .iter()
                    .find_map(|a| forbidden(a.ip()).map(|w| (a.ip(), w)))
                {
                    let msg = format!("{host} resolves to {ip}, {why}");
                    *refused.lock() = Some(msg.clone());
                    return Err(msg.into());
                }
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every class of internal address is refused, in IPv4 and IPv6 forms; public ones are
    /// not. Catches: a missing range (e.g. CGNAT, v4-mapped IPv6) letting a fetch reach
    /// the host's own network or a metadata service.
    #[test]
    fn internal_addresses_are_refused() {
        let refused = [
            "127.0.0.1",
            "127.255.0.1",
            "0.0.0.0",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.100.100.200",
            "224.0.0.1",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.0.1",
            "198.18.0.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd00:ec2::254",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "fec0::1",
        ];
        for ip in refused {
            let ip: IpAddr = ip.parse().unwrap_or_else(|e| panic!("{ip}: {e}"));
            assert!(forbidden(ip).is_some(), "{ip} should be refused");
        }
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "2002:808:808::",
        ] {
            let ip: IpAddr = ip.parse().unwrap_or_else(|e| panic!("{ip}: {e}"));
            assert_eq!(forbidden(ip), None, "{ip} should be allowed");
        }
    }

    #[test]
    fn allowed_hosts_match_case_insensitively() {
        let allow = vec!["LocalHost".to_string(), "::1".to_string()];
        assert!(host_allowed(&allow, "localhost"));
        assert!(host_allowed(&allow, "[::1]"));
        assert!(!host_allowed(&allow, "127.0.0.1"));
    }
}
