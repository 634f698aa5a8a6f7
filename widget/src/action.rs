//! What a person can ask the widget to do: the controls, the `action` of `decide::decide`'s
//! (screen, action).
//!
//! Components never act on a click: each control carries its decision as `data-call`, which
//! the runtime executes, and its [`Action::data_action`] name as `data-action`.

use giftgenius_types::delivery::DeliveryDetails;
use giftgenius_types::orders::ShippingSpeed;
use serde_json::{Map, Value};

use crate::context::DisplayMode;

/// A user intent: one control.
///
/// Each variant has a matching `data-action` attribute on its control (see [`Action::data_action`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Repeat the call that failed (only offered when the error says `retryable`).
    Retry,
    /// Start buying this gift: `prepare_order`.
    Choose { gift_id: String },
    /// Put this gift in the basket: `prepare_order` adding it to the basket this view keeps
    /// (the last draft it showed), which shows the basket for review.
    Add { gift_id: String },
    /// Leave the basket for the results to add more, keeping it (Cancel forgets it).
    KeepShopping,
    /// Another quantity of one of the basket's gifts (a new draft, with the form's details).
    SetQuantity { gift_id: String, quantity: u32 },
    /// Take one gift out of the basket (a new draft, with the form's details).
    RemoveLine { gift_id: String },
    /// The human confirmed the draft: `commit_order` (also "Try again" after a transient failure,
    /// which reuses the same idempotency key).
    Confirm,
    /// Pay for the draft in the host's payment sheet (`window.openai.requestCheckout`) instead of
    /// Confirm: the sheet is the person's confirmation, and the host completes the purchase.
    PayInHost,
    /// Leave the confirmation without buying.
    Cancel,
    /// Re-run `suggest_gifts` with these arguments merged over the previous ones.
    ApplySuggestion { set_arguments: Map<String, Value> },
    /// Open an outbound link (the hosted checkout page) through the host.
    OpenLink { url: String },
    /// Ask the host to show the view in another display mode (full screen, or back inline).
    SetDisplayMode { mode: DisplayMode },
    /// The person edited the delivery details on the confirm card: prepare the draft again with
    /// them (another address is another draft, shown for confirmation before anything is paid).
    /// Emitted by "Update delivery details", and by Confirm when the form was changed.
    EditDelivery { details: DeliveryDetails },
    /// First click on an order's Cancel: ask for the second one.
    AskCancelOrder { order_id: String },
    /// Second click: cancel that order and refund it (`cancel_order`).
    CancelOrder { order_id: String },
    /// First click on Delete my data: ask for the second one.
    AskDeleteData,
    /// Second click: `delete_my_data`, then forget what this view kept in storage.
    DeleteData,
    /// Leave the question ("Keep it"): back to the plain order list.
    DismissAsk,
    /// Remove the saved card shown on the confirm card (`remove_saved_card`, with Stripe).
    RemoveCard,
    /// The draft's shipping misses the day the person needs the gift by and another option
    /// makes it: prepare the draft again with that option (a new draft, confirmed as any).
    SwitchShipping { shipping: ShippingSpeed },
}

impl Action {
    /// The stable `data-action` value of the button that emits this action.
    pub const fn data_action(&self) -> &'static str {
        match self {
            Action::Retry => "retry",
            Action::Choose { .. } => "choose",
            Action::Add { .. } => "add",
            Action::KeepShopping => "keep-shopping",
            Action::SetQuantity { .. } => "set-quantity",
            Action::RemoveLine { .. } => "remove-line",
            Action::Confirm => "confirm",
            Action::PayInHost => "pay-in-host",
            Action::Cancel => "cancel",
            Action::ApplySuggestion { .. } => "suggestion",
            Action::OpenLink { .. } => "open-link",
            Action::SetDisplayMode { .. } => "display-mode",
            Action::EditDelivery { .. } => "update-delivery",
            Action::AskCancelOrder { .. } => "ask-cancel-order",
            Action::CancelOrder { .. } => "cancel-order",
            Action::AskDeleteData => "ask-delete-data",
            Action::DeleteData => "delete-data",
            Action::DismissAsk => "dismiss",
            Action::RemoveCard => "remove-card",
            Action::SwitchShipping { .. } => "switch-shipping",
        }
    }
}
