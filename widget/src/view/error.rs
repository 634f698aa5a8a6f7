//! The error state and the inline error of a failed purchase attempt.
//!
//! "Try again" appears only when the error says `retryable`: the server decides, the widget
//! never infers it. The reference is shown small so a user can quote it to support. The text
//! comes from the error's code in the person's language; the server's `message` is written for
//! the model and stays in the result (and in English) for it.

use giftgenius_types::{ErrorCategory, ToolError, ToolName};
use leptos::either::Either;
use leptos::prelude::*;

use crate::context::RenderContext;
use crate::decide::{Next, data_decision};
use crate::i18n::{Lang, Msg, words};
use crate::view::order::outbound_link;

/// A field error as the person reads it: its rule in their language (`field_text.rs`).
pub(crate) use crate::field_text::field_message;

/// Message, field errors, wait hint and reference: shared by the error state and the inline error.
/// Each field error's words carry `data-field` (the field's path, as the form's input names it):
/// the runtime puts them next to that input when a form it sent is refused.
pub(crate) fn error_details(error: &ToolError, lang: Lang) -> impl IntoView + use<> {
    let fields = (!error.field_errors.is_empty()).then(|| {
        let items = error
            .field_errors
            .iter()
            .map(|f| {
                let message = field_message(lang, f);
                view! { <li><code>{f.field.clone()}</code>": "<span data-field=f.field.clone()>{message}</span></li> }
            })
            .collect_view();
        view! { <ul class="gg-field-errors">{items}</ul> }
    });
    // A non-retryable error can still carry a wait (a daily limit resets); never say "try again" then.
    let lead = if error.retryable { Msg::TryAgainIn } else { Msg::ResetsIn };
    let wait = error.retry_after_ms.map(|ms| {
        view! { <p class="gg-muted gg-wait">{lang.f(lead, &[("wait", &words::wait_phrase(lang, ms))])}</p> }
    });
    let reference = (!error.reference.is_empty()).then(|| {
        view! { <p class="gg-ref"><small>{lang.f(Msg::Reference, &[("reference", &error.reference)])}</small></p> }
    });
    view! {
        <p class="gg-error-message">{words::error_text(lang, error.code)}</p>
        {fields}
        {wait}
        {reference}
    }
}

/// A tool's error as the whole view. `add_card_url`: with `NO_SAVED_CARD`, the card page's link,
/// offered as Add a card (opened like every outbound link: through the host where it opens them).
pub fn error_view(
    tool: ToolName,
    error: ToolError,
    add_card_url: Option<String>,
    ctx: &RenderContext,
) -> impl IntoView + use<> {
    let lang = ctx.language();
    // One action at most: Add a card comes with an error nothing retries until a card is saved.
    let add_card = add_card_url.map(|url| {
        Either::Left(view! {
            <div class="gg-actions">
                {outbound_link("gg-btn gg-btn-primary gg-add-card", url, lang.t(Msg::AddCard))}
            </div>
        })
    });
    let action = add_card.or_else(|| {
        error.retryable.then(|| {
            Either::Right(view! {
            <div class="gg-actions">
                <button
                    type="button"
                    class="gg-btn gg-btn-primary"
                    data-action="retry"
                    data-call=data_decision(Next::Retry)
                    data-tool=tool.as_str()
                >
                    {lang.t(Msg::TryAgain)}
                </button>
            </div>
            })
        })
    });
    view! {
        <section
            class="gg-section gg-error"
            aria-labelledby="gg-title"
            data-category=category_name(error.category)
            data-code=error.code.as_str()
        >
            <h2 id="gg-title" class="gg-title">{words::error_heading(lang, error.category, tool)}</h2>
            {error_details(&error, lang)}
            {action}
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
