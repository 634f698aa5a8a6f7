//! `suggest_gifts`: check the caller's daily limit, ask every catalog source, rank what
//! arrived, and describe the result (with `partial` when some sources failed).

use std::sync::Arc;

use giftgenius_types::{
    Envelope, ErrorCode, Partial, SuggestGiftsData, SuggestGiftsInput, SuggestGiftsQuery, ToolError, ToolName,
};

use crate::catalog::sources::Sources;
use crate::catalog::{Catalog, rank};
use crate::clock::Clock;
use crate::store::Store;

const DAY_MS: i64 = 86_400_000;

/// How long to wait before retrying when every catalog source failed.
pub const UPSTREAM_RETRY_AFTER_MS: u64 = 2_000;

/// Runs a validated request. "Nothing found" is a successful, empty result with a notice.
pub fn suggest_gifts(catalog: &Catalog, input: &SuggestGiftsInput, public_url: &str) -> Envelope<SuggestGiftsData> {
    ranked(catalog, input.normalize(), public_url)
}

fn ranked(catalog: &Catalog, query: SuggestGiftsQuery, public_url: &str) -> Envelope<SuggestGiftsData> {
    let ranked = rank(catalog.gifts(), &query);
    let gifts =
        ranked.gifts.into_iter().map(|(gift, reasons)| gift.card(query.currency, reasons, public_url)).collect();
    Envelope::Ok {
        tool: ToolName::SuggestGifts,
        data: SuggestGiftsData { query, gifts },
        notice: ranked.notice,
        partial: None,
    }
}

/// The `suggest_gifts` service: sources, the daily limit and its store.
pub struct Suggester {
    pub sources: Sources,
    pub store: Arc<dyn Store>,
    pub clock: Clock,
    /// Calls per subject per UTC day; 0 = unlimited.
    pub daily_limit: u32,
    pub public_url: String,
}

impl std::fmt::Debug for Suggester {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Suggester")
            .field("sources", &self.sources.sources().len())
            .field("daily_limit", &self.daily_limit)
            .finish_non_exhaustive()
    }
}

/// Milliseconds from `now_ms` to the next UTC midnight (never 0).
pub fn ms_until_next_utc_day(now_ms: i64) -> u64 {
    let next = (now_ms.div_euclid(DAY_MS) + 1) * DAY_MS;
    (next - now_ms) as u64
}

impl Suggester {
    /// Runs a validated request for `subject`: the daily limit first, then every source.
    pub async fn suggest(
        &self,
        subject: &str,
        input: &SuggestGiftsInput,
        reference: &str,
    ) -> Envelope<SuggestGiftsData> {
        let query = input.normalize();
        let attempted = || serde_json::to_value(&query).unwrap_or_default();
        let err = |error: ToolError| Envelope::err(ToolName::SuggestGifts, error);

        let now_ms = self.clock.now_ms();
        let day = now_ms.div_euclid(DAY_MS);
        let counted = if self.daily_limit > 0 {
            match self.store.take_daily_suggestion(subject, day, i64::from(self.daily_limit)).await {
                Ok(true) => true,
                Ok(false) => {
                    tracing::info!(reference, subject, limit = self.daily_limit, "daily suggestion limit reached");
                    return err(ToolError::new(
                        ErrorCode::DailyLimitExceeded,
                        format!(
                            "The daily limit of {} gift suggestions is reached; it resets at midnight UTC.",
                            self.daily_limit
                        ),
                        reference,
                    )
                    .with_attempted(attempted())
                    .with_retry_after_ms(ms_until_next_utc_day(now_ms)));
                }
                Err(e) => {
                    return err(crate::error::internal(reference, ToolName::SuggestGifts.as_str(), &e)
                        .with_attempted(attempted()));
                }
            }
        } else {
            false
        };

        let gathered = self.sources.gather(reference).await;
        if gathered.all_failed() {
            // Nothing was delivered, so the call does not count against the limit.
            if counted && let Err(e) = self.store.give_back_daily_suggestion(subject, day).await {
                tracing::warn!(reference, error = %e, "could not give back a daily suggestion");
            }
            let all_timed_out = gathered.failed.iter().all(|f| f.code == ErrorCode::UpstreamTimeout);
            let (code, message) = if all_timed_out {
                (ErrorCode::UpstreamTimeout, format!("None of the {} gift catalogs answered in time.", gathered.asked))
            } else {
                (
                    ErrorCode::UpstreamUnavailable,
                    format!("None of the {} gift catalogs could be used right now.", gathered.asked),
                )
            };
            return err(ToolError::new(code, message, reference)
                .with_attempted(attempted())
                .with_retry_after_ms(UPSTREAM_RETRY_AFTER_MS));
        }

        let mut envelope = ranked(&gathered.catalog, query, &self.public_url);
        if !gathered.failed.is_empty()
            && let Envelope::Ok { partial, .. } = &mut envelope
        {
            let names: Vec<&str> = gathered.failed.iter().map(|f| f.source.as_str()).collect();
            *partial = Some(Partial {
                message: format!(
                    "{} of {} gift catalogs failed, so these results leave out {}.",
                    gathered.failed.len(),
                    gathered.asked,
                    names.join(", ")
                ),
                failed_sources: gathered.failed,
            });
        }
        envelope
    }
}

/// The text the model reads: a compact list it can talk about without the widget.
pub fn summary(envelope: &Envelope<SuggestGiftsData>) -> String {
    let Envelope::Ok { data, notice, partial, .. } = envelope else {
        return String::new();
    };
    let mut out = String::new();
    if data.gifts.is_empty() {
        out.push_str("No gifts matched.");
    } else {
        out.push_str(&format!(
            "{} gift suggestion(s), best first (the widget shows them as cards):\n",
            data.gifts.len()
        ));
        for (i, gift) in data.gifts.iter().enumerate() {
            out.push_str(&format!(
                "{}. {} ({}), {} from {}: {}\n",
                i + 1,
                gift.title,
                gift.id,
                gift.price.display(),
                gift.merchant.name,
                gift.reasons.join("; ")
            ));
        }
    }
    if let Some(notice) = notice {
        out.push_str(&format!("\nNote: {}", notice.message));
        for s in &notice.suggestions {
            out.push_str(&format!("\n- {} (set {})", s.message, serde_json::Value::Object(s.set_arguments.clone())));
        }
    }
    if let Some(partial) = partial {
        out.push_str(&format!("\nPartial results: {}", partial.message));
        for failed in &partial.failed_sources {
            out.push_str(&format!("\n- {} {} ({})", failed.source, failed.message, failed.code));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daily_limit_resets_at_the_next_utc_midnight() {
        assert_eq!(ms_until_next_utc_day(0), 86_400_000);
        assert_eq!(ms_until_next_utc_day(86_400_000 - 1), 1);
        assert_eq!(ms_until_next_utc_day(86_400_000 + 1_000), 86_399_000);
    }
}
