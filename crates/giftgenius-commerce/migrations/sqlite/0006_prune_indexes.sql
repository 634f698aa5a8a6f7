-- Drafts and checkout sessions are pruned by expiry (see Checkout::prune); these indexes keep
-- that a range delete instead of a full scan.
CREATE INDEX drafts_expires ON drafts (expires_at_ms);
CREATE INDEX checkout_sessions_expires ON checkout_sessions (expires_at_ms);
CREATE INDEX orders_by_draft ON orders (draft_id);
