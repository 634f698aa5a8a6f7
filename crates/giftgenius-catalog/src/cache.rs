//! How often HTTP catalogs are asked: each source's last good answer is kept for a TTL
//! (`--catalog-cache-ttl-secs`), concurrent suggestions share one fetch in flight per source
//! (single flight), and at most N fetches run at once across all sources
//! (`--catalog-max-concurrent-fetches`).
//!
//! Without this every suggestion fetched every HTTP catalog: a burst of suggestions was a burst
//! against each upstream, and a slow upstream held one socket per suggestion.
//!
//! A fetch runs in a task of its own: a suggestion that stops waiting (its source timeout or
//! deadline passed) leaves the fetch running for the next one, and a late answer still fills
//! the cache. Failures are not kept: the next suggestion asks again (one at a time, thanks to
//! the single flight), so a recovered upstream is seen at once. Waiting for a fetch slot counts
//! against the source's timeout, so a saturated cap shows as `UPSTREAM_TIMEOUT`, not as a hang.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use tracing::Instrument;

use super::CatalogGift;
use super::sources::SourceFailure;

/// What one fetch of one source gives.
pub type Fetched = Result<Arc<[CatalogGift]>, SourceFailure>;

/// The rules every HTTP source shares: how long answers are kept, and the fetch slots.
#[derive(Debug, Clone)]
pub struct FetchPolicy {
    /// `None`: answers are not kept (concurrent suggestions still share a fetch in flight).
    ttl: Option<Duration>,
    /// `None`: no cap.
    slots: Option<Arc<Semaphore>>,
}

impl FetchPolicy {
    /// `ttl` zero: no caching; `max_concurrent` zero: no cap.
    pub fn new(ttl: Duration, max_concurrent: usize) -> Self {
        FetchPolicy {
            ttl: (!ttl.is_zero()).then_some(ttl),
            slots: (max_concurrent > 0).then(|| Arc::new(Semaphore::new(max_concurrent))),
        }
    }
}

/// One HTTP source's kept answer or fetch in flight.
pub struct SourceCache {
    policy: FetchPolicy,
    slot: Mutex<Slot>,
}

enum Slot {
    Empty,
    Fresh { at: Instant, gifts: Arc<[CatalogGift]> },
    InFlight { flight: u64, answer: Shared<BoxFuture<'static, Fetched>> },
}

impl std::fmt::Debug for SourceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = match &*self.slot.lock().unwrap_or_else(|e| e.into_inner()) {
            Slot::Empty => "empty",
            Slot::Fresh { .. } => "fresh",
            Slot::InFlight { .. } => "in flight",
        };
        f.debug_struct("SourceCache").field("policy", &self.policy).field("state", &state).finish()
    }
}

impl SourceCache {
    pub fn new(policy: FetchPolicy) -> Arc<Self> {
        Arc::new(SourceCache { policy, slot: Mutex::new(Slot::Empty) })
    }

    /// The kept answer while fresh, else the answer of the fetch in flight, else the answer of
    /// a new fetch made by `fetch` (run in its own task, within a fetch slot).
    pub async fn get<F>(self: &Arc<Self>, fetch: F) -> Fetched
    where
        F: FnOnce() -> BoxFuture<'static, Fetched>,
    {
        let answer = {
            let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
            match &*slot {
                Slot::Fresh { at, gifts } if self.policy.ttl.is_some_and(|ttl| at.elapsed() < ttl) => {
                    return Ok(gifts.clone());
                }
                Slot::InFlight { answer, .. } => answer.clone(),
                Slot::Empty | Slot::Fresh { .. } => {
                    let flight = next_flight();
                    let answer = self.start(flight, fetch());
                    *slot = Slot::InFlight { flight, answer: answer.clone() };
                    answer
                }
            }
        };
        answer.await
    }

    /// Forgets the kept answer (the preview does when its catalog goes up or down).
    pub fn forget(&self) {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if matches!(*slot, Slot::Fresh { .. }) {
            *slot = Slot::Empty;
        }
    }

    fn start(self: &Arc<Self>, flight: u64, fetch: BoxFuture<'static, Fetched>) -> Shared<BoxFuture<'static, Fetched>> {
        let cache = self.clone();
        let slots = self.policy.slots.clone();
        let task = tokio::spawn(
            async move {
                let _slot = match slots {
                    // The semaphore is never closed.
                    Some(slots) => slots.acquire_owned().await.ok(),
                    None => None,
                };
                let fetched = fetch.await;
                cache.finish(flight, &fetched);
                fetched
            }
            .in_current_span(),
        );
        async move {
            task.await.unwrap_or_else(|e| {
                Err(SourceFailure::Unavailable { reason: "failed while answering", detail: format!("fetch task: {e}") })
            })
        }
        .boxed()
        .shared()
    }

    /// Keeps a good answer of flight `flight` (if it is still the current one) and clears the
    /// flight either way.
    fn finish(&self, flight: u64, fetched: &Fetched) {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if !matches!(&*slot, Slot::InFlight { flight: current, .. } if *current == flight) {
            return;
        }
        *slot = match (fetched, self.policy.ttl) {
            (Ok(gifts), Some(_)) => Slot::Fresh { at: Instant::now(), gifts: gifts.clone() },
            _ => Slot::Empty,
        };
    }
}

fn next_flight() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A fetch that counts itself, the fetches running at once and the most ever running, and
    /// takes `took`. (Real time, kept short: tokio's paused clock needs its `test-util` feature,
    /// which would rebuild every crate on tokio for the tests.)
    #[derive(Clone, Default)]
    struct Counter {
        started: Arc<AtomicUsize>,
        running: Arc<AtomicUsize>,
        most: Arc<AtomicUsize>,
    }

