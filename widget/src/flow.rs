//! Small pure rules of the purchase and search flows, kept apart so they are unit-tested.
//!
//! - Suggestions merge their `set_arguments` over the previous call's arguments.
//! - The idempotency key for a draft is minted once and kept in the host's widget state under
//!   `{"checkout": {"draft_id", "idempotency_key"}}`, so a reload, a second click or a retry
//!   reuses it and the order cannot be placed twice.
//! - The confirmation token only ever lives in memory: widget state is visible to the model.

use serde_json::{Map, Value};

use giftgenius_types::wire::{
    CANCEL_KEY_PREFIX, IDEMPOTENCY_KEY_DERIVATION, IDEMPOTENCY_KEY_PREFIX, META_CANCEL_TOKENS, META_CONFIRMATION_TOKEN,
    META_DELETE_DATA_TOKEN,
};

/// The widget-state key holding the pending checkout.
pub const CHECKOUT_STATE_KEY: &str = "checkout";

/// `base` with every key of `set` replaced; a `null` in `set` removes the key (back to default).
pub fn merge_arguments(base: &Map<String, Value>, set: &Map<String, Value>) -> Map<String, Value> {
    let mut merged = base.clone();
    for (key, value) in set {
        if value.is_null() {
            merged.remove(key);
        } else {
            merged.insert(key.clone(), value.clone());
        }
    }
    merged
}

/// `"ik_"` followed by 32 lower-case hex digits of the given random bytes.
pub fn idempotency_key_from_bytes(bytes: &[u8; 16]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut key = String::with_capacity(35);
    key.push_str(IDEMPOTENCY_KEY_PREFIX);
    for b in bytes {
        key.push(HEX[usize::from(b >> 4)] as char);
        key.push(HEX[usize::from(b & 0x0f)] as char);
    }
    key
}

