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

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgPool, Row};

use super::{
    CheckoutRow, Claim, CreateOrder, DraftRow, KeyRow, LedgerRow, OrderRow, Scope, Store, StoreError, StoreResult,
};

/// Connections per replica. Several replicas share the server's `max_connections`.
const POOL_SIZE: u32 = 10;

/// Advisory-lock namespaces (the first key of the two-key form), so the hashes of different
/// kinds of things never share a lock. A hash collision within a namespace only serializes two
/// unrelated calls; it never breaks correctness.
const LOCK_DRAFT_REQUEST: i32 = 0x6767_0001;
const LOCK_GIFT_STOCK: i32 = 0x6767_0002;

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

fn draft_from(row: &sqlx::postgres::PgRow) -> DraftRow {
    DraftRow {
        id: row.get("id"),
        subject: row.get("subject"),
        draft_key: row.get("draft_key"),
        gift_id: row.get("gift_id"),
        quantity: row.get("quantity"),
        shipping: row.get("shipping"),
        currency: row.get("currency"),
        subtotal_minor: row.get("subtotal_minor"),
        shipping_minor: row.get("shipping_minor"),
        total_minor: row.get("total_minor"),
        created_at_ms: row.get("created_at_ms"),
        expires_at_ms: row.get("expires_at_ms"),
    }
}

fn order_from(row: &sqlx::postgres::PgRow) -> OrderRow {
    OrderRow {
        id: row.get("id"),
        subject: row.get("subject"),
        draft_id: row.get("draft_id"),
        gift_id: row.get("gift_id"),
        gift_title: row.get("gift_title"),
        merchant: row.get("merchant"),
        quantity: row.get("quantity"),
        currency: row.get("currency"),
        total_minor: row.get("total_minor"),
        status: row.get("status"),
        charge_id: row.get("charge_id"),
        created_at_ms: row.get("created_at_ms"),
    }
}

fn ledger_from(row: &sqlx::postgres::PgRow) -> LedgerRow {
    LedgerRow {
        idempotency_key: row.get("idempotency_key"),
        charge_id: row.get("charge_id"),
        amount_minor: row.get("amount_minor"),
        currency: row.get("currency"),
        description: row.get("description"),
        created_at_ms: row.get("created_at_ms"),
    }
}

// SUM(BIGINT) is NUMERIC in PostgreSQL: cast back.
const LIVE_UNITS: &str =
    "SELECT COALESCE(SUM(quantity), 0)::BIGINT FROM orders WHERE gift_id = $1 AND status <> 'payment_declined'";

#[async_trait]
impl Store for PostgresStore {
    async fn secret(&self, name: &str, generated: String) -> StoreResult<String> {
        sqlx::query("INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING")
            .bind(name)
            .bind(&generated)
            .execute(&self.pool)
            .await?;
        Ok(sqlx::query_scalar("SELECT value FROM secrets WHERE name = $1").bind(name).fetch_one(&self.pool).await?)
    }

    async fn draft_for_request(&self, new: &DraftRow, now_ms: i64) -> StoreResult<DraftRow> {
        let mut tx = self.pool.begin().await?;
        // One request at a time per (subject, draft_key) across replicas, like SQLite's writer
        // lock: the expire / insert / read below then see each other's committed results.
        // (Text cannot hold NUL; the length prefix keeps the pair unambiguous.)
        let request = format!("{}:{}{}", new.subject.len(), new.subject, new.draft_key);
        advisory_xact_lock(&mut tx, LOCK_DRAFT_REQUEST, &request).await?;
        // An expired draft stops being "the" draft for this request, but stays readable so a
        // late commit gets DRAFT_EXPIRED rather than DRAFT_NOT_FOUND.
        sqlx::query(
            "UPDATE drafts SET active = 0 WHERE subject = $1 AND draft_key = $2 AND active = 1 AND expires_at_ms <= $3",
        )
        .bind(&new.subject)
        .bind(&new.draft_key)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        sqlx::query(
            "INSERT INTO drafts (id, subject, draft_key, active, gift_id, quantity, shipping, currency, subtotal_minor, \
             shipping_minor, total_minor, created_at_ms, expires_at_ms) VALUES ($1, $2, $3, 1, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
             ON CONFLICT DO NOTHING",
        )
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
        let row = sqlx::query("SELECT * FROM drafts WHERE subject = $1 AND draft_key = $2 AND active = 1")
            .bind(&new.subject)
            .bind(&new.draft_key)
            .fetch_one(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(draft_from(&row))
    }

    async fn draft(&self, subject: &str, id: &str) -> StoreResult<Option<DraftRow>> {
        let row = sqlx::query("SELECT * FROM drafts WHERE id = $1 AND subject = $2")
            .bind(id)
            .bind(subject)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(draft_from))
    }

