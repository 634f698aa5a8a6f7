//! What GiftGenius counts for Prometheus, served at `/metrics` (`http/metrics.rs`) in the text
//! exposition format. One [`Metrics`] per application (tests run many in one process), built
//! at startup with every metric registered; the services hold clones of the handles they feed.
//!
//! The metrics, with their labels (every label value comes from a closed set in code: no ids,
//! no subjects, no free text):
//!
//! | metric | type | labels | fed by |
//! |---|---|---|---|
//! | `mcp_server_operation_duration_seconds` | histogram | `server`, `method`, `tool`, `outcome` | `mcp::GiftGenius` and `acp::mcp::AcpBinding` (`mcp.rs`) |
//! | `giftgenius_tool_errors_total` | counter | `tool`, `code` | `mcp::GiftGenius` (`mcp.rs`) |
//! | `giftgenius_charges_total`, `giftgenius_refunds_total` | counter | `outcome` | `checkout::payments` (`payments.rs`) |
//! | `giftgenius_reconcile_passes_total` | counter | `result` | `checkout::reconcile` (`reconcile.rs`) |
//! | `giftgenius_reconcile_orders_total` | counter | `outcome` | the same |
//! | `giftgenius_reconcile_last_success_timestamp_seconds`, `…_interval_seconds`, `…_window_seconds` | gauge | | the same, and the flags |
//! | `giftgenius_pending_orders`, `giftgenius_pending_order_oldest_age_seconds` | gauge | | the database, at each scrape (`readings.rs`) |
//! | `giftgenius_idempotency_keys_total` | counter | `tool`, `outcome` | `idempotency` (its claim, for the tools and ACP alike) |
//! | `giftgenius_rate_limited_total` | counter | | `web::rate_limit` (`refusals.rs`) |
//! | `giftgenius_auth_refusals_total` | counter | `endpoint`, `reason` | `auth::middleware`, `acp`, `/metrics` itself |
//! | `giftgenius_catalog_gifts`, `giftgenius_catalog_reload_failures_total` | gauge, counter | | the live catalog, at each scrape |
//! | `giftgenius_open_connections` | gauge | | `http::serve` |
//! | `giftgenius_outbox_backlog`, `giftgenius_outbox_oldest_age_seconds` | gauge | | the order event outbox, once wired ([`Readings::wire_outbox`], `outbox.rs`) |
//! | `giftgenius_feed_backlog`, `giftgenius_feed_oldest_age_seconds`, `giftgenius_feed_dead` | gauge | | the feed's pushes, once wired ([`Readings::wire_feed`]: a server with feed receivers) |
//!
//! The hot path (a tool call) touches atomics only: histogram and counter handles are looked up
//! once per label combination and kept (`mcp.rs`).

mod mcp;
mod outbox;
mod readings;
mod reconcile;
mod refusals;

use std::sync::Arc;

use giftgenius_pay_api::token::{Secret, SecretKind};
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

pub use giftgenius_commerce::idempotency::{IdempotencyMetrics, KeyOutcome};
pub use giftgenius_commerce::payments::{ChargeOutcome, PaymentMetrics, RefundOutcome};
pub use mcp::{CallOutcome, McpMethod, McpMetrics, McpServer};
pub use outbox::{Backlog, OutboxBacklog, StoredBacklog};
pub use readings::{PendingOrders, Readings};
pub use reconcile::{ReconcileMetrics, Settled as ReconcileOutcome};
pub use refusals::{AuthEndpoint, AuthRefusal, RefusalMetrics};

use giftgenius_catalog::live::LiveCatalog;

pub(crate) use giftgenius_commerce::label_values;

/// Marks the scrape token (its `Debug` hides the value, as every secret's does).
#[derive(Debug, Clone, Copy)]
pub enum Scrape {}

impl SecretKind for Scrape {
    const NAME: &'static str = "MetricsToken";
}

/// `--metrics-token-file`'s token: read like the provider's secrets (first line, at least 32
/// printable characters), compared in constant time.
pub type MetricsToken = Secret<Scrape>;

/// Every metric of one application, and the registry that encodes them.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    pub mcp: McpMetrics,
    pub payments: PaymentMetrics,
    pub reconcile: ReconcileMetrics,
    pub idempotency: IdempotencyMetrics,
    pub refusals: RefusalMetrics,
    /// Connections the accept loop holds open (`http::serve`).
    pub open_connections: Gauge,
    /// What is read at each scrape: the catalog, the pending orders, the outbox.
    pub readings: Arc<Readings>,
}

impl Metrics {
    /// Every metric registered, the catalog's read at each scrape.
    pub fn new(catalog: Arc<LiveCatalog>) -> Self {
        let mut registry = Registry::default();
        let mcp = McpMetrics::default();
        mcp.register(&mut registry);
        let payments = PaymentMetrics::default();
        payments.register(&mut registry);
        let reconcile = ReconcileMetrics::default();
        reconcile.register(&mut registry);
        let idempotency = IdempotencyMetrics::default();
        idempotency.register(&mut registry);
        let refusals = RefusalMetrics::default();
        refusals.register(&mut registry);
        let open_connections = Gauge::default();
        registry.register(
            "giftgenius_open_connections",
            "HTTP connections open now (the accept loop's count)",
            open_connections.clone(),
        );
        let readings = Arc::new(Readings::new(catalog));
        registry.register_collector(Box::new(readings.clone()));
        Self { registry, mcp, payments, reconcile, idempotency, refusals, open_connections, readings }
    }

    /// The Prometheus text exposition (format 0.0.4) of every metric as it is now.
    pub fn encode(&self) -> String {
        let mut text = String::with_capacity(16 * 1024);
        // Writing into a String cannot fail; an encoder error would be a bug in a label value.
        if let Err(e) = prometheus_client::encoding::prometheus_text::encode(&mut text, &self.registry) {
            tracing::error!(error = %e, "encoding the metrics failed");
        }
        text
    }
}

/// The `Content-Type` of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;
