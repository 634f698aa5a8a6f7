//! The ACP operations and their REST routes (docs/acp.md §2, §3, §7, §11).
//!
//! Every request is checked in this order, stopping at the first failure: bearer key (401),
//! `API-Version` (400 with `supported_versions`), and on POST: the body (64 KiB, 413),
//! `Content-Type` (415), `Idempotency-Key` (400), JSON (400 `invalid_json`), the key's claim
//! (replay, 409 `idempotency_in_flight`, 422 `idempotency_conflict`), the body's shape (400
//! `invalid`/`missing` with its JSONPath), then the work. `Request-Id` is echoed (or made up)
//! on every answer and `Idempotency-Key` on every POST answer.
//!
//! From the key on, an operation is one function that both transports call:
//! [`Acp::handle_post`] (claim, parse, work, fenced finish) and [`Acp::handle_get`]. The REST
//! handlers here read headers and the body into their arguments; the MCP binding
//! (`acp::mcp`) reads the tool's `meta`, `id` and `payload` into the same ones, so a key
//! claimed over one transport replays over the other.
//!
//! Idempotency rides on the store's keys (`store/keys.rs`): scope subject `acp:<platform>`,
//! tool `acp <METHOD> <route>`, key `<length of the session id>:<session id><Idempotency-Key>`
//! on a session's routes ([`Post::scoped_key`]; so the scope is platform + method + concrete
//! path). The stored answer is `{status, body}`, so a replay keeps its HTTP status. Every answer
//! after the claim is stored (2xx and 4xx) in the same transaction as the session it describes;
//! a 5xx releases the key and stores nothing.

use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use giftgenius_types::Currency;
use giftgenius_types::acp::{
    ACP_API_VERSION, ACP_MCP_EXTENSION, ACP_SUPPORTED_VERSIONS, AcpDiscovery, AcpDiscoveryCapabilities,
    AcpDiscoveryExtension, AcpDiscoveryProtocol, AcpService, AcpTransport,
};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::complete::Held;
use super::error::AcpFailure;
use super::{Acp, Done, SessionWrite, fingerprint};
use crate::metrics::{AuthEndpoint, AuthRefusal};
use crate::web::mcp::request_body::is_json;
use giftgenius_commerce::idempotency::{Claimed, KeyNow};
use giftgenius_commerce::store::{Fence, Fenced, Scope, SettledBy, Settlement};

/// Largest request body.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
pub const DISCOVERY_PATH: &str = "/.well-known/acp.json";
/// The languages sessions speak, one tag each (any tag of these languages is taken: `words.rs`).
pub const SUPPORTED_LOCALES: [&str; 3] = ["en-US", "es-ES", "pt-BR"];
/// The MCP binding's endpoint (`acp::mcp`), named in discovery.
pub const MCP_PATH: &str = "/acp/mcp";

const API_VERSION: HeaderName = HeaderName::from_static("api-version");
const REQUEST_ID: HeaderName = HeaderName::from_static("request-id");
const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");
const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// The ACP routes and the discovery document, each request in its server span.
pub fn router(acp: Arc<Acp>) -> Router {
    Router::new()
        .route("/acp/checkout_sessions", only(post(create), "POST"))
        .route("/acp/checkout_sessions/{id}", only(get(read).post(update), "GET, POST"))
        .route("/acp/checkout_sessions/{id}/complete", only(post(complete), "POST"))
        .route("/acp/checkout_sessions/{id}/cancel", only(post(cancel), "POST"))
        .route(DISCOVERY_PATH, get(discovery))
        .route_layer(axum::middleware::from_fn(answer_panics))
        .route_layer(axum::middleware::from_fn(crate::web::traced::server_span))
        .with_state(acp)
}

/// A panic anywhere in a route answered as ACP's 500 `processing_error`, inside the request's
/// span (the keyed work's own panic is caught first, in [`Acp::handle_post`], to release its key).
async fn answer_panics(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let headers = request.headers().clone();
    let post = request.method() == axum::http::Method::POST;
    match crate::panics::caught(next.run(request)).await {
        Ok(response) => response,
        Err(panicked) => {
            let request_id = request_id(&headers);
            respond(AcpFailure::internal(&request_id, &panicked).into(), &headers, &request_id, post)
        }
    }
}

