//! The axum middleware in front of `/mcp`: reads the `Authorization` header once, puts a
//! [`Caller`] into the request extensions (rmcp hands them to the tool handlers inside
//! `http::request::Parts`), and answers the HTTP-level refusals itself.
//!
//! Verified mode:
//! - no `Authorization` header → continues as [`Caller::SignedOut`] (tools that need an account
//!   answer `AUTH_REQUIRED` themselves, with `_meta["mcp/www_authenticate"]`);
//! - `Bearer <token>`, valid → continues as [`Caller::Verified`];
//! - an invalid token → `401`, `WWW-Authenticate: Bearer error="invalid_token", …`;
//! - another scheme (Basic, …), or more than one `Authorization` header → `401` with the bare
//!   `Bearer resource_metadata="…"` challenge;
//! - the authorization server's keys cannot be fetched → `503` with `Retry-After` (not the
//!   caller's fault, so no challenge that would send them through sign-in again);
//! - a `tools/call` (in the JSON-RPC body, a batch, or the `Mcp-Method`/`Mcp-Name` headers)
//!   naming a tool whose scope the token lacks → `403`,
//!   `WWW-Authenticate: Bearer error="insufficient_scope", scope="…", resource_metadata="…"`;
//!   `Mcp-Method`/`Mcp-Name` headers that disagree with the body → `400`. Otherwise the body is
//!   passed on byte for byte.
//!
//! Local and single-user modes: every request continues as [`Caller::Local`] /
//! [`Caller::SingleUser`]; an `Authorization` header is ignored (debug log), since there is no
//! issuer to check it against and refusing would only break hosts that send one anyway.
//!
//! In every mode the `Authorization` header is removed before the request goes on, so nothing
//! behind this middleware (rmcp's request logging, tool handlers) can see or log the token.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::caller::Caller;
use super::challenge;
use super::verify::{AuthError, Verifier};
use crate::metrics::{AuthEndpoint, AuthRefusal, RefusalMetrics};

/// The scope a tool needs, by tool name (`None`: works signed out, or no such tool).
pub type ScopeOf = fn(&str) -> Option<&'static str>;

/// Largest body read for the scope check (the MCP route limits bodies to 256 KiB upstream).
pub const DEFAULT_MAX_BODY_BYTES: usize = 256 * 1024;

/// The middleware's state: the mode and what it needs. Cheap to clone.
#[derive(Clone)]
pub struct AuthState {
    inner: Arc<Inner>,
}

#[derive(Clone)]
enum Kind {
    Verified { verifier: Arc<Verifier>, resource_metadata: String, scope_of: ScopeOf },
    Local,
    SingleUser,
}

struct Inner {
    kind: Kind,
    max_body_bytes: usize,
    /// Counts the 401s and 403s (`/metrics`).
    refusals: RefusalMetrics,
}

impl AuthState {
    /// Verified mode. `resource_metadata` is the URL of our RFC 9728 document
    /// ([`super::metadata::resource_metadata_url`] of the public `/mcp` URL).
    pub fn verified(verifier: Arc<Verifier>, resource_metadata: String, scope_of: ScopeOf) -> AuthState {
        AuthState::with(Kind::Verified { verifier, resource_metadata, scope_of })
    }

    pub fn local() -> AuthState {
        AuthState::with(Kind::Local)
    }

    pub fn single_user() -> AuthState {
        AuthState::with(Kind::SingleUser)
    }

    fn with(kind: Kind) -> AuthState {
        AuthState {
            inner: Arc::new(Inner {
                kind,
                max_body_bytes: DEFAULT_MAX_BODY_BYTES,
                refusals: RefusalMetrics::default(),
            }),
        }
    }

    /// Changes the body limit of the scope check.
    pub fn with_max_body_bytes(self, max_body_bytes: usize) -> AuthState {
        let refusals = self.inner.refusals.clone();
        AuthState { inner: Arc::new(Inner { kind: self.inner.kind.clone(), max_body_bytes, refusals }) }
    }

    /// Counts the requests it refuses into `refusals`.
    pub fn counting_into(self, refusals: RefusalMetrics) -> AuthState {
        let Inner { kind, max_body_bytes, .. } = &*self.inner;
        AuthState { inner: Arc::new(Inner { kind: kind.clone(), max_body_bytes: *max_body_bytes, refusals }) }
    }
}

