//! Pushing the product feed's changes to the feed receivers (`--feed-receivers`, docs/feed.md
//! "Pushing changes"): when a price, a stock level, a title or a gift itself changes, each
//! receiver gets the changed products as `PATCH {url}/feeds/{feed_id}/products`
//! (`UpsertProductsRequest`), at least once, in batches, retried with back-off.
//!
//! Two halves, both on every replica, meeting in the `feed_pushes` table:
//! - **The sweep** finds what changed by comparing each product as the feed would say it now
//!   (its fingerprint: a hash of the product's JSON) with what was last marked for the receiver,
//!   and marks the differences pending. The whole catalog is compared at start, after a
//!   catalog reload and every `--feed-full-sweep-secs`; between those, the gifts of the orders
//!   changed since the last sweep (a sale, a decline, a cancel moves stock). Nothing is lost
//!   across kill -9: a change not yet marked is found by the next server's first sweep, one
//!   marked stays pending until a receiver accepts it.
//! - **The worker** claims a receiver's due rows with a lease, builds each product from the
//!   catalog and stock of that moment (a product that changed twice is sent once, as it is
//!   now), sends them in one request, and records the outcome fenced by its claim. A row marked
//!   again while its push was in flight stays pending, so the newer state goes out too.
//!
//! A gift the catalog dropped is pushed once as discontinued (the spec's upsert cannot delete).
//! What an answer means is the order events' rule (`giftgenius_commerce::outbox::delivery`):
//! 2xx delivered (unless it says `"accepted": false`), 408/429/5xx and network errors retried
//! (`Retry-After` honoured) until `--webhook-retry-horizon`, anything else dead until the
//! operator redelivers (`giftgenius-server feed redeliver`).

use std::sync::Arc;
use std::time::Duration;

use giftgenius_catalog::{Catalog, CatalogGift, live::LiveCatalog};
use giftgenius_commerce::clock::Clock;
use giftgenius_commerce::outbox::delivery::{Verdict, client, judge, network_error, read_answer, retry_after};
use giftgenius_commerce::outbox::schedule::{Next, RetryPolicy};
use giftgenius_commerce::outbox::worker::spawn_rounds;
use giftgenius_commerce::store::{
    FeedMark, FeedPushRow, PushRecord, Store, StoreError, StoreResult, fingerprint_number,
};
use giftgenius_types::feed::{FeedAvailability, FeedListing, FeedProductGone, FeedUpsert, FeedVariantGone};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::receivers::{FeedReceiver, FeedReceivers};

/// Products per request.
pub const BATCH: i64 = 100;
/// How much longer than a request's timeout a lease lasts.
const LEASE_MARGIN: Duration = Duration::from_secs(5);
/// How far back each sweep reads changed orders again: an order written by a replica whose
/// clock is this much behind ours, or committed this long after it was stamped, is still
/// seen (a later one by the next full sweep).
const ORDERS_OVERLAP_MS: i64 = 10_000;
/// How much of a receiver's answer is read.
const MAX_ANSWER_BYTES: usize = 64 * 1024;
/// Marks written per transaction during a full sweep.
const MARK_CHUNK: usize = 1000;

/// What one round did (logged when it did anything).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PushReport {
    /// The whole catalog was compared.
    pub full_sweep: bool,
    /// Products marked pending by the sweep.
    pub marked: u64,
    pub claimed: u64,
    pub delivered: u64,
    pub retried: u64,
    pub dead: u64,
    /// Outcomes not recorded: claimed again or redelivered meanwhile.
    pub superseded: u64,
}

/// Where the sweeps stand on this server.
#[derive(Debug, Default)]
struct Sweeps {
    /// The catalog the last full sweep compared.
    catalog: Option<Arc<Catalog>>,
    full_at_ms: i64,
    /// Orders changed at or after this are read by the next sweep.
    orders_since_ms: i64,
}

/// Sweeps and pushes the feed's changes.
pub struct FeedPusher {
    store: Store,
    catalog: Arc<LiveCatalog>,
    receivers: Arc<FeedReceivers>,
    clock: Clock,
    public_url: String,
    policy: RetryPolicy,
    full_sweep_every: Duration,
    client: reqwest::Client,
    timeout: Duration,
    sweeps: tokio::sync::Mutex<Sweeps>,
}

impl std::fmt::Debug for FeedPusher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FeedPusher").field("receivers", &self.receivers).finish_non_exhaustive()
    }
}

/// What a pusher is made of.
pub struct PusherParts {
    pub store: Store,
    pub catalog: Arc<LiveCatalog>,
    pub receivers: Arc<FeedReceivers>,
    pub clock: Clock,
    pub public_url: String,
    pub policy: RetryPolicy,
    pub full_sweep_every: Duration,
    pub timeout: Duration,
}

