-- Fenced leases and reconciled orders (see checkout/idempotency.rs and checkout/reconcile.rs).
--
-- Every take-over of a key bumps its generation (its fencing token); every write on the key
-- names the generation it holds, so a holder whose lease ran out can no longer write.
ALTER TABLE idempotency_keys ADD COLUMN generation BIGINT NOT NULL DEFAULT 0;
-- The keys that point at an order (the reconciler finishes them with it).
CREATE INDEX idempotency_keys_resource ON idempotency_keys (resource_id);

-- Until when a charge request for the order may be in flight: the reconciler never decides
-- that a charge did not happen while one may still reach the provider.
ALTER TABLE orders ADD COLUMN charging_until_ms BIGINT;
-- Pending orders, oldest first (the reconciler's scan).
CREATE INDEX orders_by_status_age ON orders (status, created_at_ms);

-- The sandbox payment provider is its own process with its own database now.
DROP TABLE sandbox_payment_ledger;
