//! The SQL both stores run unchanged. SQLite and PostgreSQL accept the same `$n` placeholders
//! and the same `ON CONFLICT` / `RETURNING` syntax, so one text serves both.
//!
//! Statements whose text differs stay next to the store that needs them, with the reason:
//! the take-over compare-and-set (`IS` vs `IS NOT DISTINCT FROM`) and the live-units sum
//! (`::BIGINT` cast on PostgreSQL). Locking (SQLite's `BEGIN IMMEDIATE`, PostgreSQL's advisory
//! locks) also lives in the stores.
//!
//! `SELECT *` rows are mapped with `#[derive(sqlx::FromRow)]` on the row types in `mod.rs`;
//! columns the row types do not carry (`drafts.active`, `updated_at_ms`) are ignored.

// --- secrets ---

pub const INSERT_SECRET: &str = "INSERT INTO secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING";
pub const SECRET: &str = "SELECT value FROM secrets WHERE name = $1";

// --- drafts ---

/// An expired draft stops being "the" draft for its request, but stays readable so a late
/// commit gets DRAFT_EXPIRED rather than DRAFT_NOT_FOUND.
pub const EXPIRE_ACTIVE_DRAFT: &str =
    "UPDATE drafts SET active = 0 WHERE subject = $1 AND draft_key = $2 AND active = 1 AND expires_at_ms <= $3";
pub const INSERT_DRAFT: &str = "INSERT INTO drafts (id, subject, draft_key, active, gift_id, quantity, shipping, currency, subtotal_minor, \
     shipping_minor, total_minor, created_at_ms, expires_at_ms) VALUES ($1, $2, $3, 1, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
     ON CONFLICT DO NOTHING";
pub const ACTIVE_DRAFT: &str = "SELECT * FROM drafts WHERE subject = $1 AND draft_key = $2 AND active = 1";
pub const DRAFT: &str = "SELECT * FROM drafts WHERE id = $1 AND subject = $2";

// --- idempotency keys ---

pub const INSERT_KEY: &str = "INSERT INTO idempotency_keys (subject, tool, key, fingerprint, recovery_point, locked_until_ms, created_at_ms, updated_at_ms) \
     VALUES ($1, $2, $3, $4, 'started', $5, $6, $6) ON CONFLICT DO NOTHING";
pub const KEY: &str = "SELECT fingerprint, recovery_point, locked_until_ms, order_id, response FROM idempotency_keys \
     WHERE subject = $1 AND tool = $2 AND key = $3";
pub const RELEASE_KEY: &str = "UPDATE idempotency_keys SET locked_until_ms = NULL, updated_at_ms = $4 \
     WHERE subject = $1 AND tool = $2 AND key = $3 AND recovery_point <> 'finished'";
pub const FINISH_KEY: &str = "UPDATE idempotency_keys SET recovery_point = 'finished', response = $4, locked_until_ms = NULL, updated_at_ms = $5 \
     WHERE subject = $1 AND tool = $2 AND key = $3";
pub const PRUNE_KEYS: &str =
    "DELETE FROM idempotency_keys WHERE created_at_ms < $1 AND (locked_until_ms IS NULL OR locked_until_ms < $2)";
pub const KEY_ORDER_CREATED: &str = "UPDATE idempotency_keys SET recovery_point = 'order_created', order_id = $4, updated_at_ms = $5 \
     WHERE subject = $1 AND tool = $2 AND key = $3";
/// Like [`KEY_ORDER_CREATED`], but only from `started`.
pub const ADOPT_ORDER: &str = "UPDATE idempotency_keys SET recovery_point = 'order_created', order_id = $4, updated_at_ms = $5 \
     WHERE subject = $1 AND tool = $2 AND key = $3 AND recovery_point = 'started'";

// --- orders ---

pub const LIVE_ORDER_FOR_DRAFT: &str = "SELECT * FROM orders WHERE draft_id = $1 AND status <> 'payment_declined'";
pub const INSERT_ORDER: &str = "INSERT INTO orders (id, subject, draft_id, gift_id, gift_title, merchant, quantity, currency, total_minor, status, \
     charge_id, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending_payment', NULL, $10, $10)";
pub const ORDER: &str = "SELECT * FROM orders WHERE id = $1 AND subject = $2";
pub const ORDER_BY_ID: &str = "SELECT * FROM orders WHERE id = $1";
pub const MARK_PAID: &str = "UPDATE orders SET status = 'paid', charge_id = $2, updated_at_ms = $3 WHERE id = $1";
pub const MARK_DECLINED: &str =
    "UPDATE orders SET status = 'payment_declined', updated_at_ms = $2 WHERE id = $1 AND status = 'pending_payment'";
pub const ORDER_COUNT: &str = "SELECT COUNT(*) FROM orders";

// --- checkout sessions ---

pub const INSERT_CHECKOUT: &str = "INSERT INTO checkout_sessions (id, subject, gift_id, currency, amount_minor, created_at_ms, expires_at_ms) \
     VALUES ($1, $2, $3, $4, $5, $6, $7)";
pub const CHECKOUT: &str = "SELECT * FROM checkout_sessions WHERE id = $1";

// --- sandbox payment ledger ---

pub const INSERT_LEDGER: &str = "INSERT INTO sandbox_payment_ledger (idempotency_key, charge_id, amount_minor, currency, description, created_at_ms) \
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (idempotency_key) DO NOTHING";
pub const LEDGER_ENTRY: &str = "SELECT * FROM sandbox_payment_ledger WHERE idempotency_key = $1";
pub const LEDGER: &str = "SELECT * FROM sandbox_payment_ledger ORDER BY created_at_ms, charge_id";

// --- daily suggestion limit ---

/// One statement, so concurrent calls cannot both take the last unit. Returns a row only if
/// the suggestion was counted.
pub const TAKE_DAILY_SUGGESTION: &str = "INSERT INTO daily_suggestions (subject, day, count) VALUES ($1, $2, 1) \
     ON CONFLICT (subject, day) DO UPDATE SET count = daily_suggestions.count + 1 \
     WHERE daily_suggestions.count < $3 RETURNING count";
pub const GIVE_BACK_DAILY_SUGGESTION: &str =
    "UPDATE daily_suggestions SET count = count - 1 WHERE subject = $1 AND day = $2 AND count > 0";
pub const PRUNE_DAILY_SUGGESTIONS: &str = "DELETE FROM daily_suggestions WHERE day < $1";
