//! The documented error table (docs/errors.md) is generated from `ErrorCode`; this keeps them equal.

use giftgenius_types::ErrorCode;

const START: &str = "<!-- error-table:start -->";
const END: &str = "<!-- error-table:end -->";

fn assert_table_matches(name: &str) {
    let path = format!("{}/../../{name}", env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {name} ({e})"));
    let (Some(start), Some(end)) = (doc.find(START), doc.find(END)) else {
        panic!(
            "{name} lacks the {START} … {END} markers around the error table; add them and run `cargo xtask errors`"
        );
    };
    assert!(start < end, "{name}: {START} must come before {END}");
    let documented = doc[start + START.len()..end].trim();
    let generated = ErrorCode::markdown_table();
    assert!(
        documented == generated.trim(),
        "{name}'s error table differs from ErrorCode (crates/giftgenius-types/src/error.rs). \
         Regenerate it with `cargo xtask errors`.\n--- documented\n{documented}\n--- generated\n{generated}"
    );
}

#[test]
fn the_error_table_in_docs_errors_md_matches_the_error_code_enum() {
    assert_table_matches("docs/errors.md");
}

#[test]
fn every_error_code_has_an_example_result_in_docs_errors_md() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/errors.md")).unwrap();
    for code in ErrorCode::ALL {
        assert!(doc.contains(&format!("\"code\": \"{code}\"")), "docs/errors.md has no example result for {code}");
    }
}
