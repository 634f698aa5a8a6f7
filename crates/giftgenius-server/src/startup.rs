//! Building and running the application. `main` and the integration tests start the server
//! the same way: `Application::build(config)`, then `port()` / `run_until_stopped()`.
//!
//! Over HTTP, `/mcp` speaks MCP (Streamable HTTP) next to the plain routes of `http/`, and with
//! `--acp-platforms` so does `/acp/mcp` (the ACP binding, `acp::mcp`: its own tools). With
//! `--stdio`, MCP runs on stdin/stdout for one client, and the plain routes still listen on
//! `--host`/`--port` so the image and checkout links in results work. Either way every route
//! sits behind the guards of `http::guarded` and is served by `http::serve` (header-read
//! timeout, connection cap).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::acp::buyer_data::AcpBuyerData;
use crate::auth::jwks::JwksOptions;
use crate::auth::metadata::{protected_resource_metadata, resource_metadata_url};
use crate::auth::middleware::AuthState;
use crate::auth::mode::resource_url;
use crate::auth::{AuthMode, Verifier};
use crate::checkout::reconcile::{ReconcileReport, Reconciler};
use crate::config::{Config, OutboxStatusArg};
use crate::http::serve::ConnectionLimits;
use crate::mcp::GiftGenius;
use crate::state::{AppState, connect_payments};
use crate::widget_resource::origin_of;
use giftgenius_commerce::clock::Clock;
use giftgenius_commerce::outbox::operator::{EventListing, Redelivered};
use giftgenius_commerce::store::Store;

/// Largest MCP request body we accept; tool arguments are small, anything bigger is hostile.
pub const MAX_REQUEST_BODY_BYTES: usize = 256 * 1024;

/// A bound, ready-to-run server.
pub struct Application {
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    state: Arc<AppState>,
    addr: SocketAddr,
    public_url: String,
    /// Fired last, once calls in flight finished or the grace ran out: background tasks and
    /// rmcp's sessions and calls stop.
    shutdown: CancellationToken,
    /// Starts the drain when cancelled (tests; `main` uses SIGTERM / Ctrl-C).
    stop: CancellationToken,
    /// `--shutdown-delay-secs` (0 with `--stdio`: no load balancer to tell).
    shutdown_delay: Duration,
    /// `--shutdown-grace-secs`.
    shutdown_grace: Duration,
    /// The order events worker (none with `--webhook-poll-ms 0`) and the feed's (none without
    /// `--feed-receivers` or with `--feed-poll-ms 0`): the drain lets their requests in flight
    /// finish.
    workers: Vec<tokio::task::JoinHandle<()>>,
}

/// Prunes what has outlived its retention, once at start and then every hour.
fn spawn_pruning(state: Arc<AppState>, shutdown: CancellationToken) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(crate::checkout::privacy::PRUNE_EVERY);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tick.tick() => state.prune().await,
            }
        }
    });
}

/// Writes the suggestions counted in memory every `every`, and once more when the server stops.
fn spawn_usage_flushing(state: Arc<AppState>, every: Duration, shutdown: CancellationToken) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every.max(Duration::from_millis(10)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tick.tick() => state.limits.flush().await,
            }
        }
        state.limits.flush().await;
    });
}

/// Settles orders left pending every `every` (see `checkout/reconcile.rs`); every replica
/// runs it, and concurrent passes never settle an order twice.
fn spawn_reconciling(state: Arc<AppState>, every: Duration, shutdown: CancellationToken) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tick.tick() => match state.reconciler.run_once().await {
                    Ok(report) if report.is_quiet() => {}
                    Ok(report) => tracing::info!(?report, "reconciled pending orders"),
                    Err(e) => tracing::warn!(error = %e, "reconciling pending orders failed"),
                },
            }
        }
    });
}

/// What a command that changes orders without serving needs (`reconcile`, `orders …`): the
/// database, the payment provider (the sandbox beside the database when no `--payments-url` is
/// given; it stops when this is dropped) and the order events' builder. The orders they change
/// write their events like the servers' would, so they take the same `--public-url`,
/// `--acp-platforms` and `--order-webhook-*` flags (the servers post them).
pub struct Offline {
    pub store: Store,
    pub payments: Arc<giftgenius_commerce::payments::Payments>,
    pub events: Arc<giftgenius_commerce::outbox::OrderEvents>,
    _sandbox: Option<crate::checkout::sandbox::SandboxProcess>,
}

