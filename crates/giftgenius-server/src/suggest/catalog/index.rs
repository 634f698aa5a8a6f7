//! The catalog's index, built once per catalog, so a query touches only the gifts it can match.
//!
//! Per term (a stem of `text.rs`, or a whole tag as its stems, "board game"): which gifts have
//! it as a tag, in the title, in the description, and in how many gifts it occurs
//! (for specificity). Per gift: the few numbers the hard filters and the score need (price,
//! ages, stock, relationship and occasion bits), packed together. Per term also its most common
//! surface form, so a model can embed the catalog's own words ([`Index::vocabulary`]).
//!
//! A query walks the posting lists of its plan's clauses (`fit.rs`) a chunk of gift numbers at a
//! time: per clause and field, the chunk's bitmap of gifts with all its words there (the AND of
//! its words' lists), then per gift the clause's strength from the fields it met, the best per
//! interest; then it reports the chunk's gifts that pass the filters, in gift order, with their
//! score. A query with interests visits only chunks where an interest has a posting (lists of
//! numbers are jumped through); a query without visits every gift. `ranking.rs` turns the
//! matches into the answer; a property test checks it is exactly the linear scan's.

use std::ops::Range;

use giftgenius_types::gifts::SuggestGiftsQuery;
use giftgenius_types::{Occasion, RelationshipType};

use super::fit::{self, DESCRIPTION, KIND, MATCH_FLOOR, Plan, Stats, TAG, TITLE};
use super::ranking::Interests;
use super::{CatalogGift, Set, price_in, text};

/// The numbers of one gift the filters and the score read.
#[derive(Debug, Clone, Copy, Default)]
struct Packed {
    price_cents: i64,
    age_min: u8,
    age_max: u8,
    in_stock: bool,
    relationships: u16,
    occasions: u16,
}

/// The fields a term is indexed in, in the order of `Index::postings`' arrays (`KIND`: the
/// gift's first tag, also in its `TAG` list).
const FIELDS: [u8; 4] = [TAG, TITLE, DESCRIPTION, KIND];

#[derive(Debug, Default)]
pub struct Index {
    terms: foldhash::HashMap<Box<str>, u32>,
    /// Per term: the gifts with it in a tag, in the title, in the description, as the first tag.
    postings: Vec<[Postings; 4]>,
    /// Per term: the gifts with it in any field.
    df: Vec<u32>,
    /// Per term: its most common lower-case surface form (a phrase term: its tag, '-' as ' ').
    surfaces: Vec<Box<str>>,
    packed: Vec<Packed>,
}

/// One posting list: its gift numbers ascending, or a bitmap of them when more than one gift in
/// 32 is in it (a bit per gift is then smaller than 32 bits per entry). At a million gifts the
/// words of every description ("from", "great", "pick") were 4 MB of entries each, ~70 MB in all
/// (issue 28); a query's broad interests walk faster as words too.
#[derive(Debug)]
enum Postings {
    Sparse(Box<[u32]>),
    Dense(Box<[u64]>),
}

impl Postings {
    fn of(list: Vec<u32>, gifts: usize) -> Postings {
        if list.len().saturating_mul(32) > gifts {
            let mut words = vec![0u64; gifts.div_ceil(64)];
            for n in list {
                words[n as usize / 64] |= 1 << (n % 64);
            }
            Postings::Dense(words.into_boxed_slice())
        } else {
            Postings::Sparse(list.into_boxed_slice())
        }
    }

    fn len(&self) -> usize {
        match self {
            Postings::Sparse(list) => list.len(),
            Postings::Dense(words) => words.iter().map(|w| w.count_ones() as usize).sum(),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Postings::Sparse(list) => list.is_empty(),
            Postings::Dense(_) => false,
        }
    }
}

