//! Flags and environment of `giftgenius-chat`. API keys come only from the environment
//! (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) and are held as [`Secret`]s, which never print.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

/// The local GiftGenius's MCP endpoint (what `cargo xtask serve` listens on).
pub const DEFAULT_MCP_URL: &str = "http://127.0.0.1:8000/mcp";

/// Which wire format the model speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderKind {
    /// OpenAI-compatible Chat Completions (`POST {base}/chat/completions`): OpenAI and most
    /// local model servers (llama.cpp, Ollama, vLLM, LM Studio).
    Openai,
    /// Anthropic Messages (`POST {base}/v1/messages`).
    Anthropic,
}

impl ProviderKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Openai => "openai",
            Self::Anthropic => "anthropic",
        }
    }

    pub const fn default_base_url(self) -> &'static str {
        match self {
            Self::Openai => "https://api.openai.com/v1",
            Self::Anthropic => "https://api.anthropic.com",
        }
    }

    pub const fn default_model(self) -> &'static str {
        match self {
            Self::Openai => "gpt-4.1-mini",
            Self::Anthropic => "claude-sonnet-4-5",
        }
    }

    pub const fn key_variable(self) -> &'static str {
        match self {
            Self::Openai => "OPENAI_API_KEY",
            Self::Anthropic => "ANTHROPIC_API_KEY",
        }
    }
}

/// A value that must never reach a terminal or a log: `Debug` and `Display` print `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The value, for the one header that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

/// A terminal MCP host with a real model.
///
/// `giftgenius-chat "a birthday gift for my dad, he likes coffee, under $60"` runs one task and
/// prints each tool call as `[turn N] calls TOOL {arguments}`, then the answer; without a
/// message it is an interactive session (an empty line or Ctrl-D ends it).
#[derive(Debug, Clone, Parser)]
#[command(name = "giftgenius-chat", version)]
pub struct Config {
    /// The task; several words are joined with spaces. None: an interactive session.
    pub message: Vec<String>,

    /// The MCP server's Streamable HTTP endpoint.
    #[arg(long, env = "GIFTGENIUS_CHAT_MCP", default_value = DEFAULT_MCP_URL)]
    pub mcp: String,

    /// The model's wire format.
    #[arg(long, env = "GIFTGENIUS_CHAT_PROVIDER", value_enum, default_value_t = ProviderKind::Openai)]
    pub provider: ProviderKind,

    /// The provider's base URL (default: the provider's public API). For a local OpenAI-compatible
    /// server, e.g. `http://127.0.0.1:11434/v1`.
    #[arg(long, env = "GIFTGENIUS_CHAT_BASE_URL")]
    pub base_url: Option<String>,

    /// The model's name (default: gpt-4.1-mini / claude-sonnet-4-5).
    #[arg(long, env = "GIFTGENIUS_CHAT_MODEL")]
    pub model: Option<String>,

    /// Model requests per task; a model still calling tools after this many is stopped.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_turns: u32,

    /// How long one tool call may take before it is abandoned and answered with an error.
    #[arg(long, default_value_t = 30_000)]
    pub tool_timeout_ms: u64,

    /// How many characters of one tool result the model sees; longer results are cut with a note.
    #[arg(long, default_value_t = 8_000)]
    pub max_result_chars: usize,

    /// Retries of a retryable provider failure (429, 5xx, a malformed answer, a dropped connection).
    #[arg(long, default_value_t = 3)]
    pub provider_retries: u32,

    /// The first retry's wait; each later one doubles it (a `Retry-After` wins, up to 60 s).
    #[arg(long, default_value_t = 1_000)]
    pub retry_base_ms: u64,

    /// How long one model request may take.
    #[arg(long, default_value_t = 120_000)]
    pub provider_timeout_ms: u64,

    /// The most tokens one model answer may use (Anthropic requires a value).
    #[arg(long, default_value_t = 2_048)]
    pub max_tokens: u32,

    /// Write every model request and reply, every tool call and result, with timings, as JSON lines.
    #[arg(long)]
    pub log: Option<PathBuf>,

    /// A bearer token for the MCP server (else: signed out; a server that asks for sign-in
    /// starts the authorization-code + PKCE flow).
    #[arg(long, env = "GIFTGENIUS_CHAT_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// A client id registered with the authorization server for the sign-in (else: dynamic
    /// client registration). Its redirect URI must allow `http://127.0.0.1:PORT/callback`.
    #[arg(long)]
    pub client_id: Option<String>,

    /// The loopback port of the sign-in's redirect listener (0: any free port).
    #[arg(long, default_value_t = 0)]
    pub callback_port: u16,

    /// Scopes to ask for at sign-in (default: what the server's metadata lists).
    #[arg(long, value_delimiter = ',')]
    pub scopes: Vec<String>,

    /// Instead of the terminal, serve the chat as a small HTTP API on this loopback address
    /// (the preview's chat panel; `cargo xtask preview` starts it). No message with it.
    #[arg(long, env = "GIFTGENIUS_CHAT_LISTEN", conflicts_with = "message")]
    pub listen: Option<std::net::SocketAddr>,
}

impl Config {
    /// The task from the command line, if any.
    pub fn message(&self) -> Option<String> {
        let joined = self.message.join(" ");
        let trimmed = joined.trim();
        (!trimmed.is_empty()).then(|| trimmed.to_string())
    }

    pub fn base_url(&self) -> String {
        self.base_url.clone().unwrap_or_else(|| self.provider.default_base_url().to_string())
    }

    pub fn model(&self) -> String {
        self.model.clone().unwrap_or_else(|| self.provider.default_model().to_string())
    }

    /// The provider's key from its variable. Required for the public APIs; optional for another
    /// base URL (a local model server usually takes none).
    pub fn api_key(&self) -> anyhow::Result<Option<Secret>> {
        let var = self.provider.key_variable();
        let key = std::env::var(var).ok().filter(|k| !k.trim().is_empty()).map(|k| Secret::new(k.trim()));
        if key.is_none() && self.base_url.is_none() {
            anyhow::bail!(
                "{var} is not set: the {} API needs a key (or give --base-url for a local model server)",
                self.provider.as_str()
            );
        }
        Ok(key)
    }

    pub fn tool_timeout(&self) -> Duration {
        Duration::from_millis(self.tool_timeout_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let s = Secret::new("sk-live-123");
        assert_eq!(format!("{s} {s:?}"), "*** ***");
        assert_eq!(s.expose(), "sk-live-123");
    }

    #[test]
    fn the_message_is_the_joined_words_and_empty_means_interactive() {
        let c = Config::parse_from(["giftgenius-chat", "a", "gift", "for", "dad"]);
        assert_eq!(c.message().as_deref(), Some("a gift for dad"));
        assert_eq!(c.max_turns, 8);
        assert_eq!(c.mcp, DEFAULT_MCP_URL);
        assert_eq!(Config::parse_from(["giftgenius-chat"]).message(), None);
        assert_eq!(Config::parse_from(["giftgenius-chat", "  "]).message(), None);
    }
}
