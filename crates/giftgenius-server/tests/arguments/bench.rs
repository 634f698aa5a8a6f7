//! How long `parse_args` takes on a typical `suggest_gifts` call. Ignored by default; run with
//! `cargo test --release -p giftgenius-server --test arguments -- --ignored --nocapture bench`.

use std::time::Instant;

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
    let time = |name: &str, parse: &dyn Fn() -> bool| {
        assert!(parse(), "{name}: the typical input must be accepted");
        let start = Instant::now();
        for _ in 0..CALLS {
            assert!(std::hint::black_box(parse()));
        }
        let per_call = start.elapsed() / CALLS;
        println!("{name}: {per_call:?} per call ({CALLS} calls)");
    };
    time("jsonschema", &|| giftgenius_server::arguments::parse_args::<SuggestGiftsInput>(&arguments).is_ok());
    time("hand-written walker", &|| giftgenius_types::parse_args::<SuggestGiftsInput>(&arguments).is_ok());
}
