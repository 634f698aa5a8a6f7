//! The gift catalog and its ranking: every gift GiftGenius can suggest and sell, held in memory
//! with an index, and how gifts are ranked for a `suggest_gifts` query (issues 40 and 41).
//!
//! A crate of its own so its direction shows: it uses the contract (`giftgenius-types`) and the
//! embedding model (`giftgenius-meaning`), and knows no transport, store or payment. The server
//! asks it for suggestions and for the gift a checkout sells; the quality harness
//! (`giftgenius-eval`) judges the very answer it gives.
//!
//! Gifts come from the built-in merchants (`catalog/*.json`, compiled into the binary so the app
//! runs with no setup) and from catalog files (`--catalog`), all in the one catalog schema of
//! `import.rs` (`docs/catalog.md`). `live.rs` keeps the current catalog and swaps it whole when a
//! file changes or on SIGHUP; `index.rs` answers a query by touching only the gifts it can
//! match, `ranking.rs` says how gifts are scored and `reasons.rs` why they fit, `meaning.rs`
//! wires the embedding model in. HTTP catalogs (`--catalog-url`) are the sources of
//! `sources.rs`, kept in `cache.rs`.

pub mod cache;
mod fit;
pub mod import;
mod index;
pub mod live;
pub mod meaning;
mod ranking;
mod reasons;
mod related;
pub mod sources;
mod text;

use std::sync::Arc;

use giftgenius_types::wire::{IMAGES_PATH, PHOTO_SUFFIX};
use giftgenius_types::{
    Currency, GiftCard, Merchant, Money, Notice, Occasion, Reason, RelationshipType, SuggestGiftsData,
    SuggestGiftsQuery,
};

pub use index::Index;
pub use ranking::{Ranked, passes_hard_rules, rank, rank_linear};
pub use related::{RelatedTerms, Vocabulary, weight_of_cosine};

/// What `suggest_gifts` answers: the cards, best first, and a notice when few or none matched.
#[derive(Debug, Clone)]
pub struct Suggested {
    pub data: SuggestGiftsData,
    pub notice: Option<Notice>,
}

/// Ranks `catalogs` together for `query` and makes the cards. Public so the quality harness
/// (`crates/giftgenius-eval`, `docs/quality.md`) judges the very answer `suggest_gifts` gives.
///
/// `about` (what the user said about the recipient, trimmed, `None` when blank:
/// [`giftgenius_types::SuggestGiftsInput::about`]) travels beside the query and never into the
/// answer: the answer echoes the query to the model, and the free text is for the ranking's
/// understanding only.
pub fn ranked(catalogs: &[Arc<Catalog>], query: SuggestGiftsQuery, about: Option<&str>, public_url: &str) -> Suggested {
    let parts: Vec<&Catalog> = catalogs.iter().map(|c| &**c).collect();
    let ranked = rank(&parts, &query, about);
    let gifts =
        ranked.gifts.into_iter().map(|(gift, reasons)| gift.card(query.currency, reasons, public_url)).collect();
    Suggested { data: SuggestGiftsData { query, gifts }, notice: ranked.notice }
}

/// One gift as the catalog holds it (prices in US cents).
///
/// Compact, because a catalog can hold a million of them (issue 28): texts are `Box<str>` (no
/// spare capacity, 16 bytes), gifts with the same tags share one interned list, and the
/// relationships and occasions are bit sets. 192 bytes plus ~350 of strings and small vectors
/// per gift became ~112 plus the texts.
#[derive(Debug, Clone)]
pub struct CatalogGift {
    pub id: Box<str>,
    pub title: Box<str>,
    pub description: Box<str>,
    pub price_cents: i64,
    /// Shared by every gift with the same tags, in the same order (`import::Merchants` interns).
    pub tags: Tags,
    pub age_min: u8,
    pub age_max: u8,
    pub relationships: Set<RelationshipType>,
    pub occasions: Set<Occasion>,
    /// The occasion the gift lists first: what it is made for most (catalogs list it first,
    /// as they list a gift's kind first among its tags).
    pub first_occasion: Option<Occasion>,
    pub stock: u32,
    /// Shared by every gift of the merchant.
    pub merchant: Arc<Merchant>,
    /// The merchant's photo (http or https). The widget's CSP allows images from our own origin
    /// only, so cards link the copy we fetch and resize (`/images/{id}.jpg`, `photos/`).
    pub image: Option<Box<str>>,
}

