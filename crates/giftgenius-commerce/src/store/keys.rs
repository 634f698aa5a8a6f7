//! Idempotency keys: who holds a key and how far its call got, and the fenced write that moves
//! a key together with the work it records.
//!
//! A key's `generation` is its fencing token (see `sql.rs`): every write by a holder names the
//! generation it holds, so a holder whose lease was taken over writes nothing. A store step
//! that does work *and* moves the key is a [`Store::fenced`] write (`tx.rs`): the transaction,
//! the key's move ([`move_key`]), the stale check and the commit are written once, and the step
//! brings only its own statements.

use super::rows::{KeyRow, OrderStatusColumn, RecoveryPoint};
use super::tx::Conn;
use super::{Store, StoreResult, sql};

/// Who may see a key, and which tool and key a call is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub subject: String,
    pub tool: &'static str,
    pub key: String,
}

/// A key as one holder holds it: its scope and the generation (fencing token) the holder got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    pub scope: Scope,
    pub generation: i64,
}

/// The outcome of a write guarded by a [`Fence`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use]
pub enum Fenced<T = ()> {
    /// Written: the holder still held the key.
    Written(T),
    /// Nothing written: the key was taken over (or finished) by someone else since. The holder
    /// must read the key again rather than act on what it knew.
    Stale,
}

impl<T> Fenced<T> {
    /// What was written, as `f` makes it; a stale write stays stale.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Fenced<U> {
        match self {
            Fenced::Written(value) => Fenced::Written(f(value)),
            Fenced::Stale => Fenced::Stale,
        }
    }
}

/// The outcome of claiming an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// First use of the key: the caller holds its lease.
    New,
    /// The key exists; the caller decides (replay, in progress, take over, reused).
    Existing(KeyRow),
}

