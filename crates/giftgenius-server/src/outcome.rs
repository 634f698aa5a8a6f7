//! What a tool's service decided, before it becomes an MCP result.
//!
//! Services (`suggest`, `checkout`) answer an [`Outcome`]: the contract data with what rides
//! along (a notice, partial results, widget-only `_meta`), or a `ToolError`, and whether it is
//! the replay of an earlier call. They know nothing of MCP; `mcp::reply` is the one place that
//! turns an outcome into a `CallToolResult`.

use giftgenius_types::{Envelope, Notice, Partial, ToolError, ToolName};
use serde_json::{Map, Value};

/// A successful answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer<T> {
    pub data: T,
    pub notice: Option<Notice>,
    pub partial: Option<Partial>,
    /// Facts for the widget only: hosts hand a result's `_meta` to the view, never to the model.
    pub widget_meta: Map<String, Value>,
}

impl<T> Answer<T> {
    pub fn new(data: T) -> Self {
        Self { data, notice: None, partial: None, widget_meta: Map::new() }
    }

    pub fn with_widget_meta(mut self, key: &str, value: Value) -> Self {
        self.widget_meta.insert(key.to_string(), value);
        self
    }
}

/// A tool's answer, fresh or replayed.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome<T> {
    pub result: Result<Answer<T>, ToolError>,
    /// `Some(locale)` when this is the stored answer of an earlier call with the same
    /// idempotency key: it is rendered in the locale it was first rendered in, so the replay
    /// is identical to the first answer (but for the replay marker).
    pub replay_locale: Option<String>,
    /// Facts for the widget only that go with an error (the card page's link with
    /// `NO_SAVED_CARD`). Never stored with a key: only an answer that is not kept carries them.
    pub error_meta: Map<String, Value>,
}

impl<T> Outcome<T> {
    /// An error with widget-only `_meta`.
    pub fn error_with_meta(error: ToolError, error_meta: Map<String, Value>) -> Self {
        Self { result: Err(error), replay_locale: None, error_meta }
    }

    pub fn is_ok(&self) -> bool {
        self.result.is_ok()
    }

    /// The contract envelope of this outcome (what `structuredContent` carries).
    pub fn envelope(&self, tool: ToolName) -> Envelope<&T> {
        envelope(tool, &self.result)
    }
}

/// The contract envelope of a result (what `structuredContent` carries).
pub fn envelope<T>(tool: ToolName, result: &Result<Answer<T>, ToolError>) -> Envelope<&T> {
    match result {
        Ok(answer) => {
            Envelope::Ok { tool, data: &answer.data, notice: answer.notice.clone(), partial: answer.partial.clone() }
        }
        Err(error) => Envelope::Err { tool, error: error.clone() },
    }
}

impl<T> From<Result<Answer<T>, ToolError>> for Outcome<T> {
    fn from(result: Result<Answer<T>, ToolError>) -> Self {
        Self { result, replay_locale: None, error_meta: Map::new() }
    }
}

impl<T> From<Answer<T>> for Outcome<T> {
    fn from(answer: Answer<T>) -> Self {
        Ok(answer).into()
    }
}

impl<T> From<ToolError> for Outcome<T> {
    fn from(error: ToolError) -> Self {
        Err(error).into()
    }
}

/// The text the model reads for a successful answer: it stands on its own, because a host may
/// show the model nothing else. (Errors all get the same shape, written by `mcp::reply`.)
pub trait ModelText: Sized {
    fn model_text(answer: &Answer<Self>) -> String;
}

/// A failure before any tool-specific data exists (bad arguments, a panic) has no data type.
impl ModelText for () {
    fn model_text(_: &Answer<()>) -> String {
        String::new()
    }
}
