//! The GiftGenius tool contract, shared by the MCP server and the widget.
//!
//! Everything a client can see is defined here once: tool inputs (with their cross-field rules),
//! the `{v, ok, ...}` result envelope, the error codes and the JSON Schemas derived from the
//! types. The crate does no I/O and builds for `wasm32-unknown-unknown`, so the widget
//! consumes exactly the types the server produces.

pub mod acp;
pub mod args;
pub mod bounded;
pub mod canonical;
pub mod delivery;
pub mod envelope;
pub mod error;
pub mod feed;
pub mod field_rule;
pub mod gifts;
pub mod money;
pub mod orders;
pub mod read;
pub mod schema;
pub mod sheet;
pub mod wire;
pub mod write;

pub use args::{FieldError, Validate};
pub use delivery::{Address, DeliveryDetails, Destination, Recipient};
pub use envelope::{Envelope, FailedSource, Notice, Partial, Suggestion, ToolName};
pub use error::{ErrorCategory, ErrorCode, ToolError};
pub use field_rule::FieldRule;
pub use gifts::{
    GiftCard, MatchVia, Merchant, Occasion, Reason, RelationshipType, SuggestGiftsData, SuggestGiftsInput,
    SuggestGiftsQuery, Why,
};
pub use money::{Currency, Money};
pub use orders::{
    Adjustment, BasketItem, CancelOrderInput, CheckoutData, CheckoutSession, CommitOrderInput,
    CreateCheckoutSessionInput, DeleteMyDataData, DeleteMyDataInput, DeliveryOption, DeliveryWindow, DraftLine,
    Fulfillment, GetOrderInput, ListOrdersData, ListOrdersInput, Order, OrderData, OrderDraft, OrderLine, OrderStatus,
    OrderStep, PrepareOrderData, PrepareOrderInput, ProductCheckoutCart, ProductCheckoutInput, ProductCheckoutItem,
    Refund, RefundStatus, RemoveSavedCardInput, ReopenOrderDraftInput, ShippingSpeed,
};
pub use read::ReadJson;

/// Version of the `structuredContent` contract. Travels as `v` in every result.
///
/// A breaking change bumps this *and* the widget resource URI, because hosts cache widget
/// HTML by URI: an old widget must be able to tell it is looking at data it does not know.
/// 2: a gift card's `reasons` became objects (`text` plus the structured `why`).
/// 3: an order's life after payment: statuses `processing`, `shipped`, `completed`, and an
/// order's `fulfillment`, `timeline`, `adjustments` and `amount_refunded`.
/// 4: a `suggest_gifts` answer that says nothing fits (`NO_MATCHES`) may show the nearest
/// gifts, whose reasons are of the new kind `nearest`; a draft carries `needed_by` and its
/// `delivery_options` (each option's cost and arrival dates).
/// 5: gift options: `prepare_order` takes `gift_wrap` and `gift_receipt`; a draft says its
/// merchant's `gift_wrap_price` and carries `gift_wrap_cost` (in its total) and `gift_receipt`,
/// and so does an order.
/// 6: baskets: `prepare_order` takes `items` (several gifts with a quantity each; `gift_id` is
/// optional, the one-gift form); a draft carries its `lines` and so does an order.
pub const CONTRACT_VERSION: u32 = 6;
