//! `ViewState`: the one thing the UI renders, and how a tool result becomes one.
//!
//! Parsing is strict on purpose: the contract version is checked before anything else, and a
//! payload that does not match the contract becomes `OutOfDate` rather than a guess.

use giftgenius_types::orders::{CheckoutData, CheckoutSession, Order, OrderData, OrderDraft, PrepareOrderData};
use giftgenius_types::{
    CONTRACT_VERSION, Envelope, GiftCard, Notice, Partial, SuggestGiftsData, SuggestGiftsQuery, ToolError, ToolName,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Everything the widget can show. Pure data: rendering it has no side effects.
///
/// Variants differ a lot in size; there is one value per widget, so boxing would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum ViewState {
    /// No result yet (the tool is still running, or the host has not handed it over).
    Loading,
    /// Gift cards; `partial` names the stores that failed, shown above the cards.
    Results { query: SuggestGiftsQuery, gifts: Vec<GiftCard>, notice: Option<Notice>, partial: Option<Partial> },
    /// The search ran and found nothing: the notice and its suggestions.
    Empty { query: SuggestGiftsQuery, notice: Option<Notice>, partial: Option<Partial> },
    /// A tool said no; `tool` is what "Try again" repeats.
    Error { tool: ToolName, error: ToolError },
    /// A draft waiting for the human's Confirm. `busy` while commit_order is in flight;
    /// `error` after a commit attempt failed (Try again only if it is retryable).
    ConfirmPurchase { draft: OrderDraft, busy: bool, error: Option<ToolError> },
    /// The order exists (from commit_order or get_order).
    OrderPlaced { order: Order },
    /// A hosted checkout page (create_checkout_session).
    Checkout { checkout: CheckoutSession },
    /// The user left the confirmation and there are no earlier results to go back to.
    Cancelled,
    /// The payload is from another contract version, or unreadable. `v` is what it said, if anything.
    OutOfDate { v: Option<u64> },
}

impl ViewState {
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
                Envelope::Err { tool, error } => ViewState::Error { tool, error },
            }),
            ToolName::PrepareOrder => parse::<PrepareOrderData>(output).map(|env| match env {
                Envelope::Ok { data, .. } => ViewState::ConfirmPurchase { draft: data.draft, busy: false, error: None },
                Envelope::Err { tool, error } => ViewState::Error { tool, error },
            }),
            ToolName::CommitOrder | ToolName::GetOrder => parse::<OrderData>(output).map(|env| match env {
                Envelope::Ok { data, .. } => ViewState::OrderPlaced { order: data.order },
                Envelope::Err { tool, error } => ViewState::Error { tool, error },
            }),
            ToolName::CreateCheckoutSession => parse::<CheckoutData>(output).map(|env| match env {
                Envelope::Ok { data, .. } => ViewState::Checkout { checkout: data.checkout },
                Envelope::Err { tool, error } => ViewState::Error { tool, error },
            }),
        };
        parsed.unwrap_or(out_of_date)
    }

    /// A short stable name, rendered as `data-state` on the root (handy for tests and CSS).
    pub const fn kind(&self) -> &'static str {
        match self {
            ViewState::Loading => "loading",
            ViewState::Results { .. } => "results",
            ViewState::Empty { .. } => "empty",
            ViewState::Error { .. } => "error",
            ViewState::ConfirmPurchase { .. } => "confirm",
            ViewState::OrderPlaced { .. } => "order-placed",
            ViewState::Checkout { .. } => "checkout",
            ViewState::Cancelled => "cancelled",
            ViewState::OutOfDate { .. } => "out-of-date",
        }
    }

    /// What the polite live region says when this state appears, for screen-reader users.
    pub fn announcement(&self) -> String {
        match self {
            ViewState::Loading => "Loading gift ideas…".into(),
            ViewState::Results { gifts, partial, .. } => {
                let noun = if gifts.len() == 1 { "gift idea" } else { "gift ideas" };
                let missing = if partial.is_some() { " Some stores did not answer." } else { "" };
                format!("{} {noun} found.{missing}", gifts.len())
            }
            ViewState::Empty { .. } => "No gifts matched.".into(),
            // The root's live region is the one announcer (no extra role="alert" that would
            // read the same news twice), so it carries the message itself.
            ViewState::Error { error, .. } => format!("Error: {}", error.message),
            ViewState::ConfirmPurchase { busy: true, .. } => "Placing order…".into(),
            ViewState::ConfirmPurchase { error: Some(error), .. } => {
                format!("The order was not placed: {}", error.message)
            }
            ViewState::ConfirmPurchase { .. } => "Please review and confirm your purchase.".into(),
            ViewState::OrderPlaced { .. } => "Order placed.".into(),
            ViewState::Checkout { .. } => "Checkout is ready.".into(),
            ViewState::Cancelled => "Purchase cancelled.".into(),
            ViewState::OutOfDate { .. } => "This view is out of date.".into(),
        }
    }
}

fn parse<T: DeserializeOwned>(output: &Value) -> Option<Envelope<T>> {
    // The envelope's own deserializer rejects mixed shapes (`ok: true` with `error`, ...).
    serde_json::from_value(output.clone()).ok()
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
            ViewState::from_tool_output(&json!({"v": 2, "whatever": true})),
            ViewState::OutOfDate { v: Some(2) }
        );
        assert_eq!(
            ViewState::from_tool_output(&json!({"v": 1, "ok": true, "tool": "nope"})),
            ViewState::OutOfDate { v: Some(1) }
        );
    }
}
