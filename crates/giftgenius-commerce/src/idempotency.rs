//! Idempotency keys, transport-neutral: one claim for every way in (the MCP tools, ACP's REST
//! and MCP binding), after Stripe and the IETF Idempotency-Key draft. Nothing here knows what
//! a call does or how its answer travels; a key only records how far its call got and, once
//! finished, the answer as its transport stored it.
//!
//! - Scope: (subject, tool, key) — an account and a tool, or `acp:<platform>` and an ACP
//!   operation. Two callers never see each other's answers.
//! - [`Idempotency::claim`] says what a call should do: [`Claimed::Proceed`] under a fenced
//!   lease ([`Held`]), [`Claimed::Replay`] a finished call's stored answer, [`Claimed::Conflict`]
//!   (the key was used with other arguments) or [`Claimed::InFlight`] (the first call still
//!   holds it: come back in N ms rather than wait, since a duplicate is nearly always a retry
//!   whose first answer was lost). A lease that ran out (a process that died mid-call) is taken
//!   over: the retry gets a new generation and resumes from the recorded recovery point.
//! - Leases are fenced: every claim or take-over gives the key a new generation and every write
//!   names its holder's. A holder that lost the key writes nothing; it answers from
//!   [`Idempotency::now`], what the key says now.
//! - Transports map the four outcomes to their own errors: `checkout::idempotency` (the tools:
//!   `IDEMPOTENCY_KEY_REUSED`, `REQUEST_IN_PROGRESS` with `retry_after_ms`, stored envelopes)
//!   and `acp::routes` (422 `idempotency_conflict`, 409 `idempotency_in_flight` with
//!   `Retry-After`, stored status and body). Keys are kept for the retention, at least 24 h.

use std::time::Duration;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use crate::clock::Clock;
use crate::store::{Claim, Fence, Fenced, RecoveryPoint, Scope, Store, StoreError, StoreResult};

/// How long a retry is told to wait when another retry took an expired lease first.
const RACED_RETRY_MS: u64 = 100;

/// Leases and retention for idempotency keys, and where their claims are counted.
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

/// What a call with a key should do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claimed {
    /// Do the work: this caller holds the key's lease.
    Proceed(Held),
    /// The call finished: answer with its stored answer (as its transport stored it).
    Replay(String),
    /// The key was used with other arguments: refuse, never replay something else.
    Conflict,
    /// Another holder's lease still runs: retry after this long.
    InFlight { retry_after_ms: u64 },
}

/// A claimed key: the fence every write names, when the lease runs out, and where an earlier
/// holder got to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub fence: Fence,
    pub until_ms: i64,
    /// `Started` for a new key; a take-over resumes from the previous holder's point.
    pub resume_from: RecoveryPoint,
    /// The resource an earlier holder created, when resuming from `ResourceCreated`.
    pub resource_id: Option<String>,
}

/// What a key says now, for a holder whose write was refused (and who must not act on what it
/// knew).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyNow {
    /// Finished: its stored answer.
    Finished(String),
    /// Not finished: a retry may come back after this long (0 when no lease runs).
    InFlight { retry_after_ms: u64 },
}

impl Idempotency {
    /// Claims `scope` for a call whose arguments have `fingerprint`, and counts what the claim
    /// found under the scope's tool.
    pub async fn claim(&self, scope: Scope, fingerprint: &str) -> StoreResult<Claimed> {
        let tool = scope.tool;
        let claimed = self.claim_uncounted(scope, fingerprint).await?;
        let outcome = match &claimed {
            Claimed::Proceed(held) if held.fence.generation == 1 => KeyOutcome::New,
            Claimed::Proceed(_) => KeyOutcome::TakenOver,
            Claimed::Replay(_) => KeyOutcome::Replayed,
            Claimed::Conflict => KeyOutcome::Reused,
            Claimed::InFlight { .. } => KeyOutcome::InProgress,
        };
        self.metrics.claimed(tool, outcome);
        Ok(claimed)
    }

