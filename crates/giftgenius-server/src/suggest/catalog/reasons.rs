//! Why each ranked gift fits this request, as reasons worth reading.
//!
//! Per gift, the candidates: each asked interest it matched and through what (a tag, or a word
//! of its title or description), how its price sits in a budget it leaves at least half of, its
//! own age range when that is narrow, and the asked occasion and relationship when it lists them.
//! Across the cards of a result, a reason every card has says nothing about any one of them
//! (the old "A good pick for a friend" on all six), so it is left out; budget reasons count as
//! one kind there, since their prices always differ. A card left with nothing gets a fallback:
//! one of its tags ("popular"), or its budget reason, picked so that it is not on every card
//! either and, where the card has the choice, says what no other card says.

use giftgenius_types::gifts::SuggestGiftsQuery;
use giftgenius_types::{MatchVia, Money, Reason, RelationshipType, Why};

use super::ranking::{asked, interest_hit, interest_stems};
use super::{CatalogGift, price_in};

/// An age range this narrow (a toy for 3–7, a kit for 12–18) says who the gift is made for;
/// a wider one ("14 and up") fits nearly everyone asked about.
const NARROW_AGE_SPAN: u8 = 20;

/// The reasons of each gift in `gifts` (the ranked result, best first) for `q`.
pub(super) fn explain(gifts: &[&CatalogGift], q: &SuggestGiftsQuery) -> Vec<Vec<Reason>> {
    let stems: Vec<Vec<String>> = asked(q).iter().map(|i| interest_stems(i)).collect();
    let mut cards: Vec<Vec<Reason>> = gifts.iter().map(|gift| candidates(gift, q, &stems)).collect();
    let mut shared: Vec<Why> = Vec::new();
    if cards.len() >= 2 {
        shared = cards[0].iter().filter(|r| cards.iter().all(|c| has(c, &r.why))).map(|r| r.why.clone()).collect();
        for card in &mut cards {
            card.retain(|r| !shared.iter().any(|w| same(w, &r.why)));
        }
    }
    // A tag every card was dropped for matching ("books", asked for books) tells nothing either.
    let shared_tag = |why: &Why| match why {
        Why::Popular { tag } => {
            shared.iter().any(|w| matches!(w, Why::Interest { via: MatchVia::Tag, term, .. } if term == tag))
        }
        _ => false,
    };
    for i in 0..cards.len() {
        if cards[i].is_empty() {
            let options = fallbacks(gifts[i], q, &stems);
            let on_every_other =
                |why: &Why| cards.len() >= 2 && cards.iter().enumerate().all(|(j, c)| j == i || has(c, why));
            let elsewhere = |why: &Why| cards.iter().enumerate().any(|(j, c)| j != i && has(c, why));
            // In order of preference, unless it is on every other card, repeats what every card
            // was dropped for, or another card says it already.
            let pick = (0..options.len())
                .min_by_key(|&k| {
                    let why = &options[k].why;
                    (on_every_other(why), shared_tag(why), elsewhere(why), k)
                })
                .unwrap_or(0);
            cards[i].extend(options.into_iter().nth(pick));
        }
    }
    cards
}

/// Two reasons say the same thing across cards: equal, or both about the budget.
fn same(a: &Why, b: &Why) -> bool {
    matches!((a, b), (Why::Budget { .. }, Why::Budget { .. })) || a == b
}

fn has(card: &[Reason], why: &Why) -> bool {
    card.iter().any(|r| same(&r.why, why))
}

