//! How long `parse_args` takes on a typical `suggest_gifts` call. Ignored by default; run with
//! `cargo test --release -p giftgenius-server --test arguments -- --ignored --nocapture bench`.
//!
//! When the hand-written walker was replaced (release build, a busy 2-core machine, 3 rounds of
//! 100k calls): 0.59-0.77 µs per call with `jsonschema`, 5.3-6.9 µs with the walker; an invalid
//! input (three problems) 2.5-2.9 µs against 4.2-4.6 µs.

use std::time::Instant;

use giftgenius_server::mcp::arguments::parse_args;
use giftgenius_types::SuggestGiftsInput;
use serde_json::json;

use crate::helpers::args;

const CALLS: u32 = 100_000;

#[test]
#[ignore = "a timing, not a check; run it in release mode"]
fn bench_parse_args_of_a_typical_suggest_gifts_call() {
    let arguments = args(json!({
        "relationship_type": "friend",
        "age": 34,
        "interests": ["coffee", "hiking", "board games"],
        "budget_min": 30,
        "budget_max": 60,
        "occasion": "birthday",
        "currency": "USD",
    }));
    assert!(parse_args::<SuggestGiftsInput>(&arguments).is_ok(), "the typical input must be accepted");
    let start = Instant::now();
    for _ in 0..CALLS {
        assert!(std::hint::black_box(parse_args::<SuggestGiftsInput>(&arguments)).is_ok());
    }
    println!("parse_args: {:?} per call ({CALLS} calls)", start.elapsed() / CALLS);
}
