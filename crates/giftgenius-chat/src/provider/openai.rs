//! OpenAI-compatible Chat Completions: `POST {base}/chat/completions`. Tools are `function`s;
//! a call's arguments arrive as a JSON *string*; each result is a `tool` message naming the
//! call's id. The format has no error flag for a tool result, so an error result's content
//! starts with `ERROR:`.

use serde_json::{Value, json};

use super::{Message, Reply, ToolCall, ToolDef};

pub fn request(model: &str, max_tokens: u32, system: &str, messages: &[Message], tools: &[ToolDef]) -> Value {
    let mut out = vec![json!({"role": "system", "content": system})];
    for message in messages {
        match message {
            Message::User(text) => out.push(json!({"role": "user", "content": text})),
            Message::Assistant(reply) => {
                let mut m = json!({"role": "assistant", "content": reply.text});
                if !reply.calls.is_empty() {
                    let calls: Vec<Value> = reply
                        .calls
                        .iter()
                        .map(|c| {
                            let arguments = c.unparsed.clone().unwrap_or_else(|| c.arguments.to_string());
                            json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments}})
                        })
                        .collect();
                    m["tool_calls"] = Value::Array(calls);
                }
                out.push(m);
            }
            Message::ToolResults(results) => {
                for r in results {
                    let content = if r.is_error { format!("ERROR: {}", r.content) } else { r.content.clone() };
                    out.push(json!({"role": "tool", "tool_call_id": r.call_id, "content": content}));
                }
            }
        }
    }
    let mut body = json!({"model": model, "messages": out, "max_tokens": max_tokens});
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}))
            .collect();
    }
    body
}

pub fn reply(value: &Value) -> Result<Reply, String> {
    let message = value.pointer("/choices/0/message").ok_or("no choices[0].message")?;
    let text = message.get("content").and_then(Value::as_str).filter(|t| !t.trim().is_empty()).map(str::to_string);
    let mut calls = Vec::new();
    if let Some(list) = message.get("tool_calls").filter(|v| !v.is_null()) {
        let list = list.as_array().ok_or("tool_calls is not a list")?;
        for (i, call) in list.iter().enumerate() {
            let id = call.get("id").and_then(Value::as_str).ok_or(format!("tool_calls[{i}] has no id"))?;
            let name =
                call.pointer("/function/name").and_then(Value::as_str).ok_or(format!("tool_calls[{i}] has no name"))?;
            let (arguments, unparsed) = match call.pointer("/function/arguments") {
                Some(Value::String(raw)) if raw.trim().is_empty() => (json!({}), None),
                Some(Value::String(raw)) => match serde_json::from_str::<Value>(raw) {
                    Ok(v) => (v, None),
                    Err(_) => (Value::Null, Some(raw.clone())),
                },
                // Some local servers send an object instead of a string.
                Some(v @ Value::Object(_)) => (v.clone(), None),
                None | Some(Value::Null) => (json!({}), None),
                Some(other) => (Value::Null, Some(other.to_string())),
            };
            calls.push(ToolCall { id: id.to_string(), name: name.to_string(), arguments, unparsed });
        }
    }
    Ok(Reply { text, calls })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ToolResult;

    #[test]
    fn a_call_and_its_result_round_trip() {
        let reply = reply(&json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": "{\"order_id\":\"o_1\"}"}},
            {"id": "c2", "type": "function", "function": {"name": "x", "arguments": "{not json"}}
        ]}, "finish_reason": "tool_calls"}]}))
        .unwrap();
        assert_eq!(reply.calls[0].arguments, json!({"order_id": "o_1"}));
        assert_eq!(reply.calls[1].unparsed.as_deref(), Some("{not json"));
        let results = vec![
            ToolResult { call_id: "c1".into(), content: "ok".into(), is_error: false },
            ToolResult { call_id: "c2".into(), content: "bad".into(), is_error: true },
        ];
        let body = request("m", 10, "sys", &[Message::Assistant(reply), Message::ToolResults(results)], &[]);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages[1]["tool_calls"][1]["function"]["arguments"], "{not json", "echoed as sent");
        assert_eq!(messages[2], json!({"role": "tool", "tool_call_id": "c1", "content": "ok"}));
        assert_eq!(messages[3]["content"], "ERROR: bad");
    }

    #[test]
    fn an_answer_without_choices_is_malformed() {
        assert!(reply(&json!({"id": "x"})).is_err());
    }
}
