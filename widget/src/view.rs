//! The widget's components: plain functions from data to views.
//!
//! Nothing here knows about hosts; buttons emit [`Action`]s through a callback and carry a
//! stable `data-action` attribute (plus ids) so the SSR fallback can wire the same buttons.
//! All data is inserted as text or attribute values, which Leptos escapes; never `inner_html`.

pub mod delivery;
mod error;
mod order;
mod results;

use giftgenius_types::ToolName;
use giftgenius_types::orders::OrderStatus;
use leptos::prelude::*;

use crate::action::Action;
use crate::context::{DisplayMode, RenderContext};
use crate::decide::{Next, data_call};
use crate::i18n::{Lang, Msg};
use crate::state::{OrderListActions, ViewState};

pub use error::error_view;
pub use order::{checkout_view, confirm_view, data_deleted_view, order_list_view, order_placed_view};
pub use results::{empty_view, gift_card, notice_view, partial_banner, reason_text, results_view};

/// The root with fixed values: what SSR renders. The wasm app builds the same root reactively.
pub fn static_root(state: ViewState, ctx: RenderContext, on_action: Callback<Action>) -> impl IntoView {
    let announcement = state.announcement(ctx.language());
    let kind = state.kind();
    let theme = ctx.theme.as_str();
    let lang = ctx.lang().to_string();
    let display = ctx.display_attribute();
    // Where Back (Cancel on the confirmation) returns to in the no-wasm runtime: see `decide::Next::Back`.
    let home = matches!(state, ViewState::Results { .. } | ViewState::Empty { .. }).then_some("");
    // A cancelled order's row, hidden, for the list it was cancelled from (`decide::Call::patch`).
    let part = match &state {
        ViewState::OrderPlaced { order, .. } if order.status == OrderStatus::Cancelled => Some(order.clone()),
        _ => None,
    }
    .map(|order| {
        let row = order::order_row(order, &OrderListActions::default(), &ctx, on_action);
        view! { <ul class="gg-parts" hidden>{row}</ul> }
    });
    // Two shapes rather than an optional part, so every other state keeps its exact markup.
    let body = match part {
        Some(part) => (body(state, &ctx, on_action), part).into_any(),
        None => body(state, &ctx, on_action),
    };
    view! {
        <div id="giftgenius-app" class="gg-root" data-theme=theme data-state=kind data-display-mode=display data-home=home lang=lang>
            <p class="gg-live" role="status" aria-live="polite">{announcement}</p>
            {body}
        </div>
    }
}

/// The root bound to signals: what the wasm app mounts. Same markup as [`static_root`].
///
/// The live region stays in the DOM across state changes (so screen readers announce the
/// new text); only the body below it is rebuilt.
pub fn reactive_root(
    state: RwSignal<ViewState>,
    ctx: RwSignal<RenderContext>,
    on_action: Callback<Action>,
) -> impl IntoView {
    view! {
        <div
            id="giftgenius-app"
            class="gg-root"
            data-theme=move || ctx.with(|c| c.theme.as_str())
            data-state=move || state.with(|s| s.kind())
            data-display-mode=move || ctx.with(|c| c.display_attribute())
            lang=move || ctx.with(|c| c.lang().to_string())
        >
            <p class="gg-live" role="status" aria-live="polite">{move || {
                let lang = ctx.with(|c| c.language());
                state.with(|s| s.announcement(lang))
            }}</p>
            {move || {
                let c = ctx.get();
                body(state.get(), &c, on_action)
            }}
        </div>
    }
}

/// Everything below the live region: the display toggle (when offered) and the state's view.
/// Without a toggle the markup is exactly the state's (no placeholder for the missing button).
fn body(state: ViewState, ctx: &RenderContext, on_action: Callback<Action>) -> AnyView {
    let comparable = matches!(state, ViewState::Results { ref gifts, .. } if gifts.len() > 1);
    let view = state_view(state, ctx, on_action);
    match display_toggle(ctx, comparable, on_action) {
        Some(toggle) => (toggle, view).into_any(),
        None => view,
    }
}

/// "Compare all" on a list of results shown inline, and "Back to the chat" in full screen; only
/// when the host offers full screen (it declared the mode in `availableDisplayModes`). Which one
/// shows follows the mode the host reports, not the one asked for.
pub fn display_toggle(
    ctx: &RenderContext,
    comparable: bool,
    on_action: Callback<Action>,
) -> Option<impl IntoView + use<>> {
    let (label, mode) = match ctx.display_mode {
        DisplayMode::Fullscreen => (Msg::ExitFullScreen, DisplayMode::Inline),
        DisplayMode::Inline | DisplayMode::Pip if comparable => (Msg::CompareAll, DisplayMode::Fullscreen),
        DisplayMode::Inline | DisplayMode::Pip => return None,
    };
    if !ctx.can_fullscreen {
        return None;
    }
    let lang = ctx.language();
    let label = lang.t(label);
    Some(view! {
        <div class="gg-toolbar">
            <button
                type="button"
                class="gg-btn gg-btn-secondary gg-btn-small"
                data-action="display-mode"
                data-call=data_call(lang, || Next::DisplayMode(mode))
                data-mode=mode.as_str()
                on:click=move |_| on_action.run(Action::SetDisplayMode { mode })
            >
                {label}
            </button>
        </div>
    })
}

