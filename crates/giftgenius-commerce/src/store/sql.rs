//! The SQL every database runs unchanged. SQLite (3.39+) and PostgreSQL accept the same `$n`
//! placeholders, `ON CONFLICT`, `RETURNING`, `IS NOT DISTINCT FROM` and `CAST(… AS BIGINT)`, so
//! one text serves both; what differs (opening, the write lock) is in `dialect.rs`.
//!
//! Closed sets of values (recovery points, order statuses, currencies) are bound as the enums
//! of `rows.rs`, never written as string literals here. `SELECT *` rows are mapped with
//! `#[derive(sqlx::FromRow)]`; columns the row types do not carry (`drafts.active`,
//! `updated_at_ms`) are ignored.

// --- secrets ---

pub const INSERT_SECRET: &str = "INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING";
pub const SECRET: &str = "SELECT value FROM secrets WHERE name = $1";

// --- drafts ---

/// An expired draft stops being "the" draft for its request, but stays readable so a late
/// commit gets DRAFT_EXPIRED rather than DRAFT_NOT_FOUND.
pub const EXPIRE_ACTIVE_DRAFT: &str =
    "UPDATE drafts SET active = 0 WHERE subject = $1 AND draft_key = $2 AND active = 1 AND expires_at_ms <= $3";
pub const INSERT_DRAFT: &str = "INSERT INTO drafts (id, subject, draft_key, active, gift_id, quantity, shipping, currency, subtotal_minor, \
     shipping_minor, total_minor, created_at_ms, expires_at_ms, delivery, needed_by, gift_wrap_minor, gift_receipt, lines) \
     VALUES ($1, $2, $3, 1, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) ON CONFLICT DO NOTHING";
pub const ACTIVE_DRAFT: &str = "SELECT * FROM drafts WHERE subject = $1 AND draft_key = $2 AND active = 1";
pub const DRAFT: &str = "SELECT * FROM drafts WHERE id = $1 AND subject = $2";
/// Drafts that expired before `$1`, except one whose order still waits for its payment (the
/// reconciler and a retry may need it).
pub const PRUNE_DRAFTS: &str = "DELETE FROM drafts WHERE expires_at_ms < $1 \
     AND NOT EXISTS (SELECT 1 FROM orders WHERE orders.draft_id = drafts.id AND orders.status = 'pending_payment')";

// --- idempotency keys: ($1, $2, $3) is always the scope (subject, tool, key) ---
//
// `generation` is the key's fencing token: a claim starts it at 1, every take-over adds 1, and
// every write by a holder names the generation it holds (so a holder whose lease ran out writes
// nothing: 0 rows). The reconciler, which finishes keys without holding them, adds 1 too.

/// $4 fingerprint, $5 the `Started` point, $6 lease, $7 now.
pub const INSERT_KEY: &str = "INSERT INTO idempotency_keys (subject, tool, key, fingerprint, recovery_point, locked_until_ms, generation, \
     created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $7) ON CONFLICT DO NOTHING";
/// A key claimed with the resource its call created in the same transaction (a purchase's first
/// step, `purchases.rs`): $4 fingerprint, $5 the `ResourceCreated` point, $6 the resource, $7
/// lease, $8 now.
pub const INSERT_KEY_WITH_RESOURCE: &str = "INSERT INTO idempotency_keys (subject, tool, key, fingerprint, recovery_point, resource_id, \
     locked_until_ms, generation, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, 1, $8, $8) ON CONFLICT DO NOTHING";
pub const KEY: &str = "SELECT fingerprint, recovery_point, locked_until_ms, generation, resource_id, response FROM idempotency_keys \
     WHERE subject = $1 AND tool = $2 AND key = $3";
/// Compare-and-set on the generation read ($6), only once no lease is live: $4 new lease, $5 now,
/// $7 the `Finished` point.
pub const TAKE_OVER_KEY: &str = "UPDATE idempotency_keys SET locked_until_ms = $4, updated_at_ms = $5, generation = generation + 1 \
     WHERE subject = $1 AND tool = $2 AND key = $3 AND recovery_point <> $7 AND generation = $6 \
     AND (locked_until_ms IS NULL OR locked_until_ms <= $5)";
/// $4 now, $5 the `Finished` point, $6 generation.
pub const RELEASE_KEY: &str = "UPDATE idempotency_keys SET locked_until_ms = NULL, updated_at_ms = $4 \
     WHERE subject = $1 AND tool = $2 AND key = $3 AND recovery_point <> $5 AND generation = $6";
/// The holder still holds the key: $4 now, $5 the `Finished` point, $6 generation.
pub const TOUCH_KEY: &str = "UPDATE idempotency_keys SET updated_at_ms = $4 \
     WHERE subject = $1 AND tool = $2 AND key = $3 AND recovery_point <> $5 AND generation = $6";
/// $4 response, $5 now, $6 the `Finished` point, $7 generation.
pub const FINISH_KEY: &str = "UPDATE idempotency_keys SET recovery_point = $6, response = $4, locked_until_ms = NULL, updated_at_ms = $5 \
     WHERE subject = $1 AND tool = $2 AND key = $3 AND generation = $7 AND recovery_point <> $6";
/// $4 resource id, $5 now, $6 the `ResourceCreated` point, $7 generation.
pub const ADVANCE_KEY: &str = "UPDATE idempotency_keys SET recovery_point = $6, resource_id = $4, updated_at_ms = $5 \
     WHERE subject = $1 AND tool = $2 AND key = $3 AND generation = $7";
