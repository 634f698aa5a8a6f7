//! Refunds: a paid order's cancellation refund (all that is left of its total, once partial
//! refunds are taken off) is recorded as pending before the provider is asked, and settled
//! (refund succeeded, order cancelled) by the call that holds the cancel key, by the operator's
//! request that cancelled it, or by the reconciler. The cancellation writes the order's
//! `order_update` event to the outbox in the same transaction (`outbox.rs`). Partial refunds
//! are in `fulfilment.rs`.

use super::dialect::WriteLock;
use super::keys::{Fence, Fenced, KeyMove, Write};
use super::outbox::enqueue_order_event;
use super::rows::Order;
use super::rows::{NewOrderEvent, OrderStatusColumn, RefundRow, RefundStatusColumn};
use super::tx::Conn;
use super::{Store, StoreError, StoreResult, sql};

/// The outcome of recording the refund of an order that is being cancelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BeginRefund {
    /// The refund is recorded as pending (now, or earlier under another key): ask the provider.
    Ready(RefundRow),
    /// The order can no longer be cancelled: cancelled meanwhile under another key, never paid,
    /// shipped, or nothing left to refund.
    NotPaid(Box<Order>),
}

/// Marks order `order_id`'s refund succeeded as `refund_id` and the order cancelled, on `conn` (a
/// transaction's); an error (and so the transaction rolled back) if either is in another state.
async fn refund_and_cancel(conn: Conn<'_>, order_id: &str, refund_id: &str, now_ms: i64) -> StoreResult<()> {
    let (refunded, cancelled) = on_conn!(conn, |c| {
        let refunded = sqlx::query(sql::SETTLE_REFUND)
            .bind(order_id)
            .bind(RefundStatusColumn::Succeeded)
            .bind(refund_id)
            .bind(RefundStatusColumn::Pending)
            .bind(now_ms)
            .execute(&mut *c)
            .await?
            .rows_affected();
        let cancelled = sqlx::query(sql::CANCEL_ORDER)
            .bind(order_id)
            .bind(OrderStatusColumn::Cancelled)
            .bind(OrderStatusColumn::Paid)
            .bind(now_ms)
            .bind(OrderStatusColumn::Processing)
            .execute(&mut *c)
            .await?
            .rows_affected();
        (refunded, cancelled)
    });
    if refunded != 1 || cancelled != 1 {
        return Err(StoreError::Inconsistent(format!(
            "order {order_id} was refunded ({refund_id}) but its refund or status did not match"
        )));
    }
    Ok(())
}

impl Store {
    /// In one transaction, if the fence holds: the refund of the paid (or processing) order is
    /// recorded as pending (unless it has one already), for what is left of its total once its
    /// adjustments are taken off (whatever `refund` says), and the key points at the order
    /// (`ResourceCreated`). Under the order's lock, so an operator's step cannot slip between
    /// the check and the insert.
    #[tracing::instrument(name = "store.begin_refund", skip_all, fields(otel.kind = "client", db.operation.name = "begin_refund"))]
    pub async fn begin_refund(
        &self,
        fence: &Fence,
        refund: &RefundRow,
        now_ms: i64,
    ) -> StoreResult<Fenced<BeginRefund>> {
        let advance = KeyMove::Advance { resource_id: &refund.order_id };
        let lock = WriteLock::Order { order_id: &refund.order_id };
        self.fenced(lock, fence, advance, now_ms, async |tx| {
            on_conn!(tx.conn(), |c| Ok({
                let order: Option<Order> =
                    sqlx::query_as(sql::ORDER_BY_ID).bind(&refund.order_id).fetch_optional(&mut *c).await?;
                let Some(order) = order else {
                    return Err(StoreError::Inconsistent(format!("order {} vanished", refund.order_id)));
                };
                let existing: Option<RefundRow> =
                    sqlx::query_as(sql::REFUND_OF_ORDER).bind(&refund.order_id).fetch_optional(&mut *c).await?;
                match existing {
                    Some(row) if row.status == RefundStatusColumn::Pending => Write::Commit(BeginRefund::Ready(row)),
                    Some(_) => Write::Rollback(BeginRefund::NotPaid(Box::new(order))),
                    None if !order.status.is_before_shipping() => {
                        Write::Rollback(BeginRefund::NotPaid(Box::new(order)))
                    }
                    None => {
                        let adjusted: i64 =
                            sqlx::query_scalar(sql::ADJUSTED_SUM).bind(&refund.order_id).fetch_one(&mut *c).await?;
                        let left = order.total_minor.saturating_sub(adjusted);
                        if left <= 0 {
                            Write::Rollback(BeginRefund::NotPaid(Box::new(order)))
                        } else {
                            sqlx::query(sql::INSERT_REFUND)
                                .bind(&refund.id)
                                .bind(&refund.order_id)
                                .bind(&refund.subject)
                                .bind(left)
                                .bind(refund.currency)
                                .bind(RefundStatusColumn::Pending)
                                .bind(now_ms)
                                .bind(&refund.operator_key)
                                .execute(&mut *c)
                                .await?;
                            let row =
                                sqlx::query_as(sql::REFUND_OF_ORDER).bind(&refund.order_id).fetch_one(&mut *c).await?;
                            Write::Commit(BeginRefund::Ready(row))
                        }
                    }
                }
            }))
        })
        .await
    }

