//! Gift wrap: which merchants wrap a gift, and at what price per unit (in US cents; the
//! checkout converts it to the order's currency as it does the gift's price).
//!
//! A merchant wraps what it sells itself, so the price is the merchant's: each built-in merchant
//! is listed; one nobody described (an imported catalog's) wraps at [`DEFAULT_WRAP_CENTS`]. A
//! merchant whose goods do not suit wrapping (bulky outdoor gear) says so with `None`, and a
//! draft for its gift offers no wrap.

/// What a merchant nobody described charges to wrap one gift.
pub const DEFAULT_WRAP_CENTS: u32 = 499;

/// The built-in merchants' wrapping, per unit.
const WRAP: &[(&str, Option<u32>)] = &[
    ("hearth-home", Some(599)),
    ("page-and-pixel", Some(399)),
    ("little-wonders", Some(299)),
    // Tents, stoves and bikes ship in the maker's box.
    ("trailhead", None),
];

/// What `merchant_id` charges to gift-wrap one unit, in US cents; `None`: it does not wrap.
pub fn wrap_cents(merchant_id: &str) -> Option<u32> {
    WRAP.iter().find(|(id, _)| *id == merchant_id).map_or(Some(DEFAULT_WRAP_CENTS), |(_, cents)| *cents)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_merchants_have_their_own_price_and_others_the_default() {
        assert_eq!(wrap_cents("hearth-home"), Some(599));
        assert_eq!(wrap_cents("trailhead"), None);
        assert_eq!(wrap_cents("an-imported-shop"), Some(DEFAULT_WRAP_CENTS));
    }
}
