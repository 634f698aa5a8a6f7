//! Buying: the confirmation (a human presses Confirm, nothing else can), the placed order,
//! and the hosted checkout card.

use giftgenius_types::delivery::DeliveryDetails;
use giftgenius_types::orders::{
    CheckoutSession, DeleteMyDataData, DraftLine, Order, OrderDraft, OrderStatus, ShippingSpeed,
};
use giftgenius_types::wire::photo_srcset;
use leptos::either::Either;
use leptos::prelude::*;

use crate::context::RenderContext;
use crate::decide::{self, Next, data_call, data_decision};
use crate::flow::safe_url;
use crate::format::format_money;
use crate::i18n::{Lang, Msg, words};
use crate::state::{CardOnFile, ListAsk, OrderListActions};
use crate::view::delivery::{GiftOptions, delivery_form};

fn shipping_label(speed: ShippingSpeed, lang: Lang) -> &'static str {
    lang.t(match speed {
        ShippingSpeed::Standard => Msg::ShippingStandard,
        ShippingSpeed::Express => Msg::ShippingExpress,
    })
}

/// The draft summary, its delivery form, and Confirm, Update delivery details and Cancel.
///
/// What happens after a press (the buttons disabled while a call runs, a failed attempt's
/// error, a refused field's message next to it) is the runtime's: it works on this markup
/// (`widget/runtime/executor.js`), so the view renders only the draft as the result says.
pub fn confirm_view(
    draft: OrderDraft,
    delivery: Option<DeliveryDetails>,
    card: Option<CardOnFile>,
    ctx: &RenderContext,
) -> impl IntoView + use<> {
    let locale = ctx.locale.as_str();
    let lang = ctx.language();
    let subtotal = format_money(&draft.subtotal, locale);
    let shipping = format_money(&draft.shipping_cost, locale);
    let total = format_money(&draft.total, locale);
    let wrap = draft.gift_wrap_cost.as_ref().map(|cost| {
        view! { <dt>{lang.t(Msg::GiftWrap)}</dt><dd class="gg-gift-wrap">{format_money(cost, locale)}</dd> }
    });
    // One gift: its photo, title and merchant, and the quantity in the list below. A basket:
    // each line with its quantity and price, and no photo (the list is what is confirmed).
    let (gift, quantity) = if draft.lines.len() > 1 {
        let lines = draft.lines.iter().map(|line| basket_line(&draft, line, ctx)).collect_view();
        (Either::Left(view! { <ul class="gg-basket-lines">{lines}</ul> }), None)
    } else {
        let image = safe_url(&draft.gift.image_url).map(|src| {
            let srcset = photo_srcset(src);
            let sizes = srcset.as_ref().map(|_| "64px");
            view! { <img class="gg-card-img" src=src.to_string() srcset=srcset sizes=sizes alt="" width="64" height="64"/> }
        });
        let gift = view! {
            <div class="gg-confirm-gift">
                {image}
                <div>
                    <h3 class="gg-card-title">{draft.gift.title.clone()}</h3>
                    <p class="gg-merchant">{draft.gift.merchant.name.clone()}</p>
                </div>
            </div>
        };
        // The one line's "−" and "+" (a draft from before baskets has none: its quantity).
        let quantity = match draft.lines.first() {
            Some(line) => Either::Left(stepper(&draft, line, lang)),
            None => Either::Right(draft.quantity),
        };
        (Either::Right(gift), Some(view! { <dt>{lang.t(Msg::Quantity)}</dt><dd>{quantity}</dd> }))
    };
    let deliver_to = match destination_text(draft.destination.as_ref()) {
        Some(place) => Either::Left(view! { <dt>{lang.t(Msg::DeliverTo)}</dt><dd class="gg-destination">{place}</dd> }),
        None => Either::Right(view! {
            <dt>{lang.t(Msg::DeliverTo)}</dt>
            <dd class="gg-destination gg-missing">{lang.t(Msg::AddRecipientBelow)}</dd>
        }),
    };
    let confirm_call = data_call(lang, || decide::confirm(&draft));
    let update_call = data_call(lang, || decide::update_delivery(&draft));
    let confirm_button = view! {
        <button
            type="button"
            class="gg-btn gg-btn-primary gg-confirm"
            data-action="confirm"
            data-draft-id=draft.id.clone()
            data-call=confirm_call
        >
            {lang.f(Msg::ConfirmPurchaseTotal, &[("total", &total)])}
        </button>
    };
    // Paying in the host's sheet needs the draft's delivery details (only such a draft has a
    // sheet session). The server's markup has it hidden: the runtime shows it where the
    // host has `requestCheckout` (data-needs).
    let sheet_button = draft.destination.is_some().then(|| {
        view! {
            <button
                type="button"
                class="gg-btn gg-btn-secondary gg-pay-in-host"
                data-action="pay-in-host"
                data-needs="requestCheckout"
                data-draft-id=draft.id.clone()
                data-call=data_call(lang, || decide::pay_in_host(&draft))
                hidden=!ctx.host_checkout
            >
                {lang.t(Msg::PayInHost)}
            </button>
        }
    });
    let (arrives, arrival_note) = arrival(&draft, lang);
    let card_line = card.map(|card| card_on_file(card, &draft, ctx));
    let gift_options = GiftOptions {
        wrap_price: draft.gift_wrap_price.as_ref().map(|price| format_money(price, locale)),
        wrap: draft.gift_wrap_cost.is_some(),
        receipt: draft.gift_receipt,
    };
    let form = delivery_form(delivery, gift_options, lang);
    let update = view! {
        <button
            type="button"
            class="gg-btn gg-btn-secondary gg-update-delivery"
            data-action="update-delivery"
            data-draft-id=draft.id.clone()
            data-call=update_call
        >
            {lang.t(Msg::UpdateDelivery)}
        </button>
    };
    view! {
        <section class="gg-section gg-confirm-purchase" aria-labelledby="gg-title" aria-busy="false" data-basket=draft.id.clone()>
            <h2 id="gg-title" class="gg-title">{lang.t(Msg::ConfirmTitle)}</h2>
            {gift}
            <dl class="gg-summary-list">
                {quantity}
                <dt>{lang.t(Msg::Subtotal)}</dt><dd>{subtotal}</dd>
                <dt>{shipping_label(draft.shipping, lang)}</dt><dd>{shipping}</dd>
                {wrap}
                <dt class="gg-total">{lang.t(Msg::Total)}</dt><dd class="gg-total">{total}</dd>
                {deliver_to}
                {arrives}
            </dl>
            {arrival_note}
            {card_line}
            {form}
            <div class="gg-actions">
                {confirm_button}
                {sheet_button}
                {update}
                // Shown by the runtime where there are results to go back to.
                <button
                    type="button"
                    class="gg-btn gg-btn-secondary gg-keep-shopping"
                    data-action="keep-shopping"
                    data-home-only=""
                    data-call=data_decision(Next::Shop)
                    hidden
                >
                    {lang.t(Msg::KeepShopping)}
                </button>
                <button
                    type="button"
                    class="gg-btn gg-btn-secondary"
                    data-action="cancel"
                    data-call=data_decision(Next::Back)
                >
                    {lang.t(Msg::Cancel)}
                </button>
            </div>
            <p class="gg-muted gg-fine">{lang.t(Msg::NothingChargedYet)}</p>
        </section>
    }
}

