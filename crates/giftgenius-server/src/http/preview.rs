//! The local preview (`--preview`, started by `cargo xtask preview`): a host emulator page next to
//! the real MCP endpoint, so a developer can see and click every widget state before connecting
//! ChatGPT or an MCP Apps host. Nothing here exists unless the server was started with `--preview`.
//!
//! Every route below answers only requests from a loopback TCP peer, not relayed by a proxy,
//! and addressed to a loopback name (`localhost`, `sandbox.localhost`, `127.0.0.1`, `[::1]`;
//! else 403, `local_only.rs`): whatever address the server listens on, neither another machine
//! nor a DNS-rebinding page can read the transcript or the ledger, change the fault plan or
//! mint a vault token. And `--preview` refuses to start on a non-loopback bind unless
//! `--allow-remote-preview` says so ([`check_bind`]).
//!
//! Routes (same origin as `/mcp`, so the page's fetches need no CORS):
//! - `GET /preview`: the host page (`preview/index.html`, `host.js`, `host.css`; plain files
//!   compiled into the binary, no build step, no external URL).
//! - `GET /preview/callback`: the OAuth redirect URI of the page's sign-in (verified mode, e.g.
//!   `cargo xtask preview --auth`): a tiny page (`preview/callback.html`, same `host.js`) that
//!   checks `state`, exchanges the code at the token endpoint and returns to `/preview`.
//! - `GET /preview/widget?csp=chatgpt|mcp-apps&bridge=openai|mcp-apps`: the packed artifact, read
//!   from disk on every request (so `cargo xtask widget` + reload shows a new build), under an
//!   enforced `Content-Security-Policy`. With `bridge=openai` the served copy (never the artifact)
//!   gets a small shim that implements `window.openai` over postMessage to the host page, because
//!   a sandboxed iframe with an opaque origin cannot be touched from its parent.
//! - `GET /preview/artifact`: size and modification time of the artifact (the page polls it for
//!   live reload).
//! - `GET /preview/ledger`: how many charges (and refunds) the sandbox payment provider made
//!   (tests count these), read from the provider's own API.
//! - `POST /preview/faults` `{"plan":"5xx*1"}`: the sandbox provider's next failures (passed to
//!   its admin endpoint).
//! - `/preview/chat/*`: the chat panel, relayed to the `giftgenius-chat --listen` process named by
//!   `--preview-chat-url` (see `preview_chat.rs`).
//! - `GET|POST /preview/catalog`: an extra HTTP catalog source (start the server with
//!   `--catalog-url http://HOST:PORT/preview/catalog`): a small merchant whose gift title holds
//!   markup (it must render as text), or HTTP 503 after `POST {"mode":"down"}` (partial results).

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Json;
use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;
use serde_json::json;

use crate::auth::AuthMode;
use crate::config::Config;
use crate::state::AppState;
use crate::widget_resource::origin_of;

const INDEX_HTML: &str = include_str!("../../../../preview/index.html");
const HOST_JS_TEMPLATE: &str = include_str!("../../../../preview/host.js");
/// `host.js` with the contract's strings filled in (`giftgenius_types::wire`), so the page never
/// spells them itself.
static HOST_JS: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    HOST_JS_TEMPLATE.replace("__META_CONFIRMATION_TOKEN__", giftgenius_types::wire::META_CONFIRMATION_TOKEN)
});
const HOST_CSS: &str = include_str!("../../../../preview/host.css");
const CALLBACK_HTML: &str = include_str!("../../../../preview/callback.html");
/// Injected into the served copy of the widget for `bridge=openai` (never into the artifact).
const OPENAI_SHIM_JS: &str = include_str!("../../../../preview/openai-shim.js");

/// The host page's own policy: everything from us, nothing else; frames also from our other
/// loopback names (`sandbox.localhost`, `localhost`, `127.0.0.1`), where the MCP Apps sandbox is served.
///
/// `issuer_origin` (verified mode only, else empty): the origin of the authorization server this
/// server was configured with (`--auth-issuer`), never one the page names. Sign-in needs the page
/// to fetch that server's metadata and POST the code to its token endpoint, as a browser-based
/// host does (oidc-provider answers CORS for the client's redirect URI origins); the redirect to
/// its authorization endpoint is a navigation, which neither connect-src nor form-action governs.
fn host_page_csp(frame_origins: &str, issuer_origin: &str) -> String {
    let connect = if issuer_origin.is_empty() { "'self'".to_string() } else { format!("'self' {issuer_origin}") };
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src {connect}; \
         frame-src 'self' {frame_origins}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
}

