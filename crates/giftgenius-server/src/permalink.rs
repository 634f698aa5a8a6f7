//! Every order's status page link, `{public}/o/{order id}.{tag}` (issue 25, the ACP order's
//! `permalink_url`): anyone with the link may see the order's status, and no one can make a
//! link for an order they were not given. The tag is 128 bits of an HMAC of the order id under
//! a key every replica shares (generated into the database on first use), so there is nothing
//! to store per order and nothing to look up before the tag is checked.
//!
//! The same mechanism, under another purpose, makes the hosted 3-D Secure page's link,
//! `{public}/pay/authenticate/{order id}.{tag}` ([`Permalinks::authentication_url`]): a
//! capability to complete that order's payment with the person's bank, handed to the widget
//! only (`_meta`), useful only while the order awaits authentication. A status page token is
//! never an authentication token, nor the reverse.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// What goes before the order id in the MAC, so the key can never sign anything else by accident.
const PURPOSE: &[u8] = b"giftgenius order permalink\n";
/// The authentication links' purpose: another MAC than the status page's for the same order.
const AUTHENTICATION_PURPOSE: &[u8] = b"giftgenius payment authentication\n";
/// Bytes of the MAC kept in the link (128 bits, hex: 32 characters).
const TAG_BYTES: usize = 16;
/// The path prefix of the status pages.
pub const PATH_PREFIX: &str = "/o/";
/// The path prefix of the hosted authentication (3-D Secure) pages.
pub const AUTHENTICATION_PREFIX: &str = "/pay/authenticate/";

/// Makes and checks order links.
pub struct Permalinks {
    key: Vec<u8>,
    public_url: String,
}

impl std::fmt::Debug for Permalinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permalinks").field("public_url", &self.public_url).finish_non_exhaustive()
    }
}

impl Permalinks {
    pub fn new(key: &[u8], public_url: &str) -> Self {
        Self { key: key.to_vec(), public_url: public_url.trim_end_matches('/').to_string() }
    }

    fn mac(&self, purpose: &[u8], order_id: &str) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(purpose);
        mac.update(order_id.as_bytes());
        mac
    }

    fn token_for(&self, purpose: &[u8], order_id: &str) -> String {
        let tag = self.mac(purpose, order_id).finalize().into_bytes();
        format!("{order_id}.{}", hex::encode(&tag[..TAG_BYTES]))
    }

    fn order_for<'a>(&self, purpose: &[u8], token: &'a str) -> Option<&'a str> {
        let (order_id, tag) = token.rsplit_once('.')?;
        if order_id.is_empty() || order_id.len() > 64 || tag.len() != TAG_BYTES * 2 {
            return None;
        }
        let tag = hex::decode(tag).ok()?;
        self.mac(purpose, order_id).verify_truncated_left(&tag).ok().map(|()| order_id)
    }

    /// The link's last path segment for `order_id`.
    pub fn token(&self, order_id: &str) -> String {
        self.token_for(PURPOSE, order_id)
    }

    /// The status page of `order_id`.
    pub fn url(&self, order_id: &str) -> String {
        format!("{}{PATH_PREFIX}{}", self.public_url, self.token(order_id))
    }

    /// The order a link's token names, if its tag is ours (compared in constant time).
    pub fn order_id<'a>(&self, token: &'a str) -> Option<&'a str> {
        self.order_for(PURPOSE, token)
    }

    /// The hosted authentication page's token for `order_id`.
    pub fn authentication_token(&self, order_id: &str) -> String {
        self.token_for(AUTHENTICATION_PURPOSE, order_id)
    }

    /// The hosted page where the person confirms `order_id`'s payment with their bank:
    /// `{public}/pay/authenticate/{order id}.{tag}`.
    pub fn authentication_url(&self, order_id: &str) -> String {
        format!("{}{AUTHENTICATION_PREFIX}{}", self.public_url, self.authentication_token(order_id))
    }

    /// The order an authentication token names, if its tag is ours (constant time).
    pub fn authentication_order<'a>(&self, token: &'a str) -> Option<&'a str> {
        self.order_for(AUTHENTICATION_PURPOSE, token)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_names_its_order_and_nothing_else_passes() {
        let links = Permalinks::new(b"a key of our own", "https://gifts.example/");
        let token = links.token("ord_1");
        assert_eq!(links.url("ord_1"), format!("https://gifts.example/o/{token}"));
        assert_eq!(links.order_id(&token), Some("ord_1"));
        // Another order's tag, a changed tag, another key, garbage: none passes.
        let other = links.token("ord_2");
        let (_, other_tag) = other.rsplit_once('.').unwrap();
        assert_eq!(links.order_id(&format!("ord_1.{other_tag}")), None);
        let mut flipped = token.clone().into_bytes();
        let last = flipped.len() - 1;
        flipped[last] = if flipped[last] == b'0' { b'1' } else { b'0' };
        assert_eq!(links.order_id(&String::from_utf8(flipped).unwrap()), None);
        assert_eq!(Permalinks::new(b"another key", "https://x").order_id(&token), None);
        // The authentication capability is another MAC: neither token passes as the other.
        let pay = links.authentication_token("ord_1");
        assert_eq!(links.authentication_url("ord_1"), format!("https://gifts.example/pay/authenticate/{pay}"));
        assert_eq!(links.authentication_order(&pay), Some("ord_1"));
        assert_ne!(pay, token);
        assert_eq!(links.authentication_order(&token), None);
        assert_eq!(links.order_id(&pay), None);
        for garbage in ["", ".", "ord_1", "ord_1.", ".abcd", "ord_1.zz", &format!("{token}0")] {
            assert_eq!(links.order_id(garbage), None, "{garbage:?}");
        }
    }
}
