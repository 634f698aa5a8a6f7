//! Who is on the other end of a request: the client address the per-address rate limit and the
//! signed-out suggestion budget count against.
//!
//! It is the TCP peer, unless the peer is one of `--trusted-proxies`: then the one header the
//! operator names with `--client-address-header` (`x-forwarded-for` by default when proxies are
//! trusted, `forwarded` for RFC 7239) names the client. Only that header is read: a proxy that
//! appends to `X-Forwarded-For` passes a client's own `Forwarded` header through untouched, so
//! reading any other header would let the client pick its address. It is read from the right,
//! skipping the trusted proxies, and the first address that is not one of them is the client
//! (everything left of it was written by someone we do not trust, so it may be forged). From any
//! other peer the headers are ignored.
//!
//! Limits and anonymous subjects count per [`client_group`]: an IPv4 address, or an IPv6 /64
//! (one subscriber's network: anyone holding a /64 can pick any of its 2^64 addresses).

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;

/// The client address of a request, in its extensions (put there by [`resolve_client_addr`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientAddr(pub IpAddr);

impl ClientAddr {
    /// The request's client address: the extension, else the TCP peer, else `None` (a request
    /// that never crossed a socket, as in unit tests).
    pub fn of(extensions: &axum::http::Extensions) -> Option<IpAddr> {
        extensions
            .get::<ClientAddr>()
            .map(|c| c.0)
            .or_else(|| extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()))
    }
}

/// One `--trusted-proxies` entry: an address or a CIDR block (`10.0.0.0/8`, `::1`, `fd00::/8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyRange {
    network: IpAddr,
    prefix: u8,
}

impl FromStr for ProxyRange {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network: IpAddr =
            address.parse().map_err(|_| format!("{text:?} is not an IP address or a CIDR block such as 10.0.0.0/8"))?;
        let bits = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => bits,
            Some(p) => match p.parse::<u8>() {
                Ok(p) if p <= bits => p,
                _ => return Err(format!("{text:?}: the prefix length must be 0 to {bits}")),
            },
        };
        Ok(ProxyRange { network, prefix })
    }
}

impl ProxyRange {
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        match (canonical(self.network), address) {
            (IpAddr::V4(net), IpAddr::V4(a)) => {
                masked(u32::from(net).into(), 32, self.prefix) == masked(u32::from(a).into(), 32, self.prefix)
            }
            (IpAddr::V6(net), IpAddr::V6(a)) => {
                masked(u128::from(net), 128, self.prefix) == masked(u128::from(a), 128, self.prefix)
            }
            _ => false,
        }
    }
}

/// The first `prefix` bits of a `bits`-wide address.
fn masked(address: u128, bits: u32, prefix: u8) -> u128 {
    let prefix = u32::from(prefix).min(bits);
    if prefix == 0 { 0 } else { address >> (bits - prefix) }
}

/// An IPv4 address arriving as IPv4-mapped IPv6 (a dual-stack socket) is the IPv4 address.
fn canonical(address: IpAddr) -> IpAddr {
    address.to_canonical()
}

/// What limits and anonymous subjects count against: the address itself for IPv4, its /64 for
/// IPv6 (the rest of the address zeroed), IPv4-mapped IPv6 as IPv4.
pub fn client_group(address: IpAddr) -> IpAddr {
    match canonical(address) {
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !(u128::MAX >> 64)).into()),
        v4 => v4,
    }
}

/// The header a trusted proxy names the client in (`--client-address-header`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ClientAddressHeader {
    /// RFC 7239 `Forwarded: for=…`.
    Forwarded,
    /// `X-Forwarded-For: client, proxy1, …` (what most proxies and load balancers append).
    XForwardedFor,
    /// No header: the TCP peer is the client.
    #[default]
    None,
}

/// The proxies whose forwarding header is believed (`--trusted-proxies`; empty: none), and
/// which header that is.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies {
    ranges: Arc<[ProxyRange]>,
    header: ClientAddressHeader,
}

impl TrustedProxies {
    pub fn new(ranges: Vec<ProxyRange>, header: ClientAddressHeader) -> Self {
        TrustedProxies { ranges: ranges.into(), header }
    }

    pub fn trusts(&self, address: IpAddr) -> bool {
        self.ranges.iter().any(|range| range.contains(address))
    }

