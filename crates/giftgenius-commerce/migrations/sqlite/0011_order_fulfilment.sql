-- An order's life after payment (issue 25 item 5): the operator marks a paid order processing,
-- shipped (carrier, tracking number and URL) and completed, and refunds parts of it. Every step
-- keeps its time, so an order's timeline is read from its row; each change writes its event to
-- the outbox in the same transaction.

-- When the order was paid (from now on set by the step that records the payment). Orders paid
-- before this migration get their creation time: they were paid within seconds of it.
ALTER TABLE orders ADD COLUMN paid_at_ms INTEGER;
UPDATE orders SET paid_at_ms = created_at_ms WHERE status IN ('paid', 'cancelled');
ALTER TABLE orders ADD COLUMN processing_at_ms INTEGER;
ALTER TABLE orders ADD COLUMN shipped_at_ms INTEGER;
ALTER TABLE orders ADD COLUMN completed_at_ms INTEGER;
-- The shipment, once shipped: the carrier's name, its tracking number, an https tracking page.
ALTER TABLE orders ADD COLUMN carrier TEXT;
ALTER TABLE orders ADD COLUMN tracking_number TEXT;
ALTER TABLE orders ADD COLUMN tracking_url TEXT;

-- Who asked for a cancellation's refund: NULL for the buyer (cancel_order), else the operator's
-- idempotency key (a full refund of an order not shipped yet is its cancellation).
ALTER TABLE refunds ADD COLUMN operator_key TEXT;

-- Partial refunds by the operator (ACP adjustments): recorded as pending before the provider is
-- asked under `gga_<id>`, settled by the request or by the reconciler. Financial records, kept
-- for the refund retention like `refunds`.
CREATE TABLE order_adjustments (
    id                  TEXT PRIMARY KEY,
    order_id            TEXT NOT NULL,
    -- its place among the order's adjustments (1, 2, …), given under the order's lock
    seq                 INTEGER NOT NULL,
    -- the operator's idempotency key: the same key on the same order is the same adjustment
    operator_key        TEXT NOT NULL,
    amount_minor        INTEGER NOT NULL,
    currency            TEXT NOT NULL,
    -- why, as the operator wrote it (shown to the buyer and sent in order events)
    reason              TEXT NOT NULL,
    -- pending | succeeded
    status              TEXT NOT NULL,
    provider_refund_id  TEXT,
    created_at_ms       INTEGER NOT NULL,
    updated_at_ms       INTEGER NOT NULL
);
CREATE UNIQUE INDEX order_adjustments_key ON order_adjustments (order_id, operator_key);
CREATE UNIQUE INDEX order_adjustments_order_seq ON order_adjustments (order_id, seq);
CREATE INDEX order_adjustments_by_status ON order_adjustments (status, updated_at_ms);

-- An order has one event per change, except refunds: one per adjustment. `change_key` tells
-- them apart (the adjustment's id; '' for every other change).
ALTER TABLE order_outbox ADD COLUMN change_key TEXT NOT NULL DEFAULT '';
DROP INDEX order_outbox_order_change;
CREATE UNIQUE INDEX order_outbox_order_change ON order_outbox (order_id, change, change_key);
