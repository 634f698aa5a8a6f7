//! Turning raw tool arguments into a typed input, reporting *every* problem at once.
//!
//! Models guess arguments from the schema and miss often. A bare deserializer stops at the
//! first mistake and phrases it for Rust programmers; instead we check the raw JSON against
//! the input's own JSON Schema (so the rules cannot drift from what `tools/list` advertises),
//! then deserialize, then run the type's cross-field rules (`Validate`).

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::schema::input_schema;

/// One field's problem, phrased so the model can fix it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldError {
    /// The argument's name, with an index for list items (`interests[2]`).
    pub field: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self { field: field.into(), message: message.into() }
    }
}

/// Rules a schema cannot express (for example `budget_min <= budget_max`).
pub trait Validate {
    /// Every violated rule, not just the first.
    fn validate(&self) -> Result<(), Vec<FieldError>>;
}

/// Parse tool arguments into `T`: schema check, then deserialize, then `Validate`.
pub fn parse_args<T>(arguments: &Map<String, Value>) -> Result<T, Vec<FieldError>>
where
    T: DeserializeOwned + JsonSchema + Validate + 'static,
{
    let schema = input_schema::<T>();
    let mut errors = Vec::new();
    let schema_value = Value::Object((*schema).clone());
    check(&schema, &schema_value, &Value::Object(arguments.clone()), "", &mut errors);
    if !errors.is_empty() {
        return Err(errors);
    }
    let typed: T = serde_json::from_value(Value::Object(arguments.clone()))
        .map_err(|e| vec![FieldError::new("arguments", clean_serde_message(&e.to_string()))])?;
    typed.validate()?;
    Ok(typed)
}

/// Checks any JSON value against a schema produced by `schema.rs` (used on results too, by the
/// server's policy layer in debug builds). Returns every violation.
pub fn check_against_schema(schema: &Map<String, Value>, value: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    check(schema, &Value::Object(schema.clone()), value, "", &mut errors);
    errors
}

fn clean_serde_message(message: &str) -> String {
    // serde_json appends " at line 1 column 42"; it means nothing to a model.
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "a decimal number; write it without \".0\"",
        Value::Number(_) => "a number with a fraction",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

fn article(type_name: &str) -> &'static str {
    match type_name {
        "integer" => "a whole number",
        "number" => "a number",
        "string" => "a string",
        "array" => "a list",
        "object" => "an object",
        "boolean" => "true or false",
        "null" => "null",
        _ => "a value of another type",
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 40 { format!("{}…", text.chars().take(40).collect::<String>()) } else { text }
}

fn resolve<'a>(root: &'a Map<String, Value>, reference: &str) -> Option<&'a Value> {
    let name = reference.strip_prefix("#/$defs/")?;
    root.get("$defs")?.get(name)
}

