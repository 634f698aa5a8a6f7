-- ACP checkout sessions (issue 25, docs/acp.md §13.6): the sessions agent platforms create over
-- /acp/checkout_sessions, owned by the platform that created them (`platform` is its name
-- from --acp-platforms; another platform's session is 404). Not our own checkout_sessions.
CREATE TABLE acp_checkout_sessions (
    id              TEXT PRIMARY KEY,
    platform        TEXT NOT NULL,
    -- not_ready_for_payment | ready_for_payment | canceled | expired (completed comes with payment)
    status          TEXT NOT NULL,
    -- JSON of what the platform asked for (currency, items, fulfillment details, buyer, selected
    -- option, order notes, metadata, locale): prices, stock and options are computed from the
    -- catalog on every answer. Holds personal data (address, buyer, gift message).
    state           TEXT NOT NULL,
    created_at_ms   INTEGER NOT NULL,
    updated_at_ms   INTEGER NOT NULL,
    expires_at_ms   INTEGER NOT NULL
);
CREATE INDEX acp_checkout_sessions_expiry ON acp_checkout_sessions (expires_at_ms);
