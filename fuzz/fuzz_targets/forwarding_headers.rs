//! The request headers that choose whose limits a request counts against and which language an
//! ACP session speaks: `Forwarded` / `X-Forwarded-For` behind `--trusted-proxies`
//! (`http::client_addr`, the proxy list's parser too) and `Accept-Language` (`acp::words`).
//! Input: one byte choosing the forwarding header, then the header value, 0xFF, a
//! `--trusted-proxies` entry, 0xFF, an `Accept-Language` value.
//!
//! Properties: from a peer that is not a trusted proxy, no header changes the client address;
//! a parsed proxy range contains its own address; nothing panics.
#![no_main]

use std::net::{IpAddr, Ipv4Addr};

use giftgenius_fuzz::{parts, text};
use giftgenius_server::acp::words::session_lang;
use giftgenius_server::http::client_addr::{ClientAddressHeader, ProxyRange, TrustedProxies};
use http::{HeaderMap, HeaderValue};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let [value, range, accept_language] = parts::<3>(rest);
    let (name, header) = match which % 2 {
        0 => ("forwarded", ClientAddressHeader::Forwarded),
        _ => ("x-forwarded-for", ClientAddressHeader::XForwardedFor),
    };
    if let Ok(value) = HeaderValue::from_bytes(value) {
        let mut headers = HeaderMap::new();
        headers.append(name, value.clone());
        headers.append(name, value);
        let ranges = vec!["10.0.0.0/8".parse().expect("a range"), "::1".parse().expect("an address")];
        let proxies = TrustedProxies::new(ranges, header);
        let stranger = IpAddr::V4(Ipv4Addr::new(203, 0, 113, 9));
        assert_eq!(proxies.client_of(stranger, &headers), stranger, "a stranger chose its address");
        proxies.client_of(IpAddr::V4(Ipv4Addr::new(10, 1, 2, 3)), &headers);
    }
    if let Some(entry) = text(range)
        && let Ok(range) = entry.parse::<ProxyRange>()
    {
        let address = entry.trim().split('/').next().and_then(|a| a.parse::<IpAddr>().ok()).expect("it parsed");
        assert!(range.contains(address), "{entry:?} does not contain its own address");
    }
    if let Some(accept_language) = text(accept_language) {
        session_lang(None, Some(accept_language));
        session_lang(Some(accept_language), None);
    }
});
