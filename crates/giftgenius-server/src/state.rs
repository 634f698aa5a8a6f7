//! Everything a request may need, built once at startup from the configuration and shared by
//! every MCP session and HTTP route.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use giftgenius_pay_api::token::AdminToken;

use crate::acp::platforms::Platforms;
use crate::auth::AuthMode;
use crate::checkout::Checkout;
use crate::checkout::confirmation::ConfirmationKeys;
use crate::checkout::reconcile::Reconciler;
use crate::checkout::sandbox::{SandboxProcess, db_beside};
use crate::config::{Config, PaymentsKind};
use crate::limits::Limits;
use crate::metrics::Metrics;
use crate::metrics::MetricsToken;
use crate::operator::routes::OperatorToken;
use crate::permalink::Permalinks;
use crate::suggest::Suggester;
use crate::widget_resource::{WidgetResource, origin_of};
use giftgenius_catalog::cache::FetchPolicy;
use giftgenius_catalog::live::{CatalogSpec, LiveCatalog};
use giftgenius_catalog::meaning::Meaning;
use giftgenius_catalog::sources::Sources;
use giftgenius_commerce::clock::Clock;
use giftgenius_commerce::failpoints::Failpoints;
use giftgenius_commerce::idempotency::Idempotency;
use giftgenius_commerce::outbox::delivery::Poster;
use giftgenius_commerce::outbox::schedule::RetryPolicy;
use giftgenius_commerce::outbox::{Dispatcher, OrderEvents, Receivers};
use giftgenius_commerce::payments::sandbox::SandboxClient;
use giftgenius_commerce::payments::{Payments, check_lease};
use giftgenius_commerce::store::Store;

#[derive(Debug)]
pub struct AppState {
    /// Who callers are: verified accounts, the local user(s), or one single user.
    pub auth: AuthMode,
    /// Our RFC 9728 document's URL (verified mode): where a host learns how to sign in.
    pub resource_metadata: Option<String>,
    /// The built-in merchants and `--catalog` files: what is suggested and sold.
    pub catalog: Arc<LiveCatalog>,
    pub widget: WidgetResource,
    /// Base URL clients reach us at (no trailing slash).
    pub public_url: String,
    pub store: Store,
    pub checkout: Checkout,
    pub suggester: Suggester,
    /// Gift photos fetched from the catalog's URLs, resized and kept (`/images/{id}.jpg`).
    pub photos: crate::photos::Photos,
    pub limits: Limits,
    pub failpoints: Failpoints,
    /// Settles orders left pending (on a schedule, see `startup.rs`).
    pub reconciler: Reconciler,
    /// The ACP merchant (`/acp/…`), when `--acp-platforms` names the platforms allowed to call it.
    pub acp: Option<Arc<crate::acp::Acp>>,
    /// Posts order events from the outbox (on a schedule, see `startup.rs`).
    pub outbox: Arc<Dispatcher>,
    /// Pushes the product feed's changes to `--feed-receivers` (on a schedule, see
    /// `startup.rs`); none without receivers.
    pub feed: Option<Arc<crate::feed::push::FeedPusher>>,
    /// The sandbox payment provider this server started (no `--payments-url`); it stops when
    /// the state is dropped or the process ends.
    pub sandbox: Option<SandboxProcess>,
    /// Whether a local catalog (built-in or `--catalog` files) is served: `/readyz` then needs
    /// it to hold gifts.
    pub local_catalog: bool,
    /// Draining state and the requests in flight (`http::health`, `startup.rs`).
    pub drain: crate::web::drain::Drain,
    /// What `/metrics` shows (`crate::metrics`); the services above feed clones of its handles.
    pub metrics: Arc<Metrics>,
    /// `--metrics-token-file`: the bearer token `/metrics` asks for, if any.
    pub metrics_token: Option<MetricsToken>,
    /// The operator's API (`/operator/orders/…`) and its token, with `--operator-token-file`.
    pub operator: Option<(Arc<crate::operator::Operator>, OperatorToken)>,
    /// `POST /webhooks/stripe`, with `--payments stripe` and `--stripe-webhook-secret-file`.
    pub stripe_webhooks: Option<Arc<crate::checkout::stripe_webhook::StripeWebhooks>>,
}

