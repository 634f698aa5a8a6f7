//! The scripted model: a real HTTP server on 127.0.0.1:0 that speaks both provider formats
//! (`POST /v1/chat/completions` and `POST /v1/messages`) and answers each request from the test's
//! script, which sees the request (the tool results so far) and so can build the next call on
//! them, as a model would. It checks what a real provider checks: every tool call of an
//! assistant turn has exactly one result in the next message, or the request gets a 400.

use std::sync::{Arc, Mutex};

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// Which format a request came in (from its route).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Openai,
    Anthropic,
}

impl Format {
    pub fn provider(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
        }
    }
}

/// One tool result as the model received it, whatever the format.
#[derive(Debug, Clone)]
pub struct SeenResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

/// A request as the script sees it.
pub struct Request {
    /// 0 for the first request of the test.
    pub index: usize,
    /// The results in the request's last message (those of the previous turn's calls).
    pub results: Vec<SeenResult>,
    /// The names of the tools offered.
    pub tools: Vec<String>,
}

impl Request {
    /// The content of the last turn's `n`th result.
    pub fn result(&self, n: usize) -> &SeenResult {
        self.results.get(n).unwrap_or_else(|| panic!("request {} has no result {n}: {:?}", self.index, self.results))
    }
}

/// What the model answers.
pub enum Step {
    /// Tool calls: (name, arguments).
    Calls(Vec<(&'static str, Value)>),
    /// A Chat Completions call whose arguments string is not JSON.
    RawCall(&'static str, &'static str),
    Answer(String),
    /// An HTTP error with an optional Retry-After (seconds).
    Status(u16, Option<u64>),
}

type Script = Box<dyn FnMut(&Request) -> Step + Send>;

struct Inner {
    script: Script,
    requests: Vec<Value>,
    violations: Vec<String>,
    next_id: u32,
}

/// A running scripted model; lives as long as the test's runtime.
#[derive(Clone)]
pub struct ScriptedModel {
    pub format: Format,
    addr: String,
    inner: Arc<Mutex<Inner>>,
}

impl ScriptedModel {
    pub async fn start(format: Format, script: impl FnMut(&Request) -> Step + Send + 'static) -> Self {
        let inner = Arc::new(Mutex::new(Inner {
            script: Box::new(script),
            requests: Vec::new(),
            violations: Vec::new(),
            next_id: 0,
        }));
        let app = Router::new()
            .route("/v1/chat/completions", post(|s, b| answer(s, b, Format::Openai)))
            .route("/v1/messages", post(|s, b| answer(s, b, Format::Anthropic)))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the scripted model");
        let addr = listener.local_addr().unwrap().to_string();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { format, addr, inner }
    }

    /// `--base-url` for this model's format.
    pub fn base_url(&self) -> String {
        match self.format {
            Format::Openai => format!("http://{}/v1", self.addr),
            Format::Anthropic => format!("http://{}", self.addr),
        }
    }

    /// Every request body received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.inner.lock().unwrap().requests.clone()
    }

    /// Broken "one result per call" pairings seen (a real provider would have refused them).
    pub fn violations(&self) -> Vec<String> {
        self.inner.lock().unwrap().violations.clone()
    }
}

async fn answer(State(inner): State<Arc<Mutex<Inner>>>, Json(body): Json<Value>, format: Format) -> Response {
    let mut inner = inner.lock().unwrap();
    let index = inner.requests.len();
    inner.requests.push(body.clone());
    if let Err(why) = check_pairing(&body, format) {
        inner.violations.push(format!("request {index}: {why}"));
        return (StatusCode::BAD_REQUEST, Json(json!({"error": {"type": "invalid_request_error", "message": why}})))
            .into_response();
    }
    let request = Request { index, results: results_of(&body, format), tools: tools_of(&body, format) };
    let step = (inner.script)(&request);
    inner.next_id += 1;
    let n = inner.next_id;
    match step {
        Step::Status(status, retry_after) => {
            let mut headers = HeaderMap::new();
            if let Some(s) = retry_after {
                headers.insert("retry-after", HeaderValue::from_str(&s.to_string()).unwrap());
            }
            let body = json!({"type": "error", "error": {"type": "rate_limit_error", "message": format!("scripted {status}")}});
            (StatusCode::from_u16(status).unwrap(), headers, Json(body)).into_response()
        }
        Step::Answer(text) => Json(match format {
            Format::Openai => json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}),
            Format::Anthropic => json!({"id": format!("msg_{n}"), "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn"}),
        })
        .into_response(),
        Step::Calls(calls) => Json(match format {
            Format::Openai => {
                let calls: Vec<Value> = calls.iter().enumerate().map(|(k, (name, args))| json!({"id": format!("call_{n}_{k}"), "type": "function",
                    "function": {"name": name, "arguments": args.to_string()}})).collect();
                json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion", "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": calls}, "finish_reason": "tool_calls"}]})
            }
            Format::Anthropic => {
                let blocks: Vec<Value> = calls.iter().enumerate().map(|(k, (name, args))| json!({"type": "tool_use",
                    "id": format!("toolu_{n}_{k}"), "name": name, "input": args})).collect();
                json!({"id": format!("msg_{n}"), "type": "message", "role": "assistant", "content": blocks, "stop_reason": "tool_use"})
            }
        })
        .into_response(),
        Step::RawCall(name, raw) => {
            assert_eq!(format, Format::Openai, "only Chat Completions sends arguments as a string");
            Json(json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion", "choices": [{"index": 0, "message": {
                "role": "assistant", "content": null, "tool_calls": [{"id": format!("call_{n}_0"), "type": "function",
                "function": {"name": name, "arguments": raw}}]}, "finish_reason": "tool_calls"}]}))
            .into_response()
        }
    }
}

