//! One tool call's context: which tool, on whose behalf, under which reference, in which
//! locale. The MCP handler builds it once per call (`mcp::GiftGenius::call_tool`) and every
//! service takes it instead of loose `subject` / `reference` strings; its tracing span tags
//! every log line the call writes with the tool and the reference.

use giftgenius_types::ToolName;

/// Locale used when the host names none.
pub const DEFAULT_LOCALE: &str = "en-US";

#[derive(Debug, Clone)]
pub struct CallContext {
    pub tool: ToolName,
    /// Whose drafts, keys, orders and limits the call may touch.
    pub subject: String,
    /// `req_…`: goes into every error result and every log line of the call, so support can
    /// find one from the other while the client never sees internals.
    pub reference: String,
    /// The host's locale (BCP 47) for what the widget shows; what the model reads stays English.
    pub locale: String,
    /// What the person signed in as (`Caller::account_name`), shown back to them where a page
    /// acts for their account (the card page); `None` outside a tool call.
    pub account_name: Option<String>,
    /// Entered around the call; every event inside carries `tool` and `reference`.
    pub span: tracing::Span,
}

impl CallContext {
    pub fn new(tool: ToolName, subject: impl Into<String>, locale: impl Into<String>) -> Self {
        Self::with_client_hint(tool, subject, locale, None)
    }

    /// Like `new`, and the span carries a hash of the client's own name for its user
    /// (`_meta["openai/subject"]`): a hint that correlates log lines, never identity.
    pub fn with_client_hint(
        tool: ToolName,
        subject: impl Into<String>,
        locale: impl Into<String>,
        client_hint: Option<&str>,
    ) -> Self {
        let reference = new_reference();
        let hint = client_hint.map(hashed);
        let span = tracing::info_span!("tool_call", tool = tool.as_str(), reference = %reference, client_hint = hint);
        Self { tool, subject: subject.into(), reference, locale: locale.into(), account_name: None, span }
    }
}

/// A short, one-way name for `text` in logs and counters (16 hex digits of SHA-256).
pub fn hashed(text: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(&Sha256::digest(text.as_bytes())[..8])
}

/// A fresh reference: `req_` and 20 hex digits.
pub fn new_reference() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("req_{}", &id[..20])
}