/// `route` answering any other method with a 405 ACP error naming the `allow`ed ones.
fn only(route: MethodRouter<Arc<Acp>>, allow: &'static str) -> MethodRouter<Arc<Acp>> {
    route.fallback(move |headers: HeaderMap| async move {
        let failure = AcpFailure::not_allowed("method_not_allowed", "This method is not allowed on this path.");
        let mut response = respond(failure.into(), &headers, &request_id(&headers), false);
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allow));
        response
    })
}

/// Which POST, for its key's scope and its work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Post {
    Create,
    Update(String),
    Complete(String),
    Cancel(String),
}

impl Post {
    /// The key's scope: the same string whichever transport carries the request, so REST and
    /// MCP share one key space per platform (docs/acp.md §7).
    fn tool(&self) -> &'static str {
        match self {
            Post::Create => "acp POST /acp/checkout_sessions",
            Post::Update(_) => "acp POST /acp/checkout_sessions/{id}",
            Post::Complete(_) => "acp POST /acp/checkout_sessions/{id}/complete",
            Post::Cancel(_) => "acp POST /acp/checkout_sessions/{id}/cancel",
        }
    }

    /// The key as stored: the bare key on create; on a session's routes the session id and the
    /// key, the id length-prefixed (`24:acs_…k-1`) because both may hold spaces, so no two
    /// (session, key) pairs share a row. The earlier form, `{id} {key}`, never meets this one
    /// for a session that exists: an old row equals a new key only if its id began with digits
    /// and a colon, and every session id begins with `acs_`. Old rows are not read again (a
    /// retry across the upgrade is worked again: an update sets the same fields, a complete
    /// finds its order) and are pruned after the retention like any key.
    fn scoped_key(&self, key: &str) -> String {
        match self {
            Post::Create => key.to_string(),
            Post::Update(id) | Post::Complete(id) | Post::Cancel(id) => format!("{}:{id}{key}", id.len()),
        }
    }

    /// Whether the MCP binding demands `meta.idempotency_key` (REST demands `Idempotency-Key`
    /// on every POST). Exhaustive on purpose: a new operation decides.
    pub(crate) fn key_required(&self) -> bool {
        match self {
            Post::Create | Post::Complete(_) => true,
            Post::Update(_) | Post::Cancel(_) => false,
        }
    }
}

/// Which transport a request came by, for naming its protocol fields in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Rest,
    Mcp,
}

impl Via {
    fn version_field(self) -> &'static str {
        match self {
            Via::Rest => "The API-Version header",
            Via::Mcp => "meta.api_version",
        }
    }

    fn key_field(self) -> &'static str {
        match self {
            Via::Rest => "The Idempotency-Key header",
            Via::Mcp => "meta.idempotency_key",
        }
    }
}

async fn create(State(acp): State<Arc<Acp>>, headers: HeaderMap, body: Body) -> Response {
    let request_id = request_id(&headers);
    let reply = acp.post(Post::Create, &headers, body, &request_id).await.unwrap_or_else(Reply::from);
    respond(reply, &headers, &request_id, true)
}

async fn update(State(acp): State<Arc<Acp>>, Path(id): Path<String>, headers: HeaderMap, body: Body) -> Response {
    let request_id = request_id(&headers);
    let reply = acp.post(Post::Update(id), &headers, body, &request_id).await.unwrap_or_else(Reply::from);
    respond(reply, &headers, &request_id, true)
}

async fn complete(State(acp): State<Arc<Acp>>, Path(id): Path<String>, headers: HeaderMap, body: Body) -> Response {
    let request_id = request_id(&headers);
    let reply = acp.post(Post::Complete(id), &headers, body, &request_id).await.unwrap_or_else(Reply::from);
    respond(reply, &headers, &request_id, true)
}

async fn cancel(State(acp): State<Arc<Acp>>, Path(id): Path<String>, headers: HeaderMap, body: Body) -> Response {
    let request_id = request_id(&headers);
    let reply = acp.post(Post::Cancel(id), &headers, body, &request_id).await.unwrap_or_else(Reply::from);
    respond(reply, &headers, &request_id, true)
}

async fn read(State(acp): State<Arc<Acp>>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let request_id = request_id(&headers);
    let reply = async {
        let platform = acp.authenticate(&headers)?;
        check_version(headers.get(API_VERSION).map(HeaderValue::as_bytes), Via::Rest)?;
        acp.handle_get(&platform, &id, &request_id).await
    }
    .await
    .unwrap_or_else(Reply::from);
    respond(reply, &headers, &request_id, false)
}

