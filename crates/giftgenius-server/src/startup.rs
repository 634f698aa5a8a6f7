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
use crate::config::Config;
use crate::images::gift_image;
use crate::mcp::{AppState, GiftGenius};
use crate::widget::{WidgetResource, origin_of};

/// Largest MCP request body we accept; tool arguments are small, anything bigger is hostile.
pub const MAX_REQUEST_BODY_BYTES: usize = 256 * 1024;

/// A bound, ready-to-run server.
pub struct Application {
    listener: TcpListener,
    router: Router,
    addr: SocketAddr,
    public_url: String,
    shutdown: CancellationToken,
}

fn state(config: &Config, public_url: &str) -> anyhow::Result<Arc<AppState>> {
    let origin = origin_of(public_url)?;
    let widget = WidgetResource::load(&config.widget_html, config.widget_mime, &origin)?;
    Ok(Arc::new(AppState {
        catalog: Arc::new(Catalog::builtin()),
        widget,
        public_url: public_url.trim_end_matches('/').to_string(),
    }))
}

impl Application {
    /// Binds the listener (port 0 picks a free port) and wires the routes.
    pub async fn build(config: Config) -> anyhow::Result<Self> {
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
        let state = state(&config, &public_url)?;
        let shutdown = CancellationToken::new();

        // Host and Origin checks guard against DNS rebinding and cross-site calls: only our
        // public name and loopback are accepted as Host, only our origin and loopback as Origin.
        let public = url::Url::parse(&public_url)?;
        let public_host = public.host_str().unwrap_or("localhost").to_string();
        let mut allowed_hosts = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string(), public_host.clone()];
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
            .route("/healthz", get(|| async { "ok" }));
        Ok(Self { listener, router, addr, public_url, shutdown })
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
        let state = state(&config, &public_url)?;
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