/// Like [`ADVANCE_KEY`], but only from $8 (the `Started` point).
pub const ADVANCE_STARTED_KEY: &str = "UPDATE idempotency_keys SET recovery_point = $6, resource_id = $4, updated_at_ms = $5 \
     WHERE subject = $1 AND tool = $2 AND key = $3 AND generation = $7 AND recovery_point = $8";
/// Keys created before $1 and not leased at $2, except those pointing at an order still
/// pending ($3): its payment is not settled, and a retry of the key must still find it.
pub const PRUNE_KEYS: &str = "DELETE FROM idempotency_keys WHERE created_at_ms < $1 AND (locked_until_ms IS NULL OR locked_until_ms < $2) \
     AND NOT EXISTS (SELECT 1 FROM orders WHERE orders.id = idempotency_keys.resource_id AND orders.status = $3)";
/// Every unfinished key of tool $4 pointing at order $1 is finished with $2 at $3 ($5 the
/// `Finished` point), its generation bumped so that a holder's later write is refused.
pub const FINISH_KEYS_OF_ORDER: &str = "UPDATE idempotency_keys SET recovery_point = $5, response = $2, locked_until_ms = NULL, \
     updated_at_ms = $3, generation = generation + 1 WHERE resource_id = $1 AND tool = $4 AND recovery_point <> $5";

// --- orders ---

/// $2 the `PaymentDeclined` status: any other status is live.
pub const LIVE_ORDER_FOR_DRAFT: &str = "SELECT * FROM orders WHERE draft_id = $1 AND status <> $2";
/// The units of gift `$g` in orders that hold stock (status neither `$declined` nor
/// `$cancelled`: a cancelled order gave its stock back), as an SQL expression: the orders'
/// units (`order_units`), plus the first line of an order an older server wrote without its
/// lines during an upgrade (`lines = '[]'`, found by a partial index). SUM(BIGINT) is NUMERIC in
/// PostgreSQL, hence the cast (a no-op in SQLite).
macro_rules! live_units {
    ($g:literal, $declined:literal, $cancelled:literal) => {
        concat!(
            "CAST(COALESCE((SELECT SUM(u.quantity) FROM order_units u JOIN orders o ON o.id = u.order_id \
             WHERE u.gift_id = ",
            $g,
            " AND o.status <> ",
            $declined,
            " AND o.status <> ",
            $cancelled,
            "), 0) \
             + COALESCE((SELECT SUM(quantity) FROM orders WHERE gift_id = ",
            $g,
            " AND lines = '[]' \
             AND status <> ",
            $declined,
            " AND status <> ",
            $cancelled,
            "), 0) AS BIGINT)"
        )
    };
}

/// Units of gift $1 in orders that hold stock; $2 the `PaymentDeclined` and $3 the `Cancelled`
/// status.
pub const LIVE_UNITS: &str = concat!("SELECT ", live_units!("$1", "$2", "$3"));
/// [`LIVE_UNITS`] of every gift that has any, in one read (the product feed's availability);
/// $1 `PaymentDeclined`, $2 `Cancelled`.
pub const LIVE_UNITS_BY_GIFT: &str = "SELECT gift_id, CAST(SUM(quantity) AS BIGINT) FROM ( \
     SELECT u.gift_id, u.quantity FROM order_units u JOIN orders o ON o.id = u.order_id WHERE o.status <> $1 AND o.status <> $2 \
     UNION ALL SELECT gift_id, quantity FROM orders WHERE lines = '[]' AND status <> $1 AND status <> $2) units GROUP BY gift_id";
/// What an order for draft $1 whose first gift is $3 must not meet, in one read: the draft's
/// live orders (any status but $2, `PaymentDeclined`), and the units of the gift that hold stock
/// (not $2, not $4, `Cancelled`; see [`LIVE_UNITS`]).
pub const DRAFT_LIVE_ORDERS_AND_GIFT_UNITS: &str = concat!(
    "SELECT (SELECT COUNT(*) FROM orders WHERE draft_id = $1 AND status <> $2), ",
    live_units!("$3", "$2", "$4")
);
/// One gift's units of a new order ($1 the order, $2 the gift, $3 how many).
pub const INSERT_ORDER_UNITS: &str = "INSERT INTO order_units (order_id, gift_id, quantity) VALUES ($1, $2, $3)";
/// $15: the charging window the order starts with (NULL: none yet; see `BEGIN_CHARGE`).
pub const INSERT_ORDER: &str = "INSERT INTO orders (id, subject, draft_id, gift_id, gift_title, merchant, quantity, currency, total_minor, status, \
     charge_id, created_at_ms, updated_at_ms, delivery, destination_city, destination_country, charging_until_ms, \
     gift_wrap_minor, gift_receipt, arrives_earliest, arrives_latest, lines) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, NULL, $11, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)";
/// One page of `$1`'s orders, newest first, older than ($2, $3) in (created_at_ms, id) order; at most $4.
pub const ORDERS_OF_SUBJECT: &str = "SELECT * FROM orders WHERE subject = $1 \
     AND (created_at_ms < $2 OR (created_at_ms = $2 AND id < $3)) ORDER BY created_at_ms DESC, id DESC LIMIT $4";
