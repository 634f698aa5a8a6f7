//! The `acp1` fingerprint of a request body (docs/acp.md §7): what "semantically equal" means
//! for the ACP idempotency RFC. Keys sorted, `1` ≡ `1.0`, `null` ≠ absent, arrays in order,
//! strings untouched. The app's own tools keep their fingerprint (numbers as written), so the
//! keys they already stored still match.

use giftgenius_types::canonical::{canonical_json, semantic_number};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// `acp1:` + SHA-256 (hex) of the canonical form of `body`.
pub fn acp1(body: &Value) -> String {
    let canonical = canonical_json(body, semantic_number);
    format!("acp1:{}", hex::encode(Sha256::digest(canonical.as_bytes())))
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
        assert_eq!(
            acp1(&parse(r#"{"a": 1, "b": {"c": 2.0, "d": [1, 2]}}"#)),
            acp1(&parse(r#"{"b": {"d": [1.0, 2], "c": 2}, "a": 1.00}"#))
        );
        assert_eq!(acp1(&parse("-0.0")), acp1(&parse("0")));
        assert_eq!(acp1(&parse("1e2")), acp1(&parse("100")));
    }

    #[test]
    fn null_absence_array_order_and_fractions_do() {
        assert_ne!(acp1(&json!({"a": null})), acp1(&json!({})));
        assert_ne!(acp1(&json!([1, 2])), acp1(&json!([2, 1])));
        assert_ne!(acp1(&parse("1.5")), acp1(&parse("1")));
        assert_ne!(acp1(&json!("1")), acp1(&json!(1)));
    }
}
