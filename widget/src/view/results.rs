//! Gift cards, the notice with its suggestion buttons, and the banner for failed stores.

use giftgenius_types::{GiftCard, Notice, Partial, RelationshipType, SuggestGiftsQuery};
use leptos::prelude::*;

use crate::action::Action;
use crate::context::RenderContext;
use crate::flow::safe_url;
use crate::format::format_money;

/// How many reasons and tags a compact card shows.
const MAX_REASONS: usize = 3;
const MAX_TAGS: usize = 4;

/// One line describing what was searched for, so the user can see what the model understood.
fn query_summary(query: &SuggestGiftsQuery, locale: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    if query.relationship_type != RelationshipType::Other {
        parts.push(format!("For your {}", query.relationship_type.as_str()));
    }
    if let Some(occasion) = query.occasion {
        parts.push(occasion.phrase().to_string());
    }
    if let Some(age) = query.age {
        parts.push(format!("age {age}"));
    }
    if !query.interests.is_empty() {
        parts.push(query.interests.join(", "));
    }
    match (&query.budget_min, &query.budget_max) {
        (Some(min), Some(max)) => parts.push(format!("{}–{}", format_money(min, locale), format_money(max, locale))),
        (Some(min), None) => parts.push(format!("from {}", format_money(min, locale))),
        (None, Some(max)) => parts.push(format!("up to {}", format_money(max, locale))),
        (None, None) => {}
    }
    parts.join(" · ")
}

/// A list of gift cards, with the partial banner and notice above them.
pub fn results_view(
    query: SuggestGiftsQuery,
    gifts: Vec<GiftCard>,
    notice: Option<Notice>,
    partial: Option<Partial>,
    ctx: &RenderContext,
    on_action: Callback<Action>,
) -> impl IntoView {
    let summary = query_summary(&query, &ctx.locale);
    let cards = gifts.into_iter().map(|gift| gift_card(gift, ctx, on_action)).collect_view();
    view! {
        <section class="gg-section gg-results" aria-labelledby="gg-title">
            <header class="gg-header">
                <h2 id="gg-title" class="gg-title">"Gift ideas"</h2>
                <p class="gg-muted gg-summary">{summary}</p>
            </header>
            {partial.map(partial_banner)}
            {notice.map(|n| notice_view(n, on_action))}
            <ul class="gg-grid" role="list">{cards}</ul>
        </section>
    }
}

/// Nothing matched: the notice explains, its suggestions are one click away.
pub fn empty_view(
    query: SuggestGiftsQuery,
    notice: Option<Notice>,
    partial: Option<Partial>,
    ctx: &RenderContext,
    on_action: Callback<Action>,
) -> impl IntoView {
    let summary = query_summary(&query, &ctx.locale);
    let fallback = notice.is_none().then(|| view! { <p>"No gifts matched this request."</p> });
    view! {
        <section class="gg-section gg-empty" aria-labelledby="gg-title">
            <header class="gg-header">
                <h2 id="gg-title" class="gg-title">"No matching gifts"</h2>
                <p class="gg-muted gg-summary">{summary}</p>
            </header>
            {partial.map(partial_banner)}
            {notice.map(|n| notice_view(n, on_action))}
            {fallback}
        </section>
    }
}

/// The notice message and one button per suggestion (re-runs the search with its arguments).
pub fn notice_view(notice: Notice, on_action: Callback<Action>) -> impl IntoView {
    let buttons = notice
        .suggestions
        .into_iter()
        .map(|suggestion| {
            // The fallback script reads the arguments from here; Leptos escapes the JSON.
            let json = serde_json::Value::Object(suggestion.set_arguments.clone()).to_string();
            let set_arguments = suggestion.set_arguments;
            view! {
                <li>
                    <button
                        type="button"
                        class="gg-btn gg-btn-secondary"
                        data-action="suggestion"
                        data-set-arguments=json
                        on:click=move |_| on_action.run(Action::ApplySuggestion { set_arguments: set_arguments.clone() })
                    >
                        {suggestion.message}
                    </button>
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="gg-notice" role="note">
            <p>{notice.message}</p>
            <ul class="gg-suggestions" role="list">{buttons}</ul>
        </div>
    }
}

/// Which stores did not answer, shown above the cards so nobody mistakes the list for complete.
pub fn partial_banner(partial: Partial) -> impl IntoView {
    let sources = partial
        .failed_sources
        .into_iter()
        .map(|s| {
            let source = s.source.clone();
            view! {
                <li data-source=source data-code=s.code.as_str()>
                    <strong>{s.source}</strong>": "{s.message}
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="gg-banner gg-banner-warn" role="note">
            <p>{partial.message}</p>
            <ul class="gg-failed-sources">{sources}</ul>
        </div>
    }
}

/// One compact gift card.
pub fn gift_card(gift: GiftCard, ctx: &RenderContext, on_action: Callback<Action>) -> impl IntoView {
    let price = format_money(&gift.price, &ctx.locale);
    let image = safe_url(&gift.image_url).map(|src| {
        view! {
            <img class="gg-card-img" src=src.to_string() alt=gift.title.clone() width="96" height="96" loading="lazy" decoding="async"/>
        }
    });
    let reasons = (!gift.reasons.is_empty()).then(|| {
        let items = gift.reasons.iter().take(MAX_REASONS).map(|r| view! { <li>{r.text.clone()}</li> }).collect_view();
        view! { <ul class="gg-reasons">{items}</ul> }
    });
    let tags = (!gift.tags.is_empty()).then(|| {
        let items =
            gift.tags.iter().take(MAX_TAGS).map(|t| view! { <li class="gg-tag">{t.clone()}</li> }).collect_view();
        view! { <ul class="gg-tags" aria-label="Tags">{items}</ul> }
    });
    let stock = (!gift.in_stock).then(|| view! { <span class="gg-badge gg-badge-out">"Out of stock"</span> });
    let label =
        if gift.in_stock { format!("Choose {}", gift.title) } else { format!("{} is out of stock", gift.title) };
    let id = gift.id.clone();
    let card_id = gift.id.clone();
    view! {
        <li class="gg-card" data-gift-id=card_id>
            <article class="gg-card-inner">
                {image}
                <div class="gg-card-body">
                    <h3 class="gg-card-title">{gift.title}</h3>
                    <p class="gg-merchant">{gift.merchant.name}</p>
                    <p class="gg-price">{price} {stock}</p>
                    <p class="gg-desc">{gift.description}</p>
                    {reasons}
                    {tags}
                </div>
                <button
                    type="button"
                    class="gg-btn gg-btn-primary gg-choose"
                    data-action="choose"
                    data-gift-id=gift.id
                    aria-label=label
                    disabled=!gift.in_stock
                    on:click=move |_| on_action.run(Action::Choose { gift_id: id.clone() })
                >
                    "Choose"
                </button>
            </article>
        </li>
    }
}
