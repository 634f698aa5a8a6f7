//! The widget's components: plain functions from data to views.
//!
//! Nothing here knows about hosts or acts on a click: each control carries what it does as
//! `data-call` (the decision of `decide.rs`, made when the view is built), which the packed
//! document's runtime executes, and a stable `data-action` attribute (plus ids) for tests and CSS.
//! All data is inserted as text or attribute values, which Leptos escapes; never `inner_html`.

pub mod delivery;
mod error;
mod order;
mod results;

use giftgenius_types::ToolName;
use giftgenius_types::orders::OrderStatus;
use leptos::either::Either;
use leptos::prelude::*;

use crate::context::{DisplayMode, RenderContext};
use crate::decide::{Next, data_decision};
use crate::i18n::{Lang, Msg};
use crate::state::{OrderListActions, ViewState};

pub use error::error_view;
pub use order::{checkout_view, confirm_view, data_deleted_view, order_list_view, order_placed_view};
pub use results::{empty_view, gift_card, notice_view, partial_banner, reason_text, results_view};

/// The root with fixed values: what SSR renders. The wasm builds the same root, its body
/// mounted anew for each state (see `bridge.rs`).
pub fn static_root(state: ViewState, ctx: RenderContext) -> impl IntoView {
    let announcement = state.announcement(ctx.language());
    let kind = state.kind();
    let theme = ctx.theme.as_str();
    let lang = ctx.lang().to_string();
    let display = ctx.display_attribute();
    let home = home(&state);
    // A cancelled order's row, hidden, for the list it was cancelled from (`decide::Call::patch`).
    let part = match &state {
        ViewState::OrderPlaced { order, .. } if order.status == OrderStatus::Cancelled => Some(order.clone()),
        _ => None,
    }
    .map(|order| {
        let row = order::order_row(order, &OrderListActions::default(), &ctx);
        view! { <ul class="gg-parts" hidden>{row}</ul> }
    });
    // Two shapes rather than an optional part, so every other state keeps its exact markup.
    let body = match part {
        Some(part) => Either::Left((body(state, &ctx), part)),
        None => Either::Right(body(state, &ctx)),
    };
    view! {
        <div id="giftgenius-app" class="gg-root" data-theme=theme data-state=kind data-display-mode=display data-home=home lang=lang>
            <p class="gg-live" role="status" aria-live="polite">{announcement}</p>
            {body}
        </div>
    }
}

/// `data-home` of the root: where Back (Cancel on the confirmation) returns to, see
/// `decide::Next::Back`.
pub fn home(state: &ViewState) -> Option<&'static str> {
    matches!(state, ViewState::Results { .. } | ViewState::Empty { .. }).then_some("")
}

/// Everything below the live region: the display toggles and the state's view.
///
/// The views choose between shapes with `Either` rather than `AnyView`: a type-erased view keeps
/// the code that diffs one screen into another, which the wasm never runs (it mounts each
/// screen anew, see `bridge.rs`).
pub fn body(state: ViewState, ctx: &RenderContext) -> impl IntoView + use<> {
    let comparable = matches!(state, ViewState::Results { ref gifts, .. } if gifts.len() > 1);
    let compare = comparable.then(|| display_toggle(ctx, DisplayMode::Inline));
    (compare, display_toggle(ctx, DisplayMode::Fullscreen), state_view(state, ctx))
}

/// The toggle shown in display mode `when`: "Compare all" on a list of results shown inline,
/// "Back to the chat" in full screen. Shown only where the host offers full screen (it declared
/// the mode in `availableDisplayModes`) and reports `when` as its mode (not the one asked for).
/// The server, which knows neither, renders it hidden with `data-when` for the runtime, which
/// shows it by the same rule when the host has said.
pub fn display_toggle(ctx: &RenderContext, when: DisplayMode) -> impl IntoView + use<> {
    let (label, mode) = match when {
        DisplayMode::Fullscreen => (Msg::ExitFullScreen, DisplayMode::Inline),
        DisplayMode::Inline | DisplayMode::Pip => (Msg::CompareAll, DisplayMode::Fullscreen),
    };
    let now = match ctx.display_mode {
        DisplayMode::Fullscreen => DisplayMode::Fullscreen,
        DisplayMode::Inline | DisplayMode::Pip => DisplayMode::Inline,
    };
    let shown = ctx.can_fullscreen && now == when;
    let lang = ctx.language();
    view! {
        <div class="gg-toolbar" data-when=when.as_str() hidden=!shown>
            <button
                type="button"
                class="gg-btn gg-btn-secondary gg-btn-small"
                data-action="display-mode"
                data-call=data_decision(Next::DisplayMode(mode))
                data-mode=mode.as_str()
            >
                {lang.t(label)}
            </button>
        </div>
    }
}

/// The body for one state.
pub fn state_view(state: ViewState, ctx: &RenderContext) -> impl IntoView + use<> {
    use leptos::either::EitherOf12 as V;
    match state {
        ViewState::Loading => V::A(loading_view(Vec::new(), ctx)),
        ViewState::LoadingWith { so_far } => V::A(loading_view(so_far.phrases(ctx.language()), ctx)),
        ViewState::Results { query, gifts, notice, partial } => V::B(results_view(query, gifts, notice, partial, ctx)),
        ViewState::Empty { query, notice, partial } => V::C(empty_view(query, notice, partial, ctx)),
        ViewState::Error { tool, error, add_card_url } => V::D(error_view(tool, error, add_card_url, ctx)),
        ViewState::ConfirmPurchase { draft, delivery, card } => V::E(confirm_view(draft, delivery, card, ctx)),
        ViewState::OrderPlaced { order, authentication_url } => V::F(order_placed_view(order, authentication_url, ctx)),
        ViewState::OrderList { orders, next_cursor, actions } => {
            V::G(order_list_view(orders, next_cursor, actions, ctx))
        }
        ViewState::DataDeleted { summary } => V::H(data_deleted_view(summary, ctx)),
        ViewState::Checkout { checkout } => V::I(checkout_view(checkout, ctx)),
        ViewState::Cancelled => V::J(cancelled_view(ctx.language())),
        ViewState::ToolCancelled { reason, retry } => V::K(tool_cancelled_view(reason, retry, ctx.language())),
        ViewState::OutOfDate { .. } => V::L(out_of_date_view(ctx.language())),
    }
}

/// Skeleton cards while the tool runs; `aria-busy` tells assistive tech to wait. `so_far`: what
/// the model's streamed arguments say already, as text ("So far: for your friend · hiking").
pub fn loading_view(so_far: Vec<String>, ctx: &RenderContext) -> impl IntoView + use<> {
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
        Either::Left(title)
    } else {
        let line = view! { <p class="gg-muted gg-summary gg-so-far">{lang.f(Msg::SoFar, &[("items", &so_far.join(" · "))])}</p> };
        Either::Right((title, line))
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
pub fn tool_cancelled_view(reason: Option<String>, retry: Option<ToolName>, lang: Lang) -> impl IntoView {
    let next = match retry {
        Some(tool) => Either::Left(view! {
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
        }),
        None => Either::Right(view! { <p class="gg-muted">{lang.t(Msg::AskAgainInChat)}</p> }),
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
