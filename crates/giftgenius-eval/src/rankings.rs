//! The rankings the report compares: today's `suggest_gifts`, BM25 under the same hard rules,
//! and (once the model is wired, issue 40 item 2) embeddings alone.

use std::sync::Arc;

use giftgenius_catalog::meaning::Meaning;
use giftgenius_catalog::ranked;
use giftgenius_catalog::{Catalog, passes_hard_rules};
use giftgenius_meaning::{Embedding, EmbeddingCache};
use giftgenius_types::SuggestGiftsQuery;
use giftgenius_types::envelope::NoticeCode;
use std::path::Path;

use crate::bm25::{self, Bm25};

/// One card of an answer: the gift and the first reason it gives, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct Card {
    pub id: String,
    pub first_reason: Option<String>,
}

/// What a ranking answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    pub cards: Vec<Card>,
    /// The answer carries the "nothing fits" (`no_matches`) notice.
    pub says_nothing_fits: bool,
    /// The notice's words, for `--show`.
    pub notice: Option<String>,
}

/// A ranking the harness can ask.
pub trait Ranking {
    /// Its row in the table.
    fn name(&self) -> &'static str;
    /// Whether its cards carry reasons (for "first reason names an asked interest").
    fn gives_reasons(&self) -> bool;
    /// The answer to `query`; `about` is what the person said about the recipient (the
    /// request's optional `about`, trimmed, `None` when absent), as `suggest_gifts` passes it.
    fn answer(&self, query: &SuggestGiftsQuery, about: Option<&str>) -> Answer;
}

/// Where the cards' links point; the harness never follows them.
const PUBLIC_URL: &str = "http://127.0.0.1:8000";

/// Today's ranking: the function `suggest_gifts` calls with the built-in catalog, its only
/// source when no `--catalog-url` is set.
pub struct GiftGenius {
    catalogs: Vec<Arc<Catalog>>,
}

impl GiftGenius {
    pub fn new(catalog: Arc<Catalog>) -> Self {
        GiftGenius { catalogs: vec![catalog] }
    }
}

impl Ranking for GiftGenius {
    fn name(&self) -> &'static str {
        "GiftGenius (today's ranking)"
    }
    fn gives_reasons(&self) -> bool {
        true
    }
    fn answer(&self, query: &SuggestGiftsQuery, about: Option<&str>) -> Answer {
        let answer = ranked(&self.catalogs, query.clone(), about, PUBLIC_URL);
        Answer {
            cards: answer
                .data
                .gifts
                .into_iter()
                .map(|card| Card { first_reason: card.reasons.into_iter().next().map(|r| r.text), id: card.id })
                .collect(),
            says_nothing_fits: answer.notice.as_ref().is_some_and(|n| n.code == NoticeCode::NoMatches),
            notice: answer.notice.map(|n| n.message),
        }
    }
}

/// BM25 over each gift's title, description and tags as one text, under the same hard rules
/// (`passes_hard_rules`). Only gifts that match a word of the query are shown, best score first,
/// ties by id. The query is the interests; a request without any has the occasion's and the
/// relationship's words instead. `about` is left out: the textbook baseline stays the one the
/// issue measured.
pub struct Bm25Baseline {
    catalog: Arc<Catalog>,
    index: Bm25,
}

impl Bm25Baseline {
    pub fn new(catalog: Arc<Catalog>) -> Self {
        let index =
            Bm25::new(catalog.gifts().iter().map(|g| format!("{} {} {}", g.title, g.description, g.tags.join(" "))));
        Bm25Baseline { catalog, index }
    }

    fn terms(query: &SuggestGiftsQuery) -> Vec<String> {
        if !query.interests.is_empty() {
            return query.interests.iter().flat_map(|i| bm25::words(i)).collect();
        }
        let said =
            format!("{} {}", query.occasion.map(|o| o.phrase()).unwrap_or_default(), query.relationship_type.as_str());
        bm25::words(&said).collect()
    }
}

impl Ranking for Bm25Baseline {
    fn name(&self) -> &'static str {
        "BM25 over title + description + tags, same hard rules"
    }
    fn gives_reasons(&self) -> bool {
        false
    }
    fn answer(&self, query: &SuggestGiftsQuery, _about: Option<&str>) -> Answer {
        let terms = Self::terms(query);
        let scored: Vec<(f64, &str)> = self
            .catalog
            .gifts()
            .iter()
            .enumerate()
            .filter(|(_, gift)| passes_hard_rules(gift, query))
            .map(|(n, gift)| (self.index.score(n, &terms), &*gift.id))
            .filter(|(score, _)| *score > 0.0)
            .collect();
        best_first(scored, query)
    }
}

/// A baseline's answer: the best `query.limit` of `scored` (score, gift id), ties by id, no
/// reasons; none at all says "nothing fits".
fn best_first(mut scored: Vec<(f64, &str)>, query: &SuggestGiftsQuery) -> Answer {
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.truncate(usize::from(query.limit.max(1)));
    let cards: Vec<Card> = scored.into_iter().map(|(_, id)| Card { id: id.to_string(), first_reason: None }).collect();
    Answer { says_nothing_fits: cards.is_empty(), cards, notice: None }
}

