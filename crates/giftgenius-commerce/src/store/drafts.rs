//! Drafts: the priced, stock-checked offers `prepare_order` makes. The same request returns
//! the same draft while it is valid; an expired one stays readable (a late commit is told it
//! expired) until pruned.

use super::dialect::{Dialect, WriteLock};
use super::orders::{Stock, short_of_stock};
use super::rows::{DraftRow, Lines};
use super::{Store, StoreResult, sql};

/// What [`Store::draft_for_request`] made of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drafted {
    /// The draft for the request (new, or the one it already had).
    Draft(Box<DraftRow>),
    /// The units of a line and those in live orders exceed its gift's stock: that gift's id.
    OutOfStock(String),
}

impl Store {
    /// In one transaction: [`Drafted::OutOfStock`] if a line's units and the gift's units in
    /// live orders exceed its `stock`, else the active, unexpired draft for `(subject,
    /// draft_key)`, or `new` inserted as that draft.
    #[tracing::instrument(name = "store.draft_for_request", skip_all, fields(otel.kind = "client", db.operation.name = "draft_for_request"))]
    pub async fn draft_for_request(&self, new: &DraftRow, stock: &Stock, now_ms: i64) -> StoreResult<Drafted> {
        let mut units = std::collections::BTreeMap::new();
        for line in new.lines() {
            *units.entry(line.gift_id).or_insert(0) += line.quantity;
        }
        let lock = WriteLock::DraftRequest { subject: &new.subject, draft_key: &new.draft_key };
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(lock).await?;
            if let Some(gift_id) = short_of_stock((&mut *tx).into(), &units, stock).await? {
                tx.rollback().await?;
                return Ok(Drafted::OutOfStock(gift_id));
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
                .bind(Lines(new.lines()).json())
                .execute(&mut *tx)
                .await?;
            let draft =
                sqlx::query_as(sql::ACTIVE_DRAFT).bind(&new.subject).bind(&new.draft_key).fetch_one(&mut *tx).await?;
            tx.commit().await?;
            Ok(Drafted::Draft(Box::new(draft)))
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
