//! Where a gift goes: the recipient, their postal address and an optional gift message, with
//! the rules a postal address must follow in each country.
//!
//! These are personal data. The full details travel to the widget (in a result's widget-only
//! `_meta`, key [`crate::wire::META_DELIVERY`]) and to the order; what the model reads of a draft
//! or an order is a [`Destination`]: city and country only.
//!
//! Validation gives field errors the model and the confirm card can act on: every required part
//! per country, and the postal-code shape of the countries in [`POSTAL_CODE_RULES`]. Values are
//! compared after trimming and case-folding ([`Recipient::normalized`] is what gets stored).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::args::FieldError;
use crate::field_rule::FieldRule;

/// Longest recipient name, in characters.
pub const MAX_NAME_CHARS: usize = 100;
/// Longest address line, city or region, in characters.
pub const MAX_LINE_CHARS: usize = 200;
/// Longest gift message, in characters (about a card's worth).
pub const MAX_GIFT_MESSAGE_CHARS: usize = 300;
/// Most lines in a gift message.
pub const MAX_GIFT_MESSAGE_LINES: usize = 8;

/// A postal address.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Address {
    /// Street and number (or PO box).
    #[schemars(length(min = 1, max = 200))]
    pub line1: String,
    /// Apartment, floor, building (optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub line2: Option<String>,
    #[schemars(length(min = 1, max = 200))]
    pub city: String,
    /// State, province or county; required in US, CA and BR (their two-letter codes, e.g. CA, ON, SP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 200))]
    pub region: Option<String>,
    /// Postal code in the country's own format (e.g. 94103, SW1A 1AA, 10115, 1000-001, K1A 0B1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 16))]
    pub postal_code: Option<String>,
    /// ISO 3166-1 alpha-2 country code, e.g. US, GB, DE.
    #[schemars(length(min = 2, max = 2))]
    pub country: String,
}

/// Who receives the gift, and where.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Recipient {
    /// The recipient's name as it goes on the parcel.
    #[schemars(length(min = 1, max = 100))]
    pub name: String,
    pub address: Address,
}

/// The full delivery details of a draft or an order: widget-only (`_meta`), never model text.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeliveryDetails {
    pub recipient: Recipient,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gift_message: Option<String>,
    /// Whether the person agreed to keep this address as their saved address for next time.
    #[serde(default)]
    pub save_address: bool,
    /// Whether the recipient came from the person's saved address (not from the call).
    #[serde(default)]
    pub from_saved_address: bool,
}

/// Where a draft or an order goes, in the general terms the model may read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Destination {
    pub city: String,
    /// ISO 3166-1 alpha-2.
    pub country: String,
}

/// How one country's postal codes look, and whether a region is required there.
#[derive(Debug, Clone, Copy)]
pub struct PostalCodeRule {
    pub country: &'static str,
    /// Human description, used in field errors (and the table in docs/tools.md).
    pub shape: &'static str,
    /// An example that passes.
    pub example: &'static str,
    /// Whether `region` is required (and must be one of the country's codes).
    pub region_required: bool,
    check: fn(&str) -> bool,
}

impl PostalCodeRule {
    /// Whether `code` (trimmed, upper-cased) has this country's shape. Every shape is ASCII, so
    /// anything else is refused before a shape reads it (the shapes cut codes at fixed positions).
    pub fn accepts(&self, code: &str) -> bool {
        code.is_ascii() && (self.check)(code)
    }
}

fn digits(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_digit())
}

fn upper(s: &str, n: usize) -> bool {
    s.len() == n && s.bytes().all(|b| b.is_ascii_uppercase())
}

/// `code` as `head`, `sep`, `tail` when the byte at `at` is `sep`; `None` otherwise, cutting only
/// on a character boundary (`get`), so no code makes a shape panic, ASCII or not.
fn parts(code: &str, at: usize, sep: char) -> Option<(&str, &str)> {
    let (head, rest) = code.split_at_checked(at)?;
    Some((head, rest.strip_prefix(sep)?))
}

/// `head_len` digits, `sep`, `tail_len` digits (`12345-6789`).
fn digits_around(code: &str, head_len: usize, sep: char, tail_len: usize) -> bool {
    parts(code, head_len, sep).is_some_and(|(head, tail)| digits(head, head_len) && digits(tail, tail_len))
}

fn us(code: &str) -> bool {
    digits(code, 5) || digits_around(code, 5, '-', 4)
}

