//! Orders: created from a draft against the gift's stock, charged once, and settled as paid or
//! declined, by the call that holds the order's key or by the reconciler for orders nobody
//! retries. (A paid order's cancellation is in `refunds.rs`.) Paying an order writes its
//! `order_create` event to the outbox in the same transaction (`outbox.rs`).

use super::dialect::WriteLock;
use super::keys::{Fence, Fenced, KeyMove, Write, finish_keys_of_order, move_key};
use super::outbox::enqueue_order_event;
use super::rows::{Lines, Order};
use super::rows::{NewOrderEvent, OrderStatusColumn};
use super::tx::Conn;
use super::{Store, StoreError, StoreResult, sql};

/// Whether a charge request may go to the provider for an order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargeStart {
    /// The order is pending and now marked as charging until the given time.
    Ready,
    /// The order is no longer pending (paid or declined meanwhile): read it instead.
    Settled,
}

/// How an order's charge ended, for [`Store::settle`].
#[derive(Debug, Clone, Copy)]
pub enum Settlement<'a> {
    /// Charged as `charge_id`; `event` is the order's `order_create` event, if it has a receiver.
    Paid { charge_id: &'a str, event: Option<&'a NewOrderEvent> },
    /// Declined, refused, or never charged: nothing was taken.
    Declined,
}

/// Who settles an order, for [`Store::settle`].
#[derive(Debug, Clone, Copy)]
pub enum SettledBy<'a> {
    /// The call that holds the order's key (its fence) and asked the provider itself.
    KeyHolder(&'a Fence),
    /// Anyone who asked the provider about the order later, at `asked_at_ms`.
    Provider { asked_at_ms: i64 },
}

/// The outcome of creating the order row for a draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateOrder {
    Created,
    /// Not enough stock left for a line: the first such gift's id.
    OutOfStock(String),
    /// The draft already has a live order (placed under another key).
    DraftAlreadyOrdered(Box<Order>),
}

/// What each gift has in stock, by gift id, as the catalog says now (a gift missing here has none).
pub type Stock = std::collections::BTreeMap<String, i64>;

/// Inserts `order` as pending payment on `conn`, with its units and the charging window
/// `charging_until_ms`; the driver's error as it is (the caller tells a unique violation apart).
pub(super) async fn insert_order(
    conn: Conn<'_>,
    order: &Order,
    now_ms: i64,
    charging_until_ms: Option<i64>,
) -> Result<(), sqlx::Error> {
    on_conn!(conn, |c| {
        sqlx::query(sql::INSERT_ORDER)
            .bind(&order.id)
            .bind(&order.subject)
            .bind(&order.draft_id)
            .bind(&order.gift_id)
            .bind(&order.gift_title)
            .bind(&order.merchant)
            .bind(order.quantity)
            .bind(order.currency)
            .bind(order.total_minor)
            .bind(OrderStatusColumn::PendingPayment)
            .bind(now_ms)
            .bind(&order.delivery)
            .bind(&order.destination_city)
            .bind(&order.destination_country)
            .bind(charging_until_ms)
            .bind(order.gift_wrap_minor)
            .bind(order.gift_receipt)
            .bind(&order.arrives_earliest)
            .bind(&order.arrives_latest)
            // Never '[]' (an older server's row, counted by its columns): its units are written below.
            .bind(Lines(order.lines()).json())
            .execute(&mut *c)
            .await?;
        for (gift_id, quantity) in order.units() {
            sqlx::query(sql::INSERT_ORDER_UNITS).bind(&order.id).bind(gift_id).bind(quantity).execute(&mut *c).await?;
        }
    });
    Ok(())
}

