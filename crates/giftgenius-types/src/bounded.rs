//! Caps on what an error may carry back to the caller, whatever the arguments were.
//!
//! A validation error names every broken field and echoes the arguments it understood. Without
//! caps a 256 KiB body of bad list items made ~100,000 field errors, and every one of them was
//! written out three times (structured, text, widget HTML): tens of megabytes answering a
//! quarter megabyte. With them an error lists at most [`MAX_FIELD_ERRORS`] fields, then one
//! entry saying how many more there are, cuts each field name and message short, and echoes
//! `attempted` in at most [`MAX_ATTEMPTED_BYTES`].

use serde_json::{Map, Value};

use crate::args::FieldError;

/// Field errors listed one by one; the rest are summed up in one last entry.
pub const MAX_FIELD_ERRORS: usize = 20;
/// The `field` of the entry that stands for the field errors not listed.
pub const MORE_FIELDS: &str = "(more)";
/// Longest field name kept (characters); a name is an argument path, or an unknown key as sent.
pub const MAX_FIELD_CHARS: usize = 80;
/// Longest field message kept (characters).
pub const MAX_MESSAGE_CHARS: usize = 300;
/// Largest `attempted` echo (bytes of JSON).
pub const MAX_ATTEMPTED_BYTES: usize = 2048;

/// `errors`, at most [`MAX_FIELD_ERRORS`] of them with names and messages cut short, then one
/// [`MORE_FIELDS`] entry counting the rest.
pub fn cap_field_errors(errors: Vec<FieldError>) -> Vec<FieldError> {
    let total = errors.len();
    let mut kept: Vec<FieldError> = errors
        .into_iter()
        .take(MAX_FIELD_ERRORS)
        .map(|e| FieldError {
            rule: e.rule,
            ..FieldError::new(cut(&e.field, MAX_FIELD_CHARS), cut(&e.message, MAX_MESSAGE_CHARS))
        })
        .collect();
    if total > MAX_FIELD_ERRORS {
        let more = total - MAX_FIELD_ERRORS;
        let noun = if more == 1 { "problem" } else { "problems" };
        kept.push(FieldError::new(
            MORE_FIELDS,
            format!("and {more} more {noun} not listed; fix the ones above and call again to see them"),
        ));
    }
    kept
}

/// `text`, or its first `max` characters and `…` when longer.
pub fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// `value` itself when its JSON fits in `max_bytes`; otherwise a smaller copy of the same shape
/// (long strings cut, long lists and objects shortened with a note of what was left out,
/// deep nesting cut off), and if even that does not fit, a string saying how big it was.
pub fn bounded_echo(value: &Value, max_bytes: usize) -> Value {
    let size = json_len(value);
    if size <= max_bytes {
        return value.clone();
    }
    // Coarser and coarser until it fits.
    for shape in [
        Shape { chars: 120, items: 10, depth: 6 },
        Shape { chars: 40, items: 5, depth: 3 },
        Shape { chars: 16, items: 3, depth: 2 },
    ] {
        let smaller = shape.apply(value, 0);
        if json_len(&smaller) <= max_bytes {
            return smaller;
        }
    }
    Value::String(format!("(not echoed: {size} bytes)"))
}

/// How far `bounded_echo` shortens a value.
#[derive(Clone, Copy)]
struct Shape {
    /// Characters kept of a string (and of an object key).
    chars: usize,
    /// Items kept of a list, entries of an object.
    items: usize,
    /// Nesting kept; deeper lists and objects become a note.
    depth: usize,
}

impl Shape {
    fn apply(self, value: &Value, depth: usize) -> Value {
        match value {
            Value::String(s) => Value::String(cut(s, self.chars)),
            Value::Array(items) if depth >= self.depth => Value::String(format!("(a list of {})", items.len())),
            Value::Object(map) if depth >= self.depth => Value::String(format!("(an object of {})", map.len())),
            Value::Array(items) => {
                let mut out: Vec<Value> = items.iter().take(self.items).map(|v| self.apply(v, depth + 1)).collect();
                if items.len() > self.items {
                    out.push(Value::String(format!("… {} more items", items.len() - self.items)));
                }
                Value::Array(out)
            }
            Value::Object(map) => {
                let mut out = Map::new();
                for (key, v) in map.iter().take(self.items) {
                    out.insert(cut(key, self.chars), self.apply(v, depth + 1));
                }
                if map.len() > self.items {
                    out.insert("…".into(), Value::String(format!("{} more entries", map.len() - self.items)));
                }
                Value::Object(out)
            }
            other => other.clone(),
        }
    }
}

/// Bytes of `value` as compact JSON, without building the text.
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` to a sink that never fails cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn few_field_errors_pass_unchanged() {
        let errors = vec![FieldError::new("age", "must be at most 120 (got 121)")];
        assert_eq!(cap_field_errors(errors.clone()), errors);
    }

    #[test]
    fn many_field_errors_are_listed_up_to_the_cap_then_counted() {
        let errors: Vec<FieldError> = (0..100_000)
            .map(|i| FieldError::new(format!("interests[{i}]"), "must be a string (got an integer)"))
            .collect();
        let capped = cap_field_errors(errors);
        assert_eq!(capped.len(), MAX_FIELD_ERRORS + 1);
        assert_eq!(capped[0].field, "interests[0]");
        let last = capped.last().unwrap();
        assert_eq!(last.field, MORE_FIELDS);
        assert!(last.message.starts_with("and 99980 more problems"), "{}", last.message);
    }

    #[test]
    fn long_names_and_messages_are_cut() {
        let capped = cap_field_errors(vec![FieldError::new("k".repeat(10_000), "m".repeat(10_000))]);
        assert_eq!(capped[0].field.chars().count(), MAX_FIELD_CHARS + 1);
        assert_eq!(capped[0].message.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(capped[0].field.ends_with('…'));
    }

    #[test]
    fn cutting_respects_character_boundaries() {
        assert_eq!(cut("🎁🎁🎁", 2), "🎁🎁…");
        assert_eq!(cut("ab", 2), "ab");
    }

    #[test]
    fn a_small_echo_is_kept_as_is() {
        let value = json!({"relationship_type": "friend", "age": 30, "interests": ["coffee"]});
        assert_eq!(bounded_echo(&value, MAX_ATTEMPTED_BYTES), value);
    }

    #[test]
    fn a_huge_echo_keeps_its_shape_within_the_cap() {
        let huge = "q".repeat(250_000);
        let cases = [
            json!({"relationship_type": "friend", "interests": vec![1; 100_000]}),
            json!({"interests": [huge.clone()]}),
            Value::Object((0..30_000).map(|i| (i.to_string(), json!(0))).collect()),
            json!({ huge.clone(): 1 }),
            (0..200).fold(json!(1), |v, _| json!([v])),
        ];
        for value in cases {
            let echo = bounded_echo(&value, MAX_ATTEMPTED_BYTES);
            assert!(json_len(&echo) <= MAX_ATTEMPTED_BYTES, "{}", json_len(&echo));
            assert!(!matches!(echo, Value::String(_)), "shortened, not replaced: {echo}");
        }
        let echo =
            bounded_echo(&json!({"relationship_type": "friend", "interests": vec![1; 100_000]}), MAX_ATTEMPTED_BYTES);
        assert_eq!(echo["relationship_type"], "friend");
        assert_eq!(echo["interests"][10], "… 99990 more items");
    }
}
