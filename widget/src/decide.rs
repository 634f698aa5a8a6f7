//! What each control does, decided once: a pure function from (screen, action) to [`Next`].
//!
//! The view functions write it on each control as a `data-call` attribute ([`data_call`]), in
//! the server's markup and in the wasm's alike, and the packed document's runtime
//! (`runtime/executor.js`) is the one executor: it fills the placeholders, calls the host and
//! shows the answer's markup. It knows no tool and no screen.
//!
//! Placeholders stand for what only the host side may hold, so no token ever reaches markup or
//! storage: `{"$":"meta","key":K}` (and `"at":id`) is the value under `K` (and `id`) in the
//! `_meta` of the result the screen came from; `{"$":"key","draft":id,"or":ik}` is the
//! idempotency key kept for that draft (widget state, storage), else `ik`, kept before it is sent.
//! The decision table (screen × control → call) is `docs/widget-decisions.md`, asserted by the
//! test `the_decision_table_in_the_docs_is_the_one_the_code_makes`.

use giftgenius_types::delivery::DeliveryDetails;
use giftgenius_types::orders::{OrderDraft, ShippingSpeed};
use giftgenius_types::sheet::META_CHECKOUT_SHEET;
use giftgenius_types::wire::{META_CANCEL_TOKENS, META_CONFIRMATION_TOKEN, META_DELETE_DATA_TOKEN};
use giftgenius_types::write::WriteJson;
use giftgenius_types::{ErrorCode, ToolName};
use serde_json::{Map, Value, json};

use crate::action::Action;
use crate::context::DisplayMode;
use crate::flow;
use crate::state::{CardOnFile, ListAsk, ViewState};

/// The most of one gift a basket's "+" goes to: `prepare_order`'s own limit.
pub const MAX_LINE_QUANTITY: u32 = giftgenius_types::orders::MAX_QUANTITY as u32;

/// What a control leads to.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// A tool call.
    Call(Call),
    /// Show the order list's question for a second click (`None`: leave it).
    Ask(Option<ListAsk>),
    /// Leave the confirmation: forget its checkout entry and the basket, back to the last
    /// results (the last screen marked `data-home` in markup), or "Purchase cancelled" when
    /// there are none.
    Back,
    /// Back to the last results keeping the basket, so their Add adds to it (the control is
    /// shown only where there are results to go back to: `data-home-only`).
    Shop,
    /// Repeat the call that led here (with its arguments, or the host's tool input).
    Retry,
    /// Pay in the host's payment sheet.
    Sheet(Sheet),
    /// Open an outbound link through the host.
    OpenLink(String),
    /// Ask the host for another display mode.
    DisplayMode(DisplayMode),
    /// Nothing (a control this screen does not have).
    Nothing,
}

impl Next {
    /// The call, when the decision is one.
    pub fn call(self) -> Option<Call> {
        match self {
            Next::Call(call) => Some(call),
            _ => None,
        }
    }
}

/// One tool call and what goes with it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub tool: ToolName,
    /// The arguments; may hold placeholders (see the module doc).
    pub args: Map<String, Value>,
    /// `args` are merged over the arguments of the call the screen came from (a `null` removes).
    pub over: bool,
    /// The delivery form's details are added to `args` (recipient, gift message, save address);
    /// field errors in the answer stay on this screen, next to their inputs.
    pub form: bool,
    /// Made instead when the person edited the screen's form.
    pub edited: Option<Box<Call>>,
    /// Made first when a placeholder cannot be filled (the token was lost with a reload). If
    /// the same control on its answer decides the same (the same draft at the same price), its
    /// answer is taken and this call follows; otherwise the screen stays, saying [`Call::gone`].
    pub lost: Option<Box<Call>>,
    /// Why this call cannot be made any more when `lost` found another screen: the draft it
    /// confirms is gone (expired, or pruned after expiring), so another draft is never offered
    /// in its place without the person choosing again.
    pub gone: Option<ErrorCode>,
    /// An ok answer does not replace the screen: the element this CSS selector names is
    /// replaced by the same element of the answer's markup (a cancelled order's row in the
    /// list it was cancelled from), so the list stays without being fetched again.
    pub patch: Option<String>,
    /// After an ok answer, forget everything this view kept (Delete my data).
    pub forget: bool,
    /// What the person saw when deciding (a draft's total): part of the decision, so a draft
    /// prepared again at another price decides differently and is shown for a new Confirm.
    pub seen: Option<String>,
}

