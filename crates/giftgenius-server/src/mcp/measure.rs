//! What the handler reports to `/metrics` about each request it answers: its method, the tool
//! (one of ours), how it ended and how long it took, and a tool error's code. The handler's
//! methods call [`measured`] around their work; nothing here reads arguments or results beyond
//! `isError` and the error envelope's `code`.

use std::time::Instant;

use giftgenius_types::{ErrorCode, ToolName};
use rmcp::ErrorData;
use rmcp::model::CallToolResponse;
use serde_json::Value;

use crate::metrics::{CallOutcome, McpMethod, McpMetrics};

/// Runs `work` and records it as one `method` request (not a tool call: see [`tool_call`]).
pub async fn measured<T>(
    metrics: &McpMetrics,
    method: McpMethod,
    work: impl Future<Output = Result<T, ErrorData>>,
) -> Result<T, ErrorData> {
    let started = Instant::now();
    let answer = work.await;
    let outcome = if answer.is_ok() { CallOutcome::Ok } else { CallOutcome::Error };
    metrics.observe(method, None, outcome, started.elapsed());
    answer
}

/// Records a finished `tools/call` of `tool` (`None`: not one of ours) that started at `started`.
pub fn tool_call(
    metrics: &McpMetrics,
    tool: Option<ToolName>,
    started: Instant,
    answer: &Result<CallToolResponse, ErrorData>,
) {
    let outcome = match answer {
        Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
            if let (Some(tool), Some(code)) = (tool, error_code(result.structured_content.as_ref())) {
                metrics.tool_error(tool, code);
            }
            CallOutcome::ToolError
        }
        Ok(_) => CallOutcome::Ok,
        Err(_) => CallOutcome::Error,
    };
    metrics.observe(McpMethod::ToolsCall, tool, outcome, started.elapsed());
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