/// The preview catalog source: one merchant, one gift whose title is markup, matched by the
/// words of `<img src=x onerror=alert(1)>` (img, src, onerror, alert), and a plain gift.
const PREVIEW_CATALOG: &str = r#"{
  "merchant": {"id": "preview-lab", "name": "Preview Lab <b>Shop</b>"},
  "gifts": [
    {"id": "pv-001", "title": "Sketchbook <img src=x onerror=alert(1)>", "description": "A preview-only gift whose title is markup; the widget must show it as text.", "price_cents": 1500, "tags": ["art", "drawing"], "age_min": 6, "age_max": 120, "relationships": ["friend", "partner", "parent", "child", "sibling", "colleague"], "occasions": ["birthday", "holiday", "just_because"], "stock": 50},
    {"id": "pv-002", "title": "Preview Lab Tote Bag", "description": "Canvas tote served by the preview catalog source.", "price_cents": 1800, "tags": ["fashion", "travel"], "age_min": 10, "age_max": 120, "relationships": ["friend", "colleague", "sibling"], "occasions": ["birthday", "just_because"], "stock": 80}
  ]
}"#;

struct Preview {
    app: Arc<AppState>,
    widget_html: PathBuf,
    /// Origin of our own server: the widget's images come from here.
    origin: String,
    /// The loopback origins of this server (`http://sandbox.localhost:P …`).
    loopback_origins: String,
    /// The configured authorization server's origin in verified mode, else empty.
    issuer_origin: String,
    catalog_down: AtomicBool,
}

/// Refuses `--preview` on a listener bound beyond loopback (`bound`, the address really bound)
/// unless `--allow-remote-preview` is set: these routes are a development aid for this machine.
pub fn check_bind(config: &Config, bound: std::net::IpAddr) -> anyhow::Result<()> {
    anyhow::ensure!(
        !config.preview || config.allow_remote_preview || crate::auth::mode::is_loopback_ip(bound),
        "--preview serves this machine's development aids (the payment ledger, the fault plan, the payment \
         sheet) and --host {bound} listens beyond loopback: pass --host 127.0.0.1, or add --allow-remote-preview \
         (the /preview routes then still answer only requests from this machine)"
    );
    Ok(())
}

/// The preview routes when `--preview` is set, else an empty router.
pub fn router(config: &Config, app: Arc<AppState>) -> Router {
    if !config.preview {
        return Router::new();
    }
    // Resolved the same way when the state was built, so it cannot fail here.
    let widget_html = match config.widget_html() {
        Ok(path) => path,
        Err(e) => {
            tracing::error!(error = %e, "preview routes are off: the widget artifact is missing");
            return Router::new();
        }
    };
    let origin = origin_of(&app.public_url).unwrap_or_else(|_| app.public_url.clone());
    let port = url::Url::parse(&app.public_url).ok().and_then(|u| u.port_or_known_default()).unwrap_or(config.port);
    let loopback_origins = format!("http://sandbox.localhost:{port} http://localhost:{port} http://127.0.0.1:{port}");
    let issuer_origin = match &app.auth {
        AuthMode::Verified { issuer, .. } => issuer.url().origin().ascii_serialization(),
        AuthMode::Local | AuthMode::SingleUser => String::new(),
    };
    let page_origins = vec![origin.clone(), format!("http://localhost:{port}"), format!("http://127.0.0.1:{port}")];
    let chat = super::preview_chat::router(config.preview_chat_url.as_deref(), page_origins);
    let relay = Router::new()
        .route("/preview/sheet/delegate", axum::routing::post(super::sheet_relay::delegate))
        .with_state(super::sheet_relay::SheetRelay::of(config, &app));
    let state = Arc::new(Preview {
        app,
        widget_html,
        origin,
        loopback_origins,
        issuer_origin,
        catalog_down: AtomicBool::new(false),
    });
    tracing::warn!("preview routes are on (/preview): a development aid, never for production");
    Router::new()
        .route("/preview", get(index))
        .route("/preview/", get(index))
        .route("/preview/callback", get(callback))
        .route("/preview/host.js", get(|| async { asset("text/javascript; charset=utf-8", HOST_JS.as_str()) }))
        .route("/preview/host.css", get(|| async { asset("text/css; charset=utf-8", HOST_CSS) }))
        .route("/preview/widget", get(widget))
        .route("/preview/artifact", get(artifact))
        .route("/preview/ledger", get(ledger))
        .route("/preview/faults", axum::routing::post(faults))
        .route("/preview/catalog", get(catalog).post(set_catalog))
        .with_state(state)
        .merge(relay)
        .merge(chat)
        .layer(axum::middleware::from_fn(super::local_only::local_only))
}