/// UK postcodes: outward code (A9, A99, AA9, AA99, A9A, AA9A) + space + inward code (9AA).
fn gb(code: &str) -> bool {
    if code == "GIR 0AA" {
        return true;
    }
    let Some((outward, inward)) = code.split_once(' ') else { return false };
    let o = outward.as_bytes();
    let inward_ok = inward.len() == 3
        && inward.as_bytes()[0].is_ascii_digit()
        && inward.as_bytes()[1..].iter().all(u8::is_ascii_uppercase);
    let alpha = |b: &u8| b.is_ascii_uppercase();
    let digit = |b: &u8| b.is_ascii_digit();
    let outward_ok = match o {
        [a, d] => alpha(a) && digit(d),
        [a, d, x] => alpha(a) && digit(d) && (digit(x) || alpha(x)) || alpha(a) && alpha(d) && digit(x),
        [a, b, d, x] => alpha(a) && alpha(b) && digit(d) && (digit(x) || alpha(x)),
        _ => false,
    };
    outward_ok && inward_ok
}

fn es(code: &str) -> bool {
    let province = code.get(..2).and_then(|p| p.parse::<u32>().ok()).unwrap_or(0);
    digits(code, 5) && (1..=52).contains(&province)
}

fn pt(code: &str) -> bool {
    digits_around(code, 4, '-', 3)
}

fn br(code: &str) -> bool {
    digits(code, 8) || digits_around(code, 5, '-', 3)
}

fn nl(code: &str) -> bool {
    let compact: String = code.chars().filter(|c| *c != ' ').collect();
    let Some((number, letters)) = compact.split_at_checked(4) else { return false };
    code.len() <= 7
        && digits(number, 4)
        && !number.starts_with('0')
        && upper(letters, 2)
        && !["SA", "SD", "SS"].contains(&letters)
}

/// Canadian postal codes: A9A 9A9, without D, F, I, O, Q, U (and no W or Z first).
fn ca(code: &str) -> bool {
    let compact: Vec<u8> = code.bytes().filter(|b| *b != b' ').collect();
    let letter =
        |b: u8, first: bool| b.is_ascii_uppercase() && !b"DFIOQU".contains(&b) && !(first && (b == b'W' || b == b'Z'));
    code.len() <= 7
        && compact.len() == 6
        && letter(compact[0], true)
        && compact[1].is_ascii_digit()
        && letter(compact[2], false)
        && compact[3].is_ascii_digit()
        && letter(compact[4], false)
        && compact[5].is_ascii_digit()
}

fn five_digits(code: &str) -> bool {
    digits(code, 5)
}

/// The countries whose postal codes are checked for shape (every other country: 2-12 letters,
/// digits, spaces or hyphens).
pub const POSTAL_CODE_RULES: &[PostalCodeRule] = &[
    PostalCodeRule {
        country: "US",
        shape: "5 digits, or ZIP+4 (12345-6789)",
        example: "94103",
        region_required: true,
        check: us,
    },
    PostalCodeRule {
        country: "GB",
        shape: "a UK postcode with its space (SW1A 1AA)",
        example: "SW1A 1AA",
        region_required: false,
        check: gb,
    },
    PostalCodeRule { country: "DE", shape: "5 digits", example: "10115", region_required: false, check: five_digits },
    PostalCodeRule {
        country: "ES",
        shape: "5 digits, starting 01-52",
        example: "28013",
        region_required: false,
        check: es,
    },
    PostalCodeRule {
        country: "PT",
        shape: "4 digits, a hyphen, 3 digits (1000-001)",
        example: "1000-001",
        region_required: false,
        check: pt,
    },
    PostalCodeRule {
        country: "BR",
        shape: "8 digits as 12345-678 (CEP)",
        example: "01310-100",
        region_required: true,
        check: br,
    },
    PostalCodeRule { country: "FR", shape: "5 digits", example: "75001", region_required: false, check: five_digits },
    PostalCodeRule {
        country: "IT",
        shape: "5 digits (CAP)",
        example: "00184",
        region_required: false,
        check: five_digits,
    },
    PostalCodeRule {
        country: "NL",
        shape: "4 digits (not starting with 0) and 2 letters (1012 AB)",
        example: "1012 AB",
        region_required: false,
        check: nl,
    },
    PostalCodeRule { country: "CA", shape: "A9A 9A9 (K1A 0B1)", example: "K1A 0B1", region_required: true, check: ca },
];

/// Countries without postal codes: there `postal_code` may be left out.
pub const COUNTRIES_WITHOUT_POSTAL_CODES: &[&str] =
    &["AE", "AG", "AO", "AW", "BS", "BZ", "FJ", "GH", "HK", "JM", "KI", "MO", "QA", "TV", "UG", "ZW"];