impl Call {
    /// The same commitment: tool, arguments and what was seen (not the alternatives). A call
    /// decided again after its `lost` call follows only if this holds.
    pub fn same(&self, other: &Call) -> bool {
        self.tool == other.tool && self.args == other.args && self.seen == other.seen
    }

    fn new(tool: ToolName, args: Value) -> Call {
        let args = match args {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Call {
            tool,
            args,
            over: false,
            form: false,
            edited: None,
            lost: None,
            gone: None,
            patch: None,
            forget: false,
            seen: None,
        }
    }
}

/// Paying in the host's payment sheet (`window.openai.requestCheckout`, docs/acp.md §14): the
/// sheet is the person's confirmation, and the host then calls `complete_checkout` itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Sheet {
    /// The `_meta` key, in the result the screen came from, of the session the sheet takes.
    pub session: String,
    /// Made first when that session is not there (a reload): reopens the draft, whose answer
    /// carries it again; the sheet opens only if the answer decides the same.
    pub lost: Call,
    /// What the card says when `lost` found another draft, or none.
    pub gone: ErrorCode,
    /// Made when the host answers with an order rather than with the tool's result: the order
    /// read again by its id (`{"$":"answer"}`: the `id`, or `order.id`, of the host's answer).
    pub then: Call,
    /// The draft's total, as for Confirm.
    pub seen: String,
}

impl Sheet {
    /// The same commitment (the draft at the price seen).
    pub fn same(&self, other: &Sheet) -> bool {
        self.lost.args == other.lost.args && self.seen == other.seen
    }
}

/// A placeholder for a value of the result's `_meta` (`at`: a key inside it).
fn meta(key: &str, at: Option<&str>) -> Value {
    match at {
        Some(at) => json!({ "$": "meta", "key": key, "at": at }),
        None => json!({ "$": "meta", "key": key }),
    }
}

/// Choose on a gift card: prepare the order, priced in the currency the card shows.
pub fn choose(gift_id: &str, currency: Option<&str>) -> Next {
    let mut args = json!({ "gift_id": gift_id });
    if let Some(currency) = currency {
        args["currency"] = json!(currency);
    }
    Next::Call(Call::new(ToolName::PrepareOrder, args))
}

/// Add on a gift card: prepare the basket the view keeps with this gift added (`add_to`, a
/// placeholder the runtime fills with the last draft it showed, or leaves out: a new basket).
/// The server adds its lines to that draft's while it is open (not ordered), a gift already
/// there one more.
pub fn add(gift_id: &str, currency: Option<&str>) -> Next {
    let mut args = json!({ "items": [{ "gift_id": gift_id, "quantity": 1 }], "add_to": { "$": "basket" } });
    if let Some(currency) = currency {
        args["currency"] = json!(currency);
    }
    Next::Call(Call::new(ToolName::PrepareOrder, args))
}

/// A suggestion under the results: the search again with its arguments set.
pub fn suggestion(set_arguments: &Map<String, Value>) -> Next {
    Next::Call(Call { over: true, ..Call::new(ToolName::SuggestGifts, Value::Object(set_arguments.clone())) })
}

/// prepare_order's arguments for this draft without its delivery details (with the day the
/// person needs it by, which the draft keeps).
fn prepare_base(draft: &OrderDraft) -> Value {
    let lines: Vec<(&str, u32)> = draft.lines.iter().map(|line| (line.gift.id.as_str(), line.quantity)).collect();
    prepare_lines(draft, &lines)
}

