//! Field errors in the person's language, from the rule each one names.
//!
//! The server writes a field error's `message` in English for the model, and its `rule`
//! (`giftgenius_types::FieldRule`) in parts. Here the rule picks the catalog's sentence and the
//! rule's other parts fill its `{placeholders}`: the catalogs stay the one place a field problem
//! is worded for a person. The runtime takes these words from the server's markup
//! of the refused answer (`view/error.rs` marks each with the field it names).

use giftgenius_types::{FieldError, FieldRule};

use crate::i18n::{Lang, Msg};

/// What the person reads for a field error: its rule in their language; without a rule, the
/// server's own English words in English and "please check this field" otherwise.
pub fn field_message(lang: Lang, error: &FieldError) -> String {
    match error.rule.as_ref().and_then(|rule| rule_text(lang, rule)) {
        Some(text) => text,
        None if lang == Lang::En => error.message.clone(),
        None => lang.t(Msg::FieldCheck).to_string(),
    }
}

/// The sentence of `rule` in `lang`, its parts filled in.
pub fn rule_text(lang: Lang, rule: &FieldRule) -> Option<String> {
    let (key, parts) = sentence(rule);
    let args: Vec<(&str, &str)> = parts.iter().map(|(name, v)| (*name, v.as_str())).collect();
    Some(lang.f(key, &args))
}

/// A rule's sentence and its named parts (serde's field names), by a plain match: reading the
/// rule through `serde_json::to_value` would bring its derived serializer into the wasm. The
/// tests check this agrees with what serde writes.
fn sentence(rule: &FieldRule) -> (Msg, Vec<(&'static str, String)>) {
    let region = |key, country: &String, example: &String| {
        (key, vec![("country", country.clone()), ("example", example.clone())])
    };
    match rule {
        FieldRule::Required => (Msg::FieldRuleRequired, vec![]),
        FieldRule::TooLong { max } => (Msg::FieldRuleTooLong, vec![("max", max.to_string())]),
        FieldRule::OneLine => (Msg::FieldRuleOneLine, vec![]),
        FieldRule::CountryCode => (Msg::FieldRuleCountryCode, vec![]),
        FieldRule::RegionRequired { country, example } => region(Msg::FieldRuleRegionRequired, country, example),
        FieldRule::RegionUnknown { country, example } => region(Msg::FieldRuleRegionUnknown, country, example),
        FieldRule::PostalCodeRequired { country } => {
            (Msg::FieldRulePostalCodeRequired, vec![("country", country.clone())])
        }
        FieldRule::PostalCodeShape { country, example } => region(Msg::FieldRulePostalCodeShape, country, example),
        FieldRule::PostalCodeChars => (Msg::FieldRulePostalCodeChars, vec![]),
        FieldRule::TooManyLines { max } => (Msg::FieldRuleTooManyLines, vec![("max", max.to_string())]),
        FieldRule::PlainText => (Msg::FieldRulePlainText, vec![]),
        FieldRule::RecipientMissing => (Msg::FieldRuleRecipientMissing, vec![]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each rule's `code` (as serialized) and the catalog sentence that says it.
    const RULES: [(&str, Msg); 12] = [
        ("required", Msg::FieldRuleRequired),
        ("too_long", Msg::FieldRuleTooLong),
        ("one_line", Msg::FieldRuleOneLine),
        ("country_code", Msg::FieldRuleCountryCode),
        ("region_required", Msg::FieldRuleRegionRequired),
        ("region_unknown", Msg::FieldRuleRegionUnknown),
        ("postal_code_required", Msg::FieldRulePostalCodeRequired),
        ("postal_code_shape", Msg::FieldRulePostalCodeShape),
        ("postal_code_chars", Msg::FieldRulePostalCodeChars),
        ("too_many_lines", Msg::FieldRuleTooManyLines),
        ("plain_text", Msg::FieldRulePlainText),
        ("recipient_missing", Msg::FieldRuleRecipientMissing),
    ];

    fn every_rule() -> Vec<FieldRule> {
        let (country, example) = (String::from("US"), String::from("CA"));
        vec![
            FieldRule::Required,
            FieldRule::TooLong { max: 100 },
            FieldRule::OneLine,
            FieldRule::CountryCode,
            FieldRule::RegionRequired { country: country.clone(), example: example.clone() },
            FieldRule::RegionUnknown { country: country.clone(), example },
            FieldRule::PostalCodeRequired { country: country.clone() },
            FieldRule::PostalCodeShape { country, example: "94103".into() },
            FieldRule::PostalCodeChars,
            FieldRule::TooManyLines { max: 8 },
            FieldRule::PlainText,
            FieldRule::RecipientMissing,
        ]
    }

    #[test]
    fn every_rule_has_a_sentence_in_each_language_with_its_parts_filled_in() {
        assert_eq!(every_rule().len(), RULES.len());
        for rule in every_rule() {
            let parts = serde_json::to_value(&rule).unwrap();
            for lang in Lang::ALL {
                let text = rule_text(lang, &rule).unwrap_or_else(|| panic!("{rule:?} has no sentence"));
                assert!(!text.contains('{'), "{lang:?} {rule:?}: {text}");
                for (name, value) in parts.as_object().unwrap().iter().filter(|(n, _)| *n != "code") {
                    let value = value.as_str().map_or_else(|| value.to_string(), str::to_string);
                    assert!(text.contains(&value), "{lang:?} {rule:?} leaves out {name}: {text}");
                }
            }
        }
    }

    /// The plain match says what serde writes: the sentence [`RULES`] names for the rule's
    /// serialized `code`, and exactly its other fields as parts.
    #[test]
    fn the_match_agrees_with_the_serialized_rule() {
        for rule in every_rule() {
            let serde_json::Value::Object(written) = serde_json::to_value(&rule).unwrap() else { panic!("{rule:?}") };
            let (key, parts) = sentence(&rule);
            let code = written["code"].as_str().unwrap();
            assert_eq!(RULES.iter().find(|(c, _)| *c == code).map(|(_, k)| *k), Some(key), "{code}");
            let mut want: Vec<(String, String)> = written
                .iter()
                .filter(|(n, _)| *n != "code")
                .map(|(n, v)| (n.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_string)))
                .collect();
            let mut got: Vec<(String, String)> = parts.into_iter().map(|(n, v)| (n.to_string(), v)).collect();
            want.sort();
            got.sort();
            assert_eq!(got, want, "{code}");
        }
    }

    #[test]
    fn a_field_error_reads_in_the_persons_language_and_without_a_rule_falls_back() {
        let rule = FieldRule::PostalCodeShape { country: "PT".into(), example: "1000-001".into() };
        let error = FieldError::broke("recipient.address.postal_code", rule, "must be NNNN-NNN in PT, e.g. 1000-001");
        assert_eq!(field_message(Lang::Es, &error), "Usa el formato de código postal de PT, por ejemplo 1000-001.");
        assert_eq!(field_message(Lang::Pt, &error), "Use o formato de código postal de PT, por exemplo 1000-001.");
        assert_eq!(field_message(Lang::En, &error), "Use the postal code format of PT, e.g. 1000-001.");
        let plain = FieldError::new("cursor", "must be the next_cursor of a previous list_orders result");
        assert_eq!(field_message(Lang::En, &plain), plain.message);
        assert_eq!(field_message(Lang::Pt, &plain), Lang::Pt.t(Msg::FieldCheck));
    }
}