/// The region codes of the countries that require one.
fn region_codes(country: &str) -> &'static [&'static str] {
    match country {
        "US" => &[
            "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY",
            "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH",
            "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY", "AS", "GU", "MP",
            "PR", "VI", "AA", "AE", "AP",
        ],
        "CA" => &["AB", "BC", "MB", "NB", "NL", "NS", "NT", "NU", "ON", "PE", "QC", "SK", "YT"],
        "BR" => &[
            "AC", "AL", "AP", "AM", "BA", "CE", "DF", "ES", "GO", "MA", "MT", "MS", "MG", "PA", "PB", "PR", "PE", "PI",
            "RJ", "RN", "RS", "RO", "RR", "SC", "SP", "SE", "TO",
        ],
        _ => &[],
    }
}

/// Every ISO 3166-1 alpha-2 code (officially assigned).
const ISO_3166_ALPHA2: &str = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR \
BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK \
FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO \
JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU \
MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC \
SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA \
VC VE VG VI VN VU WF WS YE YT ZA ZM ZW";

/// Whether `code` (upper case) is an assigned ISO 3166-1 alpha-2 code.
pub fn is_country_code(code: &str) -> bool {
    upper(code, 2) && ISO_3166_ALPHA2.split(' ').any(|c| c == code)
}

/// The postal-code rule of `country`, if its shape is checked.
pub fn postal_code_rule(country: &str) -> Option<&'static PostalCodeRule> {
    POSTAL_CODE_RULES.iter().find(|r| r.country == country)
}

fn clean(s: &str) -> String {
    s.trim().to_string()
}

fn blank_to_none(s: &Option<String>) -> Option<String> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

impl Recipient {
    /// The form that is checked and stored: trimmed; country, region and postal code upper
    /// case; empty optional parts left out.
    pub fn normalized(&self) -> Recipient {
        let a = &self.address;
        Recipient {
            name: clean(&self.name),
            address: Address {
                line1: clean(&a.line1),
                line2: blank_to_none(&a.line2),
                city: clean(&a.city),
                region: blank_to_none(&a.region).map(|r| r.to_uppercase()),
                postal_code: blank_to_none(&a.postal_code).map(|p| p.to_uppercase()),
                country: clean(&a.country).to_uppercase(),
            },
        }
    }

    /// Every problem with this recipient, fields named under `field` (`recipient.address.city`).
    pub fn check(&self, field: &str, errors: &mut Vec<FieldError>) {
        let r = self.normalized();
        let a = &r.address;
        let at = |part: &str| format!("{field}.{part}");
        text_part(&at("name"), &r.name, true, MAX_NAME_CHARS, errors);
        text_part(&at("address.line1"), &a.line1, true, MAX_LINE_CHARS, errors);
        text_part(&at("address.line2"), a.line2.as_deref().unwrap_or(""), false, MAX_LINE_CHARS, errors);
        text_part(&at("address.city"), &a.city, true, MAX_LINE_CHARS, errors);
        if !is_country_code(&a.country) {
            errors.push(FieldError::broke(
                at("address.country"),
                FieldRule::CountryCode,
                "must be an ISO 3166-1 alpha-2 country code such as US, GB, DE or BR",
            ));
            return;
        }
        let country = a.country.as_str();
        let codes = region_codes(country);
        match (&a.region, codes.is_empty()) {
            (None, false) => errors.push(FieldError::broke(
                at("address.region"),
                FieldRule::RegionRequired { country: country.into(), example: codes[0].into() },
                format!("is required in {country}: the two-letter code of the state or province (e.g. {})", codes[0]),
            )),
            (Some(region), false) if !codes.contains(&region.as_str()) => errors.push(FieldError::broke(
                at("address.region"),
                FieldRule::RegionUnknown { country: country.into(), example: codes[0].into() },
                format!("must be the two-letter code of a state or province of {country} (e.g. {})", codes[0]),
            )),
            (Some(region), true) => text_part(&at("address.region"), region, false, MAX_LINE_CHARS, errors),
            _ => {}
        }
        let postal = a.postal_code.as_deref();
        match (postal, postal_code_rule(country)) {
            (None, _) if COUNTRIES_WITHOUT_POSTAL_CODES.contains(&country) => {}
            (None, _) => errors.push(FieldError::broke(
                at("address.postal_code"),
                FieldRule::PostalCodeRequired { country: country.into() },
                format!("is required in {country}"),
            )),
            (Some(code), Some(rule)) if !rule.accepts(code) => errors.push(FieldError::broke(
                at("address.postal_code"),
                FieldRule::PostalCodeShape { country: country.into(), example: rule.example.into() },
                format!("must be {} in {country}, e.g. {}", rule.shape, rule.example),
            )),
            (Some(code), None)
                if !(2..=12).contains(&code.len())
                    || !code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b' ' || b == b'-') =>
            {
                errors.push(FieldError::broke(
                    at("address.postal_code"),
                    FieldRule::PostalCodeChars,
                    "must be 2 to 12 letters, digits, spaces or hyphens",
                ))
            }
            _ => {}
        }
    }

    /// Where this recipient lives, in general terms.
    pub fn destination(&self) -> Destination {
        Destination { city: self.address.city.clone(), country: self.address.country.clone() }
    }
}