    /// The client address of a request from `peer` with `headers`.
    pub fn client_of(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusts(peer) {
            return peer;
        }
        let hops = match self.header {
            ClientAddressHeader::Forwarded => forwarded_for(headers),
            ClientAddressHeader::XForwardedFor => x_forwarded_for(headers),
            ClientAddressHeader::None => None,
        };
        let Some(hops) = hops else { return peer };
        // Right to left: the nearest hop first. An unreadable entry ends the walk, since
        // nothing left of it can be attributed; the last trusted hop is then the client.
        let mut client = peer;
        for hop in hops.iter().rev() {
            match hop {
                Some(address) => {
                    client = canonical(*address);
                    if !self.trusts(client) {
                        return client;
                    }
                }
                None => return client,
            }
        }
        client
    }
}

/// Every `for=` of every `Forwarded` header, in order (`None` for an obfuscated or unknown
/// node); `None` when there is no such header.
fn forwarded_for(headers: &HeaderMap) -> Option<Vec<Option<IpAddr>>> {
    let mut hops = Vec::new();
    let mut seen = false;
    for value in headers.get_all(axum::http::header::FORWARDED) {
        seen = true;
        let Ok(value) = value.to_str() else {
            hops.push(None);
            continue;
        };
        for element in value.split(',') {
            for pair in element.split(';') {
                if let Some((name, node)) = pair.trim().split_once('=')
                    && name.trim().eq_ignore_ascii_case("for")
                {
                    hops.push(node_address(node.trim().trim_matches('"')));
                }
            }
        }
    }
    seen.then_some(hops)
}

/// A `Forwarded` node: `192.0.2.1`, `192.0.2.1:4711`, `[2001:db8::1]`, `[2001:db8::1]:4711`.
fn node_address(node: &str) -> Option<IpAddr> {
    if let Some(rest) = node.strip_prefix('[') {
        return rest.split_once(']').and_then(|(v6, _)| v6.parse().ok());
    }
    node.parse().ok().or_else(|| node.parse::<SocketAddr>().ok().map(|s| s.ip()))
}

/// Every address of every `X-Forwarded-For` header, in order; `None` when there is none.
fn x_forwarded_for(headers: &HeaderMap) -> Option<Vec<Option<IpAddr>>> {
    let mut hops = Vec::new();
    let mut seen = false;
    for value in headers.get_all("x-forwarded-for") {
        seen = true;
        match value.to_str() {
            Ok(value) => hops.extend(value.split(',').map(|a| node_address(a.trim().trim_matches('"')))),
            Err(_) => hops.push(None),
        }
    }
    seen.then_some(hops)
}

