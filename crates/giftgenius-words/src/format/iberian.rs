//! Spanish and Portuguese number style by region, as CLDR writes money.
//!
//! Source: CLDR 48 (`cldr-json/cldr-numbers-full/main/{es,es-419,es-MX,es-US,es-AR,…,pt,pt-PT,
//! pt-AO}/numbers.json`: `symbols-numberSystem-latn` for the separators, `minimumGroupingDigits`,
//! `currencyFormats-numberSystem-latn.standard` for where the sign goes, `currencySpacing` for
//! the space between a letter sign and the digits; `cldr-numbers-full/main/*/currencies.json`
//! for the signs). Every case of the tests in `format.rs` was checked against ICU 78.2 with
//! CLDR 48 (`Intl.NumberFormat(locale, {style: "currency"})` in Node 22), and regions not
//! listed here follow their language's default (es → Spain, pt → Brazil), as CLDR's parent
//! locales do.
//!
//! Spanish splits three ways: Spain (and es-EA, es-IC, es-PH) writes "1234,50 €" and groups
//! from five digits; Latin America (`es-419` and its children) puts the sign first, most
//! countries with a decimal point ("USD 1,234.50"), eight with a decimal comma
//! ("US$ 1.234,50"), Costa Rica grouping with a no-break space. Portuguese: Brazil (and `pt`)
//! "R$ 1.234,50"; Portugal and the other countries "1234,50 €" with a no-break space (U+00A0 in
//! CLDR 48, not the narrow one French uses) grouping from five digits, Angola from four.

use giftgenius_types::Currency;

use super::{NBSP, Style};

/// Latin American Spanish with a decimal point (CLDR `es-419` style).
const ES_POINT: [&str; 14] = ["419", "MX", "US", "PR", "SV", "GT", "HN", "NI", "PA", "PE", "DO", "CU", "BR", "BZ"];
/// Latin American Spanish with a decimal comma and a dot between groups.
const ES_COMMA: [&str; 8] = ["AR", "BO", "CL", "CO", "EC", "PY", "UY", "VE"];
/// Those whose pattern puts a no-break space after the sign ("¤ #,##0.00").
const ES_SPACED: [&str; 3] = ["AR", "CO", "UY"];
/// Portuguese regions that write like Brazil.
const PT_BRAZIL: [&str; 2] = ["", "BR"];

fn latin_american(region: &str) -> bool {
    ES_POINT.contains(&region) || ES_COMMA.contains(&region) || region == "CR"
}

/// Spanish separators and sign position for `region` (upper case, maybe empty).
pub(super) fn spanish_style(region: &str) -> Style {
    let (group, decimal, symbol_after, space_after_symbol) = if ES_POINT.contains(&region) {
        (",", ".", false, false)
    } else if ES_COMMA.contains(&region) {
        (".", ",", false, ES_SPACED.contains(&region))
    } else if region == "CR" {
        (NBSP, ",", false, false)
    } else {
        (".", ",", true, false)
    };
    let min_grouping = if latin_american(region) { 1 } else { 2 };
    Style { group, decimal, min_grouping, symbol_after, space_after_symbol }
}

/// Portuguese separators and sign position for `region`.
pub(super) fn portuguese_style(region: &str) -> Style {
    if PT_BRAZIL.contains(&region) {
        Style { group: ".", decimal: ",", min_grouping: 1, symbol_after: false, space_after_symbol: true }
    } else {
        let min_grouping = if region == "AO" { 1 } else { 2 };
        Style { group: NBSP, decimal: ",", min_grouping, symbol_after: true, space_after_symbol: false }
    }
}

/// The sign of `currency` in Spanish as written in `region`: Spain knows "€" and "US$", Latin
/// America the ISO code but for the dollar where it is at home.
pub(super) fn spanish_symbol(currency: Currency, region: &str) -> &'static str {
    let americas = latin_american(region);
    match currency {
        Currency::EUR if !americas => "€",
        Currency::USD if !americas => "US$",
        Currency::USD if ["US", "PR", "SV", "EC"].contains(&region) => "$",
        Currency::USD if ["AR", "CO", "UY", "CL", "CU", "DO"].contains(&region) => "US$",
        Currency::JPY if region == "US" => "¥",
        other => other.code(),
    }
}

/// The sign of `currency` in Portuguese (the same in every region).
pub(super) fn portuguese_symbol(currency: Currency) -> &'static str {
    match currency {
        Currency::USD => "US$",
        Currency::EUR => "€",
        Currency::GBP => "£",
        Currency::CAD => "CA$",
        Currency::AUD => "AU$",
        Currency::JPY => "JP¥",
    }
}
