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
    relationships: u16,
    occasions: u16,
    /// The bit of the occasion it lists first (0: none).
    first_occasion: u16,
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
    /// Bit per gift: in stock (the one hard filter a walk applies a word at a time).
    in_stock: Vec<u64>,
    /// Per ordered pair of different tag terms: the gifts that carry both (`Stats::tags_together`).
    tag_pairs: foldhash::HashMap<(u32, u32), u32>,
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
/// A distinct list of tags while the index is built: its terms, its first tag's term, and how
/// many gifts carry it.
type TagList = (Box<[u32]>, Option<u32>, u32);

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
    /// The field masks that meet its interest, the smallest (`meeting_masks`); none if it
    /// cannot meet.
    meeting: Vec<u8>,
    /// Its strength in every field it can occur in: the most it gives a gift.
    most: i64,
    /// Whether it can meet its interest on its own (`fit::Clause::meets`): as a gift's first
    /// tag it says the gift is what the interest asks for (`fit::combined`).
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
        let mut tag_lists: foldhash::HashMap<usize, TagList> = foldhash::HashMap::default();
        let mut field_terms: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
        let mut all: Vec<u32> = Vec::new();
        let mut lower = String::new();
        for (n, gift) in gifts.iter().enumerate() {
            let n = n as u32;
            let list = std::sync::Arc::as_ptr(&gift.tags) as *const () as usize;
            let (tag_terms, kind, carried) = tag_lists.entry(list).or_insert_with(|| {
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
                (found.into_boxed_slice(), kind, 0)
            });
            *carried += 1;
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
                relationships: gift.relationships.bits(),
                occasions: gift.occasions.bits(),
                first_occasion: gift.first_occasion.map_or(0, occasion_bit),
            });
        }
        let n = gifts.len();
        index.in_stock = vec![0; n.div_ceil(64)];
        for (at, gift) in gifts.iter().enumerate() {
            if gift.stock > 0 {
                index.in_stock[at / 64] |= 1 << (at % 64);
            }
        }
        // Which tags come together, counted once per distinct list of tags (gifts share lists).
        for (tags, _, carried) in tag_lists.values() {
            for &a in tags.iter() {
                for &b in tags.iter().filter(|&&b| b != a) {
                    *index.tag_pairs.entry((a, b)).or_insert(0) += carried;
                }
            }
        }
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

    /// Reports to `to` every gift that matches `q`, in ascending gift number (the catalog's id
    /// order: `ranking.rs` relies on it to skip the matches that cannot enter the answer).
    pub(super) fn each(&self, q: &SuggestGiftsQuery, plan: &Plan, to: &mut impl Found) {
        self.each_in(q, plan, 0..self.packed.len(), to)
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
                let fields = [tag, title, description, kind];
                let present = FIELDS.iter().zip(&fields).fold(0u8, |m, (f, l)| if l.is_some() { m | f } else { m });
                compiled.push(Compiled {
                    most: fit::strength(clause.weight, present),
                    meeting: if clause.meets && interest.is_some() {
                        meeting_masks(clause.weight, present)
                    } else {
                        vec![]
                    },
                    fields,
                    weight: clause.weight,
                    interest,
                    meets: clause.meets && interest.is_some(),
                });
            }
        }
        (compiled, cursors)
    }

    /// `each` over the gift numbers in `gifts` only. Both ends are multiples of
    /// [`Index::CHUNK`] or the catalog's end, since the walk marks a whole chunk at once.
    ///
    /// Per chunk, first with bitmaps and only the clauses that can meet an interest: per clause
    /// the gifts it occurs in per field, per interest the gifts it meets (a clause's fields
    /// reaching [`MATCH_FLOOR`]) and how many of its meeting clauses each gift has, up to
    /// [`LEVELS`]. Then per gift that meets one, the hard filters and a bound on its score from
    /// those counts ([`Bounds`]): one that cannot change what `to` keeps is only counted, and a
    /// gift meeting one interest through few clauses is counted without even that. Only the
    /// others are scored exactly, and only for them are the other clauses (broader related
    /// terms, implied tags) read. At a million gifts a broad query meets ~160,000 gifts, of
    /// which a few thousand are scored.
    pub(super) fn each_in(&self, q: &SuggestGiftsQuery, plan: &Plan, gifts: Range<usize>, to: &mut impl Found) {
        let gifts = gifts.start.min(self.packed.len())..gifts.end.min(self.packed.len());
        debug_assert!(gifts.start % CHUNK == 0 || gifts.start == self.packed.len());
        debug_assert!(gifts.end % CHUNK == 0 || gifts.end == self.packed.len());
        let wanted = Wanted::of(q);
        let asked = plan.interests.len();
        let (mut compiled, mut cursors) = self.compile(plan, gifts.start);
        // The clauses that can meet an interest first (`meeting` of them).
        compiled.sort_by_key(|c| c.meeting.is_empty());
        let meeting = compiled.iter().take_while(|c| !c.meeting.is_empty()).count();
        if asked > 0 && meeting == 0 {
            return; // no interest can match any gift, and interests were asked for
        }
        let meeting_cursors: Vec<usize> =
            compiled[..meeting].iter().flat_map(|c| c.fields.iter().flatten().flatten().copied()).collect();
        let jump = asked > 0 && meeting_cursors.iter().all(|&c| matches!(cursors[c], Cursor::Sparse(_)));
        let bounds = Bounds::new(&compiled, asked, fit::base_points_most(plan, q));
        // Per meeting clause, its fields' bitmaps of the chunk and the gifts it occurs in.
        let mut maps: Vec<[Bitmap; 4]> = vec![[[0; CHUNK_WORDS]; 4]; meeting];
        let mut anys: Vec<Bitmap> = vec![[0; CHUNK_WORDS]; meeting];
        // Per interest the gifts it meets, and those with at least 1, 2, … LEVELS of its
        // meeting clauses.
        let mut met: Vec<Bitmap> = vec![[0; CHUNK_WORDS]; asked];
        let mut levels: Vec<[Bitmap; LEVELS]> = vec![[[0; CHUNK_WORDS]; LEVELS]; asked];
        // Per interest and gift of the chunk, its best strength and the sum of its clauses'
        // (`fit::combined`); per gift, the implied tags'.
        let mut strength = vec![0u16; asked * CHUNK];
        let mut summed = vec![0u16; asked * CHUNK];
        // … and whether a clause that can meet it is the gift's first tag.
        let mut kind = vec![false; asked * CHUNK];
        let mut implied = vec![0u16; CHUNK];
        let mut implied_sum = vec![0u16; CHUNK];
        let mut implied_kind = vec![false; CHUNK];
        // The words of the chunk with a gift to score.
        let mut words: Vec<usize> = Vec::with_capacity(CHUNK_WORDS);
        let mut start = gifts.start;
        while start < gifts.end {
            if jump {
                // Only lists of numbers: on to the chunk of the lowest number still to come.
                let next = meeting_cursors
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
            for (met, levels) in met.iter_mut().zip(levels.iter_mut()) {
                *met = [0; CHUNK_WORDS];
                *levels = [[0; CHUNK_WORDS]; LEVELS];
            }
            for ((clause, fields), any) in compiled[..meeting].iter().zip(maps.iter_mut()).zip(anys.iter_mut()) {
                read_fields(clause, &mut cursors, start, end, fields, any);
                let Some(k) = clause.interest else { continue };
                for &mask in &clause.meeting {
                    for (w, m) in met[k].iter_mut().enumerate() {
                        let mut bits = !0u64;
                        for (f, field) in FIELDS.iter().enumerate() {
                            if mask & field != 0 {
                                bits &= fields[f][w];
                            }
                        }
                        *m |= bits;
                    }
                }
                let counts = &mut levels[k];
                for (w, &a) in any.iter().enumerate() {
                    if a != 0 {
                        for l in (1..LEVELS).rev() {
                            counts[l][w] |= counts[l - 1][w] & a;
                        }
                        counts[0][w] |= a;
                    }
                }
            }
            // Which gifts to score: with interests, those that meet one, pass the filters and
            // may change what `to` keeps; without, every gift that passes the filters. A gift
            // that meets one interest only, through fewer of its clauses than `few[k]`, cannot
            // (`Bounds::few`): it is only checked and counted.
            let few = bounds.few(|matched| to.floor(matched));
            let mut score: Bitmap = [0; CHUNK_WORDS];
            let mut counted = 0;
            words.clear();
            for (w, word) in score.iter_mut().enumerate() {
                let stock = self.in_stock.get(start / 64 + w).copied().unwrap_or(0);
                let (matching, mut only_counted) = if asked > 0 {
                    let (mut any, mut several, mut counted) = (0u64, 0u64, 0u64);
                    for (met, (levels, &few)) in met.iter().zip(levels.iter().zip(&few)) {
                        several |= any & met[w];
                        any |= met[w];
                        counted |= match few {
                            0 => 0,
                            LEVELS_PLUS_ONE => met[w],
                            few => met[w] & !levels[few - 1][w],
                        };
                    }
                    (any & stock, counted & !several)
                } else {
                    (stock, 0)
                };
                let mut bits = matching;
                while bits != 0 {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let p = &self.packed[start + w * 64 + b];
                    if !wanted.passes(p, q) {
                        only_counted &= !(1 << b);
                        continue;
                    }
                    if only_counted >> b & 1 != 0 {
                        counted += 1;
                        continue;
                    }
                    let mut matched: Interests = 0;
                    let mut bound = bounds.implied;
                    for (k, met) in met.iter().enumerate() {
                        if met[w] >> b & 1 != 0 {
                            matched |= 1 << k;
                            bound += bounds.most(k, level(&levels[k], w, b));
                        }
                    }
                    // The most any gift's own numbers can add first; those that could matter
                    // then with what this gift's add (a division or two).
                    let floor = to.floor(matched);
                    if bound + bounds.base > floor && bound + base_points(p, q, plan, wanted) > floor {
                        *word |= 1 << b;
                    } else {
                        counted += 1;
                    }
                }
                if *word != 0 {
                    words.push(w);
                }
            }
            to.counted(counted);
            if words.is_empty() {
                start += CHUNK;
                continue;
            }
            // The gifts to score, clause by clause: the meeting clauses' fields are at hand, the
            // others are read now.
            let mut fields: [Bitmap; 4] = [[0; CHUNK_WORDS]; 4];
            let mut any: Bitmap = [0; CHUNK_WORDS];
            for (c, clause) in compiled.iter().enumerate() {
                let (fields, any) = if c < meeting {
                    (&maps[c], &anys[c])
                } else {
                    read_fields(clause, &mut cursors, start, end, &mut fields, &mut any);
                    (&fields, &any)
                };
                for &w in &words {
                    let mut bits = any[w] & score[w];
                    while bits != 0 {
                        let b = bits.trailing_zeros() as usize;
                        bits &= bits - 1;
                        let i = w * 64 + b;
                        let mask = FIELDS
                            .iter()
                            .enumerate()
                            .fold(0u8, |m, (f, field)| if fields[f][w] >> b & 1 != 0 { m | field } else { m });
                        let s = fit::strength(clause.weight, mask) as u16;
                        let (best, sum) = match clause.interest {
                            Some(k) => {
                                kind[k * CHUNK + i] |= clause.meets && mask & KIND != 0;
                                (&mut strength[k * CHUNK + i], &mut summed[k * CHUNK + i])
                            }
                            None => {
                                implied_kind[i] |= mask & KIND != 0;
                                (&mut implied[i], &mut implied_sum[i])
                            }
                        };
                        *best = (*best).max(s);
                        *sum = sum.saturating_add(s);
                    }
                }
            }
            for &w in &words {
                let mut bits = score[w];
                while bits != 0 {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let i = w * 64 + b;
                    let n = start + i;
                    let mut total = 0i64;
                    let mut matched: Interests = 0;
                    for (k, met) in met.iter().enumerate() {
                        let best = i64::from(std::mem::take(&mut strength[k * CHUNK + i]));
                        let sum = i64::from(std::mem::take(&mut summed[k * CHUNK + i]));
                        let kind = std::mem::take(&mut kind[k * CHUNK + i]);
                        if met[w] >> b & 1 != 0 {
                            total += fit::combined(best, sum, kind);
                            matched |= 1 << k;
                        }
                    }
                    let best = i64::from(std::mem::take(&mut implied[i]));
                    let implied_kind = std::mem::take(&mut implied_kind[i]);
                    total += fit::combined_implied(best, i64::from(std::mem::take(&mut implied_sum[i])), implied_kind);
                    let base = base_points(&self.packed[n], q, plan, wanted);
                    debug_assert!(base <= bounds.base);
                    to.found(n, total + base, matched);
                }
            }
            // Every strength written was of a gift scored, and each took its own.
            debug_assert!(strength.iter().chain(&summed).chain(&implied).chain(&implied_sum).all(|&s| s == 0));
            debug_assert!(kind.iter().chain(&implied_kind).all(|&k| !k));
            start += CHUNK;
        }
    }
}

