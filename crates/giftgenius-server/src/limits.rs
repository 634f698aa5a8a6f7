//! Usage limits per account: suggestions per UTC day, order drafts, checkout links and payment
//! lookups per hour, so no script can use up the catalogs, drain stock, fill the disk or spend
//! the merchant's rate limit at the payment provider (a signed-in caller has left the
//! per-address limit, `web/rate_limit.rs`). A limit of 0 turns it off. Whose budget a call
//! uses is its `CallContext::subject`; the card page's, the Stripe Customer its link is for; a
//! sheet payment's, the account and the draft.
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
//!
//! The counts in memory are bounded: at most [`MAX_COUNTED_ACCOUNT_DAYS`] (account, day) pairs,
//! the least recently used settled one forgotten first (its total is in the database, so
//! forgetting it costs one read when it comes back). Pairs with unwritten counts are never
//! forgotten; when none of the oldest is settled, a new pair first writes every count.

use std::collections::hash_map::RandomState;
use std::sync::Mutex;
use std::time::Duration;

use hashlink::LinkedHashMap;

use giftgenius_types::{ErrorCode, ToolError};

use crate::context::CallContext;
use crate::error::internal;
use giftgenius_commerce::clock::Clock;
use giftgenius_commerce::store::{Store, Usage};

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
    /// reopen_order_draft, remove_saved_card and card page loads per account per hour.
    pub hourly_payment_lookups: u32,
    /// complete_checkout calls per account per draft per hour.
    pub hourly_sheet_payments: u32,
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

/// (account, day) pairs counted in memory at most (about 100 bytes each: 10 MB at the bound).
pub const MAX_COUNTED_ACCOUNT_DAYS: usize = 100_000;

/// How many of the least recently used pairs are looked at for a settled one to forget.
const EVICTION_SCAN: usize = 64;

type CountMap = LinkedHashMap<(String, i64), Count, RandomState>;

/// Suggestions counted in memory and written in batches.
#[derive(Debug)]
pub struct SuggestionCounts {
    /// Least recently used first. SipHash with a random key: signed-out subjects come from
    /// client addresses.
    counts: Mutex<CountMap>,
    /// At most this many entries in `counts`.
    bound: usize,
    /// One flush at a time: a call waiting for its account's write waits for the flush in
    /// progress instead of starting another (or spinning).
    flushing: tokio::sync::Mutex<()>,
}

impl Default for SuggestionCounts {
    fn default() -> Self {
        SuggestionCounts::bounded(MAX_COUNTED_ACCOUNT_DAYS)
    }
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
    /// The table is at its bound and the oldest pairs all hold unwritten counts: write every
    /// count (settling them), then ask again.
    FlushAll,
}

impl Count {
    /// Nothing unwritten and nothing being written: the database knows all of it.
    fn settled(&self) -> bool {
        self.pending == 0 && self.in_flight == 0
    }
}

impl SuggestionCounts {
    fn bounded(bound: usize) -> Self {
        SuggestionCounts {
            counts: Mutex::new(LinkedHashMap::with_hasher(RandomState::new())),
            bound: bound.max(1),
            flushing: tokio::sync::Mutex::new(()),
        }
    }

    fn counts(&self) -> std::sync::MutexGuard<'_, CountMap> {
        self.counts.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Makes room for one more pair: forgets the least recently used settled one among the
    /// oldest [`EVICTION_SCAN`]; `false` when none of them is settled.
    fn make_room(counts: &mut CountMap, bound: usize) -> bool {
        if counts.len() < bound {
            return true;
        }
        let oldest_settled =
            counts.iter().take(EVICTION_SCAN).find(|(_, count)| count.settled()).map(|(key, _)| key.clone());
        oldest_settled.is_some_and(|key| counts.remove(&key).is_some())
    }

