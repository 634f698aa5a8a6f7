//! `ViewState`: the one thing the UI renders, and how a tool result becomes one.
//!
//! Parsing is strict on purpose: the contract version is checked before anything else, and a
//! payload that does not match the contract becomes `OutOfDate` rather than a guess.

use crate::flow::safe_url;
use crate::i18n::{Lang, Msg, words};
use giftgenius_types::delivery::DeliveryDetails;
use giftgenius_types::orders::{
    CheckoutData, CheckoutSession, DeleteMyDataData, ListOrdersData, Order, OrderData, OrderDraft, OrderStatus,
    PrepareOrderData,
};
use giftgenius_types::read::{ReadFields, ReadJson};
use giftgenius_types::wire::{
    META_AUTHENTICATION_URLS, META_CANCEL_TOKENS, META_DELETE_DATA_TOKEN, META_DELIVERY, META_PAYMENT_CARD,
};
use giftgenius_types::{
    CONTRACT_VERSION, Envelope, ErrorCode, GiftCard, Notice, Occasion, Partial, RelationshipType, SuggestGiftsData,
    SuggestGiftsQuery, ToolError, ToolName,
};
use serde_json::{Map, Value};

/// Everything the widget can show. Pure data: rendering it has no side effects.
///
/// Variants differ a lot in size; there is one value per widget, so boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum ViewState {
    /// No result yet (the tool is still running, or the host has not handed it over).
    Loading,
    /// Still loading, with what the host has streamed of the model's arguments so far
    /// (MCP Apps `tool-input-partial`): short phrases, shown as text, never acted upon.
    LoadingWith { so_far: SoFar },
    /// Gift cards; `partial` names the stores that failed, shown above the cards.
    Results { query: SuggestGiftsQuery, gifts: Vec<GiftCard>, notice: Option<Notice>, partial: Option<Partial> },
    /// The search ran and found nothing: the notice and its suggestions.
    Empty { query: SuggestGiftsQuery, notice: Option<Notice>, partial: Option<Partial> },
    /// A tool said no; `tool` is what "Try again" repeats. `add_card_url`: with `NO_SAVED_CARD`,
    /// the card page's link (widget-only `_meta`, as on the confirm card), offered as Add a card.
    Error { tool: ToolName, error: ToolError, add_card_url: Option<String> },
    /// A draft waiting for the human's Confirm. `delivery` is what the card's form shows: the
    /// draft's own details (widget-only `_meta`). A call in flight after a press, and what a
    /// failed one said, are the runtime's to show on this screen's markup.
    /// `card`: with Stripe, the card a Confirm charges and the card page's link
    /// (widget-only `_meta`); `None` when the result had none (the sandbox, a restored card).
    ConfirmPurchase { draft: OrderDraft, delivery: Option<DeliveryDetails>, card: Option<CardOnFile> },
    /// The order exists (from commit_order or get_order). `authentication_url`: the hosted page
    /// where the person confirms the payment with their bank, while the order awaits it (3-D
    /// Secure; widget-only `_meta`, a capability the model never sees).
    OrderPlaced { order: Order, authentication_url: Option<String> },
    /// The person's orders, newest first (list_orders); `next_cursor` when older ones exist.
    /// The list's actions are below it in [`OrderListActions`].
    OrderList { orders: Vec<Order>, next_cursor: Option<String>, actions: OrderListActions },
    /// What delete_my_data deleted and kept.
    DataDeleted { summary: DeleteMyDataData },
    /// A hosted checkout page (create_checkout_session).
    Checkout { checkout: CheckoutSession },
    /// The user left the confirmation and there are no earlier results to go back to.
    Cancelled,
    /// The host cancelled the tool call that this view was opened for (MCP Apps
    /// `tool-cancelled`), before any result. `retry` is the tool "Try again" calls, set only
    /// when the complete arguments are known; `reason` is the host's, shown as text.
    ToolCancelled { reason: Option<String>, retry: Option<ToolName> },
    /// The payload is from another contract version, or unreadable. `v` is what it said, if anything.
    OutOfDate { v: Option<u64> },
}

/// The card a Confirm charges, with Stripe (`_meta["giftgenius/payment_card"]`): its brand and
/// last four digits if one is saved, and the hosted card page's link (Add a card).
#[derive(Debug, Clone, PartialEq)]
pub struct CardOnFile {
    /// `(brand, last4)`, e.g. `("visa", "4242")`.
    pub saved: Option<(String, String)>,
    pub add_url: String,
}

