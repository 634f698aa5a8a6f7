//! Addresses and postal codes (`giftgenius_types::delivery`): `Recipient::check` on every part a
//! tool call or an ACP body can carry, and every country's postal-code rule on any text.
//! Input: country, postal code, region, city, line 1, name, separated by 0xFF.
//!
//! Properties: no input panics; an address that passes has a known country, and a postal code
//! that its country's rule accepts; a refusal names a field under `recipient.`.
#![no_main]

use giftgenius_fuzz::{parts, text};
use giftgenius_types::delivery::{POSTAL_CODE_RULES, postal_code_rule};
use giftgenius_types::{Address, Recipient};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [country, postal, region, city, line1, name] = parts::<6>(data).map(text);
    let (Some(country), Some(postal)) = (country, postal) else { return };
    for rule in POSTAL_CODE_RULES {
        // The rules see the code as `check` hands it over: trimmed and upper case.
        rule.accepts(&postal.trim().to_uppercase());
        rule.accepts(postal);
    }
    let part = |p: Option<&str>| p.unwrap_or("x").to_string();
    let recipient = Recipient {
        name: part(name),
        address: Address {
            line1: part(line1),
            line2: None,
            city: part(city),
            region: region.map(str::to_string),
            postal_code: Some(postal.to_string()),
            country: country.to_string(),
        },
    };
    let mut errors = Vec::new();
    recipient.check("recipient", &mut errors);
    for error in &errors {
        assert!(error.field.starts_with("recipient.") && !error.message.is_empty(), "{error:?}");
    }
    if errors.is_empty() {
        let normal = recipient.normalized();
        let code = normal.address.postal_code.as_deref().unwrap_or_default();
        if let Some(rule) = postal_code_rule(&normal.address.country) {
            assert!(rule.accepts(code), "{code:?} passed for {} against its rule", normal.address.country);
        }
    }
});
