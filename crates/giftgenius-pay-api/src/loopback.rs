//! Whether a request comes from this machine and names it: the check the sandbox provider's
//! guard makes on every request, and the app's local-only routes (its `/preview`) make too, so
//! "a request from this machine" has one definition.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use axum::extract::{ConnectInfo, Request};
use axum::http::header;

/// Whether a `Host` header (or HTTP/2 authority) names this machine: `localhost`, a name under
/// `.localhost` (browsers resolve those to loopback themselves, so no one else's DNS can answer
/// for them), a 127.0.0.0/8 address or `[::1]`, each with or without a port. A DNS-rebinding page
/// reaches loopback under its own name, which is none of these. Shared with the app's local-only
/// routes (its `/preview`).
pub fn is_loopback_host(host: &str) -> bool {
    let port_ok = |port: &str| !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit());
    if let Some(rest) = host.strip_prefix('[') {
        let Some((address, after)) = rest.split_once(']') else { return false };
        let port_fine = after.is_empty() || after.strip_prefix(':').is_some_and(port_ok);
        return port_fine && address.parse::<Ipv6Addr>().is_ok_and(|ip| ip.is_loopback());
    }
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port_ok(port) => name,
        Some(_) => return false,
        None => host,
    };
    if let Ok(ip) = name.parse::<Ipv4Addr>() {
        return ip.is_loopback();
    }
    let name = name.to_ascii_lowercase();
    let Some(labels) = name.strip_suffix("localhost") else { return false };
    labels.is_empty()
        || labels.strip_suffix('.').is_some_and(|labels| {
            labels
                .split('.')
                .all(|label| !label.is_empty() && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        })
}

/// Whether `request` came over a socket from this machine: its peer (`ConnectInfo`, the
/// socket's own address) is in 127.0.0.0/8, `::1` or IPv4-mapped loopback. No peer (the request
/// never crossed a socket) is not loopback: fail closed. Shared with the app's local-only routes.
pub fn is_loopback_peer(request: &Request) -> bool {
    request.extensions().get::<ConnectInfo<SocketAddr>>().is_some_and(|peer| peer.0.ip().to_canonical().is_loopback())
}

/// The name a request was sent to: its `Host` header, else (HTTP/2) its URI's authority.
pub fn request_host(request: &Request) -> Option<&str> {
    match request.headers().get(header::HOST) {
        Some(host) => host.to_str().ok(),
        None => request.uri().authority().map(|a| a.as_str()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_and_addresses_pass_with_or_without_a_port() {
        for host in [
            "localhost",
            "LOCALHOST:8100",
            "sandbox.localhost:8000",
            "a.b-c.localhost",
            "127.0.0.1",
            "127.0.0.1:8100",
            "127.1.2.3:80",
            "[::1]",
            "[::1]:8100",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn every_other_name_is_refused() {
        for host in [
            "attacker.example",
            "attacker.example:8100",
            "localhost.attacker.example",
            "evillocalhost",
            "evil-localhost:8100",
            ".localhost",
            "a..localhost",
            "localhost.",
            "localhost:",
            "localhost:http",
            "localhost:123456",
            "10.0.0.1:8100",
            "0.0.0.0:8100",
            "127.1",
            "[::2]:8100",
            "[::1]x",
            "[::1",
            "",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }
}
