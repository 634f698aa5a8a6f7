-- The idempotency module is generic: a key points at "the resource its call created" (an
-- order, for commit_order), and its middle recovery point says just that.
ALTER TABLE idempotency_keys RENAME COLUMN order_id TO resource_id;
UPDATE idempotency_keys SET recovery_point = 'resource_created' WHERE recovery_point = 'order_created';
