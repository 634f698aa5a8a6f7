-- Orders a person can send and manage (issue 16): delivery details on drafts and orders, the
-- saved address (kept only with the person's consent), refunds of cancelled orders, and orders
-- anonymized when their person asks to delete their data or when their retention ends.

-- JSON of giftgenius_types::DeliveryDetails (recipient, address, gift message); NULL: none yet.
ALTER TABLE drafts ADD COLUMN delivery TEXT;

-- The same on the order; NULL once the order is anonymized. City and country are kept apart
-- (what the model may read); an anonymized order keeps only the country (tax records).
ALTER TABLE orders ADD COLUMN delivery TEXT;
ALTER TABLE orders ADD COLUMN destination_city TEXT;
ALTER TABLE orders ADD COLUMN destination_country TEXT;
ALTER TABLE orders ADD COLUMN cancelled_at_ms BIGINT;
ALTER TABLE orders ADD COLUMN anonymized_at_ms BIGINT;
-- list_orders: one subject's orders, newest first.
CREATE INDEX orders_by_subject ON orders (subject, created_at_ms, id);

-- One saved address per account: the last one used with consent.
CREATE TABLE saved_addresses (
    subject         TEXT PRIMARY KEY,
    -- JSON of giftgenius_types::Recipient
    recipient       TEXT NOT NULL,
    updated_at_ms   BIGINT NOT NULL
);
CREATE INDEX saved_addresses_updated ON saved_addresses (updated_at_ms);

-- The refund of a cancelled order (at most one per order): a financial record, kept (with the
-- anonymized order) for the financial retention whatever the person deletes.
CREATE TABLE refunds (
    id                  TEXT PRIMARY KEY,
    order_id            TEXT NOT NULL UNIQUE,
    subject             TEXT NOT NULL,
    amount_minor        BIGINT NOT NULL,
    currency            TEXT NOT NULL,
    -- pending | succeeded
    status              TEXT NOT NULL,
    provider_refund_id  TEXT,
    created_at_ms       BIGINT NOT NULL,
    updated_at_ms       BIGINT NOT NULL
);
CREATE INDEX refunds_by_status ON refunds (status, created_at_ms);
