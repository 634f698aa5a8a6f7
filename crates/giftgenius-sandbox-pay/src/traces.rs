//! Traces of the provider (issue 27): with `--otlp-endpoint` (the app passes its own when it
//! starts us), each request is a server span that continues the trace named by the request's
//! `traceparent` / `tracestate` headers, exported over OTLP/HTTP by the SDK's batch processor
//! (its own thread; a request never waits on an export). Off without an endpoint.

use std::collections::HashMap;
use std::sync::OnceLock;

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};
use tracing::Instrument;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt;

const SERVICE: &str = "giftgenius-sandbox-pay";

static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();

/// Starts exporting to `endpoint` (a collector's base URL gets `/v1/traces`); `None`, with a
/// line on stderr, when the exporter cannot be built.
pub fn start(endpoint: &str) -> Option<Tracer> {
    let url = match url_path_is_empty(endpoint) {
        true => format!("{}/v1/traces", endpoint.trim_end_matches('/')),
        false => endpoint.to_string(),
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(url)
        .build();
    let exporter = match exporter {
        Ok(exporter) => exporter,
        Err(e) => {
            eprintln!("{SERVICE}: traces are off: {e}");
            return None;
        }
    };
    let resource = opentelemetry_sdk::Resource::builder().with_service_name(SERVICE).build();
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
    let tracer = provider.tracer(SERVICE);
    let _ = PROVIDER.set(provider);
    Some(tracer)
}

/// `http://host:port` or `http://host:port/`: no signal path given.
fn url_path_is_empty(endpoint: &str) -> bool {
    let rest = endpoint.split_once("://").map_or(endpoint, |(_, rest)| rest);
    rest.split_once('/').is_none_or(|(_, path)| path.is_empty())
}

/// Exports what is still queued; called when the process is about to exit.
pub fn shutdown() {
    if let Some(provider) = PROVIDER.get() {
        let _ = provider.shutdown();
    }
}

/// Middleware: the request as a server span (method, route path, status; never a header or a
/// body), child of the caller's `traceparent` when it sent one.
pub async fn span_per_request(request: Request, next: Next) -> Response {
    let method = request.method().as_str().to_string();
    let path = request.uri().path().to_string();
    let span = tracing::info_span!(
        "http_request",
        otel.name = format!("{method} {path}"),
        otel.kind = "server",
        http.request.method = %method,
        url.path = %path,
        http.response.status_code = Empty,
    );
    let carrier: HashMap<String, String> = ["traceparent", "tracestate"]
        .into_iter()
        .filter_map(|name| Some((name.to_string(), request.headers().get(name)?.to_str().ok()?.to_string())))
        .collect();
    if carrier.contains_key("traceparent") {
        let _ = span.set_parent(TraceContextPropagator::new().extract(&carrier));
    }
    let response = next.run(request).instrument(span.clone()).await;
    span.record("http.response.status_code", response.status().as_u16());
    response
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_base_url_has_no_signal_path() {
        assert!(super::url_path_is_empty("http://127.0.0.1:4318"));
        assert!(super::url_path_is_empty("http://127.0.0.1:4318/"));
        assert!(!super::url_path_is_empty("http://127.0.0.1:4318/v1/traces"));
    }
}
