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

use super::{Catalog, CatalogGift, price_in};

/// Points an interest is worth when a tag matches it, or only the title or description.
pub(super) const POINTS_TAG: i64 = 10;
pub(super) const POINTS_TEXT: i64 = 4;
/// Points for the asked relationship, the asked occasion, and a price well inside the budget.
pub(super) const POINTS_RELATIONSHIP: i64 = 6;
pub(super) const POINTS_OCCASION: i64 = 4;
pub(super) const POINTS_BUDGET_ROOM: i64 = 1;

/// The outcome of ranking: the best gifts with their reasons, and how many matched in all.
pub struct Ranked<'a> {
    pub gifts: Vec<(&'a CatalogGift, Vec<String>)>,
    pub total_matches: usize,
    pub notice: Option<Notice>,
}

/// Crude stemming so "hike", "hiking" and "hikes" meet; good enough for short interest words.
pub(super) fn stem(word: &str) -> &str {
    for suffix in ["ing", "ers", "er", "es", "s"] {
        if let Some(stripped) = word.strip_suffix(suffix)
            && stripped.len() >= 3
        {
            return stripped;
        }
    }
    word
}

/// The words of a text that can match an interest: three bytes or more, lower-cased.
pub(super) fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 3).map(|w| w.to_lowercase())
}

/// The stems of a gift's tags: each part of a hyphenated tag on its own.
pub(super) fn tag_stems(tags: &[String]) -> impl Iterator<Item = &str> + '_ {
    tags.iter().flat_map(|tag| tag.split('-')).map(stem).filter(|s| !s.is_empty())
}

/// Whether the gift matches one interest: by tag first, else by a word of its title or description.
fn interest_match(gift: &CatalogGift, interest: &str) -> Option<bool> {
    let wanted: Vec<String> = words(interest).collect();
    if wanted.is_empty() {
        return None;
    }
    let stems: Vec<&str> = wanted.iter().map(|w| stem(w)).collect();
    let tag_hit = tag_stems(&gift.tags).any(|t| stems.contains(&t));
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
                    score += POINTS_TAG;
                    matched.push(interest.as_str());
                }
                Some(false) => {
                    score += POINTS_TEXT;
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
        score += POINTS_RELATIONSHIP;
        reasons.push(format!("A good pick for {}", relationship_phrase(q.relationship_type)));
    }
    if let Some(occasion) = q.occasion
        && gift.occasions.contains(&occasion)
    {
        score += POINTS_OCCASION;
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
        score += POINTS_BUDGET_ROOM;
    }
    if reasons.is_empty() {
        reasons.push("A popular, well-reviewed gift".into());
    }
    Some(Scored { gift, score, reasons })
}

/// Where the gifts matching a query come from: the index (what serving uses), or a scan of
/// every gift (the reference the index is tested against).
trait Matches {
    /// Calls `found(gift number, score)` for every gift that passes the hard filters.
    fn each(&self, q: &SuggestGiftsQuery, found: &mut dyn FnMut(usize, i64));
    fn gift(&self, n: usize) -> &CatalogGift;
    /// Whether gift `a` comes before gift `b` on a tie (id order).
    fn before(&self, a: usize, b: usize) -> bool;
}

impl Matches for Catalog {
    fn each(&self, q: &SuggestGiftsQuery, found: &mut dyn FnMut(usize, i64)) {
        self.index().each(q, found)
    }
    fn gift(&self, n: usize) -> &CatalogGift {
        &self.gifts()[n]
    }
    fn before(&self, a: usize, b: usize) -> bool {
        a < b // the catalog is sorted by id
    }
}

struct Linear<'a>(&'a [CatalogGift]);

impl Matches for Linear<'_> {
    fn each(&self, q: &SuggestGiftsQuery, found: &mut dyn FnMut(usize, i64)) {
        for (n, gift) in self.0.iter().enumerate() {
            if let Some(scored) = score(gift, q) {
                found(n, scored.score);
            }
        }
    }
    fn gift(&self, n: usize) -> &CatalogGift {
        &self.0[n]
    }
    fn before(&self, a: usize, b: usize) -> bool {
        self.0[a].id < self.0[b].id
    }
}

