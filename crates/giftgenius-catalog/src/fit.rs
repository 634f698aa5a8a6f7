//! How well a gift fits a request, as one continuous score (fixed point: 1,000 is one exact
//! interest match in a tag), and the plan a query is scored by.
//!
//! A [`Plan`] is made once per query: per asked interest the ways it can be met ([`Clause`]s:
//! its own words, then related catalog terms from the built-in vocabulary and, when wired, the
//! embedding model, each weighted below an exact match), and the tags the occasion and the
//! recipient's age imply ("baby shower": baby things, whoever the guest is). The index and the
//! linear scan score with the same plan and the same integer arithmetic, so they agree exactly.
//!
//! The score of a gift:
//! - per interest, the strength of its best clause: clause weight × the fields it occurs in
//!   (tag > title > description, saturating like BM25F: a coffee tag, "Coffee" in the name and
//!   coffee in the description beat a mug whose description mentions coffee once); the clause
//!   weight carries the specificity (IDF) of its rarest word;
//! - the occasion: listed by the gift, and the tags it implies about the recipient;
//! - the relationship (worth less when the occasion says the gift is really for someone else),
//!   and the kinds of gift it implies, like an occasion's;
//! - age fit: a gift made for a narrow range around the age says it was made for them;
//! - where the price sits in the budget: most people spend a good part of it.

use giftgenius_types::gifts::SuggestGiftsQuery;
use giftgenius_types::{Occasion, RelationshipType, SuggestGiftsInput};

use super::related::{RelatedTerms, Vocabulary, weight_of_cosine};
use super::text;
use super::{CatalogGift, price_in};

/// One exact match in a tag, at full specificity.
pub(super) const UNIT: i64 = 1000;

/// An interest counts as met from this strength on: its own words anywhere, a close related term
/// (weight 0.7 or more) in a tag, a same-meaning one in the name or description; a term only of
/// the same broad kind ("skateboarding": "sports", 0.5) adds to a gift that is met, never meets.
pub(super) const MATCH_FLOOR: i64 = 400;

/// A related term's clause at most this much of the interest's own words.
const RELATED_CEILING: f64 = 0.85;
/// A related term this close (0–1) or closer can meet an interest on its own.
const MEETS_FROM: f64 = 0.6;
/// What the clauses of an interest other than its strongest add, per cent of their strength:
/// a gift met through several of an interest's words ("working out": the `fitness` tag and a
/// kettlebell in the name) is more surely about it than one met through one. Like BM25's sum
/// over a query's terms, damped, since related terms overlap in meaning. (Dev set, with the
/// implied share below: 0 % 0.746 nDCG@6, 15 % 0.754, 30 % 0.751, 50 % 0.749.)
const OTHER_CLAUSES_PERCENT: i64 = 15;
/// The same for the tags an occasion and an age imply: wine glasses (`wine`, `home`) say more
/// about a wedding than a luggage tag that is only `personalized`. (Dev set: 0 % 0.746, 30 %
/// 0.754, 60 % 0.754, 100 % 0.748.)
const OTHER_IMPLIED_PERCENT: i64 = 30;

/// What an interest's strength counts, per cent, when none of the clauses that can meet it on
/// their own is the gift's first tag: the gift meets the interest, but is something else (a
/// linen tea towel, first tag `cooking`, for "tea"; a strategy board game, `board-games` then
/// `gaming`, for "Minecraft"). On the dev set, of the gifts an interest met, those whose first
/// tag one of its meeting clauses is were graded good 54–90 % of the time, the others 22–28 %
/// (and unsuitable ~60 %). (Dev nDCG@6 at 90 / 80 / 70 / 50 %: 0.773 / 0.777 / 0.775 / 0.767.)
const OTHER_KIND_PERCENT: i64 = 80;

/// An interest's strength from its strongest clause and the sum of all its clauses' strengths,
/// and whether a clause that can meet it on its own is the gift's first tag (`kind`).
#[inline]
pub(super) fn combined(best: i64, sum: i64, kind: bool) -> i64 {
    let strength = best + (sum - best) * OTHER_CLAUSES_PERCENT / 100;
    if kind { strength } else { strength * OTHER_KIND_PERCENT / 100 }
}

/// What the occasion and age imply, from the strongest implied tag a gift has and the sum, and
/// whether one of the implied tags is the gift's first tag (`kind`). As with an interest
/// ([`OTHER_KIND_PERCENT`]), a gift that only goes with what the occasion implies counts less
/// than one that is it: a hiking trail-mix mug (`hiking`, then `food`, `chocolate`) for a thank
/// you, next to a tea box (`tea` first). (Dev at 100 / 80 / 60 / 40 %: nDCG@6 0.797 / 0.798 /
/// 0.797 / 0.797, top card 72 / 74 / 74 / 74 of 77.)
#[inline]
pub(super) fn combined_implied(best: i64, sum: i64, kind: bool) -> i64 {
    let strength = best + (sum - best) * OTHER_IMPLIED_PERCENT / 100;
    if kind { strength } else { strength * OTHER_KIND_PERCENT / 100 }
}

/// Related terms per interest at most (the nearest ones: more only add noise and walk cost).
pub(super) const MAX_RELATED: usize = 16;

/// Which fields a clause occurs in: bits of a mask. `KIND` comes with `TAG`: the gift's first
/// tag, which says what it is (catalogs list a gift's kind first, then what it goes with: a
/// kettlebell's are `fitness`, `sports`; cycling shorts' `cycling`, `fitness`, `fashion`).
pub(super) const TAG: u8 = 1;
pub(super) const TITLE: u8 = 2;
pub(super) const DESCRIPTION: u8 = 4;
pub(super) const KIND: u8 = 8;

/// A tag after the first, per 1,000 of the first's weight. On the judged dev set, of the gifts
/// whose first tag was an asked interest 82 % were graded good; second tag 36 %, later 26 %.
const LATER_TAG: i64 = 500;

/// The strength of a clause met in the fields of `mask`, per 1,000 of its weight: BM25F's
/// saturated term frequency with field weights first tag 1.0, later tag [`LATER_TAG`], title
/// 0.6, description 0.35 and k = 0.5, scaled so a first tag alone is 1,000. (0.6 and 0.35: a
/// name says what the gift is nearly as well as its kind; a description also says what it goes
/// with.)
pub(super) const FIELD: [i64; 16] = {
    let mut table = [0i64; 16];
    let mut mask = 1;
    while mask < 16 {
        // In thousandths, integer only (a const fn).
        let tag = if mask & 8 != 0 {
            1000
        } else if mask & 1 != 0 {
            LATER_TAG
        } else {
            0
        };
        let tf = tag + if mask & 2 != 0 { 600 } else { 0 } + if mask & 4 != 0 { 350 } else { 0 };
        table[mask] = tf * 1500 / (tf + 500);
        mask += 1;
    }
    table
};