/// How a holder moves its key; every move names the holder's generation and writes nothing
/// if the key has a newer one.
#[derive(Debug, Clone, Copy)]
pub(super) enum KeyMove<'a> {
    /// The key points at the resource the call created (`ResourceCreated`).
    Advance { resource_id: &'a str },
    /// Like `Advance`, but only for a key that has just started (its resource was created
    /// under another key).
    AdvanceStarted { resource_id: &'a str },
    /// The call is over: the key keeps `response` as its answer and its lease ends.
    Finish { response: &'a str },
    /// Nothing moves: the write only proves the holder still holds the key.
    Hold,
    /// The lease ends after a transient failure; the recovery point stays for the retry.
    Release,
}

/// Moves the key held by `fence` (`key_move`) on `conn` (a transaction's, with the work the
/// move records, or the pool's); false if the key has a newer holder (nothing moved).
pub(super) async fn move_key(conn: Conn<'_>, fence: &Fence, key_move: KeyMove<'_>, now_ms: i64) -> StoreResult<bool> {
    on_conn!(conn, |c| {
        let query = match key_move {
            KeyMove::Advance { resource_id } => scoped!(sql::ADVANCE_KEY, fence.scope)
                .bind(resource_id)
                .bind(now_ms)
                .bind(RecoveryPoint::ResourceCreated)
                .bind(fence.generation),
            KeyMove::AdvanceStarted { resource_id } => scoped!(sql::ADVANCE_STARTED_KEY, fence.scope)
                .bind(resource_id)
                .bind(now_ms)
                .bind(RecoveryPoint::ResourceCreated)
                .bind(fence.generation)
                .bind(RecoveryPoint::Started),
            KeyMove::Finish { response } => scoped!(sql::FINISH_KEY, fence.scope)
                .bind(response)
                .bind(now_ms)
                .bind(RecoveryPoint::Finished)
                .bind(fence.generation),
            KeyMove::Hold => {
                scoped!(sql::TOUCH_KEY, fence.scope).bind(now_ms).bind(RecoveryPoint::Finished).bind(fence.generation)
            }
            KeyMove::Release => {
                scoped!(sql::RELEASE_KEY, fence.scope).bind(now_ms).bind(RecoveryPoint::Finished).bind(fence.generation)
            }
        };
        Ok(query.execute(&mut *c).await?.rows_affected() == 1)
    })
}

/// What the statements of a fenced write decided.
#[derive(Debug)]
pub(super) enum Write<T> {
    /// Keep everything (the key's move and the statements) and report `T`.
    Commit(T),
    /// Keep nothing, and report `T`: an answer found without writing (out of stock, not paid).
    Rollback(T),
}

/// Finishes every unfinished commit_order key pointing at order `order_id` with `response`,
/// bumping their generations (their holders' writes are refused from then on); the rows written.
pub(super) async fn finish_keys_of_order(
    conn: Conn<'_>,
    order_id: &str,
    response: &str,
    now_ms: i64,
) -> StoreResult<u64> {
    on_conn!(conn, |c| {
        Ok(sqlx::query(sql::FINISH_KEYS_OF_ORDER)
            .bind(order_id)
            .bind(response)
            .bind(now_ms)
            .bind(giftgenius_types::ToolName::CommitOrder.as_str())
            .bind(RecoveryPoint::Finished)
            .execute(&mut *c)
            .await?
            .rows_affected())
    })
}

impl Store {
    /// Claims `scope` with `fingerprint` and a lease until `lease_until_ms`, or reports what is there.
    #[tracing::instrument(name = "store.claim_key", skip_all, fields(otel.kind = "client", db.operation.name = "claim_key"))]
    pub async fn claim_key(
        &self,
        scope: &Scope,
        fingerprint: &str,
        lease_until_ms: i64,
        now_ms: i64,
    ) -> StoreResult<Claim> {
        on_pool!(self, |pool| {
            let inserted = scoped!(sql::INSERT_KEY, scope)
                .bind(fingerprint)
                .bind(RecoveryPoint::Started)
                .bind(lease_until_ms)
                .bind(now_ms)
                .execute(pool)
                .await?
                .rows_affected();
            if inserted == 1 {
                return Ok(Claim::New);
            }
            let key =
                sqlx::query_as(sql::KEY).bind(&scope.subject).bind(scope.tool).bind(&scope.key).fetch_one(pool).await?;
            Ok(Claim::Existing(key))
        })
    }

    /// The key as stored (a holder whose write was refused reads it again).
    #[tracing::instrument(name = "store.key", skip_all, fields(otel.kind = "client", db.operation.name = "key"))]
    pub async fn key(&self, scope: &Scope) -> StoreResult<Option<KeyRow>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::KEY)
                .bind(&scope.subject)
                .bind(scope.tool)
                .bind(&scope.key)
                .fetch_optional(pool)
                .await?)
        })
    }

    /// Takes over a key whose lease ran out or was released, if its generation is still
    /// `generation`; the new holder's generation is `generation + 1`. True if we got it.
    #[tracing::instrument(name = "store.take_over_key", skip_all, fields(otel.kind = "client", db.operation.name = "take_over_key"))]
    pub async fn take_over_key(
        &self,
        scope: &Scope,
        generation: i64,
        lease_until_ms: i64,
        now_ms: i64,
    ) -> StoreResult<bool> {
        on_pool!(self, |pool| {
            let updated = scoped!(sql::TAKE_OVER_KEY, scope)
                .bind(lease_until_ms)
                .bind(now_ms)
                .bind(generation)
                .bind(RecoveryPoint::Finished)
                .execute(pool)
                .await?
                .rows_affected();
            Ok(updated == 1)
        })
    }

    /// Moves the key held by `fence` on its own (no work in the same transaction).
    async fn move_key(&self, fence: &Fence, step: KeyMove<'_>, now_ms: i64) -> StoreResult<Fenced> {
        let moved = move_key(self.acquire().await?.conn(), fence, step, now_ms).await?;
        Ok(if moved { Fenced::Written(()) } else { Fenced::Stale })
    }

    /// Drops the lease after a transient failure, keeping the recovery point for the retry.
    #[tracing::instrument(name = "store.release_key", skip_all, fields(otel.kind = "client", db.operation.name = "release_key"))]
    pub async fn release_key(&self, fence: &Fence, now_ms: i64) -> StoreResult<Fenced> {
        self.move_key(fence, KeyMove::Release, now_ms).await
    }

    /// Stores the final answer (success or definitive failure) and ends the lease.
    #[tracing::instrument(name = "store.finish_key", skip_all, fields(otel.kind = "client", db.operation.name = "finish_key"))]
    pub async fn finish_key(&self, fence: &Fence, response: &str, now_ms: i64) -> StoreResult<Fenced> {
        self.move_key(fence, KeyMove::Finish { response }, now_ms).await
    }

    /// Points a key that has only started at an existing resource (`ResourceCreated`).
    #[tracing::instrument(name = "store.advance_started_key", skip_all, fields(otel.kind = "client", db.operation.name = "advance_started_key"))]
    pub async fn advance_started_key(&self, fence: &Fence, resource_id: &str, now_ms: i64) -> StoreResult<Fenced> {
        self.move_key(fence, KeyMove::AdvanceStarted { resource_id }, now_ms).await
    }

    /// Deletes keys created before `created_before_ms` that are not in progress and do not
    /// point at a pending order; returns how many.
    #[tracing::instrument(name = "store.prune_keys", skip_all, fields(otel.kind = "client", db.operation.name = "prune_keys"))]
    pub async fn prune_keys(&self, created_before_ms: i64, now_ms: i64) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::PRUNE_KEYS)
                .bind(created_before_ms)
                .bind(now_ms)
                .bind(OrderStatusColumn::PendingPayment)
                .execute(pool)
                .await?
                .rows_affected())
        })
    }
}
