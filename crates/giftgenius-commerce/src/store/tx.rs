//! How a store step writes: plain functions over a connection of either database.
//!
//! A step is a function that opens a write transaction ([`Store::begin`]), calls the shared
//! writes of the tables it touches (each a function over a [`Conn`] in its table's file:
//! `keys::move_key`, `outbox::enqueue_order_event`, `orders::insert_order`, …) and its own
//! statements, and commits. The two shapes most steps take are functions here too:
//! [`Store::fenced`] (the write moves an idempotency key with the work it records, and writes
//! nothing if the key has a newer holder) and [`Store::checked`] (the write changes an order
//! only if the facts its event was built from still hold).
//!
//! A statement is written once for both databases inside `on_conn!` (`mod.rs`), which binds the
//! connection's concrete type in each arm, so each body is type-checked for SQLite and for
//! PostgreSQL alike.

use sqlx::pool::PoolConnection;
use sqlx::{PgConnection, Postgres, Sqlite, SqliteConnection, Transaction};

use super::dialect::{Dialect, WriteLock, lock_postgres};
use super::fulfilment::order_facts;
use super::keys::{Fence, Fenced, KeyMove, Write, move_key};
use super::rows::OrderFacts;
use super::{Pool, Store, StoreResult};

/// A connection of whichever database the store has, borrowed for some statements: a
/// transaction's, or one taken from the pool.
pub(super) enum Conn<'c> {
    Sqlite(&'c mut SqliteConnection),
    Postgres(&'c mut PgConnection),
}

impl<'c> From<&'c mut SqliteConnection> for Conn<'c> {
    fn from(conn: &'c mut SqliteConnection) -> Self {
        Conn::Sqlite(conn)
    }
}

impl<'c> From<&'c mut PgConnection> for Conn<'c> {
    fn from(conn: &'c mut PgConnection) -> Self {
        Conn::Postgres(conn)
    }
}

/// A write transaction on whichever database the store has. Dropped without
/// [`Tx::commit`], it rolls back.
pub(super) enum Tx {
    Sqlite(Transaction<'static, Sqlite>),
    Postgres(Transaction<'static, Postgres>),
}

impl Tx {
    /// Its connection, for the statements that follow.
    pub(super) fn conn(&mut self) -> Conn<'_> {
        match self {
            Tx::Sqlite(tx) => Conn::Sqlite(tx),
            Tx::Postgres(tx) => Conn::Postgres(tx),
        }
    }

    /// Takes `lock` now, for a step that learns what it checks only from its first read (the
    /// purchase's draft names the gift whose stock it takes). SQLite's writer lock already
    /// covers everything.
    pub(super) async fn lock(&mut self, lock: WriteLock<'_>) -> StoreResult<()> {
        match self {
            Tx::Sqlite(_) => Ok(()),
            Tx::Postgres(tx) => Ok(lock_postgres(tx, lock).await?),
        }
    }

    pub(super) async fn commit(self) -> StoreResult<()> {
        match self {
            Tx::Sqlite(tx) => tx.commit().await?,
            Tx::Postgres(tx) => tx.commit().await?,
        }
        Ok(())
    }

    pub(super) async fn rollback(self) -> StoreResult<()> {
        match self {
            Tx::Sqlite(tx) => tx.rollback().await?,
            Tx::Postgres(tx) => tx.rollback().await?,
        }
        Ok(())
    }
}

/// A connection taken from the pool, for a shared write made on its own (no transaction).
pub(super) enum Pooled {
    Sqlite(PoolConnection<Sqlite>),
    Postgres(PoolConnection<Postgres>),
}

impl Pooled {
    pub(super) fn conn(&mut self) -> Conn<'_> {
        match self {
            Pooled::Sqlite(conn) => Conn::Sqlite(conn),
            Pooled::Postgres(conn) => Conn::Postgres(conn),
        }
    }
}

impl Store {
    /// A connection from the pool (back to it when dropped).
    pub(super) async fn acquire(&self) -> StoreResult<Pooled> {
        Ok(match &self.pool {
            Pool::Sqlite(pool) => Pooled::Sqlite(pool.acquire().await?),
            Pool::Postgres(pool) => Pooled::Postgres(pool.acquire().await?),
        })
    }

    /// Begins a write transaction that concurrent writers cannot interleave with (see
    /// `dialect.rs`), holding `lock` on PostgreSQL.
    pub(super) async fn begin(&self, lock: WriteLock<'_>) -> StoreResult<Tx> {
        Ok(match &self.pool {
            Pool::Sqlite(pool) => Tx::Sqlite(pool.begin_write(lock).await?),
            Pool::Postgres(pool) => Tx::Postgres(pool.begin_write(lock).await?),
        })
    }

    /// The fenced write every keyed step makes: in one transaction (taking `lock`), moves the
    /// key held by `fence` (`key_move`) and, if the key has a newer holder, rolls back and is
    /// [`Fenced::Stale`]; otherwise runs `write` (the step's own statements) and commits or rolls
    /// back as its [`Write`] says. An error from `write` rolls everything back.
    pub(super) async fn fenced<T>(
        &self,
        lock: WriteLock<'_>,
        fence: &Fence,
        key_move: KeyMove<'_>,
        now_ms: i64,
        write: impl AsyncFnOnce(&mut Tx) -> StoreResult<Write<T>>,
    ) -> StoreResult<Fenced<T>> {
        let mut tx = self.begin(lock).await?;
        if !move_key(tx.conn(), fence, key_move, now_ms).await? {
            tx.rollback().await?;
            return Ok(Fenced::Stale);
        }
        match write(&mut tx).await? {
            Write::Commit(value) => {
                tx.commit().await?;
                Ok(Fenced::Written(value))
            }
            Write::Rollback(value) => {
                tx.rollback().await?;
                Ok(Fenced::Written(value))
            }
        }
    }

    /// The checked write of an order's life after payment (`fulfilment.rs`): in one
    /// transaction holding the order's lock, unless the order's facts are still `seen` rolls back
    /// and is `false`; otherwise runs `write` (the change and its event), commits and is `true`.
    pub(super) async fn checked(
        &self,
        seen: &OrderFacts,
        write: impl AsyncFnOnce(&mut Tx) -> StoreResult<()>,
    ) -> StoreResult<bool> {
        let mut tx = self.begin(WriteLock::Order { order_id: &seen.order.id }).await?;
        if order_facts(tx.conn(), &seen.order.id).await?.as_ref() != Some(seen) {
            tx.rollback().await?;
            return Ok(false);
        }
        write(&mut tx).await?;
        tx.commit().await?;
        Ok(true)
    }
}