/// The body for one state.
pub fn state_view(state: ViewState, ctx: &RenderContext, on_action: Callback<Action>) -> AnyView {
    match state {
        ViewState::Loading => loading_view(Vec::new(), ctx).into_any(),
        ViewState::LoadingWith { so_far } => loading_view(so_far.phrases(ctx.language()), ctx).into_any(),
        ViewState::Results { query, gifts, notice, partial } => {
            results_view(query, gifts, notice, partial, ctx, on_action).into_any()
        }
        ViewState::Empty { query, notice, partial } => empty_view(query, notice, partial, ctx, on_action).into_any(),
        ViewState::Error { tool, error } => error_view(tool, error, ctx, on_action).into_any(),
        ViewState::ConfirmPurchase { draft, delivery, card, busy, error } => {
            confirm_view(draft, delivery, card, busy, error, ctx, on_action).into_any()
        }
        ViewState::OrderPlaced { order, authentication_url } => {
            order_placed_view(order, authentication_url, ctx, on_action).into_any()
        }
        ViewState::OrderList { orders, next_cursor, actions } => {
            order_list_view(orders, next_cursor, actions, ctx, on_action).into_any()
        }
        ViewState::DataDeleted { summary } => data_deleted_view(summary, ctx).into_any(),
        ViewState::Checkout { checkout } => checkout_view(checkout, ctx, on_action).into_any(),
        ViewState::Cancelled => cancelled_view(ctx.language()).into_any(),
        ViewState::ToolCancelled { reason, retry } => {
            tool_cancelled_view(reason, retry, ctx.language(), on_action).into_any()
        }
        ViewState::OutOfDate { .. } => out_of_date_view(ctx.language()).into_any(),
    }
}

/// Skeleton cards while the tool runs; `aria-busy` tells assistive tech to wait. `so_far`: what
/// the model's streamed arguments say already, as text ("So far: for your friend · hiking").
pub fn loading_view(so_far: Vec<String>, ctx: &RenderContext) -> impl IntoView {
    let lang = ctx.language();
    let skeleton = || {
        view! {
            <li class="gg-card gg-skeleton" aria-hidden="true">
                <div class="gg-skel gg-skel-img"></div>
                <div class="gg-skel gg-skel-line"></div>
                <div class="gg-skel gg-skel-line gg-skel-short"></div>
            </li>
        }
    };
    // Two shapes rather than an optional line, so plain loading keeps its exact markup.
    let title = view! { <h2 id="gg-title" class="gg-title">{lang.t(Msg::FindingGiftIdeas)}</h2> };
    let heading = if so_far.is_empty() {
        title.into_any()
    } else {
        let line = view! { <p class="gg-muted gg-summary gg-so-far">{lang.f(Msg::SoFar, &[("items", &so_far.join(" · "))])}</p> };
        (title, line).into_any()
    };
    view! {
        <section class="gg-section gg-loading" aria-busy="true" aria-labelledby="gg-title">
            {heading}
            <ul class="gg-strip" role="list">{skeleton()}{skeleton()}{skeleton()}</ul>
        </section>
    }
}

/// The contract moved on: say so and guess nothing.
pub fn out_of_date_view(lang: Lang) -> impl IntoView {
    view! {
        <section class="gg-section gg-out-of-date" aria-labelledby="gg-title">
            <h2 id="gg-title" class="gg-title">{lang.t(Msg::OutOfDateTitle)}</h2>
            <p class="gg-muted">{lang.t(Msg::OutOfDateBody)}</p>
        </section>
    }
}

/// Left the confirmation with no earlier results to return to.
pub fn cancelled_view(lang: Lang) -> impl IntoView {
    view! {
        <section class="gg-section gg-cancelled" aria-labelledby="gg-title">
            <h2 id="gg-title" class="gg-title">{lang.t(Msg::PurchaseCancelledTitle)}</h2>
            <p class="gg-muted">{lang.t(Msg::PurchaseCancelledBody)}</p>
        </section>
    }
}

/// The host cancelled the call this view was opened for: no result will come. "Try again" only
/// when the view knows the tool and its complete arguments; otherwise the chat is the way back.
pub fn tool_cancelled_view(
    reason: Option<String>,
    retry: Option<ToolName>,
    lang: Lang,
    on_action: Callback<Action>,
) -> impl IntoView {
    let next = match retry {
        Some(tool) => view! {
            <div class="gg-actions">
                <button
                    type="button"
                    class="gg-btn gg-btn-primary"
                    data-action="retry"
                    data-call=data_call(lang, || Next::Retry)
                    data-tool=tool.as_str()
                    on:click=move |_| on_action.run(Action::Retry)
                >
                    {lang.t(Msg::TryAgain)}
                </button>
            </div>
        }
        .into_any(),
        None => view! { <p class="gg-muted">{lang.t(Msg::AskAgainInChat)}</p> }.into_any(),
    };
    view! {
        <section class="gg-section gg-tool-cancelled" aria-labelledby="gg-title">
            <h2 id="gg-title" class="gg-title">{lang.t(Msg::RequestStoppedTitle)}</h2>
            <p>{lang.t(Msg::RequestStoppedBody)}</p>
            {reason.map(|r| view! { <p class="gg-muted gg-reason"><small>{lang.f(Msg::StopReason, &[("reason", &r)])}</small></p> })}
            {next}
        </section>
    }
}
