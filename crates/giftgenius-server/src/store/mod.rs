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
    CheckoutRow, CurrencyColumn, DraftRow, KeyRow, LedgerRow, OrderRow, OrderStatusColumn, RecoveryPoint,
    ShippingColumn, Usage,
};

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

/// The outcome of claiming an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// First use of the key: the caller holds its lease.
    New,
    /// The key exists; the caller decides (replay, in progress, take over, reused).
    Existing(KeyRow),
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

/// Finishes the key `$scope` with `$response`: on the pool, or inside a transaction together
/// with the work the answer reports.
macro_rules! finish_key {
    ($executor:expr, $scope:expr, $response:expr, $now_ms:expr) => {
        scoped!(sql::FINISH_KEY, $scope)
            .bind($response)
            .bind($now_ms)
            .bind(RecoveryPoint::Finished)
            .execute($executor)
            .await
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

    /// Takes over a key whose lease ran out (compare-and-set on the old lease). True if we got it.
    pub async fn take_over_key(
        &self,
        scope: &Scope,
        old_lease: Option<i64>,
        lease_until_ms: i64,
        now_ms: i64,
    ) -> StoreResult<bool> {
        on_pool!(self, |pool| {
            let updated = scoped!(sql::TAKE_OVER_KEY, scope)
                .bind(lease_until_ms)
                .bind(now_ms)
                .bind(old_lease)
                .bind(RecoveryPoint::Finished)
                .execute(pool)
                .await?
                .rows_affected();
            Ok(updated == 1)
        })
    }

    /// Drops the lease after a transient failure, keeping the recovery point for the retry.
    pub async fn release_key(&self, scope: &Scope, now_ms: i64) -> StoreResult<()> {
        on_pool!(self, |pool| {
            scoped!(sql::RELEASE_KEY, scope).bind(now_ms).bind(RecoveryPoint::Finished).execute(pool).await?;
            Ok(())
        })
    }

    /// Stores the final answer (success or definitive failure) and ends the lease.
    pub async fn finish_key(&self, scope: &Scope, response: &str, now_ms: i64) -> StoreResult<()> {
        on_pool!(self, |pool| {
            finish_key!(pool, scope, response, now_ms)?;
            Ok(())
        })
    }

    /// Points a key that has only started at an existing resource (`ResourceCreated`).
    pub async fn advance_started_key(&self, scope: &Scope, resource_id: &str, now_ms: i64) -> StoreResult<()> {
        on_pool!(self, |pool| {
            scoped!(sql::ADVANCE_STARTED_KEY, scope)
                .bind(resource_id)
                .bind(now_ms)
                .bind(RecoveryPoint::ResourceCreated)
                .bind(RecoveryPoint::Started)
                .execute(pool)
                .await?;
            Ok(())
        })
    }

    /// Deletes keys created before `created_before_ms` that are not in progress; returns how many.
    pub async fn prune_keys(&self, created_before_ms: i64, now_ms: i64) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::PRUNE_KEYS).bind(created_before_ms).bind(now_ms).execute(pool).await?.rows_affected())
        })
    }

    // --- orders ---

    /// In one transaction: check stock (`stock` minus units in live orders), insert `order` as
    /// pending payment and advance the key to `ResourceCreated` with the order's id.
    pub async fn create_order(
        &self,
        scope: &Scope,
        order: &OrderRow,
        stock: i64,
        now_ms: i64,
    ) -> StoreResult<CreateOrder> {
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
                return Ok(CreateOrder::DraftAlreadyOrdered(Box::new(existing)));
            }
            let sold: i64 = sqlx::query_scalar(sql::LIVE_UNITS)
                .bind(&order.gift_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .fetch_one(&mut *tx)
                .await?;
            if sold + order.quantity > stock {
                tx.rollback().await?;
                return Ok(CreateOrder::OutOfStock);
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
                .execute(&mut *tx)
                .await;
            match inserted {
                Ok(_) => {}
                // Cannot happen while every writer holds the lock above; if it ever does, the
                // other order won and this call reports it like the check above would have.
                Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                    tx.rollback().await?;
                    return match self.live_order_for_draft(&order.draft_id).await? {
                        Some(existing) => Ok(CreateOrder::DraftAlreadyOrdered(Box::new(existing))),
                        None => Err(StoreError(format!("order {} conflicted: {e}", order.id))),
                    };
                }
                Err(e) => return Err(e.into()),
            }
            scoped!(sql::ADVANCE_KEY, scope)
                .bind(&order.id)
                .bind(now_ms)
                .bind(RecoveryPoint::ResourceCreated)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(CreateOrder::Created)
        })
    }

    /// `subject`'s order `id`.
    pub async fn order(&self, subject: &str, id: &str) -> StoreResult<Option<OrderRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::ORDER).bind(id).bind(subject).fetch_optional(pool).await?))
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
                .fetch_one(pool)
                .await?)
        })
    }

    /// In one transaction: the order is paid with `charge_id`, the key finished with `response`.
    pub async fn mark_paid_and_finish(
        &self,
        scope: &Scope,
        order_id: &str,
        charge_id: &str,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<()> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            sqlx::query(sql::MARK_PAID)
                .bind(order_id)
                .bind(OrderStatusColumn::Paid)
                .bind(charge_id)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
            finish_key!(&mut *tx, scope, response, now_ms)?;
            tx.commit().await?;
            Ok(())
        })
    }

    /// In one transaction: the order's payment was declined, the key finished with `response`.
    pub async fn mark_declined_and_finish(
        &self,
        scope: &Scope,
        order_id: &str,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<()> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            sqlx::query(sql::MARK_DECLINED)
                .bind(order_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .bind(now_ms)
                .bind(OrderStatusColumn::PendingPayment)
                .execute(&mut *tx)
                .await?;
            finish_key!(&mut *tx, scope, response, now_ms)?;
            tx.commit().await?;
            Ok(())
        })
    }

    /// Counts orders (all statuses): for tests and the benchmark.
    pub async fn order_count(&self) -> StoreResult<i64> {
        on_pool!(self, |pool| Ok(sqlx::query_scalar(sql::ORDER_COUNT).fetch_one(pool).await?))
    }

    // --- checkout sessions ---

    /// In one transaction: insert the checkout session and finish the key with `response`.
    pub async fn create_checkout_and_finish(
        &self,
        scope: &Scope,
        session: &CheckoutRow,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<()> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
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
            finish_key!(&mut *tx, scope, response, now_ms)?;
            tx.commit().await?;
            Ok(())
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

    // --- the sandbox payment provider's ledger ---

    /// The ledger entry for `entry.idempotency_key`, inserting `entry` if none exists.
    pub async fn sandbox_charge(&self, entry: &LedgerRow) -> StoreResult<LedgerRow> {
        on_pool!(self, |pool| {
            sqlx::query(sql::INSERT_LEDGER)
                .bind(&entry.idempotency_key)
                .bind(&entry.charge_id)
                .bind(entry.amount_minor)
                .bind(entry.currency)
                .bind(&entry.description)
                .bind(entry.created_at_ms)
                .execute(pool)
                .await?;
            Ok(sqlx::query_as(sql::LEDGER_ENTRY).bind(&entry.idempotency_key).fetch_one(pool).await?)
        })
    }

    pub async fn sandbox_ledger(&self) -> StoreResult<Vec<LedgerRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::LEDGER).fetch_all(pool).await?))
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
