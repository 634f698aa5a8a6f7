-- The product feed's changes, waiting to be pushed to each feed receiver or pushed (issue 44
-- item 1, docs/feed.md "Pushing changes"): one row per (receiver, product). A sweep marks a
-- product pending when what the feed says of it (price, availability, title…) differs from
-- what was last marked; a worker on any replica claims due rows with a lease, builds each
-- product from the catalog and stock of that moment, PATCHes them to the receiver in a batch,
-- and records the outcome fenced by its claim. A crash loses nothing: a row stays pending
-- until a receiver accepted it, and every server sweeps the whole catalog when it starts.
CREATE TABLE feed_pushes (
    -- the receiver's name in --feed-receivers (its URL and token are read from there when posted)
    receiver            TEXT NOT NULL,
    -- the product's id: the gift's
    product_id          TEXT NOT NULL,
    -- the title it was last marked under: a product the catalog dropped is pushed as
    -- discontinued under it
    title               TEXT NOT NULL,
    -- hash of the product as last marked (what the feed should say)
    fingerprint         TEXT NOT NULL,
    -- hash of the product as the receiver last accepted it; NULL: never accepted
    sent_fingerprint    TEXT,
    -- pending | delivered | dead
    status              TEXT NOT NULL,
    -- +1 at every mark: a push claimed under an older mark leaves the row pending
    marks               INTEGER NOT NULL DEFAULT 0,
    -- attempts since it became pending; counted when claimed
    attempts            INTEGER NOT NULL DEFAULT 0,
    next_attempt_at_ms  INTEGER NOT NULL,
    -- where the retry horizon starts: marked after it was delivered, or redelivered
    pending_since_ms    INTEGER NOT NULL,
    -- lease of the worker pushing it; NULL when nobody is
    locked_until_ms     INTEGER,
    -- fencing token: +1 at every claim (and redelivery)
    claims              INTEGER NOT NULL DEFAULT 0,
    last_error          TEXT,
    updated_at_ms       INTEGER NOT NULL,
    delivered_at_ms     INTEGER,
    PRIMARY KEY (receiver, product_id)
);
CREATE INDEX feed_pushes_due ON feed_pushes (receiver, status, next_attempt_at_ms, product_id);
-- /metrics reads the backlog (pending, and since when) and the dead at every scrape.
CREATE INDEX feed_pushes_status ON feed_pushes (status, pending_since_ms);
-- The sweep after a sale or a cancel reads the gifts of the orders changed lately.
CREATE INDEX orders_updated ON orders (updated_at_ms);
