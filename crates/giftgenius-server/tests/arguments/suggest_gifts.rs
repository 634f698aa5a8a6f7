//! `parse_args::<SuggestGiftsInput>`: every mistake a model makes becomes a field error it can fix.

use giftgenius_types::{Currency, Money, Occasion, RelationshipType, SuggestGiftsInput, SuggestGiftsQuery};
use serde_json::json;

use crate::helpers::{Case, accept, reject, run_cases};

fn forty_one_chars() -> String {
    "a".repeat(41)
}

#[test]
fn each_bad_argument_is_a_validation_error_naming_the_field() {
    let eleven: Vec<String> = (1..=11).map(|i| format!("hobby {i}")).collect();
    let cases = [
        // The seed examples.
        Case {
            name: "age -1",
            args: json!({"relationship_type": "friend", "age": -1}),
            field: "age",
            mentions: &["0", "-1"],
            count: 1,
        },
        Case {
            name: "age 121",
            args: json!({"relationship_type": "friend", "age": 121}),
            field: "age",
            mentions: &["120", "121"],
            count: 1,
        },
        Case {
            name: "negative budget_min",
            args: json!({"relationship_type": "friend", "budget_min": -5}),
            field: "budget_min",
            mentions: &["0"],
            count: 1,
        },
        Case {
            name: "negative budget_max",
            args: json!({"relationship_type": "friend", "budget_max": -0.01}),
            field: "budget_max",
            mentions: &["0"],
            count: 1,
        },
        Case {
            name: "missing relationship_type",
            args: json!({"age": 30, "interests": ["coffee"]}),
            field: "relationship_type",
            mentions: &["required"],
            count: 1,
        },
        Case {
            name: "budget_min > budget_max",
            args: json!({"relationship_type": "friend", "budget_min": 80, "budget_max": 50}),
            field: "budget_min",
            mentions: &["80", "50", "budget_max"],
            count: 1,
        },
        // Wrong JSON types.
        Case {
            name: "age as a word",
            args: json!({"relationship_type": "friend", "age": "thirty"}),
            field: "age",
            mentions: &["whole number", "string"],
            count: 1,
        },
        Case {
            name: "age with a fraction",
            args: json!({"relationship_type": "friend", "age": 30.5}),
            field: "age",
            mentions: &["whole number"],
            count: 1,
        },
        Case {
            name: "interests as a string",
            args: json!({"relationship_type": "friend", "interests": "coffee"}),
            field: "interests",
            mentions: &["list", "string"],
            count: 1,
        },
        Case {
            name: "interests as numbers",
            args: json!({"relationship_type": "friend", "interests": [1, 2]}),
            field: "interests[0]",
            mentions: &["string"],
            count: 2,
        },
        Case {
            name: "unknown relationship_type",
            args: json!({"relationship_type": "cousin"}),
            field: "relationship_type",
            mentions: &["one of", "partner", "friend", "other", "cousin"],
            count: 1,
        },
        Case {
            name: "relationship_type as a number",
            args: json!({"relationship_type": 5}),
            field: "relationship_type",
            mentions: &["friend"],
            count: 1,
        },
        Case {
            name: "unknown currency",
            args: json!({"relationship_type": "friend", "currency": "XYZ"}),
            field: "currency",
            mentions: &["USD", "EUR", "XYZ"],
            count: 1,
        },
        Case {
            name: "budget_max \"NaN\"",
            args: json!({"relationship_type": "friend", "budget_max": "NaN"}),
            field: "budget_max",
            mentions: &["number"],
            count: 1,
        },
        Case {
            name: "budget_max \"Infinity\"",
            args: json!({"relationship_type": "friend", "budget_max": "Infinity"}),
            field: "budget_max",
            mentions: &["number"],
            count: 1,
        },
        Case {
            name: "budget_max beyond a million",
            args: json!({"relationship_type": "friend", "budget_max": 1_000_001}),
            field: "budget_max",
            mentions: &["1000000"],
            count: 1,
        },
        Case {
            name: "limit 0",
            args: json!({"relationship_type": "friend", "limit": 0}),
            field: "limit",
            mentions: &["1"],
            count: 1,
        },
        Case {
            name: "limit 13",
            args: json!({"relationship_type": "friend", "limit": 13}),
            field: "limit",
            mentions: &["12"],
            count: 1,
        },
        Case {
            name: "11 interests",
            args: json!({"relationship_type": "friend", "interests": eleven}),
            field: "interests",
            mentions: &["10", "11"],
            count: 1,
        },
        Case {
            name: "a 41-character interest",
            args: json!({"relationship_type": "friend", "interests": ["tea", forty_one_chars()]}),
            field: "interests[1]",
            mentions: &["40"],
            count: 1,
        },
        Case {
            name: "a blank interest",
            args: json!({"relationship_type": "friend", "interests": ["   "]}),
            field: "interests[0]",
            mentions: &["blank"],
            count: 1,
        },
        Case {
            name: "an empty interest",
            args: json!({"relationship_type": "friend", "interests": [""]}),
            field: "interests[0]",
            mentions: &["empty"],
            count: 1,
        },
        Case {
            name: "unknown occasion",
            args: json!({"relationship_type": "friend", "occasion": "xmas"}),
            field: "occasion",
            mentions: &["birthday", "holiday", "xmas"],
            count: 1,
        },
        Case {
            name: "relationship_type null",
            args: json!({"relationship_type": null}),
            field: "relationship_type",
            mentions: &["friend"],
            count: 1,
        },
        Case {
            name: "unknown argument budget",
            args: json!({"relationship_type": "friend", "budget": 50}),
            field: "budget",
            mentions: &["not a known argument", "budget_min", "budget_max", "relationship_type"],
            count: 1,
        },
    ];
    run_cases::<SuggestGiftsInput>(&cases);
}