impl Offline {
    pub async fn open(config: &Config) -> anyhow::Result<Self> {
        let store = config.open_store().await?;
        let (payments, sandbox) = connect_payments(config, &store, &giftgenius_commerce::clock::Clock::System).await?;
        let platforms = config.acp_platforms.as_deref().map(crate::acp::platforms::Platforms::load).transpose()?;
        let public_url = config.public_url_or_local();
        let permalinks = crate::state::permalinks(&store, &public_url).await?;
        let events = crate::state::order_events(config, &store, platforms.as_ref(), permalinks, &public_url).await?;
        Ok(Self { store, payments: Arc::new(payments), events, _sandbox: sandbox })
    }

    /// The operator's service on these.
    pub fn operator(&self) -> crate::operator::Operator {
        crate::operator::Operator {
            store: self.store.clone(),
            payments: self.payments.clone(),
            events: self.events.clone(),
            clock: Clock::System,
        }
    }
}

/// `giftgenius-server reconcile`: one pass over `--db` against the payment provider, without
/// serving anything (see [`Offline`]).
pub async fn reconcile_once(config: &Config) -> anyhow::Result<ReconcileReport> {
    let offline = Offline::open(config).await?;
    let reconciler = Reconciler {
        events: offline.events.clone(),
        store: offline.store.clone(),
        payments: offline.payments.clone(),
        clock: Clock::System,
        after: Duration::from_secs(config.reconcile_after_secs),
        metrics: Default::default(),
    };
    Ok(reconciler.run_once().await?)
}

/// `giftgenius-server outbox list`: the events of `--db`, as JSON lines.
pub async fn outbox_list(
    config: &Config,
    status: Option<OutboxStatusArg>,
    limit: u32,
) -> anyhow::Result<Vec<EventListing>> {
    let store = config.open_store().await?;
    Ok(giftgenius_commerce::outbox::operator::list(&store, status.map(Into::into), i64::from(limit)).await?)
}

/// `giftgenius-server orders …`: the operator's command on the configured database and payment
/// provider.
pub async fn orders(
    config: &Config,
    command: &crate::config::OrdersCommand,
) -> anyhow::Result<crate::operator::cli::Printed> {
    let offline = Offline::open(config).await?;
    crate::operator::cli::run(&offline.operator(), command).await
}

/// `giftgenius-server outbox redeliver ID…`: those events pending again, for the servers to post.
pub async fn outbox_redeliver(config: &Config, ids: &[String]) -> anyhow::Result<Redelivered> {
    let store = config.open_store().await?;
    Ok(giftgenius_commerce::outbox::operator::redeliver(&store, ids, Clock::System.now_ms()).await?)
}

/// What `giftgenius-server migrate` did.
#[derive(Debug, serde::Serialize)]
pub struct Migrated {
    /// The database, without its password.
    pub database: String,
    /// Every migration this build knows is applied.
    pub migrated: bool,
}

/// `giftgenius-server migrate`: opening the store applies the embedded migrations (under
/// sqlx's advisory lock on PostgreSQL, so replicas starting meanwhile wait); then the check
/// `/readyz` makes.
pub async fn migrate_once(config: &Config) -> anyhow::Result<Migrated> {
    let store = config.open_store().await?;
    let migrated = store.is_migrated().await?;
    anyhow::ensure!(migrated, "the database holds migrations this build does not know (a newer build's?)");
    Ok(Migrated { database: crate::telemetry::url_for_log(&config.db), migrated })
}

/// `giftgenius-server delete-my-data --subject S`: what the delete_my_data tool does, for a
/// request that reached an operator; no payment provider involved.
pub async fn delete_my_data_once(config: &Config, subject: &str) -> anyhow::Result<giftgenius_types::DeleteMyDataData> {
    anyhow::ensure!(
        !subject.is_empty() && subject != giftgenius_commerce::store::ERASED_SUBJECT,
        "--subject names no account"
    );
    let store = config.open_store().await?;
    let deleted = store.delete_personal_data(subject, Clock::System.now_ms()).await?;
    Ok(crate::checkout::privacy::report(deleted, &crate::state::retention_of(config)))
}

