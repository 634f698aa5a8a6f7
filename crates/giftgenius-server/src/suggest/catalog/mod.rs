//! The built-in gift catalog: merchants' gifts as shipped with the server, and prices per currency.
//!
//! The data lives in `catalog/*.json` (one file per merchant) and is compiled into the binary,
//! so the app runs with no setup. Ranking lives in `ranking.rs`; the sources `suggest_gifts`
//! queries (one per built-in merchant, plus optional HTTP catalogs) live in `sources.rs`, and how
//! often the HTTP ones are asked in `cache.rs`.

pub mod cache;
mod ranking;
pub mod sources;

use std::collections::HashMap;

use giftgenius_types::wire::IMAGES_PATH;
use giftgenius_types::{Currency, GiftCard, Merchant, Money, Occasion, RelationshipType};
use serde::Deserialize;

pub use ranking::{Ranked, rank};

/// One gift as the catalog stores it (prices in US cents).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogGift {
    pub id: String,
    pub title: String,
    pub description: String,
    pub price_cents: i64,
    pub tags: Vec<String>,
    pub age_min: u8,
    pub age_max: u8,
    pub relationships: Vec<RelationshipType>,
    pub occasions: Vec<Occasion>,
    pub stock: u32,
    #[serde(skip)]
    pub merchant: Option<Merchant>,
}

/// One merchant's catalog: the shape of `catalog/*.json` and of an HTTP catalog's answer.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MerchantFile {
    pub merchant: Merchant,
    pub gifts: Vec<CatalogGift>,
}

impl MerchantFile {
    /// The gifts with their merchant attached.
    pub fn into_gifts(self) -> Vec<CatalogGift> {
        let merchant = self.merchant;
        self.gifts
            .into_iter()
            .map(|mut gift| {
                gift.merchant = Some(merchant.clone());
                gift
            })
            .collect()
    }
}

/// The built-in merchants, one file each, in a fixed order.
pub fn builtin_merchants() -> Vec<MerchantFile> {
    BUILTIN
        .iter()
        .map(|(name, json)| {
            serde_json::from_str::<MerchantFile>(json)
                .unwrap_or_else(|e| panic!("built-in catalog {name}.json is invalid: {e}"))
        })
        .collect()
}

const BUILTIN: [(&str, &str); 4] = [
    ("hearth-home", include_str!("../../../catalog/hearth-home.json")),
    ("trailhead", include_str!("../../../catalog/trailhead.json")),
    ("page-and-pixel", include_str!("../../../catalog/page-and-pixel.json")),
    ("little-wonders", include_str!("../../../catalog/little-wonders.json")),
];

/// Every gift we can suggest, indexed by id.
#[derive(Debug, Clone)]
pub struct Catalog {
    gifts: Vec<CatalogGift>,
    by_id: HashMap<String, usize>,
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
        Self::from_gifts(builtin_merchants().into_iter().flat_map(MerchantFile::into_gifts).collect())
    }

    pub fn from_gifts(mut gifts: Vec<CatalogGift>) -> Self {
        gifts.sort_by(|a, b| a.id.cmp(&b.id));
        let by_id = gifts.iter().enumerate().map(|(i, g)| (g.id.clone(), i)).collect();
        Self { gifts, by_id }
    }

    pub fn gifts(&self) -> &[CatalogGift] {
        &self.gifts
    }

    pub fn get(&self, id: &str) -> Option<&CatalogGift> {
        self.by_id.get(id).map(|&i| &self.gifts[i])
    }

    pub fn len(&self) -> usize {
        self.gifts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gifts.is_empty()
    }
}

impl CatalogGift {
    pub fn merchant(&self) -> Merchant {
        self.merchant.clone().unwrap_or_else(|| Merchant { id: "unknown".into(), name: "Unknown".into() })
    }

    /// The card the widget shows, with `reasons` for this particular request.
    pub fn card(&self, currency: Currency, reasons: Vec<String>, public_url: &str) -> GiftCard {
        GiftCard {
            id: self.id.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            price: price_in(self.price_cents, currency),
            merchant: self.merchant(),
            tags: self.tags.clone(),
            reasons,
            in_stock: self.stock > 0,
            image_url: format!("{}{IMAGES_PATH}{}.svg", public_url.trim_end_matches('/'), self.id),
        }
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
        let merchants: HashSet<String> = catalog.gifts().iter().map(|g| g.merchant().id).collect();
        assert!(merchants.len() >= 3);
        for gift in catalog.gifts() {
            assert!(gift.price_cents > 0, "{}", gift.id);
            assert!(gift.age_min <= gift.age_max, "{}", gift.id);
            assert!(!gift.tags.is_empty(), "{}", gift.id);
        }
    }

    #[test]
    fn prices_convert_with_integer_rounding() {
        assert_eq!(price_in(2499, Currency::USD), Money::new(2499, Currency::USD));
        assert_eq!(price_in(2499, Currency::EUR), Money::new(2299, Currency::EUR));
        assert_eq!(price_in(2499, Currency::JPY), Money::new(3749, Currency::JPY));
    }
}
