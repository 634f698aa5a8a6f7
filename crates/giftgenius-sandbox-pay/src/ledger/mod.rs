//! The provider's own database (one SQLite file): its ledger, one row per idempotency key, and
//! the settings every process serving the file shares. Several provider processes may serve one
//! file (WAL; every check-then-write step is one `BEGIN IMMEDIATE` transaction).
//!
//! A charge request first records its key as `processing`, then waits out the latency, then
//! decides (succeeded or failed) with a compare-and-set on its own attempt. So "what happened to
//! the charge under key K" always has an honest answer: nothing (never received, or a 503), still
//! processing, succeeded or failed. A `processing` row older than [`STALE_PROCESSING_MS`] belongs
//! to a process that died before deciding (a live one decides within its latency, capped at
//! [`MAX_LATENCY_MS`]): nothing was charged, so it is forgotten, and the attempt it belonged to
//! can no longer decide anything.
//!
//! A charge that names a vault token is decided by `vault.rs` (inside [`Ledger::settle`]): the
//! token's checks and its use are part of the transaction that decides.
//!
//! The writes of a charge request (recording its key, then deciding it) go through one writer
//! connection that commits whatever requests are waiting as one transaction, one fsync for the
//! lot (`group.rs`): every request is answered only once its batch is durable, and the file
//! stays at `synchronous=FULL`. Everything else (refunds, settings, delegated payments, reads)
//! uses the pool, each check-then-write step in a `BEGIN IMMEDIATE` transaction of its own.
//!
//! A latency change applies to the requests already waiting out theirs ([`Ledger::wait_latency`]),
//! so a test can hold a charge in `processing` (a long latency) for exactly as long as it needs,
//! then let it be decided at once (latency 0), instead of guessing a latency its steps fit in.

mod group;
pub mod vault;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqliteConnection, SqlitePool};

use crate::api::{Charge, ChargeRequest, ChargeStatus, Refund, RefundRequest, Settings, SettingsUpdate};
use crate::faults::{Fault, FaultPlan};
use group::Writer;

/// A charge request never takes longer than this before it is decided.
pub const MAX_LATENCY_MS: u64 = 30_000;
/// A `processing` row older than this was left by a process that died mid-request.
pub const STALE_PROCESSING_MS: i64 = 60_000;

pub type LedgerResult<T> = Result<T, sqlx::Error>;

/// One row of the ledger.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct ChargeRow {
    pub seq: i64,
    pub idempotency_key: String,
    pub id: String,
    pub amount: i64,
    pub currency: String,
    pub description: String,
    pub status: String,
    pub failure_code: Option<String>,
    pub attempt: String,
    pub started_at_ms: i64,
    pub created_at_ms: i64,
    /// The vault token the charge named (`vault.rs`), with the session and merchant it was for.
    pub payment_token: Option<String>,
    pub token_session: Option<String>,
    pub token_merchant: Option<String>,
}

impl ChargeRow {
    pub fn status(&self) -> ChargeStatus {
        // Only this module writes the column, always from `ChargeStatus::as_str`.
        ChargeStatus::parse(&self.status).unwrap_or(ChargeStatus::Processing)
    }

    /// Whether `request` asks for exactly what this row was requested with.
    pub fn same_request(&self, request: &ChargeRequest) -> bool {
        let token = request.payment_token.as_ref();
        self.amount == request.amount
            && self.currency == request.currency
            && self.description == request.description
            && self.payment_token.as_deref() == token.map(|t| t.token.as_str())
            && self.token_session.as_deref() == token.map(|t| t.checkout_session_id.as_str())
            && self.token_merchant.as_deref() == token.map(|t| t.merchant_id.as_str())
    }

    pub fn to_api(&self) -> Charge {
        Charge {
            id: self.id.clone(),
            object: "charge".into(),
            amount: self.amount,
            currency: self.currency.clone(),
            description: self.description.clone(),
            status: self.status(),
            failure_code: self.failure_code.clone(),
            idempotency_key: self.idempotency_key.clone(),
            created: self.created_at_ms,
        }
    }
}

/// One refund in the ledger.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RefundRow {
    pub seq: i64,
    pub idempotency_key: String,
    pub id: String,
    pub charge: String,
    pub amount: i64,
    pub currency: String,
    pub reason: String,
    pub status: String,
    pub created_at_ms: i64,
}

