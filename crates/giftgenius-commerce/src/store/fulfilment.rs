//! An order's life after payment (issue 25 item 5): the operator's status changes (processing,
//! shipped, completed), partial refunds (`order_adjustments`) and the operator's cancellation (a
//! refund of all that is left, before shipping), each written with its order event.
//!
//! The service (`crate::operator`) reads an order's [`OrderFacts`], decides, and builds the
//! event from the facts as they will be. Each step here then takes the order's lock, checks that
//! the facts are still the ones the event was built from, and only then writes the change and
//! its event in one transaction; otherwise it writes nothing and answers `false` (the service
//! reads again). So an event never describes an order another change overtook, and two changes
//! of one order never interleave, on either database.

use super::outbox::enqueue_order_event;
use super::rows::Order;
use super::rows::{AdjustmentRow, NewOrderEvent, OrderFacts, OrderStatusColumn, RefundRow, RefundStatusColumn};
use super::tx::Conn;
use super::{Store, StoreError, StoreResult, sql};

/// Order `order_id`'s facts read on `conn` (the pool's, or a transaction's), or `None` if there
/// is no such order.
pub(super) async fn order_facts(conn: Conn<'_>, order_id: &str) -> StoreResult<Option<OrderFacts>> {
    on_conn!(conn, |c| {
        let order: Option<Order> = sqlx::query_as(sql::ORDER_BY_ID).bind(order_id).fetch_optional(&mut *c).await?;
        let Some(order) = order else { return Ok(None) };
        let refund: Option<RefundRow> =
            sqlx::query_as(sql::REFUND_OF_ORDER).bind(order_id).fetch_optional(&mut *c).await?;
        let adjustments: Vec<AdjustmentRow> =
            sqlx::query_as(sql::ADJUSTMENTS_OF_ORDER).bind(order_id).fetch_all(&mut *c).await?;
        Ok(Some(OrderFacts { order, refund, adjustments }))
    })
}

impl Store {
    /// Order `order_id` (any subject's) with its cancellation's refund and its adjustments.
    #[tracing::instrument(name = "store.order_facts", skip_all, fields(otel.kind = "client", db.operation.name = "order_facts"))]
    pub async fn order_facts(&self, order_id: &str) -> StoreResult<Option<OrderFacts>> {
        order_facts(self.acquire().await?.conn(), order_id).await
    }

