//! Buying: the confirmation (a human presses Confirm, nothing else can), the placed order,
//! and the hosted checkout card.

use giftgenius_types::ToolError;
use giftgenius_types::orders::{CheckoutSession, DeleteMyDataData, Order, OrderDraft, OrderStatus, ShippingSpeed};
use leptos::prelude::*;

use crate::action::Action;
use crate::context::RenderContext;
use crate::flow::safe_url;
use crate::format::format_money;
use crate::view::error::{category_name, error_details};

fn shipping_label(speed: ShippingSpeed) -> &'static str {
    match speed {
        ShippingSpeed::Standard => "Shipping (standard)",
        ShippingSpeed::Express => "Shipping (express)",
    }
}

/// The draft summary with Confirm and Cancel.
///
/// While `busy`, both buttons are disabled and Confirm reads "Placing order…". After a failed
/// attempt the error shows inline; if it is retryable its "Try again" confirms again with the
/// same idempotency key (so it is a `confirm` action), otherwise only Cancel remains.
pub fn confirm_view(
    draft: OrderDraft,
    busy: bool,
    error: Option<ToolError>,
    ctx: &RenderContext,
    on_action: Callback<Action>,
) -> impl IntoView {
    let locale = ctx.locale.as_str();
    let subtotal = format_money(&draft.subtotal, locale);
    let shipping = format_money(&draft.shipping_cost, locale);
    let total = format_money(&draft.total, locale);
    let image = safe_url(&draft.gift.image_url).map(|src| {
        view! { <img class="gg-card-img" src=src.to_string() alt=draft.gift.title.clone() width="64" height="64"/> }
    });
    let deliver_to = match destination_text(draft.destination.as_ref()) {
        Some(place) => view! { <dt>"Deliver to"</dt><dd class="gg-destination">{place}</dd> }.into_any(),
        None => view! { <dt>"Deliver to"</dt><dd class="gg-destination gg-missing">"Add a recipient in the chat"</dd> }
            .into_any(),
    };
    let failed = error.is_some();
    let inline_error = error.map(|error| {
        let retry = error.retryable.then(|| {
            view! {
                <button
                    type="button"
                    class="gg-btn gg-btn-primary gg-retry"
                    data-action="confirm"
                    data-draft-id=draft.id.clone()
                    disabled=busy
                    on:click=move |_| on_action.run(Action::Confirm)
                >
                    "Try again"
                </button>
            }
        });
        view! {
            <div class="gg-inline-error" data-category=category_name(error.category) data-code=error.code.as_str()>
                <p class="gg-inline-error-title">"The order was not placed."</p>
                {error_details(&error)}
                {retry}
            </div>
        }
    });
    let confirm_button = (!failed).then(|| {
        let label = if busy { "Placing order…".to_string() } else { format!("Confirm purchase · {total}") };
        view! {
            <button
                type="button"
                class="gg-btn gg-btn-primary gg-confirm"
                data-action="confirm"
                data-draft-id=draft.id.clone()
                disabled=busy
                on:click=move |_| on_action.run(Action::Confirm)
            >
                {label}
            </button>
        }
    });
    let cancel_label = if failed { "Back" } else { "Cancel" };
    view! {
        <section class="gg-section gg-confirm-purchase" aria-labelledby="gg-title" aria-busy=busy.to_string()>
            <h2 id="gg-title" class="gg-title">"Confirm your purchase"</h2>
            <div class="gg-confirm-gift">
                {image}
                <div>
                    <h3 class="gg-card-title">{draft.gift.title.clone()}</h3>
                    <p class="gg-merchant">{draft.gift.merchant.name.clone()}</p>
                </div>
            </div>
            <dl class="gg-summary-list">
                <dt>"Quantity"</dt><dd>{draft.quantity}</dd>
                <dt>"Subtotal"</dt><dd>{subtotal}</dd>
                <dt>{shipping_label(draft.shipping)}</dt><dd>{shipping}</dd>
                <dt class="gg-total">"Total"</dt><dd class="gg-total">{total}</dd>
                {deliver_to}
            </dl>
            {inline_error}
            <div class="gg-actions">
                {confirm_button}
                <button
                    type="button"
                    class="gg-btn gg-btn-secondary"
                    data-action="cancel"
                    disabled=busy
                    on:click=move |_| on_action.run(Action::Cancel)
                >
                    {cancel_label}
                </button>
            </div>
            <p class="gg-muted gg-fine">"Nothing is charged until you press Confirm."</p>
        </section>
    }
}

/// Words and badge style for an order's status.
fn status_label(status: OrderStatus) -> (&'static str, &'static str) {
    match status {
        OrderStatus::Paid => ("Paid", "gg-badge gg-badge-ok"),
        OrderStatus::PendingPayment => ("Payment pending", "gg-badge gg-badge-wait"),
        OrderStatus::PaymentDeclined => ("Payment declined", "gg-badge gg-badge-out"),
        OrderStatus::Cancelled => ("Cancelled · refunded", "gg-badge gg-badge-out"),
    }
}

/// "City, CC" of an order or draft, or nothing.
fn destination_text(destination: Option<&giftgenius_types::Destination>) -> Option<String> {
    destination.map(|d| format!("{}, {}", d.city, d.country))
}

