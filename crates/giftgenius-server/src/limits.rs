//! Usage limits per account: suggestions per UTC day, order drafts and checkout links per
//! hour, so no script can use up the catalogs, drain stock or fill the disk. A limit of 0 turns
//! it off. Whose budget a call uses is its `CallContext::subject`.
//!
//! Drafts and checkout links are counted in the database with one atomic statement per call
//! (those calls write anyway), so replicas share them exactly. Suggestions are read-only and
//! the hot path, so they are counted in this process and written in batches
//! ([`SuggestionCounts`]): no database write per suggestion, one per account per flush
//! (`--usage-flush-ms`). The bound, stated where it is kept: one replica enforces the limit
//! exactly, across restarts too (an account's first suggestion of the day in a process reads its
//! total); with R replicas an account can get at most `R × slack` suggestions past the limit
//! in a day (each replica admits at most `slack` calls it has not written yet, and learns the
//! others' counts at each flush); a replica killed with -9 loses at most `slack` unwritten
//! counts. `slack` is a twentieth of the limit, between 1 and 50.

use std::collections::HashMap;
use std::sync::Mutex;

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
    /// Suggestions counted here and not yet written (shared by clones).
    pub suggestion_counts: std::sync::Arc<SuggestionCounts>,
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

/// One account's suggestions in one day, as this process knows them.
#[derive(Debug, Default, Clone, Copy)]
struct Count {
    /// The database's total at the last write or read (all replicas).
    stored: i64,
    /// Counted here since, not written yet (negative after give-backs).
    pending: i64,
    /// Being written right now (taken from `pending` by a flush that has not finished).
    in_flight: i64,
    /// Whether `stored` has been read at all: the first suggestion of an account in a day, per
    /// process, reads its total (one write-or-read per account per day, not per call), so a
    /// restarted server does not start the day over.
    known: bool,
}

/// Suggestions counted in memory and written in batches.
#[derive(Debug, Default)]
pub struct SuggestionCounts {
    counts: Mutex<HashMap<(String, i64), Count>>,
    /// One flush at a time: a call waiting for its account's write waits for the flush in
    /// progress instead of starting another (or spinning).
    flushing: tokio::sync::Mutex<()>,
}

/// How many unwritten suggestions one account may have on one replica (see the module doc).
pub fn slack(limit: u32) -> i64 {
    i64::from(limit / 20).clamp(1, 50)
}

enum Admit {
    Yes,
    No,
    /// This replica holds `slack` unwritten counts, or has not read the account's total yet:
    /// write (or read) first, then ask again.
    FlushFirst,
}

impl SuggestionCounts {
    fn admit(&self, subject: &str, period: i64, limit: i64, slack: i64) -> Admit {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let count = counts.entry((subject.to_string(), period)).or_default();
        if !count.known {
            Admit::FlushFirst
        } else if count.stored + count.in_flight + count.pending >= limit {
            Admit::No
        } else if count.pending + count.in_flight >= slack {
            Admit::FlushFirst
        } else {
            count.pending += 1;
            Admit::Yes
        }
    }

    fn give_back(&self, subject: &str, period: i64) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.entry((subject.to_string(), period)).or_default().pending -= 1;
    }

    /// Takes the unwritten counts (of one account, or all), leaving them at zero.
    fn take_pending(&self, only: Option<(&str, i64)>) -> Vec<((String, i64), i64)> {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        for (key, count) in counts.iter_mut() {
            if (count.pending != 0 || !count.known) && only.is_none_or(|(s, p)| key.0 == s && key.1 == p) {
                out.push((key.clone(), count.pending));
                count.in_flight += count.pending;
                count.pending = 0;
            }
        }
        out
    }

    fn written(&self, key: (String, i64), delta: i64, total: i64) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let count = counts.entry(key).or_default();
        count.stored = total;
        count.in_flight -= delta;
        count.known = true;
    }

    fn unwritten(&self, key: (String, i64), delta: i64) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let count = counts.entry(key).or_default();
        count.in_flight -= delta;
        count.pending += delta;
    }

    /// Forgets settled accounts of days before `period` (they are in the database).
    fn forget_before(&self, period: i64) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts.retain(|(_, p), count| *p >= period || count.pending != 0);
    }
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
        let counted = match usage {
            Usage::Suggestions => self.count_suggestion(call, period, limit).await?,
            Usage::Drafts | Usage::CheckoutSessions => self
                .store
                .take_usage(&call.subject, usage, period, i64::from(limit))
                .await
                .map_err(|e| internal(call, &e))?,
        };
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

    /// One suggestion counted in memory; waits for a write only when this account already has
    /// `slack` unwritten suggestions on this replica.
    async fn count_suggestion(&self, call: &CallContext, period: i64, limit: u32) -> Result<bool, ToolError> {
        let (limit, slack) = (i64::from(limit), slack(limit));
        loop {
            match self.suggestion_counts.admit(&call.subject, period, limit, slack) {
                Admit::Yes => return Ok(true),
                Admit::No => return Ok(false),
                Admit::FlushFirst => {
                    self.flush_suggestions(Some((&call.subject, period))).await.map_err(|e| internal(call, &e))?
                }
            }
        }
    }

    /// Writes the suggestions counted here (of one account, or all) and learns each account's
    /// total across replicas. A failed write keeps the counts for the next flush.
    async fn flush_suggestions(&self, only: Option<(&str, i64)>) -> crate::store::StoreResult<()> {
        let _one_at_a_time = self.suggestion_counts.flushing.lock().await;
        let mut first_error = None;
        for (key, delta) in self.suggestion_counts.take_pending(only) {
            match self.store.add_usage(&key.0, Usage::Suggestions, key.1, delta).await {
                Ok(total) => self.suggestion_counts.written(key, delta, total),
                Err(e) => {
                    self.suggestion_counts.unwritten(key, delta);
                    first_error.get_or_insert(e);
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Writes every unwritten suggestion count (on an interval, and when the server stops).
    pub async fn flush(&self) {
        if let Err(e) = self.flush_suggestions(None).await {
            tracing::warn!(error = %e, "could not write suggestion counts; they are kept for the next flush");
        }
        let today = self.clock.now_ms().div_euclid(DAY_MS);
        self.suggestion_counts.forget_before(today);
    }

    /// Gives a use back: the call delivered nothing (every catalog failed, say).
    pub async fn give_back(&self, call: &CallContext, taken: Option<Taken>) {
        let Some(Taken { usage, period }) = taken else { return };
        if usage == Usage::Suggestions {
            self.suggestion_counts.give_back(&call.subject, period);
            return;
        }
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