/// prepare_order's arguments for this draft with these lines instead of its own: a basket as
/// `items`, one gift in its one-gift form.
fn prepare_lines(draft: &OrderDraft, lines: &[(&str, u32)]) -> Value {
    let mut args = json!({
        "shipping": draft.shipping.as_str(),
        "currency": draft.total.currency.code(),
    });
    match lines {
        [(gift_id, quantity)] => {
            args["gift_id"] = json!(gift_id);
            args["quantity"] = json!(quantity);
        }
        // A draft from before baskets has no lines: its one gift.
        [] => {
            args["gift_id"] = json!(draft.gift.id);
            args["quantity"] = json!(draft.quantity);
        }
        lines => {
            let items: Vec<Value> =
                lines.iter().map(|(gift_id, quantity)| json!({ "gift_id": gift_id, "quantity": quantity })).collect();
            args["items"] = Value::Array(items);
        }
    }
    if let Some(day) = &draft.needed_by {
        args["needed_by"] = json!(day);
    }
    args
}

/// "+" / "−" on a basket's line: the basket prepared again with that quantity (a new draft,
/// confirmed as any); see [`other_lines`] for the delivery details.
pub fn set_quantity(draft: &OrderDraft, gift_id: &str, quantity: u32) -> Next {
    let lines: Vec<(&str, u32)> = draft
        .lines
        .iter()
        .map(|line| (line.gift.id.as_str(), if line.gift.id == gift_id { quantity } else { line.quantity }))
        .collect();
    other_lines(draft, &lines)
}

/// "Remove" on a basket's line: the basket prepared again without it; see [`other_lines`].
pub fn remove_line(draft: &OrderDraft, gift_id: &str) -> Next {
    let lines: Vec<(&str, u32)> = draft
        .lines
        .iter()
        .filter(|line| line.gift.id != gift_id)
        .map(|line| (line.gift.id.as_str(), line.quantity))
        .collect();
    other_lines(draft, &lines)
}

/// The draft prepared again with other lines. A draft that knows where it goes: with the
/// form's details (filled in from it, and as edited). One that does not yet (a basket built
/// with Add): only if the person typed into the form, else without any, so changing a quantity
/// never answers "name is required"; its gift options go along (nothing personal in them).
fn other_lines(draft: &OrderDraft, lines: &[(&str, u32)]) -> Next {
    let args = prepare_lines(draft, lines);
    let with_form = Call { form: true, ..Call::new(ToolName::PrepareOrder, args.clone()) };
    if draft.destination.is_some() {
        return Next::Call(with_form);
    }
    let mut plain = args;
    if draft.gift_wrap_cost.is_some() {
        plain["gift_wrap"] = json!(true);
    }
    if draft.gift_receipt {
        plain["gift_receipt"] = json!(true);
    }
    Next::Call(Call { edited: Some(Box::new(with_form)), ..Call::new(ToolName::PrepareOrder, plain) })
}

/// "Switch to express": the draft prepared again with the option that arrives in time, and the
/// form's details (a new draft, which the person confirms as any).
pub fn switch_shipping(draft: &OrderDraft, shipping: ShippingSpeed) -> Next {
    let mut args = prepare_base(draft);
    args["shipping"] = json!(shipping.as_str());
    Next::Call(Call { form: true, ..Call::new(ToolName::PrepareOrder, args) })
}

/// "Update delivery details": the draft prepared again with the form's details.
pub fn update_delivery(draft: &OrderDraft) -> Next {
    Next::Call(Call { form: true, ..Call::new(ToolName::PrepareOrder, prepare_base(draft)) })
}

/// Confirm (and its Try again): commit the draft with its token and the key kept for it; the
/// form edited → prepare the edit instead (a new draft to confirm); the token lost (a reload) →
/// reopen the draft by id first (the same draft with a fresh token and its delivery details, in
/// the answer's widget-only `_meta`), then commit if it decides the same. Nothing personal goes
/// into any of these arguments, so none is in the markup's `data-call` either: the host's
/// widget state, which the model can read, keeps the card without its delivery details.
pub fn confirm(draft: &OrderDraft) -> Next {
    let commit = json!({
        "draft_id": draft.id,
        "idempotency_key": { "$": "key", "draft": draft.id, "or": flow::idempotency_key_for_draft(&draft.id) },
        "confirmation_token": meta(META_CONFIRMATION_TOKEN, None),
    });
    let lost = Call::new(ToolName::ReopenOrderDraft, json!({ "draft_id": draft.id }));
    let edited = Call { form: true, ..Call::new(ToolName::PrepareOrder, prepare_base(draft)) };
    Next::Call(Call {
        edited: Some(Box::new(edited)),
        lost: Some(Box::new(lost)),
        gone: Some(ErrorCode::DraftExpired),
        seen: Some(format!("{} {}", draft.total.amount_minor, draft.total.currency.code())),
        ..Call::new(ToolName::CommitOrder, commit)
    })
}