/// A posting list during a walk: what is left of it.
#[derive(Clone, Copy)]
enum Cursor<'a> {
    Sparse(&'a [u32]),
    Dense(&'a [u64]),
}

fn relationship_bit(r: RelationshipType) -> u16 {
    Set::from_iter([r]).bits()
}

fn occasion_bit(o: Occasion) -> u16 {
    Set::from_iter([o]).bits()
}

/// The terms seen while building, with their lists.
#[derive(Default)]
struct Terms {
    ids: foldhash::HashMap<Box<str>, u32>,
    lists: Vec<[Vec<u32>; 4]>,
    df: Vec<u32>,
    /// Per term, its surface forms seen and how often (few per term).
    surfaces: Vec<Vec<(Box<str>, u32)>>,
}

impl Terms {
    fn term(&mut self, key: &str) -> u32 {
        if let Some(&t) = self.ids.get(key) {
            return t;
        }
        let t = self.lists.len() as u32;
        self.ids.insert(key.into(), t);
        self.lists.push(Default::default());
        self.df.push(0);
        self.surfaces.push(Vec::new());
        t
    }

    fn seen(&mut self, term: u32, surface: &str, times: u32) {
        let forms = &mut self.surfaces[term as usize];
        match forms.iter_mut().find(|(s, _)| &**s == surface) {
            Some((_, n)) => *n += times,
            None => forms.push((surface.into(), times)),
        }
    }
}

/// What one word of a text is: its term (none for a stopword) and its surface form's place in
/// the term's list, so a word seen before costs one look-up and no stemming.
#[derive(Clone, Copy)]
struct Word {
    term: Option<u32>,
}

/// Gift numbers walked together: per chunk, the strengths each gift got are gathered in arrays
/// small enough for the cache, then the chunk's gifts are visited in ascending order, so the
/// packed numbers are read front to back once (issue 28: one pass per posting list over a slot
/// per gift, each a scattered walk over the packed numbers, was 78 % of a call).
const CHUNK: usize = 4096;
const CHUNK_WORDS: usize = CHUNK / 64;

type Bitmap = [u64; CHUNK_WORDS];

/// A clause of the plan against this index: per field, the posting lists whose AND meets it
/// (none: it cannot occur there), its weight, and whose it is.
struct Compiled {
    fields: [Option<Vec<usize>>; 4],
    weight: i64,
    /// The interest it serves, or `None` for an implied tag.
    interest: Option<usize>,
    /// It can meet its interest on its own (`Clause::meets`).
    meets: bool,
}

impl Index {
    /// Indexes `gifts` (in the catalog's order: positions are gift numbers).
    pub fn build(gifts: &[CatalogGift]) -> Index {
        let mut index = Index { packed: Vec::with_capacity(gifts.len()), ..Index::default() };
        let mut terms = Terms::default();
        // Each distinct lower-case word once: its stem (a million gifts have tens of millions of
        // words and some tens of thousands of distinct ones; Snowball per word would dominate).
        let mut words: foldhash::HashMap<Box<str>, Word> = foldhash::HashMap::default();
        // The terms of each list of tags, once per list: gifts with the same tags share one
        // (`import::Merchants`), so the list's address names it while every gift is alive.
        let mut tag_lists: foldhash::HashMap<usize, (Box<[u32]>, Option<u32>)> = foldhash::HashMap::default();
        let mut field_terms: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
        let mut all: Vec<u32> = Vec::new();
        let mut lower = String::new();
        for (n, gift) in gifts.iter().enumerate() {
            let n = n as u32;
            let list = std::sync::Arc::as_ptr(&gift.tags) as *const () as usize;
            let (tag_terms, kind) = tag_lists.entry(list).or_insert_with(|| {
                let mut found = Vec::new();
                let mut kind = None;
                for (at, tag) in gift.tags.iter().enumerate() {
                    // A tag is met whole ("board games", never "games"): one term per tag.
                    let key = text::stems(tag).join(" ");
                    if !key.is_empty() {
                        let t = terms.term(&key);
                        terms.seen(t, &text::tag_surface(tag), 1);
                        found.push(t);
                        if at == 0 {
                            kind = Some(t);
                        }
                    }
                }
                found.sort_unstable();
                found.dedup();
                (found.into_boxed_slice(), kind)
            });
            if let Some(t) = kind {
                terms.lists[*t as usize][3].push(n);
            }
            for (into, text) in field_terms.iter_mut().zip([&*gift.title, &*gift.description]) {
                into.clear();
                for (_, word) in text::word_spans(text) {
                    lower.clear();
                    if word.is_ascii() {
                        lower.push_str(word);
                        lower.make_ascii_lowercase();
                    } else {
                        lower.push_str(&word.to_lowercase());
                    }
                    let known = match words.get(lower.as_str()) {
                        Some(w) => *w,
                        None => {
                            let folded = text::fold(&lower);
                            let w = Word { term: text::content(&folded).then(|| terms.term(&text::stem(&folded))) };
                            words.insert(lower.as_str().into(), w);
                            w
                        }
                    };
                    if let Some(t) = known.term {
                        terms.seen(t, &lower, 1);
                        into.push(t);
                    }
                }
                into.sort_unstable();
                into.dedup();
            }
            all.clear();
            for (field, list) in [&tag_terms[..], &field_terms[0], &field_terms[1]].into_iter().enumerate() {
                for &t in list {
                    terms.lists[t as usize][field].push(n);
                }
                all.extend_from_slice(list);
            }
            all.sort_unstable();
            all.dedup();
            for &t in &all {
                terms.df[t as usize] += 1;
            }
            index.packed.push(Packed {
                price_cents: gift.price_cents,
                age_min: gift.age_min,
                age_max: gift.age_max,
                in_stock: gift.stock > 0,
                relationships: gift.relationships.bits(),
                occasions: gift.occasions.bits(),
            });
        }
        let n = gifts.len();
        index.terms = terms.ids;
        index.df = terms.df;
        index.postings = terms.lists.into_iter().map(|lists| lists.map(|list| Postings::of(list, n))).collect();
        // The most common form; on a tie the first in byte order, so a rebuild names it alike.
        index.surfaces = terms
            .surfaces
            .into_iter()
            .map(|forms| {
                forms
                    .into_iter()
                    .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
                    .map_or_else(|| "".into(), |(s, _)| s)
            })
            .collect();
        index
    }

    pub fn len(&self) -> usize {
        self.packed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packed.is_empty()
    }

    /// The catalog's words as a model should embed them: each term's most common lower-case
    /// surface form ("hiking" for the stem "hike") and each tag of several words as one ("board
    /// games"), sorted and each once. A [`super::RelatedTerms`] answers some of these; the plan
    /// analyses the answer back into the same terms.
    pub fn vocabulary(&self) -> Vec<String> {
        let mut words: Vec<String> = self.surfaces.iter().filter(|s| !s.is_empty()).map(|s| s.to_string()).collect();
        words.sort_unstable();
        words.dedup();
        words
    }

    /// The gifts with one of `tags` (each a tag's stems joined by a space, `fit::Clause::key`),
    /// each once, ascending.
    pub fn tagged_with<'s>(&self, tags: impl IntoIterator<Item = &'s str>) -> Vec<u32> {
        let mut seen = vec![0u64; self.packed.len().div_ceil(64)];
        for tag in tags {
            match self.terms.get(tag).map(|&t| &self.postings[t as usize][0]) {
                Some(Postings::Sparse(list)) => {
                    for &n in list.iter() {
                        seen[n as usize / 64] |= 1 << (n % 64);
                    }
                }
                Some(Postings::Dense(words)) => {
                    for (into, word) in seen.iter_mut().zip(words.iter()) {
                        *into |= word;
                    }
                }
                None => {}
            }
        }
        let mut numbers = Vec::new();
        for (w, &word) in seen.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                numbers.push((w * 64) as u32 + bits.trailing_zeros());
                bits &= bits - 1;
            }
        }
        numbers
    }

    /// Distinct terms and posting entries (for the load log).
    pub fn size(&self) -> (usize, usize) {
        let postings = self.postings.iter().flatten().map(Postings::len).sum();
        (self.terms.len(), postings)
    }

    /// Calls `found(gift number, score, interests matched)` for every gift that matches `q`, in
    /// ascending gift number (the catalog's id order: `ranking.rs` relies on it to skip the
    /// matches that cannot enter the answer).
    pub(super) fn each(&self, q: &SuggestGiftsQuery, plan: &Plan, found: impl FnMut(usize, i64, Interests)) {
        self.each_in(q, plan, 0..self.packed.len(), found)
    }

    /// How many gift numbers the walk marks at once: `each_in` takes ranges on these bounds.
    pub const CHUNK: usize = CHUNK;

    /// The clauses of `plan` against this index, and the lists they walk.
    fn compile<'a>(&'a self, plan: &Plan, from: usize) -> (Vec<Compiled>, Vec<Cursor<'a>>) {
        let mut cursors: Vec<Cursor<'a>> = Vec::new();
        let mut compiled = Vec::new();
        let mut list = |postings: &'a Postings| -> Option<usize> {
            if postings.is_empty() {
                return None;
            }
            cursors.push(match postings {
                // From the first gift of the range on.
                Postings::Sparse(list) => Cursor::Sparse(&list[list.partition_point(|&n| (n as usize) < from)..]),
                Postings::Dense(words) => Cursor::Dense(words),
            });
            Some(cursors.len() - 1)
        };
        let clauses = plan
            .interests
            .iter()
            .enumerate()
            .flat_map(|(k, cs)| cs.iter().map(move |c| (Some(k), c)))
            .chain(plan.implied.iter().map(|c| (None, c)));
        for (interest, clause) in clauses {
            let words: Option<Vec<u32>> = clause.stems.iter().map(|s| self.terms.get(s.as_str()).copied()).collect();
            let tag_term = self.terms.get(clause.key().as_str()).copied();
            let tag = tag_term.and_then(|t| list(&self.postings[t as usize][0]).map(|c| vec![c]));
            let kind = tag_term.and_then(|t| list(&self.postings[t as usize][3]).map(|c| vec![c]));
            let mut text = |field: usize| -> Option<Vec<usize>> {
                if clause.tags_only {
                    return None;
                }
                words.as_ref()?.iter().map(|&t| list(&self.postings[t as usize][field])).collect()
            };
            let (title, description) = (text(1), text(2));
            if tag.is_some() || title.is_some() || description.is_some() {
                compiled.push(Compiled {
                    fields: [tag, title, description, kind],
                    weight: clause.weight,
                    interest,
                    meets: clause.meets,
                });
            }
        }
        (compiled, cursors)
    }

    /// `each` over the gift numbers in `gifts` only. Both ends are multiples of
    /// [`Index::CHUNK`] or the catalog's end, since the walk marks a whole chunk at once.
    pub(super) fn each_in(
        &self,
        q: &SuggestGiftsQuery,
        plan: &Plan,
        gifts: Range<usize>,
        mut found: impl FnMut(usize, i64, Interests),
    ) {
        let gifts = gifts.start.min(self.packed.len())..gifts.end.min(self.packed.len());
        debug_assert!(gifts.start % CHUNK == 0 || gifts.start == self.packed.len());
        debug_assert!(gifts.end % CHUNK == 0 || gifts.end == self.packed.len());
        let wanted = Wanted::of(q);
        let asked = plan.interests.len();
        let (mut compiled, mut cursors) = self.compile(plan, gifts.start);
        // The clauses that can meet an interest first: with interests asked, only the gifts they
        // touched are scored, so the others (broader related terms, implied tags) need only be
        // read for those gifts. Every strength is a maximum, so the order changes no score.
        compiled.sort_by_key(|c| !c.meets);
        let only_touched = asked > 0;
        let interest_cursors: Vec<usize> = compiled
            .iter()
            .filter(|c| c.interest.is_some())
            .flat_map(|c| c.fields.iter().flatten().flatten().copied())
            .collect();
        if asked > 0 && interest_cursors.is_empty() {
            return; // no interest can match any gift, and interests were asked for
        }
        let jump = asked > 0 && interest_cursors.iter().all(|&c| matches!(cursors[c], Cursor::Sparse(_)));
        // Per interest and gift of the chunk, its best strength of a clause that can meet it and
        // of any clause; per gift, the implied tags'.
        let mut meeting = vec![0u16; asked * CHUNK];
        let mut strength = vec![0u16; asked * CHUNK];
        // Per interest and gift, the sum of every clause's strength (`fit::combined`).
        let mut summed = vec![0u16; asked * CHUNK];
        let mut implied = vec![0u16; CHUNK];
        let mut implied_sum = vec![0u16; CHUNK];
        let mut touched: Bitmap = [0; CHUNK_WORDS];
        let mut start = gifts.start;
        while start < gifts.end {
            if jump {
                // Only lists of numbers: on to the chunk of the lowest number still to come.
                let next = interest_cursors
                    .iter()
                    .filter_map(|&c| match &mut cursors[c] {
                        Cursor::Sparse(list) => {
                            *list = &list[list.partition_point(|&n| (n as usize) < start)..];
                            list.first().copied()
                        }
                        Cursor::Dense(_) => None,
                    })
                    .min();
                let Some(next) = next else { break };
                start = next as usize / CHUNK * CHUNK;
                if start >= gifts.end {
                    break;
                }
            }
            let end = (start + CHUNK).min(gifts.end);
            for clause in &compiled {
                let mut met: [Bitmap; 4] = [[0; CHUNK_WORDS]; 4];
                let mut any: Bitmap = [0; CHUNK_WORDS];
                for (field, lists) in clause.fields.iter().enumerate() {
                    let Some(lists) = lists else { continue };
                    for (j, &c) in lists.iter().enumerate() {
                        let bits = fill(&mut cursors[c], start, end);
                        if j == 0 {
                            met[field] = bits;
                        } else {
                            met[field].iter_mut().zip(bits.iter()).for_each(|(a, b)| *a &= b);
                        }
                    }
                    any.iter_mut().zip(met[field].iter()).for_each(|(a, b)| *a |= b);
                }
                if only_touched && !clause.meets {
                    any.iter_mut().zip(touched.iter()).for_each(|(a, t)| *a &= t);
                }
                for (w, &word) in any.iter().enumerate() {
                    let mut bits = word;
                    while bits != 0 {
                        let i = w * 64 + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        let bit = 1u64 << (i % 64);
                        let mask = FIELDS
                            .iter()
                            .enumerate()
                            .fold(0u8, |m, (f, field)| if met[f][w] & bit != 0 { m | field } else { m });
                        let s = fit::strength(clause.weight, mask) as u16;
                        let slot = match clause.interest {
                            Some(k) => {
                                if clause.meets && mask & (TAG | TITLE) != 0 {
                                    meeting[k * CHUNK + i] = meeting[k * CHUNK + i].max(s);
                                }
                                summed[k * CHUNK + i] = summed[k * CHUNK + i].saturating_add(s);
                                &mut strength[k * CHUNK + i]
                            }
                            None => {
                                implied_sum[i] = implied_sum[i].saturating_add(s);
                                &mut implied[i]
                            }
                        };
                        *slot = (*slot).max(s);
                    }
                    if clause.meets {
                        touched[w] |= word;
                    }
                }
            }
            let mut visit = |i: usize, meeting: &mut [u16], strength: &mut [u16], implied: &mut [u16]| {
                let n = start + i;
                let mut total = 0i64;
                let mut matched: Interests = 0;
                for k in 0..asked {
                    let best = i64::from(std::mem::take(&mut strength[k * CHUNK + i]));
                    let s = fit::combined(best, i64::from(std::mem::take(&mut summed[k * CHUNK + i])));
                    if i64::from(std::mem::take(&mut meeting[k * CHUNK + i])) >= MATCH_FLOOR {
                        total += s;
                        matched |= 1 << k;
                    }
                }
                let best = i64::from(std::mem::take(&mut implied[i]));
                total += fit::combined_implied(best, i64::from(std::mem::take(&mut implied_sum[i])));
                if asked > 0 && matched == 0 {
                    return;
                }
                if let Some(base) = base_of(&self.packed[n], q, plan, wanted) {
                    found(n, total + base, matched);
                }
            };
            if asked > 0 {
                for (w, word) in touched.iter_mut().enumerate() {
                    let mut bits = std::mem::take(word);
                    while bits != 0 {
                        let i = w * 64 + bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        visit(i, &mut meeting, &mut strength, &mut implied);
                    }
                }
                // Nothing is left to clear: with interests asked every clause writes only the
                // gifts the meeting clauses touched (`only_touched`), and each visit took its own.
                debug_assert!(strength.iter().chain(&summed).chain(&implied).chain(&implied_sum).all(|&s| s == 0));
            } else {
                for i in 0..end - start {
                    visit(i, &mut meeting, &mut strength, &mut implied);
                }
            }
            start += CHUNK;
        }
    }
}

