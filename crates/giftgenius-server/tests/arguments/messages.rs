//! The exact words of every kind of argument error, byte for byte.
//!
//! The table was recorded from the hand-written schema walker that `arguments` (built on
//! `jsonschema`) replaced, so the messages models and docs/errors.md show did not change. The
//! three rows marked "Issue 8" list more errors than the walker did: it skipped the cross-field
//! rules as soon as any field broke the schema.

use giftgenius_server::mcp::arguments::parse_args;
use giftgenius_types::FieldError;
use giftgenius_types::SuggestGiftsInput;
use giftgenius_types::orders::{CommitOrderInput, CreateCheckoutSessionInput, GetOrderInput, PrepareOrderInput};
use serde_json::{Value, json};

use crate::helpers::args;

/// Which tool's input a row parses.
#[derive(Debug, Clone, Copy)]
enum Tool {
    S,
    P,
    C,
    K,
    G,
}
use Tool::{C, G, K, P, S};

/// A tool, its arguments, and every (field, message) the call must answer with, in order.
type Row = (Tool, Value, &'static [(&'static str, &'static str)]);

fn errors(tool: Tool, value: Value) -> Vec<FieldError> {
    let arguments = args(value);
    let result = match tool {
        S => parse_args::<SuggestGiftsInput>(&arguments).map(drop),
        P => parse_args::<PrepareOrderInput>(&arguments).map(drop),
        C => parse_args::<CommitOrderInput>(&arguments).map(drop),
        K => parse_args::<CreateCheckoutSessionInput>(&arguments).map(drop),
        G => parse_args::<GetOrderInput>(&arguments).map(drop),
    };
    result.err().unwrap_or_default()
}

#[test]
fn every_message_is_word_for_word_what_it_was() {
    let table: Vec<Row> = vec![
        (S, json!({"age":-1,"relationship_type":"friend"}), &[("age", "must be at least 0 (got -1)")]),
        (S, json!({"age":121,"relationship_type":"friend"}), &[("age", "must be at most 120 (got 121)")]),
        (
            S,
            json!({"age":30.0,"relationship_type":"friend"}),
            &[("age", "must be a whole number (got a decimal number; write it without \".0\")")],
        ),
        (
            S,
            json!({"age":130.0,"relationship_type":"friend"}),
            &[("age", "must be a whole number (got a decimal number; write it without \".0\")")],
        ),
        (
            S,
            json!({"age":30.5,"relationship_type":"friend"}),
            &[("age", "must be a whole number (got a number with a fraction)")],
        ),
        (S, json!({"age":"thirty","relationship_type":"friend"}), &[("age", "must be a whole number (got a string)")]),
        (S, json!({"age":true,"relationship_type":"friend"}), &[("age", "must be a whole number (got a boolean)")]),
        (S, json!({"limit":0,"relationship_type":"friend"}), &[("limit", "must be at least 1 (got 0)")]),
        (S, json!({"limit":13,"relationship_type":"friend"}), &[("limit", "must be at most 12 (got 13)")]),
        (S, json!({"limit":[1],"relationship_type":"friend"}), &[("limit", "must be a whole number (got a list)")]),
        (S, json!({"budget_min":-5,"relationship_type":"friend"}), &[("budget_min", "must be at least 0 (got -5)")]),
        (
            S,
            json!({"budget_max":-0.01,"relationship_type":"friend"}),
            &[("budget_max", "must be at least 0 (got -0.01)")],
        ),
        (
            S,
            json!({"budget_max":1000001,"relationship_type":"friend"}),
            &[("budget_max", "must be at most 1000000 (got 1000001)")],
        ),
        (
            S,
            json!({"budget_max":"NaN","relationship_type":"friend"}),
            &[("budget_max", "must be a number (got a string)")],
        ),
        (
            S,
            json!({"budget_max":50,"budget_min":80,"relationship_type":"friend"}),
            &[("budget_min", "budget_min (80) is greater than budget_max (50)")],
        ),
        (
            S,
            json!({"age":30,"interests":["coffee"]}),
            &[(
                "relationship_type",
                "is required; one of: partner, parent, child, sibling, grandparent, grandchild, friend, colleague, boss, teacher, neighbor, other",
            )],
        ),
        (
            S,
            json!({"relationship_type":"cousin"}),
            &[(
                "relationship_type",
                "must be one of: partner, parent, child, sibling, grandparent, grandchild, friend, colleague, boss, teacher, neighbor, other (got \"cousin\")",
            )],
        ),
        (
            S,
            json!({"relationship_type":5}),
            &[(
                "relationship_type",
                "must be one of: partner, parent, child, sibling, grandparent, grandchild, friend, colleague, boss, teacher, neighbor, other (got 5)",
            )],
        ),
        (
            S,
            json!({"relationship_type":null}),
            &[(
                "relationship_type",
                "must be one of: partner, parent, child, sibling, grandparent, grandchild, friend, colleague, boss, teacher, neighbor, other (got null)",
            )],
        ),
        (
            S,
            json!({"currency":"XYZ","relationship_type":"friend"}),
            &[("currency", "must be one of: USD, EUR, GBP, CAD, AUD, JPY (got \"XYZ\")")],
        ),
        (
            S,
            json!({"occasion":"xmas","relationship_type":"friend"}),
            &[(
                "occasion",
                "must be one of: birthday, anniversary, wedding, graduation, holiday, valentines, mothers_day, fathers_day, housewarming, baby_shower, retirement, thank_you, get_well, just_because (got \"xmas\")",
            )],
        ),
        (
            S,
            json!({"occasion":5,"relationship_type":"friend"}),
            &[(
                "occasion",
                "must be one of: birthday, anniversary, wedding, graduation, holiday, valentines, mothers_day, fathers_day, housewarming, baby_shower, retirement, thank_you, get_well, just_because (got 5)",
            )],
        ),
        (
            S,
            json!({"interests":"coffee","relationship_type":"friend"}),
            &[("interests", "must be a list (got a string)")],
        ),
        (
            S,
            json!({"interests":[1,2],"relationship_type":"friend"}),
            &[
                ("interests[0]", "must be a string (got an integer)"),
                ("interests[1]", "must be a string (got an integer)"),
            ],
        ),
        (
            S,
            json!({"interests":["tea","a".repeat(41),"","  "],"relationship_type":"friend"}),
            &[("interests[1]", "must have at most 40 characters (got 41)"), ("interests[2]", "must not be empty")],
        ),
        (
            S,
            json!({"interests":["hobby 1","hobby 2","hobby 3","hobby 4","hobby 5","hobby 6","hobby 7","hobby 8","hobby 9","hobby 10","hobby 11"],"relationship_type":"friend"}),
            &[("interests", "must have at most 10 items (got 11)")],
        ),
        (
            S,
            json!({"interests":["  "],"relationship_type":"friend"}),
            &[("interests[0]", "must be 1 to 40 characters, not blank")],
        ),
        (
            S,
            json!({"about":"x".repeat(301),"relationship_type":"friend"}),
            &[("about", "must have at most 300 characters (got 301)")],
        ),
        (
            S,
            json!({"about":"likes jazz\nand cats","relationship_type":"friend"}),
            &[("about", "must be one line of plain text: no line breaks, tabs or other control characters")],
        ),
        (S, json!({"about":42,"relationship_type":"friend"}), &[("about", "must be a string (got an integer)")]),
        (
            S,
            json!({"budget":50,"relationship_type":"friend"}),
            &[(
                "budget",
                "is not a known argument; known arguments: about, age, budget_max, budget_min, currency, interests, limit, occasion, relationship_type",
            )],
        ),
        (
            S,
            json!({"age":121,"alpha":{"x":1},"budget":50,"interests":[1,""],"zeta":1}),
            &[
                (
                    "relationship_type",
                    "is required; one of: partner, parent, child, sibling, grandparent, grandchild, friend, colleague, boss, teacher, neighbor, other",
                ),
                ("age", "must be at most 120 (got 121)"),
                (
                    "alpha",
                    "is not a known argument; known arguments: about, age, budget_max, budget_min, currency, interests, limit, occasion, relationship_type",
                ),
                (
                    "budget",
                    "is not a known argument; known arguments: about, age, budget_max, budget_min, currency, interests, limit, occasion, relationship_type",
                ),
                ("interests[0]", "must be a string (got an integer)"),
                ("interests[1]", "must not be empty"),
                (
                    "zeta",
                    "is not a known argument; known arguments: about, age, budget_max, budget_min, currency, interests, limit, occasion, relationship_type",
                ),
            ],
        ),
        (
            S,
            json!({"budget_max":50,"budget_min":80,"interests":["chess","  "],"relationship_type":"sibling"}),
            &[
                ("interests[1]", "must be 1 to 40 characters, not blank"),
                ("budget_min", "budget_min (80) is greater than budget_max (50)"),
            ],
        ),
        (
            S,
            json!({"age":121,"budget_max":50,"budget_min":80,"relationship_type":"friend"}),
            // Issue 8: the walker stopped here; the budgets' own rule is reported too now.
            &[
                ("age", "must be at most 120 (got 121)"),
                ("budget_min", "budget_min (80) is greater than budget_max (50)"),
            ],
        ),
        (
            S,
            json!({"budget_max":50,"budget_min":80,"relationship_type":"cousin"}),
            &[(
                "relationship_type",
                "must be one of: partner, parent, child, sibling, grandparent, grandchild, friend, colleague, boss, teacher, neighbor, other (got \"cousin\")",
            )],
        ),
        (P, json!({"gift_id":"gft_1","quantity":0}), &[("quantity", "must be at least 1 (got 0)")]),
        (
            P,
            json!({"gift_id":"gft_1","quantity":2.0}),
            &[("quantity", "must be a whole number (got a decimal number; write it without \".0\")")],
        ),
        (P, json!({"gift_id":"gft_1","quantity":"two"}), &[("quantity", "must be a whole number (got a string)")]),
        (
            P,
            json!({"gift_id":"pour over kit"}),
            &[("gift_id", "must be an id as returned by a previous GiftGenius tool call")],
        ),
        (P, json!({"gift_id":""}), &[("gift_id", "must not be empty")]),
        (P, json!({"gift_id":"g".repeat(65)}), &[("gift_id", "must have at most 64 characters (got 65)")]),
        (
            P,
            json!({"quantity":2}),
            &[("gift_id", "is required (or items, for several gifts): the id of a gift from suggest_gifts")],
        ),
        (
            P,
            json!({"gift_id":"gft_1","shipping":"overnight"}),
            &[("shipping", "must be one of: standard, express (got \"overnight\")")],
        ),
        (
            P,
            json!({"currency":"BTC","gift_id":"gft_1"}),
            &[("currency", "must be one of: USD, EUR, GBP, CAD, AUD, JPY (got \"BTC\")")],
        ),
        (
            P,
            json!({"gift_id":"gft_1","price":1}),
            &[(
                "price",
                "is not a known argument; known arguments: add_to, currency, gift_id, gift_message, gift_receipt, gift_wrap, items, needed_by, quantity, recipient, save_address, shipping",
            )],
        ),
        (
            C,
            json!({}),
            // A missing confirmation_token is CONFIRMATION_REQUIRED (permission), not a field error.
            &[("draft_id", "is required"), ("idempotency_key", "is required")],
        ),
        (
            C,
            json!({"confirmation_token":"t","draft_id":"drf_1","idempotency_key":"k".repeat(256)}),
            &[("idempotency_key", "must have at most 255 characters (got 256)")],
        ),
        (
            C,
            json!({"confirmation_token":"t","draft_id":"drf 1","idempotency_key":"ключ"}),
            &[
                ("draft_id", "must be an id as returned by a previous GiftGenius tool call"),
                ("idempotency_key", "must be 1 to 255 printable ASCII characters"),
            ],
        ),
        (
            C,
            json!({"confirmation_token":"","draft_id":"drf_1","idempotency_key":42}),
            &[("confirmation_token", "must not be empty"), ("idempotency_key", "must be a string (got an integer)")],
        ),
        (K, json!({"gift_id":"gft_1"}), &[("idempotency_key", "is required")]),
        (
            K,
            json!({"gift_id":"gft 1","idempotency_key":"a\nb","quantity":2}),
            // Issue 8: the walker stopped at the unknown argument; the id and key rules run too now.
            &[
                ("quantity", "is not a known argument; known arguments: currency, gift_id, idempotency_key"),
                ("gift_id", "must be an id as returned by a previous GiftGenius tool call"),
                ("idempotency_key", "must be 1 to 255 printable ASCII characters"),
            ],
        ),
        (G, json!({"order_id":1042}), &[("order_id", "must be a string (got an integer)")]),
        (
            G,
            json!({"email":"a@b.c","order_id":"ord/1"}),
            // Issue 8: the walker stopped at the unknown argument; the id rule runs too now.
            &[
                ("email", "is not a known argument; known arguments: order_id"),
                ("order_id", "must be an id as returned by a previous GiftGenius tool call"),
            ],
        ),
    ];
    let mut failures = Vec::new();
    for (tool, value, expected) in table {
        let shown = value.to_string();
        let got: Vec<(String, String)> = errors(tool, value).into_iter().map(|e| (e.field, e.message)).collect();
        let expected: Vec<(String, String)> = expected.iter().map(|(f, m)| (f.to_string(), m.to_string())).collect();
        if got != expected {
            failures.push(format!("{tool:?} {shown}\n  expected {expected:?}\n  got      {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{} row(s) differ:\n{}", failures.len(), failures.join("\n"));
}