pub const ORDER: &str = "SELECT * FROM orders WHERE id = $1 AND subject = $2";
pub const ORDER_BY_ID: &str = "SELECT * FROM orders WHERE id = $1";
/// A charge request for a pending order ($4) may be in flight until $2; $3 now.
pub const BEGIN_CHARGE: &str =
    "UPDATE orders SET charging_until_ms = $2, updated_at_ms = $3 WHERE id = $1 AND status = $4";
/// $2 the `Paid` status, $3 charge id, $4 now, $5 the `PendingPayment` status. Also matches an
/// order already paid with this very charge (settled by the reconciler or another key).
pub const MARK_PAID: &str = "UPDATE orders SET status = $2, charge_id = $3, updated_at_ms = $4, \
     paid_at_ms = COALESCE(paid_at_ms, $4) WHERE id = $1 AND (status = $5 OR (status = $2 AND charge_id = $3))";
/// $2 the `PaymentDeclined` status, $3 now, $4 the `PendingPayment` status. Also matches an
/// order already declined.
pub const MARK_DECLINED: &str =
    "UPDATE orders SET status = $2, updated_at_ms = $3 WHERE id = $1 AND (status = $4 OR status = $2)";
pub const ORDER_COUNT: &str = "SELECT COUNT(*) FROM orders";
/// Orders pending ($1) since before $2 with no charge request in flight and no key leased at
/// $3, after ($4, $5) in (created_at_ms, id) order; at most $6.
pub const ORDERS_TO_RECONCILE: &str = "SELECT * FROM orders o WHERE o.status = $1 AND o.created_at_ms < $2 \
     AND (o.charging_until_ms IS NULL OR o.charging_until_ms < $3) \
     AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.resource_id = o.id AND k.locked_until_ms > $3) \
     AND (o.created_at_ms > $4 OR (o.created_at_ms = $4 AND o.id > $5)) ORDER BY o.created_at_ms, o.id LIMIT $6";
/// The reconciler: the pending ($4) order is paid ($2) with charge $3 at $5.
pub const SETTLE_PAID: &str = "UPDATE orders SET status = $2, charge_id = $3, updated_at_ms = $5, \
     paid_at_ms = COALESCE(paid_at_ms, $5) WHERE id = $1 AND status = $4";
/// The reconciler: the pending ($3) order is declined ($2) at $4, unless a charge request may
/// still have been in flight when the provider was asked ($5).
pub const SETTLE_DECLINED: &str = "UPDATE orders SET status = $2, updated_at_ms = $4 WHERE id = $1 AND status = $3 \
     AND (charging_until_ms IS NULL OR charging_until_ms < $5)";
/// Orders by status (the invariants of the tests and the chaos run).
pub const ORDERS_WITH_STATUS: &str = "SELECT * FROM orders WHERE status = $1 ORDER BY created_at_ms, id";
/// How many orders have status $1, and when the oldest was created (`/metrics`; the
/// `orders_by_status_age` index answers both).
pub const ORDERS_WITH_STATUS_SUMMARY: &str = "SELECT COUNT(*), MIN(created_at_ms) FROM orders WHERE status = $1";

// --- saved addresses ---

pub const UPSERT_SAVED_ADDRESS: &str = "INSERT INTO saved_addresses (subject, recipient, updated_at_ms) VALUES ($1, $2, $3) \
     ON CONFLICT (subject) DO UPDATE SET recipient = $2, updated_at_ms = $3";
pub const SAVED_ADDRESS: &str = "SELECT recipient FROM saved_addresses WHERE subject = $1";
pub const PRUNE_SAVED_ADDRESSES: &str = "DELETE FROM saved_addresses WHERE updated_at_ms < $1";

// --- accounts at the payment provider ---

pub const STRIPE_CUSTOMER: &str = "SELECT stripe_customer_id FROM accounts WHERE subject = $1";
/// $1 subject, $2 the Customer id, $3 now: the first writer's id stays.
pub const INSERT_STRIPE_CUSTOMER: &str = "INSERT INTO accounts (subject, stripe_customer_id, created_at_ms) VALUES ($1, $2, $3) \
     ON CONFLICT (subject) DO NOTHING";
/// Deleted at Stripe (delete-my-data).
pub const DELETE_STRIPE_CUSTOMER: &str = "DELETE FROM accounts WHERE subject = $1";
/// $1 subject, $2 the name it signed in with, $3 now: the latest name wins.
pub const UPSERT_ACCOUNT_NAME: &str = "INSERT INTO account_names (subject, name, updated_at_ms) VALUES ($1, $2, $3) \
     ON CONFLICT (subject) DO UPDATE SET name = $2, updated_at_ms = $3";
/// The name of the account whose Stripe Customer is $1.
pub const ACCOUNT_NAME_OF_CUSTOMER: &str = "SELECT n.name FROM accounts a JOIN account_names n ON n.subject = a.subject \
     WHERE a.stripe_customer_id = $1";
pub const DELETE_ACCOUNT_NAME: &str = "DELETE FROM account_names WHERE subject = $1";
pub const PRUNE_ACCOUNT_NAMES: &str = "DELETE FROM account_names WHERE updated_at_ms < $1";

// --- Stripe's webhook events and 3-D Secure ---

/// What event $1 did when it was applied, if it was.
pub const STRIPE_EVENT_OUTCOME: &str = "SELECT outcome FROM stripe_events WHERE id = $1";
/// $1 id, $2 type, $3 now, $4 outcome; a replay recorded meanwhile stays as it was.
pub const INSERT_STRIPE_EVENT: &str = "INSERT INTO stripe_events (id, type, received_at_ms, outcome) VALUES ($1, $2, $3, $4) \
     ON CONFLICT (id) DO NOTHING";