impl CardOnFile {
    pub fn read(meta: &Value) -> Option<CardOnFile> {
        let found = meta.get(META_PAYMENT_CARD)?;
        let add_url = found.get("add_url")?.as_str()?.to_string();
        let saved = found.get("card").and_then(|card| {
            let text = |k: &str| card.get(k).and_then(Value::as_str).map(str::to_string);
            Some((text("brand")?, text("last4")?))
        });
        Some(CardOnFile { saved, add_url })
    }
}

/// What the person can do from the order list (asking for the second click, the call in
/// flight and its error are the runtime's, on the list's markup).
///
/// The tokens themselves stay in the runtime's memory (like the confirmation token); this
/// says only which orders have one, so the list shows a Cancel button for them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OrderListActions {
    /// Ids of the orders that may still be cancelled (they have a token in `_meta`).
    pub cancellable: Vec<String>,
    /// Whether Delete my data is offered (the result carried its token).
    pub can_delete_data: bool,
}

impl OrderListActions {
    /// What a list of `orders` offers with the tokens of this `_meta`: Cancel for each order
    /// that has a token and is not cancelled already (a list restored after a cancellation
    /// meets the host's older tokens), Delete my data when its token is there.
    pub fn offered(orders: &[Order], meta: &Value) -> OrderListActions {
        let tokens = meta.get(META_CANCEL_TOKENS).and_then(Value::as_object);
        let cancellable = orders
            .iter()
            .filter(|o| o.status != OrderStatus::Cancelled)
            .filter(|o| tokens.is_some_and(|t| t.get(&o.id).and_then(Value::as_str).is_some_and(|s| !s.is_empty())))
            .map(|o| o.id.clone())
            .collect();
        let can_delete_data = meta.get(META_DELETE_DATA_TOKEN).and_then(Value::as_str).is_some_and(|s| !s.is_empty());
        OrderListActions { cancellable, can_delete_data }
    }
}

/// The hosted 3-D Secure page of `order` from a result's `_meta`: only while the order awaits
/// authentication, and only an absolute http(s) URL (the server's own public URL; anything else
/// is not a link we open).
fn authentication_url(order: &Order, meta: &Value) -> Option<String> {
    if order.status != OrderStatus::AwaitingAuthentication {
        return None;
    }
    let url = meta.get(META_AUTHENTICATION_URLS)?.get(&order.id)?.as_str()?;
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then(|| url.to_string())
}

/// The destructive action the person started and must confirm with a second click.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListAsk {
    CancelOrder { order_id: String },
    DeleteData,
}

impl ViewState {
    /// The state for a tool result: its `structuredContent` and its widget-only `_meta`, which
    /// adds what the model never reads (a draft's full delivery details, which orders have a
    /// cancel token, whether Delete my data is offered).
    pub fn from_tool_result(output: &Value, meta: &Value) -> ViewState {
        match ViewState::from_tool_output(output) {
            ViewState::ConfirmPurchase { draft, .. } => {
                let delivery = meta.get(META_DELIVERY).and_then(DeliveryDetails::read_json);
                let card = CardOnFile::read(meta);
                ViewState::ConfirmPurchase { draft, delivery, card }
            }
            ViewState::Error { tool, error, .. } if error.code == ErrorCode::NoSavedCard => {
                let add_card_url = CardOnFile::read(meta).and_then(|card| safe_url(&card.add_url).map(str::to_string));
                ViewState::Error { tool, error, add_card_url }
            }
            ViewState::OrderList { orders, next_cursor, .. } => {
                let actions = OrderListActions::offered(&orders, meta);
                ViewState::OrderList { orders, next_cursor, actions }
            }
            ViewState::OrderPlaced { order, .. } => {
                let authentication_url = authentication_url(&order, meta);
                ViewState::OrderPlaced { order, authentication_url }
            }
            state => state,
        }
    }