fn count(m: &dyn Matches, q: &SuggestGiftsQuery) -> usize {
    let mut n = 0;
    m.each(q, &mut |_, _| n += 1);
    n
}

/// Ranks the gifts of `catalogs` (no id in two of them) for the query through their indexes.
/// Deterministic: score, then id.
pub fn rank<'a>(catalogs: &[&'a Catalog], q: &SuggestGiftsQuery) -> Ranked<'a> {
    match catalogs {
        [one] => rank_with(one, q),
        parts => rank_union(Union::new(parts), q),
    }
}

/// Several catalogs as one: gift numbers run through them in order.
struct Union<'a> {
    parts: Vec<(&'a Catalog, usize)>,
}

impl<'a> Union<'a> {
    fn new(parts: &[&'a Catalog]) -> Self {
        let mut start = 0;
        let parts = parts
            .iter()
            .map(|c| {
                let at = start;
                start += c.len();
                (*c, at)
            })
            .collect();
        Union { parts }
    }

    fn locate(&self, n: usize) -> (&'a Catalog, usize) {
        let (catalog, start) =
            self.parts.iter().rev().find(|(_, start)| *start <= n).copied().unwrap_or((self.parts[0].0, 0));
        (catalog, n - start)
    }
}

impl Matches for Union<'_> {
    fn each(&self, q: &SuggestGiftsQuery, found: &mut dyn FnMut(usize, i64)) {
        for (catalog, start) in &self.parts {
            catalog.index().each(q, |n, score| found(start + n, score));
        }
    }
    fn gift(&self, n: usize) -> &CatalogGift {
        let (catalog, n) = self.locate(n);
        &catalog.gifts()[n]
    }
    fn before(&self, a: usize, b: usize) -> bool {
        self.gift(a).id < self.gift(b).id
    }
}

fn rank_union<'a>(union: Union<'a>, q: &SuggestGiftsQuery) -> Ranked<'a> {
    let (top, total_matches) = best(&union, q);
    let gifts: Vec<&'a CatalogGift> = top
        .into_iter()
        .map(|n| {
            let (catalog, n) = union.locate(n);
            &catalog.gifts()[n]
        })
        .collect();
    finish(gifts, total_matches, &union, q)
}

/// The same ranking by scoring every gift: the reference the index must agree with.
pub fn rank_linear<'a>(gifts: &'a [CatalogGift], q: &SuggestGiftsQuery) -> Ranked<'a> {
    rank_with_linear(Linear(gifts), q)
}

fn rank_with_linear<'a>(linear: Linear<'a>, q: &SuggestGiftsQuery) -> Ranked<'a> {
    let (top, total_matches) = best(&linear, q);
    finish(top.into_iter().map(|n| &linear.0[n]).collect(), total_matches, &linear, q)
}

fn rank_with<'a>(catalog: &'a Catalog, q: &SuggestGiftsQuery) -> Ranked<'a> {
    let (top, total_matches) = best(catalog, q);
    finish(top.into_iter().map(|n| &catalog.gifts()[n]).collect(), total_matches, catalog, q)
}

/// The `limit` best matches (score descending, then id) and how many matched in all, without
/// sorting every match.
fn best(m: &dyn Matches, q: &SuggestGiftsQuery) -> (Vec<usize>, usize) {
    let limit = q.limit.max(1) as usize;
    let mut top: Vec<(i64, usize)> = Vec::with_capacity(limit + 1);
    let mut total = 0;
    m.each(q, &mut |n, score| {
        total += 1;
        let ahead = |(s, other): &(i64, usize)| *s > score || (*s == score && m.before(*other, n));
        if top.len() == limit && top.last().is_some_and(&ahead) {
            return;
        }
        let at = top.iter().position(|entry| !ahead(entry)).unwrap_or(top.len());
        top.insert(at, (score, n));
        top.truncate(limit);
    });
    (top.into_iter().map(|(_, n)| n).collect(), total)
}