impl RefundRow {
    /// Whether `request` (with its amount resolved) asks for what this refund was asked with.
    pub fn same_request(&self, charge: &str, amount: Option<i64>, reason: &str) -> bool {
        self.charge == charge && amount.is_none_or(|a| a == self.amount) && self.reason == reason
    }

    pub fn to_api(&self) -> Refund {
        Refund {
            id: self.id.clone(),
            object: "refund".into(),
            amount: self.amount,
            currency: self.currency.clone(),
            charge: self.charge.clone(),
            reason: self.reason.clone(),
            status: self.status.clone(),
            idempotency_key: self.idempotency_key.clone(),
            created: self.created_at_ms,
        }
    }
}

/// What a refund request came to.
#[derive(Debug)]
pub enum RefundOutcome {
    /// Recorded now.
    Created(RefundRow),
    /// The key already has this refund: replay it.
    Replayed(RefundRow),
    /// The key was used for another refund.
    KeyReused,
    /// No succeeded charge with that id.
    NoSuchCharge,
    /// The amount exceeds what is left of the charge.
    AlreadyRefunded,
}

/// What a new request under a key may do.
#[derive(Debug)]
pub enum Begin {
    /// The key is ours to decide, as `attempt`, for the charge `id`, after `latency` (the
    /// setting as the transaction that recorded the key read it).
    Started { attempt: String, id: String, latency: Duration },
    /// The key already has a charge (or one in progress): answer from it. (Boxed: a row is
    /// large next to `Started`.)
    Existing(Box<ChargeRow>),
}

/// What deciding a charge came to ([`Ledger::settle`]).
#[derive(Debug)]
pub enum Settled {
    /// The fault taken was a 503: the attempt's row is gone, nothing was charged.
    Abandoned,
    /// The attempt was declared dead and taken over: it decided nothing.
    TakenOver,
    /// Decided (succeeded or failed) as `row`, with the fault that applied, if any.
    Decided { row: Box<ChargeRow>, fault: Option<Fault> },
}

#[derive(Debug, Clone)]
pub struct Ledger {
    pool: SqlitePool,
    /// The one connection that commits charge requests' writes in groups (`group.rs`).
    writer: Writer,
    /// Woken when this process changes the latency (requests waiting re-read it).
    latency_changed: Arc<Notify>,
}

fn new_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}