/// The payment provider's client: Stripe's (`--payments stripe`), else the sandbox's at
/// `--payments-url`, or for a sandbox provider started now beside the database.
pub async fn connect_payments(
    config: &Config,
    store: &Store,
    clock: &Clock,
) -> anyhow::Result<(Payments, Option<SandboxProcess>)> {
    let timeout = Duration::from_millis(config.payments_timeout_ms);
    if config.payments == PaymentsKind::Stripe {
        return connect_stripe(config, store, clock, timeout).map(|payments| (payments, None));
    }
    if let Some(url) = &config.payments_url {
        if config.sandbox_latency_ms.is_some() || config.sandbox_faults.is_some() {
            anyhow::bail!(
                "--sandbox-latency-ms and --sandbox-faults set up the sandbox provider this server starts itself; \
                 with --payments-url set them on that provider (its --latency-ms / --faults, or POST /admin/settings)"
            );
        }
        let Some(file) = &config.payments_token_file else {
            anyhow::bail!(
                "--payments-url needs --payments-token-file: the file holding the provider's secret (the sandbox \
                 provider writes it beside its database, e.g. giftgenius-sandbox-pay.token; its --admin-token-file)"
            );
        };
        let token = AdminToken::read(file).context("--payments-token-file")?;
        return Ok((Payments::sandbox(SandboxClient::new(url, timeout, &token)?), None));
    }
    if config.payments_token_file.is_some() {
        anyhow::bail!(
            "--payments-token-file goes with --payments-url; the sandbox provider this server starts gets a fresh \
             secret of its own"
        );
    }
    let sandbox = SandboxProcess::start(
        &db_beside(&config.db),
        config.sandbox_latency_ms,
        config.sandbox_faults.as_deref(),
        config.log_format,
    )
    .await?;
    tracing::info!(url = sandbox.url, db = %sandbox.db.display(), "started the SANDBOX payment provider");
    Ok((Payments::sandbox(SandboxClient::new(&sandbox.url, timeout, &sandbox.token)?), Some(sandbox)))
}

/// Stripe's client, from the --stripe-* flags (the sandbox's flags make no sense beside it).
fn connect_stripe(config: &Config, store: &Store, clock: &Clock, timeout: Duration) -> anyhow::Result<Payments> {
    if config.payments_url.is_some() || config.payments_token_file.is_some() {
        anyhow::bail!(
            "--payments-url and --payments-token-file name the sandbox provider; --payments stripe uses --stripe-api-base and --stripe-secret-key-file"
        );
    }
    let Some(file) = &config.stripe_secret_key_file else {
        anyhow::bail!(
            "--payments stripe needs --stripe-secret-key-file: the file holding the Stripe secret key (sk_…)"
        );
    };
    let key = giftgenius_commerce::payments::stripe::read_secret_key(file).context("--stripe-secret-key-file")?;
    let client = giftgenius_commerce::payments::stripe::StripeClient::new(
        &config.stripe_api_base,
        &key,
        timeout,
        store.clone(),
        clock.clone(),
    )?;
    let client = client.with_publishable_key(config.stripe_publishable_key.clone());
    tracing::info!(api = %crate::telemetry::url_for_log(&config.stripe_api_base), "charging through Stripe");
    Ok(Payments::stripe(client, timeout))
}

