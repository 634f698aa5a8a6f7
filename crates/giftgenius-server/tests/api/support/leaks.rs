//! The one leak checker: no text a client reads may carry internals, neither the ones any
//! failure could spill (paths, source locations, SQL, panics, this machine's host name) nor the
//! ones a test knows from its own setup (an upstream's address, an injected failure's wording).

use rmcp::model::CallToolResult;
use serde_json::Value;

use super::calls::text_of;

/// Words no text for people may contain, whatever the call.
const LEAK_WORDS: &[&str] = &[
    "/root/",
    "/home/",
    "/work/",
    "/tmp/",
    ".rs:",
    "src/",
    "sqlx",
    "SELECT",
    "INSERT",
    "panicked",
    "backtrace",
    "thread '",
];

/// This machine's host name (what a leaked socket address or error could carry).
pub fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname").map(|s| s.trim().to_string()).unwrap_or_default()
}

/// `needle` as a whole token of `haystack` (a two-letter host name is a substring of many words).
fn contains_token(haystack: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let haystack = haystack.to_lowercase();
    let needle = needle.to_lowercase();
    let is_word = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    haystack.match_indices(&needle).any(|(i, _)| {
        let before = haystack[..i].chars().next_back();
        let after = haystack[i + needle.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// The first internal detail found in `text`: a leak word, a host name (this machine's, or
/// `localhost`), or one of `also` (what this test knows to be internal).
pub fn leak_in(text: &str, also: &[&str]) -> Option<String> {
    if let Some(word) = LEAK_WORDS.iter().chain(also).find(|w| text.contains(*w)) {
        return Some(word.to_string());
    }
    let host = hostname();
    for name in [host.as_str(), "localhost"] {
        if contains_token(text, name) {
            return Some(format!("host name {name}"));
        }
    }
    None
}

/// Every text of a result meant for people, by place: the text content, the error's message
/// and field messages, the partial result's message and failed-source messages. The error's
/// reference (random hex that may spell anything short) is blanked out of them.
fn texts_for_people(result: &CallToolResult, structured: &Value) -> Vec<(String, String)> {
    let message = |v: &Value| v["message"].as_str().unwrap_or_default().to_string();
    let mut texts = vec![("text content".to_string(), text_of(result))];
    if let Some(error) = structured.get("error") {
        texts.push(("error.message".into(), message(error)));
        for (i, field) in error["field_errors"].as_array().into_iter().flatten().enumerate() {
            texts.push((format!("error.field_errors[{i}].message"), message(field)));
        }
    }
    if let Some(partial) = structured.get("partial").filter(|p| !p.is_null()) {
        texts.push(("partial.message".into(), message(partial)));
        for (i, source) in partial["failed_sources"].as_array().into_iter().flatten().enumerate() {
            texts.push((format!("partial.failed_sources[{i}].message"), message(source)));
        }
    }
    match structured["error"]["reference"].as_str().filter(|r| !r.is_empty()) {
        Some(reference) => texts.into_iter().map(|(place, text)| (place, text.replace(reference, "req_…"))).collect(),
        None => texts,
    }
}

/// The first leak (see [`leak_in`]) in any text of the result meant for people, naming where.
pub fn find_leak(result: &CallToolResult, structured: &Value, also: &[&str]) -> Result<(), String> {
    for (place, text) in texts_for_people(result, structured) {
        if let Some(leak) = leak_in(&text, also) {
            return Err(format!("{place} leaks `{leak}`: {text}"));
        }
    }
    Ok(())
}

/// Fails the test if any text of the result meant for people leaks (see [`find_leak`]).
pub fn assert_no_leak(result: &CallToolResult, structured: &Value, also: &[&str]) {
    if let Err(leak) = find_leak(result, structured, also) {
        panic!("{leak}");
    }
}
