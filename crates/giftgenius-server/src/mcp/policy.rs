//! The deterministic policy that runs after every tool call (seed 004's post-tool hook, in code
//! rather than in the prompt).
//!
//! - `isError` always equals `!ok`.
//! - An error's `retryable` is the code's own (see the table in `giftgenius_types::error`),
//!   never a handler's opinion.
//! - No repeated-call valve here: a tool always answers its result. A user who presses
//!   "regenerate" twice makes the host call `suggest_gifts` three times with the same arguments,
//!   and refusing the third would show them an error for doing nothing wrong; the valve belongs
//!   in a host's tool loop (seed 002), which sees the whole conversation.
//! - In debug builds and tests every result is checked against the tool's `outputSchema`; a
//!   violation becomes `INTERNAL_ERROR` (and a loud log line) instead of reaching a client.

use giftgenius_types::{ErrorCode, ToolError};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::Value;

use crate::context::CallContext;
use crate::mcp::arguments::check_output;
use crate::mcp::reply::{error_text, render_error};

/// Applies the invariants to a finished result. `output_schema` is checked in debug builds.
pub fn enforce(call: &CallContext, mut result: CallToolResult, output_schema: Option<&JsonObject>) -> CallToolResult {
    let tool = call.tool;
    let Some(Value::Object(structured)) = result.structured_content.as_mut() else {
        return render_error(call, crate::error::internal(call, &"a tool result had no structuredContent"));
    };
    let ok = structured.get("ok").and_then(Value::as_bool).unwrap_or(false);
    result.is_error = Some(!ok);

    if let Some(error) = structured.get_mut("error").and_then(Value::as_object_mut) {
        let code: Option<ErrorCode> = error.get("code").cloned().and_then(|c| serde_json::from_value(c).ok());
        if let Some(code) = code {
            let retryable = code.retryable();
            if error.get("retryable") != Some(&Value::Bool(retryable)) {
                tracing::warn!(tool = tool.as_str(), code = code.as_str(), "policy corrected `retryable`");
                error.insert("retryable".into(), Value::Bool(retryable));
                if let Ok(parsed) = serde_json::from_value::<ToolError>(Value::Object(error.clone())) {
                    result.content = vec![ContentBlock::text(error_text(tool, &parsed))];
                }
            }
        }
    }

    if cfg!(debug_assertions)
        && let Some(schema) = output_schema
    {
        let structured = result.structured_content.clone().unwrap_or(Value::Null);
        let violations = check_output(schema, &structured);
        if !violations.is_empty() {
            let detail = format!("result violates the outputSchema of {}: {violations:?}", tool.as_str());
            return render_error(call, crate::error::internal(call, &detail));
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use giftgenius_types::ToolName;
    use serde_json::json;

    #[test]
    fn a_result_that_breaks_its_output_schema_never_reaches_the_client() {
        use giftgenius_types::schema::output_schema;
        use giftgenius_types::{Envelope, SuggestGiftsData};
        let mut result = CallToolResult::success(vec![ContentBlock::text("x")]);
        // `ok: true` without the `gifts` and `query` the schema requires.
        result.structured_content = Some(json!({"v": 6, "ok": true, "tool": "suggest_gifts"}));
        let schema = output_schema::<Envelope<SuggestGiftsData>>();
        let call = CallContext::new(ToolName::SuggestGifts, "s", "en-US");
        let checked = enforce(&call, result, Some(&schema));
        assert_eq!(checked.structured_content.unwrap()["error"]["code"], "INTERNAL_ERROR");
        assert_eq!(checked.is_error, Some(true));
    }

    #[test]
    fn retryable_follows_the_code_table() {
        let mut wrong = ToolError::new(ErrorCode::ConfirmationRequired, "confirm first", "req_1");
        wrong.retryable = true;
        let call = CallContext::new(ToolName::CommitOrder, "s", "en-US");
        let result = render_error(&call, wrong);
        let fixed = enforce(&call, result, None);
        assert_eq!(fixed.structured_content.unwrap()["error"]["retryable"], false);
        assert_eq!(fixed.is_error, Some(true));
    }
}