/// The hosted card page, when Stripe charges: its links under the key every replica shares
/// (`card_link`), the publishable key (required with `--payments stripe`), Stripe.js's URL.
async fn card_page(
    config: &Config,
    store: &Store,
    public_url: &str,
) -> anyhow::Result<Option<Arc<crate::checkout::cards::CardPage>>> {
    if config.payments != PaymentsKind::Stripe {
        return Ok(None);
    }
    let Some(publishable_key) = config.stripe_publishable_key.clone().filter(|k| k.starts_with("pk_")) else {
        anyhow::bail!(
            "--payments stripe needs --stripe-publishable-key (pk_live_… or pk_test_…): the hosted card page gives it to \
             Stripe.js"
        );
    };
    let js = url::Url::parse(&config.stripe_js_url).context("--stripe-js-url is not a URL")?;
    anyhow::ensure!(
        matches!(js.scheme(), "https" | "http") && js.host_str().is_some(),
        "--stripe-js-url must be an http(s) URL, e.g. https://js.stripe.com/v3/"
    );
    let generated = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    let key = store.secret("card_link", generated).await?;
    Ok(Some(Arc::new(crate::checkout::cards::CardPage {
        links: crate::checkout::card_links::CardLinks::new(key.as_bytes(), public_url),
        publishable_key,
        js_url: config.stripe_js_url.clone(),
    })))
}

/// Every order's status page link, under the key every replica shares (`order_permalink`).
/// The feed's pusher, when `--feed-receivers` names any receiver.
fn feed_pusher(
    config: &Config,
    store: &Store,
    catalog: &Arc<LiveCatalog>,
    local_catalog: bool,
    clock: &Clock,
    public_url: &str,
) -> anyhow::Result<Option<Arc<crate::feed::push::FeedPusher>>> {
    use crate::feed::{push, receivers::FeedReceivers};
    let receivers = FeedReceivers::from_config(config.feed_receivers.as_deref())?;
    if receivers.is_empty() {
        return Ok(None);
    }
    anyhow::ensure!(
        local_catalog,
        "--feed-receivers: the feed lists the local catalog (the built-in gifts or --catalog files), and this \
         server has none"
    );
    let pusher = push::FeedPusher::new(push::PusherParts {
        store: store.clone(),
        catalog: catalog.clone(),
        receivers: Arc::new(receivers),
        clock: clock.clone(),
        public_url: public_url.to_string(),
        policy: RetryPolicy::new(config.webhook_retry_horizon).with_base(config.webhook_retry_base),
        full_sweep_every: Duration::from_secs(config.feed_full_sweep_secs),
        timeout: Duration::from_millis(config.webhook_timeout_ms),
    })?;
    Ok(Some(Arc::new(pusher)))
}

pub async fn permalinks(store: &Store, public_url: &str) -> anyhow::Result<Arc<Permalinks>> {
    let generated = format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple());
    Ok(Arc::new(Permalinks::new(store.secret("order_permalink", generated).await?.as_bytes(), public_url)))
}

/// Who receives order events (`--order-webhook-url`, the platforms' webhooks) and what builds
/// them: for the server and for `giftgenius-server reconcile`, which settles orders too.
pub async fn order_events(
    config: &Config,
    store: &Store,
    platforms: Option<&Platforms>,
    permalinks: Arc<Permalinks>,
    public_url: &str,
) -> anyhow::Result<Arc<OrderEvents>> {
    let receivers = Receivers::from_config(
        config.order_webhook_url.as_deref(),
        config.order_webhook_secret_file.as_deref(),
        platforms.into_iter().flat_map(Platforms::webhooks),
    )?;
    let bodies = crate::acp::events::AcpEventBodies {
        store: store.clone(),
        permalinks,
        public_url: public_url.trim_end_matches('/').to_string(),
    };
    Ok(Arc::new(OrderEvents { receivers: Arc::new(receivers), bodies: Arc::new(bodies) }))
}

/// The embedding model (`--model-dir`), loaded off the async workers: a missing or damaged one
/// stops the start with what to do, unless `--without-model` asked for word-only ranking.
async fn load_meaning(config: &Config) -> anyhow::Result<Option<Arc<Meaning>>> {
    if config.without_model {
        tracing::warn!(
            "--without-model: suggestions are ranked by the catalog's words only; interests said in other words \
             than the catalog's find less"
        );
        return Ok(None);
    }
    let dir = match &config.model_dir {
        Some(dir) => dir.clone(),
        None => giftgenius_meaning::default_dir().map_err(|e| anyhow::anyhow!("{e}"))?,
    };
    let cache = config.embedding_cache.clone().or_else(giftgenius_catalog::meaning::default_cache_file);
    let meaning = tokio::task::spawn_blocking(move || Meaning::shared(&dir, cache)).await?.map_err(|e| {
        anyhow::anyhow!(
            "the embedding model cannot be loaded: {e}. Install it with `cargo xtask setup`, point --model-dir \
             at it, or start with --without-model to rank by words only"
        )
    })?;
    Ok(Some(meaning))
}