    impl Counter {
        fn fetch(&self, took: Duration, fails: bool) -> BoxFuture<'static, Fetched> {
            let c = self.clone();
            async move {
                c.started.fetch_add(1, Ordering::SeqCst);
                let now = c.running.fetch_add(1, Ordering::SeqCst) + 1;
                c.most.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(took).await;
                c.running.fetch_sub(1, Ordering::SeqCst);
                if fails {
                    Err(SourceFailure::Unavailable { reason: "answered with an error", detail: "503".into() })
                } else {
                    Ok(Vec::new().into())
                }
            }
            .boxed()
        }

        fn started(&self) -> usize {
            self.started.load(Ordering::SeqCst)
        }
    }

    #[tokio::test]
    async fn an_answer_is_kept_for_the_ttl_then_fetched_again() {
        // Kept: a TTL no step of this test comes near, however slow the machine.
        let kept = SourceCache::new(FetchPolicy::new(Duration::from_secs(3600), 0));
        let counter = Counter::default();
        let fetch = || counter.fetch(Duration::from_millis(10), false);
        kept.get(fetch).await.unwrap();
        kept.get(fetch).await.unwrap();
        assert_eq!(counter.started(), 1);

        // Fetched again: a TTL the wait below is sure to pass (a slow machine only waits longer).
        let expires = SourceCache::new(FetchPolicy::new(Duration::from_millis(20), 0));
        let counter = Counter::default();
        let fetch = || counter.fetch(Duration::from_millis(10), false);
        expires.get(fetch).await.unwrap();
        tokio::time::sleep(Duration::from_millis(30)).await;
        expires.get(fetch).await.unwrap();
        assert_eq!(counter.started(), 2);
    }

    #[tokio::test]
    async fn concurrent_callers_share_one_fetch_even_without_a_ttl() {
        let cache = SourceCache::new(FetchPolicy::new(Duration::ZERO, 0));
        let counter = Counter::default();
        let fetch = || counter.fetch(Duration::from_millis(100), false);
        let answers = futures::future::join_all((0..10).map(|_| cache.get(fetch))).await;
        assert!(answers.iter().all(Result::is_ok));
        assert_eq!(counter.started(), 1);
        // Nothing kept: the next call fetches.
        cache.get(fetch).await.unwrap();
        assert_eq!(counter.started(), 2);
    }

    #[tokio::test]
    async fn failures_are_not_kept() {
        let cache = SourceCache::new(FetchPolicy::new(Duration::from_secs(60), 0));
        let counter = Counter::default();
        assert!(cache.get(|| counter.fetch(Duration::from_millis(10), true)).await.is_err());
        assert!(cache.get(|| counter.fetch(Duration::from_millis(10), false)).await.is_ok());
        assert_eq!(counter.started(), 2);
    }

    #[tokio::test]
    async fn fetches_across_sources_never_exceed_the_cap() {
        let policy = FetchPolicy::new(Duration::ZERO, 2);
        let counter = Counter::default();
        let caches: Vec<_> = (0..6).map(|_| SourceCache::new(policy.clone())).collect();
        let answers = futures::future::join_all(
            caches.iter().map(|cache| cache.get(|| counter.fetch(Duration::from_millis(100), false))),
        )
        .await;
        assert!(answers.iter().all(Result::is_ok));
        assert_eq!(counter.started(), 6);
        assert_eq!(counter.most.load(Ordering::SeqCst), 2);
    }

    #[tokio::test]
    async fn a_caller_that_stops_waiting_leaves_the_fetch_to_fill_the_cache() {
        let cache = SourceCache::new(FetchPolicy::new(Duration::from_secs(60), 0));
        let counter = Counter::default();
        let fetch = || counter.fetch(Duration::from_millis(500), false);
        assert!(tokio::time::timeout(Duration::from_millis(100), cache.get(fetch)).await.is_err());
        // Nobody waits now; the fetch's own task finishes and keeps the answer (polled, not a
        // guessed wait: a slow machine only takes more turns).
        let fresh = || matches!(*cache.slot.lock().unwrap(), Slot::Fresh { .. });
        for _ in 0..1000 {
            if fresh() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(fresh(), "the late answer was not kept");
        cache.get(fetch).await.unwrap();
        assert_eq!(counter.started(), 1, "the late answer was kept");
    }
}