/// A clause's part of the chunk `start..end`: per field the gifts with all its words there
/// (the AND of their lists; a field it cannot occur in stays empty), and the gifts with it in
/// any field.
#[inline]
fn read_fields(
    clause: &Compiled,
    cursors: &mut [Cursor],
    start: usize,
    end: usize,
    fields: &mut [Bitmap; 4],
    any: &mut Bitmap,
) {
    *any = [0; CHUNK_WORDS];
    for (field, lists) in clause.fields.iter().enumerate() {
        let Some(lists) = lists else {
            fields[field] = [0; CHUNK_WORDS];
            continue;
        };
        for (j, &c) in lists.iter().enumerate() {
            let bits = fill(&mut cursors[c], start, end);
            if j == 0 {
                fields[field] = bits;
            } else {
                fields[field].iter_mut().zip(bits.iter()).for_each(|(a, b)| *a &= b);
            }
        }
        any.iter_mut().zip(fields[field].iter()).for_each(|(a, b)| *a |= b);
    }
}

/// What a walk reports to: every match in ascending gift number, scored when it may matter.
pub(super) trait Found {
    /// The score a match that meets `matched` must beat to change what is kept (it is reported
    /// after every match before it in gift order, so it loses ties). One that cannot is only
    /// counted.
    fn floor(&self, _matched: Interests) -> i64 {
        i64::MIN
    }
    /// A match, scored.
    fn found(&mut self, n: usize, score: i64, matched: Interests);
    /// Matches that could not beat the floor, not scored.
    fn counted(&mut self, matches: usize);
}