/// The most an occasion that the gift lists adds.
const OCCASION_LISTED: i64 = 250;
/// What the occasion adds when the gift lists it first (what it is made for most) and no
/// interest was asked: then the person, the relationship and the occasion decide. On the dev
/// set's requests without interests, of the gifts that list the asked occasion, those that list
/// it first were graded good 66 % of the time, second 33 %, later 22–30 %. (Dev nDCG@6 of those
/// requests at 150 / 250 / 350 / 450: 0.698 / 0.714 / 0.705 / 0.710, from 0.652.)
const OCCASION_FIRST: i64 = 250;
/// The most the tags an occasion or an age imply add (times the implied weight).
const IMPLIED: i64 = 450;
/// With interests asked, what is implied counts this share (the interests say more).
/// The most a tag near the `about` text in meaning adds (at cosine 0.85 and above): two thirds
/// of an occasion's strongest implication, since a sentence about the person is vaguer.
const ABOUT: i64 = IMPLIED * 2 / 3;
const IMPLIED_WITH_INTERESTS_PERCENT: i64 = 50;
const RELATIONSHIP: i64 = 150;
/// The relationship when the occasion says who the gift is really for (a baby shower: the baby).
const RELATIONSHIP_OTHER_RECIPIENT: i64 = 40;
const AGE_FIT: i64 = 120;
/// What a gift made only for children (its age range ends before 18) loses when no age was
/// given but the relationship says the recipient is an adult ([`adult_recipient`]): as much as
/// an age implies at most for a child's gift ([`IMPLIED`]), the other way.
const CHILDS_GIFT_FOR_ADULT: i64 = IMPLIED;
/// The age from which a gift is for grown-ups too.
const ADULT: u8 = 18;
const PRICE_FIT: i64 = 150;

/// One way an interest can be met: all `stems` in one field of the gift (its title, its
/// description), or a tag that is exactly these words.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Clause {
    /// Content stems, at least one.
    pub stems: Vec<String>,
    /// Their weight in [`UNIT`]s of a tag match.
    pub weight: i64,
    /// Only a tag may meet it (what an occasion or an age implies is a kind of gift).
    pub tags_only: bool,
    /// Whether it can meet the interest on its own (its own words, a close related term), or
    /// only adds to a gift that another clause met (a broader kind: "cats": "pets").
    pub meets: bool,
    /// Written by people: the interest's own words or the built-in vocabulary's, not the
    /// model's. Only these may find the nearest alternatives when nothing meets the interest
    /// (`Plan::nearest`): the vocabulary's broader kinds ("opera": `music`) are near in the
    /// way a person means, the model's nearest words often only in letters or setting (fishing
    /// gear for "aquarium fish", board games for "skateboarding").
    pub written: bool,
}

impl Clause {
    /// The whole tag the clause meets, as the index keys tags: its stems joined by a space.
    pub fn key(&self) -> String {
        self.stems.join(" ")
    }
}

/// How many gifts hold a term: what specificity (IDF) is computed from. Several catalogs
/// answer the sum of theirs, so a split catalog scores like one.
pub(super) trait Stats {
    fn gifts(&self) -> usize;
    /// Gifts with `term` (a stem, or a tag phrase) in any field.
    fn df(&self, term: &str) -> usize;
    /// Gifts that carry both whole tags `a` and `b` (each a [`Clause::key`]); with `a == b`, the
    /// gifts that carry `a`.
    fn tags_together(&self, a: &str, b: &str) -> usize;
}

/// A tag is a kind of a broader tag when at least this share (per cent) of its gifts carry the
/// broader one too: the catalog's own taxonomy (`cats` and `dogs` of `pets`, `board-games` of
/// `gaming`), read off its gifts.
const KIND_SHARE_PERCENT: usize = 80;
/// … and it is carried by at least this many gifts (one gift's tags say nothing general).
const KIND_MIN_GIFTS: usize = 2;

/// Whether the tag `narrow` is a kind of the tag `broad` in this catalog.
fn kind_of(stats: &dyn Stats, narrow: &str, broad: &str) -> bool {
    if narrow == broad {
        return false;
    }
    let n = stats.tags_together(narrow, narrow);
    n >= KIND_MIN_GIFTS
        && stats.tags_together(broad, broad) > n
        && stats.tags_together(narrow, broad) * 100 >= n * KIND_SHARE_PERCENT
}

/// What a query is scored by (see the module's doc).
#[derive(Debug, Clone)]
pub(super) struct Plan {
    /// Per asked interest (as many as `Interests` has bits), its clauses, own words first.
    pub interests: Vec<Vec<Clause>>,
    /// Tags implied by the occasion, the relationship and the age (`tags_only`), weights already
    /// scaled.
    pub implied: Vec<Clause>,
    pub relationship_points: i64,
    /// What the asked occasion adds to a gift that lists it first ([`OCCASION_FIRST`], none
    /// with interests).
    pub first_occasion_points: i64,
}

/// The query's interests that count (all of them, for any valid request).
pub(super) fn asked(q: &SuggestGiftsQuery) -> &[String] {
    &q.interests[..q.interests.len().min(SuggestGiftsInput::MAX_INTERESTS)]
}

