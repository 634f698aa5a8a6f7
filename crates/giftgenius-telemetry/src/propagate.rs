//! The trace context a request we send carries (W3C `traceparent` / `tracestate`), taken from
//! the span the request runs in. With no exporter installed no span is sampled into a valid
//! context, and nothing is sent.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The `traceparent` / `tracestate` headers that continue `span`'s trace in a request we send;
/// empty when no trace is active.
pub fn outgoing_headers(span: &tracing::Span) -> Vec<(String, String)> {
    let context = span.context();
    if !context.span().span_context().is_valid() {
        return Vec::new();
    }
    let mut carrier: HashMap<String, String> = HashMap::new();
    TraceContextPropagator::new().inject_context(&context, &mut carrier);
    carrier.into_iter().collect()
}
