//! The product feed's pushes (`feed_pushes`, docs/feed.md "Pushing changes"): for each feed
//! receiver and product, what the feed should say of it (marked by a sweep), what the receiver
//! last accepted, and the push on its way (claimed with a lease, recorded fenced), as the order
//! outbox does for order events (`outbox.rs`).
//!
//! Unlike an order event, a push carries no frozen body: a receiver wants the product as it is
//! now, so the worker builds it when it sends it, and the row only says that something changed
//! since the receiver last heard. A product that changes twice before it is sent is sent once.

use super::dialect::{Dialect, WriteLock};
use super::rows::{FeedMark, FeedPushRow, OutboxStatus};
use super::{Store, StoreResult, sql};

/// How a claimed push ended, for one product.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PushRecord<'a> {
    /// The receiver accepted the product with this fingerprint.
    Delivered { fingerprint: &'a str },
    /// It failed; try again at `next_attempt_at_ms`.
    Retry { error: &'a str, next_attempt_at_ms: i64 },
    /// It failed for good.
    Dead { error: &'a str },
}

/// The products a sweep compares with: id → fingerprint as last marked, as the number its 16
/// hex digits spell (a sweep holds one per product: at a million products, 8 bytes each
/// instead of a string).
pub type Marked = std::collections::HashMap<Box<str>, u64>;

/// A fingerprint (16 hex digits) as a number; `None` for anything else (never written).
pub fn fingerprint_number(fingerprint: &str) -> Option<u64> {
    (fingerprint.len() == 16).then(|| u64::from_str_radix(fingerprint, 16).ok()).flatten()
}

impl Store {
    /// Every product of `receiver` as last marked.
    #[tracing::instrument(name = "store.feed_marked", skip_all, fields(otel.kind = "client", db.operation.name = "feed_marked"))]
    pub async fn feed_marked(&self, receiver: &str) -> StoreResult<Marked> {
        on_pool!(self, |pool| {
            let mut rows = sqlx::query_as::<_, (String, String)>(sql::FEED_MARKED).bind(receiver).fetch(pool);
            let mut marked = Marked::new();
            while let Some((id, fingerprint)) = futures::TryStreamExt::try_next(&mut rows).await? {
                // One not made by `fingerprint` compares unequal to every product: it is marked again.
                marked.insert(id.into_boxed_str(), fingerprint_number(&fingerprint).unwrap_or(0));
            }
            Ok(marked)
        })
    }

    /// Product `product_id` of `receiver` as last marked (its fingerprint and title), if ever.
    #[tracing::instrument(name = "store.feed_marked_one", skip_all, fields(otel.kind = "client", db.operation.name = "feed_marked_one"))]
    pub async fn feed_marked_one(&self, receiver: &str, product_id: &str) -> StoreResult<Option<(String, String)>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::FEED_MARKED_ONE).bind(receiver).bind(product_id).fetch_optional(pool).await?)
        })
    }

    /// Marks `marks` pending for `receiver` at `now_ms` (those marked so already are left as
    /// they are), in one transaction; returns how many rows changed.
    #[tracing::instrument(name = "store.mark_feed_products", skip_all, fields(otel.kind = "client", db.operation.name = "mark_feed_products"))]
    pub async fn mark_feed_products(&self, receiver: &str, marks: &[FeedMark], now_ms: i64) -> StoreResult<u64> {
        if marks.is_empty() {
            return Ok(0);
        }
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let mut changed = 0;
            for mark in marks {
                changed += sqlx::query(sql::MARK_FEED_PRODUCT)
                    .bind(receiver)
                    .bind(&mark.product_id)
                    .bind(&mark.fingerprint)
                    .bind(&mark.title)
                    .bind(OutboxStatus::Pending)
                    .bind(now_ms)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            }
            tx.commit().await?;
            Ok(changed)
        })
    }

    /// Leases up to `limit` of `receiver`'s due products until `lease_until_ms`, oldest due
    /// first; each counts one more attempt.
    #[tracing::instrument(name = "store.claim_feed_pushes", skip_all, fields(otel.kind = "client", db.operation.name = "claim_feed_pushes"))]
    pub async fn claim_feed_pushes(
        &self,
        receiver: &str,
        now_ms: i64,
        lease_until_ms: i64,
        limit: i64,
    ) -> StoreResult<Vec<FeedPushRow>> {
        let mut claimed: Vec<FeedPushRow> = on_pool!(self, |pool| {
            sqlx::query_as(sql::CLAIM_FEED_PUSHES)
                .bind(receiver)
                .bind(OutboxStatus::Pending)
                .bind(now_ms)
                .bind(lease_until_ms)
                .bind(limit)
                .fetch_all(pool)
                .await?
        });
        // RETURNING gives no order.
        claimed.sort_by(|a, b| a.product_id.cmp(&b.product_id));
        Ok(claimed)
    }

    /// Records how the push of each claimed row ended, at `now_ms`, in one transaction (a batch
    /// is one commit, not a hundred); for each, false (nothing written) if it was claimed again
    /// or redelivered since.
    #[tracing::instrument(name = "store.record_feed_pushes", skip_all, fields(otel.kind = "client", db.operation.name = "record_feed_pushes"))]
    pub async fn record_feed_pushes(
        &self,
        outcomes: &[(&FeedPushRow, PushRecord<'_>)],
        now_ms: i64,
    ) -> StoreResult<Vec<bool>> {
        on_pool!(self, |pool| {
            let mut tx = pool.begin_write(WriteLock::None).await?;
            let mut written = Vec::with_capacity(outcomes.len());
            for (row, record) in outcomes {
                let (receiver, product, claims) = (&row.receiver, &row.product_id, row.claims);
                let query = match record {
                    PushRecord::Delivered { fingerprint } => sqlx::query(sql::FEED_PUSH_DELIVERED)
                        .bind(receiver)
                        .bind(product)
                        .bind(claims)
                        .bind(row.marks)
                        .bind(*fingerprint)
                        .bind(now_ms)
                        .bind(OutboxStatus::Delivered)
                        .bind(OutboxStatus::Pending),
                    PushRecord::Retry { error, next_attempt_at_ms } => sqlx::query(sql::FEED_PUSH_RETRY)
                        .bind(receiver)
                        .bind(product)
                        .bind(claims)
                        .bind(*error)
                        .bind(now_ms)
                        .bind(*next_attempt_at_ms)
                        .bind(OutboxStatus::Pending),
                    PushRecord::Dead { error } => sqlx::query(sql::FEED_PUSH_DEAD)
                        .bind(receiver)
                        .bind(product)
                        .bind(claims)
                        .bind(*error)
                        .bind(now_ms)
                        .bind(OutboxStatus::Dead)
                        .bind(OutboxStatus::Pending),
                };
                written.push(query.execute(&mut *tx).await?.rows_affected() == 1);
            }
            tx.commit().await?;
            Ok(written)
        })
    }

    /// The operator pushes `receiver`'s products again from `now_ms`: those named, else those
    /// with `status`, else all of them; returns how many, and the ids named that the receiver
    /// has no row for.
    #[tracing::instrument(name = "store.redeliver_feed_pushes", skip_all, fields(otel.kind = "client", db.operation.name = "redeliver_feed_pushes"))]
    pub async fn redeliver_feed_pushes(
        &self,
        receiver: &str,
        which: Redeliver<'_>,
        now_ms: i64,
    ) -> StoreResult<(u64, Vec<String>)> {
        match which {
            Redeliver::Products(ids) => {
                let (mut done, mut unknown) = (0, Vec::new());
                for id in ids {
                    match self.redeliver_where(receiver, Some(id), None, now_ms).await? {
                        0 => unknown.push(id.clone()),
                        n => done += n,
                    }
                }
                Ok((done, unknown))
            }
            Redeliver::WithStatus(status) => {
                Ok((self.redeliver_where(receiver, None, Some(status), now_ms).await?, Vec::new()))
            }
            Redeliver::All => Ok((self.redeliver_where(receiver, None, None, now_ms).await?, Vec::new())),
        }
    }

    /// `receiver`'s product `product` (every one if `None`) with `status` (any if `None`)
    /// pending again from `now_ms`; how many.
    async fn redeliver_where(
        &self,
        receiver: &str,
        product: Option<&str>,
        status: Option<OutboxStatus>,
        now_ms: i64,
    ) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::REDELIVER_FEED_PUSHES)
                .bind(receiver)
                .bind(now_ms)
                .bind(OutboxStatus::Pending)
                .bind(product)
                .bind(status)
                .execute(pool)
                .await?
                .rows_affected())
        })
    }

    /// Up to `limit` pushes (of `receiver`, with `status`, when given), by receiver and product.
    #[tracing::instrument(name = "store.feed_pushes", skip_all, fields(otel.kind = "client", db.operation.name = "feed_pushes"))]
    pub async fn feed_pushes(
        &self,
        receiver: Option<&str>,
        status: Option<OutboxStatus>,
        limit: i64,
    ) -> StoreResult<Vec<FeedPushRow>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::FEED_PUSHES).bind(receiver).bind(status).bind(limit).fetch_all(pool).await?)
        })
    }

    /// Product pushes waiting, when the oldest of them started waiting, and how many are dead
    /// (`/metrics`).
    pub async fn feed_push_backlog(&self) -> StoreResult<(i64, Option<i64>, i64)> {
        on_pool!(self, |pool| {
            let (waiting, since): (i64, Option<i64>) =
                sqlx::query_as(sql::FEED_PUSH_BACKLOG).bind(OutboxStatus::Pending).fetch_one(pool).await?;
            let dead: i64 = sqlx::query_scalar(sql::FEED_PUSHES_DEAD).bind(OutboxStatus::Dead).fetch_one(pool).await?;
            Ok((waiting, since, dead))
        })
    }

    /// The gifts of the orders changed at or after `since_ms`: their stock may have moved.
    #[tracing::instrument(name = "store.gifts_of_orders_changed_since", skip_all, fields(otel.kind = "client", db.operation.name = "gifts_of_orders_changed_since"))]
    pub async fn gifts_of_orders_changed_since(&self, since_ms: i64) -> StoreResult<Vec<String>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_scalar(sql::GIFTS_OF_ORDERS_CHANGED_SINCE).bind(since_ms).fetch_all(pool).await?)
        })
    }
}

/// Which of a receiver's products the operator pushes again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redeliver<'a> {
    Products(&'a [String]),
    WithStatus(OutboxStatus),
    All,
}
