//! The operator's outbox commands (docs/acp.md §10.2): `giftgenius-server outbox list
//! [--status pending|delivered|dead]` prints events as JSON lines (without their bodies, which
//! hold personal data), and `outbox redeliver ID…` sends events again: pending at once,
//! attempts from zero, the retry horizon from now. The running servers' workers post them
//! (per-order FIFO still holds: redelivering an order's events together sends them in order).

use serde::Serialize;

use crate::clock::rfc3339;
use crate::store::{OutboxRow, OutboxStatus, Store, StoreResult};

/// One event as `outbox list` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventListing {
    pub id: String,
    pub receiver: String,
    pub order_id: String,
    pub seq: i64,
    /// `order_create` / `order_update`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The order change it announces: `paid`, `cancelled`.
    pub change: &'static str,
    pub status: &'static str,
    pub attempts: i64,
    /// While pending: when it is tried next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivered_at: Option<String>,
}

impl From<&OutboxRow> for EventListing {
    fn from(row: &OutboxRow) -> Self {
        Self {
            id: row.id.clone(),
            receiver: row.receiver.clone(),
            order_id: row.order_id.clone(),
            seq: row.seq,
            kind: row.change.event_type(),
            change: row.change.as_str(),
            status: row.status.as_str(),
            attempts: row.attempts,
            next_attempt_at: (row.status == OutboxStatus::Pending).then(|| rfc3339(row.next_attempt_at_ms)),
            last_error: row.last_error.clone(),
            created_at: rfc3339(row.created_at_ms),
            delivered_at: row.delivered_at_ms.map(rfc3339),
        }
    }
}

/// Up to `limit` events (with `status`, if given), oldest first.
pub async fn list(store: &Store, status: Option<OutboxStatus>, limit: i64) -> StoreResult<Vec<EventListing>> {
    Ok(store.order_events(status, limit).await?.iter().map(EventListing::from).collect())
}

/// What `outbox redeliver` did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Redelivered {
    /// Back to pending.
    pub redelivered: Vec<String>,
    /// No such event (a typo, or pruned).
    pub unknown: Vec<String>,
}

/// Sends the events `ids` again from `now_ms`.
pub async fn redeliver(store: &Store, ids: &[String], now_ms: i64) -> StoreResult<Redelivered> {
    let mut done = Redelivered::default();
    for id in ids {
        if store.redeliver_order_event(id, now_ms).await? {
            done.redelivered.push(id.clone());
        } else {
            done.unknown.push(id.clone());
        }
    }
    Ok(done)
}
