//! SSR snapshots of every widget state, plus behavioural checks on the HTML.
//!
//! Fixtures are built from the real contract types, serialized as the server would send them,
//! and parsed back through `ViewState::from_tool_output`, so the wire parsing is exercised too.
//! Snapshots break lines between tags so a review diff is readable; assertions use raw HTML.

use giftgenius_types::envelope::NoticeCode;
use giftgenius_types::orders::{Adjustment, Fulfillment, OrderStep, RefundStatus};
use giftgenius_types::wire::META_PAYMENT_CARD;
use giftgenius_types::{
    CONTRACT_VERSION, CheckoutData, CheckoutSession, Currency, DeleteMyDataData, DeliveryOption, DeliveryWindow,
    Destination, DraftLine, Envelope, ErrorCode, FailedSource, FieldError, GiftCard, ListOrdersData, MatchVia,
    Merchant, Money, Notice, Occasion, Order, OrderData, OrderDraft, OrderLine, OrderStatus, Partial, PrepareOrderData,
    Reason, RelationshipType, ShippingSpeed, SuggestGiftsData, SuggestGiftsQuery, Suggestion, ToolError, ToolName, Why,
};
use giftgenius_widget::state::CardOnFile;
use giftgenius_widget::{RenderContext, Theme, ViewState, render_to_html};
use serde::Serialize;
use serde_json::{Value, json};

fn wire<T: Serialize>(envelope: Envelope<T>) -> Value {
    Value::Object(envelope.to_json().expect("fixture serializes"))
}

fn parse(value: &Value) -> ViewState {
    ViewState::from_tool_output(value)
}

fn en() -> RenderContext {
    RenderContext::new(Theme::Light, "en-US")
}

fn html(state: &ViewState, ctx: &RenderContext) -> String {
    render_to_html(state, ctx)
}

/// One tag per line, for reviewable snapshots.
fn pretty(html: &str) -> String {
    html.replace("><", ">\n<")
}

fn usd(minor: i64) -> Money {
    Money::new(minor, Currency::USD)
}

fn gift(id: &str, title: &str, price: Money, in_stock: bool) -> GiftCard {
    // A $60 budget, or one a little above a dearer price.
    let budget_max =
        Money::new(if price.amount_minor <= 6000 { 6000 } else { price.amount_minor + 1000 }, price.currency);
    let left = Money::new(budget_max.amount_minor - price.amount_minor, price.currency);
    GiftCard {
        id: id.into(),
        title: title.into(),
        description: format!("{title}, picked for coffee lovers."),
        price,
        merchant: Merchant { id: "m_bean".into(), name: "Bean & Leaf".into() },
        tags: vec!["coffee".into(), "kitchen".into()],
        reasons: vec![
            Reason {
                text: "Matches their interest in coffee (tagged “coffee”)".into(),
                why: Why::Interest { interest: "coffee".into(), via: MatchVia::Tag, term: "coffee".into() },
            },
            Reason {
                text: format!(
                    "At {} it leaves {} of your {} budget",
                    price.display_short(),
                    left.display_short(),
                    budget_max.display_short()
                ),
                why: Why::Budget { price, budget_max, left },
            },
        ],
        in_stock,
        // As the server links them: a gift's photo, or for one without (the grinder) its tile.
        image_url: if id == "g_grinder" {
            format!("https://giftgenius.test/images/{id}.svg")
        } else {
            format!("https://giftgenius.test/images/{id}.jpg")
        },
    }
}

fn query(currency: Currency) -> SuggestGiftsQuery {
    SuggestGiftsQuery {
        relationship_type: RelationshipType::Friend,
        age: Some(30),
        interests: vec!["coffee".into()],
        budget_min: Some(Money::new(2000, currency)),
        budget_max: Some(Money::new(6000, currency)),
        occasion: Some(Occasion::Birthday),
        currency,
        limit: 6,
    }
}

fn gifts() -> Vec<GiftCard> {
    vec![
        gift("g_pour_over", "Pour-over coffee set", usd(3499), true),
        gift("g_grinder", "Hand coffee grinder", usd(5450), false),
        gift("g_beans", "Single-origin beans sampler", usd(2400), true),
    ]
}

fn results_output(gifts: Vec<GiftCard>, partial: Option<Partial>) -> Value {
    wire(Envelope::Ok {
        tool: ToolName::SuggestGifts,
        data: SuggestGiftsData { query: query(Currency::USD), gifts },
        notice: None,
        partial,
    })
}

fn empty_output() -> Value {
    let mut set = serde_json::Map::new();
    set.insert("budget_max".into(), json!(120));
    let mut set2 = serde_json::Map::new();
    set2.insert("interests".into(), json!(["tea"]));
    wire(Envelope::Ok {
        tool: ToolName::SuggestGifts,
        data: SuggestGiftsData { query: query(Currency::USD), gifts: vec![] },
        notice: Some(Notice {
            code: NoticeCode::NoMatches,
            message: "No gifts match a budget of $20.00–$60.00 for coffee.".into(),
            suggestions: vec![
                Suggestion { message: "12 gifts match if budget_max is 120".into(), set_arguments: set, matches: 12 },
                Suggestion { message: "5 gifts match for tea".into(), set_arguments: set2, matches: 5 },
            ],
        }),
        partial: None,
    })
}

/// Nothing met "craft beer": the notice says so and the one card shown is only the nearest
/// we have (`Why::Nearest`), with a change that would find real matches.
fn nearest_output() -> Value {
    let mut set = serde_json::Map::new();
    set.insert("interests".into(), json!([]));
    let mut kit = gift("g_brew_kit", "Hot sauce brewing kit", usd(3800), true);
    kit.reasons = vec![Reason {
        text: "Nearest we have to their craft beer: Hot Sauce Brewing Kit".into(),
        why: Why::Nearest { interest: "craft beer".into(), via: MatchVia::Title, term: "Hot Sauce Brewing Kit".into() },
    }];
    wire(Envelope::Ok {
        tool: ToolName::SuggestGifts,
        data: SuggestGiftsData { query: query(Currency::USD), gifts: vec![kit] },
        notice: Some(Notice {
            code: NoticeCode::NoMatches,
            message: "No gifts match these conditions. The gift shown is only the nearest we have, not a match. 190 gifts match without the interests filter.".into(),
            suggestions: vec![Suggestion {
                message: "190 gifts match without the interests filter".into(),
                set_arguments: set,
                matches: 190,
            }],
        }),
        partial: None,
    })
}

fn partial() -> Partial {
    Partial {
        message: "One store did not answer; these results may be incomplete.".into(),
        failed_sources: vec![FailedSource {
            source: "m_roastery".into(),
            code: ErrorCode::UpstreamTimeout,
            message: "did not answer within 2 s".into(),
        }],
    }
}

fn error_output(tool: ToolName, error: ToolError) -> Value {
    wire::<SuggestGiftsData>(Envelope::Err { tool, error })
}

fn validation_error() -> ToolError {
    ToolError::validation(
        vec![
            FieldError::new("budget_min", "budget_min (80) is greater than budget_max (50)"),
            FieldError::new("age", "must be between 0 and 120 (got 130)"),
        ],
        "req_val123",
    )
}

fn transient_error() -> ToolError {
    ToolError::new(ErrorCode::UpstreamUnavailable, "The gift catalogs are not answering right now.", "req_tr456")
        .with_retry_after_ms(30_000)
}

fn permission_error() -> ToolError {
    ToolError::new(ErrorCode::ConfirmationRequired, "Please review the order and press Confirm.", "req_perm789")
}

fn draft() -> OrderDraft {
    let pour_over = gift("g_pour_over", "Pour-over coffee set", usd(3499), true);
    OrderDraft {
        id: "d_42".into(),
        gift: pour_over.clone(),
        quantity: 2,
        lines: vec![DraftLine { gift: pour_over, quantity: 2, subtotal: usd(6998), gift_wrap_cost: None }],
        shipping: ShippingSpeed::Standard,
        subtotal: usd(6998),
        shipping_cost: usd(499),
        total: usd(7497),
        expires_at: "2030-01-01T00:15:00Z".into(),
        destination: Some(Destination { city: "Lisboa".into(), country: "PT".into() }),
        has_gift_message: true,
        needed_by: None,
        delivery_options: vec![
            DeliveryOption {
                shipping: ShippingSpeed::Standard,
                cost: usd(499),
                earliest: "2029-12-17".into(),
                latest: "2029-12-21".into(),
                in_time: None,
            },
            DeliveryOption {
                shipping: ShippingSpeed::Express,
                cost: usd(1200),
                earliest: "2029-12-12".into(),
                latest: "2029-12-13".into(),
                in_time: None,
            },
        ],
        gift_wrap_price: Some(usd(499)),
        gift_wrap_cost: None,
        gift_receipt: false,
    }
}

fn confirm_output() -> Value {
    wire(Envelope::ok(ToolName::PrepareOrder, PrepareOrderData { draft: draft() }))
}

/// The draft needed by `day`: each option marked in time or not by its latest date.
fn draft_needed_by(day: &str) -> OrderDraft {
    let mut draft = draft();
    draft.needed_by = Some(day.into());
    for option in &mut draft.delivery_options {
        option.in_time = Some(option.latest.as_str() <= day);
    }
    draft
}