/// One line of a basket: the gift and its merchant, its quantity with "−" and "+", its price,
/// and Remove.
fn basket_line(draft: &OrderDraft, line: &DraftLine, ctx: &RenderContext) -> impl IntoView + use<> {
    let lang = ctx.language();
    let title = line.gift.title.clone();
    let price = format_money(&line.subtotal, &ctx.locale);
    view! {
        <li class="gg-basket-line" data-gift-id=line.gift.id.clone()>
            <span class="gg-line-what">
                <span class="gg-card-title">{title.clone()}</span>
                <small class="gg-merchant">{line.gift.merchant.name.clone()}</small>
            </span>
            {stepper(draft, line, lang)}
            <span class="gg-line-price">{price}</span>
            <button
                type="button"
                class="gg-btn gg-btn-secondary gg-btn-small gg-remove-line"
                data-action="remove-line"
                data-gift-id=line.gift.id.clone()
                data-call=data_call(lang, || decide::remove_line(draft, &line.gift.id))
                aria-label=lang.f(Msg::RemoveGift, &[("title", &title)])
            >
                {lang.t(Msg::Remove)}
            </button>
        </li>
    }
}

/// A line's quantity between "−" and "+": each prepares the draft again with one fewer or one
/// more (a new draft; which delivery details go along: `decide::set_quantity`); at 1 and at the
/// most, the button is off and decides nothing.
fn stepper(draft: &OrderDraft, line: &DraftLine, lang: Lang) -> impl IntoView + use<> {
    let title = line.gift.title.as_str();
    let step = |quantity: u32, class: &'static str, text: &'static str, label: Msg| {
        let allowed = (1..=decide::MAX_LINE_QUANTITY).contains(&quantity);
        let call = allowed.then(|| data_call(lang, || decide::set_quantity(draft, &line.gift.id, quantity))).flatten();
        view! {
            <button
                type="button"
                class=class
                data-action=allowed.then_some("set-quantity")
                data-gift-id=line.gift.id.clone()
                data-call=call
                aria-label=lang.f(label, &[("title", title)])
                disabled=!allowed
            >
                {text}
            </button>
        }
    };
    let fewer =
        step(line.quantity.saturating_sub(1), "gg-btn gg-btn-secondary gg-btn-small gg-fewer", "−", Msg::OneFewer);
    let more = step(line.quantity.saturating_add(1), "gg-btn gg-btn-secondary gg-btn-small gg-more", "+", Msg::OneMore);
    let label = lang.f(Msg::QuantityOf, &[("title", title), ("quantity", &line.quantity.to_string())]);
    view! {
        <span class="gg-stepper" role="group" aria-label=label>
            {fewer}
            <span class="gg-line-quantity">{format!("× {}", line.quantity)}</span>
            {more}
        </span>
    }
}

