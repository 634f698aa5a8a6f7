//! Catalog import (`giftgenius_catalog::import::parse`): a merchant's file as a JSON array, JSON
//! Lines or a Google Merchant Center TSV feed. Input: one byte choosing the format, then the file.
//!
//! Properties: no file panics; every gift read keeps the documented bounds (title, description,
//! tags, ages); every bad row names a line inside the file and a field.
#![no_main]

use giftgenius_catalog::import::{Format, MAX_AGE, Merchants, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&format, file)) = data.split_first() else { return };
    let format = match format % 3 {
        0 => Format::JsonArray,
        1 => Format::JsonLines,
        _ => Format::GoogleMerchantTsv,
    };
    let Ok(parsed) = parse("fuzz", file, format, &mut Merchants::default()) else { return };
    let lines = file.split(|b| *b == b'\n').count();
    for error in &parsed.errors {
        assert!((1..=lines).contains(&error.line) && !error.field.is_empty(), "{error} in {lines} lines");
    }
    assert!(parsed.bad_rows >= parsed.errors.len());
    for gift in &parsed.gifts {
        assert!(!gift.id.is_empty() && !gift.title.trim().is_empty(), "{gift:?}");
        assert!(gift.title.chars().count() <= 200 && gift.description.chars().count() <= 2_000, "{gift:?}");
        assert!(gift.tags.len() <= 50 && gift.tags.iter().all(|t| t.chars().count() <= 50), "{gift:?}");
        assert!(gift.age_min <= gift.age_max && i64::from(gift.age_max) <= MAX_AGE, "{gift:?}");
        assert!(gift.price_cents > 0, "{gift:?}");
    }
});
