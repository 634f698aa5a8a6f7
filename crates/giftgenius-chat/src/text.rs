//! Small pure helpers of the loop: bounding a text with a note that says so, the canonical form
//! of a call's arguments (the repeated-call valve compares these), and what the model reads of
//! a tool result.

use rmcp::model::CallToolResult;
use serde_json::Value;

/// `text` cut to at most `max` characters (on a character boundary), with a note saying how much
/// was left out, so the model never mistakes a cut result for a complete one.
pub fn bounded(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}\n[truncated by the host: the result had {total} characters; only the first {max} are shown]")
}

/// The arguments with every object's keys sorted, as compact JSON: two calls with the same
/// arguments in another key order are the same call.
pub fn canonical(value: &Value) -> String {
    fn sort(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&map[k]));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(value).to_string()
}

/// What the model reads of a tool result: its text content and its `structuredContent`, never
/// its `_meta` (widget-only: the confirmation token travels there).
pub fn model_view(result: &CallToolResult) -> String {
    let text: Vec<String> = result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
    let text = text.join("\n");
    match &result.structured_content {
        // A server that already sent the same JSON as text is not repeated.
        Some(structured) if serde_json::from_str::<Value>(text.trim()).ok().as_ref() != Some(structured) => {
            if text.is_empty() {
                format!("structuredContent: {structured}")
            } else {
                format!("{text}\n\nstructuredContent: {structured}")
            }
        }
        _ if text.is_empty() => "(the tool returned no content)".to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolResult, ContentBlock};
    use serde_json::json;

    #[test]
    fn long_text_is_cut_with_a_note_and_short_text_is_untouched() {
        assert_eq!(bounded("short", 10), "short");
        let cut = bounded(&"é".repeat(30), 10);
        assert!(cut.starts_with(&"é".repeat(10)));
        assert!(cut.contains("had 30 characters; only the first 10"), "{cut}");
    }

    #[test]
    fn key_order_does_not_make_another_call() {
        assert_eq!(
            canonical(&json!({"b": 1, "a": {"y": 2, "x": [3]}})),
            canonical(&json!({"a": {"x": [3], "y": 2}, "b": 1}))
        );
        assert_ne!(canonical(&json!({"a": 1})), canonical(&json!({"a": 2})));
    }

    #[test]
    fn the_model_never_reads_meta() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("Draft ready")]);
        result.structured_content = Some(json!({"ok": true, "draft": {"id": "d_1"}}));
        let mut meta = serde_json::Map::new();
        meta.insert("giftgenius/confirmation_token".into(), json!("tok_secret"));
        result.meta = Some(rmcp::model::MetaObject(meta));
        let view = model_view(&result);
        assert!(view.contains("Draft ready") && view.contains("d_1"), "{view}");
        assert!(!view.contains("tok_secret"));
    }
}
