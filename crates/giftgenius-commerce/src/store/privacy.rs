//! A person's data: deleting it on their request (once per Delete my data token) and the
//! retention passes that anonymize orders and delete what outlived its retention. What is kept
//! after either is the financial record (see `sql.rs`, personal data).

use super::dialect::{Dialect, WriteLock};
use super::rows::{OrderStatusColumn, RefundStatusColumn};
use super::sql::{self, ERASED_SUBJECT};
use super::tx::Conn;
use super::{Store, StoreResult};

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

/// Deletes `subject`'s personal data on `conn` (a transaction's; see
/// [`Store::delete_personal_data`]); what was deleted.
async fn delete_personal_data_in(conn: Conn<'_>, subject: &str, now_ms: i64) -> StoreResult<Deleted> {
    on_conn!(conn, |c| {
        let saved_addresses =
            sqlx::query(sql::DELETE_SAVED_ADDRESS).bind(subject).execute(&mut *c).await?.rows_affected();
        sqlx::query(sql::DELETE_ACCOUNT_NAME).bind(subject).execute(&mut *c).await?;
        let drafts = sqlx::query(sql::DELETE_DRAFTS_OF)
            .bind(subject)
            .bind(OrderStatusColumn::PendingPayment)
            .execute(&mut *c)
            .await?
            .rows_affected();
        let idempotency_keys = sqlx::query(sql::DELETE_KEYS_OF)
            .bind(subject)
            .bind(now_ms)
            .bind(OrderStatusColumn::PendingPayment)
            .execute(&mut *c)
            .await?
            .rows_affected();
        let checkout_sessions =
            sqlx::query(sql::DELETE_CHECKOUTS_OF).bind(subject).execute(&mut *c).await?.rows_affected();
        let orders_anonymized = sqlx::query(sql::ANONYMIZE_ORDERS_OF)
            .bind(subject)
            .bind(ERASED_SUBJECT)
            .bind(now_ms)
            .bind(OrderStatusColumn::PendingPayment)
            .execute(&mut *c)
            .await?
            .rows_affected();
        let refunds_anonymized = sqlx::query(sql::ANONYMIZE_REFUNDS_OF)
            .bind(subject)
            .bind(ERASED_SUBJECT)
            .execute(&mut *c)
            .await?
            .rows_affected();
        Ok(Deleted {
            saved_addresses,
            drafts,
            idempotency_keys,
            checkout_sessions,
            orders_anonymized,
            refunds_anonymized,
        })
    })
}

impl Store {
    /// In one transaction: deletes `subject`'s saved address, drafts, idempotency keys and
    /// checkout sessions, and anonymizes its settled orders and their refunds (kept as financial
    /// records). Drafts and keys of an order still waiting for its payment, and keys in use
    /// right now, stay until that is settled.
    #[tracing::instrument(name = "store.delete_personal_data", skip_all, fields(otel.kind = "client", db.operation.name = "delete_personal_data"))]
    pub async fn delete_personal_data(&self, subject: &str, now_ms: i64) -> StoreResult<Deleted> {
        let mut tx = self.begin(WriteLock::None).await?;
        let deleted = delete_personal_data_in(tx.conn(), subject, now_ms).await?;
        tx.commit().await?;
        Ok(deleted)
    }