pub const STRIPE_EVENT_COUNT: &str = "SELECT COUNT(*) FROM stripe_events";
/// The pending ($4) order $1 awaits authentication of payment $2 until $3 (now $5).
pub const AWAIT_AUTHENTICATION: &str = "UPDATE orders SET payment_ref = $2, authentication_until_ms = $3, updated_at_ms = $5 \
     WHERE id = $1 AND status = $4";
/// The order whose charge (Stripe: PaymentIntent) is $1.
pub const ORDER_BY_CHARGE: &str =
    "SELECT * FROM orders WHERE charge_id = $1 OR payment_ref = $1 ORDER BY created_at_ms LIMIT 1";
/// $1 id, $2 order, $3 key, $4 amount, $5 currency, $6 reason, $7 the `Succeeded` status, $8
/// the provider's refund, $9 now, $10 seq: a refund made at the provider, recorded as it is.
pub const INSERT_SETTLED_ADJUSTMENT: &str = "INSERT INTO order_adjustments (id, order_id, operator_key, amount_minor, currency, reason, \
     status, provider_refund_id, created_at_ms, updated_at_ms, seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10)";

// --- refunds ---

/// $1 id, $2 order, $3 subject, $4 amount, $5 currency, $6 the `Pending` status, $7 now, $8 the
/// operator's key (NULL: the buyer's cancellation).
pub const INSERT_REFUND: &str = "INSERT INTO refunds (id, order_id, subject, amount_minor, currency, status, provider_refund_id, \
     created_at_ms, updated_at_ms, operator_key) VALUES ($1, $2, $3, $4, $5, $6, NULL, $7, $7, $8) ON CONFLICT (order_id) DO NOTHING";
pub const REFUND_OF_ORDER: &str = "SELECT * FROM refunds WHERE order_id = $1";
/// A refund made at the provider (its id $7) that covers all that was left of order $2: the
/// order's cancellation, recorded as it is ($6 the `Succeeded` status, $8 now, $9 its key).
pub const INSERT_SETTLED_REFUND: &str = "INSERT INTO refunds (id, order_id, subject, amount_minor, currency, status, \
     provider_refund_id, created_at_ms, updated_at_ms, operator_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9)";
/// The pending ($4) refund of order $1 succeeded as provider refund $3 ($2 the `Succeeded`
/// status) at $5; also matches one already settled with that very refund.
pub const SETTLE_REFUND: &str = "UPDATE refunds SET status = $2, provider_refund_id = $3, updated_at_ms = $5 \
     WHERE order_id = $1 AND (status = $4 OR (status = $2 AND provider_refund_id = $3))";
/// The paid ($3) or processing ($5) order $1 is cancelled ($2) at $4; also matches one already
/// cancelled.
pub const CANCEL_ORDER: &str = "UPDATE orders SET status = $2, cancelled_at_ms = COALESCE(cancelled_at_ms, $4), updated_at_ms = $4 \
     WHERE id = $1 AND (status = $3 OR status = $5 OR status = $2)";
/// Refunds still pending ($1) since before $2, oldest first; at most $3.
pub const REFUNDS_PENDING: &str =
    "SELECT * FROM refunds WHERE status = $1 AND updated_at_ms < $2 ORDER BY created_at_ms, id LIMIT $3";
pub const REFUNDS_WITH_STATUS: &str = "SELECT * FROM refunds WHERE status = $1 ORDER BY created_at_ms, id";
/// Succeeded ($2) refunds recorded before $1: past the refund retention.
pub const PRUNE_REFUNDS: &str = "DELETE FROM refunds WHERE created_at_ms < $1 AND status = $2";

// --- an order's life after payment: its steps and its adjustments (`store/fulfilment.rs`) ---

/// Order $1, seen with status $10, takes the status $2 and the steps and shipment of its row
/// ($3 processing, $4 shipped, $5 completed, $6 carrier, $7 tracking number, $8 tracking URL) at $9.
pub const ADVANCE_ORDER: &str = "UPDATE orders SET status = $2, processing_at_ms = $3, shipped_at_ms = $4, \
     completed_at_ms = $5, carrier = $6, tracking_number = $7, tracking_url = $8, updated_at_ms = $9 \
     WHERE id = $1 AND status = $10";
/// Order $1's adjustments, oldest first.
pub const ADJUSTMENTS_OF_ORDER: &str = "SELECT * FROM order_adjustments WHERE order_id = $1 ORDER BY seq";
/// $1 id, $2 order, $3 key, $4 amount, $5 currency, $6 reason, $7 the `Pending` status, $8 now, $9 seq.
pub const INSERT_ADJUSTMENT: &str = "INSERT INTO order_adjustments (id, order_id, operator_key, amount_minor, currency, reason, \
     status, provider_refund_id, created_at_ms, updated_at_ms, seq) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8, $8, $9)";
/// The pending ($5) adjustment $1 succeeded ($2) as provider refund $3 at $4.
pub const SETTLE_ADJUSTMENT: &str = "UPDATE order_adjustments SET status = $2, provider_refund_id = $3, updated_at_ms = $4 \
     WHERE id = $1 AND status = $5";
/// The sum of order $1's adjustments, pending included (what a cancellation no longer refunds).
pub const ADJUSTED_SUM: &str =
    "SELECT CAST(COALESCE(SUM(amount_minor), 0) AS BIGINT) FROM order_adjustments WHERE order_id = $1";
