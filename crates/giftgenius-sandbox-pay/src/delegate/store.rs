//! The idempotency keys of `POST /agentic_commerce/delegate_payment` (the delegate-payment RFC
//! §5), in the provider's database (`acp_delegate_requests`), scoped by who asked.
//!
//! A request first [claims](Ledger::claim_delegate) its key: a new key is recorded as running
//! (with the request's `attempt`); the same key with the same body either replays the stored
//! answer or, while the first request still runs, is told so; another body is a conflict. Then
//! the request [finishes](Ledger::finish_delegate), storing its answer, and its token when it
//! made one, in one transaction, only if its attempt still owns the key; or, on a 5xx, it
//! [releases](Ledger::release_delegate) the key, storing nothing. A running row older than
//! [`STALE_PROCESSING_MS`] was left by a process that died mid-request (a live one finishes
//! within the latency, capped at `MAX_LATENCY_MS`): the next request with that body takes it
//! over.

use crate::ledger::{Ledger, LedgerResult, STALE_PROCESSING_MS};
use crate::vault::{self, NewVaultToken};

/// What a request may do with its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The key is this request's to answer, as `attempt`.
    Fresh { attempt: String },
    /// The key already has this answer for this body: replay it.
    Replay { status: u16, body: String },
    /// The key was used with another body.
    Conflict,
    /// The first request with this key and body is still running.
    InFlight,
}

#[derive(sqlx::FromRow)]
struct Row {
    fingerprint: String,
    started_at_ms: i64,
    status: Option<i64>,
    response: Option<String>,
}

fn new_attempt() -> String {
    format!("att_{}", uuid::Uuid::new_v4().simple())
}

impl Ledger {
    /// Claims `key` for a request with body `fingerprint` from `identity`.
    pub async fn claim_delegate(
        &self,
        identity: &str,
        key: &str,
        fingerprint: &str,
        now_ms: i64,
    ) -> LedgerResult<Claim> {
        let mut tx = self.pool().begin_with("BEGIN IMMEDIATE").await?;
        let existing: Option<Row> = sqlx::query_as(
            "SELECT fingerprint, started_at_ms, status, response FROM acp_delegate_requests \
             WHERE identity = $1 AND idempotency_key = $2",
        )
        .bind(identity)
        .bind(key)
        .fetch_optional(&mut *tx)
        .await?;
        let attempt = new_attempt();
        let claim = match existing {
            None => {
                sqlx::query(
                    "INSERT INTO acp_delegate_requests (identity, idempotency_key, fingerprint, attempt, started_at_ms) \
                     VALUES ($1, $2, $3, $4, $5)",
                )
                .bind(identity)
                .bind(key)
                .bind(fingerprint)
                .bind(&attempt)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
                Claim::Fresh { attempt }
            }
            Some(row) if row.fingerprint != fingerprint => Claim::Conflict,
            Some(Row { status: Some(status), response: Some(body), .. }) => {
                Claim::Replay { status: u16::try_from(status).unwrap_or(500), body }
            }
            Some(row) if row.started_at_ms < now_ms - STALE_PROCESSING_MS => {
                sqlx::query(
                    "UPDATE acp_delegate_requests SET attempt = $3, started_at_ms = $4 \
                     WHERE identity = $1 AND idempotency_key = $2",
                )
                .bind(identity)
                .bind(key)
                .bind(&attempt)
                .bind(now_ms)
                .execute(&mut *tx)
                .await?;
                Claim::Fresh { attempt }
            }
            Some(_) => Claim::InFlight,
        };
        tx.commit().await?;
        Ok(claim)
    }

    /// Stores the answer (`status`, `body`) for `key`, and `token` when the request made one,
    /// in one transaction, if `attempt` still owns the key. False if it was taken over (nothing
    /// stored).
    pub async fn finish_delegate(
        &self,
        identity: &str,
        key: &str,
        attempt: &str,
        status: u16,
        body: &str,
        token: Option<&NewVaultToken>,
    ) -> LedgerResult<bool> {
        let mut tx = self.pool().begin_with("BEGIN IMMEDIATE").await?;
        let updated = sqlx::query(
            "UPDATE acp_delegate_requests SET status = $4, response = $5 \
             WHERE identity = $1 AND idempotency_key = $2 AND attempt = $3 AND status IS NULL",
        )
        .bind(identity)
        .bind(key)
        .bind(attempt)
        .bind(i64::from(status))
        .bind(body)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        if updated != 1 {
            tx.rollback().await?;
            return Ok(false);
        }
        if let Some(token) = token {
            vault::insert(&mut tx, token).await?;
        }
        tx.commit().await?;
        Ok(true)
    }

    /// Forgets the running request `attempt` made under `key` (it failed with a 5xx, which is
    /// never stored): a retry is a fresh request.
    pub async fn release_delegate(&self, identity: &str, key: &str, attempt: &str) -> LedgerResult<()> {
        sqlx::query(
            "DELETE FROM acp_delegate_requests \
             WHERE identity = $1 AND idempotency_key = $2 AND attempt = $3 AND status IS NULL",
        )
        .bind(identity)
        .bind(key)
        .bind(attempt)
        .execute(self.pool())
        .await?;
        Ok(())
    }
}