/// The chunk `start..end`'s part of a posting list as a bitmap (bit `i`: gift `start + i`),
/// moving a list of numbers past it.
#[inline]
fn fill(cursor: &mut Cursor, start: usize, end: usize) -> Bitmap {
    let mut bits: Bitmap = [0; CHUNK_WORDS];
    match cursor {
        Cursor::Sparse(list) => {
            let from = list.partition_point(|&n| (n as usize) < start);
            let inside = from + list[from..].partition_point(|&n| (n as usize) < end);
            for &n in &list[from..inside] {
                let i = n as usize - start;
                bits[i / 64] |= 1 << (i % 64);
            }
            *list = &list[inside..];
        }
        Cursor::Dense(words) => {
            let here = &words[(start / 64).min(words.len())..(end.div_ceil(64)).min(words.len())];
            bits[..here.len()].copy_from_slice(here);
        }
    }
    bits
}

impl Stats for Index {
    fn gifts(&self) -> usize {
        self.packed.len()
    }
    fn df(&self, term: &str) -> usize {
        self.terms.get(term).map_or(0, |&t| self.df[t as usize] as usize)
    }
}

/// The points every gift gets apart from interests and implied tags, or `None` when a hard
/// filter (stock, budget, age) excludes it. Mirrors `fit::score`.
#[inline]
fn base_of(p: &Packed, q: &SuggestGiftsQuery, plan: &Plan, wanted: Wanted) -> Option<i64> {
    if !p.in_stock {
        return None;
    }
    let price = if wanted.convert { price_in(p.price_cents, q.currency).amount_minor } else { p.price_cents };
    if price < wanted.min || price > wanted.max {
        return None;
    }
    if let Some(age) = q.age
        && (age < p.age_min || age > p.age_max)
    {
        return None;
    }
    let relationship = p.relationships & wanted.relationship != 0;
    let occasion = p.occasions & wanted.occasion != 0;
    Some(fit::base_points(plan, q, price, (p.age_min, p.age_max), relationship, occasion))
}

