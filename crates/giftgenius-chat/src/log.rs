//! `--log FILE`: one JSON object per line for every model request and reply and every tool call
//! and result, each with `ts_ms` (Unix milliseconds) and, where something was waited for, `ms`.
//! Reading it shows a mis-wired tool the way seed 002's last section describes: the same call
//! coming back with arguments that barely change, or arguments the model had to invent.
//!
//! Nothing secret is written: API keys live in headers (never logged), bearer tokens likewise,
//! and confirmation tokens are replaced by `"***"` before a line is built.

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

/// `arguments` with every `confirmation_token` replaced by `"***"`.
pub fn redacted(arguments: &Value) -> Value {
    match arguments {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if k == "confirmation_token" { json!("***") } else { redacted(v) };
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
}
