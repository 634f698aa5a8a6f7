//! Turning a contract `Envelope` into an MCP tool result.
//!
//! `structuredContent` is the envelope, `isError` is `!ok`, and the text `content` stands on its
//! own for the model (ChatGPT unmounts the widget on model-initiated errors, so the text is all
//! the model may get). Widget-only data rides in the result's `_meta`.

use giftgenius_types::{Envelope, ToolError, ToolName};
use giftgenius_widget::{RenderContext, Theme, ViewState, render_to_html};
use rmcp::model::{CallToolResult, ContentBlock, MetaObject};
use serde::Serialize;
use serde_json::{Map, Value};

/// Where the widget finds the server-rendered HTML of a result's state (widget-only `_meta`).
pub const FALLBACK_HTML_META: &str = "giftgenius/html";

tokio::task_local! {
    /// The host's locale for the current call (`_meta["openai/locale"]`), for prices in the fallback HTML.
    pub static REQUEST_LOCALE: String;
}

/// The state's HTML rendered natively by the widget's own components: what the packed
/// document shows when the host refuses to compile WebAssembly.
fn fallback_html(structured: &Map<String, Value>) -> String {
    let locale = REQUEST_LOCALE.try_with(Clone::clone).unwrap_or_else(|_| "en-US".to_string());
    let state = ViewState::from_tool_output(&Value::Object(structured.clone()));
    render_to_html(&state, &RenderContext::new(Theme::Light, locale))
}

/// The text the model reads for an error: code, layer, what happened, what to do next.
pub fn error_text(tool: ToolName, error: &ToolError) -> String {
    let mut out = format!(
        "{} failed: {} ({}, {}). {}",
        tool.as_str(),
        error.code,
        serde_json::to_value(error.category).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default(),
        if error.retryable { "retryable" } else { "not retryable" },
        error.message
    );
    for field in &error.field_errors {
        out.push_str(&format!("\n- {}: {}", field.field, field.message));
    }
    if let Some(ms) = error.retry_after_ms {
        out.push_str(&format!("\nRetry after {ms} ms."));
    }
    out.push_str(&format!("\nNext: {}\nReference: {}", error.code.next_step(), error.reference));
    out
}

/// Builds the MCP result. `text` is the success summary; errors get `error_text`.
pub fn tool_result<T: Serialize>(
    envelope: &Envelope<T>,
    text: impl FnOnce() -> String,
    meta: Map<String, Value>,
) -> CallToolResult {
    let (structured, is_error, text) = match envelope.to_json() {
        Ok(json) => {
            let text = match envelope {
                Envelope::Ok { .. } => text(),
                Envelope::Err { tool, error } => error_text(*tool, error),
            };
            (json, !envelope.is_ok(), text)
        }
        Err(e) => {
            let reference = crate::error::new_reference();
            let error = crate::error::internal(&reference, envelope.tool().as_str(), &e);
            let fallback = Envelope::<()>::err(envelope.tool(), error);
            let text = error_text(envelope.tool(), fallback.error().expect("err envelope"));
            (fallback.to_json().unwrap_or_default(), true, text)
        }
    };
    let mut meta = meta;
    meta.insert(FALLBACK_HTML_META.into(), Value::String(fallback_html(&structured)));
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(Value::Object(structured));
    result.is_error = Some(is_error);
    result.meta = Some(MetaObject(meta));
    result
}

/// A ready-made error result for a tool.
pub fn error_result(tool: ToolName, error: ToolError) -> CallToolResult {
    tool_result(&Envelope::<()>::err(tool, error), String::new, Map::new())
}

/// `INTERNAL_ERROR` with a fresh reference, after logging the detail.
pub fn internal_error_result(tool: ToolName, detail: &dyn std::fmt::Display) -> CallToolResult {
    let reference = crate::error::new_reference();
    error_result(tool, crate::error::internal(&reference, tool.as_str(), detail))
}
