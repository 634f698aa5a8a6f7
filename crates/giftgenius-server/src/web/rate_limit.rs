//! The per-address rate limit (`--rate-limit-per-minute`).
//!
//! Each client group ([`client_group`] of the [`ClientAddr`]: an IPv4 address or an IPv6 /64)
//! has a bucket of N requests that refills at N per minute (GCRA: one "theoretical arrival
//! time" per group); a request over it is answered `429 Too Many Requests` with `Retry-After`,
//! before anything else runs, so a flood costs no signature check.
//!
//! Every request counts, on every route, until a token has actually verified: in verified mode
//! the auth middleware in front of `/mcp` gives the request back ([`Counted::verified`]) once its
//! bearer token verifies, since a verified account has usage limits of its own. A request whose
//! token fails, and any request to a route that never checks a token (images, checkout pages,
//! the preview, metadata), stays counted whatever `Authorization` header it carries. The probes
//! (`/healthz`, `/livez`, `/readyz`) and `/metrics` never count: load balancers and Prometheus
//! poll them. Every 429 is counted in `giftgenius_rate_limited_total`.
//!
//! The table is bounded: at most [`MAX_TRACKED_GROUPS`] groups, the least recently seen
//! forgotten first (an LRU), and full buckets are forgotten every minute. A group that was
//! forgotten starts again with a full bucket, which only helps someone who already holds that
//! many addresses (or /64s), each with a bucket of its own anyway.
//!
//! Behind a proxy every request comes from the proxy's address: name it in `--trusted-proxies`
//! or all clients share one bucket.

use std::collections::hash_map::RandomState;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hashlink::LruCache;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::client_addr::{ClientAddr, client_group};
use crate::metrics::RefusalMetrics;

/// How often buckets that have refilled completely are forgotten (they hold nothing).
const FORGET_FULL_BUCKETS_EVERY: Duration = Duration::from_secs(60);

/// Client groups tracked at most (about 100 bytes each: 10 MB at the bound).
pub const MAX_TRACKED_GROUPS: usize = 100_000;

/// The limiter. Shared by every request.
pub struct RateLimit {
    /// Per group, the time its bucket is full again plus one interval (GCRA's TAT). SipHash
    /// with a random key: the keys are chosen by clients.
    buckets: Mutex<LruCache<IpAddr, Instant, RandomState>>,
    /// Time one request takes to refill (a minute / N).
    interval: Duration,
    /// How far ahead of now a bucket's TAT may run: N − 1 intervals (a burst of N).
    burst: Duration,
    /// Verified mode: a request whose token verifies is given back.
    tokens_identify_callers: bool,
    /// Counts the requests refused (`/metrics`).
    refusals: RefusalMetrics,
}

/// A request counted against its group, in the request's extensions in verified mode: the auth
/// middleware gives it back when the request's token verifies.
#[derive(Clone)]
pub struct Counted {
    limit: Arc<RateLimit>,
    group: IpAddr,
}

impl Counted {
    /// The request's bearer token verified: it does not count against its address.
    pub fn verified(self) {
        self.limit.give_back(self.group);
    }
}

impl RateLimit {
    /// `None` when `per_minute` is 0 (off).
    pub fn new(per_minute: u32, tokens_identify_callers: bool) -> Option<Arc<RateLimit>> {
        RateLimit::counted(per_minute, tokens_identify_callers, RefusalMetrics::default())
    }

    /// Like `new`, counting the requests it refuses into `refusals`.
    pub fn counted(per_minute: u32, tokens_identify_callers: bool, refusals: RefusalMetrics) -> Option<Arc<RateLimit>> {
        RateLimit::bounded(per_minute, tokens_identify_callers, MAX_TRACKED_GROUPS, refusals)
    }

    fn bounded(
        per_minute: u32,
        tokens_identify_callers: bool,
        max_groups: usize,
        refusals: RefusalMetrics,
    ) -> Option<Arc<RateLimit>> {
        if per_minute == 0 {
            return None;
        }
        let interval = Duration::from_secs(60) / per_minute;
        Some(Arc::new(RateLimit {
            buckets: Mutex::new(LruCache::with_hasher(max_groups, RandomState::new())),
            interval,
            burst: interval * (per_minute - 1),
            tokens_identify_callers,
            refusals,
        }))
    }

    fn buckets(&self) -> std::sync::MutexGuard<'_, LruCache<IpAddr, Instant, RandomState>> {
        self.buckets.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets full buckets every minute until `shutdown`, so the table holds only the
    /// groups seen lately.
    pub fn spawn_pruning(self: &Arc<Self>, shutdown: CancellationToken) {
        let limit = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(FORGET_FULL_BUCKETS_EVERY);
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tick.tick() => {}
                }
                let Some(limit) = limit.upgrade() else { return };
                limit.forget_full(Instant::now());
            }
        });
    }

    fn forget_full(&self, now: Instant) {
        self.buckets().retain(|_, full_at| *full_at > now);
    }

    /// Counts one request of `group` at `now`, or says how long it must wait.
    fn take(&self, group: IpAddr, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets();
        let tat = buckets.get(&group).map_or(now, |tat| (*tat).max(now));
        let earliest = tat.checked_sub(self.burst).unwrap_or(now);
        if earliest > now {
            return Err(earliest - now);
        }
        buckets.insert(group, tat + self.interval);
        Ok(())
    }

    /// Gives one counted request back (its token verified).
    fn give_back(&self, group: IpAddr) {
        if let Some(tat) = self.buckets().peek_mut(&group) {
            *tat = tat.checked_sub(self.interval).unwrap_or(*tat);
        }
    }
}