/// What can be said of `gift` for `q`, most specific first.
fn candidates(gift: &CatalogGift, q: &SuggestGiftsQuery, stems: &[Vec<String>]) -> Vec<Reason> {
    let mut out = Vec::new();
    for (interest, stems) in asked(q).iter().zip(stems) {
        if let Some((via, term)) = interest_hit(gift, stems) {
            out.push(interest_reason(interest, via, term));
        }
    }
    if q.age.is_some() && gift.age_max.saturating_sub(gift.age_min) <= NARROW_AGE_SPAN {
        let (age_min, age_max) = (gift.age_min, gift.age_max);
        out.push(Reason { text: format!("Made for ages {age_min}–{age_max}"), why: Why::Age { age_min, age_max } });
    }
    if let Some(occasion) = q.occasion
        && gift.occasions.contains(&occasion)
    {
        out.push(Reason { text: format!("A good {} gift", occasion.phrase()), why: Why::Occasion { occasion } });
    }
    let relationship = q.relationship_type;
    if relationship != RelationshipType::Other && gift.relationships.contains(&relationship) {
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

fn interest_reason(interest: &str, via: MatchVia, term: &str) -> Reason {
    let how = match via {
        MatchVia::Tag => format!("tagged “{term}”"),
        MatchVia::Title => format!("“{term}” in its name"),
        MatchVia::Description => format!("its description mentions “{term}”"),
    };
    Reason {
        text: format!("Matches their interest in {interest} ({how})"),
        why: Why::Interest { interest: interest.to_string(), via, term: term.to_string() },
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

/// What a card with nothing more specific says, in order of preference: one of its tags, its
/// budget reason, what it shares with every card; a gift of a catalog file may have none of
/// these, and still says something.
fn fallbacks(gift: &CatalogGift, q: &SuggestGiftsQuery, stems: &[Vec<String>]) -> Vec<Reason> {
    let popular = gift.tags.iter().map(|tag| popular(tag));
    let mut out: Vec<Reason> = popular.chain(budget_reason(gift, q)).chain(candidates(gift, q, stems)).collect();
    if out.is_empty() {
        out.push(Reason { text: "A popular gift".into(), why: Why::Popular { tag: "gift".into() } });
    }
    out
}

fn popular(tag: &str) -> Reason {
    Reason { text: format!("A popular {} gift", tag.replace('-', " ")), why: Why::Popular { tag: tag.to_string() } }
}

#[cfg(test)]
mod tests {
    use giftgenius_types::{Currency, Occasion};

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

    fn shown(cards: &[(&CatalogGift, Vec<Reason>)]) -> String {
        cards
            .iter()
            .map(|(g, r)| format!("{}: {:?}", g.id, r.iter().map(|r| &r.text).collect::<Vec<_>>()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn no_reason_is_on_every_card_and_no_card_is_without_one() {
        let catalog = Catalog::builtin();
        for q in typical() {
            let ranked = rank(&[&catalog], &q);
            let cards = &ranked.gifts;
            assert!(cards.len() >= 2, "{q:?} should find several gifts");
            for (gift, reasons) in cards {
                assert!(!reasons.is_empty(), "{} has no reason for {q:?}", gift.id);
                assert!(reasons.iter().all(|r| !r.text.is_empty()));
            }
            for (_, reasons) in cards {
                for reason in reasons {
                    assert!(
                        !cards.iter().all(|(_, other)| has(other, &reason.why)),
                        "{:?} is on every card of {q:?}:\n{}",
                        reason.text,
                        shown(cards)
                    );
                }
            }
        }
    }

    #[test]
    fn the_first_cards_cover_every_interest_that_matched() {
        let catalog = Catalog::builtin();
        for q in typical().into_iter().filter(|q| !q.interests.is_empty()) {
            let ranked = rank(&[&catalog], &q);
            let matching: Vec<&String> = q
                .interests
                .iter()
                .filter(|i| {
                    rank(&[&catalog], &SuggestGiftsQuery { interests: vec![i.to_string()], ..q.clone() }).total_matches
                        > 0
                })
                .collect();
            let first = &ranked.gifts[..matching.len().min(ranked.gifts.len())];
            for interest in matching {
                assert!(
                    first.iter().any(|(g, _)| interest_hit(g, &interest_stems(interest)).is_some()),
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
            for (gift, reasons) in rank(&[&catalog], &q).gifts {
                for reason in reasons {
                    let Why::Interest { interest, via, term } = &reason.why else { continue };
                    assert!(q.interests.contains(interest));
                    assert!(
                        reason.text.contains(interest.as_str()) && reason.text.contains(term.as_str()),
                        "{reason:?}"
                    );
                    let found = match via {
                        MatchVia::Tag => gift.tags.contains(term),
                        MatchVia::Title => gift.title.contains(term.as_str()),
                        MatchVia::Description => gift.description.contains(term.as_str()),
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
        let ranked = rank(&[&catalog], q);
        let texts: Vec<Vec<&str>> =
            ranked.gifts.iter().map(|(_, r)| r.iter().map(|r| r.text.as_str()).collect()).collect();
        assert_eq!(texts[0][0], "Matches their interest in coffee (tagged “coffee”)", "{texts:?}");
        assert_eq!(texts[1][0], "Matches their interest in hiking (tagged “hiking”)", "{texts:?}");
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
        let ranked = rank(&[&catalog], &one);
        let kinds: Vec<&Why> = ranked.gifts[0].1.iter().map(|r| &r.why).collect();
        assert!(kinds.iter().any(|w| matches!(w, Why::Relationship { .. })), "{kinds:?}");

        // Six copies of one gift (tags coffee, home, cozy): fallbacks say different things while
        // the tags last, and none ends up on every card.
        let gift = catalog.get("hh-001").unwrap();
        let q = query(RelationshipType::Other, &[], None);
        let cards = explain(&[gift; 6], &q);
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
        let ranked = rank(&[&catalog], books);
        assert!(ranked.gifts.iter().all(|(g, _)| g.tags.iter().any(|t| t == "books")), "{}", shown(&ranked.gifts));
        for (_, reasons) in &ranked.gifts {
            assert!(reasons.iter().all(|r| r.why != Why::Popular { tag: "books".into() }), "{}", shown(&ranked.gifts));
        }
    }
}
