//! Request references, and turning internal failures into honest `ToolError`s.
//!
//! A reference (`req_…`) goes into every error result and into the log line that carries the
//! real detail, so support can find one from the other while the client never sees internals.

use giftgenius_types::{ErrorCode, ToolError};

/// A fresh reference for one tool call.
pub fn new_reference() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("req_{}", &id[..20])
}

/// An unexpected internal failure: logged in full, returned as `INTERNAL_ERROR`.
pub fn internal(reference: &str, tool: &str, detail: &dyn std::fmt::Display) -> ToolError {
    tracing::error!(reference, tool, error = %detail, "tool call failed");
    ToolError::new(
        ErrorCode::InternalError,
        "Something went wrong on our side. Try once more; if it keeps failing, quote the reference.",
        reference,
    )
}