fn finish<'a>(top: Vec<&'a CatalogGift>, total_matches: usize, m: &dyn Matches, q: &SuggestGiftsQuery) -> Ranked<'a> {
    let limit = q.limit.max(1) as usize;
    let notice = if total_matches == 0 {
        Some(no_match_notice(m, q))
    } else if total_matches < limit {
        Some(Notice {
            code: NoticeCode::FewMatches,
            message: format!(
                "Only {total_matches} gift(s) match; widening the budget or the interests would show more."
            ),
            suggestions: relaxations(m, q),
        })
    } else {
        None
    };
    // Reasons only for the gifts shown: the same scoring the reference uses.
    let gifts = top.into_iter().filter_map(|gift| score(gift, q).map(|s| (s.gift, s.reasons))).collect();
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
fn relaxations(m: &dyn Matches, q: &SuggestGiftsQuery) -> Vec<Suggestion> {
    let mut out = Vec::new();
    let mut push = |message: String, set: Map<String, Value>, matches: usize| {
        if matches > 0 {
            out.push(Suggestion { message, set_arguments: set, matches: matches as u32 });
        }
    };
    // Raise the budget ceiling to the price that makes enough gifts match.
    if q.budget_max.is_some() {
        let without_max = SuggestGiftsQuery { budget_max: None, ..q.clone() };
        let mut prices: Vec<i64> = Vec::new();
        m.each(&without_max, &mut |n, _| prices.push(price_in(m.gift(n).price_cents, q.currency).amount_minor));
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
        let n = count(m, &SuggestGiftsQuery { budget_min: None, ..q.clone() });
        let mut set = Map::new();
        set.insert("budget_min".into(), Value::Null);
        push(format!("{n} gifts match without budget_min"), set, n);
    }
    if !q.interests.is_empty() {
        if q.interests.len() > 1 {
            for interest in &q.interests {
                let only = SuggestGiftsQuery { interests: vec![interest.clone()], ..q.clone() };
                let n = count(m, &only);
                let mut set = Map::new();
                set.insert("interests".into(), json!([interest]));
                push(format!("{n} gifts match with interests [\"{interest}\"] only"), set, n);
            }
        }
        let n = count(m, &SuggestGiftsQuery { interests: vec![], ..q.clone() });
        let mut set = Map::new();
        set.insert("interests".into(), json!([]));
        push(format!("{n} gifts match without the interests filter"), set, n);
    }
    if q.age.is_some() {
        let n = count(m, &SuggestGiftsQuery { age: None, ..q.clone() });
        let mut set = Map::new();
        set.insert("age".into(), Value::Null);
        push(format!("{n} gifts match without the age filter"), set, n);
    }
    out.truncate(4);
    out
}

