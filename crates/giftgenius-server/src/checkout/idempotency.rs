//! Idempotency keys, after Stripe and the IETF Idempotency-Key draft. Generic: nothing here
//! knows what a tool does; a key only records how far its call got.
//!
//! - Scope: (subject, tool, key). Two users can never see each other's answers.
//! - Fingerprint: SHA-256 of the canonical arguments minus the key. The same key with other
//!   arguments is `IDEMPOTENCY_KEY_REUSED`, never a silent replay of something else.
//! - [`Idempotency::keyed`] runs a keyed call: it claims the key ([`Idempotency::begin`]) and
//!   runs the call's work under a [`Lease`], the right to work on it until the lease runs out,
//!   or answers without running it (a replay, a key reused, a call still running). The lease
//!   owns the key's life from there: `advance` (the call's resource exists), `answer` (store
//!   the definitive answer), `finish` (store it with the work it reports, in one store step
//!   that takes the lease's [`Fence`]), `release` (a transient failure: the next retry resumes).
//! - Leases are fenced: every claim or take-over gives the key a new generation, and every write
//!   names the generation its holder got. A holder whose lease ran out (a slow provider, a long
//!   pause) and was taken over writes nothing: not its answer, not a release, not an order or
//!   a checkout session. Its write comes back [`Fenced::Stale`], and it answers from what the key
//!   says now ([`Lease::settled`]): the winner's stored answer, or "still in progress".
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
use crate::metrics::{IdempotencyMetrics, KeyOutcome};
use crate::outcome::{Answer, Outcome, envelope};
use crate::store::{Claim, Fence, Fenced, RecoveryPoint, Scope, Store, StoreError, StoreResult};
use giftgenius_types::canonical::canonical_json;

/// The arguments a fingerprint leaves out: the key itself, and the widget's confirmation token,
/// which proves who asked rather than what (a fresh token after a reload is the same request).
const NOT_FINGERPRINTED: [&str; 2] = ["idempotency_key", "confirmation_token"];

/// SHA-256 over the canonical (key-sorted, compact) JSON of the arguments minus the key itself
/// and the confirmation token.
pub fn fingerprint(arguments: &Map<String, Value>) -> String {
    let mut canonical = arguments.clone();
    for field in NOT_FINGERPRINTED {
        canonical.remove(field);
    }
    // Numbers as written, so the keys already stored keep matching (ACP's `acp1` normalizes them).
    let canonical = canonical_json(&Value::Object(canonical), serde_json::Number::to_string);
    hex::encode(Sha256::digest(canonical.as_bytes()))
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
    let structured =
        serde_json::to_string(&envelope(call.tool, result)).map_err(StoreError::json("answer not serializable"))?;
    let meta = result.as_ref().map(|a| a.widget_meta.clone()).unwrap_or_default();
    let stored = StoredAnswer { structured, meta, locale: Some(call.locale.clone()) };
    serde_json::to_string(&stored).map_err(StoreError::json("answer not serializable"))
}

/// Contract versions whose stored answers read as the current version's: 3 only added to 2
/// (order statuses and fields after payment), so a key answered just before an upgrade still
/// replays after it, as the current version.
const UPGRADABLE_VERSIONS: [u64; 1] = [2];

/// A stored answer, as the outcome to replay.
fn replay<T: DeserializeOwned>(stored: &str) -> Result<Outcome<T>, StoreError> {
    let unreadable = StoreError::json("stored answer unreadable");
    let stored: StoredAnswer = serde_json::from_str(stored).map_err(unreadable)?;
    let mut widget_meta = stored.meta;
    // Rows written before answers were stored compactly carry these; they are rendered anew.
    widget_meta.remove(META_HTML);
    widget_meta.remove(META_REPLAYED);
    let mut structured: serde_json::Value = serde_json::from_str(&stored.structured).map_err(unreadable)?;
    if let Some(v) = structured.get_mut("v")
        && v.as_u64().is_some_and(|v| UPGRADABLE_VERSIONS.contains(&v))
    {
        *v = serde_json::Value::from(giftgenius_types::CONTRACT_VERSION);
    }
    let result = match serde_json::from_value::<Envelope<T>>(structured).map_err(unreadable)? {
        Envelope::Ok { data, notice, partial, .. } => Ok(Answer { data, notice, partial, widget_meta }),
        Envelope::Err { error, .. } => Err(error),
    };
    Ok(Outcome { result, replay_locale: Some(stored.locale.unwrap_or_else(|| DEFAULT_LOCALE.to_string())) })
}

