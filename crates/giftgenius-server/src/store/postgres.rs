//! The PostgreSQL store, for several replicas on one database.
//!
//! Same semantics as the SQLite store. SQLite gets its correctness from the single-writer lock
//! taken by `BEGIN IMMEDIATE`; PostgreSQL has no such lock, so:
//! - every multi-statement step runs in one transaction (READ COMMITTED: each statement sees
//!   everything committed before it started);
//! - where a step checks something and then writes based on it (a draft for a request, the
//!   stock check before an order), it first takes a transaction-scoped advisory lock
//!   (`pg_advisory_xact_lock`) on what it checks, so two replicas cannot both pass the check;
//!   the lock is released by COMMIT or ROLLBACK, also when the connection dies;
//! - single-statement steps (`INSERT .. ON CONFLICT`, compare-and-set `UPDATE`) are atomic on
//!   their own: a concurrent writer of the same row waits and re-checks the `WHERE` clause.
//!
//! The SQL shared with SQLite is in `sql.rs`; the PostgreSQL-only statements are below.

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::PgPool;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use super::{
    CheckoutRow, Claim, CreateOrder, DraftRow, KeyRow, LedgerRow, OrderRow, Scope, Store, StoreError, StoreResult, sql,
};

/// Connections per replica. Several replicas share the server's `max_connections`.
const POOL_SIZE: u32 = 10;

/// Advisory-lock namespaces (the first key of the two-key form), so the hashes of different
/// kinds of things never share a lock. A hash collision within a namespace only serializes two
/// unrelated calls; it never breaks correctness.
const LOCK_DRAFT_REQUEST: i32 = 0x6767_0001;
const LOCK_GIFT_STOCK: i32 = 0x6767_0002;

/// Compare-and-set on the old lease. `=` would never match a NULL lease, so compare NULL-safely
/// with `IS NOT DISTINCT FROM` (SQLite spells this `IS`).
const TAKE_OVER_KEY: &str = "UPDATE idempotency_keys SET locked_until_ms = $4, updated_at_ms = $5 \
     WHERE subject = $1 AND tool = $2 AND key = $3 AND recovery_point <> 'finished' AND locked_until_ms IS NOT DISTINCT FROM $6";

/// Units in live orders. SUM(BIGINT) is NUMERIC in PostgreSQL: cast back (SQLite needs no cast).
const LIVE_UNITS: &str =
    "SELECT COALESCE(SUM(quantity), 0)::BIGINT FROM orders WHERE gift_id = $1 AND status <> 'payment_declined'";

#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
}

impl PostgresStore {
    /// Connects to `url` (`postgres://` or `postgresql://`) and runs the embedded migrations.
    /// Replicas starting together are fine: sqlx serializes migrations with an advisory lock.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let options = PgConnectOptions::from_str(url)?.application_name("giftgenius-server");
        let pool = PgPoolOptions::new()
            .max_connections(POOL_SIZE)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await?;
        sqlx::migrate!("./migrations/postgres").run(&pool).await?;
        Ok(Self { pool })
    }
}

/// Takes the transaction-scoped advisory lock `(namespace, hashtext(name))`; held until the
/// transaction ends.
async fn advisory_xact_lock(tx: &mut sqlx::PgConnection, namespace: i32, name: &str) -> StoreResult<()> {
    sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext($2))").bind(namespace).bind(name).execute(&mut *tx).await?;
    Ok(())
}

#[async_trait]
impl Store for PostgresStore {
    async fn secret(&self, name: &str, generated: String) -> StoreResult<String> {
        sqlx::query(sql::INSERT_SECRET).bind(name).bind(&generated).execute(&self.pool).await?;
        Ok(sqlx::query_scalar(sql::SECRET).bind(name).fetch_one(&self.pool).await?)
    }

    async fn draft_for_request(&self, new: &DraftRow, now_ms: i64) -> StoreResult<DraftRow> {
        let mut tx = self.pool.begin().await?;
        // One request at a time per (subject, draft_key) across replicas, like SQLite's writer
        // lock: the expire / insert / read below then see each other's committed results.
        // (Text cannot hold NUL; the length prefix keeps the pair unambiguous.)
        let request = format!("{}:{}{}", new.subject.len(), new.subject, new.draft_key);
        advisory_xact_lock(&mut tx, LOCK_DRAFT_REQUEST, &request).await?;
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
            .bind(&new.shipping)
            .bind(&new.currency)
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
    }

