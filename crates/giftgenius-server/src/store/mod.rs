//! Persistence: one implementation over SQLite (the embedded default) or PostgreSQL (several
//! replicas behind a load balancer), so the tools never know which database they run on.
//!
//! - `sql.rs`: the statements, shared by both databases.
//! - `dialect.rs`: what differs (opening, the write-transaction lock).
//! - `rows.rs`: row types, and the enums that closed-set text columns decode into.
//!
//! Every method is one atomic step. Multi-step flows (`checkout::idempotency`,
//! `checkout::commit`) are built from these steps and recorded as recovery points, so a crash
//! between two steps leaves the database in a state the next retry can resume from. Each
//! method body is written once and compiled for both pools by `on_pool!`.

mod dialect;
pub mod rows;
mod sql;

use sqlx::{PgPool, SqlitePool};

use dialect::{Dialect, WriteLock};
pub use rows::{
    CheckoutRow, CurrencyColumn, DraftRow, KeyRow, OrderRow, OrderStatusColumn, RecoveryPoint, RefundRow,
    RefundStatusColumn, ShippingColumn, Usage,
};
pub use sql::ERASED_SUBJECT;

/// A database failure. The text is for the log only; clients get `INTERNAL_ERROR`.
#[derive(Debug)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError(e.to_string())
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

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

/// Whether a charge request may go to the provider for an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargeStart {
    /// The order is pending and now marked as charging until the given time.
    Ready,
    /// The order is no longer pending (paid or declined meanwhile): read it instead.
    Settled,
}

/// The outcome of claiming an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// First use of the key: the caller holds its lease.
    New,
    /// The key exists; the caller decides (replay, in progress, take over, reused).
    Existing(KeyRow),
}

/// The outcome of recording the refund of an order that is being cancelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BeginRefund {
    /// The refund is recorded as pending (now, or earlier under another key): ask the provider.
    Ready(RefundRow),
    /// The order is no longer paid (cancelled meanwhile under another key, or never paid).
    NotPaid(Box<OrderRow>),
}

/// What deleting one account's data did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Deleted {
    pub saved_addresses: u64,
    pub drafts: u64,
    pub idempotency_keys: u64,
    pub checkout_sessions: u64,
    pub orders_anonymized: u64,
    pub refunds_anonymized: u64,
}

/// What one retention pass removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Retained {
    pub orders_anonymized: u64,
    pub orders_deleted: u64,
    pub refunds_deleted: u64,
    pub saved_addresses_deleted: u64,
}

/// The outcome of creating the order row for a draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateOrder {
    Created,
    /// Not enough stock left for this quantity.
    OutOfStock,
    /// The draft already has a live order (placed under another key).
    DraftAlreadyOrdered(Box<OrderRow>),
}

#[derive(Debug, Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// The store. Cheap to clone (the pool is shared).
#[derive(Debug, Clone)]
pub struct Store {
    pool: Pool,
}

/// Runs `$body` with `$pool` bound to whichever pool the store has: the body is written once
/// and type-checked for each database.
macro_rules! on_pool {
    ($store:expr, |$pool:ident| $body:expr) => {
        match &$store.pool {
            Pool::Sqlite($pool) => $body,
            Pool::Postgres($pool) => $body,
        }
    };
}

/// A query with its first three parameters bound to the key's scope `(subject, tool, key)`.
macro_rules! scoped {
    ($sql:expr, $scope:expr) => {
        sqlx::query($sql).bind(&$scope.subject).bind($scope.tool).bind(&$scope.key)
    };
}

/// Finishes the key held by `$fence` with `$response`, inside a transaction together with the
/// work the answer reports; evaluates to the rows written (0: the fence is stale).
macro_rules! finish_key {
    ($executor:expr, $fence:expr, $response:expr, $now_ms:expr) => {
        scoped!(sql::FINISH_KEY, $fence.scope)
            .bind($response)
            .bind($now_ms)
            .bind(RecoveryPoint::Finished)
            .bind($fence.generation)
            .execute($executor)
            .await
            .map(|done| done.rows_affected())
    };
}

/// Finishes every unfinished commit_order key pointing at the order, bumping generations.
macro_rules! finish_keys_of_order {
    ($executor:expr, $order_id:expr, $response:expr, $now_ms:expr) => {
        sqlx::query(sql::FINISH_KEYS_OF_ORDER)
            .bind($order_id)
            .bind($response)
            .bind($now_ms)
            .bind(giftgenius_types::ToolName::CommitOrder.as_str())
            .bind(RecoveryPoint::Finished)
            .execute($executor)
            .await?
    };
}