/// Every match scored, to a closure.
pub(super) struct Every<F>(pub F);

impl<F: FnMut(usize, i64, Interests)> Found for Every<F> {
    fn found(&mut self, n: usize, score: i64, matched: Interests) {
        (self.0)(n, score, matched)
    }
    fn counted(&mut self, matches: usize) {
        debug_assert_eq!(matches, 0, "every match is wanted");
    }
}

/// How many of a group's clauses a walk counts per gift, at most: a gift with more is bounded
/// as if it had every clause of the group.
const LEVELS: usize = 4;
const LEVELS_PLUS_ONE: usize = LEVELS + 1;

/// How many of the bitmaps `levels` (at least 1, 2, … clauses) have gift bit `b` of word `w`:
/// the first that has not says (most gifts have one or two of a group's clauses).
#[inline]
fn level(levels: &[Bitmap; LEVELS], w: usize, b: usize) -> usize {
    levels.iter().position(|l| l[w] >> b & 1 == 0).unwrap_or(LEVELS)
}

/// Bounds on what a gift's clauses add, before any but the meeting ones are read: per interest
/// from how many of its meeting clauses the gift has, `h`: the strongest of all its clauses
/// with the `h` strongest meeting ones and every other one summed (`fit::combined` grows with
/// both); the implied tags, all of them; and the most the points apart from them can be.
struct Bounds {
    /// Per interest, per count 0..=LEVELS (the last: LEVELS or more).
    most: Vec<[i64; LEVELS + 1]>,
    implied: i64,
    base: i64,
}