/// The retention settings of `config`.
pub fn retention_of(config: &Config) -> crate::checkout::privacy::Retention {
    crate::checkout::privacy::Retention {
        orders_days: config.order_retention_days,
        financial_days: config.financial_retention_days,
        refunds_days: config.refund_retention_days,
        addresses_days: config.address_retention_days,
    }
}

impl AppState {
    /// Opens the database, loads the widget and the catalog, and wires the services.
    pub async fn build(config: &Config, public_url: &str, auth: AuthMode, clock: Clock) -> anyhow::Result<Arc<Self>> {
        let origin = origin_of(public_url)?;
        let public_url = public_url.trim_end_matches('/').to_string();
        let widget =
            WidgetResource::load(&config.widget_html()?, config.widget_mime, &origin, config.widget_domain.clone())?;
        let meaning = load_meaning(config).await?;
        let spec = CatalogSpec {
            builtin: config.builtin_catalog,
            files: config.catalogs.clone(),
            bad_rows: config.catalog_bad_rows,
            meaning: meaning.clone(),
        };
        let local_catalog = spec.builtin || !spec.files.is_empty();
        let catalog = if local_catalog {
            tokio::task::spawn_blocking(move || LiveCatalog::load(spec)).await??
        } else {
            // Only HTTP catalogs: nothing local to suggest or sell.
            LiveCatalog::fixed(giftgenius_catalog::Catalog::from_gifts(Vec::new()))
        };
        let metrics = Arc::new(Metrics::new(catalog.clone()));
        let metrics_token = match &config.metrics_token_file {
            Some(path) => Some(MetricsToken::read(path).context("--metrics-token-file")?),
            None => None,
        };
        let operator_token = match &config.operator_token_file {
            Some(path) => Some(OperatorToken::read(path).context("--operator-token-file")?),
            None => None,
        };
        let store = config.open_store().await?;
        match store.durability().await {
            Ok(durability) => tracing::info!(%durability, "database opened"),
            Err(e) => tracing::warn!(error = %e, "cannot read the database's durability settings"),
        }
        metrics
            .readings
            .wire_outbox(Arc::new(crate::metrics::StoredBacklog { store: store.clone(), clock: clock.clone() }));
        let lease = Duration::from_millis(config.idempotency_lease_ms);
        check_lease(lease, Duration::from_millis(config.payments_timeout_ms)).map_err(anyhow::Error::msg)?;
        let (payments, sandbox) = connect_payments(config, &store, &clock).await?;
        let payments = Arc::new(payments.with_metrics(metrics.payments.clone()));
        let confirmation = match (&config.token_secret_file, &auth) {
            (Some(path), _) => ConfirmationKeys::from_file(path)?,
            (None, AuthMode::Local) => ConfirmationKeys::generated(
                store.secret("confirmation_token", uuid::Uuid::new_v4().simple().to_string()).await?.into_bytes(),
            ),
            (None, _) => anyhow::bail!(
                "--token-secret-file is required outside local mode (a key generated into the database is for the \
                 developer's own machine only); create one with: echo \"k1 $(openssl rand -hex 32)\" > token-secret"
            ),
        }
        .with_lifetimes(config.token_lifetimes());
        let failpoints = Failpoints::new(config.failpoints.split(',').map(|s| s.trim().to_string()));
        let limits = Limits {
            suggestion_counts: Default::default(),
            store: store.clone(),
            clock: clock.clone(),
            daily_suggestions: config.daily_suggestion_limit,
            hourly_drafts: config.hourly_draft_limit,
            hourly_checkout_sessions: config.hourly_checkout_limit,
            hourly_payment_lookups: config.hourly_payment_lookup_limit,
            hourly_sheet_payments: config.hourly_sheet_payment_limit,
        };
        let suggester = Suggester {
            sources: Sources::new(
                (config.builtin_catalog || !config.catalogs.is_empty()).then(|| catalog.clone()),
                &config.catalog_urls,
                Duration::from_millis(config.source_timeout_ms),
                Duration::from_millis(config.suggest_deadline_ms),
                FetchPolicy::new(
                    Duration::from_secs(config.catalog_cache_ttl_secs),
                    config.catalog_max_concurrent_fetches,
                ),
            )?
            .with_meaning(meaning),
            limits: limits.clone(),
            public_url: public_url.clone(),
        };
        let platforms = config.acp_platforms.as_deref().map(Platforms::load).transpose()?;
        let permalinks = permalinks(&store, &public_url).await?;
        let events = order_events(config, &store, platforms.as_ref(), permalinks.clone(), &public_url).await?;
        let outbox = Arc::new(Dispatcher {
            store: store.clone(),
            receivers: events.receivers.clone(),
            clock: clock.clone(),
            poster: Poster::new(Duration::from_millis(config.webhook_timeout_ms))?,
            policy: RetryPolicy::new(config.webhook_retry_horizon).with_base(config.webhook_retry_base),
            failpoints: failpoints.clone(),
        });
        let feed = feed_pusher(config, &store, &catalog, local_catalog, &clock, &public_url)?;
        if feed.is_some() {
            metrics.readings.wire_feed();
        }
        let reconciler = Reconciler {
            store: store.clone(),
            payments: payments.clone(),
            clock: clock.clone(),
            after: Duration::from_secs(config.reconcile_after_secs),
            events: events.clone(),
            metrics: metrics.reconcile.clone(),
        };
        metrics.reconcile.configure(
            Duration::from_secs(config.reconcile_interval_secs),
            Duration::from_secs(config.reconcile_after_secs),
        );
        // One set of keys for the tools and ACP: the same lease, retention and counts.
        let keys = Idempotency {
            store: store.clone(),
            clock: clock.clone(),
            lease,
            retention: Duration::from_secs(config.idempotency_retention_hours * 3600),
            metrics: metrics.idempotency.clone(),
        };
        let acp = match platforms {
            Some(platforms) => Some(Arc::new(crate::acp::Acp {
                store: store.clone(),
                catalog: catalog.clone(),
                clock: clock.clone(),
                platforms,
                public_url: public_url.clone(),
                session_ttl: config.acp_session_ttl,
                keys: keys.clone(),
                tax_rates: crate::acp::session::TaxRates::parse(config.acp_tax_bps.as_deref().unwrap_or(""))
                    .map_err(|e| anyhow::anyhow!("--acp-tax-bps: {e}"))?,
                merchant_id: config.acp_merchant_id.clone(),
                payments: payments.clone(),
                permalinks: permalinks.clone(),
                failpoints: failpoints.clone(),
                retention: Duration::from_secs(config.idempotency_retention_hours * 3600),
                events: events.clone(),
                metrics: metrics.clone(),
            })),
            None => None,
        };
        let checkout = Checkout {
            store: store.clone(),
            catalog: catalog.clone(),
            payments,
            idempotency: crate::checkout::idempotency::ToolKeys(keys),
            failpoints: failpoints.clone(),
            clock,
            draft_ttl: Duration::from_secs(config.draft_ttl_secs),
            public_url: public_url.clone(),
            confirmation,
            limits: limits.clone(),
            cancel_window: Duration::from_secs(config.cancel_window_secs),
            retention: retention_of(config),
            permalinks,
            events,
            merchant_id: config.acp_merchant_id.clone(),
            card_page: card_page(config, &store, &public_url).await?,
            authentication_window: Duration::from_secs(config.authentication_window_secs),
        };
        let operator = operator_token.map(|token| {
            let operator = crate::operator::Operator {
                store: store.clone(),
                payments: checkout.payments.clone(),
                events: checkout.events.clone(),
                clock: checkout.clock.clone(),
            };
            (Arc::new(operator), token)
        });
        let stripe_webhooks = match (&config.payments, &config.stripe_webhook_secret_file) {
            (crate::config::PaymentsKind::Stripe, Some(file)) => {
                let secrets =
                    crate::checkout::stripe_webhook::read_secrets(file).context("--stripe-webhook-secret-file")?;
                Some(Arc::new(crate::checkout::stripe_webhook::StripeWebhooks::new(
                    secrets,
                    config.stripe_webhook_tolerance_secs,
                    checkout.settler(),
                )))
            }
            _ => None,
        };
        let resource_metadata = matches!(auth, AuthMode::Verified { .. })
            .then(|| crate::auth::metadata::resource_metadata_url(&crate::auth::mode::resource_url(&public_url)));
        Ok(Arc::new(Self {
            auth,
            resource_metadata,
            catalog,
            feed,
            widget,
            public_url,
            store,
            checkout,
            suggester,
            photos: crate::photos::Photos::new(&config.images)?,
            limits,
            failpoints,
            reconciler,
            acp,
            outbox,
            sandbox,
            local_catalog,
            drain: Default::default(),
            metrics,
            metrics_token,
            operator,
            stripe_webhooks,
        }))
    }