impl Ledger {
    /// Opens (creating if needed) the SQLite file at `path` and runs the migrations.
    pub async fn open(path: &str) -> LedgerResult<Self> {
        let options = SqliteConnectOptions::from_str(&format!("sqlite://{path}"))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(10));
        let pool = SqlitePoolOptions::new().max_connections(4).connect_with(options.clone()).await?;
        sqlx::migrate!("./migrations").run(&pool).await?;
        let writer = Writer::start(options).await?;
        Ok(Self { pool, writer, latency_changed: Arc::new(Notify::new()) })
    }

    /// The database, for the modules that keep their own tables in it (`vault.rs`, `delegate/`).
    pub(crate) fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Records `key` as processing for `request`, or reports the charge it already has; in the
    /// writer's next group commit, answered once that is durable.
    pub async fn begin(&self, key: &str, request: &ChargeRequest, now_ms: i64) -> LedgerResult<Begin> {
        self.writer.begin(key, request, now_ms).await
    }

    /// Decides the charge `attempt` began under `key`: takes the next fault, then abandons the
    /// attempt (a 503), or decides it (declined, or charged: by its vault token when it names
    /// one), in the writer's next group commit, answered once that is durable.
    pub async fn settle(
        &self,
        key: &str,
        attempt: &str,
        request: &ChargeRequest,
        now_ms: i64,
    ) -> LedgerResult<Settled> {
        self.writer.settle(key, attempt, request, now_ms).await
    }

    /// The charge requested under `key`, if any (a stale `processing` row is forgotten first).
    /// The charge requested under `key`, if any (a stale `processing` row is forgotten first).
    pub async fn by_key(&self, key: &str, now_ms: i64) -> LedgerResult<Option<ChargeRow>> {
        sqlx::query("DELETE FROM charges WHERE idempotency_key = $1 AND status = $2 AND started_at_ms < $3")
            .bind(key)
            .bind(ChargeStatus::Processing.as_str())
            .bind(now_ms - STALE_PROCESSING_MS)
            .execute(&self.pool)
            .await?;
        sqlx::query_as("SELECT * FROM charges WHERE idempotency_key = $1").bind(key).fetch_optional(&self.pool).await
    }

    pub async fn by_id(&self, id: &str) -> LedgerResult<Option<ChargeRow>> {
        sqlx::query_as("SELECT * FROM charges WHERE id = $1").bind(id).fetch_optional(&self.pool).await
    }

    /// Up to `limit` charges after the charge `after` (oldest first), and whether more follow.
    pub async fn page(&self, after: Option<&str>, limit: usize) -> LedgerResult<(Vec<ChargeRow>, bool)> {
        let after_seq: i64 = match after {
            Some(id) => match self.by_id(id).await? {
                Some(row) => row.seq,
                None => return Ok((Vec::new(), false)),
            },
            None => 0,
        };
        let mut rows: Vec<ChargeRow> = sqlx::query_as("SELECT * FROM charges WHERE seq > $1 ORDER BY seq LIMIT $2")
            .bind(after_seq)
            .bind(limit as i64 + 1)
            .fetch_all(&self.pool)
            .await?;
        let has_more = rows.len() > limit;
        rows.truncate(limit);
        Ok((rows, has_more))
    }

    /// Records a refund under `key` in one transaction: replays the key's refund, or checks the
    /// charge and what is left of it and records the refund as succeeded.
    pub async fn refund(&self, key: &str, request: &RefundRequest, now_ms: i64) -> LedgerResult<RefundOutcome> {
        let reason = request.reason.clone().unwrap_or_else(|| "requested_by_customer".into());
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let existing: Option<RefundRow> = sqlx::query_as("SELECT * FROM refunds WHERE idempotency_key = $1")
            .bind(key)
            .fetch_optional(&mut *tx)
            .await?;
        if let Some(row) = existing {
            tx.rollback().await?;
            return Ok(if row.same_request(&request.charge, request.amount, &reason) {
                RefundOutcome::Replayed(row)
            } else {
                RefundOutcome::KeyReused
            });
        }
        let charge: Option<ChargeRow> = sqlx::query_as("SELECT * FROM charges WHERE id = $1 AND status = $2")
            .bind(&request.charge)
            .bind(ChargeStatus::Succeeded.as_str())
            .fetch_optional(&mut *tx)
            .await?;
        let Some(charge) = charge else {
            tx.rollback().await?;
            return Ok(RefundOutcome::NoSuchCharge);
        };
        let refunded: i64 = sqlx::query_scalar("SELECT COALESCE(SUM(amount), 0) FROM refunds WHERE charge = $1")
            .bind(&charge.id)
            .fetch_one(&mut *tx)
            .await?;
        let left = charge.amount - refunded;
        let amount = request.amount.unwrap_or(left);
        if amount <= 0 || amount > left {
            tx.rollback().await?;
            return Ok(RefundOutcome::AlreadyRefunded);
        }
        let id = new_id("re");
        sqlx::query(
            "INSERT INTO refunds (idempotency_key, id, charge, amount, currency, reason, status, created_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, 'succeeded', $7)",
        )
        .bind(key)
        .bind(&id)
        .bind(&charge.id)
        .bind(amount)
        .bind(&charge.currency)
        .bind(&reason)
        .bind(now_ms)
        .execute(&mut *tx)
        .await?;
        let row = sqlx::query_as("SELECT * FROM refunds WHERE id = $1").bind(&id).fetch_one(&mut *tx).await?;
        tx.commit().await?;
        Ok(RefundOutcome::Created(row))
    }

    pub async fn refund_by_key(&self, key: &str) -> LedgerResult<Option<RefundRow>> {
        sqlx::query_as("SELECT * FROM refunds WHERE idempotency_key = $1").bind(key).fetch_optional(&self.pool).await
    }

    /// Up to `limit` refunds after the refund `after` (oldest first), and whether more follow.
    pub async fn refund_page(&self, after: Option<&str>, limit: usize) -> LedgerResult<(Vec<RefundRow>, bool)> {
        let after_seq: i64 = match after {
            Some(id) => {
                match sqlx::query_scalar("SELECT seq FROM refunds WHERE id = $1")
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?
                {
                    Some(seq) => seq,
                    None => return Ok((Vec::new(), false)),
                }
            }
            None => 0,
        };
        let mut rows: Vec<RefundRow> = sqlx::query_as("SELECT * FROM refunds WHERE seq > $1 ORDER BY seq LIMIT $2")
            .bind(after_seq)
            .bind(limit as i64 + 1)
            .fetch_all(&self.pool)
            .await?;
        let has_more = rows.len() > limit;
        rows.truncate(limit);
        Ok((rows, has_more))
    }

    /// The next injected fault for a request: the queue's first, else the standing one.
    pub async fn take_fault(&self) -> LedgerResult<Option<Fault>> {
        take_fault(&mut *self.pool.acquire().await?).await
    }

    async fn setting(&self, name: &str) -> LedgerResult<String> {
        setting(&mut *self.pool.acquire().await?, name).await
    }

    pub async fn latency(&self) -> LedgerResult<Duration> {
        latency(&mut *self.pool.acquire().await?).await
    }

    /// Waits until the latency, counted from `since`, has passed; a latency changed meanwhile
    /// (through this process) counts instead of the one read first, shorter or longer.
    pub async fn wait_latency(&self, since: Instant) -> LedgerResult<()> {
        self.wait_latency_from(since, None).await
    }

    /// [`Ledger::wait_latency`] for a request that already read the latency (`read`, in the
    /// transaction that recorded it): a latency of zero has nothing to wait for; any other is
    /// read again under the change notification, as `wait_latency` does.
    pub async fn wait_latency_from(&self, since: Instant, read: Option<Duration>) -> LedgerResult<()> {
        if read == Some(Duration::ZERO) {
            return Ok(());
        }
        loop {
            // Registered before reading, so a change between the read and the sleep is not missed.
            let changed = self.latency_changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let until = since + self.latency().await?;
            tokio::select! {
                () = tokio::time::sleep_until(until) => return Ok(()),
                () = &mut changed => {}
            }
        }
    }

    pub async fn settings(&self) -> LedgerResult<Settings> {
        let latency_ms = self.latency().await?.as_millis() as u64;
        let next: Vec<String> =
            sqlx::query_scalar("SELECT fault FROM fault_queue ORDER BY seq").fetch_all(&self.pool).await?;
        let plan = FaultPlan {
            next: next.iter().filter_map(|f| Fault::parse(f)).collect(),
            always: Fault::parse(&self.setting("always_fault").await?),
        };
        Ok(Settings { latency_ms, faults: plan.render() })
    }

    /// Applies `update` (latency capped at [`MAX_LATENCY_MS`]; `plan` is its parsed `faults`).
    pub async fn update_settings(&self, update: &SettingsUpdate, plan: Option<&FaultPlan>) -> LedgerResult<Settings> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let set = "INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = $2";
        if let Some(ms) = update.latency_ms {
            sqlx::query(set).bind("latency_ms").bind(ms.min(MAX_LATENCY_MS).to_string()).execute(&mut *tx).await?;
        }
        if let Some(plan) = plan {
            sqlx::query("DELETE FROM fault_queue").execute(&mut *tx).await?;
            for fault in &plan.next {
                sqlx::query("INSERT INTO fault_queue (fault) VALUES ($1)")
                    .bind(fault.as_str())
                    .execute(&mut *tx)
                    .await?;
            }
            let always = plan.always.map(Fault::as_str).unwrap_or("");
            sqlx::query(set).bind("always_fault").bind(always).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        if update.latency_ms.is_some() {
            self.latency_changed.notify_waiters();
        }
        self.settings().await
    }

    /// Rows in the ledger (a cheap health figure for the startup line).
    pub async fn count(&self) -> LedgerResult<i64> {
        sqlx::query("SELECT COUNT(*) AS n FROM charges").fetch_one(&self.pool).await?.try_get("n")
    }
}

