//! Server configuration: command-line flags, each with an environment variable.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use crate::client_addr::{ClientAddressHeader, ProxyRange, TrustedProxies};

/// Which MIME type (and so which host vocabulary) the widget resource is served as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum WidgetMime {
    /// `text/html+skybridge`: the Apps SDK's own type, which ChatGPT still accepts.
    Skybridge,
    /// `text/html;profile=mcp-app`: MCP Apps, read by ChatGPT, Claude, VS Code, Goose…
    #[default]
    McpApp,
}

impl WidgetMime {
    pub const fn mime_type(self) -> &'static str {
        match self {
            WidgetMime::Skybridge => "text/html+skybridge",
            WidgetMime::McpApp => "text/html;profile=mcp-app",
        }
    }
}

/// Which payment provider charges (`giftgenius_commerce::payments`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum PaymentsKind {
    /// The SANDBOX provider (`giftgenius-sandbox-pay`): started beside the database, or
    /// --payments-url. No real money.
    #[default]
    Sandbox,
    /// Stripe's API (`--stripe-api-base`, `--stripe-secret-key-file`): real money with live keys.
    Stripe,
}

pub use crate::telemetry::LogFormat;

/// GiftGenius MCP server.
#[derive(Debug, Clone, Parser)]
#[command(name = "giftgenius-server", version, about)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "GIFTGENIUS_HOST", default_value = "127.0.0.1")]
    pub host: String,
    /// Port to listen on (0 picks a free one).
    #[arg(long, env = "GIFTGENIUS_PORT", default_value_t = 8000)]
    pub port: u16,
    /// The URL clients reach this server at (e.g. your HTTPS tunnel). Used for image URLs, the
    /// widget CSP and the allowed Host header. Defaults to http://HOST:PORT.
    #[arg(long, env = "GIFTGENIUS_PUBLIC_URL", global = true)]
    pub public_url: Option<String>,
    /// SQLite database file (created on first run) or a postgres:// URL.
    #[arg(long, env = "GIFTGENIUS_DB", default_value = "giftgenius.db", global = true)]
    pub db: String,
    /// A file whose first line is the database (`postgres://…` with its password, or a SQLite
    /// path), read at start instead of --db: how a container takes it from a mounted secret
    /// (`/run/secrets/…`) without putting the password in its environment or command line.
    #[arg(long, env = "GIFTGENIUS_DB_FILE", global = true, conflicts_with = "db", value_name = "FILE")]
    pub db_file: Option<PathBuf>,
    /// MIME type of the widget resource.
    #[arg(long, env = "GIFTGENIUS_WIDGET_MIME", value_enum, default_value_t = WidgetMime::McpApp)]
    pub widget_mime: WidgetMime,
    /// The widget's sandbox domain for hosts that need one declared (`ui.domain` and
    /// `openai/widgetDomain`), e.g. for a ChatGPT app submission. Left out by default: hosts
    /// validate it, and Claude shows no view when it is not the domain Claude derives.
    #[arg(long, env = "GIFTGENIUS_WIDGET_DOMAIN")]
    pub widget_domain: Option<String>,
    /// The packed widget HTML built by `cargo xtask widget`. Default: the first of
    /// `./dist/giftgenius-widget.html`, `giftgenius-widget.html` next to this executable, and the
    /// workspace's `dist/` when this executable is in its `target/<profile>/`.
    #[arg(long, env = "GIFTGENIUS_WIDGET_HTML")]
    pub widget_html: Option<PathBuf>,
    /// How long an order draft stays valid.
    #[arg(long, env = "GIFTGENIUS_DRAFT_TTL_SECS", default_value_t = 1800)]
    pub draft_ttl_secs: u64,
    /// How long a call may hold an idempotency key before a retry may take it over.
    #[arg(long, env = "GIFTGENIUS_IDEMPOTENCY_LEASE_MS", default_value_t = 30_000)]
    pub idempotency_lease_ms: u64,
    /// How long finished idempotency keys are kept (at least 24).
    #[arg(long, env = "GIFTGENIUS_IDEMPOTENCY_RETENTION_HOURS", default_value_t = 24, value_parser = clap::value_parser!(u64).range(24..))]
    pub idempotency_retention_hours: u64,
    /// The payment provider's base URL (the SANDBOX provider `giftgenius-sandbox-pay`, or
    /// anything speaking its API). Without it the server starts its own sandbox provider.
    #[arg(long, env = "GIFTGENIUS_PAYMENTS_URL", global = true)]
    pub payments_url: Option<String>,
    /// Which payment provider charges: the SANDBOX one (no real money; the default, so nothing
    /// needs configuring) or Stripe (the --stripe-* flags).
    #[arg(long, env = "GIFTGENIUS_PAYMENTS", value_enum, default_value_t = PaymentsKind::Sandbox, global = true)]
    pub payments: PaymentsKind,
    /// Stripe's API base URL (`--payments stripe`); a Stripe emulator's (localstripe) in tests.
    #[arg(long, env = "GIFTGENIUS_STRIPE_API_BASE", default_value = "https://api.stripe.com", global = true)]
    pub stripe_api_base: String,
    /// The file holding the Stripe secret key (its first line, `sk_…` or `rk_…`), for `--payments
    /// stripe`. Never logged, never in an answer or an error.
    #[arg(long, env = "GIFTGENIUS_STRIPE_SECRET_KEY_FILE", global = true)]
    pub stripe_secret_key_file: Option<PathBuf>,
    /// The Stripe publishable key (`pk_…`) the hosted card page gives Stripe.js.
    #[arg(long, env = "GIFTGENIUS_STRIPE_PUBLISHABLE_KEY", global = true)]
    pub stripe_publishable_key: Option<String>,
    /// The file holding the Stripe webhook signing secrets (`whsec_…`, one a line: several while
    /// one is rotated).
    #[arg(long, env = "GIFTGENIUS_STRIPE_WEBHOOK_SECRET_FILE", global = true)]
    pub stripe_webhook_secret_file: Option<PathBuf>,
    /// How far (seconds, either way) a Stripe webhook's signed timestamp may be from now:
    /// outside it, the event is refused as stale (a replay of a captured delivery, or a clock far
    /// off). Stripe's libraries default to 300.
    #[arg(long, env = "GIFTGENIUS_STRIPE_WEBHOOK_TOLERANCE_SECS", default_value_t = 300, global = true)]
    pub stripe_webhook_tolerance_secs: u64,
    /// How long an order may wait for the person to confirm its payment with their bank (3-D
    /// Secure) before the reconciler cancels the payment at the provider and declines it.
    #[arg(long, env = "GIFTGENIUS_AUTHENTICATION_WINDOW_SECS", default_value_t = 3600, global = true)]
    pub authentication_window_secs: u64,
    /// Where the hosted card page loads Stripe.js from (its CSP allows that origin).
    #[arg(long, env = "GIFTGENIUS_STRIPE_JS_URL", default_value = "https://js.stripe.com/v3/", global = true)]
    pub stripe_js_url: String,
    /// How long one request to the payment provider may take. The idempotency lease must be
    /// longer by at least 1000 ms.
    #[arg(long, env = "GIFTGENIUS_PAYMENTS_TIMEOUT_MS", default_value_t = 10_000, global = true)]
    pub payments_timeout_ms: u64,
    /// The sandbox provider this server starts (no --payments-url): time each charge takes.
    /// Stored in the sandbox's database; without the flag the stored value stays (first run: 150).
    #[arg(long, env = "GIFTGENIUS_SANDBOX_LATENCY_MS")]
    pub sandbox_latency_ms: Option<u64>,
    /// The sandbox provider this server starts (no --payments-url): injected failures, e.g.
    /// "5xx*2,timeout*1" or "decline". Stored like the latency.
    #[arg(long, env = "GIFTGENIUS_SANDBOX_FAULTS")]
    pub sandbox_faults: Option<String>,
    /// How often this server settles orders left pending (0 = never; `giftgenius-server
    /// reconcile` does one pass on demand).
    #[arg(long, env = "GIFTGENIUS_RECONCILE_INTERVAL_SECS", default_value_t = 60)]
    pub reconcile_interval_secs: u64,
    /// How long an order may stay pending before the reconciler asks the provider about it.
    #[arg(long, env = "GIFTGENIUS_RECONCILE_AFTER_SECS", default_value_t = 600, global = true)]
    pub reconcile_after_secs: u64,
    /// The fulfilment cut-off: a paid order may be cancelled (and refunded) until this long after
    /// it was placed; after that the merchant is preparing it.
    #[arg(long, env = "GIFTGENIUS_CANCEL_WINDOW_SECS", default_value_t = 3600)]
    pub cancel_window_secs: u64,
    /// How long an order keeps its personal data (recipient, address, gift message, account);
    /// then it is anonymized and only its financial record stays.
    #[arg(long, env = "GIFTGENIUS_ORDER_RETENTION_DAYS", default_value_t = 365, global = true)]
    pub order_retention_days: u64,
    /// How long the financial record of an anonymized order is kept (amount, currency, gift,
    /// dates, payment ids, destination country): ten years covers the longest common
    /// bookkeeping duty (e.g. Germany's HGB §257, 10 years).
    #[arg(long, env = "GIFTGENIUS_FINANCIAL_RETENTION_DAYS", default_value_t = 3650, global = true)]
    pub financial_retention_days: u64,
    /// How long refund records are kept (financial records too).
    #[arg(long, env = "GIFTGENIUS_REFUND_RETENTION_DAYS", default_value_t = 3650, global = true)]
    pub refund_retention_days: u64,
    /// A saved address nobody used again for this long is deleted.
    #[arg(long, env = "GIFTGENIUS_ADDRESS_RETENTION_DAYS", default_value_t = 365, global = true)]
    pub address_retention_days: u64,
    /// Suggest from the built-in merchants' catalogs: `true` or `false` (`--builtin-catalog false`
    /// leaves only the HTTP catalogs). Takes a value.
    #[arg(long, env = "GIFTGENIUS_BUILTIN_CATALOG", default_value_t = true, action = clap::ArgAction::Set, value_name = "true|false")]
    pub builtin_catalog: bool,
    /// The sentence-embedding model's folder (all-MiniLM-L6-v2: model.safetensors,
    /// tokenizer.json, config.json), which `cargo xtask setup` installs. Without it the server
    /// does not start, unless `--without-model` says to rank by words only.
    #[arg(long, env = "GIFTGENIUS_MODEL_DIR", global = true)]
    pub model_dir: Option<std::path::PathBuf>,
    /// Rank suggestions by the catalog's words only, without the embedding model: interests
    /// phrased in other words than the catalog's ("stargazing" for astronomy) then find less.
    /// Logged as a warning at start.
    #[arg(long, env = "GIFTGENIUS_WITHOUT_MODEL", global = true)]
    pub without_model: bool,
    /// Where the embeddings of catalog words are kept between starts (default
    /// ~/.cache/giftgenius/embeddings/all-MiniLM-L6-v2-words.bin): a restart or a reload embeds
    /// only the words it has not seen. Only catalog words are written there, never a person's.
    #[arg(long, env = "GIFTGENIUS_EMBEDDING_CACHE", global = true)]
    pub embedding_cache: Option<std::path::PathBuf>,
    /// A catalog file to suggest and sell from, next to the built-in merchants: the catalog
    /// schema as a JSON array (`.json`) or JSON Lines (`.jsonl`), or a Google Merchant Center
    /// TSV feed (`.tsv`); see docs/catalog.md. Repeatable or comma-separated. Reloaded when a
    /// file changes and on SIGHUP.
    #[arg(long = "catalog", env = "GIFTGENIUS_CATALOGS", value_delimiter = ',')]
    pub catalogs: Vec<std::path::PathBuf>,
    /// A bad row in a catalog file: `skip` it (logged with file, line and field) or `refuse`
    /// the whole catalog (the server does not start; a reload keeps the previous catalog).
    #[arg(long, env = "GIFTGENIUS_CATALOG_BAD_ROWS", value_enum, default_value = "skip")]
    pub catalog_bad_rows: giftgenius_catalog::live::BadRows,
    /// How often catalog files are checked for changes (0 = only on SIGHUP).
    #[arg(long, env = "GIFTGENIUS_CATALOG_POLL_SECS", default_value_t = 2)]
    pub catalog_poll_secs: u64,
    /// HTTP catalog answering GET with the catalog schema (a JSON array of gifts) or a merchant
    /// file (`{"merchant":{…},"gifts":[…]}`); repeatable or comma-separated. Asked on every
    /// suggest_gifts call next to the local catalog (suggested, not sold).
    #[arg(long = "catalog-url", env = "GIFTGENIUS_CATALOG_URLS", value_delimiter = ',')]
    pub catalog_urls: Vec<String>,
    /// Gift photos: fetched from the catalog's image URLs and served from `/images/{id}.jpg`.
    #[command(flatten)]
    pub images: crate::photos::PhotoSettings,
    /// How long one catalog source may take before it counts as timed out.
    #[arg(long, env = "GIFTGENIUS_SOURCE_TIMEOUT_MS", default_value_t = 800)]
    pub source_timeout_ms: u64,
    /// Overall deadline of suggest_gifts for all sources together.
    #[arg(long, env = "GIFTGENIUS_SUGGEST_DEADLINE_MS", default_value_t = 1500)]
    pub suggest_deadline_ms: u64,
    /// suggest_gifts calls allowed per account per UTC day (0 = unlimited).
    #[arg(long, env = "GIFTGENIUS_DAILY_SUGGESTION_LIMIT", default_value_t = 200)]
    pub daily_suggestion_limit: u32,
    /// How often suggestions counted in memory are written to the database (the daily limit
    /// costs no write per call; see limits.rs for the bound across replicas).
    #[arg(long, env = "GIFTGENIUS_USAGE_FLUSH_MS", default_value_t = 1000)]
    pub usage_flush_ms: u64,
    /// prepare_order calls allowed per account per hour (0 = unlimited).
    #[arg(long, env = "GIFTGENIUS_HOURLY_DRAFT_LIMIT", default_value_t = 60)]
    pub hourly_draft_limit: u32,
    /// create_checkout_session calls allowed per account per hour (0 = unlimited).
    #[arg(long, env = "GIFTGENIUS_HOURLY_CHECKOUT_LIMIT", default_value_t = 30)]
    pub hourly_checkout_limit: u32,
    /// reopen_order_draft, remove_saved_card and card page loads allowed per account per hour
    /// (each asks the payment provider about the account's saved card; 0 = unlimited).
    #[arg(long, env = "GIFTGENIUS_HOURLY_PAYMENT_LOOKUP_LIMIT", default_value_t = 120)]
    pub hourly_payment_lookup_limit: u32,
    /// complete_checkout calls (the host's payment sheet) allowed per account per draft per
    /// hour, every attempt counted before the provider is asked (0 = unlimited).
    #[arg(long, env = "GIFTGENIUS_HOURLY_SHEET_PAYMENT_LIMIT", default_value_t = 5)]
    pub hourly_sheet_payment_limit: u32,
    /// The OAuth 2.1 authorization server whose JWT access tokens identify callers (its issuer
    /// identifier, exactly as in its metadata). Without it the server runs in local mode, allowed
    /// only on a loopback public URL (or everyone is one user with --single-user).
    #[arg(long, env = "GIFTGENIUS_AUTH_ISSUER")]
    pub auth_issuer: Option<String>,
    /// The audience access tokens must carry (RFC 8707). Default: the public `/mcp` URL.
    #[arg(long, env = "GIFTGENIUS_AUTH_AUDIENCE")]
    pub auth_audience: Option<String>,
    /// Without an issuer on a non-loopback public URL: everyone who reaches the server acts as
    /// ONE AND THE SAME user (a quick tunnel demo with sandbox payments). Loudly warned about.
    #[arg(long, env = "GIFTGENIUS_SINGLE_USER")]
    pub single_user: bool,
    /// Keys for confirmation tokens: one `KEY_ID SECRET` per line (secret ≥ 32 bytes); the first
    /// signs, all verify (rotate by putting a new key first). Required unless in local mode,
    /// where a key generated into the database is used.
    #[arg(long, env = "GIFTGENIUS_TOKEN_SECRET_FILE")]
    pub token_secret_file: Option<PathBuf>,
    /// How long an HTTP catalog's good answer is reused (0 = ask on every suggestion; concurrent
    /// suggestions share one fetch in flight per catalog either way).
    #[arg(long, env = "GIFTGENIUS_CATALOG_CACHE_TTL_SECS", default_value_t = 60)]
    pub catalog_cache_ttl_secs: u64,
    /// HTTP catalog fetches running at once, across all catalogs (0 = no cap). Waiting for a
    /// slot counts against --source-timeout-ms.
    #[arg(long, env = "GIFTGENIUS_CATALOG_MAX_CONCURRENT_FETCHES", default_value_t = 4)]
    pub catalog_max_concurrent_fetches: usize,
    /// A connection must deliver each request's headers within this time (an idle keep-alive
    /// connection: its next request's), or it is closed (0 = off).
    #[arg(long, env = "GIFTGENIUS_HEADER_READ_TIMEOUT_MS", default_value_t = 10_000)]
    pub header_read_timeout_ms: u64,
    /// Time from a request's headers to its response's head: the body upload and the handling
    /// (408 when the body did not arrive, 503 when no answer was ready). Streams already
    /// answered (SSE) are not cut. 0 = off.
    #[arg(long, env = "GIFTGENIUS_REQUEST_TIMEOUT_MS", default_value_t = 30_000)]
    pub request_timeout_ms: u64,
    /// On SIGTERM, how long `/readyz` answers 503 `draining` while still serving, so load
    /// balancers stop sending before the listener closes (Ctrl-C skips it).
    #[arg(long, env = "GIFTGENIUS_SHUTDOWN_DELAY_SECS", default_value_t = 5)]
    pub shutdown_delay_secs: u64,
    /// After the listener closes, how long calls in flight may take to finish; then (or at a
    /// second SIGTERM) the server exits at once and the reconciler settles what was left.
    #[arg(long, env = "GIFTGENIUS_SHUTDOWN_GRACE_SECS", default_value_t = 20)]
    pub shutdown_grace_secs: u64,
    /// Open connections at most; at the cap new clients wait to be accepted (0 = no cap).
    #[arg(long, env = "GIFTGENIUS_MAX_CONNECTIONS", default_value_t = 1024)]
    pub max_connections: usize,
    /// Header fields one request may carry; more are answered 431 and the connection closed.
    #[arg(long, env = "GIFTGENIUS_MAX_REQUEST_HEADERS", default_value_t = 100, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(16..=1000))]
    pub max_request_headers: usize,
    /// Bytes a request's line and headers may take together; more are answered 431 and the
    /// connection closed (8192 at least).
    #[arg(long, env = "GIFTGENIUS_MAX_REQUEST_HEADER_BYTES", default_value_t = 32 * 1024, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(8192..=1024 * 1024))]
    pub max_request_header_bytes: usize,
    /// Requests per minute per client address (an IPv6 client's /64), bursts up to the same
    /// number, then 429. Every request counts but those whose access token verified (verified
    /// mode) and the probes /healthz, /livez, /readyz (0 = off).
    #[arg(long, env = "GIFTGENIUS_RATE_LIMIT_PER_MINUTE", default_value_t = 600)]
    pub rate_limit_per_minute: u32,
    /// Proxies whose forwarding header (--client-address-header) names the client: IP addresses
    /// or CIDR blocks, repeatable or comma-separated. Others' forwarding headers are ignored.
    #[arg(long = "trusted-proxies", env = "GIFTGENIUS_TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Vec<String>,
    /// Crash points for exactly-once tests (comma-separated); never set in production.
    #[arg(long, env = "GIFTGENIUS_FAILPOINTS", default_value = "", hide = true)]
    pub failpoints: String,
    /// Serve MCP over stdin/stdout (one client); the HTTP side (images, checkout pages,
    /// /healthz) still listens on --host/--port so the links in results work.
    #[arg(long, env = "GIFTGENIUS_STDIO")]
    pub stdio: bool,
    /// Also serve the local host emulator at /preview (and its test endpoints: payment ledger,
    /// fault injection, a failing catalog source). A development aid; never in production.
    #[arg(long, env = "GIFTGENIUS_PREVIEW")]
    pub preview: bool,
    /// Let --preview start on a non-loopback --host (`0.0.0.0`, to serve /mcp to the network
    /// while the developer browses the preview here). The /preview routes still answer only
    /// requests from a loopback peer addressed to a loopback name.
    #[arg(long, env = "GIFTGENIUS_ALLOW_REMOTE_PREVIEW")]
    pub allow_remote_preview: bool,
    /// The preview's chat panel: the loopback URL (`http://127.0.0.1:PORT`) of a
    /// `giftgenius-chat --listen` process, which `/preview/chat/*` forwards to (`cargo xtask
    /// preview` starts one and sets this). Only with --preview; the chat loop and its model keys
    /// stay in that process.
    #[arg(long, env = "GIFTGENIUS_PREVIEW_CHAT_URL")]
    pub preview_chat_url: Option<String>,
    /// Log format on stderr.
    #[arg(long, env = "GIFTGENIUS_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text, global = true)]
    pub log_format: LogFormat,
    /// Export traces over OTLP/HTTP (protobuf) to this collector, e.g. `http://127.0.0.1:4318`
    /// (`/v1/traces` is added to a URL without a path). Off when unset. Also handed to the
    /// sandbox provider this server starts.
    #[arg(long, env = "GIFTGENIUS_OTLP_ENDPOINT", global = true)]
    pub otlp_endpoint: Option<String>,
    // --- The payment provider's secret (issue 23, item 4) ---
    /// The file holding the payment provider's secret (its first line), sent as
    /// `Authorization: Bearer` on every request: the provider's own `--admin-token-file`
    /// (`giftgenius-sandbox-pay` writes one beside its database, e.g. `pay.token`). Required with
    /// --payments-url; without --payments-url the sandbox this server starts gets a fresh secret
    /// through a pipe instead.
    #[arg(long, env = "GIFTGENIUS_PAYMENTS_TOKEN_FILE", global = true)]
    pub payments_token_file: Option<PathBuf>,
    /// The file holding the bearer token `/metrics` asks for (its first line, at least 32
    /// printable characters): Prometheus sends it with `authorization: {credentials_file: …}`.
    /// Without it `/metrics` answers anyone who reaches the port (bind --host or firewall it so
    /// that only the scraper does).
    #[arg(long, env = "GIFTGENIUS_METRICS_TOKEN_FILE")]
    pub metrics_token_file: Option<PathBuf>,
    /// The file holding the bearer token of the operator's API (`/operator/orders/{id}/…`: mark
    /// orders processing, shipped, completed, refund them), its first line, at least 32
    /// printable characters. Without it the API is not served (404); `giftgenius-server orders
    /// …` does the same on the database.
    #[arg(long, env = "GIFTGENIUS_OPERATOR_TOKEN_FILE")]
    pub operator_token_file: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,

    // ── The Agentic Commerce Protocol (issue 25, docs/acp.md) ──
    /// The agent platforms allowed to call `/acp/…`: a JSON file holding a list of `{name,
    /// api_key | api_key_sha256, webhook_url, webhook_secret}`. Without it the ACP routes and
    /// `/.well-known/acp.json` are not served (404).
    #[arg(long, env = "GIFTGENIUS_ACP_PLATFORMS", global = true)]
    pub acp_platforms: Option<PathBuf>,
    /// Our merchant id towards ACP platforms and payment providers.
    #[arg(long, env = "GIFTGENIUS_ACP_MERCHANT_ID", default_value = "giftgenius")]
    pub acp_merchant_id: String,
    /// How long an ACP checkout session lives after its creation (e.g. `60m`, `2h`).
    #[arg(long, env = "GIFTGENIUS_ACP_SESSION_TTL", default_value = "60m", value_parser = humantime::parse_duration)]
    pub acp_session_ttl: std::time::Duration,
    /// Tax on ACP sessions by destination country, in basis points: `US=725,DE=1900` (7.25 %,
    /// 19 %) on items plus shipping. A country not listed pays none; without it no session has
    /// a tax line.
    #[arg(long, env = "GIFTGENIUS_ACP_TAX_BPS")]
    pub acp_tax_bps: Option<String>,

    // ── Order events (issue 25 item 5, docs/acp.md §10; ACP orders use their platform's webhook) ──
    /// Where app orders' events go: `order_create` when an order is paid, `order_update` when it
    /// is cancelled, each with the full order as an ACP Order, signed (`Merchant-Signature`).
    /// Without it app orders announce nothing. Needs --order-webhook-secret-file.
    #[arg(long, env = "GIFTGENIUS_ORDER_WEBHOOK_URL", global = true)]
    pub order_webhook_url: Option<String>,
    /// The file whose first line is the secret that signs app orders' events.
    #[arg(long, env = "GIFTGENIUS_ORDER_WEBHOOK_SECRET_FILE", global = true)]
    pub order_webhook_secret_file: Option<PathBuf>,
    /// How long an order event that keeps failing is retried (from when it was written, or
    /// redelivered) before it is dead, e.g. `24h`.
    #[arg(long, env = "GIFTGENIUS_WEBHOOK_RETRY_HORIZON", default_value = "24h", value_parser = humantime::parse_duration)]
    pub webhook_retry_horizon: std::time::Duration,
    /// The first back-off ceiling of a failed order event (doubling per attempt, capped at 1 h,
    /// full jitter), e.g. `10s`.
    #[arg(long, env = "GIFTGENIUS_WEBHOOK_RETRY_BASE", default_value = "10s", value_parser = humantime::parse_duration)]
    pub webhook_retry_base: std::time::Duration,
    /// How long one webhook request may take (connecting, sending, the answer).
    #[arg(long, env = "GIFTGENIUS_WEBHOOK_TIMEOUT_MS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(100..=120_000))]
    pub webhook_timeout_ms: u64,
    /// How often this server looks for order events to post (0 = never: other replicas post them).
    #[arg(long, env = "GIFTGENIUS_WEBHOOK_POLL_MS", default_value_t = 1000)]
    pub webhook_poll_ms: u64,

    // ── The product feed's receivers (issue 44 item 1, docs/feed.md) ──
    /// Who gets the product feed's changes: a JSON file holding a list of `{name, url, feed_id,
    /// token_file}`; each change of a price, a stock level or a gift is pushed to each as
    /// `PATCH {url}/feeds/{feed_id}/products` with `Authorization: Bearer <token_file's first
    /// line>`, from a durable table, retried as order events are (--webhook-retry-*). Without
    /// it nothing is pushed (`feed export` still writes the files).
    #[arg(long, env = "GIFTGENIUS_FEED_RECEIVERS", global = true)]
    pub feed_receivers: Option<PathBuf>,
    /// How often this server looks for feed changes to push (0 = never: other replicas push them).
    #[arg(long, env = "GIFTGENIUS_FEED_POLL_MS", default_value_t = 1000)]
    pub feed_poll_ms: u64,
    /// How often the whole catalog is compared with what each feed receiver was last sent (it
    /// is also compared at start and after a catalog reload; a sale or a cancel is pushed
    /// without waiting for it), in seconds.
    #[arg(long, env = "GIFTGENIUS_FEED_FULL_SWEEP_SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub feed_full_sweep_secs: u64,

    // ── The app directory and browser-based hosts (issue 23 items 8 and 10) ──
    /// The token the app directory's domain check expects at
    /// `/.well-known/openai-apps-challenge` (served as text/plain; 404 when unset).
    #[arg(long, env = "GIFTGENIUS_APPS_CHALLENGE_TOKEN")]
    pub apps_challenge_token: Option<String>,
    /// Who operates this deployment, as the privacy, terms and support pages name it (the legal
    /// name).
    #[arg(long, env = "GIFTGENIUS_OPERATOR_NAME", default_value = "GiftGenius (local development)")]
    pub operator_name: String,
    /// How people reach the operator (an e-mail address or a URL), on the same pages.
    #[arg(long, env = "GIFTGENIUS_OPERATOR_CONTACT", default_value = "the person running this server")]
    pub operator_contact: String,
    /// The server's name in the MCP registry, reverse-DNS (`io.github.OWNER/giftgenius`); used by
    /// `giftgenius-server registry-json`.
    #[arg(long, env = "GIFTGENIUS_REGISTRY_NAME", global = true)]
    pub registry_name: Option<String>,
    /// The container image `registry-json` lists as an OCI package beside the remote, e.g.
    /// `ghcr.io/OWNER/giftgenius:0.1.0` (`cargo xtask image` builds it, labelled with
    /// `io.modelcontextprotocol.server.name`, which must equal --registry-name).
    #[arg(long, env = "GIFTGENIUS_REGISTRY_IMAGE", global = true, value_name = "REFERENCE")]
    pub registry_image: Option<String>,
    /// Browser origins (exact `scheme://host[:port]`, comma-separated) allowed to call `/mcp`
    /// cross-origin: they pass the Origin check and get CORS answers. None by default.
    #[arg(long = "cors-origins", env = "GIFTGENIUS_CORS_ORIGINS", value_delimiter = ',')]
    pub cors_origins: Vec<String>,

    // --- Network edge (issue 23: who may connect, and as which address) ---
    /// The header a trusted proxy (--trusted-proxies) names the client in: `forwarded` (RFC
    /// 7239), `x-forwarded-for`, or `none` (the peer is the client). Only this header is read.
    /// Default: `x-forwarded-for` when --trusted-proxies is set, else `none`.
    #[arg(long, env = "GIFTGENIUS_CLIENT_ADDRESS_HEADER", value_enum)]
    pub client_address_header: Option<ClientAddressHeader>,
    /// Open connections at most from one peer address (an IPv6 peer's /64); more are closed at
    /// once, so one client with slow headers cannot take every --max-connections slot. Trusted
    /// proxies (every client behind them shares their address) and loopback peers (this
    /// machine) are exempt. 0 = no cap.
    #[arg(long, env = "GIFTGENIUS_MAX_CONNECTIONS_PER_PEER", default_value_t = 64)]
    pub max_connections_per_peer: usize,

    // --- Token lifetimes and fail-closed auth (issue 23, items 6 and 7) ---
    /// How long the widget's confirmation token of a draft stays valid (at least 1800: the chat
    /// host waits up to 25 minutes for a "yes").
    #[arg(long, env = "GIFTGENIUS_CONFIRMATION_TOKEN_TTL_SECS", default_value_t = 3600, value_parser = token_ttl_secs)]
    pub confirmation_token_ttl_secs: u64,
    /// How long the widget's cancel token of an order stays valid (at least 1800).
    #[arg(long, env = "GIFTGENIUS_CANCEL_TOKEN_TTL_SECS", default_value_t = 3600, value_parser = token_ttl_secs)]
    pub cancel_token_ttl_secs: u64,
    /// How long the widget's Delete my data token stays valid (at least 1800); it is spent by its
    /// first use either way.
    #[arg(long, env = "GIFTGENIUS_DELETE_TOKEN_TTL_SECS", default_value_t = 3600, value_parser = token_ttl_secs)]
    pub delete_token_ttl_secs: u64,
    /// Accept access tokens whose header says `typ: JWT` (or none) instead of RFC 9068's
    /// `at+jwt`: for authorization servers that issue plain JWTs (Auth0's default token profile,
    /// Keycloak, Microsoft Entra ID). Other `typ` values are refused either way.
    #[arg(long, env = "GIFTGENIUS_ACCEPT_PLAIN_JWT")]
    pub accept_plain_jwt: bool,
}

