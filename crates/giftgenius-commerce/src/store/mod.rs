//! Persistence: one implementation over SQLite (the embedded default) or PostgreSQL (several
//! replicas behind a load balancer), so the tools never know which database they run on.
//!
//! Each public method is a span `store.<method>` (no SQL, no values) for the traces.
//!
//! What the store keeps, a file each (every file is an `impl Store` block for its tables):
//! - `keys.rs`: idempotency keys (claim, take over, release, finish), and the key's move a
//!   fenced write makes.
//! - `drafts.rs`: priced drafts of `prepare_order`.
//! - `orders.rs`: orders, their stock check, charge, and the one settle step (`Store::settle`)
//!   every way of paying ends with.
//! - `purchases.rs`: a purchase's first step in one transaction (its draft read, its order
//!   created, its key claimed pointing at the order).
//! - `refunds.rs`: refunds of cancelled orders.
//! - `fulfilment.rs`: an order's life after payment: the operator's status changes, partial
//!   refunds (adjustments) and cancellations, each checked under the order's lock.
//! - `checkouts.rs`: the seed's hosted checkout sessions.
//! - `platform_sessions.rs`: agent platforms' checkout sessions, their state the adapter's JSON.
//! - `addresses.rs`: addresses people chose to keep.
//! - `privacy.rs`: deleting a person's data on request, and the retention passes.
//! - `usage.rs`: per-account usage counters (the limits).
//! - `secrets.rs`: secrets shared by every replica.
//! - `outbox.rs`: order events written with the order change they announce, and their
//!   delivery (claimed with a lease, recorded fenced).
//! - `feed_pushes.rs`: the product feed's changes for each feed receiver, and their pushes
//!   (claimed and recorded as order events are).
//!
//! And how it keeps it:
//! - `sql.rs`: the statements, shared by both databases (a section per table).
//! - `tx.rs`: how a step writes: a write transaction on either database, a connection of
//!   either (`tx::Conn`, which the shared writes of each file take), and the two shapes most
//!   steps have, the fenced write (`Store::fenced`: the work and the key's move, or nothing) and
//!   the checked write (`Store::checked`: an order's change only if its facts still hold).
//! - `dialect.rs`: what differs (opening, the write-transaction lock).
//! - `rows.rs`: row types, and the enums that closed-set text columns decode into.
//!
//! Adding a table: its migration in `migrations/{sqlite,postgres}`, its statements in a new
//! section of `sql.rs`, its row type in `rows.rs`, and a file here with its `impl Store` (and a
//! line above). A step that moves an idempotency key with its work is a `Store::fenced` write:
//! the new file writes only the domain statements. A write another file's steps need too (an
//! order's insert, its event, its facts) is a plain `pub(super)` function over a `tx::Conn` in
//! its table's file, called from any transaction.
//!
//! Every method is one atomic step. Multi-step flows (`checkout::idempotency`,
//! `checkout::commit`) are built from these steps and recorded as recovery points, so a crash
//! between two steps leaves the database in a state the next retry can resume from. Each
//! statement is written once and compiled for both databases: `on_pool!` over the pool,
//! `on_conn!` over a connection.

mod dialect;
pub mod rows;
mod sql;

use sqlx::{PgPool, SqlitePool};

pub use rows::{
    AdjustmentRow, CheckoutRow, CurrencyColumn, DraftLineRow, DraftRow, FeedMark, FeedPushRow, Fulfilment, KeyRow,
    Lines, NewOrderEvent, OrderChange, OrderFacts, OrderLineRow, OrderStatusColumn, OutboxRow, OutboxStatus,
    PlatformSessionRow, RecoveryPoint, RefundRow, RefundStatusColumn, ShippingColumn, Usage,
};
pub use sql::ERASED_SUBJECT;

/// A store failure. Its text is for the log only (under the call's reference); clients get
/// `INTERNAL_ERROR` and never see it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database failed a statement or could not be reached. The text repeats the driver's
    /// because the logs print errors by their text; the driver's error stays the source.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// JSON the store keeps (an answer, delivery details) could not be written or read.
    #[error("{what}: {source}")]
    Json {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    /// What the database holds contradicts what a step relies on (a row vanished, a status
    /// moved that the step's own checks should have excluded).
    #[error("{0}")]
    Inconsistent(String),
}

