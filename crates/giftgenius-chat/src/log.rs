//! `--log FILE`: one JSON object per line for every model request and reply and every tool call
//! and result, each with `ts_ms` (Unix milliseconds) and, where something was waited for, `ms`.
//! Reading it shows a mis-wired tool the way seed 002's last section describes: the same call
//! coming back with arguments that barely change, or arguments the model had to invent.
//!
//! Nothing secret is written: API keys live in headers (never logged), bearer tokens likewise,
//! and confirmation tokens are replaced by `"***"` before a line is built, as is the `about` of a
//! `suggest_gifts` call (what the person said about the recipient, which the server promises
//! never to log; the host keeps the same promise in its own log of tool calls).

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// The log; a no-op without `--log`.
#[derive(Default)]
pub struct Log {
    file: Option<Mutex<std::fs::File>>,
}

impl Log {
    /// Appends to `path` (created if missing).
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| anyhow::anyhow!("cannot open the log {}: {e}", path.display()))?;
        Ok(Self { file: Some(Mutex::new(file)) })
    }

    pub fn off() -> Self {
        Self::default()
    }

    /// Writes `{"ts_ms": …, "event": event, …fields}` as one line. A failed write is reported
    /// once on stderr and otherwise ignored: the log must never stop the conversation.
    pub fn write(&self, event: &str, fields: Value) {
        let Some(file) = &self.file else { return };
        let ts_ms = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
        let mut line = json!({ "ts_ms": ts_ms, "event": event });
        if let (Value::Object(line), Value::Object(fields)) = (&mut line, fields) {
            line.extend(fields);
        }
        let mut file = match file.lock() {
            Ok(f) => f,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Err(e) = writeln!(file, "{line}") {
            eprintln!("giftgenius-chat: writing the log failed: {e}");
        }
    }
}

/// Arguments whose values a log line never carries.
const REDACTED_KEYS: [&str; 2] = ["confirmation_token", "about"];

/// `arguments` with every [`REDACTED_KEYS`] value replaced by `"***"`, at any depth. A model
/// request body is redacted the same way: its earlier tool calls' arguments are objects
/// (Anthropic's `input`) or, in OpenAI's form, a JSON object written as the string `arguments`,
/// which is read, redacted and written back.
pub fn redacted(arguments: &Value) -> Value {
    match arguments {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = match v {
                        _ if REDACTED_KEYS.contains(&k.as_str()) => json!("***"),
                        Value::String(text) if k == "arguments" => match serde_json::from_str::<Value>(text) {
                            Ok(object @ Value::Object(_)) => Value::String(redacted(&object).to_string()),
                            _ => v.clone(),
                        },
                        _ => redacted(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redacted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_json_with_a_timestamp_and_no_token() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chat.jsonl");
        let log = Log::open(&path).unwrap();
        log.write("tool_call", json!({"tool": "commit_order", "arguments": redacted(&json!({"confirmation_token": "tok_1", "draft_id": "d"}))}));
        log.write("answer", json!({"text": "done"}));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["event"], "tool_call");
        assert!(lines[0]["ts_ms"].as_u64().unwrap() > 0);
        assert!(!text.contains("tok_1"));
        assert_eq!(lines[0]["arguments"]["draft_id"], "d");
    }

    #[test]
    fn what_the_person_said_about_the_recipient_is_not_logged() {
        let arguments =
            json!({"relationship_type": "friend", "about": "ZQX-marker loves her balcony", "interests": ["tea"]});
        let logged = redacted(&arguments);
        assert_eq!(logged["about"], "***");
        assert_eq!(logged["interests"], json!(["tea"]), "the rest is kept");
        assert!(!logged.to_string().contains("ZQX-marker"));
    }

    #[test]
    fn a_model_request_body_loses_the_about_of_earlier_calls_in_either_form() {
        let said = json!({"relationship_type": "friend", "about": "ZQX-marker"});
        let openai = json!({"messages": [{"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "suggest_gifts", "arguments": said.to_string()}}]}]});
        let anthropic = json!({"messages": [{"role": "assistant", "content": [
            {"type": "tool_use", "id": "c1", "name": "suggest_gifts", "input": said}]}]});
        for body in [openai, anthropic] {
            let logged = redacted(&body).to_string();
            assert!(!logged.contains("ZQX-marker"), "{logged}");
            assert!(logged.contains("relationship_type"), "the rest is kept: {logged}");
        }
        let text = json!({"arguments": "not json ZQX"});
        assert_eq!(redacted(&text), text, "a string that is no object stays as it is");
    }
}