fn no_store(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    no_store(([(header::CONTENT_TYPE, content_type)], body).into_response())
}

/// Where the host page says which mode the server is in, when that needs a warning.
const MODE_BANNER: &str = "<!--giftgenius:mode-banner-->";

async fn index(State(p): State<Arc<Preview>>) -> Response {
    let mut response = host_page(&p, INDEX_HTML);
    if matches!(p.app.auth, AuthMode::SingleUser) {
        // Everyone who reaches the server is this one user: the page must not let that pass unnoticed.
        let banner = "<p class=\"mode-warning\" role=\"alert\">SINGLE-USER MODE: everyone who reaches this \
                      server acts as one and the same user, sees their orders and buys as them. Sandbox demos \
                      only; start the server with --auth-issuer for real accounts.</p>";
        *response.body_mut() = axum::body::Body::from(INDEX_HTML.replacen(MODE_BANNER, banner, 1));
    }
    response
}

async fn callback(State(p): State<Arc<Preview>>) -> Response {
    host_page(&p, CALLBACK_HTML)
}

fn host_page(p: &Preview, html: &'static str) -> Response {
    let mut response = asset("text/html; charset=utf-8", html);
    if let Ok(value) = HeaderValue::from_str(&host_page_csp(&p.loopback_origins, &p.issuer_origin)) {
        response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, value);
    }
    // The callback URL carries the authorization code: never send it on as a Referer.
    response.headers_mut().insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

#[derive(Debug, Clone, Copy, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum CspMode {
    /// What ChatGPT is believed to allow (undocumented): inline scripts and WebAssembly.
    #[default]
    Chatgpt,
    /// The MCP Apps spec's restrictive default plus our declared `ui.csp.resourceDomains`:
    /// no `'wasm-unsafe-eval'`, so the widget must fall back to the server-rendered HTML.
    McpApps,
}

#[derive(Debug, Clone, Copy, Deserialize, Default, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
enum BridgeMode {
    #[default]
    Openai,
    McpApps,
}

#[derive(Debug, Deserialize)]
struct WidgetQuery {
    #[serde(default)]
    csp: CspMode,
    #[serde(default)]
    bridge: BridgeMode,
}

/// The enforced policy of the served widget. No wildcard; images only from our origin.
fn widget_csp(mode: CspMode, origin: &str) -> String {
    match mode {
        CspMode::Chatgpt => format!(
            "default-src 'none'; script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; \
             img-src 'self' data: blob: {origin}; font-src 'self' data:; media-src 'self' data:; connect-src 'none'; \
             object-src 'none'; frame-src 'none'; base-uri 'self'; form-action 'none'"
        ),
        // SEP-1865 "Restrictive Default", with the resourceDomains our resource declares added to
        // the directives the spec maps them to; frame-src/base-uri as the sandbox rules say.
        CspMode::McpApps => format!(
            "default-src 'none'; script-src 'self' 'unsafe-inline' {origin}; style-src 'self' 'unsafe-inline' {origin}; \
             img-src 'self' data: {origin}; font-src {origin}; media-src 'self' data: {origin}; object-src 'none'; \
             connect-src 'none'; frame-src 'none'; base-uri 'self'"
        ),
    }
}

/// Puts the shim before `</head>`, so it runs before the bootstrap and the wasm module.
fn with_openai_shim(html: &str) -> String {
    let tag = format!("<script>{OPENAI_SHIM_JS}</script>\n");
    match html.find("</head>") {
        Some(at) => format!("{}{tag}{}", &html[..at], &html[at..]),
        None => format!("{tag}{html}"),
    }
}