#[test]
fn several_problems_are_reported_in_one_call() {
    let error = reject::<SuggestGiftsInput>(json!({"age": 121, "budget": 50}));
    let mut fields: Vec<&str> = error.field_errors.iter().map(|e| e.field.as_str()).collect();
    fields.sort_unstable();
    assert_eq!(fields, ["age", "budget", "relationship_type"], "{:#?}", error.field_errors);
    assert!(error.message.starts_with("3 invalid arguments:"), "{}", error.message);
    for field in ["age", "budget", "relationship_type"] {
        assert!(error.message.contains(field), "{}", error.message);
    }
}

#[test]
fn several_rule_violations_are_reported_in_one_call() {
    // The schema passes; the cross-field rules still report everything they find.
    let error = reject::<SuggestGiftsInput>(json!({
        "relationship_type": "sibling",
        "interests": ["chess", "  "],
        "budget_min": 80,
        "budget_max": 50,
    }));
    let fields: Vec<&str> = error.field_errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["interests[1]", "budget_min"], "{:#?}", error.field_errors);
}

#[test]
fn budgets_are_compared_in_minor_units_not_as_floats() {
    // Both round to 5000 cents (and 1000 yen): equal budgets, not min > max.
    let input: SuggestGiftsInput =
        accept(json!({"relationship_type": "friend", "budget_min": 50.004, "budget_max": 50.001}));
    let query = input.normalize();
    assert_eq!(
        (query.budget_min, query.budget_max),
        (Some(Money::new(5000, Currency::USD)), Some(Money::new(5000, Currency::USD)))
    );
    accept::<SuggestGiftsInput>(
        json!({"relationship_type": "friend", "budget_min": 1000.4, "budget_max": 1000.2, "currency": "JPY"}),
    );
    // One cent apart is still refused.
    let error =
        reject::<SuggestGiftsInput>(json!({"relationship_type": "friend", "budget_min": 50.01, "budget_max": 50}));
    assert_eq!(error.field_errors[0].field, "budget_min");
}

#[test]
fn the_minimal_input_gets_the_defaults() {
    let input: SuggestGiftsInput = accept(json!({"relationship_type": "friend"}));
    assert_eq!(input, SuggestGiftsInput::for_relationship(RelationshipType::Friend));
    assert_eq!(input.currency, Currency::USD);
    assert_eq!(input.limit, None);
    assert!(input.interests.is_empty() && input.age.is_none() && input.occasion.is_none());
    assert_eq!(input.normalize().limit as usize, SuggestGiftsInput::DEFAULT_LIMIT);
}

