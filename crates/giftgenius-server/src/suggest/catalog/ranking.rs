//! Deterministic ranking of catalog gifts for a `suggest_gifts` query, with the reasons each
//! gift fits, and concrete suggestions when nothing matches.
//!
//! Hard filters: budget, recipient age, in stock, and (when interests are given) at least one
//! interest match. Everything else adds to a score. Ties break on the gift id, so the same
//! query always returns the same list.

use giftgenius_types::envelope::NoticeCode;
use giftgenius_types::gifts::SuggestGiftsQuery;
use giftgenius_types::{Money, Notice, RelationshipType, Suggestion};
use serde_json::{Map, Value, json};

use super::{CatalogGift, price_in};

/// The outcome of ranking: the best gifts with their reasons, and how many matched in all.
pub struct Ranked<'a> {
    pub gifts: Vec<(&'a CatalogGift, Vec<String>)>,
    pub total_matches: usize,
    pub notice: Option<Notice>,
}

/// Crude stemming so "hike", "hiking" and "hikes" meet; good enough for short interest words.
fn stem(word: &str) -> &str {
    for suffix in ["ing", "ers", "er", "es", "s"] {
        if let Some(stripped) = word.strip_suffix(suffix)
            && stripped.len() >= 3
        {
            return stripped;
        }
    }
    word
}

fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 3).map(|w| w.to_lowercase())
}

/// Whether the gift matches one interest: by tag first, else by a word of its title or description.
fn interest_match(gift: &CatalogGift, interest: &str) -> Option<bool> {
    let wanted: Vec<String> = words(interest).collect();
    if wanted.is_empty() {
        return None;
    }
    let stems: Vec<&str> = wanted.iter().map(|w| stem(w)).collect();
    let tag_hit = gift.tags.iter().any(|tag| tag.split('-').any(|part| stems.iter().any(|s| stem(part) == *s)));
    if tag_hit {
        return Some(true);
    }
    let text_hit = words(&gift.title).chain(words(&gift.description)).any(|w| stems.iter().any(|s| stem(&w) == *s));
    text_hit.then_some(false)
}

struct Scored<'a> {
    gift: &'a CatalogGift,
    score: i64,
    reasons: Vec<String>,
}

fn relationship_phrase(r: RelationshipType) -> String {
    match r {
        RelationshipType::Other => "anyone".into(),
        other => format!("a {}", other.as_str()),
    }
}

/// Scores one gift, or `None` when a hard filter excludes it.
fn score<'a>(gift: &'a CatalogGift, q: &SuggestGiftsQuery) -> Option<Scored<'a>> {
    if gift.stock == 0 {
        return None;
    }
    let price = price_in(gift.price_cents, q.currency);
    if q.budget_min.is_some_and(|min| price.amount_minor < min.amount_minor)
        || q.budget_max.is_some_and(|max| price.amount_minor > max.amount_minor)
    {
        return None;
    }
    if let Some(age) = q.age
        && (age < gift.age_min || age > gift.age_max)
    {
        return None;
    }
    let mut score = 0i64;
    let mut reasons = Vec::new();
    if !q.interests.is_empty() {
        let mut matched = Vec::new();
        for interest in &q.interests {
            match interest_match(gift, interest) {
                Some(true) => {
                    score += 10;
                    matched.push(interest.as_str());
                }
                Some(false) => {
                    score += 4;
                    matched.push(interest.as_str());
                }
                None => {}
            }
        }
        if matched.is_empty() {
            return None;
        }
        reasons.push(format!("Matches their interest in {}", matched.join(" and ")));
    }
    if gift.relationships.contains(&q.relationship_type) {
        score += 6;
        reasons.push(format!("A good pick for {}", relationship_phrase(q.relationship_type)));
    }
    if let Some(occasion) = q.occasion
        && gift.occasions.contains(&occasion)
    {
        score += 4;
        reasons.push(format!("Suits a {} gift", occasion.phrase()));
    }
    if let Some(age) = q.age {
        reasons.push(format!("Right for age {age}"));
    }
    match (q.budget_min, q.budget_max) {
        (Some(min), Some(max)) => reasons.push(format!("Within your {}–{} budget", min.display(), max.display())),
        (None, Some(max)) => reasons.push(format!("Under your {} budget", max.display())),
        (Some(min), None) => reasons.push(format!("Above your {} minimum", min.display())),
        (None, None) => {}
    }
    // Prefer gifts comfortably inside the budget over ones at its very edge.
    if let Some(max) = q.budget_max
        && price.amount_minor * 10 <= max.amount_minor * 9
    {
        score += 1;
    }
    if reasons.is_empty() {
        reasons.push("A popular, well-reviewed gift".into());
    }
    Some(Scored { gift, score, reasons })
}