    async fn draft(&self, subject: &str, id: &str) -> StoreResult<Option<DraftRow>> {
        Ok(sqlx::query_as(sql::DRAFT).bind(id).bind(subject).fetch_optional(&self.pool).await?)
    }

    async fn claim_key(
        &self,
        scope: &Scope,
        fingerprint: &str,
        lease_until_ms: i64,
        now_ms: i64,
    ) -> StoreResult<Claim> {
        let inserted = sqlx::query(sql::INSERT_KEY)
            .bind(&scope.subject)
            .bind(scope.tool)
            .bind(&scope.key)
            .bind(fingerprint)
            .bind(lease_until_ms)
            .bind(now_ms)
            .execute(&self.pool)
            .await?
            .rows_affected();
        if inserted == 1 {
            return Ok(Claim::New);
        }
        let key: KeyRow = sqlx::query_as(sql::KEY)
            .bind(&scope.subject)
            .bind(scope.tool)
            .bind(&scope.key)
            .fetch_one(&self.pool)
            .await?;
        Ok(Claim::Existing(key))
    }

    async fn take_over_key(
        &self,
        scope: &Scope,
        old_lease: Option<i64>,
        lease_until_ms: i64,
        now_ms: i64,
    ) -> StoreResult<bool> {
        let updated = sqlx::query(TAKE_OVER_KEY)
            .bind(&scope.subject)
            .bind(scope.tool)
            .bind(&scope.key)
            .bind(lease_until_ms)
            .bind(now_ms)
            .bind(old_lease)
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(updated == 1)
    }

    async fn release_key(&self, scope: &Scope, now_ms: i64) -> StoreResult<()> {
        sqlx::query(sql::RELEASE_KEY)
            .bind(&scope.subject)
            .bind(scope.tool)
            .bind(&scope.key)
            .bind(now_ms)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn finish_key(&self, scope: &Scope, response: &str, now_ms: i64) -> StoreResult<()> {
        finish(&self.pool, scope, response, now_ms).await
    }

    async fn prune_keys(&self, created_before_ms: i64, now_ms: i64) -> StoreResult<u64> {
        let deleted = sqlx::query(sql::PRUNE_KEYS)
            .bind(created_before_ms)
            .bind(now_ms)
            .execute(&self.pool)
            .await?
            .rows_affected();
        Ok(deleted)
    }

    async fn create_order(&self, scope: &Scope, order: &OrderRow, stock: i64, now_ms: i64) -> StoreResult<CreateOrder> {
        let mut tx = self.pool.begin().await?;
        // The stock check and the insert must not interleave with another replica's for the same
        // gift (both would pass the check and oversell). A draft is for one gift, so this also
        // serializes orders for the same draft; the unique index `orders_one_live_per_draft`
        // stays the last line of defence.
        advisory_xact_lock(&mut tx, LOCK_GIFT_STOCK, &order.gift_id).await?;
        let live: Option<OrderRow> =
            sqlx::query_as(sql::LIVE_ORDER_FOR_DRAFT).bind(&order.draft_id).fetch_optional(&mut *tx).await?;
        if let Some(existing) = live {
            tx.rollback().await?;
            return Ok(CreateOrder::DraftAlreadyOrdered(Box::new(existing)));
        }
        let sold: i64 = sqlx::query_scalar(LIVE_UNITS).bind(&order.gift_id).fetch_one(&mut *tx).await?;
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
            .bind(&order.currency)
            .bind(order.total_minor)
            .bind(now_ms)
            .execute(&mut *tx)
            .await;
        match inserted {
            Ok(_) => {}
            // Cannot happen while every writer takes the gift lock; if it ever does, the other
            // order won and this call reports it like the check above would have.
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                tx.rollback().await?;
                return match self.live_order_for_draft(&order.draft_id).await? {
                    Some(existing) => Ok(CreateOrder::DraftAlreadyOrdered(Box::new(existing))),
                    None => Err(StoreError(format!("order {} conflicted: {e}", order.id))),
                };
            }
            Err(e) => return Err(e.into()),
        }
        sqlx::query(sql::KEY_ORDER_CREATED)
            .bind(&scope.subject)
            .bind(scope.tool)
            .bind(&scope.key)
            .bind(&order.id)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(CreateOrder::Created)
    }

