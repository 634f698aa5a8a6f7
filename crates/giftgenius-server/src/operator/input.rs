//! The operator's requests (JSON bodies of `/operator/orders/{id}/…`, or the CLI's flags) and
//! their checks: every problem is a field error naming the field, none stops at the first.
//!
//! - `processing`, `complete`: no fields (`{}` or an empty body).
//! - `ship`: `carrier` (1-100 characters), `tracking_number` (1-100), `tracking_url` (an https
//!   URL without credentials, at most 2048 characters).
//! - `refund`: `amount` (minor units, at least 1), `reason` (1-500 characters, shown to the buyer
//!   and sent in order events), `idempotency_key` (1-255 printable ASCII: the same key on the
//!   same order is the same refund, however often it is sent).

use giftgenius_types::FieldError;
use serde_json::{Map, Value};

use giftgenius_commerce::order::Shipment;

pub const MAX_CARRIER: usize = 100;
pub const MAX_TRACKING_NUMBER: usize = 100;
pub const MAX_TRACKING_URL: usize = 2048;
pub const MAX_REASON: usize = 500;

/// A refund the operator asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundAsk {
    /// Minor units of the order's currency.
    pub amount_minor: i64,
    pub reason: String,
    pub idempotency_key: String,
}

/// An order id as the routes take it (as get_order does), so nothing else reaches the store.
pub fn is_order_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// A body's fields: a JSON object (or nothing at all), every key one of `known`.
fn fields<'a>(body: &'a Value, known: &[&str], errors: &mut Vec<FieldError>) -> Option<&'a Map<String, Value>> {
    let Some(map) = body.as_object() else {
        errors.push(FieldError::new("(body)", "must be a JSON object"));
        return None;
    };
    for key in map.keys().filter(|key| !known.contains(&key.as_str())) {
        let expected = if known.is_empty() { "none".to_string() } else { known.join(", ") };
        errors.push(FieldError::new(short(key), format!("is not a field of this request (fields: {expected})")));
    }
    Some(map)
}

/// A field name as an error repeats it: at most 80 characters.
fn short(key: &str) -> String {
    if key.chars().count() <= 80 { key.to_string() } else { format!("{}…", key.chars().take(80).collect::<String>()) }
}

/// A required one-line text of 1 to `max` characters.
fn text(map: &Map<String, Value>, field: &str, max: usize, errors: &mut Vec<FieldError>) -> Option<String> {
    match map.get(field) {
        None | Some(Value::Null) => errors.push(FieldError::new(field, "is required")),
        Some(Value::String(text)) => {
            let text = text.trim();
            if text.is_empty() {
                errors.push(FieldError::new(field, "must not be empty"));
            } else if text.chars().count() > max {
                errors.push(FieldError::new(field, format!("must be at most {max} characters")));
            } else if text.chars().any(char::is_control) {
                errors.push(FieldError::new(field, "must be one line of plain text (no control characters)"));
            } else {
                return Some(text.to_string());
            }
        }
        Some(_) => errors.push(FieldError::new(field, "must be a string")),
    }
    None
}

/// Checks an https tracking URL; `None` when it is one.
pub fn tracking_url_problem(text: &str) -> Option<&'static str> {
    if text.len() > MAX_TRACKING_URL {
        return Some("must be at most 2048 characters");
    }
    let Ok(url) = url::Url::parse(text) else { return Some("must be an absolute https URL") };
    if url.scheme() != "https" || url.host_str().is_none_or(str::is_empty) {
        return Some("must be an absolute https URL");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Some("must not carry a user name or password");
    }
    None
}

/// `{}` (or an empty body): `processing` and `complete` take no fields.
pub fn no_fields(body: &Value) -> Result<(), Vec<FieldError>> {
    let mut errors = Vec::new();
    if !body.is_null() {
        fields(body, &[], &mut errors);
    }
    if errors.is_empty() { Ok(()) } else { Err(errors) }
}

/// `ship`'s body.
pub fn shipment(body: &Value) -> Result<Shipment, Vec<FieldError>> {
    let mut errors = Vec::new();
    let empty = Map::new();
    let map = fields(body, &["carrier", "tracking_number", "tracking_url"], &mut errors).unwrap_or(&empty);
    let carrier = text(map, "carrier", MAX_CARRIER, &mut errors);
    let tracking_number = text(map, "tracking_number", MAX_TRACKING_NUMBER, &mut errors);
    let tracking_url =
        text(map, "tracking_url", MAX_TRACKING_URL, &mut errors).and_then(|url| match tracking_url_problem(&url) {
            None => Some(url),
            Some(problem) => {
                errors.push(FieldError::new("tracking_url", problem));
                None
            }
        });
    match (carrier, tracking_number, tracking_url) {
        (Some(carrier), Some(tracking_number), Some(tracking_url)) if errors.is_empty() => {
            Ok(Shipment { carrier, tracking_number, tracking_url })
        }
        _ => Err(errors),
    }
}

