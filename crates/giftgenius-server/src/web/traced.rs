//! A server span for each request of a plain HTTP API (the ACP REST routes), after the
//! OpenTelemetry HTTP server conventions: named `{method} {route}`, with the method, the route
//! template (never the path: it holds session ids), the status, `error.type` on a 5xx, and the
//! ACP `Request-Id` answered as `giftgenius.reference` (what a platform reports when it asks
//! about a request). The parent is the request's `traceparent` / `tracestate`. The store and
//! provider spans of the work hang under it, as under an MCP request's span (`mcp::traced`).

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use giftgenius_types::bounded::cut;
use tracing::Instrument;
use tracing::field::Empty;

/// Longest reference (a client-sent `Request-Id` echoed back) a span carries.
const MAX_REFERENCE_CHARS: usize = 200;

/// Middleware (`route_layer`, so the route template is known): the request in its span.
pub async fn server_span(request: Request, next: Next) -> Response {
    let method = method_name(request.method());
    let route = request.extensions().get::<MatchedPath>().map(|path| path.as_str().to_owned());
    let name = match &route {
        Some(route) => format!("{method} {route}"),
        None => method.to_string(),
    };
    let span = tracing::info_span!(
        "http_request",
        otel.name = %name,
        otel.kind = "server",
        otel.status_code = Empty,
        http.request.method = method,
        http.route = route.as_deref(),
        network.protocol.name = "http",
        http.response.status_code = Empty,
        error.type = Empty,
        giftgenius.reference = Empty,
        trace_id = Empty,
        span_id = Empty,
    );
    let headers = request.headers();
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    crate::traces::adopt(&span, crate::traces::remote_parent(header("traceparent"), header("tracestate")));
    let response = next.run(request).instrument(span.clone()).await;
    let status = response.status();
    span.record("http.response.status_code", status.as_u16());
    if status.is_server_error() {
        span.record("error.type", status.as_str());
        span.record("otel.status_code", "error");
    }
    if let Some(reference) = response.headers().get("request-id").and_then(|v| v.to_str().ok()) {
        span.record("giftgenius.reference", cut(reference, MAX_REFERENCE_CHARS).as_str());
    }
    response
}

/// The conventions' method name: a standard one as it is, any other `_OTHER` (a client picks
/// the method, and a span's name must stay a small set).
fn method_name(method: &Method) -> &'static str {
    const KNOWN: [Method; 9] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::CONNECT,
        Method::OPTIONS,
        Method::TRACE,
        Method::PATCH,
    ];
    KNOWN.iter().find(|known| *known == method).map_or("_OTHER", |known| known.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_method_outside_the_standard_ones_is_other() {
        assert_eq!(method_name(&Method::POST), "POST");
        assert_eq!(method_name(&Method::from_bytes(b"BREW").unwrap()), "_OTHER");
    }
}