    /// [`Store::delete_personal_data`] for one use of a Delete my data token, in one transaction
    /// with the token's spent mark (`spent_key`, kept until `expires_at_ms`): the first use
    /// deletes and records what it deleted; every later use (concurrent ones wait for the first)
    /// deletes nothing and gets the first use's counts.
    #[tracing::instrument(name = "store.delete_personal_data_once", skip_all, fields(otel.kind = "client", db.operation.name = "delete_personal_data_once"))]
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
            let deleted = delete_personal_data_in((&mut *tx).into(), subject, now_ms).await?;
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
    #[tracing::instrument(name = "store.prune_spent_delete_tokens", skip_all, fields(otel.kind = "client", db.operation.name = "prune_spent_delete_tokens"))]
    pub async fn prune_spent_delete_tokens(&self, expired_before_ms: i64) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::PRUNE_SPENT_DELETE_TOKENS).bind(expired_before_ms).execute(pool).await?.rows_affected())
        })
    }

    /// One retention pass: orders placed before `personal_before_ms` are anonymized, anonymized
    /// orders placed before `financial_before_ms` and refunds before `refunds_before_ms` are
    /// deleted, and saved addresses unused since `addresses_before_ms` too.
    #[tracing::instrument(name = "store.apply_retention", skip_all, fields(otel.kind = "client", db.operation.name = "apply_retention"))]
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
            // Adjustments are refunds too: the same retention, counted with them.
            done.refunds_deleted += sqlx::query(sql::PRUNE_ADJUSTMENTS)
                .bind(refunds_before_ms)
                .bind(RefundStatusColumn::Succeeded)
                .execute(pool)
                .await?
                .rows_affected();
            done.saved_addresses_deleted =
                sqlx::query(sql::PRUNE_SAVED_ADDRESSES).bind(addresses_before_ms).execute(pool).await?.rows_affected();
            // The name an account signed in with goes with its saved address.
            sqlx::query(sql::PRUNE_ACCOUNT_NAMES).bind(addresses_before_ms).execute(pool).await?;
            Ok(done)
        })
    }

    /// In one transaction: deletes the platforms' checkout sessions whose state `is_buyers`
    /// recognizes as one buyer's (the adapter reads its own JSON: ACP's buyer or fulfilment
    /// e-mail), the platforms' idempotency keys (subjects starting with `platform_subjects`) whose
    /// stored answers show those sessions, and the delivery details of their settled orders (the
    /// financial record stays). A session whose order still waits for its payment stays until
    /// that is settled, as an account's does; keys in use right now stay too.
    pub async fn delete_platform_buyer_data(
        &self,
        is_buyers: impl Fn(&str) -> bool,
        platform_subjects: &str,
        now_ms: i64,
    ) -> StoreResult<Deleted> {
        let mut deleted = Deleted::default();
        let subjects = format!("{}%", platform_subjects.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_"));
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let sessions: Vec<(String, String)> = sqlx::query_as(sql::ACP_SESSION_STATES).fetch_all(&mut *tx).await?;
            let mut ids = Vec::new();
            for (id, _) in sessions.into_iter().filter(|(_, state)| is_buyers(state)) {
                let pending: i64 = sqlx::query_scalar(sql::ACP_SESSION_PENDING)
                    .bind(&id)
                    .bind(OrderStatusColumn::PendingPayment)
                    .fetch_one(&mut *tx)
                    .await?;
                if pending > 0 {
                    continue;
                }
                deleted.checkout_sessions +=
                    sqlx::query(sql::DELETE_ACP_SESSION).bind(&id).execute(&mut *tx).await?.rows_affected();
                deleted.orders_anonymized += sqlx::query(sql::ANONYMIZE_ORDERS_OF_ACP_SESSION)
                    .bind(&id)
                    .bind(now_ms)
                    .bind(OrderStatusColumn::PendingPayment)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                ids.push(id);
            }
            let keys: Vec<(String, String, String, Option<String>)> =
                sqlx::query_as(sql::PLATFORM_KEYS).bind(now_ms).bind(&subjects).fetch_all(&mut *tx).await?;
            for (subject, tool, key, response) in keys {
                // A session's routes scope their keys by its id; a create's answer names it.
                let shows = |id: &String| {
                    key.starts_with(&format!("{id} ")) || response.as_deref().is_some_and(|r| r.contains(id.as_str()))
                };
                if ids.iter().any(shows) {
                    deleted.idempotency_keys += sqlx::query(sql::DELETE_KEY_OF_SCOPE)
                        .bind(&subject)
                        .bind(&tool)
                        .bind(&key)
                        .execute(&mut *tx)
                        .await?
                        .rows_affected();
                }
            }
            tx.commit().await?;
            Ok(deleted)
        })
    }

    /// Anonymized orders kept as financial records (tests and the operator command).
    #[tracing::instrument(name = "store.erased_order_count", skip_all, fields(otel.kind = "client", db.operation.name = "erased_order_count"))]
    pub async fn erased_order_count(&self) -> StoreResult<i64> {
        on_pool!(self, |pool| Ok(sqlx::query_scalar(sql::COUNT_ERASED_ORDERS)
            .bind(ERASED_SUBJECT)
            .fetch_one(pool)
            .await?))
    }
}
