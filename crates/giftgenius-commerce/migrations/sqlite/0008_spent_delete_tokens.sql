-- Delete my data tokens already used (issue 23): a token is spent when used, and a retry with
-- it answers what the first use did, deleting nothing made since. Kept apart from the data the
-- token deletes (delete_my_data never touches this table) and naming no account: the key is a
-- hash of the token's MAC. A mark is pruned once its token has expired (the token is refused
-- from then on anyway).
CREATE TABLE spent_delete_tokens (
    spent_key           TEXT PRIMARY KEY,
    expires_at_ms       INTEGER NOT NULL,
    spent_at_ms         INTEGER NOT NULL,
    -- what the first use deleted, answered again to every retry
    saved_addresses     INTEGER NOT NULL,
    drafts              INTEGER NOT NULL,
    idempotency_keys    INTEGER NOT NULL,
    checkout_sessions   INTEGER NOT NULL,
    orders_anonymized   INTEGER NOT NULL,
    refunds_anonymized  INTEGER NOT NULL
);
CREATE INDEX spent_delete_tokens_expiry ON spent_delete_tokens (expires_at_ms);
