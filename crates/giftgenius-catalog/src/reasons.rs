//! Why each ranked gift fits this request, as reasons worth reading.
//!
//! Per gift, the candidates: first each asked interest it met, named as the person said it,
//! with what in the gift answers it ("For their stargazing: tagged “astronomy”", "For their
//! coffee: Hand-Crank Burr Coffee Grinder": the related tag or word it was met through, or the
//! gift's own name shortened when it was met by the interest's own words); then its own age
//! range when that is narrow, a tag no other card of the result has, the asked occasion and
//! relationship when it lists them, and how its price sits in a budget it leaves at least half
//! of. Never a piece of a word: matches are whole words (`text.rs`).
//!
//! Across the cards of a result, each card says something of its own, and no sentence is on more
//! than two cards:
//! - a reason every card has says nothing about any one of them (the old "A good pick for a
//!   friend" on all six), so it is left out, unless it names an interest;
//! - a reason several cards share stays on the first two (best ranked) that have it; a third
//!   card meeting an interest the same way names itself instead ("For their astronomy: Desktop
//!   Telescope"), so every card that met an interest leads with it;
//! - a card left with nothing of its own gets its price against the budget, else one of its tags
//!   ("popular"), else its bare price: the cards lacking one share these out so
//!   that as many as can get one no other card says (a matching); a card still without says
//!   what is not on two cards yet and is no other card's only sentence of its own.
//!
//! Only the cards shown are explained (`ranking::finish`), so the quadratic comparisons run on at
//! most `SuggestGiftsInput`'s twelve cards, and the strings are the reasons' own.

use giftgenius_types::gifts::SuggestGiftsQuery;
use giftgenius_types::{MatchVia, Money, Reason, RelationshipType, Why};

use super::fit::{self, DESCRIPTION, GiftTerms, Plan, TAG, TITLE, asked};
use super::{CatalogGift, Tag, price_in, text};

/// An age range this narrow (a toy for 3–7, a kit for 12–18) says who the gift is made for;
/// a wider one ("14 and up") fits nearly everyone asked about.
const NARROW_AGE_SPAN: u8 = 20;

/// The most cards of one result that may carry the same sentence.
pub(super) const MAX_CARDS_PER_SENTENCE: usize = 2;

/// The reasons of each gift in `gifts` (the ranked result, best first) for `q`.
pub(super) fn explain(gifts: &[&CatalogGift], q: &SuggestGiftsQuery, plan: &Plan) -> Vec<Vec<Reason>> {
    let stems: Vec<Vec<String>> = asked(q).iter().map(|i| text::stems(i)).collect();
    let mut cards: Vec<Vec<Reason>> = (0..gifts.len()).map(|i| candidates(gifts, i, q, plan, &stems)).collect();
    if cards.len() >= 2 {
        let shared: Vec<Why> = cards[0]
            .iter()
            .filter(|r| !matches!(r.why, Why::Interest { .. }) && cards.iter().all(|c| has(c, &r.why)))
            .map(|r| r.why.clone())
            .collect();
        for card in &mut cards {
            card.retain(|r| !shared.contains(&r.why));
        }
    }
    for (i, gift) in gifts.iter().enumerate() {
        cap(&mut cards, i, gift);
    }
    let needy: Vec<usize> = (0..cards.len()).filter(|&i| !has_own(&cards, i)).collect();
    let options: Vec<Vec<Reason>> = needy.iter().map(|&i| fallbacks(gifts[i], q, &stems)).collect();
    let chosen = distinct_fallbacks(&cards, &options);
    for (k, &i) in needy.iter().enumerate() {
        if let Some(o) = chosen[k] {
            cards[i].push(options[k][o].clone());
        }
    }
    for (k, &i) in needy.iter().enumerate() {
        if chosen[k].is_none()
            && let Some(o) = pick_fallback(&cards, i, &options[k])
        {
            cards[i].push(options[k][o].clone());
        }
    }
    cards
}

/// Whether card `i` says something no other card says.
fn has_own(cards: &[Vec<Reason>], i: usize) -> bool {
    cards[i].iter().any(|r| others(cards, i, &r.why) == 0)
}

