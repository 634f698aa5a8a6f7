//! The hosted card page's link, `{public}/pay/card/{customer}.{expires}.{tag}`: a capability a
//! plain browser carries instead of a bearer token. It is minted only for the verified caller's
//! own Stripe Customer (in `prepare_order`'s widget-only `_meta`, or as the Stripe checkout
//! link), names nothing personal (Stripe's Customer id), and lapses after [`LIFETIME_MS`]. The
//! tag is 128 bits of an HMAC over the Customer and the expiry under a key every replica shares
//! (generated into the database on first use), so a changed Customer, a later expiry or another
//! key fails, and there is nothing to store per link.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// What goes before the link's fields in the MAC, so the key signs nothing else by accident.
const PURPOSE: &[u8] = b"giftgenius card page\n";
/// Bytes of the MAC kept in the link (128 bits, hex: 32 characters).
const TAG_BYTES: usize = 16;
/// How long a link opens the page: long enough to find one's card, short enough that an old
/// chat's link is dead.
pub const LIFETIME_MS: i64 = 30 * 60 * 1000;
/// The path prefix of the card page.
pub const PATH_PREFIX: &str = "/pay/card/";

/// Makes and checks card page links.
pub struct CardLinks {
    key: Vec<u8>,
    public_url: String,
}

impl std::fmt::Debug for CardLinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CardLinks").field("public_url", &self.public_url).finish_non_exhaustive()
    }
}

impl CardLinks {
    pub fn new(key: &[u8], public_url: &str) -> Self {
        Self { key: key.to_vec(), public_url: public_url.trim_end_matches('/').to_string() }
    }

    fn mac(&self, customer: &str, expires_ms: i64) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(PURPOSE);
        mac.update(customer.as_bytes());
        mac.update(b"\n");
        mac.update(expires_ms.to_string().as_bytes());
        mac
    }

    /// The link's last path segment for `customer`, valid until `now_ms` + [`LIFETIME_MS`].
    pub fn token(&self, customer: &str, now_ms: i64) -> String {
        let expires = now_ms + LIFETIME_MS;
        let tag = self.mac(customer, expires).finalize().into_bytes();
        format!("{customer}.{expires}.{}", hex::encode(&tag[..TAG_BYTES]))
    }

    /// The card page for `customer`.
    pub fn url(&self, customer: &str, now_ms: i64) -> String {
        format!("{}{PATH_PREFIX}{}", self.public_url, self.token(customer, now_ms))
    }

    /// The Customer a token names, if its tag is ours (constant time) and it has not expired;
    /// `None` says nothing about why.
    pub fn customer<'a>(&self, token: &'a str, now_ms: i64) -> Option<&'a str> {
        let (rest, tag) = token.rsplit_once('.')?;
        let (customer, expires) = rest.rsplit_once('.')?;
        let plausible = customer.starts_with("cus_")
            && customer.len() <= 64
            && customer.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            && tag.len() == TAG_BYTES * 2;
        if !plausible {
            return None;
        }
        let expires_ms: i64 = expires.parse().ok()?;
        let tag = hex::decode(tag).ok()?;
        self.mac(customer, expires_ms).verify_truncated_left(&tag).ok()?;
        (now_ms < expires_ms).then_some(customer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_opens_its_customers_page_until_it_expires_and_nothing_else_passes() {
        let links = CardLinks::new(b"a key of our own", "https://gifts.example/");
        let token = links.token("cus_1", 1_000);
        assert_eq!(links.url("cus_1", 1_000), format!("https://gifts.example/pay/card/{token}"));
        assert_eq!(links.customer(&token, 1_000), Some("cus_1"));
        assert_eq!(links.customer(&token, 1_000 + LIFETIME_MS - 1), Some("cus_1"));
        assert_eq!(links.customer(&token, 1_000 + LIFETIME_MS), None, "expired");
        // Another Customer or a later expiry under the same tag, a changed tag, another key, garbage.
        let (_, tag) = token.rsplit_once('.').unwrap();
        assert_eq!(links.customer(&format!("cus_2.{}.{tag}", 1_000 + LIFETIME_MS), 1_000), None);
        assert_eq!(links.customer(&format!("cus_1.{}.{tag}", 9_000_000_000i64), 1_000), None);
        let mut flipped = token.clone().into_bytes();
        let last = flipped.len() - 1;
        flipped[last] = if flipped[last] == b'0' { b'1' } else { b'0' };
        assert_eq!(links.customer(&String::from_utf8(flipped).unwrap(), 1_000), None);
        assert_eq!(CardLinks::new(b"another key", "https://x").customer(&token, 1_000), None);
        for garbage in ["", ".", "..", "cus_1", "cus_1..", "cus_1.x.zz", "x.1.00", &format!("{token}0")] {
            assert_eq!(links.customer(garbage, 1_000), None, "{garbage:?}");
        }
    }
}