/// A finished key must hold its answer.
fn unanswered() -> StoreError {
    StoreError::Inconsistent("finished key without an answer".into())
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
    /// Claims by what they found: replays, take-overs… (`/metrics`).
    pub metrics: IdempotencyMetrics,
}

impl Idempotency {
    /// Runs a keyed call: claims the key and runs `work` under its lease, or answers without
    /// running it (the stored answer of a finished call, a key reused with other arguments, a
    /// call still running, `INTERNAL_ERROR` if the store failed). A `work` that panics releases
    /// the key, as a transient failure does, and answers `INTERNAL_ERROR`: its retry resumes
    /// instead of meeting `REQUEST_IN_PROGRESS` until the lease runs out.
    pub async fn keyed<T: DeserializeOwned>(
        &self,
        call: &CallContext,
        key: &str,
        fingerprint: &str,
        work: impl AsyncFnOnce(Lease) -> Outcome<T>,
    ) -> Outcome<T> {
        match self.begin(call, key, fingerprint).await {
            Ok(Begin::Proceed(lease)) => {
                let fence = lease.fence().clone();
                match crate::panics::caught(work(lease)).await {
                    Ok(outcome) => outcome,
                    Err(panicked) => {
                        self.release(&fence).await;
                        crate::error::internal(call, &panicked).into()
                    }
                }
            }
            Ok(Begin::Replay(outcome)) => outcome,
            Ok(Begin::Reject(error)) => error.into(),
            Err(e) => crate::error::internal(call, &e).into(),
        }
    }

    /// Claims `(call.subject, call.tool, key)` for a call whose arguments have `fingerprint`.
    pub async fn begin<T: DeserializeOwned>(
        &self,
        call: &CallContext,
        key: &str,
        fingerprint: &str,
    ) -> StoreResult<Begin<T>> {
        let begin = self.claim(call, key, fingerprint).await?;
        let outcome = match &begin {
            Begin::Proceed(lease) if lease.fence().generation == 1 => KeyOutcome::New,
            Begin::Proceed(_) => KeyOutcome::TakenOver,
            Begin::Replay(_) => KeyOutcome::Replayed,
            Begin::Reject(error) if error.code == ErrorCode::IdempotencyKeyReused => KeyOutcome::Reused,
            Begin::Reject(_) => KeyOutcome::InProgress,
        };
        self.metrics.claimed(call.tool.as_str(), outcome);
        Ok(begin)
    }