// --- the statements of a charge request's writes, on the connection of one transaction ------

/// Records `key` as processing for `request` (or takes over its stale `processing` row), or
/// reports the charge it already has; with the latency the request is to wait out.
pub(crate) async fn begin_on(
    conn: &mut SqliteConnection,
    key: &str,
    request: &ChargeRequest,
    now_ms: i64,
) -> LedgerResult<Begin> {
    let existing: Option<ChargeRow> =
        sqlx::query_as("SELECT * FROM charges WHERE idempotency_key = $1").bind(key).fetch_optional(&mut *conn).await?;
    let attempt = new_id("att");
    Ok(match existing {
        None => {
            let id = new_id("ch");
            let token = request.payment_token.as_ref();
            sqlx::query(
                "INSERT INTO charges (idempotency_key, id, amount, currency, description, status, attempt, \
                 started_at_ms, created_at_ms, payment_token, token_session, token_merchant) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11)",
            )
            .bind(key)
            .bind(&id)
            .bind(request.amount)
            .bind(&request.currency)
            .bind(&request.description)
            .bind(ChargeStatus::Processing.as_str())
            .bind(&attempt)
            .bind(now_ms)
            .bind(token.map(|t| &t.token))
            .bind(token.map(|t| &t.checkout_session_id))
            .bind(token.map(|t| &t.merchant_id))
            .execute(&mut *conn)
            .await?;
            Begin::Started { attempt, id, latency: latency(conn).await? }
        }
        Some(row)
            if row.status() == ChargeStatus::Processing
                && row.started_at_ms < now_ms - STALE_PROCESSING_MS
                && row.same_request(request) =>
        {
            sqlx::query("UPDATE charges SET attempt = $2, started_at_ms = $3 WHERE idempotency_key = $1")
                .bind(key)
                .bind(&attempt)
                .bind(now_ms)
                .execute(&mut *conn)
                .await?;
            Begin::Started { attempt, id: row.id, latency: latency(conn).await? }
        }
        Some(row) => Begin::Existing(Box::new(row)),
    })
}