/// Middleware: puts the request's [`ClientAddr`] into its extensions.
pub async fn resolve_client_addr(State(trusted): State<TrustedProxies>, mut request: Request, next: Next) -> Response {
    if let Some(peer) = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip()) {
        let client = trusted.client_of(peer, request.headers());
        request.extensions_mut().insert(ClientAddr(client));
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn trusted(list: &[&str]) -> TrustedProxies {
        trusted_with(list, ClientAddressHeader::XForwardedFor)
    }

    fn trusted_with(list: &[&str], header: ClientAddressHeader) -> TrustedProxies {
        TrustedProxies::new(list.iter().map(|s| s.parse().unwrap()).collect(), header)
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn ranges_parse_addresses_and_cidr_blocks_and_refuse_the_rest() {
        let range: ProxyRange = "10.0.0.0/8".parse().unwrap();
        assert!(range.contains(ip("10.200.3.4")));
        assert!(!range.contains(ip("11.0.0.1")));
        assert!("127.0.0.1".parse::<ProxyRange>().unwrap().contains(ip("::ffff:127.0.0.1")));
        assert!("fd00::/8".parse::<ProxyRange>().unwrap().contains(ip("fd12::1")));
        assert!("0.0.0.0/0".parse::<ProxyRange>().unwrap().contains(ip("203.0.113.9")));
        assert!(!"10.0.0.0/8".parse::<ProxyRange>().unwrap().contains(ip("::1")));
        for bad in ["", "proxy.example.com", "10.0.0.0/33", "::1/129", "10.0.0.0/x"] {
            assert!(bad.parse::<ProxyRange>().is_err(), "{bad}");
        }
    }

    #[test]
    fn forwarding_headers_from_an_untrusted_peer_are_ignored() {
        let h = headers(&[("x-forwarded-for", "203.0.113.9"), ("forwarded", "for=198.51.100.7")]);
        assert_eq!(trusted(&[]).client_of(ip("192.0.2.1"), &h), ip("192.0.2.1"));
        assert_eq!(trusted(&["10.0.0.0/8"]).client_of(ip("192.0.2.1"), &h), ip("192.0.2.1"));
    }

    #[test]
    fn a_trusted_proxy_names_the_client_and_forged_entries_left_of_it_do_not_count() {
        let t = trusted(&["127.0.0.1", "10.0.0.0/8"]);
        let h = headers(&[("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(t.client_of(ip("127.0.0.1"), &h), ip("203.0.113.9"));
        // The client wrote "1.2.3.4" itself; our proxies appended the real hops.
        let h = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9, 10.1.1.1")]);
        assert_eq!(t.client_of(ip("127.0.0.1"), &h), ip("203.0.113.9"));
        // Split over two headers, same order.
        let h = headers(&[("x-forwarded-for", "1.2.3.4"), ("x-forwarded-for", "203.0.113.9, 10.1.1.1")]);
        assert_eq!(t.client_of(ip("127.0.0.1"), &h), ip("203.0.113.9"));
        // No header: the proxy itself.
        assert_eq!(t.client_of(ip("127.0.0.1"), &HeaderMap::new()), ip("127.0.0.1"));
        // Garbage nearest to us: nothing beyond it can be attributed.
        let h = headers(&[("x-forwarded-for", "203.0.113.9, not-an-address")]);
        assert_eq!(t.client_of(ip("127.0.0.1"), &h), ip("127.0.0.1"));
    }

    #[test]
    fn the_forwarded_header_is_read_with_ports_and_ipv6_when_named() {
        let t = trusted_with(&["127.0.0.1"], ClientAddressHeader::Forwarded);
        let h = headers(&[
            ("forwarded", r#"for="[2001:db8::7]:4711";proto=https, for=127.0.0.1"#),
            ("x-forwarded-for", "203.0.113.9"),
        ]);
        assert_eq!(t.client_of(ip("127.0.0.1"), &h), ip("2001:db8::7"));
        let h = headers(&[("forwarded", "for=198.51.100.7:80;by=127.0.0.1")]);
        assert_eq!(t.client_of(ip("127.0.0.1"), &h), ip("198.51.100.7"));
        let h = headers(&[("forwarded", "for=_hidden")]);
        assert_eq!(t.client_of(ip("127.0.0.1"), &h), ip("127.0.0.1"));
    }

    #[test]
    fn only_the_named_header_is_read_so_a_client_cannot_add_the_other() {
        // Behind a proxy that appends X-Forwarded-For, a client sends its own Forwarded header
        // naming whoever it likes; on main that header won.
        let h = headers(&[("forwarded", "for=198.51.100.77"), ("x-forwarded-for", "203.0.113.9")]);
        let xff = trusted_with(&["127.0.0.1"], ClientAddressHeader::XForwardedFor);
        assert_eq!(xff.client_of(ip("127.0.0.1"), &h), ip("203.0.113.9"));
        // And the other way round for a proxy that writes Forwarded.
        let h = headers(&[("forwarded", "for=203.0.113.9"), ("x-forwarded-for", "198.51.100.77")]);
        let fwd = trusted_with(&["127.0.0.1"], ClientAddressHeader::Forwarded);
        assert_eq!(fwd.client_of(ip("127.0.0.1"), &h), ip("203.0.113.9"));
        // `none`: the peer, whatever the headers.
        let none = trusted_with(&["127.0.0.1"], ClientAddressHeader::None);
        assert_eq!(none.client_of(ip("127.0.0.1"), &h), ip("127.0.0.1"));
        // Only the named header present in neither: the proxy itself.
        let only_forwarded = headers(&[("forwarded", "for=198.51.100.77")]);
        assert_eq!(xff.client_of(ip("127.0.0.1"), &only_forwarded), ip("127.0.0.1"));
    }

    #[test]
    fn ipv6_clients_are_grouped_by_their_64_and_ipv4_by_address() {
        assert_eq!(client_group(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd")), ip("2001:db8:1:2::"));
        assert_eq!(client_group(ip("2001:db8:1:2::1")), client_group(ip("2001:db8:1:2:ffff::9")));
        assert_ne!(client_group(ip("2001:db8:1:2::1")), client_group(ip("2001:db8:1:3::1")));
        assert_eq!(client_group(ip("203.0.113.9")), ip("203.0.113.9"));
        assert_ne!(client_group(ip("203.0.113.9")), client_group(ip("203.0.113.10")));
        assert_eq!(client_group(ip("::ffff:203.0.113.9")), ip("203.0.113.9"));
    }
}
