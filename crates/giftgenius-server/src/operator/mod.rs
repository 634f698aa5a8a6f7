//! The operator's side of an order's life after payment (issue 25 item 5, docs/acp.md §10.3):
//! marking a paid order `processing`, `shipped` (carrier, tracking number and URL) and
//! `completed`, and refunding part of it (an adjustment) or, before it ships, all that is left
//! (its cancellation, the same as the buyer's). Each change is written in one transaction with
//! its `order_update` event, and shows in get_order, list_orders and the order's status page.
//!
//! - Which status change may follow which, and what it writes: `giftgenius_commerce::order`.
//! - `input.rs`: the requests and their checks (field errors).
//! - `service.rs`: [`Operator`]: read the order's facts, decide, build the event, write it
//!   checked against the facts (`store/fulfilment.rs`).
//! - `refund.rs`: refunds through the payment provider, one provider key per adjustment; the
//!   reconciler finishes an adjustment whose answer was lost.
//! - `packing_slip.rs`: the slip that goes in the parcel (no prices with a gift receipt).
//! - `routes.rs`: the HTTP API at `/operator/orders/{id}…`, behind `--operator-token-file`.
//! - `cli.rs`: `giftgenius-server orders show|processing|ship|complete|refund` on the database.

pub mod cli;
pub mod input;
pub mod packing_slip;
mod refund;
pub mod routes;
mod service;

pub use refund::adjustment_key;
pub use service::{Done, Operator, OperatorError};
