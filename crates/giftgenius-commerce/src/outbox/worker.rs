//! The delivery worker (docs/acp.md §10.2): every replica polls the outbox, leases the events
//! that are due (per-order FIFO: an event waits while an older one of its order is pending),
//! posts them, and records each outcome fenced by its claim.
//!
//! A lease lasts one request's timeout plus [`LEASE_MARGIN`], so no other worker posts an event
//! while one still may; a worker that dies (kill -9) leaves its events leased until the lease
//! ends, then any worker posts them again. At least once, never lost: an event the receiver got
//! but we did not record as delivered is sent again, with the same `Request-Id`.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::delivery::{Poster, Verdict};
use super::receivers::Receivers;
use super::schedule::{Next, RetryPolicy};
use crate::clock::Clock;
use crate::failpoints::{AFTER_WEBHOOK_DELIVERED, Failpoints};
use crate::store::{AttemptRecord, OutboxRow, Store, StoreResult};

/// Events claimed per round (posted concurrently).
pub const BATCH: i64 = 16;
/// How much longer than a request's timeout a lease lasts.
pub const LEASE_MARGIN: Duration = Duration::from_secs(5);

/// What one round did (logged when it did anything).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DeliveryReport {
    pub claimed: u64,
    pub delivered: u64,
    pub retried: u64,
    pub dead: u64,
    /// Outcomes not recorded: the event was claimed again or redelivered meanwhile.
    pub superseded: u64,
}

/// Posts the outbox's events.
#[derive(Debug)]
pub struct Dispatcher {
    pub store: Store,
    pub receivers: Arc<Receivers>,
    pub clock: Clock,
    pub poster: Poster,
    pub policy: RetryPolicy,
    pub failpoints: Failpoints,
}

impl Dispatcher {
    /// One round: claim what is due, post it, record the outcomes.
    pub async fn run_once(&self) -> StoreResult<DeliveryReport> {
        let now = self.clock.now_ms();
        let lease = i64::try_from((self.poster.timeout() + LEASE_MARGIN).as_millis()).unwrap_or(i64::MAX);
        let claimed = self.store.claim_order_events(now, now.saturating_add(lease), BATCH).await?;
        let mut report = DeliveryReport { claimed: claimed.len() as u64, ..Default::default() };
        let outcomes = futures::future::join_all(claimed.iter().map(|event| self.attempt(event))).await;
        for outcome in outcomes {
            match outcome? {
                Recorded::Delivered => report.delivered += 1,
                Recorded::Retried => report.retried += 1,
                Recorded::Dead => report.dead += 1,
                Recorded::Superseded => report.superseded += 1,
            }
        }
        Ok(report)
    }

    /// Posts one claimed event and records the outcome.
    async fn attempt(&self, event: &OutboxRow) -> StoreResult<Recorded> {
        let verdict = match self.receivers.get(&event.receiver) {
            Some(receiver) => self.poster.post(receiver, &event.id, &event.body, self.clock.now_ms()).await,
            // Another replica may know it (a rolling change of configuration): retried, not dropped.
            None => Verdict::Retry {
                error: format!("receiver {} is not configured on this server", event.receiver),
                retry_after: None,
            },
        };
        let now = self.clock.now_ms();
        let (record, recorded) = match &verdict {
            Verdict::Delivered => {
                self.failpoints.hit(AFTER_WEBHOOK_DELIVERED);
                (AttemptRecord::Delivered, Recorded::Delivered)
            }
            Verdict::Retry { error, retry_after } => {
                let random = (uuid::Uuid::new_v4().as_u128() >> 64) as u64;
                match self.policy.after_failure(event.attempts, now, event.pending_since_ms, *retry_after, random) {
                    Next::At(next_attempt_at_ms) => {
                        (AttemptRecord::Retry { error, next_attempt_at_ms }, Recorded::Retried)
                    }
                    Next::Dead => (AttemptRecord::Dead { error }, Recorded::Dead),
                }
            }
            Verdict::Permanent { error } => (AttemptRecord::Dead { error }, Recorded::Dead),
        };
        let written = self.store.record_attempt(&event.id, event.claims, record.clone(), now).await?;
        let (id, order, receiver, attempts) = (&event.id, &event.order_id, &event.receiver, event.attempts);
        match (&record, written) {
            (_, false) => {
                tracing::info!(event = id, order, "order event claimed again meanwhile; its outcome is not recorded");
                return Ok(Recorded::Superseded);
            }
            (AttemptRecord::Delivered, _) => {
                tracing::info!(event = id, order, receiver, attempts, "order event delivered")
            }
            (AttemptRecord::Retry { error, next_attempt_at_ms }, _) => tracing::warn!(
                event = id,
                order,
                receiver,
                attempts,
                error,
                next_attempt = crate::clock::rfc3339(*next_attempt_at_ms),
                "order event not delivered; it will be retried"
            ),
            (AttemptRecord::Dead { error }, _) => tracing::error!(
                event = id,
                order,
                receiver,
                attempts,
                error,
                "order event is dead: fix the receiver, then `giftgenius-server outbox redeliver {id}`"
            ),
        }
        Ok(recorded)
    }
}

/// How an attempt was recorded.
enum Recorded {
    Delivered,
    Retried,
    Dead,
    Superseded,
}

/// Runs delivery rounds every `every` until `shutdown`; a round that claimed a full batch is
/// followed by another at once. Returns when the round in progress has finished, so a drain
/// can wait for the posts in flight (each bounded by the request timeout).
pub fn spawn(dispatcher: Arc<Dispatcher>, every: Duration, shutdown: CancellationToken) -> tokio::task::JoinHandle<()> {
    spawn_rounds(every, shutdown, move || {
        let dispatcher = dispatcher.clone();
        async move {
            match dispatcher.run_once().await {
                Ok(report) => {
                    if report.claimed > 0 {
                        tracing::debug!(?report, "order events posted");
                    }
                    report.claimed >= BATCH as u64
                }
                Err(e) => {
                    tracing::warn!(error = %e, "posting order events failed; trying again next round");
                    false
                }
            }
        }
    })
}

/// Runs `round` every `every` until `shutdown`; a round that answers true (it had more than
/// one round's work) is followed by another at once. Returns when the round in progress has
/// finished. The loop of every outbox-like worker (order events, the feed's pushes).
pub fn spawn_rounds<F, Fut>(every: Duration, shutdown: CancellationToken, mut round: F) -> tokio::task::JoinHandle<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = bool> + Send,
{
    tokio::spawn(async move {
        loop {
            let more = round().await;
            if shutdown.is_cancelled() {
                return;
            }
            if !more {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(every) => {}
                }
            }
        }
    })
}