    /// The state for a tool's `structuredContent` (ChatGPT's `toolOutput`).
    ///
    /// `null` means "not there yet" and renders as loading; anything that is not a valid
    /// envelope of the current contract version renders as out of date.
    pub fn from_tool_output(output: &Value) -> ViewState {
        let object = match output {
            Value::Null => return ViewState::Loading,
            Value::Object(object) => object,
            _ => return ViewState::OutOfDate { v: None },
        };
        // Version first: a newer payload may have a shape we would misread.
        match object.get("v") {
            Some(v) if v.as_u64() == Some(u64::from(CONTRACT_VERSION)) => {}
            Some(v) => return ViewState::OutOfDate { v: v.as_u64() },
            None => return ViewState::OutOfDate { v: None },
        }
        let out_of_date = ViewState::OutOfDate { v: Some(u64::from(CONTRACT_VERSION)) };
        let Some(tool) = object.get("tool").and_then(Value::as_str).and_then(ToolName::parse) else {
            return out_of_date;
        };
        let parsed = match tool {
            ToolName::SuggestGifts => parse::<SuggestGiftsData>(output).map(|env| match env {
                Envelope::Ok { data, notice, partial, .. } if data.gifts.is_empty() => {
                    ViewState::Empty { query: data.query, notice, partial }
                }
                Envelope::Ok { data, notice, partial, .. } => {
                    ViewState::Results { query: data.query, gifts: data.gifts, notice, partial }
                }
                Envelope::Err { tool, error } => ViewState::Error { tool, error, add_card_url: None },
            }),
            ToolName::PrepareOrder
            | ToolName::ReopenOrderDraft
            | ToolName::RemoveSavedCard
            | ToolName::CheckoutSession => parse::<PrepareOrderData>(output).map(|env| match env {
                Envelope::Ok { data, .. } => {
                    ViewState::ConfirmPurchase { draft: data.draft, delivery: None, card: None }
                }
                Envelope::Err { tool, error } => ViewState::Error { tool, error, add_card_url: None },
            }),
            ToolName::ListOrders => parse::<ListOrdersData>(output).map(|env| match env {
                Envelope::Ok { data, .. } => ViewState::OrderList {
                    orders: data.orders,
                    next_cursor: data.next_cursor,
                    actions: OrderListActions::default(),
                },
                Envelope::Err { tool, error } => ViewState::Error { tool, error, add_card_url: None },
            }),
            ToolName::DeleteMyData => parse::<DeleteMyDataData>(output).map(|env| match env {
                Envelope::Ok { data, .. } => ViewState::DataDeleted { summary: data },
                Envelope::Err { tool, error } => ViewState::Error { tool, error, add_card_url: None },
            }),
            ToolName::CommitOrder | ToolName::CompleteCheckout | ToolName::GetOrder | ToolName::CancelOrder => {
                parse::<OrderData>(output).map(|env| match env {
                    Envelope::Ok { data, .. } => ViewState::OrderPlaced { order: data.order, authentication_url: None },
                    Envelope::Err { tool, error } => ViewState::Error { tool, error, add_card_url: None },
                })
            }
            ToolName::CreateCheckoutSession => parse::<CheckoutData>(output).map(|env| match env {
                Envelope::Ok { data, .. } => ViewState::Checkout { checkout: data.checkout },
                Envelope::Err { tool, error } => ViewState::Error { tool, error, add_card_url: None },
            }),
        };
        parsed.unwrap_or(out_of_date)
    }