/// Embeddings alone: each gift's title, description and tags embedded whole with the server's
/// model, the request's interests (or, without any, its occasion and relationship) embedded as
/// one text, the nearest gifts by cosine under the same hard rules, no word matching at all.
/// Gifts below [`Embeddings::FLOOR`] are not shown, so it can say "nothing fits".
pub struct Embeddings {
    catalog: Arc<Catalog>,
    meaning: Arc<Meaning>,
    gifts: Vec<Embedding>,
}

impl Embeddings {
    /// A cosine under this says the gift is about something else (unrelated gift texts and short
    /// interests score ~0.0–0.25 with all-MiniLM-L6-v2).
    pub const FLOOR: f32 = 0.25;

    /// Embeds every gift (kept in `cache` by content, so a second run embeds nothing).
    pub fn new(catalog: Arc<Catalog>, meaning: Arc<Meaning>, cache: Option<&Path>) -> Self {
        let texts: Vec<String> = catalog.gifts().iter().map(Self::text).collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let model = meaning.model();
        let mut stored = cache
            .and_then(|path| EmbeddingCache::load(path, model.id()).ok())
            .unwrap_or_else(|| EmbeddingCache::new(model.id()));
        let (gifts, computed) = stored.embed_all(model, &texts);
        if computed > 0
            && let Some(path) = cache
        {
            let _ = path.parent().map(std::fs::create_dir_all);
            let _ = stored.save(path);
        }
        Embeddings { catalog, meaning, gifts }
    }

    fn text(gift: &giftgenius_catalog::CatalogGift) -> String {
        format!("{}. {} {}", gift.title, gift.description, gift.tags.join(", "))
    }

    fn said(query: &SuggestGiftsQuery) -> String {
        if !query.interests.is_empty() {
            return query.interests.join(", ");
        }
        format!("{} {}", query.occasion.map(|o| o.phrase()).unwrap_or_default(), query.relationship_type.as_str())
    }
}

impl Ranking for Embeddings {
    fn name(&self) -> &'static str {
        EMBEDDINGS_NAME
    }
    fn gives_reasons(&self) -> bool {
        false
    }
    fn answer(&self, query: &SuggestGiftsQuery, _about: Option<&str>) -> Answer {
        let wanted = self.meaning.embed(&Self::said(query));
        let scored: Vec<(f64, &str)> = self
            .catalog
            .gifts()
            .iter()
            .zip(&self.gifts)
            .filter(|(gift, _)| passes_hard_rules(gift, query))
            .map(|(gift, e)| (wanted.cosine(e), &*gift.id))
            .filter(|(cosine, _)| *cosine >= Self::FLOOR)
            .map(|(cosine, id)| (f64::from(cosine), id))
            .collect();
        best_first(scored, query)
    }
}

/// The "embeddings alone" row's name.
pub const EMBEDDINGS_NAME: &str = "embeddings alone (all-MiniLM-L6-v2, cosine, same hard rules)";

#[cfg(test)]
mod tests {
    use super::*;
    use giftgenius_types::{RelationshipType, SuggestGiftsInput};

    fn query(interests: &[&str], budget_max: Option<f64>) -> SuggestGiftsQuery {
        SuggestGiftsInput {
            interests: interests.iter().map(|s| s.to_string()).collect(),
            budget_max,
            ..SuggestGiftsInput::for_relationship(RelationshipType::Friend)
        }
        .normalize()
    }

    #[test]
    fn bm25_shows_matching_gifts_under_the_hard_rules_best_first() {
        let catalog = Arc::new(Catalog::builtin());
        let baseline = Bm25Baseline::new(catalog.clone());
        let answer = baseline.answer(&query(&["telescope"], None), None);
        assert!(!answer.cards.is_empty());
        for card in &answer.cards {
            let gift = catalog.get(&card.id).unwrap();
            assert!(format!("{} {}", gift.title, gift.description).to_lowercase().contains("telescope"), "{}", card.id);
        }
        let cheap = baseline.answer(&query(&["telescope"], Some(20.0)), None);
        for card in &cheap.cards {
            assert!(catalog.get(&card.id).unwrap().price_cents <= 2000, "{} is over the budget", card.id);
        }
        let none = baseline.answer(&query(&["zyzzyva"], None), None);
        assert!(none.cards.is_empty() && none.says_nothing_fits);
    }

    #[test]
    fn the_real_ranking_answers_with_reasons() {
        let today = GiftGenius::new(Arc::new(Catalog::builtin()));
        let answer = today.answer(&query(&["coffee"], None), None);
        assert_eq!(answer.cards.len(), 6);
        assert!(answer.cards.iter().all(|c| c.first_reason.is_some()));
    }
}
