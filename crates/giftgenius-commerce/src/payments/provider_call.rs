//! One HTTP request to the payment provider as a client span (OpenTelemetry's HTTP client
//! conventions: `http.request.method`, `server.address`, `server.port`, `url.full` without
//! credentials or query, `http.response.status_code`) that sends `traceparent` along, so the
//! provider's own spans join the call's trace. Bodies and headers (the idempotency key, the
//! payment token, the secret) never go on the span.

use tracing::Instrument;
use tracing::field::Empty;

/// Sends `request` (a `method` request to `url`) inside a client span named after the method.
pub async fn send(
    request: reqwest::RequestBuilder,
    method: &'static str,
    url: &str,
) -> reqwest::Result<reqwest::Response> {
    let parsed = url::Url::parse(url).ok();
    let span = tracing::info_span!(
        "provider_http",
        otel.name = method,
        otel.kind = "client",
        otel.status_code = Empty,
        http.request.method = method,
        server.address = parsed.as_ref().and_then(|u| u.host_str()).unwrap_or_default(),
        server.port = parsed.as_ref().and_then(|u| u.port_or_known_default()),
        url.full = %giftgenius_telemetry::url_for_log(url),
        http.response.status_code = Empty,
        error.type = Empty,
    );
    let mut request = request;
    for (name, value) in giftgenius_telemetry::outgoing_headers(&span) {
        request = request.header(name, value);
    }
    let response = request.send().instrument(span.clone()).await;
    match &response {
        Ok(response) => {
            let status = response.status();
            span.record("http.response.status_code", status.as_u16());
            if status.is_server_error() {
                span.record("error.type", status.as_str());
                span.record("otel.status_code", "error");
            }
        }
        Err(error) => {
            let kind = if error.is_timeout() { "timeout" } else { "connect" };
            span.record("error.type", kind);
            span.record("otel.status_code", "error");
        }
    }
    response
}