/// `refund`'s body.
pub fn refund(body: &Value) -> Result<RefundAsk, Vec<FieldError>> {
    let mut errors = Vec::new();
    let empty = Map::new();
    let map = fields(body, &["amount", "reason", "idempotency_key"], &mut errors).unwrap_or(&empty);
    let amount = match map.get("amount") {
        None | Some(Value::Null) => {
            errors.push(FieldError::new("amount", "is required (minor units, e.g. 250 for 2.50)"));
            None
        }
        Some(value) => match value.as_i64() {
            Some(amount) if amount >= 1 => Some(amount),
            _ => {
                errors.push(FieldError::new("amount", "must be a whole number of minor units, at least 1"));
                None
            }
        },
    };
    let reason = text(map, "reason", MAX_REASON, &mut errors);
    let key = match map.get("idempotency_key") {
        Some(Value::String(key)) => {
            let mut problems = Vec::new();
            giftgenius_types::orders::check_idempotency_key("idempotency_key", key, &mut problems);
            errors.extend_from_slice(&problems);
            problems.is_empty().then(|| key.clone())
        }
        None | Some(Value::Null) => {
            errors.push(FieldError::new("idempotency_key", "is required: the same key again is the same refund"));
            None
        }
        Some(_) => {
            errors.push(FieldError::new("idempotency_key", "must be a string"));
            None
        }
    };
    match (amount, reason, key) {
        (Some(amount_minor), Some(reason), Some(idempotency_key)) if errors.is_empty() => {
            Ok(RefundAsk { amount_minor, reason, idempotency_key })
        }
        _ => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields_of(errors: Vec<FieldError>) -> Vec<String> {
        errors.into_iter().map(|e| e.field).collect()
    }

    #[test]
    fn a_shipment_needs_all_three_fields_and_an_https_tracking_url() {
        let good =
            json!({"carrier": " CTT ", "tracking_number": "RR1PT", "tracking_url": "https://ctt.example/t?n=RR1PT"});
        let shipment = shipment(&good).unwrap();
        assert_eq!((shipment.carrier.as_str(), shipment.tracking_number.as_str()), ("CTT", "RR1PT"));
        assert_eq!(fields_of(shipment_err(json!({}))), ["carrier", "tracking_number", "tracking_url"]);
        for url in [
            "http://ctt.example/t",
            "ftp://ctt.example/t",
            "javascript:alert(1)",
            "/t/RR1PT",
            "https://user:pw@ctt.example/t",
        ] {
            let body = json!({"carrier": "CTT", "tracking_number": "RR1PT", "tracking_url": url});
            assert_eq!(fields_of(shipment_err(body)), ["tracking_url"], "{url}");
        }
        let long =
            json!({"carrier": "C".repeat(101), "tracking_number": "a\nb", "tracking_url": "https://x.example", "x": 1});
        assert_eq!(fields_of(shipment_err(long)), ["x", "carrier", "tracking_number"]);
        assert_eq!(fields_of(shipment_err(json!([1]))), ["(body)", "carrier", "tracking_number", "tracking_url"]);
    }

    fn shipment_err(body: Value) -> Vec<FieldError> {
        shipment(&body).unwrap_err()
    }

    #[test]
    fn a_refund_needs_a_positive_whole_amount_a_reason_and_a_key() {
        let ask = refund(&json!({"amount": 250, "reason": "Scratched lid", "idempotency_key": "rf-1"})).unwrap();
        assert_eq!(
            ask,
            RefundAsk { amount_minor: 250, reason: "Scratched lid".into(), idempotency_key: "rf-1".into() }
        );
        for amount in [json!(0), json!(-5), json!(2.5), json!("250"), json!(null)] {
            let errors = refund(&json!({"amount": amount, "reason": "r", "idempotency_key": "k"})).unwrap_err();
            assert_eq!(fields_of(errors), ["amount"], "{amount}");
        }
        assert_eq!(fields_of(refund(&json!({})).unwrap_err()), ["amount", "reason", "idempotency_key"]);
        let bad_key = refund(&json!({"amount": 1, "reason": "r", "idempotency_key": "é"})).unwrap_err();
        assert_eq!(fields_of(bad_key), ["idempotency_key"]);
    }

    #[test]
    fn processing_and_complete_take_nothing() {
        assert!(no_fields(&Value::Null).is_ok());
        assert!(no_fields(&json!({})).is_ok());
        assert_eq!(fields_of(no_fields(&json!({"carrier": "x"})).unwrap_err()), ["carrier"]);
        assert!(is_order_id("ord_abc-1") && !is_order_id("../x") && !is_order_id(""));
    }
}
