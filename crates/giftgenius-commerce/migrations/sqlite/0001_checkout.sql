-- Checkout: drafts, idempotency keys, orders, checkout sessions, and the sandbox payment
-- provider's own ledger. Money is integer minor units; time is Unix milliseconds.

CREATE TABLE drafts (
    id              TEXT PRIMARY KEY,
    subject         TEXT NOT NULL,
    -- hash of (gift, quantity, shipping, currency): the same request maps to the same draft
    draft_key       TEXT NOT NULL,
    active          INTEGER NOT NULL DEFAULT 1,
    gift_id         TEXT NOT NULL,
    quantity        INTEGER NOT NULL,
    shipping        TEXT NOT NULL,
    currency        TEXT NOT NULL,
    subtotal_minor  INTEGER NOT NULL,
    shipping_minor  INTEGER NOT NULL,
    total_minor     INTEGER NOT NULL,
    created_at_ms   INTEGER NOT NULL,
    expires_at_ms   INTEGER NOT NULL
);
CREATE UNIQUE INDEX drafts_one_active ON drafts (subject, draft_key) WHERE active = 1;

CREATE TABLE idempotency_keys (
    subject         TEXT NOT NULL,
    tool            TEXT NOT NULL,
    key             TEXT NOT NULL,
    fingerprint     TEXT NOT NULL,
    -- started -> order_created -> finished (see idempotency.rs)
    recovery_point  TEXT NOT NULL,
    -- lease of the call working on this key; NULL when nobody is
    locked_until_ms INTEGER,
    order_id        TEXT,
    response        TEXT,
    created_at_ms   INTEGER NOT NULL,
    updated_at_ms   INTEGER NOT NULL,
    PRIMARY KEY (subject, tool, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at_ms);

CREATE TABLE orders (
    id              TEXT PRIMARY KEY,
    subject         TEXT NOT NULL,
    draft_id        TEXT NOT NULL,
    gift_id         TEXT NOT NULL,
    gift_title      TEXT NOT NULL,
    merchant        TEXT NOT NULL,
    quantity        INTEGER NOT NULL,
    currency        TEXT NOT NULL,
    total_minor     INTEGER NOT NULL,
    -- pending_payment | paid | payment_declined
    status          TEXT NOT NULL,
    charge_id       TEXT,
    created_at_ms   INTEGER NOT NULL,
    updated_at_ms   INTEGER NOT NULL
);
-- A draft is paid at most once, whatever keys the callers use.
CREATE UNIQUE INDEX orders_one_live_per_draft ON orders (draft_id) WHERE status <> 'payment_declined';
CREATE INDEX orders_by_gift ON orders (gift_id, status);

CREATE TABLE checkout_sessions (
    id              TEXT PRIMARY KEY,
    subject         TEXT NOT NULL,
    gift_id         TEXT NOT NULL,
    currency        TEXT NOT NULL,
    amount_minor    INTEGER NOT NULL,
    created_at_ms   INTEGER NOT NULL,
    expires_at_ms   INTEGER NOT NULL
);

-- The sandbox payment provider's ledger. It belongs to the provider, not to us: only
-- payments.rs touches it, and it honours its own idempotency key like a real provider.
CREATE TABLE sandbox_payment_ledger (
    idempotency_key TEXT PRIMARY KEY,
    charge_id       TEXT NOT NULL UNIQUE,
    amount_minor    INTEGER NOT NULL,
    currency        TEXT NOT NULL,
    description     TEXT NOT NULL,
    created_at_ms   INTEGER NOT NULL
);

CREATE TABLE secrets (
    name            TEXT PRIMARY KEY,
    value           TEXT NOT NULL
);