/// For each card without a sentence of its own (`options[k]`: its fallbacks, best first), one
/// that no card says yet and no other of them gets: as many of them as can be given one (a
/// matching, Kuhn's augmenting paths: the first card to want "reading" gives it up when it can
/// say "history" instead and another card has only "reading"), each card's earlier options
/// first. A few cards of a few options each: this is nothing next to the ranking.
fn distinct_fallbacks(cards: &[Vec<Reason>], options: &[Vec<Reason>]) -> Vec<Option<usize>> {
    let free: Vec<Vec<bool>> =
        options.iter().map(|opts| opts.iter().map(|r| !cards.iter().any(|c| has(c, &r.why))).collect()).collect();
    let mut chosen: Vec<Option<usize>> = vec![None; options.len()];
    for k in 0..options.len() {
        augment(k, options, &free, &mut chosen, &mut Vec::new());
    }
    chosen
}

/// Gives card `k` a free option, moving the card that holds it to another of its own if needed;
/// `tried` holds the sentences this search went through already.
fn augment<'a>(
    k: usize,
    options: &'a [Vec<Reason>],
    free: &[Vec<bool>],
    chosen: &mut [Option<usize>],
    tried: &mut Vec<&'a Why>,
) -> bool {
    let holder = |chosen: &[Option<usize>], why: &Why| {
        (0..options.len()).find(|&j| chosen[j].is_some_and(|c| options[j][c].why == *why))
    };
    // An option nobody holds first, so a card moves another only when it has to.
    let unheld = options[k].iter().enumerate().position(|(o, r)| free[k][o] && holder(chosen, &r.why).is_none());
    if let Some(o) = unheld {
        chosen[k] = Some(o);
        return true;
    }
    for (o, reason) in options[k].iter().enumerate() {
        if !free[k][o] || tried.contains(&&reason.why) {
            continue;
        }
        tried.push(&reason.why);
        if holder(chosen, &reason.why).is_none_or(|j| augment(j, options, free, chosen, tried)) {
            chosen[k] = Some(o);
            return true;
        }
    }
    false
}

fn has(card: &[Reason], why: &Why) -> bool {
    card.iter().any(|r| r.why == *why)
}

/// On how many cards other than card `i` the same sentence is.
fn others(cards: &[Vec<Reason>], i: usize, why: &Why) -> usize {
    cards.iter().enumerate().filter(|(j, c)| *j != i && has(c, why)).count()
}

/// Keeps on card `i` only what the cards before it have not said twice already; an interest
/// said twice the same way is said through the gift's own name instead.
fn cap(cards: &mut [Vec<Reason>], i: usize, gift: &CatalogGift) {
    let (before, rest) = cards.split_at_mut(i);
    let said = |why: &Why| before.iter().filter(|c| has(c, why)).count();
    let card = &mut rest[0];
    for k in 0..card.len() {
        if said(&card[k].why) < MAX_CARDS_PER_SENTENCE {
            continue;
        }
        let Why::Interest { interest, via, .. } = &card[k].why else { continue };
        if *via == MatchVia::Title {
            continue;
        }
        let named = interest_reason(interest, MatchVia::Title, &short_title(&gift.title));
        if said(&named.why) < MAX_CARDS_PER_SENTENCE && !has(card, &named.why) {
            card[k] = named;
        }
    }
    card.retain(|r| said(&r.why) < MAX_CARDS_PER_SENTENCE);
}

