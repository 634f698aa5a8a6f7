//! Agent platforms' checkout sessions (the `acp_checkout_sessions` table, issue 25): a session a
//! platform opened with us (through the server's ACP adapter), owned by that platform; what it
//! holds is the adapter's JSON (`state`), which the store never reads. A write moves the
//! request's idempotency key with it (one transaction, fenced), so a stored answer and the
//! session it describes never disagree; a request without a key writes the session alone.

use super::dialect::WriteLock;
use super::keys::{Fence, Fenced, KeyMove, Scope, Write};
use super::rows::PlatformSessionRow;
use super::tx::Conn;
use super::{Store, StoreResult, sql};

/// Inserts or rewrites `session` on `conn`; the rows written (0: another platform owns the id).
async fn put_session(conn: Conn<'_>, session: &PlatformSessionRow) -> StoreResult<u64> {
    on_conn!(conn, |c| {
        Ok(sqlx::query(sql::PUT_ACP_SESSION)
            .bind(&session.id)
            .bind(&session.platform)
            .bind(&session.status)
            .bind(&session.state)
            .bind(session.created_at_ms)
            .bind(session.updated_at_ms)
            .bind(session.expires_at_ms)
            .execute(&mut *c)
            .await?
            .rows_affected())
    })
}

impl Store {
    /// The session `id` if `platform` owns it (another platform's session is not found).
    #[tracing::instrument(name = "store.platform_session", skip_all, fields(otel.kind = "client", db.operation.name = "platform_session"))]
    pub async fn platform_session(&self, id: &str, platform: &str) -> StoreResult<Option<PlatformSessionRow>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_as(sql::ACP_SESSION).bind(id).bind(platform).fetch_optional(pool).await?)
        })
    }

    /// In one transaction, if the fence holds: inserts or rewrites the session and finishes the
    /// key with `response`.
    #[tracing::instrument(name = "store.put_platform_session_and_finish", skip_all, fields(otel.kind = "client", db.operation.name = "put_platform_session_and_finish"))]
    pub async fn put_platform_session_and_finish(
        &self,
        fence: &Fence,
        session: &PlatformSessionRow,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<Fenced> {
        self.write_platform_session(fence, session, KeyMove::Finish { response }, now_ms).await
    }

    /// In one transaction, if the fence holds: inserts or rewrites the session; the key stays
    /// where it is (a complete records what it is about to pay for, then pays).
    #[tracing::instrument(name = "store.put_platform_session", skip_all, fields(otel.kind = "client", db.operation.name = "put_platform_session"))]
    pub async fn put_platform_session(
        &self,
        fence: &Fence,
        session: &PlatformSessionRow,
        now_ms: i64,
    ) -> StoreResult<Fenced> {
        self.write_platform_session(fence, session, KeyMove::Hold, now_ms).await
    }

    async fn write_platform_session(
        &self,
        fence: &Fence,
        session: &PlatformSessionRow,
        key_move: KeyMove<'_>,
        now_ms: i64,
    ) -> StoreResult<Fenced> {
        self.fenced(WriteLock::None, fence, key_move, now_ms, async |tx| {
            owned(put_session(tx.conn(), session).await?, session)?;
            Ok(Write::Commit(()))
        })
        .await
    }

    /// Whether someone other than `ours` may be charging `order_id` at `now_ms`: its charging
    /// window is open, or another key pointing at it is leased.
    #[tracing::instrument(name = "store.order_in_flight", skip_all, fields(otel.kind = "client", db.operation.name = "order_in_flight"))]
    pub async fn order_in_flight(&self, order_id: &str, ours: &Scope, now_ms: i64) -> StoreResult<bool> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_scalar::<_, i64>(sql::ORDER_IN_FLIGHT)
                .bind(order_id)
                .bind(now_ms)
                .bind(&ours.subject)
                .bind(ours.tool)
                .bind(&ours.key)
                .fetch_one(pool)
                .await?
                > 0)
        })
    }

    /// Inserts or rewrites the session with no idempotency key to move: an MCP update or cancel
    /// sent without `meta.idempotency_key` (docs/acp.md §7), where the later write wins.
    #[tracing::instrument(name = "store.put_platform_session_unkeyed", skip_all, fields(otel.kind = "client", db.operation.name = "put_platform_session_unkeyed"))]
    pub async fn put_platform_session_unkeyed(&self, session: &PlatformSessionRow) -> StoreResult<()> {
        owned(put_session(self.acquire().await?.conn(), session).await?, session)
    }

    /// Deletes sessions that expired before `expired_before_ms` (with their personal data);
    /// returns how many.
    #[tracing::instrument(name = "store.prune_platform_sessions", skip_all, fields(otel.kind = "client", db.operation.name = "prune_platform_sessions"))]
    pub async fn prune_platform_sessions(&self, expired_before_ms: i64) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::PRUNE_ACP_SESSIONS).bind(expired_before_ms).execute(pool).await?.rows_affected())
        })
    }
}

/// The upsert wrote nothing when the id is another platform's session.
fn owned(written: u64, session: &PlatformSessionRow) -> StoreResult<()> {
    if written == 1 {
        Ok(())
    } else {
        Err(super::StoreError::Inconsistent(format!("ACP session {} belongs to another platform", session.id)))
    }
}