/// A required (or optional) one-line text part: not blank when required, at most `max`
/// characters, no control characters.
fn text_part(field: &str, value: &str, required: bool, max: usize, errors: &mut Vec<FieldError>) {
    if required && value.is_empty() {
        errors.push(FieldError::broke(field, FieldRule::Required, "is required"));
    } else if value.chars().count() > max {
        errors.push(FieldError::broke(field, too_long(max), format!("must be at most {max} characters")));
    } else if value.chars().any(char::is_control) {
        errors.push(FieldError::broke(field, FieldRule::OneLine, "must be one line of plain text"));
    }
}

/// Checks a gift message: plain text, at most [`MAX_GIFT_MESSAGE_CHARS`] characters in at most
/// [`MAX_GIFT_MESSAGE_LINES`] lines, no control characters but line breaks.
pub fn check_gift_message(field: &str, message: &str, errors: &mut Vec<FieldError>) {
    if message.chars().count() > MAX_GIFT_MESSAGE_CHARS {
        let rule = too_long(MAX_GIFT_MESSAGE_CHARS);
        errors.push(FieldError::broke(field, rule, format!("must be at most {MAX_GIFT_MESSAGE_CHARS} characters")));
    } else if message.lines().count() > MAX_GIFT_MESSAGE_LINES {
        let rule = FieldRule::TooManyLines { max: MAX_GIFT_MESSAGE_LINES as u32 };
        errors.push(FieldError::broke(field, rule, format!("must be at most {MAX_GIFT_MESSAGE_LINES} lines")));
    } else if message.chars().any(|c| c.is_control() && c != '\n' && c != '\r') {
        errors.push(FieldError::broke(field, FieldRule::PlainText, "must be plain text (line breaks are fine)"));
    }
}

/// The rule of a text longer than `max` characters (limits here are small constants).
pub fn too_long(max: usize) -> FieldRule {
    FieldRule::TooLong { max: u32::try_from(max).unwrap_or(u32::MAX) }
}