    async fn adopt_order(&self, scope: &Scope, order_id: &str, now_ms: i64) -> StoreResult<()> {
        sqlx::query(sql::ADOPT_ORDER)
            .bind(&scope.subject)
            .bind(scope.tool)
            .bind(&scope.key)
            .bind(order_id)
            .bind(now_ms)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn order(&self, subject: &str, id: &str) -> StoreResult<Option<OrderRow>> {
        Ok(sqlx::query_as(sql::ORDER).bind(id).bind(subject).fetch_optional(&self.pool).await?)
    }

    async fn live_order_for_draft(&self, draft_id: &str) -> StoreResult<Option<OrderRow>> {
        Ok(sqlx::query_as(sql::LIVE_ORDER_FOR_DRAFT).bind(draft_id).fetch_optional(&self.pool).await?)
    }

    async fn order_by_id(&self, id: &str) -> StoreResult<Option<OrderRow>> {
        Ok(sqlx::query_as(sql::ORDER_BY_ID).bind(id).fetch_optional(&self.pool).await?)
    }

    async fn units_sold(&self, gift_id: &str) -> StoreResult<i64> {
        Ok(sqlx::query_scalar(LIVE_UNITS).bind(gift_id).fetch_one(&self.pool).await?)
    }

    async fn mark_paid_and_finish(
        &self,
        scope: &Scope,
        order_id: &str,
        charge_id: &str,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(sql::MARK_PAID).bind(order_id).bind(charge_id).bind(now_ms).execute(&mut *tx).await?;
        finish(&mut *tx, scope, response, now_ms).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn mark_declined_and_finish(
        &self,
        scope: &Scope,
        order_id: &str,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(sql::MARK_DECLINED).bind(order_id).bind(now_ms).execute(&mut *tx).await?;
        finish(&mut *tx, scope, response, now_ms).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn order_count(&self) -> StoreResult<i64> {
        Ok(sqlx::query_scalar(sql::ORDER_COUNT).fetch_one(&self.pool).await?)
    }

    async fn create_checkout_and_finish(
        &self,
        scope: &Scope,
        session: &CheckoutRow,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(sql::INSERT_CHECKOUT)
            .bind(&session.id)
            .bind(&session.subject)
            .bind(&session.gift_id)
            .bind(&session.currency)
            .bind(session.amount_minor)
            .bind(session.created_at_ms)
            .bind(session.expires_at_ms)
            .execute(&mut *tx)
            .await?;
        finish(&mut *tx, scope, response, now_ms).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn checkout_session(&self, id: &str) -> StoreResult<Option<CheckoutRow>> {
        Ok(sqlx::query_as(sql::CHECKOUT).bind(id).fetch_optional(&self.pool).await?)
    }

    async fn sandbox_charge(&self, entry: &LedgerRow) -> StoreResult<LedgerRow> {
        sqlx::query(sql::INSERT_LEDGER)
            .bind(&entry.idempotency_key)
            .bind(&entry.charge_id)
            .bind(entry.amount_minor)
            .bind(&entry.currency)
            .bind(&entry.description)
            .bind(entry.created_at_ms)
            .execute(&self.pool)
            .await?;
        Ok(sqlx::query_as(sql::LEDGER_ENTRY).bind(&entry.idempotency_key).fetch_one(&self.pool).await?)
    }

    async fn sandbox_ledger(&self) -> StoreResult<Vec<LedgerRow>> {
        Ok(sqlx::query_as(sql::LEDGER).fetch_all(&self.pool).await?)
    }

    async fn take_daily_suggestion(&self, subject: &str, day: i64, limit: i64) -> StoreResult<bool> {
        let counted: Option<i64> = sqlx::query_scalar(sql::TAKE_DAILY_SUGGESTION)
            .bind(subject)
            .bind(day)
            .bind(limit)
            .fetch_optional(&self.pool)
            .await?;
        Ok(counted.is_some())
    }

    async fn give_back_daily_suggestion(&self, subject: &str, day: i64) -> StoreResult<()> {
        sqlx::query(sql::GIVE_BACK_DAILY_SUGGESTION).bind(subject).bind(day).execute(&self.pool).await?;
        Ok(())
    }

    async fn prune_daily_suggestions(&self, before_day: i64) -> StoreResult<u64> {
        Ok(sqlx::query(sql::PRUNE_DAILY_SUGGESTIONS).bind(before_day).execute(&self.pool).await?.rows_affected())
    }
}

async fn finish<'e, E>(executor: E, scope: &Scope, response: &str, now_ms: i64) -> StoreResult<()>
where
    E: sqlx::Executor<'e, Database = sqlx::Postgres>,
{
    sqlx::query(sql::FINISH_KEY)
        .bind(&scope.subject)
        .bind(scope.tool)
        .bind(&scope.key)
        .bind(response)
        .bind(now_ms)
        .execute(executor)
        .await?;
    Ok(())
}