    async fn claim<T: DeserializeOwned>(
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
                let fence = Fence { scope, generation: 1 };
                return Ok(Begin::Proceed(self.lease(fence, lease_until, RecoveryPoint::Started, None)));
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
            let stored = row.response.as_deref().ok_or_else(unanswered)?;
            return Ok(Begin::Replay(replay(stored)?));
        }
        if let Some(locked_until) = row.locked_until_ms.filter(|&t| t > now) {
            return Ok(Begin::Reject(in_progress(call, (locked_until - now) as u64)));
        }
        if self.store.take_over_key(&scope, row.generation, lease_until, now).await? {
            tracing::info!(
                point = row.recovery_point.as_str(),
                generation = row.generation + 1,
                "resuming a keyed call"
            );
            let fence = Fence { scope, generation: row.generation + 1 };
            Ok(Begin::Proceed(self.lease(fence, lease_until, row.recovery_point, row.resource_id)))
        } else {
            Ok(Begin::Reject(in_progress(call, 100)))
        }
    }

    /// The stored answer of `key` if it finished a call with this `fingerprint`: read only, for
    /// a late retry that may start nothing new (its confirmation expired) but still gets what
    /// happened.
    pub async fn finished<T: DeserializeOwned>(
        &self,
        call: &CallContext,
        key: &str,
        fingerprint: &str,
    ) -> StoreResult<Option<Outcome<T>>> {
        let scope = Scope { subject: call.subject.clone(), tool: call.tool.as_str(), key: key.to_string() };
        match self.store.key(&scope).await? {
            Some(row) if row.recovery_point == RecoveryPoint::Finished && row.fingerprint == fingerprint => {
                let stored = row.response.as_deref().ok_or_else(unanswered)?;
                Ok(Some(replay(stored)?))
            }
            _ => Ok(None),
        }
    }

    fn lease(&self, fence: Fence, until_ms: i64, resume_from: RecoveryPoint, resource_id: Option<String>) -> Lease {
        Lease { keys: self.clone(), fence, until_ms, resume_from, resource_id }
    }

    /// What a key says now, as an answer: its stored answer once finished, else "in progress"
    /// (for a holder whose write was refused, and who must not act on what it knew).
    pub async fn settled<T: DeserializeOwned>(&self, call: &CallContext, scope: &Scope) -> Outcome<T> {
        match self.store.key(scope).await {
            Ok(Some(row)) if row.recovery_point == RecoveryPoint::Finished => {
                match row.response.as_deref().map(replay) {
                    Some(Ok(outcome)) => outcome,
                    Some(Err(e)) => crate::error::internal(call, &e).into(),
                    None => crate::error::internal(call, &"finished key without an answer").into(),
                }
            }
            Ok(row) => {
                let now = self.clock.now_ms();
                let left = row.and_then(|r| r.locked_until_ms).map_or(0, |t| (t - now).max(0) as u64);
                in_progress(call, left).into()
            }
            Err(e) => crate::error::internal(call, &e).into(),
        }
    }

    /// Ends the lease `fence` holds, keeping the recovery point for the retry. A holder that
    /// lost the key releases nothing (it would free the new holder's lease), and a finished key
    /// stays finished.
    async fn release(&self, fence: &Fence) {
        match self.store.release_key(fence, self.clock.now_ms()).await {
            Ok(Fenced::Written(())) => {}
            Ok(Fenced::Stale) => {
                tracing::info!(generation = fence.generation, "the key has a newer holder; not releasing it")
            }
            Err(e) => tracing::warn!(error = %e, "could not release an idempotency key; its lease will expire"),
        }
    }

    /// Deletes keys past retention (never one pointing at a pending order); returns how many.
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

/// The right to work on one key, from `begin` until `answer` or `release`, as long as nobody
/// took it over.
#[derive(Debug)]
pub struct Lease {
    keys: Idempotency,
    fence: Fence,
    /// When the lease runs out (after that a retry may take the key over).
    until_ms: i64,
    resume_from: RecoveryPoint,
    resource_id: Option<String>,
}

impl Lease {
    /// The key and its generation, for store steps that move it in the same transaction as
    /// their work.
    pub fn fence(&self) -> &Fence {
        &self.fence
    }

    /// Where the previous holder got to (`Started` for a new key).
    pub fn resume_from(&self) -> RecoveryPoint {
        self.resume_from
    }

    /// The resource an earlier holder created, when resuming from `ResourceCreated`.
    pub fn resource_id(&self) -> Option<&str> {
        self.resource_id.as_deref()
    }

    /// How long the lease still runs.
    pub fn remaining(&self) -> Duration {
        Duration::from_millis((self.until_ms - self.keys.clock.now_ms()).max(0) as u64)
    }

    /// The key now points at `resource_id`, which already exists (created under another key),
    /// so a retry of this key resumes with it. Only moves a key that has just started.
    pub async fn advance(&mut self, resource_id: &str) -> StoreResult<Fenced> {
        let now = self.keys.clock.now_ms();
        let advanced = self.keys.store.advance_started_key(&self.fence, resource_id, now).await?;
        if advanced == Fenced::Written(()) {
            self.resume_from = RecoveryPoint::ResourceCreated;
            self.resource_id = Some(resource_id.to_string());
        }
        Ok(advanced)
    }

    /// Stores `result` as the key's definitive answer and answers with it (see [`Lease::finish`]).
    pub async fn answer<T: Serialize + DeserializeOwned>(
        self,
        call: &CallContext,
        result: Result<Answer<T>, ToolError>,
    ) -> Outcome<T> {
        let store = self.keys.store.clone();
        let now = self.keys.clock.now_ms();
        self.finish(call, result, async |fence, stored| store.finish_key(fence, stored, now).await).await
    }

