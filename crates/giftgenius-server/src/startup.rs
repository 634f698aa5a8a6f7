//! Building and running the application. `main` and the integration tests start the server
//! the same way: `Application::build(config)`, then `port()` / `run_until_stopped()`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::routing::get;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::catalog::Catalog;
use crate::catalog::sources::Sources;
use crate::clock::Clock;
use crate::config::Config;
use crate::failpoints::Failpoints;
use crate::idempotency::Idempotency;
use crate::images::gift_image;
use crate::mcp::{AppState, GiftGenius};
use crate::orders::Checkout;
use crate::payments::{FaultPlan, SandboxPayments};
use crate::suggest::Suggester;
use crate::widget::{WidgetResource, origin_of};

/// Largest MCP request body we accept; tool arguments are small, anything bigger is hostile.
pub const MAX_REQUEST_BODY_BYTES: usize = 256 * 1024;

/// A bound, ready-to-run server.
pub struct Application {
    listener: TcpListener,
    router: Router,
    state: Arc<AppState>,
    addr: SocketAddr,
    public_url: String,
    shutdown: CancellationToken,
}

async fn state(config: &Config, public_url: &str, clock: Clock) -> anyhow::Result<Arc<AppState>> {
    let origin = origin_of(public_url)?;
    let public_url = public_url.trim_end_matches('/').to_string();
    let widget = WidgetResource::load(&config.widget_html, config.widget_mime, &origin)?;
    let catalog = Arc::new(Catalog::builtin());
    let store = crate::store::connect(&config.db)
        .await
        .with_context(|| format!("cannot open the database {}", redacted(&config.db)))?;
    let faults = FaultPlan::parse(&config.sandbox_faults).map_err(anyhow::Error::msg)?;
    let payments = Arc::new(SandboxPayments::new(
        store.clone(),
        clock.clone(),
        Duration::from_millis(config.sandbox_latency_ms),
        faults,
    ));
    let secret = store.secret("confirmation_token", uuid::Uuid::new_v4().simple().to_string()).await?;
    let suggester = Suggester {
        sources: Sources::new(
            config.builtin_catalog.then(|| catalog.clone()),
            &config.catalog_urls,
            Duration::from_millis(config.source_timeout_ms),
            Duration::from_millis(config.suggest_deadline_ms),
        )?,
        store: store.clone(),
        clock: clock.clone(),
        daily_limit: config.daily_suggestion_limit,
        public_url: public_url.clone(),
    };
    let checkout = Checkout {
        store,
        catalog: catalog.clone(),
        payments,
        idempotency: Idempotency {
            clock: clock.clone(),
            lease: Duration::from_millis(config.idempotency_lease_ms),
            retention: Duration::from_secs(config.idempotency_retention_hours * 3600),
        },
        failpoints: Failpoints::new(config.failpoints.split(',').map(|s| s.trim().to_string())),
        clock,
        draft_ttl: Duration::from_secs(config.draft_ttl_secs),
        public_url: public_url.clone(),
        token_secret: secret.into_bytes(),
    };
    Ok(Arc::new(AppState { catalog, widget, public_url, checkout, suggester }))
}

/// `--db` for messages: a URL's password is never printed.
fn redacted(db: &str) -> String {
    match url::Url::parse(db) {
        Ok(mut url) if url.password().is_some() => {
            let _ = url.set_password(Some("***"));
            url.to_string()
        }
        _ => db.to_string(),
    }
}

/// Prunes expired idempotency keys every hour.
fn spawn_pruning(state: Arc<AppState>, shutdown: CancellationToken) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(3600));
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            match state.checkout.idempotency.prune(state.checkout.store.as_ref()).await {
                Ok(n) if n > 0 => tracing::info!(pruned = n, "pruned expired idempotency keys"),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "pruning idempotency keys failed"),
            }
            // Daily suggestion counters are only read for today; keep yesterday for support.
            let today = state.suggester.clock.now_ms().div_euclid(86_400_000);
            if let Err(e) = state.suggester.store.prune_daily_suggestions(today - 1).await {
                tracing::warn!(error = %e, "pruning daily suggestion counters failed");
            }
        }
    });
}

