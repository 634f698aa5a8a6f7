//! Price formatting for a locale, in plain Rust.
//!
//! Not `Intl.NumberFormat`: the server renders the same components natively (the fallback HTML
//! and the snapshots), and both sides must print the same text. The rules follow CLDR for the
//! locales we care about (en-US, en-GB, de-DE, fr-FR, ja-JP, and Spanish and Portuguese by region:
//! `iberian.rs`) and fall back to the en-US style for anything else. Amounts are integers in
//! minor units: no floats anywhere.

#[cfg(test)]
mod cldr_cases;
mod iberian;

use giftgenius_types::{Currency, Money};

const NBSP: &str = "\u{a0}";
const NARROW_NBSP: &str = "\u{202f}";

/// How one language writes numbers and where the currency goes.
struct Style {
    group: &'static str,
    decimal: &'static str,
    /// CLDR "minimumGroupingDigits": Spanish writes 1234 but 12.345.
    min_grouping: usize,
    /// `true`: "12,00 €"; `false`: "€12.00".
    symbol_after: bool,
    /// A no-break space between a leading symbol and the number: "US$ 12,00" (Brazil).
    space_after_symbol: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Lang {
    En,
    De,
    Fr,
    Es,
    Pt,
    Ja,
    Other,
}

/// Splits "de_DE" / "de-de" / "DE" into a known language and an upper-case region.
fn parse_locale(locale: &str) -> (Lang, String) {
    let normalized = locale.trim().replace('_', "-");
    let mut parts = normalized.split('-');
    let lang = match parts.next().unwrap_or("").to_ascii_lowercase().as_str() {
        "en" => Lang::En,
        "de" => Lang::De,
        "fr" => Lang::Fr,
        "es" => Lang::Es,
        "pt" => Lang::Pt,
        "ja" => Lang::Ja,
        _ => Lang::Other,
    };
    // The region is the first two-letter or three-digit subtag after the language ("es-419"),
    // skipping scripts like "Latn".
    let region = parts
        .find(|p| p.len() == 2 || (p.len() == 3 && p.bytes().all(|b| b.is_ascii_digit())))
        .unwrap_or("")
        .to_ascii_uppercase();
    (lang, region)
}

fn style(lang: Lang, region: &str) -> Style {
    let (group, decimal, min_grouping, symbol_after, space_after_symbol) = match lang {
        Lang::De => (".", ",", 1, true, false),
        Lang::Fr => (NARROW_NBSP, ",", 1, true, false),
        Lang::Es => return iberian::spanish_style(region),
        Lang::Pt => return iberian::portuguese_style(region),
        Lang::En | Lang::Ja | Lang::Other => (",", ".", 1, false, false),
    };
    Style { group, decimal, min_grouping, symbol_after, space_after_symbol }
}

/// The currency sign a reader of this locale expects (e.g. "US$" where "$" is ambiguous).
fn symbol(currency: Currency, lang: Lang, region: &str) -> &'static str {
    match (currency, lang) {
        (Currency::USD, Lang::En) if !region.is_empty() && region != "US" => "US$",
        (Currency::USD, Lang::Fr) => "$US",
        (currency, Lang::Es) => iberian::spanish_symbol(currency, region),
        (currency, Lang::Pt) => iberian::portuguese_symbol(currency),
        (Currency::CAD, Lang::Fr) => "$CA",
        (Currency::AUD, Lang::Fr) => "$AU",
        (Currency::AUD, Lang::De) => "AU$",
        (Currency::GBP, Lang::Fr) => "£GB",
        (Currency::JPY, Lang::Fr) => "JPY",
        (Currency::JPY, Lang::Ja) => "\u{ffe5}",
        (other, _) => other.symbol(),
    }
}

fn group(digits: &str, separator: &str, min_grouping: usize) -> String {
    if digits.len() < 3 + min_grouping {
        return digits.to_string();
    }
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 * separator.len());
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push_str(separator);
        }
        out.push(c);
    }
    out
}