/// The key for a draft: `"ik_"` + the first 16 bytes of
/// SHA-256("giftgenius/idempotency-key\n" + draft id), as hex.
///
/// Deterministic on purpose: a host that never gives widget state back and a sandbox that
/// refuses storage (an MCP Apps view after a reload) still derive the *same* key for the same
/// draft, so "minted once per draft" holds on every host. From the draft id, never from the
/// confirmation token: tokens expire, and the fresh one a reload gets must still send the same
/// key. The no-wasm runtime gets it from the markup (`decide::confirm` writes it as the default
/// of the key placeholder), so both paths agree. (Knowing the key buys nothing: without a token nothing is committed.)
pub fn idempotency_key_for_draft(draft_id: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("{IDEMPOTENCY_KEY_DERIVATION}{draft_id}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    idempotency_key_from_bytes(&bytes)
}

/// The idempotency key for cancelling an order, from the order's id: `"ck_"` + the first 16
/// bytes of SHA-256(derivation + order id), as hex.
///
/// The key is minted once per order in effect: a retry, a second click, a reload with a fresh
/// cancel token (tokens expire) or the no-wasm runtime (which reads it from the markup) all send
/// the same key, and the server replays the first cancellation instead of refunding twice.
pub fn cancel_key_for_order(order_id: &str) -> String {
    let ik = idempotency_key_for_draft(order_id);
    format!("{CANCEL_KEY_PREFIX}{}", &ik[IDEMPOTENCY_KEY_PREFIX.len()..])
}

/// The cancel tokens of a list_orders / get_order result's `_meta`: (order id, token) pairs.
pub fn cancel_tokens(meta: &Value) -> Vec<(String, String)> {
    let Some(tokens) = meta.get(META_CANCEL_TOKENS).and_then(Value::as_object) else { return Vec::new() };
    tokens.iter().filter_map(|(id, t)| Some((id.clone(), t.as_str().filter(|t| !t.is_empty())?.to_string()))).collect()
}

/// The Delete my data token of a list_orders result's `_meta`, if present and non-empty.
pub fn delete_data_token(meta: &Value) -> Option<String> {
    let token = meta.get(META_DELETE_DATA_TOKEN)?.as_str()?;
    (!token.is_empty()).then(|| token.to_string())
}

/// The key stored for this draft, if the widget state holds one.
pub fn stored_idempotency_key(widget_state: &Value, draft_id: &str) -> Option<String> {
    let checkout = widget_state.get(CHECKOUT_STATE_KEY)?;
    if checkout.get("draft_id")?.as_str()? != draft_id {
        return None;
    }
    let key = checkout.get("idempotency_key")?.as_str()?;
    (!key.is_empty()).then(|| key.to_string())
}

/// The `(draft id, idempotency key)` entry of a widget state, if it holds a complete one.
pub fn checkout_entry(widget_state: &Value) -> Option<(String, String)> {
    let checkout = widget_state.get(CHECKOUT_STATE_KEY)?;
    let draft_id = checkout.get("draft_id")?.as_str()?;
    let key = checkout.get("idempotency_key")?.as_str()?;
    (!draft_id.is_empty() && !key.is_empty()).then(|| (draft_id.to_string(), key.to_string()))
}

/// What to mirror into browser storage when widget state changes from `previous` to `next`:
/// the draft whose entry to forget (its checkout was cleared or replaced), and the entry to keep.
pub fn storage_changes(previous: &Value, next: &Value) -> (Option<String>, Option<(String, String)>) {
    let keep = checkout_entry(next);
    let forget = checkout_entry(previous)
        .map(|(draft_id, _)| draft_id)
        .filter(|old| keep.as_ref().is_none_or(|(new, _)| new != old));
    (forget, keep)
}

/// The widget state with the checkout entry set; other keys are kept.
pub fn with_checkout(widget_state: &Value, draft_id: &str, idempotency_key: &str) -> Value {
    let mut state = match widget_state {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    state.insert(
        CHECKOUT_STATE_KEY.into(),
        serde_json::json!({ "draft_id": draft_id, "idempotency_key": idempotency_key }),
    );
    Value::Object(state)
}

/// The widget state without the checkout entry; other keys are kept.
pub fn without_checkout(widget_state: &Value) -> Value {
    let mut state = match widget_state {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    state.remove(CHECKOUT_STATE_KEY);
    Value::Object(state)
}

/// The confirmation token from a result's `_meta`, if present and non-empty.
pub fn confirmation_token(meta: &Value) -> Option<String> {
    let token = meta.get(META_CONFIRMATION_TOKEN)?.as_str()?;
    (!token.is_empty()).then(|| token.to_string())
}

/// A plain http(s) URL or a same-origin path; anything else (`javascript:`, `data:`) is refused.
pub fn safe_url(url: &str) -> Option<&str> {
    let trimmed = url.trim();
    let lower = trimmed.get(..8).unwrap_or(trimmed).to_ascii_lowercase();
    let ok = lower.starts_with("https://")
        || lower.starts_with("http://")
        || (trimmed.starts_with('/') && !trimmed.starts_with("//"));
    ok.then_some(trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn merge_overrides_and_null_removes() {
        let base = obj(json!({"relationship_type": "friend", "budget_max": 30, "occasion": "birthday"}));
        let set = obj(json!({"budget_max": 60, "occasion": null, "interests": ["tea"]}));
        assert_eq!(
            Value::Object(merge_arguments(&base, &set)),
            json!({"relationship_type": "friend", "budget_max": 60, "interests": ["tea"]})
        );
    }

    #[test]
    fn key_format() {
        let key = idempotency_key_from_bytes(&[0xab; 16]);
        assert_eq!(key.len(), 35);
        assert_eq!(key, format!("ik_{}", "ab".repeat(16)));
        // The no-wasm runtime sends the same value: it is the default in the markup (decide.rs).
        let derived = idempotency_key_for_draft("drf_example");
        assert_eq!(derived, idempotency_key_for_draft("drf_example"));
        assert_ne!(derived, idempotency_key_for_draft("drf_other"));
        assert!(derived.starts_with("ik_") && derived.len() == 35);
    }

    #[test]
    fn a_cancel_key_is_the_same_for_the_same_order_and_differs_otherwise() {
        let key = cancel_key_for_order("ord_1");
        assert_eq!(key, cancel_key_for_order("ord_1"));
        assert_ne!(key, cancel_key_for_order("ord_2"));
        assert_ne!(key[3..], idempotency_key_for_draft("ord_2")[3..]);
        assert!(key.starts_with("ck_") && key.len() == 35, "{key}");
        let meta =
            json!({"giftgenius/cancel_tokens": {"ord_1": "ct_x", "ord_2": ""}, "giftgenius/delete_data_token": "dt"});
        assert_eq!(cancel_tokens(&meta), vec![("ord_1".to_string(), "ct_x".to_string())]);
        assert_eq!(delete_data_token(&meta).as_deref(), Some("dt"));
        assert_eq!(delete_data_token(&Value::Null), None);
    }

    #[test]
    fn checkout_entry_round_trip_keeps_other_keys() {
        let state = json!({"other": 1});
        let with = with_checkout(&state, "d_1", "ik_x");
        assert_eq!(stored_idempotency_key(&with, "d_1").as_deref(), Some("ik_x"));
        assert_eq!(stored_idempotency_key(&with, "d_2"), None);
        assert_eq!(with["other"], 1);
        let without = without_checkout(&with);
        assert_eq!(without, json!({"other": 1}));
        assert_eq!(stored_idempotency_key(&Value::Null, "d_1"), None);
    }

    #[test]
    fn storage_follows_the_checkout_entry() {
        let d1 = with_checkout(&Value::Null, "d_1", "ik_1");
        let d2 = with_checkout(&Value::Null, "d_2", "ik_2");
        assert_eq!(checkout_entry(&d1), Some(("d_1".into(), "ik_1".into())));
        assert_eq!(checkout_entry(&json!({"checkout": {"draft_id": "d_1"}})), None);
        assert_eq!(storage_changes(&Value::Null, &d1), (None, Some(("d_1".into(), "ik_1".into()))));
        assert_eq!(storage_changes(&d1, &d1), (None, Some(("d_1".into(), "ik_1".into()))));
        assert_eq!(storage_changes(&d1, &d2), (Some("d_1".into()), Some(("d_2".into(), "ik_2".into()))));
        assert_eq!(storage_changes(&d1, &without_checkout(&d1)), (Some("d_1".into()), None));
        assert_eq!(storage_changes(&json!({}), &json!({})), (None, None));
    }

    #[test]
    fn urls() {
        assert_eq!(safe_url("https://x.test/a.png"), Some("https://x.test/a.png"));
        assert_eq!(safe_url("/img/a.png"), Some("/img/a.png"));
        assert_eq!(safe_url("javascript:alert(1)"), None);
        assert_eq!(safe_url("JaVaScRiPt:alert(1)"), None);
        assert_eq!(safe_url("//evil.test/x"), None);
        assert_eq!(safe_url("data:text/html,x"), None);
    }
}