/// A gift's tags: one list shared by the gifts that have the same, each tag shared too.
pub type Tags = Arc<[Tag]>;
pub type Tag = Arc<str>;

/// What a [`Set`] can hold: the values of a small enum, each a bit (its place in `ALL`).
pub trait Member: Copy + PartialEq + std::fmt::Debug + 'static {
    const ALL: &'static [Self];
}

impl Member for RelationshipType {
    const ALL: &'static [Self] = &RelationshipType::ALL;
}

impl Member for Occasion {
    const ALL: &'static [Self] = &Occasion::ALL;
}

const _: () = assert!(RelationshipType::ALL.len() <= 16 && Occasion::ALL.len() <= 16);

/// A set of relationships or occasions as bits (2 bytes in the row, not a vector).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Set<T> {
    bits: u16,
    of: std::marker::PhantomData<T>,
}

impl<T: Member> Set<T> {
    pub const EMPTY: Self = Set { bits: 0, of: std::marker::PhantomData };

    fn bit(value: T) -> u16 {
        T::ALL.iter().position(|x| *x == value).map_or(0, |at| 1 << at)
    }

    /// Every value there is.
    pub fn all() -> Self {
        T::ALL.iter().copied().collect()
    }

    pub fn contains(&self, value: T) -> bool {
        self.bits & Self::bit(value) != 0
    }

    pub fn insert(&mut self, value: T) {
        self.bits |= Self::bit(value);
    }

    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// The bits, in the order of `T::ALL` (what the index packs).
    pub fn bits(&self) -> u16 {
        self.bits
    }

    /// The members, in the order of `T::ALL`.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        T::ALL.iter().enumerate().filter(|(at, _)| self.bits & (1 << at) != 0).map(|(_, v)| *v)
    }
}

impl<T: Member> Default for Set<T> {
    fn default() -> Self {
        Self::EMPTY
    }
}

impl<T: Member> FromIterator<T> for Set<T> {
    fn from_iter<I: IntoIterator<Item = T>>(values: I) -> Self {
        let mut set = Self::EMPTY;
        for value in values {
            set.insert(value);
        }
        set
    }
}

impl<T: Member> std::fmt::Debug for Set<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Ids go into URLs and the order tools: keep them plain.
pub fn plain_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// The built-in merchants' gifts, in a fixed order (the files are checked by a test, so a bad
/// row here is a build mistake).
pub fn builtin_gifts() -> Vec<CatalogGift> {
    let mut merchants = import::Merchants::default();
    let mut all = import::Parsed::default();
    for (name, json) in BUILTIN {
        let file = format!("built-in catalog/{name}.json");
        let parsed = import::parse(&file, json.as_bytes(), import::Format::JsonArray, &mut merchants)
            .unwrap_or_else(|e| panic!("{file} is invalid: {e}"));
        all.extend(parsed);
    }
    if let Some(e) = all.errors.first() {
        panic!("built-in catalog row is invalid: {e}");
    }
    all.gifts
}

const BUILTIN: [(&str, &str); 4] = [
    ("hearth-home", include_str!("../catalog/hearth-home.json")),
    ("trailhead", include_str!("../catalog/trailhead.json")),
    ("page-and-pixel", include_str!("../catalog/page-and-pixel.json")),
    ("little-wonders", include_str!("../catalog/little-wonders.json")),
];

/// Every gift we can suggest, sorted by id, with its index. A gift is found by its id with a
/// binary search: a hash map of the ids was a copy of every id, ~65 MiB at a million gifts
/// (issue 28).
pub struct Catalog {
    gifts: Vec<CatalogGift>,
    index: Index,
    /// What an interest may also be met through besides its words and the built-in vocabulary
    /// (a sentence-embedding model over [`Index::vocabulary`]); none until one is wired.
    related: Option<Arc<dyn RelatedTerms>>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("gifts", &self.gifts.len())
            .field("index", &self.index.size())
            .field("related", &self.related.is_some())
            .finish()
    }
}

