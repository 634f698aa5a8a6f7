//! What a user can ask the widget to do.
//!
//! Components only emit these through a callback; they never talk to a host. That keeps the
//! components host-agnostic (ChatGPT, MCP Apps, the no-WebAssembly fallback) and testable.

use serde_json::{Map, Value};

use crate::context::DisplayMode;

/// A user intent, emitted by a button.
///
/// Each variant has a matching `data-action` attribute on its button (see [`Action::data_action`]),
/// so a script without Leptos can wire the same buttons in the SSR fallback.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Repeat the call that failed (only offered when the error says `retryable`).
    Retry,
    /// Start buying this gift: `prepare_order`.
    Choose { gift_id: String },
    /// The human confirmed the draft: `commit_order` (also "Try again" after a transient failure,
    /// which reuses the same idempotency key).
    Confirm,
    /// Leave the confirmation without buying.
    Cancel,
    /// Re-run `suggest_gifts` with these arguments merged over the previous ones.
    ApplySuggestion { set_arguments: Map<String, Value> },
    /// Open an outbound link (the hosted checkout page) through the host.
    OpenLink { url: String },
    /// Ask the host to show the view in another display mode (full screen, or back inline).
    SetDisplayMode { mode: DisplayMode },
}

impl Action {
    /// The stable `data-action` value of the button that emits this action.
    pub const fn data_action(&self) -> &'static str {
        match self {
            Action::Retry => "retry",
            Action::Choose { .. } => "choose",
            Action::Confirm => "confirm",
            Action::Cancel => "cancel",
            Action::ApplySuggestion { .. } => "suggestion",
            Action::OpenLink { .. } => "open-checkout",
            Action::SetDisplayMode { .. } => "display-mode",
        }
    }
}
