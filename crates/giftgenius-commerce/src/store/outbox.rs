//! The order outbox (`order_outbox`, docs/acp.md §10.2): order events written in the same
//! transaction as the order change they announce, then posted by a worker on any replica.
//!
//! Writing: a store step that changes an order takes an `Option<&NewOrderEvent>` and writes it
//! with [`enqueue_order_event`] after its order UPDATE; the event's body was built before the
//! step (`outbox::events`), so the store knows nothing of what an event says. A change recorded
//! twice (a request and the reconciler) keeps its first event (`(order_id, change, change_key)` is
//! unique; the key tells an order's adjustments apart).
//!
//! Posting: [`Store::claim_order_events`] leases due events (one statement, safe with several
//! replicas on either database); the worker then records each outcome fenced by the claim it
//! got, so a worker whose lease ran out (and whose event another worker took) records nothing.

use super::rows::{NewOrderEvent, OutboxRow, OutboxStatus};
use super::tx::Conn;
use super::{Store, StoreResult, sql};

/// Writes `event` (if the order's change has a receiver) into the outbox on `conn` (a
/// transaction's), as the next of its order's events, due at once. Must follow the statement
/// that changed the order row in the same transaction (see [`sql::NEXT_OUTBOX_SEQ`]). This is the
/// one call an order change needs to announce itself.
pub(super) async fn enqueue_order_event(conn: Conn<'_>, event: Option<&NewOrderEvent>, now_ms: i64) -> StoreResult<()> {
    let Some(event) = event else { return Ok(()) };
    on_conn!(conn, |c| {
        let seq: i64 = sqlx::query_scalar(sql::NEXT_OUTBOX_SEQ).bind(&event.order_id).fetch_one(&mut *c).await?;
        sqlx::query(sql::INSERT_OUTBOX)
            .bind(&event.id)
            .bind(&event.receiver)
            .bind(&event.order_id)
            .bind(seq)
            .bind(event.change)
            .bind(&event.body)
            .bind(OutboxStatus::Pending)
            .bind(now_ms)
            .bind(&event.change_key)
            .execute(&mut *c)
            .await?;
    });
    Ok(())
}

