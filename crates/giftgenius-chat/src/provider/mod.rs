//! The model behind one interface. The conversation is kept in a provider-neutral form
//! ([`Message`]); `openai` and `anthropic` translate it to their wire format and read the reply
//! back. Failures are retried with exponential backoff where retrying can help (429, 5xx, a
//! malformed answer, a dropped connection) and reported with the provider's own words where it
//! cannot (400, 401, 403, 404).

mod anthropic;
mod openai;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::config::{Config, ProviderKind, Secret};
use crate::log::Log;

/// One entry of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    User(String),
    Assistant(Reply),
    /// The results of the previous assistant message's tool calls: exactly one per call.
    ToolResults(Vec<ToolResult>),
}

/// What the model answered: text, tool calls, or both.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Reply {
    pub text: Option<String>,
    pub calls: Vec<ToolCall>,
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's id, echoed in the result.
    pub id: String,
    pub name: String,
    /// The arguments; `Null` when they were not JSON (then `unparsed` holds the raw text).
    pub arguments: Value,
    /// Arguments that were not valid JSON, as the model sent them (Chat Completions sends a string).
    pub unparsed: Option<String>,
}

/// The answer to one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

/// A tool as the model is offered it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    /// The tool's `inputSchema`, as the MCP server published it.
    pub parameters: Value,
}

/// Why a model request failed after its retries.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderError {
    /// An HTTP error status, with the provider's message (bounded).
    Status { status: u16, message: String, retry_after: Option<Duration> },
    /// A 2xx answer that is not what the format promises.
    Malformed(String),
    /// No answer: connection refused or dropped, or the request timed out.
    Transport(String),
}

impl ProviderError {
    pub fn retryable(&self) -> bool {
        match self {
            Self::Status { status, .. } => *status == 408 || *status == 409 || *status == 429 || *status >= 500,
            Self::Malformed(_) | Self::Transport(_) => true,
        }
    }
}

impl std::fmt::Display for ProviderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Status { status, message, .. } => write!(f, "the model provider answered HTTP {status}: {message}"),
            Self::Malformed(why) => write!(f, "the model provider's answer was malformed: {why}"),
            Self::Transport(why) => write!(f, "the model provider could not be reached: {why}"),
        }
    }
}

impl std::error::Error for ProviderError {}

/// A model provider: its format, where it is, which model, its key.
pub struct Provider {
    kind: ProviderKind,
    base_url: String,
    model: String,
    key: Option<Secret>,
    max_tokens: u32,
    retries: u32,
    retry_base: Duration,
    http: reqwest::Client,
}