/// When the draft's shipping arrives ("Arrives Thu, Dec 17 – Sat, Dec 19"), and with a day the
/// person needs it by, whether it makes it: in time; or late, with the option that is in time
/// and a button to switch to it; or nothing in time, with the fastest. Nothing while the draft
/// does not know where it goes (it has no dates yet).
fn arrival(draft: &OrderDraft, lang: Lang) -> (Option<impl IntoView + use<>>, Option<impl IntoView + use<>>) {
    let option_name = |speed: ShippingSpeed| shipping_option_name(speed, lang);
    let chosen = draft.delivery_options.iter().find(|o| o.shipping == draft.shipping);
    let arrives = chosen.map(|o| {
        let dates = words::days(lang, &o.earliest, &o.latest);
        view! { <dt>{lang.t(Msg::Arrives)}</dt><dd class="gg-arrives">{dates}</dd> }
    });
    let (Some(chosen), Some(needed_by)) = (chosen, draft.needed_by.as_deref()) else { return (arrives, None) };
    let date = words::day(lang, needed_by);
    let in_time = draft.delivery_options.iter().find(|o| o.in_time == Some(true) && o.shipping != draft.shipping);
    let fastest = draft.delivery_options.iter().min_by(|a, b| a.latest.cmp(&b.latest));
    let note = if chosen.in_time == Some(true) {
        Either::Left(view! { <p class="gg-arrival gg-in-time">{lang.f(Msg::ArrivesInTime, &[("date", &date)])}</p> })
    } else {
        let (text, switch) = match (in_time, fastest) {
            (Some(other), _) => {
                let option = option_name(other.shipping);
                let dates = words::days(lang, &other.earliest, &other.latest);
                let text = format!(
                    "{} {}",
                    lang.f(Msg::ArrivesLate, &[("date", &date)]),
                    lang.f(Msg::ArrivesFasterInTime, &[("option", option), ("dates", &dates), ("date", &date)])
                );
                let call = data_call(lang, || decide::switch_shipping(draft, other.shipping));
                let button = view! {
                    <button
                        type="button"
                        class="gg-btn gg-btn-secondary gg-btn-small gg-switch-shipping"
                        data-action="switch-shipping"
                        data-shipping=other.shipping.as_str()
                        data-call=call
                    >
                        {lang.f(Msg::SwitchShipping, &[("option", option)])}
                    </button>
                };
                (text, Some(button))
            }
            (None, Some(fastest)) => {
                let dates = words::days(lang, &fastest.earliest, &fastest.latest);
                let option = option_name(fastest.shipping);
                (lang.f(Msg::ArrivesNoneInTime, &[("date", &date), ("option", option), ("dates", &dates)]), None)
            }
            (None, None) => (lang.f(Msg::ArrivesLate, &[("date", &date)]), None),
        };
        Either::Right(view! {
            <div class="gg-arrival gg-late" role="status">
                <p>{text}</p>
                {switch}
            </div>
        })
    };
    (arrives, Some(note))
}