/// Sandbox exchange rates: minor units of the currency per US cent, as `num / den`.
/// Fixed on purpose: prices must be reproducible, and a real deployment would price in
/// each currency at the merchant, not convert at request time.
const fn rate(currency: Currency) -> (i64, i64) {
    match currency {
        Currency::USD => (1, 1),
        Currency::EUR => (92, 100),
        Currency::GBP => (79, 100),
        Currency::CAD => (136, 100),
        Currency::AUD => (152, 100),
        Currency::JPY => (150, 100),
    }
}

/// Converts US cents into `currency` minor units, rounding half up.
pub fn price_in(usd_cents: i64, currency: Currency) -> Money {
    let (num, den) = rate(currency);
    let amount = (usd_cents as i128 * num as i128 + den as i128 / 2) / den as i128;
    Money::new(amount as i64, currency)
}

impl Catalog {
    /// The catalog compiled into the binary.
    pub fn builtin() -> Self {
        Self::from_gifts(builtin_gifts())
    }

    /// Sorts the gifts by id (ranking breaks ties on it) and builds the index. Ids must be
    /// unique (`import::Parsed::extend` and `sources::merge` see to it).
    pub fn from_gifts(mut gifts: Vec<CatalogGift>) -> Self {
        gifts.sort_unstable_by(|a, b| a.id.cmp(&b.id));
        gifts.shrink_to_fit(); // a vector grown by doubling: up to 5 % of a million gifts spare
        let index = Index::build(&gifts);
        Self { gifts, index, related: None }
    }

    /// The catalog with `related` as its related-terms hook (a model that maps an interest to
    /// the catalog's words nearest in meaning, `RelatedTerms`). Built over this catalog's
    /// `index().vocabulary()`, typically.
    pub fn with_related(mut self, related: Arc<dyn RelatedTerms>) -> Self {
        self.related = Some(related);
        self
    }

    /// The related-terms hook, if one is wired.
    pub fn related(&self) -> &Option<Arc<dyn RelatedTerms>> {
        &self.related
    }

    pub fn index(&self) -> &Index {
        &self.index
    }

    pub fn gifts(&self) -> &[CatalogGift] {
        &self.gifts
    }

    pub fn get(&self, id: &str) -> Option<&CatalogGift> {
        let at = self.gifts.binary_search_by(|g| (*g.id).cmp(id)).ok()?;
        self.gifts.get(at)
    }

    pub fn len(&self) -> usize {
        self.gifts.len()
    }

    /// Every gift sharing a tag with `gift`, and perhaps a few more (a tag of the same stems,
    /// "craft" and "crafts"), in id order: from the index's tag lists rather than a scan of every
    /// gift (an out-of-stock gift's alternatives, issue 28). A tag without a word to look up
    /// ("-") reads every gift.
    pub fn sharing_a_tag<'a>(&'a self, gift: &CatalogGift) -> Box<dyn Iterator<Item = &'a CatalogGift> + 'a> {
        let keys: Vec<String> = gift.tags.iter().map(|tag| text::stems(tag).join(" ")).collect();
        if keys.iter().any(String::is_empty) {
            return Box::new(self.gifts.iter());
        }
        let numbers = self.index.tagged_with(keys.iter().map(String::as_str));
        Box::new(numbers.into_iter().filter_map(|n| self.gifts.get(n as usize)))
    }

    pub fn is_empty(&self) -> bool {
        self.gifts.is_empty()
    }
}

impl CatalogGift {
    pub fn merchant(&self) -> Merchant {
        Merchant::clone(&self.merchant)
    }

