//! The error state and the inline error of a failed purchase attempt.
//!
//! "Try again" appears only when the error says `retryable`: the server decides, the widget
//! never infers it. The reference is shown small so a user can quote it to support.

use giftgenius_types::{ErrorCategory, ToolError, ToolName};
use leptos::prelude::*;

use crate::action::Action;
use crate::view::tool_label;

/// A friendly heading for an error's category.
fn heading(category: ErrorCategory, tool: ToolName) -> String {
    match category {
        ErrorCategory::Transient => match tool {
            // Writes are not "loaded": say what did not happen.
            ToolName::CommitOrder => "Couldn't place your order right now".to_string(),
            ToolName::PrepareOrder => "Couldn't prepare your order right now".to_string(),
            ToolName::CreateCheckoutSession => "Couldn't create the checkout right now".to_string(),
            ToolName::CancelOrder => "Couldn't cancel your order right now".to_string(),
            ToolName::DeleteMyData => "Couldn't delete your data right now".to_string(),
            _ => format!("Couldn't load {} right now", tool_label(tool)),
        },
        ErrorCategory::Validation => "Some details need a fix".to_string(),
        ErrorCategory::Business => "That can't be done right now".to_string(),
        ErrorCategory::Permission => "Your confirmation is needed".to_string(),
        ErrorCategory::Other => "Something went wrong on our side".to_string(),
    }
}

/// "about 30 seconds", "about 5 minutes", "about 3 hours".
fn wait_phrase(ms: u64) -> String {
    let seconds = ms.div_ceil(1000).max(1);
    match seconds {
        1 => "about 1 second".to_string(),
        0..90 => format!("about {seconds} seconds"),
        90..5400 => format!("about {} minutes", seconds.div_ceil(60)),
        _ => format!("about {} hours", seconds.div_ceil(3600)),
    }
}

/// Message, field errors, wait hint and reference: shared by the error state and the inline error.
pub(crate) fn error_details(error: &ToolError) -> impl IntoView + use<> {
    let fields = (!error.field_errors.is_empty()).then(|| {
        let items = error
            .field_errors
            .iter()
            .map(|f| view! { <li><code>{f.field.clone()}</code>": "{f.message.clone()}</li> })
            .collect_view();
        view! { <ul class="gg-field-errors">{items}</ul> }
    });
    // A non-retryable error can still carry a wait (a daily limit resets); never say "try again" then.
    let lead = if error.retryable { "Try again in " } else { "This resets in " };
    let wait = error.retry_after_ms.map(|ms| view! { <p class="gg-muted gg-wait">{lead}{wait_phrase(ms)}"."</p> });
    let reference = (!error.reference.is_empty())
        .then(|| view! { <p class="gg-ref"><small>"Ref: "{error.reference.clone()}</small></p> });
    view! {
        <p class="gg-error-message">{error.message.clone()}</p>
        {fields}
        {wait}
        {reference}
    }
}

/// A tool's error as the whole view.
pub fn error_view(tool: ToolName, error: ToolError, on_action: Callback<Action>) -> impl IntoView {
    let retry = error.retryable.then(|| {
        view! {
            <div class="gg-actions">
                <button
                    type="button"
                    class="gg-btn gg-btn-primary"
                    data-action="retry"
                    data-tool=tool.as_str()
                    on:click=move |_| on_action.run(Action::Retry)
                >
                    "Try again"
                </button>
            </div>
        }
    });
    view! {
        <section
            class="gg-section gg-error"
            aria-labelledby="gg-title"
            data-category=category_name(error.category)
            data-code=error.code.as_str()
        >
            <h2 id="gg-title" class="gg-title">{heading(error.category, tool)}</h2>
            {error_details(&error)}
            {retry}
        </section>
    }
}

pub(crate) const fn category_name(category: ErrorCategory) -> &'static str {
    match category {
        ErrorCategory::Transient => "transient",
        ErrorCategory::Validation => "validation",
        ErrorCategory::Business => "business",
        ErrorCategory::Permission => "permission",
        ErrorCategory::Other => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::wait_phrase;

    #[test]
    fn waits_read_naturally() {
        assert_eq!(wait_phrase(1), "about 1 second");
        assert_eq!(wait_phrase(30_000), "about 30 seconds");
        assert_eq!(wait_phrase(300_000), "about 5 minutes");
        assert_eq!(wait_phrase(3 * 3_600_000), "about 3 hours");
    }
}
