-- Refunds (Stripe-shaped): one row per idempotency key, each giving back (part of) a succeeded
-- charge. The amounts refunded for one charge never exceed what it charged.
CREATE TABLE refunds (
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    idempotency_key TEXT NOT NULL UNIQUE,
    id              TEXT NOT NULL UNIQUE,
    charge          TEXT NOT NULL,
    amount          INTEGER NOT NULL,
    currency        TEXT NOT NULL,
    reason          TEXT NOT NULL,
    -- succeeded (a refund is decided in the request that records it)
    status          TEXT NOT NULL,
    created_at_ms   INTEGER NOT NULL
);
CREATE INDEX refunds_by_charge ON refunds (charge);