/// `/.well-known/acp.json`: public and cacheable, listing only what is served now.
async fn discovery(State(acp): State<Arc<Acp>>) -> Response {
    let document = AcpDiscovery {
        protocol: AcpDiscoveryProtocol {
            name: "acp".into(),
            version: ACP_API_VERSION.into(),
            supported_versions: ACP_SUPPORTED_VERSIONS.iter().map(|v| v.to_string()).collect(),
        },
        api_base_url: format!("{}/acp", acp.public_url),
        transports: vec![AcpTransport::Rest, AcpTransport::Mcp],
        capabilities: AcpDiscoveryCapabilities {
            services: vec![AcpService::Checkout],
            extensions: vec![AcpDiscoveryExtension {
                name: ACP_MCP_EXTENSION.into(),
                spec: Some(format!("{}{MCP_PATH}", acp.public_url)),
                schema: None,
            }],
            supported_currencies: Currency::ALL.iter().map(|c| c.code().to_lowercase()).collect(),
            supported_locales: SUPPORTED_LOCALES.iter().map(|l| l.to_string()).collect(),
        },
    };
    ([(header::CACHE_CONTROL, "public, max-age=3600")], axum::Json(document)).into_response()
}

/// An answer: status, JSON body (a session, or ACP's `Error` when the status is not 2xx), and
/// what REST's headers say about it.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: StatusCode,
    pub body: Value,
    pub replayed: bool,
    pub retry_after_secs: Option<u64>,
}

impl Reply {
    fn json(status: StatusCode, body: &impl Serialize) -> Self {
        Self {
            status,
            body: serde_json::to_value(body).unwrap_or(Value::Null),
            replayed: false,
            retry_after_secs: None,
        }
    }
}

impl From<AcpFailure> for Reply {
    fn from(failure: AcpFailure) -> Self {
        Self { retry_after_secs: failure.retry_after_secs, ..Reply::json(failure.status, &failure.error) }
    }
}

/// An answer as the key stores it.
#[derive(Serialize, Deserialize)]
struct StoredReply {
    status: u16,
    body: Value,
}

