//! Accounts at the payment provider: the Stripe Customer of each subject (`stripe/customers.rs`
//! creates it on the first need). The first id written for a subject is the one kept, so two
//! replicas creating it at once end up charging the same Customer.

use super::{Store, StoreResult, sql};

impl Store {
    /// `subject`'s Stripe Customer id, if one was recorded.
    #[tracing::instrument(name = "store.stripe_customer", skip_all, fields(otel.kind = "client", db.operation.name = "stripe_customer"))]
    pub async fn stripe_customer(&self, subject: &str) -> StoreResult<Option<String>> {
        on_pool!(self, |pool| Ok(sqlx::query_scalar(sql::STRIPE_CUSTOMER).bind(subject).fetch_optional(pool).await?))
    }

    /// Records `customer` as `subject`'s Stripe Customer unless one is recorded already; returns
    /// the one recorded (ours, or the first writer's).
    #[tracing::instrument(name = "store.keep_stripe_customer", skip_all, fields(otel.kind = "client", db.operation.name = "keep_stripe_customer"))]
    pub async fn keep_stripe_customer(&self, subject: &str, customer: &str, now_ms: i64) -> StoreResult<String> {
        on_pool!(self, |pool| {
            sqlx::query(sql::INSERT_STRIPE_CUSTOMER).bind(subject).bind(customer).bind(now_ms).execute(pool).await?;
            Ok(sqlx::query_scalar(sql::STRIPE_CUSTOMER).bind(subject).fetch_one(pool).await?)
        })
    }
}