fn confirm_needed_by(day: &str) -> ViewState {
    let output = wire(Envelope::ok(ToolName::PrepareOrder, PrepareOrderData { draft: draft_needed_by(day) }));
    ViewState::from_tool_result(&output, &confirm_meta())
}

/// The draft's widget-only `_meta`: its full delivery details, as prepare_order sends them.
fn confirm_meta() -> Value {
    json!({
        "giftgenius/confirmation_token": "ct_secret",
        "giftgenius/delivery": {
            "recipient": {"name": "Ana Sousa", "address": {"line1": "Rua Augusta 12", "line2": "3º Esq",
                "city": "Lisboa", "region": "Lisboa", "postal_code": "1100-053", "country": "PT"}},
            "gift_message": "Parabéns, Ana!",
            "save_address": false,
            "from_saved_address": false
        }
    })
}

/// The draft gift-wrapped (two gifts at $4.99) with a gift receipt.
fn confirm_gift_wrapped() -> ViewState {
    let mut draft = draft();
    (draft.gift_wrap_cost, draft.total, draft.gift_receipt) = (Some(usd(998)), usd(8495), true);
    let output = wire(Envelope::ok(ToolName::PrepareOrder, PrepareOrderData { draft }));
    ViewState::from_tool_result(&output, &confirm_meta())
}

/// A basket: the pour-over set twice and a tea sampler, one recipient, one total.
fn basket_draft() -> OrderDraft {
    let mut draft = draft();
    let tea = gift("g_tea", "Loose-leaf tea sampler", usd(1850), true);
    draft.lines.push(DraftLine { gift: tea, quantity: 1, subtotal: usd(1850), gift_wrap_cost: None });
    (draft.subtotal, draft.total) = (usd(8848), usd(9347));
    draft
}

fn confirm_basket() -> ViewState {
    let output = wire(Envelope::ok(ToolName::PrepareOrder, PrepareOrderData { draft: basket_draft() }));
    ViewState::from_tool_result(&output, &confirm_meta())
}

fn confirm_state() -> ViewState {
    ViewState::from_tool_result(&confirm_output(), &confirm_meta())
}

/// The confirm card when Stripe charges: the card that pays (brand, last4), or none yet.
fn confirm_with_card(saved: Option<(&str, &str)>) -> ViewState {
    let mut meta = confirm_meta();
    let card = saved.map(|(brand, last4)| json!({"brand": brand, "last4": last4})).unwrap_or(Value::Null);
    meta[META_PAYMENT_CARD] =
        json!({"card": card, "add_url": "https://giftgenius.test/pay/card/cus_1.1780001800000.00ff"});
    ViewState::from_tool_result(&confirm_output(), &meta)
}

fn order_output() -> Value {
    wire(Envelope::ok(
        ToolName::CommitOrder,
        OrderData {
            order: Order {
                id: "o_7f3a".into(),
                draft_id: "d_42".into(),
                gift_id: "g_pour_over".into(),
                gift_title: "Pour-over coffee set".into(),
                merchant: "Bean & Leaf".into(),
                quantity: 2,
                lines: vec![OrderLine {
                    gift_id: "g_pour_over".into(),
                    gift_title: "Pour-over coffee set".into(),
                    merchant: "Bean & Leaf".into(),
                    quantity: 2,
                    subtotal: Some(usd(6998)),
                }],
                total: usd(7497),
                status: OrderStatus::Paid,
                created_at: "2030-01-01T00:05:00Z".into(),
                destination: Some(Destination { city: "Lisboa".into(), country: "PT".into() }),
                cancellable_until: Some("2030-01-01T01:05:00Z".into()),
                refund: None,
                fulfillment: None,
                timeline: Vec::new(),
                adjustments: Vec::new(),
                amount_refunded: None,
                gift_wrap_cost: None,
                gift_receipt: false,
                arrives: Some(DeliveryWindow { earliest: "2030-01-07".into(), latest: "2030-01-10".into() }),
            },
        },
    ))
}

fn checkout_output() -> Value {
    wire(Envelope::ok(
        ToolName::CreateCheckoutSession,
        CheckoutData {
            checkout: CheckoutSession {
                id: "cs_123".into(),
                gift_id: "g_beans".into(),
                amount: usd(2400),
                checkout_url: "https://giftgenius.test/checkout/cs_123".into(),
                expires_at: "2030-01-01T01:00:00Z".into(),
            },
        },
    ))
}

macro_rules! snap {
    ($name:literal, $state:expr, $ctx:expr) => {{
        let state = $state;
        let out = html(&state, &$ctx);
        insta::assert_snapshot!($name, pretty(&out));
        out
    }};
}

// ---- one snapshot per state ----