/// Adjustments still pending ($1) since before $2, oldest first; at most $3.
pub const ADJUSTMENTS_PENDING: &str =
    "SELECT * FROM order_adjustments WHERE status = $1 AND updated_at_ms < $2 ORDER BY created_at_ms, id LIMIT $3";
/// Succeeded ($2) adjustments recorded before $1: past the refund retention.
pub const PRUNE_ADJUSTMENTS: &str = "DELETE FROM order_adjustments WHERE created_at_ms < $1 AND status = $2";

// --- personal data: deleting on request, anonymizing, retention ---
//
// An order is anonymized by erasing its delivery details and city and detaching it from its
// account (`subject` becomes [`ERASED_SUBJECT`], which no caller can have); what stays is the
// financial record: amount, currency, gift, dates, charge id, status and destination country.
// Orders still waiting for their payment are left alone (the money is not settled yet).

/// The subject of anonymized orders and refunds.
pub const ERASED_SUBJECT: &str = "erased";
pub const DELETE_SAVED_ADDRESS: &str = "DELETE FROM saved_addresses WHERE subject = $1";
/// $1 subject, $2 the `PendingPayment` status.
pub const DELETE_DRAFTS_OF: &str = "DELETE FROM drafts WHERE subject = $1 \
     AND NOT EXISTS (SELECT 1 FROM orders WHERE orders.draft_id = drafts.id AND orders.status = $2)";
/// $1 subject, $2 now, $3 the `PendingPayment` status: not a key in use, nor one of a pending order.
pub const DELETE_KEYS_OF: &str = "DELETE FROM idempotency_keys WHERE subject = $1 \
     AND (locked_until_ms IS NULL OR locked_until_ms < $2) \
     AND NOT EXISTS (SELECT 1 FROM orders WHERE orders.id = idempotency_keys.resource_id AND orders.status = $3)";
pub const DELETE_CHECKOUTS_OF: &str = "DELETE FROM checkout_sessions WHERE subject = $1";
/// $1 subject, $2 the erased subject, $3 now, $4 the `PendingPayment` status.
pub const ANONYMIZE_ORDERS_OF: &str = "UPDATE orders SET delivery = NULL, destination_city = NULL, subject = $2, \
     anonymized_at_ms = $3, updated_at_ms = $3 WHERE subject = $1 AND status <> $4";
pub const ANONYMIZE_REFUNDS_OF: &str = "UPDATE refunds SET subject = $2 WHERE subject = $1 \
     AND NOT EXISTS (SELECT 1 FROM orders WHERE orders.id = refunds.order_id AND orders.subject = $1)";
/// Orders placed before $1 (not pending: $4) keep their personal data no longer: $2 the erased
/// subject, $3 now.
pub const ANONYMIZE_ORDERS_BEFORE: &str = "UPDATE orders SET delivery = NULL, destination_city = NULL, subject = $2, \
     anonymized_at_ms = $3, updated_at_ms = $3 WHERE created_at_ms < $1 AND anonymized_at_ms IS NULL AND status <> $4";
/// $1 the erased subject: the refunds of orders anonymized.
pub const ANONYMIZE_REFUNDS_BEFORE: &str = "UPDATE refunds SET subject = $1 WHERE subject <> $1 \
     AND EXISTS (SELECT 1 FROM orders WHERE orders.id = refunds.order_id AND orders.subject = $1)";
/// Anonymized orders placed before $1: past the financial retention.
pub const PRUNE_ANONYMIZED_ORDERS: &str =
    "DELETE FROM orders WHERE anonymized_at_ms IS NOT NULL AND created_at_ms < $1";
/// Spends a Delete my data token: $1 its spent key, $2 its expiry, $3 now (the counts follow
/// the deletion in the same transaction); nothing if it was spent before.
pub const SPEND_DELETE_TOKEN: &str = "INSERT INTO spent_delete_tokens (spent_key, expires_at_ms, spent_at_ms, \
     saved_addresses, drafts, idempotency_keys, checkout_sessions, orders_anonymized, refunds_anonymized) \
     VALUES ($1, $2, $3, 0, 0, 0, 0, 0, 0) ON CONFLICT (spent_key) DO NOTHING";
/// What the first use of token $1 deleted: $2..$7 the counts.
pub const RECORD_DELETE_TOKEN: &str = "UPDATE spent_delete_tokens SET saved_addresses = $2, drafts = $3, \
     idempotency_keys = $4, checkout_sessions = $5, orders_anonymized = $6, refunds_anonymized = $7 WHERE spent_key = $1";
pub const SPENT_DELETE_TOKEN: &str = "SELECT saved_addresses, drafts, idempotency_keys, checkout_sessions, \
     orders_anonymized, refunds_anonymized FROM spent_delete_tokens WHERE spent_key = $1";
/// Spent marks of tokens that expired before $1.
pub const PRUNE_SPENT_DELETE_TOKENS: &str = "DELETE FROM spent_delete_tokens WHERE expires_at_ms < $1";
/// Financial records of the erased subject: anonymized orders.
pub const COUNT_ERASED_ORDERS: &str = "SELECT COUNT(*) FROM orders WHERE subject = $1";

// --- checkout sessions ---

pub const INSERT_CHECKOUT: &str = "INSERT INTO checkout_sessions (id, subject, gift_id, currency, amount_minor, created_at_ms, expires_at_ms) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";
pub const CHECKOUT: &str = "SELECT * FROM checkout_sessions WHERE id = $1";
pub const PRUNE_CHECKOUTS: &str = "DELETE FROM checkout_sessions WHERE expires_at_ms < $1";

