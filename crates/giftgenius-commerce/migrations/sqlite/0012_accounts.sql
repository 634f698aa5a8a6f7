-- Accounts at the payment provider (issue 26): the Stripe Customer each person's saved cards and
-- PaymentIntents live under, created on the first need (with an idempotency key derived from the
-- subject) and kept here so every replica charges the same Customer. The first row written wins
-- (INSERT … ON CONFLICT DO NOTHING, then read back).
CREATE TABLE accounts (
    subject             TEXT PRIMARY KEY,
    stripe_customer_id  TEXT NOT NULL,
    created_at_ms       INTEGER NOT NULL
);
