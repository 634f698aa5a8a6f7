//! When a failed order event is tried again (docs/acp.md §10.2): exponential back-off from
//! 10 s (`--webhook-retry-base`), doubling, capped at 1 h, with full jitter (a random wait between zero and that
//! ceiling, so receivers coming back are not hit by every sender at once); a `Retry-After`
//! from the receiver is a floor. Retries stop at the horizon (`--webhook-retry-horizon`,
//! counted from when the event was written or redelivered): the last try is at the horizon,
//! and its failure makes the event dead.

use std::time::Duration;

/// The first back-off ceiling.
pub const BASE: Duration = Duration::from_secs(10);
/// The largest back-off ceiling.
pub const CAP: Duration = Duration::from_secs(3600);

/// How failures are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    pub base: Duration,
    pub cap: Duration,
    /// How long after it was written (or redelivered) an event is still tried.
    pub horizon: Duration,
}

/// What follows a retryable failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Try again at this time (Unix ms).
    At(i64),
    /// The horizon has passed: give up.
    Dead,
}

impl RetryPolicy {
    pub fn new(horizon: Duration) -> Self {
        Self { base: BASE, cap: CAP, horizon }
    }

    /// With another first back-off ceiling (`--webhook-retry-base`; never zero, never above the cap).
    pub fn with_base(self, base: Duration) -> Self {
        Self { base: base.clamp(Duration::from_millis(1), self.cap), ..self }
    }

    /// The back-off ceiling after `attempts` attempts (1 after the first failure).
    pub fn ceiling(&self, attempts: i64) -> Duration {
        let doublings = u32::try_from(attempts.saturating_sub(1).clamp(0, 32)).unwrap_or(32);
        self.base.saturating_mul(2u32.saturating_pow(doublings)).min(self.cap)
    }

    /// After the `attempts`-th attempt failed at `now_ms`: when to try again, given when the
    /// horizon started (`pending_since_ms`), the receiver's `Retry-After`, and `random` (any
    /// value: the jitter is `random` modulo the ceiling).
    pub fn after_failure(
        &self,
        attempts: i64,
        now_ms: i64,
        pending_since_ms: i64,
        retry_after: Option<Duration>,
        random: u64,
    ) -> Next {
        let horizon_ms = pending_since_ms.saturating_add(millis(self.horizon));
        if now_ms >= horizon_ms {
            return Next::Dead;
        }
        let ceiling = u64::try_from(millis(self.ceiling(attempts))).unwrap_or(0);
        let jittered = i64::try_from(random % ceiling.saturating_add(1)).unwrap_or(i64::MAX);
        let wait = jittered.max(retry_after.map_or(0, millis));
        Next::At(now_ms.saturating_add(wait).min(horizon_ms))
    }
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(24 * 3600);

    #[test]
    fn the_ceiling_doubles_from_ten_seconds_up_to_an_hour() {
        let policy = RetryPolicy::new(DAY);
        let ceilings: Vec<u64> = (1..=11).map(|n| policy.ceiling(n).as_secs()).collect();
        assert_eq!(ceilings, [10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600]);
        assert_eq!(policy.ceiling(0).as_secs(), 10);
        assert_eq!(policy.ceiling(i64::MAX).as_secs(), 3600);
    }

    #[test]
    fn the_wait_is_anywhere_from_zero_to_the_ceiling() {
        let policy = RetryPolicy::new(DAY);
        let at = |random| policy.after_failure(3, 1_000_000, 0, None, random);
        assert_eq!(at(0), Next::At(1_000_000));
        assert_eq!(at(40_000), Next::At(1_040_000), "the ceiling itself");
        assert_eq!(at(40_001), Next::At(1_000_000), "wraps around");
        assert_eq!(at(12_345), Next::At(1_012_345));
    }

    #[test]
    fn retry_after_is_a_floor() {
        let policy = RetryPolicy::new(DAY);
        let later = policy.after_failure(1, 0, 0, Some(Duration::from_secs(120)), 5_000);
        assert_eq!(later, Next::At(120_000), "past the ceiling of 10 s");
        let sooner = policy.after_failure(1, 0, 0, Some(Duration::from_secs(1)), 5_000);
        assert_eq!(sooner, Next::At(5_000), "the jittered wait when it is longer");
    }

    #[test]
    fn the_last_try_is_at_the_horizon_and_its_failure_is_final() {
        let policy = RetryPolicy::new(Duration::from_secs(3600));
        let near_end = policy.after_failure(9, 3_500_000, 0, None, 2_000_000);
        assert_eq!(near_end, Next::At(3_600_000), "clamped to the horizon");
        assert_eq!(policy.after_failure(10, 3_600_000, 0, None, 0), Next::Dead);
        // A redelivered event counts from its redelivery.
        assert_eq!(policy.after_failure(1, 3_600_000, 3_000_000, None, 0), Next::At(3_600_000));
    }
}