impl Plan {
    pub fn new(
        q: &SuggestGiftsQuery,
        stats: &dyn Stats,
        model: Option<&dyn RelatedTerms>,
        about: Option<&str>,
    ) -> Plan {
        let spec = |stems: &[String]| specificity(stats, stems);
        let interests = asked(q)
            .iter()
            .map(|interest| {
                let mut clauses: Vec<Clause> = Vec::new();
                let mut add = |stems: Vec<String>, closeness: f64, meets: bool, written: bool| {
                    if stems.is_empty() {
                        return;
                    }
                    let weight = (UNIT as f64 * closeness * spec(&stems)).round() as i64;
                    match clauses.iter_mut().find(|c| c.stems == stems) {
                        Some(c) => {
                            c.weight = c.weight.max(weight);
                            c.meets |= meets;
                            c.written |= written;
                        }
                        None => clauses.push(Clause { stems, weight, tags_only: false, meets, written }),
                    }
                };
                add(text::stems(interest), 1.0, true, true);
                let mut related: Vec<(String, f64, bool)> =
                    Vocabulary::builtin().related(interest).into_iter().map(|(t, w)| (t, f64::from(w), true)).collect();
                // What the catalog does not sell, no nearby word sells: its related terms only add.
                let unsold = not_sold(stats, &text::stems(interest), &related);
                if let Some(model) = model {
                    let own = text::stems(interest);
                    related.extend(
                        model
                            .related(interest)
                            .into_iter()
                            .filter(|(term, _)| {
                                let term = text::stems(term);
                                !modifier_of(&term, &own) && !thing_of_activity(&term, &own)
                            })
                            .map(|(t, c)| (t, f64::from(weight_of_cosine(c)), false)),
                    );
                }
                // Strongest first, then by the words, so the cut is the same whatever the order.
                related.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                related.truncate(MAX_RELATED);
                for (term, closeness, written) in related {
                    if closeness > 0.0 {
                        let closeness = closeness.min(1.0);
                        let meets = closeness >= MEETS_FROM && !unsold;
                        add(text::stems(&term), RELATED_CEILING * closeness, meets, written);
                    }
                }
                broader_only_adds(&mut clauses, &text::stems(interest), stats);
                clauses
            })
            .collect();
        let share = if asked(q).is_empty() { 100 } else { IMPLIED_WITH_INTERESTS_PERCENT };
        let mut implied: Vec<Clause> = Vec::new();
        let other_recipient = matches!(q.occasion, Some(Occasion::BabyShower));
        let by_relationship = if other_recipient { &[][..] } else { relationship_implies(q.relationship_type) };
        let implied_tags = q
            .occasion
            .map_or(&[][..], occasion_implies)
            .iter()
            .chain(age_implies(q.age))
            .map(|(tag, weight)| (tag, i64::from(*weight)))
            .chain(by_relationship.iter().map(|(tag, weight)| (tag, i64::from(*weight))));
        for (tag, weight) in implied_tags {
            let weight = weight * IMPLIED / 100 * share / 100;
            let stems = text::stems(tag);
            match implied.iter_mut().find(|c| c.stems == stems) {
                Some(c) => c.weight = c.weight.max(weight),
                None => implied.push(Clause { stems, weight, tags_only: true, meets: false, written: false }),
            }
        }
        // What the person said about the recipient: the tags nearest to it in meaning, like an
        // occasion's (never a match on its own, never remembered: `related_once`).
        if let (Some(model), Some(about)) = (model, about) {
            for (tag, cosine) in model.related_once(about) {
                let weight = (f64::from(weight_of_cosine(cosine)) * ABOUT as f64).round() as i64 * share / 100;
                let stems = text::stems(&tag);
                if weight <= 0 || stems.is_empty() {
                    continue;
                }
                match implied.iter_mut().find(|c| c.stems == stems) {
                    Some(c) => c.weight = c.weight.max(weight),
                    None => implied.push(Clause { stems, weight, tags_only: true, meets: false, written: false }),
                }
            }
        }
        let relationship_points = if other_recipient { RELATIONSHIP_OTHER_RECIPIENT } else { RELATIONSHIP };
        let first_occasion_points = if asked(q).is_empty() && q.occasion.is_some() { OCCASION_FIRST } else { 0 };
        Plan { interests, implied, relationship_points, first_occasion_points }
    }
}

impl Plan {
    /// The plan for the nearest alternatives when no gift meets any interest: every clause
    /// people wrote may meet now ([`Clause::written`]: the vocabulary's weaker and broader words,
    /// "craft beer": `brewing`, "opera": `music`), so what only stood near an interest is found,
    /// strongest first, by the same walk and scores. Only asked when the plan itself found
    /// nothing (`ranking::nearest`), and only ever shown as what it is (`Why::Nearest`). On the
    /// dev set, letting the model's words meet too showed fishing gear for "aquarium fish" and
    /// bike racks for "motorcycles": 10 more unsuitable cards for nDCG@6 +0.004.
    pub fn nearest(&self) -> Plan {
        let mut plan = self.clone();
        for clause in plan.interests.iter_mut().flatten() {
            clause.meets = clause.written;
        }
        plan
    }
}

/// Whether the catalog does not sell what an interest names: its own words are in no gift, and
/// the built-in vocabulary names the same thing in other words (a term at full weight) that are
/// in no gift either ("motorcycles": `motorcycle`, `motorbike`; "craft beer": `beer`). Then the
/// interest's related terms only add, and none meets it on its own: the model's nearest words
/// are near the thing, not it (bicycle gear for "motorcycles", a cold-brew pitcher for "craft
/// beer"), and so are the vocabulary's weaker ones ("brewing": a hot-sauce brewing kit). The
/// honest answer is that nothing fits. An interest the vocabulary names no same-meaning word
/// for ("Minecraft": `gaming` 0.8, `pixel` 0.8) is left to its related terms as before.
fn not_sold(stats: &dyn Stats, own: &[String], vocabulary: &[(String, f64, bool)]) -> bool {
    let held = |stems: &[String]| !stems.is_empty() && stems.iter().all(|s| stats.df(s) > 0);
    let mut same = vocabulary.iter().filter(|(_, w, _)| *w >= 1.0).map(|(t, _, _)| text::stems(t)).peekable();
    !held(own) && same.peek().is_some() && !same.any(|stems| held(&stems))
}

/// A related tag that is broader than a tag the interest itself meets adds to a gift, never
/// meets one: "cats" meets the `cats` tag, and `pets` (close to "cats" in meaning, 0.77) would
/// otherwise meet every dog's harness. The catalog says `cats` is a kind of `pets`
/// ([`kind_of`]), so the interest is the narrower thing; a gift tagged `pets` alone is for a
/// sibling kind. The interest's own words always meet.
fn broader_only_adds(clauses: &mut [Clause], own: &[String], stats: &dyn Stats) {
    let meeting: Vec<String> = clauses.iter().filter(|c| c.meets).map(Clause::key).collect();
    for clause in clauses.iter_mut().filter(|c| c.meets && c.stems != own) {
        let broad = clause.key();
        if meeting.iter().any(|narrow| kind_of(stats, narrow, &broad)) {
            clause.meets = false;
        }
    }
}

