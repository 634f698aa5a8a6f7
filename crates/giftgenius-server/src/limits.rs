//! Usage limits per account: suggestions per UTC day, order drafts and checkout links per
//! hour, so no script can use up the catalogs, drain stock or fill the disk. Counted in the
//! database with one atomic statement per call, so replicas share them exactly; a limit of 0
//! turns it off. Whose budget a call uses is its `CallContext::subject`.

use giftgenius_types::{ErrorCode, ToolError};

use crate::clock::Clock;
use crate::context::CallContext;
use crate::error::internal;
use crate::store::{Store, Usage};

pub const DAY_MS: i64 = 86_400_000;
pub const HOUR_MS: i64 = 3_600_000;

/// The limits and where they are counted.
#[derive(Debug, Clone)]
pub struct Limits {
    pub store: Store,
    pub clock: Clock,
    /// suggest_gifts calls per account per UTC day.
    pub daily_suggestions: u32,
    /// prepare_order calls per account per hour.
    pub hourly_drafts: u32,
    /// create_checkout_session calls per account per hour.
    pub hourly_checkout_sessions: u32,
}

/// One counted use, to give back if the call delivered nothing.
#[derive(Debug, Clone, Copy)]
pub struct Taken {
    usage: Usage,
    period: i64,
}

fn period_ms(usage: Usage) -> i64 {
    match usage {
        Usage::Suggestions => DAY_MS,
        Usage::Drafts | Usage::CheckoutSessions => HOUR_MS,
    }
}

/// Milliseconds from `now_ms` to the start of the next period of `length_ms` (never 0).
pub fn ms_until_next_period(now_ms: i64, length_ms: i64) -> u64 {
    let next = (now_ms.div_euclid(length_ms) + 1) * length_ms;
    (next - now_ms) as u64
}

impl Limits {
    fn limit(&self, usage: Usage) -> u32 {
        match usage {
            Usage::Suggestions => self.daily_suggestions,
            Usage::Drafts => self.hourly_drafts,
            Usage::CheckoutSessions => self.hourly_checkout_sessions,
        }
    }

    /// Counts one `usage` for the call's account; `Ok(None)` when the limit is off, a business
    /// error (with `retry_after_ms` to the next period) when it is used up.
    pub async fn take(&self, call: &CallContext, usage: Usage) -> Result<Option<Taken>, ToolError> {
        let limit = self.limit(usage);
        if limit == 0 {
            return Ok(None);
        }
        let now = self.clock.now_ms();
        let length = period_ms(usage);
        let period = now.div_euclid(length);
        let counted = self
            .store
            .take_usage(&call.subject, usage, period, i64::from(limit))
            .await
            .map_err(|e| internal(call, &e))?;
        if counted {
            return Ok(Some(Taken { usage, period }));
        }
        tracing::info!(usage = usage.as_str(), limit, "usage limit reached");
        let (code, message) = match usage {
            Usage::Suggestions => (
                ErrorCode::DailyLimitExceeded,
                format!("The daily limit of {limit} gift suggestions is reached; it resets at midnight UTC."),
            ),
            Usage::Drafts => (
                ErrorCode::HourlyLimitExceeded,
                format!("The limit of {limit} order drafts per hour is reached; it resets at the top of the hour."),
            ),
            Usage::CheckoutSessions => (
                ErrorCode::HourlyLimitExceeded,
                format!("The limit of {limit} checkout links per hour is reached; it resets at the top of the hour."),
            ),
        };
        Err(ToolError::new(code, message, &call.reference).with_retry_after_ms(ms_until_next_period(now, length)))
    }

    /// Gives a use back: the call delivered nothing (every catalog failed, say).
    pub async fn give_back(&self, call: &CallContext, taken: Option<Taken>) {
        let Some(Taken { usage, period }) = taken else { return };
        if let Err(e) = self.store.give_back_usage(&call.subject, usage, period).await {
            tracing::warn!(error = %e, usage = usage.as_str(), "could not give back a counted use");
        }
    }

    /// Deletes counters no limit reads any more (keeping the previous period for support).
    pub async fn prune(&self) {
        let now = self.clock.now_ms();
        for usage in [Usage::Suggestions, Usage::Drafts, Usage::CheckoutSessions] {
            let current = now.div_euclid(period_ms(usage));
            if let Err(e) = self.store.prune_usage(usage, current - 1).await {
                tracing::warn!(error = %e, usage = usage.as_str(), "pruning usage counters failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_reset_at_the_next_utc_midnight_or_hour() {
        assert_eq!(ms_until_next_period(0, DAY_MS), 86_400_000);
        assert_eq!(ms_until_next_period(DAY_MS - 1, DAY_MS), 1);
        assert_eq!(ms_until_next_period(DAY_MS + 1_000, DAY_MS), 86_399_000);
        assert_eq!(ms_until_next_period(HOUR_MS + 1_000, HOUR_MS), 3_599_000);
    }
}