/// `giftgenius-server delete-my-data --acp-buyer-email E`: an ACP buyer's personal data.
pub async fn delete_acp_buyer_data_once(
    config: &Config,
    email: &str,
) -> anyhow::Result<giftgenius_types::DeleteMyDataData> {
    anyhow::ensure!(email.contains('@'), "--acp-buyer-email is not an email address");
    let store = config.open_store().await?;
    let deleted = store.delete_acp_buyer_data(email, Clock::System.now_ms()).await?;
    Ok(crate::checkout::privacy::report(deleted, &crate::state::retention_of(config)))
}

/// How an MCP endpoint is served: who may name it (Host, Origin), its body limit, and when
/// its sessions and calls stop.
struct McpServing<'a> {
    public_url: &'a str,
    /// The browser origins of `--cors-origins` (`http::cors`), allowed too.
    cors_origins: &'a [String],
    max_body_bytes: usize,
    shutdown: &'a CancellationToken,
}

/// An MCP endpoint at `path` serving `handler`s (`/mcp`: the app; `/acp/mcp`: the ACP binding),
/// with Host and Origin checks against DNS rebinding and cross-site calls (only our public
/// name and loopback as Host, only our origin and loopback as Origin). Two rmcp services
/// behind one route. A client that initializes (2025-11-25 and older) gets a session and keeps
/// it (`Mcp-Session-Id`); every other POST without a session (a 2026-07-28 request, or an
/// older-version request from a client that never initialized, as the official SDKs'
/// stateless servers accept) is served statelessly with a plain JSON reply: no session to
/// look up, no SSE framing, no per-session task. Nothing a call needs lives in a session, so
/// both answer the same.
fn mcp_routes<S>(
    path: &str,
    handler: impl Fn() -> S + Clone + Send + Sync + 'static,
    serving: &McpServing,
) -> anyhow::Result<Router>
where
    S: rmcp::ServerHandler + Send + 'static,
{
    use axum::extract::Request;
    use tower::ServiceExt as _;
    // Behind an Arc: axum clones a route's service at every layer of every request, and each
    // rmcp service clone copies its config (the allowed hosts and origins); this way a request
    // clones an Arc there and one service here.
    let services = Arc::new((mcp_service(handler.clone(), serving, true)?, mcp_service(handler, serving, false)?));
    let route = tower::service_fn(move |request: Request| {
        let stateless = request.method() == axum::http::Method::POST
            && !request.headers().contains_key("mcp-session-id")
            && request.extensions().get::<crate::mcp::request_body::Initialize>().is_none();
        let services = services.clone();
        async move {
            let (sessioned, sessionless) = &*services;
            let response = if stateless {
                sessionless.clone().oneshot(request).await
            } else {
                sessioned.clone().oneshot(request).await
            };
            response.map(axum::response::IntoResponse::into_response)
        }
    });
    Ok(Router::new().nest_service(path, route))
}

fn mcp_service<S>(
    handler: impl Fn() -> S + Send + Sync + 'static,
    serving: &McpServing,
    sessions: bool,
) -> anyhow::Result<StreamableHttpService<S, LocalSessionManager>>
where
    S: rmcp::ServerHandler + Send + 'static,
{
    let McpServing { public_url, cors_origins, max_body_bytes, shutdown } = *serving;
    let public = url::Url::parse(public_url)?;
    let public_host = public.host_str().unwrap_or("localhost").to_string();
    let mut allowed_hosts =
        vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string(), public_host.clone()];
    if let Some(port) = public.port_or_known_default() {
        allowed_hosts.push(format!("{public_host}:{port}"));
    }
    let mut allowed_origins =
        vec![origin_of(public_url)?, "http://localhost:*".to_string(), "http://127.0.0.1:*".to_string()];
    allowed_origins.extend_from_slice(cors_origins);
    // `sessions`: the service clients that initialize (2025-11-25 and older) keep a session
    // with. A 2026-07-28 request (protocol version, client info and capabilities in its
    // `_meta`, no initialize) and `server/discover` are served statelessly by rmcp whatever
    // this says; `mcp_routes` sends every other session-less POST to the service without
    // sessions. Nothing a call needs lives in a session (the auth middleware decides who
    // calls), so any replica answers any request. Stateless requests get a plain JSON reply
    // when the handler sends nothing before its answer; per-request metadata stays optional.
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(sessions)
        .with_json_response(true)
        .with_stateless_protocol_metadata_required(false)
        .with_allowed_hosts(allowed_hosts)
        .with_allowed_origins(allowed_origins)
        .with_max_request_body_bytes(max_body_bytes)
        .with_sse_keep_alive(Some(Duration::from_secs(15)))
        .with_cancellation_token(shutdown.child_token());
    Ok(StreamableHttpService::new(move || Ok(handler()), Arc::new(LocalSessionManager::default()), config))
}

