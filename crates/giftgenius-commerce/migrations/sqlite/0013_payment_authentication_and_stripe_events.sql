-- 3-D Secure and Stripe's webhooks (issue 26 items 3 and 4).

-- The provider's payment (Stripe: the PaymentIntent id) an order's charge request was answered
-- with before it settled, kept as soon as the answer arrives: the reconciler, the webhooks and
-- the hosted authentication page ask about it directly. An order still `pending_payment` with
-- `authentication_until_ms` set awaits the person's confirmation with their bank (3-D Secure):
-- the reconciler does not give it up before that time; after it, the payment is cancelled at the
-- provider and the order declined, nothing charged.
ALTER TABLE orders ADD COLUMN payment_ref TEXT;
ALTER TABLE orders ADD COLUMN authentication_until_ms INTEGER;

-- Every Stripe webhook event received with a valid signature, by Stripe's event id: a replayed
-- event (Stripe retries, an attacker replays a captured delivery inside the tolerance) finds its
-- row and changes nothing. `outcome` says what applying it did (paid, declined, refund_recorded,
-- ignored: …), for an operator.
CREATE TABLE stripe_events (
    id              TEXT PRIMARY KEY,
    type            TEXT NOT NULL,
    received_at_ms  INTEGER NOT NULL,
    outcome         TEXT NOT NULL
);

-- Webhooks find an order by its PaymentIntent (charge.refunded names the PaymentIntent).
CREATE INDEX orders_by_charge ON orders (charge_id);
CREATE INDEX orders_by_payment_ref ON orders (payment_ref);