/// Middleware: `axum::middleware::from_fn_with_state(limit, rate_limit)`.
pub async fn rate_limit(State(limit): State<Arc<RateLimit>>, mut request: Request, next: Next) -> Response {
    let path = request.uri().path();
    if super::PROBE_PATHS.contains(&path) || path == super::METRICS_PATH {
        return next.run(request).await;
    }
    // No address: a request that did not come over a socket; nothing to count it against.
    let Some(address) = ClientAddr::of(request.extensions()) else { return next.run(request).await };
    let group = client_group(address);
    if let Err(wait) = limit.take(group, Instant::now()) {
        limit.refusals.rate_limited();
        return too_many_requests(wait, path.starts_with(ACP_PREFIX));
    }
    if limit.tokens_identify_callers {
        request.extensions_mut().insert(Counted { limit: limit.clone(), group });
    }
    next.run(request).await
}

/// Where the Agentic Commerce Protocol's routes are: their callers read ACP's `Error`.
const ACP_PREFIX: &str = "/acp/";

/// 429 with `Retry-After`; to an ACP platform (`acp`) in ACP's `Error` shape (`type`, `code`,
/// `message`: its closed schema has no other fields), to anyone else as OAuth-style
/// `error`/`error_description`.
fn too_many_requests(wait: Duration, acp: bool) -> Response {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let seconds = seconds.max(1);
    let message = format!("too many requests from this address; retry after {seconds} s");
    let body = match acp {
        // docs/acp.md §6: every 4xx of ours is `invalid_request`.
        true => json!({"type": "invalid_request", "code": "rate_limited", "message": message}),
        false => json!({"error": "rate_limited", "error_description": message}),
    };
    let mut response = (StatusCode::TOO_MANY_REQUESTS, axum::Json(body)).into_response();
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_bucket_of_n_then_a_wait_of_about_a_minute_over_n() {
        let limit = RateLimit::new(3, false).unwrap();
        let now = Instant::now();
        let (a, b) = (ip("192.0.2.1"), ip("192.0.2.2"));
        for _ in 0..3 {
            assert_eq!(limit.take(a, now), Ok(()));
        }
        let wait = limit.take(a, now).expect_err("the fourth request waits");
        assert_eq!(wait, Duration::from_secs(20));
        assert_eq!(limit.take(b, now), Ok(()), "another address has its own bucket");
        // One interval later, one more request.
        assert_eq!(limit.take(a, now + Duration::from_secs(20)), Ok(()));
        assert!(limit.take(a, now + Duration::from_secs(20)).is_err());
    }

    #[test]
    fn a_request_given_back_does_not_count() {
        let limit = RateLimit::new(2, true).unwrap();
        let now = Instant::now();
        let a = ip("192.0.2.1");
        for _ in 0..10 {
            assert_eq!(limit.take(a, now), Ok(()));
            limit.give_back(a);
        }
        assert_eq!(limit.take(a, now), Ok(()));
        assert_eq!(limit.take(a, now), Ok(()));
        assert!(limit.take(a, now).is_err());
    }

    #[test]
    fn the_table_keeps_at_most_its_bound_forgetting_the_least_recently_seen_first() {
        let limit = RateLimit::bounded(1, false, 3, RefusalMetrics::default()).unwrap();
        let now = Instant::now();
        let groups: Vec<IpAddr> = (1..=5).map(|i| ip(&format!("192.0.2.{i}"))).collect();
        for group in &groups[..3] {
            assert_eq!(limit.take(*group, now), Ok(()));
        }
        assert!(limit.take(groups[0], now).is_err(), "seen again: now the most recent");
        for group in &groups[3..] {
            assert_eq!(limit.take(*group, now), Ok(()));
            assert_eq!(limit.buckets().len(), 3, "never more than the bound");
        }
        // .2 and .3 were the least recently seen: forgotten, so full again. .1 is still empty.
        assert!(limit.take(groups[0], now).is_err());
        assert_eq!(limit.take(groups[1], now), Ok(()));
        assert_eq!(limit.buckets().len(), 3);
    }

    #[test]
    fn full_buckets_are_forgotten() {
        let limit = RateLimit::new(60, false).unwrap();
        let now = Instant::now();
        limit.take(ip("192.0.2.1"), now).unwrap();
        limit.take(ip("192.0.2.2"), now + Duration::from_millis(1500)).unwrap();
        limit.forget_full(now + Duration::from_secs(2));
        assert_eq!(limit.buckets().len(), 1, "the first refilled after a second, the second not yet");
    }

    #[test]
    fn zero_is_off() {
        assert!(RateLimit::new(0, false).is_none());
    }

    #[test]
    fn retry_after_is_whole_seconds_rounded_up() {
        let response = too_many_requests(Duration::from_millis(19_001), false);
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[header::RETRY_AFTER], "20");
        assert_eq!(too_many_requests(Duration::ZERO, true).headers()[header::RETRY_AFTER], "1");
    }

    #[tokio::test]
    async fn an_acp_platform_reads_acp_s_error_and_everyone_else_the_oauth_shape() {
        let body = |acp| async move {
            let bytes = axum::body::to_bytes(too_many_requests(Duration::from_secs(3), acp).into_body(), 1024);
            serde_json::from_slice::<serde_json::Value>(&bytes.await.unwrap()).unwrap()
        };
        let acp = body(true).await;
        assert_eq!((acp["type"].as_str(), acp["code"].as_str()), (Some("invalid_request"), Some("rate_limited")));
        assert_eq!(acp.as_object().unwrap().len(), 3, "nothing ACP's closed Error does not define: {acp}");
        assert!(acp["message"].as_str().unwrap().contains("retry after 3 s"));
        assert_eq!(body(false).await["error"], "rate_limited");
    }
}
