//! Idempotency keys, after Stripe and the IETF Idempotency-Key draft. Generic: nothing here
//! knows what a tool does; a key only records how far its call got.
//!
//! - Scope: (subject, tool, key). Two users can never see each other's answers.
//! - Fingerprint: SHA-256 of the canonical arguments minus the key. The same key with other
//!   arguments is `IDEMPOTENCY_KEY_REUSED`, never a silent replay of something else.
//! - [`Idempotency::begin`] claims the key and hands back a [`Lease`]: the right to work on it
//!   until the lease runs out. The lease owns the key's life from there: `advance` (the call's
//!   resource exists), `finish` (store the definitive answer), `release` (a transient failure:
//!   the next retry resumes). Store steps that do work *and* move the key in one transaction
//!   take the lease's scope.
//! - A duplicate that arrives while the lease is held gets `REQUEST_IN_PROGRESS` with
//!   `retry_after_ms` instead of waiting: a host's duplicate is nearly always a retry whose first
//!   answer was lost, so holding a connection open buys nothing, and an honest "come back in
//!   N ms" lets every caller (model, widget, load balancer) decide.
//! - When the lease has run out (the process died mid-call) the next retry takes the key over
//!   and resumes from the recorded recovery point.
//! - Finished calls (success or definitive failure) are replayed: the same `structuredContent`
//!   and text, marked with `_meta["giftgenius/replayed"]`. Keys are kept at least 24 h.

use std::time::Duration;

use giftgenius_types::wire::{META_HTML, META_REPLAYED};
use giftgenius_types::{Envelope, ErrorCode, ToolError};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::clock::Clock;
use crate::context::{CallContext, DEFAULT_LOCALE};
use crate::outcome::{Answer, Outcome, envelope};
use crate::store::{Claim, RecoveryPoint, Scope, Store, StoreError, StoreResult};

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

/// A finished call's answer as stored: the envelope exactly as first sent, the widget-only
/// `_meta`, and the locale it was rendered in. The rendered HTML is not stored: it is rendered
/// again, in the same locale, so the replay is the same.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct StoredAnswer {
    structured: String,
    #[serde(default)]
    meta: Map<String, Value>,
    #[serde(default)]
    locale: Option<String>,
}

/// The stored form of `result`, for the store steps that finish a key with their work.
pub fn stored_answer<T: Serialize>(
    call: &CallContext,
    result: &Result<Answer<T>, ToolError>,
) -> Result<String, StoreError> {
    let structured = serde_json::to_string(&envelope(call.tool, result))
        .map_err(|e| StoreError(format!("answer not serializable: {e}")))?;
    let meta = result.as_ref().map(|a| a.widget_meta.clone()).unwrap_or_default();
    let stored = StoredAnswer { structured, meta, locale: Some(call.locale.clone()) };
    serde_json::to_string(&stored).map_err(|e| StoreError(format!("answer not serializable: {e}")))
}

/// A stored answer, as the outcome to replay.
fn replay<T: DeserializeOwned>(stored: &str) -> Result<Outcome<T>, StoreError> {
    let unreadable = |e: serde_json::Error| StoreError(format!("stored answer unreadable: {e}"));
    let stored: StoredAnswer = serde_json::from_str(stored).map_err(unreadable)?;
    let mut widget_meta = stored.meta;
    // Rows written before answers were stored compactly carry these; they are rendered anew.
    widget_meta.remove(META_HTML);
    widget_meta.remove(META_REPLAYED);
    let result = match serde_json::from_str::<Envelope<T>>(&stored.structured).map_err(unreadable)? {
        Envelope::Ok { data, notice, partial, .. } => Ok(Answer { data, notice, partial, widget_meta }),
        Envelope::Err { error, .. } => Err(error),
    };
    Ok(Outcome { result, replay_locale: Some(stored.locale.unwrap_or_else(|| DEFAULT_LOCALE.to_string())) })
}

