//! The catalog's index, built once per catalog, so a query touches only the gifts it can match.
//!
//! Per stem (the same crude stemming `ranking.rs` matches with): which gifts have it in a tag
//! and which only in their title or description. Per gift: the few numbers the hard filters and
//! the score need (price, ages, stock, relationship and occasion bits), packed together.
//!
//! A query with interests walks the posting lists of its stems a chunk of gift numbers at a
//! time, marking per gift the interests it matched through a tag and through text only, then
//! reports the chunk's marked gifts that pass the filters, in gift order, with their points (a
//! tag hit is worth more than a text hit, once per interest); a query without interests scans
//! the packed numbers. `ranking.rs` turns the matches
//! into the ranked answer (the matched interests choose the first cards); a property test
//! checks the result is exactly the linear scan's.

use std::ops::Range;

use giftgenius_types::gifts::SuggestGiftsQuery;
use giftgenius_types::{Occasion, RelationshipType};

use super::price_in;
use super::ranking::{Interests, ascii_word_ranges, asked, stem, tag_stems, words};
use super::ranking::{POINTS_BUDGET_ROOM, POINTS_OCCASION, POINTS_RELATIONSHIP, POINTS_TAG, POINTS_TEXT};
use super::{CatalogGift, Set};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_splits_and_lowercases_words_exactly_as_ranking_does() {
        // Non-ASCII text, and ASCII text (split a byte at a time).
        for text in
            ["Überraschung: HIKING-poles, café au lait & a Tent; 12345 ab", "HIKING-poles, Tea & a Tent;12345 ab x"]
        {
            let expected: Vec<String> = words(text).map(|w| stem(&w).to_string()).collect();
            let gift = super::super::Catalog::builtin().gifts()[0].clone();
            let gift = CatalogGift { title: text.into(), description: "".into(), tags: Default::default(), ..gift };
            let index = Index::build(std::slice::from_ref(&gift));
            let mut indexed: Vec<&str> = index.terms.keys().map(|k| &**k).collect();
            indexed.sort_unstable();
            let mut expected: Vec<&str> = expected.iter().map(String::as_str).collect();
            expected.sort_unstable();
            expected.dedup();
            assert_eq!(indexed, expected, "{text}");
        }
    }
}

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

