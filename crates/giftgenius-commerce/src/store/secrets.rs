//! Secrets every replica shares (in local mode, the confirmation tokens' key): created by whichever
//! replica asks first, read by the others.

use super::{Store, StoreResult, sql};

impl Store {
    /// A named secret, created with `generated` on first use and shared by every replica.
    #[tracing::instrument(name = "store.secret", skip_all, fields(otel.kind = "client", db.operation.name = "secret"))]
    pub async fn secret(&self, name: &str, generated: String) -> StoreResult<String> {
        on_pool!(self, |pool| {
            sqlx::query(sql::INSERT_SECRET).bind(name).bind(&generated).execute(pool).await?;
            Ok(sqlx::query_scalar(sql::SECRET).bind(name).fetch_one(pool).await?)
        })
    }
}
