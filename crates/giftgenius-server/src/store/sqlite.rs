//! The SQLite store: one file, WAL mode, write transactions taken with `BEGIN IMMEDIATE` so
//! concurrent writers queue on the database lock instead of failing half-way.
//!
//! The SQL shared with PostgreSQL is in `sql.rs`; the SQLite-only statements are below.

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::SqlitePool;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};

use super::{
    CheckoutRow, Claim, CreateOrder, DraftRow, KeyRow, LedgerRow, OrderRow, Scope, Store, StoreError, StoreResult, sql,
};

/// Compare-and-set on the old lease. SQLite's `IS` compares NULL-safely (NULL IS NULL is true);
/// PostgreSQL spells this `IS NOT DISTINCT FROM`.
const TAKE_OVER_KEY: &str = "UPDATE idempotency_keys SET locked_until_ms = $4, updated_at_ms = $5 \
     WHERE subject = $1 AND tool = $2 AND key = $3 AND recovery_point <> 'finished' AND locked_until_ms IS $6";

/// Units in live orders. SQLite's SUM of integers is an integer; PostgreSQL needs a cast.
const LIVE_UNITS: &str =
    "SELECT COALESCE(SUM(quantity), 0) FROM orders WHERE gift_id = $1 AND status <> 'payment_declined'";

/// Starts a write transaction that takes the database's single writer lock up front, so
/// concurrent writers queue instead of failing half-way. This lock is what makes every
/// check-then-write step below safe (PostgreSQL uses advisory locks for the same purpose).
const BEGIN_WRITE: &str = "BEGIN IMMEDIATE";

#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

impl SqliteStore {
    /// Opens (creating if needed) the database file and runs the embedded migrations.
    pub async fn open(path: &str) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{path}"))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new().max_connections(8).connect_with(options).await?;
        sqlx::migrate!("./migrations/sqlite").run(&pool).await?;
        Ok(Self { pool })
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn secret(&self, name: &str, generated: String) -> StoreResult<String> {
        sqlx::query(sql::INSERT_SECRET).bind(name).bind(&generated).execute(&self.pool).await?;
        Ok(sqlx::query_scalar(sql::SECRET).bind(name).fetch_one(&self.pool).await?)
    }

    async fn draft_for_request(&self, new: &DraftRow, now_ms: i64) -> StoreResult<DraftRow> {
        let mut tx = self.pool.begin_with(BEGIN_WRITE).await?;
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
        let mut tx = self.pool.begin_with(BEGIN_WRITE).await?;
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
        sqlx::query(sql::INSERT_ORDER)
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
            .await?;
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
        let mut tx = self.pool.begin_with(BEGIN_WRITE).await?;
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
        let mut tx = self.pool.begin_with(BEGIN_WRITE).await?;
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
        let mut tx = self.pool.begin_with(BEGIN_WRITE).await?;
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
    E: sqlx::Executor<'e, Database = sqlx::Sqlite>,
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