/// Who calls `/mcp`: the middleware's state for the mode and, in verified mode, the routes of
/// our protected resource metadata (RFC 9728).
async fn auth_layer(
    state: &AppState,
    public_url: &str,
    accept_plain_jwt: bool,
) -> anyhow::Result<(AuthState, Option<Router>)> {
    let (issuer, audience) = match &state.auth {
        AuthMode::Local => return Ok((AuthState::local(), None)),
        AuthMode::SingleUser => return Ok((AuthState::single_user(), None)),
        AuthMode::Verified { issuer, audience } => (issuer, audience),
    };
    let verifier = Verifier::new(issuer.clone(), audience.clone(), JwksOptions::default())
        .context("cannot build the HTTP client for the authorization server")?
        .accepting_plain_jwt(accept_plain_jwt);
    // Fetch the issuer's keys now, so a wrong --auth-issuer shows at startup; tokens still
    // fetch them on demand if the authorization server starts after us.
    if let Err(e) = verifier.keys().refresh().await {
        tracing::warn!(issuer = issuer.as_str(), error = %e, "could not fetch the authorization server's keys yet");
    }
    let resource = resource_url(public_url);
    let resource_metadata = state.resource_metadata.clone().unwrap_or_else(|| resource_metadata_url(&resource));
    let document = protected_resource_metadata(&resource, issuer.as_str(), "GiftGenius");
    let auth = AuthState::verified(Arc::new(verifier), resource_metadata, crate::auth::required_scope)
        .with_max_body_bytes(MAX_REQUEST_BODY_BYTES)
        .counting_into(state.metrics.refusals.clone());
    Ok((auth, Some(crate::auth::metadata::router(document))))
}

