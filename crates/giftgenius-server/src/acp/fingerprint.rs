//! The `acp1` fingerprint of a request body (docs/acp.md §7): what "semantically equal" means
//! for the ACP idempotency RFC. Keys sorted, `1` ≡ `1.0`, `null` ≠ absent, arrays in order,
//! strings untouched. The app's own tools keep their fingerprint (numbers as written), so the
//! keys they already stored still match.

use serde_json::{Number, Value};
use sha2::{Digest, Sha256};

/// `acp1:` + SHA-256 (hex) of the canonical form of `body`.
pub fn acp1(body: &Value) -> String {
    let canonical = canonical_json(body, canonical_number);
    format!("acp1:{}", hex::encode(Sha256::digest(canonical.as_bytes())))
}

/// Compact JSON with every object's keys sorted, arrays in order, strings and literals as JSON
/// writes them, and numbers as `number` writes them: the one canonical form behind both
/// fingerprints (`acp1`, and the app's tools' with numbers as written,
/// `checkout::idempotency::fingerprint`).
pub fn canonical_json(value: &Value, number: fn(&Number) -> String) -> String {
    let mut out = String::new();
    write_canonical(value, number, &mut out);
    out
}

fn write_canonical(value: &Value, number: fn(&Number) -> String, out: &mut String) {
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
                write_canonical(&map[key], number, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, number, out);
            }
            out.push(']');
        }
        Value::Number(n) => out.push_str(&number(n)),
        other => out.push_str(&other.to_string()),
    }
}

/// An integer as its digits; a float with no fraction (in the exact integer range of f64) as
/// the same digits; any other float in its shortest round-trip form.
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