#[test]
fn loading() {
    let out = snap!("loading", parse(&Value::Null), en());
    assert!(out.contains(r#"aria-busy="true""#));
    assert!(out.contains(r#"data-state="loading""#));
}

#[test]
fn results() {
    let state = parse(&results_output(gifts(), None));
    assert!(matches!(state, ViewState::Results { ref gifts, .. } if gifts.len() == 3));
    let out = snap!("results", state, en());
    assert!(out.contains(r#"data-action="choose""#));
    assert!(out.contains(r#"data-gift-id="g_pour_over""#));
    assert!(out.contains("$34.99"));
    assert!(out.contains("Out of stock"));
    assert!(out.contains(r#"data-theme="light""#));
}

#[test]
fn results_dark() {
    let out = snap!("results_dark", parse(&results_output(gifts(), None)), RenderContext::new(Theme::Dark, "en-US"));
    assert!(out.contains(r#"data-theme="dark""#));
}

#[test]
fn results_de_de_price() {
    let eur = vec![gift("g_pour_over", "Pour-over coffee set", Money::new(123456, Currency::EUR), true)];
    let out = wire(Envelope::ok(ToolName::SuggestGifts, SuggestGiftsData { query: query(Currency::EUR), gifts: eur }));
    let html = snap!("results_de_de", parse(&out), RenderContext::new(Theme::Light, "de-DE"));
    assert!(html.contains("1.234,56\u{a0}€"), "{html}");
    // German prices, English words (German is not one of the three languages): the page says "en".
    assert!(html.contains(r#"lang="en""#));
}

#[test]
fn empty_with_suggestions() {
    let state = parse(&empty_output());
    assert!(matches!(state, ViewState::Empty { .. }));
    let out = snap!("empty", state, en());
    assert_eq!(out.matches(r#"data-action="suggestion""#).count(), 2);
    // The suggestion's arguments, set over the search's own (decide.rs `suggestion`).
    assert!(out.contains("{&quot;args&quot;:{&quot;budget_max&quot;:120},&quot;over&quot;:true,&quot;tool&quot;:&quot;suggest_gifts&quot;}"), "{out}");
}

#[test]
fn nothing_fits_with_the_nearest_we_have() {
    let state = parse(&nearest_output());
    assert!(matches!(state, ViewState::Results { ref gifts, .. } if gifts.len() == 1));
    let out = snap!("nearest", state, en());
    assert!(out.contains("these are only the nearest we have"), "{out}");
    assert!(out.contains("Nearest we have to their craft beer: Hot Sauce Brewing Kit"), "{out}");
    assert!(!out.contains("For their craft beer"), "never said to match");
    assert_eq!(out.matches(r#"data-action="suggestion""#).count(), 1);
    let es = snap!("nearest_es", parse(&nearest_output()), RenderContext::new(Theme::Light, "es-ES"));
    assert!(es.contains("Lo más cercano a su interés en craft beer: Hot Sauce Brewing Kit"), "{es}");
    assert!(es.contains("estos son solo lo más cercano que tenemos"), "{es}");
}

/// The confirm card says when the draft's shipping arrives; with a day the person needs the
/// gift by it says whether it makes it, and offers the option that does.
#[test]
fn confirm_says_when_it_arrives_and_whether_in_time() {
    let plain = snap!("confirm_arrives", confirm_state(), en());
    assert!(plain.contains("Mon, Dec 17 – Fri, Dec 21"), "{plain}");
    assert!(!plain.contains("switch-shipping") && !plain.contains("In time"), "no needed_by, no verdict");

    let late = snap!("confirm_needed_by_late", confirm_needed_by("2029-12-15"), en());
    assert!(late.contains("May not arrive by Sat, Dec 15."), "{late}");
    assert!(
        late.contains("With express shipping it arrives Wed, Dec 12 – Thu, Dec 13, in time for Sat, Dec 15."),
        "{late}"
    );
    assert!(late.contains(r#"data-action="switch-shipping""#) && late.contains(r#"data-shipping="express""#));
    assert!(late.contains("Switch to express shipping"), "{late}");
    let es =
        snap!("confirm_needed_by_late_es", confirm_needed_by("2029-12-15"), RenderContext::new(Theme::Light, "es-ES"));
    assert!(es.contains("Puede no llegar antes del sáb 15 dic."), "{es}");
    assert!(es.contains("Cambiar a envío exprés"), "{es}");

    let in_time = html(&confirm_needed_by("2029-12-24"), &en());
    assert!(in_time.contains("In time for Mon, Dec 24.") && !in_time.contains("switch-shipping"), "{in_time}");

    let none = snap!("confirm_needed_by_none_in_time", confirm_needed_by("2029-12-10"), en());
    assert!(
        none.contains(
            "No shipping arrives by Mon, Dec 10; the fastest, express shipping, arrives Wed, Dec 12 – Thu, Dec 13."
        ),
        "{none}"
    );
    assert!(!none.contains("switch-shipping"));
}

/// The gift options on the confirm card: wrap (at its price per gift, where the merchant wraps)
/// and a gift receipt are checkboxes of the form, so Confirm on a changed one prepares the edit
/// first, as for any edited detail; a wrapped draft shows the wrap as a line of its totals.
#[test]
fn confirm_offers_gift_wrap_and_a_gift_receipt() {
    let offered = html(&confirm_state(), &en());
    let wrap = offered.split("<input").find(|i| i.contains(r#"name="gift_wrap""#)).expect("a wrap checkbox");
    assert!(!wrap.contains("checked") && !wrap.contains("data-private"), "{wrap}");
    assert!(offered.contains("Gift-wrap it ($4.99 per gift)"), "{offered}");
    assert!(offered.contains(r#"name="gift_receipt""#) && offered.contains("Gift receipt: no prices in the parcel"));
    assert!(!offered.contains("gg-gift-wrap"), "no wrap line while not wrapped");

    let mut draft = draft();
    (draft.gift_wrap_cost, draft.total, draft.gift_receipt) = (Some(usd(998)), usd(8495), true);
    let output = wire(Envelope::ok(ToolName::PrepareOrder, PrepareOrderData { draft: draft.clone() }));
    let wrapped = snap!("confirm_gift_wrapped", ViewState::from_tool_result(&output, &confirm_meta()), en());
    assert!(wrapped.contains(r#"<dt>Gift wrap</dt><dd class="gg-gift-wrap">$9.98</dd>"#), "{wrapped}");
    assert!(wrapped.contains("$84.95"), "the total with the wrap: {wrapped}");
    for name in ["gift_wrap", "gift_receipt"] {
        let input = wrapped.split("<input").find(|i| i.contains(&format!(r#"name="{name}""#))).expect(name);
        assert!(input.contains("checked"), "{name}: {input}");
    }
    let es = snap!(
        "confirm_gift_wrapped_es",
        ViewState::from_tool_result(&output, &confirm_meta()),
        RenderContext::new(Theme::Light, "es-ES")
    );
    assert!(es.contains("Envoltorio de regalo") && es.contains("Ticket regalo: sin precios en el paquete"), "{es}");

    // A merchant that does not wrap: no wrap checkbox, the receipt still offered.
    draft.gift_wrap_price = None;
    draft.gift_wrap_cost = None;
    let output = wire(Envelope::ok(ToolName::PrepareOrder, PrepareOrderData { draft }));
    let unwrapped = html(&ViewState::from_tool_result(&output, &confirm_meta()), &en());
    assert!(!unwrapped.contains(r#"name="gift_wrap""#) && unwrapped.contains(r#"name="gift_receipt""#));
}

/// A basket's card lists every line with its quantity and price, and one total to confirm;
/// "Update delivery details" prepares the same basket again (its items, not one gift).
#[test]
fn confirm_basket_lists_every_line_and_keeps_them_when_edited() {
    let out = snap!("confirm_basket", confirm_basket(), en());
    assert!(out.contains(r#"<ul class="gg-basket-lines">"#), "{out}");
    for (title, quantity, price) in [("Pour-over coffee set", 2, "$69.98"), ("Loose-leaf tea sampler", 1, "$18.50")] {
        let line = out.split("<li ").find(|l| l.contains(title)).unwrap_or_else(|| panic!("{title}: {out}"));
        assert!(line.contains(&format!(">× {quantity}<")) && line.contains(price), "{line}");
        assert!(line.contains(&format!("aria-label=\"Remove {title} from the basket\"")), "{line}");
        assert!(line.contains(&format!("aria-label=\"One more {title}\"")), "{line}");
    }
    // At one, "−" is off and decides nothing (Remove takes the line out).
    let tea = out.split("<li ").find(|l| l.contains("Loose-leaf tea sampler")).expect("the tea line");
    assert!(tea.contains(r#"aria-label="One fewer Loose-leaf tea sampler" disabled"#), "{tea}");
    assert!(out.contains("$93.47"), "one total: {out}");
    assert!(!out.contains("gg-confirm-gift"), "no single gift heading for a basket");
    let es = snap!("confirm_basket_es", confirm_basket(), RenderContext::new(Theme::Light, "es-ES"));
    assert!(es.contains("Loose-leaf tea sampler") && es.contains("93,47"), "{es}");
    let ViewState::ConfirmPurchase { draft, .. } = confirm_basket() else { panic!("confirm") };
    let Some(call) = decide::update_delivery(&draft).call() else { panic!("a call") };
    assert_eq!(call.tool, ToolName::PrepareOrder);
    assert_eq!(
        call.args.get("items"),
        Some(&json!([{"gift_id": "g_pour_over", "quantity": 2}, {"gift_id": "g_tea", "quantity": 1}]))
    );
    assert!(!call.args.contains_key("gift_id") && !call.args.contains_key("quantity"), "{:?}", call.args);
    // "+" on the tea: the same basket with two teas, and the form's details (a new draft).
    let more = decide::decide(&confirm_basket(), &Action::SetQuantity { gift_id: "g_tea".into(), quantity: 2 });
    let more = more.call().expect("a call");
    assert!(more.form);
    assert_eq!(
        more.args.get("items"),
        Some(&json!([{"gift_id": "g_pour_over", "quantity": 2}, {"gift_id": "g_tea", "quantity": 2}]))
    );
    // Remove the coffee: one gift left, in the one-gift form.
    let fewer = decide::decide(&confirm_basket(), &Action::RemoveLine { gift_id: "g_pour_over".into() });
    let fewer = fewer.call().expect("a call");
    assert_eq!((fewer.args.get("gift_id"), fewer.args.get("quantity")), (Some(&json!("g_tea")), Some(&json!(1))));
    assert!(!fewer.args.contains_key("items"));
    // Nothing outside 1..=10, nothing for a gift not in the basket, no Remove of the last line.
    for action in [
        Action::SetQuantity { gift_id: "g_tea".into(), quantity: 0 },
        Action::SetQuantity { gift_id: "g_tea".into(), quantity: 11 },
        Action::SetQuantity { gift_id: "g_other".into(), quantity: 2 },
        Action::RemoveLine { gift_id: "g_other".into() },
    ] {
        assert_eq!(decide::decide(&confirm_basket(), &action), decide::Next::Nothing, "{action:?}");
    }
    let one = decide::decide(&confirm_state(), &Action::RemoveLine { gift_id: "g_pour_over".into() });
    assert_eq!(one, decide::Next::Nothing, "the last line is not removed: Cancel leaves");
    // A basket nobody is named for yet (built with Add): "+" sends no empty form, which would
    // answer "name is required"; what the person typed goes with it (`edited`).
    let ViewState::ConfirmPurchase { mut draft, .. } = confirm_basket() else { panic!("confirm") };
    draft.destination = None;
    draft.gift_receipt = true;
    let plain = decide::set_quantity(&draft, "g_tea", 2).call().expect("a call");
    assert!(!plain.form);
    assert_eq!(plain.args.get("gift_receipt"), Some(&json!(true)), "its gift options go along");
    let typed = plain.edited.as_deref().expect("with what was typed");
    assert!(typed.form && !typed.args.contains_key("gift_receipt"), "the form says it then: {typed:?}");
}

/// Add on a gift card: prepare_order adding the gift to the basket the view keeps (a
/// placeholder, left out when it keeps none); Keep shopping goes back keeping it.
#[test]
fn add_puts_the_gift_in_the_kept_basket_and_keep_shopping_goes_back_to_the_results() {
    let results = parse(&results_output(gifts(), None));
    let ViewState::Results { gifts, .. } = &results else { panic!("results") };
    let gift = &gifts[0];
    let call = decide::decide(&results, &Action::Add { gift_id: gift.id.clone() }).call().expect("a call");
    assert_eq!(call.tool, ToolName::PrepareOrder);
    assert_eq!(
        Value::Object(call.args.clone()),
        json!({
            "items": [{"gift_id": gift.id, "quantity": 1}],
            "add_to": {"$": "basket"},
            "currency": gift.price.currency.code(),
        })
    );
    let kept = decide::fill(&call.args, &|_| Some("d_7".into())).expect("filled");
    assert_eq!(kept["add_to"], "d_7");
    let none = decide::fill(&call.args, &|_| None).expect("a basket is optional");
    assert!(!none.contains_key("add_to"), "{none:?}");
    let out = html(&results, &en());
    assert!(out.contains(&format!("aria-label=\"Add {} to the basket\"", gift.title)), "{out}");
    assert_eq!(decide::decide(&confirm_state(), &Action::KeepShopping), decide::Next::Shop);
    let confirm = html(&confirm_state(), &en());
    assert!(confirm.contains(r#"data-basket="d_42""#), "the card names its draft for the runtime to keep");
    assert!(confirm.contains(r#"data-home-only="" data-call="{&quot;shop&quot;:true}" hidden"#), "{confirm}");
}

/// A placed order with wrap and a gift receipt says both.
#[test]
fn order_placed_shows_its_gift_options() {
    let mut output = order_output();
    output["order"]["gift_wrap_cost"] = json!({"amount_minor": 998, "currency": "USD"});
    output["order"]["gift_receipt"] = json!(true);
    let out = html(&parse(&output), &en());
    assert!(out.contains(r#"<dt>Gift wrap</dt><dd class="gg-gift-wrap">$9.98</dd>"#), "{out}");
    assert!(out.contains("gg-gift-receipt"), "{out}");
    let plain = html(&parse(&order_output()), &en());
    assert!(!plain.contains("gg-gift-wrap") && !plain.contains("gg-gift-receipt"));
}

/// A placed order says when it was promised to arrive while it is on its way, in the person's
/// language; a cancelled or delivered one does not.
#[test]
fn order_placed_says_when_it_arrives() {
    let out = html(&parse(&order_output()), &en());
    assert!(out.contains(r#"<dt>Arrives</dt><dd class="gg-arrives">Mon, Jan 7 – Thu, Jan 10</dd>"#), "{out}");
    let es = html(&parse(&order_output()), &RenderContext::new(Theme::Light, "es-ES"));
    assert!(es.contains("lun 7 ene – jue 10 ene"), "{es}");
    for status in ["cancelled", "completed"] {
        let mut output = order_output();
        output["order"]["status"] = json!(status);
        output["order"]["cancellable_until"] = Value::Null;
        assert!(!html(&parse(&output), &en()).contains("gg-arrives"), "{status}");
    }
}

#[test]
fn partial_results() {
    let out = snap!("partial", parse(&results_output(gifts(), Some(partial()))), en());
    assert!(out.contains("m_roastery"));
    // The banner comes before the cards.
    assert!(out.find("gg-banner").unwrap_or(usize::MAX) < out.find("gg-card").unwrap_or(0));
}

#[test]
fn error_validation() {
    let out = snap!("error_validation", parse(&error_output(ToolName::SuggestGifts, validation_error())), en());
    assert!(out.contains("budget_min (80) is greater than budget_max (50)"));
    assert!(out.contains("Ref: "));
    assert!(!out.contains(r#"data-action="retry""#), "validation errors are not retryable");
    assert!(!out.contains("Try again"));
}

#[test]
fn error_transient() {
    let out = snap!("error_transient", parse(&error_output(ToolName::SuggestGifts, transient_error())), en());
    assert!(out.contains(r#"data-action="retry""#));
    assert!(out.contains("Try again"));
    assert!(out.contains("req_tr456"));
}

#[test]
fn error_permission() {
    let out = snap!("error_permission", parse(&error_output(ToolName::CommitOrder, permission_error())), en());
    assert!(!out.contains(r#"data-action="retry""#));
    assert!(out.contains(r#"data-category="permission""#));
}

#[test]
fn confirm_purchase_with_a_saved_card_and_without() {
    let saved = snap!("confirm_purchase_saved_card", confirm_with_card(Some(("visa", "4242"))), en());
    assert!(saved.contains("Pays with Visa •••• 4242"), "{saved}");
    assert!(saved.contains(r#"data-action="remove-card""#) && !saved.contains("Add a card"));
    assert!(saved.contains("&quot;tool&quot;:&quot;remove_saved_card&quot;"), "the decision rides on the button");
    let none = snap!("confirm_purchase_no_card", confirm_with_card(None), en());
    assert!(none.contains("Add a card") && !none.contains("remove-card"), "{none}");
    assert!(none.contains(r#"href="https://giftgenius.test/pay/card/cus_1."#), "{none}");
    let (es, pt) = (RenderContext::new(Theme::Light, "es-MX"), RenderContext::new(Theme::Light, "pt-BR"));
    for (ctx, pays, add) in [
        (es, "Se paga con Visa •••• 4242", "Añadir una tarjeta"),
        (pt, "Paga com Visa •••• 4242", "Adicionar um cartão"),
    ] {
        assert!(html(&confirm_with_card(Some(("visa", "4242"))), &ctx).contains(pays));
        assert!(html(&confirm_with_card(None), &ctx).contains(add));
    }
    // The sandbox: no card line at all.
    let sandbox = html(&confirm_state(), &en());
    assert!(!sandbox.contains("gg-card-on-file"));
}

#[test]
fn confirm_purchase() {
    let out = snap!("confirm_purchase", confirm_state(), en());
    assert!(out.contains(r#"data-action="confirm""#));
    assert!(out.contains(r#"data-action="cancel""#));
    assert!(out.contains("$74.97"));
    assert!(!out.contains("disabled"));
    // Every delivery detail is on the card, each in an input named by its field path.
    for (name, value) in [
        ("recipient.name", "Ana Sousa"),
        ("recipient.address.line1", "Rua Augusta 12"),
        ("recipient.address.line2", "3º Esq"),
        ("recipient.address.city", "Lisboa"),
        ("recipient.address.region", "Lisboa"),
        ("recipient.address.postal_code", "1100-053"),
        ("recipient.address.country", "PT"),
    ] {
        let input = out.split("<input").find(|i| i.contains(&format!(r#"name="{name}""#))).expect(name);
        assert!(input.contains(&format!(r#"value="{value}""#)), "{name}: {input}");
    }
    assert!(out.contains("Parabéns, Ana!"), "the gift message");
    assert!(out.contains(r#"data-action="update-delivery""#));
    assert!(!out.contains("ct_secret"), "the confirmation token is never in the markup");
    // Every element holding a detail is marked private (emptied in the host's widget state),
    // and no decision carries one.
    for holder in out.split("<input").skip(1).filter(|i| i.contains(r#"type="text""#)) {
        let tag = &holder[..holder.find('>').unwrap_or(holder.len())];
        assert!(tag.contains("data-private"), "an input with a detail: {tag}");
    }
    let textarea = out.split("<textarea").nth(1).expect("the gift message's textarea");
    assert!(textarea[..textarea.find('>').unwrap_or(0)].contains("data-private"), "{textarea}");
    for call in out.split("data-call=\"").skip(1).map(|rest| &rest[..rest.find('"').unwrap_or(0)]) {
        for private in ["Ana Sousa", "Augusta", "1100-053", "3º Esq", "Parabéns"] {
            assert!(!call.contains(private), "{private:?} in a data-call: {call}");
        }
    }
}

#[test]
fn order_placed() {
    let out = snap!("order_placed", parse(&order_output()), en());
    assert!(out.contains("o_7f3a"));
    assert!(out.contains("Paid"));
    assert!(!out.contains("gg-timeline"), "no timeline before anything happened to it");
}

/// The order as the operator moved it on: processing, shipped with tracking, part refunded.
fn shipped_order_output() -> Value {
    let envelope: Envelope<OrderData> = serde_json::from_value(order_output()).expect("an order");
    let paid = envelope.data().expect("an order").order.clone();
    let step = |status, at: &str| OrderStep { status, at: at.into() };
    wire(Envelope::ok(
        ToolName::GetOrder,
        OrderData {
            order: Order {
                status: OrderStatus::Shipped,
                cancellable_until: None,
                fulfillment: Some(Fulfillment {
                    carrier: "CTT".into(),
                    tracking_number: "RR123456789PT".into(),
                    tracking_url: "https://track.example/RR123456789PT".into(),
                }),
                timeline: vec![
                    step(OrderStatus::Paid, "2030-01-01T00:05:00Z"),
                    step(OrderStatus::Processing, "2030-01-02T09:00:00Z"),
                    step(OrderStatus::Shipped, "2030-01-03T15:30:00Z"),
                ],
                adjustments: vec![Adjustment {
                    id: "adj_1".into(),
                    amount: usd(500),
                    reason: "Gift wrap missing".into(),
                    status: RefundStatus::Succeeded,
                    created_at: "2030-01-04T10:00:00Z".into(),
                }],
                amount_refunded: Some(usd(500)),
                ..paid
            },
        },
    ))
}

#[test]
fn a_shipped_order_shows_its_timeline_tracking_and_refund_in_three_languages() {
    let out = snap!("order_shipped", parse(&shipped_order_output()), en());
    for text in [
        "Shipped",
        "Being prepared",
        "Jan 3, 2030",
        "CTT",
        "RR123456789PT",
        "Track package",
        "$5.00 refunded: Gift wrap missing",
    ] {
        assert!(out.contains(text), "{text} in {out}");
    }
    assert!(out.contains(r#"href="https://track.example/RR123456789PT""#));
    // Oldest first: paid, processing, shipped, then the refund.
    let at = |needle: &str| out.find(needle).unwrap_or_else(|| panic!("{needle}"));
    assert!(at(r#"<li data-status="paid""#) < at(r#"<li data-status="processing""#));
    assert!(at(r#"<li data-status="processing""#) < at(r#"<li data-status="shipped""#));
    assert!(at(r#"<li data-status="shipped""#) < at(r#"<li data-status="refunded""#));
    let es = snap!("order_shipped_es", parse(&shipped_order_output()), RenderContext::new(Theme::Light, "es-ES"));
    for text in ["Enviado", "Seguir el envío", "Historial del pedido", "reembolsado: Gift wrap missing"] {
        assert!(es.contains(text), "{text} in {es}");
    }
    let pt = snap!("order_shipped_pt", parse(&shipped_order_output()), RenderContext::new(Theme::Light, "pt-BR"));
    for text in ["Enviado", "Rastrear envio", "Histórico do pedido", "reembolsado: Gift wrap missing"] {
        assert!(pt.contains(text), "{text} in {pt}");
    }
}

/// The order of [`order_output`] waiting for the person's bank (3-D Secure), as commit_order
/// answers it with its hosted page in the widget's `_meta`.
fn awaiting_authentication_output() -> Value {
    let mut output = order_output();
    output["order"]["status"] = json!("awaiting_authentication");
    output["order"]["cancellable_until"] = Value::Null;
    output
}

const AUTHENTICATION_URL: &str = "https://giftgenius.test/pay/authenticate/o_7f3a.9c1d";

fn awaiting_authentication() -> ViewState {
    let meta = json!({"giftgenius/authentication_urls": {"o_7f3a": AUTHENTICATION_URL, "o_other": "https://x.test/"}});
    ViewState::from_tool_result(&awaiting_authentication_output(), &meta)
}

#[test]
fn an_order_awaiting_authentication_says_so_and_offers_the_bank_page_in_three_languages() {
    let out = snap!("order_awaiting_authentication", awaiting_authentication(), en());
    assert!(out.contains("Your bank asks you to confirm this payment."), "{out}");
    assert!(out.contains(r#"data-status="awaiting_authentication""#), "{out}");
    let link = format!(r#"href="{AUTHENTICATION_URL}""#);
    assert!(out.contains(&link), "the order's own page: {out}");
    assert!(!out.contains("https://x.test/"), "not another order's");
    assert_eq!(out.matches("Confirm with your bank").count(), 2, "the badge and the link: {out}");
    let es =
        snap!("order_awaiting_authentication_es", awaiting_authentication(), RenderContext::new(Theme::Light, "es-ES"));
    assert!(es.contains("Tu banco te pide que confirmes este pago.") && es.contains(&link), "{es}");
    let pt =
        snap!("order_awaiting_authentication_pt", awaiting_authentication(), RenderContext::new(Theme::Light, "pt-BR"));
    assert!(pt.contains("O seu banco pede que confirme este pagamento.") && pt.contains(&link), "{pt}");

    // Without the link (a restored screen, a result without `_meta`) it still says so, no link.
    let bare = html(&parse(&awaiting_authentication_output()), &en());
    assert!(bare.contains("Your bank asks you to confirm this payment.") && !bare.contains("/pay/authenticate/"));
    // Only while it awaits authentication, and only an http(s) link.
    let meta = json!({"giftgenius/authentication_urls": {"o_7f3a": AUTHENTICATION_URL}});
    let paid = html(&ViewState::from_tool_result(&order_output(), &meta), &en());
    assert!(!paid.contains("/pay/authenticate/") && !paid.contains("Your bank asks"), "{paid}");
    let hostile = json!({"giftgenius/authentication_urls": {"o_7f3a": "javascript:alert(1)"}});
    let refused = html(&ViewState::from_tool_result(&awaiting_authentication_output(), &hostile), &en());
    assert!(!refused.contains("javascript:") && !refused.contains("open-link"), "{refused}");
}

const CARD_PAGE: &str = "https://giftgenius.test/pay/card/cus_1.1780001800000.00ff";

/// commit_order's answer to a Confirm on an account with no saved card (Stripe), with `add_url`
/// (the card page's link) in its widget-only `_meta` when given.
fn no_saved_card(add_url: Option<&str>) -> ViewState {
    let error = ToolError::new(ErrorCode::NoSavedCard, "No card is saved for this account.", "req_card01");
    let output = wire::<OrderData>(Envelope::Err { tool: ToolName::CommitOrder, error });
    let mut meta = json!({});
    if let Some(url) = add_url {
        meta[META_PAYMENT_CARD] = json!({"card": null, "add_url": url});
    }
    ViewState::from_tool_result(&output, &meta)
}

#[test]
fn a_confirm_without_a_saved_card_says_so_and_offers_add_a_card_in_three_languages() {
    let out = snap!("error_no_saved_card", no_saved_card(Some(CARD_PAGE)), en());
    assert!(out.contains("No card is saved for this account, so nothing was charged."), "{out}");
    assert!(!out.contains("declined"), "not a decline: {out}");
    let link = format!(r#"href="{CARD_PAGE}""#);
    assert!(out.contains(&link) && out.contains("gg-add-card") && out.contains("open-link"), "{out}");
    assert!(!out.contains("Try again"), "nothing to retry until a card is saved: {out}");
    let es = snap!("error_no_saved_card_es", no_saved_card(Some(CARD_PAGE)), RenderContext::new(Theme::Light, "es-ES"));
    assert!(es.contains("No hay ninguna tarjeta guardada") && es.contains("Añadir una tarjeta") && es.contains(&link));
    let pt = snap!("error_no_saved_card_pt", no_saved_card(Some(CARD_PAGE)), RenderContext::new(Theme::Light, "pt-BR"));
    assert!(pt.contains("Não há nenhum cartão salvo") && pt.contains("Adicionar um cartão") && pt.contains(&link));

    // Without the link (a restored screen, the model's own call) it still says so, without one.
    let bare = html(&no_saved_card(None), &en());
    assert!(bare.contains("No card is saved for this account") && !bare.contains("gg-add-card"), "{bare}");
    // Only an http(s) link, and only with this error.
    let hostile = html(&no_saved_card(Some("javascript:alert(1)")), &en());
    assert!(!hostile.contains("javascript:") && !hostile.contains("gg-add-card"), "{hostile}");
    let mut meta = json!({});
    meta[META_PAYMENT_CARD] = json!({"card": null, "add_url": CARD_PAGE});
    let other = ViewState::from_tool_result(&error_output(ToolName::CommitOrder, permission_error()), &meta);
    assert!(!html(&other, &en()).contains("gg-add-card"), "another error offers no card page");
}

#[test]
fn a_tracking_link_that_is_not_http_is_not_a_link() {
    let mut output = shipped_order_output();
    output["order"]["fulfillment"]["tracking_url"] = json!("javascript:alert(1)");
    let out = html(&parse(&output), &en());
    assert!(out.contains("RR123456789PT"), "the number still shows");
    assert!(!out.contains("javascript:") && !out.contains("Track package"), "{out}");
}

fn order_list_output() -> Value {
    let envelope: Envelope<OrderData> = serde_json::from_value(order_output()).expect("an order");
    let paid = envelope.data().expect("an order").order.clone();
    let cancelled =
        Order { id: "o_1b2c".into(), status: OrderStatus::Cancelled, cancellable_until: None, ..paid.clone() };
    wire(Envelope::ok(
        ToolName::ListOrders,
        ListOrdersData { orders: vec![paid, cancelled], next_cursor: Some("6f5f31".into()) },
    ))
}

#[test]
fn order_list() {
    let out = snap!("order_list", parse(&order_list_output()), en());
    assert!(out.contains(r#"data-state="order-list""#));
    assert!(out.contains("o_7f3a") && out.contains("o_1b2c"));
    assert!(out.contains("Cancelled · refunded"));
    assert!(out.contains("to Lisboa, PT"));
    assert!(!out.contains(r#"data-action="ask-cancel-order""#), "no token, no Cancel button");
    let empty = wire(Envelope::ok(ToolName::ListOrders, ListOrdersData { orders: vec![], next_cursor: None }));
    assert!(html(&parse(&empty), &en()).contains("You have no orders yet."));
}

#[test]
fn order_list_offers_cancel_for_orders_with_a_token_and_asks_before_acting() {
    let meta =
        json!({"giftgenius/cancel_tokens": {"o_7f3a": "ct_cancel_secret"}, "giftgenius/delete_data_token": "ct_del"});
    let state = ViewState::from_tool_result(&order_list_output(), &meta);
    let out = snap!("order_list_actions", state.clone(), en());
    assert_eq!(out.matches(r#"data-action="ask-cancel-order""#).count(), 1, "only the paid order");
    assert!(out.contains(r#"data-action="ask-cancel-order" data-order-id="o_7f3a""#), "{out}");
    assert!(out.contains(r#"data-action="ask-delete-data""#));
    // The questions are in the markup (for the fallback to show) but hidden until asked.
    assert_eq!(out.matches(r#"class="gg-ask""#).count(), 2);
    assert_eq!(out.matches(r#"class="gg-ask""#).count(), out.matches(r#"hidden class="gg-ask""#).count(), "{out}");
    assert!(!out.contains("ct_cancel_secret") && !out.contains("ct_del"), "tokens never reach the markup");
    assert!(out.contains("Cancel this order? $74.97 will be refunded."), "the question the runtime shows");
}

#[test]
fn data_deleted() {
    let summary = DeleteMyDataData {
        saved_addresses_deleted: 1,
        drafts_deleted: 3,
        idempotency_keys_deleted: 3,
        checkout_sessions_deleted: 0,
        orders_anonymized: 2,
        financial_records_kept: 3,
        financial_records_retention_days: 3650,
    };
    let out = snap!("data_deleted", parse(&wire(Envelope::ok(ToolName::DeleteMyData, summary))), en());
    assert!(out.contains("kept for 10 years"));
}

#[test]
fn checkout_session() {
    let out = snap!("checkout", parse(&checkout_output()), en());
    assert!(out.contains(r#"href="https://giftgenius.test/checkout/cs_123""#));
    assert!(out.contains(r#"rel="noopener noreferrer""#));
}

#[test]
fn out_of_date_v2() {
    let mut payload = results_output(gifts(), None);
    payload["v"] = json!(CONTRACT_VERSION + 1);
    let state = parse(&payload);
    assert_eq!(state, ViewState::OutOfDate { v: Some(u64::from(CONTRACT_VERSION) + 1) });
    let out = snap!("out_of_date", state, en());
    assert!(out.contains("This view is out of date"));
    // Nothing guessed: no card data from the newer payload leaks into the view.
    assert!(!out.contains("Pour-over"));
}

#[test]
fn cancelled() {
    snap!("cancelled", ViewState::Cancelled, en());
}

#[test]
fn loading_with_streamed_arguments() {
    let Value::Object(so_far) =
        json!({"relationship_type": "friend", "interests": ["hiking", "<b>tea</b>"], "budget_max": 60})
    else {
        panic!("fixture is an object")
    };
    let out = snap!("loading_with_arguments", ViewState::loading_with(&so_far), en());
    assert!(out.contains(r#"data-state="loading""#) && out.contains(r#"aria-busy="true""#));
    assert!(out.contains("So far: For your friend · hiking, &lt;b&gt;tea&lt;/b&gt; · up to 60"), "{out}");
}

#[test]
fn tool_cancelled_with_and_without_try_again() {
    let retry =
        ViewState::ToolCancelled { reason: Some("<i>user</i> stopped it".into()), retry: Some(ToolName::SuggestGifts) };
    let out = snap!("tool_cancelled_retry", retry, en());
    assert!(out.contains(r#"data-state="tool-cancelled""#));
    assert!(out.contains(r#"data-action="retry""#));
    assert!(out.contains("Reason: &lt;i&gt;user&lt;/i&gt; stopped it"), "the host's reason is text");
    let out = snap!("tool_cancelled", ViewState::ToolCancelled { reason: None, retry: None }, en());
    assert!(!out.contains(r#"data-action="retry""#), "nothing to retry without the complete arguments");
    assert!(out.contains("Ask again in the chat"));
}

#[test]
fn full_screen_toggle_only_when_the_host_offers_it() {
    use giftgenius_widget::DisplayMode;
    // The toggles shown, by their `data-when`, in a markup.
    let shown = |out: &str| -> Vec<&str> {
        ["inline", "fullscreen"]
            .into_iter()
            .filter(|w| out.contains(&format!(r#"<div data-when="{w}" class="gg-toolbar">"#)))
            .collect()
    };
    let state = parse(&results_output(gifts(), None));
    let plain = html(&state, &en());
    assert!(!plain.contains("data-display-mode"), "inline is the default markup");
    // Not offered (the server's markup): both toggles are there, hidden, for the runtime.
    assert!(plain.contains(r#"<div data-when="inline" hidden class="gg-toolbar">"#), "{plain}");
    assert!(plain.contains(r#"<div data-when="fullscreen" hidden class="gg-toolbar">"#));
    assert!(shown(&plain).is_empty());
    let offered = en().with_display(DisplayMode::Inline, true);
    let out = html(&state, &offered);
    assert_eq!(shown(&out), ["inline"]);
    assert!(out.contains(r#"data-mode="fullscreen""#) && out.contains(">Compare all<"));
    let full = snap!("results_fullscreen", state.clone(), en().with_display(DisplayMode::Fullscreen, true));
    assert!(full.contains(r#"data-display-mode="fullscreen""#));
    assert_eq!(shown(&full), ["fullscreen"]);
    assert!(full.contains(r#"data-mode="inline""#) && full.contains(">Back to the chat<"));
    // Nothing to compare: one result, or a state that is not a list, has no "Compare all".
    let one = parse(&results_output(gifts().into_iter().take(1).collect(), None));
    assert!(!html(&one, &offered).contains(r#"data-mode="fullscreen""#));
    assert!(!html(&confirm_state(), &offered).contains(r#"data-mode="fullscreen""#));
    assert!(shown(&html(&confirm_state(), &offered)).is_empty());
    assert_eq!(shown(&html(&confirm_state(), &en().with_display(DisplayMode::Fullscreen, true))), ["fullscreen"]);
    // Shown full screen by the host without offering the toggle: the layout follows, no button.
    let no_toggle = html(&state, &en().with_display(DisplayMode::Fullscreen, false));
    assert!(no_toggle.contains(r#"data-display-mode="fullscreen""#) && shown(&no_toggle).is_empty());
}

// ---- behaviour ----

#[test]
fn try_again_only_when_retryable() {
    let mut error = transient_error();
    error.retryable = false;
    let out = html(&parse(&error_output(ToolName::SuggestGifts, error)), &en());
    assert!(!out.contains("Try again"));
}

#[test]
fn data_is_escaped() {
    let evil = "<img src=x onerror=alert(1)>";
    let mut g = gift("g_evil", evil, usd(100), true);
    g.reasons = vec![Reason { text: format!("{evil} reason"), why: Why::Popular { tag: evil.into() } }];
    g.merchant.name = "\"><script>alert(2)</script>".into();
    let out = html(&parse(&results_output(vec![g], None)), &en());
    assert!(out.contains("&lt;img src=x onerror=alert(1)&gt;"), "{out}");
    assert!(!out.contains("<img src=x"));
    assert!(!out.contains("<script>"));
}

#[test]
fn unsafe_urls_are_dropped() {
    let mut g = gift("g_js", "Mug", usd(100), true);
    g.image_url = "javascript:alert(1)".into();
    let out = html(&parse(&results_output(vec![g], None)), &en());
    assert!(!out.contains("javascript:"));
}

#[test]
fn mixed_envelope_is_out_of_date() {
    let mut payload = results_output(gifts(), None);
    payload["error"] = serde_json::to_value(transient_error()).expect("error serializes");
    assert_eq!(parse(&payload), ViewState::OutOfDate { v: Some(u64::from(CONTRACT_VERSION)) });

    let no_error = json!({"v": 6, "ok": false, "tool": "suggest_gifts"});
    assert_eq!(parse(&no_error), ViewState::OutOfDate { v: Some(u64::from(CONTRACT_VERSION)) });
}

#[test]
fn every_state_renders_in_every_theme_and_odd_locales() {
    let states = [
        parse(&Value::Null),
        parse(&results_output(gifts(), Some(partial()))),
        parse(&empty_output()),
        parse(&error_output(ToolName::SuggestGifts, transient_error())),
        confirm_state(),
        parse(&order_output()),
        parse(&checkout_output()),
        parse(&order_list_output()),
        ViewState::Cancelled,
        ViewState::OutOfDate { v: None },
    ];
    for state in &states {
        for ctx in [
            RenderContext::new(Theme::Dark, "ja-JP"),
            RenderContext::new(Theme::Light, ""),
            RenderContext::new(Theme::Light, "\"><x"),
        ] {
            let out = html(state, &ctx);
            assert!(out.contains(&format!(r#"data-state="{}""#, state.kind())));
            assert!(!out.contains("<x"), "locale must not reach markup raw");
        }
    }
}

// ---- display modes and languages ----

#[test]
fn inline_is_a_strip_of_compact_cards_and_full_screen_a_grid_of_full_ones() {
    use giftgenius_widget::DisplayMode;
    let state = parse(&results_output(gifts(), None));
    let inline = html(&state, &en());
    assert!(inline.contains(r#"class="gg-strip""#) && !inline.contains(r#"class="gg-grid""#), "{inline}");
    assert!(inline.contains("scroll sideways for more"), "a hint that more cards follow");
    assert_eq!(inline.matches(r#"class="gg-why""#).count(), gifts().len(), "one reason line per compact card");
    assert!(!inline.contains("gg-desc") && !inline.contains("gg-tags"), "no description or tags inline");
    let full = html(&state, &en().with_display(DisplayMode::Fullscreen, true));
    assert!(full.contains(r#"class="gg-grid""#) && !full.contains("gg-strip"));
    assert!(full.contains("gg-desc") && full.contains("gg-tags") && full.contains("gg-reasons"));
    assert!(!full.contains("scroll sideways"));
}

#[test]
fn results_es() {
    let out = snap!(
        "results_es",
        parse(&results_output(gifts(), Some(partial()))),
        RenderContext::new(Theme::Light, "es-MX")
    );
    assert!(out.contains(r#"lang="es-MX""#));
    for text in [
        "Ideas de regalo",
        "Para tu amigo o amiga",
        "30 años",
        "Elegir",
        "Algunas tiendas no respondieron",
        "Por su interés en coffee: etiquetado «coffee»",
    ] {
        assert!(out.contains(text), "{text} in {out}");
    }
}

#[test]
fn results_pt() {
    let out = snap!("results_pt", parse(&results_output(gifts(), None)), RenderContext::new(Theme::Dark, "pt-BR"));
    assert!(out.contains(r#"lang="pt-BR""#));
    for text in ["Ideias de presente", "Para: amigo ou amiga", "Escolher", "US$\u{a0}"] {
        assert!(out.contains(text), "{text} in {out}");
    }
}

#[test]
fn every_state_speaks_spanish_and_portuguese() {
    let states = [
        ("loading", ViewState::Loading),
        ("empty", parse(&empty_output())),
        ("error", parse(&error_output(ToolName::CommitOrder, transient_error()))),
        ("confirm", confirm_state()),
        ("order", parse(&order_output())),
        ("list", parse(&order_list_output())),
        ("checkout", parse(&checkout_output())),
        ("cancelled", ViewState::Cancelled),
    ];
    // English words that only appear when a text was left untranslated.
    let english = [
        ">Gift ideas<",
        ">Confirm your purchase<",
        ">Order placed<",
        ">Try again<",
        "Checkout is ready",
        "Nothing was",
        ">Your orders<",
        ">Cancel order<",
        "Deliver to",
        "Quantity",
        "Finding gift",
        "No matching",
        "Couldn't",
    ];
    for locale in ["es-ES", "pt-BR"] {
        for (name, state) in &states {
            let out = html(state, &RenderContext::new(Theme::Light, locale));
            for word in english {
                assert!(!out.contains(word), "{locale} {name}: {word:?} in {out}");
            }
        }
    }
}

#[test]
fn confirm_purchase_pt() {
    snap!("confirm_purchase_pt", confirm_state(), RenderContext::new(Theme::Light, "pt-BR"));
}

#[test]
fn order_list_es() {
    let out = snap!("order_list_es", parse(&order_list_output()), RenderContext::new(Theme::Light, "es-ES"));
    assert!(out.contains("Tus pedidos"));
}

#[test]
fn a_locale_of_another_language_reads_english_and_says_so() {
    let out = html(&parse(&results_output(gifts(), None)), &RenderContext::new(Theme::Light, "de-DE"));
    assert!(out.contains(r#"lang="en""#) && out.contains("Gift ideas"));
}

// ---- the decision on every control (widget/src/decide.rs) ----
//
// Each control of the markup carries the decision `decide` makes for its screen and action
// (`data-call`, which the runtime executes; the wasm's markup carries the same). These tests
// read every control of each screen's markup and check it against `decide` for the action that
// control emits, and keep the table of all of them in docs/widget-decisions.md.

use giftgenius_widget::Action;
use giftgenius_widget::decide::{self, Next};
use giftgenius_widget::i18n::Lang;
use giftgenius_widget::state::ListAsk;

/// Attribute values as Leptos escapes them, read back.
fn unescape(value: &str) -> String {
    value.replace("&quot;", "\"").replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
}

/// (data-action, decision) of every control in `html` that carries a decision, in document order.
fn calls_in(html: &str) -> Vec<(String, Value)> {
    let attr = |tag: &str, name: &str| {
        let open = format!(" {name}=\"");
        let start = tag.find(&open)? + open.len();
        let end = start + tag[start..].find('"')?;
        Some(unescape(&tag[start..end]))
    };
    html.split('<')
        .filter_map(|tag| {
            let tag = &tag[..tag.find('>').unwrap_or(tag.len())];
            let call = attr(tag, "data-call")?;
            let action = attr(tag, "data-action").unwrap_or_default();
            Some((action, serde_json::from_str(&call).expect("data-call is JSON")))
        })
        .collect()
}

/// Every action the controls of `state` can emit, as the views build them.
fn actions_of(state: &ViewState) -> Vec<Action> {
    // Every screen has "Back to the chat" (shown in full screen), a list to compare "Compare all".
    let exit = Action::SetDisplayMode { mode: giftgenius_widget::DisplayMode::Inline };
    let compare = Action::SetDisplayMode { mode: giftgenius_widget::DisplayMode::Fullscreen };
    let comparable = matches!(state, ViewState::Results { gifts, .. } if gifts.len() > 1);
    let mut out = actions_of_view(state);
    out.push(exit);
    if comparable {
        out.push(compare);
    }
    out
}

/// The actions of the state's own view (not the display toggles).
fn actions_of_view(state: &ViewState) -> Vec<Action> {
    let suggestions = |notice: &Option<Notice>| -> Vec<Action> {
        notice
            .iter()
            .flat_map(|n| &n.suggestions)
            .map(|s| Action::ApplySuggestion { set_arguments: s.set_arguments.clone() })
            .collect()
    };
    match state {
        ViewState::Results { gifts, notice, .. } => {
            let add = |g: &GiftCard| Action::Add { gift_id: g.id.clone() };
            gifts
                .iter()
                .flat_map(|g| [Action::Choose { gift_id: g.id.clone() }, add(g)])
                .chain(suggestions(notice))
                .collect()
        }
        ViewState::Empty { notice, .. } => suggestions(notice),
        ViewState::Error { error, .. } if error.retryable => vec![Action::Retry],
        ViewState::ToolCancelled { retry: Some(_), .. } => vec![Action::Retry],
        ViewState::ConfirmPurchase { draft, delivery, card } => {
            let edit = Action::EditDelivery {
                details: delivery.clone().unwrap_or_else(|| {
                    serde_json::from_value(
                        json!({"recipient": {"name": "", "address": {"line1": "", "city": "", "country": ""}}}),
                    )
                    .expect("details")
                }),
            };
            let pay = draft.destination.is_some().then_some(Action::PayInHost);
            let card = match card {
                Some(CardOnFile { saved: Some(_), .. }) => Some(Action::RemoveCard),
                Some(CardOnFile { saved: None, add_url }) => Some(Action::OpenLink { url: add_url.clone() }),
                None => None,
            };
            // Switch to the option that makes the day the draft's own shipping misses.
            let switch = draft
                .delivery_options
                .iter()
                .find(|o| o.in_time == Some(true) && o.shipping != draft.shipping)
                .filter(|_| {
                    draft.delivery_options.iter().any(|o| o.shipping == draft.shipping && o.in_time == Some(false))
                })
                .map(|o| Action::SwitchShipping { shipping: o.shipping });
            // Each line's "−" and "+" within 1..=10, and Remove when the basket has another line.
            let lines = draft.lines.iter().flat_map(|line| {
                let id = line.gift.id.clone();
                let steps = [line.quantity - 1, line.quantity + 1]
                    .into_iter()
                    .filter(|q| (1..=decide::MAX_LINE_QUANTITY).contains(q))
                    .map(move |quantity| Action::SetQuantity { gift_id: id.clone(), quantity });
                let remove = (draft.lines.len() > 1).then(|| Action::RemoveLine { gift_id: line.gift.id.clone() });
                steps.chain(remove)
            });
            [Action::Confirm]
                .into_iter()
                .chain(lines)
                .chain(switch)
                .chain(pay)
                .chain(card)
                .chain([edit, Action::KeepShopping, Action::Cancel])
                .collect()
        }
        ViewState::OrderList { actions, .. } => {
            let mut out = Vec::new();
            for id in &actions.cancellable {
                out.push(Action::AskCancelOrder { order_id: id.clone() });
                out.extend([Action::CancelOrder { order_id: id.clone() }, Action::DismissAsk]);
            }
            if actions.can_delete_data {
                out.extend([Action::AskDeleteData, Action::DeleteData, Action::DismissAsk]);
            }
            out
        }
        ViewState::Checkout { checkout } => vec![Action::OpenLink { url: checkout.checkout_url.clone() }],
        ViewState::OrderPlaced { order, authentication_url } => order
            .fulfillment
            .iter()
            .filter(|f| f.tracking_url.starts_with("https://"))
            .map(|f| Action::OpenLink { url: f.tracking_url.clone() })
            .chain(authentication_url.iter().map(|url| Action::OpenLink { url: url.clone() }))
            .collect(),
        _ => Vec::new(),
    }
}

/// The screens with controls, each with a name for the table.
fn screens() -> Vec<(&'static str, ViewState)> {
    let list_meta =
        json!({"giftgenius/cancel_tokens": {"o_7f3a": "ct_cancel_secret"}, "giftgenius/delete_data_token": "ct_del"});
    vec![
        ("results", parse(&results_output(gifts(), None))),
        ("empty", parse(&empty_output())),
        ("error", parse(&error_output(ToolName::SuggestGifts, transient_error()))),
        ("tool-cancelled", ViewState::ToolCancelled { reason: None, retry: Some(ToolName::SuggestGifts) }),
        ("confirm", confirm_state()),
        ("confirm, with Stripe and a saved card", confirm_with_card(Some(("visa", "4242")))),
        ("confirm, with Stripe and no card", confirm_with_card(None)),
        ("confirm, standard too late and express in time", confirm_needed_by("2029-12-15")),
        ("confirm, nothing in time", confirm_needed_by("2029-12-10")),
        ("confirm, gift-wrapped with a gift receipt", confirm_gift_wrapped()),
        ("confirm, a basket of two gifts", confirm_basket()),
        ("order-list", ViewState::from_tool_result(&order_list_output(), &list_meta)),
        ("checkout", parse(&checkout_output())),
        ("order-placed", parse(&order_output())),
        ("order-placed, shipped", parse(&shipped_order_output())),
        ("order-placed, awaiting authentication", awaiting_authentication()),
        ("cancelled", ViewState::Cancelled),
    ]
}

#[test]
fn every_control_in_the_markup_carries_the_decision_the_controller_makes() {
    for (name, state) in screens() {
        let mut in_markup = calls_in(&html(&state, &en()));
        let mut decided: Vec<(String, Value)> = actions_of(&state)
            .iter()
            .filter_map(|a| Some((a.data_action().to_string(), decide::decide(&state, a).to_value(Lang::En)?)))
            .collect();
        let order = |v: &Vec<(String, Value)>| {
            let mut v: Vec<String> = v.iter().map(|(a, c)| format!("{a} {c}")).collect();
            v.sort();
            v
        };
        in_markup.sort_by(|a, b| a.0.cmp(&b.0));
        decided.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(order(&in_markup), order(&decided), "{name}: the markup's decisions are decide's");
        // Every control that does something says what: a button without a decision would be dead.
        let out = html(&state, &en());
        assert_eq!(out.matches("data-action=").count(), in_markup.len(), "{name}: every control carries data-call");
        for secret in ["ct_secret", "ct_cancel_secret", "ct_del"] {
            assert!(!out.contains(secret), "{name}: no token in the markup");
        }
    }
}

#[test]
fn a_token_lost_with_a_reload_reopens_the_draft_by_id_then_commits_only_if_it_decides_the_same() {
    let state = confirm_state();
    let Some(call) = decide::decide(&state, &Action::Confirm).call() else { panic!("confirm is a call") };
    assert_eq!(call.tool, ToolName::CommitOrder);
    let lost = call.lost.as_deref().expect("a way back to a token");
    assert_eq!((lost.tool, lost.form), (ToolName::ReopenOrderDraft, false), "the draft by id, no form");
    assert_eq!(Value::Object(lost.args.clone()), json!({"draft_id": "d_42"}));
    // Nothing personal in the decision, so nothing in the markup's data-call: the same call
    // with or without the delivery details on the card.
    let ViewState::ConfirmPurchase { draft, .. } = confirm_state() else { panic!("confirm") };
    let bare = ViewState::ConfirmPurchase { draft, delivery: None, card: None };
    assert_eq!(decide::decide(&bare, &Action::Confirm).call(), Some(call.clone()));
    // Decided again on the draft reopened: the same commit, so it follows.
    let again = decide::decide(&confirm_state(), &Action::Confirm).call().expect("a call");
    assert!(again.same(&call));
    // The same draft at another price: not the same commitment; the person confirms anew.
    let ViewState::ConfirmPurchase { mut draft, .. } = confirm_state() else { panic!("confirm") };
    draft.total.amount_minor += 100;
    let dearer = decide::confirm(&draft).call().expect("a call");
    assert!(!dearer.same(&call));
    // Placeholders are filled by whoever holds the values; one that cannot be, fails the call.
    let filled = decide::fill(&call.args, &|p| match p {
        decide::Placeholder::Key { or, .. } => Some(or.clone()),
        decide::Placeholder::Meta { .. } | decide::Placeholder::Answer | decide::Placeholder::Basket => None,
    });
    assert_eq!(filled, None, "no token, no commit_order");
    let filled = decide::fill(&call.args, &|_| Some("x".into())).expect("filled");
    assert_eq!(filled["draft_id"], "d_42");
}

#[test]
fn a_cancelled_order_patches_its_row_in_the_list_and_a_lost_list_token_fetches_it_first() {
    let call = decide::cancel_order("o_7f3a").call().expect("a call");
    assert_eq!(call.tool, ToolName::CancelOrder);
    assert_eq!(call.lost.as_deref().map(|c| (c.tool, c.over)), Some((ToolName::ListOrders, true)));
    // The answer's markup carries the cancelled order's row (hidden) for the runtime to patch
    // into the list it is on; the wasm patches its own list the same way.
    let selector = call.patch.as_deref().expect("a row to patch");
    assert_eq!(selector, r#".gg-order-row[data-order-id="o_7f3a"]"#);
    let mut order = match parse(&order_output()) {
        ViewState::OrderPlaced { order, .. } => order,
        other => panic!("{other:?}"),
    };
    let paid = html(&ViewState::OrderPlaced { order: order.clone(), authentication_url: None }, &en());
    assert!(!paid.contains("gg-parts"), "a paid order's card carries no row");
    order.status = OrderStatus::Cancelled;
    let cancelled = html(&ViewState::OrderPlaced { order, authentication_url: None }, &en());
    assert!(
        cancelled.contains(r#"<ul hidden class="gg-parts"><li data-order-id="o_7f3a" class="gg-order-row">"#),
        "{cancelled}"
    );
    assert!(
        !cancelled[cancelled.find("gg-parts").unwrap_or(0)..].contains("ask-cancel-order"),
        "no Cancel on a cancelled row"
    );
    assert_eq!(call.args["idempotency_key"], json!(giftgenius_widget::flow::cancel_key_for_order("o_7f3a")));
    assert_eq!(decide::decide(&ViewState::Cancelled, &Action::CancelOrder { order_id: "o".into() }), Next::Nothing);
    assert_eq!(
        decide::decide(&parse(&order_list_output()), &Action::AskCancelOrder { order_id: "o_7f3a".into() }),
        Next::Ask(Some(ListAsk::CancelOrder { order_id: "o_7f3a".into() }))
    );
}

/// A decision in a few words, for the table.
fn describe(call: &Value) -> String {
    if let Some(session) = call.get("sheet") {
        return format!(
            "the host's payment sheet (`requestCheckout`) with _meta[{}] (decided at the total seen, {}); \
             it answers with the tool's result (shown), else an order: {}; a session missing: first {}, \
             and the sheet if the control there decides the same, else the screen stays, saying \"{}\"",
            session["key"].as_str().unwrap_or(""),
            call["seen"].as_str().unwrap_or(""),
            describe(&call["then"]),
            describe(&call["lost"]),
            call["gone"].as_str().unwrap_or(""),
        );
    }
    let Some(tool) = call.get("tool").and_then(Value::as_str) else {
        return match call.as_object().and_then(|o| o.iter().next()) {
            Some((k, v)) if k == "ask" => match v.as_str() {
                Some(id) => format!("show the question `#{id}`"),
                None => "hide the questions".into(),
            },
            Some((k, _)) if k == "back" => {
                "back to the last results (else \"Purchase cancelled\"); the checkout entry and the basket go".into()
            }
            Some((k, _)) if k == "shop" => {
                "back to the last results, keeping the basket (shown only with results)".into()
            }
            Some((k, _)) if k == "retry" => "the call that led here, again".into(),
            Some((k, v)) => format!("{k} {v}"),
            None => String::new(),
        };
    };
    let args: Vec<String> = call["args"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| match v.get("$").and_then(Value::as_str) {
            Some("meta") => format!(
                "{k}: _meta[{}{}]",
                v["key"].as_str().unwrap_or(""),
                v.get("at").and_then(Value::as_str).map(|a| format!("][{a}")).unwrap_or_default()
            ),
            Some("key") => format!("{k}: kept key of {} (else derived)", v["draft"].as_str().unwrap_or("")),
            Some("answer") => format!("{k}: the order id the host's answer names"),
            Some("basket") => format!("{k}: the basket kept (the last draft shown; left out if none)"),
            _ => format!("{k}: {v}"),
        })
        .collect();
    let mut out = format!("`{tool}` {{{}}}", args.join(", "));
    if call.get("over").is_some() {
        out.push_str(" over the screen's arguments");
    }
    if call.get("form").is_some() {
        out.push_str(" + the form's details");
    }
    if call.get("forget").is_some() {
        out.push_str("; ok: forget what the view kept");
    }
    if let Some(seen) = call.get("seen").and_then(Value::as_str) {
        out.push_str(&format!(" (decided at the total seen, {seen})"));
    }
    if let Some(selector) = call.get("patch").and_then(Value::as_str) {
        out.push_str(&format!("; ok: the answer's `{selector}` replaces the screen's (no refetch)"));
    }
    if let Some(gone) = call.get("gone").and_then(Value::as_str) {
        out.push_str(&format!("; if `lost` finds another screen, the screen stays, saying \"{gone}\""));
    }
    for (part, say) in [("edited", "form edited: instead"), ("lost", "a token missing: first")] {
        if let Some(other) = call.get(part) {
            out.push_str(&format!("; {say} {}", describe(other)));
            if part == "lost" {
                out.push_str(", and this call if the control there decides the same");
            }
        }
    }
    out
}

#[test]
fn the_decision_table_in_the_docs_is_the_one_the_code_makes() {
    let mut table = String::from(
        "# What each control of the widget does\n\n\
         Generated from `widget/src/decide.rs` by the test \
         `the_decision_table_in_the_docs_is_the_one_the_code_makes` (widget/tests/snapshots.rs);\n\
         run it with `GG_WRITE_DOCS=1` to rewrite this file. Each control of the server's markup carries\n\
         its decision as `data-call`, which the widget's runtime executes (a press on the wasm's view\n\
         is followed on the same control of the result's server markup). `_meta[…]` is a token of the\n\
         result the screen came from, filled in by the runtime: it never appears in markup or storage.\n\n\
         | screen | control | decision |\n|---|---|---|\n",
    );
    for (name, state) in screens() {
        let calls = calls_in(&html(&state, &en()));
        if calls.is_empty() {
            table.push_str(&format!("| {name} | (none) | |\n"));
        }
        let mut seen = Vec::new();
        for (action, call) in calls {
            let row = format!("| {name} | {action} | {} |\n", describe(&call).replace('|', "\\|"));
            if !seen.contains(&row) {
                table.push_str(&row);
                seen.push(row);
            }
        }
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/widget-decisions.md");
    if std::env::var_os("GG_WRITE_DOCS").is_some() {
        std::fs::write(path, &table).expect("docs written");
    }
    let docs = std::fs::read_to_string(path).unwrap_or_default();
    assert_eq!(docs, table, "docs/widget-decisions.md is out of date: run this test with GG_WRITE_DOCS=1");
}