pub(crate) fn respond(reply: Reply, request: &HeaderMap, request_id: &str, echo_key: bool) -> Response {
    let mut response = (reply.status, axum::Json(reply.body)).into_response();
    let headers = response.headers_mut();
    if let Ok(id) = HeaderValue::from_str(request_id) {
        headers.insert(REQUEST_ID, id);
    }
    if echo_key && let Some(key) = request.get(IDEMPOTENCY_KEY) {
        headers.insert(IDEMPOTENCY_KEY, key.clone());
    }
    if reply.replayed {
        headers.insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
    }
    if let Some(secs) = reply.retry_after_secs {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    if reply.status == StatusCode::UNAUTHORIZED {
        headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// The caller's `Request-Id`, or a fresh one.
pub(crate) fn request_id(headers: &HeaderMap) -> String {
    headers.get(REQUEST_ID).and_then(|v| v.to_str().ok()).map(str::to_string).unwrap_or_else(fresh_request_id)
}

/// A request id of our own, for a caller that sent none.
pub(crate) fn fresh_request_id() -> String {
    format!("req_{}", &uuid::Uuid::new_v4().simple().to_string()[..20])
}

/// The API version a request names (`API-Version`, `meta.api_version`): one we speak. Public for
/// the fuzz targets (fuzz/), like [`idempotency_key`] and [`parse`].
pub fn check_version(version: Option<&[u8]>, via: Via) -> Result<(), AcpFailure> {
    match version {
        None => Err(AcpFailure::api_version(false, via.version_field())),
        Some(v) if ACP_SUPPORTED_VERSIONS.iter().any(|s| v == s.as_bytes()) => Ok(()),
        Some(_) => Err(AcpFailure::api_version(true, via.version_field())),
    }
}

async fn read_body(body: Body) -> Result<Bytes, AcpFailure> {
    match Limited::new(body, MAX_BODY_BYTES).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<LengthLimitError>() => Err(AcpFailure::invalid_request(
            StatusCode::PAYLOAD_TOO_LARGE,
            "payload_too_large",
            format!("The request body exceeds {MAX_BODY_BYTES} bytes."),
        )),
        Err(_) => Err(AcpFailure::invalid_request(
            StatusCode::BAD_REQUEST,
            "invalid_body",
            "The request body could not be read.",
        )),
    }
}

/// The idempotency key of a POST (`Idempotency-Key`, `meta.idempotency_key`): 1–255 printable
/// ASCII; `None` only when absent and not `required`.
pub fn idempotency_key(key: Option<&[u8]>, required: bool, via: Via) -> Result<Option<String>, AcpFailure> {
    let Some(key) = key else {
        if !required {
            return Ok(None);
        }
        let message = match via {
            Via::Rest => "Every POST needs an Idempotency-Key header.".to_string(),
            Via::Mcp => format!("{} is required on this tool.", via.key_field()),
        };
        return Err(AcpFailure::invalid_request(StatusCode::BAD_REQUEST, "idempotency_key_required", message));
    };
    let mut problems = Vec::new();
    let key = std::str::from_utf8(key).unwrap_or_default();
    giftgenius_types::orders::check_idempotency_key("Idempotency-Key", key, &mut problems);
    match problems.first() {
        None => Ok(Some(key.to_string())),
        Some(problem) => Err(AcpFailure::invalid_request(
            StatusCode::BAD_REQUEST,
            "invalid",
            format!("{} {}.", via.key_field(), problem.message),
        )),
    }
}

/// The body as `T`, or 400 `missing`/`invalid` with the JSONPath of the field at fault.
pub fn parse<T: DeserializeOwned>(body: Value) -> Result<T, AcpFailure> {
    serde_path_to_error::deserialize(body).map_err(|e| {
        let inner = e.inner().to_string();
        let mut path = match e.path().to_string() {
            root if root == "." => "$".to_string(),
            path => format!("$.{path}"),
        };
        // serde names the field of a missing or unknown-field error in its message only.
        let named = inner
            .split('`')
            .nth(1)
            .filter(|_| inner.starts_with("missing field") || inner.starts_with("unknown field"));
        if let Some(field) = named
            && !path.ends_with(&format!(".{field}"))
        {
            path = format!("{path}.{field}");
        }
        let code = if inner.starts_with("missing field") { "missing" } else { "invalid" };
        AcpFailure::field(code, path, format!("The request body does not match the schema: {inner}."))
    })
}

impl Acp {
    /// The platform whose key the `Authorization: Bearer` header carries (401 otherwise).
    pub(crate) fn authenticate(&self, headers: &HeaderMap) -> Result<String, AcpFailure> {
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token);
        let refused = |reason| {
            self.metrics.refusals.auth_refused(AuthEndpoint::Acp, reason);
            AcpFailure::unauthorized()
        };
        let bearer = bearer.ok_or_else(|| refused(AuthRefusal::InvalidRequest))?;
        self.platforms
            .authenticate(bearer.trim())
            .map(|p| p.name.clone())
            .ok_or_else(|| refused(AuthRefusal::InvalidToken))
    }

    /// A POST over REST: its headers and body checked in order, then [`Acp::handle_post`].
    async fn post(&self, route: Post, headers: &HeaderMap, body: Body, request_id: &str) -> Result<Reply, AcpFailure> {
        let platform = self.authenticate(headers)?;
        check_version(headers.get(API_VERSION).map(HeaderValue::as_bytes), Via::Rest)?;
        let bytes = read_body(body).await?;
        let empty_cancel = matches!(route, Post::Cancel(_)) && bytes.is_empty();
        if !empty_cancel && !is_json(headers) {
            return Err(AcpFailure::invalid_request(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "Send the body as Content-Type: application/json.",
            ));
        }
        let key = idempotency_key(headers.get(IDEMPOTENCY_KEY).map(HeaderValue::as_bytes), true, Via::Rest)?;
        let body: Value = if empty_cancel {
            Value::Object(Default::default())
        } else {
            serde_json::from_slice(&bytes).map_err(|_| {
                AcpFailure::invalid_request(StatusCode::BAD_REQUEST, "invalid_json", "The request body is not JSON.")
            })?
        };
        let accept_language = headers.get(header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok());
        self.handle_post(&platform, route, key, body, accept_language, request_id).await
    }

    /// A POST of `platform` whatever its transport, from its checked key and parsed body to the
    /// answer: the key's claim (replay, 409, 422), the body's shape, the work, and the session
    /// written with the key's answer in one fenced transaction. Without a key (the MCP binding
    /// allows that on update and cancel) nothing is claimed or stored but the session.
    /// `accept_language` matters on create only: a session keeps the language it was created in.
    pub(crate) async fn handle_post(
        &self,
        platform: &str,
        route: Post,
        key: Option<String>,
        body: Value,
        accept_language: Option<&str>,
        request_id: &str,
    ) -> Result<Reply, AcpFailure> {
        let fence = match key {
            Some(key) => {
                let scope =
                    Scope { subject: format!("acp:{platform}"), tool: route.tool(), key: route.scoped_key(&key) };
                match self.claim(scope, &fingerprint::acp1(&body), request_id).await? {
                    Ok(claimed) => Some(claimed),
                    Err(answer) => return Ok(answer),
                }
            }
            None => None,
        };
        // The work's panic is its 500 (`panics.rs`): `finish` then releases the key as after any
        // 5xx, so the platform's retry proceeds instead of meeting 409 until the lease runs out.
        let work = self.work(platform, route, body, fence.as_ref(), accept_language, request_id);
        let done = crate::panics::caught(work)
            .await
            .unwrap_or_else(|panicked| Err(AcpFailure::internal(request_id, &panicked)));
        match fence {
            Some((fence, _)) => self.finish(fence, done, request_id).await,
            None => self.write_unkeyed(done, request_id).await,
        }
    }

    /// A POST's work once its key is claimed (`fence`): the body's shape, then the operation.
    async fn work(
        &self,
        platform: &str,
        route: Post,
        body: Value,
        fence: Option<&(Fence, i64)>,
        accept_language: Option<&str>,
        request_id: &str,
    ) -> Result<Done, AcpFailure> {
        match route {
            Post::Create => match parse(body) {
                Ok(request) => self.create(platform, request, accept_language, request_id).await,
                Err(e) => Err(e),
            },
            Post::Update(id) => match parse(body) {
                Ok(request) => self.update(platform, &id, request, request_id).await,
                Err(e) => Err(e),
            },
            Post::Complete(id) => match (parse(body), fence) {
                (Ok(request), Some((fence, lease_until_ms))) => {
                    let held = Held { fence, lease_until_ms: *lease_until_ms };
                    self.complete(platform, &id, request, held, request_id).await
                }
                // `key_required` makes every complete keyed: money never moves without a key.
                (Ok(_), None) => Err(AcpFailure::internal(request_id, &"a complete without an idempotency key")),
                (Err(e), _) => Err(e),
            },
            Post::Cancel(id) => match parse(body) {
                Ok(request) => self.cancel(platform, &id, request, request_id).await,
                Err(e) => Err(e),
            },
        }
    }

    /// `GET /checkout_sessions/{id}` of `platform` whatever its transport, after its checks.
    pub(crate) async fn handle_get(&self, platform: &str, id: &str, request_id: &str) -> Result<Reply, AcpFailure> {
        let session = self.get(platform, id, request_id).await?;
        Ok(Reply::json(StatusCode::OK, &session))
    }

    /// A keyless POST's session written (nothing else is kept), and its answer.
    async fn write_unkeyed(&self, done: Result<Done, AcpFailure>, request_id: &str) -> Result<Reply, AcpFailure> {
        let Done { status, session, write } = done?;
        match write {
            SessionWrite::Nothing => {}
            SessionWrite::Session(row) => {
                self.store.put_platform_session_unkeyed(&row).await.map_err(|e| AcpFailure::internal(request_id, &e))?
            }
            // Only a complete charges, and a complete always holds a key.
            SessionWrite::Paid { .. } | SessionWrite::Declined { .. } => {
                return Err(AcpFailure::internal(request_id, &"a payment outcome without an idempotency key"));
            }
        }
        Ok(Reply::json(status, &session))
    }

    /// Claims the key: `Ok(Ok((fence, lease end)))` to do the work, `Ok(Err(answer))` to
    /// answer without it (a replay); 422 `idempotency_conflict`, 409 `idempotency_in_flight`.
    async fn claim(
        &self,
        scope: Scope,
        fingerprint: &str,
        request_id: &str,
    ) -> Result<Result<(Fence, i64), Reply>, AcpFailure> {
        let claimed = self.keys.claim(scope, fingerprint).await.map_err(|e| AcpFailure::internal(request_id, &e))?;
        match claimed {
            Claimed::Proceed(held) => Ok(Ok((held.fence, held.until_ms))),
            Claimed::Replay(stored) => Ok(Err(replay(&stored, request_id)?)),
            Claimed::Conflict => Err(AcpFailure::invalid_request(
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency_conflict",
                "This Idempotency-Key was already used with a different request body.",
            )),
            Claimed::InFlight { retry_after_ms } => Err(in_flight(retry_after_ms)),
        }
    }

    /// Stores the answer with the session it describes (one transaction, fenced) and answers
    /// it; a 5xx releases the key and stores nothing.
    async fn finish(
        &self,
        fence: Fence,
        done: Result<Done, AcpFailure>,
        request_id: &str,
    ) -> Result<Reply, AcpFailure> {
        let now = self.clock.now_ms();
        let (reply, write) = match done {
            Ok(Done { status, session, write }) => (Reply::json(status, &session), write),
            // A 5xx, or a 409 that a retry may find resolved: never stored.
            Err(failure) if failure.status.is_server_error() || failure.status == StatusCode::CONFLICT => {
                self.keys.release(&fence).await;
                return Err(failure);
            }
            Err(failure) => (Reply::from(failure), SessionWrite::Nothing),
        };
        let stored = serde_json::to_string(&StoredReply { status: reply.status.as_u16(), body: reply.body.clone() })
            .map_err(|e| AcpFailure::internal(request_id, &e))?;
        let written = match &write {
            SessionWrite::Nothing => self.store.finish_key(&fence, &stored, now).await,
            SessionWrite::Session(row) => self.store.put_platform_session_and_finish(&fence, row, &stored, now).await,
            SessionWrite::Paid { order_id, charge_id, event } => {
                let paid = Settlement::Paid { charge_id, event: event.as_ref() };
                self.store.settle(order_id, paid, SettledBy::KeyHolder(&fence), &stored, now).await.map(|w| w.map(drop))
            }
            SessionWrite::Declined { order_id } => self
                .store
                .settle(order_id, Settlement::Declined, SettledBy::KeyHolder(&fence), &stored, now)
                .await
                .map(|w| w.map(drop)),
        };
        match written {
            Ok(Fenced::Written(())) => Ok(reply),
            // Someone took the key over meanwhile: answer what the key says now.
            Ok(Fenced::Stale) => match self.keys.now(&fence.scope).await {
                Ok(KeyNow::Finished(stored)) => replay(&stored, request_id),
                Ok(KeyNow::InFlight { retry_after_ms }) => Err(in_flight(retry_after_ms)),
                Err(e) => Err(AcpFailure::internal(request_id, &e)),
            },
            Err(e) => {
                self.keys.release(&fence).await;
                Err(AcpFailure::internal(request_id, &e))
            }
        }
    }
}

/// A finished key's stored answer, replayed with its status.
fn replay(stored: &str, request_id: &str) -> Result<Reply, AcpFailure> {
    let stored: StoredReply = serde_json::from_str(stored).map_err(|e| AcpFailure::internal(request_id, &e))?;
    let status = StatusCode::from_u16(stored.status).map_err(|e| AcpFailure::internal(request_id, &e))?;
    Ok(Reply { status, body: stored.body, replayed: true, retry_after_secs: None })
}

/// 409 `idempotency_in_flight`, its `Retry-After` the lease's remainder in whole seconds (≥ 1).
fn in_flight(retry_after_ms: u64) -> AcpFailure {
    AcpFailure::in_flight(retry_after_ms.div_ceil(1000).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use giftgenius_types::acp::AcpCreateRequest;
    use serde_json::json;

    #[test]
    fn a_schema_failure_names_its_field() {
        let missing = parse::<AcpCreateRequest>(json!({"line_items": [{"id": "a"}], "capabilities": {}})).unwrap_err();
        assert_eq!((missing.error.code.as_str(), missing.error.param.as_deref()), ("missing", Some("$.currency")));
        let unknown =
            parse::<AcpCreateRequest>(json!({"line_items": [], "currency": "usd", "capabilities": {}, "x": 1}))
                .unwrap_err();
        assert_eq!((unknown.error.code.as_str(), unknown.error.param.as_deref()), ("invalid", Some("$.x")));
        let nested =
            parse::<AcpCreateRequest>(json!({"line_items": [{"id": 5}], "currency": "usd", "capabilities": {}}))
                .unwrap_err();
        assert_eq!(nested.error.param.as_deref(), Some("$.line_items[0].id"));
    }
}