async fn widget(State(p): State<Arc<Preview>>, Query(q): Query<WidgetQuery>) -> Response {
    // The file on disk, so a rebuilt widget shows without restarting; the loaded copy otherwise.
    let html = match tokio::fs::read_to_string(&p.widget_html).await {
        Ok(html) => html,
        Err(_) => p.app.widget.html().to_string(),
    };
    let html = match q.bridge {
        BridgeMode::Openai => with_openai_shim(&html),
        BridgeMode::McpApps => html,
    };
    let csp = widget_csp(q.csp, &p.origin);
    let mut response = no_store(([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response());
    if let Ok(value) = HeaderValue::from_str(&csp) {
        response.headers_mut().insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

async fn artifact(State(p): State<Arc<Preview>>) -> Response {
    let body = match tokio::fs::metadata(&p.widget_html).await {
        Ok(meta) => {
            let modified = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0);
            json!({ "bytes": meta.len(), "modified_ms": modified })
        }
        Err(_) => json!({ "bytes": p.app.widget.html().len(), "modified_ms": 0 }),
    };
    no_store(Json(body).into_response())
}

async fn ledger(State(p): State<Arc<Preview>>) -> Response {
    let payments = &p.app.checkout.payments;
    match (payments.charges().await, payments.refunds().await) {
        (Ok(rows), Ok(refunds)) => {
            let charges: Vec<_> = rows
                .iter()
                .map(|r| json!({ "charge_id": r.id, "amount_minor": r.amount, "currency": r.currency.to_ascii_uppercase() }))
                .collect();
            let body = json!({ "count": rows.len(), "charges": charges, "refunds": refunds.len() });
            no_store(Json(body).into_response())
        }
        (Err(e), _) | (_, Err(e)) => {
            // The error names the provider's URL: the log has it, the page gets the fact only.
            tracing::warn!(error = ?e, "the preview could not read the payment provider's ledger");
            (StatusCode::BAD_GATEWAY, "The payment provider's ledger could not be read; the server log says why.")
                .into_response()
        }
    }
}

#[derive(Debug, Deserialize)]
struct FaultsBody {
    plan: String,
}

async fn faults(State(p): State<Arc<Preview>>, Json(body): Json<FaultsBody>) -> Response {
    match p.app.checkout.payments.set_faults(&body.plan).await {
        Ok(()) => {
            tracing::info!(plan = %body.plan, "preview: sandbox payment faults set");
            no_store(Json(json!({ "plan": body.plan })).into_response())
        }
        Err(e) => (StatusCode::BAD_REQUEST, e).into_response(),
    }
}

async fn catalog(State(p): State<Arc<Preview>>) -> Response {
    if p.catalog_down.load(Ordering::SeqCst) {
        return (StatusCode::SERVICE_UNAVAILABLE, "preview catalog is down").into_response();
    }
    no_store(([(header::CONTENT_TYPE, "application/json")], PREVIEW_CATALOG).into_response())
}

#[derive(Debug, Deserialize)]
struct CatalogBody {
    mode: String,
}

async fn set_catalog(State(p): State<Arc<Preview>>, Json(body): Json<CatalogBody>) -> Response {
    let down = match body.mode.as_str() {
        "ok" | "up" => false,
        "down" | "503" => true,
        other => return (StatusCode::BAD_REQUEST, format!("unknown mode {other:?} (ok, down)")).into_response(),
    };
    p.catalog_down.store(down, Ordering::SeqCst);
    // The next suggestion asks again instead of reusing the kept answer.
    p.app.suggester.sources.forget_cached();
    no_store(Json(json!({ "mode": if down { "down" } else { "ok" } })).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preview_catalog_is_a_valid_merchant_file() {
        let file: serde_json::Value = serde_json::from_str(PREVIEW_CATALOG).unwrap();
        assert_eq!(file["gifts"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn the_mcp_apps_policy_refuses_webassembly_and_names_no_wildcard() {
        let strict = widget_csp(CspMode::McpApps, "http://127.0.0.1:8000");
        assert!(!strict.contains("wasm-unsafe-eval"));
        assert!(!strict.contains('*'));
        assert!(widget_csp(CspMode::Chatgpt, "http://127.0.0.1:8000").contains("'wasm-unsafe-eval'"));
    }

    #[test]
    fn the_host_page_connects_only_to_us_and_the_configured_issuer() {
        let local = host_page_csp("http://localhost:8000", "");
        assert!(local.contains("connect-src 'self';"), "{local}");
        let verified = host_page_csp("http://localhost:8000", "http://127.0.0.1:9000");
        assert!(verified.contains("connect-src 'self' http://127.0.0.1:9000;"), "{verified}");
        assert!(verified.contains("form-action 'none'"));
    }

    #[test]
    fn the_shim_goes_into_the_head() {
        let html = with_openai_shim("<html><head><title>x</title></head><body></body></html>");
        assert!(html.find("<script>").unwrap() < html.find("</head>").unwrap());
    }
}