    fn admit(&self, subject: &str, period: i64, limit: i64, slack: i64) -> Admit {
        let mut counts = self.counts();
        let key = (subject.to_string(), period);
        if counts.to_back(&key).is_none() && !Self::make_room(&mut counts, self.bound) {
            return Admit::FlushAll;
        }
        let count = counts.entry(key).or_insert_with(Count::default);
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

    /// A forgotten pair was written already: its give-back is lost, one suggestion fewer for
    /// that account today, never one more.
    fn give_back(&self, subject: &str, period: i64) {
        if let Some(count) = self.counts().get_mut(&(subject.to_string(), period)) {
            count.pending -= 1;
        }
    }

    /// Takes the unwritten counts (of one account, or all), leaving them at zero.
    fn take_pending(&self, only: Option<(&str, i64)>) -> Vec<((String, i64), i64)> {
        let mut counts = self.counts();
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

    /// A pair with counts in flight is never forgotten; one that had none (a read of the total)
    /// may have been, and then there is nothing to record.
    fn written(&self, key: (String, i64), delta: i64, total: i64) {
        if let Some(count) = self.counts().get_mut(&key) {
            count.stored = total;
            count.in_flight -= delta;
            count.known = true;
        }
    }

    fn unwritten(&self, key: (String, i64), delta: i64) {
        if let Some(count) = self.counts().get_mut(&key) {
            count.in_flight -= delta;
            count.pending += delta;
        }
    }

    /// Forgets settled accounts of days before `period` (they are in the database).
    fn forget_before(&self, period: i64) {
        self.counts().retain(|(_, p), count| *p >= period || count.pending != 0);
    }
}

fn period_ms(usage: Usage) -> i64 {
    match usage {
        Usage::Suggestions => DAY_MS,
        Usage::Drafts | Usage::CheckoutSessions | Usage::PaymentLookups | Usage::SheetPayments => HOUR_MS,
    }
}

/// Whose counter a sheet payment of `draft_id` by `subject` takes: one per account and draft.
/// The draft id (`drf_` and hex, no `/`) goes first, so no two (account, draft) pairs share it.
fn sheet_payment_counter(subject: &str, draft_id: &str) -> String {
    format!("{draft_id}/{subject}")
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
            Usage::PaymentLookups => self.hourly_payment_lookups,
            Usage::SheetPayments => self.hourly_sheet_payments,
        }
    }

    /// Counts one `usage` for the call's account; `Ok(None)` when the limit is off, a business
    /// error (with `retry_after_ms` to the next period) when it is used up.
    pub async fn take(&self, call: &CallContext, usage: Usage) -> Result<Option<Taken>, ToolError> {
        self.take_as(call, &call.subject, usage).await
    }

    /// Counts one `complete_checkout` of `draft_id` for the call's account (every attempt, before
    /// the provider is asked anything): the bound on how many tokens one account can try on one
    /// draft. Never given back.
    pub async fn take_sheet_payment(&self, call: &CallContext, draft_id: &str) -> Result<(), ToolError> {
        let counter = sheet_payment_counter(&call.subject, draft_id);
        self.take_as(call, &counter, Usage::SheetPayments).await.map(|_| ())
    }

    /// [`Limits::take`] on the counter of `counter` (the account, or the account and a draft).
    async fn take_as(&self, call: &CallContext, counter: &str, usage: Usage) -> Result<Option<Taken>, ToolError> {
        let limit = self.limit(usage);
        if limit == 0 {
            return Ok(None);
        }
        let now = self.clock.now_ms();
        let length = period_ms(usage);
        let period = now.div_euclid(length);
        let counted = match usage {
            Usage::Suggestions => self.count_suggestion(call, period, limit).await?,
            Usage::Drafts | Usage::CheckoutSessions | Usage::PaymentLookups | Usage::SheetPayments => {
                self.store.take_usage(counter, usage, period, i64::from(limit)).await.map_err(|e| internal(call, &e))?
            }
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
            Usage::PaymentLookups => (
                ErrorCode::HourlyLimitExceeded,
                format!(
                    "The limit of {limit} saved-card lookups per hour (reopening drafts, removing the card) is \
                     reached; it resets at the top of the hour."
                ),
            ),
            Usage::SheetPayments => (
                ErrorCode::HourlyLimitExceeded,
                format!(
                    "The limit of {limit} payment attempts per order draft per hour is reached; nothing was charged. \
                     It resets at the top of the hour."
                ),
            ),
        };
        Err(ToolError::new(code, message, &call.reference).with_retry_after_ms(ms_until_next_period(now, length)))
    }