/// Whether a model's related term is only a modifier of a phrase interest: it shares a word
/// with the interest but is not its head (the last word). The model scores such a part high for
/// the letters it shares ("hip hop": "hip" 0.68, "craft beer": "crafts", "new dad": "new"), while
/// the phrase rule says a phrase meets only whole; its head may stand for it ("craft beer":
/// "beer"). The built-in vocabulary is written by people and is not filtered.
fn modifier_of(term: &[String], own: &[String]) -> bool {
    own.len() >= 2 && term.iter().any(|s| own.contains(s)) && term != &own[own.len() - 1..]
}

/// Whether a model's related term is only the thing of an activity the interest names: "knit" for
/// "knitting", "game" for "gaming", "fish" for "fly fishing". The analysis keeps the two apart
/// (`text::ING`) and the model joins them again for the letters they share (cosine ~0.8: cable-knit
/// socks met "knitting" through "knit"). Where the thing does stand for the activity, the built-in
/// vocabulary, written by people and not filtered, says so ("camping": "camp" 1).
fn thing_of_activity(term: &[String], own: &[String]) -> bool {
    matches!(term, [one] if own.iter().any(|o| o.strip_suffix(text::ING) == Some(one.as_str())))
}

/// How specific a clause is, 0.75–1.0: the IDF of its rarest word against the most an IDF can
/// be in this catalog. Mild on purpose: it orders related terms and interests, it does not
/// decide between a gift that fits and one that does not.
fn specificity(stats: &dyn Stats, stems: &[String]) -> f64 {
    let n = stats.gifts() as f64;
    if n < 1.0 {
        return 1.0;
    }
    let idf = |df: f64| (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
    let rarest = stems.iter().map(|s| stats.df(s)).min().unwrap_or(0) as f64;
    let top = idf(0.0).max(f64::MIN_POSITIVE);
    0.75 + 0.25 * (idf(rarest) / top).clamp(0.0, 1.0)
}

/// What an occasion says about the recipient and the kind of gift, as tags and weights (per
/// cent). A baby shower's gift is for the baby; a housewarming's for the home.
fn occasion_implies(occasion: Occasion) -> &'static [(&'static str, u8)] {
    match occasion {
        Occasion::Birthday | Occasion::JustBecause => &[],
        Occasion::Anniversary => {
            &[("personalized", 60), ("experience", 60), ("jewelry", 50), ("wine", 50), ("cozy", 30), ("decor", 30)]
        }
        Occasion::Wedding => &[("home", 80), ("decor", 60), ("cooking", 60), ("personalized", 60), ("wine", 50)],
        Occasion::Graduation => &[("travel", 60), ("tech", 50), ("personalized", 40), ("stationery", 40)],
        Occasion::Holiday => &[("cozy", 50), ("decor", 40), ("food", 40), ("chocolate", 40), ("candles", 40)],
        Occasion::Valentines => {
            &[("jewelry", 70), ("chocolate", 70), ("candles", 60), ("spa", 60), ("personalized", 50)]
        }
        Occasion::MothersDay => &[
            ("spa", 70),
            ("wellness", 60),
            ("gardening", 50),
            ("jewelry", 50),
            ("personalized", 50),
            ("candles", 40),
            ("plants", 40),
        ],
        Occasion::FathersDay => &[("tools", 60), ("gadgets", 50), ("outdoors", 40), ("fishing", 40), ("cooking", 30)],
        Occasion::Housewarming => {
            &[("home", 100), ("decor", 80), ("plants", 70), ("candles", 60), ("cozy", 50), ("cooking", 50)]
        }
        Occasion::BabyShower => &[("baby", 100), ("plush", 60), ("kids", 40)],
        Occasion::Retirement => {
            &[("travel", 60), ("experience", 50), ("gardening", 50), ("books", 40), ("wine", 40), ("puzzles", 30)]
        }
        Occasion::ThankYou => &[
            ("chocolate", 60),
            ("food", 50),
            ("tea", 50),
            ("coffee", 50),
            ("candles", 50),
            ("plants", 40),
            ("stationery", 40),
        ],
        Occasion::GetWell => {
            &[("wellness", 100), ("cozy", 80), ("spa", 70), ("tea", 60), ("books", 50), ("puzzles", 50), ("plush", 40)]
        }
    }
}

/// What the relationship says about the kind of gift people give, whatever the interests: a
/// grandparent is given what keeps the family near, a teacher or a colleague something small
/// to enjoy at work or at home, a neighbour something for the house or the table.
fn relationship_implies(relationship: RelationshipType) -> &'static [(&'static str, u8)] {
    match relationship {
        RelationshipType::Grandparent => &[("personalized", 70), ("photography", 50), ("history", 40), ("cozy", 40)],
        RelationshipType::Parent => &[("personalized", 50), ("cozy", 30)],
        RelationshipType::Partner => &[("personalized", 50), ("jewelry", 40), ("experience", 40)],
        RelationshipType::Colleague => &[("stationery", 60), ("coffee", 50), ("tea", 50), ("chocolate", 40)],
        RelationshipType::Boss => &[("stationery", 50), ("wine", 40), ("coffee", 40), ("books", 30)],
        RelationshipType::Teacher => {
            &[("stationery", 60), ("tea", 50), ("coffee", 50), ("chocolate", 50), ("plants", 40), ("books", 40)]
        }
        RelationshipType::Neighbor => &[("food", 60), ("home", 50), ("candles", 50), ("plants", 50), ("chocolate", 40)],
        RelationshipType::Child
        | RelationshipType::Grandchild
        | RelationshipType::Sibling
        | RelationshipType::Friend
        | RelationshipType::Other => &[],
    }
}

/// What an age says about the kind of gift: babies, small children and children are given
/// different things than adults, whatever the relationship.
fn age_implies(age: Option<u8>) -> &'static [(&'static str, u8)] {
    match age {
        Some(0..=2) => &[("baby", 100), ("plush", 60), ("toys", 60)],
        Some(3..=7) => &[("toys", 100), ("kids", 80), ("plush", 50), ("learning", 50)],
        Some(8..=12) => &[("kids", 80), ("toys", 60), ("learning", 60), ("stem", 50), ("science", 40)],
        _ => &[],
    }
}

