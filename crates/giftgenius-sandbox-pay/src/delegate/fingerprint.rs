//! "The same request" for delegate_payment's idempotency (the delegate-payment RFC §5.2): the
//! body's semantic JSON, so key order and `1` vs `1.0` do not matter, while `null` ≠ absent and
//! array order does: the contract's canonical form (`giftgenius_types::canonical`), the one
//! behind the app's `acp1` too (docs/acp.md §7).
//!
//! The body holds a card number, and a card number has so few unknown digits that a plain hash
//! of a body could be reversed by trying them all; so the fingerprint is an HMAC keyed by the
//! delegate key, which the database never holds. The key's identity (the idempotency scope, "the
//! authenticated identity") is derived from it the same way.

use giftgenius_types::canonical::{canonical_json, semantic_number};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

use crate::token::DelegateKey;

/// `hdp1:` + HMAC-SHA-256 (hex) of the canonical form of `body`, keyed by `key`.
pub fn fingerprint(key: &DelegateKey, body: &Value) -> String {
    let canonical = canonical_json(body, semantic_number);
    format!("hdp1:{}", hmac_hex(key, canonical.as_bytes()))
}

/// Who is asking, for the idempotency scope: the same for every request showing `key`, and
/// different for another key, without revealing the key.
pub fn identity(key: &DelegateKey) -> String {
    hmac_hex(key, b"giftgenius-sandbox-pay delegate identity")
}

fn hmac_hex(key: &DelegateKey, data: &[u8]) -> String {
    // HMAC takes a key of any length, so this cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(key.expose().as_bytes()).expect("HMAC takes any key length");
    mac.update(data);
    hex::encode(mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn key_order_and_integral_floats_do_not_matter() {
        let key = DelegateKey::generate();
        assert_eq!(
            fingerprint(&key, &parse(r#"{"a": 1, "b": {"c": 2.0, "d": [1, 2]}}"#)),
            fingerprint(&key, &parse(r#"{"b": {"d": [1.0, 2], "c": 2}, "a": 1.00}"#))
        );
    }

    #[test]
    fn null_absence_array_order_fractions_and_the_key_do() {
        let key = DelegateKey::generate();
        assert_ne!(fingerprint(&key, &json!({"a": null})), fingerprint(&key, &json!({})));
        assert_ne!(fingerprint(&key, &json!([1, 2])), fingerprint(&key, &json!([2, 1])));
        assert_ne!(fingerprint(&key, &parse("1.5")), fingerprint(&key, &parse("1")));
        assert_ne!(fingerprint(&key, &json!("1")), fingerprint(&key, &json!(1)));
        let other = DelegateKey::generate();
        assert_ne!(fingerprint(&key, &json!({})), fingerprint(&other, &json!({})));
        assert_ne!(identity(&key), identity(&other));
        assert_eq!(identity(&key), identity(&key.clone()));
    }
}
