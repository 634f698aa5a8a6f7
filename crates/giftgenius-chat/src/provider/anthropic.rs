//! Anthropic Messages: `POST {base}/v1/messages` with `anthropic-version`. Calls are `tool_use`
//! blocks of the assistant's content; their results are `tool_result` blocks (with `is_error`)
//! in the next user message, all of one turn's results in that one message.

use serde_json::{Value, json};

use super::{Message, Reply, ToolCall, ToolDef};

pub const VERSION: &str = "2023-06-01";

pub fn request(model: &str, max_tokens: u32, system: &str, messages: &[Message], tools: &[ToolDef]) -> Value {
    let mut out = Vec::new();
    for message in messages {
        match message {
            Message::User(text) => out.push(json!({"role": "user", "content": text})),
            Message::Assistant(reply) => {
                let mut blocks = Vec::new();
                if let Some(text) = &reply.text {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in &reply.calls {
                    // A tool_use input must be an object: what was not JSON is sent back as a string field.
                    let input = match (&c.unparsed, &c.arguments) {
                        (Some(raw), _) => json!({"unparsed_arguments": raw}),
                        (None, v @ Value::Object(_)) => v.clone(),
                        (None, other) => json!({"arguments": other}),
                    };
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
                }
                out.push(json!({"role": "assistant", "content": blocks}));
            }
            Message::ToolResults(results) => {
                let blocks: Vec<Value> = results
                    .iter()
                    .map(|r| {
                        let mut b = json!({"type": "tool_result", "tool_use_id": r.call_id, "content": r.content});
                        if r.is_error {
                            b["is_error"] = json!(true);
                        }
                        b
                    })
                    .collect();
                out.push(json!({"role": "user", "content": blocks}));
            }
        }
    }
    let mut body = json!({"model": model, "max_tokens": max_tokens, "system": system, "messages": out});
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

pub fn reply(value: &Value) -> Result<Reply, String> {
    let blocks = value.get("content").and_then(Value::as_array).ok_or("no content list")?;
    let mut text = Vec::new();
    let mut calls = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push(block.get("text").and_then(Value::as_str).unwrap_or_default().to_string()),
            Some("tool_use") => {
                let id = block.get("id").and_then(Value::as_str).ok_or(format!("content[{i}] has no id"))?;
                let name = block.get("name").and_then(Value::as_str).ok_or(format!("content[{i}] has no name"))?;
                let arguments = block.get("input").cloned().unwrap_or_else(|| json!({}));
                calls.push(ToolCall { id: id.to_string(), name: name.to_string(), arguments, unparsed: None });
            }
            // Thinking and other blocks are not ours to show.
            _ => {}
        }
    }
    let text = text.join("\n");
    Ok(Reply { text: (!text.trim().is_empty()).then_some(text), calls })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ToolResult;

    #[test]
    fn results_of_one_turn_share_one_user_message() {
        let reply = reply(&json!({"content": [
            {"type": "text", "text": "Looking"},
            {"type": "tool_use", "id": "t1", "name": "a", "input": {"x": 1}},
            {"type": "tool_use", "id": "t2", "name": "b", "input": {}}
        ], "stop_reason": "tool_use"}))
        .unwrap();
        assert_eq!(reply.text.as_deref(), Some("Looking"));
        assert_eq!(reply.calls.len(), 2);
        let results = vec![
            ToolResult { call_id: "t1".into(), content: "one".into(), is_error: false },
            ToolResult { call_id: "t2".into(), content: "two".into(), is_error: true },
        ];
        let body = request("m", 10, "sys", &[Message::Assistant(reply), Message::ToolResults(results)], &[]);
        let last = &body["messages"][1];
        assert_eq!(last["role"], "user");
        assert_eq!(last["content"].as_array().unwrap().len(), 2);
        assert_eq!(last["content"][1]["is_error"], true);
        assert!(last["content"][0].get("is_error").is_none());
    }
}