    /// A short stable name, rendered as `data-state` on the root (handy for tests and CSS).
    pub const fn kind(&self) -> &'static str {
        match self {
            ViewState::Loading | ViewState::LoadingWith { .. } => "loading",
            ViewState::Results { .. } => "results",
            ViewState::Empty { .. } => "empty",
            ViewState::Error { .. } => "error",
            ViewState::ConfirmPurchase { .. } => "confirm",
            ViewState::OrderPlaced { .. } => "order-placed",
            ViewState::OrderList { .. } => "order-list",
            ViewState::DataDeleted { .. } => "data-deleted",
            ViewState::Checkout { .. } => "checkout",
            ViewState::Cancelled => "cancelled",
            ViewState::ToolCancelled { .. } => "tool-cancelled",
            ViewState::OutOfDate { .. } => "out-of-date",
        }
    }

    /// Nothing to show yet: a spinner, with or without the arguments known so far.
    pub const fn is_loading(&self) -> bool {
        matches!(self, ViewState::Loading | ViewState::LoadingWith { .. })
    }

    /// Loading, with the known `suggest_gifts`-style arguments of a (possibly partial) call
    /// as phrases; plain loading when none of them is there yet.
    pub fn loading_with(arguments: &Map<String, Value>) -> ViewState {
        let so_far = SoFar::read(arguments);
        if so_far == SoFar::default() { ViewState::Loading } else { ViewState::LoadingWith { so_far } }
    }

    /// What the polite live region says when this state appears, for screen-reader users.
    pub fn announcement(&self, lang: Lang) -> String {
        let error_text = |error: &giftgenius_types::ToolError| words::error_text(lang, error.code);
        match self {
            ViewState::Loading | ViewState::LoadingWith { .. } => lang.t(Msg::SayLoading).into(),
            ViewState::Results { gifts, partial, .. } => {
                let found = match gifts.len() {
                    1 => lang.t(Msg::SayFoundOne).to_string(),
                    n => lang.f(Msg::SayFoundMany, &[("count", &n.to_string())]),
                };
                match partial {
                    Some(_) => format!("{found} {}", lang.t(Msg::SaySomeStoresMissing)),
                    None => found,
                }
            }
            ViewState::Empty { .. } => lang.t(Msg::SayNoMatches).into(),
            // The root's live region is the one announcer (no extra role="alert" that would
            // read the same news twice), so it carries the message itself.
            ViewState::Error { error, .. } => lang.f(Msg::SayError, &[("message", error_text(error))]),
            ViewState::ConfirmPurchase { .. } => lang.t(Msg::SayReview).into(),
            ViewState::OrderPlaced { order, .. } if order.status == OrderStatus::Cancelled => {
                lang.t(Msg::SayOrderCancelled).into()
            }
            ViewState::OrderPlaced { order, .. } if order.status == OrderStatus::AwaitingAuthentication => {
                lang.t(Msg::AuthenticationNeeded).into()
            }
            ViewState::OrderPlaced { .. } => lang.t(Msg::SayOrderPlaced).into(),
            ViewState::OrderList { orders, .. } => match orders.len() {
                0 => lang.t(Msg::NoOrdersYet).into(),
                1 => lang.t(Msg::SayOneOrder).into(),
                n => lang.f(Msg::SayOrders, &[("count", &n.to_string())]),
            },
            ViewState::DataDeleted { .. } => lang.t(Msg::SayDataDeleted).into(),
            ViewState::Checkout { .. } => lang.t(Msg::SayCheckoutReady).into(),
            ViewState::Cancelled => lang.t(Msg::SayPurchaseCancelled).into(),
            ViewState::ToolCancelled { .. } => lang.t(Msg::SayRequestStopped).into(),
            ViewState::OutOfDate { .. } => lang.t(Msg::SayOutOfDate).into(),
        }
    }
}

/// The longest phrase taken from a streamed argument: partial arguments are shown, never trusted.
const MAX_PHRASE: usize = 60;

/// What a (partial) set of streamed arguments says so far: the known fields as clipped text.
///
/// Arguments streamed by the host are "healed" JSON and may be cut anywhere, so only plain
/// strings and numbers of the known fields are read; anything else is skipped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SoFar {
    relationship: Option<String>,
    occasion: Option<String>,
    age: Option<String>,
    interests: Vec<String>,
    budget_min: Option<String>,
    budget_max: Option<String>,
    currency: Option<String>,
}

impl SoFar {
    fn read(arguments: &Map<String, Value>) -> SoFar {
        fn text(value: Option<&Value>) -> Option<String> {
            let raw = match value? {
                Value::String(s) => s.trim().to_string(),
                Value::Number(n) => n.to_string(),
                _ => return None,
            };
            let clipped: String = raw.chars().filter(|c| !c.is_control()).take(MAX_PHRASE).collect();
            (!clipped.is_empty()).then_some(clipped)
        }
        let interests = match arguments.get("interests") {
            Some(Value::Array(interests)) => interests.iter().filter_map(|i| text(Some(i))).take(5).collect(),
            _ => Vec::new(),
        };
        SoFar {
            relationship: text(arguments.get("relationship_type")),
            occasion: text(arguments.get("occasion")),
            age: text(arguments.get("age")),
            interests,
            budget_min: text(arguments.get("budget_min")),
            budget_max: text(arguments.get("budget_max")),
            currency: text(arguments.get("currency")),
        }
    }

