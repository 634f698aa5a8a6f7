//! The deterministic policy that runs after every tool call (seed 004's post-tool hook, in code
//! rather than in the prompt), and the repeated-call valve (seed 002).
//!
//! - `isError` always equals `!ok`.
//! - An error's `retryable` is the code's own (see the table in `giftgenius_types::error`),
//!   never a handler's opinion.
//! - A call identical to the previous two from the same session short-circuits with
//!   `REPEATED_CALL`, telling the model what to change. Keyed tools (commit_order,
//!   create_checkout_session) are exempt: repeating them is a retry, which idempotency answers.
//! - In debug builds and tests every result is checked against the tool's `outputSchema`; a
//!   violation becomes `INTERNAL_ERROR` (and a loud log line) instead of reaching a client.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use crate::mcp::arguments::check_output;
use giftgenius_types::{ErrorCode, ToolError, ToolName};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::Value;

use crate::checkout::idempotency::fingerprint;
use crate::context::CallContext;
use crate::mcp::reply::{error_text, render_error};

/// How many identical calls in a row are allowed before the valve closes.
const MAX_IDENTICAL_CALLS: usize = 2;

/// The last calls of one MCP session.
#[derive(Debug, Clone, Default)]
pub struct RecentCalls(Arc<Mutex<VecDeque<(ToolName, String)>>>);

fn keyed(tool: ToolName) -> bool {
    matches!(tool, ToolName::CommitOrder | ToolName::CreateCheckoutSession)
}

impl RecentCalls {
    /// Records the call; returns the short-circuit result when it repeats the previous two.
    pub fn check(&self, call: &CallContext, arguments: Option<&JsonObject>) -> Option<CallToolResult> {
        let tool = call.tool;
        if keyed(tool) {
            return None;
        }
        let fp = format!("{}\n{}", call.subject, fingerprint(arguments.unwrap_or(&JsonObject::new()), ""));
        let mut recent = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let repeats = recent.len() >= MAX_IDENTICAL_CALLS
            && recent.iter().rev().take(MAX_IDENTICAL_CALLS).all(|(t, f)| *t == tool && *f == fp);
        recent.push_back((tool, fp));
        while recent.len() > MAX_IDENTICAL_CALLS {
            recent.pop_front();
        }
        repeats.then(|| {
            let advice = match tool {
                ToolName::SuggestGifts => "change the arguments (for example widen budget_max, change or drop interests, or apply one of the notice's suggestions) or answer the user with the gifts you already have",
                ToolName::PrepareOrder => "use the draft you already have: the user confirms it in the widget",
                _ => "use the answer you already have",
            };
            let error = ToolError::new(
                ErrorCode::RepeatedCall,
                format!("{} was called with the same arguments three times in a row; the answer will not change. Instead, {advice}.", tool.as_str()),
                &call.reference,
            )
            .with_attempted(arguments.cloned().map(Value::Object).unwrap_or(Value::Null));
            render_error(call, error)
        })
    }
}

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
    use serde_json::json;

    fn args(v: Value) -> JsonObject {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn the_third_identical_call_is_short_circuited() {
        let recent = RecentCalls::default();
        let call = CallContext::new(ToolName::SuggestGifts, "s", "en-US");
        let a = args(json!({"relationship_type": "friend"}));
        assert!(recent.check(&call, Some(&a)).is_none());
        assert!(recent.check(&call, Some(&a)).is_none());
        let blocked = recent.check(&call, Some(&a)).expect("third identical call");
        assert_eq!(blocked.structured_content.unwrap()["error"]["code"], "REPEATED_CALL");
        // A changed call goes through, and resets the run.
        let b = args(json!({"relationship_type": "friend", "budget_max": 50}));
        assert!(recent.check(&call, Some(&b)).is_none());
        assert!(recent.check(&call, Some(&a)).is_none());
    }

    #[test]
    fn keyed_retries_are_never_short_circuited() {
        let recent = RecentCalls::default();
        let call = CallContext::new(ToolName::CommitOrder, "s", "en-US");
        let a = args(json!({"draft_id": "d", "idempotency_key": "k", "confirmation_token": "t"}));
        for _ in 0..5 {
            assert!(recent.check(&call, Some(&a)).is_none());
        }
    }

    #[test]
    fn a_result_that_breaks_its_output_schema_never_reaches_the_client() {
        use giftgenius_types::schema::output_schema;
        use giftgenius_types::{Envelope, SuggestGiftsData};
        let mut result = CallToolResult::success(vec![ContentBlock::text("x")]);
        // `ok: true` without the `gifts` and `query` the schema requires.
        result.structured_content = Some(json!({"v": 1, "ok": true, "tool": "suggest_gifts"}));
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
