-- Order events waiting to be posted, or posted (issue 25 item 5, docs/acp.md §10.2). Named
-- order_outbox, not acp_order_outbox: app orders use it too (to --order-webhook-url). A row is
-- written in the same transaction as the order change it announces, and a worker on any replica
-- posts it (claimed with a lease), so a crash loses no event and at worst sends one twice.
CREATE TABLE order_outbox (
    -- evt_…: the Request-Id every attempt carries (the receiver's dedupe key)
    id                  TEXT PRIMARY KEY,
    -- who gets it: `app` (--order-webhook-url) or `acp:<platform>`; its URL and secret are read
    -- from the configuration when it is posted, so a rotated secret applies to retries
    receiver            TEXT NOT NULL,
    order_id            TEXT NOT NULL,
    -- the order's events in the order they happened (1, 2, …): per-order FIFO
    seq                 INTEGER NOT NULL,
    -- the order change announced (paid | cancelled): one event per change, whoever records it
    change              TEXT NOT NULL,
    -- the exact bytes posted and signed: {type, data: the full ACP Order}, frozen when written.
    -- Holds personal data (the gift message).
    body                TEXT NOT NULL,
    -- pending | delivered | dead
    status              TEXT NOT NULL,
    -- attempts since it was written (or redelivered); counted when claimed
    attempts            INTEGER NOT NULL DEFAULT 0,
    next_attempt_at_ms  INTEGER NOT NULL,
    -- where the retry horizon starts: written, or redelivered by the operator
    pending_since_ms    INTEGER NOT NULL,
    -- lease of the worker posting it; NULL when nobody is
    locked_until_ms     INTEGER,
    -- fencing token: +1 at every claim, so a worker whose lease ran out records nothing
    claims              INTEGER NOT NULL DEFAULT 0,
    last_error          TEXT,
    created_at_ms       INTEGER NOT NULL,
    updated_at_ms       INTEGER NOT NULL,
    delivered_at_ms     INTEGER
);
CREATE UNIQUE INDEX order_outbox_order_seq ON order_outbox (order_id, seq);
CREATE UNIQUE INDEX order_outbox_order_change ON order_outbox (order_id, change);
CREATE INDEX order_outbox_due ON order_outbox (status, next_attempt_at_ms);