    /// Deletes what has outlived its retention: idempotency keys past theirs, drafts and
    /// checkout sessions long expired, usage counters no limit reads any more; and applies the
    /// retention of orders, refunds and saved addresses (`checkout::privacy`).
    pub async fn prune(&self) {
        match self.checkout.idempotency.prune().await {
            Ok(n) if n > 0 => tracing::info!(pruned = n, "pruned expired idempotency keys"),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "pruning idempotency keys failed"),
        }
        match self.checkout.prune().await {
            Ok((0, 0)) => {}
            Ok((drafts, sessions)) => tracing::info!(drafts, sessions, "pruned expired drafts and checkout sessions"),
            Err(e) => tracing::warn!(error = %e, "pruning drafts and checkout sessions failed"),
        }
        match self.checkout.retention.apply(&self.store, self.checkout.clock.now_ms()).await {
            Ok(done) if done == giftgenius_commerce::store::Retained::default() => {}
            Ok(done) => tracing::info!(
                orders_anonymized = done.orders_anonymized,
                orders_deleted = done.orders_deleted,
                refunds_deleted = done.refunds_deleted,
                saved_addresses_deleted = done.saved_addresses_deleted,
                "applied the retention of orders, refunds and saved addresses"
            ),
            Err(e) => tracing::warn!(error = %e, "applying the retention failed"),
        }
        match self.store.prune_spent_delete_tokens(self.checkout.clock.now_ms()).await {
            Ok(0) => {}
            Ok(marks) => tracing::info!(marks, "pruned the spent marks of expired Delete my data tokens"),
            Err(e) => tracing::warn!(error = %e, "pruning spent Delete my data tokens failed"),
        }
        // Delivered events are the receiver's now: kept as long as idempotency keys (a receiver
        // dedupes by Request-Id over at least that); dead ones wait for an operator as long as
        // orders keep their personal data (the bodies hold the gift message).
        let now = self.checkout.clock.now_ms();
        let delivered_before = now.saturating_sub(self.checkout.idempotency.retention.as_millis() as i64);
        let dead_before = now.saturating_sub((self.checkout.retention.orders_days as i64).saturating_mul(86_400_000));
        match self.store.prune_order_events(delivered_before, dead_before).await {
            Ok(0) => {}
            Ok(events) => tracing::info!(events, "pruned delivered and long-dead order events"),
            Err(e) => tracing::warn!(error = %e, "pruning order events failed"),
        }
        if let Some(acp) = &self.acp {
            match acp.prune().await {
                Ok(0) => {}
                Ok(sessions) => tracing::info!(sessions, "pruned long-expired ACP checkout sessions"),
                Err(e) => tracing::warn!(error = %e, "pruning ACP checkout sessions failed"),
            }
        }
        self.limits.prune().await;
    }
}
