//! The canonical JSON form behind every idempotency fingerprint: the app's tools (numbers as
//! written, so keys already stored keep matching), ACP's `acp1` and the sandbox provider's
//! delegate_payment (numbers as the ACP idempotency RFC compares them: `1` ≡ `1.0`). Keys
//! sorted, arrays in order, `null` kept (≠ absent), strings untouched. One walk, so the forms
//! can only differ in how a number is written.

use serde_json::{Number, Value};

/// Compact JSON with every object's keys sorted, arrays in order, strings and literals as JSON
/// writes them, and numbers as `number` writes them (`Number::to_string` for numbers as
/// written, [`semantic_number`] for the RFC's `1` ≡ `1.0`).
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

/// A number as the idempotency RFC compares it: an integer as its digits; a float with no
/// fraction (in the exact integer range of f64) as the same digits; any other float in its
/// shortest round-trip form.
pub fn semantic_number(n: &Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    match n.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 => format!("{}", f as i64),
        _ => n.to_string(),
    }
}