/// Formats an amount for display, e.g. `$1,234.56`, `1.234,56 €`, `￥3,200`.
///
/// The number of decimals comes from the currency (`Currency::exponent`: none for JPY).
pub fn format_money(money: &Money, locale: &str) -> String {
    let (lang, region) = parse_locale(locale);
    let style = style(lang, &region);
    let sym = symbol(money.currency, lang, &region);
    let exp = money.currency.exponent();
    let abs = money.amount_minor.unsigned_abs();
    let scale = 10u64.pow(exp);
    let mut number = group(&(abs / scale).to_string(), style.group, style.min_grouping);
    if exp > 0 {
        number.push_str(style.decimal);
        number.push_str(&format!("{:0width$}", abs % scale, width = exp as usize));
    }
    let sign = if money.amount_minor < 0 { "-" } else { "" };
    // CLDR's currencySpacing: a sign that ends in a letter ("USD") keeps apart from the digits.
    let lettered = sym.chars().last().is_some_and(char::is_alphabetic);
    let gap = if style.space_after_symbol || lettered { NBSP } else { "" };
    if style.symbol_after { format!("{sign}{number}{NBSP}{sym}") } else { format!("{sign}{sym}{gap}{number}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt(minor: i64, currency: Currency, locale: &str) -> String {
        format_money(&Money::new(minor, currency), locale)
    }

    #[test]
    fn english() {
        assert_eq!(fmt(123456, Currency::USD, "en-US"), "$1,234.56");
        assert_eq!(fmt(5, Currency::USD, "en-US"), "$0.05");
        assert_eq!(fmt(0, Currency::USD, "en-US"), "$0.00");
        assert_eq!(fmt(123456789, Currency::EUR, "en-US"), "€1,234,567.89");
        assert_eq!(fmt(123456, Currency::GBP, "en-GB"), "£1,234.56");
        assert_eq!(fmt(123456, Currency::USD, "en-GB"), "US$1,234.56");
        assert_eq!(fmt(2499, Currency::CAD, "en-US"), "CA$24.99");
    }

    #[test]
    fn german_french_spanish() {
        assert_eq!(fmt(123456, Currency::EUR, "de-DE"), "1.234,56\u{a0}€");
        assert_eq!(fmt(2499, Currency::USD, "de-DE"), "24,99\u{a0}$");
        assert_eq!(fmt(123456, Currency::EUR, "fr-FR"), "1\u{202f}234,56\u{a0}€");
        assert_eq!(fmt(123456, Currency::USD, "fr-FR"), "1\u{202f}234,56\u{a0}$US");
        // Spanish does not group four-digit numbers.
        assert_eq!(fmt(123456, Currency::EUR, "es-ES"), "1234,56\u{a0}€");
        assert_eq!(fmt(1234567, Currency::EUR, "es-ES"), "12.345,67\u{a0}€");
    }

    #[test]
    fn portuguese_in_brazil_and_portugal() {
        assert_eq!(fmt(123456, Currency::USD, "pt-BR"), "US$\u{a0}1.234,56");
        assert_eq!(fmt(2499, Currency::USD, "pt"), "US$\u{a0}24,99");
        assert_eq!(fmt(123456, Currency::EUR, "pt-PT"), "1234,56\u{a0}€");
        assert_eq!(fmt(1234567, Currency::EUR, "pt-PT"), "12\u{a0}345,67\u{a0}€");
    }

    #[test]
    fn spanish_in_the_americas_and_portuguese_beyond_brazil() {
        // es-MX writes dollars by their code, es-US as at home (CLDR 48; more in `cldr_cases.rs`).
        assert_eq!(fmt(123450, Currency::USD, "es-MX"), "USD\u{a0}1,234.50");
        assert_eq!(fmt(123450, Currency::USD, "es-US"), "$1,234.50");
        assert_eq!(fmt(123450, Currency::EUR, "es_419"), "EUR\u{a0}1,234.50");
        assert_eq!(fmt(123450, Currency::USD, "es-AR"), "US$\u{a0}1.234,50");
        assert_eq!(fmt(123450, Currency::GBP, "es-ES"), "1234,50\u{a0}GBP");
        assert_eq!(fmt(123450, Currency::AUD, "pt-BR"), "AU$\u{a0}1.234,50");
        assert_eq!(fmt(123450, Currency::EUR, "pt-AO"), "1\u{a0}234,50\u{a0}€");
        assert_eq!(fmt(1234500, Currency::EUR, "pt-PT"), "12\u{a0}345,00\u{a0}€");
    }

    #[test]
    fn yen_has_no_decimals() {
        assert_eq!(fmt(3200, Currency::JPY, "ja-JP"), "\u{ffe5}3,200");
        assert_eq!(fmt(3200, Currency::JPY, "en-US"), "¥3,200");
        assert_eq!(fmt(3200, Currency::JPY, "de-DE"), "3.200\u{a0}¥");
        assert_eq!(fmt(2499, Currency::USD, "ja-JP"), "$24.99");
    }

    #[test]
    fn locale_spellings_and_fallback() {
        assert_eq!(fmt(123456, Currency::EUR, "de_AT"), "1.234,56\u{a0}€");
        assert_eq!(fmt(123456, Currency::EUR, "DE"), "1.234,56\u{a0}€");
        assert_eq!(fmt(123456, Currency::USD, "en"), "$1,234.56");
        assert_eq!(fmt(123456, Currency::USD, ""), "$1,234.56");
        assert_eq!(fmt(123456, Currency::USD, "xx-YY"), "$1,234.56");
        assert_eq!(fmt(123456, Currency::USD, "zh-Hant-TW"), "$1,234.56");
        assert_eq!(fmt(-5, Currency::GBP, "en-GB"), "-£0.05");
    }
}