/// Takes the next fault and decides the charge `attempt` began under `key` accordingly (see
/// [`Ledger::settle`]).
pub(crate) async fn settle_on(
    conn: &mut SqliteConnection,
    key: &str,
    attempt: &str,
    request: &ChargeRequest,
    now_ms: i64,
) -> LedgerResult<Settled> {
    let fault = take_fault(conn).await?;
    let (status, failure) = match fault {
        Some(Fault::ServerError) => {
            sqlx::query("DELETE FROM charges WHERE idempotency_key = $1 AND attempt = $2 AND status = $3")
                .bind(key)
                .bind(attempt)
                .bind(ChargeStatus::Processing.as_str())
                .execute(&mut *conn)
                .await?;
            return Ok(Settled::Abandoned);
        }
        Some(Fault::Decline) => (ChargeStatus::Failed, Some("card_declined")),
        Some(Fault::Timeout) | None => (ChargeStatus::Succeeded, None),
    };
    // A vault token decides what the injected faults leave to decide (vault.rs).
    let won = match (&request.payment_token, status) {
        (Some(token), ChargeStatus::Succeeded) => {
            vault::decide_with_token_on(conn, key, attempt, request, token, now_ms).await?
        }
        _ => {
            sqlx::query(
                "UPDATE charges SET status = $3, failure_code = $4 \
             WHERE idempotency_key = $1 AND attempt = $2 AND status = $5",
            )
            .bind(key)
            .bind(attempt)
            .bind(status.as_str())
            .bind(failure)
            .bind(ChargeStatus::Processing.as_str())
            .execute(&mut *conn)
            .await?
            .rows_affected()
                == 1
        }
    };
    if !won {
        return Ok(Settled::TakenOver);
    }
    let row: ChargeRow =
        sqlx::query_as("SELECT * FROM charges WHERE idempotency_key = $1").bind(key).fetch_one(&mut *conn).await?;
    Ok(Settled::Decided { row: Box::new(row), fault })
}

/// The next injected fault: the queue's first (taken), else the standing one.
async fn take_fault(conn: &mut SqliteConnection) -> LedgerResult<Option<Fault>> {
    let queued: Option<String> =
        sqlx::query_scalar("DELETE FROM fault_queue WHERE seq = (SELECT MIN(seq) FROM fault_queue) RETURNING fault")
            .fetch_optional(&mut *conn)
            .await?;
    let fault = match queued {
        Some(fault) => fault,
        None => setting(conn, "always_fault").await?,
    };
    Ok(Fault::parse(&fault))
}

async fn setting(conn: &mut SqliteConnection, name: &str) -> LedgerResult<String> {
    Ok(sqlx::query_scalar("SELECT value FROM settings WHERE name = $1")
        .bind(name)
        .fetch_optional(&mut *conn)
        .await?
        .unwrap_or_default())
}

async fn latency(conn: &mut SqliteConnection) -> LedgerResult<Duration> {
    let ms = setting(conn, "latency_ms").await?.parse::<u64>().unwrap_or(0);
    Ok(Duration::from_millis(ms.min(MAX_LATENCY_MS)))
}