/// How a claimed event's attempt ended, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttemptRecord<'a> {
    /// The receiver answered 2xx.
    Delivered,
    /// It failed; try again at `next_attempt_at_ms`.
    Retry { error: &'a str, next_attempt_at_ms: i64 },
    /// It failed for good.
    Dead { error: &'a str },
}

impl Store {
    /// Leases up to `limit` due events until `lease_until_ms` (see [`sql::CLAIM_OUTBOX`]),
    /// oldest due first; each counts one more attempt.
    #[tracing::instrument(name = "store.claim_order_events", skip_all, fields(otel.kind = "client", db.operation.name = "claim_order_events"))]
    pub async fn claim_order_events(
        &self,
        now_ms: i64,
        lease_until_ms: i64,
        limit: i64,
    ) -> StoreResult<Vec<OutboxRow>> {
        let mut claimed: Vec<OutboxRow> = on_pool!(self, |pool| {
            sqlx::query_as(sql::CLAIM_OUTBOX)
                .bind(OutboxStatus::Pending)
                .bind(now_ms)
                .bind(lease_until_ms)
                .bind(limit)
                .fetch_all(pool)
                .await?
        });
        // RETURNING gives no order.
        claimed.sort_by(|a, b| (a.next_attempt_at_ms, &a.id).cmp(&(b.next_attempt_at_ms, &b.id)));
        Ok(claimed)
    }

    /// Records how the attempt of event `id` under claim `claims` ended; false (nothing
    /// written) if the event was claimed again or redelivered since.
    #[tracing::instrument(name = "store.record_attempt", skip_all, fields(otel.kind = "client", db.operation.name = "record_attempt"))]
    pub async fn record_attempt(
        &self,
        id: &str,
        claims: i64,
        record: AttemptRecord<'_>,
        now_ms: i64,
    ) -> StoreResult<bool> {
        let written = on_pool!(self, |pool| {
            match record {
                AttemptRecord::Delivered => {
                    sqlx::query(sql::OUTBOX_DELIVERED)
                        .bind(id)
                        .bind(claims)
                        .bind(now_ms)
                        .bind(OutboxStatus::Delivered)
                        .bind(OutboxStatus::Pending)
                        .execute(pool)
                        .await?
                }
                AttemptRecord::Retry { error, next_attempt_at_ms } => {
                    sqlx::query(sql::OUTBOX_RETRY)
                        .bind(id)
                        .bind(claims)
                        .bind(error)
                        .bind(now_ms)
                        .bind(next_attempt_at_ms)
                        .bind(OutboxStatus::Pending)
                        .execute(pool)
                        .await?
                }
                AttemptRecord::Dead { error } => {
                    sqlx::query(sql::OUTBOX_DEAD)
                        .bind(id)
                        .bind(claims)
                        .bind(error)
                        .bind(now_ms)
                        .bind(OutboxStatus::Dead)
                        .bind(OutboxStatus::Pending)
                        .execute(pool)
                        .await?
                }
            }
            .rows_affected()
        });
        Ok(written == 1)
    }

    /// The operator sends event `id` again (whatever its status): pending from `now_ms`,
    /// attempts from zero, the retry horizon from now. False if there is no such event.
    #[tracing::instrument(name = "store.redeliver_order_event", skip_all, fields(otel.kind = "client", db.operation.name = "redeliver_order_event"))]
    pub async fn redeliver_order_event(&self, id: &str, now_ms: i64) -> StoreResult<bool> {
        let written = on_pool!(self, |pool| {
            sqlx::query(sql::REDELIVER_OUTBOX)
                .bind(id)
                .bind(now_ms)
                .bind(OutboxStatus::Pending)
                .execute(pool)
                .await?
                .rows_affected()
        });
        Ok(written == 1)
    }

    /// Events waiting for delivery, and when the oldest of them started waiting (`/metrics`).
    pub async fn outbox_backlog(&self) -> StoreResult<(i64, Option<i64>)> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::OUTBOX_BACKLOG).bind(OutboxStatus::Pending).fetch_one(pool).await?)
        })
    }

    #[tracing::instrument(name = "store.order_event", skip_all, fields(otel.kind = "client", db.operation.name = "order_event"))]
    pub async fn order_event(&self, id: &str) -> StoreResult<Option<OutboxRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::OUTBOX_EVENT).bind(id).fetch_optional(pool).await?))
    }

    /// Order `order_id`'s events, oldest first.
    #[tracing::instrument(name = "store.order_events_of", skip_all, fields(otel.kind = "client", db.operation.name = "order_events_of"))]
    pub async fn order_events_of(&self, order_id: &str) -> StoreResult<Vec<OutboxRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::OUTBOX_OF_ORDER).bind(order_id).fetch_all(pool).await?))
    }

    /// Up to `limit` events (with `status`, if given), oldest first.
    #[tracing::instrument(name = "store.order_events", skip_all, fields(otel.kind = "client", db.operation.name = "order_events"))]
    pub async fn order_events(&self, status: Option<OutboxStatus>, limit: i64) -> StoreResult<Vec<OutboxRow>> {
        on_pool!(self, |pool| {
            Ok(match status {
                Some(status) => {
                    sqlx::query_as(sql::OUTBOX_WITH_STATUS).bind(status).bind(limit).fetch_all(pool).await?
                }
                None => sqlx::query_as(sql::OUTBOX_ALL).bind(limit).fetch_all(pool).await?,
            })
        })
    }

    /// Deletes events delivered before `delivered_before_ms` and dead ones written before
    /// `dead_before_ms`; returns how many.
    #[tracing::instrument(name = "store.prune_order_events", skip_all, fields(otel.kind = "client", db.operation.name = "prune_order_events"))]
    pub async fn prune_order_events(&self, delivered_before_ms: i64, dead_before_ms: i64) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::PRUNE_OUTBOX)
                .bind(delivered_before_ms)
                .bind(OutboxStatus::Delivered)
                .bind(dead_before_ms)
                .bind(OutboxStatus::Dead)
                .execute(pool)
                .await?
                .rows_affected())
        })
    }
}