/// Which of `options` card `i` gets when it has nothing of its own: the first no other card
/// says; else, for a card with nothing at all, the first not said twice yet that is not another
/// card's only sentence of its own, else the least said (cards alike in every part a reason can
/// name have nothing else to say).
fn pick_fallback(cards: &[Vec<Reason>], i: usize, options: &[Reason]) -> Option<usize> {
    let fresh = |r: &Reason| !has(&cards[i], &r.why);
    if let Some(k) = options.iter().position(|r| fresh(r) && others(cards, i, &r.why) == 0) {
        return Some(k);
    }
    if !cards[i].is_empty() {
        return None;
    }
    // `why` is card `j`'s only sentence no other card says.
    let only_own = |j: usize, why: &Why| {
        others(cards, j, why) == 0 && cards[j].iter().filter(|r| others(cards, j, &r.why) == 0).all(|r| r.why == *why)
    };
    let takes = |why: &Why| (0..cards.len()).any(|j| j != i && has(&cards[j], why) && only_own(j, why));
    options
        .iter()
        .position(|r| others(cards, i, &r.why) < MAX_CARDS_PER_SENTENCE && !takes(&r.why))
        .or_else(|| (0..options.len()).min_by_key(|&k| (others(cards, i, &options[k].why), k)))
}

/// Whether `tag` says one of the asked interests (its reason says it better, or every card has it).
fn asked_tag(tag: &Tag, stems: &[Vec<String>]) -> bool {
    text::stems(tag).iter().any(|s| stems.iter().flatten().any(|w| w == s))
}

/// What can be said of gift `i` of `gifts` for `q`, most specific first.
fn candidates(
    gifts: &[&CatalogGift],
    i: usize,
    q: &SuggestGiftsQuery,
    plan: &Plan,
    stems: &[Vec<String>],
) -> Vec<Reason> {
    let gift = gifts[i];
    let terms = GiftTerms::of(gift);
    let mut out = Vec::new();
    for (interest, clauses) in asked(q).iter().zip(&plan.interests) {
        if let Some(reason) = interest_met(gift, &terms, interest, clauses) {
            out.push(reason);
        }
    }
    if q.age.is_some() && gift.age_max.saturating_sub(gift.age_min) <= NARROW_AGE_SPAN {
        let (age_min, age_max) = (gift.age_min, gift.age_max);
        out.push(Reason { text: format!("Made for ages {age_min}–{age_max}"), why: Why::Age { age_min, age_max } });
    }
    // What sets it apart from the others shown (with one card there are no others).
    let alone = |tag: &Tag| gifts.iter().enumerate().all(|(j, g)| j == i || !g.tags.contains(tag));
    if gifts.len() >= 2
        && let Some(tag) = gift.tags.iter().find(|&t| !asked_tag(t, stems) && alone(t))
    {
        out.push(Reason {
            text: format!("The only one here tagged “{tag}”"),
            why: Why::OnlyTag { tag: tag.to_string() },
        });
    }
    if let Some(occasion) = q.occasion
        && gift.occasions.contains(occasion)
    {
        out.push(Reason { text: format!("A good {} gift", occasion.phrase()), why: Why::Occasion { occasion } });
    }
    let relationship = q.relationship_type;
    if relationship != RelationshipType::Other && gift.relationships.contains(relationship) {
        out.push(Reason {
            text: format!("A good pick for a {}", relationship.as_str()),
            why: Why::Relationship { relationship },
        });
    }
    // Worth saying on its own when the gift leaves at least half the budget.
    if let Some(reason) = budget_reason(gift, q)
        && let Why::Budget { price, budget_max, .. } = &reason.why
        && price.amount_minor.saturating_mul(2) <= budget_max.amount_minor
    {
        out.push(reason);
    }
    out
}

/// Why `gift` answers `interest` (met by its best clause), or `None` when it does not: through
/// its own words, the gift's name (shortened) says what answers it; through a related term, the
/// tag or the word of the gift that term is, so the link is seen ("stargazing": "astronomy").
fn interest_met(gift: &CatalogGift, terms: &GiftTerms, interest: &str, clauses: &[fit::Clause]) -> Option<Reason> {
    let (_, c, mask) = terms.interest(clauses)?;
    let clause = &clauses[c];
    let own = c == 0 && clause.stems == text::stems(interest);
    let interest = interest.trim();
    if own || mask & (TAG | DESCRIPTION) == 0 {
        return Some(interest_reason(interest, MatchVia::Title, &short_title(&gift.title)));
    }
    if mask & TAG != 0
        && let (_, Some(at)) = terms.meets(clause)
        && let Some(tag) = gift.tags.get(at)
    {
        return Some(interest_reason(interest, MatchVia::Tag, &text::tag_surface(tag)));
    }
    if mask & TITLE != 0 {
        return Some(interest_reason(interest, MatchVia::Title, &short_title(&gift.title)));
    }
    let word = text::word_spans(&gift.description)
        .map(|(_, w)| w)
        .find(|w| {
            let stem = text::stems(w);
            stem.len() == 1 && clause.stems.contains(&stem[0])
        })
        .unwrap_or(interest);
    Some(interest_reason(interest, MatchVia::Description, &word.to_lowercase()))
}