/// The shortest and longest lifetime of a widget token, in seconds: the chat host waits up to
/// 25 minutes for a person's "yes", and a token that outlives a week is one nobody meant to keep.
pub const TOKEN_TTL_SECS: std::ops::RangeInclusive<u64> = 1800..=7 * 24 * 3600;

/// Parses a token lifetime, refusing one outside [`TOKEN_TTL_SECS`] with the reason.
fn token_ttl_secs(text: &str) -> Result<u64, String> {
    let secs: u64 = text.trim().parse().map_err(|_| format!("`{text}` is not a number of seconds"))?;
    if TOKEN_TTL_SECS.contains(&secs) {
        Ok(secs)
    } else {
        Err(format!(
            "{secs} is outside {}..={} seconds: a token must outlive the chat host's 25-minute wait for the \
             user's \"yes\" (at least 1800) and live at most a week",
            TOKEN_TTL_SECS.start(),
            TOKEN_TTL_SECS.end()
        ))
    }
}

/// What to run instead of the server.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum Command {
    /// One reconcile pass over the database (--db) against the payment provider
    /// (--payments-url, or the sandbox beside the database), then exit; prints what it did as
    /// JSON. Safe while servers run on the same database. The orders it settles write their
    /// events: give it the servers' --public-url, --acp-platforms and --order-webhook-* flags.
    Reconcile,
    /// Deletes one account's personal data (saved address, drafts, idempotency keys, checkout
    /// sessions) and anonymizes its orders and refunds, keeping the financial records for
    /// --financial-retention-days; prints what it did as JSON. What the delete_my_data tool does,
    /// for a request that reaches an operator.
    #[command(group(clap::ArgGroup::new("whose").required(true).args(["subject", "acp_buyer_email"])))]
    DeleteMyData {
        /// The account as the server stores it: `ISSUER#SUB` (verified mode), `local` or
        /// `local:NAME` (local mode), `single-user`.
        #[arg(long)]
        subject: Option<String>,
        /// Instead of an account: a buyer who bought through an ACP agent platform, by the email
        /// the platform gave (their checkout sessions, the platforms' stored answers about them,
        /// and their orders' delivery details).
        #[arg(long)]
        acp_buyer_email: Option<String>,
    },
    /// Prints the MCP registry's server.json for this deployment (a remote server over
    /// Streamable HTTP at --public-url, named --registry-name, this build's version, and with
    /// --registry-image the container image as an OCI package), then exits.
    RegistryJson,
    /// Applies the database's migrations (--db or --db-file) and exits, printing what it did as
    /// JSON: a deployment's migration step (a Kubernetes Job, a compose service) before the
    /// replicas start. Replicas migrate at start too; with this step first, none of them waits
    /// on another's migration, and a migration that fails stops the rollout before any replica.
    Migrate,
    /// The order events (webhooks) outbox in --db: list events, or send some again.
    #[command(subcommand)]
    Outbox(OutboxCommand),
    /// An order's life after payment, on --db: show it, mark it processing, shipped or
    /// completed, or refund part of it; prints what it did as JSON. What the operator's API
    /// does; each change writes its event (give it the servers' --public-url, --acp-platforms
    /// and --order-webhook-* flags; the servers post it), and a refund goes through the payment
    /// provider (--payments-url, or the sandbox beside the database).
    #[command(subcommand)]
    Orders(OrdersCommand),
    /// The ACP product feed of the catalog (--catalog files, the built-in gifts unless
    /// --builtin-catalog false), with the stock left in --db; links on --public-url.
    #[command(subcommand)]
    Feed(FeedCommand),
}

