//! What the handler reports to `/metrics` about each request it answers: its method, the tool
//! (one of ours), how it ended and how long it took, and a tool error's code. The handler's
//! methods call [`measured`] around their work; nothing here reads arguments or results beyond
//! `isError` and the error envelope's `code`.

use std::time::Instant;

use giftgenius_types::{ErrorCode, ToolName};
use rmcp::model::{CallToolResponse, InitializeRequestParams, InitializeResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tracing::Instrument;

use super::traced;

use crate::metrics::{CallOutcome, McpMethod, McpMetrics, McpServer};

/// Runs `work` and records it as one `method` request `server` answered (the app's tool calls:
/// see [`tool_call`]).
pub async fn measured<T>(
    metrics: &McpMetrics,
    server: McpServer,
    method: McpMethod,
    work: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    let started = Instant::now();
    let answer = work.await;
    let outcome = if answer.is_ok() { CallOutcome::Ok } else { CallOutcome::Error };
    metrics.observe(server, method, None, outcome, started.elapsed());
    answer
}

/// A request that is not a tool call, answered in its server span (`mcp::traced`, marked when
/// it fails) and timed: both servers' initialize, ping, discover, lists and reads go through here.
pub async fn observed<T>(
    metrics: &McpMetrics,
    server: McpServer,
    method: McpMethod,
    resource_uri: Option<&str>,
    context: &RequestContext<RoleServer>,
    work: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    let span = traced::request_span(method.as_str(), None, resource_uri, context);
    let answer = measured(metrics, server, method, work.instrument(span.clone())).await;
    traced::record_error(&span, &answer);
    answer
}

/// rmcp's own `initialize` (the peer's info kept, the version negotiated), observed; the span
/// carries the version agreed on.
pub async fn initialize<H: ServerHandler>(
    handler: &H,
    metrics: &McpMetrics,
    server: McpServer,
    request: InitializeRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<InitializeResult, ErrorData> {
    context.peer.set_peer_info(request.clone());
    observed(metrics, server, McpMethod::Initialize, None, &context, async {
        let answer = handler.negotiate_initialize(&request);
        if let Ok(info) = &answer {
            tracing::Span::current().record("mcp.protocol.version", info.protocol_version.as_str());
        }
        answer
    })
    .await
}

/// Records a finished `tools/call` of the app's `tool` (`None`: not one of ours) that started at
/// `started`, and a tool error's code.
pub fn tool_call(
    metrics: &McpMetrics,
    tool: Option<ToolName>,
    started: Instant,
    answer: &Result<CallToolResponse, ErrorData>,
) {
    let outcome = call_outcome(answer);
    if outcome == CallOutcome::ToolError
        && let (Some(tool), Ok(CallToolResponse::Complete(result))) = (tool, answer)
        && let Some(code) = error_code(result.structured_content.as_ref())
    {
        metrics.tool_error(tool, code);
    }
    metrics.observe(McpServer::App, McpMethod::ToolsCall, tool.map(ToolName::as_str), outcome, started.elapsed());
}

/// How a tools/call ended: a result with `isError` is a tool error, a JSON-RPC error an error.
pub fn call_outcome(answer: &Result<CallToolResponse, ErrorData>) -> CallOutcome {
    match answer {
        Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => CallOutcome::ToolError,
        Ok(_) => CallOutcome::Ok,
        Err(_) => CallOutcome::Error,
    }
}

/// The code of an error envelope, if it is one of the contract's.
fn error_code(structured: Option<&Value>) -> Option<ErrorCode> {
    let code = structured?.get("error")?.get("code")?.as_str()?;
    ErrorCode::ALL.iter().copied().find(|known| known.as_str() == code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_contract_s_codes_are_read() {
        assert_eq!(error_code(Some(&json!({"error": {"code": "PAYMENT_DECLINED"}}))), Some(ErrorCode::PaymentDeclined));
        assert_eq!(error_code(Some(&json!({"error": {"code": "user text here"}}))), None);
        assert_eq!(error_code(Some(&json!({"ok": true}))), None);
        assert_eq!(error_code(None), None);
    }
}
