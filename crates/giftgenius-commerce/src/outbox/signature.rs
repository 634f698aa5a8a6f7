//! `Merchant-Signature: t=<unix seconds>,v1=<64 hex>` (docs/acp.md §10.2): HMAC-SHA256 under
//! the receiver's secret over `t`, a dot, and the raw body bytes. `t` is fresh on every attempt
//! (receivers refuse a stale one, 300 s is the spec's advice) while the body stays the bytes
//! frozen when the event was written.
//!
//! A receiver checks it by recomputing the HMAC over the bytes it received (before parsing
//! them), comparing in constant time, and refusing a `t` too far from its own clock (docs/configuration.md,
//! "Order events").

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The header's value for `body` posted at `t` (Unix seconds), signed with `secret`.
pub fn merchant_signature(secret: &[u8], t: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_the_timestamp_a_dot_and_the_body() {
        // Computed apart from this code: python3 -c "import hmac, hashlib; print(hmac.new(
        // b'whsec_test', b'1780000000.{\"type\":\"order_create\"}', hashlib.sha256).hexdigest())"
        assert_eq!(
            merchant_signature(b"whsec_test", 1_780_000_000, br#"{"type":"order_create"}"#),
            "t=1780000000,v1=aa4c66c321049c01c4c10066a0f0964453b204609d7171b56ed066808b513610"
        );
    }

    #[test]
    fn another_time_body_or_secret_signs_differently() {
        let base = merchant_signature(b"s", 1, b"{}");
        assert_ne!(base, merchant_signature(b"s", 2, b"{}"));
        assert_ne!(base, merchant_signature(b"s", 1, b"{ }"));
        assert_ne!(base, merchant_signature(b"t", 1, b"{}"));
    }
}
