//! Gift cards, the notice with its suggestion buttons, and the banner for failed stores.
//!
//! Inline (and in picture-in-picture) the results are one horizontal strip of compact cards:
//! picture, title, price, merchant, the one reason that says most, Choose. In full screen
//! ("Compare all") the same gifts are a grid of full cards: description, every reason, tags.

use giftgenius_types::envelope::NoticeCode;
use giftgenius_types::wire::photo_srcset;
use giftgenius_types::{
    Currency, ErrorCode, GiftCard, MatchVia, Money, Notice, Partial, Reason, RelationshipType, SuggestGiftsQuery,
    Suggestion, Why,
};
use leptos::either::Either;
use leptos::prelude::*;
use serde_json::Value;

use crate::context::{DisplayMode, RenderContext};
use crate::decide::{self, data_call};
use crate::flow::safe_url;
use crate::format::format_money;
use crate::i18n::{Lang, Msg, words};

/// How many tags a full card shows.
const MAX_TAGS: usize = 6;

/// One line describing what was searched for, so the user can see what the model understood.
fn query_summary(query: &SuggestGiftsQuery, ctx: &RenderContext) -> String {
    let lang = ctx.language();
    let locale = ctx.locale.as_str();
    let mut parts: Vec<String> = Vec::new();
    if query.relationship_type != RelationshipType::Other {
        parts.push(lang.f(Msg::ForYour, &[("who", words::relationship(lang, query.relationship_type))]));
    }
    if let Some(occasion) = query.occasion {
        parts.push(words::occasion(lang, occasion).to_string());
    }
    if let Some(age) = query.age {
        parts.push(lang.f(Msg::AgeYears, &[("age", &age.to_string())]));
    }
    if !query.interests.is_empty() {
        parts.push(query.interests.join(", "));
    }
    let money = |m: &Money| format_money(m, locale);
    match (&query.budget_min, &query.budget_max) {
        (Some(min), Some(max)) => parts.push(lang.f(Msg::BudgetRange, &[("min", &money(min)), ("max", &money(max))])),
        (Some(min), None) => parts.push(lang.f(Msg::BudgetFrom, &[("min", &money(min))])),
        (None, Some(max)) => parts.push(lang.f(Msg::BudgetUpTo, &[("max", &money(max))])),
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
) -> impl IntoView + use<> {
    let lang = ctx.language();
    let summary = query_summary(&query, ctx);
    let full = ctx.display_mode == DisplayMode::Fullscreen;
    let count = gifts.len();
    // Inline, a strip that scrolls sideways: say so, since the cards past the edge are hidden.
    let hint = (!full && count > 1)
        .then(|| view! { <p class="gg-muted gg-hint">{lang.f(Msg::ScrollHint, &[("count", &count.to_string())])}</p> });
    let cards = gifts.into_iter().map(|gift| gift_card(gift, ctx)).collect_view();
    let list = if full {
        Either::Left(view! { <ul class="gg-grid" role="list">{cards}</ul> })
    } else {
        Either::Right(view! { <ul class="gg-strip" role="list" aria-label=lang.t(Msg::IdeasListLabel)>{cards}</ul> })
    };
    view! {
        <section class="gg-section gg-results" aria-labelledby="gg-title">
            <header class="gg-header">
                <h2 id="gg-title" class="gg-title">{lang.t(Msg::GiftIdeas)}</h2>
                <p class="gg-muted gg-summary">{summary}</p>
                {hint}
            </header>
            {partial.map(|p| partial_banner(p, lang))}
            {notice.map(|n| notice_view(n, Some(count), query.currency, ctx))}
            {list}
        </section>
    }
}

/// Nothing matched: the notice explains, its suggestions are one click away.
pub fn empty_view(
    query: SuggestGiftsQuery,
    notice: Option<Notice>,
    partial: Option<Partial>,
    ctx: &RenderContext,
) -> impl IntoView + use<> {
    let lang = ctx.language();
    let summary = query_summary(&query, ctx);
    let fallback = notice.is_none().then(|| view! { <p>{lang.t(Msg::NoGiftsMatched)}</p> });
    view! {
        <section class="gg-section gg-empty" aria-labelledby="gg-title">
            <header class="gg-header">
                <h2 id="gg-title" class="gg-title">{lang.t(Msg::NoMatchingGifts)}</h2>
                <p class="gg-muted gg-summary">{summary}</p>
            </header>
            {partial.map(|p| partial_banner(p, lang))}
            {notice.map(|n| notice_view(n, None, query.currency, ctx))}
            {fallback}
        </section>
    }
}

/// A suggestion's button text, from the arguments it changes (its `message` is the model's).
fn suggestion_label(suggestion: &Suggestion, currency: Currency, ctx: &RenderContext) -> String {
    let lang = ctx.language();
    let count = suggestion.matches.to_string();
    let set = &suggestion.set_arguments;
    let only = |key: &str| set.len() == 1 && set.contains_key(key);
    let text = if only("budget_max") {
        // Whole major units (the server rounds them so they read well).
        set["budget_max"].as_i64().map(|major| {
            let minor = major.saturating_mul(10i64.pow(currency.exponent()));
            let max = format_money(&Money::new(minor, currency), &ctx.locale);
            lang.f(Msg::SuggestRaiseBudget, &[("max", &max), ("count", &count)])
        })
    } else if only("budget_min") && set["budget_min"].is_null() {
        Some(lang.f(Msg::SuggestNoMinimum, &[("count", &count)]))
    } else if only("age") && set["age"].is_null() {
        Some(lang.f(Msg::SuggestAnyAge, &[("count", &count)]))
    } else if only("interests") {
        match set["interests"].as_array().map(Vec::as_slice) {
            Some([]) => Some(lang.f(Msg::SuggestAnyInterest, &[("count", &count)])),
            Some([Value::String(interest)]) => {
                Some(lang.f(Msg::SuggestOnlyInterest, &[("interest", interest), ("count", &count)]))
            }
            _ => None,
        }
    } else {
        None
    };
    text.unwrap_or_else(|| lang.f(Msg::SuggestOther, &[("count", &count)]))
}

/// The notice and one button per suggestion (re-runs the search with its arguments).
/// `shown`: how many gifts are on screen (a few-matches notice says so), `None` when empty.
pub fn notice_view(
    notice: Notice,
    shown: Option<usize>,
    currency: Currency,
    ctx: &RenderContext,
) -> impl IntoView + use<> {
    let lang = ctx.language();
    let message = match (notice.code, shown) {
        (NoticeCode::FewMatches, Some(count)) => lang.f(Msg::NoticeFewMatches, &[("count", &count.to_string())]),
        // Nothing matched, and the cards shown are only the nearest we have (`Why::Nearest`).
        (NoticeCode::NoMatches, Some(_)) if notice.suggestions.is_empty() => {
            lang.t(Msg::NoticeNearestAlone).to_string()
        }
        (NoticeCode::NoMatches, Some(_)) => lang.t(Msg::NoticeNearest).to_string(),
        _ if notice.suggestions.is_empty() => lang.t(Msg::NoGiftsMatched).to_string(),
        _ => lang.t(Msg::NoticeNoMatches).to_string(),
    };
    let buttons = notice
        .suggestions
        .into_iter()
        .map(|suggestion| {
            let label = suggestion_label(&suggestion, currency, ctx);
            let call = data_call(lang, || decide::suggestion(&suggestion.set_arguments));
            view! {
                <li>
                    <button
                        type="button"
                        class="gg-btn gg-btn-secondary gg-btn-small"
                        data-action="suggestion"
                        data-call=call
                    >
                        {label}
                    </button>
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="gg-notice" role="note">
            <p>{message}</p>
            <ul class="gg-suggestions" role="list">{buttons}</ul>
        </div>
    }
}

/// Which stores did not answer, shown above the cards so nobody mistakes the list for complete.
pub fn partial_banner(partial: Partial, lang: Lang) -> impl IntoView {
    let sources = partial
        .failed_sources
        .into_iter()
        .map(|s| {
            let source = s.source.clone();
            let why = if s.code == ErrorCode::UpstreamTimeout { Msg::SourceTimeout } else { Msg::SourceUnavailable };
            view! {
                <li data-source=source data-code=s.code.as_str()>
                    <strong>{s.source}</strong>" "{lang.t(why)}
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="gg-banner gg-banner-warn" role="note">
            <p>{lang.t(Msg::PartialMessage)}</p>
            <ul class="gg-failed-sources">{sources}</ul>
        </div>
    }
}

/// One gift card: compact in the inline strip, full in the full-screen grid.
pub fn gift_card(gift: GiftCard, ctx: &RenderContext) -> impl IntoView + use<> {
    let lang = ctx.language();
    let full = ctx.display_mode == DisplayMode::Fullscreen;
    let price = format_money(&gift.price, &ctx.locale);
    let size = if full { "96" } else { "56" };
    let image = safe_url(&gift.image_url).map(|src| {
        // A photo (`.jpg`) comes in two sizes; the browser picks by the card's size and density.
        let srcset = photo_srcset(src);
        let sizes = srcset.as_ref().map(|_| format!("{size}px"));
        view! {
            <img class="gg-card-img" src=src.to_string() srcset=srcset sizes=sizes alt="" width=size height=size loading="lazy" decoding="async"/>
        }
    });
    let reasons: Vec<String> = gift.reasons.iter().map(|r| reason_text(r, ctx)).collect();
    let stock =
        (!gift.in_stock).then(|| view! { <span class="gg-badge gg-badge-out">{lang.t(Msg::OutOfStock)}</span> });
    let label = if gift.in_stock {
        lang.f(Msg::ChooseGift, &[("title", &gift.title)])
    } else {
        lang.f(Msg::GiftOutOfStock, &[("title", &gift.title)])
    };
    let details = if full {
        let reasons = (!reasons.is_empty()).then(|| {
            let items = reasons.into_iter().map(|r| view! { <li>{r}</li> }).collect_view();
            view! { <ul class="gg-reasons" aria-label=lang.t(Msg::MoreReasons)>{items}</ul> }
        });
        let tags = (!gift.tags.is_empty()).then(|| {
            let items =
                gift.tags.iter().take(MAX_TAGS).map(|t| view! { <li class="gg-tag">{t.clone()}</li> }).collect_view();
            view! { <ul class="gg-tags" aria-label=lang.t(Msg::Tags)>{items}</ul> }
        });
        Either::Left(view! { <p class="gg-desc">{gift.description}</p> {reasons} {tags} })
    } else {
        // The first reason is the one that says most (an interest match, else the budget).
        Either::Right(reasons.into_iter().next().map(|why| view! { <p class="gg-why">{why}</p> }))
    };
    let card_id = gift.id.clone();
    let call = data_call(lang, || decide::choose(&gift.id, Some(gift.price.currency.code())));
    let add_call = data_call(lang, || decide::add(&gift.id, Some(gift.price.currency.code())));
    let add_label = lang.f(Msg::AddGift, &[("title", &gift.title)]);
    view! {
        <li class="gg-card" data-gift-id=card_id>
            <article class="gg-card-inner">
                <div class="gg-card-head">
                    {image}
                    <div class="gg-card-body">
                        <h3 class="gg-card-title">{gift.title}</h3>
                        <p class="gg-price">{price} {stock}</p>
                        <p class="gg-merchant">{gift.merchant.name}</p>
                    </div>
                </div>
                {details}
                <div class="gg-card-actions">
                    <button
                        type="button"
                        class="gg-btn gg-btn-primary gg-choose"
                        data-action="choose"
                        data-gift-id=gift.id.clone()
                        data-call=call
                        aria-label=label
                        disabled=!gift.in_stock
                    >
                        {lang.t(Msg::Choose)}
                    </button>
                    <button
                        type="button"
                        class="gg-btn gg-btn-secondary gg-add"
                        data-action="add"
                        data-gift-id=gift.id
                        data-call=add_call
                        aria-label=add_label
                        disabled=!gift.in_stock
                    >
                        {lang.t(Msg::Add)}
                    </button>
                </div>
            </article>
        </li>
    }
}

/// One reason in the person's language, from its parts (`text` is the model's English).
pub fn reason_text(reason: &Reason, ctx: &RenderContext) -> String {
    let lang = ctx.language();
    let money = |m: &Money| format_money(m, &ctx.locale);
    match &reason.why {
        Why::Interest { interest, via, term } | Why::Nearest { interest, via, term } => {
            let nearest = matches!(reason.why, Why::Nearest { .. });
            let key = match (via, nearest) {
                (MatchVia::Tag, false) => Msg::ReasonInterestTag,
                (MatchVia::Title, false) => Msg::ReasonInterestTitle,
                (MatchVia::Description, false) => Msg::ReasonInterestDescription,
                (MatchVia::Tag, true) => Msg::ReasonNearestTag,
                (MatchVia::Title, true) => Msg::ReasonNearestTitle,
                (MatchVia::Description, true) => Msg::ReasonNearestDescription,
            };
            lang.f(key, &[("term", term), ("interest", interest)])
        }
        Why::Budget { price, budget_max, left } if left.amount_minor <= 0 => {
            lang.f(Msg::ReasonBudgetAll, &[("price", &money(price)), ("max", &money(budget_max))])
        }
        Why::Budget { price, budget_max, left } => lang.f(
            Msg::ReasonBudgetLeaves,
            &[("price", &money(price)), ("left", &money(left)), ("max", &money(budget_max))],
        ),
        Why::Age { age_min, age_max } => {
            lang.f(Msg::ReasonAges, &[("min", &age_min.to_string()), ("max", &age_max.to_string())])
        }
        Why::Relationship { relationship } => {
            lang.f(Msg::ReasonRelationship, &[("who", words::relationship(lang, *relationship))])
        }
        Why::Occasion { occasion } => lang.f(Msg::ReasonOccasion, &[("occasion", words::occasion(lang, *occasion))]),
        Why::Popular { tag } => lang.f(Msg::ReasonPopular, &[("tag", tag)]),
        Why::OnlyTag { tag } => lang.f(Msg::ReasonOnlyTag, &[("tag", tag)]),
        Why::Price { price } => lang.f(Msg::ReasonPrice, &[("price", &money(price))]),
    }
}
