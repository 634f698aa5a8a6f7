//! The one place a service's `Outcome` becomes an MCP tool result.
//!
//! `structuredContent` is the contract envelope, `isError` is `!ok`, and the text `content`
//! stands on its own for the model (ChatGPT unmounts the widget on model-initiated errors, so
//! the text is all the model may get). Widget-only data rides in the result's `_meta`, with the
//! state rendered to HTML by the widget's own components for hosts that refuse WebAssembly, and
//! the id of the view the result opens (`viewUUID`, under which an MCP Apps view keeps its
//! screen across a reload: the pattern ext-apps documents).

use giftgenius_types::wire::{META_HTML, META_REPLAYED, META_VIEW_UUID};
use giftgenius_types::{ToolError, ToolName};
use giftgenius_widget::{RenderContext, Theme, ViewState, render_to_html};
use rmcp::model::{CallToolResult, ContentBlock, MetaObject};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::context::CallContext;
use crate::outcome::{ModelText, Outcome};

/// Renders `outcome` for `call`.
pub fn render<T: Serialize + ModelText>(call: &CallContext, outcome: Outcome<T>) -> CallToolResult {
    let structured = match outcome.envelope(call.tool).to_json() {
        Ok(structured) => structured,
        // A data type that cannot become an envelope is our bug: say so honestly.
        Err(e) => return render(call, Outcome::<()>::from(crate::error::internal(call, &e))),
    };
    let text = match &outcome.result {
        Ok(answer) => T::model_text(answer),
        Err(error) => error_text(call.tool, error),
    };
    let locale = outcome.replay_locale.as_deref().unwrap_or(&call.locale);
    let mut meta = match outcome.result {
        Ok(answer) => answer.widget_meta,
        Err(_) => Map::new(),
    };
    let html = fallback_html(&structured, &meta, locale);
    meta.insert(META_HTML.into(), Value::String(html));
    meta.insert(META_VIEW_UUID.into(), Value::String(view_uuid(&call.reference)));
    if outcome.replay_locale.is_some() {
        meta.insert(META_REPLAYED.into(), Value::Bool(true));
    }
    let is_error = structured.get("ok") != Some(&Value::Bool(true));
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(Value::Object(structured));
    result.is_error = Some(is_error);
    result.meta = Some(MetaObject(meta));
    result
}

/// Renders an error for `call` (bad arguments, a panic: there is no tool data).
pub fn render_error(call: &CallContext, error: ToolError) -> CallToolResult {
    render(call, Outcome::<()>::from(error))
}

/// The state's HTML rendered natively by the widget's own components: what the packed
/// document shows before WebAssembly runs, or when the host refuses to compile it. The widget
/// `_meta` goes in too (a draft's full delivery details for the card's form, which orders have
/// a Cancel button): the HTML is itself widget-only `_meta`. Tokens never reach the markup.
///
/// Every result carries it (first paint needs it), and rendering is most of a call's work, so
/// it is rendered once per distinct result and locale: the same suggestion asked again (a
/// regenerated answer, many users asking alike) reuses the HTML. The key is the whole
/// structured content and widget `_meta`, so two results share HTML only when they are the
/// same.
fn fallback_html(structured: &Map<String, Value>, widget_meta: &Map<String, Value>, locale: &str) -> String {
    let render = || {
        let state =
            ViewState::from_tool_result(&Value::Object(structured.clone()), &Value::Object(widget_meta.clone()));
        render_to_html(&state, &RenderContext::new(Theme::Light, locale.to_string()))
    };
    // Errors carry their call's reference, so no two are alike: not worth keeping.
    if structured.get("ok") != Some(&Value::Bool(true)) {
        return render();
    }
    let (Ok(json), Ok(meta)) = (serde_json::to_string(structured), serde_json::to_string(widget_meta)) else {
        return render();
    };
    if json.len() + meta.len() > RENDERED_MAX_KEY {
        return render();
    }
    let key = (locale.to_string(), json, meta);
    if let Some(html) = rendered().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return html.to_string();
    }
    let html = render();
    let mut cache = rendered().lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() >= RENDERED_MAX_ENTRIES {
        cache.clear(); // crude, but bounded and O(1) per call on average
    }
    cache.insert(key, html.as_str().into());
    html
}

/// At most this many rendered results are kept, each for a result of at most this many bytes.
const RENDERED_MAX_ENTRIES: usize = 1024;
const RENDERED_MAX_KEY: usize = 64 * 1024;

type Rendered = std::sync::Mutex<std::collections::HashMap<(String, String, String), std::sync::Arc<str>>>;

fn rendered() -> &'static Rendered {
    static RENDERED: std::sync::OnceLock<Rendered> = std::sync::OnceLock::new();
    RENDERED.get_or_init(Default::default)
}

/// The id of the view a call's result opens: a UUID (RFC 9562 version 8) made from the call's
/// reference. Every call, and so every view, has its own (a replay is a new call, so a new
/// view); the same call always names the same one; and no randomness beyond the reference's.
/// It names a view, never a user or an order, so it grants nothing to whoever holds it.
pub fn view_uuid(reference: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("giftgenius/view\n{reference}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8: vendor-defined layout
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // the RFC 9562 variant
    uuid::Uuid::from_bytes(bytes).hyphenated().to_string()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_call_names_its_own_view_and_always_the_same_one() {
        let a = view_uuid("req_0123456789abcdef0123");
        assert_eq!(a, view_uuid("req_0123456789abcdef0123"));
        assert_ne!(a, view_uuid("req_0123456789abcdef0124"));
        let parsed = uuid::Uuid::parse_str(&a).expect("a UUID");
        assert_eq!(parsed.get_version_num(), 8);
        assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122);
        assert_eq!(a.len(), 36);
    }
}
