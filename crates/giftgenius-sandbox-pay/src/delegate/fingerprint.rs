//! "The same request" for delegate_payment's idempotency (the delegate-payment RFC §5.2): the
//! body's semantic JSON, so key order and `1` vs `1.0` do not matter, while `null` ≠ absent and
//! array order does. The same canonical form as the app's `acp1` (docs/acp.md §7), written again
//! here because this crate does not depend on the app.
//!
//! The body holds a card number, and a card number has so few unknown digits that a plain hash
//! of a body could be reversed by trying them all; so the fingerprint is an HMAC keyed by the
//! delegate key, which the database never holds. The key's identity (the idempotency scope, "the
//! authenticated identity") is derived from it the same way.

use hmac::{Hmac, Mac};
use serde_json::{Number, Value};
use sha2::Sha256;

use crate::token::DelegateKey;

/// `hdp1:` + HMAC-SHA-256 (hex) of the canonical form of `body`, keyed by `key`.
pub fn fingerprint(key: &DelegateKey, body: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(body, &mut canonical);
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

/// Compact JSON with object keys sorted, arrays in order, numbers normalized.
fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Number(n) => out.push_str(&canonical_number(n)),
        other => out.push_str(&other.to_string()),
    }
}

/// An integer as its digits; a float with no fraction (within f64's exact integers) as the
/// same digits; any other float in its shortest round-trip form.
fn canonical_number(n: &Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 => format!("{}", f as i64),
        _ => n.to_string(),
    }
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
