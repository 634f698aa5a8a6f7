//! Checkout sessions: the seed's one-step hosted checkout (`create_checkout_session`), one
//! session per idempotency key, shown on our own checkout page until it expires.

use super::dialect::WriteLock;
use super::keys::{Fence, Fenced, KeyMove, Write};
use super::rows::CheckoutRow;
use super::{Store, StoreResult, sql};

impl Store {
    /// In one transaction, if the fence holds: insert the checkout session and finish the key
    /// with `response` (a stale holder inserts no second session for the key).
    #[tracing::instrument(name = "store.create_checkout_and_finish", skip_all, fields(otel.kind = "client", db.operation.name = "create_checkout_and_finish"))]
    pub async fn create_checkout_and_finish(
        &self,
        fence: &Fence,
        session: &CheckoutRow,
        response: &str,
        now_ms: i64,
    ) -> StoreResult<Fenced> {
        self.fenced(WriteLock::None, fence, KeyMove::Finish { response }, now_ms, async |tx| {
            on_conn!(tx.conn(), |c| Ok({
                sqlx::query(sql::INSERT_CHECKOUT)
                    .bind(&session.id)
                    .bind(&session.subject)
                    .bind(&session.gift_id)
                    .bind(session.currency)
                    .bind(session.amount_minor)
                    .bind(session.created_at_ms)
                    .bind(session.expires_at_ms)
                    .execute(&mut *c)
                    .await?;
                Write::Commit(())
            }))
        })
        .await
    }

    /// Deletes checkout sessions that expired before `expired_before_ms`; returns how many.
    #[tracing::instrument(name = "store.prune_checkout_sessions", skip_all, fields(otel.kind = "client", db.operation.name = "prune_checkout_sessions"))]
    pub async fn prune_checkout_sessions(&self, expired_before_ms: i64) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::PRUNE_CHECKOUTS).bind(expired_before_ms).execute(pool).await?.rows_affected())
        })
    }

    #[tracing::instrument(name = "store.checkout_session", skip_all, fields(otel.kind = "client", db.operation.name = "checkout_session"))]
    pub async fn checkout_session(&self, id: &str) -> StoreResult<Option<CheckoutRow>> {
        on_pool!(self, |pool| Ok(sqlx::query_as(sql::CHECKOUT).bind(id).fetch_optional(pool).await?))
    }
}
