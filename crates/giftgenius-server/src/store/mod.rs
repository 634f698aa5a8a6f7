//! Persistence behind one trait, so the tools never know which database they run on:
//! SQLite (the embedded default) or PostgreSQL (several replicas behind a load balancer).
//!
//! Every method is one atomic step. The multi-step flows (see `idempotency.rs` and
//! `orders.rs`) are built from these steps and recorded as recovery points, so a crash between
//! two steps leaves the database in a state the next retry can resume from.

mod postgres;
mod sql;
mod sqlite;

use async_trait::async_trait;

pub use postgres::PostgresStore;
pub use sqlite::SqliteStore;

/// A database failure. The text is for the log only; clients get `INTERNAL_ERROR`.
#[derive(Debug)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StoreError {}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        StoreError(e.to_string())
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        StoreError(e.to_string())
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// Who may see a key, draft or order, and which tool and key a call is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub subject: String,
    pub tool: &'static str,
    pub key: String,
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct DraftRow {
    pub id: String,
    pub subject: String,
    pub draft_key: String,
    pub gift_id: String,
    pub quantity: i64,
    pub shipping: String,
    pub currency: String,
    pub subtotal_minor: i64,
    pub shipping_minor: i64,
    pub total_minor: i64,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

/// Where a keyed call stands; see `idempotency.rs`.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct KeyRow {
    pub fingerprint: String,
    pub recovery_point: String,
    pub locked_until_ms: Option<i64>,
    pub order_id: Option<String>,
    pub response: Option<String>,
}

/// The outcome of claiming an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// First use of the key: the caller holds its lease.
    New,
    /// The key exists; the caller decides (replay, in progress, take over, reused).
    Existing(KeyRow),
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct OrderRow {
    pub id: String,
    pub subject: String,
    pub draft_id: String,
    pub gift_id: String,
    pub gift_title: String,
    pub merchant: String,
    pub quantity: i64,
    pub currency: String,
    pub total_minor: i64,
    pub status: String,
    pub charge_id: Option<String>,
    pub created_at_ms: i64,
}

/// The outcome of creating the order row for a draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CreateOrder {
    Created,
    /// Not enough stock left for this quantity.
    OutOfStock,
    /// The draft already has a live order (placed under another key).
    DraftAlreadyOrdered(Box<OrderRow>),
}

#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CheckoutRow {
    pub id: String,
    pub subject: String,
    pub gift_id: String,
    pub currency: String,
    pub amount_minor: i64,
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
}

/// One entry of the sandbox payment provider's ledger: one real charge.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct LedgerRow {
    pub idempotency_key: String,
    pub charge_id: String,
    pub amount_minor: i64,
    pub currency: String,
    pub description: String,
    pub created_at_ms: i64,
}

#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// A named secret, created with `generate` on first use and shared by every replica.
    async fn secret(&self, name: &str, generated: String) -> StoreResult<String>;

    /// The active, unexpired draft for `(subject, draft_key)`, or `new` inserted as that draft.
    async fn draft_for_request(&self, new: &DraftRow, now_ms: i64) -> StoreResult<DraftRow>;
    async fn draft(&self, subject: &str, id: &str) -> StoreResult<Option<DraftRow>>;

    /// Claims `scope` with `fingerprint` and a lease until `lease_until_ms`, or reports what is there.
    async fn claim_key(&self, scope: &Scope, fingerprint: &str, lease_until_ms: i64, now_ms: i64)
    -> StoreResult<Claim>;
    /// Takes over a key whose lease ran out (compare-and-set on the old lease). True if we got it.
    async fn take_over_key(
        &self,
        scope: &Scope,
        old_lease: Option<i64>,
        lease_until_ms: i64,
        now_ms: i64,
    ) -> StoreResult<bool>;
    /// Drops the lease after a transient failure, keeping the recovery point for the retry.
    async fn release_key(&self, scope: &Scope, now_ms: i64) -> StoreResult<()>;
    /// Stores the final response (success or definitive failure) and ends the lease.
    async fn finish_key(&self, scope: &Scope, response: &str, now_ms: i64) -> StoreResult<()>;
    /// Deletes keys created before `created_before_ms` that are not in progress; returns how many.
    async fn prune_keys(&self, created_before_ms: i64, now_ms: i64) -> StoreResult<u64>;

    /// In one transaction: check stock (`stock` minus units in live orders), insert `order` as
    /// pending payment and move the key to `order_created`.
    async fn create_order(&self, scope: &Scope, order: &OrderRow, stock: i64, now_ms: i64) -> StoreResult<CreateOrder>;
    /// Points the key at an existing order (`order_created`), to finish an order another key left pending.
    async fn adopt_order(&self, scope: &Scope, order_id: &str, now_ms: i64) -> StoreResult<()>;
    async fn order(&self, subject: &str, id: &str) -> StoreResult<Option<OrderRow>>;
    /// The draft's live (pending or paid) order, if any.
    async fn live_order_for_draft(&self, draft_id: &str) -> StoreResult<Option<OrderRow>>;
    async fn order_by_id(&self, id: &str) -> StoreResult<Option<OrderRow>>;
    /// Units of a gift in live (pending or paid) orders.
    async fn units_sold(&self, gift_id: &str) -> StoreResult<i64>;
    /// In one transaction: the order is paid with `charge_id`, the key finished with `response`.
    async fn mark_paid_and_finish(
        &self,
        scope: &Scope,
        order_id: &str,
        charge_id: &str,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<()>;
    /// In one transaction: the order's payment was declined, the key finished with `response`.
    async fn mark_declined_and_finish(
        &self,
        scope: &Scope,
        order_id: &str,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<()>;
    /// Counts orders (all statuses) — for tests and the benchmark.
    async fn order_count(&self) -> StoreResult<i64>;

    /// In one transaction: insert the checkout session and finish the key with `response`.
    async fn create_checkout_and_finish(
        &self,
        scope: &Scope,
        session: &CheckoutRow,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<()>;

    async fn checkout_session(&self, id: &str) -> StoreResult<Option<CheckoutRow>>;

    /// Sandbox provider: the ledger entry for `idempotency_key`, inserting `entry` if none exists.
    async fn sandbox_charge(&self, entry: &LedgerRow) -> StoreResult<LedgerRow>;
    async fn sandbox_ledger(&self) -> StoreResult<Vec<LedgerRow>>;

    /// Daily suggestion limit: atomically counts one suggestion for `subject` on `day` (UTC days
    /// since the Unix epoch) unless `limit` (≥ 1) are already counted. True if it was counted.
    async fn take_daily_suggestion(&self, subject: &str, day: i64, limit: i64) -> StoreResult<bool>;
    /// Un-counts one suggestion (the call delivered nothing because every source failed).
    async fn give_back_daily_suggestion(&self, subject: &str, day: i64) -> StoreResult<()>;
    /// Deletes the counters of days before `before_day`; returns how many.
    async fn prune_daily_suggestions(&self, before_day: i64) -> StoreResult<u64>;
}

/// Opens the store named by `--db`: a `postgres://` URL, or else a SQLite file path.
pub async fn connect(db: &str) -> anyhow::Result<std::sync::Arc<dyn Store>> {
    if db.starts_with("postgres://") || db.starts_with("postgresql://") {
        return Ok(std::sync::Arc::new(PostgresStore::open(db).await?));
    }
    Ok(std::sync::Arc::new(SqliteStore::open(db).await?))
}
