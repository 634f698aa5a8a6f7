//! Accounts at the payment provider: the Stripe Customer of each subject (`payments/stripe/`
//! creates it on the first need, delete-my-data deletes it), and the Stripe webhook events
//! applied (by event id: a replay changes nothing). The first id written for a subject is the one kept, so two
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

    /// Forgets `subject`'s Stripe Customer (deleted at Stripe: delete-my-data).
    #[tracing::instrument(name = "store.forget_stripe_customer", skip_all, fields(otel.kind = "client", db.operation.name = "forget_stripe_customer"))]
    pub async fn forget_stripe_customer(&self, subject: &str) -> StoreResult<()> {
        on_pool!(self, |pool| {
            sqlx::query(sql::DELETE_STRIPE_CUSTOMER).bind(subject).execute(pool).await?;
            Ok(())
        })
    }

    /// Records `name` (the name or email its token carried) as what `subject` signed in with.
    #[tracing::instrument(name = "store.keep_account_name", skip_all, fields(otel.kind = "client", db.operation.name = "keep_account_name"))]
    pub async fn keep_account_name(&self, subject: &str, name: &str, now_ms: i64) -> StoreResult<()> {
        on_pool!(self, |pool| {
            sqlx::query(sql::UPSERT_ACCOUNT_NAME).bind(subject).bind(name).bind(now_ms).execute(pool).await?;
            Ok(())
        })
    }

    /// The name recorded for the account whose Stripe Customer is `customer`, if any.
    #[tracing::instrument(name = "store.account_name_of_customer", skip_all, fields(otel.kind = "client", db.operation.name = "account_name_of_customer"))]
    pub async fn account_name_of_customer(&self, customer: &str) -> StoreResult<Option<String>> {
        on_pool!(self, |pool| {
            Ok(sqlx::query_scalar(sql::ACCOUNT_NAME_OF_CUSTOMER).bind(customer).fetch_optional(pool).await?)
        })
    }

    /// What Stripe event `id` did when it was applied, if it was (a replay finds it).
    #[tracing::instrument(name = "store.stripe_event", skip_all, fields(otel.kind = "client", db.operation.name = "stripe_event"))]
    pub async fn stripe_event(&self, id: &str) -> StoreResult<Option<String>> {
        on_pool!(self, |pool| Ok(sqlx::query_scalar(sql::STRIPE_EVENT_OUTCOME).bind(id).fetch_optional(pool).await?))
    }

    /// Records Stripe event `id` as applied with `outcome`; false if it was recorded already.
    #[tracing::instrument(name = "store.record_stripe_event", skip_all, fields(otel.kind = "client", db.operation.name = "record_stripe_event"))]
    pub async fn record_stripe_event(&self, id: &str, kind: &str, outcome: &str, now_ms: i64) -> StoreResult<bool> {
        on_pool!(self, |pool| {
            let inserted = sqlx::query(sql::INSERT_STRIPE_EVENT)
                .bind(id)
                .bind(kind)
                .bind(now_ms)
                .bind(outcome)
                .execute(pool)
                .await?
                .rows_affected();
            Ok(inserted == 1)
        })
    }

    /// How many Stripe events were recorded (tests).
    pub async fn stripe_event_count(&self) -> StoreResult<i64> {
        on_pool!(self, |pool| Ok(sqlx::query_scalar(sql::STRIPE_EVENT_COUNT).fetch_one(pool).await?))
    }
}
