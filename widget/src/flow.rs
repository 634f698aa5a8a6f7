//! Small pure rules of the purchase flow, kept apart so they are unit-tested.
//!
//! - The idempotency key of a commit and of a cancellation is derived from the draft's or the
//!   order's id, so a reload, a second click or a retry sends the same one and nothing is paid
//!   or refunded twice. The runtime keeps the commit's key in the host's widget state under
//!   `{"checkout": {"draft_id", "idempotency_key"}}` (and in storage) before it is sent.
//! - The confirmation token only ever lives in the runtime's memory: widget state is visible to
//!   the model.

use giftgenius_types::wire::{CANCEL_KEY_PREFIX, IDEMPOTENCY_KEY_DERIVATION, IDEMPOTENCY_KEY_PREFIX};

/// The widget-state key holding the pending checkout.
pub const CHECKOUT_STATE_KEY: &str = "checkout";

/// `"ik_"` followed by 32 lower-case hex digits of `bytes`.
fn idempotency_key_from_bytes(bytes: &[u8; 16]) -> String {
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
/// key. The runtime gets it from the markup (`decide::confirm` writes it as the default of the
/// key placeholder). (Knowing the key buys nothing: without a token nothing is committed.)
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
/// The key is minted once per order in effect: a retry, a second click or a reload with a fresh
/// cancel token (tokens expire) all send the same key (the runtime reads it from the markup),
/// and the server replays the first cancellation instead of refunding twice.
pub fn cancel_key_for_order(order_id: &str) -> String {
    let ik = idempotency_key_for_draft(order_id);
    format!("{CANCEL_KEY_PREFIX}{}", &ik[IDEMPOTENCY_KEY_PREFIX.len()..])
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

    #[test]
    fn key_format() {
        let key = idempotency_key_from_bytes(&[0xab; 16]);
        assert_eq!(key.len(), 35);
        assert_eq!(key, format!("ik_{}", "ab".repeat(16)));
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
