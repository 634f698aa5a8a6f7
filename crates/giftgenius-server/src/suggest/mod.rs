//! `suggest_gifts`: count the call against the account's daily limit, ask every catalog source,
//! rank what arrived, and describe the result (with `partial` when some sources failed).
//!
//! The gifts, the sources (built-in and HTTP) and the ranking are the `giftgenius-catalog`
//! crate's; this module adapts them to the tool: the limit, the errors, the model's text.

use giftgenius_catalog::Catalog;
use giftgenius_catalog::sources::Sources;
use giftgenius_types::{ErrorCode, Partial, SuggestGiftsData, SuggestGiftsInput, SuggestGiftsQuery, ToolError};

use crate::context::CallContext;
use crate::limits::Limits;
use crate::outcome::{Answer, ModelText, Outcome};
use giftgenius_commerce::store::Usage;

/// How long to wait before retrying when every catalog source failed.
pub const UPSTREAM_RETRY_AFTER_MS: u64 = 2_000;

/// The `suggest_gifts` service: the catalog sources and the daily limit.
pub struct Suggester {
    pub sources: Sources,
    pub limits: Limits,
    pub public_url: String,
}

impl std::fmt::Debug for Suggester {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Suggester")
            .field("sources", &self.sources.sources().len())
            .field("daily_limit", &self.limits.daily_suggestions)
            .finish_non_exhaustive()
    }
}

/// Ranks `catalogs` together for `query` ([`giftgenius_catalog::ranked`]) as the tool's answer.
/// "Nothing found" is a successful, empty answer with a notice.
pub fn ranked(
    catalogs: &[std::sync::Arc<Catalog>],
    query: SuggestGiftsQuery,
    about: Option<&str>,
    public_url: &str,
) -> Answer<SuggestGiftsData> {
    let giftgenius_catalog::Suggested { data, notice } = giftgenius_catalog::ranked(catalogs, query, about, public_url);
    Answer { notice, ..Answer::new(data) }
}

impl Suggester {
    /// Runs a validated request: the daily limit first, then every source.
    pub async fn suggest(&self, call: &CallContext, input: &SuggestGiftsInput) -> Outcome<SuggestGiftsData> {
        self.run(call, input).await.into()
    }

    async fn run(&self, call: &CallContext, input: &SuggestGiftsInput) -> Result<Answer<SuggestGiftsData>, ToolError> {
        // `attempted` echoes the query, which has no `about`: the input's free text stays here.
        let query = input.normalize();
        let attempted = || serde_json::to_value(&query).unwrap_or_default();

        let taken = self.limits.take(call, Usage::Suggestions).await.map_err(|e| e.with_attempted(attempted()))?;

        let gathered = self.sources.gather().await;
        if gathered.all_failed() {
            // Nothing was delivered, so the call does not count against the limit.
            self.limits.give_back(call, taken).await;
            let all_timed_out = gathered.failed.iter().all(|f| f.code == ErrorCode::UpstreamTimeout);
            let (code, message) = if all_timed_out {
                (ErrorCode::UpstreamTimeout, format!("None of the {} gift catalogs answered in time.", gathered.asked))
            } else {
                (
                    ErrorCode::UpstreamUnavailable,
                    format!("None of the {} gift catalogs could be used right now.", gathered.asked),
                )
            };
            return Err(ToolError::new(code, message, &call.reference)
                .with_attempted(attempted())
                .with_retry_after_ms(UPSTREAM_RETRY_AFTER_MS));
        }

        let mut answer = ranked(&gathered.catalogs, query, input.about(), &self.public_url);
        if !gathered.failed.is_empty() {
            let names: Vec<&str> = gathered.failed.iter().map(|f| f.source.as_str()).collect();
            answer.partial = Some(Partial {
                message: format!(
                    "{} of {} gift catalogs failed, so these results leave out {}.",
                    gathered.failed.len(),
                    gathered.asked,
                    names.join(", ")
                ),
                failed_sources: gathered.failed,
            });
        }
        Ok(answer)
    }
}

/// The text the model reads: a compact list it can talk about without the widget.
impl ModelText for SuggestGiftsData {
    fn model_text(answer: &Answer<Self>) -> String {
        let Answer { data, notice, partial, .. } = answer;
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
                    gift.reasons.iter().map(|r| r.text.as_str()).collect::<Vec<_>>().join("; ")
                ));
            }
        }
        if let Some(notice) = notice {
            out.push_str(&format!("\nNote: {}", notice.message));
            for s in &notice.suggestions {
                out.push_str(&format!(
                    "\n- {} (set {})",
                    s.message,
                    serde_json::Value::Object(s.set_arguments.clone())
                ));
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
}
