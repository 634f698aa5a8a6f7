//! The per-address rate limit for unauthenticated traffic (`--rate-limit-per-minute`).
//!
//! Each client address ([`ClientAddr`]: the peer, or the client a trusted proxy names) has a
//! bucket of N requests that refills at N per minute (GCRA, the `governor` crate); a request
//! over it is answered `429 Too Many Requests` with `Retry-After`, before anything else runs.
//!
//! What counts as unauthenticated: in verified mode, a request without an `Authorization`
//! header (signed-out suggestions, tool lists, the widget resource, images, checkout pages); a
//! request with a token is left to the auth middleware, which refuses a bad one with a 401
//! after one signature check (an unknown key id refreshes the issuer's keys at most once per
//! 30 s), and a verified account has its own usage limits. In local and single-user modes no
//! token identifies anyone, so every request counts. `/healthz` never does: load balancers
//! poll it.
//!
//! Behind a proxy every request comes from the proxy's address: name it in `--trusted-proxies`
//! or all clients share one bucket.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::client_addr::ClientAddr;

/// How often buckets that have refilled completely are forgotten (they hold nothing).
const FORGET_FULL_BUCKETS_EVERY: Duration = Duration::from_secs(60);

/// The limiter and what it exempts. Shared by every request.
pub struct RateLimit {
    limiter: DefaultKeyedRateLimiter<IpAddr>,
    clock: DefaultClock,
    /// Verified mode: requests that carry a token are the auth middleware's to judge.
    tokens_identify_callers: bool,
}

impl RateLimit {
    /// `None` when `per_minute` is 0 (off).
    pub fn new(per_minute: u32, tokens_identify_callers: bool) -> Option<Arc<RateLimit>> {
        let quota = Quota::per_minute(NonZeroU32::new(per_minute)?);
        Some(Arc::new(RateLimit {
            limiter: DefaultKeyedRateLimiter::keyed(quota),
            clock: DefaultClock::default(),
            tokens_identify_callers,
        }))
    }

    /// Forgets full buckets every minute until `shutdown`, so the table holds only the
    /// addresses seen lately.
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
                limit.limiter.retain_recent();
                limit.limiter.shrink_to_fit();
            }
        });
    }

    fn exempt(&self, request: &Request) -> bool {
        request.uri().path() == "/healthz"
            || (self.tokens_identify_callers && request.headers().contains_key(header::AUTHORIZATION))
    }

    /// How long `address` must wait, or `None` when its request may go on (and is counted).
    fn wait_for(&self, address: IpAddr) -> Option<Duration> {
        self.limiter.check_key(&address).err().map(|not_until| not_until.wait_time_from(self.clock.now()))
    }
}

/// Middleware: `axum::middleware::from_fn_with_state(limit, rate_limit)`.
pub async fn rate_limit(State(limit): State<Arc<RateLimit>>, request: Request, next: Next) -> Response {
    if limit.exempt(&request) {
        return next.run(request).await;
    }
    // No address: a request that did not come over a socket; nothing to count it against.
    let Some(address) = ClientAddr::of(request.extensions()) else { return next.run(request).await };
    match limit.wait_for(address) {
        None => next.run(request).await,
        Some(wait) => too_many_requests(wait),
    }
}

fn too_many_requests(wait: Duration) -> Response {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    let seconds = seconds.max(1);
    let body = json!({
        "error": "rate_limited",
        "error_description": format!("too many requests from this address; retry after {seconds} s"),
    });
    let mut response = (StatusCode::TOO_MANY_REQUESTS, axum::Json(body)).into_response();
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_of_n_then_a_wait_of_about_a_minute_over_n() {
        let limit = RateLimit::new(3, false).unwrap();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        for _ in 0..3 {
            assert_eq!(limit.wait_for(a), None);
        }
        let wait = limit.wait_for(a).expect("the fourth request waits");
        assert!(wait > Duration::from_secs(15) && wait <= Duration::from_secs(20), "{wait:?}");
        assert_eq!(limit.wait_for(b), None, "another address has its own bucket");
    }

    #[test]
    fn zero_is_off() {
        assert!(RateLimit::new(0, false).is_none());
    }

    #[test]
    fn retry_after_is_whole_seconds_rounded_up() {
        let response = too_many_requests(Duration::from_millis(19_001));
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[header::RETRY_AFTER], "20");
        assert_eq!(too_many_requests(Duration::ZERO).headers()[header::RETRY_AFTER], "1");
    }
}
