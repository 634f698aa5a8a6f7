//! `suggest_gifts`: rank the catalog for a validated request and describe the result.

use giftgenius_types::{Envelope, SuggestGiftsData, SuggestGiftsInput, ToolName};

use crate::catalog::{Catalog, rank};

/// Runs a validated request. "Nothing found" is a successful, empty result with a notice.
pub fn suggest_gifts(catalog: &Catalog, input: &SuggestGiftsInput, public_url: &str) -> Envelope<SuggestGiftsData> {
    let query = input.normalize();
    let ranked = rank(catalog.gifts(), &query);
    let gifts = ranked.gifts.into_iter().map(|(gift, reasons)| gift.card(query.currency, reasons, public_url)).collect();
    Envelope::Ok {
        tool: ToolName::SuggestGifts,
        data: SuggestGiftsData { query, gifts },
        notice: ranked.notice,
        partial: None,
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
        out.push_str(&format!("{} gift suggestion(s), best first (the widget shows them as cards):\n", data.gifts.len()));
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
    }
    out
}