    async fn claim_uncounted(&self, scope: Scope, fingerprint: &str) -> StoreResult<Claimed> {
        let now = self.clock.now_ms();
        let until_ms = now.saturating_add(self.lease.as_millis() as i64);
        let row = match self.store.claim_key(&scope, fingerprint, until_ms, now).await? {
            Claim::New => {
                let fence = Fence { scope, generation: 1 };
                return Ok(Claimed::Proceed(Held {
                    fence,
                    until_ms,
                    resume_from: RecoveryPoint::Started,
                    resource_id: None,
                }));
            }
            Claim::Existing(row) => row,
        };
        if row.fingerprint != fingerprint {
            return Ok(Claimed::Conflict);
        }
        if row.recovery_point == RecoveryPoint::Finished {
            return Ok(Claimed::Replay(row.response.ok_or_else(unanswered)?));
        }
        if let Some(locked_until) = row.locked_until_ms.filter(|&t| t > now) {
            return Ok(Claimed::InFlight { retry_after_ms: (locked_until - now) as u64 });
        }
        if self.store.take_over_key(&scope, row.generation, until_ms, now).await? {
            tracing::info!(
                point = row.recovery_point.as_str(),
                generation = row.generation + 1,
                "resuming a keyed call"
            );
            let fence = Fence { scope, generation: row.generation + 1 };
            Ok(Claimed::Proceed(Held {
                fence,
                until_ms,
                resume_from: row.recovery_point,
                resource_id: row.resource_id,
            }))
        } else {
            // Another retry took it over between the read and the write.
            Ok(Claimed::InFlight { retry_after_ms: RACED_RETRY_MS })
        }
    }

    /// What `scope` says now: its stored answer once finished, else how long its lease runs.
    pub async fn now(&self, scope: &Scope) -> StoreResult<KeyNow> {
        let row = self.store.key(scope).await?;
        match row {
            Some(row) if row.recovery_point == RecoveryPoint::Finished => {
                Ok(KeyNow::Finished(row.response.ok_or_else(unanswered)?))
            }
            row => {
                let now = self.clock.now_ms();
                let left = row.and_then(|r| r.locked_until_ms).map_or(0, |t| (t - now).max(0) as u64);
                Ok(KeyNow::InFlight { retry_after_ms: left })
            }
        }
    }

    /// The stored answer of `scope` if it finished a call with this `fingerprint`: read only,
    /// for a late retry that may start nothing new but still gets what happened.
    pub async fn finished_answer(&self, scope: &Scope, fingerprint: &str) -> StoreResult<Option<String>> {
        match self.store.key(scope).await? {
            Some(row) if row.recovery_point == RecoveryPoint::Finished && row.fingerprint == fingerprint => {
                Ok(Some(row.response.ok_or_else(unanswered)?))
            }
            _ => Ok(None),
        }
    }

    /// Ends the lease `fence` holds, keeping the recovery point for the retry. A holder that
    /// lost the key releases nothing (it would free the new holder's lease), and a finished key
    /// stays finished. A failure is logged: the lease then simply runs out.
    pub async fn release(&self, fence: &Fence) {
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

/// What claiming a key found (the `outcome` label of `giftgenius_idempotency_keys`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyOutcome {
    /// A key never seen: the call runs.
    New,
    /// A finished call: its stored answer is replayed.
    Replayed,
    /// A call whose lease ran out (its process died or stalled): this retry resumes it.
    TakenOver,
    /// The first call still holds the key: REQUEST_IN_PROGRESS (409 over ACP).
    InProgress,
    /// The key was used with other arguments: IDEMPOTENCY_KEY_REUSED (422 over ACP).
    Reused,
}

impl KeyOutcome {
    /// The label value.
    pub const fn as_str(self) -> &'static str {
        match self {
            KeyOutcome::New => "new",
            KeyOutcome::Replayed => "replayed",
            KeyOutcome::TakenOver => "taken_over",
            KeyOutcome::InProgress => "in_progress",
            KeyOutcome::Reused => "reused",
        }
    }
}

impl EncodeLabelValue for KeyOutcome {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> std::fmt::Result {
        std::fmt::Write::write_str(encoder, self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct KeyLabels {
    tool: &'static str,
    outcome: KeyOutcome,
}

/// Key claims by the key's tool and what the claim found: replays (a finished call answered
/// again), take-overs (a lease that ran out, its call resumed by a retry), calls still in
/// flight, keys reused with other arguments, and new keys. `tool` is the key's scope: a tool's
/// name or an ACP operation, both fixed in code. Cheap to clone; a default one counts into no
/// registry.
#[derive(Debug, Clone, Default)]
pub struct IdempotencyMetrics {
    keys: Family<KeyLabels, Counter>,
}

impl IdempotencyMetrics {
    /// Adds the counter to `/metrics` (`metrics::Metrics::new`).
    pub fn register(&self, registry: &mut Registry) {
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

/// A finished key must hold its answer.
fn unanswered() -> StoreError {
    StoreError::Inconsistent("finished key without an answer".into())
}