impl Bounds {
    fn new(compiled: &[Compiled], asked: usize, base: i64) -> Bounds {
        let most = (0..asked)
            .map(|k| {
                let clauses = || compiled.iter().filter(move |c| c.interest == Some(k));
                let mut meeting: Vec<i64> = clauses().filter(|c| !c.meeting.is_empty()).map(|c| c.most).collect();
                meeting.sort_unstable_by(|a, b| b.cmp(a));
                let others: i64 = clauses().filter(|c| c.meeting.is_empty()).map(|c| c.most).sum();
                let top = clauses().map(|c| c.most).max().unwrap_or(0);
                let mut row = [0; LEVELS + 1];
                for (h, most) in row.iter_mut().enumerate().skip(1) {
                    let take = if h == LEVELS { meeting.len() } else { h.min(meeting.len()) };
                    // As if a meeting clause were the gift's first tag: the most it can be.
                    *most = fit::combined(top, meeting[..take].iter().sum::<i64>() + others, true);
                }
                row
            })
            .collect();
        let implied: Vec<i64> = compiled.iter().filter(|c| c.interest.is_none()).map(|c| c.most).collect();
        let implied = fit::combined_implied(implied.iter().copied().max().unwrap_or(0), implied.iter().sum(), true);
        Bounds { most, implied, base }
    }