impl FeedPusher {
    pub fn new(parts: PusherParts) -> anyhow::Result<Self> {
        let client = client(parts.timeout, concat!("giftgenius-feed/", env!("CARGO_PKG_VERSION")))?;
        Ok(Self {
            store: parts.store,
            catalog: parts.catalog,
            receivers: parts.receivers,
            clock: parts.clock,
            public_url: parts.public_url,
            policy: parts.policy,
            full_sweep_every: parts.full_sweep_every,
            client,
            timeout: parts.timeout,
            sweeps: tokio::sync::Mutex::new(Sweeps::default()),
        })
    }

    /// One round: sweep, then one batch per receiver.
    pub async fn run_once(&self) -> StoreResult<PushReport> {
        let mut report = PushReport::default();
        self.sweep(&mut report).await?;
        for receiver in self.receivers.iter() {
            self.push_batch(receiver, &mut report).await?;
        }
        Ok(report)
    }

    /// Marks what changed since the last sweep.
    async fn sweep(&self, report: &mut PushReport) -> StoreResult<()> {
        let mut sweeps = self.sweeps.lock().await;
        let catalog = self.catalog.current();
        let now = self.clock.now_ms();
        let reloaded = sweeps.catalog.as_ref().is_none_or(|seen| !Arc::ptr_eq(seen, &catalog));
        let due = now.saturating_sub(sweeps.full_at_ms) >= millis(self.full_sweep_every);
        // The orders' watermark moves before the comparison: an order changed meanwhile is
        // read by the next sweep too.
        let since = std::mem::replace(&mut sweeps.orders_since_ms, now - ORDERS_OVERLAP_MS);
        if reloaded || due {
            report.full_sweep = true;
            let started = std::time::Instant::now();
            let marked = self.sweep_all(&catalog, now).await?;
            tracing::info!(
                products = catalog.len(),
                marked,
                seconds = started.elapsed().as_secs_f64(),
                "feed swept: every product compared with what each receiver was last sent"
            );
            report.marked += marked;
            sweeps.catalog = Some(catalog);
            sweeps.full_at_ms = now;
        } else {
            let gifts = self.store.gifts_of_orders_changed_since(since).await?;
            report.marked += self.sweep_gifts(&catalog, &gifts, now).await?;
        }
        Ok(())
    }

    /// Compares every product of `catalog`, and every product a receiver was told of that the
    /// catalog no longer holds, with what was last marked; marks the differences.
    async fn sweep_all(&self, catalog: &Arc<Catalog>, now: i64) -> StoreResult<u64> {
        let sold = self.store.units_sold_by_gift().await?;
        let mut marked = Vec::new();
        for receiver in self.receivers.iter() {
            marked.push(self.store.feed_marked(&receiver.name).await?);
        }
        // Serializing and hashing every product is CPU work (seconds at a million gifts): on
        // a blocking thread, its marks streamed back in chunks so memory stays bounded.
        let (send, mut chunks) = tokio::sync::mpsc::channel::<(usize, Vec<FeedMark>)>(4);
        let (catalog_now, public_url) = (catalog.clone(), self.public_url.clone());
        let compare = tokio::task::spawn_blocking(move || {
            let mut pending: Vec<Vec<FeedMark>> = vec![Vec::new(); marked.len()];
            for gift in catalog_now.gifts() {
                let left = i64::from(gift.stock) - sold.get(&*gift.id).copied().unwrap_or(0);
                let listing = FeedListing::Listed(super::product(gift, left, &public_url));
                let fingerprint = fingerprint(&listing);
                let number = fingerprint_number(&fingerprint);
                for (index, seen) in marked.iter_mut().enumerate() {
                    if seen.remove(&*gift.id).is_some_and(|was| Some(was) == number) {
                        continue;
                    }
                    pending[index].push(FeedMark {
                        product_id: gift.id.to_string(),
                        title: gift.title.to_string(),
                        fingerprint: fingerprint.clone(),
                    });
                    if pending[index].len() >= MARK_CHUNK {
                        let chunk = std::mem::take(&mut pending[index]);
                        if send.blocking_send((index, chunk)).is_err() {
                            return Vec::new();
                        }
                    }
                }
            }
            for (index, chunk) in pending.into_iter().enumerate() {
                if !chunk.is_empty() && send.blocking_send((index, chunk)).is_err() {
                    return Vec::new();
                }
            }
            // What is left was told to a receiver and is no longer in the catalog.
            marked.into_iter().map(|seen| seen.into_keys().map(String::from).collect::<Vec<String>>()).collect()
        });
        let mut count = 0;
        while let Some((index, chunk)) = chunks.recv().await {
            let receiver = self.receivers.iter().nth(index).expect("a receiver per index");
            count += self.store.mark_feed_products(&receiver.name, &chunk, now).await?;
        }
        let gone = compare.await.map_err(|e| StoreError::Inconsistent(format!("feed sweep failed: {e}")))?;
        for (receiver, ids) in self.receivers.iter().zip(gone) {
            for id in ids {
                count += self.mark_gone(receiver, &id, now).await?;
            }
        }
        Ok(count)
    }

