//! Idempotency keys by what their claim found: replays (a finished call answered again),
//! take-overs (a lease that ran out, its call resumed by a retry), calls still in flight, keys
//! reused with other arguments, and new keys. Fed where keys are claimed: the tools'
//! `checkout::idempotency` and the ACP routes (`acp::routes`). `tool` is the key's scope: a
//! tool's name or an ACP operation, both fixed in code.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use super::label_values;

label_values! {
    /// What claiming a key found.
    pub enum KeyOutcome {
        /// A key never seen: the call runs.
        New = "new",
        /// A finished call: its stored answer is replayed.
        Replayed = "replayed",
        /// A call whose lease ran out (its process died or stalled): this retry resumes it.
        TakenOver = "taken_over",
        /// The first call still holds the key: REQUEST_IN_PROGRESS (409 over ACP).
        InProgress = "in_progress",
        /// The key was used with other arguments: IDEMPOTENCY_KEY_REUSED (422 over ACP).
        Reused = "reused",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct KeyLabels {
    tool: &'static str,
    outcome: KeyOutcome,
}

/// The handle key claims feed. Cheap to clone; a default one counts into no registry.
#[derive(Debug, Clone, Default)]
pub struct IdempotencyMetrics {
    keys: Family<KeyLabels, Counter>,
}

impl IdempotencyMetrics {
    pub(super) fn register(&self, registry: &mut Registry) {
        registry.register(
            "giftgenius_idempotency_keys",
            "Idempotency key claims, by the key's tool and what the claim found",
            self.keys.clone(),
        );
    }

    /// A claim of a key scoped to `tool` (a `&'static str`: names fixed in code only).
    pub fn claimed(&self, tool: &'static str, outcome: KeyOutcome) {
        self.keys.get_or_create(&KeyLabels { tool, outcome }).inc();
    }
}