    /// Stores `result` as the key's answer with the work it reports: `write` is the store step
    /// that records the work and finishes the key with the stored answer (its second argument)
    /// in one transaction, fenced by the lease's [`Fence`]. Answers `result` if it was written,
    /// what the key says now if the lease was lost meanwhile, and `INTERNAL_ERROR` (the lease
    /// released, so a retry runs the call again) if the step failed.
    pub async fn finish<T: Serialize + DeserializeOwned>(
        self,
        call: &CallContext,
        result: Result<Answer<T>, ToolError>,
        write: impl AsyncFnOnce(&Fence, &str) -> StoreResult<Fenced>,
    ) -> Outcome<T> {
        let written = match stored_answer(call, &result) {
            Ok(stored) => write(&self.fence, &stored).await,
            Err(e) => Err(e),
        };
        match written {
            Ok(Fenced::Written(())) => result.into(),
            Ok(Fenced::Stale) => self.settled(call).await,
            Err(e) => self.fail(call, &e).await.into(),
        }
    }

    /// The lease was lost (a write came back stale): answers with what the key says now.
    pub async fn settled<T: DeserializeOwned>(self, call: &CallContext) -> Outcome<T> {
        tracing::warn!(generation = self.fence.generation, "lost the idempotency key to a newer holder; not writing");
        self.keys.settled(call, &self.fence.scope).await
    }

    /// A step failed (the store, or the provider in a way no retry mends): drops the lease so a
    /// retry resumes, and answers `INTERNAL_ERROR` (`e` goes to the log only).
    pub async fn fail(self, call: &CallContext, e: &(dyn std::fmt::Display + Sync)) -> ToolError {
        self.release().await;
        crate::error::internal(call, e)
    }

    /// Drops the lease after a transient failure, keeping the recovery point for the retry.
    pub async fn release(self) {
        self.keys.release(&self.fence).await;
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

    /// The app's canonical form, byte for byte: keys sorted, compact, numbers as written (the
    /// fingerprints of keys already stored depend on it; `acp1` is the one that normalizes).
    #[test]
    fn the_apps_canonical_form_keeps_numbers_as_written() {
        let value: Value = serde_json::from_str(r#"{"b": 1.0, "a": [2, "x", null, {"d": 1e2, "c": true}]}"#).unwrap();
        assert_eq!(
            canonical_json(&value, serde_json::Number::to_string),
            r#"{"a":[2,"x",null,{"c":true,"d":100.0}],"b":1.0}"#
        );
        assert_ne!(fingerprint(&map(json!({"q": 1}))), fingerprint(&map(json!({"q": 1.0}))));
    }

    #[test]
    fn fingerprint_ignores_the_key_the_token_and_field_order() {
        let a = map(json!({"draft_id": "d1", "idempotency_key": "k1", "confirmation_token": "t"}));
        let b = map(json!({"confirmation_token": "t", "idempotency_key": "k2", "draft_id": "d1"}));
        assert_eq!(fingerprint(&a), fingerprint(&b));
        // A fresh token for the same draft (after a reload, or the first one expired) is the same request.
        let fresh = map(json!({"draft_id": "d1", "idempotency_key": "k1", "confirmation_token": "t2"}));
        assert_eq!(fingerprint(&a), fingerprint(&fresh));
        let c = map(json!({"draft_id": "d2", "idempotency_key": "k1", "confirmation_token": "t"}));
        assert_ne!(fingerprint(&a), fingerprint(&c));
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
    fn answers_stored_under_contract_2_replay_as_the_current_version_and_older_ones_do_not() {
        let stored = |v: u32| {
            json!({"structured": json!({"v": v, "ok": true, "tool": "get_order", "order_id": "ord_1"}).to_string()})
                .to_string()
        };
        let replayed: Outcome<GetOrderInput> = replay(&stored(2)).unwrap();
        assert_eq!(replayed.result.unwrap().data.order_id, "ord_1");
        assert!(replay::<GetOrderInput>(&stored(1)).is_err(), "contract 1 is not readable as 3");
    }

    #[test]
    fn answers_stored_before_the_compact_form_still_replay() {
        let legacy = json!({
            "text": "Order ord_1 placed and paid.",
            "structured": json!({"v": 2, "ok": true, "tool": "get_order", "order_id": "ord_1"}).to_string(),
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