    async fn claim_key(
        &self,
        scope: &Scope,
        fingerprint: &str,
        lease_until_ms: i64,
        now_ms: i64,
    ) -> StoreResult<Claim> {
        let inserted = sqlx::query(
            "INSERT INTO idempotency_keys (subject, tool, key, fingerprint, recovery_point, locked_until_ms, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, 'started', $5, $6, $6) ON CONFLICT DO NOTHING",
        )
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
        let row = sqlx::query(
            "SELECT fingerprint, recovery_point, locked_until_ms, order_id, response FROM idempotency_keys \
             WHERE subject = $1 AND tool = $2 AND key = $3",
        )
        .bind(&scope.subject)
        .bind(scope.tool)
        .bind(&scope.key)
        .fetch_one(&self.pool)
        .await?;
        Ok(Claim::Existing(KeyRow {
            fingerprint: row.get("fingerprint"),
            recovery_point: row.get("recovery_point"),
            locked_until_ms: row.get("locked_until_ms"),
            order_id: row.get("order_id"),
            response: row.get("response"),
        }))
    }

    async fn take_over_key(
        &self,
        scope: &Scope,
        old_lease: Option<i64>,
        lease_until_ms: i64,
        now_ms: i64,
    ) -> StoreResult<bool> {
        let updated = sqlx::query(
            "UPDATE idempotency_keys SET locked_until_ms = $4, updated_at_ms = $5 \
             WHERE subject = $1 AND tool = $2 AND key = $3 AND recovery_point <> 'finished' AND locked_until_ms IS NOT DISTINCT FROM $6",
        )
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
        sqlx::query(
            "UPDATE idempotency_keys SET locked_until_ms = NULL, updated_at_ms = $4 \
             WHERE subject = $1 AND tool = $2 AND key = $3 AND recovery_point <> 'finished'",
        )
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
        let deleted = sqlx::query(
            "DELETE FROM idempotency_keys WHERE created_at_ms < $1 AND (locked_until_ms IS NULL OR locked_until_ms < $2)",
        )
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
        let live = sqlx::query("SELECT * FROM orders WHERE draft_id = $1 AND status <> 'payment_declined'")
            .bind(&order.draft_id)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(existing) = live {
            tx.rollback().await?;
            return Ok(CreateOrder::DraftAlreadyOrdered(Box::new(order_from(&existing))));
        }
        let sold: i64 = sqlx::query_scalar(LIVE_UNITS).bind(&order.gift_id).fetch_one(&mut *tx).await?;
        if sold + order.quantity > stock {
            tx.rollback().await?;
            return Ok(CreateOrder::OutOfStock);
        }
        let inserted = sqlx::query(
            "INSERT INTO orders (id, subject, draft_id, gift_id, gift_title, merchant, quantity, currency, total_minor, status, \
             charge_id, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending_payment', NULL, $10, $10)",
        )
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
        sqlx::query(
            "UPDATE idempotency_keys SET recovery_point = 'order_created', order_id = $4, updated_at_ms = $5 \
             WHERE subject = $1 AND tool = $2 AND key = $3",
        )
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
        sqlx::query(
            "UPDATE idempotency_keys SET recovery_point = 'order_created', order_id = $4, updated_at_ms = $5 \
             WHERE subject = $1 AND tool = $2 AND key = $3 AND recovery_point = 'started'",
        )
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
        let row = sqlx::query("SELECT * FROM orders WHERE id = $1 AND subject = $2")
            .bind(id)
            .bind(subject)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(order_from))
    }

    async fn live_order_for_draft(&self, draft_id: &str) -> StoreResult<Option<OrderRow>> {
        let row = sqlx::query("SELECT * FROM orders WHERE draft_id = $1 AND status <> 'payment_declined'")
            .bind(draft_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.as_ref().map(order_from))
    }

    async fn order_by_id(&self, id: &str) -> StoreResult<Option<OrderRow>> {
        let row = sqlx::query("SELECT * FROM orders WHERE id = $1").bind(id).fetch_optional(&self.pool).await?;
        Ok(row.as_ref().map(order_from))
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
        sqlx::query("UPDATE orders SET status = 'paid', charge_id = $2, updated_at_ms = $3 WHERE id = $1")
            .bind(order_id)
            .bind(charge_id)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
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
        sqlx::query("UPDATE orders SET status = 'payment_declined', updated_at_ms = $2 WHERE id = $1 AND status = 'pending_payment'")
            .bind(order_id)
            .bind(now_ms)
            .execute(&mut *tx)
            .await?;
        finish(&mut *tx, scope, response, now_ms).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn order_count(&self) -> StoreResult<i64> {
        Ok(sqlx::query_scalar("SELECT COUNT(*) FROM orders").fetch_one(&self.pool).await?)
    }

    async fn create_checkout_and_finish(
        &self,
        scope: &Scope,
        session: &CheckoutRow,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO checkout_sessions (id, subject, gift_id, currency, amount_minor, created_at_ms, expires_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
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
        let row =
            sqlx::query("SELECT * FROM checkout_sessions WHERE id = $1").bind(id).fetch_optional(&self.pool).await?;
        Ok(row.map(|row| CheckoutRow {
            id: row.get("id"),
            subject: row.get("subject"),
            gift_id: row.get("gift_id"),
            currency: row.get("currency"),
            amount_minor: row.get("amount_minor"),
            created_at_ms: row.get("created_at_ms"),
            expires_at_ms: row.get("expires_at_ms"),
        }))
    }

    async fn sandbox_charge(&self, entry: &LedgerRow) -> StoreResult<LedgerRow> {
        sqlx::query(
            "INSERT INTO sandbox_payment_ledger (idempotency_key, charge_id, amount_minor, currency, description, created_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (idempotency_key) DO NOTHING",
        )
        .bind(&entry.idempotency_key)
        .bind(&entry.charge_id)
        .bind(entry.amount_minor)
        .bind(&entry.currency)
        .bind(&entry.description)
        .bind(entry.created_at_ms)
        .execute(&self.pool)
        .await?;
        let row = sqlx::query("SELECT * FROM sandbox_payment_ledger WHERE idempotency_key = $1")
            .bind(&entry.idempotency_key)
            .fetch_one(&self.pool)
            .await?;
        Ok(ledger_from(&row))
    }

    async fn sandbox_ledger(&self) -> StoreResult<Vec<LedgerRow>> {
        let rows = sqlx::query("SELECT * FROM sandbox_payment_ledger ORDER BY created_at_ms, charge_id")
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.iter().map(ledger_from).collect())
    }

    async fn take_daily_suggestion(&self, subject: &str, day: i64, limit: i64) -> StoreResult<bool> {
        // One statement: concurrent calls cannot both take the last unit.
        let counted: Option<i64> = sqlx::query_scalar(
            "INSERT INTO daily_suggestions (subject, day, count) VALUES ($1, $2, 1) \
             ON CONFLICT (subject, day) DO UPDATE SET count = daily_suggestions.count + 1 \
             WHERE daily_suggestions.count < $3 RETURNING count",
        )
        .bind(subject)
        .bind(day)
        .bind(limit)
        .fetch_optional(&self.pool)
        .await?;
        Ok(counted.is_some())
    }

    async fn give_back_daily_suggestion(&self, subject: &str, day: i64) -> StoreResult<()> {
        sqlx::query("UPDATE daily_suggestions SET count = count - 1 WHERE subject = $1 AND day = $2 AND count > 0")
            .bind(subject)
            .bind(day)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn prune_daily_suggestions(&self, before_day: i64) -> StoreResult<u64> {
        Ok(sqlx::query("DELETE FROM daily_suggestions WHERE day < $1")
            .bind(before_day)
            .execute(&self.pool)
            .await?
            .rows_affected())
    }
}

async fn finish<'e, E>(executor: E, scope: &Scope, response: &str, now_ms: i64) -> StoreResult<()>
where
    E: sqlx::Executor<'e, Database = sqlx::Postgres>,
{
    sqlx::query(
        "UPDATE idempotency_keys SET recovery_point = 'finished', response = $4, locked_until_ms = NULL, updated_at_ms = $5 \
         WHERE subject = $1 AND tool = $2 AND key = $3",
    )
    .bind(&scope.subject)
    .bind(scope.tool)
    .bind(&scope.key)
    .bind(response)
    .bind(now_ms)
    .execute(executor)
    .await?;
    Ok(())
}
