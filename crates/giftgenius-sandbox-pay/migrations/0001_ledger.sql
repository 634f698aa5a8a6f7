-- The sandbox provider's own database: its ledger, and the settings every process that serves
-- this file shares (latency, injected faults). Money is integer minor units; time is Unix ms.

-- One row per idempotency key: what happened to the charge requested under it.
CREATE TABLE charges (
    -- the order charges were first requested in (pagination)
    seq             INTEGER PRIMARY KEY AUTOINCREMENT,
    idempotency_key TEXT NOT NULL UNIQUE,
    id              TEXT NOT NULL UNIQUE,
    amount          INTEGER NOT NULL,
    currency        TEXT NOT NULL,
    description     TEXT NOT NULL,
    -- processing | succeeded | failed
    status          TEXT NOT NULL,
    failure_code    TEXT,
    -- the request working on a `processing` row; another may take it over once it is stale
    attempt         TEXT NOT NULL,
    started_at_ms   INTEGER NOT NULL,
    created_at_ms   INTEGER NOT NULL
);

CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO settings (name, value) VALUES ('latency_ms', '150'), ('always_fault', '');

-- One-off faults, taken in order by the next requests (by any process on this file).
CREATE TABLE fault_queue (
    seq   INTEGER PRIMARY KEY AUTOINCREMENT,
    fault TEXT NOT NULL
);