// --- usage limits ---

/// One statement, so concurrent calls cannot both take the last unit. Returns a row only if
/// the call was counted. ($1 subject, $2 usage, $3 period, $4 limit.)
pub const TAKE_USAGE: &str = "INSERT INTO usage_counters (subject, usage, period, count) VALUES ($1, $2, $3, 1) \
     ON CONFLICT (subject, usage, period) DO UPDATE SET count = usage_counters.count + 1 \
     WHERE usage_counters.count < $4 RETURNING count";
/// Adds a batch of counts (negative after give-backs; never below zero) and returns the total.
pub const ADD_USAGE: &str = "INSERT INTO usage_counters (subject, usage, period, count) \
     VALUES ($1, $2, $3, CASE WHEN $4 < 0 THEN 0 ELSE $4 END) \
     ON CONFLICT (subject, usage, period) DO UPDATE SET count = \
     CASE WHEN usage_counters.count + $4 < 0 THEN 0 ELSE usage_counters.count + $4 END RETURNING count";
pub const GIVE_BACK_USAGE: &str =
    "UPDATE usage_counters SET count = count - 1 WHERE subject = $1 AND usage = $2 AND period = $3 AND count > 0";
pub const PRUNE_USAGE: &str = "DELETE FROM usage_counters WHERE usage = $1 AND period < $2";

// --- acp_checkout_sessions ---

/// Inserts a session, or (same id) writes its new status and state: $1 id, $2 platform,
/// $3 status, $4 state, $5 created, $6 updated, $7 expires. The owner never changes.
pub const PUT_ACP_SESSION: &str = "INSERT INTO acp_checkout_sessions (id, platform, status, state, created_at_ms, updated_at_ms, \
     expires_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO UPDATE SET status = excluded.status, \
     state = excluded.state, updated_at_ms = excluded.updated_at_ms WHERE acp_checkout_sessions.platform = excluded.platform";
/// The session $1 if platform $2 owns it.
pub const ACP_SESSION: &str = "SELECT * FROM acp_checkout_sessions WHERE id = $1 AND platform = $2";
/// Sessions that expired before $1 (canceled ones included: they expire too).
pub const PRUNE_ACP_SESSIONS: &str = "DELETE FROM acp_checkout_sessions WHERE expires_at_ms < $1";
/// Whether order $1 may be charged by someone else at $2: its charging window is open, or a key
/// other than ($3, $4, $5) pointing at it is leased.
pub const ORDER_IN_FLIGHT: &str = "SELECT COUNT(*) FROM orders o WHERE o.id = $1 AND (o.charging_until_ms > $2 \
     OR EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.resource_id = o.id AND k.locked_until_ms > $2 \
     AND NOT (k.subject = $3 AND k.tool = $4 AND k.key = $5)))";

// --- order_outbox: order events on their way to their receiver (`store/outbox.rs`) ---

/// The next position among order $1's events (1 for its first). Read after the order row's
/// UPDATE in the same transaction: in PostgreSQL that row's lock makes a second change of the
/// same order wait until this one committed, so two events never get the same position.
pub const NEXT_OUTBOX_SEQ: &str =
    "SELECT CAST(COALESCE(MAX(seq), 0) + 1 AS BIGINT) FROM order_outbox WHERE order_id = $1";
/// $1 id, $2 receiver, $3 order, $4 seq, $5 change, $6 body, $7 the `Pending` status, $8 now
/// (due at once), $9 the change's key (an adjustment's id, else ''). Nothing if the order's
/// change already has its event (recorded twice: by a request and by the reconciler, or replayed).
pub const INSERT_OUTBOX: &str = "INSERT INTO order_outbox (id, receiver, order_id, seq, change, body, status, attempts, \
     next_attempt_at_ms, pending_since_ms, locked_until_ms, claims, last_error, created_at_ms, updated_at_ms, delivered_at_ms, \
     change_key) VALUES ($1, $2, $3, $4, $5, $6, $7, 0, $8, $8, NULL, 0, NULL, $8, $8, NULL, $9) \
     ON CONFLICT (order_id, change, change_key) DO NOTHING";
/// Claims up to $4 events due at $2 ($1 the `Pending` status): pending, due, not leased, and
/// with no older pending event of the same order (per-order FIFO: a delivered or dead one no
/// longer holds the next back). Each gets a lease until $3, one more attempt and one more claim
/// (its fencing token). The outer conditions repeat the inner ones: in PostgreSQL, a row another
/// replica claimed meanwhile is re-checked once that replica commits, and skipped.
pub const CLAIM_OUTBOX: &str = "UPDATE order_outbox SET locked_until_ms = $3, attempts = attempts + 1, \
     claims = claims + 1, updated_at_ms = $2 \
     WHERE status = $1 AND next_attempt_at_ms <= $2 AND (locked_until_ms IS NULL OR locked_until_ms <= $2) \
     AND id IN (SELECT o.id FROM order_outbox o WHERE o.status = $1 AND o.next_attempt_at_ms <= $2 \
     AND (o.locked_until_ms IS NULL OR o.locked_until_ms <= $2) \
     AND NOT EXISTS (SELECT 1 FROM order_outbox p WHERE p.order_id = o.order_id AND p.seq < o.seq AND p.status = $1) \
     ORDER BY o.next_attempt_at_ms, o.id LIMIT $4) RETURNING *";