    #[inline]
    fn most(&self, interest: usize, h: usize) -> i64 {
        self.most[interest][h]
    }

    /// Per interest `k`, from how many of its meeting clauses a gift that meets `k` alone may
    /// beat `floor(1 << k)` (`LEVELS + 1`: none may): below it even the most its clauses, the
    /// implied tags and the gift's own numbers can add does not.
    fn few(&self, floor: impl Fn(Interests) -> i64) -> Vec<usize> {
        let rest = self.base + self.implied;
        self.most
            .iter()
            .enumerate()
            .map(|(k, most)| {
                let floor = floor(1 << k);
                (1..=LEVELS).find(|&h| most[h] + rest > floor).unwrap_or(LEVELS_PLUS_ONE)
            })
            .collect()
    }
}

/// The field masks of a clause of `weight` that meet its interest on their own (a tag or the
/// title among them, reaching [`MATCH_FLOOR`]), of the fields it can occur in (`present`), the
/// smallest only: a strength never falls as fields are added, so a gift meets it when its
/// fields hold one of these.
fn meeting_masks(weight: i64, present: u8) -> Vec<u8> {
    let meets = |m: u8| m & (TAG | TITLE) != 0 && fit::strength(weight, m) >= MATCH_FLOOR;
    // KIND only ever comes with TAG (a first tag is a tag).
    let possible = |m: u8| m & present == m && (m & KIND == 0 || m & TAG != 0);
    let mut smallest: Vec<u8> = Vec::new();
    for m in 1u8..16 {
        let holds_smaller = |s: &u8| s & m == *s;
        if possible(m) && meets(m) && !smallest.iter().any(holds_smaller) {
            smallest.push(m);
        }
    }
    smallest
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
    fn tags_together(&self, a: &str, b: &str) -> usize {
        let (Some(&ta), Some(&tb)) = (self.terms.get(a), self.terms.get(b)) else {
            return 0;
        };
        if ta == tb {
            return self.postings[ta as usize][0].len();
        }
        self.tag_pairs.get(&(ta, tb)).map_or(0, |&n| n as usize)
    }
}

/// The points every gift gets apart from interests and implied tags. Mirrors `fit::score`.
#[inline]
fn base_points(p: &Packed, q: &SuggestGiftsQuery, plan: &Plan, wanted: Wanted) -> i64 {
    let relationship = p.relationships & wanted.relationship != 0;
    let occasion = p.occasions & wanted.occasion != 0;
    let first = p.first_occasion & wanted.occasion != 0;
    fit::base_points(plan, q, wanted.price(p), (p.age_min, p.age_max), relationship, (occasion, first))
}

/// The query's filters in the form the packed numbers are compared with.
#[derive(Clone, Copy)]
struct Wanted {
    convert: bool,
    currency: giftgenius_types::Currency,
    /// The budget in the query's currency, and as a range of US cents, the catalog's prices,
    /// for prices within ±[`USD_RANGE_LIMIT`] (`usd_range`).
    min: i64,
    max: i64,
    usd: (i64, i64),
    relationship: u16,
    occasion: u16,
}

impl Wanted {
    fn of(q: &SuggestGiftsQuery) -> Wanted {
        let min = q.budget_min.map_or(i64::MIN, |m| m.amount_minor);
        let max = q.budget_max.map_or(i64::MAX, |m| m.amount_minor);
        Wanted {
            convert: q.currency != giftgenius_types::Currency::USD,
            currency: q.currency,
            min,
            max,
            usd: usd_range(min, max, q.currency),
            relationship: relationship_bit(q.relationship_type),
            occasion: q.occasion.map_or(0, occasion_bit),
        }
    }

