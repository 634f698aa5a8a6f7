//! Drafts: the priced, stock-checked offers `prepare_order` makes. The same request returns
//! the same draft while it is valid; an expired one stays readable (a late commit is told it
//! expired) until pruned.

use super::dialect::{Dialect, WriteLock};
use super::rows::{DraftRow, OrderStatusColumn};
use super::{Store, StoreResult, sql};

impl Store {
    /// In one transaction: `None` if the gift's units in live orders and `new`'s quantity
    /// exceed `stock`, else the active, unexpired draft for `(subject, draft_key)`, or `new`
    /// inserted as that draft.
    #[tracing::instrument(name = "store.draft_for_request", skip_all, fields(otel.kind = "client", db.operation.name = "draft_for_request"))]
    pub async fn draft_for_request(&self, new: &DraftRow, stock: i64, now_ms: i64) -> StoreResult<Option<DraftRow>> {
        let lock = WriteLock::DraftRequest { subject: &new.subject, draft_key: &new.draft_key };
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(lock).await?;
            let sold: i64 = sqlx::query_scalar(sql::LIVE_UNITS)
                .bind(&new.gift_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .bind(OrderStatusColumn::Cancelled)
                .fetch_one(&mut *tx)
                .await?;
            if sold + new.quantity > stock {
                tx.rollback().await?;
                return Ok(None);
            }
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
                .bind(&new.needed_by)
                .bind(new.gift_wrap_minor)
                .bind(new.gift_receipt)
                .execute(&mut *tx)
                .await?;
            let draft =
                sqlx::query_as(sql::ACTIVE_DRAFT).bind(&new.subject).bind(&new.draft_key).fetch_one(&mut *tx).await?;
            tx.commit().await?;
            Ok(Some(draft))
        })
    }

    /// Deletes drafts that expired before `expired_before_ms` (not one a pending order
    /// points at); returns how many.
    #[tracing::instrument(name = "store.prune_drafts", skip_all, fields(otel.kind = "client", db.operation.name = "prune_drafts"))]
    pub async fn prune_drafts(&self, expired_before_ms: i64) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::PRUNE_DRAFTS).bind(expired_before_ms).execute(pool).await?.rows_affected())
        })
    }

    #[tracing::instrument(name = "store.draft", skip_all, fields(otel.kind = "client", db.operation.name = "draft"))]
    pub async fn draft(&self, subject: &str, id: &str) -> StoreResult<Option<DraftRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::DRAFT).bind(id).bind(subject).fetch_optional(pool).await?))
    }
}
