//! The photos kept in memory, with a bound on entries and on bytes (least recently used go
//! first), and one fetch per photo at a time: requests for a photo that is being fetched wait
//! for that fetch instead of starting their own. Failures are kept too, briefly, so a merchant
//! host that is down is not asked again by every card that shows its gift.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use hashlink::LruCache;
use tokio::time::Instant;

use super::decode::Resized;

/// What a fetch came to: both sizes, or why not (for the log).
pub type Outcome = Result<Resized, Arc<str>>;

type Flight = Shared<BoxFuture<'static, Outcome>>;

/// Bookkeeping per entry besides the JPEGs themselves (key, map slot, list links).
const ENTRY_OVERHEAD: usize = 128;

enum Slot {
    /// Being fetched: wait for it.
    Flying { flight_id: u64, flight: Flight },
    /// Done; served until `until`.
    Kept { outcome: Outcome, until: Instant, bytes: usize },
}

struct Inner {
    slots: LruCache<String, Slot>,
    bytes: usize,
    next_flight: u64,
}

/// How long photos and failures are kept.
#[derive(Debug, Clone, Copy)]
pub struct Lifetimes {
    pub photo: Duration,
    pub failure: Duration,
}

pub struct PhotoCache {
    inner: Mutex<Inner>,
    max_entries: usize,
    max_bytes: usize,
    lifetimes: Lifetimes,
}

impl std::fmt::Debug for PhotoCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (entries, bytes) = self.usage();
        f.debug_struct("PhotoCache").field("entries", &entries).field("bytes", &bytes).finish_non_exhaustive()
    }
}

