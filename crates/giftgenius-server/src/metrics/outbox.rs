//! The hook for the order event outbox's backlog: whatever keeps the outbox implements
//! [`OutboxBacklog`] and hands itself to [`Readings::wire_outbox`](super::Readings::wire_outbox)
//! once, at startup (the app wires [`StoredBacklog`], read from the database at each scrape, so
//! every replica reports the same shared outbox). From then on every scrape
//! asks it (with a timeout) and `/metrics` shows `giftgenius_outbox_backlog` and
//! `giftgenius_outbox_oldest_age_seconds`; without one neither series exists, so no alert on
//! them can fire for an outbox that is not there.

use futures::FutureExt;
use futures::future::BoxFuture;
use giftgenius_commerce::clock::Clock;
use giftgenius_commerce::store::Store;

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

/// The outbox in `store`, its ages measured on `clock`.
#[derive(Debug, Clone)]
pub struct StoredBacklog {
    pub store: Store,
    pub clock: Clock,
}

impl OutboxBacklog for StoredBacklog {
    fn backlog(&self) -> BoxFuture<'_, anyhow::Result<Backlog>> {
        async move {
            let (events, oldest) = self.store.outbox_backlog().await?;
            let age_ms = oldest.map_or(0, |since| self.clock.now_ms().saturating_sub(since).max(0));
            Ok(Backlog { events: u64::try_from(events).unwrap_or(0), oldest_age_seconds: age_ms as f64 / 1000.0 })
        }
        .boxed()
    }
}