/// `giftgenius-server feed …`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum FeedCommand {
    /// Writes `products.jsonl` (one ACP 2026-04-17 `Product` per gift, in id order) and
    /// `metadata.json` into --out, each written beside its name and renamed over it; prints
    /// what it wrote as JSON.
    Export {
        /// The folder to write into (created if missing).
        #[arg(long)]
        out: PathBuf,
        /// The feed's id in `metadata.json`.
        #[arg(long, default_value = "giftgenius")]
        feed_id: String,
        /// The market the feed targets (ISO 3166-1 alpha-2, e.g. `US`), if one.
        #[arg(long, value_parser = country_code)]
        target_country: Option<String>,
    },
    /// Lists the products pushed or waiting to be pushed to the feed receivers (--db), as JSON
    /// lines, by receiver and product.
    Pushes {
        /// Only this receiver's (its name in --feed-receivers).
        #[arg(long)]
        receiver: Option<String>,
        /// Only those with this status.
        #[arg(long, value_enum)]
        status: Option<OutboxStatusArg>,
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        limit: u32,
    },
    /// Pushes a receiver's products again (pending at once, attempts and retry horizon from
    /// now; the running servers send them): the products named, or every dead one (--dead),
    /// or all of them (--all: a receiver that lost its copy of the feed). Prints what it did.
    #[command(group(clap::ArgGroup::new("which").required(true).args(["ids", "dead", "all"])))]
    Redeliver {
        #[arg(long)]
        receiver: String,
        #[arg(long)]
        dead: bool,
        #[arg(long)]
        all: bool,
        /// Product (gift) ids.
        ids: Vec<String>,
    },
}

