//! The tools' idempotency keys: [`giftgenius_commerce::idempotency`]'s claim as tool answers. Generic:
//! nothing here knows what a tool does; a key only records how far its call got.
//!
//! - Scope: (subject, tool, key). Two users can never see each other's answers.
//! - Fingerprint: SHA-256 of the canonical arguments minus the key. The same key with other
//!   arguments is `IDEMPOTENCY_KEY_REUSED`, never a silent replay of something else.
//! - [`ToolKeys::keyed`] runs a keyed call: it claims the key ([`ToolKeys::begin`]) and
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

use crate::context::{CallContext, DEFAULT_LOCALE};
use crate::outcome::{Answer, Outcome, envelope};
use giftgenius_commerce::idempotency::{Claimed, Held, Idempotency, KeyNow};
use giftgenius_commerce::store::{Fence, Fenced, RecoveryPoint, Scope, StoreError, StoreResult};
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
    Ok(Outcome {
        result,
        replay_locale: Some(stored.locale.unwrap_or_else(|| DEFAULT_LOCALE.to_string())),
        error_meta: serde_json::Map::new(),
    })
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

/// The tools' side of the core's [`Idempotency`]: the claim's outcomes as tool errors and stored
/// envelopes. Everything of the core's keys is reached through it (`Deref`).
#[derive(Debug, Clone)]
pub struct ToolKeys(pub Idempotency);

impl std::ops::Deref for ToolKeys {
    type Target = Idempotency;

    fn deref(&self) -> &Idempotency {
        &self.0
    }
}

impl ToolKeys {
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
            Ok(Begin::Proceed(lease)) => self.run(call, lease, work).await,
            Ok(Begin::Replay(outcome)) => outcome,
            Ok(Begin::Reject(error)) => error.into(),
            Err(e) => crate::error::internal(call, &e).into(),
        }
    }

    /// Runs `work` under `lease` as [`ToolKeys::keyed`] does once it holds the key: a `work`
    /// that panics releases the key and answers `INTERNAL_ERROR`.
    pub async fn run<T>(
        &self,
        call: &CallContext,
        lease: Lease,
        work: impl AsyncFnOnce(Lease) -> Outcome<T>,
    ) -> Outcome<T> {
        let fence = lease.fence().clone();
        match crate::panics::caught(work(lease)).await {
            Ok(outcome) => outcome,
            Err(panicked) => {
                self.release(&fence).await;
                crate::error::internal(call, &panicked).into()
            }
        }
    }

    /// The lease on a new key that a store step claimed together with the resource it created
    /// (a purchase's first transaction, `store::begin_purchase`): generation 1 until `until_ms`,
    /// resuming at `ResourceCreated` with `resource_id`. Counted as a new key, as a claim is.
    pub fn claimed_with(&self, call: &CallContext, key: &str, until_ms: i64, resource_id: &str) -> Lease {
        let fence = Fence { scope: scope(call, key), generation: 1 };
        self.metrics.claimed(call.tool.as_str(), giftgenius_commerce::idempotency::KeyOutcome::New);
        let held = Held {
            fence,
            until_ms,
            resume_from: RecoveryPoint::ResourceCreated,
            resource_id: Some(resource_id.to_string()),
        };
        Lease { keys: self.clone(), held }
    }

    /// Claims `(call.subject, call.tool, key)` for a call whose arguments have `fingerprint`.
    pub async fn begin<T: DeserializeOwned>(
        &self,
        call: &CallContext,
        key: &str,
        fingerprint: &str,
    ) -> StoreResult<Begin<T>> {
        Ok(match self.claim(scope(call, key), fingerprint).await? {
            Claimed::Proceed(held) => Begin::Proceed(Lease { keys: self.clone(), held }),
            Claimed::Replay(stored) => Begin::Replay(replay(&stored)?),
            Claimed::Conflict => Begin::Reject(ToolError::new(
                ErrorCode::IdempotencyKeyReused,
                format!("idempotency_key was already used for a different {} request", call.tool.as_str()),
                &call.reference,
            )),
            Claimed::InFlight { retry_after_ms } => Begin::Reject(in_progress(call, retry_after_ms)),
        })
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
        match self.finished_answer(&scope(call, key), fingerprint).await? {
            Some(stored) => Ok(Some(replay(&stored)?)),
            None => Ok(None),
        }
    }

    /// What a key says now, as an answer: its stored answer once finished, else "in progress"
    /// (for a holder whose write was refused, and who must not act on what it knew).
    pub async fn settled<T: DeserializeOwned>(&self, call: &CallContext, scope: &Scope) -> Outcome<T> {
        match self.now(scope).await {
            Ok(KeyNow::Finished(stored)) => match replay(&stored) {
                Ok(outcome) => outcome,
                Err(e) => crate::error::internal(call, &e).into(),
            },
            Ok(KeyNow::InFlight { retry_after_ms }) => in_progress(call, retry_after_ms).into(),
            Err(e) => crate::error::internal(call, &e).into(),
        }
    }
}

/// A tool call's key: scoped to its caller and tool.
pub fn scope(call: &CallContext, key: &str) -> Scope {
    Scope { subject: call.subject.clone(), tool: call.tool.as_str(), key: key.to_string() }
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
    keys: ToolKeys,
    held: Held,
}

impl Lease {
    /// The key and its generation, for store steps that move it in the same transaction as
    /// their work.
    pub fn fence(&self) -> &Fence {
        &self.held.fence
    }

    /// Where the previous holder got to (`Started` for a new key).
    pub fn resume_from(&self) -> RecoveryPoint {
        self.held.resume_from
    }

    /// The resource an earlier holder created, when resuming from `ResourceCreated`.
    pub fn resource_id(&self) -> Option<&str> {
        self.held.resource_id.as_deref()
    }

    /// When the lease runs out (clock milliseconds).
    pub fn until_ms(&self) -> i64 {
        self.held.until_ms
    }

    /// How long the lease still runs.
    pub fn remaining(&self) -> Duration {
        Duration::from_millis((self.held.until_ms - self.keys.clock.now_ms()).max(0) as u64)
    }

    /// The key now points at `resource_id`, which already exists (created under another key),
    /// so a retry of this key resumes with it. Only moves a key that has just started.
    pub async fn advance(&mut self, resource_id: &str) -> StoreResult<Fenced> {
        let now = self.keys.clock.now_ms();
        let advanced = self.keys.store.advance_started_key(&self.held.fence, resource_id, now).await?;
        if advanced == Fenced::Written(()) {
            self.held.resume_from = RecoveryPoint::ResourceCreated;
            self.held.resource_id = Some(resource_id.to_string());
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
            Ok(stored) => write(&self.held.fence, &stored).await,
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
        tracing::warn!(
            generation = self.held.fence.generation,
            "lost the idempotency key to a newer holder; not writing"
        );
        self.keys.settled(call, &self.held.fence.scope).await
    }

    /// A step failed (the store, or the provider in a way no retry mends): drops the lease so a
    /// retry resumes, and answers `INTERNAL_ERROR` (`e` goes to the log only).
    pub async fn fail(self, call: &CallContext, e: &(dyn std::fmt::Display + Sync)) -> ToolError {
        self.release().await;
        crate::error::internal(call, e)
    }

    /// Drops the lease after a transient failure, keeping the recovery point for the retry.
    pub async fn release(self) {
        self.keys.release(&self.held.fence).await;
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
