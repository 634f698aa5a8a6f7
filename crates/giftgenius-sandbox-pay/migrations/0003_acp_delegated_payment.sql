-- ACP delegated payment (docs/acp.md §8): vault tokens, the idempotency keys of the endpoint
-- that makes them, and the token a charge names. No card number or verification code is ever
-- written here: a token keeps the outcome its test card gives, the brand and the last four.

-- What a charge was requested with when it named a vault token (part of "the same request"
-- for its idempotency key). NULL for a charge without one.
ALTER TABLE charges ADD COLUMN payment_token TEXT;
ALTER TABLE charges ADD COLUMN token_session TEXT;
ALTER TABLE charges ADD COLUMN token_merchant TEXT;

CREATE TABLE acp_vault_tokens (
    -- vt_ + 128 random bits in hex
    id                  TEXT PRIMARY KEY,
    created_at_ms       INTEGER NOT NULL,
    -- the allowance: one charge, of at most max_amount in currency (lower case), for this
    -- session and merchant, before expires_at_ms
    reason              TEXT NOT NULL,
    max_amount          INTEGER NOT NULL,
    currency            TEXT NOT NULL,
    checkout_session_id TEXT NOT NULL,
    merchant_id         TEXT NOT NULL,
    expires_at_ms       INTEGER NOT NULL,
    -- what charging it does: approve | card_declined | insufficient_funds
    outcome             TEXT NOT NULL,
    brand               TEXT NOT NULL,
    last4               TEXT NOT NULL,
    funding             TEXT NOT NULL,
    -- the charge (ch_...) that used it, set in the transaction that approved that charge
    used_by_charge      TEXT,
    used_at_ms          INTEGER
);

-- One row per idempotency key of POST /agentic_commerce/delegate_payment, scoped by who asked
-- (an HMAC of the delegate key). fingerprint is an HMAC of the body's canonical JSON keyed by the
-- delegate key (a plain hash could be reversed by trying every card number). While the request
-- runs, status and response are NULL; then they hold the answer replayed for the key (2xx and
-- 4xx; a 5xx deletes the row).
CREATE TABLE acp_delegate_requests (
    identity        TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    fingerprint     TEXT NOT NULL,
    attempt         TEXT NOT NULL,
    started_at_ms   INTEGER NOT NULL,
    status          INTEGER,
    response        TEXT,
    PRIMARY KEY (identity, idempotency_key)
);