/// The points of a gift apart from interests and implied tags, from the numbers the index packs
/// too: the occasion it lists, the relationship, its age range, its price in the budget.
#[inline]
pub(super) fn base_points(
    plan: &Plan,
    q: &SuggestGiftsQuery,
    price: i64,
    ages: (u8, u8),
    lists_relationship: bool,
    (lists_occasion, lists_it_first): (bool, bool),
) -> i64 {
    let mut points = 0;
    if lists_occasion {
        points += OCCASION_LISTED;
    }
    if lists_it_first {
        points += plan.first_occasion_points;
    }
    if lists_relationship {
        points += plan.relationship_points;
    }
    if q.age.is_none() && ages.1 < ADULT && adult_recipient(q) {
        points -= CHILDS_GIFT_FOR_ADULT;
    }
    if q.age.is_some() {
        let span = i64::from(ages.1.saturating_sub(ages.0)).min(90);
        points += AGE_FIT * (90 - span) / 90;
    }
    if let Some(max) = q.budget_max
        && max.amount_minor > 0
    {
        let permille = (price.saturating_mul(1000) / max.amount_minor).clamp(0, 1000);
        points += PRICE_FIT * price_curve(permille) / 1000;
    }
    points
}

/// Whether the recipient is surely an adult though no age was given: a partner, a parent, a
/// grandparent, a colleague, a boss or a teacher (a friend, a sibling or a neighbour may be a
/// child), unless the occasion says the gift is for someone else (a colleague's baby shower:
/// the baby). Without an age the hard rules cannot keep a child's toy from a chemistry teacher.
fn adult_recipient(q: &SuggestGiftsQuery) -> bool {
    use giftgenius_types::RelationshipType as R;
    !matches!(q.occasion, Some(Occasion::BabyShower))
        && matches!(q.relationship_type, R::Partner | R::Parent | R::Grandparent | R::Colleague | R::Boss | R::Teacher)
}

/// The most [`base_points`] can give any gift for `q`: what a walk bounds a gift by before it
/// reads the gift's own numbers.
pub(super) fn base_points_most(plan: &Plan, q: &SuggestGiftsQuery) -> i64 {
    let occasion = if q.occasion.is_some() { OCCASION_LISTED + plan.first_occasion_points } else { 0 };
    let age = if q.age.is_some() { AGE_FIT } else { 0 };
    let price = if q.budget_max.is_some_and(|max| max.amount_minor > 0) { PRICE_FIT } else { 0 };
    occasion + plan.relationship_points.max(0) + age + price
}

/// How much a price at `permille` of the budget's maximum is worth, per 1,000: most people
/// spend a good part of a budget on a gift (half to nine tenths), rarely a tenth of it; the very
/// edge is fine, a little less.
fn price_curve(permille: i64) -> i64 {
    const POINTS: [(i64, i64); 5] = [(0, 300), (250, 700), (500, 1000), (900, 1000), (1000, 800)];
    for pair in POINTS.windows(2) {
        let ((x0, y0), (x1, y1)) = (pair[0], pair[1]);
        if permille <= x1 {
            return y0 + (y1 - y0) * (permille - x0) / (x1 - x0);
        }
    }
    800
}

/// A gift's terms per field, for the linear scan and the reasons (the index holds the same in
/// posting lists).
#[derive(Debug, Default)]
pub(super) struct GiftTerms {
    /// Per tag, its stems.
    pub tags: Vec<Vec<String>>,
    pub title: Vec<String>,
    pub description: Vec<String>,
}

impl GiftTerms {
    pub fn of(gift: &CatalogGift) -> GiftTerms {
        GiftTerms {
            tags: gift.tags.iter().map(|t| text::stems(t)).collect(),
            title: text::stems(&gift.title),
            description: text::stems(&gift.description),
        }
    }

    /// The fields `clause` occurs in (`TAG`, `TITLE`, `DESCRIPTION` bits), and the index of the
    /// tag that meets it.
    pub fn meets(&self, clause: &Clause) -> (u8, Option<usize>) {
        let all_in = |field: &[String]| clause.stems.iter().all(|s| field.contains(s));
        // A tag only whole: "gaming" is not "board games", "craft beer" not "crafts".
        let tag = self.tags.iter().position(|t| *t == clause.stems);
        let mut mask = match tag {
            Some(0) => TAG | KIND,
            Some(_) => TAG,
            None => 0,
        };
        if !clause.tags_only {
            if all_in(&self.title) {
                mask |= TITLE;
            }
            if all_in(&self.description) {
                mask |= DESCRIPTION;
            }
        }
        (mask, tag)
    }

    /// Whether an interest (its `clauses`) is met: its strength (the best clause's) and the
    /// clause that met it with its fields, when a clause that can meet on its own reaches
    /// [`MATCH_FLOOR`].
    pub fn interest(&self, clauses: &[Clause]) -> Option<(i64, usize, u8)> {
        let mut meeting: Option<(i64, usize, u8)> = None;
        let mut any = 0;
        let mut sum = 0;
        let mut kind = false;
        for (c, clause) in clauses.iter().enumerate() {
            let (mask, _) = self.meets(clause);
            let strength = strength(clause.weight, mask);
            any = any.max(strength);
            sum += strength;
            kind |= clause.meets && mask & KIND != 0;
            if clause.meets && mask & (TAG | TITLE) != 0 && strength > 0 && meeting.is_none_or(|(s, _, _)| strength > s)
            {
                meeting = Some((strength, c, mask));
            }
        }
        let (s, c, mask) = meeting?;
        (s >= MATCH_FLOOR).then_some((combined(any, sum, kind), c, mask))
    }
}

/// A clause of `weight` met in the fields of `mask`.
#[inline]
pub(super) fn strength(weight: i64, mask: u8) -> i64 {
    weight * FIELD[usize::from(mask & 15)] / 1000
}