/// The middleware: `axum::middleware::from_fn_with_state(state, authenticate)`.
pub async fn authenticate(State(state): State<AuthState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let authorization: Vec<HeaderValue> = parts.headers.get_all(header::AUTHORIZATION).iter().cloned().collect();
    parts.headers.remove(header::AUTHORIZATION);

    let (verifier, resource_metadata, scope_of) = match &state.inner.kind {
        Kind::Local | Kind::SingleUser => {
            if !authorization.is_empty() {
                tracing::debug!("ignoring the Authorization header: no issuer is configured (local/single-user mode)");
            }
            let caller = if matches!(state.inner.kind, Kind::Local) { Caller::Local } else { Caller::SingleUser };
            parts.extensions.insert(caller);
            return next.run(Request::from_parts(parts, body)).await;
        }
        Kind::Verified { verifier, resource_metadata, scope_of } => (verifier, resource_metadata, *scope_of),
    };

    let principal = match authorization.as_slice() {
        [] => {
            parts.extensions.insert(Caller::SignedOut);
            return next.run(Request::from_parts(parts, body)).await;
        }
        [value] => match bearer_token(value) {
            Some(token) => match verifier.verify(token).await {
                Ok(principal) => {
                    // A verified account has usage limits of its own; only requests whose token
                    // verified leave the per-address rate limit (`web/rate_limit.rs`).
                    if let Some(counted) = parts.extensions.remove::<crate::web::rate_limit::Counted>() {
                        counted.verified();
                    }
                    principal
                }
                Err(AuthError::Unreachable) => return unavailable(),
                Err(e) => {
                    tracing::debug!(reason = e.code(), "refused an access token");
                    state.inner.refusals.auth_refused(AuthEndpoint::Mcp, AuthRefusal::InvalidToken);
                    return refusal(
                        StatusCode::UNAUTHORIZED,
                        challenge::invalid_token(resource_metadata, &e.to_string()),
                        "invalid_token",
                        &e.to_string(),
                    );
                }
            },
            None => {
                state.inner.refusals.auth_refused(AuthEndpoint::Mcp, AuthRefusal::InvalidRequest);
                return refusal(
                    StatusCode::UNAUTHORIZED,
                    challenge::missing_token(resource_metadata),
                    "invalid_request",
                    "use an OAuth Bearer access token",
                );
            }
        },
        _ => {
            state.inner.refusals.auth_refused(AuthEndpoint::Mcp, AuthRefusal::InvalidRequest);
            return refusal(
                StatusCode::UNAUTHORIZED,
                challenge::missing_token(resource_metadata),
                "invalid_request",
                "send one Authorization header",
            );
        }
    };

    // The scope check needs the tool name, so a POST body (JSON-RPC) is read here and passed on
    // unchanged; other methods keep their body as it is.
    let (body, bytes) = if parts.method == Method::POST {
        if content_length(&parts.headers).is_some_and(|n| n > state.inner.max_body_bytes as u64) {
            return too_large();
        }
        match axum::body::to_bytes(body, state.inner.max_body_bytes).await {
            Ok(bytes) => (Body::from(bytes.clone()), bytes),
            Err(_) => return too_large(),
        }
    } else {
        (body, Bytes::new())
    };
    let tools = match tools_called(&parts.headers, &bytes) {
        Ok(tools) => tools,
        Err(why) => return refusal(StatusCode::BAD_REQUEST, String::new(), "invalid_request", why),
    };
    for tool in &tools {
        if let Some(scope) = scope_of(tool)
            && !principal.has_scope(scope)
        {
            tracing::debug!(tool = %tool, scope, "refused a tool call: the token lacks its scope");
            state.inner.refusals.auth_refused(AuthEndpoint::Mcp, AuthRefusal::InsufficientScope);
            return refusal(
                StatusCode::FORBIDDEN,
                challenge::insufficient_scope(resource_metadata, scope),
                "insufficient_scope",
                &format!("this tool needs the {scope} scope"),
            );
        }
    }
    parts.extensions.insert(Caller::Verified(principal));
    next.run(Request::from_parts(parts, body)).await
}

/// The token of `Bearer <token>` (scheme case-insensitive, RFC 9110 §11.1).
fn bearer_token(value: &HeaderValue) -> Option<&str> {
    let value = value.to_str().ok()?;
    let (scheme, rest) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        return None;
    }
    let token = rest.trim_matches(' ');
    (!token.is_empty()).then_some(token)
}

fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

/// Names of the tools a request calls: from the JSON-RPC body (one message or a batch) and the
/// `Mcp-Method: tools/call` + `Mcp-Name` headers. Headers that contradict the body are an error.
fn tools_called(headers: &HeaderMap, body: &[u8]) -> Result<Vec<String>, &'static str> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let header_method = header("mcp-method");
    let header_name = header("mcp-name");

    let messages: Vec<Value> = match serde_json::from_slice::<Value>(body) {
        Ok(Value::Array(batch)) => batch,
        Ok(one @ Value::Object(_)) => vec![one],
        // Not JSON: nothing to check here; rmcp answers the parse error.
        _ => Vec::new(),
    };
    let mut tools = Vec::new();
    for message in &messages {
        if message.get("method").and_then(Value::as_str) == Some("tools/call")
            && let Some(name) = message.pointer("/params/name").and_then(Value::as_str)
        {
            tools.push(name.to_string());
        }
    }
    if let [single] = messages.as_slice() {
        let body_method = single.get("method").and_then(Value::as_str);
        if header_method.is_some() && body_method.is_some() && header_method != body_method {
            return Err("the Mcp-Method header does not match the request body");
        }
        if let (Some("tools/call"), Some(name), Some(body_name)) = (body_method, header_name, tools.first())
            && name != body_name
        {
            return Err("the Mcp-Name header does not match the request body");
        }
    }
    if header_method == Some("tools/call")
        && let Some(name) = header_name
        && !tools.iter().any(|t| t == name)
    {
        tools.push(name.to_string());
    }
    Ok(tools)
}

/// A refusal with a short JSON body (OAuth error fields only, nothing internal).
fn refusal(status: StatusCode, www_authenticate: String, error: &str, description: &str) -> Response {
    let mut response = (status, axum::Json(json!({"error": error, "error_description": description}))).into_response();
    if !www_authenticate.is_empty()
        && let Ok(value) = HeaderValue::from_str(&www_authenticate)
    {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

fn unavailable() -> Response {
    let mut response = refusal(
        StatusCode::SERVICE_UNAVAILABLE,
        String::new(),
        "temporarily_unavailable",
        &AuthError::Unreachable.to_string(),
    );
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

fn too_large() -> Response {
    refusal(StatusCode::PAYLOAD_TOO_LARGE, String::new(), "invalid_request", "the request body is too large")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        pairs.iter().map(|(k, v)| (axum::http::HeaderName::from_static(k), HeaderValue::from_static(v))).collect()
    }

    #[test]
    fn bearer_scheme_is_case_insensitive_and_others_are_not_bearer() {
        assert_eq!(bearer_token(&HeaderValue::from_static("Bearer abc")), Some("abc"));
        assert_eq!(bearer_token(&HeaderValue::from_static("bearer  abc")), Some("abc"));
        assert_eq!(bearer_token(&HeaderValue::from_static("Basic dXNlcjpwYXNz")), None);
        assert_eq!(bearer_token(&HeaderValue::from_static("Bearer ")), None);
        assert_eq!(bearer_token(&HeaderValue::from_static("Bearer")), None);
    }

    #[test]
    fn tool_names_come_from_the_body_batches_and_headers() {
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"commit_order","arguments":{}}}"#;
        assert_eq!(tools_called(&HeaderMap::new(), call), Ok(vec!["commit_order".to_string()]));
        let batch = br#"[{"method":"tools/list"},{"method":"tools/call","params":{"name":"get_order"}}]"#;
        assert_eq!(tools_called(&HeaderMap::new(), batch), Ok(vec!["get_order".to_string()]));
        let by_header = headers(&[("mcp-method", "tools/call"), ("mcp-name", "prepare_order")]);
        assert_eq!(tools_called(&by_header, b"not json"), Ok(vec!["prepare_order".to_string()]));
        assert_eq!(
            tools_called(&by_header, br#"{"method":"tools/call","params":{"name":"prepare_order"}}"#).unwrap().len(),
            1
        );
        assert!(tools_called(&by_header, br#"{"method":"tools/call","params":{"name":"suggest_gifts"}}"#).is_err());
        assert!(tools_called(&by_header, br#"{"method":"tools/list"}"#).is_err());
        assert_eq!(tools_called(&HeaderMap::new(), br#"{"method":"tools/list"}"#), Ok(vec![]));
    }
}
