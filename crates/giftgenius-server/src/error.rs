//! Unexpected internal failures, turned into honest `ToolError`s: the detail goes to the log
//! under the call's reference, the client gets `INTERNAL_ERROR` and the reference only.

use giftgenius_types::{ErrorCode, ToolError};

use crate::context::CallContext;

/// Logs `detail` under the call's reference and returns `INTERNAL_ERROR` for the client.
pub fn internal(call: &CallContext, detail: &dyn std::fmt::Display) -> ToolError {
    tracing::error!(parent: &call.span, error = %detail, "tool call failed");
    ToolError::new(
        ErrorCode::InternalError,
        "Something went wrong on our side. Try once more; if it keeps failing, quote the reference.",
        &call.reference,
    )
}