/// The person's orders, newest first: one row each with its status.
pub fn order_list_view(orders: Vec<Order>, next_cursor: Option<String>, ctx: &RenderContext) -> impl IntoView {
    let empty = orders.is_empty().then(|| view! { <p class="gg-muted">"You have no orders yet."</p> });
    let rows = orders
        .into_iter()
        .map(|order| {
            let total = format_money(&order.total, &ctx.locale);
            let (status, badge) = status_label(order.status);
            let id = order.id.clone();
            let to = destination_text(order.destination.as_ref())
                .map(|d| view! { <span class="gg-muted">{format!(" · to {d}")}</span> });
            view! {
                <li class="gg-order-row" data-order-id=id>
                    <span class="gg-card-title">{order.gift_title}" × "{order.quantity}</span>
                    {to}
                    <span class="gg-order-total">{total}</span>
                    <span class=badge data-status=order.status.as_str()>{status}</span>
                    <small class="gg-muted"><code>{order.id}</code>" · "{order.created_at}</small>
                </li>
            }
        })
        .collect_view();
    let more = next_cursor.map(|_| view! { <p class="gg-muted gg-fine">"Older orders: ask for more in the chat."</p> });
    view! {
        <section class="gg-section gg-order-list" aria-labelledby="gg-title">
            <h2 id="gg-title" class="gg-title">"Your orders"</h2>
            {empty}
            <ul class="gg-orders">{rows}</ul>
            {more}
        </section>
    }
}

/// What delete_my_data did.
pub fn data_deleted_view(summary: DeleteMyDataData) -> impl IntoView {
    let years = summary.financial_records_retention_days / 365;
    view! {
        <section class="gg-section gg-data-deleted" aria-labelledby="gg-title">
            <h2 id="gg-title" class="gg-title">"Your data was deleted"</h2>
            <dl class="gg-summary-list">
                <dt>"Saved addresses"</dt><dd>{summary.saved_addresses_deleted}</dd>
                <dt>"Order drafts"</dt><dd>{summary.drafts_deleted}</dd>
                <dt>"Orders anonymized"</dt><dd>{summary.orders_anonymized}</dd>
            </dl>
            <p class="gg-muted gg-fine">
                {format!(
                    "{} anonymized financial records (amounts, dates, payment references) are kept for {} years, as the law requires of merchants.",
                    summary.financial_records_kept, years
                )}
            </p>
        </section>
    }
}

/// The order exists; show what was bought and its reference.
pub fn order_placed_view(order: Order, ctx: &RenderContext) -> impl IntoView {
    let total = format_money(&order.total, &ctx.locale);
    let (status, badge) = status_label(order.status);
    view! {
        <section class="gg-section gg-order-placed" aria-labelledby="gg-title">
            <h2 id="gg-title" class="gg-title">"Order placed"</h2>
            <p>{order.gift_title}" × "{order.quantity}" from "{order.merchant}</p>
            <dl class="gg-summary-list">
                <dt>"Order"</dt><dd><code>{order.id}</code></dd>
                <dt>"Total"</dt><dd>{total}</dd>
                <dt>"Status"</dt><dd><span class=badge data-status=order.status.as_str()>{status}</span></dd>
                {destination_text(order.destination.as_ref()).map(|d| view! { <dt>"Deliver to"</dt><dd>{d}</dd> })}
            </dl>
        </section>
    }
}

/// A hosted checkout page; the link only renders for http(s) or same-origin URLs.
///
/// Where the host opens links (`ui/open-link`, `openExternal`) a click asks it to, and the frame
/// does not navigate; elsewhere it is a plain `target="_blank"` link. The markup is the same.
pub fn checkout_view(checkout: CheckoutSession, ctx: &RenderContext, on_action: Callback<Action>) -> impl IntoView {
    let amount = format_money(&checkout.amount, &ctx.locale);
    let through_host = ctx.host_opens_links;
    let link = match safe_url(&checkout.checkout_url) {
        Some(url) => view! {
            <a
                class="gg-btn gg-btn-primary"
                href=url.to_string()
                target="_blank"
                rel="noopener noreferrer"
                data-action="open-checkout"
                on:click={
                    let url = url.to_string();
                    // Only an absolute http(s) URL is handed to the host; a same-origin path stays a link.
                    let through_host = through_host && (url.starts_with("https://") || url.starts_with("http://"));
                    move |ev| {
                        if through_host {
                            ev.prevent_default();
                            on_action.run(Action::OpenLink { url: url.clone() });
                        }
                    }
                }
            >
                "Open secure checkout"
            </a>
        }
        .into_any(),
        None => view! { <p class="gg-muted">"The checkout link cannot be shown here."</p> }.into_any(),
    };
    view! {
        <section class="gg-section gg-checkout" aria-labelledby="gg-title">
            <h2 id="gg-title" class="gg-title">"Checkout is ready"</h2>
            <dl class="gg-summary-list">
                <dt>"Amount"</dt><dd>{amount}</dd>
                <dt>"Session"</dt><dd><code>{checkout.id}</code></dd>
            </dl>
            <div class="gg-actions">{link}</div>
        </section>
    }
}