/// "Pay in ChatGPT": the draft's sheet session to the host's payment sheet; see [`Sheet`].
pub fn pay_in_host(draft: &OrderDraft) -> Next {
    Next::Sheet(Sheet {
        session: META_CHECKOUT_SHEET.to_string(),
        lost: Call::new(ToolName::ReopenOrderDraft, json!({ "draft_id": draft.id })),
        gone: ErrorCode::DraftExpired,
        then: Call::new(ToolName::GetOrder, json!({ "order_id": { "$": "answer" } })),
        seen: format!("{} {}", draft.total.amount_minor, draft.total.currency.code()),
    })
}

/// "Remove card": the saved card detached at Stripe, and this draft shown again without it.
pub fn remove_card(draft: &OrderDraft) -> Next {
    Next::Call(Call::new(ToolName::RemoveSavedCard, json!({ "draft_id": draft.id })))
}

/// A fresh order list, merged over the list's own arguments: what a lost list token is fetched
/// again with.
fn list_again() -> Call {
    Call { over: true, ..Call::new(ToolName::ListOrders, json!({})) }
}

/// "Yes, cancel it": cancel_order with the order's token and the key derived from the order id
/// (the same on every retry and after a reload); the order's row in the list shows its new status.
pub fn cancel_order(order_id: &str) -> Next {
    let args = json!({
        "order_id": order_id,
        "idempotency_key": flow::cancel_key_for_order(order_id),
        "confirmation_token": meta(META_CANCEL_TOKENS, Some(order_id)),
    });
    Next::Call(Call {
        lost: Some(Box::new(list_again())),
        gone: Some(ErrorCode::OrderNotCancellable),
        patch: Some(format!(".gg-order-row[data-order-id=\"{order_id}\"]")),
        ..Call::new(ToolName::CancelOrder, args)
    })
}

/// "Yes, delete": delete_my_data with its token, then forget what the view kept.
pub fn delete_data() -> Next {
    let args = json!({ "confirmation_token": meta(META_DELETE_DATA_TOKEN, None) });
    Next::Call(Call { lost: Some(Box::new(list_again())), forget: true, ..Call::new(ToolName::DeleteMyData, args) })
}