fn country_code(text: &str) -> Result<String, String> {
    match text.len() == 2 && text.bytes().all(|b| b.is_ascii_uppercase()) {
        true => Ok(text.to_string()),
        false => Err("a two-letter upper-case country code (ISO 3166-1 alpha-2), e.g. US".to_string()),
    }
}

/// `giftgenius-server orders …`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum OrdersCommand {
    /// Prints the order as get_order shows it (status, timeline, shipment, refunds).
    Show {
        /// The order's id (`ord_…`).
        order: String,
    },
    /// Marks a paid order as being prepared.
    Processing { order: String },
    /// Marks a paid or processing order shipped, with its carrier and tracking.
    Ship {
        order: String,
        /// The carrier's name (e.g. `CTT`, `UPS`).
        #[arg(long)]
        carrier: String,
        #[arg(long)]
        tracking_number: String,
        /// The carrier's tracking page: an https URL.
        #[arg(long)]
        tracking_url: String,
    },
    /// Marks a shipped order completed (delivered).
    Complete { order: String },
    /// Refunds part of a paid order through the payment provider (all that is left of an
    /// order not shipped yet cancels it, as the buyer's cancellation does).
    Refund {
        order: String,
        /// How much, in minor units of the order's currency (250 is 2.50).
        #[arg(long)]
        amount: i64,
        /// Why: shown to the buyer and sent in the order's events.
        #[arg(long)]
        reason: String,
        /// Names this refund: the same key again (after a failure, say) is the same refund,
        /// never a second one. Default: a fresh key, printed with the result.
        #[arg(long)]
        idempotency_key: Option<String>,
    },
}