/// What a keyed call should do.
#[derive(Debug)]
pub enum Begin<T> {
    /// Do the work under this lease.
    Proceed(Lease),
    /// Answer with this stored outcome.
    Replay(Outcome<T>),
    /// Answer with this error (key reused with other arguments, or the call is still running).
    Reject(ToolError),
}

/// Leases and retention for idempotency keys.
#[derive(Debug, Clone)]
pub struct Idempotency {
    pub store: Store,
    pub clock: Clock,
    /// How long a call may hold a key before another retry may take it over.
    pub lease: Duration,
    /// How long finished keys are kept (at least 24 h).
    pub retention: Duration,
}

impl Idempotency {
    /// Claims `(call.subject, call.tool, key)` for a call whose arguments have `fingerprint`.
    pub async fn begin<T: DeserializeOwned>(
        &self,
        call: &CallContext,
        key: &str,
        fingerprint: &str,
    ) -> StoreResult<Begin<T>> {
        let scope = Scope { subject: call.subject.clone(), tool: call.tool.as_str(), key: key.to_string() };
        let now = self.clock.now_ms();
        let lease_until = now + self.lease.as_millis() as i64;
        let row = match self.store.claim_key(&scope, fingerprint, lease_until, now).await? {
            Claim::New => {
                return Ok(Begin::Proceed(self.lease(scope, RecoveryPoint::Started, None)));
            }
            Claim::Existing(row) => row,
        };
        if row.fingerprint != fingerprint {
            return Ok(Begin::Reject(ToolError::new(
                ErrorCode::IdempotencyKeyReused,
                format!("idempotency_key was already used for a different {} request", scope.tool),
                &call.reference,
            )));
        }
        if row.recovery_point == RecoveryPoint::Finished {
            let stored = row.response.as_deref().ok_or_else(|| StoreError("finished key without an answer".into()))?;
            return Ok(Begin::Replay(replay(stored)?));
        }
        if let Some(locked_until) = row.locked_until_ms.filter(|&t| t > now) {
            return Ok(Begin::Reject(in_progress(call, (locked_until - now) as u64)));
        }
        if self.store.take_over_key(&scope, row.locked_until_ms, lease_until, now).await? {
            tracing::info!(point = row.recovery_point.as_str(), "resuming a keyed call");
            Ok(Begin::Proceed(self.lease(scope, row.recovery_point, row.resource_id)))
        } else {
            Ok(Begin::Reject(in_progress(call, 100)))
        }
    }

    fn lease(&self, scope: Scope, resume_from: RecoveryPoint, resource_id: Option<String>) -> Lease {
        Lease { keys: self.clone(), scope, resume_from, resource_id }
    }

    /// Deletes keys past retention; returns how many.
    pub async fn prune(&self) -> StoreResult<u64> {
        let now = self.clock.now_ms();
        self.store.prune_keys(now - self.retention.as_millis() as i64, now).await
    }
}

fn in_progress(call: &CallContext, lease_left_ms: u64) -> ToolError {
    ToolError::new(
        ErrorCode::RequestInProgress,
        format!("An identical {} call with this idempotency_key is still running.", call.tool.as_str()),
        &call.reference,
    )
    .with_retry_after_ms(lease_left_ms.clamp(50, 1000))
}

/// The right to work on one key, from `begin` until `finish` or `release`.
#[derive(Debug)]
pub struct Lease {
    keys: Idempotency,
    scope: Scope,
    resume_from: RecoveryPoint,
    resource_id: Option<String>,
}

impl Lease {
    /// The key, for store steps that move it in the same transaction as their work.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Where the previous holder got to (`Started` for a new key).
    pub fn resume_from(&self) -> RecoveryPoint {
        self.resume_from
    }

    /// The resource an earlier holder created, when resuming from `ResourceCreated`.
    pub fn resource_id(&self) -> Option<&str> {
        self.resource_id.as_deref()
    }