impl PhotoCache {
    pub fn new(max_entries: usize, max_bytes: usize, lifetimes: Lifetimes) -> Arc<Self> {
        Arc::new(Self {
            inner: Mutex::new(Inner { slots: LruCache::new_unbounded(), bytes: 0, next_flight: 0 }),
            max_entries,
            max_bytes,
            lifetimes,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Entries (fetches in flight included) and bytes held now.
    pub fn usage(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.slots.len(), inner.bytes)
    }

    /// The photo kept under `key`, or the one being fetched, or a fetch by `work` started now
    /// (run to the end in a task of its own, so a client that leaves does not waste it).
    pub async fn get(self: &Arc<Self>, key: &str, work: impl FnOnce() -> BoxFuture<'static, Outcome>) -> Outcome {
        let flight = {
            let mut inner = self.lock();
            match inner.slots.get(key) {
                Some(Slot::Kept { outcome, until, .. }) if Instant::now() < *until => return outcome.clone(),
                Some(Slot::Flying { flight, .. }) => flight.clone(),
                _ => {
                    let expired = inner.slots.remove(key);
                    if let Some(Slot::Kept { bytes, .. }) = expired {
                        inner.bytes -= bytes;
                    }
                    inner.next_flight += 1;
                    let flight_id = inner.next_flight;
                    let (done, arrived) = tokio::sync::oneshot::channel::<Outcome>();
                    let flight =
                        arrived.map(|r| r.unwrap_or_else(|_| Err("the fetch stopped".into()))).boxed().shared();
                    inner.slots.insert(key.to_string(), Slot::Flying { flight_id, flight: flight.clone() });
                    self.shrink(&mut inner);
                    let (cache, key, work) = (self.clone(), key.to_string(), work());
                    tokio::spawn(async move {
                        let outcome = AssertUnwindSafe(work)
                            .catch_unwind()
                            .await
                            .unwrap_or_else(|_| Err("the fetch panicked".into()));
                        cache.keep(&key, flight_id, &outcome);
                        let _ = done.send(outcome);
                    });
                    flight
                }
            }
        };
        flight.await
    }

    /// Keeps `outcome` under `key` unless a newer fetch took the slot meanwhile, then shrinks
    /// back within bounds. A photo larger than the whole byte budget is served, not kept.
    fn keep(&self, key: &str, flight_id: u64, outcome: &Outcome) {
        let mut inner = self.lock();
        match inner.slots.peek(key) {
            Some(Slot::Flying { flight_id: id, .. }) if *id != flight_id => return,
            Some(Slot::Kept { .. }) => return,
            _ => {}
        }
        inner.slots.remove(key);
        let (bytes, lifetime) = match outcome {
            Ok(photo) => (photo.small.len() + photo.large.len() + key.len() + ENTRY_OVERHEAD, self.lifetimes.photo),
            Err(_) => (key.len() + ENTRY_OVERHEAD, self.lifetimes.failure),
        };
        if bytes > self.max_bytes || self.max_entries == 0 {
            return;
        }
        inner.bytes += bytes;
        inner
            .slots
            .insert(key.to_string(), Slot::Kept { outcome: outcome.clone(), until: Instant::now() + lifetime, bytes });
        self.shrink(&mut inner);
    }

    /// Drops least recently used entries until both bounds hold.
    fn shrink(&self, inner: &mut Inner) {
        while inner.slots.len() > self.max_entries || inner.bytes > self.max_bytes {
            match inner.slots.remove_lru() {
                Some((_, Slot::Kept { bytes, .. })) => inner.bytes -= bytes,
                Some((_, Slot::Flying { .. })) => {}
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::body::Bytes;

    const LONG: Lifetimes = Lifetimes { photo: Duration::from_secs(3600), failure: Duration::from_secs(60) };

    fn photo(size: usize) -> Outcome {
        Ok(Resized { small: Bytes::from(vec![1; size]), large: Bytes::from(vec![2; size]) })
    }

    /// A fetch that counts its runs and answers a photo of `size` bytes per size.
    fn counted(runs: &Arc<AtomicUsize>, size: usize) -> impl FnOnce() -> BoxFuture<'static, Outcome> + use<> {
        let runs = runs.clone();
        move || {
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                photo(size)
            }
            .boxed()
        }
    }

    #[tokio::test]
    async fn a_kept_photo_is_not_fetched_again() {
        let cache = PhotoCache::new(10, 1 << 20, LONG);
        let runs = Arc::new(AtomicUsize::new(0));
        assert!(cache.get("a", counted(&runs, 100)).await.is_ok());
        assert!(cache.get("a", counted(&runs, 100)).await.is_ok());
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn requests_for_a_photo_in_flight_share_its_one_fetch() {
        let cache = PhotoCache::new(10, 1 << 20, LONG);
        let runs = Arc::new(AtomicUsize::new(0));
        let gate = Arc::new(tokio::sync::Notify::new());
        let slow = |runs: Arc<AtomicUsize>, gate: Arc<tokio::sync::Notify>| {
            move || {
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    gate.notified().await;
                    photo(10)
                }
                .boxed()
            }
        };
        let first = cache.get("a", slow(runs.clone(), gate.clone()));
        let second = cache.get("a", slow(runs.clone(), gate.clone()));
        let third = cache.get("a", slow(runs.clone(), gate.clone()));
        let opener = async {
            // Let the one fetch start, then release it; the waiters must not have started theirs.
            while runs.load(Ordering::SeqCst) == 0 {
                tokio::task::yield_now().await;
            }
            gate.notify_waiters();
        };
        let (a, b, c, ()) = tokio::join!(first, second, third, opener);
        assert!(a.is_ok() && b.is_ok() && c.is_ok());
        assert_eq!(runs.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn entries_and_bytes_stay_within_their_bounds() {
        let per_entry = 2 * 1000 + 1 + ENTRY_OVERHEAD;
        let cache = PhotoCache::new(3, per_entry * 2, LONG);
        let runs = Arc::new(AtomicUsize::new(0));
        for key in ["a", "b", "c", "d", "e"] {
            cache.get(key, counted(&runs, 1000)).await.unwrap();
            let (entries, bytes) = cache.usage();
            assert!(entries <= 2 && bytes <= per_entry * 2, "{entries} entries, {bytes} bytes");
        }
        // The most recent two are kept, the oldest were dropped.
        cache.get("e", counted(&runs, 1000)).await.unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 5);
        cache.get("a", counted(&runs, 1000)).await.unwrap();
        assert_eq!(runs.load(Ordering::SeqCst), 6);

        let few = PhotoCache::new(2, 1 << 20, LONG);
        for key in ["a", "b", "c", "d"] {
            few.get(key, counted(&runs, 10)).await.unwrap();
            assert!(few.usage().0 <= 2);
        }
    }

    #[tokio::test]
    async fn a_photo_over_the_whole_budget_is_served_but_not_kept() {
        let cache = PhotoCache::new(10, 1000, LONG);
        let runs = Arc::new(AtomicUsize::new(0));
        assert!(cache.get("big", counted(&runs, 5000)).await.is_ok());
        assert_eq!(cache.usage(), (0, 0));
    }

    #[tokio::test]
    async fn a_failure_is_kept_for_its_lifetime_then_asked_again() {
        let failing = |runs: Arc<AtomicUsize>| {
            move || {
                async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    Err::<Resized, _>(Arc::<str>::from("down"))
                }
                .boxed()
            }
        };
        let remembering = PhotoCache::new(10, 1 << 20, LONG);
        let runs = Arc::new(AtomicUsize::new(0));
        assert!(remembering.get("a", failing(runs.clone())).await.is_err());
        assert!(remembering.get("a", failing(runs.clone())).await.is_err());
        assert_eq!(runs.load(Ordering::SeqCst), 1);

        let expired_at_once = PhotoCache::new(10, 1 << 20, Lifetimes { failure: Duration::ZERO, ..LONG });
        let runs = Arc::new(AtomicUsize::new(0));
        assert!(expired_at_once.get("a", failing(runs.clone())).await.is_err());
        assert!(expired_at_once.get("a", failing(runs.clone())).await.is_err());
        assert_eq!(runs.load(Ordering::SeqCst), 2);
        assert!(expired_at_once.get("a", counted(&runs, 10)).await.is_ok(), "a later fetch may succeed");
    }
}
