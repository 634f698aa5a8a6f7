//! Idempotency keys, after Stripe and the IETF Idempotency-Key draft.
//!
//! - Scope: (subject, tool, key). Two users can never see each other's results.
//! - Fingerprint: SHA-256 of the canonical arguments minus the key. The same key with other
//!   arguments is `IDEMPOTENCY_KEY_REUSED`, never a silent replay of something else.
//! - A key in progress carries a lease. A duplicate that arrives meanwhile gets
//!   `REQUEST_IN_PROGRESS` with `retry_after_ms` instead of waiting: a host's duplicate is nearly
//!   always a retry whose first answer was lost, so holding a connection open buys nothing, and
//!   an honest "come back in N ms" lets every caller (model, widget, load balancer) decide.
//! - When the lease has run out (the process died mid-call) the next retry takes the key over
//!   and resumes from the recorded recovery point.
//! - Finished calls (success or definitive failure) are replayed byte-for-byte, marked with
//!   `_meta["giftgenius/replayed"]`. Transient failures only drop the lease, so a retry resumes.
//! - Keys are kept at least 24 h, then pruned.

use std::time::Duration;

use giftgenius_types::{ErrorCode, ToolError};
use rmcp::model::{CallToolResult, ContentBlock, MetaObject};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::clock::Clock;
use crate::store::{Claim, Scope, Store, StoreError};

/// Where a keyed call got to before it stopped. Recorded atomically with the work it marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryPoint {
    /// Key claimed; nothing else done.
    Started,
    /// The order row exists (pending payment); the charge may or may not exist at the provider.
    OrderCreated,
    /// The response is stored.
    Finished,
}

impl RecoveryPoint {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "started" => Some(Self::Started),
            "order_created" => Some(Self::OrderCreated),
            "finished" => Some(Self::Finished),
            _ => None,
        }
    }
}

/// SHA-256 over the canonical (key-sorted, compact) JSON of the arguments minus the key itself.
pub fn fingerprint(arguments: &Map<String, Value>, key_field: &str) -> String {
    let mut canonical = arguments.clone();
    canonical.remove(key_field);
    hex::encode(Sha256::digest(canonical_json(&Value::Object(canonical)).as_bytes()))
}

fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> =
                keys.iter().map(|k| format!("{}:{}", Value::String((*k).clone()), canonical_json(&map[*k]))).collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical_json).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// A tool result as stored for replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredResponse {
    pub text: String,
    /// `structuredContent` exactly as first sent.
    pub structured: String,
    pub is_error: bool,
    #[serde(default)]
    pub meta: Map<String, Value>,
}