/// A shipping option's name in a sentence: "express", "exprés", "expresso".
fn shipping_option_name(speed: ShippingSpeed, lang: Lang) -> &'static str {
    lang.t(match speed {
        ShippingSpeed::Standard => Msg::ShippingOptionStandard,
        ShippingSpeed::Express => Msg::ShippingOptionExpress,
    })
}

/// With Stripe: the card a Confirm charges and Remove card, or Add a card (the hosted card page,
/// opened like the checkout link: through the host where it opens links).
fn card_on_file(card: CardOnFile, draft: &OrderDraft, ctx: &RenderContext) -> impl IntoView + use<> {
    let lang = ctx.language();
    match card.saved {
        Some((brand, last4)) => Either::Left(view! {
            <div class="gg-card-on-file" data-card=last4.clone()>
                <p>{lang.f(Msg::CardPays, &[("card", &words::card(&brand, &last4))])}</p>
                <button
                    type="button"
                    class="gg-btn gg-btn-secondary gg-btn-small"
                    data-action="remove-card"
                    data-call=data_call(lang, || decide::remove_card(draft))
                >
                    {lang.t(Msg::RemoveCard)}
                </button>
            </div>
        }),
        None => Either::Right(safe_url(&card.add_url).map(str::to_string).map(|url| {
            let class = "gg-btn gg-btn-secondary gg-btn-small gg-add-card";
            view! {
                <div class="gg-card-on-file">
                    <p>{lang.t(Msg::CardNone)}</p>
                    {outbound_link(class, url, lang.t(Msg::AddCard))}
                </div>
            }
        })),
    }
}

/// Words and badge style for an order's status.
fn status_label(status: OrderStatus, lang: Lang) -> (&'static str, &'static str) {
    let (key, badge) = match status {
        OrderStatus::Paid => (Msg::StatusPaid, "gg-badge gg-badge-ok"),
        OrderStatus::Processing => (Msg::StatusProcessing, "gg-badge gg-badge-ok"),
        OrderStatus::Shipped => (Msg::StatusShipped, "gg-badge gg-badge-ok"),
        OrderStatus::Completed => (Msg::StatusCompleted, "gg-badge gg-badge-ok"),
        OrderStatus::PendingPayment => (Msg::StatusPending, "gg-badge gg-badge-wait"),
        OrderStatus::AwaitingAuthentication => (Msg::StatusAwaitingAuthentication, "gg-badge gg-badge-wait"),
        OrderStatus::PaymentDeclined => (Msg::StatusDeclined, "gg-badge gg-badge-out"),
        OrderStatus::Cancelled => (Msg::StatusCancelled, "gg-badge gg-badge-out"),
    };
    (lang.t(key), badge)
}

/// "City, CC" of an order or draft, or nothing.
fn destination_text(destination: Option<&giftgenius_types::Destination>) -> Option<String> {
    destination.map(|d| format!("{}, {}", d.city, d.country))
}

/// The question under an order (or under Delete my data) that the second click answers.
/// Rendered for every action offered, hidden unless asked: the runtime shows it (it toggles
/// `hidden`, the decision `{"ask": id}`) without asking the server.
fn ask_view(question: String, yes_label: &'static str, ask: ListAsk, lang: Lang) -> impl IntoView {
    // The question is named after the action its yes makes (`data-ask` = that `data-action`).
    let (yes_action, order_id) = match &ask {
        ListAsk::CancelOrder { order_id } => ("cancel-order", Some(order_id.clone())),
        ListAsk::DeleteData => ("delete-data", None),
    };
    let row_id = order_id.clone();
    let yes_call = data_call(lang, || match &order_id {
        Some(order_id) => decide::cancel_order(order_id),
        None => decide::delete_data(),
    });
    view! {
        <div class="gg-ask" role="group" id=decide::ask_id(&ask) data-ask=yes_action data-order-id=row_id hidden=true>
            <p>{question}</p>
            <div class="gg-actions">
                <button
                    type="button"
                    class="gg-btn gg-btn-danger"
                    data-action=yes_action
                    data-order-id=order_id
                    data-call=yes_call
                >
                    {yes_label}
                </button>
                <button
                    type="button"
                    class="gg-btn gg-btn-secondary"
                    data-action="dismiss"
                    data-call=data_decision(Next::Ask(None))
                >
                    {lang.t(Msg::KeepIt)}
                </button>
            </div>
        </div>
    }
}

