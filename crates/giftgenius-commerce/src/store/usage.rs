//! Usage counters: how many drafts, checkout links and suggestions an account used in a
//! period, counted atomically so that replicas share one limit.

use super::rows::Usage;
use super::{Store, StoreResult, sql};

impl Store {
    /// Atomically counts one `usage` for `subject` in `period` unless `limit` (≥ 1) are already
    /// counted. True if it was counted.
    #[tracing::instrument(name = "store.take_usage", skip_all, fields(otel.kind = "client", db.operation.name = "take_usage"))]
    pub async fn take_usage(&self, subject: &str, usage: Usage, period: i64, limit: i64) -> StoreResult<bool> {
        on_pool!(self, |pool| {
            let counted: Option<i64> = sqlx::query_scalar(sql::TAKE_USAGE)
                .bind(subject)
                .bind(usage)
                .bind(period)
                .bind(limit)
                .fetch_optional(pool)
                .await?;
            Ok(counted.is_some())
        })
    }

    /// Adds `delta` counted uses of `usage` (a batch from one replica); returns the total.
    #[tracing::instrument(name = "store.add_usage", skip_all, fields(otel.kind = "client", db.operation.name = "add_usage"))]
    pub async fn add_usage(&self, subject: &str, usage: Usage, period: i64, delta: i64) -> StoreResult<i64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_scalar(sql::ADD_USAGE)
                .bind(subject)
                .bind(usage)
                .bind(period)
                .bind(delta)
                .fetch_one(pool)
                .await?)
        })
    }

    /// Un-counts one `usage` (the call delivered nothing).
    #[tracing::instrument(name = "store.give_back_usage", skip_all, fields(otel.kind = "client", db.operation.name = "give_back_usage"))]
    pub async fn give_back_usage(&self, subject: &str, usage: Usage, period: i64) -> StoreResult<()> {
        on_pool!(self, |pool| {
            sqlx::query(sql::GIVE_BACK_USAGE).bind(subject).bind(usage).bind(period).execute(pool).await?;
            Ok(())
        })
    }

    /// Deletes the counters of `usage` for periods before `before_period`; returns how many.
    #[tracing::instrument(name = "store.prune_usage", skip_all, fields(otel.kind = "client", db.operation.name = "prune_usage"))]
    pub async fn prune_usage(&self, usage: Usage, before_period: i64) -> StoreResult<u64> {
        on_pool!(self, |pool| {
            Ok(sqlx::query(sql::PRUNE_USAGE).bind(usage).bind(before_period).execute(pool).await?.rows_affected())
        })
    }
}
