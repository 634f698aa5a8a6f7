//! Saved addresses: the one recipient a person chose to keep (a checkbox on the confirm card),
//! offered for their next draft. Deleted with their data, or after the address retention.

use super::{Store, StoreResult, sql};

impl Store {
    /// Keeps `recipient` (JSON) as `subject`'s saved address (the person agreed).
    #[tracing::instrument(name = "store.save_address", skip_all, fields(otel.kind = "client", db.operation.name = "save_address"))]
    pub async fn save_address(&self, subject: &str, recipient: &str, now_ms: i64) -> StoreResult<()> {
        on_pool!(self, |pool| {
            sqlx::query(sql::UPSERT_SAVED_ADDRESS).bind(subject).bind(recipient).bind(now_ms).execute(pool).await?;
            Ok(())
        })
    }

    /// `subject`'s saved address (JSON of a `Recipient`), if any.
    #[tracing::instrument(name = "store.saved_address", skip_all, fields(otel.kind = "client", db.operation.name = "saved_address"))]
    pub async fn saved_address(&self, subject: &str) -> StoreResult<Option<String>> {
        on_pool!(self, |pool| Ok(sqlx::query_scalar(sql::SAVED_ADDRESS).bind(subject).fetch_optional(pool).await?))
    }
}