/// Who callers are (see `auth/mode.rs`), from the flags and the address the listener is
/// really bound to. stdio serves the one client that spawned us, on the developer's own
/// machine: local mode, so never with an issuer, and its HTTP side on loopback only.
fn mode_of(config: &Config, public_url: &str, bound: SocketAddr) -> anyhow::Result<AuthMode> {
    if config.stdio {
        anyhow::ensure!(
            config.auth_issuer.is_none() && !config.single_user,
            "--stdio serves the one local client that started this process, as the local user; it takes no \
             --auth-issuer or --single-user. Drop --stdio to serve signed-in users over HTTP"
        );
        anyhow::ensure!(
            crate::auth::mode::is_loopback_ip(bound.ip()),
            "--stdio runs in local mode, which listens on loopback only: pass --host 127.0.0.1 (not {})",
            bound.ip()
        );
        return Ok(AuthMode::Local);
    }
    Ok(AuthMode::decide(
        config.auth_issuer.as_deref(),
        config.auth_audience.clone(),
        public_url,
        bound.ip(),
        config.single_user,
    )?)
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
        let mode = mode_of(&config, &public_url, addr)?;
        crate::http::preview::check_bind(&config, addr.ip())?;
        let line = mode.startup_line(&public_url);
        if mode.is_loud() {
            tracing::warn!("{line}");
        } else {
            tracing::info!("{line}");
        }
        let state = AppState::build(&config, &public_url, mode, clock).await?;
        let shutdown = CancellationToken::new();
        spawn_pruning(state.clone(), shutdown.clone());
        spawn_usage_flushing(state.clone(), Duration::from_millis(config.usage_flush_ms), shutdown.clone());
        state.catalog.spawn_reloading(Duration::from_secs(config.catalog_poll_secs), shutdown.clone());
        if config.reconcile_interval_secs > 0 {
            spawn_reconciling(state.clone(), Duration::from_secs(config.reconcile_interval_secs), shutdown.clone());
        }
        let outbox_worker = (config.webhook_poll_ms > 0).then(|| {
            giftgenius_commerce::outbox::worker::spawn(
                state.outbox.clone(),
                Duration::from_millis(config.webhook_poll_ms),
                shutdown.clone(),
            )
        });
        let feed_worker = match (&state.feed, config.feed_poll_ms) {
            (Some(pusher), poll) if poll > 0 => {
                Some(crate::feed::push::spawn(pusher.clone(), Duration::from_millis(poll), shutdown.clone()))
            }
            _ => None,
        };
        let mut router = crate::http::router(&config, state.clone());
        let cors_origins = crate::http::cors::CorsOrigins::parse(&config.cors_origins)?.for_origin_check();
        if let Some(acp) = state.acp.clone() {
            // Served as the REST routes are, `--stdio` or not: the platforms call over HTTP.
            let serving = McpServing {
                public_url: &public_url,
                cors_origins: &cors_origins,
                max_body_bytes: crate::acp::mcp::MAX_BODY_BYTES,
                shutdown: &shutdown,
            };
            router = router.merge(crate::acp::mcp::routes(acp, |binding| {
                mcp_routes(crate::acp::routes::MCP_PATH, move || binding.clone(), &serving)
            })?);
        }
        if !config.stdio {
            let (auth, metadata) = auth_layer(&state, &public_url, config.accept_plain_jwt).await?;
            let serving = McpServing {
                public_url: &public_url,
                cors_origins: &cors_origins,
                max_body_bytes: MAX_REQUEST_BODY_BYTES,
                shutdown: &shutdown,
            };
            let app = state.clone();
            let mcp = Router::new()
                .merge(mcp_routes("/mcp", move || GiftGenius::new(app.clone()), &serving)?)
                .layer(axum::middleware::from_fn_with_state(
                    MAX_REQUEST_BODY_BYTES,
                    crate::mcp::request_body::json_rpc_body,
                ))
                .layer(axum::middleware::from_fn_with_state(auth, crate::auth::middleware::authenticate));
            router = router.merge(mcp);
            if let Some(metadata) = metadata {
                router = router.merge(metadata);
            }
        }
        // Innermost, so every guard outside sees a handler's panic as the 500 it answers.
        let router = router.layer(axum::middleware::from_fn(crate::panics::answer_panics));
        let router = crate::http::guarded(router, &config, &state, &shutdown)?
            .layer(axum::middleware::from_fn_with_state(state.drain.clone(), crate::web::drain::track_requests));
        let mut limits = crate::http::connection_limits(&config)?;
        limits.open_connections = state.metrics.open_connections.clone();
        Ok(Self {
            listener,
            router,
            limits,
            state,
            addr,
            public_url,
            shutdown,
            stop: CancellationToken::new(),
            shutdown_delay: Duration::from_secs(if config.stdio { 0 } else { config.shutdown_delay_secs }),
            shutdown_grace: Duration::from_secs(config.shutdown_grace_secs),
            workers: outbox_worker.into_iter().chain(feed_worker).collect(),
        })
    }

    /// The shared state (tests reach the store, the reconciler and the idempotency keys through it).
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

    /// Serves with Nagle's algorithm on: only for `examples/keepalive.rs`, which measures what
    /// `TCP_NODELAY` saves on kept-alive connections. Never for serving.
    pub fn with_nagle_for_benchmarks(mut self) -> Self {
        self.limits.tcp_nodelay = false;
        self
    }

    /// A token that starts the drain when cancelled, as SIGTERM does (tests use it).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Serves until SIGTERM / Ctrl-C or the stop token, then drains: `/readyz` answers 503
    /// `draining` for `--shutdown-delay-secs` while everything is still served; then the
    /// listener closes and the requests in flight get `--shutdown-grace-secs` to finish; only
    /// then are rmcp's sessions and the background tasks stopped, and the usage counters
    /// written. A second signal, or the grace running out, ends it at once (an error naming the
    /// requests left, if any): their purchases are fenced, and the reconciler of any replica settles
    /// what they left pending.
    pub async fn run_until_stopped(self) -> anyhow::Result<()> {
        let Self { listener, router, limits, state, shutdown, stop, shutdown_delay, shutdown_grace, workers, .. } =
            self;
        let mut signals = StopSignals::new();
        let accepting = CancellationToken::new();
        // Not `axum::serve`: it has no header-read timeout and no connection cap. The peer
        // address reaches handlers as `ConnectInfo` the same way.
        let mut server =
            tokio::spawn(crate::http::serve::serve(listener, router, limits, accepting.clone(), shutdown_grace));
        // Ctrl-C is a person at a terminal, not a load balancer: no delay for it, the calls in
        // flight still finish.
        let shutdown_delay = tokio::select! {
            signal = signals.next() => if signal == StopSignal::Interrupt { Duration::ZERO } else { shutdown_delay },
            _ = stop.cancelled() => shutdown_delay,
            served = &mut server => {
                shutdown.cancel();
                return served.context("server task")?.context("server error");
            }
        };
        state.drain.start();
        tracing::info!(delay_s = shutdown_delay.as_secs(), "draining: /readyz answers 503 until the listener closes");
        let mut forced = tokio::select! {
            _ = tokio::time::sleep(shutdown_delay) => false,
            _ = signals.next() => true,
        };
        if !forced {
            accepting.cancel();
            tracing::info!(
                in_flight = state.drain.in_flight(),
                grace_s = shutdown_grace.as_secs(),
                "stopped accepting"
            );
            forced = tokio::select! {
                finished = tokio::time::timeout(shutdown_grace, state.drain.requests_finished()) => finished.is_err(),
                _ = signals.next() => true,
            };
        }
        let left = state.drain.in_flight();
        accepting.cancel();
        shutdown.cancel();
        if forced && left > 0 {
            tracing::warn!(left, "stopped before every request finished; the reconciler settles their orders");
            anyhow::bail!("stopped with {left} requests still in flight");
        }
        // Streams (SSE) ended with rmcp's sessions; the connections close now.
        if let Ok(Ok(Err(e))) = tokio::time::timeout(shutdown_grace, server).await {
            tracing::warn!(error = %e, "serving ended with an error");
        }
        // Webhooks and feed pushes being sent finish (each within its timeout), so their outcome
        // is recorded rather than found leased after the restart; one cut off is sent again anyway.
        if tokio::time::timeout(shutdown_grace, futures::future::join_all(workers)).await.is_err() {
            tracing::warn!(
                "stopped while order events or feed changes were still being sent; they are sent again after their lease"
            );
        }
        // Suggestions counted since the last flush (the flushing task also writes them, but
        // `main` may exit before it runs again).
        state.limits.flush().await;
        tracing::info!("drained");
        Ok(())
    }

    /// Serves one MCP client over stdin/stdout (build with `config.stdio` set) while the plain
    /// HTTP routes keep serving; returns when the client goes away.
    pub async fn run_stdio(self) -> anyhow::Result<()> {
        let state = self.state.clone();
        let stop = self.stop.clone();
        let http = tokio::spawn(self.run_until_stopped());
        let service = GiftGenius::new(state).serve(rmcp::transport::stdio()).await.context("stdio handshake failed")?;
        let ended = service.waiting().await.context("stdio session ended with an error");
        stop.cancel();
        let _ = http.await;
        ended.map(|_| ())
    }
}

/// Which signal asked the server to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopSignal {
    /// SIGTERM: an orchestrator, which waits the delay out for load balancers to notice.
    Terminate,
    /// Ctrl-C (SIGINT).
    Interrupt,
}

/// SIGTERM and Ctrl-C, each one as it comes (the first starts the drain, the second ends it).
struct StopSignals {
    #[cfg(unix)]
    terminate: Option<tokio::signal::unix::Signal>,
}

impl StopSignals {
    fn new() -> Self {
        #[cfg(unix)]
        {
            let terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate());
            if let Err(e) = &terminate {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
            }
            Self { terminate: terminate.ok() }
        }
        #[cfg(not(unix))]
        Self {}
    }

    async fn next(&mut self) -> StopSignal {
        let ctrl_c = async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        #[cfg(unix)]
        let terminate = async {
            match &mut self.terminate {
                Some(signal) => {
                    signal.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        };
        #[cfg(not(unix))]
        let terminate = std::future::pending::<()>();
        tokio::select! { _ = ctrl_c => StopSignal::Interrupt, _ = terminate => StopSignal::Terminate }
    }
}