impl StoredResponse {
    pub fn from_result(result: &CallToolResult) -> Self {
        let text =
            result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n");
        Self {
            text,
            structured: result.structured_content.as_ref().map(Value::to_string).unwrap_or_else(|| "null".into()),
            is_error: result.is_error.unwrap_or(false),
            meta: result.meta.as_ref().map(|m| m.0.clone()).unwrap_or_default(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The stored result, marked as a replay.
    pub fn replay(&self) -> Result<CallToolResult, serde_json::Error> {
        let mut result = CallToolResult::success(vec![ContentBlock::text(self.text.clone())]);
        result.structured_content = Some(serde_json::from_str(&self.structured)?);
        result.is_error = Some(self.is_error);
        let mut meta = self.meta.clone();
        meta.insert("giftgenius/replayed".into(), Value::Bool(true));
        result.meta = Some(MetaObject(meta));
        Ok(result)
    }
}

/// What a keyed call should do.
#[derive(Debug)]
pub enum Begin {
    /// Do the work, starting at `resume_from` (with the order already created, if any).
    Proceed { resume_from: RecoveryPoint, order_id: Option<String> },
    /// Return this stored result.
    Replay(CallToolResult),
    /// Return this error (key reused with other arguments, or the call is still running).
    Reject(ToolError),
}

/// Leases and retention for idempotency keys.
#[derive(Debug, Clone)]
pub struct Idempotency {
    pub clock: Clock,
    /// How long a call may hold a key before another retry may take it over.
    pub lease: Duration,
    /// How long finished keys are kept (at least 24 h).
    pub retention: Duration,
}

impl Idempotency {
    pub async fn begin(
        &self,
        store: &dyn Store,
        scope: &Scope,
        fingerprint: &str,
        reference: &str,
    ) -> Result<Begin, StoreError> {
        let now = self.clock.now_ms();
        let lease_until = now + self.lease.as_millis() as i64;
        let row = match store.claim_key(scope, fingerprint, lease_until, now).await? {
            Claim::New => return Ok(Begin::Proceed { resume_from: RecoveryPoint::Started, order_id: None }),
            Claim::Existing(row) => row,
        };
        if row.fingerprint != fingerprint {
            return Ok(Begin::Reject(ToolError::new(
                ErrorCode::IdempotencyKeyReused,
                format!("idempotency_key was already used for a different {} request", scope.tool),
                reference,
            )));
        }
        let point = RecoveryPoint::parse(&row.recovery_point).unwrap_or(RecoveryPoint::Started);
        if point == RecoveryPoint::Finished {
            let stored: StoredResponse = serde_json::from_str(row.response.as_deref().unwrap_or_default())
                .map_err(|e| StoreError(format!("stored response unreadable: {e}")))?;
            let replay = stored.replay().map_err(|e| StoreError(format!("stored response unreadable: {e}")))?;
            return Ok(Begin::Replay(replay));
        }
        if let Some(locked_until) = row.locked_until_ms.filter(|&t| t > now) {
            return Ok(Begin::Reject(in_progress(scope, reference, (locked_until - now) as u64)));
        }
        if store.take_over_key(scope, row.locked_until_ms, lease_until, now).await? {
            tracing::info!(reference, tool = scope.tool, point = row.recovery_point, "resuming a keyed call");
            Ok(Begin::Proceed { resume_from: point, order_id: row.order_id })
        } else {
            Ok(Begin::Reject(in_progress(scope, reference, 100)))
        }
    }

    /// Deletes keys past retention; returns how many.
    pub async fn prune(&self, store: &dyn Store) -> Result<u64, StoreError> {
        let now = self.clock.now_ms();
        store.prune_keys(now - self.retention.as_millis() as i64, now).await
    }
}

fn in_progress(scope: &Scope, reference: &str, lease_left_ms: u64) -> ToolError {
    ToolError::new(
        ErrorCode::RequestInProgress,
        format!("An identical {} call with this idempotency_key is still running.", scope.tool),
        reference,
    )
    .with_retry_after_ms(lease_left_ms.clamp(50, 1000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn fingerprint_ignores_the_key_and_field_order() {
        let a = map(json!({"draft_id": "d1", "idempotency_key": "k1", "confirmation_token": "t"}));
        let b = map(json!({"confirmation_token": "t", "idempotency_key": "k2", "draft_id": "d1"}));
        assert_eq!(fingerprint(&a, "idempotency_key"), fingerprint(&b, "idempotency_key"));
        let c = map(json!({"draft_id": "d2", "idempotency_key": "k1", "confirmation_token": "t"}));
        assert_ne!(fingerprint(&a, "idempotency_key"), fingerprint(&c, "idempotency_key"));
    }

    #[test]
    fn replay_keeps_content_and_marks_meta() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("done")]);
        result.structured_content = Some(json!({"v": 1, "ok": true}));
        result.is_error = Some(false);
        let stored = StoredResponse::from_result(&result);
        let back: StoredResponse = serde_json::from_str(&stored.to_json()).unwrap();
        let replay = back.replay().unwrap();
        assert_eq!(replay.structured_content, result.structured_content);
        assert_eq!(replay.meta.unwrap().0["giftgenius/replayed"], true);
    }
}
