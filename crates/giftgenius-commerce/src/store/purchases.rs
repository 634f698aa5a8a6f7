//! A purchase's first step in one transaction (issue 41): the caller's draft read, the order
//! created from it against the gift's stock, and the idempotency key claimed already pointing
//! at that order (`ResourceCreated`), with the order's charging window. One commit instead of
//! the draft read, the key's claim and the order's creation one after another.
//!
//! Only the plain case is done here: a new key, and a draft that can be ordered and has no
//! live order. Anything else (the key exists, the draft has a live order, out of stock, no such
//! draft, a draft that cannot be ordered) writes nothing and hands the draft it read back, and
//! the caller goes the general way (`keys.rs`'s claim, then `orders.rs`'s creation), which
//! answers every other case as it always did.

use super::dialect::WriteLock;
use super::keys::Scope;
use super::orders::{Stock, insert_order, short_of_stock};
use super::rows::Order;
use super::rows::{DraftRow, OrderStatusColumn, RecoveryPoint};
use super::{Store, StoreResult, sql};

/// What the caller makes of the draft it was given: the key's fingerprint (it covers the
/// draft's delivery details) and the order to create, with the gift's stock and the charging
/// window the order starts with (see [`Store::create_order_charging`]).
#[derive(Debug, Clone)]
pub struct PurchasePlan {
    pub fingerprint: String,
    pub order: Order,
    pub stock: Stock,
    pub charging_until_ms: Option<i64>,
}

/// What the first step did.
#[derive(Debug)]
pub enum PurchaseBegun {
    /// The key `scope` is held (generation 1, lease until the given time) and points at the
    /// order of the plan, which now exists.
    Created(Box<PurchasePlan>),
    /// Nothing was written; the caller's draft as it was read (`None`: not found), for the
    /// general way.
    NotHere(Option<Box<DraftRow>>),
}

impl Store {
    /// In one transaction: reads `subject`'s draft `draft_id`, asks `plan` what to make of it,
    /// and when it names an order, creates that order (the draft has no live order and the
    /// gift's stock allows it) and claims `scope` (new; generation 1, leased until
    /// `lease_until_ms`) at `ResourceCreated` with the order's id. All of it, or nothing.
    ///
    /// Its span `store.begin_purchase` covers the step from its start to its return, and the
    /// statements run under the caller's span. (sqlx's SQLite connection enters the current span
    /// on its worker thread for each statement and leaves it after answering, and a span's end
    /// is the last time it was left: under load, the step's span would end after the charge
    /// that follows it had begun, and a trace show the store step overlapping the provider.)
    pub async fn begin_purchase(
        &self,
        scope: &Scope,
        draft_id: &str,
        lease_until_ms: i64,
        now_ms: i64,
        plan: impl FnOnce(&DraftRow) -> Option<PurchasePlan>,
    ) -> StoreResult<PurchaseBegun> {
        let span =
            tracing::info_span!("store.begin_purchase", otel.kind = "client", db.operation.name = "begin_purchase");
        let begun = self.begin_purchase_statements(scope, draft_id, lease_until_ms, now_ms, plan).await;
        // Entered and left once, now: the span ends here.
        span.in_scope(|| ());
        begun
    }

    async fn begin_purchase_statements(
        &self,
        scope: &Scope,
        draft_id: &str,
        lease_until_ms: i64,
        now_ms: i64,
        plan: impl FnOnce(&DraftRow) -> Option<PurchasePlan>,
    ) -> StoreResult<PurchaseBegun> {
        let mut tx = self.begin(WriteLock::None).await?;
        let draft: Option<DraftRow> = on_conn!(tx.conn(), |c| {
            sqlx::query_as(sql::DRAFT).bind(draft_id).bind(&scope.subject).fetch_optional(&mut *c).await
        })?;
        let Some(plan) = draft.as_ref().and_then(plan) else {
            tx.rollback().await?;
            return Ok(PurchaseBegun::NotHere(draft.map(Box::new)));
        };
        let order = &plan.order;
        // As in `create_order_charging`: the stock check and the insert must not interleave
        // with another replica's for the same gifts (PostgreSQL; SQLite's writer lock is held).
        let mut units = order.units();
        let gift_ids: Vec<&str> = units.keys().map(String::as_str).collect();
        tx.lock(WriteLock::GiftStock { gift_ids: &gift_ids }).await?;
        // The first gift's units are read with the draft's live orders (one statement: a
        // single gift's purchase, the common case, reads no more); the others' after.
        let Some((first_gift, first_units)) = units.pop_first() else {
            tx.rollback().await?;
            return Ok(PurchaseBegun::NotHere(draft.map(Box::new)));
        };
        let (live, sold): (i64, i64) = on_conn!(tx.conn(), |c| {
            sqlx::query_as(sql::DRAFT_LIVE_ORDERS_AND_GIFT_UNITS)
                .bind(&order.draft_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .bind(&first_gift)
                .bind(OrderStatusColumn::Cancelled)
                .fetch_one(&mut *c)
                .await?
        });
        let fits = live == 0
            && sold + first_units <= plan.stock.get(&first_gift).copied().unwrap_or(0)
            && short_of_stock(tx.conn(), &units, &plan.stock).await?.is_none();
        let claimed = fits
            && on_conn!(tx.conn(), |c| {
                scoped!(sql::INSERT_KEY_WITH_RESOURCE, scope)
                    .bind(&plan.fingerprint)
                    .bind(RecoveryPoint::ResourceCreated)
                    .bind(&order.id)
                    .bind(lease_until_ms)
                    .bind(now_ms)
                    .execute(&mut *c)
                    .await?
                    .rows_affected()
                    == 1
            });
        if !claimed {
            tx.rollback().await?;
            return Ok(PurchaseBegun::NotHere(draft.map(Box::new)));
        }
        match insert_order(tx.conn(), order, now_ms, plan.charging_until_ms).await {
            Ok(()) => {}
            // Another order for the draft won (not while the lock above is taken): the general way answers.
            Err(sqlx::Error::Database(e)) if e.is_unique_violation() => {
                tx.rollback().await?;
                return Ok(PurchaseBegun::NotHere(draft.map(Box::new)));
            }
            Err(e) => return Err(e.into()),
        }
        tx.commit().await?;
        Ok(PurchaseBegun::Created(Box::new(plan)))
    }
}