/// One order of the list, with its Cancel button and question when it may be cancelled. Also
/// what the server's markup of a cancelled order carries (hidden) for the list it was cancelled
/// from: the runtime puts it in place of the old row (`decide::Call::patch`).
pub fn order_row(order: Order, actions: &OrderListActions, ctx: &RenderContext) -> impl IntoView + use<> {
    let lang = ctx.language();
    let total = format_money(&order.total, &ctx.locale);
    let (status, badge) = status_label(order.status, lang);
    let id = order.id.clone();
    let to = destination_text(order.destination.as_ref()).map(|d| {
        view! { <span class="gg-muted">{format!(" · {}", lang.f(Msg::DeliverToPlace, &[("place", &d)]))}</span> }
    });
    let cancel = actions.cancellable.contains(&order.id).then(|| {
        let question = lang.f(Msg::CancelQuestion, &[("total", &total)]);
        view! {
            <button
                type="button"
                class="gg-btn gg-btn-secondary gg-btn-small"
                data-action="ask-cancel-order"
                data-order-id=order.id.clone()
                data-call=data_decision(Next::Ask(Some(ListAsk::CancelOrder { order_id: order.id.clone() })))
            >
                {lang.t(Msg::CancelOrder)}
            </button>
            {ask_view(question, lang.t(Msg::YesCancel), ListAsk::CancelOrder { order_id: order.id.clone() }, lang)}
        }
    });
    view! {
        <li class="gg-order-row" data-order-id=id>
            <span class="gg-card-title">{order_titles(&order)}</span>
            {to}
            <span class="gg-order-total">{total.clone()}</span>
            <span class=badge data-status=order.status.as_str()>{status}</span>
            <small class="gg-muted"><code>{order.id}</code>" · "{words::date(lang, &order.created_at)}</small>
            {cancel}
        </li>
    }
}

/// What a row of the orders list says was bought: "Mug × 2", a basket's lines joined.
fn order_titles(order: &Order) -> String {
    order.lines.iter().map(|line| format!("{} × {}", line.gift_title, line.quantity)).collect::<Vec<_>>().join(", ")
}

/// The person's orders, newest first: one row each with its status, a Cancel button for each
/// order that may still be cancelled, and Delete my data; both ask for a second click.
pub fn order_list_view(
    orders: Vec<Order>,
    next_cursor: Option<String>,
    actions: OrderListActions,
    ctx: &RenderContext,
) -> impl IntoView + use<> {
    let lang = ctx.language();
    let empty = orders.is_empty().then(|| view! { <p class="gg-muted">{lang.t(Msg::NoOrdersYet)}</p> });
    let rows = orders.into_iter().map(|order| order_row(order, &actions, ctx)).collect_view();
    let more = next_cursor.map(|_| view! { <p class="gg-muted gg-fine">{lang.t(Msg::OlderOrders)}</p> });
    let delete = actions.can_delete_data.then(|| {
        view! {
            <div class="gg-actions gg-delete-data">
                <button
                    type="button"
                    class="gg-btn gg-btn-secondary gg-btn-small"
                    data-action="ask-delete-data"
                    data-call=data_decision(Next::Ask(Some(ListAsk::DeleteData)))
                >
                    {lang.t(Msg::DeleteMyData)}
                </button>
            </div>
            {ask_view(lang.t(Msg::DeleteQuestion).to_string(), lang.t(Msg::YesDelete), ListAsk::DeleteData, lang)}
        }
    });
    view! {
        <section class="gg-section gg-order-list" aria-labelledby="gg-title" aria-busy="false">
            <h2 id="gg-title" class="gg-title">{lang.t(Msg::YourOrders)}</h2>
            {empty}
            <ul class="gg-orders">{rows}</ul>
            {more}
            {delete}
        </section>
    }
}

