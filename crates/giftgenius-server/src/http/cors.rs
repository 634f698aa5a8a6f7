//! CORS for browser-based MCP hosts (MCP Apps' `examples/basic-host`, web inspectors): the
//! origins the operator lists in `--cors-origins` may call `/mcp` (and read our protected
//! resource metadata) from their pages.
//!
//! A listed origin gets, on `/mcp` and `/.well-known/oauth-protected-resource*`:
//! - a preflight (`OPTIONS` with `Access-Control-Request-Method`) answered here with 204, the
//!   methods and the MCP request headers, before anything else runs (no token needed);
//! - on every real response, errors included (401 from the auth middleware, 4xx from rmcp, 429
//!   from the rate limit), `Access-Control-Allow-Origin` echoing the origin (never `*`) and
//!   `Mcp-Session-Id` / `WWW-Authenticate` exposed, so the page can keep its session and follow
//!   a sign-in challenge.
//!
//! Any other origin gets no CORS header at all (its browser then refuses to hand the answer to
//! the page), and `Vary: Origin` tells caches the answer depends on it. No credentials mode:
//! hosts send their token in `Authorization`, never cookies. The same list feeds rmcp's Origin
//! check (`startup::mcp_service`), which refuses unlisted browser origins outright.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The routes CORS answers on: `/mcp` and our RFC 9728 metadata (a browser host reads it after
/// a 401 to learn where to sign in).
const PATHS: [&str; 2] = ["/mcp", "/.well-known/oauth-protected-resource"];

const ALLOW_METHODS: &str = "GET, POST, DELETE, OPTIONS";
/// What MCP clients send: the Streamable HTTP headers, the 2026-07-28 routing headers and a token.
const ALLOW_HEADERS: &str = "Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, \
     Mcp-Name, Last-Event-ID";
const EXPOSE_HEADERS: &str = "Mcp-Session-Id, WWW-Authenticate";
/// How long a browser may reuse a preflight's answer (seconds).
const MAX_AGE_SECS: &str = "600";

/// The origins of `--cors-origins`, each as a browser serializes it (`https://host`,
/// `http://host:port`; the default port left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorsOrigins(Vec<String>);

impl CorsOrigins {
    /// Parses the flag's entries (empty ones skipped): each an exact http(s) origin, no path,
    /// no wildcard.
    pub fn parse(entries: &[String]) -> anyhow::Result<CorsOrigins> {
        let mut origins = Vec::new();
        for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
            let origin = serialize(entry).ok_or_else(|| {
                anyhow::anyhow!(
                    "--cors-origins: {entry:?} is not an origin; give each as scheme://host[:port] \
                     (http or https, no path, no wildcard), e.g. http://localhost:8080"
                )
            })?;
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
        Ok(CorsOrigins(origins))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries for rmcp's Origin allow-list, each with its port spelled out (an entry
    /// without one would match any port there).
    pub fn for_origin_check(&self) -> Vec<String> {
        self.0
            .iter()
            .filter_map(|origin| {
                let url = url::Url::parse(origin).ok()?;
                Some(format!("{}://{}:{}", url.scheme(), url.host_str()?, url.port_or_known_default()?))
            })
            .collect()
    }

    /// The request's `Origin` when it is one of ours.
    fn listed<'a>(&self, headers: &'a HeaderMap) -> Option<&'a HeaderValue> {
        let value = headers.get(header::ORIGIN)?;
        let origin = serialize(value.to_str().ok()?)?;
        self.0.contains(&origin).then_some(value)
    }
}

/// `text` as a browser serializes its origin, when it is exactly an http(s) origin.
fn serialize(text: &str) -> Option<String> {
    let url = url::Url::parse(text).ok()?;
    let bare = matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some_and(|h| !h.contains('*'))
        && url.username().is_empty()
        && url.password().is_none()
        && url.path() == "/"
        && url.query().is_none()
        && url.fragment().is_none()
        && !text.trim_end_matches('/').ends_with(':');
    bare.then(|| url.origin().ascii_serialization())
}

fn covers(path: &str) -> bool {
    PATHS.iter().any(|p| path == *p || path.strip_prefix(p).is_some_and(|rest| rest.starts_with('/')))
}

/// The middleware (outermost, so a preflight needs no token and every answer is readable).
pub async fn cors(State(origins): State<Arc<CorsOrigins>>, request: Request, next: Next) -> Response {
    if !covers(request.uri().path()) {
        return next.run(request).await;
    }
    let allowed = origins.listed(request.headers()).cloned();
    let preflight =
        request.method() == Method::OPTIONS && request.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD);
    let mut response = match (&allowed, preflight) {
        (Some(origin), true) => preflight_answer(origin),
        _ => next.run(request).await,
    };
    let headers = response.headers_mut();
    headers.append(header::VARY, HeaderValue::from_static("Origin"));
    if let Some(origin) = allowed {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
        headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static(EXPOSE_HEADERS));
    }
    response
}

fn preflight_answer(origin: &HeaderValue) -> Response {
    (
        StatusCode::NO_CONTENT,
        [
            (header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone()),
            (header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static(ALLOW_METHODS)),
            (header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static(ALLOW_HEADERS)),
            (header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static(MAX_AGE_SECS)),
        ],
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(entries: &[&str]) -> anyhow::Result<CorsOrigins> {
        CorsOrigins::parse(&entries.iter().map(|e| e.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn origins_are_exact_and_serialized_as_browsers_do() {
        let origins =
            parse(&["https://host.example:443", "http://localhost:8080/", " ", "http://LOCALHOST:8080"]).unwrap();
        assert_eq!(origins.0, ["https://host.example", "http://localhost:8080"]);
        assert_eq!(origins.for_origin_check(), ["https://host.example:443", "http://localhost:8080"]);
        for bad in
            ["*", "null", "https://*.example", "https://host.example/app", "ftp://host", "host.example", "https://u@h"]
        {
            let why = parse(&[bad]).unwrap_err().to_string();
            assert!(why.contains("--cors-origins") && why.contains("scheme://host[:port]"), "{bad}: {why}");
        }
        assert!(parse(&[]).unwrap().is_empty());
    }

    #[test]
    fn only_mcp_and_the_resource_metadata_are_covered() {
        assert!(covers("/mcp"));
        assert!(covers("/.well-known/oauth-protected-resource"));
        assert!(covers("/.well-known/oauth-protected-resource/mcp"));
        assert!(!covers("/mcpx") && !covers("/privacy") && !covers("/preview/ledger"));
    }
}