/// The first gift (by id) of `units` whose units in live orders and these would exceed its
/// `stock`, if any.
pub(super) async fn short_of_stock(
    conn: Conn<'_>,
    units: &std::collections::BTreeMap<String, i64>,
    stock: &Stock,
) -> Result<Option<String>, sqlx::Error> {
    on_conn!(conn, |c| {
        for (gift_id, wanted) in units {
            let sold: i64 = sqlx::query_scalar(sql::LIVE_UNITS)
                .bind(gift_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .bind(OrderStatusColumn::Cancelled)
                .fetch_one(&mut *c)
                .await?;
            if sold + wanted > stock.get(gift_id).copied().unwrap_or(0) {
                return Ok(Some(gift_id.clone()));
            }
        }
    });
    Ok(None)
}

impl Store {
    /// In one transaction: check stock (`stock` minus units in live orders), insert `order` as
    /// pending payment and advance the key to `ResourceCreated` with the order's id (nothing
    /// at all if the fence is stale).
    pub async fn create_order(
        &self,
        fence: &Fence,
        order: &Order,
        stock: &Stock,
        now_ms: i64,
    ) -> StoreResult<Fenced<CreateOrder>> {
        self.create_order_charging(fence, order, stock, now_ms, None).await
    }

    /// [`Store::create_order`] for a caller that charges the order at once: it is created with
    /// its charge request in flight until `charging_until_ms` (what [`Store::begin_charge`] would
    /// mark next, in a transaction and an fsync of its own), when given.
    #[tracing::instrument(name = "store.create_order", skip_all, fields(otel.kind = "client", db.operation.name = "create_order"))]
    pub async fn create_order_charging(
        &self,
        fence: &Fence,
        order: &Order,
        stock: &Stock,
        now_ms: i64,
        charging_until_ms: Option<i64>,
    ) -> StoreResult<Fenced<CreateOrder>> {
        // The stock check and the insert must not interleave with another replica's for the same
        // gifts. Every order of a draft has the draft's gifts, so this also serializes orders for
        // the same draft; the unique index `orders_one_live_per_draft` stays the last line of
        // defence.
        let units = order.units();
        let gift_ids: Vec<&str> = units.keys().map(String::as_str).collect();
        let lock = WriteLock::GiftStock { gift_ids: &gift_ids };
        let advance = KeyMove::Advance { resource_id: &order.id };
        // `None`: the insert hit the unique index (read below, once the transaction is over).
        let written: Fenced<Option<CreateOrder>> = self
            .fenced(lock, fence, advance, now_ms, async |tx| {
                let live: Option<Order> = on_conn!(tx.conn(), |c| {
                    sqlx::query_as(sql::LIVE_ORDER_FOR_DRAFT)
                        .bind(&order.draft_id)
                        .bind(OrderStatusColumn::PaymentDeclined)
                        .fetch_optional(&mut *c)
                        .await?
                });
                if let Some(existing) = live {
                    return Ok(Write::Rollback(Some(CreateOrder::DraftAlreadyOrdered(Box::new(existing)))));
                }
                if let Some(gift_id) = short_of_stock(tx.conn(), &units, stock).await? {
                    return Ok(Write::Rollback(Some(CreateOrder::OutOfStock(gift_id))));
                }
                Ok(match insert_order(tx.conn(), order, now_ms, charging_until_ms).await {
                    Ok(_) => Write::Commit(Some(CreateOrder::Created)),
                    Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Write::Rollback(None),
                    Err(e) => return Err(e.into()),
                })
            })
            .await?;
        match written {
            Fenced::Written(Some(created)) => Ok(Fenced::Written(created)),
            // Cannot happen while every writer holds the lock above; if it ever does, the other
            // order won and this call reports it like the check above would have.
            Fenced::Written(None) => match self.live_order_for_draft(&order.draft_id).await? {
                Some(existing) => Ok(Fenced::Written(CreateOrder::DraftAlreadyOrdered(Box::new(existing)))),
                None => Err(StoreError::Inconsistent(format!(
                    "order {} hit the one-live-order-per-draft index, but the draft has no live order",
                    order.id
                ))),
            },
            Fenced::Stale => Ok(Fenced::Stale),
        }
    }

    /// `subject`'s order `id`.
    #[tracing::instrument(name = "store.order", skip_all, fields(otel.kind = "client", db.operation.name = "order"))]
    pub async fn order(&self, subject: &str, id: &str) -> StoreResult<Option<Order>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::ORDER).bind(id).bind(subject).fetch_optional(pool).await?))
    }

    /// Up to `limit` of `subject`'s orders older than `before` in (created_at_ms, id) order,
    /// newest first.
    #[tracing::instrument(name = "store.orders_of", skip_all, fields(otel.kind = "client", db.operation.name = "orders_of"))]
    pub async fn orders_of(&self, subject: &str, before: (i64, &str), limit: i64) -> StoreResult<Vec<Order>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::ORDERS_OF_SUBJECT)
                .bind(subject)
                .bind(before.0)
                .bind(before.1)
                .bind(limit)
                .fetch_all(pool)
                .await?)
        })
    }

    /// Any subject's order `id` (a key's resource, the checkout page).
    #[tracing::instrument(name = "store.order_by_id", skip_all, fields(otel.kind = "client", db.operation.name = "order_by_id"))]
    pub async fn order_by_id(&self, id: &str) -> StoreResult<Option<Order>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::ORDER_BY_ID).bind(id).fetch_optional(pool).await?))
    }

    /// The draft's live (pending or paid) order, if any.
    #[tracing::instrument(name = "store.live_order_for_draft", skip_all, fields(otel.kind = "client", db.operation.name = "live_order_for_draft"))]
    pub async fn live_order_for_draft(&self, draft_id: &str) -> StoreResult<Option<Order>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::LIVE_ORDER_FOR_DRAFT)
                .bind(draft_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .fetch_optional(pool)
                .await?)
        })
    }

    /// The units every gift has in live orders (those with none are not listed): what
    /// [`Store::units_sold`] says of each, in one read.
    #[tracing::instrument(name = "store.units_sold_by_gift", skip_all, fields(otel.kind = "client", db.operation.name = "units_sold_by_gift"))]
    pub async fn units_sold_by_gift(&self) -> StoreResult<std::collections::HashMap<String, i64>> {
        on_pool!(self, |pool| {
            let rows: Vec<(String, i64)> = sqlx::query_as(sql::LIVE_UNITS_BY_GIFT)
                .bind(OrderStatusColumn::PaymentDeclined)
                .bind(OrderStatusColumn::Cancelled)
                .fetch_all(pool)
                .await?;
            Ok(rows.into_iter().collect())
        })
    }

    /// Units of a gift in live (pending or paid) orders.
    #[tracing::instrument(name = "store.units_sold", skip_all, fields(otel.kind = "client", db.operation.name = "units_sold"))]
    pub async fn units_sold(&self, gift_id: &str) -> StoreResult<i64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_scalar(sql::LIVE_UNITS)
                .bind(gift_id)
                .bind(OrderStatusColumn::PaymentDeclined)
                .bind(OrderStatusColumn::Cancelled)
                .fetch_one(pool)
                .await?)
        })
    }

    /// In one transaction, if the fence holds: the pending order may now have a charge request
    /// in flight until `charging_until_ms` (the reconciler leaves it alone until then).
    #[tracing::instrument(name = "store.begin_charge", skip_all, fields(otel.kind = "client", db.operation.name = "begin_charge"))]
    pub async fn begin_charge(
        &self,
        fence: &Fence,
        order_id: &str,
        charging_until_ms: i64,
        now_ms: i64,
    ) -> StoreResult<Fenced<ChargeStart>> {
        self.fenced(WriteLock::None, fence, KeyMove::Hold, now_ms, async |tx| {
            on_conn!(tx.conn(), |c| Ok({
                let pending = sqlx::query(sql::BEGIN_CHARGE)
                    .bind(order_id)
                    .bind(charging_until_ms)
                    .bind(now_ms)
                    .bind(OrderStatusColumn::PendingPayment)
                    .execute(&mut *c)
                    .await?
                    .rows_affected();
                Write::Commit(if pending == 1 { ChargeStart::Ready } else { ChargeStart::Settled })
            }))
        })
        .await
    }

    /// In one transaction, if the fence holds: the pending order waits until `until_ms` for the
    /// person to confirm `payment` with their bank (3-D Secure). The key stays unfinished (a
    /// retry asks the provider again; settling the order finishes it). False if it is no longer
    /// pending.
    #[tracing::instrument(name = "store.await_authentication", skip_all, fields(otel.kind = "client", db.operation.name = "await_authentication"))]
    pub async fn await_authentication(
        &self,
        fence: &Fence,
        order_id: &str,
        payment: &str,
        until_ms: i64,
        now_ms: i64,
    ) -> StoreResult<Fenced<bool>> {
        self.fenced(WriteLock::None, fence, KeyMove::Hold, now_ms, async |tx| {
            on_conn!(tx.conn(), |c| Ok({
                let waiting = sqlx::query(sql::AWAIT_AUTHENTICATION)
                    .bind(order_id)
                    .bind(payment)
                    .bind(until_ms)
                    .bind(OrderStatusColumn::PendingPayment)
                    .bind(now_ms)
                    .execute(&mut *c)
                    .await?
                    .rows_affected();
                Write::Commit(waiting == 1)
            }))
        })
        .await
    }

    /// The order charged (or being charged) as `charge` (Stripe: its PaymentIntent), if any.
    #[tracing::instrument(name = "store.order_by_charge", skip_all, fields(otel.kind = "client", db.operation.name = "order_by_charge"))]
    pub async fn order_by_charge(&self, charge: &str) -> StoreResult<Option<Order>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::ORDER_BY_CHARGE).bind(charge).fetch_optional(pool).await?))
    }

    // --- reconciling ---

    /// Up to `limit` orders to reconcile: pending since before `created_before_ms`, with no
    /// charge request in flight and no key leased at `now_ms`, after `after` in
    /// (created_at_ms, id) order.
    #[tracing::instrument(name = "store.orders_to_reconcile", skip_all, fields(otel.kind = "client", db.operation.name = "orders_to_reconcile"))]
    pub async fn orders_to_reconcile(
        &self,
        created_before_ms: i64,
        now_ms: i64,
        after: (i64, &str),
        limit: i64,
    ) -> StoreResult<Vec<Order>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::ORDERS_TO_RECONCILE)
                .bind(OrderStatusColumn::PendingPayment)
                .bind(created_before_ms)
                .bind(now_ms)
                .bind(after.0)
                .bind(after.1)
                .bind(limit)
                .fetch_all(pool)
                .await?)
        })
    }

    /// Settles a charged order on its charge's outcome, in one transaction: the one step every
    /// way of paying ends with (the tools' commit and sheet, ACP's complete and its resume, the
    /// reconciler, and through it Stripe's webhook). The order is paid with its charge and its
    /// `order_create` event written to the outbox (if it has a receiver), or declined (its stock
    /// free again); the keys answer `response` from then on.
    ///
    /// `by` says who settles, and so what may be found and which keys finish:
    /// - [`SettledBy::KeyHolder`]: the call holding the order's key, which just got the provider's
    ///   answer to its own charge request. Nothing is written if its fence is stale; its key is
    ///   finished. A replay (already paid with this charge, already declined) writes the same
    ///   again without a second event; any other status contradicts the charge and is an error.
    /// - [`SettledBy::Provider`]: anyone who learnt the outcome from the provider later. Only a
    ///   pending order settles, a decline only if no charge request may still have been in
    ///   flight at `asked_at_ms`; every unfinished commit_order key pointing at the order is
    ///   finished (their holders' writes are refused from now on).
    ///
    /// `Written(true)`: settled now; `Written(false)`: a provider's settlement found the order
    /// no longer pending (someone settled it first); `Stale`: the holder lost its key.
    #[tracing::instrument(name = "store.settle", skip_all, fields(otel.kind = "client", db.operation.name = "settle"))]
    pub async fn settle(
        &self,
        order_id: &str,
        outcome: Settlement<'_>,
        by: SettledBy<'_>,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<Fenced<bool>> {
        let mut tx = self.begin(WriteLock::None).await?;
        if let SettledBy::KeyHolder(fence) = by
            && !move_key(tx.conn(), fence, KeyMove::Finish { response }, now_ms).await?
        {
            tx.rollback().await?;
            return Ok(Fenced::Stale);
        }
        let settled = on_conn!(tx.conn(), |c| {
            let query = match (outcome, by) {
                // A holder's replay matches too: paid with this very charge, or declined.
                (Settlement::Paid { charge_id, .. }, SettledBy::KeyHolder(_)) => sqlx::query(sql::MARK_PAID)
                    .bind(order_id)
                    .bind(OrderStatusColumn::Paid)
                    .bind(charge_id)
                    .bind(now_ms)
                    .bind(OrderStatusColumn::PendingPayment),
                (Settlement::Declined, SettledBy::KeyHolder(_)) => sqlx::query(sql::MARK_DECLINED)
                    .bind(order_id)
                    .bind(OrderStatusColumn::PaymentDeclined)
                    .bind(now_ms)
                    .bind(OrderStatusColumn::PendingPayment),
                (Settlement::Paid { charge_id, .. }, SettledBy::Provider { .. }) => sqlx::query(sql::SETTLE_PAID)
                    .bind(order_id)
                    .bind(OrderStatusColumn::Paid)
                    .bind(charge_id)
                    .bind(OrderStatusColumn::PendingPayment)
                    .bind(now_ms),
                (Settlement::Declined, SettledBy::Provider { asked_at_ms }) => sqlx::query(sql::SETTLE_DECLINED)
                    .bind(order_id)
                    .bind(OrderStatusColumn::PaymentDeclined)
                    .bind(OrderStatusColumn::PendingPayment)
                    .bind(now_ms)
                    .bind(asked_at_ms),
            };
            query.execute(&mut *c).await?.rows_affected() == 1
        });
        match by {
            SettledBy::KeyHolder(_) if !settled => {
                return Err(StoreError::Inconsistent(match outcome {
                    Settlement::Paid { charge_id, .. } => {
                        format!("order {order_id} was charged ({charge_id}) but is no longer pending")
                    }
                    Settlement::Declined => format!("order {order_id} was declined by the provider but is paid"),
                }));
            }
            SettledBy::Provider { .. } if !settled => {
                tx.rollback().await?;
                return Ok(Fenced::Written(false));
            }
            SettledBy::KeyHolder(_) | SettledBy::Provider { .. } => {}
        }
        if let Settlement::Paid { event, .. } = outcome {
            enqueue_order_event(tx.conn(), event, now_ms).await?;
        }
        if let SettledBy::Provider { .. } = by {
            finish_keys_of_order(tx.conn(), order_id, response, now_ms).await?;
        }
        tx.commit().await?;
        Ok(Fenced::Written(true))
    }

    /// Orders with `status`, oldest first (tests and the chaos run check invariants on them).
    #[tracing::instrument(name = "store.orders_with_status", skip_all, fields(otel.kind = "client", db.operation.name = "orders_with_status"))]
    pub async fn orders_with_status(&self, status: OrderStatusColumn) -> StoreResult<Vec<Order>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::ORDERS_WITH_STATUS).bind(status).fetch_all(pool).await?))
    }

    /// How many orders are pending payment, and when the oldest of them was created (`/metrics`).
    pub async fn pending_orders(&self) -> StoreResult<(u64, Option<i64>)> {
        let (count, oldest): (i64, Option<i64>) = on_pool!(self, |pool| {
            sqlx::query_as(sql::ORDERS_WITH_STATUS_SUMMARY)
                .bind(OrderStatusColumn::PendingPayment)
                .fetch_one(pool)
                .await
        })?;
        Ok((count.max(0) as u64, oldest))
    }

    /// Counts orders (all statuses): for tests and the benchmark.
    #[tracing::instrument(name = "store.order_count", skip_all, fields(otel.kind = "client", db.operation.name = "order_count"))]
    pub async fn order_count(&self) -> StoreResult<i64> {
        on_pool!(self, |pool| Ok(sqlx::query_scalar(sql::ORDER_COUNT).fetch_one(pool).await?))
    }
}
