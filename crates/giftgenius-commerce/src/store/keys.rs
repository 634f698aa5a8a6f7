//! Idempotency keys: who holds a key and how far its call got, and the fenced write that moves
//! a key together with the work it records.
//!
//! A key's `generation` is its fencing token (see `sql.rs`): every write by a holder names the
//! generation it holds, so a holder whose lease was taken over writes nothing. A store step
//! that does work *and* moves the key is a [`fenced_write!`]: the transaction, the key's move,
//! the stale check and the commit are written here once, and the step brings only its own
//! statements.

use super::rows::{KeyRow, OrderStatusColumn, RecoveryPoint};
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

/// Moves the key held by `$fence` (`$move`, a [`KeyMove`]) on `$executor` (a pool, or a
/// transaction with the work the move records); evaluates to the rows written (0: stale).
macro_rules! move_key {
    ($executor:expr, $fence:expr, $move:expr, $now_ms:expr) => {{
        use $crate::store::{RecoveryPoint, sql};
        let fence: &$crate::store::Fence = $fence;
        let now_ms: i64 = $now_ms;
        let query = match $move {
            $crate::store::keys::KeyMove::Advance { resource_id } => scoped!(sql::ADVANCE_KEY, fence.scope)
                .bind(resource_id)
                .bind(now_ms)
                .bind(RecoveryPoint::ResourceCreated)
                .bind(fence.generation),
            $crate::store::keys::KeyMove::AdvanceStarted { resource_id } => {
                scoped!(sql::ADVANCE_STARTED_KEY, fence.scope)
                    .bind(resource_id)
                    .bind(now_ms)
                    .bind(RecoveryPoint::ResourceCreated)
                    .bind(fence.generation)
                    .bind(RecoveryPoint::Started)
            }
            $crate::store::keys::KeyMove::Finish { response } => scoped!(sql::FINISH_KEY, fence.scope)
                .bind(response)
                .bind(now_ms)
                .bind(RecoveryPoint::Finished)
                .bind(fence.generation),
            $crate::store::keys::KeyMove::Hold => {
                scoped!(sql::TOUCH_KEY, fence.scope).bind(now_ms).bind(RecoveryPoint::Finished).bind(fence.generation)
            }
            $crate::store::keys::KeyMove::Release => {
                scoped!(sql::RELEASE_KEY, fence.scope).bind(now_ms).bind(RecoveryPoint::Finished).bind(fence.generation)
            }
        };
        query.execute($executor).await.map(|done| done.rows_affected())
    }};
}

/// What the statements of a fenced write decided.
#[derive(Debug)]
pub(super) enum Write<T> {
    /// Keep everything (the key's move and the statements) and report `T`.
    Commit(T),
    /// Keep nothing, and report `T`: an answer found without writing (out of stock, not paid).
    Rollback(T),
}

/// The fenced write every keyed step makes, written once: opens the write transaction (taking
/// `$lock`), moves the key held by `$fence` (`$move`, a [`KeyMove`]), and if the key has a newer
/// holder rolls back and evaluates to `Ok(Fenced::Stale)`; otherwise runs `$write`, the step's
/// own statements on `$tx`, and commits or rolls back as its [`Write`] says, evaluating to
/// `Ok(Fenced::Written(_))`.
///
/// For use inside `on_pool!`. `$write` is a block that evaluates to a `Write`; a `?` in it leaves
/// the enclosing method with the error, and the dropped transaction rolls everything back.
macro_rules! fenced_write {
    ($pool:ident, $lock:expr, $fence:expr, $move:expr, $now_ms:expr, |$tx:ident| $write:block) => {{
        use $crate::store::dialect::Dialect as _;
        let mut $tx = $pool.begin_write($lock).await?;
        if move_key!(&mut *$tx, $fence, $move, $now_ms)? != 1 {
            $tx.rollback().await?;
            Ok($crate::store::Fenced::Stale)
        } else {
            let written = $write;
            match written {
                $crate::store::keys::Write::Commit(value) => {
                    $tx.commit().await?;
                    Ok($crate::store::Fenced::Written(value))
                }
                $crate::store::keys::Write::Rollback(value) => {
                    $tx.rollback().await?;
                    Ok($crate::store::Fenced::Written(value))
                }
            }
        }
    }};
}

/// Finishes every unfinished commit_order key pointing at the order, bumping generations (the
/// reconciler, which holds no key); evaluates to the rows written.
macro_rules! finish_keys_of_order {
    ($executor:expr, $order_id:expr, $response:expr, $now_ms:expr) => {
        sqlx::query($crate::store::sql::FINISH_KEYS_OF_ORDER)
            .bind($order_id)
            .bind($response)
            .bind($now_ms)
            .bind(giftgenius_types::ToolName::CommitOrder.as_str())
            .bind($crate::store::RecoveryPoint::Finished)
            .execute($executor)
            .await?
    };
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
        on_pool!(self, |pool| {
            let moved = move_key!(pool, fence, step, now_ms)?;
            Ok(if moved == 1 { Fenced::Written(()) } else { Fenced::Stale })
        })
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
