//! The hook for the order event outbox's backlog: whatever keeps the outbox implements
//! [`OutboxBacklog`] and hands itself to [`Readings::wire_outbox`](super::Readings::wire_outbox)
//! once, at startup (the app wires `outbox::backlog::StoredBacklog`). From then on every scrape
//! asks it (with a timeout) and `/metrics` shows `giftgenius_outbox_backlog` and
//! `giftgenius_outbox_oldest_age_seconds`; without one neither series exists, so no alert on
//! them can fire for an outbox that is not there.

use futures::future::BoxFuture;

/// What the outbox holds undelivered now.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backlog {
    /// Events written and not yet delivered.
    pub events: u64,
    /// How long the oldest of them has waited, in seconds (0 when there is none).
    pub oldest_age_seconds: f64,
}

/// A source of the outbox's backlog, asked at each scrape.
pub trait OutboxBacklog: Send + Sync + std::fmt::Debug + 'static {
    /// The backlog now; an error is logged and the previous reading kept.
    fn backlog(&self) -> BoxFuture<'_, anyhow::Result<Backlog>>;
}