/// The query's filters in the form the packed numbers are compared with.
#[derive(Clone, Copy)]
struct Wanted {
    convert: bool,
    min: i64,
    max: i64,
    relationship: u16,
    occasion: u16,
}

impl Wanted {
    fn of(q: &SuggestGiftsQuery) -> Wanted {
        Wanted {
            convert: q.currency != giftgenius_types::Currency::USD,
            min: q.budget_min.map_or(i64::MIN, |m| m.amount_minor),
            max: q.budget_max.map_or(i64::MAX, |m| m.amount_minor),
            relationship: relationship_bit(q.relationship_type),
            occasion: q.occasion.map_or(0, occasion_bit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fit::Clause;
    use super::*;

    #[test]
    fn the_index_reads_words_exactly_as_the_text_analysis_does() {
        for text in
            ["Überraschung: HIKING-poles, café au lait & a Tent; 12345 ab", "HIKING-poles, Tea & a Tent;12345 ab x"]
        {
            let gift = super::super::Catalog::builtin().gifts()[0].clone();
            let gift = CatalogGift { title: text.into(), description: "".into(), tags: Default::default(), ..gift };
            let index = Index::build(std::slice::from_ref(&gift));
            let mut indexed: Vec<&str> = index.terms.keys().map(|k| &**k).collect();
            indexed.sort_unstable();
            let mut expected = text::stems(text);
            expected.sort_unstable();
            expected.dedup();
            assert_eq!(indexed, expected, "{text}");
        }
    }

    #[test]
    fn the_vocabulary_names_terms_as_people_write_them_and_tags_whole() {
        let index = Index::build(super::super::Catalog::builtin().gifts());
        let vocabulary = index.vocabulary();
        for word in ["hiking", "board games", "astronomy", "coffee", "telescope"] {
            assert!(vocabulary.iter().any(|w| w == word), "{word} missing");
        }
        assert!(!vocabulary.iter().any(|w| w == "hike" || w == "the"), "stems and stopwords are not surface words");
        assert!(vocabulary.is_sorted());
    }

    /// What the walk needs of `Clause`: a field it cannot meet is no list at all.
    #[test]
    fn a_clause_of_an_unknown_word_walks_nothing() {
        let index = Index::build(super::super::Catalog::builtin().gifts());
        let plan = Plan {
            interests: vec![vec![Clause {
                stems: vec!["zyzzyva".into()],
                weight: 1000,
                tags_only: false,
                meets: true,
            }]],
            implied: vec![],
            relationship_points: 0,
        };
        let (compiled, cursors) = index.compile(&plan, 0);
        assert!(compiled.is_empty() && cursors.is_empty());
    }
}