#[derive(Debug, Default)]
pub struct Index {
    terms: foldhash::HashMap<Box<str>, u32>,
    /// Per term: gifts with a tag of that stem.
    tagged: Vec<Postings>,
    /// Per term: gifts with that stem in the title or description but not in a tag.
    mentioned: Vec<Postings>,
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

/// The stems seen while building, with their lists.
#[derive(Default)]
struct Terms {
    ids: foldhash::HashMap<Box<str>, u32>,
    tagged: Vec<Vec<u32>>,
    mentioned: Vec<Vec<u32>>,
}

impl Terms {
    fn term(&mut self, stem: &str) -> u32 {
        if let Some(&t) = self.ids.get(stem) {
            return t;
        }
        let t = self.tagged.len() as u32;
        self.ids.insert(stem.into(), t);
        self.tagged.push(Vec::new());
        self.mentioned.push(Vec::new());
        t
    }
}

/// Gift numbers walked together: per chunk, the interests each gift matched are gathered in
/// arrays small enough for the L1 cache, then the chunk's gifts are visited in ascending order,
/// so the packed numbers are read front to back once (issue 28: one pass per posting list over
/// a slot per gift, each a scattered walk over the packed numbers, was 78 % of a call).
const CHUNK: usize = 4096;
const CHUNK_WORDS: usize = CHUNK / 64;

/// One chunk's state during a query: per gift, the interests matched through a tag and only
/// through the title or description, and which gifts were touched. Zero again after each chunk.
struct Chunk {
    tag: [Interests; CHUNK],
    text: [Interests; CHUNK],
    touched: [u64; CHUNK_WORDS],
}

impl Index {
    /// Indexes `gifts` (in the catalog's order: positions are gift numbers).
    pub fn build(gifts: &[CatalogGift]) -> Index {
        let mut index = Index { packed: Vec::with_capacity(gifts.len()), ..Index::default() };
        let mut terms = Terms::default();
        // The terms of each list of tags, once per list: gifts with the same tags share one
        // (`import::Merchants`), so the list's address names it while every gift is alive.
        let mut tag_lists: foldhash::HashMap<usize, Box<[u32]>> = foldhash::HashMap::default();
        let mut text_terms: Vec<u32> = Vec::new();
        let mut lower = String::new();
        for (n, gift) in gifts.iter().enumerate() {
            let n = n as u32;
            text_terms.clear();
            let list = std::sync::Arc::as_ptr(&gift.tags) as *const () as usize;
            let tag_terms = tag_lists.entry(list).or_insert_with(|| {
                let mut found: Vec<u32> = tag_stems(&gift.tags).map(|s| terms.term(s)).collect();
                found.sort_unstable();
                found.dedup();
                found.into_boxed_slice()
            });
            for text in [&*gift.title, &*gift.description] {
                // `words` without an allocation per word: the same words, lower-cased into one
                // buffer (a million gifts have tens of millions of words).
                if text.is_ascii() {
                    // The same words a byte at a time (issue 28: splitting on chars was a third of
                    // the load's instructions, callgrind).
                    for range in ascii_word_ranges(text) {
                        lower.clear();
                        lower.push_str(&text[range]);
                        lower.make_ascii_lowercase();
                        text_terms.push(terms.term(stem(&lower)));
                    }
                    continue;
                }
                for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() >= 3) {
                    lower.clear();
                    if word.is_ascii() {
                        lower.extend(word.bytes().map(|b| char::from(b.to_ascii_lowercase())));
                    } else {
                        lower.push_str(&word.to_lowercase());
                    }
                    let term = terms.term(stem(&lower));
                    text_terms.push(term);
                }
            }
            text_terms.sort_unstable();
            text_terms.dedup();
            for &t in tag_terms.iter() {
                terms.tagged[t as usize].push(n);
            }
            for &t in &text_terms {
                // A tag of the same stem always wins, so the mention would never count.
                if tag_terms.binary_search(&t).is_err() {
                    terms.mentioned[t as usize].push(n);
                }
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
        index.tagged = terms.tagged.into_iter().map(|list| Postings::of(list, n)).collect();
        index.mentioned = terms.mentioned.into_iter().map(|list| Postings::of(list, n)).collect();
        index
    }

    pub fn len(&self) -> usize {
        self.packed.len()
    }

    pub fn is_empty(&self) -> bool {
        self.packed.is_empty()
    }

    /// The gifts with a tag of one of `stems`, each once, ascending.
    pub fn tagged_with<'s>(&self, stems: impl IntoIterator<Item = &'s str>) -> Vec<u32> {
        let mut seen = vec![0u64; self.packed.len().div_ceil(64)];
        for stem in stems {
            match self.terms.get(stem).map(|&t| &self.tagged[t as usize]) {
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

    /// Distinct stems and posting entries (for the load log).
    pub fn size(&self) -> (usize, usize) {
        let postings = self.tagged.iter().chain(&self.mentioned).map(Postings::len).sum();
        (self.terms.len(), postings)
    }

    /// The points every gift gets apart from interests, or `None` when a hard filter (stock,
    /// budget, age) excludes it. Mirrors `ranking::score`.
    #[inline]
    fn base(&self, n: usize, q: &SuggestGiftsQuery, wanted: Wanted) -> Option<i64> {
        base_of(&self.packed[n], q, wanted)
    }

    /// Calls `found(gift number, score, interests matched)` for every gift that matches `q`, in
    /// ascending gift number (the catalog's id order: `ranking.rs` relies on it to skip the
    /// matches that cannot enter the answer).
    pub fn each(&self, q: &SuggestGiftsQuery, found: impl FnMut(usize, i64, Interests)) {
        self.each_in(q, 0..self.packed.len(), found)
    }

    /// How many gift numbers the walk marks at once: `each_in` takes ranges on these bounds.
    pub const CHUNK: usize = CHUNK;

    /// `each` over the gift numbers in `gifts` only. Both ends are multiples of
    /// [`Index::CHUNK`] or the catalog's end, since the walk marks a whole chunk at once.
    pub fn each_in(&self, q: &SuggestGiftsQuery, gifts: Range<usize>, mut found: impl FnMut(usize, i64, Interests)) {
        let gifts = gifts.start.min(self.packed.len())..gifts.end.min(self.packed.len());
        debug_assert!(gifts.start % CHUNK == 0 || gifts.start == self.packed.len());
        debug_assert!(gifts.end % CHUNK == 0 || gifts.end == self.packed.len());
        let wanted = Wanted::of(q);
        if q.interests.is_empty() {
            for n in gifts {
                if let Some(points) = self.base(n, q, wanted) {
                    found(n, points, 0);
                }
            }
            return;
        }
        // Per posting list to walk: the rest of it and the interest it counts for (`asked`
        // keeps to as many interests as there are bits).
        let mut tag_lists: Vec<(Cursor, Interests)> = Vec::new();
        let mut text_lists: Vec<(Cursor, Interests)> = Vec::new();
        for (k, interest) in asked(q).iter().enumerate() {
            let bit: Interests = 1 << k;
            let mut terms: Vec<u32> = words(interest).filter_map(|w| self.terms.get(stem(&w)).copied()).collect();
            terms.sort_unstable();
            terms.dedup();
            for t in terms {
                for (lists, postings) in [(&mut tag_lists, &self.tagged), (&mut text_lists, &self.mentioned)] {
                    match &postings[t as usize] {
                        Postings::Sparse(list) => {
                            // From the first gift of the range on.
                            let list = &list[list.partition_point(|&n| (n as usize) < gifts.start)..];
                            if !list.is_empty() {
                                lists.push((Cursor::Sparse(list), bit));
                            }
                        }
                        Postings::Dense(words) => lists.push((Cursor::Dense(words), bit)),
                    }
                }
            }
        }
        if tag_lists.is_empty() && text_lists.is_empty() {
            return; // no interest can match any gift, and interests were asked for
        }
        let dense = tag_lists.iter().chain(&text_lists).any(|(c, _)| matches!(c, Cursor::Dense(_)));
        let mut chunk = Box::new(Chunk { tag: [0; CHUNK], text: [0; CHUNK], touched: [0; CHUNK_WORDS] });
        let Chunk { tag, text, touched } = &mut *chunk;
        let mut start = gifts.start;
        while start < gifts.end {
            if !dense {
                // Only lists of numbers: on to the chunk of the lowest number still to come.
                let next = tag_lists
                    .iter()
                    .chain(&text_lists)
                    .filter_map(|(c, _)| match c {
                        Cursor::Sparse(list) => list.first(),
                        Cursor::Dense(_) => None,
                    })
                    .min();
                let Some(&next) = next else { break };
                start = next as usize / CHUNK * CHUNK;
                if start >= gifts.end {
                    break;
                }
            }
            let end = start + CHUNK;
            for (lists, marks) in [(&mut tag_lists, &mut *tag), (&mut text_lists, &mut *text)] {
                for (cursor, bit) in lists.iter_mut() {
                    match cursor {
                        Cursor::Sparse(list) => {
                            let inside = list.partition_point(|&n| (n as usize) < end);
                            for &n in &list[..inside] {
                                let i = n as usize - start;
                                marks[i] |= *bit;
                                touched[i / 64] |= 1 << (i % 64);
                            }
                            *list = &list[inside..];
                        }
                        Cursor::Dense(words) => {
                            let here = &words[(start / 64).min(words.len())..(end / 64).min(words.len())];
                            for (w, &word) in here.iter().enumerate() {
                                touched[w] |= word;
                                let mut bits = word;
                                while bits != 0 {
                                    marks[w * 64 + bits.trailing_zeros() as usize] |= *bit;
                                    bits &= bits - 1;
                                }
                            }
                        }
                    }
                }
            }
            for (w, word) in touched.iter_mut().enumerate() {
                let mut bits = std::mem::take(word);
                while bits != 0 {
                    let i = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let by_tag = std::mem::take(&mut tag[i]);
                    // Through a tag when it can (the linear scan's order): 10 points, not 4.
                    let by_text = std::mem::take(&mut text[i]) & !by_tag;
                    let n = start + i;
                    if let Some(base) = base_of(&self.packed[n], q, wanted) {
                        let points = POINTS_TAG * i64::from(by_tag.count_ones())
                            + POINTS_TEXT * i64::from(by_text.count_ones())
                            + base;
                        found(n, points, by_tag | by_text);
                    }
                }
            }
            start = end;
        }
    }
}

/// The points a gift gets apart from interests, or `None` when a hard filter (stock, budget,
/// age) excludes it. Mirrors `ranking::score`.
#[inline]
fn base_of(p: &Packed, q: &SuggestGiftsQuery, wanted: Wanted) -> Option<i64> {
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
    let mut points = 0;
    if p.relationships & wanted.relationship != 0 {
        points += POINTS_RELATIONSHIP;
    }
    if p.occasions & wanted.occasion != 0 {
        points += POINTS_OCCASION;
    }
    if let Some(room) = wanted.room
        && price * 10 <= room
    {
        points += POINTS_BUDGET_ROOM;
    }
    Some(points)
}

/// The query's filters in the form the packed numbers are compared with.
#[derive(Clone, Copy)]
struct Wanted {
    convert: bool,
    min: i64,
    max: i64,
    /// `budget_max * 9` when there is one (the "comfortably inside the budget" point).
    room: Option<i64>,
    relationship: u16,
    occasion: u16,
}

impl Wanted {
    fn of(q: &SuggestGiftsQuery) -> Wanted {
        Wanted {
            convert: q.currency != giftgenius_types::Currency::USD,
            min: q.budget_min.map_or(i64::MIN, |m| m.amount_minor),
            max: q.budget_max.map_or(i64::MAX, |m| m.amount_minor),
            room: q.budget_max.map(|m| m.amount_minor.saturating_mul(9)),
            relationship: relationship_bit(q.relationship_type),
            occasion: q.occasion.map_or(0, occasion_bit),
        }
    }
}