    /// Compares the products `ids` (gifts whose stock may have moved) with what was last marked
    /// for each receiver; marks the differences.
    async fn sweep_gifts(&self, catalog: &Catalog, ids: &[String], now: i64) -> StoreResult<u64> {
        let mut count = 0;
        for id in ids {
            let Some(gift) = catalog.get(id) else {
                for receiver in self.receivers.iter() {
                    count += self.mark_gone(receiver, id, now).await?;
                }
                continue;
            };
            let listing = self.listing(gift).await?;
            let fingerprint = fingerprint(&listing);
            for receiver in self.receivers.iter() {
                let seen = self.store.feed_marked_one(&receiver.name, id).await?;
                if seen.is_some_and(|(was, _)| was == fingerprint) {
                    continue;
                }
                let mark = FeedMark {
                    product_id: id.clone(),
                    title: gift.title.to_string(),
                    fingerprint: fingerprint.clone(),
                };
                count += self.store.mark_feed_products(&receiver.name, &[mark], now).await?;
            }
        }
        Ok(count)
    }

    /// Marks product `id`, which the catalog no longer holds, as discontinued for `receiver`
    /// (if it was ever told of it and not told it is gone).
    async fn mark_gone(&self, receiver: &FeedReceiver, id: &str, now: i64) -> StoreResult<u64> {
        let Some((was, title)) = self.store.feed_marked_one(&receiver.name, id).await? else { return Ok(0) };
        let fingerprint = fingerprint(&gone(id, &title));
        if was == fingerprint {
            return Ok(0);
        }
        let mark = FeedMark { product_id: id.to_string(), title, fingerprint };
        self.store.mark_feed_products(&receiver.name, &[mark], now).await
    }

    /// `gift` as the feed says it now (its stock live).
    async fn listing(&self, gift: &CatalogGift) -> StoreResult<FeedListing> {
        let left = i64::from(gift.stock) - self.store.units_sold(&gift.id).await?;
        Ok(FeedListing::Listed(super::product(gift, left, &self.public_url)))
    }

    /// Claims up to [`BATCH`] of `receiver`'s due products, sends them as they are now, and
    /// records the outcome.
    async fn push_batch(&self, receiver: &FeedReceiver, report: &mut PushReport) -> StoreResult<()> {
        let now = self.clock.now_ms();
        let lease = millis(self.timeout + LEASE_MARGIN);
        let claimed = self.store.claim_feed_pushes(&receiver.name, now, now.saturating_add(lease), BATCH).await?;
        if claimed.is_empty() {
            return Ok(());
        }
        report.claimed += claimed.len() as u64;
        let catalog = self.catalog.current();
        let mut products = Vec::with_capacity(claimed.len());
        for row in &claimed {
            products.push(match catalog.get(&row.product_id) {
                Some(gift) => self.listing(gift).await?,
                None => gone(&row.product_id, &row.title),
            });
        }
        let fingerprints: Vec<String> = products.iter().map(fingerprint).collect();
        let body = serde_json::to_string(&FeedUpsert { products })
            .map_err(|e| StoreError::Inconsistent(format!("feed upsert not serializable: {e}")))?;
        let verdict = self.send(receiver, body).await;
        let now = self.clock.now_ms();
        let outcomes: Vec<(&FeedPushRow, PushRecord)> = claimed
            .iter()
            .zip(&fingerprints)
            .map(|(row, fingerprint)| {
                let record = match &verdict {
                    Verdict::Delivered => PushRecord::Delivered { fingerprint },
                    Verdict::Retry { error, retry_after } => {
                        let random = (uuid::Uuid::new_v4().as_u128() >> 64) as u64;
                        match self.policy.after_failure(row.attempts, now, row.pending_since_ms, *retry_after, random) {
                            Next::At(next_attempt_at_ms) => PushRecord::Retry { error, next_attempt_at_ms },
                            Next::Dead => PushRecord::Dead { error },
                        }
                    }
                    Verdict::Permanent { error } => PushRecord::Dead { error },
                };
                (row, record)
            })
            .collect();
        let written = self.store.record_feed_pushes(&outcomes, now).await?;
        for ((_, record), written) in outcomes.iter().zip(written) {
            match (written, record) {
                (false, _) => report.superseded += 1,
                (true, PushRecord::Delivered { .. }) => report.delivered += 1,
                (true, PushRecord::Retry { .. }) => report.retried += 1,
                (true, PushRecord::Dead { .. }) => report.dead += 1,
            }
        }
        log_outcome(receiver, &claimed, &verdict);
        Ok(())
    }