/// A gift message as stored: trimmed, `\r\n` as `\n`, an empty one left out.
pub fn normalized_gift_message(message: Option<&str>) -> Option<String> {
    message.map(|m| m.replace("\r\n", "\n").trim().to_string()).filter(|m| !m.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipient(country: &str, region: Option<&str>, postal: Option<&str>) -> Recipient {
        Recipient {
            name: "Ana Silva".into(),
            address: Address {
                line1: "Rua Augusta 1".into(),
                line2: None,
                city: "Lisboa".into(),
                region: region.map(str::to_string),
                postal_code: postal.map(str::to_string),
                country: country.into(),
            },
        }
    }

    fn errors(r: &Recipient) -> Vec<FieldError> {
        let mut out = Vec::new();
        r.check("recipient", &mut out);
        out
    }

    #[test]
    fn every_country_rule_accepts_its_example_and_refuses_a_foreign_shape() {
        for rule in POSTAL_CODE_RULES {
            assert!(rule.accepts(rule.example), "{} refuses its own example", rule.country);
            let region = region_codes(rule.country).first().copied();
            assert!(errors(&recipient(rule.country, region, Some(rule.example))).is_empty(), "{}", rule.country);
            assert!(!rule.accepts("ABCDEFGHIJ"), "{}", rule.country);
        }
        let table = [
            ("US", "12345-6789", true),
            ("US", "1234", false),
            ("GB", "M1 1AE", true),
            ("GB", "EC1A 1BB", true),
            ("GB", "SW1A1AA", false),
            ("DE", "0111", false),
            ("ES", "53001", false),
            ("PT", "1000001", false),
            ("BR", "01310100", true),
            ("NL", "1012AB", true),
            ("NL", "0123 AB", false),
            ("NL", "1012 SS", false),
            ("CA", "K1A0B1", true),
            ("CA", "W1A 0B1", false),
            ("IT", "0018", false),
        ];
        for (country, code, ok) in table {
            assert_eq!(postal_code_rule(country).unwrap().accepts(code), ok, "{country} {code}");
        }
    }

    #[test]
    fn required_parts_depend_on_the_country() {
        let missing = errors(&recipient("US", None, Some("94103")));
        assert_eq!(missing.len(), 1);
        assert_eq!(missing[0].field, "recipient.address.region");
        assert!(errors(&recipient("HK", None, None)).is_empty(), "Hong Kong has no postal codes");
        let no_code = errors(&recipient("DE", None, None));
        assert_eq!(no_code[0].message, "is required in DE");
        let country = errors(&recipient("XX", None, Some("1")));
        assert_eq!(country[0].field, "recipient.address.country");
        let lower = recipient("ca", Some("on"), Some("k1a 0b1"));
        assert!(errors(&lower).is_empty(), "{:?}", errors(&lower));
        assert_eq!(lower.normalized().address.postal_code.as_deref(), Some("K1A 0B1"));
    }

    #[test]
    fn a_postal_code_with_a_non_ascii_character_is_a_shape_error_not_a_panic() {
        // `1234é5678` cut at bytes 4..5 or 5..6 lands inside the `é`: each of these panicked.
        for (country, code) in [("US", "1234é5678"), ("PT", "1234é567"), ("BR", "1234é5678"), ("NL", "123é AB")] {
            for rule_code in [code, &code.to_uppercase()] {
                assert!(!postal_code_rule(country).unwrap().accepts(rule_code), "{country} {rule_code}");
            }
            let region = region_codes(country).first().copied();
            let found = errors(&recipient(country, region, Some(code)));
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(found[0].field, "recipient.address.postal_code");
            assert!(matches!(found[0].rule, Some(FieldRule::PostalCodeShape { .. })), "{found:?}");
            assert!(found[0].message.starts_with("must be "), "{}", found[0].message);
        }
    }

    #[test]
    fn the_shapes_cut_codes_on_character_boundaries_even_without_the_ascii_gate() {
        let shapes: [fn(&str) -> bool; 8] = [us, gb, es, pt, br, nl, ca, five_digits];
        for code in ["1234é5678", "1234é567", "é", "12345é678", "1é", "123€ AB", "1012 ÀB", "K1A 0B\u{301}"] {
            for shape in shapes {
                assert!(!shape(code), "{code}");
            }
        }
    }

    proptest::proptest! {
        /// Every validator of a postal address reads any text without panicking: the rules'
        /// shapes (behind the ASCII gate and without it), a whole recipient and a gift message.
        #[test]
        fn no_address_or_postal_code_makes_a_validator_panic(
            code in "\\PC{0,12}",
            text in "\\PC{0,40}",
            country in "\\PC{0,3}|[A-Z]{2}",
            pick in 0..POSTAL_CODE_RULES.len(),
        ) {
            for shape in [us, gb, es, pt, br, nl, ca, five_digits] {
                let _ = shape(&code);
                let _ = shape(&code.to_uppercase());
            }
            for rule in POSTAL_CODE_RULES {
                let _ = rule.accepts(&code);
            }
            let _ = is_country_code(&country);
            let _ = postal_code_rule(&country);
            let rule_country = POSTAL_CODE_RULES[pick].country;
            for country in [country.as_str(), rule_country] {
                let mut r = recipient(country, Some(&text), Some(&code));
                r.name = text.clone();
                r.address.line1 = text.clone();
                r.address.line2 = Some(code.clone());
                r.address.city = text.clone();
                let _ = errors(&r);
                let _ = errors(&recipient(country, region_codes(country).first().copied(), Some(&code)));
            }
            let mut out = Vec::new();
            check_gift_message("gift_message", &text, &mut out);
            let _ = normalized_gift_message(Some(&text));
        }
    }

    #[test]
    fn gift_messages_are_bounded_plain_text() {
        let mut out = Vec::new();
        check_gift_message("gift_message", "Happy birthday!\nLove, A.", &mut out);
        assert!(out.is_empty());
        check_gift_message("gift_message", &"x".repeat(301), &mut out);
        check_gift_message("gift_message", "bell\u{7}", &mut out);
        check_gift_message("gift_message", &"a\n".repeat(9), &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(normalized_gift_message(Some("  \r\n ")), None);
    }
}
