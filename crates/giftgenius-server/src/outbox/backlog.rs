//! The outbox's backlog as `/metrics` shows it (`giftgenius_outbox_backlog`,
//! `giftgenius_outbox_oldest_age_seconds`): read from the database at each scrape, so every
//! replica reports the same shared outbox.

use futures::FutureExt;
use futures::future::BoxFuture;

use crate::clock::Clock;
use crate::metrics::{Backlog, OutboxBacklog};
use crate::store::Store;

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
