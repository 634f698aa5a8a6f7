//! One server span per MCP request, named and tagged after the OpenTelemetry semantic
//! conventions for MCP (`docs/gen-ai/mcp.md`, status Development): `{mcp.method.name}
//! {gen_ai.tool.name}` (the method alone when there is no tool), with the method, the tool, the
//! JSON-RPC id, the protocol version, the resource URI of a read, the transport, and
//! `error.type` when the call failed. Never the arguments or the result: they hold addresses,
//! names and confirmation tokens.
//!
//! The parent is the `traceparent` / `tracestate` of the request's `_meta` (MCP reserves them
//! for this), else of the HTTP request's headers. rmcp's HTTP service takes a `ServerHandler`
//! (not any `Service`), so the span is opened by each handler method both servers implement
//! (the app's and the ACP binding's: initialize, ping, server/discover, the lists, the read and
//! tools/call; `measure::observed`), not by a wrapper around every method.

use rmcp::model::CallToolResponse;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use tracing::field::Empty;

use giftgenius_types::bounded::cut;

/// Longest client-sent name (a tool, a resource URI) a span carries.
const MAX_NAME_CHARS: usize = 200;

/// The span of one request, before the handler runs: `tool` for tools/call, `resource_uri` for
/// resources/read.
pub fn request_span(
    method: &str,
    tool: Option<&str>,
    resource_uri: Option<&str>,
    context: &RequestContext<RoleServer>,
) -> tracing::Span {
    // A tool name or URI is whatever the client sent (up to the body limit): cut short.
    let tool = tool.map(|t| cut(t, MAX_NAME_CHARS));
    let resource_uri = resource_uri.map(|u| cut(u, MAX_NAME_CHARS));
    let tool = tool.as_deref();
    let resource_uri = resource_uri.as_deref();
    let name = match tool {
        Some(tool) => format!("{method} {tool}"),
        None => method.to_string(),
    };
    let parts = context.extensions.get::<axum::http::request::Parts>();
    // Over HTTP the request reached us on a TCP connection; on stdio through a pipe.
    let transport = if parts.is_some() { "tcp" } else { "pipe" };
    let span = tracing::info_span!(
        "mcp_request",
        otel.name = %name,
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = method,
        gen_ai.tool.name = tool,
        gen_ai.operation.name = tool.map(|_| "execute_tool"),
        jsonrpc.request.id = %context.id,
        mcp.protocol.version = Empty,
        mcp.resource.uri = resource_uri,
        network.transport = transport,
        network.protocol.name = parts.map(|_| "http"),
        error.type = Empty,
        rpc.response.status_code = Empty,
        giftgenius.reference = Empty,
        trace_id = Empty,
        span_id = Empty,
    );
    if let Some(version) = context.protocol_version() {
        span.record("mcp.protocol.version", version.as_str());
    }
    let header = |name: &str| parts.and_then(|p| p.headers.get(name)).and_then(|v| v.to_str().ok());
    let parent = match context.meta.get_traceparent() {
        Some(traceparent) => crate::traces::remote_parent(Some(traceparent), context.meta.get_tracestate()),
        None => crate::traces::remote_parent(header("traceparent"), header("tracestate")),
    };
    crate::traces::adopt(&span, parent);
    span
}

/// Marks the span of a request that failed with a JSON-RPC error, by its code.
pub fn record_error<T>(span: &tracing::Span, result: &Result<T, ErrorData>) {
    if let Err(error) = result {
        let code = error.code.0.to_string();
        span.record("error.type", code.as_str());
        span.record("rpc.response.status_code", code.as_str());
        span.record("otel.status_code", "error");
    }
}

/// Marks the span of a tools/call: a JSON-RPC error by its code, a result with `isError` as
/// `tool_error`.
pub fn record_call_outcome(span: &tracing::Span, result: &Result<CallToolResponse, ErrorData>) {
    record_error(span, result);
    if let Ok(CallToolResponse::Complete(result)) = result
        && result.is_error == Some(true)
    {
        span.record("error.type", "tool_error");
        span.record("otel.status_code", "error");
    }
}

/// Records the call's reference on the request's span (the current one while a tool runs), so
/// that the reference a user reports leads to the trace.
pub fn record_reference(reference: &str) {
    tracing::Span::current().record("giftgenius.reference", reference);
}