/// What delete_my_data did.
pub fn data_deleted_view(summary: DeleteMyDataData, ctx: &RenderContext) -> impl IntoView + use<> {
    let lang = ctx.language();
    let years = summary.financial_records_retention_days / 365;
    view! {
        <section class="gg-section gg-data-deleted" aria-labelledby="gg-title">
            <h2 id="gg-title" class="gg-title">{lang.t(Msg::DataDeletedTitle)}</h2>
            <dl class="gg-summary-list">
                <dt>{lang.t(Msg::SavedAddresses)}</dt><dd>{summary.saved_addresses_deleted}</dd>
                <dt>{lang.t(Msg::OrderDrafts)}</dt><dd>{summary.drafts_deleted}</dd>
                <dt>{lang.t(Msg::OrdersAnonymized)}</dt><dd>{summary.orders_anonymized}</dd>
            </dl>
            <p class="gg-muted gg-fine">
                {lang.f(
                    Msg::RecordsKept,
                    &[("count", &summary.financial_records_kept.to_string()), ("years", &years.to_string())],
                )}
            </p>
        </section>
    }
}

/// The order exists: what was bought, its reference, and what happened to it since (a short
/// timeline; the carrier and a tracking link once shipped; what was refunded). While the
/// person's bank asks them to confirm the payment (3-D Secure), it says so, with the hosted
/// page's link when the result carried it (`authentication_url`).
pub fn order_placed_view(
    order: Order,
    authentication_url: Option<String>,
    ctx: &RenderContext,
) -> impl IntoView + use<> {
    let lang = ctx.language();
    let authenticate = (order.status == OrderStatus::AwaitingAuthentication).then(|| {
        let link = authentication_url.map(|url| {
            let class = "gg-btn gg-btn-primary gg-authenticate-link";
            let label = lang.t(Msg::StatusAwaitingAuthentication);
            view! { <div class="gg-actions">{outbound_link(class, url, label)}</div> }
        });
        view! {
            <div class="gg-authenticate">
                <p>{lang.t(Msg::AuthenticationNeeded)}</p>
                {link}
            </div>
        }
    });
    let locale = ctx.locale.as_str();
    let total = format_money(&order.total, locale);
    let (status, badge) = status_label(order.status, lang);
    let heading = lang.t(if order.status == OrderStatus::Cancelled { Msg::OrderCancelled } else { Msg::OrderPlaced });
    // Every line ("Mug × 2 from Hearth & Home"), a basket's joined.
    let bought = order
        .lines
        .iter()
        .map(|line| {
            lang.f(
                Msg::OrderFrom,
                &[("gift", &line.gift_title), ("quantity", &line.quantity.to_string()), ("merchant", &line.merchant)],
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    // While it is on its way: the days it was promised when it was placed.
    let on_its_way = matches!(order.status, OrderStatus::Paid | OrderStatus::Processing | OrderStatus::Shipped);
    let arrives = order.arrives.as_ref().filter(|_| on_its_way).map(|window| {
        let days = words::days(lang, &window.earliest, &window.latest);
        view! { <dt>{lang.t(Msg::Arrives)}</dt><dd class="gg-arrives">{days}</dd> }
    });
    let refunded = order.amount_refunded.as_ref().map(|amount| {
        view! { <dt>{lang.t(Msg::Refunded)}</dt><dd class="gg-refunded">{format_money(amount, locale)}</dd> }
    });
    let tracking = order.fulfillment.map(|f| {
        let link = safe_url(&f.tracking_url).map(|url| {
            let url = url.to_string();
            view! { " · " {outbound_link("gg-track-link", url, lang.t(Msg::TrackPackage))} }
        });
        view! {
            <dt>{lang.t(Msg::Carrier)}</dt>
            <dd class="gg-tracking">{f.carrier}" · "<code>{f.tracking_number}</code>{link}</dd>
        }
    });
    // Each step once, in the order it happened; refunds after, with their own dates. One row
    // shape for both (one view type in the wasm).
    let rows: Vec<(&'static str, String, String)> = order
        .timeline
        .iter()
        .map(|step| (step.status.as_str(), status_label(step.status, lang).0.to_string(), step.at.clone()))
        .chain(order.adjustments.iter().map(|a| {
            let what =
                lang.f(Msg::RefundedPart, &[("amount", &format_money(&a.amount, locale)), ("reason", &a.reason)]);
            ("refunded", what, a.created_at.clone())
        }))
        .collect();
    let steps = rows
        .into_iter()
        .map(|(status, what, at)| {
            let date = words::date(lang, &at);
            view! { <li data-status=status><span>{what}</span>" "<time datetime=at>{date}</time></li> }
        })
        .collect_view();
    let timeline = (!order.timeline.is_empty() || !order.adjustments.is_empty()).then(|| {
        view! { <ol class="gg-timeline" aria-label=lang.t(Msg::Timeline)>{steps}</ol> }
    });
    view! {
        <section class="gg-section gg-order-placed" aria-labelledby="gg-title">
            <h2 id="gg-title" class="gg-title">{heading}</h2>
            <p>{bought}</p>
            <dl class="gg-summary-list">
                <dt>{lang.t(Msg::Order)}</dt><dd><code>{order.id}</code></dd>
                <dt>{lang.t(Msg::Total)}</dt><dd>{total}</dd>
                {order.gift_wrap_cost.map(|cost| {
                    view! { <dt>{lang.t(Msg::GiftWrap)}</dt><dd class="gg-gift-wrap">{format_money(&cost, locale)}</dd> }
                })}
                {refunded}
                <dt>{lang.t(Msg::Status)}</dt><dd><span class=badge data-status=order.status.as_str()>{status}</span></dd>
                {destination_text(order.destination.as_ref())
                    .map(|d| view! { <dt>{lang.t(Msg::DeliverTo)}</dt><dd>{d}</dd> })}
                {arrives}
                {tracking}
            </dl>
            {order.gift_receipt.then(|| view! { <p class="gg-muted gg-fine gg-gift-receipt">{lang.t(Msg::GiftReceipt)}</p> })}
            {authenticate}
            {timeline}
        </section>
    }
}

/// A hosted checkout page; the link only renders for http(s) or same-origin URLs.
///
/// Where the host opens links (`ui/open-link`, `openExternal`) a click asks it to, and the frame
/// does not navigate; elsewhere it is a plain `target="_blank"` link. The markup is the same.
pub fn checkout_view(checkout: CheckoutSession, ctx: &RenderContext) -> impl IntoView + use<> {
    let lang = ctx.language();
    let amount = format_money(&checkout.amount, &ctx.locale);
    let link = match safe_url(&checkout.checkout_url) {
        Some(url) => {
            let label = lang.t(Msg::OpenCheckout);
            Either::Left(outbound_link("gg-btn gg-btn-primary", url.to_string(), label))
        }
        None => Either::Right(view! { <p class="gg-muted">{lang.t(Msg::CheckoutLinkHidden)}</p> }),
    };
    view! {
        <section class="gg-section gg-checkout" aria-labelledby="gg-title">
            <h2 id="gg-title" class="gg-title">{lang.t(Msg::CheckoutReady)}</h2>
            <dl class="gg-summary-list">
                <dt>{lang.t(Msg::Amount)}</dt><dd>{amount}</dd>
                <dt>{lang.t(Msg::Session)}</dt><dd><code>{checkout.id}</code></dd>
            </dl>
            <div class="gg-actions">{link}</div>
        </section>
    }
}

/// An outbound link (the checkout, the card page, the bank's check, the carrier's tracking): a
/// plain new-tab link, whose `data-call` the runtime follows instead for an absolute http(s) URL
/// where the host opens links (`ui/open-link`, `openExternal`: the frame does not navigate).
pub(crate) fn outbound_link(class: &'static str, url: String, label: &'static str) -> impl IntoView + use<> {
    view! {
        <a
            class=class
            href=url.clone()
            target="_blank"
            rel="noopener noreferrer"
            data-action="open-link"
            data-call=data_decision(Next::OpenLink(url))
        >
            {label}
        </a>
    }
}