/// Marks order `$order_id`'s refund succeeded as `$refund_id` and the order cancelled, in `$tx`;
/// an error (and the transaction rolled back) if either is in another state.
macro_rules! settle_refund_in {
    ($tx:expr, $order_id:expr, $refund_id:expr, $now_ms:expr) => {
        let refunded = sqlx::query(sql::SETTLE_REFUND)
            .bind($order_id)
            .bind(RefundStatusColumn::Succeeded)
            .bind($refund_id)
            .bind(RefundStatusColumn::Pending)
            .bind($now_ms)
            .execute($tx)
            .await?
            .rows_affected();
        let cancelled = sqlx::query(sql::CANCEL_ORDER)
            .bind($order_id)
            .bind(OrderStatusColumn::Cancelled)
            .bind(OrderStatusColumn::Paid)
            .bind($now_ms)
            .execute($tx)
            .await?
            .rows_affected();
        if refunded != 1 || cancelled != 1 {
            return Err(StoreError(format!(
                "order {} was refunded ({}) but its refund or status did not match",
                $order_id, $refund_id
            )));
        }
    };
}

/// Deletes `$subject`'s personal data in `$tx` (see [`Store::delete_personal_data`]); evaluates
/// to what was deleted.
macro_rules! delete_personal_data_in {
    ($tx:ident, $subject:expr, $now_ms:expr) => {{
        let saved_addresses =
            sqlx::query(sql::DELETE_SAVED_ADDRESS).bind($subject).execute(&mut *$tx).await?.rows_affected();
        let drafts = sqlx::query(sql::DELETE_DRAFTS_OF)
            .bind($subject)
            .bind(OrderStatusColumn::PendingPayment)
            .execute(&mut *$tx)
            .await?
            .rows_affected();
        let idempotency_keys = sqlx::query(sql::DELETE_KEYS_OF)
            .bind($subject)
            .bind($now_ms)
            .bind(OrderStatusColumn::PendingPayment)
            .execute(&mut *$tx)
            .await?
            .rows_affected();
        let checkout_sessions =
            sqlx::query(sql::DELETE_CHECKOUTS_OF).bind($subject).execute(&mut *$tx).await?.rows_affected();
        let orders_anonymized = sqlx::query(sql::ANONYMIZE_ORDERS_OF)
            .bind($subject)
            .bind(ERASED_SUBJECT)
            .bind($now_ms)
            .bind(OrderStatusColumn::PendingPayment)
            .execute(&mut *$tx)
            .await?
            .rows_affected();
        let refunds_anonymized = sqlx::query(sql::ANONYMIZE_REFUNDS_OF)
            .bind($subject)
            .bind(ERASED_SUBJECT)
            .execute(&mut *$tx)
            .await?
            .rows_affected();
        Deleted { saved_addresses, drafts, idempotency_keys, checkout_sessions, orders_anonymized, refunds_anonymized }
    }};
}

/// Rolls `$tx` back and returns `Fenced::Stale` unless `$written` (rows) is 1.
macro_rules! or_stale {
    ($tx:expr, $written:expr) => {
        if $written != 1 {
            $tx.rollback().await?;
            return Ok(Fenced::Stale);
        }
    };
}

impl Store {
    /// Opens the store named by `--db`: a `postgres://` URL, or else a SQLite file path.
    pub async fn connect(db: &str) -> StoreResult<Self> {
        let pool = if db.starts_with("postgres://") || db.starts_with("postgresql://") {
            Pool::Postgres(dialect::open_postgres(db).await?)
        } else {
            Pool::Sqlite(dialect::open_sqlite(db).await?)
        };
        Ok(Self { pool })
    }

    /// How durable a commit is, as the database itself reports it (logged at startup, printed
    /// by the benchmarks): SQLite's `synchronous` level, PostgreSQL's `synchronous_commit` and
    /// `fsync`.
    pub async fn durability(&self) -> StoreResult<String> {
        match &self.pool {
            Pool::Sqlite(pool) => {
                let level: i64 = sqlx::query_scalar("PRAGMA synchronous").fetch_one(pool).await?;
                let name = ["OFF", "NORMAL", "FULL", "EXTRA"].get(level as usize).copied().unwrap_or("?");
                Ok(format!("sqlite synchronous={name}"))
            }
            Pool::Postgres(pool) => {
                let commit: String = sqlx::query_scalar("SHOW synchronous_commit").fetch_one(pool).await?;
                let fsync: String = sqlx::query_scalar("SHOW fsync").fetch_one(pool).await?;
                Ok(format!("postgres synchronous_commit={commit} fsync={fsync}"))
            }
        }
    }