/// A gift's name short enough for a sentence: up to its first comma, colon or parenthesis
/// ("Down Mummy Sleeping Bag, 20 Degree": "Down Mummy Sleeping Bag"), and at most
/// `SHORT_TITLE` characters, cut between words.
pub(super) fn short_title(title: &str) -> String {
    const SHORT_TITLE: usize = 48;
    let head = title.split([',', ':', '(']).next().unwrap_or(title).trim();
    let head = if head.chars().count() >= 3 { head } else { title.trim() };
    if head.chars().count() <= SHORT_TITLE {
        return head.to_string();
    }
    let mut out = String::new();
    for word in head.split(' ') {
        if out.chars().count() + word.chars().count() + 1 > SHORT_TITLE - 1 {
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    if out.is_empty() {
        out = head.chars().take(SHORT_TITLE - 1).collect();
    }
    out.push('…');
    out
}

/// "For their stargazing: tagged “astronomy”": the interest as said, then what answers it.
fn interest_reason(interest: &str, via: MatchVia, term: &str) -> Reason {
    let what = what_answers(via, term);
    Reason {
        text: format!("For their {interest}: {what}"),
        why: Why::Interest { interest: interest.to_string(), via, term: term.to_string() },
    }
}

/// The reasons of the nearest alternatives shown when nothing met an interest
/// (`ranking::nearest`): each interest the relaxed plan met it through becomes what it is, the
/// nearest we have ("Nearest we have to their craft beer: tagged “brewing”"), never a match, and
/// leads the card.
pub(super) fn nearest(cards: Vec<Vec<Reason>>) -> Vec<Vec<Reason>> {
    cards
        .into_iter()
        .map(|card| {
            let (mut near, rest): (Vec<Reason>, Vec<Reason>) = card
                .into_iter()
                .map(|reason| match reason.why {
                    Why::Interest { interest, via, term } => nearest_reason(interest, via, term),
                    _ => reason,
                })
                .partition(|r| matches!(r.why, Why::Nearest { .. }));
            near.extend(rest);
            near
        })
        .collect()
}

fn nearest_reason(interest: String, via: MatchVia, term: String) -> Reason {
    let what = what_answers(via, &term);
    Reason { text: format!("Nearest we have to their {interest}: {what}"), why: Why::Nearest { interest, via, term } }
}

/// What in the gift answers an interest, as a reason's second half: "tagged “astronomy”", the
/// gift's short name, "its description mentions “brew”" (a match and a nearest say it alike).
fn what_answers(via: MatchVia, term: &str) -> String {
    match via {
        MatchVia::Tag => format!("tagged “{term}”"),
        MatchVia::Title => term.to_string(),
        MatchVia::Description => format!("its description mentions “{term}”"),
    }
}

/// "At $42 it leaves $58 of your $100 budget", when a maximum was asked.
fn budget_reason(gift: &CatalogGift, q: &SuggestGiftsQuery) -> Option<Reason> {
    let budget_max = q.budget_max?;
    let price = price_in(gift.price_cents, q.currency);
    let left = Money::new(budget_max.amount_minor.saturating_sub(price.amount_minor), q.currency);
    let text = if left.amount_minor > 0 {
        format!(
            "At {} it leaves {} of your {} budget",
            price.display_short(),
            left.display_short(),
            budget_max.display_short()
        )
    } else {
        format!("At {} it uses your whole {} budget", price.display_short(), budget_max.display_short())
    };
    Some(Reason { text, why: Why::Budget { price, budget_max, left } })
}

/// What a card with nothing of its own may say, in order of preference: its price against the
/// budget, one of its tags that is not an asked interest, and last its bare price (the card
/// shows it anyway, but it is a sentence no other card at another price says; with a budget it
/// is what a third card at the same price says when two already say how it sits in the budget).
fn fallbacks(gift: &CatalogGift, q: &SuggestGiftsQuery, stems: &[Vec<String>]) -> Vec<Reason> {
    let popular = gift.tags.iter().filter(|t| !asked_tag(t, stems)).map(|tag| popular(tag));
    let mut out: Vec<Reason> = budget_reason(gift, q).into_iter().chain(popular).collect();
    let price = price_in(gift.price_cents, q.currency);
    out.push(Reason { text: format!("Priced at {}", price.display_short()), why: Why::Price { price } });
    out
}

fn popular(tag: &str) -> Reason {
    Reason { text: format!("A popular {} gift", tag.replace('-', " ")), why: Why::Popular { tag: tag.to_string() } }
}

#[cfg(test)]
pub(super) mod tests {
    use giftgenius_types::{Currency, Occasion};
    use giftgenius_widget::view::reason_text;
    use giftgenius_widget::{RenderContext, Theme};

    use super::super::{Catalog, rank};
    use super::*;

    fn query(relationship_type: RelationshipType, interests: &[&str], budget_max: Option<i64>) -> SuggestGiftsQuery {
        SuggestGiftsQuery {
            relationship_type,
            age: None,
            interests: interests.iter().map(|i| i.to_string()).collect(),
            budget_min: None,
            budget_max: budget_max.map(|m| Money::new(m * 100, Currency::USD)),
            occasion: None,
            currency: Currency::USD,
            limit: 6,
        }
    }

    /// Requests people make: two interests with a budget (the one of the issue), one interest
    /// with an occasion, three interests, none at all, only a budget.
    fn typical() -> Vec<SuggestGiftsQuery> {
        let hiking_coffee =
            SuggestGiftsQuery { age: Some(30), ..query(RelationshipType::Friend, &["hiking", "coffee"], Some(100)) };
        let books = SuggestGiftsQuery {
            age: Some(60),
            occasion: Some(Occasion::Birthday),
            ..query(RelationshipType::Parent, &["books"], None)
        };
        let gardening_tea = SuggestGiftsQuery {
            age: Some(60),
            occasion: Some(Occasion::Birthday),
            ..query(RelationshipType::Parent, &["gardening", "tea"], Some(80))
        };
        vec![
            hiking_coffee,
            books,
            gardening_tea,
            query(RelationshipType::Sibling, &["board games", "tea", "camping"], Some(60)),
            query(RelationshipType::Friend, &[], None),
            query(RelationshipType::Colleague, &[], Some(40)),
            SuggestGiftsQuery { age: Some(6), ..query(RelationshipType::Child, &["science"], Some(50)) },
        ]
    }

    /// `explain` with the plan of the built-in catalog.
    fn explain_builtin(gifts: &[&CatalogGift], q: &SuggestGiftsQuery) -> Vec<Vec<Reason>> {
        let catalog = Catalog::builtin();
        explain(gifts, q, &Plan::new(q, catalog.index(), None, None))
    }

    pub(in super::super) fn shown(cards: &[(&CatalogGift, Vec<Reason>)]) -> String {
        cards
            .iter()
            .map(|(g, r)| format!("{}: {:?}", g.id, r.iter().map(|r| &r.text).collect::<Vec<_>>()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The request of issue 24: five of its six cards read "A usual pick for a parent".
    fn parent_gardening() -> SuggestGiftsQuery {
        SuggestGiftsQuery { age: Some(60), ..query(RelationshipType::Parent, &["gardening"], Some(100)) }
    }

    /// The rules every result keeps, in the server's English and in each language the widget
    /// renders: every card says why; no sentence is on more than two cards; each card with
    /// something distinct (`distinct`) says something no other card says. Shared with the
    /// property test of `ranking.rs`.
    pub(in super::super) fn check_result(
        cards: &[(&CatalogGift, Vec<Reason>)],
        q: &SuggestGiftsQuery,
    ) -> Result<(), String> {
        let show = || shown(cards);
        let stems: Vec<Vec<String>> = asked(q).iter().map(|i| text::stems(i)).collect();
        for (gift, reasons) in cards {
            if reasons.is_empty() || reasons.iter().any(|r| r.text.is_empty()) {
                return Err(format!("{} says nothing for {q:?}:\n{}", gift.id, show()));
            }
        }
        let mut sentences: Vec<Vec<Vec<String>>> =
            vec![cards.iter().map(|(_, r)| r.iter().map(|r| r.text.clone()).collect()).collect()];
        for locale in ["en-US", "es-ES", "pt-BR"] {
            let ctx = RenderContext::new(Theme::Light, locale);
            sentences.push(cards.iter().map(|(_, r)| r.iter().map(|r| reason_text(r, &ctx)).collect()).collect());
        }
        for rendered in &sentences {
            let on = |text: &String| rendered.iter().filter(|card| card.contains(text)).count();
            for (i, card) in rendered.iter().enumerate() {
                if let Some(text) = card.iter().find(|t| on(t) > MAX_CARDS_PER_SENTENCE) {
                    return Err(format!("{text:?} is on {} cards of {q:?}:\n{}", on(text), show()));
                }
                if distinct(cards, i, &stems) && !card.iter().any(|t| on(t) == 1) {
                    return Err(format!("{} says nothing of its own for {q:?}: {card:?}\n{}", cards[i].0.id, show()));
                }
            }
        }
        Ok(())
    }

    /// Whether card `i` has something no other card shown has: a tag (not an asked interest, its
    /// reason says that) or its price. Such a card always gets a
    /// sentence of its own; the others share out what they have (a matching), which can leave one
    /// of three cards tagged "reading"/"history", "history"/"travel", "reading"/"travel" without.
    fn distinct(cards: &[(&CatalogGift, Vec<Reason>)], i: usize, stems: &[Vec<String>]) -> bool {
        let gift = cards[i].0;
        let elsewhere = |f: &dyn Fn(&CatalogGift) -> bool| cards.iter().enumerate().any(|(j, (g, _))| j != i && f(g));
        let own_tag = gift.tags.iter().any(|t| !asked_tag(t, stems) && !elsewhere(&|g| g.tags.contains(t)));
        let own_price = !elsewhere(&|g| g.price_cents == gift.price_cents);
        own_tag || own_price
    }

    #[test]
    fn every_card_says_something_of_its_own_and_no_sentence_is_on_more_than_two_cards() {
        let catalog = Catalog::builtin();
        // Two the property test found: three cards whose tags pair up ("reading"/"history",
        // "history"/"travel", "reading"/"travel"), and eleven cards with few tags between them.
        let books = SuggestGiftsQuery { limit: 4, ..query(RelationshipType::Partner, &["books"], None) };
        let tech = SuggestGiftsQuery { limit: 11, ..query(RelationshipType::Colleague, &["tech"], None) };
        for q in typical().into_iter().chain([parent_gardening(), books, tech]) {
            let ranked = rank(&[&catalog], &q, None);
            assert!(ranked.gifts.len() >= 2, "{q:?} should find several gifts");
            check_result(&ranked.gifts, &q).unwrap();
            for (_, reasons) in &ranked.gifts {
                for reason in reasons {
                    assert!(
                        !ranked.gifts.iter().all(|(_, other)| has(other, &reason.why)),
                        "{:?} is on every card of {q:?}:\n{}",
                        reason.text,
                        shown(&ranked.gifts)
                    );
                }
            }
        }
    }

    #[test]
    fn parent_60_gardening_within_100_no_longer_reads_the_same_on_five_cards() {
        let catalog = Catalog::builtin();
        let q = parent_gardening();
        let ranked = rank(&[&catalog], &q, None);
        println!("{}", shown(&ranked.gifts));
        assert_eq!(ranked.gifts.len(), 6);
        let parent = Why::Relationship { relationship: RelationshipType::Parent };
        let with_parent = ranked.gifts.iter().filter(|(_, r)| has(r, &parent)).count();
        assert_eq!(with_parent, 2, "{}", shown(&ranked.gifts));
        // What the compact card shows: the first reason. No two cards lead with the same one.
        let mut first: Vec<&Why> = ranked.gifts.iter().map(|(_, r)| &r[0].why).collect();
        first.sort_by_key(|w| format!("{w:?}"));
        first.dedup();
        assert_eq!(first.len(), 6, "{}", shown(&ranked.gifts));
        // Each card gets its own: a tag no other card has, or its price against the budget.
        for (gift, reasons) in &ranked.gifts {
            let own = reasons.iter().find(|r| ranked.gifts.iter().filter(|(_, o)| has(o, &r.why)).count() == 1);
            match own.map(|r| &r.why) {
                // Issue 40: the interest named with the gift that answers it, its own name.
                Some(Why::Interest { via: MatchVia::Title, term, .. }) => assert_eq!(*term, short_title(&gift.title)),
                Some(Why::OnlyTag { tag }) => assert!(gift.tags.iter().any(|t| **t == **tag)),
                Some(Why::Budget { price, .. }) => assert_eq!(price.amount_minor, gift.price_cents),
                other => panic!("{}: {other:?}\n{}", gift.id, shown(&ranked.gifts)),
            }
        }
    }

    #[test]
    fn a_third_card_meeting_an_interest_the_same_way_does_not_repeat_it() {
        // Five copies of a coffee gift and a tea gift: the coffee sentence is on two cards only,
        // the tea card leads with tea.
        let catalog = Catalog::builtin();
        let coffee = catalog.get("hh-001").unwrap();
        let tea = catalog.gifts().iter().find(|g| g.tags.contains(&"tea".into()) && !g.tags.contains(&"coffee".into()));
        let mut gifts = vec![coffee; 5];
        gifts.extend(tea);
        let cards = explain_builtin(&gifts, &query(RelationshipType::Other, &["coffee", "tea"], None));
        let said: Vec<bool> = cards
            .iter()
            .map(|c| c.iter().any(|r| matches!(&r.why, Why::Interest { interest, .. } if interest == "coffee")))
            .collect();
        assert_eq!(said, [true, true, false, false, false, false], "{cards:?}");
        assert!(cards[0][0].text.starts_with("For their coffee: "), "{cards:?}");
        assert!(cards[5][0].text.starts_with("For their tea: "), "{cards:?}");
    }

    #[test]
    fn the_first_cards_cover_every_interest_that_matched() {
        let catalog = Catalog::builtin();
        for q in typical().into_iter().filter(|q| !q.interests.is_empty()) {
            let ranked = rank(&[&catalog], &q, None);
            let matching: Vec<&String> = q
                .interests
                .iter()
                .filter(|i| {
                    rank(&[&catalog], &SuggestGiftsQuery { interests: vec![i.to_string()], ..q.clone() }, None)
                        .total_matches
                        > 0
                })
                .collect();
            let first = &ranked.gifts[..matching.len().min(ranked.gifts.len())];
            let plan = Plan::new(&q, catalog.index(), None, None);
            for interest in matching {
                let k = q.interests.iter().position(|i| i == interest).unwrap();
                assert!(
                    first.iter().any(|(g, _)| GiftTerms::of(g).interest(&plan.interests[k]).is_some()),
                    "no card among the first {} matches {interest:?} for {q:?}:\n{}",
                    first.len(),
                    shown(&ranked.gifts)
                );
            }
        }
    }

    #[test]
    fn interest_reasons_name_the_interest_and_the_term_the_gift_has() {
        let catalog = Catalog::builtin();
        for q in typical() {
            for (gift, reasons) in rank(&[&catalog], &q, None).gifts {
                for reason in reasons {
                    let Why::Interest { interest, via, term } = &reason.why else { continue };
                    assert!(q.interests.contains(interest));
                    assert!(
                        reason.text.contains(interest.as_str()) && reason.text.contains(term.as_str()),
                        "{reason:?}"
                    );
                    let found = match via {
                        MatchVia::Tag => gift.tags.iter().any(|t| text::tag_surface(t) == **term),
                        MatchVia::Title => gift.title.starts_with(term.trim_end_matches('…')),
                        MatchVia::Description => {
                            text::word_spans(&gift.description).any(|(_, w)| w.to_lowercase() == **term)
                        }
                    };
                    assert!(found, "{} has no {term:?} in its {via:?}", gift.id);
                }
            }
        }
    }

    #[test]
    fn hiking_and_coffee_within_100_say_which_interest_each_card_serves() {
        let catalog = Catalog::builtin();
        let q = &typical()[0];
        let ranked = rank(&[&catalog], q, None);
        let texts: Vec<Vec<&str>> =
            ranked.gifts.iter().map(|(_, r)| r.iter().map(|r| r.text.as_str()).collect()).collect();
        // The cover: one card per interest first, each naming it and the gift that answers it.
        let firsts = [texts[0][0], texts[1][0]];
        assert!(firsts.iter().any(|t| t.starts_with("For their coffee: ")), "{texts:?}");
        assert!(firsts.iter().any(|t| t.starts_with("For their hiking: ")), "{texts:?}");
        let filler = ["A good pick for a friend", "Right for age 30", "Under your $100.00 budget"];
        assert!(texts.iter().flatten().all(|t| !filler.contains(t)), "{texts:?}");
        let budget: Vec<&Reason> =
            ranked.gifts.iter().flat_map(|(_, r)| r).filter(|r| matches!(r.why, Why::Budget { .. })).collect();
        assert!(!budget.is_empty(), "the cheap gifts say how much of the budget they leave: {texts:?}");
        for reason in budget {
            let Why::Budget { price, budget_max, left } = reason.why else { unreachable!() };
            assert_eq!(left.amount_minor, budget_max.amount_minor - price.amount_minor);
            assert_eq!(
                reason.text,
                format!("At {} it leaves {} of your $100 budget", price.display_short(), left.display_short())
            );
        }
    }

    #[test]
    fn a_single_card_keeps_every_reason_and_fallbacks_avoid_what_every_card_says() {
        let catalog = Catalog::builtin();
        let one = SuggestGiftsQuery { limit: 1, ..typical()[0].clone() };
        let ranked = rank(&[&catalog], &one, None);
        let kinds: Vec<&Why> = ranked.gifts[0].1.iter().map(|r| &r.why).collect();
        assert!(kinds.iter().any(|w| matches!(w, Why::Relationship { .. })), "{kinds:?}");

        // Six copies of one gift (tags coffee, home, cozy): fallbacks say different things while
        // the tags last, and none ends up on every card.
        let gift = catalog.get("hh-001").unwrap();
        let q = query(RelationshipType::Other, &[], None);
        let cards = explain_builtin(&[gift; 6], &q);
        let tags: Vec<&Why> = cards.iter().flatten().map(|r| &r.why).collect();
        let popular = |tag: &str| Why::Popular { tag: tag.into() };
        assert_eq!(tags[..3], [&popular("coffee"), &popular("home"), &popular("cozy")]);
        assert_eq!(tags.len(), 6);
        assert!(tags.iter().any(|w| **w != popular("coffee")));
    }

    #[test]
    fn a_single_interest_every_card_matches_is_not_repeated_as_a_popular_tag() {
        let catalog = Catalog::builtin();
        let books = &typical()[1];
        let ranked = rank(&[&catalog], books, None);
        // Every card is a book or for reading (the vocabulary's same thing in other words): a
        // reading journal, first tag `reading`, may lead a gift only tagged `books` third.
        let bookish = |t: &str| t == "books" || t == "reading";
        assert!(ranked.gifts.iter().all(|(g, _)| g.tags.iter().any(|t| bookish(t))), "{}", shown(&ranked.gifts));
        for (_, reasons) in &ranked.gifts {
            assert!(reasons.iter().all(|r| r.why != Why::Popular { tag: "books".into() }), "{}", shown(&ranked.gifts));
        }
    }
}