impl Application {
    /// Binds the listener (port 0 picks a free port) and wires the routes.
    pub async fn build(config: Config) -> anyhow::Result<Self> {
        Self::build_with_clock(config, Clock::System).await
    }

    /// Like `build`, with an injectable clock (tests expire drafts and keys with it).
    pub async fn build_with_clock(config: Config, clock: Clock) -> anyhow::Result<Self> {
        let listener = TcpListener::bind((config.host.as_str(), config.port))
            .await
            .with_context(|| format!("cannot listen on {}:{}", config.host, config.port))?;
        let addr = listener.local_addr()?;
        let public_url = match &config.public_url {
            Some(url) => url.trim_end_matches('/').to_string(),
            None => {
                let host = if addr.ip().is_unspecified() { "127.0.0.1".to_string() } else { addr.ip().to_string() };
                format!("http://{host}:{}", addr.port())
            }
        };
        let state = state(&config, &public_url, clock).await?;
        let shutdown = CancellationToken::new();
        spawn_pruning(state.clone(), shutdown.clone());

        // Host and Origin checks guard against DNS rebinding and cross-site calls: only our
        // public name and loopback are accepted as Host, only our origin and loopback as Origin.
        let public = url::Url::parse(&public_url)?;
        let public_host = public.host_str().unwrap_or("localhost").to_string();
        let mut allowed_hosts =
            vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string(), public_host.clone()];
        if let Some(port) = public.port_or_known_default() {
            allowed_hosts.push(format!("{public_host}:{port}"));
        }
        let allowed_origins =
            vec![origin_of(&public_url)?, "http://localhost:*".to_string(), "http://127.0.0.1:*".to_string()];
        let mcp_config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(allowed_hosts)
            .with_allowed_origins(allowed_origins)
            .with_max_request_body_bytes(MAX_REQUEST_BODY_BYTES)
            .with_sse_keep_alive(Some(Duration::from_secs(15)))
            .with_cancellation_token(shutdown.child_token());
        let mcp_state = state.clone();
        let mcp = StreamableHttpService::new(
            move || Ok(GiftGenius::new(mcp_state.clone())),
            Arc::new(LocalSessionManager::default()),
            mcp_config,
        );
        let router = Router::new()
            .nest_service("/mcp", mcp)
            .route("/images/{file}", get(gift_image).with_state(state.catalog.clone()))
            .route("/checkout/{id}", get(crate::checkout_page::checkout_page).with_state(state.clone()))
            .route("/healthz", get(|| async { "ok" }))
            .merge(crate::preview::router(&config, state.clone()));
        Ok(Self { listener, router, state, addr, public_url, shutdown })
    }

    /// The shared state (tests read the payment ledger and inject faults through it).
    pub fn state(&self) -> Arc<AppState> {
        self.state.clone()
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.public_url)
    }

    /// A token that stops the server when cancelled (tests use it; `main` uses Ctrl-C).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Serves until Ctrl-C / SIGTERM or the shutdown token fires, then drains.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let token = self.shutdown.clone();
        tokio::spawn({
            let token = token.clone();
            async move {
                shutdown_signal().await;
                token.cancel();
            }
        });
        axum::serve(self.listener, self.router)
            .with_graceful_shutdown(async move { token.cancelled_owned().await })
            .await
            .context("server error")
    }

    /// Serves one MCP client over stdin/stdout.
    pub async fn run_stdio(config: Config) -> anyhow::Result<()> {
        let public_url = config.public_url.clone().unwrap_or_else(|| format!("http://{}:{}", config.host, config.port));
        let state = state(&config, &public_url, Clock::System).await?;
        let service = GiftGenius::new(state).serve(rmcp::transport::stdio()).await.context("stdio handshake failed")?;
        service.waiting().await.context("stdio session ended with an error")?;
        Ok(())
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = terminate => {} }
}

#[cfg(test)]
mod tests {
    #[test]
    fn database_passwords_are_redacted() {
        assert_eq!(super::redacted("postgres://gift:s3cret@db:5432/gg"), "postgres://gift:***@db:5432/gg");
        assert_eq!(super::redacted("giftgenius.db"), "giftgenius.db");
    }
}