#[test]
fn a_full_input_with_decimal_budgets_parses() {
    let input: SuggestGiftsInput = accept(json!({
        "relationship_type": "parent",
        "age": 62,
        "interests": ["gardening", "Coffee"],
        "budget_min": 19.99,
        "budget_max": 75.5,
        "occasion": "mothers_day",
        "currency": "EUR",
        "limit": 12,
    }));
    assert_eq!(
        input,
        SuggestGiftsInput {
            relationship_type: RelationshipType::Parent,
            age: Some(62),
            interests: vec!["gardening".into(), "Coffee".into()],
            budget_min: Some(19.99),
            budget_max: Some(75.5),
            occasion: Some(Occasion::MothersDay),
            currency: Currency::EUR,
            limit: Some(12),
            about: None,
        }
    );
}

#[test]
fn explicit_nulls_for_optional_arguments_mean_absent() {
    let input: SuggestGiftsInput = accept(json!({
        "relationship_type": "colleague",
        "age": null,
        "budget_min": null,
        "budget_max": null,
        "occasion": null,
        "limit": null,
        "about": null,
    }));
    assert_eq!(input, SuggestGiftsInput::for_relationship(RelationshipType::Colleague));
}

#[test]
fn boundary_values_are_accepted() {
    let ten: Vec<String> = (1..=10).map(|i| format!("hobby {i}")).collect();
    for args in [
        json!({"relationship_type": "child", "age": 0, "limit": 1}),
        json!({"relationship_type": "grandparent", "age": 120, "limit": 12}),
        json!({"relationship_type": "friend", "budget_min": 0, "budget_max": 0}),
        json!({"relationship_type": "friend", "budget_min": 50, "budget_max": 50}),
        json!({"relationship_type": "friend", "budget_max": 1_000_000}),
        json!({"relationship_type": "friend", "interests": ten}),
        json!({"relationship_type": "friend", "interests": ["a", "b".repeat(40)]}),
        json!({"relationship_type": "friend", "interests": []}),
    ] {
        accept::<SuggestGiftsInput>(args);
    }
}

#[test]
fn every_relationship_type_and_currency_is_accepted_by_its_wire_name() {
    for relationship in RelationshipType::ALL {
        let input: SuggestGiftsInput = accept(json!({"relationship_type": relationship.as_str()}));
        assert_eq!(input.relationship_type, relationship);
    }
    for currency in Currency::ALL {
        let input: SuggestGiftsInput = accept(json!({"relationship_type": "other", "currency": currency.code()}));
        assert_eq!(input.currency, currency);
    }
}

#[test]
fn normalize_cleans_interests_and_converts_budgets_to_minor_units() {
    let input: SuggestGiftsInput = accept(json!({
        "relationship_type": "friend",
        "age": 34,
        "interests": ["  Coffee ", "coffee", "HIKING", "hiking  ", "Board Games"],
        "budget_min": 19.99,
        "budget_max": 50,
        "occasion": "birthday",
    }));
    assert_eq!(
        input.normalize(),
        SuggestGiftsQuery {
            relationship_type: RelationshipType::Friend,
            age: Some(34),
            interests: vec!["coffee".into(), "hiking".into(), "board games".into()],
            budget_min: Some(Money::new(1999, Currency::USD)),
            budget_max: Some(Money::new(5000, Currency::USD)),
            occasion: Some(Occasion::Birthday),
            currency: Currency::USD,
            limit: 6,
        }
    );
}

#[test]
fn normalize_uses_the_currencys_own_minor_unit() {
    let input: SuggestGiftsInput = accept(json!({
        "relationship_type": "boss",
        "budget_min": 1500,
        "budget_max": 4999.6,
        "currency": "JPY",
        "limit": 3,
    }));
    let query = input.normalize();
    assert_eq!(query.budget_min, Some(Money::new(1500, Currency::JPY)));
    assert_eq!(query.budget_max, Some(Money::new(5000, Currency::JPY)));
    assert_eq!(query.limit, 3);
}