fn no_match_notice(m: &dyn Matches, q: &SuggestGiftsQuery) -> Notice {
    let suggestions = relaxations(m, q);
    let message = if suggestions.is_empty() {
        "No gifts match these conditions. Try different interests or a wider budget.".to_string()
    } else {
        format!("No gifts match these conditions. {}.", suggestions[0].message)
    };
    Notice { code: NoticeCode::NoMatches, message, suggestions }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use giftgenius_types::{Currency, Merchant, Money, Occasion, RelationshipType};
    use proptest::prelude::*;

    use super::*;

    /// Words that stem into each other ("hike", "hiking", "hikes"), hyphenated tags, case,
    /// words too short to count: the cases where an index could disagree with the scan.
    const VOCABULARY: &[&str] = &[
        "hiking",
        "hike",
        "hikes",
        "hiker",
        "coffee",
        "cooking",
        "cook",
        "cooks",
        "gourmet",
        "tea",
        "art",
        "arts",
        "garden",
        "gardening",
        "books",
        "reading",
        "kids",
        "music",
        "Tech",
        "ab",
        "home-cooking",
        "trail-hiking",
        "Coffee",
        "café",
        "über",
    ];

    fn word() -> impl Strategy<Value = String> {
        prop::sample::select(VOCABULARY).prop_map(str::to_string)
    }

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec((word(), prop::sample::select(&[" ", ", ", ". ", "-", "/"][..])), 0..6)
            .prop_map(|parts| parts.into_iter().map(|(w, sep)| format!("{w}{sep}")).collect())
    }

    fn gift(n: usize) -> impl Strategy<Value = CatalogGift> {
        (
            prop::collection::vec(word(), 0..4),
            text(),
            text(),
            1i64..30_000,
            (0u8..=120, 0u8..=120),
            0u32..3,
            prop::sample::subsequence(RelationshipType::ALL.to_vec(), 0..=4),
            prop::sample::subsequence(Occasion::ALL.to_vec(), 0..=3),
        )
            .prop_map(
                move |(tags, title, description, price_cents, (a, b), stock, relationships, occasions)| CatalogGift {
                    id: format!("g-{:03}", (n * 37) % 1000),
                    title,
                    description,
                    price_cents,
                    tags,
                    age_min: a.min(b),
                    age_max: a.max(b),
                    relationships,
                    occasions,
                    stock,
                    merchant: Arc::new(Merchant { id: "m".into(), name: "M".into() }),
                    image: None,
                },
            )
    }

    fn catalog() -> impl Strategy<Value = Vec<CatalogGift>> {
        (0usize..60).prop_flat_map(|len| (0..len).map(gift).collect::<Vec<_>>())
    }

    fn query() -> impl Strategy<Value = SuggestGiftsQuery> {
        let currency = prop::sample::select(vec![Currency::USD, Currency::EUR, Currency::JPY]);
        (
            prop::sample::select(RelationshipType::ALL.to_vec()),
            prop::option::of(0u8..=120),
            prop::collection::vec(word().prop_map(|w| w.to_lowercase()), 0..4),
            (prop::option::of(0i64..20_000), prop::option::of(0i64..40_000)),
            prop::option::of(prop::sample::select(Occasion::ALL.to_vec())),
            currency,
            1u8..=12,
        )
            .prop_map(|(relationship_type, age, interests, (min, max), occasion, currency, limit)| {
                SuggestGiftsQuery {
                    relationship_type,
                    age,
                    interests,
                    budget_min: min.map(|m| Money::new(m, currency)),
                    budget_max: max.map(|m| Money::new(m, currency)),
                    occasion,
                    currency,
                    limit,
                }
            })
    }

    fn answer(ranked: &Ranked<'_>) -> (Vec<(String, Vec<String>)>, usize, serde_json::Value) {
        (
            ranked.gifts.iter().map(|(g, reasons)| (g.id.clone(), reasons.clone())).collect(),
            ranked.total_matches,
            serde_json::to_value(&ranked.notice).unwrap(),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// The index answers exactly what scoring every gift answers: the same gifts in the same
        /// order with the same reasons, the same count and the same notice.
        #[test]
        fn the_index_ranks_exactly_like_the_linear_scan(gifts in catalog(), q in query()) {
            let catalog = Catalog::from_gifts(gifts.clone());
            let indexed = rank(&[&catalog], &q);
            let linear = rank_linear(&gifts, &q);
            prop_assert_eq!(answer(&indexed), answer(&linear));
            // Split in two catalogs (local and HTTP answers): still the same ranking.
            let (mut left, mut right) = (Vec::new(), Vec::new());
            for (i, gift) in gifts.iter().cloned().enumerate() {
                if i % 3 == 0 { left.push(gift) } else { right.push(gift) }
            }
            let (left, right) = (Catalog::from_gifts(left), Catalog::from_gifts(right));
            prop_assert_eq!(answer(&rank(&[&left, &right], &q)), answer(&linear));
        }
    }

    #[test]
    fn the_builtin_catalog_ranks_the_same_through_the_index() {
        let catalog = Catalog::builtin();
        for interests in [vec![], vec!["hiking".to_string()], vec!["coffee".into(), "books".into()], vec!["zz".into()]]
        {
            for relationship_type in RelationshipType::ALL {
                let q = SuggestGiftsQuery {
                    relationship_type,
                    age: Some(35),
                    interests: interests.clone(),
                    budget_min: None,
                    budget_max: Some(Money::new(6000, Currency::USD)),
                    occasion: Some(Occasion::Birthday),
                    currency: Currency::USD,
                    limit: 6,
                };
                assert_eq!(answer(&rank(&[&catalog], &q)), answer(&rank_linear(catalog.gifts(), &q)));
            }
        }
    }
}
