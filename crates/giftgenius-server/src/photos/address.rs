//! Which addresses a photo may be fetched from: public unicast only, so a catalog row cannot
//! point the server at itself, its network or a cloud metadata service (SSRF). The resolver
//! here is the only way the photo client turns a host name into addresses; it checks every
//! address it returns, so the connection goes to an address that was checked, and a second
//! DNS answer (rebinding) is never asked for.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// Whether `ip` is an address on the public internet: not loopback, private, link-local,
/// shared (CGNAT), unspecified, multicast, broadcast, documentation, benchmarking or reserved.
/// IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
pub fn is_public(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || a == 0 // "this network"
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT), RFC 6598
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments, RFC 6890
        || (a == 198 && (18..20).contains(&b)) // benchmarking, RFC 2544
        || a >= 240) // reserved
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    // Global unicast is 2000::/3; everything else (loopback, unique local fc00::/7, link-local
    // fe80::/10, multicast, NAT64 64:ff9b::/96, IPv4-compatible) is not for us.
    let global_unicast = (s[0] & 0xe000) == 0x2000;
    global_unicast
        && !(s[0] == 0x2001 && s[1] < 0x0200) // IETF protocol assignments 2001::/23 (Teredo inside)
        && !(s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        && s[0] != 0x2002 // 6to4: carries an IPv4 address we would reach through a relay
}

/// Why a host was refused; for the log only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// Checks a URL's host when it is an address literal (the client does not resolve those, so
/// the resolver never sees them). Names are checked by [`CheckedResolver`] when resolved.
pub fn check_literal(url: &url::Url, allow_private: bool) -> Result<(), Refused> {
    let ip = match url.host() {
        Some(url::Host::Ipv4(v4)) => IpAddr::V4(v4),
        Some(url::Host::Ipv6(v6)) => IpAddr::V6(v6),
        Some(url::Host::Domain(_)) => return Ok(()),
        None => return Err(Refused("no host".into())),
    };
    if allow_private || is_public(ip) { Ok(()) } else { Err(Refused(format!("{ip} is not a public address"))) }
}

/// Resolves with the system resolver and refuses the host if ANY of its addresses is not
/// public (a name that also points inside is not one we fetch from), unless `allow_private`.
#[derive(Debug, Clone, Copy)]
pub struct CheckedResolver {
    pub allow_private: bool,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        Box::pin(resolve_checked(name, self.allow_private))
    }
}

async fn resolve_checked(name: Name, allow_private: bool) -> Result<Addrs, Box<dyn std::error::Error + Send + Sync>> {
    // Port 0: the client sets the URL's port on every address it is given.
    let found: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
    if found.is_empty() {
        return Err(Box::new(Refused(format!("{} has no address", name.as_str()))));
    }
    if let Some(bad) = found.iter().find(|a| !allow_private && !is_public(a.ip())) {
        return Err(Box::new(Refused(format!("{} resolves to {}, not a public address", name.as_str(), bad.ip()))));
    }
    Ok(Box::new(found.into_iter()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.0.8",
            "198.18.0.1",
            "192.0.2.1",
            "240.0.0.1",
            "::1",
            "::",
            "fe80::1",
            "fc00::1",
            "fd12:3456::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "64:ff9b::a00:1",
            "2001:db8::1",
            "2001::1",
            "2002:a00:1::1",
            "::127.0.0.1",
        ] {
            assert!(!is_public(ip.parse().unwrap()), "{ip} counted as public");
        }
    }

    #[test]
    fn internet_addresses_are_public() {
        for ip in
            ["93.184.215.14", "8.8.8.8", "1.1.1.1", "2606:4700::1111", "2a00:1450:4001:80b::200e", "::ffff:8.8.8.8"]
        {
            assert!(is_public(ip.parse().unwrap()), "{ip} counted as not public");
        }
    }

    #[test]
    fn address_literals_are_checked_and_names_left_to_the_resolver() {
        let url = |u: &str| url::Url::parse(u).unwrap();
        assert!(check_literal(&url("http://127.0.0.1:8080/a.jpg"), false).is_err());
        assert!(check_literal(&url("http://[::ffff:169.254.169.254]/a.jpg"), false).is_err());
        assert!(check_literal(&url("http://127.0.0.1:8080/a.jpg"), true).is_ok());
        assert!(check_literal(&url("https://8.8.8.8/a.jpg"), false).is_ok());
        assert!(check_literal(&url("https://cdn.example/a.jpg"), false).is_ok());
    }

    #[tokio::test]
    async fn a_name_that_resolves_inside_is_refused_unless_allowed() {
        let refused = CheckedResolver { allow_private: false }.resolve("localhost".parse().unwrap()).await;
        assert!(refused.is_err());
        let allowed = CheckedResolver { allow_private: true }.resolve("localhost".parse().unwrap()).await;
        assert!(allowed.unwrap().all(|a| a.ip().is_loopback()));
    }
}