    /// The gift's price in the query's currency.
    #[inline]
    fn price(&self, p: &Packed) -> i64 {
        if self.convert { price_in(p.price_cents, self.currency).amount_minor } else { p.price_cents }
    }

    /// Whether the budget and the age let the gift of `p` be shown (stock is a bitmap).
    /// Mirrors `ranking::passes_hard_rules`.
    #[inline]
    fn passes(&self, p: &Packed, q: &SuggestGiftsQuery) -> bool {
        let price = if p.price_cents.unsigned_abs() < USD_RANGE_LIMIT as u64 {
            (self.usd.0..=self.usd.1).contains(&p.price_cents)
        } else {
            // Beyond any catalog's prices (import takes up to $1,000,000): converted as such.
            (self.min..=self.max).contains(&self.price(p))
        };
        price && q.age.is_none_or(|age| age >= p.age_min && age <= p.age_max)
    }
}

/// How far from zero `usd_range` answers for.
const USD_RANGE_LIMIT: i64 = 1 << 60;

/// The US cents (within ±[`USD_RANGE_LIMIT`]) whose price in `currency` is within `min..=max`: a range, since a conversion
/// never lowers a price as the cents grow; found by bisection once per query, so a walk compares
/// a gift's own price instead of converting each.
fn usd_range(min: i64, max: i64, currency: giftgenius_types::Currency) -> (i64, i64) {
    const LIMIT: i64 = USD_RANGE_LIMIT;
    let converted = |cents: i64| price_in(cents, currency).amount_minor;
    // The first cents in `lo..=hi` for which `above` holds (it holds from some point on), or
    // `hi + 1`.
    let first = |above: &dyn Fn(i64) -> bool| {
        let (mut lo, mut hi) = (-LIMIT, LIMIT + 1);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if above(mid) { hi = mid } else { lo = mid + 1 }
        }
        lo
    };
    let from = if min == i64::MIN { i64::MIN } else { first(&|c| converted(c) >= min) };
    let to = if max == i64::MAX { i64::MAX } else { first(&|c| converted(c) > max) - 1 };
    (from, to)
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

    /// A walk compares a gift's own price with the budget turned into US cents: the same
    /// answer as converting each price, for every currency, at the edges of the budget too.
    #[test]
    fn a_budget_as_us_cents_lets_through_exactly_the_prices_that_convert_into_it() {
        use giftgenius_types::Currency;
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |range: i64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as i64 % range
        };
        for currency in [Currency::USD, Currency::EUR, Currency::GBP, Currency::CAD, Currency::AUD, Currency::JPY] {
            for _ in 0..200 {
                let min = if next(4) == 0 { i64::MIN } else { next(20_000) - 10 };
                let max = if next(4) == 0 { i64::MAX } else { min.max(0) + next(20_000) };
                let (from, to) = usd_range(min, max, currency);
                for cents in (-5..30_000).chain([1 << 40, -(1 << 40), (1 << 60) - 1]) {
                    let converted = price_in(cents, currency).amount_minor;
                    assert_eq!(
                        (from..=to).contains(&cents),
                        (min..=max).contains(&converted),
                        "{currency:?} {min}..={max}: {cents} cents is {converted}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_vocabulary_names_terms_as_people_write_them_and_tags_whole() {
        let index = Index::build(super::super::Catalog::builtin().gifts());
        let vocabulary = index.vocabulary();
        for word in ["hiking", "board games", "astronomy", "coffee", "telescope"] {
            assert!(vocabulary.iter().any(|w| w == word), "{word} missing");
        }
        assert!(
            !vocabulary.iter().any(|w| w == "astronomi" || w.contains(text::ING) || w == "the"),
            "stems and stopwords are not surface words"
        );
        // An activity and its thing are two terms, each named as written.
        assert!(vocabulary.iter().any(|w| w == "hike"), "hike missing");
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
                written: true,
            }]],
            implied: vec![],
            relationship_points: 0,
            first_occasion_points: 0,
        };
        let (compiled, cursors) = index.compile(&plan, 0);
        assert!(compiled.is_empty() && cursors.is_empty());
    }
}
