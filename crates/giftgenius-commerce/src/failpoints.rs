//! Crash points for the exactly-once tests: when a named point is enabled (`--failpoints` or
//! GIFTGENIUS_FAILPOINTS), the process aborts right there, as a power cut or OOM kill would.
//! Off by default; there is no way to enable them from a client.

use std::collections::HashSet;

/// After the idempotency key is claimed, before any order exists.
pub const AFTER_KEY_CLAIMED: &str = "after_key_claimed";
/// After the order row is committed (pending payment), before the provider is called.
pub const AFTER_ORDER_CREATED: &str = "after_order_created";
/// After the provider charged, before we recorded the charge.
pub const AFTER_PAYMENT_CHARGED: &str = "after_payment_charged";
/// After the charge and the response are recorded, before the response is sent.
pub const AFTER_RESPONSE_STORED: &str = "after_response_stored";

/// cancel_order: after the refund is recorded as pending, before the provider is asked.
pub const AFTER_REFUND_RECORDED: &str = "after_refund_recorded";
/// cancel_order: after the provider refunded, before we recorded the refund.
pub const AFTER_REFUNDED: &str = "after_refunded";

/// The order events worker: after the receiver answered 2xx, before the event is recorded as
/// delivered (it is sent again after a restart: at least once).
pub const AFTER_WEBHOOK_DELIVERED: &str = "after_webhook_delivered";

/// Not a crash point: makes the suggest_gifts handler panic (the internal-failure tests check
/// that a handler panic becomes `INTERNAL_ERROR` and the server keeps serving).
pub const SUGGEST_GIFTS_PANICS: &str = "suggest_gifts_panics";
/// Not a crash point: makes commit_order panic while it holds its idempotency key (the panic
/// tests check the key is released and the input the message quotes is never logged).
pub const COMMIT_ORDER_PANICS: &str = "commit_order_panics";
/// Not a crash point: makes an ACP create panic while it holds its idempotency key, quoting
/// the request's `order_notes`.
pub const ACP_CREATE_PANICS: &str = "acp_create_panics";

#[derive(Debug, Clone, Default)]
pub struct Failpoints {
    enabled: HashSet<String>,
}

impl Failpoints {
    pub fn new(names: impl IntoIterator<Item = String>) -> Self {
        Self { enabled: names.into_iter().filter(|n| !n.is_empty()).collect() }
    }

    /// Aborts the process if `name` is enabled.
    pub fn hit(&self, name: &str) {
        if self.enabled.contains(name) {
            tracing::error!(failpoint = name, "failpoint hit: aborting the process");
            std::process::abort();
        }
    }

    /// Panics (unwinds, unlike `hit`) if `name` is enabled: a bug in a handler, on demand. The
    /// message quotes `input`, as std's own panics quote the text a slice cut.
    pub fn panic_if(&self, name: &str, input: &str) {
        if self.enabled.contains(name) {
            panic!("failpoint {name}: injected handler panic on {input:?}");
        }
    }
}