    /// Counts one payment lookup of `account` outside a tool call (the card page): `Ok(None)`
    /// when counted or the limit is off, `Ok(Some(wait))` when used up until the next hour.
    pub async fn take_page_lookup(&self, account: &str) -> giftgenius_commerce::store::StoreResult<Option<Duration>> {
        let limit = self.hourly_payment_lookups;
        if limit == 0 {
            return Ok(None);
        }
        let now = self.clock.now_ms();
        let period = now.div_euclid(HOUR_MS);
        let counted = self.store.take_usage(account, Usage::PaymentLookups, period, i64::from(limit)).await?;
        Ok((!counted).then(|| Duration::from_millis(ms_until_next_period(now, HOUR_MS))))
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
                Admit::FlushAll => self.flush_suggestions(None).await.map_err(|e| internal(call, &e))?,
            }
        }
    }

    /// Writes the suggestions counted here (of one account, or all) and learns each account's
    /// total across replicas. A failed write keeps the counts for the next flush.
    async fn flush_suggestions(&self, only: Option<(&str, i64)>) -> giftgenius_commerce::store::StoreResult<()> {
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
        for usage in
            [Usage::Suggestions, Usage::Drafts, Usage::CheckoutSessions, Usage::PaymentLookups, Usage::SheetPayments]
        {
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

    /// Admits one suggestion for `subject` today, reading its total (0) first if needed.
    fn admit_settled(counts: &SuggestionCounts, subject: &str) {
        if let Admit::FlushFirst = counts.admit(subject, 1, 100, 5) {
            for (key, delta) in counts.take_pending(Some((subject, 1))) {
                counts.written(key, delta, 0);
            }
        }
    }

    fn subjects(counts: &SuggestionCounts) -> Vec<String> {
        counts.counts().keys().map(|(s, _)| s.clone()).collect()
    }

    #[test]
    fn the_counts_keep_at_most_their_bound_forgetting_the_least_recently_used_settled_pair() {
        let counts = SuggestionCounts::bounded(3);
        for subject in ["a", "b", "c"] {
            admit_settled(&counts, subject);
            for (key, delta) in counts.take_pending(None) {
                counts.written(key, delta, delta);
            }
        }
        admit_settled(&counts, "a"); // used again: now the most recent
        for (key, delta) in counts.take_pending(None) {
            counts.written(key, delta, delta);
        }
        for subject in ["d", "e"] {
            admit_settled(&counts, subject);
            for (key, delta) in counts.take_pending(None) {
                counts.written(key, delta, delta);
            }
            assert_eq!(counts.counts().len(), 3, "never more than the bound");
        }
        assert_eq!(subjects(&counts), ["a", "d", "e"], "b, then c, went first");
    }

    #[test]
    fn a_pair_with_unwritten_counts_is_never_forgotten_a_new_one_writes_first() {
        let counts = SuggestionCounts::bounded(2);
        for subject in ["a", "b"] {
            admit_settled(&counts, subject);
            assert!(matches!(counts.admit(subject, 1, 100, 5), Admit::Yes), "counted, not written");
        }
        assert!(matches!(counts.admit("c", 1, 100, 5), Admit::FlushAll));
        assert_eq!(subjects(&counts), ["a", "b"]);
        for (key, delta) in counts.take_pending(None) {
            counts.written(key, delta, delta);
        }
        admit_settled(&counts, "c");
        assert_eq!(subjects(&counts), ["b", "c"]);
    }

    #[test]
    fn limits_reset_at_the_next_utc_midnight_or_hour() {
        assert_eq!(ms_until_next_period(0, DAY_MS), 86_400_000);
        assert_eq!(ms_until_next_period(DAY_MS - 1, DAY_MS), 1);
        assert_eq!(ms_until_next_period(DAY_MS + 1_000, DAY_MS), 86_399_000);
        assert_eq!(ms_until_next_period(HOUR_MS + 1_000, HOUR_MS), 3_599_000);
    }
}