/// Event $1, claimed as $2, was delivered at $3 ($4 the `Delivered`, $5 the `Pending` status);
/// nothing if it was claimed again since (its lease ran out) or redelivered.
pub const OUTBOX_DELIVERED: &str = "UPDATE order_outbox SET status = $4, delivered_at_ms = $3, locked_until_ms = NULL, \
     updated_at_ms = $3 WHERE id = $1 AND claims = $2 AND status = $5";
/// Event $1, claimed as $2, failed with $3 at $4: tried again at $5 ($6 the `Pending` status).
pub const OUTBOX_RETRY: &str = "UPDATE order_outbox SET next_attempt_at_ms = $5, locked_until_ms = NULL, last_error = $3, \
     updated_at_ms = $4 WHERE id = $1 AND claims = $2 AND status = $6";
/// Event $1, claimed as $2, failed for good with $3 at $4 ($5 the `Dead`, $6 the `Pending` status).
pub const OUTBOX_DEAD: &str = "UPDATE order_outbox SET status = $5, locked_until_ms = NULL, last_error = $3, \
     updated_at_ms = $4 WHERE id = $1 AND claims = $2 AND status = $6";
/// The operator sends event $1 again from $2 ($3 the `Pending` status): attempts from zero, the
/// retry horizon from now, any lease ended (one more claim: a worker still posting it records
/// nothing).
pub const REDELIVER_OUTBOX: &str = "UPDATE order_outbox SET status = $3, attempts = 0, next_attempt_at_ms = $2, \
     pending_since_ms = $2, locked_until_ms = NULL, claims = claims + 1, delivered_at_ms = NULL, updated_at_ms = $2 \
     WHERE id = $1";
pub const OUTBOX_EVENT: &str = "SELECT * FROM order_outbox WHERE id = $1";
/// Order $1's events, oldest first.
pub const OUTBOX_OF_ORDER: &str = "SELECT * FROM order_outbox WHERE order_id = $1 ORDER BY seq";
/// Up to $1 events, oldest first.
pub const OUTBOX_ALL: &str = "SELECT * FROM order_outbox ORDER BY created_at_ms, id LIMIT $1";
/// Up to $2 events with status $1, oldest first.
pub const OUTBOX_WITH_STATUS: &str = "SELECT * FROM order_outbox WHERE status = $1 ORDER BY created_at_ms, id LIMIT $2";
/// Delivered ($2) events delivered before $1, and dead ($4) ones written before $3.
pub const PRUNE_OUTBOX: &str = "DELETE FROM order_outbox WHERE (status = $2 AND delivered_at_ms < $1) \
     OR (status = $4 AND created_at_ms < $3)";

// --- an agent platform's buyer's personal data (docs/acp.md §13.6) ---

/// Every platform session's id and state (the buyer lives inside the state's JSON).
pub const ACP_SESSION_STATES: &str = "SELECT id, state FROM acp_checkout_sessions";
/// The platforms' idempotency keys (subjects LIKE $2, `\\` escaping) not in use at $1, with their
/// stored answers.
pub const PLATFORM_KEYS: &str = "SELECT subject, tool, key, response FROM idempotency_keys WHERE subject LIKE $2 ESCAPE '\\' \
     AND (locked_until_ms IS NULL OR locked_until_ms < $1)";
pub const DELETE_KEY_OF_SCOPE: &str = "DELETE FROM idempotency_keys WHERE subject = $1 AND tool = $2 AND key = $3";
pub const DELETE_ACP_SESSION: &str = "DELETE FROM acp_checkout_sessions WHERE id = $1";
/// The settled orders of session $1 lose their delivery details (the financial record stays):
/// $2 now, $3 the `PendingPayment` status.
pub const ANONYMIZE_ORDERS_OF_ACP_SESSION: &str = "UPDATE orders SET delivery = NULL, destination_city = NULL, \
     anonymized_at_ms = $2, updated_at_ms = $2 WHERE draft_id = $1 AND status <> $3";
/// Whether session $1 has an order still waiting for its payment ($2 the `PendingPayment` status).
pub const ACP_SESSION_PENDING: &str = "SELECT COUNT(*) FROM orders WHERE draft_id = $1 AND status = $2";
/// How many order events wait for delivery ($1 the `Pending` status), and since when the oldest.
pub const OUTBOX_BACKLOG: &str = "SELECT COUNT(*), MIN(pending_since_ms) FROM order_outbox WHERE status = $1";

// --- the product feed's pushes to feed receivers (feed_pushes.rs, docs/feed.md) ---

/// Receiver $1's products and what each was last marked as (a sweep compares).
pub const FEED_MARKED: &str = "SELECT product_id, fingerprint FROM feed_pushes WHERE receiver = $1";
/// Receiver $1's product $2 as last marked, and its title.
pub const FEED_MARKED_ONE: &str = "SELECT fingerprint, title FROM feed_pushes WHERE receiver = $1 AND product_id = $2";
/// Marks product $2 of receiver $1 pending ($5) as $3 titled $4, at $6, unless it is marked
/// as $3 already. A pending row keeps its back-off and horizon (the push builds the product of
/// its moment anyway); a delivered or dead one starts again from now. Every mark counts one
/// more `marks`, so a push claimed before it leaves the row pending.
pub const MARK_FEED_PRODUCT: &str = "INSERT INTO feed_pushes (receiver, product_id, title, fingerprint, status, marks, \
     attempts, next_attempt_at_ms, pending_since_ms, updated_at_ms) VALUES ($1, $2, $4, $3, $5, 1, 0, $6, $6, $6) \
     ON CONFLICT (receiver, product_id) DO UPDATE SET title = excluded.title, fingerprint = excluded.fingerprint, \
     marks = feed_pushes.marks + 1, \
     attempts = CASE WHEN feed_pushes.status = $5 THEN feed_pushes.attempts ELSE 0 END, \
     next_attempt_at_ms = CASE WHEN feed_pushes.status = $5 THEN feed_pushes.next_attempt_at_ms ELSE $6 END, \
     pending_since_ms = CASE WHEN feed_pushes.status = $5 THEN feed_pushes.pending_since_ms ELSE $6 END, \
     status = $5, updated_at_ms = $6 \
     WHERE feed_pushes.fingerprint <> excluded.fingerprint";