    /// The key now points at `resource_id`, which already exists (created under another key),
    /// so a retry of this key resumes with it. Only moves a key that has just started.
    pub async fn advance(&mut self, resource_id: &str) -> StoreResult<()> {
        let now = self.keys.clock.now_ms();
        self.keys.store.advance_started_key(&self.scope, resource_id, now).await?;
        self.resume_from = RecoveryPoint::ResourceCreated;
        self.resource_id = Some(resource_id.to_string());
        Ok(())
    }

    /// Stores `result` as the key's definitive answer and ends the lease. If storing fails the
    /// lease is released, so a retry runs the call again.
    pub async fn finish<T: Serialize>(
        self,
        call: &CallContext,
        result: &Result<Answer<T>, ToolError>,
    ) -> StoreResult<()> {
        let now = self.keys.clock.now_ms();
        let stored = stored_answer(call, result)?;
        match self.keys.store.finish_key(&self.scope, &stored, now).await {
            Ok(()) => Ok(()),
            Err(e) => {
                self.release().await;
                Err(e)
            }
        }
    }

    /// Stores `result` as the key's definitive answer and returns it (`INTERNAL_ERROR` if it
    /// could not be stored: the lease is then released and a retry runs the call again).
    pub async fn answer<T: Serialize>(
        self,
        call: &CallContext,
        result: Result<Answer<T>, ToolError>,
    ) -> Result<Answer<T>, ToolError> {
        match self.finish(call, &result).await {
            Ok(()) => result,
            Err(e) => Err(crate::error::internal(call, &e)),
        }
    }

    /// A store step failed: drops the lease so a retry resumes, and answers `INTERNAL_ERROR`.
    pub async fn fail(self, call: &CallContext, e: &StoreError) -> ToolError {
        self.release().await;
        crate::error::internal(call, e)
    }

    /// Drops the lease after a transient failure, keeping the recovery point for the retry.
    pub async fn release(self) {
        let now = self.keys.clock.now_ms();
        if let Err(e) = self.keys.store.release_key(&self.scope, now).await {
            tracing::warn!(error = %e, "could not release an idempotency key; its lease will expire");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use giftgenius_types::{GetOrderInput, ToolName};
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
    fn a_stored_answer_replays_the_same_envelope_meta_and_locale() {
        let call = CallContext::new(ToolName::GetOrder, "s", "pt-BR");
        let answer = Answer::new(GetOrderInput { order_id: "ord_1".into() }).with_widget_meta("k", json!("v"));
        let stored = stored_answer(&call, &Ok(answer.clone())).unwrap();
        let replayed: Outcome<GetOrderInput> = replay(&stored).unwrap();
        assert_eq!(replayed.result, Ok(answer));
        assert_eq!(replayed.replay_locale.as_deref(), Some("pt-BR"));

        let error = ToolError::new(ErrorCode::PaymentDeclined, "declined", "req_1");
        let stored = stored_answer::<GetOrderInput>(&call, &Err(error.clone())).unwrap();
        assert_eq!(replay::<GetOrderInput>(&stored).unwrap().result, Err(error));
    }

    #[test]
    fn answers_stored_before_the_compact_form_still_replay() {
        let legacy = json!({
            "text": "Order ord_1 placed and paid.",
            "structured": json!({"v": 1, "ok": true, "tool": "get_order", "order_id": "ord_1"}).to_string(),
            "is_error": false,
            "meta": {"giftgenius/html": "<p>old</p>"}
        });
        let replayed: Outcome<GetOrderInput> = replay(&legacy.to_string()).unwrap();
        let answer = replayed.result.unwrap();
        assert_eq!(answer.data.order_id, "ord_1");
        assert!(answer.widget_meta.is_empty(), "the old HTML is rendered anew");
        assert_eq!(replayed.replay_locale.as_deref(), Some(DEFAULT_LOCALE));
    }
}