    /// In one transaction, if the fence holds: the refund succeeded as `provider_refund_id`,
    /// the order is cancelled, its `event` (if it has a receiver) written to the outbox, and the
    /// key finished with `response`.
    #[tracing::instrument(name = "store.finish_refund", skip_all, fields(otel.kind = "client", db.operation.name = "finish_refund"))]
    pub async fn finish_refund(
        &self,
        fence: &Fence,
        order_id: &str,
        provider_refund_id: &str,
        response: &str,
        event: Option<&NewOrderEvent>,
        now_ms: i64,
    ) -> StoreResult<Fenced> {
        self.fenced(WriteLock::None, fence, KeyMove::Finish { response }, now_ms, async |tx| {
            refund_and_cancel(tx.conn(), order_id, provider_refund_id, now_ms).await?;
            enqueue_order_event(tx.conn(), event, now_ms).await?;
            Ok(Write::Commit(()))
        })
        .await
    }

    /// The reconciler: the pending refund succeeded as `provider_refund_id`, the order is
    /// cancelled and its `event` written (no key involved: a later retry of a cancel key finds
    /// it settled).
    #[tracing::instrument(name = "store.settle_refund", skip_all, fields(otel.kind = "client", db.operation.name = "settle_refund"))]
    pub async fn settle_refund(
        &self,
        order_id: &str,
        provider_refund_id: &str,
        event: Option<&NewOrderEvent>,
        now_ms: i64,
    ) -> StoreResult<()> {
        let mut tx = self.begin(WriteLock::None).await?;
        refund_and_cancel(tx.conn(), order_id, provider_refund_id, now_ms).await?;
        enqueue_order_event(tx.conn(), event, now_ms).await?;
        tx.commit().await
    }

    #[tracing::instrument(name = "store.refund_of_order", skip_all, fields(otel.kind = "client", db.operation.name = "refund_of_order"))]
    pub async fn refund_of_order(&self, order_id: &str) -> StoreResult<Option<RefundRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::REFUND_OF_ORDER).bind(order_id).fetch_optional(pool).await?))
    }

    /// Up to `limit` refunds pending since before `before_ms` (the reconciler's scan).
    #[tracing::instrument(name = "store.refunds_pending", skip_all, fields(otel.kind = "client", db.operation.name = "refunds_pending"))]
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
    #[tracing::instrument(name = "store.refunds_with_status", skip_all, fields(otel.kind = "client", db.operation.name = "refunds_with_status"))]
    pub async fn refunds_with_status(&self, status: RefundStatusColumn) -> StoreResult<Vec<RefundRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::REFUNDS_WITH_STATUS).bind(status).fetch_all(pool).await?))
    }
}