/// Leases up to $5 of receiver $1's pending ($2) products due at $3 until $4, oldest due
/// first; each counts one more attempt and claim. One statement: safe with several replicas
/// (PostgreSQL re-checks the outer WHERE of a row another claim just took).
pub const CLAIM_FEED_PUSHES: &str = "UPDATE feed_pushes SET locked_until_ms = $4, attempts = attempts + 1, \
     claims = claims + 1, updated_at_ms = $3 \
     WHERE receiver = $1 AND status = $2 AND next_attempt_at_ms <= $3 AND (locked_until_ms IS NULL OR locked_until_ms <= $3) \
     AND product_id IN (SELECT f.product_id FROM feed_pushes f WHERE f.receiver = $1 AND f.status = $2 \
     AND f.next_attempt_at_ms <= $3 AND (f.locked_until_ms IS NULL OR f.locked_until_ms <= $3) \
     ORDER BY f.next_attempt_at_ms, f.product_id LIMIT $5) RETURNING *";
/// Product $2 of receiver $1, claimed as $3 under mark $4, was accepted as $5 at $6 ($7
/// `Delivered`, $8 `Pending`): delivered, unless it was marked again meanwhile (then pending,
/// due at once, attempts from zero); nothing if it was claimed again since.
pub const FEED_PUSH_DELIVERED: &str = "UPDATE feed_pushes SET sent_fingerprint = $5, delivered_at_ms = $6, \
     status = CASE WHEN marks = $4 THEN $7 ELSE $8 END, \
     fingerprint = CASE WHEN marks = $4 THEN $5 ELSE fingerprint END, \
     attempts = CASE WHEN marks = $4 THEN attempts ELSE 0 END, \
     next_attempt_at_ms = $6, locked_until_ms = NULL, last_error = NULL, updated_at_ms = $6 \
     WHERE receiver = $1 AND product_id = $2 AND claims = $3 AND status = $8";
/// Product $2 of receiver $1, claimed as $3, failed with $4 at $5: tried again at $6 ($7 `Pending`).
pub const FEED_PUSH_RETRY: &str = "UPDATE feed_pushes SET next_attempt_at_ms = $6, locked_until_ms = NULL, \
     last_error = $4, updated_at_ms = $5 WHERE receiver = $1 AND product_id = $2 AND claims = $3 AND status = $7";
/// Product $2 of receiver $1, claimed as $3, failed for good with $4 at $5 ($6 `Dead`, $7 `Pending`).
pub const FEED_PUSH_DEAD: &str = "UPDATE feed_pushes SET status = $6, locked_until_ms = NULL, last_error = $4, \
     updated_at_ms = $5 WHERE receiver = $1 AND product_id = $2 AND claims = $3 AND status = $7";
/// The operator pushes receiver $1's products again from $2 ($3 `Pending`): product $4 (every
/// one if NULL) with status $5 (any if NULL); attempts and horizon from now, any claim in
/// flight fenced off, marked again.
pub const REDELIVER_FEED_PUSHES: &str = "UPDATE feed_pushes SET status = $3, attempts = 0, next_attempt_at_ms = $2, \
     pending_since_ms = $2, locked_until_ms = NULL, claims = claims + 1, marks = marks + 1, updated_at_ms = $2 \
     WHERE receiver = $1 AND ($4 IS NULL OR product_id = $4) AND ($5 IS NULL OR status = $5)";
/// Up to $3 pushes of receiver $1 (any receiver if NULL) with status $2 (any if NULL), by receiver and product.
pub const FEED_PUSHES: &str = "SELECT * FROM feed_pushes WHERE ($1 IS NULL OR receiver = $1) \
     AND ($2 IS NULL OR status = $2) ORDER BY receiver, product_id LIMIT $3";
/// How many product pushes wait ($1 `Pending`), and since when the oldest.
pub const FEED_PUSH_BACKLOG: &str = "SELECT COUNT(*), MIN(pending_since_ms) FROM feed_pushes WHERE status = $1";
/// How many product pushes are dead ($1 `Dead`): refused for good until the operator redelivers.
pub const FEED_PUSHES_DEAD: &str = "SELECT COUNT(*) FROM feed_pushes WHERE status = $1";
/// The gifts of the orders changed at or after $1 (their stock may have moved).
pub const GIFTS_OF_ORDERS_CHANGED_SINCE: &str = "SELECT DISTINCT u.gift_id FROM orders o JOIN order_units u ON u.order_id = o.id \
     WHERE o.updated_at_ms >= $1 UNION SELECT gift_id FROM orders WHERE updated_at_ms >= $1 AND lines = '[]'";