    /// The card the widget shows, with `reasons` for this particular request.
    pub fn card(&self, currency: Currency, reasons: Vec<Reason>, public_url: &str) -> GiftCard {
        GiftCard {
            id: self.id.to_string(),
            title: self.title.to_string(),
            description: self.description.to_string(),
            price: price_in(self.price_cents, currency),
            merchant: self.merchant(),
            tags: self.tags.iter().map(|tag| tag.to_string()).collect(),
            reasons,
            in_stock: self.stock > 0,
            // Gifts without a photo link the lettered tile the server draws.
            image_url: self.photo_url(public_url).unwrap_or_else(|| self.picture_url(public_url, ".svg")),
        }
    }

    /// Our copy of the gift's photo (`{public}/images/{id}.jpg`), if the merchant gave one.
    pub fn photo_url(&self, public_url: &str) -> Option<String> {
        self.image.as_ref().map(|_| self.picture_url(public_url, PHOTO_SUFFIX))
    }

    fn picture_url(&self, public_url: &str, suffix: &str) -> String {
        format!("{}{IMAGES_PATH}{}{suffix}", public_url.trim_end_matches('/'), self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn builtin_catalog_has_300_distinct_gifts_from_at_least_three_merchants() {
        let catalog = Catalog::builtin();
        assert!(catalog.len() >= 300, "only {} gifts", catalog.len());
        let titles: HashSet<String> = catalog.gifts().iter().map(|g| g.title.to_lowercase()).collect();
        assert_eq!(titles.len(), catalog.len(), "titles must be distinct");
        let merchants: HashSet<String> = catalog.gifts().iter().map(|g| g.merchant.id.clone()).collect();
        assert!(merchants.len() >= 3);
        for gift in catalog.gifts() {
            assert!(gift.price_cents > 0, "{}", gift.id);
            assert!(gift.age_min <= gift.age_max, "{}", gift.id);
            assert!(!gift.tags.is_empty(), "{}", gift.id);
        }
    }

    #[test]
    fn a_card_links_the_photo_when_the_gift_has_one_and_the_tile_otherwise() {
        let mut gift = Catalog::builtin().gifts()[0].clone();
        assert_eq!(gift.image, None, "the built-in gifts have no photo");
        let tile = gift.card(Currency::USD, Vec::new(), "https://gg.example/").image_url;
        assert_eq!(tile, format!("https://gg.example/images/{}.svg", gift.id));
        gift.image = Some("https://cdn.example/p.jpg".into());
        let photo = gift.card(Currency::USD, Vec::new(), "https://gg.example").image_url;
        assert_eq!(photo, format!("https://gg.example/images/{}.jpg", gift.id));
    }

    #[test]
    fn the_gifts_sharing_a_tag_come_from_the_index_and_miss_none() {
        let catalog = Catalog::builtin();
        let mut odd = catalog.gifts()[1].clone();
        odd.tags = [Tag::from("-")].into();
        for gift in catalog.gifts().iter().step_by(7).chain([&odd]) {
            let found: Vec<&str> = catalog.sharing_a_tag(gift).map(|g| &*g.id).collect();
            assert!(found.is_sorted(), "id order");
            let sharing = catalog.gifts().iter().filter(|g| g.tags.iter().any(|t| gift.tags.contains(t)));
            for g in sharing {
                assert!(found.contains(&&*g.id), "{} shares a tag with {} but was not found", g.id, gift.id);
            }
            if gift.id != odd.id {
                assert!(found.len() < catalog.len(), "{}: the index, not every gift", gift.id);
            }
        }
    }

    #[test]
    fn a_gift_is_found_by_its_id() {
        let catalog = Catalog::builtin();
        for gift in catalog.gifts() {
            assert_eq!(catalog.get(&gift.id).map(|g| &g.id), Some(&gift.id));
        }
        assert!(catalog.get("no-such-gift").is_none());
        assert!(catalog.get("").is_none());
    }

    #[test]
    fn prices_convert_with_integer_rounding() {
        assert_eq!(price_in(2499, Currency::USD), Money::new(2499, Currency::USD));
        assert_eq!(price_in(2499, Currency::EUR), Money::new(2299, Currency::EUR));
        assert_eq!(price_in(2499, Currency::JPY), Money::new(3749, Currency::JPY));
    }
}
