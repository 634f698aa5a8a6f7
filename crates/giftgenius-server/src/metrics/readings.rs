//! What is read at each scrape rather than counted as it happens: the live catalog's size and
//! refused reloads, the orders pending payment now (one indexed query), the outbox's backlog
//! once wired (`outbox.rs`), and the feed's pushes once wired (a server with feed receivers). `/metrics` calls [`Readings::refresh`] before encoding;
//! the registry then encodes the last readings through [`Collector`].

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use super::outbox::{Backlog, OutboxBacklog};
use giftgenius_catalog::live::LiveCatalog;
use giftgenius_commerce::clock::Clock;
use giftgenius_commerce::store::Store;

/// How long a scrape waits for the database or the outbox before it shows the last reading.
pub const READ_WITHIN: Duration = Duration::from_secs(2);

/// The orders pending payment, as the last scrape read them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PendingOrders {
    pub count: u64,
    /// Age of the oldest, in seconds (0 when none is pending).
    pub oldest_age_seconds: f64,
}

/// The feed's pushes, as the last scrape read them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FeedBacklog {
    /// Products waiting to be pushed to a receiver.
    pub waiting: u64,
    /// How long the oldest of them has waited, in seconds (0 when none does).
    pub oldest_age_seconds: f64,
    /// Products a receiver refused for good, until the operator redelivers them.
    pub dead: u64,
}

/// The scrape-time readings; registered as a collector.
#[derive(Debug)]
pub struct Readings {
    catalog: Arc<LiveCatalog>,
    pending: Mutex<Option<PendingOrders>>,
    outbox: OnceLock<Arc<dyn OutboxBacklog>>,
    outbox_backlog: Mutex<Option<Backlog>>,
    /// Set once the server pushes the feed to receivers: only then do its series exist.
    feed: OnceLock<()>,
    feed_backlog: Mutex<Option<FeedBacklog>>,
}

impl Readings {
    pub(super) fn new(catalog: Arc<LiveCatalog>) -> Self {
        Self {
            catalog,
            pending: Mutex::new(None),
            outbox: OnceLock::new(),
            outbox_backlog: Mutex::new(None),
            feed: OnceLock::new(),
            feed_backlog: Mutex::new(None),
        }
    }

    /// This server pushes the feed to receivers: from now on each scrape shows its pushes.
    pub fn wire_feed(&self) {
        let _ = self.feed.set(());
    }

    /// Wires the order event outbox: from now on each scrape shows its backlog. Once only; a
    /// second source is refused (`false`).
    pub fn wire_outbox(&self, source: Arc<dyn OutboxBacklog>) -> bool {
        self.outbox.set(source).is_ok()
    }

    /// Reads the pending orders (ages by `clock`, the one orders are stamped with) and the
    /// outbox, each within [`READ_WITHIN`]; a reading that fails keeps the last one (logged).
    pub async fn refresh(&self, store: &Store, clock: &Clock) {
        let pending = async {
            match tokio::time::timeout(READ_WITHIN, store.pending_orders()).await {
                Ok(Ok((count, oldest))) => {
                    let age_ms = oldest.map_or(0, |created| clock.now_ms().saturating_sub(created).max(0));
                    let reading = PendingOrders { count, oldest_age_seconds: age_ms as f64 / 1000.0 };
                    *lock(&self.pending) = Some(reading);
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "metrics: reading the pending orders failed"),
                Err(_) => tracing::warn!("metrics: the database did not answer for the pending orders in time"),
            }
        };
        let outbox = async {
            let Some(source) = self.outbox.get() else { return };
            match tokio::time::timeout(READ_WITHIN, source.backlog()).await {
                Ok(Ok(backlog)) => *lock(&self.outbox_backlog) = Some(backlog),
                Ok(Err(e)) => tracing::warn!(error = %format!("{e:#}"), "metrics: reading the outbox backlog failed"),
                Err(_) => tracing::warn!("metrics: the outbox backlog did not answer in time"),
            }
        };
        let feed = async {
            if self.feed.get().is_none() {
                return;
            }
            match tokio::time::timeout(READ_WITHIN, store.feed_push_backlog()).await {
                Ok(Ok((waiting, oldest, dead))) => {
                    let age_ms = oldest.map_or(0, |since| clock.now_ms().saturating_sub(since).max(0));
                    *lock(&self.feed_backlog) = Some(FeedBacklog {
                        waiting: waiting.max(0) as u64,
                        oldest_age_seconds: age_ms as f64 / 1000.0,
                        dead: dead.max(0) as u64,
                    });
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "metrics: reading the feed's pushes failed"),
                Err(_) => tracing::warn!("metrics: the database did not answer for the feed's pushes in time"),
            }
        };
        tokio::join!(pending, outbox, feed);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn gauge<N>(encoder: &mut DescriptorEncoder, name: &str, help: &str, value: ConstGauge<N>) -> std::fmt::Result
where
    ConstGauge<N>: EncodeMetric,
{
    value.encode(encoder.encode_descriptor(name, help, None, value.metric_type())?)
}

impl Collector for Readings {
    fn encode(&self, mut encoder: DescriptorEncoder) -> std::fmt::Result {
        let gifts = self.catalog.current().len() as i64;
        gauge(&mut encoder, "giftgenius_catalog_gifts", "Gifts in the live local catalog", ConstGauge::new(gifts))?;
        let refused = ConstCounter::new(self.catalog.refused_reloads());
        refused.encode(encoder.encode_descriptor(
            "giftgenius_catalog_reload_failures",
            "Catalog reloads refused (the previous catalog kept serving)",
            None,
            refused.metric_type(),
        )?)?;
        if let Some(pending) = *lock(&self.pending) {
            gauge(
                &mut encoder,
                "giftgenius_pending_orders",
                "Orders pending payment now",
                ConstGauge::new(pending.count as i64),
            )?;
            gauge(
                &mut encoder,
                "giftgenius_pending_order_oldest_age_seconds",
                "Age of the oldest order pending payment (0 when none is)",
                ConstGauge::new(pending.oldest_age_seconds),
            )?;
        }
        if let Some(backlog) = *lock(&self.outbox_backlog) {
            gauge(
                &mut encoder,
                "giftgenius_outbox_backlog",
                "Order events in the outbox not yet delivered",
                ConstGauge::new(backlog.events as i64),
            )?;
            gauge(
                &mut encoder,
                "giftgenius_outbox_oldest_age_seconds",
                "How long the oldest undelivered order event has waited (0 when none is)",
                ConstGauge::new(backlog.oldest_age_seconds),
            )?;
        }
        if let Some(feed) = *lock(&self.feed_backlog) {
            gauge(
                &mut encoder,
                "giftgenius_feed_backlog",
                "Feed products waiting to be pushed to a feed receiver",
                ConstGauge::new(feed.waiting as i64),
            )?;
            gauge(
                &mut encoder,
                "giftgenius_feed_oldest_age_seconds",
                "How long the oldest feed product waiting to be pushed has waited (0 when none does)",
                ConstGauge::new(feed.oldest_age_seconds),
            )?;
            gauge(
                &mut encoder,
                "giftgenius_feed_dead",
                "Feed products a receiver refused for good (until `feed redeliver`)",
                ConstGauge::new(feed.dead as i64),
            )?;
        }
        Ok(())
    }
}