    /// Order `order_id`'s adjustments, oldest first.
    #[tracing::instrument(name = "store.adjustments_of", skip_all, fields(otel.kind = "client", db.operation.name = "adjustments_of"))]
    pub async fn adjustments_of(&self, order_id: &str) -> StoreResult<Vec<AdjustmentRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::ADJUSTMENTS_OF_ORDER).bind(order_id).fetch_all(pool).await?))
    }

    /// If the order's facts are still `seen`: it becomes `changed` (its status, steps and
    /// shipment) and its `event` is written, in one transaction. False if the facts changed.
    #[tracing::instrument(name = "store.advance_order", skip_all, fields(otel.kind = "client", db.operation.name = "advance_order"))]
    pub async fn advance_order(
        &self,
        seen: &OrderFacts,
        changed: &Order,
        event: Option<&NewOrderEvent>,
        now_ms: i64,
    ) -> StoreResult<bool> {
        let steps = &changed.fulfilment;
        self.checked(seen, async |tx| {
            on_conn!(tx.conn(), |c| {
                let advanced = sqlx::query(sql::ADVANCE_ORDER)
                    .bind(&changed.id)
                    .bind(changed.status)
                    .bind(steps.processing_at_ms)
                    .bind(steps.shipped_at_ms)
                    .bind(steps.completed_at_ms)
                    .bind(&steps.carrier)
                    .bind(&steps.tracking_number)
                    .bind(&steps.tracking_url)
                    .bind(now_ms)
                    .bind(seen.order.status)
                    .execute(&mut *c)
                    .await?
                    .rows_affected();
                if advanced != 1 {
                    return Err(StoreError::Inconsistent(format!(
                        "order {} matched its facts but not its status",
                        changed.id
                    )));
                }
                enqueue_order_event((&mut *c).into(), event, now_ms).await?;
                Ok(())
            })
        })
        .await
    }

    /// If the order's facts are still `seen`: `adjustment` is recorded as pending (the provider
    /// is asked next), as the order's next one (its `seq` follows `seen`'s last). False if the
    /// facts changed.
    #[tracing::instrument(name = "store.begin_adjustment", skip_all, fields(otel.kind = "client", db.operation.name = "begin_adjustment"))]
    pub async fn begin_adjustment(
        &self,
        seen: &OrderFacts,
        adjustment: &AdjustmentRow,
        now_ms: i64,
    ) -> StoreResult<bool> {
        self.checked(seen, async |tx| {
            on_conn!(tx.conn(), |c| {
                sqlx::query(sql::INSERT_ADJUSTMENT)
                    .bind(&adjustment.id)
                    .bind(&adjustment.order_id)
                    .bind(&adjustment.operator_key)
                    .bind(adjustment.amount_minor)
                    .bind(adjustment.currency)
                    .bind(&adjustment.reason)
                    .bind(RefundStatusColumn::Pending)
                    .bind(now_ms)
                    .bind(adjustment.seq)
                    .execute(&mut *c)
                    .await?;
                Ok(())
            })
        })
        .await
    }

    /// If the order's facts are still `seen`: its pending adjustment `adjustment_id` succeeded as
    /// `provider_refund_id` and its `event` is written. False if the facts changed (settled
    /// meanwhile by the reconciler or a retry, for one).
    #[tracing::instrument(name = "store.settle_adjustment", skip_all, fields(otel.kind = "client", db.operation.name = "settle_adjustment"))]
    pub async fn settle_adjustment(
        &self,
        seen: &OrderFacts,
        adjustment_id: &str,
        provider_refund_id: &str,
        event: Option<&NewOrderEvent>,
        now_ms: i64,
    ) -> StoreResult<bool> {
        self.checked(seen, async |tx| {
            on_conn!(tx.conn(), |c| {
                let settled = sqlx::query(sql::SETTLE_ADJUSTMENT)
                    .bind(adjustment_id)
                    .bind(RefundStatusColumn::Succeeded)
                    .bind(provider_refund_id)
                    .bind(now_ms)
                    .bind(RefundStatusColumn::Pending)
                    .execute(&mut *c)
                    .await?
                    .rows_affected();
                if settled != 1 {
                    return Err(StoreError::Inconsistent(format!(
                        "adjustment {adjustment_id} matched its order's facts but is not pending"
                    )));
                }
                enqueue_order_event((&mut *c).into(), event, now_ms).await?;
                Ok(())
            })
        })
        .await
    }

    /// If the order's facts are still `seen`: `adjustment`, a refund already made at the
    /// provider outside our tools (its dashboard), is recorded succeeded with its `event`. False
    /// if the facts changed. Its key (`stripe:<refund id>`) is unique per order: never twice.
    #[tracing::instrument(name = "store.record_provider_refund", skip_all, fields(otel.kind = "client", db.operation.name = "record_provider_refund"))]
    pub async fn record_provider_refund(
        &self,
        seen: &OrderFacts,
        adjustment: &AdjustmentRow,
        event: Option<&NewOrderEvent>,
        now_ms: i64,
    ) -> StoreResult<bool> {
        self.checked(seen, async |tx| {
            on_conn!(tx.conn(), |c| {
                sqlx::query(sql::INSERT_SETTLED_ADJUSTMENT)
                    .bind(&adjustment.id)
                    .bind(&adjustment.order_id)
                    .bind(&adjustment.operator_key)
                    .bind(adjustment.amount_minor)
                    .bind(adjustment.currency)
                    .bind(&adjustment.reason)
                    .bind(RefundStatusColumn::Succeeded)
                    .bind(&adjustment.provider_refund_id)
                    .bind(now_ms)
                    .bind(adjustment.seq)
                    .execute(&mut *c)
                    .await?;
                enqueue_order_event((&mut *c).into(), event, now_ms).await?;
                Ok(())
            })
        })
        .await
    }

    /// If the order's facts are still `seen` (paid or processing, no refund yet): `refund`, a
    /// refund already made at the provider outside our tools that covers all that is left of
    /// the order, is recorded succeeded as its cancellation, the order cancelled, with its
    /// `event`, in one transaction: what the operator's refund of everything left does, except
    /// that the provider was not asked by us. False if the facts changed.
    #[tracing::instrument(name = "store.record_provider_cancellation", skip_all, fields(otel.kind = "client", db.operation.name = "record_provider_cancellation"))]
    pub async fn record_provider_cancellation(
        &self,
        seen: &OrderFacts,
        refund: &RefundRow,
        event: Option<&NewOrderEvent>,
        now_ms: i64,
    ) -> StoreResult<bool> {
        self.checked(seen, async |tx| {
            on_conn!(tx.conn(), |c| {
                sqlx::query(sql::INSERT_SETTLED_REFUND)
                    .bind(&refund.id)
                    .bind(&refund.order_id)
                    .bind(&refund.subject)
                    .bind(refund.amount_minor)
                    .bind(refund.currency)
                    .bind(RefundStatusColumn::Succeeded)
                    .bind(&refund.provider_refund_id)
                    .bind(now_ms)
                    .bind(&refund.operator_key)
                    .execute(&mut *c)
                    .await?;
                let cancelled = sqlx::query(sql::CANCEL_ORDER)
                    .bind(&refund.order_id)
                    .bind(OrderStatusColumn::Cancelled)
                    .bind(OrderStatusColumn::Paid)
                    .bind(now_ms)
                    .bind(OrderStatusColumn::Processing)
                    .execute(&mut *c)
                    .await?
                    .rows_affected();
                if cancelled != 1 {
                    return Err(StoreError::Inconsistent(format!(
                        "order {} was refunded at the provider but is not paid",
                        refund.order_id
                    )));
                }
                enqueue_order_event((&mut *c).into(), event, now_ms).await?;
                Ok(())
            })
        })
        .await
    }

    /// If the order's facts are still `seen`: the operator's cancellation `refund` (all that is
    /// left of the order) is recorded as pending; the provider is asked next, and
    /// [`Store::settle_refund`] finishes it as it finishes the buyer's. False if the facts changed.
    #[tracing::instrument(name = "store.begin_operator_cancellation", skip_all, fields(otel.kind = "client", db.operation.name = "begin_operator_cancellation"))]
    pub async fn begin_operator_cancellation(
        &self,
        seen: &OrderFacts,
        refund: &RefundRow,
        now_ms: i64,
    ) -> StoreResult<bool> {
        self.checked(seen, async |tx| {
            on_conn!(tx.conn(), |c| {
                sqlx::query(sql::INSERT_REFUND)
                    .bind(&refund.id)
                    .bind(&refund.order_id)
                    .bind(&refund.subject)
                    .bind(refund.amount_minor)
                    .bind(refund.currency)
                    .bind(RefundStatusColumn::Pending)
                    .bind(now_ms)
                    .bind(&refund.operator_key)
                    .execute(&mut *c)
                    .await?;
                Ok(())
            })
        })
        .await
    }

    /// Up to `limit` adjustments pending since before `before_ms` (the reconciler's scan).
    #[tracing::instrument(name = "store.adjustments_pending", skip_all, fields(otel.kind = "client", db.operation.name = "adjustments_pending"))]
    pub async fn adjustments_pending(&self, before_ms: i64, limit: i64) -> StoreResult<Vec<AdjustmentRow>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::ADJUSTMENTS_PENDING)
                .bind(RefundStatusColumn::Pending)
                .bind(before_ms)
                .bind(limit)
                .fetch_all(pool)
                .await?)
        })
    }
}