fn matching<'a>(gifts: &'a [CatalogGift], q: &SuggestGiftsQuery) -> Vec<Scored<'a>> {
    gifts.iter().filter_map(|g| score(g, q)).collect()
}

/// Ranks `gifts` for the query. Deterministic: score, then id.
pub fn rank<'a>(gifts: &'a [CatalogGift], q: &SuggestGiftsQuery) -> Ranked<'a> {
    let mut scored = matching(gifts, q);
    scored.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.gift.id.cmp(&b.gift.id)));
    let total_matches = scored.len();
    let limit = q.limit.max(1) as usize;
    let notice = if total_matches == 0 {
        Some(no_match_notice(gifts, q))
    } else if total_matches < limit {
        Some(Notice {
            code: NoticeCode::FewMatches,
            message: format!(
                "Only {total_matches} gift(s) match; widening the budget or the interests would show more."
            ),
            suggestions: relaxations(gifts, q),
        })
    } else {
        None
    };
    let gifts = scored.into_iter().take(limit).map(|s| (s.gift, s.reasons)).collect();
    Ranked { gifts, total_matches, notice }
}

fn major(money: Money) -> Value {
    let exp = money.currency.exponent();
    if exp == 0 {
        json!(money.amount_minor)
    } else {
        let scale = 10i64.pow(exp);
        if money.amount_minor % scale == 0 {
            json!(money.amount_minor / scale)
        } else {
            json!(money.amount_minor as f64 / scale as f64)
        }
    }
}

/// Concrete changes to the query that are known to match, counted against the catalog.
fn relaxations(gifts: &[CatalogGift], q: &SuggestGiftsQuery) -> Vec<Suggestion> {
    let mut out = Vec::new();
    let mut push = |message: String, set: Map<String, Value>, matches: usize| {
        if matches > 0 {
            out.push(Suggestion { message, set_arguments: set, matches: matches as u32 });
        }
    };
    // Raise the budget ceiling to the price that makes enough gifts match.
    if q.budget_max.is_some() {
        let without_max = SuggestGiftsQuery { budget_max: None, ..q.clone() };
        let mut prices: Vec<i64> = matching(gifts, &without_max)
            .iter()
            .map(|s| price_in(s.gift.price_cents, q.currency).amount_minor)
            .collect();
        prices.sort_unstable();
        let want = (q.limit.max(1) as usize).min(prices.len());
        if want > 0 {
            let exp = q.currency.exponent();
            let unit = 10i64.pow(exp);
            // Round up to a whole number of major units (and to tens above 100) so it reads well.
            let step = if prices[want - 1] >= 100 * unit { 10 * unit } else { unit };
            let ceiling = (prices[want - 1] + step - 1) / step * step;
            let new_max = Money::new(ceiling, q.currency);
            let n = prices.iter().filter(|&&p| p <= ceiling).count();
            let mut set = Map::new();
            set.insert("budget_max".into(), major(new_max));
            push(format!("{n} gifts match if budget_max is {}", major(new_max)), set, n);
        }
    }
    if q.budget_min.is_some() {
        let n = matching(gifts, &SuggestGiftsQuery { budget_min: None, ..q.clone() }).len();
        let mut set = Map::new();
        set.insert("budget_min".into(), Value::Null);
        push(format!("{n} gifts match without budget_min"), set, n);
    }
    if !q.interests.is_empty() {
        if q.interests.len() > 1 {
            for interest in &q.interests {
                let only = SuggestGiftsQuery { interests: vec![interest.clone()], ..q.clone() };
                let n = matching(gifts, &only).len();
                let mut set = Map::new();
                set.insert("interests".into(), json!([interest]));
                push(format!("{n} gifts match with interests [\"{interest}\"] only"), set, n);
            }
        }
        let n = matching(gifts, &SuggestGiftsQuery { interests: vec![], ..q.clone() }).len();
        let mut set = Map::new();
        set.insert("interests".into(), json!([]));
        push(format!("{n} gifts match without the interests filter"), set, n);
    }
    if q.age.is_some() {
        let n = matching(gifts, &SuggestGiftsQuery { age: None, ..q.clone() }).len();
        let mut set = Map::new();
        set.insert("age".into(), Value::Null);
        push(format!("{n} gifts match without the age filter"), set, n);
    }
    out.truncate(4);
    out
}

fn no_match_notice(gifts: &[CatalogGift], q: &SuggestGiftsQuery) -> Notice {
    let suggestions = relaxations(gifts, q);
    let message = if suggestions.is_empty() {
        "No gifts match these conditions. Try different interests or a wider budget.".to_string()
    } else {
        format!("No gifts match these conditions. {}.", suggestions[0].message)
    };
    Notice { code: NoticeCode::NoMatches, message, suggestions }
}
