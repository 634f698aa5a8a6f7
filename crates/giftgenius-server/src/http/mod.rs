//! The plain HTTP routes next to `/mcp`: what the links in tool results point at.
//!
//! - `GET /healthz`, `/livez`, `/readyz`: the probes (`health.rs`).
//! - `GET /metrics`: the metrics for Prometheus, reached by address like the probes (`metrics.rs`).
//! - `GET /images/{id}.svg`: gift pictures (`images.rs`).
//! - `GET /checkout/{id}`: the hosted checkout page (`checkout_page.rs`): the sandbox's, or with
//!   Stripe a redirect to the card page of the session's account.
//! - `GET /pay/card/{capability}` (and `…/saved`, `/pay/card.js`): with Stripe, the hosted card
//!   page where a card is saved with Stripe.js (`card_page.rs`).
//! - `GET /pay/authenticate/{capability}` (and `…/done`, `/pay/authenticate.js`): with Stripe,
//!   the hosted 3-D Secure page (`authenticate_page.rs`).
//! - `GET /o/{token}`: an order's status page behind its unguessable link (`order_page.rs`).
//! - `GET /privacy`, `/terms`, `/support`: the policy pages (`policy_pages.rs`).
//! - `/acp/checkout_sessions…` and `GET /.well-known/acp.json`: the ACP merchant, only with
//!   `--acp-platforms` (`crate::acp`, each request in a server span of `traced.rs`; its MCP
//!   binding `/acp/mcp` is mounted by `startup`, as `/mcp` is).
//! - `GET /.well-known/openai-apps-challenge`: the app directory's domain check (`well_known.rs`).
//! - `/operator/orders/{id}…`: the operator's API, only with `--operator-token-file`
//!   (`crate::operator::routes`).
//! - `POST /webhooks/stripe`: Stripe's signed events, only with `--payments stripe` and
//!   `--stripe-webhook-secret-file` (`crate::checkout::stripe_webhook`).
//! - `/preview…`: the local host emulator, only with `--preview` (`preview.rs`; its chat panel's
//!   relay to a `giftgenius-chat --listen` process: `preview_chat.rs`; its payment sheet's card
//!   relay: `sheet_relay.rs`), answering only loopback
//!   host names (`local_only.rs`).
//!
//! And what guards every route, `/mcp` included ([`guarded`]): the request timeout
//! (`deadline.rs`), local mode's loopback-peer guard (`local_mode.rs`), the client's address
//! (`client_addr.rs`), the per-address rate limit (`rate_limit.rs`), and outside them CORS for
//! `--cors-origins` (`cors.rs`); and the accept loop with its header-read timeout and
//! connection caps (`serve.rs`).

pub mod authenticate_page;
pub mod card_page;
pub mod checkout_page;
/// Kept at `http::client_addr` too: the tests and fuzz targets name it there.
pub use crate::client_addr;
pub use crate::html::escape;
pub mod cors;
pub mod deadline;
pub mod gift_page;
pub mod health;
pub mod images;
pub mod local_mode;
pub mod local_only;
pub mod metrics;
pub mod order_page;
pub mod policy_pages;
pub mod preview;
pub mod preview_chat;
pub mod serve;
pub mod sheet_relay;
pub mod well_known;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::middleware::from_fn_with_state;
use axum::routing::get;
use giftgenius_types::wire::{CARD_PAGE_PATH, CHECKOUT_PATH, IMAGES_PATH};
use tokio_util::sync::CancellationToken;

use crate::auth::AuthMode;
use crate::config::Config;
use crate::state::AppState;

/// Every route but `/mcp`.
pub fn router(config: &Config, app: Arc<AppState>) -> Router {
    let acp = app.acp.clone().map(crate::acp::routes::router).unwrap_or_default();
    let operator = app
        .operator
        .clone()
        .map(|(operator, token)| crate::operator::routes::router(operator, token))
        .unwrap_or_else(crate::operator::routes::absent);
    let stripe_webhooks = crate::checkout::stripe_webhook::router(app.stripe_webhooks.clone());
    Router::new()
        .route(&format!("{IMAGES_PATH}{{file}}"), get(images::gift_image))
        .route(&format!("{CHECKOUT_PATH}{{id}}"), get(checkout_page::checkout_page))
        .route("/o/{token}", get(order_page::order_page))
        .route(&format!("{}{{id}}", crate::feed::GIFT_PAGE_PATH), get(gift_page::gift_page))
        .route(&format!("{CARD_PAGE_PATH}{{token}}"), get(card_page::card_page).post(card_page::card_confirmed))
        .route(&format!("{CARD_PAGE_PATH}{{token}}/saved"), get(card_page::card_saved))
        .route(card_page::SCRIPT_PATH, get(card_page::card_script))
        .route("/pay/authenticate/{token}", get(authenticate_page::authenticate_page))
        .route("/pay/authenticate/{token}/done", get(authenticate_page::authenticate_done))
        .route(authenticate_page::SCRIPT_PATH, get(authenticate_page::authenticate_script))
        .with_state(app.clone())
        .merge(health::router(app.clone()))
        .merge(metrics::router(app.clone()))
        .merge(policy_pages::router(config))
        .merge(well_known::router(config.apps_challenge_token.as_deref()))
        .merge(preview::router(config, app))
        .merge(acp)
        .merge(operator)
        .merge(stripe_webhooks)
}

/// `router` behind the guards every request meets, outermost first: CORS (`--cors-origins`),
/// the request timeout, local mode's loopback-peer guard (`local_mode.rs`), the client address
/// (`--trusted-proxies`), the per-address rate limit. Each is left out when its flag is 0 or
/// empty (or, the guard, outside local mode).
pub fn guarded(
    router: Router,
    config: &Config,
    app: &AppState,
    shutdown: &CancellationToken,
) -> anyhow::Result<Router> {
    let mut router = router;
    let verified = matches!(app.auth, AuthMode::Verified { .. });
    let refusals = app.metrics.refusals.clone();
    if let Some(limit) = crate::web::rate_limit::RateLimit::counted(config.rate_limit_per_minute, verified, refusals) {
        limit.spawn_pruning(shutdown.clone());
        router = router.layer(from_fn_with_state(limit, crate::web::rate_limit::rate_limit));
    }
    router = router.layer(from_fn_with_state(config.trusted_proxies()?, client_addr::resolve_client_addr));
    if app.auth == AuthMode::Local {
        router = router.layer(axum::middleware::from_fn(local_mode::loopback_peers_only));
    }
    if config.request_timeout_ms > 0 {
        router = router.layer(from_fn_with_state(Duration::from_millis(config.request_timeout_ms), deadline::deadline));
    }
    let cors_origins = cors::CorsOrigins::parse(&config.cors_origins)?;
    if !cors_origins.is_empty() {
        router = router.layer(from_fn_with_state(Arc::new(cors_origins), cors::cors));
    }
    Ok(router)
}

/// The accept loop's limits from the flags (0 = off).
pub fn connection_limits(config: &Config) -> anyhow::Result<serve::ConnectionLimits> {
    Ok(serve::ConnectionLimits {
        header_read_timeout: (config.header_read_timeout_ms > 0)
            .then(|| Duration::from_millis(config.header_read_timeout_ms)),
        max_connections: (config.max_connections > 0).then_some(config.max_connections),
        max_connections_per_peer: (config.max_connections_per_peer > 0).then_some(config.max_connections_per_peer),
        uncapped_peers: config.trusted_proxies()?,
        max_headers: config.max_request_headers,
        max_header_bytes: config.max_request_header_bytes,
        tcp_nodelay: true,
        open_connections: Default::default(),
    })
}