/// A small validator for the subset of JSON Schema that schemars emits for our inputs.
fn check(root: &Map<String, Value>, schema: &Value, value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(schema) = schema.as_object() else { return };
    let field = if path.is_empty() { "arguments" } else { path };

    if let Some(reference) = schema.get("$ref").and_then(Value::as_str)
        && let Some(target) = resolve(root, reference)
    {
        check(root, target, value, path, errors);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            let mut branch_errors: Vec<Vec<FieldError>> = Vec::new();
            for branch in branches {
                let mut errs = Vec::new();
                check(root, branch, value, path, &mut errs);
                if errs.is_empty() {
                    branch_errors.clear();
                    break;
                }
                branch_errors.push(errs);
            }
            if !branch_errors.is_empty() {
                // For Option<T> (`T | null`) the T branch's complaint is the useful one.
                let best = branches
                    .iter()
                    .zip(branch_errors)
                    .filter(|(b, _)| b.get("type").and_then(Value::as_str) != Some("null"))
                    .map(|(_, e)| e)
                    .next();
                match best {
                    Some(errs) => errors.extend(errs),
                    None => errors.push(FieldError::new(field, "does not match any allowed form")),
                }
            }
        }
    }
    if let Some(constant) = schema.get("const")
        && constant != value
    {
        errors.push(FieldError::new(field, format!("must be {constant} (got {})", short(value))));
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(value)
    {
        let list = allowed.iter().map(|v| v.as_str().map(str::to_string).unwrap_or(v.to_string()));
        let list: Vec<String> = list.collect();
        errors.push(FieldError::new(field, format!("must be one of: {} (got {})", list.join(", "), short(value))));
        return;
    }
    if let Some(types) = schema.get("type") {
        let names: Vec<&str> = match types {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        if !names.is_empty() && !names.iter().any(|t| type_matches(t, value)) {
            let wanted: Vec<&str> = names.iter().filter(|t| **t != "null").map(|t| article(t)).collect();
            let wanted = if wanted.is_empty() { "null".to_string() } else { wanted.join(" or ") };
            errors.push(FieldError::new(field, format!("must be {wanted} (got {})", describe(value))));
            return;
        }
    }
    match value {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
                && x < min
            {
                errors.push(FieldError::new(field, format!("must be at least {min} (got {n})")));
            }
            if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
                && x > max
            {
                errors.push(FieldError::new(field, format!("must be at most {max} (got {n})")));
            }
        }
        Value::String(s) => {
            let len = s.chars().count() as u64;
            if let Some(min) = schema.get("minLength").and_then(Value::as_u64)
                && len < min
            {
                let message = if min == 1 {
                    "must not be empty".to_string()
                } else {
                    format!("must have at least {min} characters")
                };
                errors.push(FieldError::new(field, message));
            }
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64)
                && len > max
            {
                errors.push(FieldError::new(field, format!("must have at most {max} characters (got {len})")));
            }
        }
        Value::Array(items) => {
            if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
                && (items.len() as u64) < min
            {
                errors.push(FieldError::new(field, format!("must have at least {min} items")));
            }
            if let Some(max) = schema.get("maxItems").and_then(Value::as_u64)
                && items.len() as u64 > max
            {
                errors.push(FieldError::new(field, format!("must have at most {max} items (got {})", items.len())));
            }
            if let Some(item_schema) = schema.get("items") {
                for (i, item) in items.iter().enumerate() {
                    check(root, item_schema, item, &format!("{field}[{i}]"), errors);
                }
            }
        }
        Value::Object(object) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            if let Some(required) = schema.get("required").and_then(Value::as_array) {
                for name in required.iter().filter_map(Value::as_str) {
                    if !object.contains_key(name) {
                        let allowed = properties.and_then(|p| p.get(name)).and_then(|p| allowed_values(root, p));
                        let message = match allowed {
                            Some(list) => format!("is required; one of: {list}"),
                            None => "is required".to_string(),
                        };
                        errors.push(FieldError::new(join(path, name), message));
                    }
                }
            }
            for (name, item) in object {
                match properties.and_then(|p| p.get(name)) {
                    Some(property) => check(root, property, item, &join(path, name), errors),
                    None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                        let known: Vec<&str> =
                            properties.map(|p| p.keys().map(String::as_str).collect()).unwrap_or_default();
                        errors.push(FieldError::new(
                            join(path, name),
                            format!("is not a known argument; known arguments: {}", known.join(", ")),
                        ));
                    }
                    None => {}
                }
            }
        }
        _ => {}
    }
}

/// The allowed values of an enum-typed property (following a `$ref`), for "is required" messages.
fn allowed_values(root: &Map<String, Value>, property: &Value) -> Option<String> {
    let target = match property.get("$ref").and_then(Value::as_str) {
        Some(reference) => resolve(root, reference)?,
        None => property,
    };
    let values = target.get("enum")?.as_array()?;
    Some(values.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_string() } else { format!("{path}.{name}") }
}
