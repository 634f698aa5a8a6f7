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
use std::hash::BuildHasher;

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
        Err(_) => outcome.error_meta,
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
    // Looked up by a hash of the values themselves and checked for equality on a hit: printing
    // the key as JSON to look it up cost more than the rest of a suggest_gifts call's answer.
    let hash = rendered_hasher().hash_one((locale, structured, widget_meta));
    let same = |e: &RenderedEntry| e.locale == locale && e.structured == *structured && e.meta == *widget_meta;
    if let Some(entry) = rendered().lock().unwrap_or_else(|e| e.into_inner()).get(&hash).filter(|e| same(e)) {
        return entry.html.to_string();
    }
    let html = render();
    if html.len() > RENDERED_MAX_HTML {
        return html;
    }
    let entry = RenderedEntry {
        locale: locale.to_string(),
        structured: structured.clone(),
        meta: widget_meta.clone(),
        html: html.as_str().into(),
    };
    let mut cache = rendered().lock().unwrap_or_else(|e| e.into_inner());
    if cache.len() >= RENDERED_MAX_ENTRIES {
        cache.clear(); // crude, but bounded and O(1) per call on average
    }
    cache.insert(hash, entry);
    html
}

/// At most this many rendered results are kept, each with markup of at most this many bytes
/// (the result it was rendered from is of the same order).
const RENDERED_MAX_ENTRIES: usize = 1024;
const RENDERED_MAX_HTML: usize = 64 * 1024;

/// One rendered result: what it was rendered from, and its markup.
struct RenderedEntry {
    locale: String,
    structured: Map<String, Value>,
    meta: Map<String, Value>,
    html: std::sync::Arc<str>,
}

type Rendered = std::sync::Mutex<std::collections::HashMap<u64, RenderedEntry>>;

fn rendered() -> &'static Rendered {
    static RENDERED: std::sync::OnceLock<Rendered> = std::sync::OnceLock::new();
    RENDERED.get_or_init(Default::default)
}

fn rendered_hasher() -> &'static foldhash::quality::RandomState {
    static HASHER: std::sync::OnceLock<foldhash::quality::RandomState> = std::sync::OnceLock::new();
    HASHER.get_or_init(Default::default)
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
    fn rendered_markup_is_reused_only_for_the_same_result_and_locale() {
        let result = |gifts: serde_json::Value| {
            serde_json::json!({ "v": 6, "ok": true, "tool": "suggest_gifts", "data": { "gifts": gifts, "total_matches": 0 } })
                .as_object()
                .cloned()
                .unwrap()
        };
        let (empty, meta) = (result(serde_json::json!([])), Map::new());
        let english = fallback_html(&empty, &meta, "en");
        assert_eq!(fallback_html(&empty, &meta, "en"), english, "the same result and locale: the same markup");
        let spanish = fallback_html(&empty, &meta, "es");
        assert!(spanish.contains("lang=\"es\"") && english.contains("lang=\"en\""), "{spanish}\n{english}");
        let mut other_meta = Map::new();
        other_meta.insert("k".into(), Value::Bool(true));
        let mut other = empty.clone();
        other.insert("extra".into(), Value::Bool(true));
        // Whatever these render as, each is rendered from its own values (never another key's).
        assert_eq!(fallback_html(&other, &meta, "en"), render_html_uncached(&other, &meta, "en"));
        assert_eq!(fallback_html(&empty, &other_meta, "pt"), render_html_uncached(&empty, &other_meta, "pt"));
    }

    fn render_html_uncached(structured: &Map<String, Value>, meta: &Map<String, Value>, locale: &str) -> String {
        let state = ViewState::from_tool_result(&Value::Object(structured.clone()), &Value::Object(meta.clone()));
        render_to_html(&state, &RenderContext::new(Theme::Light, locale.to_string()))
    }

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