/// The decision for `action` on `screen`. Controls a screen does not have decide [`Next::Nothing`].
pub fn decide(screen: &ViewState, action: &Action) -> Next {
    match (screen, action) {
        (_, Action::OpenLink { url }) => Next::OpenLink(url.clone()),
        (_, Action::SetDisplayMode { mode }) => Next::DisplayMode(*mode),
        (ViewState::Results { gifts, .. }, Action::Choose { gift_id }) => {
            let currency = gifts.iter().find(|g| g.id == *gift_id).map(|g| g.price.currency.code());
            choose(gift_id, currency)
        }
        (ViewState::Results { gifts, .. }, Action::Add { gift_id }) => {
            let currency = gifts.iter().find(|g| g.id == *gift_id).map(|g| g.price.currency.code());
            add(gift_id, currency)
        }
        (ViewState::Results { .. } | ViewState::Empty { .. }, Action::ApplySuggestion { set_arguments }) => {
            suggestion(set_arguments)
        }
        (ViewState::ConfirmPurchase { draft, .. }, Action::Confirm) => confirm(draft),
        (ViewState::ConfirmPurchase { draft, .. }, Action::EditDelivery { .. }) => update_delivery(draft),
        (ViewState::ConfirmPurchase { draft, .. }, Action::PayInHost) => pay_in_host(draft),
        (ViewState::ConfirmPurchase { draft, .. }, Action::SwitchShipping { shipping })
            if draft.delivery_options.iter().any(|o| o.shipping == *shipping && o.shipping != draft.shipping) =>
        {
            switch_shipping(draft, *shipping)
        }
        (ViewState::ConfirmPurchase { .. }, Action::Cancel) => Next::Back,
        (ViewState::ConfirmPurchase { .. }, Action::KeepShopping) => Next::Shop,
        (ViewState::ConfirmPurchase { draft, .. }, Action::SetQuantity { gift_id, quantity })
            if (1..=MAX_LINE_QUANTITY).contains(quantity)
                && draft.lines.iter().any(|line| line.gift.id == *gift_id && line.quantity != *quantity) =>
        {
            set_quantity(draft, gift_id, *quantity)
        }
        (ViewState::ConfirmPurchase { draft, .. }, Action::RemoveLine { gift_id })
            if draft.lines.len() > 1 && draft.lines.iter().any(|line| line.gift.id == *gift_id) =>
        {
            remove_line(draft, gift_id)
        }
        (
            ViewState::ConfirmPurchase { draft, card: Some(CardOnFile { saved: Some(_), .. }), .. },
            Action::RemoveCard,
        ) => remove_card(draft),
        (
            ViewState::ConfirmPurchase { .. } | ViewState::Error { .. } | ViewState::ToolCancelled { .. },
            Action::Retry,
        ) => Next::Retry,
        (ViewState::OrderList { .. }, Action::AskCancelOrder { order_id }) => {
            Next::Ask(Some(ListAsk::CancelOrder { order_id: order_id.clone() }))
        }
        (ViewState::OrderList { .. }, Action::AskDeleteData) => Next::Ask(Some(ListAsk::DeleteData)),
        (ViewState::OrderList { .. }, Action::DismissAsk) => Next::Ask(None),
        (ViewState::OrderList { .. }, Action::CancelOrder { order_id }) => cancel_order(order_id),
        (ViewState::OrderList { .. }, Action::DeleteData) => delete_data(),
        _ => Next::Nothing,
    }
}

/// A placeholder found in a call's arguments.
#[derive(Debug, Clone, PartialEq)]
pub enum Placeholder {
    /// A value of the screen's result `_meta`: `key`, and `at` inside it.
    Meta { key: String, at: Option<String> },
    /// The idempotency key kept for `draft`, else `or`.
    Key { draft: String, or: String },
    /// The order id the host's answer names (see [`Sheet::then`]).
    Answer,
    /// The basket the view keeps (the last draft it showed); optional: without one the
    /// argument is left out.
    Basket,
}

impl Placeholder {
    fn read(value: &Value) -> Option<Placeholder> {
        let object = value.as_object()?;
        let text = |k: &str| object.get(k).and_then(Value::as_str).map(str::to_string);
        match object.get("$")?.as_str()? {
            "meta" => Some(Placeholder::Meta { key: text("key")?, at: text("at") }),
            "key" => Some(Placeholder::Key { draft: text("draft")?, or: text("or")? }),
            "answer" => Some(Placeholder::Answer),
            "basket" => Some(Placeholder::Basket),
            _ => None,
        }
    }
}

/// `args` with each placeholder replaced by what `fill` gives; `None` when one cannot be filled.
/// One insert at a time: collecting into the map would bring a sort routine into the wasm.
pub fn fill(args: &Map<String, Value>, fill: &dyn Fn(&Placeholder) -> Option<String>) -> Option<Map<String, Value>> {
    let mut filled = Map::new();
    for (name, value) in args {
        let value = match Placeholder::read(value) {
            // The one optional placeholder: no basket kept, a new one.
            Some(Placeholder::Basket) => match fill(&Placeholder::Basket).filter(|v| !v.is_empty()) {
                Some(id) => Value::String(id),
                None => continue,
            },
            Some(placeholder) => Value::String(fill(&placeholder).filter(|v| !v.is_empty())?),
            None => value.clone(),
        };
        filled.insert(name.clone(), value);
    }
    Some(filled)
}

/// The delivery details as prepare_order's arguments (what the form adds to a `form` call):
/// the recipient unless it is the saved address, the gift message, and save address when set.
pub fn with_details(args: &Map<String, Value>, details: Option<&DeliveryDetails>) -> Map<String, Value> {
    let mut args = args.clone();
    if let Some(d) = details {
        if !d.from_saved_address {
            args.insert("recipient".into(), d.recipient.write_json());
        }
        if let Some(message) = &d.gift_message {
            args.insert("gift_message".into(), json!(message));
        }
        if d.save_address {
            args.insert("save_address".into(), json!(true));
        }
    }
    args
}

