//! Traces (issue 27): the OTLP/HTTP exporter behind `--otlp-endpoint`, and W3C trace context in
//! and out (`traceparent` / `tracestate` from a request's `_meta` or headers; onto the provider
//! calls we make). Off unless an endpoint is given: then no exporter exists, spans stay plain
//! `tracing` spans for the logs, and nothing here costs more than a lookup.
//!
//! Spans are exported by the SDK's batch processor: a span that ends is queued (a full queue
//! drops it) and a thread of the processor's own sends batches, so an export never waits on a
//! call and a call never waits on an export.

use std::collections::HashMap;
use std::sync::OnceLock;

use opentelemetry::Context;
use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_otlp::{Protocol, WithExportConfig};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracerProvider, Tracer};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The provider, kept so that [`shutdown`] can flush what is still queued when the process ends.
static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();
/// The endpoint this process exports to, handed on to the sandbox provider it spawns.
static ENDPOINT: OnceLock<String> = OnceLock::new();

/// The OTLP/HTTP traces URL for `endpoint`: a collector's base URL (`http://collector:4318`)
/// gets the signal path `/v1/traces`, as `OTEL_EXPORTER_OTLP_ENDPOINT` does; a URL with a path
/// is used as it is.
pub fn traces_url(endpoint: &str) -> String {
    match url::Url::parse(endpoint) {
        Ok(url) if url.path() == "/" || url.path().is_empty() => {
            format!("{}/v1/traces", endpoint.trim_end_matches('/'))
        }
        _ => endpoint.to_string(),
    }
}

/// Starts exporting spans of `service` to `endpoint` and returns the tracer for the
/// `tracing-opentelemetry` layer; `None` (and a line on stderr) when the exporter cannot be
/// built, so a bad endpoint never stops the server. The batch delay and queue size follow the
/// standard `OTEL_BSP_*` variables (the test sets a short delay).
pub fn start(endpoint: &str, service: &'static str) -> Option<Tracer> {
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(traces_url(endpoint))
        .build();
    let exporter = match exporter {
        Ok(exporter) => exporter,
        Err(e) => {
            // The subscriber is not up yet: stderr is the log.
            eprintln!(
                "{service}: traces are off: cannot export to {}: {e}",
                giftgenius_telemetry::url_for_log(endpoint)
            );
            return None;
        }
    };
    let resource = opentelemetry_sdk::Resource::builder().with_service_name(service).build();
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
    let tracer = provider.tracer(service);
    let _ = PROVIDER.set(provider);
    let _ = ENDPOINT.set(endpoint.to_string());
    Some(tracer)
}

/// Exports what is still queued; called once when the process is about to exit.
pub fn shutdown() {
    if let Some(provider) = PROVIDER.get() {
        let _ = provider.shutdown();
    }
}

/// The endpoint given to [`start`], if traces are on.
pub fn endpoint() -> Option<&'static str> {
    ENDPOINT.get().map(String::as_str)
}

/// The remote parent named by a `traceparent` (and `tracestate`), if it is a valid one.
pub fn remote_parent(traceparent: Option<&str>, tracestate: Option<&str>) -> Option<Context> {
    let mut carrier = HashMap::new();
    carrier.insert("traceparent".to_string(), traceparent?.to_string());
    if let Some(state) = tracestate {
        carrier.insert("tracestate".to_string(), state.to_string());
    }
    let context = TraceContextPropagator::new().extract(&carrier);
    context.span().span_context().is_valid().then_some(context)
}

/// Makes `span` a child of `parent` (a no-op without an exporter), then records the span's own
/// trace and span ids on it as `trace_id` / `span_id` so that every log line inside carries
/// them. Both fields must be declared (`tracing::field::Empty`) by the span.
pub fn adopt(span: &tracing::Span, parent: Option<Context>) {
    if let Some(parent) = parent {
        let _ = span.set_parent(parent);
    }
    let context = span.context();
    let ids = context.span().span_context().clone();
    if ids.is_valid() {
        span.record("trace_id", tracing::field::display(ids.trace_id()));
        span.record("span_id", tracing::field::display(ids.span_id()));
    }
}

pub use giftgenius_telemetry::outgoing_headers;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_gets_the_signal_path_and_a_full_one_is_kept() {
        assert_eq!(traces_url("http://collector:4318"), "http://collector:4318/v1/traces");
        assert_eq!(traces_url("http://collector:4318/"), "http://collector:4318/v1/traces");
        assert_eq!(traces_url("http://collector:4318/otlp/v1/traces"), "http://collector:4318/otlp/v1/traces");
    }

    #[test]
    fn only_a_valid_traceparent_names_a_parent() {
        let parent = remote_parent(Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"), Some("k=v"));
        let parent = parent.expect("a valid traceparent");
        assert_eq!(parent.span().span_context().trace_id().to_string(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert!(remote_parent(Some("not a traceparent"), None).is_none());
        assert!(remote_parent(None, Some("k=v")).is_none());
    }
}