/// The whole score of one gift by the linear reference, with the interests it met (bit `k`
/// for interest `k`), or `None` when the hard rules exclude it or interests were asked and none
/// is met. `ranking::Linear` scores with it; the index computes the same from its lists.
pub(super) fn score(gift: &CatalogGift, terms: &GiftTerms, q: &SuggestGiftsQuery, plan: &Plan) -> Option<(i64, u16)> {
    if !super::passes_hard_rules(gift, q) {
        return None;
    }
    let mut total = 0;
    let mut matched = 0u16;
    for (k, clauses) in plan.interests.iter().enumerate() {
        if let Some((s, _, _)) = terms.interest(clauses) {
            total += s;
            matched |= 1 << k;
        }
    }
    if !plan.interests.is_empty() && matched == 0 {
        return None;
    }
    let implied: Vec<i64> =
        plan.implied.iter().map(|c| strength(c.weight, terms.meets(c).0)).filter(|&s| s > 0).collect();
    let kind = plan.implied.iter().any(|c| terms.meets(c).0 & KIND != 0);
    total += combined_implied(implied.iter().copied().max().unwrap_or(0), implied.iter().sum(), kind);
    let price = price_in(gift.price_cents, q.currency).amount_minor;
    let lists_occasion = q.occasion.is_some_and(|o| gift.occasions.contains(o));
    let lists_it_first = q.occasion.is_some() && gift.first_occasion == q.occasion;
    let lists_relationship = gift.relationships.contains(q.relationship_type);
    total +=
        base_points(plan, q, price, (gift.age_min, gift.age_max), lists_relationship, (lists_occasion, lists_it_first));
    Some((total, matched))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_tag_counts_most_then_the_name_then_the_description_and_together_more() {
        assert_eq!(FIELD[usize::from(TAG | KIND)], 1000);
        assert!(FIELD[usize::from(TAG)] < FIELD[usize::from(TAG | KIND)], "a later tag counts less");
        assert!(FIELD[usize::from(TITLE)] < FIELD[usize::from(TAG | KIND)]);
        assert!(FIELD[usize::from(DESCRIPTION)] < FIELD[usize::from(TITLE)]);
        assert!(FIELD[usize::from(TAG | TITLE | DESCRIPTION)] > FIELD[usize::from(TAG | TITLE)]);
        assert!(FIELD[usize::from(TAG | TITLE)] > FIELD[usize::from(TAG)]);
        assert_eq!(FIELD[0], 0);
    }

    /// The walk finds the gifts an interest meets from the smallest field masks that meet it
    /// (`index::meeting_masks`) and bounds a clause by its strength in every field it can occur
    /// in: both need a strength that never falls as fields are added.
    #[test]
    fn a_strength_never_falls_as_fields_are_added() {
        for mask in 0..16usize {
            for more in 0..16usize {
                assert!(FIELD[mask | more] >= FIELD[mask], "{mask:04b} + {more:04b}");
            }
        }
    }

    /// The walk bounds a gift's points apart from its interests by `base_points_most` before
    /// it reads the gift's numbers.
    #[test]
    fn no_gift_gets_more_base_points_than_the_most() {
        let input: SuggestGiftsInput = serde_json::from_str(
            r#"{"relationship_type":"partner","age":35,"interests":["tea"],"budget_max":100,"occasion":"baby_shower"}"#,
        )
        .unwrap();
        for q in [
            input.clone().normalize(),
            SuggestGiftsInput { age: None, budget_max: None, occasion: None, ..input }.normalize(),
        ] {
            let plan = Plan {
                interests: vec![],
                implied: vec![],
                relationship_points: RELATIONSHIP,
                first_occasion_points: OCCASION_FIRST,
            };
            let most = base_points_most(&plan, &q);
            for price in [0, 1, 2500, 5000, 9000, 10_000, 10_001, i64::MAX / 2000] {
                for ages in [(0, 0), (30, 40), (0, 120), (35, 35)] {
                    for (r, o) in [(false, false), (true, true)] {
                        // A gift lists the occasion only when one is asked (`index::Wanted`).
                        let o = o && q.occasion.is_some();
                        assert!(base_points(&plan, &q, price, ages, r, (o, o)) <= most, "{price} {ages:?}");
                    }
                }
            }
            let price = q.budget_max.map_or(0, |m| m.amount_minor * 3 / 4);
            let o = q.occasion.is_some();
            assert_eq!(base_points(&plan, &q, price, (35, 35), true, (o, o)), most);
        }
    }

    /// Without interests a gift that lists the asked occasion first gets more; with interests
    /// the interests say what the gift is, and the order of its occasions adds nothing.
    #[test]
    fn without_interests_the_occasion_a_gift_lists_first_counts_more() {
        let query = |json: &str| serde_json::from_str::<SuggestGiftsInput>(json).unwrap().normalize();
        let stats = Tagged(vec![vec!["wine"]]);
        let plan_of = |q: &SuggestGiftsQuery| Plan::new(q, &stats, None, None);
        let wedding = query(r#"{"relationship_type":"colleague","occasion":"wedding"}"#);
        let plan = plan_of(&wedding);
        let points = |first: bool| base_points(&plan, &wedding, 0, (18, 120), false, (true, first));
        assert_eq!(points(true) - points(false), OCCASION_FIRST);
        assert_eq!(base_points_most(&plan, &wedding), OCCASION_LISTED + OCCASION_FIRST + RELATIONSHIP);
        let with_interest = query(r#"{"relationship_type":"colleague","occasion":"wedding","interests":["wine"]}"#);
        let plan = plan_of(&with_interest);
        let points = |first: bool| base_points(&plan, &with_interest, 0, (18, 120), false, (true, first));
        assert_eq!(points(true), points(false));
        let no_occasion = query(r#"{"relationship_type":"colleague"}"#);
        assert_eq!(plan_of(&no_occasion).first_occasion_points, 0);
    }

    /// Without an age, a teacher, a colleague or a parent is an adult: a gift made only for
    /// children counts less for them; a friend may be a child, and a baby shower's gift is for
    /// the baby whoever the guest is; with an age the hard rules decide.
    #[test]
    fn without_an_age_a_childs_gift_counts_less_for_an_adult_relationship() {
        let query = |json: &str| serde_json::from_str::<SuggestGiftsInput>(json).unwrap().normalize();
        let stats = Tagged(vec![vec!["science"]]);
        let less = |json: &str| {
            let q = query(json);
            let plan = Plan::new(&q, &stats, None, None);
            base_points(&plan, &q, 0, (18, 120), false, (false, false))
                - base_points(&plan, &q, 0, (5, 11), false, (false, false))
        };
        assert_eq!(less(r#"{"relationship_type":"teacher","interests":["science"]}"#), CHILDS_GIFT_FOR_ADULT);
        assert_eq!(less(r#"{"relationship_type":"colleague","occasion":"thank_you"}"#), CHILDS_GIFT_FOR_ADULT);
        assert_eq!(less(r#"{"relationship_type":"grandparent"}"#), CHILDS_GIFT_FOR_ADULT);
        assert_eq!(less(r#"{"relationship_type":"friend","interests":["science"]}"#), 0);
        assert_eq!(less(r#"{"relationship_type":"colleague","occasion":"baby_shower"}"#), 0);
        // A range that reaches adulthood is no child's gift (17 is the last year it ends before).
        let q = query(r#"{"relationship_type":"boss"}"#);
        let plan = Plan::new(&q, &stats, None, None);
        let at = |ages| base_points(&plan, &q, 0, ages, false, (false, false));
        assert_eq!(at((12, 18)), at((30, 120)));
        assert_eq!(at((12, 17)), at((30, 120)) - CHILDS_GIFT_FOR_ADULT);
    }

    #[test]
    fn the_price_counts_most_in_the_upper_middle_of_the_budget() {
        assert!(price_curve(50) < price_curve(300));
        assert!(price_curve(300) < price_curve(600));
        assert_eq!(price_curve(600), price_curve(850));
        assert!(price_curve(1000) < price_curve(850));
    }

    #[test]
    fn a_phrase_meets_a_field_with_all_its_words_or_one_whole_tag() {
        let terms = GiftTerms {
            tags: vec![text::stems("crafts"), text::stems("board-games")],
            title: text::stems("Padded Hip Belt"),
            description: text::stems("Take care of your plants with a self-watering pot."),
        };
        let clause =
            |s: &str| Clause { stems: text::stems(s), weight: UNIT, tags_only: false, meets: true, written: true };
        assert_eq!(terms.meets(&clause("hip hop")).0, 0);
        assert_eq!(terms.meets(&clause("craft beer")).0, 0);
        assert_eq!(terms.meets(&clause("craft")).0, TAG | KIND, "the first tag: what the gift is");
        assert_eq!(terms.meets(&clause("crafting")).0, 0, "the activity is not its thing (related terms relink)");
        assert_eq!(terms.meets(&clause("board games")), (TAG, Some(1)));
        assert_eq!(terms.meets(&clause("games")).0, 0, "a tag is met whole");
        assert_eq!(terms.meets(&clause("hip belt")).0, TITLE);
        assert_eq!(terms.meets(&clause("plant")).0, DESCRIPTION);
    }

    #[test]
    fn an_interest_met_by_a_gift_that_is_something_else_counts_less() {
        let clause = |s: &str, weight: i64, meets: bool| Clause {
            stems: text::stems(s),
            weight,
            tags_only: false,
            meets,
            written: true,
        };
        let gift = |tags: &[&str], title: &str| GiftTerms {
            tags: tags.iter().map(|t| text::stems(t)).collect(),
            title: text::stems(title),
            description: vec![],
        };
        let tea = [clause("tea", UNIT, true), clause("kitchen", 500, false)];
        let tin = gift(&["tea", "food"], "Loose Tea Tin");
        let towel = gift(&["cooking", "tea"], "Linen Tea Towel");
        assert_eq!(tin.interest(&tea).map(|(s, _, _)| s), Some(strength(UNIT, TAG | KIND | TITLE)));
        assert_eq!(
            towel.interest(&tea).map(|(s, _, _)| s),
            Some(strength(UNIT, TAG | TITLE) * OTHER_KIND_PERCENT / 100),
            "a towel met by its later tag and its name is something else"
        );
        // A clause that only adds (a broader kind) does not say what the gift is.
        let kitchen_towel = gift(&["kitchen", "tea"], "Linen Tea Towel");
        let (s, _, _) = kitchen_towel.interest(&tea).expect("met by its words");
        assert_eq!(
            s,
            combined(strength(UNIT, TAG | TITLE), strength(UNIT, TAG | TITLE) + strength(500, TAG | KIND), false)
        );
        // A close related term that can meet on its own does.
        let near = [clause("tea", UNIT, true), clause("kitchen", 700, true)];
        assert_eq!(
            kitchen_towel.interest(&near).map(|(s, _, _)| s),
            Some(combined(strength(UNIT, TAG | TITLE), strength(UNIT, TAG | TITLE) + strength(700, TAG | KIND), true))
        );
    }

    /// The model's neighbours of an activity include its thing, near for the letters they share.
    struct Letters;

    impl RelatedTerms for Letters {
        fn related(&self, interest: &str) -> Vec<(String, f32)> {
            match interest {
                "knitting" => vec![("knit".into(), 0.8), ("yarn".into(), 0.75)],
                "fly fishing" => vec![("fish".into(), 0.8), ("tackle".into(), 0.75)],
                _ => vec![("knit".into(), 0.8)],
            }
        }
    }

    #[test]
    fn the_models_thing_of_an_asked_activity_is_dropped() {
        let stats = Tagged(vec![vec!["yarn"], vec!["tackle"]]);
        let keys = |interest: &str| -> Vec<String> {
            let input: SuggestGiftsInput =
                serde_json::from_str(&format!(r#"{{"relationship_type":"friend","interests":["{interest}"]}}"#))
                    .unwrap();
            Plan::new(&input.normalize(), &stats, Some(&Letters), None).interests[0].iter().map(Clause::key).collect()
        };
        let knitting = keys("knitting");
        assert!(!knitting.contains(&"knit".into()) && knitting.contains(&"yarn".into()), "{knitting:?}");
        let fly_fishing = keys("fly fishing");
        assert!(!fly_fishing.contains(&"fish".into()) && fly_fishing.contains(&"tackl".into()), "{fly_fishing:?}");
        // The thing itself asked: the model's same word is the interest's own.
        assert_eq!(keys("knit"), ["knit"]);
        assert!(thing_of_activity(&text::stems("game"), &text::stems("gaming")));
        assert!(!thing_of_activity(&text::stems("gaming"), &text::stems("gaming")));
        assert!(!thing_of_activity(&text::stems("game"), &text::stems("board games")));
    }

    /// What an occasion implies counts less for a gift whose first tag none of it is: a thank
    /// you implies chocolate and tea; a hiking trail-mix mug only goes with them.
    #[test]
    fn what_an_occasion_implies_counts_less_for_a_gift_that_only_goes_with_it() {
        let input: SuggestGiftsInput =
            serde_json::from_str(r#"{"relationship_type":"teacher","occasion":"thank_you"}"#).unwrap();
        let q = input.normalize();
        let plan = Plan::new(&q, &Tagged(vec![vec!["tea"]]), None, None);
        // One built-in gift with other tags: everything but the implied tags scores alike.
        let base = super::super::builtin_gifts().into_iter().next().expect("a built-in gift");
        let score_of = |tags: &[&str]| {
            let gift = CatalogGift { tags: tags.iter().map(|&t| std::sync::Arc::from(t)).collect(), ..base.clone() };
            score(&gift, &GiftTerms::of(&gift), &q, &plan).expect("passes").0
        };
        let none = score_of(&["art"]);
        // A thank you implies tea and food at 50 each.
        let first = strength(IMPLIED * 50 / 100, TAG | KIND);
        let later = strength(IMPLIED * 50 / 100, TAG);
        assert_eq!(score_of(&["tea", "food"]) - none, combined_implied(first, first + later, true));
        assert_eq!(
            score_of(&["hiking", "tea", "food"]) - none,
            (later + later * OTHER_IMPLIED_PERCENT / 100) * OTHER_KIND_PERCENT / 100,
            "a trail-mix mug only goes with a thank you"
        );
    }

    /// The relationship implies kinds of gift as an occasion does: what keeps the family near
    /// for a grandparent, nothing special for a friend; for a baby shower the gift is the baby's,
    /// whoever the guest is, so the relationship implies nothing.
    #[test]
    fn the_relationship_implies_kinds_of_gift_unless_the_gift_is_for_someone_else() {
        let base = super::super::builtin_gifts().into_iter().next().expect("a built-in gift");
        let gain = |json: &str| {
            let q = serde_json::from_str::<SuggestGiftsInput>(json).unwrap().normalize();
            let plan = Plan::new(&q, &Tagged(vec![vec!["personalized"]]), None, None);
            let score_of = |tags: &[&str]| {
                let gift =
                    CatalogGift { tags: tags.iter().map(|&t| std::sync::Arc::from(t)).collect(), ..base.clone() };
                score(&gift, &GiftTerms::of(&gift), &q, &plan).expect("passes").0
            };
            score_of(&["personalized"]) - score_of(&["art"])
        };
        assert_eq!(gain(r#"{"relationship_type":"grandparent"}"#), strength(IMPLIED * 70 / 100, TAG | KIND));
        assert_eq!(gain(r#"{"relationship_type":"friend"}"#), 0);
        assert_eq!(gain(r#"{"relationship_type":"grandparent","occasion":"baby_shower"}"#), 0);
    }

    /// Tags per gift, as a catalog's statistics.
    struct Tagged(Vec<Vec<&'static str>>);

    impl Stats for Tagged {
        fn gifts(&self) -> usize {
            self.0.len()
        }
        fn df(&self, term: &str) -> usize {
            self.tags_together(term, term)
        }
        fn tags_together(&self, a: &str, b: &str) -> usize {
            self.0.iter().filter(|tags| tags.contains(&a) && tags.contains(&b)).count()
        }
    }

    /// The model's neighbours of "cats": `pets` close enough to meet on its own.
    struct Near;

    impl RelatedTerms for Near {
        fn related(&self, _: &str) -> Vec<(String, f32)> {
            vec![("pets".into(), 0.85)]
        }
    }

    fn pets_meets(catalog: &Tagged) -> bool {
        let input: SuggestGiftsInput =
            serde_json::from_str(r#"{"relationship_type":"friend","interests":["cats"]}"#).unwrap();
        let plan = Plan::new(&input.normalize(), catalog, Some(&Near), None);
        let clauses = &plan.interests[0];
        assert!(clauses.iter().any(|c| c.key() == "cat" && c.meets), "the interest's own words meet: {clauses:?}");
        clauses.iter().find(|c| c.key() == "pet").expect("the related tag is a clause").meets
    }

    #[test]
    fn a_related_tag_broader_than_a_tag_the_interest_meets_only_adds() {
        // Every `cats` gift is also `pets`: the catalog says cats are a kind of pets, so a gift
        // tagged `pets` (and `dogs`) is not met by "cats" through `pets`.
        let kinds = Tagged(vec![
            vec!["cat", "pet"],
            vec!["cat", "pet", "book"],
            vec!["dog", "pet"],
            vec!["dog", "pet", "hike"],
            vec!["pet", "art"],
        ]);
        assert!(kind_of(&kinds, "cat", "pet") && kind_of(&kinds, "dog", "pet"));
        assert!(!kind_of(&kinds, "pet", "cat") && !kind_of(&kinds, "pet", "pet"));
        assert!(!pets_meets(&kinds));
        // Where `cats` is not a kind of `pets` (most cat gifts are not tagged `pets`, or only one
        // gift is tagged `cats`), the close related tag still meets.
        let unrelated = Tagged(vec![vec!["cat", "pet"], vec!["cat", "book"], vec!["cat", "cozy"], vec!["pet", "dog"]]);
        assert!(pets_meets(&unrelated));
        let one = Tagged(vec![vec!["cat", "pet"], vec!["dog", "pet"], vec!["pet"]]);
        assert!(pets_meets(&one));
    }

    /// The model's neighbours of anything: a bicycle.
    struct Bike;

    impl RelatedTerms for Bike {
        fn related(&self, _: &str) -> Vec<(String, f32)> {
            vec![("bike".into(), 0.85)]
        }
    }

    fn meeting_related(catalog: &Tagged, interest: &str) -> Vec<String> {
        let input: SuggestGiftsInput =
            serde_json::from_str(&format!(r#"{{"relationship_type":"friend","interests":["{interest}"]}}"#)).unwrap();
        let plan = Plan::new(&input.normalize(), catalog, Some(&Bike), None);
        let own = text::stems(interest);
        plan.interests[0].iter().filter(|c| c.meets && c.stems != own).map(Clause::key).collect()
    }

    #[test]
    fn what_the_catalog_does_not_sell_no_nearby_word_meets() {
        // No gift has "motorcycle" or the vocabulary's same-meaning "motorbike": bicycle gear is
        // near, not it.
        let bicycles = Tagged(vec![vec!["bike", "outdoor"], vec!["bike", "tool"], vec!["beer"]]);
        assert!(meeting_related(&bicycles, "motorcycles").is_empty());
        // The vocabulary's weaker terms do not meet either ("craft beer": `brewing` 0.8).
        let brewing = Tagged(vec![vec!["brew~ing", "cooking"], vec!["bike"]]);
        assert!(meeting_related(&brewing, "craft beer").is_empty());
        // Where the catalog sells the thing under the vocabulary's word, related terms meet as before.
        let motorbikes = Tagged(vec![vec!["motorbik", "tool"], vec!["bike", "outdoor"]]);
        assert!(meeting_related(&motorbikes, "motorcycles").contains(&"bike".to_string()));
        // An interest the vocabulary names no same-meaning word for keeps its related terms.
        assert!(!meeting_related(&bicycles, "minecraft").is_empty());
    }
}
