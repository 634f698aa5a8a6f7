//! Order events (issue 25 item 5, docs/acp.md §10): every paid or cancelled order, ACP or app
//! (when `--order-webhook-url` is set), announces itself with an `order_create` /
//! `order_update` event carrying the full ACP Order, posted to its receiver with a
//! `Merchant-Signature`, at least once, from a durable outbox (`store/outbox.rs`) written in the
//! same transaction as the order change.
//!
//! - `events.rs`: building an event before the store step that records the change.
//! - `receivers.rs`: who receives an order's events, and their URLs and secrets.
//! - `signature.rs`: the `Merchant-Signature` header.
//! - `delivery.rs`: one attempt (headers, limits) and what its answer means.
//! - `schedule.rs`: back-off, jitter, `Retry-After` and the retry horizon.
//! - `worker.rs`: the worker on every replica: claim with a lease, post, record.
//! - `operator.rs`: `giftgenius-server outbox list|redeliver`.

pub mod delivery;
pub mod events;
pub mod operator;
pub mod receivers;
pub mod schedule;
pub mod signature;
pub mod worker;

pub use events::{EventBodies, OrderEvents};
pub use receivers::Receivers;
pub use worker::Dispatcher;