impl Provider {
    pub fn from_config(config: &Config) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_millis(config.provider_timeout_ms))
            .build()
            .map_err(|e| anyhow::anyhow!("cannot build the HTTP client: {e}"))?;
        Ok(Self {
            kind: config.provider,
            base_url: config.base_url().trim_end_matches('/').to_string(),
            model: config.model(),
            key: config.api_key()?,
            max_tokens: config.max_tokens,
            retries: config.provider_retries,
            retry_base: Duration::from_millis(config.retry_base_ms),
            http,
        })
    }

    pub fn describe(&self) -> String {
        format!("{} model {} at {}", self.kind.as_str(), self.model, self.base_url)
    }

    /// Sends the conversation and returns the model's reply, retrying retryable failures with
    /// exponential backoff (a `Retry-After` header wins, capped at 60 s).
    pub async fn complete(
        &self,
        system: &str,
        messages: &[Message],
        tools: &[ToolDef],
        log: &Log,
        turn: u32,
    ) -> Result<Reply, ProviderError> {
        let (url, body) = match self.kind {
            ProviderKind::Openai => (
                format!("{}/chat/completions", self.base_url),
                openai::request(&self.model, self.max_tokens, system, messages, tools),
            ),
            ProviderKind::Anthropic => (
                format!("{}/v1/messages", self.base_url),
                anthropic::request(&self.model, self.max_tokens, system, messages, tools),
            ),
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = Instant::now();
            let outcome = self.send(&url, &body).await;
            let ms = started.elapsed().as_millis() as u64;
            match outcome {
                Ok(reply) => {
                    log.write(
                        "model_reply",
                        json!({"turn": turn, "attempt": attempt, "ms": ms, "provider": self.kind.as_str(),
                               "request": crate::log::redacted(&body), "text": reply.text,
                               "calls": reply.calls.iter().map(|c| json!({"id": c.id, "name": c.name, "arguments": crate::log::redacted(&c.arguments), "unparsed": c.unparsed})).collect::<Vec<_>>()}),
                    );
                    return Ok(reply);
                }
                Err(error) => {
                    let retry = error.retryable() && attempt <= self.retries;
                    log.write(
                        "model_error",
                        json!({"turn": turn, "attempt": attempt, "ms": ms, "provider": self.kind.as_str(),
                               "request": crate::log::redacted(&body), "error": error.to_string(), "will_retry": retry}),
                    );
                    if !retry {
                        return Err(error);
                    }
                    let backoff = self.retry_base.saturating_mul(1 << (attempt - 1).min(10));
                    let wait = match &error {
                        ProviderError::Status { retry_after: Some(after), .. } => *after,
                        _ => backoff,
                    }
                    .min(Duration::from_secs(60));
                    eprintln!("giftgenius-chat: {error}; retrying in {} ms (attempt {attempt})", wait.as_millis());
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    async fn send(&self, url: &str, body: &Value) -> Result<Reply, ProviderError> {
        let mut request = self.http.post(url).json(body);
        request = match (self.kind, &self.key) {
            (ProviderKind::Openai, Some(key)) => request.bearer_auth(key.expose()),
            (ProviderKind::Anthropic, Some(key)) => request.header("x-api-key", key.expose()),
            (_, None) => request,
        };
        if self.kind == ProviderKind::Anthropic {
            request = request.header("anthropic-version", anthropic::VERSION);
        }
        let response = request.send().await.map_err(|e| ProviderError::Transport(transport_reason(&e)))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = response.text().await.map_err(|e| ProviderError::Transport(transport_reason(&e)))?;
        if !status.is_success() {
            return Err(ProviderError::Status { status: status.as_u16(), message: error_message(&text), retry_after });
        }
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| ProviderError::Malformed(format!("not JSON ({e}): {}", crate::text::bounded(&text, 200))))?;
        match self.kind {
            ProviderKind::Openai => openai::reply(&value),
            ProviderKind::Anthropic => anthropic::reply(&value),
        }
        .map_err(ProviderError::Malformed)
    }
}

/// What went wrong on the way, without the URL (it may carry a host name the person did not type).
fn transport_reason(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "the request timed out".into()
    } else if e.is_connect() {
        "the connection was refused or could not be made".into()
    } else if e.is_body() || e.is_decode() {
        "the answer was cut off".into()
    } else {
        "the request failed".into()
    }
}

/// The provider's error message (both formats put it at `error.message`), else the body, bounded.
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed
        .as_ref()
        .and_then(|v| v.pointer("/error/message").or_else(|| v.get("message")))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| body.trim().to_string());
    crate::text::bounded(&message, 300)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_rate_limits_server_errors_and_broken_answers_are_retried() {
        let status = |s| ProviderError::Status { status: s, message: String::new(), retry_after: None };
        assert!(status(429).retryable());
        assert!(status(500).retryable());
        assert!(status(529).retryable());
        assert!(!status(400).retryable());
        assert!(!status(401).retryable());
        assert!(ProviderError::Malformed("x".into()).retryable());
    }

    #[test]
    fn the_providers_message_is_kept() {
        assert_eq!(error_message(r#"{"error":{"message":"model not found","type":"x"}}"#), "model not found");
        assert_eq!(error_message("plain"), "plain");
    }
}