    /// The phrases in `lang`, in the order the results summary uses. A value the contract
    /// names (a relationship, an occasion) is said in `lang`; anything else as it came.
    pub fn phrases(&self, lang: Lang) -> Vec<String> {
        let mut parts = Vec::new();
        if let Some(relationship) = &self.relationship {
            let who = match RelationshipType::ALL.iter().find(|r| r.as_str() == relationship) {
                Some(known) => words::relationship(lang, *known).to_string(),
                None => relationship.replace('_', " "),
            };
            parts.push(lang.f(Msg::ForYour, &[("who", &who)]));
        }
        if let Some(occasion) = &self.occasion {
            match Occasion::ALL.iter().find(|o| o.as_str() == occasion) {
                Some(known) => parts.push(words::occasion(lang, *known).to_string()),
                None => parts.push(occasion.replace('_', " ")),
            }
        }
        if let Some(age) = &self.age {
            parts.push(lang.f(Msg::AgeYears, &[("age", age)]));
        }
        if !self.interests.is_empty() {
            parts.push(self.interests.join(", "));
        }
        let currency = |amount: &str| match &self.currency {
            Some(c) => format!("{amount} {c}"),
            None => amount.to_string(),
        };
        match (&self.budget_min, &self.budget_max) {
            (Some(min), Some(max)) => parts.push(lang.f(Msg::BudgetRange, &[("min", min), ("max", &currency(max))])),
            (Some(min), None) => parts.push(lang.f(Msg::BudgetFrom, &[("min", &currency(min))])),
            (None, Some(max)) => parts.push(lang.f(Msg::BudgetUpTo, &[("max", &currency(max))])),
            (None, None) => {}
        }
        parts
    }
}

fn parse<T: ReadFields>(output: &Value) -> Option<Envelope<T>> {
    // The contract's hand readers (not serde's, which would weigh the wasm down); like the
    // envelope's deserializer they reject mixed shapes (`ok: true` with `error`, ...).
    Envelope::read_json(output)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn null_is_loading_and_junk_is_out_of_date() {
        assert_eq!(ViewState::from_tool_output(&Value::Null), ViewState::Loading);
        assert_eq!(ViewState::from_tool_output(&json!("hi")), ViewState::OutOfDate { v: None });
        assert_eq!(ViewState::from_tool_output(&json!({})), ViewState::OutOfDate { v: None });
        assert_eq!(
            ViewState::from_tool_output(&json!({"v": 6, "whatever": true})),
            ViewState::OutOfDate { v: Some(6) }
        );
        assert_eq!(
            ViewState::from_tool_output(&json!({"v": 6, "ok": true, "tool": "nope"})),
            ViewState::OutOfDate { v: Some(6) }
        );
    }

    #[test]
    fn partial_arguments_show_what_is_known_and_nothing_else() {
        let args = json!({"relationship_type": "grand_parent", "interests": ["hiking", 7, {"x": 1}, "te"],
            "budget_max": 100, "currency": "EUR", "gift_id": "ignored"});
        let Value::Object(args) = args else { unreachable!() };
        let ViewState::LoadingWith { so_far } = ViewState::loading_with(&args) else { panic!("something is known") };
        assert_eq!(so_far.phrases(Lang::En), vec!["For your grand parent", "hiking, 7, te", "up to 100 EUR"]);
        assert_eq!(so_far.phrases(Lang::Es), vec!["Para tu grand parent", "hiking, 7, te", "hasta 100 EUR"]);
        let Value::Object(known) = json!({"relationship_type": "friend", "occasion": "birthday"}) else {
            unreachable!()
        };
        let ViewState::LoadingWith { so_far } = ViewState::loading_with(&known) else { panic!("something is known") };
        assert_eq!(so_far.phrases(Lang::Pt), vec!["Para: amigo ou amiga", "aniversário"]);
        assert_eq!(ViewState::loading_with(&Map::new()), ViewState::Loading);
        // A string cut mid-stream, a huge one, control characters: clipped text, never markup rules.
        let Value::Object(long) = json!({"occasion": format!("{}\u{7}", "x".repeat(500))}) else { unreachable!() };
        match ViewState::loading_with(&long) {
            ViewState::LoadingWith { so_far } => assert_eq!(so_far.phrases(Lang::En), vec!["x".repeat(MAX_PHRASE)]),
            other => panic!("{other:?}"),
        }
        assert!(ViewState::loading_with(&args).is_loading());
        assert_eq!(ViewState::loading_with(&args).kind(), "loading");
    }
}