/// `giftgenius-server outbox …`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum OutboxCommand {
    /// Prints order events as JSON lines, oldest first (without their bodies: they hold
    /// personal data).
    List {
        /// Only events with this status.
        #[arg(long, value_enum)]
        status: Option<OutboxStatusArg>,
        /// At most this many.
        #[arg(long, default_value_t = 1000)]
        limit: u32,
    },
    /// Sends events again, whatever their status: pending at once, attempts from zero, the
    /// retry horizon from now. A running server posts them (in order, per order); prints what
    /// it did as JSON.
    Redeliver {
        /// Event ids (`evt_…`, as `outbox list` prints them).
        #[arg(required = true)]
        ids: Vec<String>,
    },
}

/// An order event's status, as `outbox list --status` takes it (and a feed push's, as `feed
/// pushes --status` does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutboxStatusArg {
    Pending,
    Delivered,
    Dead,
}

impl From<OutboxStatusArg> for giftgenius_commerce::store::OutboxStatus {
    fn from(status: OutboxStatusArg) -> Self {
        match status {
            OutboxStatusArg::Pending => Self::Pending,
            OutboxStatusArg::Delivered => Self::Delivered,
            OutboxStatusArg::Dead => Self::Dead,
        }
    }
}

/// Where the packed widget is looked for when `--widget-html` is not given, in order.
pub fn widget_html_candidates() -> Vec<PathBuf> {
    const FILE: &str = "giftgenius-widget.html";
    let mut candidates = vec![PathBuf::from("dist").join(FILE)];
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        candidates.push(dir.join(FILE));
        // target/<profile>/giftgenius-server → <workspace>/dist/
        if let Some(workspace) = dir.ancestors().nth(2) {
            candidates.push(workspace.join("dist").join(FILE));
        }
    }
    candidates
}

