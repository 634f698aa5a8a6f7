//! The commerce core: what buying a gift is, whichever way a person or an agent buys it (the MCP
//! tools and the widget, ACP's REST API and its MCP binding, the hosted pages, the operator).
//! The server adapts its transports onto this crate; nothing here knows MCP, ACP, HTTP routes or
//! the widget.
//!
//! - `store/`: the database (SQLite or PostgreSQL, one implementation) and its migrations:
//!   drafts, orders, refunds and adjustments, idempotency keys, the outbox, accounts, usage.
//! - `idempotency`: keys claimed once for every transport (proceed under a fenced lease,
//!   replay, conflict, in flight); each transport maps the outcomes to its own errors.
//! - `payments/`: the payment provider behind one trait (the SANDBOX provider's HTTP client,
//!   Stripe's API), counted by outcome.
//! - `order`: an order's life: its status changes as methods (paid, cancelled, the operator's
//!   steps), each with the change its event announces, and which step may follow which.
//! - `charge`: the one charge step, under the key's fence; `refund`: the one refund step of a
//!   cancellation, and of an adjustment.
//! - `outbox/`: order events written with the change they announce, signed and delivered at
//!   least once to their receivers' webhooks; what a body says is the protocol adapter's
//!   ([`outbox::EventBodies`]).
//! - `arrival`: when a shipment arrives (the merchant's handling, the carrier's transit, each
//!   in its own calendar), for "arrives by" dates and `needed_by`; `gift_wrap`: which
//!   merchants wrap, at what price.
//! - `clock`: injectable time; `ids`: random ids with a prefix; `failpoints`: crash points for
//!   the exactly-once tests.

pub mod arrival;
pub mod charge;
pub mod clock;
pub mod failpoints;
pub mod gift_wrap;
pub mod idempotency;
pub mod ids;
pub mod labels;
pub mod order;
pub mod outbox;
pub mod payments;
pub mod refund;
pub mod store;