#[test]
fn cross_field_rules_still_run_when_other_fields_break_the_schema() {
    // `age` breaks the schema; the budgets are each valid, so their rule is checked as well.
    let error = reject::<SuggestGiftsInput>(json!({
        "relationship_type": "friend", "age": 121, "budget_min": 80, "budget_max": 50,
    }));
    let shown: Vec<(&str, &str)> = error.field_errors.iter().map(|e| (e.field.as_str(), e.message.as_str())).collect();
    assert_eq!(
        shown,
        [("age", "must be at most 120 (got 121)"), ("budget_min", "budget_min (80) is greater than budget_max (50)")]
    );
    assert_eq!(error.message, "2 invalid arguments: age, budget_min");
    // An unknown argument does not hide the rules either, nor does a broken list item.
    let error = reject::<SuggestGiftsInput>(json!({
        "relationship_type": "friend", "budget": 5, "interests": [""], "budget_min": 80, "budget_max": 50,
    }));
    let fields: Vec<&str> = error.field_errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["budget", "interests[0]", "budget_min"], "{:#?}", error.field_errors);
}

#[test]
fn a_rule_about_a_field_that_broke_the_schema_is_not_repeated() {
    // budget_min breaks the schema, so the min/max rule (about budget_min) cannot run on it.
    let error =
        reject::<SuggestGiftsInput>(json!({"relationship_type": "friend", "budget_min": -80, "budget_max": 50}));
    let fields: Vec<&str> = error.field_errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["budget_min"], "{:#?}", error.field_errors);
}

#[test]
fn when_a_required_field_is_invalid_only_the_schema_errors_are_reported() {
    // Without a valid relationship_type no input can be built, so the cross-field rules cannot
    // run: budget_min > budget_max is reported once relationship_type is fixed, not before.
    let error = reject::<SuggestGiftsInput>(json!({"relationship_type": "cousin", "budget_min": 80, "budget_max": 50}));
    let fields: Vec<&str> = error.field_errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["relationship_type"], "{:#?}", error.field_errors);
    let error = reject::<SuggestGiftsInput>(json!({"budget_min": 80, "budget_max": 50}));
    let fields: Vec<&str> = error.field_errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["relationship_type"], "{:#?}", error.field_errors);
}

#[test]
fn about_longer_than_300_characters_or_on_several_lines_is_refused_without_quoting_it() {
    let marker = "ZQX-about-marker";
    let cases = [
        (json!({"relationship_type": "friend", "about": format!("{marker}{}", "é".repeat(300))}), "300"),
        (json!({"relationship_type": "friend", "about": format!("{marker}\nsecond line")}), "one line"),
        (json!({"relationship_type": "friend", "about": format!("{marker}\u{7}")}), "one line"),
        (json!({"relationship_type": "friend", "about": [marker]}), "a string"),
    ];
    for (args, mentions) in cases {
        let error = reject::<SuggestGiftsInput>(args.clone());
        let fields: Vec<&str> = error.field_errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["about"], "{args}: {:#?}", error.field_errors);
        assert!(error.field_errors[0].message.contains(mentions), "{args}: {:#?}", error.field_errors);
        let shown = serde_json::to_string(&error).unwrap();
        assert!(!shown.contains(marker), "the error quotes what was said: {shown}");
    }
    // Counted in characters: 300 three-byte characters are 900 bytes and fit.
    accept::<SuggestGiftsInput>(json!({"relationship_type": "friend", "about": "€".repeat(300)}));
}

#[test]
fn about_is_trimmed_blank_is_absent_and_the_normalized_query_never_holds_it() {
    let input: SuggestGiftsInput = accept(json!({
        "relationship_type": "friend",
        "interests": ["tea"],
        "about": "  ZQX-about-marker: just moved to a flat with a balcony \n",
    }));
    assert_eq!(input.about(), Some("ZQX-about-marker: just moved to a flat with a balcony"));
    let query = serde_json::to_string(&input.normalize()).unwrap();
    assert!(!query.contains("ZQX-about-marker") && !query.contains("about"), "{query}");
    for blank in ["", "   ", " \n "] {
        let input: SuggestGiftsInput = accept(json!({"relationship_type": "friend", "about": blank}));
        assert_eq!(input.about(), None, "{blank:?}");
    }
}