impl Config {
    /// `--public-url` without a trailing slash, else this server's own address: what the
    /// one-shot commands (the feed, the operator's) put in the links they write.
    pub fn public_url_or_local(&self) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_string(),
            None => format!("http://{}:{}", self.host, self.port),
        }
    }

    /// The store `--db` names; the error names the database without its password.
    pub async fn open_store(&self) -> anyhow::Result<giftgenius_commerce::store::Store> {
        use anyhow::Context;
        giftgenius_commerce::store::Store::connect(&self.db)
            .await
            .with_context(|| format!("cannot open the database {}", crate::telemetry::url_for_log(&self.db)))
    }

    /// `--db-file`: the database named by the file's first line replaces --db. Errors name the
    /// flag and the file, never what the file holds (a password).
    pub fn resolve_db_file(&mut self) -> anyhow::Result<()> {
        let Some(file) = &self.db_file else { return Ok(()) };
        let text = std::fs::read_to_string(file)
            .map_err(|e| anyhow::anyhow!("--db-file {}: cannot read it: {e}", file.display()))?;
        let db = text.lines().next().unwrap_or_default().trim();
        anyhow::ensure!(
            !db.is_empty(),
            "--db-file {}: its first line is empty; it must name the database",
            file.display()
        );
        self.db = db.to_string();
        Ok(())
    }

    /// The packed widget: `--widget-html`, or the first candidate that exists.
    pub fn widget_html(&self) -> anyhow::Result<PathBuf> {
        if let Some(path) = &self.widget_html {
            return Ok(path.clone());
        }
        let candidates = widget_html_candidates();
        candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
            let tried: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
            anyhow::anyhow!(
                "the packed widget was not found (looked at {}); build it with `cargo xtask widget` or pass --widget-html",
                tried.join(", ")
            )
        })
    }

    /// `--trusted-proxies` (empty entries skipped) with the header they name clients in
    /// (`--client-address-header`, defaulted as its help says).
    pub fn trusted_proxies(&self) -> anyhow::Result<TrustedProxies> {
        let ranges = self
            .trusted_proxies
            .iter()
            .map(|entry| entry.trim())
            .filter(|entry| !entry.is_empty())
            .map(|entry| entry.parse::<ProxyRange>().map_err(|why| anyhow::anyhow!("--trusted-proxies: {why}")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        let header = match self.client_address_header {
            None if ranges.is_empty() => ClientAddressHeader::None,
            None => ClientAddressHeader::XForwardedFor,
            Some(ClientAddressHeader::None) => ClientAddressHeader::None,
            Some(header) => {
                anyhow::ensure!(
                    !ranges.is_empty(),
                    "--client-address-header {} is read only from --trusted-proxies, and none is given: name \
                     your proxy's address with --trusted-proxies, or leave --client-address-header out",
                    header.to_possible_value().map(|v| v.get_name().to_string()).unwrap_or_default()
                );
                header
            }
        };
        Ok(TrustedProxies::new(ranges, header))
    }

    /// Defaults for tests: loopback, port 0, a database file in `dir` (and, unless the test
    /// gives a `payments_url`, a sandbox provider without latency beside it), and no
    /// per-address rate limit (tests drive hundreds of calls from 127.0.0.1; the limit has
    /// tests of its own that turn it on).
    pub fn for_tests(dir: &std::path::Path) -> Self {
        let db = dir.join("giftgenius.db");
        let mut config = Config::parse_from([
            "giftgenius-server",
            "--port",
            "0",
            "--rate-limit-per-minute",
            "0",
            "--db",
            &db.to_string_lossy(),
        ]);
        config.sandbox_latency_ms = Some(0);
        config.shutdown_delay_secs = 0;
        config
    }
}