#[cfg(not(target_arch = "wasm32"))]
mod markup {
    use std::collections::BTreeMap;

    use schemars::JsonSchema;
    use serde::Serialize;

    use super::*;
    use crate::i18n::{Lang, words};

    /// A decision as `data-call` carries it to the runtime: the typed form of the JSON the
    /// runtime reads, from which `widget/runtime/decision.schema.json` is generated (a test
    /// keeps the file current and the runtime's node tests check the markup against it).
    #[derive(Debug, Serialize, JsonSchema)]
    #[serde(untagged)]
    pub enum Decision {
        Call(CallJson),
        Sheet(Box<SheetJson>),
        Ask(AskJson),
        Back(BackJson),
        Shop(ShopJson),
        Retry(RetryJson),
        Open(OpenJson),
        Mode(ModeJson),
    }

    /// A tool call: the runtime fills the placeholders in `args`, calls `tool` through the host
    /// and shows the answer's markup.
    #[derive(Debug, Serialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    pub struct CallJson {
        pub tool: ToolName,
        /// The arguments: JSON values, some of them placeholders.
        #[schemars(with = "BTreeMap<String, Arg>")]
        pub args: Map<String, Value>,
        /// `args` go over the arguments of the call the screen came from (a `null` removes).
        #[serde(default, skip_serializing_if = "is_false")]
        pub over: bool,
        /// The delivery form's details are added to `args`.
        #[serde(default, skip_serializing_if = "is_false")]
        pub form: bool,
        /// After an ok answer, everything the view kept is forgotten.
        #[serde(default, skip_serializing_if = "is_false")]
        pub forget: bool,
        /// Made instead when the person edited the screen's form.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub edited: Option<Box<CallJson>>,
        /// Made first when a placeholder cannot be filled.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub lost: Option<Box<CallJson>>,
        /// What the screen says when `lost` found another screen.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub gone: Option<String>,
        /// The CSS selector of the element an ok answer replaces, instead of the screen.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub patch: Option<String>,
        /// What the person saw when deciding (a draft's total).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub seen: Option<String>,
    }

    /// One argument of a call: a placeholder the runtime fills, or a plain JSON value. Only its
    /// schema is used: the arguments are built as JSON by the decisions above.
    #[derive(Debug, Serialize, JsonSchema)]
    #[serde(untagged)]
    #[allow(dead_code)]
    pub enum Arg {
        Placeholder(PlaceholderJson),
        Plain(Value),
    }

    /// What only the host side may hold, so no token reaches markup or storage.
    #[derive(Debug, Serialize, JsonSchema)]
    #[serde(tag = "$", rename_all = "lowercase", deny_unknown_fields)]
    pub enum PlaceholderJson {
        /// The value under `key` (and `at` inside it) in the `_meta` of the screen's result.
        Meta {
            key: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            at: Option<String>,
        },
        /// The idempotency key kept for `draft`, else `or`.
        Key { draft: String, or: String },
        /// The order id the host's answer names.
        Answer,
        /// The basket the view keeps (the last draft it showed); without one, the argument is
        /// left out.
        Basket,
    }

    /// Pay in the host's payment sheet.
    #[derive(Debug, Serialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    pub struct SheetJson {
        /// The session the sheet takes.
        pub sheet: PlaceholderJson,
        pub lost: CallJson,
        pub gone: String,
        pub then: CallJson,
        pub seen: String,
    }

    /// Show the question with this element id (`null`: hide the questions).
    #[derive(Debug, Serialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    pub struct AskJson {
        #[schemars(required, schema_with = "string_or_null")]
        pub ask: Option<String>,
    }

    /// Leave the confirmation.
    #[derive(Debug, Serialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    pub struct BackJson {
        pub back: True,
    }

    /// Back to the last results, keeping the basket.
    #[derive(Debug, Serialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    pub struct ShopJson {
        pub shop: True,
    }

    /// Repeat the call that led here.
    #[derive(Debug, Serialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    pub struct RetryJson {
        pub retry: True,
    }

    /// Open an outbound link through the host.
    #[derive(Debug, Serialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    pub struct OpenJson {
        pub open: String,
    }

    /// Ask the host for another display mode.
    #[derive(Debug, Serialize, JsonSchema)]
    #[schemars(deny_unknown_fields)]
    pub struct ModeJson {
        pub mode: DisplayMode,
    }

    /// `true`, and only that.
    #[derive(Debug, Clone, Copy)]
    pub struct True;

    impl Serialize for True {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_bool(true)
        }
    }

    impl JsonSchema for True {
        fn schema_name() -> std::borrow::Cow<'static, str> {
            "True".into()
        }
        fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
            schemars::json_schema!({ "const": true })
        }
    }

    /// A string, or `null`, that must be there.
    fn string_or_null(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": ["string", "null"] })
    }

    fn is_false(b: &bool) -> bool {
        !b
    }

    impl Call {
        /// The call as it travels (`gone` in `lang`).
        pub fn to_json(&self, lang: Lang) -> CallJson {
            CallJson {
                tool: self.tool,
                args: self.args.clone(),
                over: self.over,
                form: self.form,
                forget: self.forget,
                edited: self.edited.as_ref().map(|c| Box::new(c.to_json(lang))),
                lost: self.lost.as_ref().map(|c| Box::new(c.to_json(lang))),
                gone: self.gone.map(|code| words::error_text(lang, code).to_string()),
                patch: self.patch.clone(),
                seen: self.seen.clone(),
            }
        }

        /// The call as the `data-call` JSON the runtime reads (`gone` in `lang`).
        pub fn to_value(&self, lang: Lang) -> Value {
            serde_json::to_value(self.to_json(lang)).unwrap_or(Value::Null)
        }
    }

    impl Next {
        /// The decision as it travels; `None` for nothing.
        pub fn to_json(&self, lang: Lang) -> Option<Decision> {
            Some(match self {
                Next::Call(call) => Decision::Call(call.to_json(lang)),
                Next::Sheet(sheet) => Decision::Sheet(Box::new(SheetJson {
                    sheet: PlaceholderJson::Meta { key: sheet.session.clone(), at: None },
                    lost: sheet.lost.to_json(lang),
                    gone: words::error_text(lang, sheet.gone).to_string(),
                    then: sheet.then.to_json(lang),
                    seen: sheet.seen.clone(),
                })),
                Next::Ask(ask) => Decision::Ask(AskJson { ask: ask.as_ref().map(ask_id) }),
                Next::Back => Decision::Back(BackJson { back: True }),
                Next::Shop => Decision::Shop(ShopJson { shop: True }),
                Next::Retry => Decision::Retry(RetryJson { retry: True }),
                Next::OpenLink(url) => Decision::Open(OpenJson { open: url.clone() }),
                Next::DisplayMode(mode) => Decision::Mode(ModeJson { mode: *mode }),
                Next::Nothing => return None,
            })
        }

        /// The decision as JSON: `{"tool",…}` for a call, else one of `{"ask":id|null}`,
        /// `{"back":true}`, `{"retry":true}`, `{"open":url}`, `{"mode":m}`, `{"sheet":placeholder,
        /// "lost","gone","then","seen"}`; `None` for nothing.
        /// `ask` is the id of the question's element ([`ask_id`]).
        pub fn to_value(&self, lang: Lang) -> Option<Value> {
            self.to_json(lang).and_then(|d| serde_json::to_value(d).ok())
        }
    }

    /// The JSON Schema of [`Decision`]: what `widget/runtime/decision.schema.json` holds.
    pub fn decision_schema() -> Value {
        serde_json::to_value(schemars::schema_for!(Decision)).unwrap_or(Value::Null)
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub use markup::{Decision, decision_schema};

/// The element id of a question of the order list (what `{"ask": id}` shows).
pub fn ask_id(ask: &ListAsk) -> String {
    match ask {
        ListAsk::CancelOrder { order_id } => format!("gg-ask-cancel-{order_id}"),
        ListAsk::DeleteData => "gg-ask-delete-data".to_string(),
    }
}

/// A decision that needs no tool call as JSON: `{"ask":id|null}`, `{"back":true}`,
/// `{"retry":true}`, `{"open":url}` or `{"mode":m}`; `None` for the others.
#[cfg(test)]
fn local_value(next: &Next) -> Option<Value> {
    match next {
        Next::Call(_) | Next::Sheet(_) | Next::Nothing => None,
        next => next.to_value(crate::i18n::Lang::En),
    }
}

/// The `data-call` attribute of a control that makes a call (or opens the payment sheet): the
/// decision as JSON text, written only natively, in the server's markup of each result. The
/// wasm renders only results the host brings, whose server markup the runtime holds: on a press
/// there it takes that markup (the same components) and follows the pressed control's twin, so
/// the wasm carries neither these decisions nor the code that makes them.
pub fn data_call(lang: crate::i18n::Lang, decide: impl FnOnce() -> Next) -> Option<String> {
    #[cfg(not(target_arch = "wasm32"))]
    return decide().to_value(lang).map(|v| v.to_string());
    #[cfg(target_arch = "wasm32")]
    {
        let _ = (lang, decide);
        None
    }
}

/// The `data-call` of a control whose decision needs no call (a question, Back, Try again, a
/// link, a display mode): in the wasm's markup too, where the runtime follows it as it is.
/// Written by hand, the same bytes serde_json prints for [`local_value`] (a test compares them),
/// so the wasm carries no JSON printer.
pub fn data_decision(next: Next) -> Option<String> {
    let (key, text) = match next {
        Next::Ask(ask) => ("ask", ask.as_ref().map(ask_id)),
        Next::Back => return Some(r#"{"back":true}"#.to_string()),
        Next::Shop => return Some(r#"{"shop":true}"#.to_string()),
        Next::Retry => return Some(r#"{"retry":true}"#.to_string()),
        Next::OpenLink(url) => ("open", Some(url)),
        Next::DisplayMode(mode) => ("mode", Some(mode.as_str().to_string())),
        Next::Call(_) | Next::Sheet(_) | Next::Nothing => return None,
    };
    let mut out = format!("{{\"{key}\":");
    match text {
        Some(text) => json_string(&mut out, &text),
        None => out.push_str("null"),
    }
    out.push('}');
    Some(out)
}

/// `text` as a JSON string, escaped as serde_json escapes it: `"`, `\` and control characters.
fn json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c < ' ' => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runtime's tests (widget/runtime/tests/, node) read the decision language's schema
    /// from this file; the types above are its source.
    #[test]
    fn the_schema_file_is_the_one_the_types_make() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/runtime/decision.schema.json");
        let want = serde_json::to_string_pretty(&decision_schema()).expect("schema") + "\n";
        if std::env::var_os("GG_WRITE_DOCS").is_some() {
            std::fs::write(path, &want).expect("writing the schema");
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert_eq!(
            have, want,
            "widget/runtime/decision.schema.json is out of date: run this test with GG_WRITE_DOCS=1"
        );
    }

    #[test]
    fn a_decision_without_a_call_is_written_as_serde_json_prints_it() {
        let odd = (0u32..0x80).filter_map(char::from_u32).collect::<String>() + "é\u{2028}😀";
        let decisions = [
            Next::Ask(None),
            Next::Ask(Some(ListAsk::DeleteData)),
            Next::Ask(Some(ListAsk::CancelOrder { order_id: format!("ord_\"{odd}") })),
            Next::Back,
            Next::Shop,
            Next::Retry,
            Next::OpenLink(format!("https://shop.test/pay?x=1&y=\\{odd}")),
            Next::DisplayMode(DisplayMode::Fullscreen),
            Next::DisplayMode(DisplayMode::Inline),
        ];
        for next in decisions {
            let want = local_value(&next).map(|v| v.to_string());
            assert!(want.is_some(), "{next:?}");
            assert_eq!(data_decision(next), want);
        }
        assert_eq!(data_decision(Next::Nothing), None);
        assert_eq!(data_decision(choose("g_1", None)), None, "a call's decision is the server markup's");
    }
}