    /// One `PATCH` of `body` to `receiver`, and what its answer means.
    async fn send(&self, receiver: &FeedReceiver, body: String) -> Verdict {
        let request = self
            .client
            .patch(receiver.products_url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(AUTHORIZATION, format!("Bearer {}", receiver.token))
            .body(body);
        let attempt = async {
            let mut response = match request.send().await {
                Ok(response) => response,
                Err(e) if e.is_timeout() => return Verdict::Retry { error: "timed out".into(), retry_after: None },
                Err(e) => return Verdict::Retry { error: network_error(&e), retry_after: None },
            };
            let status = response.status();
            let wait = response.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(retry_after);
            let read = read_answer(&mut response, MAX_ANSWER_BYTES).await;
            match judge(status, &read, wait) {
                Verdict::Delivered if refused_in_body(&read) => {
                    Verdict::Permanent { error: format!("HTTP {} with \"accepted\": false", status.as_u16()) }
                }
                verdict => verdict,
            }
        };
        match tokio::time::timeout(self.timeout, attempt).await {
            Ok(verdict) => verdict,
            Err(_) => Verdict::Retry { error: "timed out".into(), retry_after: None },
        }
    }
}

/// Whether a 2xx answer says the receiver did not accept the products (`UpsertProductsResponse`
/// with `accepted: false`); an answer that is not that shape is taken as accepted.
fn refused_in_body(body: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(body).is_ok_and(|v| v.get("accepted") == Some(&false.into()))
}

fn log_outcome(receiver: &FeedReceiver, claimed: &[FeedPushRow], verdict: &Verdict) {
    let (name, products) = (&receiver.name, claimed.len());
    match verdict {
        Verdict::Delivered => tracing::info!(receiver = name, products, "feed changes pushed"),
        Verdict::Retry { error, .. } => {
            tracing::warn!(receiver = name, products, error, "feed changes not pushed; they will be retried")
        }
        Verdict::Permanent { error } => tracing::error!(
            receiver = name,
            products,
            error,
            "feed changes refused: fix the receiver, then `giftgenius-server feed redeliver --receiver {name} --dead`"
        ),
    }
}

/// The product `id` the catalog dropped, as a receiver is told it: discontinued.
fn gone(id: &str, title: &str) -> FeedListing {
    FeedListing::Gone(FeedProductGone {
        id: id.to_string(),
        variants: vec![FeedVariantGone {
            id: id.to_string(),
            title: title.to_string(),
            availability: FeedAvailability { available: false, status: "discontinued".into() },
        }],
    })
}

/// What a product says, in 16 hex digits (64 bits of the SHA-256 of its JSON): two states of a
/// product have the same one only by a 2⁻⁶⁴ chance.
pub fn fingerprint(listing: &FeedListing) -> String {
    let json = serde_json::to_vec(listing).expect("a feed product serializes");
    hex::encode(&Sha256::digest(&json)[..8])
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Runs rounds every `every` until `shutdown`; a round that claimed a full batch is followed
/// by another at once.
pub fn spawn(pusher: Arc<FeedPusher>, every: Duration, shutdown: CancellationToken) -> tokio::task::JoinHandle<()> {
    spawn_rounds(every, shutdown, move || {
        let pusher = pusher.clone();
        async move {
            match pusher.run_once().await {
                Ok(report) => {
                    if report.marked > 0 || report.claimed > 0 {
                        tracing::debug!(?report, "feed round");
                    }
                    report.claimed >= BATCH as u64
                }
                Err(e) => {
                    tracing::warn!(error = %e, "pushing feed changes failed; trying again next round");
                    false
                }
            }
        }
    })
}

/// One push as `feed pushes` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PushListing {
    pub receiver: String,
    pub product_id: String,
    pub status: &'static str,
    pub attempts: i64,
    /// While pending: when it is tried next.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_attempt_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delivered_at: Option<String>,
}

impl From<&FeedPushRow> for PushListing {
    fn from(row: &FeedPushRow) -> Self {
        use giftgenius_commerce::clock::rfc3339;
        use giftgenius_commerce::store::OutboxStatus;
        Self {
            receiver: row.receiver.clone(),
            product_id: row.product_id.clone(),
            status: row.status.as_str(),
            attempts: row.attempts,
            next_attempt_at: (row.status == OutboxStatus::Pending).then(|| rfc3339(row.next_attempt_at_ms)),
            last_error: row.last_error.clone(),
            delivered_at: row.delivered_at_ms.map(rfc3339),
        }
    }
}
