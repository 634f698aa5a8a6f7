//! The little that differs between SQLite and PostgreSQL: opening a pool (with its migrations)
//! and starting a write transaction that concurrent writers cannot interleave with.
//!
//! SQLite has one writer at a time: `BEGIN IMMEDIATE` takes the database's write lock up front,
//! so every check-then-write step queues instead of failing half-way. PostgreSQL has no such
//! lock (READ COMMITTED: each statement sees what was committed before it started), so a step
//! that checks something and then writes based on it first takes a transaction-scoped advisory
//! lock (`pg_advisory_xact_lock`) on what it checks; COMMIT or ROLLBACK releases it, also when
//! the connection dies. Single-statement steps (`INSERT … ON CONFLICT`, compare-and-set
//! `UPDATE`) are atomic on their own in both.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Database, PgPool, Postgres, Sqlite, SqlitePool, Transaction};

/// What a write transaction must not interleave with (PostgreSQL only; SQLite's writer lock
/// already covers everything).
#[derive(Debug, Clone, Copy)]
pub enum WriteLock<'a> {
    /// Nothing beyond the transaction itself.
    None,
    /// One `prepare_order` request of one subject (expire, insert and read its draft).
    DraftRequest { subject: &'a str, draft_key: &'a str },
    /// The stock of each of these gifts (check units sold, then insert an order), ids sorted
    /// and distinct: every transaction takes them in the same order, so two baskets sharing
    /// gifts queue rather than deadlock.
    GiftStock { gift_ids: &'a [&'a str] },
    /// One order's status, refunds and adjustments (check what an event was built from, then
    /// change the order and write the event).
    Order { order_id: &'a str },
}

/// Advisory-lock namespaces (the first key of the two-key form), so hashes of different kinds
/// of things never share a lock. A hash collision within a namespace only serializes two
/// unrelated calls; it never breaks correctness.
const LOCK_DRAFT_REQUEST: i32 = 0x6767_0001;
const LOCK_GIFT_STOCK: i32 = 0x6767_0002;
const LOCK_ORDER: i32 = 0x6767_0003;

/// PostgreSQL connections per replica; several replicas share the server's `max_connections`.
const POSTGRES_POOL_SIZE: u32 = 10;
const SQLITE_POOL_SIZE: u32 = 8;

/// Prepared statements each connection keeps. Every statement runs through `sqlx::query`,
/// which prepares it once per connection and reuses it (`persistent`, sqlx's default); the
/// cache is least-recently-used and sqlx keeps 100 by default, fewer than the store's
/// statements (`sql.rs` alone holds over 100), so a reconciler pass or an operator's listing
/// could push a purchase's statements out and make them be parsed and planned again. With
/// room for all of them, each is prepared once per connection.
const STATEMENT_CACHE: usize = 512;

/// Starting a write transaction, per database.
pub(super) trait Dialect {
    type Db: Database;
    async fn begin_write(&self, lock: WriteLock<'_>) -> Result<Transaction<'static, Self::Db>, sqlx::Error>;
}

impl Dialect for SqlitePool {
    type Db = Sqlite;

    async fn begin_write(&self, _lock: WriteLock<'_>) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
        self.begin_with("BEGIN IMMEDIATE").await
    }
}

impl Dialect for PgPool {
    type Db = Postgres;

    async fn begin_write(&self, lock: WriteLock<'_>) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
        let mut tx = self.begin().await?;
        lock_postgres(&mut tx, lock).await?;
        Ok(tx)
    }
}

/// Takes `lock` in a PostgreSQL transaction (held until it ends).
pub(super) async fn lock_postgres(
    tx: &mut Transaction<'static, Postgres>,
    lock: WriteLock<'_>,
) -> Result<(), sqlx::Error> {
    let names: Vec<(i32, String)> = match lock {
        WriteLock::None => return Ok(()),
        // Text cannot hold NUL; the length prefix keeps the pair unambiguous.
        WriteLock::DraftRequest { subject, draft_key } => {
            vec![(LOCK_DRAFT_REQUEST, format!("{}:{subject}{draft_key}", subject.len()))]
        }
        WriteLock::GiftStock { gift_ids } => gift_ids.iter().map(|id| (LOCK_GIFT_STOCK, id.to_string())).collect(),
        WriteLock::Order { order_id } => vec![(LOCK_ORDER, order_id.to_string())],
    };
    for (namespace, name) in names {
        sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext($2))")
            .bind(namespace)
            .bind(name)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// The migrations each database is brought to when opened (and `/readyz` checks it still is).
pub(super) static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
pub(super) static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// The newest migration `migrator` holds (0 when it holds none).
pub(super) fn newest(migrator: &sqlx::migrate::Migrator) -> i64 {
    migrator.iter().map(|m| m.version).max().unwrap_or(0)
}

/// Opens (creating if needed) a SQLite file in WAL mode and runs the embedded migrations.
///
/// `synchronous=FULL`: in WAL mode, NORMAL syncs the log only at checkpoints, so a power loss
/// (not a process crash: the OS still holds the writes) can roll back transactions that had
/// committed (SQLite's documentation of `PRAGMA synchronous`: "A transaction committed in WAL
/// mode with synchronous=NORMAL might roll back following a power loss or system crash").
/// Here that transaction may be an order marked paid and its key finished while the provider
/// keeps the charge; the retry would then charge again. FULL syncs the WAL at every commit:
/// one fsync per money write, measured on the commit benchmark (docs/benchmarks.md).
pub(super) async fn open_sqlite(path: &str) -> Result<SqlitePool, sqlx::Error> {
    let options = SqliteConnectOptions::from_str(&format!("sqlite://{path}"))?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Full)
        .busy_timeout(Duration::from_secs(10))
        .foreign_keys(true)
        .statement_cache_capacity(STATEMENT_CACHE);
    let pool = SqlitePoolOptions::new().max_connections(SQLITE_POOL_SIZE).connect_with(options).await?;
    SQLITE_MIGRATIONS.run(&pool).await?;
    Ok(pool)
}

/// Connects to a `postgres://` URL and runs the embedded migrations. Replicas starting together
/// are fine: sqlx serializes migrations with an advisory lock.
///
/// Every session asks for `synchronous_commit=on` (PostgreSQL's default, which a server or role
/// setting may have lowered): COMMIT returns only once the WAL is flushed, so an order marked
/// paid survives a power loss (a server running `fsync=off` would still undo that:
/// `Store::durability` reports both, and startup logs it).
pub(super) async fn open_postgres(url: &str) -> Result<PgPool, sqlx::Error> {
    let options = PgConnectOptions::from_str(url)?
        .application_name("giftgenius-server")
        .options([("synchronous_commit", "on")])
        .statement_cache_capacity(STATEMENT_CACHE);
    let pool = PgPoolOptions::new()
        .max_connections(POSTGRES_POOL_SIZE)
        .acquire_timeout(Duration::from_secs(10))
        .connect_with(options)
        .await?;
    POSTGRES_MIGRATIONS.run(&pool).await?;
    Ok(pool)
}