/// Each assistant turn's call ids must be answered, once each, by the message(s) right after it.
fn check_pairing(body: &Value, format: Format) -> Result<(), String> {
    let messages = body["messages"].as_array().ok_or("no messages")?;
    for (i, m) in messages.iter().enumerate() {
        if m["role"] != "assistant" {
            continue;
        }
        let (calls, answered): (Vec<String>, Vec<String>) = match format {
            Format::Openai => {
                let calls = m["tool_calls"]
                    .as_array()
                    .map(|c| c.iter().map(|c| c["id"].as_str().unwrap().to_string()).collect())
                    .unwrap_or_default();
                let answered = messages[i + 1..]
                    .iter()
                    .take_while(|n| n["role"] == "tool")
                    .map(|n| n["tool_call_id"].as_str().unwrap().to_string())
                    .collect();
                (calls, answered)
            }
            Format::Anthropic => {
                let calls = m["content"]
                    .as_array()
                    .map(|c| {
                        c.iter()
                            .filter(|b| b["type"] == "tool_use")
                            .map(|b| b["id"].as_str().unwrap().to_string())
                            .collect()
                    })
                    .unwrap_or_default();
                let answered = messages
                    .get(i + 1)
                    .and_then(|n| n["content"].as_array())
                    .map(|c| {
                        c.iter()
                            .filter(|b| b["type"] == "tool_result")
                            .map(|b| b["tool_use_id"].as_str().unwrap().to_string())
                            .collect()
                    })
                    .unwrap_or_default();
                (calls, answered)
            }
        };
        if calls != answered {
            return Err(format!("tool calls {calls:?} were answered by {answered:?}"));
        }
    }
    Ok(())
}

fn results_of(body: &Value, format: Format) -> Vec<SeenResult> {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    match format {
        Format::Openai => {
            let tail: Vec<&Value> = messages.iter().rev().take_while(|m| m["role"] == "tool").collect();
            tail.into_iter()
                .rev()
                .map(|m| {
                    let content = m["content"].as_str().unwrap_or_default();
                    SeenResult {
                        call_id: m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                        is_error: content.starts_with("ERROR: "),
                        content: content.trim_start_matches("ERROR: ").to_string(),
                    }
                })
                .collect()
        }
        Format::Anthropic => messages
            .last()
            .and_then(|m| m["content"].as_array())
            .map(|blocks| {
                blocks
                    .iter()
                    .filter(|b| b["type"] == "tool_result")
                    .map(|b| SeenResult {
                        call_id: b["tool_use_id"].as_str().unwrap_or_default().to_string(),
                        content: b["content"].as_str().unwrap_or_default().to_string(),
                        is_error: b["is_error"] == true,
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

fn tools_of(body: &Value, format: Format) -> Vec<String> {
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    tools
        .iter()
        .filter_map(|t| match format {
            Format::Openai => t["function"]["name"].as_str(),
            Format::Anthropic => t["name"].as_str(),
        })
        .map(str::to_string)
        .collect()
}

/// The first match of `"key":"VALUE"` (or `"key": "VALUE"`) in a tool result's text: how a model
/// reads an id off an earlier result.
pub fn field(text: &str, key: &str) -> String {
    for pattern in [format!("\"{key}\":\""), format!("\"{key}\": \"")] {
        if let Some(at) = text.find(&pattern) {
            let rest = &text[at + pattern.len()..];
            return rest[..rest.find('"').expect("closing quote")].to_string();
        }
    }
    panic!("no {key:?} in {text}")
}