    /// A named secret, created with `generated` on first use and shared by every replica.
    pub async fn secret(&self, name: &str, generated: String) -> StoreResult<String> {
        on_pool!(self, |pool| {
            sqlx::query(sql::INSERT_SECRET).bind(name).bind(&generated).execute(pool).await?;
            Ok(sqlx::query_scalar(sql::SECRET).bind(name).fetch_one(pool).await?)
        })
    }

    // --- drafts ---

    /// The active, unexpired draft for `(subject, draft_key)`, or `new` inserted as that draft.
    pub async fn draft_for_request(&self, new: &DraftRow, now_ms: i64) -> StoreResult<DraftRow> {
        let lock = WriteLock::DraftRequest { subject: &new.subject, draft_key: &new.draft_key };
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(lock).await?;
            sqlx::query(sql::EXPIRE_ACTIVE_DRAFT)
                .bind(&new.subject)
                .bind(&new.draft_key)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
            sqlx::query(sql::INSERT_DRAFT)
                .bind(&new.id)
                .bind(&new.subject)
                .bind(&new.draft_key)
                .bind(&new.gift_id)
                .bind(new.quantity)
                .bind(new.shipping)
                .bind(new.currency)
                .bind(new.subtotal_minor)
                .bind(new.shipping_minor)
                .bind(new.total_minor)
                .bind(new.created_at_ms)
                .bind(new.expires_at_ms)
                .bind(&new.delivery)
                .execute(&mut *tx)
                .await?;
            let draft =
                sqlx::query_as(sql::ACTIVE_DRAFT).bind(&new.subject).bind(&new.draft_key).fetch_one(&mut *tx).await?;
            tx.commit().await?;
            Ok(draft)
        })
    }

    /// Deletes drafts that expired before `expired_before_ms` (not one a pending order
    /// points at); returns how many.
    pub async fn prune_drafts(&self, expired_before_ms: i64) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::PRUNE_DRAFTS).bind(expired_before_ms).execute(pool).await?.rows_affected())
        })
    }

    pub async fn draft(&self, subject: &str, id: &str) -> StoreResult<Option<DraftRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::DRAFT).bind(id).bind(subject).fetch_optional(pool).await?))
    }

    // --- idempotency keys ---

    /// Claims `scope` with `fingerprint` and a lease until `lease_until_ms`, or reports what is there.
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

    /// Drops the lease after a transient failure, keeping the recovery point for the retry.
    pub async fn release_key(&self, fence: &Fence, now_ms: i64) -> StoreResult<Fenced> {
        on_pool!(self, |pool| {
            let released = scoped!(sql::RELEASE_KEY, fence.scope)
                .bind(now_ms)
                .bind(RecoveryPoint::Finished)
                .bind(fence.generation)
                .execute(pool)
                .await?
                .rows_affected();
            Ok(if released == 1 { Fenced::Written(()) } else { Fenced::Stale })
        })
    }

    /// Stores the final answer (success or definitive failure) and ends the lease.
    pub async fn finish_key(&self, fence: &Fence, response: &str, now_ms: i64) -> StoreResult<Fenced> {
        on_pool!(self, |pool| {
            let finished = finish_key!(pool, fence, response, now_ms)?;
            Ok(if finished == 1 { Fenced::Written(()) } else { Fenced::Stale })
        })
    }

    /// Points a key that has only started at an existing resource (`ResourceCreated`).
    pub async fn advance_started_key(&self, fence: &Fence, resource_id: &str, now_ms: i64) -> StoreResult<Fenced> {
        on_pool!(self, |pool| {
            let advanced = scoped!(sql::ADVANCE_STARTED_KEY, fence.scope)
                .bind(resource_id)
                .bind(now_ms)
                .bind(RecoveryPoint::ResourceCreated)
                .bind(fence.generation)
                .bind(RecoveryPoint::Started)
                .execute(pool)
                .await?
                .rows_affected();
            Ok(if advanced == 1 { Fenced::Written(()) } else { Fenced::Stale })
        })
    }

    /// Deletes keys created before `created_before_ms` that are not in progress and do not
    /// point at a pending order; returns how many.
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

    // --- orders ---

    /// In one transaction: check stock (`stock` minus units in live orders), insert `order` as
    /// pending payment and advance the key to `ResourceCreated` with the order's id (nothing
    /// at all if the fence is stale).
    pub async fn create_order(
        &self,
        fence: &Fence,
        order: &OrderRow,
        stock: i64,
        now_ms: i64,
    ) -> StoreResult<Fenced<CreateOrder>> {
        // The stock check and the insert must not interleave with another replica's for the same
        // gift. A draft is for one gift, so this also serializes orders for the same draft; the
        // unique index `orders_one_live_per_draft` stays the last line of defence.
        let lock = WriteLock::GiftStock { gift_id: &order.gift_id };
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(lock).await?;
            let live: Option<OrderRow> = sqlx::query_as(sql::LIVE_ORDER_FOR_DRAFT)
                .bind(&order.draft_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .fetch_optional(&mut *tx)
                .await?;
            if let Some(existing) = live {
                tx.rollback().await?;
                return Ok(Fenced::Written(CreateOrder::DraftAlreadyOrdered(Box::new(existing))));
            }
            let sold: i64 = sqlx::query_scalar(sql::LIVE_UNITS)
                .bind(&order.gift_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .bind(OrderStatusColumn::Cancelled)
                .fetch_one(&mut *tx)
                .await?;
            if sold + order.quantity > stock {
                tx.rollback().await?;
                return Ok(Fenced::Written(CreateOrder::OutOfStock));
            }
            let inserted = sqlx::query(sql::INSERT_ORDER)
                .bind(&order.id)
                .bind(&order.subject)
                .bind(&order.draft_id)
                .bind(&order.gift_id)
                .bind(&order.gift_title)
                .bind(&order.merchant)
                .bind(order.quantity)
                .bind(order.currency)
                .bind(order.total_minor)
                .bind(OrderStatusColumn::PendingPayment)
                .bind(now_ms)
                .bind(&order.delivery)
                .bind(&order.destination_city)
                .bind(&order.destination_country)
                .execute(&mut *tx)
                .await;
            match inserted {
                Ok(_) => {}
                // Cannot happen while every writer holds the lock above; if it ever does, the
                // other order won and this call reports it like the check above would have.
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                    tx.rollback().await?;
                    return match self.live_order_for_draft(&order.draft_id).await? {
                        Some(existing) => Ok(Fenced::Written(CreateOrder::DraftAlreadyOrdered(Box::new(existing)))),
                        None => Err(StoreError(format!("order {} conflicted: {e}", order.id))),
                    };
                }
                Err(e) => return Err(e.into()),
            }
            let advanced = scoped!(sql::ADVANCE_KEY, fence.scope)
                .bind(&order.id)
                .bind(now_ms)
                .bind(RecoveryPoint::ResourceCreated)
                .bind(fence.generation)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            or_stale!(tx, advanced);
            tx.commit().await?;
            Ok(Fenced::Written(CreateOrder::Created))
        })
    }

    /// `subject`'s order `id`.
    pub async fn order(&self, subject: &str, id: &str) -> StoreResult<Option<OrderRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::ORDER).bind(id).bind(subject).fetch_optional(pool).await?))
    }

    /// Up to `limit` of `subject`'s orders older than `before` in (created_at_ms, id) order,
    /// newest first.
    pub async fn orders_of(&self, subject: &str, before: (i64, &str), limit: i64) -> StoreResult<Vec<OrderRow>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::ORDERS_OF_SUBJECT)
                .bind(subject)
                .bind(before.0)
                .bind(before.1)
                .bind(limit)
                .fetch_all(pool)
                .await?)
        })
    }

    /// Any subject's order `id` (a key's resource, the checkout page).
    pub async fn order_by_id(&self, id: &str) -> StoreResult<Option<OrderRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::ORDER_BY_ID).bind(id).fetch_optional(pool).await?))
    }

    /// The draft's live (pending or paid) order, if any.
    pub async fn live_order_for_draft(&self, draft_id: &str) -> StoreResult<Option<OrderRow>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::LIVE_ORDER_FOR_DRAFT)
                .bind(draft_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .fetch_optional(pool)
                .await?)
        })
    }

    /// Units of a gift in live (pending or paid) orders.
    pub async fn units_sold(&self, gift_id: &str) -> StoreResult<i64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_scalar(sql::LIVE_UNITS)
                .bind(gift_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .bind(OrderStatusColumn::Cancelled)
                .fetch_one(pool)
                .await?)
        })
    }

    /// In one transaction, if the fence holds: the pending order may now have a charge request
    /// in flight until `charging_until_ms` (the reconciler leaves it alone until then).
    pub async fn begin_charge(
        &self,
        fence: &Fence,
        order_id: &str,
        charging_until_ms: i64,
        now_ms: i64,
    ) -> StoreResult<Fenced<ChargeStart>> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let held = scoped!(sql::TOUCH_KEY, fence.scope)
                .bind(now_ms)
                .bind(RecoveryPoint::Finished)
                .bind(fence.generation)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            or_stale!(tx, held);
            let pending = sqlx::query(sql::BEGIN_CHARGE)
                .bind(order_id)
                .bind(charging_until_ms)
                .bind(now_ms)
                .bind(OrderStatusColumn::PendingPayment)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            tx.commit().await?;
            Ok(Fenced::Written(if pending == 1 { ChargeStart::Ready } else { ChargeStart::Settled }))
        })
    }

    /// In one transaction, if the fence holds: the order is paid with `charge_id`, the key
    /// finished with `response`.
    pub async fn mark_paid_and_finish(
        &self,
        fence: &Fence,
        order_id: &str,
        charge_id: &str,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<Fenced> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let finished = finish_key!(&mut *tx, fence, response, now_ms)?;
            or_stale!(tx, finished);
            let paid = sqlx::query(sql::MARK_PAID)
                .bind(order_id)
                .bind(OrderStatusColumn::Paid)
                .bind(charge_id)
                .bind(now_ms)
                .bind(OrderStatusColumn::PendingPayment)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if paid != 1 {
                tx.rollback().await?;
                return Err(StoreError(format!("order {order_id} was charged ({charge_id}) but is no longer pending")));
            }
            tx.commit().await?;
            Ok(Fenced::Written(()))
        })
    }

    /// In one transaction, if the fence holds: the order's payment was declined, the key
    /// finished with `response`.
    pub async fn mark_declined_and_finish(
        &self,
        fence: &Fence,
        order_id: &str,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<Fenced> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let finished = finish_key!(&mut *tx, fence, response, now_ms)?;
            or_stale!(tx, finished);
            let declined = sqlx::query(sql::MARK_DECLINED)
                .bind(order_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .bind(now_ms)
                .bind(OrderStatusColumn::PendingPayment)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if declined != 1 {
                tx.rollback().await?;
                return Err(StoreError(format!("order {order_id} was declined by the provider but is paid")));
            }
            tx.commit().await?;
            Ok(Fenced::Written(()))
        })
    }

    // --- reconciling ---

    /// Up to `limit` orders to reconcile: pending since before `created_before_ms`, with no
    /// charge request in flight and no key leased at `now_ms`, after `after` in
    /// (created_at_ms, id) order.
    pub async fn orders_to_reconcile(
        &self,
        created_before_ms: i64,
        now_ms: i64,
        after: (i64, &str),
        limit: i64,
    ) -> StoreResult<Vec<OrderRow>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::ORDERS_TO_RECONCILE)
                .bind(OrderStatusColumn::PendingPayment)
                .bind(created_before_ms)
                .bind(now_ms)
                .bind(after.0)
                .bind(after.1)
                .bind(limit)
                .fetch_all(pool)
                .await?)
        })
    }

    /// In one transaction: the pending order is paid with `charge_id`, and every unfinished
    /// commit_order key pointing at it is finished with `response` (their holders' writes are
    /// refused from now on). False if the order was no longer pending.
    pub async fn settle_paid(&self, order_id: &str, charge_id: &str, response: &str, now_ms: i64) -> StoreResult<bool> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let paid = sqlx::query(sql::SETTLE_PAID)
                .bind(order_id)
                .bind(OrderStatusColumn::Paid)
                .bind(charge_id)
                .bind(OrderStatusColumn::PendingPayment)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if paid != 1 {
                tx.rollback().await?;
                return Ok(false);
            }
            finish_keys_of_order!(&mut *tx, order_id, response, now_ms);
            tx.commit().await?;
            Ok(true)
        })
    }

    /// In one transaction: the pending order is declined (its stock is free again), unless a
    /// charge request may still have been in flight at `asked_at_ms` (when the provider said it
    /// had no charge), and its unfinished commit_order keys are finished with `response`.
    /// False if nothing was settled.
    pub async fn settle_declined(
        &self,
        order_id: &str,
        response: &str,
        asked_at_ms: i64,
        now_ms: i64,
    ) -> StoreResult<bool> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let declined = sqlx::query(sql::SETTLE_DECLINED)
                .bind(order_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .bind(OrderStatusColumn::PendingPayment)
                .bind(now_ms)
                .bind(asked_at_ms)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if declined != 1 {
                tx.rollback().await?;
                return Ok(false);
            }
            finish_keys_of_order!(&mut *tx, order_id, response, now_ms);
            tx.commit().await?;
            Ok(true)
        })
    }

    /// Orders with `status`, oldest first (tests and the chaos run check invariants on them).
    pub async fn orders_with_status(&self, status: OrderStatusColumn) -> StoreResult<Vec<OrderRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::ORDERS_WITH_STATUS).bind(status).fetch_all(pool).await?))
    }

    /// Counts orders (all statuses): for tests and the benchmark.
    pub async fn order_count(&self) -> StoreResult<i64> {
        on_pool!(self, |pool| Ok(sqlx::query_scalar(sql::ORDER_COUNT).fetch_one(pool).await?))
    }

    // --- saved addresses ---

    /// Keeps `recipient` (JSON) as `subject`'s saved address (the person agreed).
    pub async fn save_address(&self, subject: &str, recipient: &str, now_ms: i64) -> StoreResult<()> {
        on_pool!(self, |pool| {
            sqlx::query(sql::UPSERT_SAVED_ADDRESS).bind(subject).bind(recipient).bind(now_ms).execute(pool).await?;
            Ok(())
        })
    }

    /// `subject`'s saved address (JSON of a `Recipient`), if any.
    pub async fn saved_address(&self, subject: &str) -> StoreResult<Option<String>> {
        on_pool!(self, |pool| Ok(sqlx::query_scalar(sql::SAVED_ADDRESS).bind(subject).fetch_optional(pool).await?))
    }

    // --- refunds ---

    /// In one transaction, if the fence holds: the paid order's refund is recorded as pending
    /// (unless it has one already) and the key points at the order (`ResourceCreated`).
    pub async fn begin_refund(
        &self,
        fence: &Fence,
        refund: &RefundRow,
        now_ms: i64,
    ) -> StoreResult<Fenced<BeginRefund>> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let order: Option<OrderRow> =
                sqlx::query_as(sql::ORDER_BY_ID).bind(&refund.order_id).fetch_optional(&mut *tx).await?;
            let Some(order) = order else {
                tx.rollback().await?;
                return Err(StoreError(format!("order {} vanished", refund.order_id)));
            };
            let existing: Option<RefundRow> =
                sqlx::query_as(sql::REFUND_OF_ORDER).bind(&refund.order_id).fetch_optional(&mut *tx).await?;
            let row = match existing {
                Some(row) if row.status == RefundStatusColumn::Pending => row,
                Some(_) => {
                    tx.rollback().await?;
                    return Ok(Fenced::Written(BeginRefund::NotPaid(Box::new(order))));
                }
                None if order.status != OrderStatusColumn::Paid => {
                    tx.rollback().await?;
                    return Ok(Fenced::Written(BeginRefund::NotPaid(Box::new(order))));
                }
                None => {
                    sqlx::query(sql::INSERT_REFUND)
                        .bind(&refund.id)
                        .bind(&refund.order_id)
                        .bind(&refund.subject)
                        .bind(refund.amount_minor)
                        .bind(refund.currency)
                        .bind(RefundStatusColumn::Pending)
                        .bind(now_ms)
                        .execute(&mut *tx)
                        .await?;
                    sqlx::query_as(sql::REFUND_OF_ORDER).bind(&refund.order_id).fetch_one(&mut *tx).await?
                }
            };
            let advanced = scoped!(sql::ADVANCE_KEY, fence.scope)
                .bind(&refund.order_id)
                .bind(now_ms)
                .bind(RecoveryPoint::ResourceCreated)
                .bind(fence.generation)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            or_stale!(tx, advanced);
            tx.commit().await?;
            Ok(Fenced::Written(BeginRefund::Ready(row)))
        })
    }

    /// In one transaction, if the fence holds: the refund succeeded as `provider_refund_id`,
    /// the order is cancelled, and the key finished with `response`.
    pub async fn finish_refund(
        &self,
        fence: &Fence,
        order_id: &str,
        provider_refund_id: &str,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<Fenced> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let finished = finish_key!(&mut *tx, fence, response, now_ms)?;
            or_stale!(tx, finished);
            settle_refund_in!(&mut *tx, order_id, provider_refund_id, now_ms);
            tx.commit().await?;
            Ok(Fenced::Written(()))
        })
    }

    /// The reconciler: the pending refund succeeded as `provider_refund_id`, the order is
    /// cancelled (no key involved: a later retry of a cancel key finds it settled).
    pub async fn settle_refund(&self, order_id: &str, provider_refund_id: &str, now_ms: i64) -> StoreResult<()> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            settle_refund_in!(&mut *tx, order_id, provider_refund_id, now_ms);
            tx.commit().await?;
            Ok(())
        })
    }

    pub async fn refund_of_order(&self, order_id: &str) -> StoreResult<Option<RefundRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::REFUND_OF_ORDER).bind(order_id).fetch_optional(pool).await?))
    }

    /// Up to `limit` refunds pending since before `before_ms` (the reconciler's scan).
    pub async fn refunds_pending(&self, before_ms: i64, limit: i64) -> StoreResult<Vec<RefundRow>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::REFUNDS_PENDING)
                .bind(RefundStatusColumn::Pending)
                .bind(before_ms)
                .bind(limit)
                .fetch_all(pool)
                .await?)
        })
    }

    /// Refunds with `status`, oldest first (tests and the chaos run).
    pub async fn refunds_with_status(&self, status: RefundStatusColumn) -> StoreResult<Vec<RefundRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::REFUNDS_WITH_STATUS).bind(status).fetch_all(pool).await?))
    }

    // --- personal data ---

    /// In one transaction: deletes `subject`'s saved address, drafts, idempotency keys and
    /// checkout sessions, and anonymizes its settled orders and their refunds (kept as financial
    /// records). Drafts and keys of an order still waiting for its payment, and keys in use
    /// right now, stay until that is settled.
    pub async fn delete_personal_data(&self, subject: &str, now_ms: i64) -> StoreResult<Deleted> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let deleted = delete_personal_data_in!(tx, subject, now_ms);
            tx.commit().await?;
            Ok(deleted)
        })
    }

    /// [`Store::delete_personal_data`] for one use of a Delete my data token, in one transaction
    /// with the token's spent mark (`spent_key`, kept until `expires_at_ms`): the first use
    /// deletes and records what it deleted; every later use (concurrent ones wait for the first)
    /// deletes nothing and gets the first use's counts.
    pub async fn delete_personal_data_once(
        &self,
        subject: &str,
        spent_key: &str,
        expires_at_ms: i64,
        now_ms: i64,
    ) -> StoreResult<Deleted> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let first = sqlx::query(sql::SPEND_DELETE_TOKEN)
                .bind(spent_key)
                .bind(expires_at_ms)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?
                .rows_affected()
                == 1;
            if !first {
                let counts: (i64, i64, i64, i64, i64, i64) =
                    sqlx::query_as(sql::SPENT_DELETE_TOKEN).bind(spent_key).fetch_one(&mut *tx).await?;
                tx.rollback().await?;
                let count = |n: i64| u64::try_from(n).unwrap_or(0);
                return Ok(Deleted {
                    saved_addresses: count(counts.0),
                    drafts: count(counts.1),
                    idempotency_keys: count(counts.2),
                    checkout_sessions: count(counts.3),
                    orders_anonymized: count(counts.4),
                    refunds_anonymized: count(counts.5),
                });
            }
            let deleted = delete_personal_data_in!(tx, subject, now_ms);
            let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            sqlx::query(sql::RECORD_DELETE_TOKEN)
                .bind(spent_key)
                .bind(count(deleted.saved_addresses))
                .bind(count(deleted.drafts))
                .bind(count(deleted.idempotency_keys))
                .bind(count(deleted.checkout_sessions))
                .bind(count(deleted.orders_anonymized))
                .bind(count(deleted.refunds_anonymized))
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(deleted)
        })
    }

    /// Deletes the spent marks of Delete my data tokens that expired before `expired_before_ms`.
    pub async fn prune_spent_delete_tokens(&self, expired_before_ms: i64) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::PRUNE_SPENT_DELETE_TOKENS).bind(expired_before_ms).execute(pool).await?.rows_affected())
        })
    }

    /// One retention pass: orders placed before `personal_before_ms` are anonymized, anonymized
    /// orders placed before `financial_before_ms` and refunds before `refunds_before_ms` are
    /// deleted, and saved addresses unused since `addresses_before_ms` too.
    pub async fn apply_retention(
        &self,
        personal_before_ms: i64,
        financial_before_ms: i64,
        refunds_before_ms: i64,
        addresses_before_ms: i64,
        now_ms: i64,
    ) -> StoreResult<Retained> {
        on_pool!(self, |pool| {
            let mut done = Retained::default();
            let mut tx = pool.begin_write(WriteLock::None).await?;
            done.orders_anonymized = sqlx::query(sql::ANONYMIZE_ORDERS_BEFORE)
                .bind(personal_before_ms)
                .bind(ERASED_SUBJECT)
                .bind(now_ms)
                .bind(OrderStatusColumn::PendingPayment)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            sqlx::query(sql::ANONYMIZE_REFUNDS_BEFORE).bind(ERASED_SUBJECT).execute(&mut *tx).await?;
            tx.commit().await?;
            done.orders_deleted = sqlx::query(sql::PRUNE_ANONYMIZED_ORDERS)
                .bind(financial_before_ms)
                .execute(pool)
                .await?
                .rows_affected();
            done.refunds_deleted = sqlx::query(sql::PRUNE_REFUNDS)
                .bind(refunds_before_ms)
                .bind(RefundStatusColumn::Succeeded)
                .execute(pool)
                .await?
                .rows_affected();
            done.saved_addresses_deleted =
                sqlx::query(sql::PRUNE_SAVED_ADDRESSES).bind(addresses_before_ms).execute(pool).await?.rows_affected();
            Ok(done)
        })
    }

    /// Anonymized orders kept as financial records (tests and the operator command).
    pub async fn erased_order_count(&self) -> StoreResult<i64> {
        on_pool!(self, |pool| Ok(sqlx::query_scalar(sql::COUNT_ERASED_ORDERS)
            .bind(ERASED_SUBJECT)
            .fetch_one(pool)
            .await?))
    }

    // --- checkout sessions ---

    /// In one transaction, if the fence holds: insert the checkout session and finish the key
    /// with `response` (a stale holder inserts no second session for the key).
    pub async fn create_checkout_and_finish(
        &self,
        fence: &Fence,
        session: &CheckoutRow,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<Fenced> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let finished = finish_key!(&mut *tx, fence, response, now_ms)?;
            or_stale!(tx, finished);
            sqlx::query(sql::INSERT_CHECKOUT)
                .bind(&session.id)
                .bind(&session.subject)
                .bind(&session.gift_id)
                .bind(session.currency)
                .bind(session.amount_minor)
                .bind(session.created_at_ms)
                .bind(session.expires_at_ms)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(Fenced::Written(()))
        })
    }

    /// Deletes checkout sessions that expired before `expired_before_ms`; returns how many.
    pub async fn prune_checkout_sessions(&self, expired_before_ms: i64) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::PRUNE_CHECKOUTS).bind(expired_before_ms).execute(pool).await?.rows_affected())
        })
    }

    pub async fn checkout_session(&self, id: &str) -> StoreResult<Option<CheckoutRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::CHECKOUT).bind(id).fetch_optional(pool).await?))
    }

    // --- usage limits ---

    /// Atomically counts one `usage` for `subject` in `period` unless `limit` (≥ 1) are already
    /// counted. True if it was counted.
    pub async fn take_usage(&self, subject: &str, usage: Usage, period: i64, limit: i64) -> StoreResult<bool> {
        on_pool!(self, |pool| {
            let counted: Option<i64> = sqlx::query_scalar(sql::TAKE_USAGE)
                .bind(subject)
                .bind(usage)
                .bind(period)
                .bind(limit)
                .fetch_optional(pool)
                .await?;
            Ok(counted.is_some())
        })
    }

    /// Adds `delta` counted uses of `usage` (a batch from one replica); returns the total.
    pub async fn add_usage(&self, subject: &str, usage: Usage, period: i64, delta: i64) -> StoreResult<i64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_scalar(sql::ADD_USAGE)
                .bind(subject)
                .bind(usage)
                .bind(period)
                .bind(delta)
                .fetch_one(pool)
                .await?)
        })
    }

    /// Un-counts one `usage` (the call delivered nothing).
    pub async fn give_back_usage(&self, subject: &str, usage: Usage, period: i64) -> StoreResult<()> {
        on_pool!(self, |pool| {
            sqlx::query(sql::GIVE_BACK_USAGE).bind(subject).bind(usage).bind(period).execute(pool).await?;
            Ok(())
        })
    }

    /// Deletes the counters of `usage` for periods before `before_period`; returns how many.
    pub async fn prune_usage(&self, usage: Usage, before_period: i64) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::PRUNE_USAGE).bind(usage).bind(before_period).execute(pool).await?.rows_affected())
        })
    }
}