impl StoreError {
    /// For `map_err` on (de)serializing JSON the store keeps: `what` says which.
    pub fn json(what: &'static str) -> impl Fn(serde_json::Error) -> Self + Copy {
        move |source| StoreError::Json { what, source }
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

#[derive(Debug, Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// The store. Cheap to clone (the pool is shared).
#[derive(Debug, Clone)]
pub struct Store {
    pool: Pool,
}

/// Runs `$body` with `$pool` bound to whichever pool the store has: the body is written once
/// and type-checked for each database.
macro_rules! on_pool {
    ($store:expr, |$pool:ident| $body:expr) => {
        match &$store.pool {
            $crate::store::Pool::Sqlite($pool) => $body,
            $crate::store::Pool::Postgres($pool) => $body,
        }
    };
}

/// A query with its first three parameters bound to the key's scope `(subject, tool, key)`.
macro_rules! scoped {
    ($sql:expr, $scope:expr) => {
        sqlx::query($sql).bind(&$scope.subject).bind($scope.tool).bind(&$scope.key)
    };
}

/// Runs `$body` with `$c` bound to `$conn`'s connection (`&mut SqliteConnection` or `&mut
/// PgConnection`): the body is written once and type-checked for each database. Inside it, a
/// statement runs on `&mut *$c`, and a shared write is called with `(&mut *$c).into()`.
macro_rules! on_conn {
    ($conn:expr, |$c:ident| $body:expr) => {
        match $conn {
            $crate::store::tx::Conn::Sqlite($c) => $body,
            $crate::store::tx::Conn::Postgres($c) => $body,
        }
    };
}

// The files below use the macros above, so they are declared after them.
mod accounts;
mod addresses;
mod checkouts;
mod drafts;
mod feed_pushes;
mod fulfilment;
mod keys;
mod orders;
mod outbox;
mod platform_sessions;
mod privacy;
mod purchases;
mod refunds;
mod secrets;
mod tx;
mod usage;

pub use drafts::Drafted;
pub use feed_pushes::{Marked, PushRecord, Redeliver, fingerprint_number};
pub use keys::{Claim, Fence, Fenced, Scope};
pub use orders::{ChargeStart, CreateOrder, SettledBy, Settlement, Stock};
pub use outbox::AttemptRecord;
pub use privacy::{Deleted, Retained};
pub use purchases::{PurchaseBegun, PurchasePlan};
pub use refunds::BeginRefund;

impl Store {
    /// Opens the store named by `--db`: a `postgres://` URL, or else a SQLite file path.
    #[tracing::instrument(name = "store.connect", skip_all, fields(otel.kind = "client", db.operation.name = "connect"))]
    pub async fn connect(db: &str) -> StoreResult<Self> {
        let pool = if db.starts_with("postgres://") || db.starts_with("postgresql://") {
            Pool::Postgres(dialect::open_postgres(db).await?)
        } else {
            Pool::Sqlite(dialect::open_sqlite(db).await?)
        };
        Ok(Self { pool })
    }

    /// Whether the database answers and holds every migration this build knows (`/readyz`): a
    /// database another build rolled back, or one that stopped answering, is not ready.
    #[tracing::instrument(name = "store.is_migrated", skip_all, fields(otel.kind = "client", db.operation.name = "is_migrated"))]
    pub async fn is_migrated(&self) -> StoreResult<bool> {
        const NEWEST_APPLIED: &str = "SELECT COALESCE(MAX(version), 0) FROM _sqlx_migrations WHERE success";
        let (applied, expected) = match &self.pool {
            Pool::Sqlite(pool) => (
                sqlx::query_scalar::<_, i64>(NEWEST_APPLIED).fetch_one(pool).await?,
                dialect::newest(&dialect::SQLITE_MIGRATIONS),
            ),
            Pool::Postgres(pool) => (
                sqlx::query_scalar::<_, i64>(NEWEST_APPLIED).fetch_one(pool).await?,
                dialect::newest(&dialect::POSTGRES_MIGRATIONS),
            ),
        };
        Ok(applied >= expected)
    }

    /// How durable a commit is, as the database itself reports it (logged at startup, printed
    /// by the benchmarks): SQLite's `synchronous` level, PostgreSQL's `synchronous_commit` and
    /// `fsync`.
    #[tracing::instrument(name = "store.durability", skip_all, fields(otel.kind = "client", db.operation.name = "durability"))]
    pub async fn durability(&self) -> StoreResult<String> {
        match &self.pool {
            Pool::Sqlite(pool) => {
                let level: i64 = sqlx::query_scalar("PRAGMA synchronous").fetch_one(pool).await?;
                let name = ["OFF", "NORMAL", "FULL", "EXTRA"].get(level as usize).copied().unwrap_or("?");
                Ok(format!("sqlite synchronous={name}"))
            }
            Pool::Postgres(pool) => {
                let commit: String = sqlx::query_scalar("SHOW synchronous_commit").fetch_one(pool).await?;
                let fsync: String = sqlx::query_scalar("SHOW fsync").fetch_one(pool).await?;
                Ok(format!("postgres synchronous_commit={commit} fsync={fsync}"))
            }
        }
    }
}
